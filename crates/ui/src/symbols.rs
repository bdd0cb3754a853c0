//! The state symbols shared by every pane, so meaning never rests on colour alone.

pub const OK: &str = "✓";
pub const FAILING: &str = "✗";
pub const FAULT: &str = "⚡";
pub const FORBIDDEN: &str = "⊘";
pub const BLACKLISTED: &str = "■";
pub const RUNNING: &str = "…";
/// A lane waiting for its gate.
pub const WAITING: &str = "◦";
/// A lane the user holds (as the status bar shows a pause).
pub const HELD: &str = "‖";
/// A tool server being restarted.
pub const RESTARTING: &str = "↻";
/// A result the solver sees as null.
pub const NULL: &str = "∅";
