//! How a tool call fails, shared by every executor and by the engine's
//! trace.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// The user rejected the call before it ran (approvals); the message
    /// carries their note to the model.
    Rejected,
    /// The engine refused the call before it ran: BTP's budget or
    /// blacklist forbids it (a bridged agent's call; the message says why).
    Refused,
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
