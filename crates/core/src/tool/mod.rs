//! Tools: their specs, the library loaded from manifests, the executors that
//! really run them and the fault-injection layer in front of the executors.

pub mod builtin;
pub mod child;
mod command;
mod error;
pub mod exec;
pub mod fault;
mod file_options;
mod functions;
mod http;
mod library;
pub mod limits;
pub mod listing;
pub mod manifest;
mod manifest_error;
mod manifest_raw;
pub mod mcp;
pub mod nothing_found;
mod openapi;
mod schema_refs;
mod source;
pub mod sources;
mod spec;
pub mod synthesized;
pub mod tape;

pub use command::read_stdout as read_command_stdout;
pub use error::{ToolError, ToolErrorKind, ToolResult};
pub use file_options::FileOptions;
pub use http::read_body as read_http_body;
pub use library::{ToolBrief, ToolLibrary};
pub use openapi::operation_names;
pub use source::CallSource;
pub use spec::{ExecutorSpec, HeaderValue, ToolSpec};
