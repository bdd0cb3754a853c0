//! The engine replaying a fork's prefix (see `fork.rs`): each event it is
//! about to emit checked against the recorded one, the recorded controls
//! applied again where they took effect, the recorded answers given in
//! place of the models' and tools'; then going live at the fork point.

use serde_json::Value;

use super::conductor::Engine;
use super::control::{Control, LaneAction};
use super::debug::Decision;
use super::error::EngineError;
use super::event::{Event, EventKind, ToolOutcome};
use super::fork::{AtForkPoint, ForkEdit, Forked, Recorded, RecordedReply, RecordedResult, Replaying, recorded_kind};
use crate::budget::btp::BudgetRow;
use crate::model::{ChatResponse, ModelError};

/// Equal but for the time (the replayed answers carry their recorded
/// latency) and an agent's pid (its process is started again).
fn same(a: &Event, b: &Event) -> bool {
    let kind = match (&a.kind, &b.kind) {
        (EventKind::AgentStarted { pid, .. }, EventKind::AgentStarted { .. }) => {
            let mut b = b.kind.clone();
            if let EventKind::AgentStarted { pid: p, .. } = &mut b {
                *p = *pid;
            }
            a.kind == b
        }
        _ => a.kind == b.kind,
    };
    a.run == b.run && a.step == b.step && kind
}

/// A short description of an event, for the error when a replay diverges.
fn brief(e: &Event) -> String {
    let json = serde_json::to_string(&e.kind).unwrap_or_default();
    format!("run {} step {}: {}", e.run, e.step, crate::text::ellipsis(&json, 240))
}

/// Where two events first differ: a JSON path and the two values there.
fn first_difference(a: &Event, b: &Event) -> String {
    if (a.run, a.step) != (b.run, b.step) {
        return format!("run {} step {} recorded, run {} step {} replayed", a.run, a.step, b.run, b.step);
    }
    let (a, b) =
        (serde_json::to_value(&a.kind).unwrap_or(Value::Null), serde_json::to_value(&b.kind).unwrap_or(Value::Null));
    fn walk(path: String, a: &Value, b: &Value) -> Option<String> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))).find_map(|k| {
                    walk(format!("{path}.{k}"), x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null))
                })
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                x.iter().zip(y).enumerate().find_map(|(i, (p, q))| walk(format!("{path}[{i}]"), p, q))
            }
            _ if a == b => None,
            _ => Some(format!(
                "{path}: {} recorded, {} replayed",
                crate::text::ellipsis(&a.to_string(), 120),
                crate::text::ellipsis(&b.to_string(), 120)
            )),
        }
    }
    walk(String::new(), &a, &b).unwrap_or_else(|| "no difference in JSON".into())
}

impl Engine {
    /// Whether the engine is still replaying a fork's prefix.
    pub(super) fn replaying(&self) -> bool {
        self.fork.is_some()
    }

    /// An event the engine is about to emit, checked against the recorded
    /// one: the recorded event is what is written (its time included).
    pub(super) fn replayed(&mut self, event: Event) -> Result<(Event, bool), EngineError> {
        let Some(r) = self.fork.as_mut() else { return Ok((event, false)) };
        let index = r.pos;
        let Some(recorded) = r.next() else { return Ok((event, false)) };
        // The first event carries the session's set-up, which the fork
        // took from it (pace and listed models may differ harmlessly).
        let first = index == 0 && matches!(event.kind, EventKind::SessionStarted { .. });
        if !first && !same(recorded, &event) {
            return Err(EngineError::ForkDiverged {
                index: index + 1,
                recorded: brief(recorded),
                replayed: first_difference(recorded, &event),
            });
        }
        let mut recorded = recorded.clone();
        // The agent started again is another process: its own pid.
        if matches!(event.kind, EventKind::AgentStarted { .. }) {
            recorded.kind = event.kind;
        }
        r.pos += 1;
        let done = r.pos == r.plan.events.len();
        Ok((recorded, done))
    }

    /// Writes the recorded gate and server news that come next as they
    /// were; goes live if that ends the prefix.
    pub(super) fn echo_recorded(&mut self) -> Result<(), EngineError> {
        while let Some(r) = self.fork.as_mut() {
            let Some(next) = r.next() else { break };
            if !matches!(recorded_kind(&next.kind), Recorded::Echo) {
                break;
            }
            let event = next.clone();
            r.pos += 1;
            let done = r.pos == r.plan.events.len();
            // The gate follows the recorded pauses (the replay passes it
            // regardless), so what depends on it, like a breakpoint's pause,
            // happens as it did.
            match event.kind {
                EventKind::Paused | EventKind::Stepped => self.gate = super::gate::Gate::Closed,
                EventKind::Resumed => self.gate = super::gate::Gate::Open,
                _ => {}
            }
            self.publish(event)?;
            if done {
                self.go_live()?;
            }
        }
        Ok(())
    }

    /// Pauses at the fork point, so the user can change things first.
    fn close_gate(&mut self) -> Result<(), EngineError> {
        if self.gate != super::gate::Gate::Closed {
            self.gate = super::gate::Gate::Closed;
            self.emit(EventKind::Paused)?;
        }
        Ok(())
    }

    /// The prefix has been replayed: from here on the session is live.
    pub(super) fn go_live(&mut self) -> Result<(), EngineError> {
        let Some(r) = self.fork.take() else { return Ok(()) };
        let last_t = r.plan.events.last().map_or(0, |e| e.t);
        // Time goes on from the parent's, not from this process's start.
        self.t_offset = last_t.saturating_sub(self.clock.now_ms());
        let plan = r.plan;
        let unattended = plan.at_fork_point == AtForkPoint::GoOn;
        self.forked = Some(Forked { edit: plan.edit.clone(), unattended });
        self.emit(EventKind::Forked { origin: plan.origin, edit: plan.edit })?;
        // The user's changes and whatever arrived during the replay wait for
        // the next decision point, like any control.
        let mut queued = plan.controls;
        queued.append(&mut self.deferred);
        self.deferred = queued;
        match plan.at_fork_point {
            AtForkPoint::Pause => self.close_gate()?,
            // The parent was paused here, but nobody will resume a fork
            // that runs on by itself (`switchyard fork`): it goes on.
            AtForkPoint::GoOn => self.open_for_good()?,
            AtForkPoint::AsRecorded => {}
        }
        Ok(())
    }

    /// Applies, at a decision point, the controls the recorded session
    /// applied here, and echoes the gate's news; stops at the first event
    /// the engine itself must produce.
    pub(super) fn replay_controls(&mut self) -> Result<(), EngineError> {
        loop {
            let Some(next) = self.fork.as_ref().and_then(Replaying::next) else { return Ok(()) };
            match recorded_kind(&next.kind) {
                Recorded::Engine => return self.replay_halts(),
                Recorded::Echo => self.echo_recorded()?,
                Recorded::Control(Control::Lane { .. }) => return Ok(()),
                Recorded::Control(Control::SetBreakpoint { condition }) => {
                    let id = match &next.kind {
                        EventKind::BreakpointSet { id, .. } => *id,
                        _ => 0,
                    };
                    let c = if self.debug.breaks.iter().any(|b| b.id == id) {
                        Control::ToggleBreakpoint { id }
                    } else {
                        Control::SetBreakpoint { condition }
                    };
                    self.apply_control(c)?;
                }
                Recorded::Control(c) => self.apply_control(c)?,
            }
        }
    }

    /// A recorded run that the user restarted or stopped here ends the same
    /// way in the replay (those controls leave no event of their own).
    fn replay_halts(&mut self) -> Result<(), EngineError> {
        let Some(r) = self.fork.as_ref() else { return Ok(()) };
        let Some(next) = r.next() else { return Ok(()) };
        if let EventKind::RunFinished { outcome, .. } = &next.kind {
            match outcome {
                super::event::RunOutcome::Stopped => self.stop = true,
                super::event::RunOutcome::Restarted => {
                    self.restart = true;
                    if let Some(EventKind::TaskEdited { text, .. }) = r.plan.events.get(r.pos + 1).map(|e| &e.kind) {
                        self.edited_text = Some(text.clone());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The lane control the recorded session applied next, if that is
    /// what comes next.
    pub(super) fn replay_lane_control(&mut self) -> Option<(u32, LaneAction)> {
        let next = self.fork.as_ref()?.next()?;
        match next.kind {
            EventKind::LaneChanged { lane, action } => Some((lane, action)),
            _ => None,
        }
    }

    /// The user's decision on what waits for review, as the trace records
    /// it; the controls the user gave while it waited are applied first.
    /// `None` inside: nobody answered (the review passed on its own).
    pub(super) fn recorded_decision(&mut self, call: u64) -> Result<Option<Option<Decision>>, EngineError> {
        self.replay_controls()?;
        let Some(next) = self.fork.as_ref().and_then(Replaying::next) else { return Ok(None) };
        let decision = match &next.kind {
            EventKind::ReviewPassed { call: c, auto: true, .. } if *c == call => None,
            EventKind::ReviewPassed { call: c, .. } if *c == call => Some(Decision::Approve),
            EventKind::CallEdited { call: c, after, .. } if *c == call => {
                Some(Decision::EditArgs { args: after.clone() })
            }
            EventKind::CallRejected { call: c, note, .. } if *c == call => {
                Some(Decision::Reject { note: note.clone() })
            }
            EventKind::ResultEdited { call: c, after, .. } if *c == call => {
                Some(Decision::EditResult { value: after.clone() })
            }
            EventKind::ReplyEdited { call: c, after, .. } if *c == call => {
                Some(Decision::EditReply { text: after.clone() })
            }
            // A stop or restart while it waited (see `replay_halts`), or a divergence the next event will name.
            _ => return Ok(None),
        };
        Ok(Some(decision))
    }

    /// A step's lanes can produce nothing the trace records next.
    pub(super) fn replay_stuck(&self, waiting: &str) -> EngineError {
        let (index, recorded) =
            self.fork.as_ref().and_then(|r| r.next().map(|e| (r.pos + 1, brief(e)))).unwrap_or((0, "nothing".into()));
        EngineError::ForkDiverged { index, recorded, replayed: format!("{waiting} cannot produce it") }
    }

    /// Whether lane call `call` may start now. In a fork's prefix a lane
    /// starts where the trace's next event (after its recorded pauses) is
    /// that lane's call, so the lane controls recorded before it (a hold, a
    /// lane stepped first) are applied first, as they were; live, the gate
    /// decides.
    pub(super) fn lane_may_start(&mut self, call: u64) -> Result<bool, EngineError> {
        if self.replaying() {
            self.echo_recorded()?;
        }
        let Some(r) = self.fork.as_ref() else { return self.try_pass() };
        Ok(matches!(r.next().map(|e| &e.kind), Some(EventKind::ToolCall { call: c, .. }) if *c == call))
    }

    /// The lane whose recorded result comes next, by call.
    pub(super) fn replay_next_result(&self) -> Option<u64> {
        match self.fork.as_ref()?.next()?.kind {
            EventKind::ToolResult { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The recorded answer to model call `call`, if it is in the prefix;
    /// or the user's replacement, when this is the call at the fork point.
    pub(super) fn recorded_reply(&mut self, call: u64) -> Option<RecordedReply> {
        if let Some(r) = self.fork.as_ref() {
            let e = r.plan.replies.get(&call)?;
            return match &e.kind {
                EventKind::ModelReply { text, tool_calls, usage, latency_ms, wire, first_token_ms, capped, .. } => {
                    Some(RecordedReply {
                        result: Ok(ChatResponse {
                            wire: wire.clone(),
                            capped: capped.is_some(),
                            ..ChatResponse::new(text.clone(), tool_calls.clone(), *usage)
                        }),
                        latency_ms: *latency_ms,
                        first_token_ms: *first_token_ms,
                    })
                }
                EventKind::ModelFailed { error, latency_ms, .. } => Some(RecordedReply {
                    result: Err(ModelError::Other(error.clone())),
                    latency_ms: *latency_ms,
                    first_token_ms: None,
                }),
                _ => None,
            };
        }
        let f = self.forked.as_mut()?;
        match f.edit.as_ref()? {
            ForkEdit::Reply { call: c, text, .. } if *c == call => {
                let text = text.clone();
                f.edit = None;
                Some(RecordedReply {
                    result: Ok(ChatResponse::new(text, Vec::new(), Default::default())),
                    latency_ms: 0,
                    first_token_ms: None,
                })
            }
            _ => None,
        }
    }

    /// The recorded result of tool call `call`, if it is in the prefix; or
    /// the user's replacement, when this is the call at the fork point.
    pub(super) fn recorded_result(&mut self, call: u64) -> Option<RecordedResult> {
        if let Some(r) = self.fork.as_ref() {
            let e = r.plan.results.get(&call)?;
            return match &e.kind {
                EventKind::ToolResult { outcome, latency_ms, fault, .. } => Some(RecordedResult {
                    result: match outcome {
                        ToolOutcome::Ok { value } => Ok(value.clone()),
                        ToolOutcome::Err { error } => Err(error.clone()),
                    },
                    latency_ms: *latency_ms,
                    fault: *fault,
                }),
                _ => None,
            };
        }
        let f = self.forked.as_mut()?;
        match f.edit.as_ref()? {
            ForkEdit::Result { call: c, value, .. } if *c == call => {
                let value = value.clone();
                f.edit = None;
                Some(RecordedResult { result: Ok(value), latency_ms: 0, fault: None })
            }
            _ => None,
        }
    }

    /// BTP's plan as recorded, when the replay is at it: the experience it
    /// was made from has grown since (every run adds to it), so the plan is
    /// taken from the trace rather than made again.
    pub(super) fn recorded_plan(&self) -> Option<Vec<BudgetRow>> {
        match &self.fork.as_ref()?.next()?.kind {
            EventKind::PlanMade { rows, .. } => Some(rows.clone()),
            _ => None,
        }
    }

    /// The recorded event that comes next, when it is `PlanMade` (emitted as is).
    pub(super) fn recorded_plan_event(&self) -> Option<EventKind> {
        match &self.fork.as_ref()?.next()?.kind {
            k @ EventKind::PlanMade { .. } => Some(k.clone()),
            _ => None,
        }
    }

    /// atc: the user's program the recorded session ran next, if its next
    /// program came from the user.
    pub(super) fn recorded_user_program(&self) -> Option<String> {
        let r = self.fork.as_ref()?;
        r.plan.events[r.pos..].iter().find_map(|e| match &e.kind {
            EventKind::ProgramWritten { program, by_user, .. } => Some(by_user.then(|| program.clone())),
            EventKind::RunFinished { .. } => Some(None),
            _ => None,
        })?
    }
}
