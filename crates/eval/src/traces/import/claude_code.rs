//! Claude Code's session files: a JSON object a line, `type` `user` or
//! `assistant` with an Anthropic `message` (`content` a string or blocks:
//! `text`, `thinking`, `tool_use`, `tool_result`); `summary`,
//! `file-history-snapshot`, `queue-operation` and `system` lines are
//! skipped, and so are side chains (`isSidechain`).

use serde_json::Value;

use super::build::{Conversation, ms_between};
use crate::model::Usage;

pub fn read(lines: &[(usize, Value)]) -> Result<(Conversation, usize), (usize, String)> {
    let mut c = Conversation::default();
    let mut start: Option<String> = None;
    let mut skipped = 0;
    // Claude Code writes a reply's blocks on lines of their own, under one message id.
    let mut last_id: Option<String> = None;
    for (n, v) in lines {
        let kind = v.get("type").and_then(Value::as_str).ok_or((*n, "no \"type\"".to_string()))?;
        if !matches!(kind, "user" | "assistant") || v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            skipped += 1;
            continue;
        }
        let stamp = v.get("timestamp").and_then(Value::as_str).unwrap_or_default().to_string();
        let t = ms_between(start.get_or_insert_with(|| stamp.clone()), &stamp);
        if c.id.is_empty()
            && let Some(id) = v.get("sessionId").and_then(Value::as_str)
        {
            c.id = id.to_string();
        }
        let message = v.get("message").ok_or((*n, format!("a {kind} line without \"message\"")))?;
        let content = message.get("content").ok_or((*n, "a message without \"content\"".to_string()))?;
        if kind == "user" {
            last_id = None;
            match content {
                Value::String(s) => c.user(t, s.clone()),
                Value::Array(blocks) => {
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => c.user(t, text_of(b)),
                            Some("tool_result") => {
                                let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                                let output = match b.get("content") {
                                    Some(Value::Array(parts)) => {
                                        Value::String(parts.iter().map(text_of).collect::<Vec<_>>().join("\n"))
                                    }
                                    Some(other) => other.clone(),
                                    None => Value::Null,
                                };
                                let error = b.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                                c.result(t, id.to_string(), output, error);
                            }
                            _ => {}
                        }
                    }
                }
                _ => return Err((*n, "\"content\" is neither text nor blocks".into())),
            }
            continue;
        }
        if c.model.is_empty()
            && let Some(m) = message.get("model").and_then(Value::as_str)
        {
            c.model = m.to_string();
        }
        let blocks = match content {
            Value::Array(b) => b.clone(),
            Value::String(s) => vec![serde_json::json!({"type": "text", "text": s})],
            _ => return Err((*n, "\"content\" is neither text nor blocks".into())),
        };
        let mut text = Vec::new();
        let mut calls = Vec::new();
        for b in &blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => text.push(text_of(b)),
                Some("tool_use") => {
                    let name =
                        b.get("name").and_then(Value::as_str).ok_or((*n, "a tool_use without \"name\"".to_string()))?;
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default();
                    calls.push((id.to_string(), name.to_string(), b.get("input").cloned().unwrap_or(Value::Null)));
                }
                _ => {}
            }
        }
        let u = message.get("usage");
        let count = |k: &str| u.and_then(|u| u.get(k)).and_then(Value::as_u64).unwrap_or(0);
        let usage = Usage {
            prompt_tokens: count("input_tokens")
                + count("cache_read_input_tokens")
                + count("cache_creation_input_tokens"),
            completion_tokens: count("output_tokens"),
            cached_tokens: count("cache_read_input_tokens"),
        };
        let id = message.get("id").and_then(Value::as_str).map(str::to_string);
        if id.is_some() && id == last_id {
            c.more_of_reply(t, text.join("\n"), calls, usage);
        } else {
            c.reply(t, text.join("\n"), calls, usage);
        }
        last_id = id;
    }
    if c.model.is_empty() {
        c.model = "claude-code".into();
    }
    Ok((c, skipped))
}

fn text_of(b: &Value) -> String {
    match b {
        Value::String(s) => s.clone(),
        _ => b.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
    }
}
