//! Tools: their specs, the library loaded from manifests, the executors that
//! really run them and the fault-injection layer in front of the executors.

pub mod builtin;
pub mod command;
pub mod exec;
pub mod fault;
pub mod http;
pub mod manifest;
pub mod nothing_found;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One callable tool (DESIGN §2).
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
    },
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

/// Why a tool call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The tool ran and reported an error (non-zero exit, HTTP error, bad input).
    Failed,
    /// It did not answer within its timeout and was stopped.
    Timeout,
    /// It died (killed, crashed) without an answer.
    Crashed,
    /// Its output could not be read as JSON.
    BadOutput,
    /// The arguments did not fit the tool's parameter schema.
    BadArguments,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct ToolError {
    pub kind: ToolErrorKind,
    pub message: String,
}

impl ToolError {
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError { kind, message: message.into() }
    }
}

pub type ToolResult = Result<Value, ToolError>;

/// All tools known to a run, by name, in load order.
#[derive(Clone, Debug, Default)]
pub struct ToolLibrary {
    tools: Vec<Arc<ToolSpec>>,
    by_name: BTreeMap<String, usize>,
}

impl ToolLibrary {
    /// Builds a library; refuses duplicate names.
    pub fn new(tools: Vec<ToolSpec>) -> Result<Self, manifest::ManifestError> {
        let mut lib = ToolLibrary::default();
        for t in tools {
            lib.insert(t)?;
        }
        Ok(lib)
    }

    pub fn insert(&mut self, tool: ToolSpec) -> Result<(), manifest::ManifestError> {
        if let Some(&i) = self.by_name.get(&tool.name) {
            return Err(manifest::ManifestError::Duplicate {
                name: tool.name.clone(),
                first: self.tools[i].source.clone().unwrap_or_default(),
                second: tool.source.clone().unwrap_or_default(),
            });
        }
        self.by_name.insert(tool.name.clone(), self.tools.len());
        self.tools.push(Arc::new(tool));
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolSpec>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    pub fn tools(&self) -> &[Arc<ToolSpec>] {
        &self.tools
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
