//! What a tool is: its description for the model, its price and the
//! executor that runs it, as a manifest declares them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One callable tool (docs/src/tools.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Cost of one call, in the run's cost unit.
    pub cost: f64,
    /// JSON Schema of the arguments (an object schema).
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    pub executor: ExecutorSpec,
    /// The manifest the tool came from (for error messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ExecutorSpec {
    /// Rust, in process: `function` names an entry of the builtin registry.
    Builtin { function: String },
    /// A subprocess: argv without a shell, JSON arguments on stdin, JSON on stdout.
    Command {
        argv: Vec<String>,
        /// Working directory (the manifest's folder unless set).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
        timeout_ms: u64,
    },
    /// A REST call. `url` may hold `{param}` slots filled from the arguments.
    Http {
        method: String,
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, HeaderValue>,
        timeout_ms: u64,
        /// Arguments sent in the query string even by a method with a body
        /// (an OpenAPI operation's query parameters).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        query: Vec<String>,
    },
    /// Answers from a tool cassette (see `tape`), for tools that cannot be
    /// reached here; the path is resolved against the manifest's folder.
    Recorded { cassette: PathBuf },
    /// Answers with a value generated from the tool's `response` schema.
    Synthesized,
    /// A tool of an MCP server (`[[mcp]]`): `tool` is the server's own name
    /// for it, which the library's name may prefix with the server's.
    Mcp { server: String, tool: String, timeout_ms: u64 },
}

/// A header value: literal, or read from an environment variable at call time
/// (so secrets never sit in a manifest, a trace or a log).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeaderValue {
    Literal(String),
    Env {
        env: String,
        #[serde(default)]
        prefix: String,
    },
}

impl ToolSpec {
    /// The timeout the tool's manifest gives it (command and HTTP tools
    /// carry one; builtins run under their caller's).
    pub fn own_timeout(&self) -> Option<std::time::Duration> {
        match &self.executor {
            ExecutorSpec::Builtin { .. } | ExecutorSpec::Recorded { .. } | ExecutorSpec::Synthesized => None,
            ExecutorSpec::Command { timeout_ms, .. }
            | ExecutorSpec::Http { timeout_ms, .. }
            | ExecutorSpec::Mcp { timeout_ms, .. } => Some(std::time::Duration::from_millis(*timeout_ms)),
        }
    }

    /// The MCP server a tool comes from.
    pub fn server(&self) -> Option<&str> {
        match &self.executor {
            ExecutorSpec::Mcp { server, .. } => Some(server),
            _ => None,
        }
    }
}
