//! ToolBench's default evalset as ToolEval publishes it with gpt-3.5-turbo's
//! CoT answers (`default_evalset_gpt-3.5-turbo_CoT/<group>.json`): an object
//! from query id to
//!
//! ```text
//! {"query": "...", "available_tools": [{"name", "description", "parameters"}, ..., {"name": "Finish", ...}],
//!  "answer": {"final_answer": "{\"return_type\": \"give_answer\", ...}",
//!             "answer_details": [{"role": "system", "next": [{"role": "user", "next": [{"role": "tool",
//!                                 "message": "{'name': 'vin_decode_for_vin_decoder_v4', 'arguments': ...", ...}]}]}]}}
//! ```
//!
//! The answers are gpt-3.5's, not gold: ToolBench has no gold answers.

use std::path::Path;

use serde_json::{Map, Value};

use super::DataError;

/// The evalset's folder inside ToolBench's samples.
pub const EVALSET_DIR: &str = "default_evalset_gpt-3.5-turbo_CoT";
/// Its six groups, each a file `<group>.json` of 100 queries.
pub const GROUPS: [&str; 6] =
    ["G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"];
/// The function ToolBench's prompts end a run with.
pub const FINISH: &str = "Finish";

/// One query of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalQuery {
    pub id: String,
    pub query: String,
    /// The function objects offered, `Finish` among them, as written.
    pub tools: Vec<Map<String, Value>>,
    /// The functions gpt-3.5's CoT run called, in order (`Finish` and
    /// names it made up included).
    pub called: Vec<String>,
    /// Whether that run ended by giving an answer (`give_answer`), not by
    /// giving up or running out of steps.
    pub gave_answer: bool,
}

/// Reads one group file.
pub fn load_group(path: &Path) -> Result<Vec<EvalQuery>, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io { path: path.into(), source })?;
    let doc: Map<String, Value> = serde_json::from_str(&text).map_err(|e| DataError::Format {
        path: path.into(),
        reason: format!("not a ToolEval answer file (an object of query id to query): {e}"),
    })?;
    let mut out = Vec::with_capacity(doc.len());
    for (id, item) in doc {
        let bad = |reason: String| DataError::Format { path: path.into(), reason: format!("query {id}: {reason}") };
        let query = match item.get("query") {
            Some(Value::String(q)) if !q.trim().is_empty() => q.trim().to_string(),
            _ => return Err(bad("field 'query' is missing or empty".into())),
        };
        let Some(Value::Array(list)) = item.get("available_tools") else {
            return Err(bad("field 'available_tools' is missing or not a list".into()));
        };
        let mut tools = Vec::with_capacity(list.len());
        for (i, t) in list.iter().enumerate() {
            match t {
                Value::Object(o) if o.get("name").and_then(Value::as_str).is_some_and(|n| !n.trim().is_empty()) => {
                    tools.push(o.clone())
                }
                _ => return Err(bad(format!("available_tools[{i}] is not a function object with a 'name'"))),
            }
        }
        let answer = item.get("answer");
        let final_answer = answer.and_then(|a| a.get("final_answer")).and_then(Value::as_str).unwrap_or("");
        let mut called = Vec::new();
        if let Some(details) = answer.and_then(|a| a.get("answer_details")) {
            walk(details, &mut called);
        }
        out.push(EvalQuery { id, query, tools, called, gave_answer: gives_answer(final_answer) });
    }
    if out.is_empty() {
        return Err(DataError::Format { path: path.into(), reason: "holds no query".into() });
    }
    Ok(out)
}

/// The tool nodes' function names, depth first (a CoT tree is one chain).
fn walk(nodes: &Value, out: &mut Vec<String>) {
    let Some(nodes) = nodes.as_array() else { return };
    for n in nodes {
        if n.get("role").and_then(Value::as_str) == Some("tool")
            && let Some(name) = n.get("message").and_then(Value::as_str).and_then(called_name)
        {
            out.push(name.to_string());
        }
        if let Some(next) = n.get("next") {
            walk(next, out);
        }
    }
}

/// The function a tool node's message names: it is a Python repr cut at
/// about 100 characters, `{'name': 'x_for_y', 'arguments': ...`.
pub fn called_name(message: &str) -> Option<&str> {
    let rest = message.strip_prefix("{'name': '")?;
    let name = &rest[..rest.find('\'')?];
    (!name.is_empty()).then_some(name)
}

/// Whether a final answer gives one. Some are cut or otherwise not JSON,
/// so the field is looked for in the text rather than parsed.
pub fn gives_answer(final_answer: &str) -> bool {
    let mut rest = final_answer;
    while let Some(at) = rest.find("\"return_type\"") {
        rest = &rest[at + "\"return_type\"".len()..];
        let value = rest.trim_start().strip_prefix(':').map(str::trim_start);
        if value.is_some_and(|v| v.starts_with("\"give_answer\"")) {
            return true;
        }
    }
    false
}

/// The instruction samples' folder and files: queries with their candidate
/// APIs (RapidAPI docs) and the gold `relevant APIs`.
pub const EXAMPLE_DIR: &str = "data_example/instruction";
pub const EXAMPLE_FILES: [&str; 3] = ["G1_query.json", "G2_query.json", "G3_query.json"];

/// One instruction sample.
#[derive(Clone, Debug, PartialEq)]
pub struct ExampleQuery {
    pub id: String,
    pub query: String,
    /// The candidates, as OpenAI functions named as ToolBench names them.
    pub functions: Vec<Value>,
    /// The relevant APIs' function names: the gold tools.
    pub relevant: Vec<String>,
}

/// Reads one `G*_query.json`; `group` prefixes the ids (`G1/3`).
pub fn load_examples(path: &Path, group: &str) -> Result<Vec<ExampleQuery>, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io { path: path.into(), source })?;
    let list: Vec<Value> = serde_json::from_str(&text).map_err(|e| DataError::Format {
        path: path.into(),
        reason: format!("not a list of instruction samples: {e}"),
    })?;
    let mut out = Vec::with_capacity(list.len());
    for (i, q) in list.iter().enumerate() {
        let bad =
            |reason: String| DataError::Format { path: path.into(), reason: format!("sample {}: {reason}", i + 1) };
        let id = match q.get("query_id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => (i + 1).to_string(),
        };
        let query = q.get("query").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
        let query = query.ok_or_else(|| bad("field 'query' is missing or empty".into()))?.to_string();
        let apis = q.get("api_list").and_then(Value::as_array).ok_or_else(|| bad("no 'api_list'".into()))?;
        let mut functions = Vec::with_capacity(apis.len());
        for (j, api) in apis.iter().enumerate() {
            functions.push(rapid_function(api).map_err(|e| bad(format!("api_list[{j}]: {e}")))?);
        }
        let mut relevant = Vec::new();
        for pair in q.get("relevant APIs").and_then(Value::as_array).into_iter().flatten() {
            match pair.as_array().map(Vec::as_slice) {
                Some([Value::String(tool), Value::String(api)]) => relevant.push(function_name(tool, api)),
                _ => return Err(bad(format!("'relevant APIs' holds {pair}, not [tool, api]"))),
            }
        }
        out.push(ExampleQuery { id: format!("{group}/{id}"), query, functions, relevant });
    }
    Ok(out)
}

/// ToolBench's function name for an API of a tool: both standardized, the
/// API first, cut to the last 64 characters (`checkhealth_for_squake`).
pub fn function_name(tool: &str, api: &str) -> String {
    let name = format!("{}_for_{}", standardize(api), standardize(tool));
    let cut = name.len().saturating_sub(64);
    name[cut..].to_string()
}

/// Lower case, every run of other characters one `_`, none at either end
/// (as ToolBench's `standardize`, which the evalset's names show keeps a
/// leading digit).
pub fn standardize(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// A RapidAPI doc (`required_parameters`, `optional_parameters` with
/// STRING/NUMBER/BOOLEAN types) as an OpenAI function, typed as ToolBench
/// types them (NUMBER is an integer, anything unknown a string).
fn rapid_function(api: &Value) -> Result<Value, String> {
    let text = |k: &str| api.get(k).and_then(Value::as_str).map(str::trim).unwrap_or("");
    let (tool, name) = (text("tool_name"), text("api_name"));
    if tool.is_empty() || name.is_empty() {
        return Err("no 'tool_name' or 'api_name'".into());
    }
    let mut props = Map::new();
    let mut required = Vec::new();
    for (key, is_required) in [("required_parameters", true), ("optional_parameters", false)] {
        for p in api.get(key).and_then(Value::as_array).into_iter().flatten() {
            let pname = standardize(p.get("name").and_then(Value::as_str).unwrap_or(""));
            if pname.is_empty() {
                return Err(format!("a parameter of {key} has no name"));
            }
            let ty = match p.get("type").and_then(Value::as_str).unwrap_or("").to_ascii_uppercase().as_str() {
                "NUMBER" | "INTEGER" => "integer",
                "BOOLEAN" => "boolean",
                _ => "string",
            };
            let mut schema = Map::new();
            schema.insert("type".into(), Value::String(ty.into()));
            if let Some(d) = p.get("description").and_then(Value::as_str).filter(|d| !d.trim().is_empty()) {
                schema.insert("description".into(), Value::String(d.trim().into()));
            }
            if is_required {
                required.push(Value::String(pname.clone()));
            }
            props.insert(pname, Value::Object(schema));
        }
    }
    let description = match text("api_description") {
        "" => format!("{name} of {tool}"),
        d => d.to_string(),
    };
    Ok(serde_json::json!({
        "name": function_name(tool, name),
        "description": format!("{description} (tool: {tool})"),
        "parameters": { "type": "object", "properties": props, "required": required },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_answers_are_read_from_the_cut_texts() {
        assert_eq!(
            called_name("{'name': 'vin_decode_for_vin_decoder_v4', 'arguments': '{\\n  \"vin\""),
            Some("vin_decode_for_vin_decoder_v4")
        );
        assert_eq!(called_name("{'name': 'Finish', 'arg"), Some("Finish"));
        assert_eq!(called_name("{'name': 'cut_off_befo"), None);
        assert_eq!(called_name("no call"), None);
        assert!(gives_answer("{\n  \"return_type\": \"give_answer\",\n  \"final_answer\": \"The ..."));
        assert!(gives_answer("{\"return_type\":\"give_answer\", \"final_answer\": \"unterminated"));
        assert!(!gives_answer("{\"return_type\": \"give_up_and_restart\"}"));
        assert!(!gives_answer(""));
    }

    #[test]
    fn function_names_are_toolbench_s() {
        assert_eq!(function_name("SQUAKE", "Checkhealth"), "checkhealth_for_squake");
        assert_eq!(
            function_name("Investors Exchange (IEX) Trading", "IEX Regulation SHO Threshold Securities List"),
            "sho_threshold_securities_list_for_investors_exchange_iex_trading"
        );
        assert_eq!(standardize("/offices/search/:service"), "offices_search_service");
    }
}
