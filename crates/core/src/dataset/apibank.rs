//! API-Bank (DAMO-ConvAI `api-bank/`): the API catalogue `data/all_apis.csv`
//! and the annotated dialogues of `lv1-lv2-samples/`, one JSON object per
//! turn:
//!
//! ```text
//! {"role": "User", "text": "..."}
//! {"role": "API", "api_name": "GetUserToken", "param_dict": {...},
//!  "result": {"api_name": "GetUserToken", "input": {...}, "output": ..., "exception": null}}
//! ```
//!
//! The catalogue's `api_info` column is Python source (`description = "..."`,
//! `input_parameters = {...}`), read with [`super::pylit`], never run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::DataError;
use super::pylit;

/// The folder of the "Call" setting: the API's description is given.
pub const LEVEL1_DIR: &str = "level-1-given-desc";
/// The folder of the "Retrieve+Call" setting: the model finds the API with
/// `ToolSearcher` first (its files are named `level-3`).
pub const LEVEL2_DIR: &str = "level-2-toolsearcher";
/// The retrieval API of level 2, which the catalogue does not list.
pub const TOOL_SEARCHER: &str = "ToolSearcher";

/// One parameter as API-Bank documents it; `ty` is its Python type name
/// (`str`, `int`, `list(str)`, `datetime`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: String,
    pub description: String,
    pub required: bool,
}

/// One API: its class name, description and input parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiDoc {
    pub name: String,
    pub description: String,
    pub params: Vec<Param>,
}

/// The catalogue, and the APIs whose `api_info` said nothing (e.g.
/// `.`) and that were documented from the signature column instead.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    pub apis: Vec<ApiDoc>,
    pub from_signature: Vec<String>,
}

/// One turn of a dialogue.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    User(String),
    Ai(String),
    Api(Box<ApiCall>),
}

/// An annotated API call: the arguments as the annotator wrote them
/// (`param_dict`, where numbers and lists are sometimes strings), the
/// arguments as the API read them (`input`, what API-Bank's evaluator
/// compares), and what it answered.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiCall {
    pub api: String,
    pub param_dict: Value,
    pub input: Value,
    pub output: Value,
    pub exception: Option<String>,
    /// The line of the dialogue file (from 1).
    pub line: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Dialogue {
    pub path: PathBuf,
    /// The file name without `.jsonl`, e.g. `AddAgenda-level-1-1`.
    pub name: String,
    pub turns: Vec<Turn>,
}

impl Dialogue {
    pub fn calls(&self) -> impl Iterator<Item = &ApiCall> {
        self.turns.iter().filter_map(|t| match t {
            Turn::Api(c) => Some(c.as_ref()),
            _ => None,
        })
    }

    /// The level the file name gives (`...-level-2-3` → 2): within
    /// `level-1-given-desc` it tells one-API dialogues (1) from several (2).
    pub fn name_level(&self) -> Option<u32> {
        let (_, rest) = self.name.rsplit_once("-level-")?;
        rest.split('-').next()?.parse().ok()
    }
}

/// The sample dialogues of both settings, sorted by file name, and the
/// entries of the sample folders that are not dialogue files.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub level1: Vec<Dialogue>,
    pub level2: Vec<Dialogue>,
    pub ignored: Vec<PathBuf>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DataError + '_ {
    move |source| DataError::Io { path: path.into(), source }
}

/// Reads `dir/lv1-lv2-samples/{level-1-given-desc,level-2-toolsearcher}/*.jsonl`.
pub fn load_samples(dir: &Path) -> Result<Samples, DataError> {
    let root = dir.join("lv1-lv2-samples");
    let mut samples = Samples::default();
    for (folder, into) in [(LEVEL1_DIR, &mut samples.level1), (LEVEL2_DIR, &mut samples.level2)] {
        let path = root.join(folder);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&path)
            .map_err(io(&path))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(io(&path))?;
        files.sort();
        for f in files {
            if f.is_file() && f.extension().is_some_and(|e| e == "jsonl") {
                into.push(load_dialogue(&f)?);
            } else {
                samples.ignored.push(f);
            }
        }
    }
    Ok(samples)
}

#[derive(Deserialize)]
#[serde(tag = "role")]
enum RawTurn {
    User {
        text: String,
    },
    #[serde(rename = "AI")]
    Ai {
        text: String,
    },
    #[serde(rename = "API")]
    Api(Box<RawApi>),
}

#[derive(Deserialize)]
struct RawApi {
    api_name: String,
    #[serde(default)]
    param_dict: Value,
    result: RawResult,
}

#[derive(Deserialize)]
struct RawResult {
    #[serde(default)]
    api_name: Option<String>,
    #[serde(default)]
    input: Value,
    #[serde(default)]
    output: Value,
    #[serde(default)]
    exception: Value,
}

/// One dialogue file; a line that is not a turn is an error naming it.
pub fn load_dialogue(path: &Path) -> Result<Dialogue, DataError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let mut turns = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| DataError::Line { path: path.into(), line: i + 1, reason };
        let raw: RawTurn = serde_json::from_str(line).map_err(|e| bad(format!("not a dialogue turn: {e}")))?;
        turns.push(match raw {
            RawTurn::User { text } => Turn::User(text),
            RawTurn::Ai { text } => Turn::Ai(text),
            RawTurn::Api(raw) => {
                let RawApi { api_name, param_dict, result } = *raw;
                if api_name.trim().is_empty() {
                    return Err(bad("field 'api_name' is empty".into()));
                }
                if let Some(other) = result.api_name.filter(|n| *n != api_name) {
                    return Err(bad(format!("'api_name' is {api_name} but 'result.api_name' is {other}")));
                }
                let exception = match result.exception {
                    Value::Null => None,
                    Value::String(s) => Some(s),
                    other => Some(other.to_string()),
                };
                Turn::Api(Box::new(ApiCall {
                    api: api_name,
                    param_dict,
                    input: result.input,
                    output: result.output,
                    exception,
                    line: i + 1,
                }))
            }
        });
    }
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("dialogue").to_string();
    Ok(Dialogue { path: path.into(), name, turns })
}

/// Reads `all_apis.csv`. Each row's `api_info` must parse; one that holds
/// no text at all (the catalogue's `ImageCaption` row is `.`) is documented
/// from the row's signature column (`(image: str)`) and listed in
/// `from_signature`.
pub fn load_catalogue(path: &Path) -> Result<Catalogue, DataError> {
    let text = std::fs::read_to_string(path).map_err(io(path))?;
    let rows = read_csv(&text).map_err(|(line, reason)| DataError::Line { path: path.into(), line, reason })?;
    let Some(((_, header), rows)) = rows.split_first() else {
        return Err(DataError::Format { path: path.into(), reason: "holds no header row".into() });
    };
    let column = |name: &str| {
        header.iter().position(|h| h.trim() == name).ok_or_else(|| DataError::Format {
            path: path.into(),
            reason: format!("no column '{name}' (columns: {})", header.join(", ")),
        })
    };
    let (class_col, info_col, sig_col) = (column("类名")?, column("api_info")?, column("input_parameters")?);
    let mut out = Catalogue::default();
    for (line, row) in rows {
        if row.iter().all(|c| c.trim().is_empty()) {
            continue;
        }
        let bad = |reason: String| DataError::Line { path: path.into(), line: *line, reason };
        let cell = |i: usize| row.get(i).map(|s| s.trim()).unwrap_or("");
        let name = cell(class_col).to_string();
        if name.is_empty() {
            return Err(bad("column '类名' (the API's class name) is empty".into()));
        }
        let info = cell(info_col);
        let doc = if info.chars().any(char::is_alphanumeric) {
            api_info(&name, info).map_err(|e| bad(format!("{name}: its api_info, {e}")))?
        } else {
            out.from_signature.push(name.clone());
            from_signature(&name, cell(sig_col)).map_err(|e| bad(format!("{name}: column 'input_parameters': {e}")))?
        };
        if out.apis.iter().any(|a| a.name == doc.name) {
            return Err(bad(format!("API {name} is listed twice")));
        }
        out.apis.push(doc);
    }
    if out.apis.is_empty() {
        return Err(DataError::Format { path: path.into(), reason: "lists no API".into() });
    }
    Ok(out)
}

/// An `api_info` cell: `description`, `input_parameters` (a dict, or None
/// or `{None}` for none) and `output_parameters` (not needed here).
fn api_info(name: &str, info: &str) -> Result<ApiDoc, String> {
    let assigned: BTreeMap<String, Value> =
        pylit::parse_assignments(info).map_err(|e| e.to_string())?.into_iter().collect();
    let description = match assigned.get("description") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        Some(Value::String(_)) | None => return Err("no 'description'".into()),
        Some(other) => return Err(format!("'description' is not a string but {other}")),
    };
    let params = params_of(assigned.get("input_parameters").unwrap_or(&Value::Null))
        .map_err(|e| format!("input_parameters: {e}"))?;
    Ok(ApiDoc { name: name.to_string(), description, params })
}

/// `{name: {"type", "description", "required"?}}`; None, `{None}` and `{}` are no parameters.
pub fn params_of(v: &Value) -> Result<Vec<Param>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) if items.iter().all(Value::is_null) => Ok(Vec::new()),
        Value::Object(m) => m
            .iter()
            .map(|(pname, p)| {
                let Value::Object(p) = p else {
                    return Err(format!("'{pname}' is not a dict but {p}"));
                };
                let ty = match p.get("type") {
                    Some(Value::String(t)) if !t.trim().is_empty() => t.trim().to_string(),
                    _ => return Err(format!("'{pname}' has no 'type'")),
                };
                let description = p.get("description").and_then(Value::as_str).unwrap_or("").trim().to_string();
                let required = p.get("required").and_then(Value::as_bool).unwrap_or(true);
                Ok(Param { name: pname.clone(), ty, description, required })
            })
            .collect(),
        other => Err(format!("expected a dict of parameters, got {other}")),
    }
}

/// `(image: str, n: int)` (or `None`) as parameters, for a row without `api_info`.
fn from_signature(name: &str, sig: &str) -> Result<ApiDoc, String> {
    let inner = sig.trim().trim_start_matches('(').trim_end_matches(')').trim();
    let mut params = Vec::new();
    if !(inner.is_empty() || inner == "None") {
        for part in inner.split(',') {
            let (pname, ty) = part.split_once(':').ok_or_else(|| format!("'{}' is not 'name: type'", part.trim()))?;
            let (pname, ty) = (pname.trim(), ty.trim());
            if pname.is_empty() || !pname.chars().all(|c| c.is_alphanumeric() || c == '_') {
                return Err(format!("'{pname}' is not a parameter name"));
            }
            params.push(Param { name: pname.into(), ty: ty.into(), description: String::new(), required: true });
        }
    }
    let description = format!("{} (signature {name}{sig}; the catalogue gives no description).", words(name));
    Ok(ApiDoc { name: name.to_string(), description, params })
}

/// `ImageCaption` → `Image caption`.
fn words(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The docs `ToolSearcher` returned in the dialogues (its output is one
/// doc or a list of them), the first of each name. They are the API
/// simulator's own, and match the recorded calls where the catalogue's
/// parameters do not.
pub fn searched_docs<'a>(dialogues: impl IntoIterator<Item = &'a Dialogue>) -> Result<Vec<ApiDoc>, DataError> {
    let mut out: Vec<ApiDoc> = Vec::new();
    for d in dialogues {
        for c in d.calls().filter(|c| c.api == TOOL_SEARCHER) {
            for doc in found_docs(&c.output) {
                let bad = |reason: String| DataError::Line { path: d.path.clone(), line: c.line, reason };
                let name = doc.get("name").and_then(Value::as_str).filter(|n| !n.trim().is_empty());
                let Some(name) = name else {
                    return Err(bad("a ToolSearcher result without a 'name'".into()));
                };
                if out.iter().any(|a| a.name == name) {
                    continue;
                }
                let params = params_of(doc.get("input_parameters").unwrap_or(&Value::Null))
                    .map_err(|e| bad(format!("ToolSearcher result {name}: input_parameters: {e}")))?;
                let description = doc.get("description").and_then(Value::as_str).unwrap_or("").trim().to_string();
                out.push(ApiDoc { name: name.to_string(), description, params });
            }
        }
    }
    Ok(out)
}

/// The API names a ToolSearcher output returns.
pub fn found_names(output: &Value) -> Vec<String> {
    found_docs(output).filter_map(|d| d.get("name").and_then(Value::as_str)).map(str::to_string).collect()
}

fn found_docs(output: &Value) -> impl Iterator<Item = &serde_json::Map<String, Value>> {
    let items: Vec<&Value> = match output {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    items.into_iter().filter_map(Value::as_object)
}

/// ToolSearcher as API-Bank's simulator declares it.
pub fn tool_searcher() -> ApiDoc {
    ApiDoc {
        name: TOOL_SEARCHER.into(),
        description: "Searches for relevant tools in library based on the keywords.".into(),
        params: vec![Param {
            name: "keywords".into(),
            ty: "str".into(),
            description: "The keyword to search for.".into(),
            required: true,
        }],
    }
}

/// The JSON Schema type of a Python type name as API-Bank writes them.
pub fn json_type(py: &str) -> &'static str {
    let t = py.trim().to_ascii_lowercase();
    let head: String = t.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
    match head.as_str() {
        "int" | "integer" => "integer",
        "float" | "number" | "double" | "decimal" => "number",
        "bool" | "boolean" => "boolean",
        "list" | "tuple" | "set" | "array" => "array",
        "dict" | "object" | "json" | "map" => "object",
        _ => "string",
    }
}

/// The JSON Schema type of a recorded value (for parameters read off the calls).
pub fn value_type(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null | Value::String(_) => "string",
    }
}

/// The records of a CSV text (RFC 4180: quoted fields may hold commas,
/// line ends and doubled quotes), each with the line it starts on.
#[allow(clippy::type_complexity)]
fn read_csv(text: &str) -> Result<Vec<(usize, Vec<String>)>, (usize, String)> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut rows = Vec::new();
    let mut row: Vec<String> = Vec::new();
    let mut field = String::new();
    let (mut line, mut row_line) = (1, 1);
    let mut quoted = false;
    let mut quote_line = 0;
    let mut chars = text.chars().peekable();
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => {
                    quoted = false;
                    if !matches!(chars.peek(), None | Some(',' | '\n' | '\r')) {
                        return Err((
                            line,
                            "text after a closing quote (a quote inside a field must be doubled)".into(),
                        ));
                    }
                }
                '\n' => {
                    line += 1;
                    field.push(c);
                }
                _ => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                quote_line = line;
            }
            ',' => {
                row.push(std::mem::take(&mut field));
                at_field_start = true;
                continue;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => {
                row.push(std::mem::take(&mut field));
                rows.push((row_line, std::mem::take(&mut row)));
                line += 1;
                row_line = line;
                at_field_start = true;
                continue;
            }
            _ => field.push(c),
        }
        at_field_start = false;
    }
    if quoted {
        return Err((quote_line, "a quoted field that is never closed".into()));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push((row_line, row));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_fields_hold_commas_quotes_and_line_ends() {
        let rows = read_csv("a,b,c\n1,\"x, \"\"y\"\"\nz\",3\r\n2,,\n").unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1], (2, vec!["1".to_string(), "x, \"y\"\nz".into(), "3".into()]));
        assert_eq!(rows[2], (4, vec!["2".to_string(), String::new(), String::new()]));
        assert_eq!(read_csv("a\n\"open\n").unwrap_err().0, 2);
    }

    #[test]
    fn api_info_reads_none_sets_and_required_flags() {
        let d = api_info(
            "GetToday",
            "description = \"Today's tasks.\"\ninput_parameters = {\n    None\n}\noutput_parameters = {}",
        )
        .unwrap();
        assert_eq!((d.description.as_str(), d.params.len()), ("Today's tasks.", 0));
        let d = api_info(
            "BookTicket",
            "description = 'Book.'\n\ninput_parameters = {\n    'n': {'type': 'int', 'description': 'How many.', \
             'required': False},\n}\n",
        )
        .unwrap();
        assert_eq!(
            d.params[0],
            Param { name: "n".into(), ty: "int".into(), description: "How many.".into(), required: false }
        );
        assert!(api_info("X", "description = 'x'\ninput_parameters = {'a': 'str'}").unwrap_err().contains("'a'"));
        assert!(api_info("X", "input_parameters = None").unwrap_err().contains("description"));
        let d = from_signature("ImageCaption", "(image: str)").unwrap();
        assert_eq!((d.params[0].name.as_str(), json_type(&d.params[0].ty)), ("image", "string"));
        assert!(d.description.starts_with("Image caption"), "{}", d.description);
    }

    #[test]
    fn python_types_map_onto_json_schema_types() {
        for (py, js) in [
            ("str", "string"),
            ("List[str]", "array"),
            ("list(str)", "array"),
            ("int", "integer"),
            ("float", "number"),
            ("datetime", "string"),
            ("dict", "object"),
            ("bool", "boolean"),
        ] {
            assert_eq!(json_type(py), js, "{py}");
        }
        assert_eq!(value_type(&json!(2)), "integer");
        assert_eq!(value_type(&json!(2.5)), "number");
    }
}
