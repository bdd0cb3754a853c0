//! The raw shapes a manifest is read into, and how a TOML table is read
//! into one: precisely, naming the key that fails, or fast, for a file with
//! nothing wrong (see [`Reading`]).

use std::path::PathBuf;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A field and what is wrong with it; the caller adds file and tool.
pub(crate) struct Bad {
    pub(crate) field: String,
    pub(crate) message: String,
}

pub(crate) fn bad(field: impl Into<String>, message: impl Into<String>) -> Bad {
    Bad { field: field.into(), message: message.into() }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) tool: Option<Vec<toml::Value>>,
}

/// A manifest read in one go, for `manifest::parse_fast`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FastFile {
    pub(super) tool: Option<Vec<RawTool>>,
}

// Every raw field is optional so that `deserialize_table` can test keys one
// at a time; required fields are checked by hand with a clear message.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTool {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) category: Option<String>,
    pub(super) cost: Option<f64>,
    pub(super) parameters: Option<toml::Value>,
    pub(super) response: Option<toml::Value>,
    pub(super) executor: Option<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBuiltin {
    pub(super) function: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCommand {
    pub(super) argv: Option<Vec<String>>,
    pub(super) cwd: Option<PathBuf>,
    pub(super) timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    pub(super) method: Option<String>,
    pub(super) url: Option<String>,
    pub(super) timeout_ms: Option<u64>,
    pub(super) headers: Option<toml::Table>,
    pub(super) query: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRecorded {
    pub(super) cassette: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSynthesized {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEnvHeader {
    pub(super) env: Option<String>,
    pub(super) prefix: Option<String>,
}

/// Deserializes a table, naming the offending key on failure. serde's
/// message does not say which key failed, so on error each key is retried
/// alone to find it.
pub(super) fn deserialize_table<T: DeserializeOwned>(table: &toml::Table, prefix: &str) -> Result<T, Bad> {
    let whole = match toml::Value::Table(table.clone()).try_into::<T>() {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    for (key, value) in table {
        let mut one = toml::Table::new();
        one.insert(key.clone(), value.clone());
        if let Err(e) = toml::Value::Table(one).try_into::<T>() {
            let msg = e.message();
            let msg = match msg.strip_prefix("unknown field `") {
                Some(rest) => match rest.split_once(", ") {
                    Some((_, expected)) => format!("unknown field ({expected})"),
                    None => "unknown field".to_string(),
                },
                None => msg
                    .replace("expected f64", "expected a number")
                    .replace("expected u64", "expected a whole number >= 0"),
            };
            return Err(bad(join(prefix, key), msg));
        }
    }
    Err(bad(prefix, whole.message().to_string()))
}

/// How a table is read into its raw struct.
#[derive(Clone, Copy)]
pub(crate) enum Reading {
    /// Moved in whole; a failure says only that it failed. A file read so
    /// is read again `Precise`ly when anything fails, for the message: the
    /// copies that take would make a large library slow to load.
    Fast,
    /// With [`deserialize_table`], which names the offending key.
    Precise,
}

pub(super) fn read_table<T: DeserializeOwned>(table: toml::Table, prefix: &str, reading: Reading) -> Result<T, Bad> {
    match reading {
        Reading::Fast => toml::Value::Table(table).try_into().map_err(|e| bad(prefix, e.message().to_string())),
        Reading::Precise => deserialize_table(&table, prefix),
    }
}

pub(super) fn type_name(v: &toml::Value) -> &'static str {
    v.type_str()
}

/// TOML to JSON; refuses what JSON cannot hold (NaN, infinities).
pub(super) fn to_json(v: toml::Value, field: &str) -> Result<Value, Bad> {
    json_of(v).map_err(|(below, f)| bad(format!("{field}{below}"), format!("{f} is not a finite number")))
}

/// [`to_json`]'s work; a refused number comes back with its path below
/// `v`, built only then (a path per value made large manifests slow).
fn json_of(v: toml::Value) -> Result<Value, (String, f64)> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map(Value::Number).ok_or((String::new(), f))?,
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(
            a.into_iter()
                .enumerate()
                .map(|(i, x)| json_of(x).map_err(|(below, f)| (format!("[{i}]{below}"), f)))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, x)| match json_of(x) {
                    Ok(x) => Ok((k, x)),
                    Err((below, f)) => Err((format!(".{k}{below}"), f)),
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}
