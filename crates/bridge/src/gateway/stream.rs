//! A reply as each dialect streams it (server-sent events), written from
//! the whole reply in that dialect: the events an SDK reassembles into the
//! same reply it would have got without streaming.

use serde_json::{Value, json};

use crate::model::wire::Dialect;

/// The events of `reply` (a whole reply body in `dialect`), as the body of
/// a `text/event-stream` response. `usage`: Chat Completions'
/// `stream_options.include_usage`.
pub fn events(dialect: Dialect, reply: &Value, usage: bool) -> String {
    match dialect {
        Dialect::Chat => chat(reply, usage),
        Dialect::Anthropic => anthropic(reply),
        Dialect::Responses => responses(reply),
    }
}

fn data(out: &mut String, v: &Value) {
    out.push_str("data: ");
    out.push_str(&v.to_string());
    out.push_str("\n\n");
}

fn named(out: &mut String, event: &str, v: &Value) {
    out.push_str("event: ");
    out.push_str(event);
    out.push('\n');
    data(out, v);
}

/// Text in pieces of a few words, as a model's tokens arrive.
pub fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c == ' ' && i - start >= 12 {
            out.push(&text[start..i]);
            start = i;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

fn chat(reply: &Value, usage: bool) -> String {
    let mut out = String::new();
    let base = json!({
        "id": reply.get("id").cloned().unwrap_or(Value::Null),
        "object": "chat.completion.chunk",
        "created": reply.get("created").cloned().unwrap_or(json!(0)),
        "model": reply.get("model").cloned().unwrap_or(Value::Null),
    });
    let chunk = |delta: Value, finish: Value| {
        let mut c = base.clone();
        c["choices"] = json!([{"index": 0, "delta": delta, "finish_reason": finish}]);
        c
    };
    let message = reply.pointer("/choices/0/message").cloned().unwrap_or(Value::Null);
    data(&mut out, &chunk(json!({"role": "assistant", "content": ""}), Value::Null));
    if let Some(text) = message.get("content").and_then(Value::as_str) {
        for p in pieces(text) {
            data(&mut out, &chunk(json!({"content": p}), Value::Null));
        }
    }
    for (i, call) in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let f = call.get("function").cloned().unwrap_or(Value::Null);
        data(
            &mut out,
            &chunk(
                json!({"tool_calls": [{"index": i, "id": call.get("id"), "type": "function",
                    "function": {"name": f.get("name"), "arguments": ""}}]}),
                Value::Null,
            ),
        );
        data(
            &mut out,
            &chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": f.get("arguments")}}]}), Value::Null),
        );
    }
    let finish = reply.pointer("/choices/0/finish_reason").cloned().unwrap_or(json!("stop"));
    data(&mut out, &chunk(json!({}), finish));
    if usage {
        let mut c = base.clone();
        c["choices"] = json!([]);
        c["usage"] = reply.get("usage").cloned().unwrap_or(Value::Null);
        data(&mut out, &c);
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn anthropic(reply: &Value) -> String {
    let mut out = String::new();
    let mut start = reply.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(0);
    named(&mut out, "message_start", &json!({"type": "message_start", "message": start}));
    for (i, block) in reply.get("content").and_then(Value::as_array).into_iter().flatten().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let mut empty = block.clone();
                empty["input"] = json!({});
                named(
                    &mut out,
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i, "content_block": empty}),
                );
                let input = block.get("input").cloned().unwrap_or(json!({})).to_string();
                named(
                    &mut out,
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": input}}),
                );
            }
            _ => {
                named(
                    &mut out,
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                );
                for p in pieces(block.get("text").and_then(Value::as_str).unwrap_or_default()) {
                    named(
                        &mut out,
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": p}}),
                    );
                }
            }
        }
        named(&mut out, "content_block_stop", &json!({"type": "content_block_stop", "index": i}));
    }
    named(
        &mut out,
        "message_delta",
        &json!({"type": "message_delta",
            "delta": {"stop_reason": reply.get("stop_reason"), "stop_sequence": reply.get("stop_sequence")},
            "usage": {"output_tokens": reply.pointer("/usage/output_tokens")}}),
    );
    named(&mut out, "message_stop", &json!({"type": "message_stop"}));
    out
}

fn responses(reply: &Value) -> String {
    let mut out = String::new();
    let mut seq = 0u64;
    let mut emit = |out: &mut String, kind: &str, mut v: Value| {
        v["type"] = json!(kind);
        v["sequence_number"] = json!(seq);
        seq += 1;
        named(out, kind, &v);
    };
    let mut start = reply.clone();
    start["status"] = json!("in_progress");
    start["output"] = json!([]);
    start["usage"] = Value::Null;
    emit(&mut out, "response.created", json!({"response": start.clone()}));
    emit(&mut out, "response.in_progress", json!({"response": start}));
    for (i, item) in reply.get("output").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let id = item.get("id").cloned().unwrap_or(Value::Null);
        let mut added = item.clone();
        added["status"] = json!("in_progress");
        match item.get("type").and_then(Value::as_str) {
            Some("function_call") => {
                added["arguments"] = json!("");
                emit(&mut out, "response.output_item.added", json!({"output_index": i, "item": added}));
                let args = item.get("arguments").cloned().unwrap_or(json!(""));
                emit(
                    &mut out,
                    "response.function_call_arguments.delta",
                    json!({"item_id": id, "output_index": i, "delta": args}),
                );
                emit(
                    &mut out,
                    "response.function_call_arguments.done",
                    json!({"item_id": id, "output_index": i, "arguments": args}),
                );
            }
            _ => {
                added["content"] = json!([]);
                emit(&mut out, "response.output_item.added", json!({"output_index": i, "item": added}));
                for (k, part) in item.get("content").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                    let empty = json!({"type": "output_text", "text": "", "annotations": []});
                    emit(
                        &mut out,
                        "response.content_part.added",
                        json!({"item_id": id, "output_index": i, "content_index": k, "part": empty}),
                    );
                    for p in pieces(text) {
                        emit(
                            &mut out,
                            "response.output_text.delta",
                            json!({"item_id": id, "output_index": i, "content_index": k, "delta": p, "logprobs": []}),
                        );
                    }
                    emit(
                        &mut out,
                        "response.output_text.done",
                        json!({"item_id": id, "output_index": i, "content_index": k, "text": text, "logprobs": []}),
                    );
                    emit(
                        &mut out,
                        "response.content_part.done",
                        json!({"item_id": id, "output_index": i, "content_index": k, "part": part}),
                    );
                }
            }
        }
        emit(&mut out, "response.output_item.done", json!({"output_index": i, "item": item}));
    }
    emit(&mut out, "response.completed", json!({"response": reply}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_rejoin_to_the_text() {
        let text = "The answer is five, as the add tool said when it was asked.";
        assert!(pieces(text).len() > 2);
        assert_eq!(pieces(text).concat(), text);
        assert!(pieces("").is_empty());
    }
}
