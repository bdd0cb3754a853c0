//! Injected model faults as they look on the wire: the bodies of a failed
//! attempt, and a real chat completion spoilt before the client's own
//! parser reads it.

use serde_json::Value;

use super::fault::ModelFaultMode;

pub(crate) const HTTP_500_BODY: &str = "injected fault: HTTP 500";
pub(crate) const HTTP_429_BODY: &str = "injected fault: rate limited";

/// The first half of `s`, by characters.
pub(crate) fn first_half(s: &str) -> &str {
    let n = s.chars().count() / 2;
    s.char_indices().nth(n).map_or(s, |(i, _)| &s[..i])
}

/// A chat completion body spoilt by `fault`; a body that is not JSON (or
/// not a chat completion) is left to fail on its own. Transport faults
/// leave bodies alone.
pub(crate) fn spoil(body: &[u8], fault: ModelFaultMode) -> Vec<u8> {
    if fault == ModelFaultMode::Malformed {
        // What a proxy's error page or a cut connection hands over.
        let mut out = b"<html>injected fault: not JSON</html> ".to_vec();
        out.extend_from_slice(first_half_bytes(body));
        return out;
    }
    let Ok(mut reply) = serde_json::from_slice::<Value>(body) else { return body.to_vec() };
    let Some(choice) = reply.get_mut("choices").and_then(Value::as_array_mut).and_then(|c| c.first_mut()) else {
        return body.to_vec();
    };
    match fault {
        ModelFaultMode::Empty => {
            if let Some(m) = choice.get_mut("message").and_then(Value::as_object_mut) {
                m.insert("content".into(), Value::String(String::new()));
                m.remove("tool_calls");
            }
        }
        ModelFaultMode::Truncated => {
            if let Some(m) = choice.get_mut("message").and_then(Value::as_object_mut) {
                if let Some(Value::String(c)) = m.get_mut("content") {
                    *c = first_half(c).to_string();
                }
                // A generation cut off inside a tool call leaves its
                // arguments unfinished.
                for call in m.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten() {
                    if let Some(args) = call.get_mut("function").and_then(|f| f.get_mut("arguments")) {
                        let text = match &*args {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        *args = Value::String(first_half(&text).to_string());
                    }
                }
            }
            if let Some(c) = choice.as_object_mut() {
                c.insert("finish_reason".into(), Value::String("length".into()));
            }
        }
        _ => return body.to_vec(),
    }
    serde_json::to_vec(&reply).unwrap_or_else(|_| body.to_vec())
}

fn first_half_bytes(b: &[u8]) -> &[u8] {
    &b[..b.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(message: Value) -> Vec<u8> {
        json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": {"prompt_tokens": 3}})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn halves_count_characters() {
        assert_eq!(first_half("abcd"), "ab");
        assert_eq!(first_half("ééé"), "é");
        assert_eq!(first_half(""), "");
    }

    #[test]
    fn each_spoilt_reply() {
        let b = body(json!({"role": "assistant", "content": "0123456789"}));
        assert!(serde_json::from_slice::<Value>(&spoil(&b, ModelFaultMode::Malformed)).is_err());
        let empty: Value = serde_json::from_slice(&spoil(&b, ModelFaultMode::Empty)).unwrap();
        assert_eq!(empty["choices"][0]["message"]["content"], "");
        assert_eq!(empty["usage"]["prompt_tokens"], 3, "the rest of the reply is kept");
        let cut: Value = serde_json::from_slice(&spoil(&b, ModelFaultMode::Truncated)).unwrap();
        assert_eq!(cut["choices"][0]["message"]["content"], "01234");
        assert_eq!(cut["choices"][0]["finish_reason"], "length");

        let calls = body(json!({"tool_calls": [{"function": {"name": "f", "arguments": {"q": "abc"}}}]}));
        let cut: Value = serde_json::from_slice(&spoil(&calls, ModelFaultMode::Truncated)).unwrap();
        assert_eq!(cut["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{\"q\":");
        let empty: Value = serde_json::from_slice(&spoil(&calls, ModelFaultMode::Empty)).unwrap();
        assert!(empty["choices"][0]["message"].get("tool_calls").is_none());

        assert_eq!(spoil(b"not json", ModelFaultMode::Empty), b"not json");
        assert_eq!(spoil(&b, ModelFaultMode::Http500), b);
    }
}
