//! The engine: the conductor that runs a strategy over a task list. It
//! passes a gate before every model and tool call, obeys control messages,
//! applies BTP, keeps the learnt state, and emits versioned events to
//! subscribers and to the trace. It knows nothing of a terminal, and of
//! strategies only the [`Strategy`] trait (`host.rs`).

pub mod btp;
pub mod clock;
pub mod control;
pub mod debug;
pub mod debug_view;
pub mod event;
pub mod fork;
pub mod graph_history;
pub mod host;
pub mod label_cache;
pub mod model_fault_view;
pub mod models;
pub mod params;
pub mod program_view;
pub mod state;
pub mod trace;
pub mod views;

mod approval;
mod breakpoints;
mod calls;
mod conductor;
mod decision_point;
mod error;
mod gate;
mod lanes;
mod model_faults;
mod replay;
mod serve;
mod tally;

pub use clock::{Clock, LogicalClock, SystemClock};
pub use conductor::{Engine, EngineHandle, EngineSetup, Notifier, Scheduled, SessionOutcome};
pub use control::{Control, LaneAction};
pub use error::EngineError;
pub use event::{Event, EventKind, StrategyKind};
pub use host::{CostShape, Halt, Host, Labels, LaneDone, LaneRequest, Strategy};
pub use lanes::is_filtered;
pub use model_faults::{check_model_target, fault_control};
pub use models::{ModelSlot, Models};
pub use params::{ParamChange, Params};
pub use state::SessionState;
