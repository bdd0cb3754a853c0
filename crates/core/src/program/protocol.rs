//! A tool's protocol as ATC shows it to the model: what it does, its
//! arguments, the shape of its response (documented, or probed) and an
//! example call, rendered compactly; and the store of probed protocols in
//! the data directory, so a tool probed once is documented from then on.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::schema::Shape;
use crate::text::{ellipsis, one_line};
use crate::tool::ToolSpec;

/// The longest description and response shape shown per tool: a prompt
/// over 20 REST endpoints must still fit a small model's context.
pub const RESPONSE_CHARS: usize = 900;
const DESCRIPTION_CHARS: usize = 300;
const ARGUMENT_CHARS: usize = 120;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseSource {
    Documented,
    Probed,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub shape: Shape,
    pub source: ResponseSource,
}

/// A question and the program that answered it: a probe's usage example.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub question: String,
    pub program: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Protocol {
    pub tool: String,
    /// The name the program calls it by.
    pub function: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub arguments: Value,
    pub response: Option<Response>,
    pub example: Option<Example>,
}

impl Protocol {
    /// The protocol of `spec`: a probed response wins over the documented
    /// one only when the tool documents none (a probe sees a few answers,
    /// the documentation all of them).
    pub fn of(spec: &ToolSpec, function: &str, probed: Option<&Probed>) -> Protocol {
        let documented = spec.response.as_ref().map(Shape::from_json_schema).filter(|s| *s != Shape::Any);
        let response = match (documented, probed) {
            (Some(shape), _) => Some(Response { shape, source: ResponseSource::Documented }),
            (None, Some(p)) => Some(Response { shape: p.shape.clone(), source: ResponseSource::Probed }),
            (None, None) => None,
        };
        Protocol {
            tool: spec.name.clone(),
            function: function.to_string(),
            description: spec.description.clone(),
            arguments: spec.parameters.clone(),
            response,
            example: probed.map(|p| Example { question: p.question.clone(), program: p.program.clone() }),
        }
    }

    /// `name(#{arg: type (required), ...}) -> shape`, the description, and
    /// an example: a few lines per tool.
    pub fn render(&self) -> String {
        self.render_within(RESPONSE_CHARS)
    }

    /// As `render`, with the response shape cut at `response_chars` (and
    /// descriptions shortened with it): how a prompt is fit into a small
    /// model's context.
    pub fn render_within(&self, response_chars: usize) -> String {
        let scale = |n: usize| (n * response_chars / RESPONSE_CHARS).max(40);
        let mut out = format!("{}({})", self.function, signature(&self.arguments));
        match &self.response {
            Some(r) => {
                out.push_str(" -> ");
                out.push_str(&ellipsis(&r.shape.render(), response_chars));
                if r.source == ResponseSource::Probed {
                    out.push_str("  (probed)");
                }
            }
            None => out.push_str(" -> (response not documented)"),
        }
        let description = one_line(&self.description);
        if !description.is_empty() {
            out.push_str("\n  ");
            out.push_str(&ellipsis(&description, scale(DESCRIPTION_CHARS)));
        }
        if let Some(props) = self.arguments.get("properties").and_then(Value::as_object) {
            for (name, s) in props {
                if let Some(d) = s.get("description").and_then(Value::as_str).map(one_line).filter(|d| !d.is_empty()) {
                    out.push_str(&format!("\n  - {name}: {}", ellipsis(&d, scale(ARGUMENT_CHARS))));
                }
            }
        }
        match &self.example {
            Some(e) => {
                out.push_str(&format!("\n  example for \"{}\": ", ellipsis(&e.question, 120)));
                out.push_str(&e.program.lines().map(str::trim).collect::<Vec<_>>().join(" "));
            }
            None => out.push_str(&format!(
                "\n  e.g. let r = {}({});",
                self.function,
                example_args(&self.arguments, &self.description)
            )),
        }
        out
    }
}

/// `#{query: str (required), page: int}` from an object schema.
pub fn signature(parameters: &Value) -> String {
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = parameters.get("properties").and_then(Value::as_object) else { return "#{}".into() };
    let fields: Vec<String> = props
        .iter()
        .map(|(name, s)| {
            let ty = arg_type(s);
            if required.contains(&name.as_str()) { format!("{name}: {ty} (required)") } else { format!("{name}: {ty}") }
        })
        .collect();
    format!("#{{{}}}", fields.join(", "))
}

/// An argument's type as the signature shows it: the allowed values of an
/// enum, `date` for a date string, else the type name of the shape.
fn arg_type(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array).filter(|v| !v.is_empty()) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join("|");
    }
    if schema.get("format").and_then(Value::as_str) == Some("date") {
        return "date".into();
    }
    Shape::from_json_schema(schema).render().trim_matches('"').to_string()
}

/// The required arguments with a value of their type (an example or
/// default when the schema has one).
fn example_args(parameters: &Value, tool_description: &str) -> String {
    let required: Vec<&str> = parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = parameters.get("properties").and_then(Value::as_object);
    let strings = required
        .iter()
        .filter(|n| {
            props.and_then(|p| p.get(**n)).and_then(|s| s.get("type")).and_then(Value::as_str) == Some("string")
        })
        .count();
    let fields: Vec<String> = required
        .iter()
        .map(|name| {
            let s = props.and_then(|p| p.get(*name)).cloned().unwrap_or(Value::Null);
            let d = s.get("description").and_then(Value::as_str).unwrap_or("");
            let ty = s.get("type").and_then(Value::as_str);
            let v = s
                .get("example")
                .cloned()
                .or_else(|| described_example(d, ty))
                .or_else(|| s.get("default").cloned())
                .or_else(|| s.get("enum").and_then(|e| e.get(0)).cloned())
                .or_else(|| s.get("minimum").cloned())
                // The tool's own example speaks for its one text argument.
                .or_else(|| {
                    (strings == 1 && ty == Some("string")).then(|| described_example(tool_description, ty)).flatten()
                })
                .unwrap_or_else(|| match ty {
                    _ if s.get("format").and_then(Value::as_str) == Some("date") || d.contains("YYYY-MM-DD") => {
                        Value::String("2025-01-15".into())
                    }
                    Some("integer") => Value::from(12),
                    Some("number") => Value::from(2.5),
                    Some("boolean") => Value::Bool(true),
                    Some("array") => match s.pointer("/items/type").and_then(Value::as_str) {
                        Some("number" | "integer") => serde_json::json!([3, 1, 2]),
                        _ => Value::Array(Vec::new()),
                    },
                    _ => Value::String("...".into()),
                });
            format!("{name}: {v}")
        })
        .collect();
    format!("#{{{}}}", fields.join(", "))
}

/// The first quoted example of a description ("e.g. 'Lyon'", "such as
/// '1994'"), typed as the argument is.
fn described_example(d: &str, ty: Option<&str>) -> Option<Value> {
    let at = ["e.g.", "for example", "such as"].iter().filter_map(|m| d.find(m)).min()?;
    let rest = &d[at..];
    let open = rest.find(['\'', '"'])?;
    let q = rest[open..].chars().next()?;
    let body = &rest[open + 1..];
    let text = &body[..body.find(q)?];
    Some(match ty {
        Some("integer") => text.parse::<i64>().map(Value::from).ok()?,
        Some("number") => text.parse::<f64>().ok().and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))?,
        _ => Value::String(text.to_string()),
    })
}

/// A probed protocol as saved: the probe's question and program, the
/// schema merged over its samples, and the helper tools the chain needed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probed {
    pub tool: String,
    /// A hash of the tool's description and arguments: a tool that changed
    /// is probed again rather than described by an old probe.
    pub spec: String,
    pub question: String,
    pub program: String,
    pub shape: Shape,
    pub samples: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub helpers: Vec<String>,
}

/// The hash a probe is kept under.
pub fn spec_hash(spec: &ToolSpec) -> String {
    let mut h = Sha256::new();
    h.update(spec.name.as_bytes());
    h.update([0]);
    h.update(spec.description.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(&spec.parameters).unwrap_or_default());
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

#[derive(thiserror::Error, Debug)]
pub enum StoreError {
    #[error("probed protocol {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("probed protocol {}: not a protocol ({source}); delete it to probe the tool again", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

/// Probed protocols, one JSON file per tool under `DATA_DIR/protocols`.
#[derive(Clone, Debug)]
pub struct ProtocolStore {
    dir: PathBuf,
}

impl ProtocolStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ProtocolStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path(&self, tool: &str) -> PathBuf {
        let name: String =
            tool.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
        self.dir.join(format!("{name}.json"))
    }

    /// The probe of this version of the tool, if one was saved.
    pub fn load(&self, spec: &ToolSpec) -> Result<Option<Probed>, StoreError> {
        let path = self.path(&spec.name);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        let p: Probed = serde_json::from_str(&text).map_err(|source| StoreError::Json { path, source })?;
        Ok((p.tool == spec.name && p.spec == spec_hash(spec)).then_some(p))
    }

    /// Saves atomically: a kill leaves the old file or the new, never half.
    pub fn save(&self, p: &Probed) -> Result<PathBuf, StoreError> {
        let path = self.path(&p.tool);
        let io = |source| StoreError::Io { path: path.clone(), source };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let text = serde_json::to_string_pretty(p).map_err(|source| StoreError::Json { path: path.clone(), source })?;
        let mut file = atomic_write_file::AtomicWriteFile::open(&path).map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        file.commit().map_err(io)?;
        Ok(path)
    }
}
