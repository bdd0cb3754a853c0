//! How builtins write numbers into their results. Shared by the registry's
//! functions and the lookups, so an amount reads the same from any tool.

use serde_json::{Value, json};

/// A JSON number that prints as an integer when it is one, so 14.0 shows as 14.
pub(super) fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 { json!(x as i64) } else { json!(x) }
}
