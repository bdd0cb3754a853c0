//! Builtin tools: Rust functions run in process.
use serde_json::Value;

use super::ToolResult;

/// Per-call context: the seeded generator a noisy tool draws from.
pub struct BuiltinCtx {
    pub rng: rand_chacha::ChaCha8Rng,
}

pub type BuiltinFn = fn(&Value, &mut BuiltinCtx) -> ToolResult;

pub fn lookup(_function: &str) -> Option<BuiltinFn> {
    None
}
