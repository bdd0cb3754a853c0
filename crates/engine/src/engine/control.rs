//! What a user (the workbench, a test, a schedule) asks of a running engine.
//! Controls take effect at the engine's next decision point.

use serde::{Deserialize, Serialize};

use super::debug::{ApprovalPolicy, Condition, Decision};
use super::params::ParamChange;
use crate::tool::fault::{Fault, FaultMode};

/// What a user (or a test, or a schedule) asks of a running engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "control", rename_all = "snake_case")]
pub enum Control {
    Pause,
    Resume,
    /// Let exactly one model or tool call through, then pause again.
    Step,
    Stop,
    /// End the process but not the session: the trace ends with
    /// `Suspended`, and `switchyard resume` takes it up from there.
    Suspend,
    InjectFault {
        tool: String,
        fault: Fault,
    },
    ClearFault {
        tool: Option<String>,
    },
    /// Break the model calls of a role, or of a model by its name.
    InjectModelFault {
        target: String,
        fault: crate::model::fault::ModelFault,
    },
    /// Clear the model faults of one target, or of all.
    ClearModelFault {
        target: Option<String>,
    },
    EditScore {
        tool: String,
        score: f64,
    },
    SetParam {
        change: ParamChange,
    },
    /// Give a role another of the configured models.
    SwitchModel {
        role: crate::model::Role,
        model: String,
    },
    /// Abandon the current task and start it again.
    RestartTask,
    /// Replace the current task's text and start it again.
    EditTask {
        text: String,
    },
    /// Run this task (counted from 1) after the current one.
    PickTask {
        index: u32,
    },
    /// Milliseconds to wait before each call while running, so a person can
    /// follow the run; 0 runs flat out.
    SetPace {
        ms: u64,
    },
    /// Act on one lane (counted from 0) of the plan step now running.
    Lane {
        lane: u32,
        action: LaneAction,
    },
    /// Give a tool another category (rewoo's classifier labels).
    SetCategory {
        tool: String,
        category: String,
    },
    /// ATC's fix and continue: run this program (the user's edit) as the
    /// next round of the running program chain.
    EditProgram {
        program: String,
    },
    /// The user's decision on the call, result or reply `call` that waits.
    Decide {
        call: u64,
        decision: Decision,
    },
    /// Which calls wait for the user from now on.
    SetApproval {
        policy: ApprovalPolicy,
    },
    SetBreakpoint {
        condition: Condition,
    },
    ClearBreakpoint {
        id: u32,
    },
    /// Enable a disabled breakpoint, or disable an enabled one.
    ToggleBreakpoint {
        id: u32,
    },
    /// A viewer of the session from another process (`switchyard attach`,
    /// `ctl`): it came, went, or is sending a control (which comes next on
    /// the channel, as any control does), recorded with its name.
    Viewer {
        viewer: String,
        action: ViewerAction,
    },
    /// Not the user's: an MCP server's state changed (see `Notifier`).
    ServerState {
        server: String,
        state: crate::tool::mcp::ServerState,
        detail: Option<String>,
    },
}

/// What a viewer from another process did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ViewerAction {
    Attached,
    Detached,
    /// It sent this control (recorded before the control is applied).
    Sent {
        control: Box<Control>,
    },
}

/// What a user can do to one lane of the running step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum LaneAction {
    /// Keep the lane from starting while its siblings run on.
    Hold,
    /// Let a held lane start when the gate allows.
    Release,
    /// Let this one lane start now, even when paused or held.
    Step,
    /// Make the lane's call fail this way (a running call is cut short).
    Fail { fault: FaultMode },
}
