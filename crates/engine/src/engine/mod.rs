//! The engine: the conductor that runs a strategy over a task list. It
//! passes a gate before every model and tool call, obeys control messages,
//! applies BTP, keeps the learnt state, and emits versioned events to
//! subscribers and to the trace. It knows nothing of a terminal, and of
//! strategies only the [`Strategy`] trait (`host.rs`).

pub mod agent;
pub mod budgeting;
pub mod clock;
pub mod control;
pub mod debug;
pub mod event;
pub mod fold;
pub mod fork;
pub mod host;
pub mod label_cache;
pub mod models;
pub mod params;
pub mod trace;

mod approval;
mod breakpoints;
mod calls;
mod conductor;
mod conductor_host;
mod decision_point;
mod error;
mod expecting;
mod gate;
mod lanes;
mod model_faults;
mod replay;
mod run_tally;

pub use clock::{Clock, LogicalClock, SystemClock};
pub use conductor::{Engine, EngineHandle, EngineSetup, Notifier, Scheduled, SessionOutcome};
pub use control::{Control, LaneAction, ViewerAction};
pub use error::EngineError;
pub use event::{Event, EventKind, StrategyKind};
pub use fold::SessionState;
pub use host::{CostShape, Halt, Host, Labels, LaneDone, LaneRequest, Strategy};
pub use lanes::is_filtered;
pub use model_faults::{check_model_target, fault_control};
pub use models::{ModelSlot, Models};
pub use params::{Narrowing, ParamChange, Params};
