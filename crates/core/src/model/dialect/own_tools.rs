//! An agent's own tools as the wire carries them: the calls a reply asks
//! for, with their ids, and the results the agent's next request brings
//! back for those ids; and a result rewritten in place (an injected fault,
//! the user's edit) before the upstream reads it. Read in the pivot (Chat
//! Completions), rewritten in the request's own dialect.

use serde_json::Value;

use crate::model::wire::{Dialect, WireRequest};

/// A tool call a reply asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct Asked {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A tool result a request brings back.
#[derive(Clone, Debug, PartialEq)]
pub struct Brought {
    pub id: String,
    pub content: String,
}

/// The tool calls a Chat Completions reply asks for.
pub fn asked(chat_reply: &Value) -> Vec<Asked> {
    let calls = chat_reply.pointer("/choices/0/message/tool_calls").and_then(Value::as_array);
    calls.into_iter().flatten().filter_map(asked_one).collect()
}

fn asked_one(call: &Value) -> Option<Asked> {
    let id = call.get("id")?.as_str()?.to_string();
    let f = call.get("function")?;
    let name = f.get("name")?.as_str()?.to_string();
    // Arguments travel as a JSON string; one that is not JSON is kept as text.
    let arguments = match f.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
        Some(v) => v.clone(),
        None => Value::Null,
    };
    Some(Asked { id, name, arguments })
}

/// The tool results a Chat Completions request brings, in order, and the
/// calls its own assistant messages made (a result's call by its id).
pub fn brought(chat_request: &Value) -> (Vec<Brought>, Vec<Asked>) {
    let messages = chat_request.get("messages").and_then(Value::as_array).into_iter().flatten();
    let (mut results, mut calls) = (Vec::new(), Vec::new());
    for m in messages {
        match m.get("role").and_then(Value::as_str) {
            Some("tool") => {
                let Some(id) = m.get("tool_call_id").and_then(Value::as_str) else { continue };
                results.push(Brought { id: id.to_string(), content: text_of(m.get("content")) });
            }
            Some("assistant") => {
                let asked = m.get("tool_calls").and_then(Value::as_array).into_iter().flatten();
                calls.extend(asked.filter_map(asked_one));
            }
            _ => {}
        }
    }
    (results, calls)
}

fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        // Chat's content parts: their text, in order.
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        Some(Value::Null) | None => String::new(),
        Some(v) => v.to_string(),
    }
}

/// Whether a result the agent brought reads as an error: Anthropic's
/// `is_error` (written `error: …` in the pivot), a JSON object with an
/// `error`, or text that starts as errors and tracebacks do.
pub fn reads_as_error(content: &str) -> bool {
    let t = content.trim_start();
    let lower = t.get(..12).unwrap_or(t).to_ascii_lowercase();
    if lower.starts_with("error") || lower.starts_with("traceback") || lower.starts_with("exception") {
        return true;
    }
    serde_json::from_str::<Value>(t).is_ok_and(|v| v.get("error").is_some_and(|e| !e.is_null()))
}

/// Rewrites the result for `id` in the request, in its own dialect: the
/// upstream reads `content` instead (an error, for Anthropic, marked as
/// one). False when the request holds no result for `id`.
pub fn rewrite(wire: &mut WireRequest, id: &str, content: &str, is_error: bool) -> bool {
    let mut found = false;
    match wire.dialect {
        Dialect::Chat => {
            for m in wire.body.get_mut("messages").and_then(Value::as_array_mut).into_iter().flatten() {
                if m.get("role").and_then(Value::as_str) == Some("tool")
                    && m.get("tool_call_id").and_then(Value::as_str) == Some(id)
                {
                    m["content"] = Value::String(content.to_string());
                    found = true;
                }
            }
        }
        Dialect::Anthropic => {
            for m in wire.body.get_mut("messages").and_then(Value::as_array_mut).into_iter().flatten() {
                for b in m.get_mut("content").and_then(Value::as_array_mut).into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) == Some("tool_result")
                        && b.get("tool_use_id").and_then(Value::as_str) == Some(id)
                    {
                        b["content"] = Value::String(content.to_string());
                        match b.as_object_mut() {
                            Some(o) if is_error => {
                                o.insert("is_error".into(), Value::Bool(true));
                            }
                            Some(o) => {
                                o.remove("is_error");
                            }
                            None => {}
                        }
                        found = true;
                    }
                }
            }
        }
        Dialect::Responses => {
            for item in wire.body.get_mut("input").and_then(Value::as_array_mut).into_iter().flatten() {
                if item.get("type").and_then(Value::as_str) == Some("function_call_output")
                    && item.get("call_id").and_then(Value::as_str) == Some(id)
                {
                    item["output"] = Value::String(content.to_string());
                    found = true;
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_is_read_and_rewritten_in_each_dialect() {
        let chat = json!({"messages": [
            {"role": "user", "content": "count"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "word_count", "arguments": "{\"text\": \"a b\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "2"}]});
        let anthropic = json!({"messages": [
            {"role": "user", "content": "count"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "word_count", "input": {"text": "a b"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "2"}]}]});
        let responses = json!({"input": [
            {"type": "message", "role": "user", "content": "count"},
            {"type": "function_call", "call_id": "c1", "name": "word_count", "arguments": "{\"text\": \"a b\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "2"}]});
        for (dialect, body) in [(Dialect::Chat, chat), (Dialect::Anthropic, anthropic), (Dialect::Responses, responses)]
        {
            let mut wire = WireRequest { dialect, body };
            let (results, calls) = brought(&wire.to_chat().unwrap());
            assert_eq!(results, [Brought { id: "c1".into(), content: "2".into() }], "{dialect}");
            assert_eq!(
                calls,
                [Asked { id: "c1".into(), name: "word_count".into(), arguments: json!({"text": "a b"}) }]
            );
            assert!(rewrite(&mut wire, "c1", "Error: injected fault: error", true), "{dialect}");
            assert!(!rewrite(&mut wire, "c9", "x", false));
            let (results, _) = brought(&wire.to_chat().unwrap());
            assert!(reads_as_error(&results[0].content), "{dialect}: {}", results[0].content);
        }
    }

    #[test]
    fn errors_read_as_errors_and_results_as_results() {
        for e in [
            "Error: no such file",
            "error: bad input",
            "Traceback (most recent call last):",
            r#"{"error": "not found"}"#,
        ] {
            assert!(reads_as_error(e), "{e}");
        }
        for r in ["2", "the error rate is low", r#"{"error": null, "count": 2}"#, r#"{"words": 2}"#, ""] {
            assert!(!reads_as_error(r), "{r}");
        }
    }
}
