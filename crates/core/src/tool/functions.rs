//! OpenAI function schemas as a library: a list of
//! `{"type": "function", "function": {name, description, parameters}}`
//! objects (or the bare inner objects, or `{"tools": [...]}` /
//! `{"functions": [...]}`), each run by the executor its
//! `x-switchyard` member or the config gives it.

use std::path::Path;

use serde_json::Value;

use super::ToolSpec;
use super::file_options::FileOptions;
use super::manifest::{
    Bad, DEFAULT_COST, ManifestError, Reading, ToolRef, bad, build_executor, check_function_name, check_parameters,
    json_type,
};

/// Switchyard's own member on a function object.
const OWN: &str = "x-switchyard";
const OWN_KEYS: [&str; 4] = ["executor", "cost", "category", "response"];

/// JSON to TOML, so an executor given in JSON goes through the manifest's checks.
fn to_toml(v: &Value, field: &str) -> Result<toml::Value, Bad> {
    Ok(match v {
        Value::Null => return Err(bad(field, "null is not allowed here")),
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(
            a.iter().enumerate().map(|(i, x)| to_toml(x, &format!("{field}[{i}]"))).collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => toml::Value::Table(
            m.iter().map(|(k, x)| Ok((k.clone(), to_toml(x, &format!("{field}.{k}"))?))).collect::<Result<_, Bad>>()?,
        ),
    })
}

/// The function objects of the file, whichever of the accepted shapes it has.
fn items(doc: Value, path: &Path) -> Result<Vec<Value>, ManifestError> {
    let file_err = |field: &str, message: String| ManifestError::File {
        path: path.to_path_buf(),
        field: field.to_string(),
        message,
    };
    match doc {
        Value::Array(a) => Ok(a),
        Value::Object(m) => {
            let (key, list) = m.into_iter().find(|(k, _)| k == "tools" || k == "functions").ok_or_else(|| {
                file_err("tools", "missing (expected a list of functions, or {\"tools\": [...]})".into())
            })?;
            match list {
                Value::Array(a) => Ok(a),
                other => Err(file_err(&key, format!("must be an array, got {}", json_type(&other)))),
            }
        }
        other => Err(file_err("(top level)", format!("must be an array of functions, got {}", json_type(&other)))),
    }
}

/// One function as a tool; its parts are moved out of `item`, not copied.
fn tool(item: Value, options: &FileOptions, dir: &Path, reading: Reading) -> Result<ToolSpec, Bad> {
    let mut outer = match item {
        Value::Object(o) => o,
        other => return Err(bad("", format!("must be an object, got {}", json_type(&other)))),
    };
    // The wrapped form keeps the function one level down; `x-switchyard` may sit on either.
    let (mut inner, prefix) = match outer.remove("function") {
        Some(Value::Object(f)) => (f, "function."),
        Some(other) => return Err(bad("function", format!("must be an object, got {}", json_type(&other)))),
        None => (std::mem::take(&mut outer), ""),
    };
    let text = |k: &str| match inner.get(k) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) | None => Err(bad(format!("{prefix}{k}"), "missing")),
        Some(other) => Err(bad(format!("{prefix}{k}"), format!("must be a string, got {}", json_type(other)))),
    };
    let name = text("name")?;
    check_function_name(&name).map_err(|m| bad(format!("{prefix}name"), m))?;
    let description = text("description")?;
    let parameters =
        inner.remove("parameters").unwrap_or_else(|| serde_json::json!({ "type": "object", "properties": {} }));
    check_parameters(&parameters).map_err(|b| bad(format!("{prefix}{}", b.field), b.message))?;

    let (own, own_field) = match (inner.remove(OWN), outer.remove(OWN)) {
        (Some(o), _) => (Some(o), format!("{prefix}{OWN}")),
        (None, o) => (o, OWN.to_string()),
    };
    let own = match own {
        None => None,
        Some(Value::Object(o)) => Some(o),
        Some(other) => return Err(bad(own_field, format!("must be an object, got {}", json_type(&other)))),
    };
    if let Some(key) = own.as_ref().and_then(|o| o.keys().find(|k| !OWN_KEYS.contains(&k.as_str()))) {
        return Err(bad(format!("{own_field}.{key}"), format!("unknown field (expected {})", OWN_KEYS.join(", "))));
    }
    let get = |k: &str| own.as_ref().and_then(|o| o.get(k));
    let cost = match get("cost") {
        None => options.cost.unwrap_or(DEFAULT_COST),
        Some(c) => c.as_f64().ok_or_else(|| bad(format!("{own_field}.cost"), "must be a number"))?,
    };
    if !(cost.is_finite() && cost >= 0.0) {
        return Err(bad(format!("{own_field}.cost"), format!("must be a finite number >= 0, got {cost}")));
    }
    let category = match get("category") {
        None => options.category.clone(),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(bad(format!("{own_field}.category"), "must be a string")),
    };
    let response = match get("response") {
        None => None,
        Some(r @ Value::Object(_)) => Some(r.clone()),
        Some(_) => return Err(bad(format!("{own_field}.response"), "must be an object (a JSON Schema)")),
    };
    let exec = match (get("executor"), &options.executor) {
        (Some(e), _) => match to_toml(e, &format!("{own_field}.executor"))? {
            toml::Value::Table(t) => t,
            _ => return Err(bad(format!("{own_field}.executor"), "must be an object")),
        },
        (None, Some(t)) => t.clone(),
        (None, None) => {
            return Err(bad(
                format!("{own_field}.executor"),
                "missing: give the tool one, or the file one in the config's [[library_options]]",
            ));
        }
    };
    let executor = build_executor(exec, &parameters, dir, reading).map_err(|b| {
        let field = b.field.strip_prefix("executor").unwrap_or(&b.field);
        bad(format!("{own_field}.executor{field}"), b.message)
    })?;
    Ok(ToolSpec { name, description, category, cost, parameters, response, executor, source: None })
}

/// The tools of an OpenAI function file read from `path`.
pub(crate) fn tools(
    doc: Value,
    path: &Path,
    options: &FileOptions,
    dir: &Path,
    reading: Reading,
) -> Result<Vec<ToolSpec>, ManifestError> {
    for (set, field) in [
        (options.base_url.is_some(), "base_url"),
        (options.headers.is_some(), "headers"),
        (options.timeout_ms.is_some(), "timeout_ms"),
    ] {
        if set {
            return Err(ManifestError::File {
                path: path.to_path_buf(),
                field: format!("library_options.{field}"),
                message: "is for OpenAPI documents; a function file's executor carries its own".into(),
            });
        }
    }
    let mut tools: Vec<ToolSpec> = Vec::new();
    // Names seen so far: a list scan per function made a large file quadratic.
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items(doc, path)?.into_iter().enumerate() {
        let named = item.get("function").unwrap_or(&item).get("name").and_then(Value::as_str);
        let tool_ref = match named {
            Some(n) if !n.trim().is_empty() => ToolRef::Named(n.to_string()),
            _ => ToolRef::Index(i),
        };
        let spec = tool(item, options, dir, reading).map_err(|b| ManifestError::Invalid {
            path: path.to_path_buf(),
            tool: tool_ref,
            field: b.field,
            message: b.message,
        })?;
        if !seen.insert(spec.name.clone()) {
            return Err(ManifestError::Duplicate {
                name: spec.name,
                first: path.to_path_buf(),
                second: path.to_path_buf(),
            });
        }
        tools.push(ToolSpec { source: Some(path.to_path_buf()), ..spec });
    }
    Ok(tools)
}
