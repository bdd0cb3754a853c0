//! OpenTelemetry both ways. Out: a session's events as GenAI spans
//! (`spans`), sent over OTLP/HTTP (`otlp`) live from a running session or
//! after the fact from a trace file. In: an OTLP/HTTP receiver (`receive`)
//! that turns an instrumented agent's GenAI spans into a session's events.
//!
//! ```text
//! session
//! └─ invoke_agent                 one per run
//!    ├─ plan                      BTP's plan; rewoo's, with the planner's chat inside
//!    ├─ chat {model}              each model call
//!    └─ execute_tool {tool}       each tool call
//! ```
//!
//! Message, argument and result content is exported only when asked for
//! (`content`); a task's text and its answer count as content too.

mod otlp;
pub mod receive;
mod settings;
pub mod spans;

pub use otlp::{ExportSummary, LiveExport, export_trace};
pub use settings::{OtelConfig, OtelError, OtelSettings};
pub use spans::{AttrValue, Span, SpanFold, SpanKind, Status};

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::{model, text, tool};
use switchyard_engine::engine;
