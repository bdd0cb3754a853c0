//! The state of a session as a fold over its events:
//! `state = events.fold(SessionState::default(), apply)`. The live view, the
//! headless summary and a replayed trace all use this one function.
//!
//! `apply` is one match over every event kind, so what a single event does
//! to the state reads in one place; the pieces it folds into are the files
//! beside it: the runs with their transcripts and calls (`runs`), what was
//! spent (`account`), concurrent lanes (`lanes`), ToolNet's graph
//! (`graph_view`) and its charted history (`graph_history`), the
//! debugger's (`debug`), the model faults (`model_faults`), ATC's program
//! (`program`) and a bridged agent's threads (`threads`).

pub mod account;
pub mod debug;
pub mod graph_history;
pub mod graph_view;
pub mod lanes;
pub mod model_faults;
pub mod program;
pub mod runs;
pub mod threads;

use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};

use super::control::ViewerAction;
use super::event::{
    Event, EventKind, LabelSource, LaneAction, LanePlan, RefuseReason, RoleModel, StrategyKind, TaskBrief, ToolBrief,
    ToolOutcome,
};
use super::params::Params;
use crate::model::Role;
use crate::tool::fault::{Fault, FaultMode, FaultScope};
use crate::tool::mcp::ServerState;

// The pieces of the state, re-exported so a view names them all from here.
pub use self::account::{Account, ToolSpend};
pub use self::graph_view::GraphView;
pub use self::lanes::{LaneState, LaneView, RewooView, StepView};
pub use self::model_faults::ActiveModelFault;
pub use self::runs::{
    AgentExit, AgentView, Entry, FinishedCall, InFlight, Mode, PlanView, RunSummary, RunTotals, RunView,
};

#[derive(Clone, Debug, PartialEq)]
pub struct ActiveFault {
    pub tool: String,
    pub fault: Fault,
    /// Calls left for a counted fault.
    pub left: Option<u32>,
}

/// How many finished tool calls the state keeps for display.
const RECENT_CALLS: usize = 32;

/// How many finished runs the state keeps ([`SessionState::finished`]);
/// [`SessionState::totals`] counts them all.
pub const RUN_WINDOW: usize = 1000;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionState {
    pub events: u64,
    pub t: u64,
    pub strategy: Option<StrategyKind>,
    pub seed: u64,
    pub params: Params,
    pub cost_unit: String,
    pub models: Vec<RoleModel>,
    pub tools: std::sync::Arc<[ToolBrief]>,
    /// A bridged agent's own tools, as its replies showed them (not the
    /// library's): what a fault may name besides the library's tools.
    pub agent_tools: Vec<String>,
    pub total_tasks: u32,
    /// Received spans waiting for the rest of their trace, and in how many
    /// traces (`SpansWaiting`).
    pub spans_waiting: (u64, u64),
    pub task_list: Vec<TaskBrief>,
    /// Models a role can be switched to.
    pub available_models: Vec<crate::model::ModelInfo>,
    pub pace_ms: u64,
    /// The task the user picked to run next (counted from 1).
    pub picked: Option<u32>,
    /// The last control the engine refused, and why.
    pub last_rejection: Option<(String, String)>,
    pub mode: Mode,
    pub stopped: bool,
    pub step: u32,
    pub current: Option<RunView>,
    /// The latest finished runs, oldest first: at most [`RUN_WINDOW`].
    pub finished: Vec<RunSummary>,
    /// Totals over every finished run.
    pub totals: RunTotals,
    pub graph: Option<GraphView>,
    pub faults: Vec<ActiveFault>,
    pub model_faults: Vec<ActiveModelFault>,
    /// Model use per (role, model name).
    pub accounts: BTreeMap<(Role, String), Account>,
    pub tool_spend: BTreeMap<String, ToolSpend>,
    pub recent_calls: VecDeque<FinishedCall>,
    pub total_cost: f64,
    /// rewoo: the classifier's category list and every tool's label.
    pub categories: Vec<String>,
    pub labels: BTreeMap<String, (String, LabelSource)>,
    /// Each MCP server's last known state and why.
    pub servers: BTreeMap<String, (ServerState, Option<String>)>,
    /// The MCP server of each tool that comes from one.
    pub tool_servers: BTreeMap<String, String>,
    /// The retriever's latest ranking: where the candidates came from.
    pub retrieval: Option<RetrievalView>,
    /// The tool judge's verdict on the current task: judge, score, needed.
    pub judged: Option<(String, f32, bool)>,
    /// Set when dense retrieval failed and BM25 took over: from what, why.
    pub retrieval_fallback: Option<(String, String)>,
    /// atc: the session's probes, the most recent last.
    pub probes: Vec<self::program::ProbeView>,
    /// Where this session was forked from, once past its fork point.
    pub forked_from: Option<super::event::ForkOrigin>,
    /// Approvals and breakpoints.
    pub debug: self::debug::DebugView,
    /// [`SessionState::tool`]'s index of `tools`.
    pub tool_order: ToolOrder,
    /// Set by [`SessionState::without_graph`].
    graph_left_out: LeftOut,
    /// The bridged agent's thread of the event being folded, for its entries.
    entry_thread: Option<u32>,
}

/// Whether a fold leaves the graph's view out. Two folds compare by what
/// they hold: where one left a graph out, their `graph` fields differ.
#[derive(Clone, Copy, Debug, Default)]
struct LeftOut(bool);

impl PartialEq for LeftOut {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Places in a session's `tools`, by the tool's name: [`SessionState::tool`]
/// looks one up in a library of thousands without walking it. Built on the
/// first lookup, not by the fold: only the UI looks tools up, and sorting
/// 16,000 names was a fifth of the engine's step at that size, in a fold of
/// its own events that never asks.
#[derive(Clone, Debug, Default)]
pub struct ToolOrder(std::sync::OnceLock<Vec<u32>>);

/// The order is derived from `tools`, which the states compare anyway:
/// whether it has been built yet says nothing of the state.
impl PartialEq for ToolOrder {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// A ranking as the retrieval view shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RetrievalView {
    pub query: String,
    pub source: String,
    pub hits: Vec<crate::retrieve::Scored>,
}

impl SessionState {
    /// A fold that leaves the graph's view out (`graph` stays None): the
    /// engine's own, which holds the graph itself and summarises from the
    /// rest. At 16,000 tools the view (every edge by name, each score's
    /// rank) was a third of the engine's step, built again by every view
    /// that folds the same events.
    pub fn without_graph() -> Self {
        SessionState { graph_left_out: LeftOut(true), ..Default::default() }
    }

    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a Event>) -> Self {
        SessionState::default().fold(events)
    }

    /// This state with `events` folded in.
    pub fn fold<'a>(mut self, events: impl IntoIterator<Item = &'a Event>) -> Self {
        for e in events {
            self.apply(e);
        }
        self
    }

    /// The library's tool named `name` (the first, should two share it).
    pub fn tool(&self, name: &str) -> Option<&ToolBrief> {
        let tools = &self.tools;
        let order = self.tool_order.0.get_or_init(|| {
            let mut order: Vec<u32> = (0..tools.len() as u32).collect();
            // Ties broken as a stable sort would (the first of two tools
            // sharing a name is found); unstable is cheaper at 16,000 tools.
            order.sort_unstable_by(|&a, &b| tools[a as usize].name.cmp(&tools[b as usize].name).then(a.cmp(&b)));
            order
        });
        if order.len() != self.tools.len() {
            // Tools replaced by hand after the order was built: no order to
            // search.
            return self.tools.iter().find(|t| t.name == name);
        }
        let at = order.partition_point(|i| self.tools[*i as usize].name.as_str() < name);
        order.get(at).map(|i| &self.tools[*i as usize]).filter(|t| t.name == name)
    }

    pub fn apply(&mut self, ev: &Event) {
        // A reply's tokens are not one of the session's recorded events.
        if let EventKind::ModelTokens { call, text, restart } = &ev.kind {
            if let Some(r) = self.current.as_mut() {
                r.stream(*call, text, *restart);
            }
            return;
        }
        if let EventKind::SpansWaiting { spans, traces } = &ev.kind {
            self.spans_waiting = (*spans, *traces);
            return;
        }
        self.events += 1;
        self.t = ev.t;
        self.step = ev.step;
        if let Some(r) = self.current.as_mut() {
            self::program::apply(&mut r.program, &ev.kind);
            r.threads.apply(&ev.kind);
            self.entry_thread = r.threads.of_event(&ev.kind);
        }
        self::program::apply_probe(&mut self.probes, &ev.kind);
        if let Some(note) = self.debug.apply(&ev.kind) {
            self.push(Entry::Note(note));
        }
        match &ev.kind {
            EventKind::SessionStarted {
                strategy,
                seed,
                params,
                models,
                tools,
                cost_unit,
                tasks,
                task_list,
                available_models,
                pace_ms,
                graph,
                ..
            } => {
                self.task_list = task_list.clone();
                self.available_models = available_models.clone();
                self.pace_ms = *pace_ms;
                self.strategy = Some(*strategy);
                self.seed = *seed;
                self.params = params.clone();
                self.models = models.clone();
                self.tools = tools.clone();
                self.tool_order = ToolOrder::default();
                // The name is cloned only for a tool that has a server: cloned
                // first, it was 16,000 allocations and frees per session of
                // a library with none.
                self.tool_servers =
                    tools.iter().filter_map(|t| t.server.as_ref().map(|s| (t.name.clone(), s.clone()))).collect();
                self.cost_unit = cost_unit.clone();
                self.total_tasks = *tasks;
                self.graph = graph.as_ref().filter(|_| !self.graph_left_out.0).map(GraphView::from_snapshot);
                if self.mode == Mode::Idle {
                    self.mode = Mode::Running;
                }
            }
            EventKind::RunStarted { task_id, task, gold, index, total } => {
                // A session that cannot know its tasks ahead (spans
                // received from an agent elsewhere) learns them as they come.
                self.total_tasks = self.total_tasks.max(*total);
                if self.picked == Some(*index) {
                    self.picked = None;
                }
                // A new task's candidates have not been ranked yet.
                self.retrieval = None;
                self.judged = None;
                self.current = Some(RunView {
                    run: ev.run,
                    task_id: task_id.clone(),
                    task: task.clone(),
                    gold: gold.clone(),
                    index: *index,
                    from: crate::graph::START.to_string(),
                    ..Default::default()
                });
            }
            EventKind::Candidates { from, offered } => {
                if let Some(r) = self.current.as_mut() {
                    r.from = from.clone();
                    r.candidates = offered.clone();
                }
            }
            EventKind::ModelCall { call, role, model, messages, .. } => {
                if let Some(l) = self.current.as_mut().and_then(|r| r.lane_mut(*call)) {
                    l.state = LaneState::Running;
                    l.started = Some(ev.t);
                }
                self.push(Entry::Prompt { role: *role, model: model.clone(), messages: messages.clone() });
            }
            EventKind::LaneOpened { lane, call, name, model, .. } => {
                if !*model && self.tool(name).is_none() && !self.agent_tools.contains(name) {
                    self.agent_tools.push(name.clone());
                }
                if let Some(r) = self.current.as_mut() {
                    let wave = r.agent_lanes.get_or_insert_with(StepView::agent_wave);
                    // A call after every call before it ended starts a new wave.
                    if !wave.open() {
                        wave.lanes.clear();
                    }
                    let what = if *model { "model" } else { "tool" };
                    wave.lanes.push(lane_view(&LanePlan {
                        lane: *lane,
                        call: *call,
                        tool: name.clone(),
                        input: what.into(),
                        args: Value::Null,
                    }));
                }
            }
            EventKind::ThreadOpened { name, parent, how, .. } => {
                let parent = self
                    .current
                    .as_ref()
                    .and_then(|r| parent.and_then(|p| r.threads.list.get(p as usize)).map(|t| t.name.clone()));
                self.push(Entry::Note(format!("thread {name} began: {}", how.said(parent.as_deref()))));
            }
            EventKind::ToolResultUnmatched { id, tool } => {
                let named = tool.as_ref().map(|t| format!(" ({t})")).unwrap_or_default();
                self.push(Entry::Note(format!(
                    "the agent brought back a result for tool call {id}{named}, which no reply of this session asked for"
                )));
            }
            EventKind::SpanReceived { name, ms, error, .. } => {
                let failed = error.as_ref().map(|e| format!(", failed: {e}")).unwrap_or_default();
                self.push(Entry::Note(format!("span {name} ({ms} ms{failed})")));
            }
            EventKind::CallAbandoned { call, lane, why } => {
                if let Some(r) = self.current.as_mut() {
                    r.end_stream(*call);
                    if let Some(l) = r.lane_mut(*call) {
                        l.state = LaneState::Done { ok: false, filtered: false };
                        l.finished = Some(ev.t);
                        l.result = Some(Err(format!("abandoned: {why}")));
                    }
                }
                self.push(Entry::Note(format!("call {call} (lane {lane}) abandoned: {why}")));
            }
            EventKind::ModelTokens { .. } => {}
            EventKind::SpansWaiting { .. } => {}
            EventKind::ToolsNarrowed { mode, kept, dropped, .. } => {
                self.push(Entry::Note(format!(
                    "narrowed by {mode}: the model sees {} of {} tools ({}); dropped {}",
                    kept.len(),
                    kept.len() + dropped.len(),
                    kept.join(", "),
                    crate::text::ellipsis(&dropped.join(", "), 120)
                )));
            }
            EventKind::GatewayRefused { dialect, status, error } => {
                self.push(Entry::Note(format!(
                    "the gateway refused the agent's {dialect} request ({status}): {error}"
                )));
            }
            EventKind::ModelReply {
                call,
                role,
                model,
                text,
                tool_calls,
                usage,
                cost,
                latency_ms,
                first_token_ms,
                capped,
                ..
            } => {
                let a = self.accounts.entry((*role, model.clone())).or_default();
                if capped.is_some() {
                    a.capped += 1;
                }
                a.calls += 1;
                if let Some(first) = first_token_ms {
                    a.streamed += 1;
                    a.first_token_ms += first;
                    a.streaming_ms += latency_ms.saturating_sub(*first);
                    a.streamed_tokens += usage.completion_tokens;
                }
                a.usage += *usage;
                a.cost += cost;
                a.latency_ms += latency_ms;
                self.total_cost += cost;
                if let Some(r) = self.current.as_mut() {
                    r.cost += cost;
                    r.usage += *usage;
                    r.end_stream(*call);
                    if let Some(l) = r.lane_mut(*call) {
                        l.state = LaneState::Done { ok: true, filtered: false };
                        l.finished = Some(ev.t);
                        l.latency_ms = Some(*latency_ms);
                        let asked = tool_calls.iter().map(|c| format!("→ {}", c.name)).collect::<Vec<_>>().join(" ");
                        l.result = Some(Ok(Value::String(if text.is_empty() { asked } else { text.clone() })));
                    }
                }
                // The tool calls a reply asks for natively (an outside
                // agent's) are what it says.
                let mut shown = text.clone();
                for c in tool_calls {
                    if !shown.is_empty() {
                        shown.push('\n');
                    }
                    shown.push_str(&format!("→ {}({})", c.name, c.arguments));
                }
                self.push(Entry::Reply {
                    role: *role,
                    model: model.clone(),
                    text: shown,
                    usage: *usage,
                    cost: *cost,
                    latency_ms: *latency_ms,
                });
                if let Some(c) = capped {
                    let cap = c.max_tokens.map_or("the model's max_tokens".to_string(), |n| format!("{n} tokens"));
                    self.push(Entry::Note(format!(
                        "{role}'s reply was cut at its cap ({cap}, {} written): it may be incomplete",
                        usage.completion_tokens
                    )));
                }
            }
            EventKind::ModelFailed { call, role, model, error, latency_ms, .. } => {
                self.accounts.entry((*role, model.clone())).or_default().calls += 1;
                if let Some(r) = self.current.as_mut() {
                    r.end_stream(*call);
                    if let Some(l) = r.lane_mut(*call) {
                        l.state = LaneState::Done { ok: false, filtered: false };
                        l.finished = Some(ev.t);
                        l.latency_ms = Some(*latency_ms);
                        l.result = Some(Err(error.clone()));
                    }
                }
                self.push(Entry::ModelError { role: *role, model: model.clone(), error: error.clone() });
            }
            EventKind::ToolCall { call, tool, args, lane } => {
                if let Some(r) = self.current.as_mut() {
                    r.in_flight.push(InFlight { call: *call, tool: tool.clone(), args: args.clone(), started: ev.t });
                    r.path.push(tool.clone());
                    r.tool_calls += 1;
                    if let Some(l) = r.lane_mut(*call) {
                        l.state = LaneState::Running;
                        l.started = Some(ev.t);
                        l.args = args.clone();
                    }
                }
                self.push(Entry::Call { call: *call, tool: tool.clone(), args: args.clone(), lane: *lane });
            }
            EventKind::ToolResult { call, tool, outcome, latency_ms, cost, fault, filtered, lane, source } => {
                let ok = matches!(outcome, ToolOutcome::Ok { .. });
                let spend = self.tool_spend.entry(tool.clone()).or_default();
                spend.calls += 1;
                spend.cost += cost;
                if !ok {
                    spend.errors += 1;
                }
                self.total_cost += cost;
                // A fault the user gave a lane replaced the table's draw.
                let mut user = false;
                if let Some(r) = self.current.as_mut() {
                    r.in_flight.retain(|f| f.call != *call);
                    r.cost += cost;
                    if let Some(l) = r.lane_mut(*call) {
                        l.state = LaneState::Done { ok, filtered: *filtered };
                        l.finished = Some(ev.t);
                        l.latency_ms = Some(*latency_ms);
                        l.fault = *fault;
                        l.pending_fault = None;
                        user = l.user_fault;
                        l.source = *source;
                        l.result = Some(match outcome {
                            ToolOutcome::Ok { value } => Ok(value.clone()),
                            ToolOutcome::Err { error } => Err(error.to_string()),
                        });
                    }
                }
                if let Some(mode) = fault.filter(|_| !user) {
                    spend_fault(&mut self.faults, tool, mode);
                }
                self.recent_calls.push_front(FinishedCall {
                    call: *call,
                    run: ev.run,
                    tool: tool.clone(),
                    ok,
                    latency_ms: *latency_ms,
                    fault: *fault,
                    source: *source,
                });
                self.recent_calls.truncate(RECENT_CALLS);
                self.push(Entry::Result {
                    call: *call,
                    tool: tool.clone(),
                    outcome: outcome.clone(),
                    fault: *fault,
                    latency_ms: *latency_ms,
                    lane: *lane,
                    filtered: *filtered,
                });
            }
            EventKind::PlanMade { budget, fixed_cost, remaining, tau, rows, planned_cost, planned_calls, .. } => {
                if let Some(r) = self.current.as_mut() {
                    r.plan = Some(PlanView {
                        budget: *budget,
                        fixed_cost: *fixed_cost,
                        remaining: *remaining,
                        tau: *tau,
                        rows: rows.clone(),
                        planned_cost: *planned_cost,
                        planned_calls: *planned_calls,
                        used: BTreeMap::new(),
                    });
                    for row in rows.iter().filter(|r| r.calls == 0) {
                        r.forbidden.insert(row.tool.clone());
                    }
                }
            }
            EventKind::BudgetSpent { tool, amount, spent, allowance, .. } => {
                if let Some(r) = self.current.as_mut() {
                    r.spent = *spent;
                    if let Some(p) = r.plan.as_mut() {
                        let u = p.used.entry(tool.clone()).or_default();
                        u.0 += 1;
                        u.1 += amount;
                    }
                    if *allowance == 0 {
                        r.forbidden.insert(tool.clone());
                    }
                }
            }
            EventKind::Blacklisted { tool, reason } => {
                if let Some(r) = self.current.as_mut() {
                    r.blacklisted.insert(tool.clone());
                }
                self.push(Entry::Note(format!("{tool} blacklisted: {reason}")));
            }
            EventKind::ModelSwitched { role, model, price } => {
                match self.models.iter_mut().find(|m| m.role == *role) {
                    Some(m) => {
                        m.model = model.clone();
                        m.price = *price;
                    }
                    None => self.models.push(RoleModel { role: *role, model: model.clone(), price: *price }),
                }
                self.push(Entry::Note(format!("{role} is now played by {}", model.name)));
            }
            EventKind::TaskEdited { index, text } => {
                if let Some(t) = self.task_list.get_mut(*index as usize - 1) {
                    t.query = text.clone();
                }
            }
            EventKind::TaskPicked { index } => self.picked = Some(*index),
            EventKind::PaceChanged { ms } => self.pace_ms = *ms,
            EventKind::Viewer { viewer, action } => match action {
                ViewerAction::Attached => self.push(Entry::Note(format!("viewer {viewer} attached"))),
                ViewerAction::Detached => self.push(Entry::Note(format!("viewer {viewer} detached"))),
                // The control's own event says what it did.
                ViewerAction::Sent { .. } => {}
            },
            EventKind::ControlRejected { control, why } => {
                self.last_rejection = Some((control.clone(), why.clone()));
                self.push(Entry::Note(format!("{control} refused: {why}")));
            }
            EventKind::Refused { tool, reason, detail } => {
                if let Some(r) = self.current.as_mut() {
                    match reason {
                        RefuseReason::Forbidden => {
                            r.forbidden.insert(tool.clone());
                        }
                        RefuseReason::Blacklisted => {
                            r.blacklisted.insert(tool.clone());
                        }
                        _ => {}
                    }
                }
                self.push(Entry::Refusal { tool: tool.clone(), reason: *reason, detail: detail.clone() });
            }
            EventKind::FaultInjected { tool, fault } => {
                let left = match fault.scope {
                    FaultScope::Once => Some(1),
                    FaultScope::Times { n } => Some(n),
                    _ => None,
                };
                self.faults.push(ActiveFault { tool: tool.clone(), fault: *fault, left });
                self.push(Entry::Note(format!("fault injected: {tool} {} ({})", fault.mode, fault.scope)));
            }
            EventKind::FaultCleared { tool } => {
                match tool {
                    Some(t) => self.faults.retain(|f| &f.tool != t),
                    None => self.faults.clear(),
                }
                self.push(Entry::Note(format!("faults cleared: {}", tool.as_deref().unwrap_or("all tools"))));
            }
            EventKind::ScoreEdited { tool, score, update } => {
                if let Some(g) = self.graph.as_mut() {
                    g.apply(update, false);
                }
                self.push(Entry::Note(format!("score of {tool} set to {score}")));
            }
            EventKind::ParamChanged { change, rejected } => match rejected {
                None => {
                    self.params.apply(change);
                    self.push(Entry::Note(format!("parameter changed: {change:?}")));
                }
                Some(why) => self.push(Entry::Note(format!("parameter change refused: {why}"))),
            },
            EventKind::Evaluated { scores } => {
                let s: Vec<String> = scores.iter().map(|(t, d)| format!("{t} {d:+}")).collect();
                self.push(Entry::Note(format!("evaluator scores: {}", s.join(", "))));
            }
            EventKind::GraphUpdated { update } => {
                if let Some(g) = self.graph.as_mut() {
                    g.apply(update, true);
                }
            }
            EventKind::ToolsClassified { categories, labels, .. } => {
                self.categories = categories.clone();
                for l in labels {
                    self.labels.insert(l.tool.clone(), (l.category.clone(), l.source));
                }
            }
            EventKind::CategoryEdited { tool, category } => {
                if !self.categories.contains(category) {
                    self.categories.push(category.clone());
                }
                self.labels.insert(tool.clone(), (category.clone(), LabelSource::User));
                self.push(Entry::Note(format!("{tool} is now in category {category}")));
            }
            EventKind::PlanWritten { attempt, steps } => {
                if let Some(r) = self.current.as_mut() {
                    let w = r.rewoo.get_or_insert_with(RewooView::default);
                    w.plan = steps.clone();
                    w.attempts = *attempt;
                }
                self.push(Entry::Plan { attempt: *attempt, steps: steps.clone() });
            }
            EventKind::PlanRejected { attempt, error, last } => {
                if let Some(r) = self.current.as_mut() {
                    r.rewoo.get_or_insert_with(RewooView::default).attempts = *attempt;
                }
                self.push(Entry::RewooPlanError { attempt: *attempt, error: error.clone(), last: *last });
            }
            EventKind::StepStarted { evidence, thought, lanes } => {
                if let Some(r) = self.current.as_mut() {
                    let w = r.rewoo.get_or_insert_with(RewooView::default);
                    w.steps.push(StepView {
                        evidence: *evidence,
                        thought: thought.clone(),
                        lanes: lanes.iter().map(lane_view).collect(),
                        finished: false,
                        tokens_saved: 0,
                        agent: false,
                    });
                }
                self.push(Entry::StepStart { evidence: *evidence, thought: thought.clone(), lanes: lanes.len() });
            }
            EventKind::LaneChanged { lane, action } => {
                let step = self.current.as_mut().and_then(|r| match r.rewoo.as_mut() {
                    Some(w) => w.steps.last_mut(),
                    None => r.agent_lanes.as_mut(),
                });
                if let Some(l) = step.and_then(|s| s.lanes.iter_mut().find(|l| l.lane == *lane)) {
                    match action {
                        LaneAction::Hold if l.state == LaneState::Waiting => l.state = LaneState::Held,
                        LaneAction::Release | LaneAction::Step if l.state == LaneState::Held => {
                            l.state = LaneState::Waiting
                        }
                        LaneAction::Fail { fault } => {
                            l.pending_fault = Some(*fault);
                            l.user_fault |= matches!(l.state, LaneState::Waiting | LaneState::Held);
                        }
                        _ => {}
                    }
                }
            }
            EventKind::StepFinished { evidence, results, tokens_saved } => {
                let mut shown = Vec::new();
                if let Some(r) = self.current.as_mut()
                    && let Some(w) = r.rewoo.as_mut()
                {
                    w.tokens_saved += tokens_saved;
                    if let Some(step) = w.steps.iter_mut().rev().find(|s| s.evidence == *evidence) {
                        step.finished = true;
                        step.tokens_saved = *tokens_saved;
                        for l in
                            step.lanes.iter_mut().filter(|l| matches!(l.state, LaneState::Waiting | LaneState::Held))
                        {
                            l.state = LaneState::Refused;
                        }
                        shown = step.lanes.iter().map(|l| l.tool.clone()).zip(results.iter().cloned()).collect();
                    }
                }
                self.push(Entry::Evidence { evidence: *evidence, results: shown, tokens_saved: *tokens_saved });
            }
            EventKind::ProgramWritten { round, program, diff, by_user } => {
                if let Some(r) = self.current.as_mut()
                    && *round > 0
                    && !*by_user
                {
                    r.reflections += 1;
                }
                self.push(Entry::Program {
                    round: *round,
                    program: program.clone(),
                    diff: diff.clone(),
                    by_user: *by_user,
                });
            }
            EventKind::ProgramFailed { round, error, line, tool, last, kind, .. } => {
                self.push(Entry::ProgramFailed {
                    round: *round,
                    error: format!("{}: {error}", kind.as_str()),
                    line: *line,
                    tool: tool.clone(),
                    last: *last,
                });
            }
            EventKind::ProgramReturned { value, .. } => self.push(Entry::ProgramReturned { value: value.clone() }),
            EventKind::Probed { tool, sample, question, schema, error, .. } => self.push(Entry::Probe {
                tool: tool.clone(),
                sample: *sample,
                question: question.clone(),
                schema: schema.clone(),
                error: error.clone(),
            }),
            EventKind::ProtocolSaved { tool, schema, samples, path } => self.push(Entry::Note(match (schema, path) {
                (Some(_), Some(p)) => format!("protocol of {tool} probed from {samples} sample(s), saved to {p}"),
                (Some(_), None) => format!("protocol of {tool} probed from {samples} sample(s)"),
                (None, _) => format!("{tool} could not be probed"),
            })),
            EventKind::ProgramAt { .. } | EventKind::ProgramPrinted { .. } => {}
            EventKind::Forked { origin, .. } => self.forked_from = Some(origin.clone()),
            // The debugger's events are folded above, by `debug`.
            EventKind::ApprovalSet { .. }
            | EventKind::ApprovalRequested { .. }
            | EventKind::ResultReview { .. }
            | EventKind::ReplyReview { .. }
            | EventKind::ReviewPassed { .. }
            | EventKind::CallEdited { .. }
            | EventKind::CallRejected { .. }
            | EventKind::ResultEdited { .. }
            | EventKind::ReplyEdited { .. }
            | EventKind::BreakpointSet { .. }
            | EventKind::BreakpointCleared { .. }
            | EventKind::BreakpointHit { .. } => {}
            EventKind::Paused => self.mode = Mode::Paused,
            EventKind::Resumed => self.mode = Mode::Running,
            EventKind::Stepped => {}
            EventKind::Retrieved { query, source, hits } => {
                self.retrieval =
                    Some(RetrievalView { query: query.clone(), source: source.clone(), hits: hits.clone() });
            }
            EventKind::ToolJudged { judge, score, needed } => {
                self.judged = Some((judge.clone(), *score, *needed));
                let verdict = if *needed { "needs a tool" } else { "needs no tool: only the answer is offered" };
                self.push(Entry::Note(format!("tool judge ({judge}): {score:.2}, the task {verdict}")));
            }
            EventKind::RetrievalFallback { from, reason } => {
                self.push(Entry::Note(format!("retrieval: {from} failed, BM25 ranks alone from here: {reason}")));
                self.retrieval_fallback = Some((from.clone(), reason.clone()));
            }
            EventKind::ServerState { server, state, detail } => {
                let was = self.servers.insert(server.clone(), (*state, detail.clone()));
                // The first report of a running server is no news to the log.
                if was.is_some() || *state != ServerState::Running {
                    let why = detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default();
                    self.push(Entry::Note(format!("mcp server '{server}' {state}{why}")));
                }
            }
            EventKind::AgentStarted { command, pid, .. } => {
                if let Some(r) = self.current.as_mut() {
                    r.agent = Some(AgentView { command: command.clone(), pid: *pid, exit: None });
                }
                self.push(Entry::Note(format!("agent started (pid {pid}): {command}")));
            }
            EventKind::AgentExited { code, error, stderr_tail } => {
                let exit = AgentExit { code: *code, error: error.clone(), stderr_tail: stderr_tail.clone() };
                let mut note = match (code, error) {
                    (_, Some(e)) => format!("agent failed: {e}"),
                    (Some(c), None) => format!("agent exited with code {c}"),
                    (None, None) => "agent was killed by a signal".to_string(),
                };
                // The last lines of its stderr say why, where it failed.
                let tail: Vec<&str> = stderr_tail.iter().rev().take(3).rev().map(String::as_str).collect();
                if !tail.is_empty() && *code != Some(0) {
                    note.push_str(&format!("; its stderr ends: {}", tail.join(" ⏎ ")));
                }
                if let Some(r) = self.current.as_mut() {
                    match r.agent.as_mut() {
                        Some(a) => a.exit = Some(exit),
                        None => r.agent = Some(AgentView { exit: Some(exit), ..Default::default() }),
                    }
                }
                self.push(Entry::Note(note));
            }
            EventKind::RunFinished { .. } => {
                if let Some(r) = self.current.as_mut() {
                    r.in_flight.clear();
                }
                if let Some(summary) = RunSummary::of(self.current.as_ref(), ev.run, &ev.kind) {
                    self.finish(summary);
                }
            }
            EventKind::SessionFinished { stopped, .. } => {
                self.mode = Mode::Finished;
                self.stopped = *stopped;
            }
            EventKind::Suspended => {
                self.mode = Mode::Suspended;
                self.push(Entry::Note("suspended: `switchyard resume` takes the session up from here".into()));
            }
            EventKind::ModelFaultInjected { .. } | EventKind::ModelFaultCleared { .. } => {}
        }
        if let Some(note) = self::model_faults::apply(&mut self.model_faults, &ev.kind) {
            self.push(Entry::Note(note));
        }
    }

    /// The category a tool is in (rewoo), if it has one.
    pub fn category(&self, tool: &str) -> Option<&str> {
        self.labels.get(tool).map(|(c, _)| c.as_str())
    }

    fn push(&mut self, e: Entry) {
        if let Some(r) = self.current.as_mut() {
            r.push(e, self.entry_thread);
        }
    }

    /// Runs judged right, over the whole session.
    pub fn succeeded(&self) -> usize {
        self.totals.succeeded as usize
    }

    /// Finished runs no longer kept in [`SessionState::finished`].
    pub fn runs_dropped(&self) -> u64 {
        self.totals.runs - self.finished.len() as u64
    }

    fn finish(&mut self, r: RunSummary) {
        self.totals.add(&r);
        if self.finished.len() >= RUN_WINDOW {
            // The oldest run makes room: a thousand summaries move, once a run.
            self.finished.remove(0);
        }
        self.finished.push(r);
    }
}

/// A fault hit `tool` with `mode`: the oldest sure fault (not a
/// probability) of `tool` loses a use when it is of that mode, as the
/// engine's table spends them.
fn spend_fault(faults: &mut Vec<ActiveFault>, tool: &str, mode: FaultMode) {
    let sure = faults.iter().position(|f| f.tool == tool && !matches!(f.fault.scope, FaultScope::Probability { .. }));
    let Some(i) = sure.filter(|i| faults[*i].fault.mode == mode) else { return };
    if let Some(l) = faults[i].left.as_mut() {
        *l = l.saturating_sub(1);
        if *l == 0 {
            faults.remove(i);
        }
    }
}

fn lane_view(l: &LanePlan) -> LaneView {
    LaneView {
        lane: l.lane,
        call: l.call,
        tool: l.tool.clone(),
        input: l.input.clone(),
        args: l.args.clone(),
        state: LaneState::Waiting,
        started: None,
        finished: None,
        latency_ms: None,
        fault: None,
        pending_fault: None,
        user_fault: false,
        result: None,
        source: None,
    }
}

#[cfg(test)]
mod tool_lookup_tests {
    use super::*;

    fn brief(name: &str, cost: f64) -> ToolBrief {
        ToolBrief { name: name.into(), description: String::new(), category: None, cost, server: None }
    }

    #[test]
    fn a_tool_is_found_by_name_and_the_first_of_two_sharing_one() {
        let mut s = SessionState {
            tools: vec![brief("b", 1.0), brief("a", 2.0), brief("c", 3.0), brief("a", 4.0)].into(),
            ..Default::default()
        };
        assert_eq!(s.tool("a").map(|t| t.cost), Some(2.0));
        assert_eq!(s.tool("c").map(|t| t.cost), Some(3.0));
        assert!(s.tool("d").is_none());
        // Tools replaced after the first lookup are still found.
        s.tools = s.tools.iter().cloned().chain([brief("d", 5.0)]).collect();
        assert_eq!(s.tool("d").map(|t| t.cost), Some(5.0));
        // Whether the order has been built does not make two states differ.
        let fresh = SessionState { tools: s.tools.clone(), ..Default::default() };
        assert!(fresh == s);
    }
}
