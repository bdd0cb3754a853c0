//! A library tool as MCP lists it, and a tool's result as MCP returns it,
//! in MCP's own JSON (the protocol crate reads it from there).

use serde_json::{Map, Value, json};

use crate::tool::{ToolError, ToolResult, ToolSpec};

/// A tool of `tools/list`: the input schema as its source gave it (every
/// keyword kept: `$schema`, `$defs`, `additionalProperties`), and an output
/// schema where the tool documents an object response.
pub fn listed(spec: &ToolSpec) -> Value {
    let mut tool = json!({
        "name": spec.name,
        "description": spec.description,
        "inputSchema": input_schema(&spec.parameters),
    });
    if let Some(out) = output_schema(spec) {
        tool["outputSchema"] = out.clone();
    }
    tool
}

/// MCP requires an object schema; a tool with none still gets one.
fn input_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) if !m.is_empty() => schema.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// MCP's output schemas describe an object (`structuredContent` is one).
fn output_schema(spec: &ToolSpec) -> Option<&Value> {
    spec.response.as_ref().filter(|r| r.get("type").and_then(Value::as_str) == Some("object"))
}

/// A `tools/call` result (`resultType` for revision 2026-07-28; rmcp
/// strips it for older peers). A failed tool is `isError: true` with its
/// message, for the agent's model to read; a value is text (JSON unless it
/// is a string), and also `structuredContent` where the tool has an output
/// schema and the value is an object.
pub fn result(spec: &ToolSpec, result: &ToolResult) -> Value {
    match result {
        Ok(value) => {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let mut out =
                json!({"content": [{"type": "text", "text": text}], "isError": false, "resultType": "complete"});
            if output_schema(spec).is_some() && value.is_object() {
                out["structuredContent"] = value.clone();
            }
            out
        }
        Err(e) => json!({"content": [{"type": "text", "text": error_text(e)}], "isError": true,
            "resultType": "complete"}),
    }
}

/// "timeout: …": the kind says what happened, the message the rest.
fn error_text(e: &ToolError) -> String {
    let kind = serde_json::to_value(e.kind).ok().and_then(|k| k.as_str().map(str::to_string)).unwrap_or_default();
    format!("{kind}: {}", e.message)
}

/// The arguments of a call: MCP sends an object or nothing.
pub fn arguments(args: Option<Map<String, Value>>) -> Value {
    Value::Object(args.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ExecutorSpec, ToolErrorKind};

    fn spec(parameters: Value, response: Option<Value>) -> ToolSpec {
        ToolSpec {
            name: "lookup".into(),
            description: "looks up".into(),
            category: None,
            cost: 1.0,
            parameters,
            response,
            executor: ExecutorSpec::Synthesized,
            source: None,
        }
    }

    #[test]
    fn a_listed_tool_keeps_every_keyword_of_its_schema() {
        let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "$defs": {"address": {"type": "string"}}, "additionalProperties": false});
        let t = listed(&spec(schema.clone(), None));
        assert_eq!(t["inputSchema"], schema);
        assert!(t.get("outputSchema").is_none());
        assert_eq!(listed(&spec(Value::Null, None))["inputSchema"], json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn structured_content_only_where_an_object_output_schema_is() {
        let with = spec(json!({}), Some(json!({"type": "object", "properties": {"n": {"type": "number"}}})));
        let r = result(&with, &Ok(json!({"n": 3})));
        assert_eq!(r["structuredContent"], json!({"n": 3}));
        assert_eq!(r["content"][0]["text"], "{\"n\":3}");
        assert_eq!(listed(&with)["outputSchema"]["type"], "object");
        let without = spec(json!({}), Some(json!({"type": "array"})));
        assert!(result(&without, &Ok(json!({"n": 3}))).get("structuredContent").is_none());
        assert!(listed(&without).get("outputSchema").is_none());
        assert_eq!(result(&without, &Ok(json!("plain")))["content"][0]["text"], "plain");
    }

    #[test]
    fn a_failed_tool_is_an_error_result_with_its_kind_and_message() {
        let e = ToolError::new(ToolErrorKind::Timeout, "no answer within 2000 ms");
        let r = result(&spec(json!({}), None), &Err(e));
        assert_eq!(r["isError"], true);
        assert_eq!(r["content"][0]["text"], "timeout: no answer within 2000 ms");
    }
}
