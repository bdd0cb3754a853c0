//! The OpenAI Responses API to and from the pivot (Chat Completions):
//! `instructions`, input items (messages, `function_call`,
//! `function_call_output` with their `call_id`s), function tools, the text
//! format, and the output items of a reply. `previous_response_id` is
//! answered by the gateway from the session's own record before a request
//! reaches here.

use serde_json::{Map, Value, json};

use super::chat::{ReplyParts, check_keys, content_text, reply_from_parts, reply_parts, text_of};
use crate::model::wire::{Untranslatable, untranslatable};

/// Request fields read. `store`, `include`, `prompt_cache_key`,
/// `metadata`, `client_metadata`, `user`, `service_tier` and `truncation`
/// concern OpenAI's own service (what it keeps, caches, bills, who calls):
/// accepted and not passed on.
const REQUEST_KEYS: &[&str] = &[
    "model",
    "input",
    "instructions",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "max_output_tokens",
    "stream",
    "store",
    "text",
    "parallel_tool_calls",
    "reasoning",
    "include",
    "prompt_cache_key",
    "metadata",
    "client_metadata",
    "user",
    "service_tier",
    "truncation",
];

pub fn request_to_chat(body: &Value) -> Result<Value, Untranslatable> {
    check_keys(body, REQUEST_KEYS, "")?;
    let mut messages: Vec<Value> = Vec::new();
    if let Some(s) = body.get("instructions").and_then(Value::as_str) {
        messages.push(json!({"role": "system", "content": s}));
    }
    match body.get("input") {
        Some(Value::String(s)) => messages.push(json!({"role": "user", "content": s})),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                read_item(item, &format!("input[{i}]"), &mut messages)?;
            }
        }
        _ => return Err(untranslatable("input", "missing, or neither a string nor an array of items")),
    }
    let mut out = Map::new();
    if let Some(m) = body.get("model") {
        out.insert("model".into(), m.clone());
    }
    out.insert("messages".into(), Value::Array(messages));
    for (from, to) in [
        ("temperature", "temperature"),
        ("top_p", "top_p"),
        ("max_output_tokens", "max_tokens"),
        ("parallel_tool_calls", "parallel_tool_calls"),
    ] {
        if let Some(v) = body.get(from).filter(|v| !v.is_null()) {
            out.insert(to.into(), v.clone());
        }
    }
    if let Some(effort) = body.pointer("/reasoning/effort").filter(|v| !v.is_null()) {
        out.insert("reasoning_effort".into(), effort.clone());
    }
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        let mut defs = Vec::new();
        // A namespace groups function tools (Codex's sub-agents): its
        // functions are offered as they are.
        let flat: Vec<(String, &Value)> = tools
            .iter()
            .enumerate()
            .flat_map(|(i, t)| {
                match (t.get("type").and_then(Value::as_str), t.get("tools").and_then(Value::as_array)) {
                    (Some("namespace"), Some(inner)) => {
                        inner.iter().enumerate().map(|(j, f)| (format!("tools[{i}].tools[{j}]"), f)).collect::<Vec<_>>()
                    }
                    _ => vec![(format!("tools[{i}]"), t)],
                }
            })
            .collect();
        for (at, t) in flat {
            if t.get("type").and_then(Value::as_str) != Some("function") {
                return Err(untranslatable(
                    format!("{at}.type"),
                    format!(
                        "a '{}' tool (one of OpenAI's own) has no counterpart in Chat Completions",
                        t.get("type").map(text_of).unwrap_or_default()
                    ),
                ));
            }
            let mut f = Map::new();
            for k in ["name", "description", "parameters", "strict"] {
                if let Some(v) = t.get(k).filter(|v| !v.is_null()) {
                    f.insert(k.into(), v.clone());
                }
            }
            defs.push(json!({"type": "function", "function": Value::Object(f)}));
        }
        out.insert("tools".into(), Value::Array(defs));
    }
    if let Some(choice) = body.get("tool_choice") {
        let c = match choice {
            Value::String(_) => choice.clone(),
            v if v.get("type").and_then(Value::as_str) == Some("function") => {
                json!({"type": "function", "function": {"name": v.get("name").cloned().unwrap_or(Value::Null)}})
            }
            _ => return Err(untranslatable("tool_choice", "neither a mode nor a function")),
        };
        out.insert("tool_choice".into(), c);
    }
    if let Some(format) = body.pointer("/text/format") {
        match format.get("type").and_then(Value::as_str) {
            Some("text") | None => {}
            Some("json_object") => {
                out.insert("response_format".into(), json!({"type": "json_object"}));
            }
            Some("json_schema") => {
                let mut s = Map::new();
                for k in ["name", "schema", "strict", "description"] {
                    if let Some(v) = format.get(k) {
                        s.insert(k.into(), v.clone());
                    }
                }
                out.insert("response_format".into(), json!({"type": "json_schema", "json_schema": Value::Object(s)}));
            }
            Some(other) => return Err(untranslatable("text.format.type", format!("unknown format '{other}'"))),
        }
    }
    Ok(Value::Object(out))
}

fn read_item(item: &Value, at: &str, messages: &mut Vec<Value>) -> Result<(), Untranslatable> {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("message");
    match kind {
        "message" => {
            let role = match item.get("role").and_then(Value::as_str) {
                Some(r @ ("user" | "assistant" | "system")) => r,
                // Chat Completions servers other than OpenAI's know no developer role.
                Some("developer") => "system",
                other => return Err(untranslatable(format!("{at}.role"), format!("unknown role {other:?}"))),
            };
            let content = match item.get("content") {
                Some(Value::String(s)) => json!(s),
                Some(Value::Array(parts)) => {
                    let mut out = Vec::new();
                    for (j, p) in parts.iter().enumerate() {
                        match p.get("type").and_then(Value::as_str) {
                            Some("input_text" | "output_text" | "text" | "refusal") => out.push(json!({"type": "text",
                                "text": p.get("text").or_else(|| p.get("refusal")).map(text_of).unwrap_or_default()})),
                            Some("input_image") => match p.get("image_url").and_then(Value::as_str) {
                                Some(url) => out.push(json!({"type": "image_url", "image_url": {"url": url}})),
                                None => {
                                    return Err(untranslatable(
                                        format!("{at}.content[{j}].file_id"),
                                        "an image by file id needs OpenAI's file store",
                                    ));
                                }
                            },
                            other => {
                                return Err(untranslatable(
                                    format!("{at}.content[{j}].type"),
                                    format!("a {other:?} part has no counterpart in Chat Completions"),
                                ));
                            }
                        }
                    }
                    if out.iter().all(|p| p.get("type").and_then(Value::as_str) == Some("text")) {
                        json!(out.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<String>())
                    } else {
                        Value::Array(out)
                    }
                }
                _ => return Err(untranslatable(format!("{at}.content"), "neither a string nor an array of parts")),
            };
            messages.push(json!({"role": role, "content": content}));
        }
        "function_call" => {
            let call = json!({
                "id": item.get("call_id").cloned().unwrap_or(Value::Null),
                "type": "function",
                "function": {
                    "name": item.get("name").cloned().unwrap_or(Value::Null),
                    "arguments": item.get("arguments").map(text_of).unwrap_or_default(),
                },
            });
            // Calls that follow an assistant turn belong to it.
            match messages.last_mut() {
                Some(last) if last.get("role").and_then(Value::as_str) == Some("assistant") => {
                    let obj = last.as_object_mut().expect("messages are objects");
                    match obj.get_mut("tool_calls") {
                        Some(Value::Array(calls)) => calls.push(call),
                        _ => {
                            obj.insert("tool_calls".into(), json!([call]));
                        }
                    }
                }
                _ => messages.push(json!({"role": "assistant", "content": null, "tool_calls": [call]})),
            }
        }
        "function_call_output" => messages.push(json!({
            "role": "tool",
            "tool_call_id": item.get("call_id").cloned().unwrap_or(Value::Null),
            "content": match item.get("output") {
                Some(Value::Array(parts)) => json!(content_text(&Value::Array(parts.clone()))),
                Some(v) => json!(text_of(v)),
                None => json!(""),
            },
        })),
        other => {
            return Err(untranslatable(
                format!("{at}.type"),
                format!("a '{other}' item has no counterpart in Chat Completions"),
            ));
        }
    }
    Ok(())
}

/// A Chat Completions request as a Responses request (stateless: `store`
/// false, the whole conversation as input items).
pub fn request_from_chat(chat: &Value) -> Result<Value, Untranslatable> {
    check_keys(
        chat,
        &[
            "model",
            "messages",
            "max_tokens",
            "max_completion_tokens",
            "temperature",
            "top_p",
            "stream",
            "stream_options",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "response_format",
            "user",
            "reasoning_effort",
        ],
        "",
    )?;
    let mut instructions = Vec::new();
    let mut input = Vec::new();
    let messages =
        chat.get("messages").and_then(Value::as_array).ok_or_else(|| untranslatable("messages", "missing"))?;
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
        let content = m.get("content").unwrap_or(&Value::Null);
        match role {
            "system" | "developer" => instructions.push(content_text(content)),
            "tool" => input.push(json!({
                "type": "function_call_output",
                "call_id": m.get("tool_call_id").cloned().unwrap_or(Value::Null),
                "output": content_text(content),
            })),
            "user" | "assistant" => {
                let text_type = if role == "user" { "input_text" } else { "output_text" };
                let parts: Vec<Value> = match content {
                    Value::Null => Vec::new(),
                    Value::String(s) if s.is_empty() => Vec::new(),
                    Value::String(s) => vec![json!({"type": text_type, "text": s})],
                    Value::Array(parts) => parts
                        .iter()
                        .map(|p| match p.get("type").and_then(Value::as_str) {
                            Some("image_url") => json!({"type": "input_image",
                                "image_url": p.pointer("/image_url/url").cloned().unwrap_or(Value::Null)}),
                            _ => json!({"type": text_type, "text": p.get("text").map(text_of).unwrap_or_default()}),
                        })
                        .collect(),
                    _ => return Err(untranslatable(format!("messages[{i}].content"), "neither text nor parts")),
                };
                if !parts.is_empty() {
                    input.push(json!({"type": "message", "role": role, "content": parts}));
                }
                for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let f = call.get("function").unwrap_or(&Value::Null);
                    input.push(json!({
                        "type": "function_call",
                        "call_id": call.get("id").cloned().unwrap_or(Value::Null),
                        "name": f.get("name").cloned().unwrap_or(Value::Null),
                        "arguments": f.get("arguments").map(text_of).unwrap_or_default(),
                    }));
                }
            }
            other => return Err(untranslatable(format!("messages[{i}].role"), format!("unknown role '{other}'"))),
        }
    }
    let mut out = Map::new();
    if let Some(m) = chat.get("model") {
        out.insert("model".into(), m.clone());
    }
    if !instructions.is_empty() {
        out.insert("instructions".into(), json!(instructions.join("\n\n")));
    }
    out.insert("input".into(), Value::Array(input));
    out.insert("store".into(), json!(false));
    if let Some(n) = chat.get("max_completion_tokens").or_else(|| chat.get("max_tokens")) {
        out.insert("max_output_tokens".into(), n.clone());
    }
    for k in ["temperature", "top_p", "parallel_tool_calls"] {
        if let Some(v) = chat.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    if let Some(tools) = chat.get("tools").and_then(Value::as_array) {
        let mut defs = Vec::new();
        for (i, t) in tools.iter().enumerate() {
            let Some(f) = t.get("function").and_then(Value::as_object) else {
                return Err(untranslatable(format!("tools[{i}].type"), "only function tools can be translated"));
            };
            let mut d = f.clone();
            d.insert("type".into(), json!("function"));
            defs.push(Value::Object(d));
        }
        out.insert("tools".into(), Value::Array(defs));
    }
    if let Some(choice) = chat.get("tool_choice") {
        let c = match choice.pointer("/function/name") {
            Some(name) => json!({"type": "function", "name": name}),
            None => choice.clone(),
        };
        out.insert("tool_choice".into(), c);
    }
    if let Some(format) = chat.get("response_format") {
        let f = match format.get("type").and_then(Value::as_str) {
            Some("json_schema") => {
                let mut f = format.get("json_schema").and_then(Value::as_object).cloned().unwrap_or_default();
                f.insert("type".into(), json!("json_schema"));
                Value::Object(f)
            }
            Some(t) => json!({"type": t}),
            None => return Err(untranslatable("response_format.type", "missing")),
        };
        out.insert("text".into(), json!({"format": f}));
    }
    Ok(Value::Object(out))
}

/// A Responses reply read into the pivot.
pub fn reply_to_chat(body: &Value) -> Result<Value, Untranslatable> {
    let mut text = String::new();
    let mut calls = Vec::new();
    for (i, item) in body.get("output").and_then(Value::as_array).into_iter().flatten().enumerate() {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                for p in item.get("content").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        text.push_str(t);
                    }
                }
            }
            Some("function_call") => calls.push((
                item.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string(),
                item.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                item.get("arguments").map(text_of).unwrap_or_default(),
            )),
            Some("reasoning") => {}
            other => {
                return Err(untranslatable(
                    format!("output[{i}].type"),
                    format!("a {other:?} item has no counterpart in Chat Completions"),
                ));
            }
        }
    }
    let finish = if body.get("status").and_then(Value::as_str) == Some("incomplete") {
        "length"
    } else if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    Ok(reply_from_parts(&ReplyParts::of_vendor_reply(body, text, calls, finish)))
}

/// A pivot reply as a Responses reply: a message item (when there is text
/// or nothing else) and a `function_call` item per call.
pub fn reply_from_chat(chat: &Value) -> Value {
    let p = reply_parts(chat);
    let base = p.id.trim_start_matches("chatcmpl-").to_string();
    let mut output = Vec::new();
    if !p.text.is_empty() || p.calls.is_empty() {
        output.push(json!({
            "type": "message",
            "id": format!("msg_{base}"),
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": p.text, "annotations": []}],
        }));
    }
    for (i, (call_id, name, args)) in p.calls.iter().enumerate() {
        output.push(json!({
            "type": "function_call",
            "id": format!("fc_{base}_{i}"),
            "call_id": call_id,
            "name": name,
            "arguments": args,
            "status": "completed",
        }));
    }
    let status = if p.finish == "length" { "incomplete" } else { "completed" };
    json!({
        "id": format!("resp_{base}"),
        "object": "response",
        "created_at": 0,
        "status": status,
        "error": null,
        "incomplete_details": if status == "incomplete" { json!({"reason": "max_output_tokens"}) } else { Value::Null },
        "model": p.model,
        "output": output,
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": p.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": p.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": p.prompt_tokens + p.completion_tokens,
        },
    })
}
