//! A reply streamed by its endpoint (server-sent events): read as it
//! arrives, its text told to whoever watches ([`Tokens`]: the workbench's
//! Transcript), and put back together into the reply the endpoint would
//! have sent unstreamed, in its own dialect. From there the call goes on as
//! if the reply had come in one piece: the lenient reader, the injected
//! faults and a bridged agent take the whole body, and the trace keeps the
//! whole reply, never the pieces.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::wire::Dialect;

/// What a streaming call tells its watcher.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    /// More of the reply: its text, or a tool call's name and arguments.
    Text(String),
    /// The attempt broke off and another began: the text so far is void.
    Restart,
}

/// Where a streaming model reports a reply as it arrives (`none()` when
/// nobody watches), and whether it reported any text: a cassette records
/// that, so a replay streams where the recording did.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    tx: Option<UnboundedSender<Delta>>,
    told: Arc<AtomicBool>,
}

impl Tokens {
    pub fn none() -> Self {
        Tokens::default()
    }

    pub fn to(tx: UnboundedSender<Delta>) -> Self {
        Tokens { tx: Some(tx), told: Arc::default() }
    }

    pub(crate) fn send(&self, delta: Delta) {
        if matches!(delta, Delta::Text(_)) {
            self.told.store(true, Ordering::Relaxed);
        }
        if let Some(tx) = &self.tx {
            // A watcher that went away is no reason to stop the call.
            let _ = tx.send(delta);
        }
    }

    /// Some text was reported.
    pub fn told(&self) -> bool {
        self.told.load(Ordering::Relaxed)
    }
}

/// Server-sent events cut out of a byte stream as its chunks arrive.
#[derive(Default)]
pub(crate) struct Frames {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

/// One server-sent event: its name (if it gave one) and its data lines joined.
pub(crate) struct Frame {
    pub event: Option<String>,
    pub data: String,
}

impl Frames {
    /// The events `chunk` completes.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Frame> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        while let Some(n) = self.buf[start..].iter().position(|b| *b == b'\n') {
            let line = &self.buf[start..start + n];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = String::from_utf8_lossy(line).into_owned();
            start += n + 1;
            if line.is_empty() {
                if !self.data.is_empty() {
                    out.push(Frame { event: self.event.take(), data: self.data.join("\n") });
                    self.data.clear();
                }
                self.event = None;
                continue;
            }
            // A line that starts with ':' is a comment (a keep-alive).
            let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.event = Some(value.to_string()),
                "data" => self.data.push(value.to_string()),
                _ => {}
            }
        }
        self.buf.drain(..start);
        out
    }
}

/// A streamed reply being put back together, in the dialect it streams in.
pub(crate) struct Reassembly {
    dialect: Dialect,
    /// Events read so far.
    pub events: u64,
    /// True once the stream said the reply is whole.
    finished: bool,
    chat: ChatParts,
    message: Value,
    blocks: Vec<Value>,
    partial: Vec<String>,
    response: Value,
}

#[derive(Default)]
struct ChatParts {
    id: Value,
    model: Value,
    created: Value,
    text: String,
    reasoning: String,
    calls: Vec<(Value, String, String)>,
    finish: Option<Value>,
    usage: Option<Value>,
    /// llama.cpp's server sends its timings (the prompt cache's share
    /// among them) with the last chunk.
    timings: Option<Value>,
}

impl Reassembly {
    pub fn new(dialect: Dialect) -> Self {
        Reassembly {
            dialect,
            events: 0,
            finished: false,
            chat: ChatParts::default(),
            message: Value::Null,
            blocks: Vec::new(),
            partial: Vec::new(),
            response: Value::Null,
        }
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Reads one event; what it adds to the reply's text, if anything. An
    /// error event, or data that is not JSON, is the stream's failure.
    pub fn feed(&mut self, frame: &Frame) -> Result<Option<String>, String> {
        self.events += 1;
        if frame.data == "[DONE]" {
            self.finished = true;
            return Ok(None);
        }
        let v: Value = serde_json::from_str(&frame.data)
            .map_err(|e| format!("event {} of the stream is not JSON ({e}): {}", self.events, clip(&frame.data)))?;
        let kind = v.get("type").and_then(Value::as_str).map(str::to_string).or_else(|| frame.event.clone());
        if kind.as_deref() == Some("error") || (self.dialect == Dialect::Chat && v.get("error").is_some()) {
            let error = v.get("error").unwrap_or(&v);
            let message =
                error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_string);
            return Err(format!("the stream sent an error: {}", clip(&message)));
        }
        match self.dialect {
            Dialect::Chat => Ok(self.chat_chunk(&v)),
            Dialect::Anthropic => self.anthropic_event(kind.as_deref().unwrap_or_default(), &v),
            Dialect::Responses => self.responses_event(kind.as_deref().unwrap_or_default(), &v),
        }
    }

    fn chat_chunk(&mut self, v: &Value) -> Option<String> {
        let c = &mut self.chat;
        for (slot, key) in [(&mut c.id, "id"), (&mut c.model, "model"), (&mut c.created, "created")] {
            if slot.is_null()
                && let Some(x) = v.get(key)
            {
                *slot = x.clone();
            }
        }
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            c.usage = Some(u.clone());
        }
        if let Some(t) = v.get("timings").filter(|t| !t.is_null()) {
            c.timings = Some(t.clone());
        }
        let choice = v.pointer("/choices/0")?;
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            c.finish = Some(f.clone());
            self.finished = true;
        }
        let delta = choice.get("delta")?;
        let mut shown = String::new();
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            c.text.push_str(t);
            shown.push_str(t);
        }
        if let Some(t) = delta.get("reasoning_content").and_then(Value::as_str) {
            c.reasoning.push_str(t);
        }
        for (k, call) in delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
            let i = call.get("index").and_then(Value::as_u64).map_or(k, |i| i as usize);
            while c.calls.len() <= i {
                c.calls.push((Value::Null, String::new(), String::new()));
            }
            let slot = &mut c.calls[i];
            if let Some(id) = call.get("id").filter(|id| !id.is_null()) {
                slot.0 = id.clone();
            }
            let f = call.get("function");
            if let Some(name) = f.and_then(|f| f.get("name")).and_then(Value::as_str) {
                slot.1.push_str(name);
                shown.push_str(&format!("\n→ {name} "));
            }
            match f.and_then(|f| f.get("arguments")) {
                Some(Value::String(a)) => {
                    slot.2.push_str(a);
                    shown.push_str(a);
                }
                Some(Value::Null) | None => {}
                Some(other) => {
                    let a = other.to_string();
                    slot.2.push_str(&a);
                    shown.push_str(&a);
                }
            }
        }
        (!shown.is_empty()).then_some(shown)
    }

    fn anthropic_event(&mut self, kind: &str, v: &Value) -> Result<Option<String>, String> {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match kind {
            "message_start" => self.message = v.get("message").cloned().unwrap_or_else(|| json!({})),
            "content_block_start" => {
                while self.blocks.len() <= index {
                    self.blocks.push(json!({}));
                    self.partial.push(String::new());
                }
                let block = v.get("content_block").cloned().unwrap_or_else(|| json!({}));
                let shown = block.get("name").and_then(Value::as_str).map(|n| format!("\n→ {n} "));
                self.blocks[index] = block;
                return Ok(shown);
            }
            "content_block_delta" => {
                let Some(block) = self.blocks.get_mut(index) else {
                    return Err(format!("event {}: a delta for content block {index}, never started", self.events));
                };
                let delta = v.get("delta").cloned().unwrap_or_default();
                let text = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        let t = text("text");
                        append(block, "text", &t);
                        return Ok(Some(t));
                    }
                    Some("input_json_delta") => {
                        let t = text("partial_json");
                        self.partial[index].push_str(&t);
                        return Ok(Some(t));
                    }
                    Some("thinking_delta") => append(block, "thinking", &text("thinking")),
                    Some("signature_delta") => append(block, "signature", &text("signature")),
                    _ => {}
                }
            }
            "content_block_stop" => {
                let partial = self.partial.get(index).map(String::as_str).unwrap_or_default();
                if let Some(block) = self.blocks.get_mut(index)
                    && block.get("type").and_then(Value::as_str) == Some("tool_use")
                    && !partial.is_empty()
                {
                    let input: Value = serde_json::from_str(partial).map_err(|e| {
                        format!("tool_use block {index}: its streamed input is not JSON ({e}): {}", clip(partial))
                    })?;
                    block["input"] = input;
                }
            }
            "message_delta" => {
                if !self.message.is_object() {
                    self.message = json!({});
                }
                for (k, x) in v.get("delta").and_then(Value::as_object).into_iter().flatten() {
                    self.message[k] = x.clone();
                }
                for (k, x) in v.get("usage").and_then(Value::as_object).into_iter().flatten() {
                    if !x.is_null() {
                        self.message["usage"][k] = x.clone();
                    }
                }
            }
            "message_stop" => self.finished = true,
            _ => {}
        }
        Ok(None)
    }

    fn responses_event(&mut self, kind: &str, v: &Value) -> Result<Option<String>, String> {
        match kind {
            "response.created" | "response.in_progress" => {
                self.response = v.get("response").cloned().unwrap_or_default();
            }
            "response.output_text.delta" | "response.function_call_arguments.delta" => {
                return Ok(v.get("delta").and_then(Value::as_str).map(str::to_string));
            }
            "response.output_item.added" => {
                return Ok(v.pointer("/item/name").and_then(Value::as_str).map(|n| format!("\n→ {n} ")));
            }
            "response.completed" | "response.incomplete" => {
                self.response = v.get("response").cloned().unwrap_or_default();
                self.finished = true;
            }
            "response.failed" => {
                let error = v.pointer("/response/error/message").and_then(Value::as_str).unwrap_or("no reason given");
                return Err(format!("the response failed: {}", clip(error)));
            }
            _ => {}
        }
        Ok(None)
    }

    /// The whole reply, in the dialect's unstreamed form.
    pub fn body(self) -> Value {
        match self.dialect {
            Dialect::Chat => {
                let c = self.chat;
                let mut message = Map::new();
                message.insert("role".into(), json!("assistant"));
                let content = if c.text.is_empty() && !c.calls.is_empty() { Value::Null } else { json!(c.text) };
                message.insert("content".into(), content);
                if !c.reasoning.is_empty() {
                    message.insert("reasoning_content".into(), json!(c.reasoning));
                }
                if !c.calls.is_empty() {
                    let calls: Vec<Value> = c
                        .calls
                        .into_iter()
                        .map(|(id, name, args)| {
                            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                        })
                        .collect();
                    message.insert("tool_calls".into(), Value::Array(calls));
                }
                let mut body = json!({
                    "id": c.id,
                    "object": "chat.completion",
                    "created": c.created,
                    "model": c.model,
                    "choices": [{"index": 0, "message": message, "finish_reason": c.finish.unwrap_or(json!("stop"))}],
                });
                if let Some(u) = c.usage {
                    body["usage"] = u;
                }
                if let Some(t) = c.timings {
                    body["timings"] = t;
                }
                body
            }
            Dialect::Anthropic => {
                let mut message = if self.message.is_object() { self.message } else { json!({}) };
                message["content"] = Value::Array(self.blocks);
                message
            }
            Dialect::Responses => self.response,
        }
    }
}

fn append(block: &mut Value, key: &str, text: &str) {
    let old = block.get(key).and_then(Value::as_str).unwrap_or_default();
    block[key] = json!(format!("{old}{text}"));
}

fn clip(s: &str) -> String {
    const MAX: usize = 200;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(dialect: Dialect, sse: &str, chunk: usize) -> (Reassembly, String) {
        let mut frames = Frames::default();
        let mut r = Reassembly::new(dialect);
        let mut shown = String::new();
        for piece in sse.as_bytes().chunks(chunk) {
            for f in frames.push(piece) {
                if let Some(t) = r.feed(&f).unwrap() {
                    shown.push_str(&t);
                }
            }
        }
        (r, shown)
    }

    #[test]
    fn frames_survive_any_cut_and_crlf() {
        let sse = "event: a\r\ndata: {\"x\":1}\r\n\r\n: keep-alive\n\ndata: one\ndata: two\n\n";
        for chunk in 1..sse.len() {
            let mut f = Frames::default();
            let got: Vec<Frame> = sse.as_bytes().chunks(chunk).flat_map(|c| f.push(c)).collect();
            assert_eq!(got.len(), 2, "cut every {chunk} bytes");
            assert_eq!((got[0].event.as_deref(), got[0].data.as_str()), (Some("a"), "{\"x\":1}"));
            assert_eq!((got[1].event.as_deref(), got[1].data.as_str()), (None, "one\ntwo"));
        }
    }

    #[test]
    fn chat_chunks_rejoin_text_calls_and_usage() {
        let sse = concat!(
            "data: {\"id\":\"c1\",\"model\":\"m\",\"created\":5,\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"t1\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"a\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"2}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":3}}\n\n",
            "data: [DONE]\n\n"
        );
        let (r, shown) = read(Dialect::Chat, sse, 7);
        assert!(r.finished());
        assert_eq!(shown, "Hello\n→ add {\"a\":2}");
        let body = r.body();
        assert_eq!(body["choices"][0]["message"]["content"], "Hello");
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "t1");
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{\"a\":2}");
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(body["usage"]["completion_tokens"], 3);
        assert_eq!(body["id"], "c1");
    }

    #[test]
    fn a_stream_without_its_end_is_not_finished() {
        let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n";
        assert!(!read(Dialect::Chat, sse, 64).0.finished());
        let sse = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n";
        assert!(!read(Dialect::Anthropic, sse, 64).0.finished());
    }

    #[test]
    fn error_events_and_bad_data_are_the_stream_s_failure() {
        let mut r = Reassembly::new(Dialect::Anthropic);
        let e = r
            .feed(&Frame {
                event: Some("error".into()),
                data: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
            })
            .unwrap_err();
        assert!(e.contains("Overloaded"), "{e}");
        let e = Reassembly::new(Dialect::Chat).feed(&Frame { event: None, data: "{oops".into() }).unwrap_err();
        assert!(e.contains("event 1") && e.contains("not JSON"), "{e}");
        let mut r = Reassembly::new(Dialect::Anthropic);
        let start = r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}"#;
        r.feed(&Frame { event: None, data: start.into() }).unwrap();
        let d =
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#;
        r.feed(&Frame { event: None, data: d.into() }).unwrap();
        let e = r.feed(&Frame { event: None, data: r#"{"type":"content_block_stop","index":0}"#.into() }).unwrap_err();
        assert!(e.contains("tool_use block 0"), "{e}");
    }
}
