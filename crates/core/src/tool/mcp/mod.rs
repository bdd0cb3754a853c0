//! MCP servers as tool sources: `[[mcp]]` entries, the connection behind
//! our own trait (`link`, spoken with `rmcp`, `oauth` for servers that want
//! an authorized user), the hub that starts, calls, restarts and stops the
//! servers, and their tools as library tools.

mod capped;
pub mod child;
mod config;
mod hub;
mod link;
pub mod oauth;
mod rmcp_link;
mod tools;

pub use config::{McpServerConfig, ToolOverride, Transport};
pub use hub::{Listener, McpError, McpHub, ServerEvent, ServerState};
pub use link::{CallOutput, RemoteTool};
pub use rmcp_link::{call_output, remote_tool};
pub use tools::{error_text, observation, source_of, specs};
