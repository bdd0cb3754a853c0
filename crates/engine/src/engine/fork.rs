//! Time travel: a session forked from a recorded trace at an event. The
//! events before the fork point are replayed, not re-run: every model reply
//! and tool result there is the trace's own, every control the user gave
//! there is applied again where it took effect, and each event the engine
//! emits is checked against the recorded one and written as recorded. So the
//! prefix costs nothing, needs no model server, and is identical event for
//! event; from the fork point on the models and tools are live.
//!
//! What the trace does not hold (the tool library, the configured models,
//! the label cache) must be what it was; if it is not, the engine stops at
//! the first event that differs and says which.

use std::collections::HashMap;

use serde_json::Value;

use super::control::Control;
use super::event::{Event, EventKind, ToolOutcome};
pub use super::event::{ForkEdit, ForkOrigin};
use crate::model::{ChatResponse, ModelError};
use crate::tool::ToolResult;
use crate::tool::fault::FaultMode;

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum ForkError {
    #[error("cannot fork at event {at}: the trace has {total} events (0 to {total})")]
    OutOfRange { at: usize, total: usize },
    #[error("cannot fork at event {at}: the session had ended there; fork before its last event")]
    AfterEnd { at: usize },
    #[error("cannot fork at event 0: the session's first event (SessionStarted) must be replayed")]
    BeforeStart,
    #[error(
        "cannot fork at event {at}: the session was suspended at its event {suspended}; fork at {suspended} or before, or resume it"
    )]
    AfterSuspend { at: usize, suspended: usize },
    #[error(
        "the session finished ({runs} runs): there is nothing to resume; `switchyard fork` goes on from an earlier event"
    )]
    Finished { runs: u32 },
    #[error("the trace does not start with SessionStarted: it is not a whole session")]
    NoStart,
    #[error(
        "the cursor is on {found}, not on a ModelReply or ToolResult: only the answer at the fork point can be replaced"
    )]
    NothingToEdit { found: String },
    #[error("the replacement result is not JSON: {0}")]
    BadResult(String),
}

/// A fork to replay: the parent's first `at` events, indexed by call.
#[derive(Clone, Debug)]
pub struct ForkPlan {
    pub origin: ForkOrigin,
    pub(super) events: Vec<Event>,
    pub(super) replies: HashMap<u64, Event>,
    pub(super) results: HashMap<u64, Event>,
    pub(super) edit: Option<ForkEdit>,
    /// The user's changes, applied at the first decision point after the fork.
    pub controls: Vec<Control>,
    pub at_fork_point: AtForkPoint,
}

/// What a fork does at its fork point.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AtForkPoint {
    /// Nobody looks (`switchyard fork`): it runs on, and what the parent
    /// held there (a pause, a held lane) is let go.
    #[default]
    GoOn,
    /// Pause there, so the user can change things first (the workbench).
    Pause,
    /// Stay as the parent was there: paused, holding a lane, waiting for
    /// an approval (`switchyard resume`).
    AsRecorded,
}

/// Whether a session can be forked after the first `at` events of its
/// trace (the workbench asks before it leaves a replay for the fork).
pub fn check_fork_point(events: &[Event], at: usize) -> Result<(), ForkError> {
    if at > events.len() {
        return Err(ForkError::OutOfRange { at, total: events.len() });
    }
    if at == events.len() && matches!(events.last().map(|e| &e.kind), Some(EventKind::SessionFinished { .. })) {
        return Err(ForkError::AfterEnd { at });
    }
    if at == 0 {
        return Err(ForkError::BeforeStart);
    }
    if let Some(k) = events[..at].iter().position(|e| matches!(e.kind, EventKind::Suspended)) {
        return Err(ForkError::AfterSuspend { at, suspended: k });
    }
    if !matches!(events.first().map(|e| &e.kind), Some(EventKind::SessionStarted { .. })) {
        return Err(ForkError::NoStart);
    }
    Ok(())
}

/// Where a suspended (or killed) session takes up again: before its
/// `Suspended` event, or after its last complete event when the process
/// was killed.
pub fn resume_point(events: &[Event]) -> Result<usize, ForkError> {
    if let Some(k) = events.iter().position(|e| matches!(e.kind, EventKind::Suspended)) {
        return Ok(k);
    }
    if let Some(EventKind::SessionFinished { runs, .. }) = events.last().map(|e| &e.kind) {
        return Err(ForkError::Finished { runs: *runs });
    }
    Ok(events.len())
}

impl ForkPlan {
    /// The plan to replay `events[..at]` of the trace `parent`.
    pub fn new(parent: &str, events: &[Event], at: usize) -> Result<ForkPlan, ForkError> {
        check_fork_point(events, at)?;
        let prefix = events[..at].to_vec();
        let mut replies = HashMap::new();
        let mut results = HashMap::new();
        for e in &prefix {
            match &e.kind {
                EventKind::ModelReply { call, .. } | EventKind::ModelFailed { call, .. } => {
                    replies.insert(*call, e.clone());
                }
                EventKind::ToolResult { call, .. } => {
                    results.insert(*call, e.clone());
                }
                _ => {}
            }
        }
        Ok(ForkPlan {
            origin: ForkOrigin { parent: parent.to_string(), at: at as u32, resumed: false },
            events: prefix,
            replies,
            results,
            edit: None,
            controls: Vec::new(),
            at_fork_point: AtForkPoint::GoOn,
        })
    }

    /// Replace the answer recorded at the fork point (`events[at]`, the
    /// event the cursor is on) with the user's: a model reply's text, or a
    /// tool result as JSON (plain text that is not JSON is taken as a string).
    pub fn edit_answer(&mut self, all: &[Event], text: &str) -> Result<(), ForkError> {
        let at = self.origin.at as usize;
        let found = all.get(at).map_or_else(|| "the end of the trace".to_string(), |e| e.kind.name().to_string());
        self.edit = match all.get(at).map(|e| &e.kind) {
            Some(EventKind::ModelReply { call, text: before, .. }) => {
                Some(ForkEdit::Reply { call: *call, before: before.clone(), text: text.to_string() })
            }
            Some(EventKind::ToolResult { call, tool, outcome, .. }) => {
                let before = match outcome {
                    ToolOutcome::Ok { value } => value.clone(),
                    ToolOutcome::Err { error } => serde_json::to_value(error).unwrap_or(Value::Null),
                };
                let value = match serde_json::from_str::<Value>(text.trim()) {
                    Ok(v) => v,
                    Err(_) if !text.trim_start().starts_with(['{', '[']) => Value::String(text.to_string()),
                    Err(e) => return Err(ForkError::BadResult(e.to_string())),
                };
                Some(ForkEdit::Result { call: *call, tool: tool.clone(), before, value })
            }
            _ => return Err(ForkError::NothingToEdit { found }),
        };
        Ok(())
    }

    /// The recorded first event: where the session's settings come from.
    pub fn session_started(&self) -> &Event {
        &self.events[0]
    }

    /// The recorded events that will be replayed.
    pub fn prefix(&self) -> &[Event] {
        &self.events
    }
}

/// The fork under way: how far the replay has got.
pub(super) struct Replaying {
    pub(super) plan: ForkPlan,
    /// Recorded events emitted (and matched) so far.
    pub(super) pos: usize,
}

impl Replaying {
    pub(super) fn new(plan: ForkPlan) -> Self {
        Replaying { plan, pos: 0 }
    }

    pub(super) fn next(&self) -> Option<&Event> {
        self.plan.events.get(self.pos)
    }
}

/// After the fork point: what is still to do once.
pub(super) struct Forked {
    pub(super) edit: Option<ForkEdit>,
    /// Nobody looks at the fork point (`switchyard fork`): what the parent
    /// held there is let go, as nobody would release it.
    pub(super) unattended: bool,
}

/// A recorded model answer, as the model would have given it.
pub(super) struct RecordedReply {
    pub(super) result: Result<ChatResponse, ModelError>,
    pub(super) latency_ms: u64,
    pub(super) first_token_ms: Option<u64>,
}

/// A recorded tool answer.
pub(super) struct RecordedResult {
    pub(super) result: ToolResult,
    pub(super) latency_ms: u64,
    pub(super) fault: Option<FaultMode>,
}

/// What the replay does with a recorded event that no call produced.
pub(super) enum Recorded {
    /// A control the user gave: applied again, which emits the event.
    Control(Control),
    /// The gate's own news or a server's: emitted as recorded.
    Echo,
    /// The engine emits it itself.
    Engine,
}

pub(super) fn recorded_kind(kind: &EventKind) -> Recorded {
    match kind {
        EventKind::FaultInjected { tool, fault } => {
            Recorded::Control(Control::InjectFault { tool: tool.clone(), fault: *fault })
        }
        EventKind::FaultCleared { tool } => Recorded::Control(Control::ClearFault { tool: tool.clone() }),
        EventKind::ScoreEdited { tool, score, .. } => {
            Recorded::Control(Control::EditScore { tool: tool.clone(), score: *score })
        }
        EventKind::ParamChanged { change, .. } => Recorded::Control(Control::SetParam { change: change.clone() }),
        EventKind::ModelSwitched { role, model, .. } => {
            Recorded::Control(Control::SwitchModel { role: *role, model: model.name.clone() })
        }
        EventKind::TaskPicked { index } => Recorded::Control(Control::PickTask { index: *index }),
        EventKind::PaceChanged { ms } => Recorded::Control(Control::SetPace { ms: *ms }),
        EventKind::CategoryEdited { tool, category } => {
            Recorded::Control(Control::SetCategory { tool: tool.clone(), category: category.clone() })
        }
        EventKind::LaneChanged { lane, action } => Recorded::Control(Control::Lane { lane: *lane, action: *action }),
        EventKind::ModelFaultInjected { target, fault } => {
            Recorded::Control(Control::InjectModelFault { target: target.clone(), fault: *fault })
        }
        EventKind::ModelFaultCleared { target } => {
            Recorded::Control(Control::ClearModelFault { target: target.clone() })
        }
        EventKind::ApprovalSet { policy } => Recorded::Control(Control::SetApproval { policy: policy.clone() }),
        // Set, or (for a breakpoint that exists) enabled or disabled: see `replay_controls`.
        EventKind::BreakpointSet { condition, .. } => {
            Recorded::Control(Control::SetBreakpoint { condition: condition.clone() })
        }
        EventKind::BreakpointCleared { id } => Recorded::Control(Control::ClearBreakpoint { id: *id }),
        EventKind::Paused
        | EventKind::Resumed
        | EventKind::Stepped
        | EventKind::ServerState { .. }
        | EventKind::ControlRejected { .. }
        | EventKind::Viewer { .. }
        | EventKind::Forked { .. } => Recorded::Echo,
        _ => Recorded::Engine,
    }
}

/// Whether the replay writes recorded events of this kind as they are.
pub(super) fn echoed(kind: &EventKind) -> bool {
    matches!(recorded_kind(kind), Recorded::Echo)
}
