//! What an MCP endpoint offers and where its calls go, apart from the
//! protocol: the tools a client may list, and a call that comes back with
//! the tool's result.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use crate::engine::agent::calls::{Bridged, BridgedToolCall, Refusal};
use crate::strategy::bridge::{OfferSender, ToolOffer};
use crate::tool::{ToolLibrary, ToolResult, ToolSpec};

/// Why a call got no result at all (a tool's own failure is a result).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DeskError {
    #[error("unknown tool '{tool}'{hint}")]
    UnknownTool { tool: String, hint: String },
    /// The session ended (or its run did) before the call was answered.
    #[error("the Switchyard session ended before the call was answered")]
    Stopped,
}

/// The tools behind an MCP endpoint.
#[async_trait]
pub trait ToolDesk: Send + Sync + 'static {
    /// The tools `tools/list` offers now, in order.
    async fn offered(&self) -> Vec<Arc<ToolSpec>>;
    /// A tool that may be called: any of the library's, offered or not (an
    /// agent may know a tool from an earlier list).
    async fn find(&self, name: &str) -> Result<Arc<ToolSpec>, DeskError>;
    async fn call(&self, tool: &str, args: Value) -> Result<ToolResult, DeskError>;
    /// Changes each time the offered set does (`notifications/tools/list_changed`).
    fn changes(&self) -> watch::Receiver<ToolOffer>;
}

/// The tools of a session, every call handed to its engine (the bridge
/// strategy serves it like any tool call of a run).
pub struct SessionDesk {
    calls: mpsc::Sender<Bridged>,
    /// The session's library, once the session is set up (the endpoint
    /// listens before: an agent may start at once), and what narrowing
    /// keeps of it (the bridge narrows).
    offer: OfferSender,
}

impl std::fmt::Debug for SessionDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools = self.offer.borrow().library.as_ref().map(ToolLibrary::len);
        f.debug_struct("SessionDesk").field("tools", &tools).finish()
    }
}

impl SessionDesk {
    pub fn new(calls: mpsc::Sender<Bridged>) -> Self {
        SessionDesk { calls, offer: Arc::new(watch::channel(ToolOffer::default()).0) }
    }

    /// Offers `library`: clients listening are told the list changed.
    pub fn offer(&self, library: ToolLibrary) {
        self.offer.send_modify(|o| o.library = Some(library));
    }

    /// Where the session's bridge narrows what is listed.
    pub fn offer_sender(&self) -> OfferSender {
        Arc::clone(&self.offer)
    }

    async fn library(&self) -> Result<ToolLibrary, DeskError> {
        Ok(self.offered_now().await?.0)
    }

    /// The library and what narrowing keeps of it, once there is a library.
    async fn offered_now(&self) -> Result<(ToolLibrary, Option<Vec<String>>), DeskError> {
        let mut rx = self.offer.subscribe();
        let ready = rx.wait_for(|o| o.library.is_some()).await.map_err(|_| DeskError::Stopped)?;
        Ok((ready.library.clone().unwrap_or_default(), ready.narrowed.clone()))
    }
}

#[async_trait]
impl ToolDesk for SessionDesk {
    async fn offered(&self) -> Vec<Arc<ToolSpec>> {
        match self.offered_now().await {
            Ok((library, None)) => library.tools().to_vec(),
            Ok((library, Some(kept))) => kept.iter().filter_map(|n| library.get(n).cloned()).collect(),
            Err(_) => Vec::new(),
        }
    }

    async fn find(&self, name: &str) -> Result<Arc<ToolSpec>, DeskError> {
        let library = self.library().await?;
        library.get(name).cloned().ok_or_else(|| {
            let close = crate::text::spelling::close_names(name, library.names());
            let hint = if close.is_empty() { String::new() } else { format!("; did you mean {}?", close.join(", ")) };
            DeskError::UnknownTool { tool: name.to_string(), hint }
        })
    }

    async fn call(&self, tool: &str, args: Value) -> Result<ToolResult, DeskError> {
        let (reply, answer) = oneshot::channel();
        let call = BridgedToolCall { tool: tool.to_string(), args, reply };
        self.calls.send(Bridged::Tool(Box::new(call))).await.map_err(|_| DeskError::Stopped)?;
        match answer.await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(Refusal::Stopped | Refusal::Upstream { .. })) | Err(_) => Err(DeskError::Stopped),
        }
    }

    fn changes(&self) -> watch::Receiver<ToolOffer> {
        self.offer.subscribe()
    }
}
