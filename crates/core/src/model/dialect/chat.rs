//! OpenAI Chat Completions, the pivot: its request read as the engine's
//! [`ChatRequest`], a [`ChatResponse`] written as its reply, and the parts of
//! a reply the other dialects read.

use serde_json::{Map, Value, json};

use crate::model::wire::{Untranslatable, untranslatable};
use crate::model::{ChatRequest, ChatResponse, Message, ResponseSchema, Role, Speaker, ToolDef};

/// The engine's view of a Chat Completions request: each message as text
/// (a tool call written `name(arguments)`, an image as `[image]`), the
/// function tools, the schema and the sampling settings.
pub fn flatten(body: &Value, role: Role) -> Result<ChatRequest, Untranslatable> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(untranslatable("messages", "missing, or not an array"));
    };
    let mut out = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let speaker = match m.get("role").and_then(Value::as_str) {
            Some("system" | "developer") => Speaker::System,
            Some("user") => Speaker::User,
            Some("assistant") => Speaker::Assistant,
            Some("tool") => Speaker::Tool,
            Some(other) => {
                return Err(untranslatable(format!("messages[{i}].role"), format!("unknown role '{other}'")));
            }
            None => return Err(untranslatable(format!("messages[{i}].role"), "missing")),
        };
        let mut text = content_text(m.get("content").unwrap_or(&Value::Null));
        for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let f = call.get("function").unwrap_or(&Value::Null);
            let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
            let args = f.get("arguments").map(text_of).unwrap_or_default();
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("{name}({args})"));
        }
        out.push(Message { role: speaker, content: text });
    }
    let mut req = ChatRequest::new(role, out);
    req.tools = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let f = t.get("function")?;
            Some(ToolDef {
                name: f.get("name")?.as_str()?.to_string(),
                description: f.get("description").and_then(Value::as_str).unwrap_or_default().to_string(),
                parameters: f.get("parameters").cloned().unwrap_or_else(|| json!({"type": "object"})),
            })
        })
        .collect();
    req.response_schema = body.pointer("/response_format/json_schema").map(|s| ResponseSchema {
        name: s.get("name").and_then(Value::as_str).unwrap_or("response").to_string(),
        schema: s.get("schema").cloned().unwrap_or(Value::Null),
    });
    req.stop = match body.get("stop") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    req.temperature = body.get("temperature").and_then(Value::as_f64).map(|t| t as f32);
    req.max_tokens = body
        .get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_u64)
        .map(|n| n.min(u64::from(u32::MAX)) as u32);
    Ok(req)
}

/// A message's content as text: a string, or its parts' texts joined, an
/// image part as `[image]`.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p.get("type").and_then(Value::as_str) {
                Some("image_url" | "image" | "input_image") => "[image]".to_string(),
                _ => p.get("text").map(text_of).unwrap_or_else(|| text_of(p)),
            })
            .collect::<Vec<_>>()
            .join(""),
        other => text_of(other),
    }
}

/// A Chat Completions reply written from a [`ChatResponse`]. Tool-call ids
/// come from the reply's content, so the same reply has the same ids.
pub fn reply_body(resp: &ChatResponse, model: &str) -> Value {
    let seed = format!("{}{:?}", resp.text, resp.tool_calls);
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    let content = if resp.text.is_empty() && !resp.tool_calls.is_empty() { Value::Null } else { json!(resp.text) };
    message.insert("content".into(), content);
    if !resp.tool_calls.is_empty() {
        let calls: Vec<Value> = resp
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({
                    "id": id("call_", &seed, i),
                    "type": "function",
                    "function": { "name": c.name, "arguments": c.arguments.to_string() },
                })
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    let finish = if resp.tool_calls.is_empty() { "stop" } else { "tool_calls" };
    json!({
        "id": id("chatcmpl-", &seed, 0),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{ "index": 0, "message": Value::Object(message), "finish_reason": finish }],
        "usage": {
            "prompt_tokens": resp.usage.prompt_tokens,
            "completion_tokens": resp.usage.completion_tokens,
            "total_tokens": resp.usage.prompt_tokens + resp.usage.completion_tokens,
        },
    })
}

/// What the other dialects read of a Chat Completions reply.
pub struct ReplyParts {
    pub id: String,
    pub model: String,
    pub text: String,
    /// (id, name, arguments as JSON text)
    pub calls: Vec<(String, String, String)>,
    pub finish: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl ReplyParts {
    /// A Responses or Messages reply's parts: the text, calls and finish
    /// read from it, its id, model and usage (`input_tokens`,
    /// `output_tokens` in both) as it gives them.
    pub fn of_vendor_reply(body: &Value, text: String, calls: Vec<(String, String, String)>, finish: &str) -> Self {
        let usage = |k: &str| body.pointer(&format!("/usage/{k}")).and_then(Value::as_u64).unwrap_or(0);
        ReplyParts {
            id: body.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
            model: body.get("model").and_then(Value::as_str).unwrap_or_default().to_string(),
            text,
            calls,
            finish: finish.to_string(),
            prompt_tokens: usage("input_tokens"),
            completion_tokens: usage("output_tokens"),
        }
    }
}

pub fn reply_parts(body: &Value) -> ReplyParts {
    let message = body.pointer("/choices/0/message").unwrap_or(&Value::Null);
    let seed = body.to_string();
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let f = c.get("function").unwrap_or(&Value::Null);
            let args = match f.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => "{}".to_string(),
                Some(other) => other.to_string(),
            };
            let call_id =
                c.get("id").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| id("call_", &seed, i));
            (call_id, f.get("name").and_then(Value::as_str).unwrap_or_default().to_string(), args)
        })
        .collect();
    let usage = |k: &str| body.pointer(&format!("/usage/{k}")).and_then(Value::as_u64).unwrap_or(0);
    ReplyParts {
        id: body.get("id").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| id("chatcmpl-", &seed, 0)),
        model: body.get("model").and_then(Value::as_str).unwrap_or_default().to_string(),
        text: content_text(message.get("content").unwrap_or(&Value::Null)),
        calls,
        finish: body.pointer("/choices/0/finish_reason").and_then(Value::as_str).unwrap_or("stop").to_string(),
        prompt_tokens: usage("prompt_tokens"),
        completion_tokens: usage("completion_tokens"),
    }
}

/// A Chat Completions reply from its parts (the other dialects' replies read in).
pub fn reply_from_parts(p: &ReplyParts) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message
        .insert("content".into(), if p.text.is_empty() && !p.calls.is_empty() { Value::Null } else { json!(p.text) });
    if !p.calls.is_empty() {
        let calls: Vec<Value> = p
            .calls
            .iter()
            .map(
                |(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}),
            )
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    json!({
        "id": p.id,
        "object": "chat.completion",
        "created": 0,
        "model": p.model,
        "choices": [{ "index": 0, "message": Value::Object(message), "finish_reason": p.finish }],
        "usage": {
            "prompt_tokens": p.prompt_tokens,
            "completion_tokens": p.completion_tokens,
            "total_tokens": p.prompt_tokens + p.completion_tokens,
        },
    })
}

/// A request's keys, each either known to the reader or refused by name.
pub(crate) fn check_keys(body: &Value, known: &[&str], path: &str) -> Result<(), Untranslatable> {
    let Some(obj) = body.as_object() else {
        return Err(untranslatable(if path.is_empty() { "(body)" } else { path }, "not a JSON object"));
    };
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => {
            let field = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            Err(untranslatable(field, "has no counterpart in the upstream's dialect"))
        }
        None => Ok(()),
    }
}

/// A JSON value's text: strings as they are, anything else as JSON.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A short random-looking id, from a counter so that replies are
/// reproducible for a seed and a call order.
pub(crate) fn id(prefix: &str, seed: &str, n: usize) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{seed}/{n}").as_bytes());
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{hex}")
}
