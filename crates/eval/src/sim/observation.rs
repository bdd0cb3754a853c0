//! Whether a tool's result helps: not an error, not "nothing found", not
//! garbage, not wrong arithmetic. The actor, the argument filler, the
//! evaluator, the judge and the solver all read results this one way.

use serde_json::Value;

use crate::strategy::prompt::{HistoryEntry, Observation};
use crate::tool::builtin;
use crate::tool::nothing_found::is_nothing_found;

pub(super) fn result_of(h: &HistoryEntry) -> &Value {
    match &h.observation {
        Observation::Result(v) => v,
        _ => &Value::Null,
    }
}

/// A result that helps: not an error or refusal, not "nothing found", not garbage.
pub(super) fn is_useful(obs: &Observation) -> bool {
    match obs {
        Observation::Result(v) => !is_nothing_found(v) && !is_garbage(v),
        Observation::Error(_) | Observation::Refused(_) => false,
    }
}

/// Text that is mostly symbols (what a garbage fault returns) is no answer.
fn is_garbage(v: &Value) -> bool {
    let Value::String(s) = v else { return false };
    let total = s.chars().count();
    if s.contains('\u{FFFD}') {
        return true;
    }
    if total < 8 {
        return false;
    }
    let readable = s.chars().filter(|c| c.is_alphanumeric() || c.is_whitespace()).count();
    (readable as f64) < 0.5 * total as f64
}

/// A calculation whose claimed result is not what its expression gives (a
/// careful reviewer re-does the arithmetic): misleading, worse than nothing.
pub(super) fn is_wrong_arithmetic(arguments: &Value, obs: &Observation) -> bool {
    let (Some(expr), Observation::Result(v)) = (arguments.get("expression").and_then(Value::as_str), obs) else {
        return false;
    };
    let Some(claimed) = v.get("result").and_then(Value::as_f64).or_else(|| v.as_f64()) else {
        return false;
    };
    match builtin::evaluate_expression(expr) {
        Ok(x) => (x - claimed).abs() > 1e-6 * x.abs().max(claimed.abs()).max(1.0),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn garbage_and_nothing_are_not_useful() {
        assert!(!is_useful(&Observation::Result(json!("Nothing Found"))));
        assert!(!is_useful(&Observation::Result(json!("#$%&'()*+,-./:;<=>?@[]^_`{|}~!#$%&"))));
        assert!(!is_useful(&Observation::Error("boom".into())));
        assert!(is_useful(&Observation::Result(json!({"capital": "Paris"}))));
        assert!(is_useful(&Observation::Result(json!("A sentence that says something."))));
    }
}
