//! A conversation as the wire carries it, reduced to what tells one apart
//! from another: each message's speaker, text and the ids of the tool calls
//! it makes or answers. A request that continues a conversation repeats the
//! earlier request's messages and the reply it was given, whatever the
//! client adds (`refusal: null`, an empty content beside tool calls): those
//! are left out of a message's key. Read in the pivot (Chat Completions).

use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

use super::chat::content_text;

/// One message's key: its hash, and whether it is a system (or developer)
/// message, which a handoff replaces while the rest of the history stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageKey {
    pub hash: u64,
    pub system: bool,
}

/// The keys of a Chat Completions request's messages, in order.
pub fn request_keys(chat_request: &Value) -> Vec<MessageKey> {
    let messages = chat_request.get("messages").and_then(Value::as_array);
    messages.into_iter().flatten().map(message_key).collect()
}

/// The key of the message a Chat Completions reply gives, as the agent's
/// next request of the conversation carries it back.
pub fn reply_key(chat_reply: &Value) -> Option<MessageKey> {
    chat_reply.pointer("/choices/0/message").map(message_key)
}

fn message_key(m: &Value) -> MessageKey {
    let role = match m.get("role").and_then(Value::as_str).unwrap_or_default() {
        "developer" => "system",
        r => r,
    };
    let mut h = DefaultHasher::new();
    role.hash(&mut h);
    content_text(m.get("content").unwrap_or(&Value::Null)).trim().hash(&mut h);
    for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        // The id alone: clients re-encode a call's arguments as they please.
        call.get("id").and_then(Value::as_str).unwrap_or_default().hash(&mut h);
    }
    m.get("tool_call_id").and_then(Value::as_str).unwrap_or_default().hash(&mut h);
    MessageKey { hash: h.finish(), system: role == "system" }
}

/// The running hash of a sequence of keys: `prefixes(keys)[i]` stands for
/// the first `i + 1` messages.
pub fn prefixes(keys: impl IntoIterator<Item = MessageKey>) -> Vec<u64> {
    let mut at = 0u64;
    keys.into_iter()
        .map(|k| {
            at = extend(at, k);
            at
        })
        .collect()
}

/// The running hash `at` with one more message.
pub fn extend(at: u64, key: MessageKey) -> u64 {
    let mut h = DefaultHasher::new();
    (at, key.hash).hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_reply_keys_as_the_agent_carries_it_back() {
        let reply = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]}}]});
        // The SDK echoes it with an empty content, a refusal and re-spaced arguments.
        let echoed = json!({"role": "assistant", "content": "", "refusal": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]});
        assert_eq!(reply_key(&reply), Some(message_key(&echoed)));
        let other = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c2"}]});
        assert_ne!(message_key(&echoed), message_key(&other));
    }

    #[test]
    fn prefixes_tell_a_continuation_from_a_new_conversation() {
        let a = request_keys(&json!({"messages": [{"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}));
        let b = request_keys(&json!({"messages": [{"role": "developer", "content": "be brief"},
            {"role": "user", "content": "hi"}]}));
        assert!(a[0].system && b[0].system && !a[1].system);
        let (pa, pb) = (prefixes(a.iter().copied()), prefixes(b.iter().copied()));
        assert_eq!(pa[..2], pb[..]);
        assert_ne!(prefixes(a[1..].iter().copied())[0], pa[1], "a prefix hash depends on all before it");
    }
}
