//! The three wire dialects an agent may speak to its model, and translation
//! between them. OpenAI Chat Completions is the pivot: a request in the
//! Responses or Anthropic dialect is read into a Chat Completions body, and
//! a Chat Completions body written out in either (`chat.rs` holds what the
//! pivot itself needs). A field with no counterpart is an [`Untranslatable`]
//! naming it, never dropped: an agent must not get an answer to a question
//! it did not ask.

pub mod anthropic;
pub mod chat;
pub mod conversation;
pub mod own_tools;
pub mod responses;

use serde_json::Value;

use crate::model::wire::{Dialect, Untranslatable, WireReply, WireRequest};
use crate::model::{ChatResponse, Role};

impl WireRequest {
    /// The request in the pivot dialect.
    pub fn to_chat(&self) -> Result<Value, Untranslatable> {
        match self.dialect {
            Dialect::Chat => Ok(self.body.clone()),
            Dialect::Responses => responses::request_to_chat(&self.body),
            Dialect::Anthropic => anthropic::request_to_chat(&self.body),
        }
    }

    /// The request in `dialect`: as sent when it is the agent's own.
    pub fn to_dialect(&self, dialect: Dialect) -> Result<Value, Untranslatable> {
        if dialect == self.dialect {
            return Ok(self.body.clone());
        }
        let chat = self.to_chat()?;
        match dialect {
            Dialect::Chat => Ok(chat),
            Dialect::Responses => responses::request_from_chat(&chat),
            Dialect::Anthropic => anthropic::request_from_chat(&chat, None),
        }
    }

    /// The request as the engine's strategies see one (messages as text,
    /// the tools offered), carrying this body for a model that speaks a
    /// dialect: the trace, the simulated model and the Transcript read it.
    pub fn chat_request(self, role: Role) -> Result<crate::model::ChatRequest, Untranslatable> {
        let chat = self.to_chat()?;
        let mut req = chat::flatten(&chat, role)?;
        req.wire = Some(self);
        Ok(req)
    }
}

impl WireReply {
    /// The reply in the pivot dialect.
    pub fn to_chat(&self) -> Result<Value, Untranslatable> {
        match self.dialect {
            Dialect::Chat => Ok(self.body.clone()),
            Dialect::Responses => responses::reply_to_chat(&self.body),
            Dialect::Anthropic => anthropic::reply_to_chat(&self.body),
        }
    }

    /// The reply in `dialect`: as the upstream sent it when it is its own.
    pub fn to_dialect(&self, dialect: Dialect) -> Result<Value, Untranslatable> {
        if dialect == self.dialect {
            return Ok(self.body.clone());
        }
        let chat = self.to_chat()?;
        match dialect {
            Dialect::Chat => Ok(chat),
            Dialect::Responses => Ok(responses::reply_from_chat(&chat)),
            Dialect::Anthropic => Ok(anthropic::reply_from_chat(&chat)),
        }
    }
}

impl ChatResponse {
    /// The reply's body in `dialect`: the upstream's own body where it kept
    /// one (translated if need be), else written from the reply (a simulated
    /// model, a cassette, a reply the user edited).
    pub fn to_dialect(&self, dialect: Dialect, model: &str) -> Result<Value, Untranslatable> {
        match &self.wire {
            Some(wire) => wire.to_dialect(dialect),
            None => WireReply { dialect: Dialect::Chat, body: chat::reply_body(self, model) }.to_dialect(dialect),
        }
    }
}
