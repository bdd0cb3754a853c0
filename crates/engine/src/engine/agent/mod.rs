//! The engine's side of an outside agent: its model and tool calls handed
//! over by the gateways (`calls`), each made a lane of the session
//! (`lanes`, their bookkeeping in `state`), the conversations one agent
//! process holds told apart (`threads`), its own functions seen from the
//! wire (`tools`), and the library narrowed for what it asks (`narrow`).
//! The gateways themselves are `switchyard-bridge`'s; the strategy that
//! starts the agent is `strategy::bridge`.

pub mod calls;
pub(super) mod lanes;
pub(super) mod narrow;
pub(super) mod state;
pub(super) mod threads;
pub(super) mod tools;
