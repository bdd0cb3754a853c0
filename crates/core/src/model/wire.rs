//! What a bridged agent's request and its reply are on the wire: a body in
//! one of the three dialects, as it was sent. Translation between the
//! dialects is `dialect`'s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An API an agent speaks to its model.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    #[default]
    Chat,
    /// The OpenAI Responses API (`POST /v1/responses`).
    Responses,
    /// Anthropic Messages (`POST /v1/messages`).
    Anthropic,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Chat => "chat",
            Dialect::Responses => "responses",
            Dialect::Anthropic => "anthropic",
        }
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A request body as an agent sent it, in its dialect.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct WireRequest {
    pub dialect: Dialect,
    pub body: Value,
}

/// A reply body as the upstream sent it, in its dialect.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct WireReply {
    pub dialect: Dialect,
    pub body: Value,
}

/// A field that has no counterpart in the dialect asked for.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[error("{field}: {why}")]
pub struct Untranslatable {
    /// Where in the body, e.g. `messages[2].content[0].type`.
    pub field: String,
    pub why: String,
}

pub(crate) fn untranslatable(field: impl Into<String>, why: impl Into<String>) -> Untranslatable {
    Untranslatable { field: field.into(), why: why.into() }
}
