//! Reading a builtin's arguments: each function re-checks what it reads and
//! answers a bad value with a `Failed` error naming the argument.

use serde_json::Value;

use crate::tool::{ToolError, ToolErrorKind};

pub(super) fn failed(message: impl Into<String>) -> ToolError {
    ToolError::new(ToolErrorKind::Failed, message)
}

pub(super) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    match args.get(name) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
        Some(Value::String(_)) => Err(failed(format!("'{name}' must not be empty"))),
        Some(other) => Err(failed(format!("'{name}' must be a string, got {other}"))),
        None => Err(failed(format!("missing argument '{name}'"))),
    }
}

/// A number, also accepted as a numeric string ("12.5"), since weaker
/// models quote numbers.
pub(super) fn num_arg(args: &Value, name: &str) -> Result<f64, ToolError> {
    let v = match args.get(name) {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
        None => return Err(failed(format!("missing argument '{name}'"))),
    };
    v.filter(|x| x.is_finite()).ok_or_else(|| failed(format!("'{name}' must be a number, got {}", args[name])))
}

pub(super) fn int_arg(args: &Value, name: &str) -> Result<i64, ToolError> {
    let x = num_arg(args, name)?;
    if x.fract() != 0.0 || x.abs() > 9.0e15 {
        return Err(failed(format!("'{name}' must be a whole number, got {x}")));
    }
    Ok(x as i64)
}
