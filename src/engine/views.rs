//! What the fold of a session's events holds, piece by piece: the runs, the
//! transcript's entries, the calls in flight, ReWOO's plan and lanes, the
//! graph's weights. `state.rs` folds events into them.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use serde_json::Value;

use super::event::{GraphSnapshot, Offered, RefuseReason, RewooStep, RunOutcome, ToolOutcome};
use crate::graph::GraphUpdate;
use crate::model::{Message, Role, Usage};
use crate::tool::CallSource;
use crate::tool::fault::{Fault, FaultMode};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Idle,
    Running,
    Paused,
    Finished,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Account {
    pub calls: u64,
    pub usage: Usage,
    pub cost: f64,
    pub latency_ms: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolSpend {
    pub calls: u64,
    pub errors: u64,
    pub cost: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Prompt {
        role: Role,
        model: String,
        messages: Vec<Message>,
    },
    Reply {
        role: Role,
        model: String,
        text: String,
        usage: Usage,
        cost: f64,
        latency_ms: u64,
    },
    ModelError {
        role: Role,
        model: String,
        error: String,
    },
    Call {
        call: u64,
        tool: String,
        args: Value,
        lane: Option<u32>,
    },
    Result {
        call: u64,
        tool: String,
        outcome: ToolOutcome,
        fault: Option<FaultMode>,
        latency_ms: u64,
        lane: Option<u32>,
        /// Replaced by null before the solver saw it.
        filtered: bool,
    },
    /// The planner's plan, as parsed.
    Plan {
        attempt: u32,
        steps: Vec<RewooStep>,
    },
    /// A plan that could not be read; `last`: the run fails.
    RewooPlanError {
        attempt: u32,
        error: String,
        last: bool,
    },
    /// A plan step begins.
    StepStart {
        evidence: u32,
        thought: String,
        lanes: usize,
    },
    /// A step's evidence as the solver will see it (None = null).
    Evidence {
        evidence: u32,
        results: Vec<(String, Option<Value>)>,
        tokens_saved: u64,
    },
    Refusal {
        tool: String,
        reason: RefuseReason,
        detail: String,
    },
    /// atc: a program written (or rewritten: the diff) by the model or the user.
    Program {
        round: u32,
        program: String,
        diff: String,
        by_user: bool,
    },
    /// atc: a program failed, attributed to `tool`.
    ProgramFailed {
        round: u32,
        error: String,
        line: Option<u32>,
        tool: Option<String>,
        last: bool,
    },
    /// atc: a program returned its answer.
    ProgramReturned {
        value: Value,
    },
    /// atc: one probe of a tool.
    Probe {
        tool: String,
        sample: u32,
        question: String,
        schema: Option<Value>,
        error: Option<String>,
    },
    Note(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct InFlight {
    pub call: u64,
    pub tool: String,
    pub args: Value,
    pub started: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FinishedCall {
    pub call: u64,
    pub run: u32,
    pub tool: String,
    pub ok: bool,
    pub latency_ms: u64,
    pub fault: Option<FaultMode>,
    /// Answered by a cassette or a synthesizer, not by the tool.
    pub source: Option<CallSource>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunView {
    pub run: u32,
    pub task_id: String,
    pub task: String,
    pub gold: Option<String>,
    pub index: u32,
    pub from: String,
    pub candidates: Vec<Offered>,
    /// Tools called in this run, in order.
    pub path: Vec<String>,
    pub transcript: Vec<Entry>,
    pub in_flight: Vec<InFlight>,
    pub cost: f64,
    pub usage: Usage,
    pub tool_calls: u32,
    /// Tools the model may no longer call in this run (budget spent).
    pub forbidden: BTreeSet<String>,
    /// Tools the judge found unhelpful in this run.
    pub blacklisted: BTreeSet<String>,
    /// BTP's plan for this run, if it has one.
    pub plan: Option<PlanView>,
    /// What BTP counted against the budget so far.
    pub spent: f64,
    /// The rewoo plan and its steps' lanes, once the planner wrote one.
    pub rewoo: Option<RewooView>,
    /// atc: the program running (or last run) in this run.
    pub program: Option<super::program_view::ProgramView>,
    /// atc: reflection rounds used (rewrites after a failure).
    pub reflections: u32,
}

/// Where one lane of a plan step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneState {
    /// Waiting for the gate.
    Waiting,
    /// Held by the user while its siblings run on.
    Held,
    Running,
    /// Ended; `filtered` = the solver sees null.
    Done {
        ok: bool,
        filtered: bool,
    },
    /// Never ran: the budget or the plan refused it.
    Refused,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LaneView {
    pub lane: u32,
    pub call: u64,
    pub tool: String,
    pub input: String,
    pub args: Value,
    pub state: LaneState,
    /// Clock times of the call's start and end.
    pub started: Option<u64>,
    pub finished: Option<u64>,
    pub latency_ms: Option<u64>,
    pub fault: Option<FaultMode>,
    /// A fault the user asked for, not yet seen fire.
    pub pending_fault: Option<FaultMode>,
    /// The user's fault was given before the call started, so it replaced
    /// the fault table's draw (nothing of the table was spent).
    pub user_fault: bool,
    /// The result, or the error text.
    pub result: Option<Result<Value, String>>,
    /// Answered by a cassette or a synthesizer, not by the tool.
    pub source: Option<CallSource>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StepView {
    pub evidence: u32,
    pub thought: String,
    pub lanes: Vec<LaneView>,
    pub finished: bool,
    pub tokens_saved: u64,
}

/// A rewoo run: the plan, and the steps run so far with their lanes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RewooView {
    pub plan: Vec<RewooStep>,
    /// Planner replies read so far (a retry makes two).
    pub attempts: u32,
    pub steps: Vec<StepView>,
    pub tokens_saved: u64,
}

impl RewooView {
    /// The step whose lanes are running (or about to), if any.
    pub fn active_step(&self) -> Option<&StepView> {
        self.steps.last().filter(|s| !s.finished)
    }

    pub(super) fn lane_mut(&mut self, call: u64) -> Option<&mut LaneView> {
        self.steps.iter_mut().rev().flat_map(|s| s.lanes.iter_mut()).find(|l| l.call == call)
    }
}

/// BTP's plan as the events tell it, with what was used of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanView {
    pub budget: f64,
    pub fixed_cost: f64,
    pub remaining: f64,
    pub tau: f64,
    pub rows: Vec<crate::engine::event::BudgetRow>,
    pub planned_cost: f64,
    pub planned_calls: u32,
    /// Calls used and cost spent per tool.
    pub used: BTreeMap<String, (u32, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    pub run: u32,
    pub task_id: String,
    pub outcome: RunOutcome,
    pub answer: Option<String>,
    pub success: Option<bool>,
    pub cost: f64,
    pub usage: Usage,
    pub steps: u32,
    pub tool_calls: u32,
    pub path: Vec<String>,
    /// BTP: the budget, the planned cost and calls, and the spend counted against it.
    pub budget: Option<f64>,
    pub planned_cost: Option<f64>,
    pub planned_calls: Option<u32>,
    pub spent: f64,
    /// rewoo: tokens the null filtering kept from the solver.
    pub tokens_saved: u64,
    /// atc: rewrites after a failure.
    pub reflections: u32,
}

/// ToolNet's graph as the events tell it, with the history a chart needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphView {
    pub iteration: u32,
    pub out: BTreeMap<String, BTreeMap<String, f64>>,
    pub scores: BTreeMap<String, f64>,
    /// (iteration, node, score) for every score change.
    pub score_history: Vec<(u32, String, f64)>,
    /// (iteration, from, to, weight) for every weight an update listed.
    pub weight_history: Vec<(u32, String, String, f64)>,
    /// Every row an update wrote as a shared weight, kept as the update
    /// gave it rather than an entry per edge: `start`'s row is rewritten by
    /// every update, and at 16,000 tools per-edge history would grow by
    /// megabytes a task. [`GraphView::weight_changes`] reads both.
    pub row_history: Vec<RowPoint>,
    /// How many other nodes lead to each node with a positive weight (self
    /// edges and edges to `end` aside): kept here so a view of a huge graph
    /// need not walk every edge.
    pub in_degree: BTreeMap<String, u32>,
}

/// A row an update wrote as a shared weight: every edge of `from` not
/// among the update's listed weights (`listed`, a range of
/// `weight_history`) took `rest` at `iteration`.
#[derive(Clone, Debug, PartialEq)]
pub struct RowPoint {
    pub iteration: u32,
    pub from: String,
    pub rest: f64,
    pub listed: Range<usize>,
}

impl GraphView {
    pub(super) fn from_snapshot(s: &GraphSnapshot) -> Self {
        let mut g = GraphView { iteration: s.iteration, ..Default::default() };
        for (from, to, w) in s.edges() {
            g.out.entry(from.to_string()).or_default().insert(to.to_string(), w);
            count_in(&mut g.in_degree, from, to, 0.0, w);
        }
        for (n, sc) in &s.scores {
            g.scores.insert(n.clone(), *sc);
        }
        g
    }

    pub(super) fn apply(&mut self, u: &GraphUpdate, bump: bool) {
        if bump {
            self.iteration = u.iteration;
        }
        for (n, s) in &u.scores {
            self.scores.insert(n.clone(), *s);
            self.score_history.push((self.iteration, n.clone(), *s));
        }
        let first = self.weight_history.len();
        for c in &u.weights {
            let old = self.out.entry(c.from.clone()).or_default().insert(c.to.clone(), c.new).unwrap_or(0.0);
            count_in(&mut self.in_degree, &c.from, &c.to, old, c.new);
            self.weight_history.push((self.iteration, c.from.clone(), c.to.clone(), c.new));
        }
        let listed = first..self.weight_history.len();
        for r in &u.rows {
            if let Some(row) = self.out.get_mut(&r.from) {
                for (to, w) in row.iter_mut() {
                    let new = u.weight_after(&r.from, to, *w);
                    count_in(&mut self.in_degree, &r.from, to, *w, new);
                    *w = new;
                }
            }
            self.row_history.push(RowPoint {
                iteration: self.iteration,
                from: r.from.clone(),
                rest: r.rest,
                listed: listed.clone(),
            });
        }
    }

    pub fn weight(&self, from: &str, to: &str) -> Option<f64> {
        self.out.get(from)?.get(to).copied()
    }

    /// The edge's weight after each update that changed it, as
    /// (iteration, weight), oldest first.
    pub fn weight_changes(&self, from: &str, to: &str) -> Vec<(u32, f64)> {
        let edge = |h: &(u32, String, String, f64)| h.1 == from && h.2 == to;
        let mut listed = self.weight_history.iter().enumerate().filter(|(_, h)| edge(h)).peekable();
        let mut out = Vec::new();
        for r in self.row_history.iter().filter(|r| r.from == from) {
            while let Some((_, h)) = listed.next_if(|(k, _)| *k < r.listed.start) {
                out.push((h.0, h.3));
            }
            if !self.weight_history.get(r.listed.clone()).unwrap_or_default().iter().any(edge) {
                out.push((r.iteration, r.rest));
            }
        }
        out.extend(listed.map(|(_, h)| (h.0, h.3)));
        out
    }

    pub fn score(&self, node: &str) -> f64 {
        self.scores.get(node).copied().unwrap_or(0.0)
    }

    /// Edges into `node`, as (from, weight).
    pub fn predecessors(&self, node: &str) -> Vec<(&str, f64)> {
        self.out.iter().filter_map(|(f, row)| row.get(node).map(|w| (f.as_str(), *w))).collect()
    }
}

/// Counts an edge's change of sign into `in_degree` (see [`GraphView`]).
fn count_in(in_degree: &mut BTreeMap<String, u32>, from: &str, to: &str, old: f64, new: f64) {
    if from == to || to == crate::graph::END || (old > 0.0) == (new > 0.0) {
        return;
    }
    let n = in_degree.entry(to.to_string()).or_default();
    if new > 0.0 {
        *n += 1;
    } else {
        *n = n.saturating_sub(1);
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ActiveFault {
    pub tool: String,
    pub fault: Fault,
    /// Calls left for a counted fault.
    pub left: Option<u32>,
}

/// A fault hit `tool` with `mode`: the oldest sure fault (not a
/// probability) of `tool` loses a use when it is of that mode, as the
/// engine's table spends them.
pub(super) fn spend_fault(faults: &mut Vec<ActiveFault>, tool: &str, mode: FaultMode) {
    let sure = faults
        .iter()
        .position(|f| f.tool == tool && !matches!(f.fault.scope, crate::tool::fault::FaultScope::Probability { .. }));
    let Some(i) = sure.filter(|i| faults[*i].fault.mode == mode) else { return };
    if let Some(l) = faults[i].left.as_mut() {
        *l = l.saturating_sub(1);
        if *l == 0 {
            faults.remove(i);
        }
    }
}
