//! What the engine keeps of a bridged agent's calls between its events:
//! the lanes not yet ended, what each running call needs for its end, the
//! agent's own tool calls seen from the wire. Behaviour is in
//! `lanes.rs` and `tools.rs`; this holds no engine.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use futures::future::AbortHandle;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::calls::{BridgedCall, BridgedToolCall, Refusal};
use super::threads::Threads;
use crate::model::stream::Delta;
use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::tool::fault::FaultMode;
use crate::tool::{ToolResult, ToolSpec};

pub(in crate::engine) type ModelReplyTx = oneshot::Sender<Result<ChatResponse, Refusal>>;
pub(in crate::engine) type ToolReplyTx = oneshot::Sender<Result<ToolResult, Refusal>>;

/// The agent's calls not yet ended, and where their tasks report.
pub(in crate::engine) struct AgentLanes {
    pub(in crate::engine) open: Vec<OpenLane>,
    pub(in crate::engine) next_lane: u32,
    /// The agent's own tool calls, seen from the wire.
    pub(in crate::engine) own: OwnTools,
    /// The agent's conversations.
    pub(in crate::engine) threads: Threads,
    /// Tools of the library the agent's replies asked for, not yet called
    /// through its MCP endpoint, with the thread that asked: the call's thread.
    pub(in crate::engine) mcp_asked: Vec<(String, u32)>,
    pub(in crate::engine) done_tx: mpsc::UnboundedSender<Ended>,
    pub(in crate::engine) done_rx: mpsc::UnboundedReceiver<Ended>,
    pub(in crate::engine) tokens_tx: mpsc::UnboundedSender<(u64, Delta)>,
    pub(in crate::engine) tokens_rx: mpsc::UnboundedReceiver<(u64, Delta)>,
}

impl Default for AgentLanes {
    fn default() -> Self {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let (tokens_tx, tokens_rx) = mpsc::unbounded_channel();
        AgentLanes {
            open: Vec::new(),
            next_lane: 0,
            own: Default::default(),
            threads: Default::default(),
            mcp_asked: Vec::new(),
            done_tx,
            done_rx,
            tokens_tx,
            tokens_rx,
        }
    }
}

impl Drop for AgentLanes {
    /// The engine is gone: no call it started may run on unwatched.
    fn drop(&mut self) {
        for l in &self.open {
            if let Some(t) = &l.task {
                t.abort();
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::engine) enum Slot {
    Waiting,
    Held,
    /// The user let it through the closed gate (`n`).
    Stepped,
    Running,
}

pub(in crate::engine) struct OpenLane {
    pub(in crate::engine) lane: u32,
    pub(in crate::engine) call: u64,
    pub(in crate::engine) thread: Option<u32>,
    pub(in crate::engine) slot: Slot,
    /// Its decision step counted and its breakpoints checked (once).
    pub(in crate::engine) reached: bool,
    /// A fault the user asked for before it started.
    pub(in crate::engine) user_fault: Option<FaultMode>,
    /// Taken when it starts.
    pub(in crate::engine) work: Option<Work>,
    pub(in crate::engine) running: Option<Running>,
    /// Cuts the running call short; the task still reports, with its reply.
    pub(in crate::engine) abort: Option<AbortHandle>,
    /// Why it was cut short, when the user failed it or the run ended.
    pub(in crate::engine) cut: Option<Cut>,
    pub(in crate::engine) task: Option<tokio::task::AbortHandle>,
}

pub(in crate::engine) enum Work {
    Model(Box<BridgedCall>),
    Tool(Box<BridgedToolCall>),
}

/// What a running call keeps for its end.
pub(in crate::engine) enum Running {
    Model(Box<ModelGo>),
    Tool { tool: String, spec: Arc<ToolSpec>, args: Value, fault: Option<FaultMode> },
}

#[derive(Clone, Debug)]
pub(in crate::engine) enum Cut {
    /// `k` on a running lane: the agent reads it as a failed call.
    User,
    /// The run ended: the agent is told the session stopped.
    Ended(String),
}

/// A lane's task reporting back.
pub(in crate::engine) struct Ended {
    pub(in crate::engine) call: u64,
    pub(in crate::engine) what: EndedWhat,
}

pub(in crate::engine) enum EndedWhat {
    Model {
        result: Option<Result<ChatResponse, ModelError>>,
        latency_ms: u64,
        first_token_ms: Option<u64>,
        reply: ModelReplyTx,
    },
    Tool {
        result: Option<ToolResult>,
        latency_ms: u64,
        reply: ToolReplyTx,
    },
    /// Its caller hung up while it ran: it was cut off.
    HungUp {
        latency_ms: u64,
    },
}

/// A model call ready to go: the request as sent, the model answering it
/// (its configured name) and the fault drawn for it.
pub(in crate::engine) struct ModelGo {
    pub(in crate::engine) req: ChatRequest,
    pub(in crate::engine) slot: crate::engine::models::ModelSlot,
    pub(in crate::engine) model: String,
    pub(in crate::engine) fault: Option<crate::model::fault::ModelFaultMode>,
}

/// The agent's own tool calls the session has seen asked for and not yet
/// answered, by id; and the ids already answered (every later request
/// carries them again).
#[derive(Default)]
pub(in crate::engine) struct OwnTools {
    pub(in crate::engine) asked: HashMap<String, OwnCall>,
    pub(in crate::engine) answered: HashSet<String>,
    /// Calls ended and not yet handed to the strategy's ledger (BTP's
    /// spending, ToolNet's trajectory): tool, arguments, result.
    pub(in crate::engine) ended: VecDeque<(String, Value, ToolResult)>,
    /// The agent's own tools over the session (offered its model or
    /// called, not the library's): ToolNet's graph takes them as nodes
    /// when it learns.
    pub(in crate::engine) seen: HashSet<String>,
}

pub(in crate::engine) struct OwnCall {
    pub(in crate::engine) call: u64,
    pub(in crate::engine) lane: u32,
    pub(in crate::engine) tool: String,
    pub(in crate::engine) args: Value,
    /// When the reply asking for it was given, on the engine's clock.
    pub(in crate::engine) t0: u64,
    /// `k` on its lane: the agent's result is replaced by this fault's.
    pub(in crate::engine) user_fault: Option<FaultMode>,
    /// The thread whose reply asked for it.
    pub(in crate::engine) thread: Option<u32>,
    /// A conversation that began while it ran was taken for its sub-agent.
    pub(in crate::engine) launched: bool,
}

impl OwnTools {
    pub(in crate::engine) fn by_lane(&mut self, lane: u32) -> Option<&mut OwnCall> {
        self.asked.values_mut().find(|c| c.lane == lane)
    }
}
