//! OTLP/HTTP in: spans an instrumented agent exports (the GenAI semantic
//! conventions' `invoke_agent`, `chat` and `execute_tool` spans) become a
//! Switchyard session's events, so a trace written from them opens in
//! `replay`, `trace diff`, `scan` and `to-trajectories` like any other.
//!
//! ```text
//! body ─ decode ─▶ spans ─ pending ─▶ whole traces ─ genai ─▶ events
//! ```
//!
//! `decode` reads the protocol, `pending` holds each trace until it is
//! whole, `genai` reads the conventions, `receiver` puts the three
//! together, `server` is the HTTP side.

mod decode;
mod genai;
mod pending;
mod receiver;
mod server;

pub use decode::{DecodeError, Encoding, InSpan};
pub use genai::Counts;
pub use receiver::{Accepted, IDLE_MS, Receiver, WAITING_CAP};
pub use server::{ServeError, serve};
