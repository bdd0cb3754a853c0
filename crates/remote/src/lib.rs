//! Sessions reached from another process: every session (`ui`, `run`,
//! `gateway`, `mcp serve`) serves a control endpoint on a Unix socket
//! beside a small record of itself; `switchyard ps`, `attach` and `ctl`
//! find it there, follow its events from any cursor and send it the
//! controls the workbench has. The engine knows nothing of this: the
//! endpoint is one more subscriber of its events and one more sender of
//! its controls.

pub mod client;
mod log;
pub mod protocol;
pub mod registry;
pub mod server;

pub use client::{Connection, RemoteError};
pub use protocol::{PROTOCOL_VERSION, Status};
pub use registry::{EvalOf, Liveness, Registry, SessionKind, SessionRecord};
pub use server::{Endpoint, EndpointGuard, TcpControl};

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::text;
use switchyard_engine::engine;
