//! Breakpoints: the engine checks them before every call (a named tool, a
//! step) and on its own events (errors, refusals, unreadable replies, cost,
//! tokens, scores). A hit is an event and closes the gate, so the run
//! pauses at its next decision point. Also the debugger's controls.

use std::collections::BTreeSet;

use super::conductor::Engine;
use super::control::Control;
use super::debug::{Armed, Condition};
use super::error::EngineError;
use super::event::{Event, EventKind, RefuseReason, ToolOutcome};
use super::gate::Gate;
use crate::program::sandbox::FailKind;
use crate::tool::ToolErrorKind;

impl Engine {
    /// Before a model call (`tool` None) or a call of `tool`: pauses when a
    /// breakpoint on the tool or on this step holds.
    pub(super) fn break_before(&mut self, tool: Option<&str>) -> Result<(), EngineError> {
        self.break_before_in(tool, None)
    }

    /// `break_before` for a call of a bridged agent's thread `thread`: a
    /// breakpoint on the thread, or on one it is under, holds too.
    pub(super) fn break_before_in(&mut self, tool: Option<&str>, thread: Option<u32>) -> Result<(), EngineError> {
        if self.debug.breaks.is_empty() {
            return Ok(());
        }
        let (run, step) = (self.run_no, self.step);
        let threads = &self.agent.threads;
        let what = tool.map_or_else(|| "a model call".to_string(), str::to_string);
        let mut hits = Vec::new();
        for (i, b) in self.debug.breaks.iter_mut().enumerate().filter(|(_, b)| b.enabled) {
            match &b.condition {
                Condition::Thread(name) if thread.is_some_and(|t| threads.within(t, name)) => {
                    let of = thread.and_then(|t| threads.name(t)).unwrap_or(name);
                    hits.push((i, format!("{what} of thread {of} is about to start")));
                }
                Condition::Tool(t) if Some(t.as_str()) == tool => hits.push((i, format!("{t} is about to be called"))),
                Condition::Step { step: n, run: m }
                    if *n == step && m.is_none_or(|m| m == run) && b.fired_in != Some(run) =>
                {
                    b.fired_in = Some(run);
                    hits.push((i, format!("step {step} of run {run} begins")));
                }
                _ => {}
            }
        }
        self.hit_all(hits)
    }

    /// After every event: pauses when a breakpoint's condition became true.
    pub(super) fn watch(&mut self, event: &Event) -> Result<(), EngineError> {
        if self.debug.breaks.is_empty() || matches!(event.kind, EventKind::BreakpointHit { .. } | EventKind::Paused) {
            return Ok(());
        }
        let (run, cost) = (self.run_no, self.tally.cost);
        let tokens = self.tally.usage.prompt_tokens + self.tally.usage.completion_tokens;
        let scores_moved = matches!(event.kind, EventKind::GraphUpdated { .. } | EventKind::ScoreEdited { .. });
        let spent = matches!(
            event.kind,
            EventKind::ModelReply { .. } | EventKind::ToolResult { .. } | EventKind::BudgetSpent { .. }
        );
        let mut hits = Vec::new();
        for i in 0..self.debug.breaks.len() {
            if !self.debug.breaks[i].enabled {
                continue;
            }
            let detail = match self.debug.breaks[i].condition.clone() {
                Condition::Error => tool_error(&event.kind),
                Condition::Refusal => match &event.kind {
                    EventKind::Refused { tool, reason, detail } if *reason != RefuseReason::Malformed => {
                        Some(format!("{tool} refused ({reason:?}): {detail}"))
                    }
                    _ => None,
                },
                Condition::Unreadable => unreadable(&event.kind),
                Condition::ExpectFailed if matches!(event.kind, EventKind::ToolCall { .. }) || spent => {
                    let broken = self.expecting.newly_broken(cost);
                    (!broken.is_empty()).then(|| {
                        let each: Vec<String> = broken.iter().map(|b| format!("{}: {}", b.expect, b.detail)).collect();
                        format!("expectation broken: {}", each.join("; "))
                    })
                }
                Condition::CostOver(x) if spent && cost > x && self.debug.breaks[i].fired_in != Some(run) => {
                    self.debug.breaks[i].fired_in = Some(run);
                    Some(format!("the task has cost {cost:.4} {}, over {x}", self.state.cost_unit))
                }
                Condition::TokensOver(n) if spent && tokens > n && self.debug.breaks[i].fired_in != Some(run) => {
                    self.debug.breaks[i].fired_in = Some(run);
                    Some(format!("the task has used {tokens} tokens, over {n}"))
                }
                Condition::ScoreUnder { below, tool } if scores_moved => {
                    let now = self.below(below, tool.as_deref());
                    let b = &mut self.debug.breaks[i];
                    let fell: Vec<String> = now.difference(&b.below).cloned().collect();
                    b.below = now;
                    (!fell.is_empty()).then(|| {
                        let g = self.graph.as_ref();
                        let each: Vec<String> = fell
                            .iter()
                            .map(|t| format!("{t} {:+}", g.and_then(|g| g.score(t)).unwrap_or(0.0)))
                            .collect();
                        format!("score below {below}: {}", each.join(", "))
                    })
                }
                _ => None,
            };
            if let Some(d) = detail {
                hits.push((i, d));
            }
        }
        self.hit_all(hits)
    }

    /// The tools (one, or every tool of the graph) whose score is below `x`.
    fn below(&self, x: f64, tool: Option<&str>) -> BTreeSet<String> {
        let Some(g) = self.graph.as_ref() else { return BTreeSet::new() };
        let names: Vec<&str> = match tool {
            Some(t) => vec![t],
            None => g.tools().collect(),
        };
        names.into_iter().filter(|t| g.score(t).is_some_and(|s| s < x)).map(str::to_string).collect()
    }

    /// Records each hit and closes the gate: the run pauses before its next call.
    fn hit_all(&mut self, hits: Vec<(usize, String)>) -> Result<(), EngineError> {
        if hits.is_empty() {
            return Ok(());
        }
        for (i, detail) in hits {
            let b = &self.debug.breaks[i];
            let (id, condition) = (b.id, b.condition.clone());
            self.emit(EventKind::BreakpointHit { id, condition, detail })?;
        }
        match self.gate {
            Gate::Open => {
                self.gate = Gate::Closed;
                self.emit(EventKind::Paused)
            }
            // A step in progress ends here too: the user steps again to go on.
            Gate::OneStep => {
                self.gate = Gate::Closed;
                Ok(())
            }
            Gate::Closed => Ok(()),
        }
    }

    /// The debugger's controls: decisions that arrive when nothing waits
    /// for them, the approval policy, the breakpoints.
    pub(super) fn debug_control(&mut self, c: Control) -> Result<(), EngineError> {
        match c {
            Control::Decide { call, decision } => {
                let why = match self.debug.waiting {
                    Some(w) => format!("call {call} does not wait for a decision (call {w} does)"),
                    None => format!("call {call} does not wait for a decision: nothing does"),
                };
                self.reject(&format!("decide: {}", decision.word()), why)
            }
            Control::SetApproval { policy } => {
                if let Some(t) = policy.tools.iter().find(|t| !self.names_a_tool(t)) {
                    return self.reject("approve", format!("no tool named '{t}'"));
                }
                self.debug.policy = policy.clone();
                self.emit(EventKind::ApprovalSet { policy })
            }
            Control::SetBreakpoint { condition } => {
                if let Some(t) = condition.tool().filter(|t| !self.names_a_tool(t)) {
                    return self.reject("breakpoint", format!("{condition}: no tool named '{t}'"));
                }
                self.debug.next_id += 1;
                let id = self.debug.next_id;
                // A score already below the line is no news: only a fall pauses.
                let below = match &condition {
                    Condition::ScoreUnder { below, tool } => self.below(*below, tool.as_deref()),
                    _ => BTreeSet::new(),
                };
                let armed = Armed { id, condition: condition.clone(), enabled: true, fired_in: None, below };
                self.debug.breaks.push(armed);
                self.emit(EventKind::BreakpointSet { id, condition, enabled: true })
            }
            Control::ClearBreakpoint { id } => match self.debug.breaks.iter().position(|b| b.id == id) {
                Some(i) => {
                    self.debug.breaks.remove(i);
                    self.emit(EventKind::BreakpointCleared { id })
                }
                None => self.reject("clear breakpoint", format!("there is no breakpoint #{id}")),
            },
            Control::ToggleBreakpoint { id } => match self.debug.breaks.iter_mut().find(|b| b.id == id) {
                Some(b) => {
                    b.enabled = !b.enabled;
                    let (condition, enabled) = (b.condition.clone(), b.enabled);
                    self.emit(EventKind::BreakpointSet { id, condition, enabled })
                }
                None => self.reject("toggle breakpoint", format!("there is no breakpoint #{id}")),
            },
            other => self.reject("debugger", format!("not a debugger control: {other:?}")),
        }
    }
}

/// A tool call that failed; the user's own rejection is no error.
fn tool_error(kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::ToolResult { call, tool, outcome: ToolOutcome::Err { error }, .. }
            if error.kind != ToolErrorKind::Rejected =>
        {
            Some(format!("call {call} of {tool} failed: {error}"))
        }
        _ => None,
    }
}

/// A model reply that could not be read: an action, a plan, a program.
fn unreadable(kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::Refused { reason: RefuseReason::Malformed, detail, .. } => Some(detail.clone()),
        EventKind::PlanRejected { error, .. } => Some(format!("the plan could not be read: {error}")),
        EventKind::ProgramFailed { kind: FailKind::Parse, error, .. } => {
            Some(format!("the program could not be read: {error}"))
        }
        _ => None,
    }
}
