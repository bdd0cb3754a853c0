//! Re-ranking a retriever's top candidates with a chat model as a listwise
//! judge: shown the question and the candidates (id and description), it
//! names one of them, and that one moves to the top; the rest keep the
//! retriever's order. The reply's schema is an enum of the candidates'
//! ids, so a constrained server cannot answer with a tool that was not
//! offered. Optional: it needs a configured chat model and costs one call
//! a query.

use serde_json::{Value, json};

use crate::dataset::ToolDoc;
use crate::model::{ChatRequest, Message, ResponseSchema, Role, reply_json};
use crate::text::one_line;

const SYSTEM: &str = "You choose the one tool that answers a question. Each candidate tool is an id and what it \
returns. Find what the question is about (its subject: a person, a place, a film, ...) and what it asks of that \
subject, then choose the tool whose id has that kind of subject and returns that.\nReply with one JSON object and \
nothing else: {\"tool\": \"<id of the chosen tool>\"}";

/// A candidate's description is cut here: the id says most, and twenty
/// long descriptions would crowd a small model's context.
const MAX_DESCRIPTION_CHARS: usize = 160;

/// The request that asks which of `candidates` answers `question`.
pub fn request(question: &str, candidates: &[ToolDoc]) -> ChatRequest {
    let mut user = String::from("Candidates:\n");
    for c in candidates {
        let description: String = one_line(&c.description).chars().take(MAX_DESCRIPTION_CHARS).collect();
        user += &format!("- {}: {}\n", c.id, description.trim());
    }
    user += &format!("Question: {}\n", one_line(question).trim());
    let ids: Vec<&str> = candidates.iter().map(|c| c.id.as_str()).collect();
    let schema = json!({
        "type": "object",
        "properties": {"tool": {"type": "string", "enum": ids}},
        "required": ["tool"]
    });
    let req = ChatRequest::constrained(
        Role::Actor,
        vec![Message::system(SYSTEM), Message::user(user)],
        ResponseSchema { name: "tool_choice".into(), schema },
    );
    ChatRequest { max_tokens: Some(max_reply_tokens(candidates)), ..req }
}

/// The most tokens a reply to [`request`] needs (the request's bound): the longest id, the
/// object around it, and room for a tokenizer that splits ids finely.
pub fn max_reply_tokens(candidates: &[ToolDoc]) -> u32 {
    let longest = candidates.iter().map(|c| c.id.len()).max().unwrap_or(0);
    u32::try_from(longest / 2 + 24).unwrap_or(u32::MAX)
}

/// The question and candidates a re-ranking prompt shows (for the
/// simulated model, which reads the same text a real one is shown).
pub fn parse_prompt(messages: &[Message]) -> Option<(String, Vec<ToolDoc>)> {
    if messages.first()?.content != SYSTEM {
        return None;
    }
    let user = &messages.get(1)?.content;
    let mut candidates = Vec::new();
    let mut question = None;
    for line in user.lines() {
        if let Some(c) = line.strip_prefix("- ") {
            let (id, description) = c.split_once(": ").unwrap_or((c, ""));
            candidates.push(ToolDoc { id: id.to_owned(), description: description.to_owned() });
        } else if let Some(q) = line.strip_prefix("Question: ") {
            question = Some(q.to_owned());
        }
    }
    Some((question?, candidates))
}

/// Which candidate the reply names (its index), or why it names none.
pub fn parse_reply(text: &str, candidates: &[ToolDoc]) -> Result<usize, String> {
    let v = reply_json(text)?;
    let id = v.get("tool").and_then(Value::as_str).ok_or("no `tool` string")?.trim();
    candidates.iter().position(|c| c.id == id).ok_or_else(|| format!("`{id}` is not one of the candidates"))
}

/// Moves the chosen item to the front; the others keep their order.
pub fn promote<T>(ranked: &mut [T], chosen: usize) {
    if chosen < ranked.len() {
        ranked[..=chosen].rotate_right(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> Vec<ToolDoc> {
        ["location/location/people_born_here", "people/person/place_of_birth", "music/artist/track"]
            .iter()
            .map(|id| ToolDoc { id: (*id).into(), description: format!("what {id}\nreturns") })
            .collect()
    }

    #[test]
    fn the_prompt_reads_back_and_the_schema_allows_only_the_candidates() {
        let req = request("Where was  Ada born?", &docs());
        let (question, back) = parse_prompt(&req.messages).unwrap();
        assert_eq!(question, "Where was Ada born?");
        assert_eq!(
            back.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            docs().iter().map(|c| c.id.as_str()).collect::<Vec<_>>()
        );
        assert_eq!(back[1].description, "what people/person/place_of_birth returns");
        let schema = &req.response_schema.unwrap().schema;
        assert_eq!(schema["properties"]["tool"]["enum"].as_array().unwrap().len(), 3);
        assert!(max_reply_tokens(&docs()) > 34 / 2);
    }

    #[test]
    fn a_reply_names_a_candidate_or_says_why_not() {
        assert_eq!(parse_reply("ok {\"tool\": \" people/person/place_of_birth\"} done", &docs()), Ok(1));
        assert!(parse_reply("{\"tool\": \"film/film/genre\"}", &docs()).unwrap_err().contains("not one of"));
        assert!(parse_reply("{\"pick\": 1}", &docs()).unwrap_err().contains("no `tool`"));
        assert!(parse_reply("none", &docs()).is_err());
    }

    #[test]
    fn the_chosen_one_moves_up_and_the_rest_keep_their_order() {
        let mut v = vec!['a', 'b', 'c', 'd'];
        promote(&mut v, 2);
        assert_eq!(v, ['c', 'a', 'b', 'd']);
        promote(&mut v, 0);
        assert_eq!(v, ['c', 'a', 'b', 'd']);
        promote(&mut v, 9);
        assert_eq!(v, ['c', 'a', 'b', 'd']);
    }
}
