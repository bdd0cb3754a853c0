//! What the gateways hand a session: an outside agent's model and tool
//! calls, each with where its answer goes, and the requests refused before
//! they reached it. The engine serves them concurrently, each call a lane
//! (`lanes.rs`); the gateways only know these types.

use serde_json::Value;
use tokio::sync::oneshot;

use crate::model::{ChatRequest, ChatResponse};
use crate::tool::ToolResult;

/// What the gateways hand the session.
pub enum Bridged {
    Call(Box<BridgedCall>),
    /// A tool call from the MCP gateway (`crate::mcp_gateway`).
    Tool(Box<BridgedToolCall>),
    /// A request refused before it reached the session (a wrong key, a
    /// body too large or not JSON, an unknown `previous_response_id`, a
    /// reply that cannot be given in the agent's API).
    Refused(GatewayRefusal),
}

/// A request the gateway refused, as the agent was told.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayRefusal {
    pub dialect: crate::model::wire::Dialect,
    pub status: u16,
    pub error: String,
}

/// One model call of a bridged agent, and where its answer goes. A caller
/// that hangs up drops the receiver: a call not yet sent is then not sent.
pub struct BridgedCall {
    /// In the `agent` role, with the agent's body in `wire`.
    pub request: ChatRequest,
    /// The name the agent gave the conversation (`X-Switchyard-Agent`).
    pub agent: Option<String>,
    pub reply: oneshot::Sender<Result<ChatResponse, Refusal>>,
}

/// One tool call of a bridged agent, and where its result goes: the
/// tool's own error is a result too (the agent's model reads it).
pub struct BridgedToolCall {
    pub tool: String,
    pub args: Value,
    pub reply: oneshot::Sender<Result<ToolResult, Refusal>>,
}

/// Why a bridged call got no reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Refusal {
    /// The upstream model failed (after its retries) or was made to fail;
    /// `status`: the HTTP status it answered with, when it answered.
    Upstream { status: Option<u16>, error: String },
    /// The session stopped or the run ended before the call was answered.
    Stopped,
}

/// What serving a bridged agent's calls came to, for its strategy.
#[derive(Debug)]
pub enum AgentNext {
    /// One of the agent's tool calls through the session ended: what the
    /// run's ledger (BTP's spending, ToolNet's trajectory) keeps of it.
    Tool { tool: String, args: Value, end: ToolEnd },
    /// Something else moved: a call arrived or ended, a control applied.
    Moved,
    /// The gateways are gone: no call can arrive any more.
    Closed,
}

/// How a bridged tool call ended.
#[derive(Debug)]
pub enum ToolEnd {
    Ran(ToolResult),
    /// BTP's plan or blacklist refused it; the agent was told this.
    Refused(String),
    /// Its caller hung up before it ended, or the run ended first.
    Abandoned,
}
