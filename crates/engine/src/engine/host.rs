//! What a strategy is, and what the engine offers it. A strategy writes only
//! its own loop; every model and tool call, every event, BTP's admission and
//! spending, the gate and the controls are the engine's (the conductor's).
//! A new strategy implements [`Strategy`] against [`Host`]; nothing in the
//! engine changes (see `crates/engine/src/strategy/react.rs` for the smallest one).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;

use super::agent::calls::{AgentNext, Bridged};
use super::event::{EventKind, LabelSource, LanePlan, StrategyKind};
use super::models::Models;
use super::params::Params;
use crate::budget::btp::RunBudget;
use crate::budget::experience::Experience;
use crate::graph::ToolGraph;
use crate::model::{ChatRequest, ChatResponse, Role};
use crate::task::Task;
use crate::tool::{ToolError, ToolLibrary, ToolResult};

/// Why a strategy's loop stopped before it had an answer.
#[derive(Debug)]
pub enum Halt {
    /// The user stopped the session.
    Stopped,
    /// The user restarted (or edited) the task.
    Restarted,
    OutOfBudget,
    ModelFailed(String),
    /// rewoo: the planner's reply could not be read as a plan, twice.
    BadPlan(String),
    Engine(super::EngineError),
}

impl From<super::EngineError> for Halt {
    fn from(e: super::EngineError) -> Self {
        Halt::Engine(e)
    }
}

/// BTP's cost model of a strategy (BTP §2.1): what one tool call costs in
/// model time besides the tool, the fixed cost c_s, and what must be kept
/// back for a model call still to come after the last tool.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CostShape {
    pub per_call: f64,
    pub fixed: f64,
    pub reserve: f64,
}

/// Tool labels (rewoo's categories): tool → (category, where it came from).
pub type Labels = BTreeMap<String, (String, LabelSource)>;

/// One call of a concurrent step, as the strategy asks for it.
#[derive(Clone, Debug)]
pub struct LaneRequest {
    pub tool: String,
    /// The call as the strategy's plan wrote it (before substitution).
    pub input: String,
    /// The arguments shown for the call.
    pub args: Value,
    /// A call that cannot run (an unknown tool, arguments that cannot be
    /// built) fails at once with this error.
    pub invalid: Option<ToolError>,
}

/// One lane after its step: what was asked and what came back (None: the
/// call was refused and never ran).
#[derive(Clone, Debug)]
pub struct LaneDone {
    pub plan: LanePlan,
    pub result: Option<ToolResult>,
}

/// An agent loop. The engine calls `run` once per task, between its
/// `RunStarted` and `RunFinished`.
#[async_trait]
pub trait Strategy: Send {
    fn kind(&self) -> StrategyKind;

    /// ToolNet's strategies walk a graph: the engine then keeps one, lets
    /// the user edit its scores, and saves what it learns.
    fn walks_graph(&self) -> bool {
        false
    }

    /// BTP's costs for a run of this strategy over the plan's `candidates`.
    fn cost_shape(&self, host: &dyn Host, query: &str, candidates: &[String]) -> CostShape;

    /// Takes the task as far as it goes: its answer, None at the step limit,
    /// or why it stopped.
    async fn run(&mut self, host: &mut dyn Host, task: &Task) -> Result<Option<String>, Halt>;
}

/// The engine as a strategy sees it.
#[async_trait]
pub trait Host: Send {
    fn params(&self) -> &Params;
    fn library(&self) -> &ToolLibrary;
    fn models(&self) -> &Models;
    /// The top `k` tools for a query; fewer matches are filled up from the
    /// library in its order, so `k` is always what is offered.
    fn retrieve(&mut self, query: &str, k: usize) -> Result<Vec<String>, super::EngineError>;
    /// Retrieve again mid-run with the task and the evidence so far (the
    /// CoTools query is the reasoning so far, not the task alone).
    fn requery(&self) -> bool;
    /// CoTools' tool judge on the task, shown as an event: false when the
    /// judge says the task needs no tool; true without a judge.
    fn needs_tool(&mut self, query: &str) -> Result<bool, super::EngineError>;
    fn graph(&self) -> Option<&ToolGraph>;
    /// The current decision step of the run (0 before the first).
    fn step(&self) -> u32;
    /// Starts the next decision step; controls that arrived take effect here.
    fn next_step(&mut self) -> Result<(), super::EngineError>;
    /// The user stopped the session or restarted the task.
    fn cut_short(&self) -> bool;
    /// A tool a bridged agent's replies called as one of its own functions
    /// (not the library's): ToolNet's graph takes it as a node.
    fn agent_tool(&self, _name: &str) -> bool {
        false
    }
    /// The library's tools narrowing keeps for a bridged agent's tool list
    /// (`narrow`, `narrow_k`), best first; None when it keeps them all.
    fn narrowed_offer(&mut self) -> Result<Option<Vec<String>>, super::EngineError> {
        Ok(None)
    }
    /// atc: the user's edit of the running program (fix and continue), once.
    fn take_user_program(&mut self) -> Option<String> {
        None
    }
    /// atc: where probed tool protocols are kept, if anywhere.
    fn protocol_store(&self) -> Option<&crate::program::protocol::ProtocolStore> {
        None
    }
    fn emit(&mut self, kind: EventKind) -> Result<(), super::EngineError>;
    /// Waits for the user's next control and applies it; false once none
    /// can come. A loop that waits for something outside (a bridged
    /// agent's next call) waits for this too, so pausing and quitting work.
    async fn next_control(&mut self) -> Result<bool, super::EngineError>;

    /// One model call in its role, behind the gate; its tokens and cost are
    /// the run's.
    async fn model(&mut self, req: ChatRequest) -> Result<ChatResponse, Halt>;
    /// One tool call, behind the gate, with any injected fault.
    async fn tool(&mut self, name: &str, args: &Value) -> Result<ToolResult, Halt>;
    /// A step of calls that run concurrently, each behind its own gate,
    /// checked against the budget first (a step that would overspend it is
    /// refused whole); each call is spent as it ends.
    async fn step_calls(
        &mut self,
        label: u32,
        thought: String,
        lanes: Vec<LaneRequest>,
        budget: Option<&mut RunBudget>,
    ) -> Result<Vec<LaneDone>, Halt>;

    /// A bridged agent's calls, each a lane behind its own gate, served
    /// concurrently until something the strategy must hear of (see
    /// [`AgentNext`]); `incoming`: where the gateways hand them over (None
    /// once closed). A tool call BTP's `budget` forbids is refused. Drop
    /// it only when the agent is gone (an approval may be waiting in it).
    async fn serve_agent(
        &mut self,
        incoming: Option<&mut tokio::sync::mpsc::Receiver<Bridged>>,
        budget: Option<&mut RunBudget>,
    ) -> Result<AgentNext, Halt>;
    /// Ends the agent's open calls: running ones cut short and recorded
    /// with their results, waiting ones abandoned. What ended, in order.
    async fn end_agent_calls(&mut self, why: &str) -> Result<Vec<AgentNext>, Halt>;

    /// BTP's plan for the task (Algorithm 1), when a budget is set and BTP enforces.
    fn plan_budget(&mut self, query: &str, strategy: &dyn Strategy) -> Result<Option<RunBudget>, Halt>;
    /// Counts a finished call against the budget (Algorithm 2).
    fn spend(&mut self, budget: &mut RunBudget, tool: &str, notes: &mut Vec<String>) -> Result<(), super::EngineError>;
    /// What the run has cost so far.
    fn spent(&self) -> f64;
    /// BTP asks the `judge` model whether a result helped (else the rule).
    fn judge_by_model(&self) -> bool;
    /// Keeps the run's tool usages as experience for later plans.
    fn record_usages(&mut self, usages: &[Experience]) -> Result<(), super::EngineError>;

    /// ToolNet's dynamic construction: the graph learns from the scores.
    fn learn(&mut self, scores: &BTreeMap<String, i32>) -> Result<(), super::EngineError>;

    /// Tool labels (rewoo's categories), once given.
    fn labels(&self) -> &Labels;
    /// Sets the labels; `cache_key` (key, model) lets a user's later edit be
    /// cached under the same key.
    fn set_labels(&mut self, labels: Labels, cache_key: Option<(String, String)>);
    /// Where labels are cached between sessions, if anywhere.
    fn label_cache(&self) -> Option<&std::path::Path>;
    /// The name of the model playing `role`.
    fn model_name(&self, role: Role) -> String {
        self.models().get(role).model.info().name
    }
}
