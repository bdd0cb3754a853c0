//! Everything that happens in a session, as data (docs/src/how-a-run-works.md).
//! The trace is these events, one JSON object a line; any view is a fold over
//! them. The file is long because the protocol is one enum, kept whole in one
//! place.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

// Re-exported: a LaneChanged event carries one.
pub use super::control::LaneAction;
use super::debug::{ApprovalPolicy, Condition, ReviewKind};
use super::params::{ParamChange, Params};
pub use crate::budget::btp::BudgetRow;
use crate::graph::{GraphUpdate, ToolGraph};
use crate::model::fault::{ModelFault, ModelFaultMode};
use crate::model::price::Price;
use crate::model::wire::{WireReply, WireRequest};
use crate::model::{Message, ModelInfo, Role, ToolCallRequest, Usage};
use crate::tool::fault::{Fault, FaultMode};
use crate::tool::{CallSource, ToolError};

/// Bumped whenever an event's shape changes incompatibly.
/// Version 3: `SessionStarted.task_list` is one round of a task list that
/// wraps (`--count` past the file's length), `tasks` positions in all.
pub const SCHEMA_VERSION: u32 = 3;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Schema version.
    pub v: u32,
    /// The run (one task) this belongs to, counted from 1; 0 for the session itself.
    pub run: u32,
    /// The decision step within the run, counted from 1; 0 before the first.
    pub step: u32,
    /// Milliseconds on the engine's clock.
    pub t: u64,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StrategyKind {
    React,
    Toolnet,
    /// Planner, concurrent workers, solver (docs/src/papers/rewoo.md).
    Rewoo,
    /// The planner writes the tool chain as one program (docs/src/papers/atc.md).
    Atc,
    /// An outside agent, its model calls bridged through the gateway
    /// (docs/src/agents.md).
    Agent,
}

impl StrategyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyKind::Agent => "agent",
            StrategyKind::React => "react",
            StrategyKind::Toolnet => "toolnet",
            StrategyKind::Rewoo => "rewoo",
            StrategyKind::Atc => "atc",
        }
    }
}

impl StrategyKind {
    /// The roles a run of this strategy calls (the judge too when BTP asks it).
    pub fn roles(self) -> &'static [Role] {
        match self {
            StrategyKind::React => &[Role::Actor],
            StrategyKind::Toolnet => &[Role::Actor, Role::Evaluator],
            StrategyKind::Rewoo => &[Role::Planner, Role::Solver, Role::Classifier],
            StrategyKind::Atc => &[Role::Planner],
            StrategyKind::Agent => &[Role::Agent],
        }
    }
}

impl std::str::FromStr for StrategyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "react" => Ok(StrategyKind::React),
            "toolnet" => Ok(StrategyKind::Toolnet),
            "rewoo" => Ok(StrategyKind::Rewoo),
            "atc" => Ok(StrategyKind::Atc),
            other => Err(format!("unknown strategy '{other}' (expected react, toolnet, rewoo or atc)")),
        }
    }
}

impl std::fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleModel {
    pub role: Role,
    pub model: ModelInfo,
    pub price: Price,
}

/// Kept with the library, which builds the briefs once however many
/// sessions it serves.
pub use crate::tool::ToolBrief;

/// The whole graph at one moment, so a trace is readable on its own. Each
/// node is named once, in `nodes`; rows name nodes by their place there, and
/// a row whose edges weigh alike gives the weight once: a library's tools
/// each bring a row of their own and an edge from `start`, so at 16,000
/// tools names and weights repeated per edge would make this the bulk of
/// the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphSnapshot {
    pub iteration: u32,
    /// The graph's own names, shared rather than copied (16,000 of them).
    pub nodes: Vec<Arc<str>>,
    /// Each node's out-edges, a row per node that has any.
    pub rows: Vec<SnapshotRow>,
    /// Nodes with a non-zero score.
    pub scores: Vec<(String, f64)>,
}

/// Numbers a snapshot's nodes in the order they first appear, each given
/// by a small key that names one node.
struct Numbering {
    nodes: Vec<Arc<str>>,
    /// Per key, its node's place in `nodes` (u32::MAX: none yet).
    place: Vec<u32>,
}

impl Numbering {
    fn with_capacity(keys: usize) -> Self {
        Numbering { nodes: Vec::with_capacity(keys), place: vec![u32::MAX; keys] }
    }

    /// The node's number; `name` is asked for when the node is new.
    fn number(&mut self, key: usize, name: impl FnOnce() -> Arc<str>) -> u32 {
        if self.place.len() <= key {
            self.place.resize(key + 1, u32::MAX);
        }
        if self.place[key] == u32::MAX {
            self.nodes.push(name());
            self.place[key] = self.nodes.len() as u32 - 1;
        }
        self.place[key]
    }
}

/// One node's out-edges: (from, targets, their weights), nodes by their
/// place in [`GraphSnapshot::nodes`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotRow(pub u32, pub Vec<u32>, pub RowWeights);

/// A row's weights, in the order of its targets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RowWeights {
    /// Every edge of the row weighs this.
    Same(f64),
    Each(Vec<f64>),
}

impl GraphSnapshot {
    /// From edges (from, to, weight); nodes are numbered, and rows ordered,
    /// as they first appear.
    pub fn new(
        iteration: u32,
        edges: impl IntoIterator<Item = (String, String, f64)>,
        scores: Vec<(String, f64)>,
    ) -> Self {
        let edges: Vec<(String, String, f64)> = edges.into_iter().collect();
        let mut keys: rustc_hash::FxHashMap<&str, usize> = Default::default();
        let mut keyed = Vec::with_capacity(edges.len());
        fn key<'s>(keys: &mut rustc_hash::FxHashMap<&'s str, usize>, name: &'s str) -> (usize, &'s str) {
            let next = keys.len();
            (*keys.entry(name).or_insert(next), name)
        }
        for (f, t, w) in &edges {
            keyed.push((key(&mut keys, f), key(&mut keys, t), *w));
        }
        Self::from_keyed_edges(iteration, keyed, scores)
    }

    /// The whole of `g`: its rows, `start`'s first, each in the order of
    /// [`ToolGraph::out_edges`], and the nodes with a non-zero score; as
    /// [`GraphSnapshot::new`] numbers and orders them. Built row by row, as
    /// the graph gives them: at 16,000 tools, gathering the 48,000 edges
    /// first and then sorting them into rows cost an allocation per row
    /// and a copy of every name.
    pub fn of(g: &ToolGraph) -> Self {
        let node_count = g.tool_count() + 2;
        let mut numbering = Numbering::with_capacity(node_count);
        let mut number = |key: usize, name: &Arc<str>| numbering.number(key, || name.clone());
        let mut rows = Vec::with_capacity(node_count);
        let mut scores = Vec::new();
        g.for_each_row(|(key, name), score, row| {
            if score != 0.0 {
                scores.push((name.to_string(), score));
            }
            let Some(&(_, _, first)) = row.first() else {
                return;
            };
            let from = number(key, name);
            let targets = row.iter().map(|&(key, name, _)| number(key, name)).collect();
            let weights = if row.iter().all(|e| e.2.to_bits() == first.to_bits()) {
                RowWeights::Same(first)
            } else {
                RowWeights::Each(row.iter().map(|e| e.2).collect())
            };
            rows.push(SnapshotRow(from, targets, weights));
        });
        GraphSnapshot { iteration: g.iteration(), nodes: numbering.nodes, rows, scores }
    }

    /// As [`GraphSnapshot::new`], from borrowed names, each with a key that
    /// names one node and is small.
    fn from_keyed_edges<'a>(
        iteration: u32,
        edges: impl IntoIterator<Item = ((usize, &'a str), (usize, &'a str), f64)>,
        scores: Vec<(String, f64)>,
    ) -> Self {
        let mut numbering = Numbering::with_capacity(0);
        // Per node number, its row's place in `rows` (usize::MAX: none yet).
        let mut row_of: Vec<usize> = Vec::new();
        let mut number = |(key, name): (usize, &'a str)| numbering.number(key, || name.into());
        let mut rows: Vec<(u32, Vec<u32>, Vec<f64>)> = Vec::new();
        for (from, to, w) in edges {
            let (from, to) = (number(from), number(to));
            if row_of.len() <= from as usize {
                row_of.resize(from as usize + 1, usize::MAX);
            }
            let row = &mut row_of[from as usize];
            if *row == usize::MAX {
                rows.push((from, Vec::new(), Vec::new()));
                *row = rows.len() - 1;
            }
            rows[*row].1.push(to);
            rows[*row].2.push(w);
        }
        let rows = rows
            .into_iter()
            .map(|(from, to, w)| {
                let weights = match w.split_first() {
                    Some((&first, rest)) if rest.iter().all(|x| x.to_bits() == first.to_bits()) => {
                        RowWeights::Same(first)
                    }
                    _ => RowWeights::Each(w),
                };
                SnapshotRow(from, to, weights)
            })
            .collect();
        GraphSnapshot { iteration, nodes: numbering.nodes, rows, scores }
    }

    /// Every edge as (from, to, weight), row by row; a place that names no
    /// node is skipped.
    pub fn edges(&self) -> impl Iterator<Item = (&str, &str, f64)> + '_ {
        self.named_rows().flat_map(|(from, row)| row.map(move |(to, w)| (from, to, w)))
    }

    /// Each row as (from, its (to, weight) in the row's order); a place
    /// that names no node is skipped.
    pub fn named_rows(&self) -> impl Iterator<Item = (&str, impl Iterator<Item = (&str, f64)> + '_)> + '_ {
        let name = |i: u32| self.nodes.get(i as usize).map(|n| &**n);
        self.rows.iter().filter_map(move |SnapshotRow(from, to, weights)| {
            let row = to.iter().enumerate().filter_map(move |(k, &t)| {
                let w = match weights {
                    RowWeights::Same(w) => *w,
                    RowWeights::Each(ws) => *ws.get(k)?,
                };
                Some((name(t)?, w))
            });
            Some((name(*from)?, row))
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskBrief {
    pub id: String,
    pub query: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Offered {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// The weight as the model saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefuseReason {
    /// The model named a tool that was not among the candidates.
    NotOffered,
    /// The model's reply could not be read as an action.
    Malformed,
    /// The tool's budget allowance is spent.
    Forbidden,
    /// The judge found the tool unhelpful in this task.
    Blacklisted,
    /// A plan step whose calls would overspend the budget (refused before it runs).
    OverBudget,
    /// The same call (tool and arguments) already answered in this run.
    Repeated,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok { value: Value },
    Err { error: ToolError },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RunOutcome {
    /// The model answered.
    Answered,
    /// The step limit was reached without an answer.
    MaxSteps,
    /// The user stopped the run.
    Stopped,
    /// A model call failed for good (after retries).
    Failed { error: String },
    /// The user restarted the task (it runs again as a new run).
    Restarted,
    /// The budget could not pay for the next model call.
    OutOfBudget,
    /// The planner's plan could not be read, even on the retry.
    BadPlan { error: String },
}

/// Where a tool's category came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabelSource {
    /// Fixed in the tool's manifest: it wins over any model.
    Manifest,
    /// The classifier model's answer in this session.
    Model,
    /// The classifier's answer cached for this library and model.
    Cache,
    /// Set by the user in the workbench.
    User,
    /// The classifier gave none (or an unknown one): the first category.
    Default,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolLabel {
    pub tool: String,
    pub category: String,
    pub source: LabelSource,
}

/// One call of a plan step, as the worker is about to make it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LanePlan {
    /// Counted from 0 within the step.
    pub lane: u32,
    /// The call id its ToolCall/ToolResult events will carry.
    pub call: u64,
    pub tool: String,
    /// The input as the planner wrote it (references not substituted).
    pub input: String,
    /// The arguments after substituting the evidence.
    pub args: Value,
}

// ReWOO's plan, as the planner wrote it (`Rewoo*`: BTP's plan is `Budget*`).

/// One tool call of a step; `input` is the text between the brackets, with
/// `#E` references not yet substituted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewooCall {
    pub tool: String,
    pub input: String,
}

/// One `#EN = ...` line and the `Plan:` thought before it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewooStep {
    /// The N of `#EN`.
    pub evidence: u32,
    pub thought: String,
    /// Several calls (tools of one category) run concurrently; all their
    /// results together are the step's evidence.
    pub calls: Vec<RewooCall>,
    /// The `#E` numbers cited in the inputs, sorted and deduplicated.
    pub depends_on: Vec<u32>,
}

/// Where a forked trace comes from: the parent trace and how many of its
/// events were replayed. A fork of a fork names its own parent, whose trace
/// names its own: the chain is traceable file by file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ForkOrigin {
    pub parent: String,
    /// The parent's events `[0, at)` were replayed; the fork point is before
    /// its event `at` (counted from 0), i.e. after its `at`-th event.
    pub at: u32,
    /// The parent was suspended (or killed) there and this session resumes
    /// it, as it was, rather than branching off.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resumed: bool,
}

/// What the user put in place of the recorded answer at the fork point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "edit", rename_all = "snake_case")]
pub enum ForkEdit {
    /// The model reply of this call, replaced by `text`.
    Reply { call: u64, before: String, text: String },
    /// The tool result of this call, replaced by `value`.
    Result { call: u64, tool: String, before: Value, value: Value },
}

/// A reply the server cut at its token cap, and the cap it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capped {
    /// The request's `max_tokens`; None when the request sent none (the
    /// model's default applied).
    pub max_tokens: Option<u32>,
}

/// How a bridged agent's thread began.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ThreadHow {
    /// A conversation of its own, extending none the session has seen.
    Conversation,
    /// It extends what its parent had already carried on from: the
    /// conversation forked (a retry with another reply, a branch).
    Fork,
    /// Its parent's history under other instructions: the parent's agent
    /// handed the conversation off (the Agents SDK's `transfer_to_…`).
    Handoff,
    /// It began while its parent waited on the agent's own tool `tool`: a
    /// sub-agent that tool runs (an agent used as a tool).
    SubAgent { tool: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum EventKind {
    SessionStarted {
        schema: u32,
        strategy: StrategyKind,
        seed: u64,
        params: Params,
        models: Vec<RoleModel>,
        /// Shared with the session state's fold: at 16,000 tools a copy of
        /// the briefs was a good part of folding a session's first event.
        tools: std::sync::Arc<[ToolBrief]>,
        cost_unit: String,
        tasks: u32,
        /// The task list, so a view can offer to pick one: position i
        /// (from 0) runs `task_list[i % task_list.len()]`, as the list wraps
        /// when `tasks` is longer.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        task_list: Vec<TaskBrief>,
        /// Models a role can be switched to, by name.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        available_models: Vec<ModelInfo>,
        #[serde(default)]
        pace_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        graph: Option<GraphSnapshot>,
        /// How many past tool usages BTP's experience store held at the
        /// start, when BTP plans with a budget (the store only grows: a fork
        /// takes its first this many).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        experience: Option<u64>,
    },
    RunStarted {
        task_id: String,
        task: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gold: Option<String>,
        index: u32,
        total: u32,
    },
    /// The retriever's top tools for a query, each with the parts of its
    /// score, and where the scores came from (`bm25`, the embedder, heads).
    Retrieved {
        query: String,
        source: String,
        hits: Vec<crate::retrieve::Scored>,
    },
    /// CoTools' tool judge on the task: does it need a tool at all? When
    /// it says no, the run is offered no tool, only the answer.
    ToolJudged {
        judge: String,
        score: f32,
        needed: bool,
    },
    /// The dense part of retrieval failed; BM25 ranks alone from here on.
    RetrievalFallback {
        from: String,
        reason: String,
    },
    Candidates {
        /// The node the agent stands on (`start` or the last tool used).
        from: String,
        offered: Vec<Offered>,
    },
    ModelCall {
        call: u64,
        role: Role,
        model: String,
        simulated: bool,
        messages: Vec<Message>,
        /// A bridged agent's request as it sent it, in its dialect.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wire: Option<WireRequest>,
    },
    ModelReply {
        call: u64,
        role: Role,
        model: String,
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
        usage: Usage,
        cost: f64,
        latency_ms: u64,
        /// An injected fault this call met.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fault: Option<ModelFaultMode>,
        /// The upstream's reply body a bridged agent was given as it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wire: Option<WireReply>,
        /// A streamed reply: milliseconds from the call to its first token.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_token_ms: Option<u64>,
        /// The server cut the reply at its token cap; the cap asked for
        /// (the role's `[reply_tokens]`, or the agent's own), when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capped: Option<Capped>,
    },
    /// More of a reply as it streams in. Live only: never written to a
    /// trace, which keeps the whole reply ([`EventKind::is_live_only`]).
    ModelTokens {
        call: u64,
        text: String,
        /// The stream broke off and started again: the text so far is void.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        restart: bool,
    },
    /// The tools of a bridged agent's model request were narrowed before
    /// it went upstream (`narrow`): the tools its model saw, and the
    /// tools it did not (a call to one of those is still served).
    ToolsNarrowed {
        call: u64,
        mode: super::params::Narrowing,
        kept: Vec<String>,
        dropped: Vec<String>,
    },
    /// A bridged agent's call reached the session: its lane, until it
    /// ends (the agent's calls run concurrently, each behind its own gate).
    /// `name`: the model it asks for, or the tool.
    LaneOpened {
        lane: u32,
        call: u64,
        name: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        model: bool,
        /// The conversation of the agent's it belongs to, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thread: Option<u32>,
    },
    /// A bridged agent began a conversation the session had not seen: a
    /// thread, until the run ends. Its calls' `LaneOpened` name it.
    ThreadOpened {
        thread: u32,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent: Option<u32>,
        how: ThreadHow,
    },
    /// A bridged agent's call that nobody waits for any more: its caller
    /// hung up (before it was sent, it never was; while it ran, it was cut
    /// off), or its run ended before it could start.
    CallAbandoned {
        call: u64,
        lane: u32,
        why: String,
    },
    /// A bridged agent's request brought back a tool result whose id no
    /// reply of this session asked for (a conversation begun elsewhere, a
    /// thread that forked, a bug of the agent's): recorded, not a call.
    /// `tool`: what the request's own history names it, if it does.
    ToolResultUnmatched {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
    },
    /// A span of an outside agent's OpenTelemetry export that is neither a
    /// model call nor a tool call (an agent's turn, a handoff, a request of
    /// its own, a span without GenAI attributes): kept as it came, so
    /// nothing received goes unseen. `ms`: how long it lasted.
    SpanReceived {
        name: String,
        ms: u64,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        attrs: BTreeMap<String, Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// Spans received that wait for the rest of their trace (an OTLP
    /// receiver writes a trace's runs when its root span comes): shown as
    /// it changes, so a watcher sees an agent at work; not recorded.
    SpansWaiting {
        spans: u64,
        traces: u64,
    },
    /// The gateway refused a bridged agent's request before it reached
    /// the session: what the agent was told.
    GatewayRefused {
        dialect: crate::model::wire::Dialect,
        status: u16,
        error: String,
    },
    ModelFailed {
        call: u64,
        role: Role,
        model: String,
        error: String,
        latency_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fault: Option<ModelFaultMode>,
    },
    ToolCall {
        call: u64,
        tool: String,
        args: Value,
        /// The lane of a concurrent plan step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lane: Option<u32>,
    },
    ToolResult {
        call: u64,
        tool: String,
        #[serde(flatten)]
        outcome: ToolOutcome,
        latency_ms: u64,
        cost: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fault: Option<FaultMode>,
        /// The result was replaced by null before it reached a model.
        #[serde(default)]
        filtered: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lane: Option<u32>,
        /// Answered by a cassette or a synthesizer, not by the tool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<CallSource>,
    },
    Refused {
        tool: String,
        reason: RefuseReason,
        detail: String,
    },
    FaultInjected {
        tool: String,
        fault: Fault,
    },
    FaultCleared {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
    },
    ScoreEdited {
        tool: String,
        score: f64,
        update: GraphUpdate,
    },
    ParamChanged {
        change: ParamChange,
        /// Why a change was not applied (invalid value), if it was not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rejected: Option<String>,
    },
    Evaluated {
        scores: BTreeMap<String, i32>,
    },
    /// An MCP server's state: running at the start, restarting after it
    /// died or hung, down when the restarts ran out.
    ServerState {
        server: String,
        state: crate::tool::mcp::ServerState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    GraphUpdated {
        update: GraphUpdate,
    },
    /// BTP's plan for this run (Algorithm 1).
    PlanMade {
        budget: f64,
        /// c_s: the estimated cost of the prompts and the plan itself.
        fixed_cost: f64,
        /// R = B − c_s
        remaining: f64,
        lambda: f64,
        tau: f64,
        rows: Vec<BudgetRow>,
        planned_cost: f64,
        planned_calls: u32,
    },
    /// Spending against the budget after a call.
    BudgetSpent {
        tool: String,
        amount: f64,
        spent: f64,
        left: f64,
        /// Planned calls of this tool still allowed.
        allowance: u32,
    },
    /// The judge found the tool's result unhelpful: no more calls this task.
    Blacklisted {
        tool: String,
        reason: String,
    },
    ModelSwitched {
        role: Role,
        model: ModelInfo,
        price: Price,
    },
    TaskEdited {
        index: u32,
        text: String,
    },
    TaskPicked {
        index: u32,
    },
    PaceChanged {
        ms: u64,
    },
    /// A viewer from another process came, went or sent a control (the
    /// control's own event follows).
    Viewer {
        viewer: String,
        action: super::control::ViewerAction,
    },
    /// A control that could not be applied, and why.
    ControlRejected {
        control: String,
        why: String,
    },
    /// The tool classifier's labels (rewoo), for the whole library.
    ToolsClassified {
        categories: Vec<String>,
        labels: Vec<ToolLabel>,
        /// The classifier model, when one was asked or its answer cached.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    CategoryEdited {
        tool: String,
        category: String,
    },
    /// The planner's plan, parsed.
    PlanWritten {
        attempt: u32,
        steps: Vec<RewooStep>,
    },
    /// The planner's reply could not be read as a plan; `last` = no retry is left.
    PlanRejected {
        attempt: u32,
        error: String,
        last: bool,
    },
    /// A plan step begins: its calls, each a lane run concurrently.
    StepStarted {
        evidence: u32,
        thought: String,
        lanes: Vec<LanePlan>,
    },
    /// A user's action on one lane of the running step took effect.
    LaneChanged {
        lane: u32,
        action: LaneAction,
    },
    /// All lanes of a step ended.
    StepFinished {
        evidence: u32,
        /// What the solver will see per lane: the result, or None (null).
        results: Vec<Option<Value>>,
        /// BPE tokens the null filtering kept from the solver.
        tokens_saved: u64,
    },
    /// ATC: the program the planner wrote (round 0), or its rewrite after a
    /// failure, by the model or by the user (fix and continue).
    ProgramWritten {
        round: u32,
        program: String,
        /// A unified diff against the program before it (empty at round 0).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        diff: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        by_user: bool,
    },
    /// A running program is about to call a tool, from this line.
    ProgramAt {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        tool: String,
    },
    /// What a program printed.
    ProgramPrinted {
        text: String,
    },
    /// A program failed: where, why, and the tool it is attributed to.
    /// `last` = no reflection round is left.
    ProgramFailed {
        round: u32,
        kind: crate::program::sandbox::FailKind,
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        line: Option<u32>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        snippet: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        last: bool,
    },
    /// A program returned: its value is the answer.
    ProgramReturned {
        round: u32,
        value: Value,
    },
    /// One probe of a tool without a documented response (black-box
    /// probing): the question and program the model wrote, what the tool
    /// answered, and the schema drawn from it; `helpers` are the probed
    /// tools a chain probe could call first.
    Probed {
        tool: String,
        round: u32,
        sample: u32,
        question: String,
        program: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        helpers: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schema: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A tool's probed protocol was saved (or could not be probed: no schema).
    ProtocolSaved {
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        schema: Option<Value>,
        samples: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// A forked session's prefix was replayed from its parent trace; from
    /// here on it runs live, with the user's replacement answer if any.
    Forked {
        #[serde(flatten)]
        origin: ForkOrigin,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edit: Option<ForkEdit>,
    },
    /// Which calls wait for the user changed (the config, `--approve`, `a`).
    ApprovalSet {
        policy: ApprovalPolicy,
    },
    /// A tool call waits for the user: approve it, edit its arguments
    /// (checked against `parameters`, the tool's schema) or reject it.
    ApprovalRequested {
        call: u64,
        tool: String,
        args: Value,
        parameters: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lane: Option<u32>,
    },
    /// A tool's result waits for the user before a model sees it.
    ResultReview {
        call: u64,
        tool: String,
        result: ToolOutcome,
    },
    /// A model's reply waits for the user before it is acted on.
    ReplyReview {
        call: u64,
        role: Role,
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
    },
    /// What waited went on unchanged; `auto`: nobody was left to answer.
    ReviewPassed {
        call: u64,
        what: ReviewKind,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        auto: bool,
    },
    /// The user changed a call's arguments before it ran.
    CallEdited {
        call: u64,
        tool: String,
        before: Value,
        after: Value,
    },
    /// The user rejected a call: it did not run, and the model is told `note`.
    CallRejected {
        call: u64,
        tool: String,
        args: Value,
        note: String,
    },
    /// The user changed a tool's result before a model saw it.
    ResultEdited {
        call: u64,
        tool: String,
        before: ToolOutcome,
        after: Value,
    },
    /// The user changed a model's reply before it was acted on.
    ReplyEdited {
        call: u64,
        role: Role,
        before: String,
        after: String,
    },
    /// A breakpoint was set, or enabled or disabled.
    BreakpointSet {
        id: u32,
        condition: Condition,
        enabled: bool,
    },
    BreakpointCleared {
        id: u32,
    },
    /// A breakpoint's condition held: the run pauses.
    BreakpointHit {
        id: u32,
        condition: Condition,
        detail: String,
    },
    /// A fault injected into the model calls of a role, or of a model by name.
    ModelFaultInjected {
        target: String,
        fault: ModelFault,
    },
    ModelFaultCleared {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<String>,
    },
    Paused,
    Resumed,
    Stepped,
    /// A bridged agent's process started (`--agent -- CMD`).
    AgentStarted {
        command: String,
        pid: u32,
        /// The command as given, `{task}` unfilled: what a fork starts again.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        argv: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer_file: Option<std::path::PathBuf>,
    },
    /// The agent's process ended: its exit code (none when a signal ended
    /// it, or when it never started: then `error` says why) and the last
    /// lines it wrote to stderr.
    AgentExited {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        stderr_tail: Vec<String>,
    },
    RunFinished {
        #[serde(flatten)]
        outcome: RunOutcome,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<String>,
        /// Against the gold answer, when the task has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        success: Option<bool>,
        cost: f64,
        usage: Usage,
        steps: u32,
        tool_calls: u32,
        /// The run against its task's expectations (`expect`), when it has any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expect: Option<crate::task::ExpectVerdict>,
    },
    SessionFinished {
        runs: u32,
        stopped: bool,
    },
    /// The user suspended the session here (`q` then `s`, `ctl suspend`,
    /// SIGTERM): the process ends, and `switchyard resume` takes it up
    /// again from the events before this one. Nothing follows it.
    Suspended,
}

impl EventKind {
    /// Shown as it happens, not recorded: a trace, a fork and a replay
    /// never see it.
    pub fn is_live_only(&self) -> bool {
        matches!(self, EventKind::ModelTokens { .. } | EventKind::SpansWaiting { .. })
    }

    pub fn name(&self) -> &'static str {
        match self {
            EventKind::ModelTokens { .. } => "ModelTokens",
            EventKind::GatewayRefused { .. } => "GatewayRefused",
            EventKind::LaneOpened { .. } => "LaneOpened",
            EventKind::ThreadOpened { .. } => "ThreadOpened",
            EventKind::ToolResultUnmatched { .. } => "ToolResultUnmatched",
            EventKind::SpanReceived { .. } => "SpanReceived",
            EventKind::SpansWaiting { .. } => "SpansWaiting",
            EventKind::CallAbandoned { .. } => "CallAbandoned",
            EventKind::ToolsNarrowed { .. } => "ToolsNarrowed",
            EventKind::SessionStarted { .. } => "SessionStarted",
            EventKind::RunStarted { .. } => "RunStarted",
            EventKind::Retrieved { .. } => "Retrieved",
            EventKind::RetrievalFallback { .. } => "RetrievalFallback",
            EventKind::ToolJudged { .. } => "ToolJudged",
            EventKind::Candidates { .. } => "Candidates",
            EventKind::ModelCall { .. } => "ModelCall",
            EventKind::AgentStarted { .. } => "AgentStarted",
            EventKind::AgentExited { .. } => "AgentExited",
            EventKind::ModelReply { .. } => "ModelReply",
            EventKind::ModelFailed { .. } => "ModelFailed",
            EventKind::ToolCall { .. } => "ToolCall",
            EventKind::ToolResult { .. } => "ToolResult",
            EventKind::Refused { .. } => "Refused",
            EventKind::FaultInjected { .. } => "FaultInjected",
            EventKind::FaultCleared { .. } => "FaultCleared",
            EventKind::ScoreEdited { .. } => "ScoreEdited",
            EventKind::ParamChanged { .. } => "ParamChanged",
            EventKind::Evaluated { .. } => "Evaluated",
            EventKind::GraphUpdated { .. } => "GraphUpdated",
            EventKind::ServerState { .. } => "ServerState",
            EventKind::PlanMade { .. } => "PlanMade",
            EventKind::BudgetSpent { .. } => "BudgetSpent",
            EventKind::Blacklisted { .. } => "Blacklisted",
            EventKind::ModelSwitched { .. } => "ModelSwitched",
            EventKind::TaskEdited { .. } => "TaskEdited",
            EventKind::TaskPicked { .. } => "TaskPicked",
            EventKind::PaceChanged { .. } => "PaceChanged",
            EventKind::ControlRejected { .. } => "ControlRejected",
            EventKind::Viewer { .. } => "Viewer",
            EventKind::ToolsClassified { .. } => "ToolsClassified",
            EventKind::CategoryEdited { .. } => "CategoryEdited",
            EventKind::PlanWritten { .. } => "PlanWritten",
            EventKind::PlanRejected { .. } => "PlanRejected",
            EventKind::StepStarted { .. } => "StepStarted",
            EventKind::LaneChanged { .. } => "LaneChanged",
            EventKind::StepFinished { .. } => "StepFinished",
            EventKind::ProgramWritten { .. } => "ProgramWritten",
            EventKind::ProgramAt { .. } => "ProgramAt",
            EventKind::ProgramPrinted { .. } => "ProgramPrinted",
            EventKind::ProgramFailed { .. } => "ProgramFailed",
            EventKind::ProgramReturned { .. } => "ProgramReturned",
            EventKind::Probed { .. } => "Probed",
            EventKind::ProtocolSaved { .. } => "ProtocolSaved",
            EventKind::Forked { .. } => "Forked",
            EventKind::ApprovalSet { .. } => "ApprovalSet",
            EventKind::ApprovalRequested { .. } => "ApprovalRequested",
            EventKind::ResultReview { .. } => "ResultReview",
            EventKind::ReplyReview { .. } => "ReplyReview",
            EventKind::ReviewPassed { .. } => "ReviewPassed",
            EventKind::CallEdited { .. } => "CallEdited",
            EventKind::CallRejected { .. } => "CallRejected",
            EventKind::ResultEdited { .. } => "ResultEdited",
            EventKind::ReplyEdited { .. } => "ReplyEdited",
            EventKind::BreakpointSet { .. } => "BreakpointSet",
            EventKind::BreakpointCleared { .. } => "BreakpointCleared",
            EventKind::BreakpointHit { .. } => "BreakpointHit",
            EventKind::ModelFaultInjected { .. } => "ModelFaultInjected",
            EventKind::ModelFaultCleared { .. } => "ModelFaultCleared",
            EventKind::Paused => "Paused",
            EventKind::Resumed => "Resumed",
            EventKind::Stepped => "Stepped",
            EventKind::RunFinished { .. } => "RunFinished",
            EventKind::SessionFinished { .. } => "SessionFinished",
            EventKind::Suspended => "Suspended",
        }
    }
}
