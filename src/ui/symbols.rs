//! The state symbols shared by every pane, so meaning never rests on colour alone.

pub const OK: &str = "✓";
pub const FAILING: &str = "✗";
pub const FAULT: &str = "⚡";
pub const FORBIDDEN: &str = "⊘";
pub const BLACKLISTED: &str = "■";
pub const RUNNING: &str = "…";
