//! The MCP gateway: Switchyard's whole library served as one MCP server,
//! over stdio (`switchyard mcp serve`) or Streamable HTTP (`--listen`, and
//! `/mcp` on the model gateway), so an outside agent's tool calls pass
//! through the session like its model calls do (docs/src/agents.md).
//!
//! The protocol is `rmcp`'s, in `handler` and `http` only; what the server
//! offers and where a call goes is a [`ToolDesk`].

mod content;
mod desk;
mod handler;
mod http;

pub use desk::{DeskError, SessionDesk, ToolDesk};
pub use http::{HttpOptions, serve as serve_http, service as http_service};

use std::sync::Arc;

/// Serves `desk` over this process's stdin and stdout until the client
/// hangs up (stdin closes); the reason it ended, if not that.
pub async fn serve_stdio(desk: Arc<dyn ToolDesk>) -> Result<(), String> {
    handler::serve_stdio(desk).await
}
