//! A server's tools as library tools, and a call's content as the
//! observation the model reads.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::config::McpServerConfig;
use super::link::{CallOutput, RemoteTool};
use crate::tool::{ExecutorSpec, ToolSpec};

/// What a tool's `source` says for a tool from a server, in errors and lists.
pub fn source_of(server: &str) -> PathBuf {
    PathBuf::from(format!("mcp:{server}"))
}

/// A name the library accepts: a letter first, then letters, digits, `_`,
/// `.` or `-`; other characters become `_`.
fn local_name(remote: &str) -> String {
    let mut s: String = remote
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert_str(0, "t_");
    }
    s
}

/// The server's tools that the entry keeps, as library tools. `taken` holds
/// the names other sources and servers already use: a clashing name gets
/// the server's name in front (`time.get_time`).
pub fn specs(config: &McpServerConfig, remote: &[RemoteTool], taken: &HashSet<String>) -> Vec<ToolSpec> {
    remote
        .iter()
        .filter(|t| config.tools.as_ref().is_none_or(|keep| keep.contains(&t.name)))
        .map(|t| {
            let plain = local_name(&t.name);
            let name = if taken.contains(&plain) { format!("{}.{plain}", config.name) } else { plain };
            let o = config.overrides.get(&t.name).cloned().unwrap_or_default();
            ToolSpec {
                name,
                description: t.description.clone(),
                category: o.category.or_else(|| config.category.clone()),
                cost: o.cost.or(config.cost).unwrap_or(1.0),
                parameters: object_schema(&t.input_schema),
                response: t.output_schema.clone(),
                executor: ExecutorSpec::Mcp {
                    server: config.name.clone(),
                    tool: t.name.clone(),
                    timeout_ms: config.timeout_ms,
                },
                source: Some(source_of(&config.name)),
            }
        })
        .collect()
}

/// MCP requires an object schema; a server that sends none still gets one.
fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) if !m.is_empty() => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// A content block as the model reads it: text as text (JSON when it is
/// JSON), anything binary as its type and size only.
fn block(b: &Value) -> Value {
    match b.get("type").and_then(Value::as_str) {
        Some("text") => {
            let text = b.get("text").and_then(Value::as_str).unwrap_or_default();
            serde_json::from_str::<Value>(text)
                .ok()
                .filter(|v| v.is_object() || v.is_array())
                .unwrap_or_else(|| Value::String(text.to_string()))
        }
        Some(kind @ ("image" | "audio")) => json!({
            "type": kind,
            "mimeType": b.get("mimeType").cloned().unwrap_or(Value::Null),
            "bytes": b.get("data").and_then(Value::as_str).map_or(0, |d| d.len() * 3 / 4),
        }),
        _ => b.clone(),
    }
}

/// The observation of a successful call: the structured content when the
/// server gives it, else the content blocks (one block stands alone).
pub fn observation(out: &CallOutput) -> Value {
    if let Some(s) = &out.structured {
        return s.clone();
    }
    match out.content.as_slice() {
        [] => Value::Null,
        [one] => block(one),
        many => Value::Array(many.iter().map(block).collect()),
    }
}

/// The text of an `isError` result, for the tool error. Blank texts say
/// nothing: a result of only those gets the fallback, not an empty error.
pub fn error_text(out: &CallOutput) -> String {
    let texts: Vec<&str> = out
        .content
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .filter(|t| !t.trim().is_empty())
        .collect();
    if texts.is_empty() { "the tool reported an error".to_string() } else { texts.join(" ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(name: &str) -> RemoteTool {
        RemoteTool { name: name.into(), description: "d".into(), input_schema: json!({}), output_schema: None }
    }

    #[test]
    fn names_are_made_valid_and_a_clash_gets_the_server_in_front() {
        let config = McpServerConfig::remote("srv", "http://h/mcp");
        let taken: HashSet<String> = ["echo".to_string()].into();
        let specs = specs(&config, &[remote("echo"), remote("get sum/v2"), remote("2fa")], &taken);
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["srv.echo", "get_sum_v2", "t_2fa"]);
        // The server is called by its own name for the tool.
        assert!(matches!(&specs[1].executor, ExecutorSpec::Mcp { tool, .. } if tool == "get sum/v2"));
        assert_eq!(specs[0].parameters, json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn the_observation_prefers_structured_content_then_reads_text_as_json() {
        let out = |content: Vec<Value>, structured: Option<Value>| CallOutput { is_error: false, content, structured };
        assert_eq!(observation(&out(vec![json!({"type":"text","text":"{\"a\":1}"})], None)), json!({"a": 1}));
        assert_eq!(observation(&out(vec![json!({"type":"text","text":"42"})], None)), json!("42"));
        assert_eq!(observation(&out(vec![json!({"type":"text","text":"x"})], Some(json!({"b": 2})))), json!({"b": 2}));
        let image = json!({"type": "image", "mimeType": "image/png", "data": "AAAA"});
        assert_eq!(
            observation(&out(vec![json!({"type":"text","text":"see"}), image], None)),
            json!(["see", {"type": "image", "mimeType": "image/png", "bytes": 3}])
        );
        assert_eq!(observation(&out(vec![], None)), Value::Null);
    }
}
