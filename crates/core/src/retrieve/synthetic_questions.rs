//! Synthetic questions for a tool, written by a chat model from the tool's
//! text alone: a tool no user question was ever recorded for (a new tool,
//! or one held out as unseen) still gets training examples for the heads.
//! Lines written from them carry `"synthetic": true`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::dataset::ToolDoc;
use crate::model::{ChatRequest, Message, ResponseSchema, Role, reply_json};
use crate::text::one_line;

const SYSTEM: &str = "You write the questions users ask a question-answering service. Given one tool of the \
service, its id and what it does, write questions that this tool, and no other, answers. Each question is one \
short sentence about one concrete subject (a person, place, work or thing, named), phrased as people ask, and \
the questions differ in wording.\nReply with one JSON object and nothing else: {\"questions\": [\"...\", ...]}";

/// The longest question the schema lets a model write.
pub const MAX_QUESTION_CHARS: usize = 120;

/// The headings of the prompt, where a reply that goes on has ended.
const STOP: &[&str] = &["\nTool:", "\nDoes:"];

/// The request that asks for `n` questions about `tool`.
pub fn request(tool: &ToolDoc, n: usize) -> ChatRequest {
    let user = format!("Tool: {}\nDoes: {}\nQuestions: {n}\n", tool.id, one_line(&tool.description));
    let schema = json!({
        "type": "object",
        "properties": {
            // A bound on each question: a small model otherwise goes on
            // inside one string until the token cap cuts the JSON.
            "questions": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_QUESTION_CHARS},
                "minItems": n,
                "maxItems": n
            }
        },
        "required": ["questions"]
    });
    ChatRequest::constrained(
        Role::Actor,
        vec![Message::system(SYSTEM), Message::user(user)],
        ResponseSchema { name: "questions".into(), schema },
    )
    .stopping_at(STOP)
}

/// What a synthetic-question prompt asks: the tool and how many questions
/// (for the simulated model, which reads the same text a real one is shown).
pub fn parse_prompt(messages: &[Message]) -> Option<(ToolDoc, usize)> {
    let system = messages.first()?;
    if system.content != SYSTEM {
        return None;
    }
    let user = &messages.get(1)?.content;
    let field = |name: &str| user.lines().find_map(|l| l.strip_prefix(name)).map(str::to_owned);
    let tool = ToolDoc { id: field("Tool: ")?, description: field("Does: ")? };
    Some((tool, field("Questions: ")?.trim().parse().ok()?))
}

/// The reply's questions, trimmed, on one line each and without repeats.
pub fn parse_reply(text: &str) -> Result<Vec<String>, String> {
    let v = reply_json(text)?;
    let list = v.get("questions").and_then(Value::as_array).ok_or("no `questions` list")?;
    let mut out: Vec<String> = Vec::new();
    for q in list {
        let q = one_line(q.as_str().ok_or("a question is not a string")?);
        let q = q.trim();
        if !q.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(q)) {
            out.push(q.to_owned());
        }
    }
    if out.is_empty() {
        return Err("no question in the reply".into());
    }
    Ok(out)
}

/// One line of a synthetic question file: a question file with `tool`, as
/// `heads train` and `retrieval eval` read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyntheticQuestion {
    pub question: String,
    pub tool: String,
    pub synthetic: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_reads_back_and_a_reply_is_cleaned() {
        let tool = ToolDoc { id: "people/person/place_of_birth".into(), description: "place of\nbirth".into() };
        let req = request(&tool, 3);
        let (back, n) = parse_prompt(&req.messages).unwrap();
        assert_eq!(
            (back.id.as_str(), back.description.as_str(), n),
            ("people/person/place_of_birth", "place of birth", 3)
        );
        let got =
            parse_reply("sure: {\"questions\": [\" Where was  Ada born? \", \"where was ada born?\", \"\"]} and more");
        assert_eq!(got.unwrap(), vec!["Where was Ada born?"]);
        assert!(parse_reply("{\"questions\": []}").unwrap_err().contains("no question"));
        assert!(parse_reply("no json").is_err());
        assert!(parse_reply("{\"questions\": [1]}").unwrap_err().contains("not a string"));
    }
}
