//! Loading and validating TOML tool manifests.
//!
//! A manifest file holds one or more `[[tool]]` tables. Every error names the
//! file, the tool (by name, or `tool[i]` when it has none) and the field, so a
//! user can go straight to the line to fix.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::http::{Piece, split_template};
use super::manifest_raw::{
    FastFile, RawBuiltin, RawCommand, RawEnvHeader, RawFile, RawHttp, RawRecorded, RawSynthesized, RawTool,
    deserialize_table, read_table, to_json, type_name,
};
use super::tape::ToolTape;
use super::{ExecutorSpec, HeaderValue, ToolLibrary, ToolSpec, builtin};

pub use super::manifest_error::{ManifestError, ToolRef};
pub(crate) use super::manifest_raw::{Bad, Reading, bad};

pub(crate) const DEFAULT_COST: f64 = 1.0;
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Node names the engine's tool graph keeps for itself.
const RESERVED_NAMES: [&str; 3] = ["start", "end", "finish"];
const KNOWN_KINDS: &str = "builtin, command, http, recorded or synthesized";
const HTTP_METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const PROPERTY_TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if !first_ok || !rest_ok {
        return Err(format!("'{name}' is not a valid tool name (a letter, then letters, digits, '_', '.' or '-')"));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(format!("'{name}' is reserved by the engine (start, end and finish are graph nodes)"));
    }
    Ok(())
}

/// A function file's name follows OpenAI's rule for function names instead:
/// ToolBench's `{api}_for_{tool}` names may start with a digit or `_`
/// (`7_get_order_history_for_rewards_as_a_service`), and OpenAI caps them at
/// 64 characters.
pub(crate) fn check_function_name(name: &str) -> Result<(), String> {
    let ok_chars = name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    if name.is_empty() || !ok_chars || !name.chars().any(|c| c.is_ascii_alphanumeric()) {
        return Err(format!("'{name}' is not a valid function name (letters, digits, '_', '.' or '-')"));
    }
    if name.len() > MAX_FUNCTION_NAME {
        return Err(format!("'{name}' is longer than {MAX_FUNCTION_NAME} characters"));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(format!("'{name}' is reserved by the engine (start, end and finish are graph nodes)"));
    }
    Ok(())
}

/// OpenAI's limit on a function's name.
const MAX_FUNCTION_NAME: usize = 64;

/// The parameter schema must be an object schema whose properties all have
/// a type the argument check understands.
pub(crate) fn check_parameters(schema: &Value) -> Result<(), Bad> {
    let obj = schema
        .as_object()
        .ok_or_else(|| bad("parameters", format!("must be a table (a JSON Schema), got {}", json_type(schema))))?;
    match obj.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(bad("parameters.type", format!("must be \"object\", got {other}")));
        }
        None => return Err(bad("parameters.type", "missing (must be \"object\")")),
    }
    let empty = serde_json::Map::new();
    let props = match obj.get("properties") {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(other) => {
            return Err(bad("parameters.properties", format!("must be a table, got {}", json_type(other))));
        }
    };
    for (pname, prop) in props {
        // Built when something is wrong: a string per property made large libraries slow.
        let field = || format!("parameters.properties.{pname}");
        let Some(pobj) = prop.as_object() else {
            return Err(bad(field(), format!("must be a table, got {}", json_type(prop))));
        };
        let has_enum = match pobj.get("enum") {
            None => false,
            Some(Value::Array(a)) if !a.is_empty() => true,
            Some(_) => {
                return Err(bad(format!("{}.enum", field()), "must be a non-empty array"));
            }
        };
        match pobj.get("type") {
            None if has_enum => {}
            None => {
                return Err(bad(
                    format!("{}.type", field()),
                    format!("missing (expected one of {}, or an enum)", PROPERTY_TYPES.join(", ")),
                ));
            }
            Some(t) => check_property_type(t).map_err(|m| bad(format!("{}.type", field()), m))?,
        }
    }
    match obj.get("required") {
        None => {}
        Some(Value::Array(req)) => {
            for (i, r) in req.iter().enumerate() {
                let field = || format!("parameters.required[{i}]");
                let Some(r) = r.as_str() else {
                    return Err(bad(field(), format!("must be a string, got {}", json_type(r))));
                };
                if !props.contains_key(r) {
                    return Err(bad(field(), format!("'{r}' is required but not declared in parameters.properties")));
                }
            }
        }
        Some(other) => {
            return Err(bad(
                "parameters.required",
                format!("must be an array of property names, got {}", json_type(other)),
            ));
        }
    }
    Ok(())
}

fn check_property_type(t: &Value) -> Result<(), String> {
    let known = |s: &str| PROPERTY_TYPES.contains(&s);
    let expected = || format!("expected one of {}", PROPERTY_TYPES.join(", "));
    match t {
        Value::String(s) if known(s) => Ok(()),
        Value::String(s) => Err(format!("unknown type '{s}' ({})", expected())),
        // JSON Schema's list form, e.g. ["string", "null"] for an optional value.
        Value::Array(list) if !list.is_empty() => {
            for item in list {
                match item.as_str() {
                    Some(s) if known(s) || s == "null" => {}
                    _ => return Err(format!("unknown type {item} ({})", expected())),
                }
            }
            Ok(())
        }
        other => Err(format!("must be a type name ({}), got {other}", expected())),
    }
}

/// Resolves argv entries that name files beside the manifest, so a tool
/// runs the same whatever directory switchyard was started from. A bare
/// program name (`python3`) is left for PATH lookup.
fn resolve_argv(argv: Vec<String>, dir: &Path) -> Vec<String> {
    argv.into_iter()
        .enumerate()
        .map(|(i, arg)| {
            let p = Path::new(&arg);
            let candidate = i > 0 || arg.contains('/');
            if candidate && !arg.is_empty() && p.is_relative() && dir.join(p).is_file() {
                dir.join(p).into_os_string().into_string().unwrap_or(arg)
            } else {
                arg
            }
        })
        .collect()
}

fn check_timeout(t: Option<u64>) -> Result<u64, Bad> {
    match t {
        Some(0) => Err(bad("executor.timeout_ms", "must be more than 0")),
        Some(t) => Ok(t),
        None => Ok(DEFAULT_TIMEOUT_MS),
    }
}

pub(crate) fn build_executor(
    mut exec: toml::Table,
    params: &Value,
    dir: &Path,
    reading: Reading,
) -> Result<ExecutorSpec, Bad> {
    let kind = match exec.remove("kind") {
        Some(toml::Value::String(k)) => k,
        Some(other) => {
            return Err(bad("executor.kind", format!("must be a string ({KNOWN_KINDS}), got {}", type_name(&other))));
        }
        None => {
            return Err(bad("executor.kind", format!("missing (expected {KNOWN_KINDS})")));
        }
    };
    let rest = exec;
    match kind.as_str() {
        "builtin" => {
            let raw: RawBuiltin = read_table(rest, "executor", reading)?;
            let function = raw.function.ok_or_else(|| bad("executor.function", "missing (the builtin's name)"))?;
            if builtin::lookup(&function).is_none() {
                return Err(bad(
                    "executor.function",
                    format!("unknown builtin function '{function}' (known: {})", builtin::names().join(", ")),
                ));
            }
            Ok(ExecutorSpec::Builtin { function })
        }
        "command" => {
            let raw: RawCommand = read_table(rest, "executor", reading)?;
            let argv =
                raw.argv.ok_or_else(|| bad("executor.argv", "missing (e.g. argv = [\"python3\", \"tool.py\"])"))?;
            if argv.first().is_none_or(|p| p.trim().is_empty()) {
                return Err(bad("executor.argv", "must name a program to run"));
            }
            let cwd = match raw.cwd {
                Some(c) if c.is_relative() => dir.join(c),
                Some(c) => c,
                None => dir.to_path_buf(),
            };
            if !cwd.is_dir() {
                return Err(bad("executor.cwd", format!("directory {} does not exist", cwd.display())));
            }
            Ok(ExecutorSpec::Command {
                argv: resolve_argv(argv, dir),
                cwd: Some(cwd),
                timeout_ms: check_timeout(raw.timeout_ms)?,
            })
        }
        "http" => {
            let raw: RawHttp = read_table(rest, "executor", reading)?;
            let method = raw
                .method
                .ok_or_else(|| bad("executor.method", "missing (GET, POST, PUT, PATCH or DELETE)"))?
                .to_ascii_uppercase();
            if !HTTP_METHODS.contains(&method.as_str()) {
                return Err(bad(
                    "executor.method",
                    format!("unknown method '{method}' (expected GET, POST, PUT, PATCH or DELETE)"),
                ));
            }
            let url = raw.url.ok_or_else(|| bad("executor.url", "missing"))?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(bad("executor.url", format!("'{url}' must start with http:// or https://")));
            }
            let declared = params.get("properties").and_then(Value::as_object);
            for piece in split_template(&url).map_err(|m| bad("executor.url", m))? {
                if let Piece::Param(p) = piece
                    && !declared.is_some_and(|d| d.contains_key(p))
                {
                    return Err(bad("executor.url", format!("URL parameter '{{{p}}}' is not a declared parameter")));
                }
            }
            let query = raw.query.unwrap_or_default();
            if let Some(q) = query.iter().find(|q| !declared.is_some_and(|d| d.contains_key(*q))) {
                return Err(bad("executor.query", format!("'{q}' is not a declared parameter")));
            }
            let mut headers = BTreeMap::new();
            for (name, value) in raw.headers.unwrap_or_default() {
                let field = format!("executor.headers.{name}");
                if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    return Err(bad(field, "not a valid header name"));
                }
                let hv = match value {
                    toml::Value::String(s) => {
                        if reqwest::header::HeaderValue::from_str(&s).is_err() {
                            return Err(bad(field, "not a valid header value"));
                        }
                        HeaderValue::Literal(s)
                    }
                    toml::Value::Table(t) => {
                        let raw: RawEnvHeader = read_table(t, &field, reading)?;
                        let env = raw.env.unwrap_or_default();
                        if env.trim().is_empty() || env.contains(['=', '\0']) {
                            return Err(bad(format!("{field}.env"), "must name an environment variable"));
                        }
                        HeaderValue::Env { env, prefix: raw.prefix.unwrap_or_default() }
                    }
                    other => {
                        return Err(bad(
                            field,
                            format!(
                                "must be a string or {{ env = \"VAR\", prefix = \"...\" }}, got {}",
                                type_name(&other)
                            ),
                        ));
                    }
                };
                headers.insert(name, hv);
            }
            Ok(ExecutorSpec::Http { method, url, headers, timeout_ms: check_timeout(raw.timeout_ms)?, query })
        }
        "recorded" => {
            let raw: RawRecorded = read_table(rest, "executor", reading)?;
            let cassette = raw.cassette.ok_or_else(|| bad("executor.cassette", "missing (a tool cassette file)"))?;
            let cassette = if cassette.is_relative() { dir.join(cassette) } else { cassette };
            // Loaded once here so a damaged cassette stops the session before it starts.
            ToolTape::replay(&cassette, false).map_err(|e| bad("executor.cassette", e.to_string()))?;
            Ok(ExecutorSpec::Recorded { cassette })
        }
        "synthesized" => {
            let _: RawSynthesized = read_table(rest, "executor", reading)?;
            Ok(ExecutorSpec::Synthesized)
        }
        other => Err(bad("executor.kind", format!("unknown executor '{other}' (expected {KNOWN_KINDS})"))),
    }
}

fn build_tool(table: &toml::Table, dir: &Path, source: &Path) -> Result<ToolSpec, Bad> {
    tool_from_raw(deserialize_table(table, "")?, dir, source, Reading::Precise)
}

fn tool_from_raw(raw: RawTool, dir: &Path, source: &Path, reading: Reading) -> Result<ToolSpec, Bad> {
    let name = raw.name.ok_or_else(|| bad("name", "missing"))?;
    check_name(&name).map_err(|m| bad("name", m))?;
    let description = raw.description.ok_or_else(|| bad("description", "missing"))?;
    if description.trim().is_empty() {
        return Err(bad("description", "must not be empty (the model reads it to pick tools)"));
    }
    let cost = raw.cost.unwrap_or(DEFAULT_COST);
    if !cost.is_finite() || cost < 0.0 {
        return Err(bad("cost", format!("must be a finite number >= 0, got {cost}")));
    }
    let parameters = match raw.parameters {
        Some(p) => to_json(p, "parameters")?,
        None => serde_json::json!({ "type": "object", "properties": {} }),
    };
    check_parameters(&parameters)?;
    let response = match raw.response {
        Some(r @ toml::Value::Table(_)) => Some(to_json(r, "response")?),
        Some(other) => {
            return Err(bad("response", format!("must be a table (a JSON Schema), got {}", type_name(&other))));
        }
        None => None,
    };
    let exec = raw.executor.ok_or_else(|| bad("executor", "missing (a [tool.executor] table)"))?;
    let executor = build_executor(exec, &parameters, dir, reading)?;
    if executor == ExecutorSpec::Synthesized && response.is_none() {
        return Err(bad("response", "missing (a synthesized tool answers from its response schema)"));
    }
    Ok(ToolSpec {
        name,
        description,
        category: raw.category,
        cost,
        parameters,
        response,
        executor,
        source: Some(source.to_path_buf()),
    })
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The folder commands run in and relative paths are resolved against.
pub(crate) fn manifest_dir(path: &Path) -> PathBuf {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    dir.canonicalize().or_else(|_| std::path::absolute(dir)).unwrap_or_else(|_| dir.to_path_buf())
}

/// Parses manifest text; `path` is used for error messages and to resolve
/// relative paths.
fn parse(text: &str, path: &Path) -> Result<Vec<ToolSpec>, ManifestError> {
    if let Some(tools) = parse_fast(text, path) {
        return Ok(tools);
    }
    let doc: toml::Table = toml::from_str(text).map_err(|e| {
        let (line, column) = line_column(text, e.span().map_or(0, |s| s.start));
        ManifestError::Syntax { path: path.to_path_buf(), line, column, message: e.message().trim().to_string() }
    })?;
    let file_err = |b: Bad| ManifestError::File { path: path.to_path_buf(), field: b.field, message: b.message };
    let raw: RawFile = deserialize_table(&doc, "").map_err(file_err)?;
    let dir = manifest_dir(path);
    let mut tools = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, item) in raw.tool.unwrap_or_default().iter().enumerate() {
        let Some(table) = item.as_table() else {
            return Err(file_err(bad(
                format!("tool[{i}]"),
                format!("must be a table ([[tool]]), got {}", type_name(item)),
            )));
        };
        let tool_ref = match table.get("name").and_then(toml::Value::as_str) {
            Some(n) if !n.is_empty() => ToolRef::Named(n.to_string()),
            _ => ToolRef::Index(i),
        };
        let spec = build_tool(table, &dir, path).map_err(|b| ManifestError::Invalid {
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
        tools.push(spec);
    }
    Ok(tools)
}

/// The tools of a manifest with nothing wrong, read from the text straight
/// into the raw structs: [`parse`] goes through a table per tool, copied for
/// each struct it is tried as, so that an error can name its key, and that
/// made a large library slow to load. None if anything is wrong; `parse`
/// then reads the file its own way, for the error.
fn parse_fast(text: &str, path: &Path) -> Option<Vec<ToolSpec>> {
    let file: FastFile = toml::from_str(text).ok()?;
    let dir = manifest_dir(path);
    let raw = file.tool.unwrap_or_default();
    let mut tools = Vec::with_capacity(raw.len());
    let mut seen = BTreeSet::new();
    for raw in raw {
        let spec = tool_from_raw(raw, &dir, path, Reading::Fast).ok()?;
        if !seen.insert(spec.name.clone()) {
            return None;
        }
        tools.push(spec);
    }
    Some(tools)
}

/// Loads the tools of one manifest file.
pub fn load_file(path: &Path) -> Result<Vec<ToolSpec>, ManifestError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ManifestError::Io { path: path.to_path_buf(), source })?;
    parse(&text, path)
}

/// Loads manifests into one library. Each path is a file, or a directory
/// whose `*.toml` files are loaded in name order (not recursively). A tool
/// name defined twice, in any files, is refused.
pub fn load_paths(paths: &[PathBuf]) -> Result<ToolLibrary, ManifestError> {
    ToolLibrary::new(load_manifests(paths)?)
}

/// The tools of these manifests (files, or folders of `*.toml`), in order,
/// not yet checked against each other.
pub(crate) fn load_manifests(paths: &[PathBuf]) -> Result<Vec<ToolSpec>, ManifestError> {
    let mut tools = Vec::new();
    for path in paths {
        for file in manifest_files(path)? {
            tools.extend(load_file(&file)?);
        }
    }
    Ok(tools)
}

/// The manifest files a library path names: a folder's `*.toml` files in
/// name order (not recursively), else the path itself.
pub(crate) fn manifest_files(path: &Path) -> Result<Vec<PathBuf>, ManifestError> {
    let io = |source| ManifestError::Io { path: path.to_path_buf(), source };
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(io)? {
        let file = entry.map_err(io)?.path();
        if file.is_file() && file.extension().is_some_and(|e| e == "toml") {
            files.push(file);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_from_offsets() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        // 'é' is two bytes: the column counts characters.
        assert_eq!(line_column(text, 9), (2, 3));
        assert_eq!(line_column(text, 999), (3, 1));
    }

    #[test]
    fn names() {
        assert!(check_name("unit_convert").is_ok());
        assert!(check_name("geo.lookup-v2").is_ok());
        assert!(check_name("2fast").is_err());
        assert!(check_name("").is_err());
        assert!(check_name("has space").is_err());
        assert!(check_name("end").unwrap_err().contains("reserved"));
        assert!(check_function_name("7_get_order_history_for_rewards_as_a_service").is_ok());
        assert!(check_function_name("_templates_for_labels").is_ok());
        assert!(check_function_name(&"a".repeat(64)).is_ok());
        assert!(check_function_name(&"a".repeat(65)).unwrap_err().contains("64"));
        assert!(check_function_name("___").is_err());
        assert!(check_function_name("has space").is_err());
        assert!(check_function_name("finish").unwrap_err().contains("reserved"));
    }
}
