//! Concurrent calls as lanes: ReWOO's plan and its steps' lanes, and a
//! bridged agent's calls of one wave, each lane waiting, held, running or
//! ended.

use serde_json::Value;

use crate::engine::event::RewooStep;
use crate::tool::CallSource;
use crate::tool::fault::FaultMode;

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
    /// A bridged agent's calls, not a plan step: they arrive one by one
    /// and the wave is never finished (`evidence` and `thought` are empty).
    pub agent: bool,
}

impl StepView {
    /// A bridged agent's wave of calls, empty.
    pub fn agent_wave() -> Self {
        StepView {
            evidence: 0,
            thought: String::new(),
            lanes: Vec::new(),
            finished: false,
            tokens_saved: 0,
            agent: true,
        }
    }

    /// Whether some lane has not ended.
    pub fn open(&self) -> bool {
        self.lanes.iter().any(|l| matches!(l.state, LaneState::Waiting | LaneState::Held | LaneState::Running))
    }
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
