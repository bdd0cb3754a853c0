//! What the model scanner is asked, and how its replies are read. The
//! simulated model reads these same prompts (`sim::scanner`).

use serde_json::{Value, json};

use crate::model::{ChatRequest, Message, ResponseSchema, Role};

/// Heads the system prompt of a run's reading.
pub const NAME_FAILURE: &str = "You read the transcript of one run of a tool-using agent that failed";
/// Heads the system prompt of a group's naming.
pub const NAME_GROUP: &str = "Each phrase below names the failure of one run";

pub fn failure_request(transcript: &str) -> ChatRequest {
    let system = format!(
        "{NAME_FAILURE}, and name its failure: what went wrong, in a short phrase of 3 to 10 words that would \
         name the same failure in another run (no values of this task), and the line where it shows (the \
         number after E). Reply with one JSON object only: {{\"failure\": \"...\", \"event\": N}}."
    );
    let schema = json!({
        "type": "object",
        "properties": {"failure": {"type": "string"}, "event": {"type": "integer"}},
        "required": ["failure", "event"]
    });
    let req = ChatRequest::constrained(
        Role::Scanner,
        vec![Message::system(system), Message::user(transcript)],
        ResponseSchema { name: "failure".into(), schema },
    );
    ChatRequest { max_tokens: Some(REPLY_TOKENS), ..req }
}

/// A reply's cap: a short JSON object, which a small model otherwise
/// follows with prose until its own cap.
const REPLY_TOKENS: u32 = 96;

pub fn group_request(phrases: &[(String, usize)]) -> ChatRequest {
    let system = format!(
        "{NAME_GROUP}; together they are one kind of failure. Name the kind in 2 to 6 words. Reply with one \
         JSON object only: {{\"name\": \"...\"}}."
    );
    let list: Vec<String> = phrases.iter().map(|(p, n)| format!("- {p} (×{n})")).collect();
    let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
    let req = ChatRequest::constrained(
        Role::Scanner,
        vec![Message::system(system), Message::user(list.join("\n"))],
        ResponseSchema { name: "group".into(), schema },
    );
    ChatRequest { max_tokens: Some(REPLY_TOKENS), ..req }
}

/// The phrases of a group's request, as the list gives them.
pub fn group_phrases(user: &str) -> Vec<String> {
    user.lines()
        .filter_map(|l| l.strip_prefix("- "))
        .map(|l| l.rsplit_once(" (×").map_or(l, |(p, _)| p).to_string())
        .collect()
}

/// A failure's phrase and line from a reply, or why the reply is not one.
/// `events`: the line numbers the transcript showed.
pub fn read_failure(text: &str, events: &[usize]) -> Result<(String, usize), String> {
    let v = object(text)?;
    let phrase = phrase(&v, "failure", 2, 12)?;
    let event = match v.get("event") {
        Some(Value::Number(n)) => n.as_u64().map(|n| n as usize),
        Some(Value::String(s)) => s.trim().trim_start_matches(['E', 'e']).parse().ok(),
        _ => None,
    }
    .ok_or_else(|| "the reply names no event (\"event\": a number)".to_string())?;
    if !events.contains(&event) {
        return Err(format!("the reply points at E{event}, which the transcript does not show"));
    }
    Ok((phrase, event))
}

/// A group's name from a reply, or why the reply is not one.
pub fn read_name(text: &str) -> Result<String, String> {
    phrase(&object(text)?, "name", 1, 10)
}

fn object(text: &str) -> Result<serde_json::Map<String, Value>, String> {
    crate::strategy::prompt::first_json_object(text).ok_or_else(|| {
        let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(80).collect();
        format!("the reply is not a JSON object: \"{t}\"")
    })
}

fn phrase(v: &serde_json::Map<String, Value>, key: &str, min: usize, max: usize) -> Result<String, String> {
    let s = v.get(key).and_then(Value::as_str).map(str::trim).unwrap_or("");
    let words = s.split_whitespace().count();
    if words < min || words > max {
        return Err(format!("\"{key}\" should be {min} to {max} words, the reply gave {words}"));
    }
    Ok(s.split_whitespace().collect::<Vec<_>>().join(" "))
}
