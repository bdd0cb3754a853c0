//! A run as the fold keeps it: its transcript's entries, the calls in
//! flight and finished, BTP's plan, a bridged agent's process, and the
//! summary and totals of finished runs. The session's mode is here too.
//!
//! In this crate a `*View` is one of the fold's pieces: a read-only aspect
//! of the session that panes draw. What a model role is shown is its
//! `*Input` (`strategy`), what the user looks at is `ui::Navigation`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::lanes::{LaneState, LaneView, RewooView, StepView};
use crate::engine::event::{EventKind, Offered, RefuseReason, RewooStep, RunOutcome, ToolOutcome};
use crate::model::{Message, Role, Usage};
use crate::tool::CallSource;
use crate::tool::fault::FaultMode;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    #[default]
    Idle,
    Running,
    Paused,
    Finished,
    /// The process ended but the session did not: `switchyard resume`.
    Suspended,
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
    /// A reply still streaming in: what has arrived of it.
    Streaming {
        call: u64,
        text: String,
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
    pub program: Option<super::program::ProgramView>,
    /// atc: reflection rounds used (rewrites after a failure).
    pub reflections: u32,
    /// A bridged agent's process, once started.
    pub agent: Option<AgentView>,
    /// A bridged agent's calls as lanes: those of the last wave (from the
    /// first call after all before it had ended), open or ended.
    pub agent_lanes: Option<StepView>,
    /// A bridged agent's conversations.
    pub threads: super::threads::ThreadsView,
}

/// How many of a transcript's last entries may hold a streamed reply's text.
const STREAM_SEARCH: usize = 8;

impl RunView {
    /// A transcript entry, of `thread` when it is a bridged agent's.
    pub(super) fn push(&mut self, e: Entry, thread: Option<u32>) {
        self.transcript.push(e);
        // Kept only once there are threads: a strategy's run pays nothing.
        if thread.is_some() || !self.threads.of_entry.is_empty() {
            self.threads.of_entry.resize(self.transcript.len() - 1, None);
            self.threads.of_entry.push(thread);
        }
    }

    /// More of call `call`'s reply; `restart`: what came before is void.
    pub(super) fn stream(&mut self, call: u64, text: &str, restart: bool) {
        let from = self.transcript.len().saturating_sub(self.stream_search());
        let found =
            self.transcript[from..].iter().rposition(|e| matches!(e, Entry::Streaming { call: c, .. } if *c == call));
        match found.map(|i| &mut self.transcript[from + i]) {
            Some(Entry::Streaming { text: so_far, .. }) => {
                if restart {
                    so_far.clear();
                }
                so_far.push_str(text);
            }
            _ => {
                let thread = self.threads.of_call(call);
                self.push(Entry::Streaming { call, text: text.to_string() }, thread);
            }
        }
    }

    /// How far back a streamed reply's text may be: a few entries, and a
    /// few more for each of a bridged agent's calls running beside it.
    fn stream_search(&self) -> usize {
        let running =
            self.agent_lanes.as_ref().map_or(0, |s| s.lanes.iter().filter(|l| l.state == LaneState::Running).count());
        STREAM_SEARCH + 4 * running
    }

    /// The reply (or the failure) took the streamed text's place. The
    /// streamed text is among the last entries (nothing else runs while a
    /// model call does, or only the agent's other calls): only they are
    /// searched, or every reply of a long run would scan its whole transcript.
    pub(super) fn end_stream(&mut self, call: u64) {
        let from = self.transcript.len().saturating_sub(self.stream_search());
        let found =
            self.transcript[from..].iter().rposition(|e| matches!(e, Entry::Streaming { call: c, .. } if *c == call));
        if let Some(i) = found {
            self.transcript.remove(from + i);
            if from + i < self.threads.of_entry.len() {
                self.threads.of_entry.remove(from + i);
            }
        }
    }
}

/// A bridged agent's process as the workbench shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentView {
    pub command: String,
    pub pid: u32,
    /// None while it runs.
    pub exit: Option<AgentExit>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct AgentExit {
    pub code: Option<i32>,
    pub error: Option<String>,
    pub stderr_tail: Vec<String>,
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
    /// The run against its task's expectations, when it has any.
    pub expect: Option<crate::task::ExpectVerdict>,
}

impl RunSummary {
    /// The summary of the run a `RunFinished` event ends, with what the
    /// fold saw of it (`current`); None for any other event.
    pub(super) fn of(current: Option<&RunView>, run: u32, ended: &EventKind) -> Option<RunSummary> {
        let EventKind::RunFinished { outcome, answer, success, cost, usage, steps, tool_calls, expect } = ended else {
            return None;
        };
        let plan = current.and_then(|r| r.plan.as_ref());
        Some(RunSummary {
            run,
            task_id: current.map(|r| r.task_id.clone()).unwrap_or_default(),
            outcome: outcome.clone(),
            answer: answer.clone(),
            success: *success,
            cost: *cost,
            usage: *usage,
            steps: *steps,
            tool_calls: *tool_calls,
            path: current.map(|r| r.path.clone()).unwrap_or_default(),
            budget: plan.map(|p| p.budget),
            planned_cost: plan.map(|p| p.planned_cost),
            planned_calls: plan.map(|p| p.planned_calls),
            spent: current.map(|r| r.spent).unwrap_or_default(),
            tokens_saved: current.and_then(|r| r.rewoo.as_ref()).map(|w| w.tokens_saved).unwrap_or_default(),
            reflections: current.map(|r| r.reflections).unwrap_or_default(),
            expect: expect.clone(),
        })
    }

    /// Spent no more than its budget (a run without one always has).
    pub fn within_budget(&self) -> bool {
        self.budget.is_none_or(|b| self.cost <= b + 1e-9)
    }
}

/// Totals over every finished run of the session, which keeps the runs
/// themselves only for a window of the latest: what the metrics and the
/// headless summary need. Runs the user restarted are not attempts of their
/// own: they count in `runs` and `restarted` only.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunTotals {
    /// Every finished run, restarted ones too.
    pub runs: u64,
    pub restarted: u64,
    /// Runs with a gold answer to judge against, and those judged right.
    pub judged: u64,
    pub succeeded: u64,
    /// Runs that ended with an answer.
    pub answered: u64,
    /// Runs that spent more than their budget.
    pub over_budget: u64,
    /// Runs judged right, and runs that answered, within their budget.
    pub succeeded_within: u64,
    pub answered_within: u64,
    /// Sums over the runs, each added as the metrics average it.
    pub cost: f64,
    pub steps: f64,
    pub prompt_tokens: f64,
    pub completion_tokens: f64,
    pub tool_calls: f64,
    pub tokens_saved: f64,
    pub reflections: f64,
    /// Runs with a BTP plan, and their sums: planned cost, cost, planned
    /// calls, calls.
    pub planned: u64,
    pub planned_cost: f64,
    pub planned_spent: f64,
    pub planned_calls: f64,
    pub used_calls: f64,
    /// Some run had a budget.
    pub budgeted: bool,
    /// Runs that failed (a model failed for good), and the first: run, error.
    pub failed: u64,
    pub first_failure: Option<(u32, String)>,
}

impl RunTotals {
    pub fn add(&mut self, r: &RunSummary) {
        self.runs += 1;
        self.budgeted |= r.budget.is_some();
        if let RunOutcome::Failed { error } = &r.outcome {
            self.failed += 1;
            self.first_failure.get_or_insert_with(|| (r.run, error.clone()));
        }
        if r.outcome == RunOutcome::Restarted {
            self.restarted += 1;
            return;
        }
        let within = r.within_budget();
        let right = r.success == Some(true);
        let answered = r.outcome == RunOutcome::Answered;
        self.judged += u64::from(r.success.is_some());
        self.succeeded += u64::from(right);
        self.answered += u64::from(answered);
        self.over_budget += u64::from(!within);
        self.succeeded_within += u64::from(right && within);
        self.answered_within += u64::from(answered && within);
        self.cost += r.cost;
        self.steps += r.steps as f64;
        self.prompt_tokens += r.usage.prompt_tokens as f64;
        self.completion_tokens += r.usage.completion_tokens as f64;
        self.tool_calls += r.tool_calls as f64;
        self.tokens_saved += r.tokens_saved as f64;
        self.reflections += r.reflections as f64;
        if let Some(p) = r.planned_cost {
            self.planned += 1;
            self.planned_cost += p;
            self.planned_spent += r.cost;
            self.planned_calls += r.planned_calls.unwrap_or(0) as f64;
            self.used_calls += r.tool_calls as f64;
        }
    }

    /// The runs that count as attempts (restarted ones aside).
    pub fn attempts(&self) -> u64 {
        self.runs - self.restarted
    }
}

impl RunView {
    /// The lanes the workers pane shows and the lane keys act on: a rewoo
    /// run's last step, or a bridged agent's last wave of calls.
    pub fn lane_step(&self) -> Option<&StepView> {
        self.rewoo.as_ref().and_then(|w| w.steps.last()).or(self.agent_lanes.as_ref())
    }

    /// The lanes that may still be acted on: a step running, or an agent's
    /// wave with a call not yet ended.
    pub fn active_lanes(&self) -> Option<&StepView> {
        match &self.rewoo {
            Some(w) => w.active_step(),
            None => self.agent_lanes.as_ref().filter(|s| s.open()),
        }
    }

    pub(super) fn lane_mut(&mut self, call: u64) -> Option<&mut LaneView> {
        match self.rewoo.as_mut() {
            Some(w) => w.lane_mut(call),
            None => self.agent_lanes.as_mut()?.lanes.iter_mut().rev().find(|l| l.call == call),
        }
    }
}
