//! Codex's rollout files: a JSON object a line, `{timestamp, type,
//! payload}`. `session_meta` gives the id, `turn_context` the model, and
//! `response_item`s the conversation: `message` (user or assistant, its
//! `content` parts' text), `function_call` (`name`, `arguments` as a JSON
//! string, `call_id`) and `function_call_output` (`call_id`, `output`);
//! `event_msg`, `reasoning` and `compacted` lines are skipped.

use serde_json::Value;

use super::build::{Conversation, ms_between};
use crate::model::Usage;

/// A reply being gathered: its time, its text, its calls (id, tool, arguments).
type Reply = (u64, String, Vec<(String, String, Value)>);

pub fn read(lines: &[(usize, Value)]) -> Result<(Conversation, usize), (usize, String)> {
    let mut c = Conversation::default();
    let mut start: Option<String> = None;
    let mut skipped = 0;
    // An assistant's text and the calls after it are one reply.
    let mut reply: Option<Reply> = None;
    let flush = |c: &mut Conversation, reply: &mut Option<Reply>| {
        if let Some((t, text, calls)) = reply.take() {
            c.reply(t, text, calls, Usage::default());
        }
    };
    for (n, v) in lines {
        let kind = v.get("type").and_then(Value::as_str).ok_or((*n, "no \"type\"".to_string()))?;
        let payload = v.get("payload").ok_or((*n, "no \"payload\"".to_string()))?;
        let stamp = v.get("timestamp").and_then(Value::as_str).unwrap_or_default().to_string();
        let t = ms_between(start.get_or_insert_with(|| stamp.clone()), &stamp);
        match kind {
            "session_meta" => c.id = payload.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
            "turn_context" => {
                if let Some(m) = payload.get("model").and_then(Value::as_str) {
                    c.model = m.to_string();
                }
            }
            "response_item" => match payload.get("type").and_then(Value::as_str) {
                Some("message") => {
                    let text: Vec<&str> = payload
                        .get("content")
                        .and_then(Value::as_array)
                        .map(|parts| parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect())
                        .unwrap_or_default();
                    let text = text.join("\n");
                    match payload.get("role").and_then(Value::as_str) {
                        Some("assistant") => {
                            flush(&mut c, &mut reply);
                            reply = Some((t, text, Vec::new()));
                        }
                        // Codex writes its environment as a user message first.
                        Some("user") if text.trim_start().starts_with("<environment_context>") => skipped += 1,
                        Some("user") => {
                            flush(&mut c, &mut reply);
                            c.user(t, text);
                        }
                        _ => skipped += 1,
                    }
                }
                Some("function_call") => {
                    let name = payload
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or((*n, "a function_call without \"name\"".to_string()))?;
                    let id = payload.get("call_id").and_then(Value::as_str).unwrap_or_default();
                    let args = match payload.get("arguments") {
                        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
                        Some(other) => other.clone(),
                        None => Value::Null,
                    };
                    reply.get_or_insert_with(|| (t, String::new(), Vec::new())).2.push((
                        id.to_string(),
                        name.to_string(),
                        args,
                    ));
                }
                Some("function_call_output") => {
                    flush(&mut c, &mut reply);
                    let id = payload.get("call_id").and_then(Value::as_str).unwrap_or_default();
                    let (output, error) = match payload.get("output") {
                        Some(Value::Object(o)) => (
                            o.get("content").cloned().unwrap_or(Value::Null),
                            o.get("success").and_then(Value::as_bool) == Some(false),
                        ),
                        Some(Value::String(s)) => {
                            // Often a JSON object as a string: `{"output": …, "metadata": {"exit_code": N}}`.
                            let parsed: Option<Value> = serde_json::from_str(s).ok();
                            let failed = parsed
                                .as_ref()
                                .and_then(|p| p.pointer("/metadata/exit_code"))
                                .and_then(Value::as_i64)
                                .is_some_and(|c| c != 0);
                            (parsed.and_then(|p| p.get("output").cloned()).unwrap_or(Value::String(s.clone())), failed)
                        }
                        Some(other) => (other.clone(), false),
                        None => (Value::Null, false),
                    };
                    c.result(t, id.to_string(), output, error);
                }
                _ => skipped += 1,
            },
            _ => skipped += 1,
        }
    }
    flush(&mut c, &mut reply);
    if c.model.is_empty() {
        c.model = "codex".into();
    }
    Ok((c, skipped))
}
