//! Anthropic Messages to and from the pivot (Chat Completions): `system`,
//! text and image blocks, `tool_use` and `tool_result` with their ids,
//! `tool_choice`, stop reasons and usage.

use serde_json::{Map, Value, json};

use super::chat::{ReplyParts, check_keys, reply_from_parts, reply_parts, text_of};
use crate::model::wire::{Untranslatable, untranslatable};

/// Request fields read. `metadata`, a block's `cache_control` and
/// `context_management` concern Anthropic's own service (who calls, what it
/// caches, which old thinking it clears); `thinking` and `output_config`
/// ask for reasoning a Chat Completions model does or does not do on its
/// own: all are accepted and not passed on (the reply has no thinking
/// blocks).
const REQUEST_KEYS: &[&str] = &[
    "model",
    "messages",
    "system",
    "max_tokens",
    "temperature",
    "top_p",
    "stop_sequences",
    "stream",
    "tools",
    "tool_choice",
    "metadata",
    "thinking",
    "context_management",
    "output_config",
];

pub fn request_to_chat(body: &Value) -> Result<Value, Untranslatable> {
    check_keys(body, REQUEST_KEYS, "")?;
    let mut messages = Vec::new();
    match body.get("system") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => messages.push(json!({"role": "system", "content": s})),
        Some(Value::Array(blocks)) => {
            let mut text = String::new();
            for (j, b) in blocks.iter().enumerate() {
                if b.get("type").and_then(Value::as_str) != Some("text") {
                    return Err(untranslatable(format!("system[{j}].type"), "only text blocks can be a system prompt"));
                }
                text.push_str(b.get("text").and_then(Value::as_str).unwrap_or_default());
            }
            messages.push(json!({"role": "system", "content": text}));
        }
        Some(_) => return Err(untranslatable("system", "neither a string nor an array of text blocks")),
    }
    let Some(turns) = body.get("messages").and_then(Value::as_array) else {
        return Err(untranslatable("messages", "missing, or not an array"));
    };
    for (i, m) in turns.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        // A system message mid-conversation (Claude Code's) is one in Chat Completions too.
        if role == "system" {
            let text = match m.get("content") {
                Some(Value::Array(blocks)) => {
                    blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect()
                }
                Some(v) => text_of(v),
                None => String::new(),
            };
            messages.push(json!({"role": "system", "content": text}));
            continue;
        }
        if role != "user" && role != "assistant" {
            return Err(untranslatable(
                format!("messages[{i}].role"),
                format!("'{role}' is neither user nor assistant"),
            ));
        }
        let blocks = match m.get("content") {
            Some(Value::String(s)) => {
                messages.push(json!({"role": role, "content": s}));
                continue;
            }
            Some(Value::Array(b)) => b,
            _ => {
                return Err(untranslatable(
                    format!("messages[{i}].content"),
                    "neither a string nor an array of blocks",
                ));
            }
        };
        let mut parts = Vec::new();
        let mut calls = Vec::new();
        for (j, b) in blocks.iter().enumerate() {
            let at = format!("messages[{i}].content[{j}]");
            match b.get("type").and_then(Value::as_str) {
                Some("text") => {
                    parts.push(json!({"type": "text", "text": b.get("text").map(text_of).unwrap_or_default()}))
                }
                Some("image") => parts.push(image_part(b, &at)?),
                Some("tool_use") if role == "assistant" => {
                    let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                    calls.push(json!({
                        "id": b.get("id").and_then(Value::as_str).unwrap_or_default(),
                        "type": "function",
                        "function": {"name": b.get("name").and_then(Value::as_str).unwrap_or_default(), "arguments": input.to_string()},
                    }));
                }
                Some("tool_result") if role == "user" => {
                    // Results come first in Chat Completions: a `tool`
                    // message each, right after the assistant's calls.
                    flush_user(&mut messages, &mut parts);
                    let mut content = match b.get("content") {
                        Some(Value::Array(inner)) => {
                            let mut s = String::new();
                            for (k, c) in inner.iter().enumerate() {
                                if c.get("type").and_then(Value::as_str) != Some("text") {
                                    return Err(untranslatable(
                                        format!("{at}.content[{k}].type"),
                                        "a tool result other than text has no counterpart in Chat Completions",
                                    ));
                                }
                                s.push_str(c.get("text").and_then(Value::as_str).unwrap_or_default());
                            }
                            s
                        }
                        Some(v) => text_of(v),
                        None => String::new(),
                    };
                    if b.get("is_error").and_then(Value::as_bool) == Some(true) {
                        content = format!("error: {content}");
                    }
                    messages.push(json!({
                        "role": "tool",
                        "tool_call_id": b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default(),
                        "content": content,
                    }));
                }
                Some(other) => {
                    return Err(untranslatable(
                        format!("{at}.type"),
                        format!("a '{other}' block in a {role} turn has no counterpart in Chat Completions"),
                    ));
                }
                None => return Err(untranslatable(format!("{at}.type"), "missing")),
            }
        }
        if role == "assistant" {
            let text: String = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            let mut msg = Map::new();
            msg.insert("role".into(), json!("assistant"));
            msg.insert("content".into(), if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) });
            if !calls.is_empty() {
                msg.insert("tool_calls".into(), Value::Array(calls));
            }
            messages.push(Value::Object(msg));
        } else {
            flush_user(&mut messages, &mut parts);
        }
    }
    let mut out = Map::new();
    if let Some(m) = body.get("model") {
        out.insert("model".into(), m.clone());
    }
    out.insert("messages".into(), Value::Array(messages));
    for (from, to) in
        [("max_tokens", "max_tokens"), ("temperature", "temperature"), ("top_p", "top_p"), ("stop_sequences", "stop")]
    {
        if let Some(v) = body.get(from) {
            out.insert(to.into(), v.clone());
        }
    }
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        let mut defs = Vec::new();
        for (i, t) in tools.iter().enumerate() {
            if t.get("type").and_then(Value::as_str).is_some_and(|ty| ty != "custom") {
                return Err(untranslatable(
                    format!("tools[{i}].type"),
                    "a server or client tool of Anthropic's own has no counterpart in Chat Completions",
                ));
            }
            defs.push(json!({"type": "function", "function": {
                "name": t.get("name").cloned().unwrap_or(Value::Null),
                "description": t.get("description").cloned().unwrap_or(json!("")),
                "parameters": t.get("input_schema").cloned().unwrap_or(json!({"type": "object"})),
            }}));
        }
        out.insert("tools".into(), Value::Array(defs));
    }
    if let Some(choice) = body.get("tool_choice") {
        let chat = match choice.get("type").and_then(Value::as_str) {
            Some("auto") => json!("auto"),
            Some("any") => json!("required"),
            Some("none") => json!("none"),
            Some("tool") => {
                json!({"type": "function", "function": {"name": choice.get("name").cloned().unwrap_or(Value::Null)}})
            }
            _ => return Err(untranslatable("tool_choice.type", "neither auto, any, none nor tool")),
        };
        out.insert("tool_choice".into(), chat);
        if choice.get("disable_parallel_tool_use").and_then(Value::as_bool) == Some(true) {
            out.insert("parallel_tool_calls".into(), json!(false));
        }
    }
    Ok(Value::Object(out))
}

fn flush_user(messages: &mut Vec<Value>, parts: &mut Vec<Value>) {
    if parts.is_empty() {
        return;
    }
    let content = if parts.iter().all(|p| p.get("type").and_then(Value::as_str) == Some("text")) {
        json!(parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<String>())
    } else {
        Value::Array(std::mem::take(parts))
    };
    parts.clear();
    messages.push(json!({"role": "user", "content": content}));
}

fn image_part(b: &Value, at: &str) -> Result<Value, Untranslatable> {
    let source = b.get("source").unwrap_or(&Value::Null);
    let url = match source.get("type").and_then(Value::as_str) {
        Some("base64") => format!(
            "data:{};base64,{}",
            source.get("media_type").and_then(Value::as_str).unwrap_or("image/png"),
            source.get("data").and_then(Value::as_str).unwrap_or_default()
        ),
        Some("url") => source.get("url").and_then(Value::as_str).unwrap_or_default().to_string(),
        _ => return Err(untranslatable(format!("{at}.source.type"), "an image source other than base64 or url")),
    };
    Ok(json!({"type": "image_url", "image_url": {"url": url}}))
}

/// A Chat Completions request as Anthropic Messages, for an upstream that
/// speaks it. `max_tokens` is required there: `default_max_tokens` fills it.
pub fn request_from_chat(chat: &Value, default_max_tokens: Option<u32>) -> Result<Value, Untranslatable> {
    check_keys(
        chat,
        &[
            "model",
            "messages",
            "max_tokens",
            "max_completion_tokens",
            "temperature",
            "top_p",
            "stop",
            "stream",
            "stream_options",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "user",
        ],
        "",
    )?;
    let mut system = Vec::new();
    let mut turns: Vec<Value> = Vec::new();
    let messages =
        chat.get("messages").and_then(Value::as_array).ok_or_else(|| untranslatable("messages", "missing"))?;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let content = m.get("content").unwrap_or(&Value::Null);
        let blocks = match role {
            "system" | "developer" => {
                system.push(super::chat::content_text(content));
                continue;
            }
            "tool" => vec![json!({
                "type": "tool_result",
                "tool_use_id": m.get("tool_call_id").and_then(Value::as_str).unwrap_or_default(),
                "content": super::chat::content_text(content),
            })],
            "user" | "assistant" => {
                let mut blocks = content_blocks(content, &format!("messages[{i}].content"))?;
                for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let f = call.get("function").unwrap_or(&Value::Null);
                    let args = f.get("arguments").map(text_of).unwrap_or_default();
                    let input: Value = if args.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&args).map_err(|e| {
                            untranslatable(
                                format!("messages[{i}].tool_calls.function.arguments"),
                                format!("not JSON: {e}"),
                            )
                        })?
                    };
                    blocks.push(json!({"type": "tool_use", "id": call.get("id").cloned().unwrap_or(Value::Null),
                        "name": f.get("name").cloned().unwrap_or(Value::Null), "input": input}));
                }
                blocks
            }
            other => return Err(untranslatable(format!("messages[{i}].role"), format!("unknown role '{other}'"))),
        };
        let speaker = if role == "assistant" { "assistant" } else { "user" };
        // Anthropic wants turns to alternate: consecutive user turns (a tool
        // result and a question) become one.
        match turns.last_mut() {
            Some(last) if last.get("role").and_then(Value::as_str) == Some(speaker) => {
                if let Some(Value::Array(prev)) = last.get_mut("content") {
                    prev.extend(blocks);
                }
            }
            _ => turns.push(json!({"role": speaker, "content": blocks})),
        }
    }
    let mut out = Map::new();
    if let Some(m) = chat.get("model") {
        out.insert("model".into(), m.clone());
    }
    let max = chat.get("max_completion_tokens").or_else(|| chat.get("max_tokens")).and_then(Value::as_u64);
    out.insert("max_tokens".into(), json!(max.or(default_max_tokens.map(u64::from)).unwrap_or(1024)));
    if !system.is_empty() {
        out.insert("system".into(), json!(system.join("\n\n")));
    }
    out.insert("messages".into(), Value::Array(turns));
    for k in ["temperature", "top_p"] {
        if let Some(v) = chat.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    match chat.get("stop") {
        Some(Value::String(s)) => {
            out.insert("stop_sequences".into(), json!([s]));
        }
        Some(v @ Value::Array(_)) => {
            out.insert("stop_sequences".into(), v.clone());
        }
        _ => {}
    }
    if let Some(tools) = chat.get("tools").and_then(Value::as_array) {
        let mut defs = Vec::new();
        for (i, t) in tools.iter().enumerate() {
            let Some(f) = t.get("function") else {
                return Err(untranslatable(format!("tools[{i}].type"), "only function tools can be translated"));
            };
            defs.push(json!({
                "name": f.get("name").cloned().unwrap_or(Value::Null),
                "description": f.get("description").cloned().unwrap_or(json!("")),
                "input_schema": f.get("parameters").cloned().unwrap_or(json!({"type": "object"})),
            }));
        }
        out.insert("tools".into(), Value::Array(defs));
    }
    if let Some(choice) = chat.get("tool_choice") {
        let a = match choice {
            Value::String(s) if s == "auto" => json!({"type": "auto"}),
            Value::String(s) if s == "required" => json!({"type": "any"}),
            Value::String(s) if s == "none" => json!({"type": "none"}),
            v => match v.pointer("/function/name") {
                Some(name) => json!({"type": "tool", "name": name}),
                None => return Err(untranslatable("tool_choice", "neither auto, required, none nor a function")),
            },
        };
        out.insert("tool_choice".into(), a);
    }
    Ok(Value::Object(out))
}

fn content_blocks(content: &Value, at: &str) -> Result<Vec<Value>, Untranslatable> {
    match content {
        Value::Null => Ok(Vec::new()),
        Value::String(s) if s.is_empty() => Ok(Vec::new()),
        Value::String(s) => Ok(vec![json!({"type": "text", "text": s})]),
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .map(|(j, p)| match p.get("type").and_then(Value::as_str) {
                Some("text") => Ok(json!({"type": "text", "text": p.get("text").cloned().unwrap_or(json!(""))})),
                Some("image_url") => {
                    let url = p.pointer("/image_url/url").and_then(Value::as_str).unwrap_or_default();
                    Ok(match url.strip_prefix("data:").and_then(|r| r.split_once(";base64,")) {
                        Some((media, data)) => {
                            json!({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
                        }
                        None => json!({"type": "image", "source": {"type": "url", "url": url}}),
                    })
                }
                _ => Err(untranslatable(format!("{at}[{j}].type"), "a content part other than text or image_url")),
            })
            .collect(),
        _ => Err(untranslatable(at, "neither a string nor an array of parts")),
    }
}

/// An Anthropic reply read into the pivot.
pub fn reply_to_chat(body: &Value) -> Result<Value, Untranslatable> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for (j, b) in body.get("content").and_then(Value::as_array).into_iter().flatten().enumerate() {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(b.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some("tool_use") => calls.push((
                b.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                b.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                b.get("input").cloned().unwrap_or_else(|| json!({})).to_string(),
            )),
            Some("thinking" | "redacted_thinking") => {}
            other => {
                return Err(untranslatable(
                    format!("content[{j}].type"),
                    format!("a '{}' block has no counterpart in Chat Completions", other.unwrap_or("?")),
                ));
            }
        }
    }
    let finish = match body.get("stop_reason").and_then(Value::as_str) {
        Some("tool_use") => "tool_calls",
        Some("max_tokens") => "length",
        _ => "stop",
    };
    Ok(reply_from_parts(&ReplyParts::of_vendor_reply(body, text, calls, finish)))
}

/// A pivot reply as Anthropic Messages.
pub fn reply_from_chat(chat: &Value) -> Value {
    let p = reply_parts(chat);
    let mut content = Vec::new();
    if !p.text.is_empty() || p.calls.is_empty() {
        content.push(json!({"type": "text", "text": p.text}));
    }
    for (id, name, args) in &p.calls {
        let input: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    let stop = match p.finish.as_str() {
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        _ if !p.calls.is_empty() => "tool_use",
        _ => "end_turn",
    };
    json!({
        "id": p.id.replace("chatcmpl-", "msg_"),
        "type": "message",
        "role": "assistant",
        "model": p.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": p.prompt_tokens, "output_tokens": p.completion_tokens},
    })
}
