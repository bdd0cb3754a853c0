//! How a tool says it found nothing. Executors (an injected fault), builtins,
//! BTP's helpfulness rule, ReWOO's null filter and the simulated model all
//! read results the same way, so the marker lives apart from any of them.

use serde_json::Value;

/// What an injected "nothing found" fault returns.
pub const NOTHING_FOUND: &str = "Nothing Found";

/// Phrases tools use to say they found nothing.
const NOTHING_PHRASES: [&str; 3] = ["nothing found", "no results", "not found"];
/// A longer string that merely mentions "not found" is an answer, not an empty one.
const NOTHING_MAX_LEN: usize = 100;

/// Whether a result says nothing was found: a "Nothing Found"-like string,
/// null, an empty array or object, or an object whose only value is such.
pub fn is_nothing_found(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => {
            let s = s.trim().to_lowercase();
            s.is_empty() || (s.len() <= NOTHING_MAX_LEN && NOTHING_PHRASES.iter().any(|p| s.contains(p)))
        }
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => match o.len() {
            0 => true,
            1 => o.values().all(is_nothing_found),
            _ => false,
        },
        Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nothing_found_shapes() {
        for v in [
            json!(null),
            json!("Nothing Found"),
            json!("  no results.  "),
            json!("Error: city NOT FOUND"),
            json!(""),
            json!([]),
            json!({}),
            json!({"results": []}),
            json!({"data": {"message": "nothing found"}}),
        ] {
            assert!(is_nothing_found(&v), "{v}");
        }
        for v in [
            json!(0),
            json!(false),
            json!("Paris"),
            json!([1]),
            json!({"results": [], "total": 0}),
            json!("x".repeat(200) + " not found"),
        ] {
            assert!(!is_nothing_found(&v), "{v}");
        }
    }
}
