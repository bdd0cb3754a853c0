//! OpenAPI 3 documents as a library: every operation becomes an `http` tool
//! whose parameters merge the path, query and JSON body parameters.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::file_options::FileOptions;
use super::manifest::{
    Bad, DEFAULT_COST, ManifestError, Reading, ToolRef, bad, build_executor, check_name, check_parameters,
};
use super::schema_refs::{self, escape};
use super::{ExecutorSpec, ToolSpec};

/// The methods the http executor can send, in the order a path's tools are listed.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];
const PROPERTY_TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];

fn file_err(path: &Path, field: impl Into<String>, message: impl Into<String>) -> ManifestError {
    ManifestError::File { path: path.to_path_buf(), field: field.into(), message: message.into() }
}

/// Refuses anything but OpenAPI 3.x, naming the field that says so.
fn check_version(doc: &Value, path: &Path) -> Result<(), ManifestError> {
    match doc.get("openapi") {
        Some(Value::String(v)) if v.starts_with("3.") => Ok(()),
        Some(other) => Err(file_err(path, "openapi", format!("version {other} is not supported (expected 3.x)"))),
        None if doc.get("swagger").is_some() => {
            Err(file_err(path, "swagger", "Swagger / OpenAPI 2.0 is not supported: convert the document to OpenAPI 3"))
        }
        None => Err(file_err(path, "openapi", "missing (not an OpenAPI 3 document)")),
    }
}

/// Every operation of an OpenAPI document as (`METHOD /route`, the tool
/// name the library gives it), so a benchmark that names operations by
/// method and path finds the tools, operationIds or not.
pub fn operation_names(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (route, item) in doc.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if !matches!(method.as_str(), "get" | "put" | "post" | "delete" | "patch" | "head" | "options") {
                continue;
            }
            let id = op.get("operationId").and_then(Value::as_str);
            out.push((format!("{} {route}", method.to_ascii_uppercase()), tool_name(id, method, route)));
        }
    }
    out
}

/// A tool name from an operationId, else from `METHOD_path`, in the
/// alphabet manifests allow: other characters become `_`.
pub(crate) fn tool_name(operation_id: Option<&str>, method: &str, route: &str) -> String {
    let raw = match operation_id.map(str::trim) {
        Some(id) if !id.is_empty() => id.to_string(),
        _ => format!("{}_{route}", method.to_ascii_uppercase()),
    };
    let mut name = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') { c } else { '_' };
        if c == '_' && (name.is_empty() || name.ends_with('_')) {
            continue;
        }
        name.push(c);
    }
    while name.ends_with('_') {
        name.pop();
    }
    if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
        name.insert_str(0, "op_");
    }
    if check_name(&name).is_err() {
        // Only a reserved word (start, end, finish) is left to refuse.
        name.push_str("_op");
    }
    name
}

/// The server's URL with its `{variable}`s set to their defaults.
fn server_url(doc: &Value) -> Option<String> {
    let server = doc.get("servers")?.as_array()?.first()?;
    let mut url = server.get("url")?.as_str()?.to_string();
    if let Some(vars) = server.get("variables").and_then(Value::as_object) {
        for (k, v) in vars {
            if let Some(d) = v.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{k}}}"), d);
            }
        }
    }
    Some(url)
}

/// Makes a schema acceptable as a top-level property: the argument check
/// needs a type (or an enum) it knows, which OpenAPI schemas often leave out.
fn as_property(schema: Value, description: Option<&str>) -> Value {
    let mut s = match schema {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    if s.get("enum").and_then(Value::as_array).is_some_and(Vec::is_empty) {
        s.remove("enum");
    }
    let known = |t: &Value| match t {
        Value::String(t) => PROPERTY_TYPES.contains(&t.as_str()),
        Value::Array(l) => {
            !l.is_empty() && l.iter().all(|t| t.as_str().is_some_and(|t| t == "null" || PROPERTY_TYPES.contains(&t)))
        }
        _ => false,
    };
    if !s.get("type").is_some_and(known) {
        s.remove("type");
        if !s.contains_key("enum") {
            let inferred = if s.contains_key("properties") {
                json!("object")
            } else if s.contains_key("items") {
                json!("array")
            } else {
                // oneOf / anyOf or an open schema: any JSON value goes.
                json!(PROPERTY_TYPES)
            };
            s.insert("type".into(), inferred);
        }
    }
    if let Some(d) = description.filter(|d| !d.trim().is_empty())
        && !s.contains_key("description")
    {
        s.insert("description".into(), json!(d.trim()));
    }
    Value::Object(s)
}

/// The argument schema of one operation, built as the spec gives it.
struct Params {
    properties: Map<String, Value>,
    required: Vec<String>,
    /// The query parameters, which a method with a body must still send in the URL.
    query: Vec<String>,
}

impl Params {
    fn add(&mut self, name: &str, schema: Value, required: bool) {
        // A name already taken (a path slot also in the body) keeps its first place.
        if self.properties.contains_key(name) {
            return;
        }
        self.properties.insert(name.to_string(), schema);
        if required && !self.required.iter().any(|r| r == name) {
            self.required.push(name.to_string());
        }
    }

    /// The object schema, and the query parameters.
    fn into_schema(self) -> (Value, Vec<String>) {
        let mut schema = Map::with_capacity(3);
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(self.properties));
        schema.insert("required".into(), Value::Array(self.required.into_iter().map(Value::String).collect()));
        (Value::Object(schema), self.query)
    }
}

/// Merges the path item's and the operation's parameters (the operation's
/// win), then the JSON request body's properties.
fn parameters(doc: &Value, item: &Value, op: &Value, at_item: &str, at_op: &str, route: &str) -> Result<Params, Op> {
    let mut declared: Vec<(String, Value)> = Vec::new();
    for (owner, at) in [(item, at_item), (op, at_op)] {
        let Some(list) = owner.get("parameters") else { continue };
        let list = expand(doc, list, &format!("{at}/parameters"))?;
        let Value::Array(list) = list else {
            return Err(Op::Bad(bad(format!("{at}/parameters"), "must be an array")));
        };
        for (i, p) in list.into_iter().enumerate() {
            let (Some(name), Some(place)) =
                (p.get("name").and_then(Value::as_str), p.get("in").and_then(Value::as_str))
            else {
                return Err(Op::Bad(bad(format!("{at}/parameters/{i}"), "a parameter needs a string 'name' and 'in'")));
            };
            let key = format!("{place}:{name}");
            declared.retain(|(k, _)| *k != key);
            declared.push((key, p));
        }
    }
    let mut params = Params { properties: Map::new(), required: Vec::new(), query: Vec::new() };
    for (_, mut p) in declared {
        let schema = p.get_mut("schema").map(Value::take);
        let place = p["in"].as_str().unwrap_or_default();
        // Headers and cookies are the executor's (auth); the model only fills path and query.
        if place != "path" && place != "query" {
            continue;
        }
        let schema = schema.unwrap_or_else(|| json!({ "type": "string" }));
        let name = p["name"].as_str().unwrap_or_default();
        let required = place == "path" || p.get("required").and_then(Value::as_bool).unwrap_or(false);
        if place == "query" && !params.properties.contains_key(name) {
            params.query.push(name.to_string());
        }
        params.add(name, as_property(schema, p.get("description").and_then(Value::as_str)), required);
    }
    // A slot the spec forgot to declare is still needed to build the URL.
    for slot in route.split('{').skip(1).filter_map(|s| s.split_once('}')).map(|(s, _)| s.trim()) {
        if params.properties.contains_key(slot) {
            if !params.required.iter().any(|r| r == slot) {
                params.required.push(slot.to_string());
            }
        } else {
            params.add(slot, json!({ "type": "string" }), true);
        }
    }
    if let Some(body) = op.get("requestBody") {
        let mut body = expand(doc, body, &format!("{at_op}/requestBody"))?;
        let content = body.get_mut("content").and_then(Value::as_object_mut);
        let json_schema = content
            .and_then(|c| c.iter_mut().find(|(mime, _)| mime.contains("json")))
            .and_then(|(_, media)| media.get_mut("schema"));
        if let Some(schema) = json_schema {
            let props =
                schema.get_mut("properties").and_then(Value::as_object_mut).map(std::mem::take).unwrap_or_default();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            for (name, prop) in props {
                let req = required.contains(&name.as_str());
                params.add(&name, as_property(prop, None), req);
            }
        }
    }
    Ok(params)
}

/// The schema of the first documented 2xx JSON response.
fn response(doc: &Value, op: &Value, at_op: &str) -> Result<Option<Value>, Op> {
    let Some(responses) = op.get("responses").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut codes: Vec<&String> = responses.keys().filter(|c| c.starts_with('2')).collect();
    codes.sort();
    for code in codes {
        let at = format!("{at_op}/responses/{}", escape(code));
        let resp = expand(doc, &responses[code], &at)?;
        let schema = resp
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| c.iter().find(|(mime, _)| mime.contains("json")))
            .and_then(|(_, media)| media.get("schema"));
        if let Some(s) = schema.filter(|s| s.is_object()) {
            return Ok(Some(s.clone()));
        }
    }
    Ok(None)
}

/// Why one operation was refused.
enum Op {
    Bad(Bad),
    Ref(schema_refs::BrokenRef),
}

impl From<Bad> for Op {
    fn from(b: Bad) -> Self {
        Op::Bad(b)
    }
}

fn expand(doc: &Value, v: &Value, at: &str) -> Result<Value, Op> {
    schema_refs::expand(doc, v, at).map_err(Op::Ref)
}

/// What every operation of a document is read with.
#[derive(Clone, Copy)]
struct Document<'a> {
    doc: &'a Value,
    /// The server's URL, without a trailing `/`.
    base: &'a str,
    options: &'a FileOptions,
    dir: &'a Path,
    reading: Reading,
}

/// One operation as a tool.
fn operation(d: Document, route: &str, method: &str, name: String) -> Result<ToolSpec, Op> {
    let Document { doc, base, options, dir, reading } = d;
    let at_item = format!("#/paths/{}", escape(route));
    let at_op = format!("{at_item}/{method}");
    let item = &doc["paths"][route];
    let op = &item[method];
    let text = |k: &str| op.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let description = match (text("summary"), text("description")) {
        (Some(s), Some(d)) if s != d => format!("{s}\n\n{d}"),
        (Some(s), _) => s.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => format!("{} {route}", method.to_ascii_uppercase()),
    };
    let (parameters, query) = parameters(doc, item, op, &at_item, &at_op, route)?.into_schema();
    check_parameters(&parameters)?;
    let mut exec = toml::Table::new();
    exec.insert("kind".into(), "http".into());
    exec.insert("method".into(), method.into());
    exec.insert("url".into(), format!("{base}{route}").into());
    if let Some(t) = options.timeout_ms {
        exec.insert("timeout_ms".into(), toml::Value::Integer(i64::try_from(t).unwrap_or(i64::MAX)));
    }
    if method != "get" && method != "delete" && !query.is_empty() {
        let names = query.into_iter().map(toml::Value::String).collect();
        exec.insert("query".into(), toml::Value::Array(names));
    }
    if let Some(h) = &options.headers {
        exec.insert("headers".into(), toml::Value::Table(h.clone()));
    }
    let exec = options.executor.clone().unwrap_or(exec);
    let executor: ExecutorSpec = build_executor(exec, &parameters, dir, reading)?;
    let mut response = response(doc, op, &at_op)?;
    // An operation that succeeds with no body (Spotify's `204 No Content`)
    // is synthesized as an empty object: success, nothing to read.
    let succeeds_without_body =
        op.get("responses").and_then(Value::as_object).is_some_and(|r| r.keys().any(|code| code.starts_with('2')));
    if executor == ExecutorSpec::Synthesized && response.is_none() && succeeds_without_body {
        response = Some(serde_json::json!({"type": "object", "description": "no content", "properties": {}}));
    }
    if executor == ExecutorSpec::Synthesized && response.is_none() {
        return Err(Op::Bad(bad(
            format!("{at_op}/responses"),
            "no 2xx JSON response schema, which a synthesized tool answers from",
        )));
    }
    Ok(ToolSpec {
        name,
        description,
        category: options.category.clone(),
        cost: options.cost.unwrap_or(DEFAULT_COST),
        parameters,
        response,
        executor,
        source: None,
    })
}

/// The tools of an OpenAPI 3 document read from `path`.
pub(crate) fn tools(
    doc: &Value,
    path: &Path,
    options: &FileOptions,
    dir: &Path,
    reading: Reading,
) -> Result<Vec<ToolSpec>, ManifestError> {
    check_version(doc, path)?;
    // An API that cannot be reached here still runs: from a cassette or
    // with values synthesized from each operation's response schema.
    if let Some(e) = &options.executor
        && !matches!(e.get("kind").and_then(toml::Value::as_str), Some("synthesized" | "recorded"))
    {
        return Err(file_err(
            path,
            "library_options.executor",
            "an OpenAPI document's tools are http calls (or kind = \"synthesized\" / \"recorded\"): \
             give base_url, headers or timeout_ms instead",
        ));
    }
    if let Some(c) = options.cost
        && !(c.is_finite() && c >= 0.0)
    {
        return Err(file_err(path, "library_options.cost", format!("must be a finite number >= 0, got {c}")));
    }
    let base = match &options.base_url {
        Some(b) => b.clone(),
        None => server_url(doc).ok_or_else(|| {
            file_err(path, "servers", "no servers[0].url: set base_url in the config's [[library_options]]")
        })?,
    };
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        let field = if options.base_url.is_some() { "library_options.base_url" } else { "servers[0].url" };
        return Err(file_err(path, field, format!("'{base}' is not an http(s) URL (set base_url in the config)")));
    }
    let base = base.trim_end_matches('/');
    let paths = match doc.get("paths") {
        Some(Value::Object(p)) => p,
        Some(_) => return Err(file_err(path, "paths", "must be an object")),
        None => return Err(file_err(path, "paths", "missing")),
    };
    let document = Document { doc, base, options, dir, reading };
    let mut tools: Vec<ToolSpec> = Vec::new();
    // Names seen so far: a list scan per operation made a large spec quadratic.
    let mut seen = std::collections::HashSet::new();
    for (route, item) in paths {
        for method in METHODS.into_iter().filter(|m| item.get(*m).is_some_and(Value::is_object)) {
            let op = &item[method];
            let name = tool_name(op.get("operationId").and_then(Value::as_str), method, route);
            if !seen.insert(name.clone()) {
                return Err(ManifestError::Duplicate { name, first: path.to_path_buf(), second: path.to_path_buf() });
            }
            let spec = operation(document, route, method, name.clone()).map_err(|e| match e {
                Op::Bad(b) => ManifestError::Invalid {
                    path: path.to_path_buf(),
                    tool: ToolRef::Named(name),
                    field: b.field,
                    message: b.message,
                },
                Op::Ref(r) => ManifestError::BrokenRef {
                    path: path.to_path_buf(),
                    at: r.at,
                    target: r.target,
                    message: r.message,
                },
            })?;
            tools.push(ToolSpec { source: Some(path.to_path_buf()), ..spec });
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_manifest_alphabet() {
        assert_eq!(tool_name(None, "get", "/movie/{movie_id}/credits"), "GET_movie_movie_id_credits");
        assert_eq!(tool_name(Some("get-an-album"), "get", "/albums/{id}"), "get-an-album");
        assert_eq!(tool_name(Some("1st op!"), "get", "/"), "op_1st_op");
        assert_eq!(tool_name(Some("end"), "get", "/"), "end_op");
    }
}
