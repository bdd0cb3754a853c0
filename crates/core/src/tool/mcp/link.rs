//! What Switchyard needs of an MCP connection, apart from the crate that
//! speaks the protocol (so the crate can move without the hub noticing).

use serde_json::{Map, Value};

/// A tool as the server lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct RemoteTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
}

/// A `tools/call` result, content blocks as the server sent them.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutput {
    pub is_error: bool,
    pub content: Vec<Value>,
    pub structured: Option<Value>,
}

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum LinkError {
    /// The server could not be started or would not initialize.
    #[error("{0}")]
    Start(String),
    /// The connection is gone (the process died, the transport closed or
    /// carried something that is not MCP): the server needs a restart.
    #[error("{0}")]
    Broken(String),
    /// The server answered with a JSON-RPC error; the connection is fine.
    #[error("{0}")]
    Refused(String),
}

#[async_trait::async_trait]
pub trait McpLink: Send + Sync {
    /// Every tool, all pages.
    async fn list_tools(&self) -> Result<Vec<RemoteTool>, LinkError>;
    async fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> Result<CallOutput, LinkError>;
    /// Resolves when the connection dies on its own (a server process
    /// exiting); never, for a transport that cannot tell.
    async fn closed(&self) -> String;
    /// Ends the session and kills what was started for it.
    async fn close(&self);
    /// Kills what was started for it, now, without waiting (shutdown).
    fn kill(&self);
    /// The server's process, when Switchyard started one.
    fn pid(&self) -> Option<u32>;
}
