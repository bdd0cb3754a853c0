//! What is read back from a recorded trace: the difference of two
//! (`trace diff`), the successful runs as trajectories for ToolNet's static
//! graph (`trace to-trajectories`), and a session's summary as `run` and
//! `trace show` print it.

pub mod diff;
pub mod import;
pub mod session_text;
pub mod trajectories;
