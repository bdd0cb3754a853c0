//! What an MCP endpoint offers and where its calls go, apart from the
//! protocol: the tools a client may list, and a call that comes back with
//! the tool's result.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use crate::strategy::bridge::{Bridged, BridgedToolCall, Refusal};
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
    fn changes(&self) -> watch::Receiver<u64>;
}

/// The tools of a session, every call handed to its engine (the bridge
/// strategy serves it like any tool call of a run).
pub struct SessionDesk {
    calls: mpsc::Sender<Bridged>,
    /// The session's library, once the session is set up (the endpoint
    /// listens before: an agent may start at once).
    library: watch::Sender<Option<ToolLibrary>>,
    changed: watch::Sender<u64>,
}

impl std::fmt::Debug for SessionDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tools = self.library.borrow().as_ref().map(ToolLibrary::len);
        f.debug_struct("SessionDesk").field("tools", &tools).finish()
    }
}

impl SessionDesk {
    pub fn new(calls: mpsc::Sender<Bridged>) -> Self {
        SessionDesk { calls, library: watch::channel(None).0, changed: watch::channel(0).0 }
    }

    /// Offers `library`: clients listening are told the list changed.
    pub fn offer(&self, library: ToolLibrary) {
        self.library.send_replace(Some(library));
        self.changed.send_modify(|g| *g += 1);
    }

    async fn library(&self) -> Result<ToolLibrary, DeskError> {
        let mut rx = self.library.subscribe();
        let ready = rx.wait_for(Option::is_some).await.map_err(|_| DeskError::Stopped)?;
        Ok(ready.clone().unwrap_or_default())
    }
}

#[async_trait]
impl ToolDesk for SessionDesk {
    async fn offered(&self) -> Vec<Arc<ToolSpec>> {
        self.library().await.map(|l| l.tools().to_vec()).unwrap_or_default()
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

    fn changes(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }
}
