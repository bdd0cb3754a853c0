//! API-Bank's call accuracy: a task is one step of a dialogue, and it is
//! solved when the API request made at that step is the gold one. API-Bank's
//! evaluator asks the model for one request, runs it, and compares the
//! API's `input` (and so its output) with the annotated call's; here the
//! request is the first call the run made, and its arguments are compared
//! with the gold `input` directly:
//!
//! - the tool's name must be the gold API's;
//! - the arguments must match key for key, in any order: strings after
//!   trimming, numbers by value, and a value the model wrote as text (`"2"`,
//!   `"['John', 'Jane']"`, `"True"`) by what the text reads as, since
//!   API-Bank's APIs read their arguments from text the same way;
//! - `ToolSearcher` is judged by its name alone: API-Bank judges it by the
//!   tool its embedding search returns, which cannot be run here, and any
//!   keywords that find the tool are right.
//!
//! Later calls of a run do not count: API-Bank judges one request per step,
//! and the path measures (Path%, Prec%) already cover the whole run.

use serde_json::Value;

use super::results::{CallMade, TaskRow};
use crate::dataset::pylit;
use crate::task::GoldCall;

/// Tools judged by name alone (see the module's comment).
pub const NAME_ONLY: [&str; 1] = [crate::dataset::apibank::TOOL_SEARCHER];

/// Whether `made` is the gold call.
pub fn call_correct(made: &CallMade, gold: &GoldCall) -> bool {
    if made.tool != gold.tool {
        return false;
    }
    NAME_ONLY.contains(&gold.tool.as_str()) || args_match(&made.args, &gold.args)
}

/// Whether two argument objects are the same call's; no arguments (null)
/// and an empty object are the same.
pub fn args_match(made: &Value, gold: &Value) -> bool {
    let empty = Value::Object(serde_json::Map::new());
    let as_object = |v: &Value| if v.is_null() { empty.clone() } else { v.clone() };
    values_match(&as_object(made), &as_object(gold))
}

/// Whether a value the model gave is the gold value (see the module's comment).
pub fn values_match(made: &Value, gold: &Value) -> bool {
    match (made, gold) {
        (Value::Object(a), Value::Object(b)) => {
            // A key given as null and a key left out say the same.
            let null = Value::Null;
            a.keys().chain(b.keys()).all(|k| values_match(a.get(k).unwrap_or(&null), b.get(k).unwrap_or(&null)))
        }
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_match(x, y)),
        (Value::String(a), Value::String(b)) => a.trim() == b.trim(),
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
            _ => a == b,
        },
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Null, Value::Null) => true,
        (Value::String(s), other) | (other, Value::String(s)) => {
            read_text(s).is_some_and(|v| !v.is_string() && values_match(&v, other))
        }
        _ => false,
    }
}

/// What a value written as text reads as: JSON, else a Python literal.
fn read_text(s: &str) -> Option<Value> {
    let t = s.trim();
    serde_json::from_str(t).ok().or_else(|| pylit::parse(t).ok())
}

/// A row's verdict: None when its task has no gold call; else whether the
/// first call the run made was the gold call (a run that called nothing
/// missed it).
pub fn row_correct(row: &TaskRow) -> Option<bool> {
    let gold = row.gold_call.as_ref()?;
    Some(row.calls.first().is_some_and(|c| call_correct(c, gold)))
}

/// API-Bank call accuracy in percent over the rows with a gold call; None
/// when no row has one.
pub fn call_accuracy<'a>(rows: impl IntoIterator<Item = &'a TaskRow>) -> Option<f64> {
    let (mut judged, mut correct) = (0usize, 0usize);
    for ok in rows.into_iter().filter_map(row_correct) {
        judged += 1;
        correct += usize::from(ok);
    }
    (judged > 0).then(|| 100.0 * correct as f64 / judged as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn made(tool: &str, args: Value) -> CallMade {
        CallMade { tool: tool.into(), args }
    }

    fn gold(tool: &str, args: Value) -> GoldCall {
        GoldCall { tool: tool.into(), args }
    }

    #[test]
    fn key_order_does_not_matter_and_strings_are_trimmed() {
        let g = gold("AddAlarm", json!({"token": "abc", "time": "2023-09-12 13:50:00"}));
        assert!(call_correct(&made("AddAlarm", json!({"time": " 2023-09-12 13:50:00", "token": "abc"})), &g));
        assert!(!call_correct(&made("AddAlarm", json!({"time": "2023-09-12 13:51:00", "token": "abc"})), &g));
        assert!(!call_correct(&made("AddAgenda", json!({"time": "2023-09-12 13:50:00", "token": "abc"})), &g));
        assert!(!call_correct(&made("AddAlarm", json!({"token": "abc"})), &g), "a missing argument");
        assert!(!call_correct(&made("AddAlarm", json!({"token": "abc", "time": "2023-09-12 13:50:00", "x": 1})), &g));
        assert!(!call_correct(&made("AddAlarm", json!({"token": "ABC", "time": "2023-09-12 13:50:00"})), &g));
    }

    #[test]
    fn numbers_compare_by_value_also_when_written_as_text() {
        let g = gold("BookHotel", json!({"room_count": 2, "price": 99.5, "name": "Hilton"}));
        assert!(call_correct(&made("BookHotel", json!({"room_count": 2.0, "price": 99.50, "name": "Hilton"})), &g));
        assert!(call_correct(&made("BookHotel", json!({"room_count": "2", "price": "99.5", "name": "Hilton"})), &g));
        assert!(!call_correct(&made("BookHotel", json!({"room_count": "3", "price": 99.5, "name": "Hilton"})), &g));
        assert!(!call_correct(&made("BookHotel", json!({"room_count": "two", "price": 99.5, "name": "Hilton"})), &g));
        // A gold number written as text (API-Bank's `param_dict`) is read the same way.
        assert!(values_match(&json!(1), &json!("1")));
        assert!(!values_match(&json!("1"), &json!("1.0")), "two texts compare as texts");
    }

    #[test]
    fn lists_and_flags_written_as_python_text_are_read() {
        let g = gold("AddMeeting", json!({"attendees": ["John", "Jane"], "online": true}));
        assert!(call_correct(&made("AddMeeting", json!({"attendees": "['John', 'Jane']", "online": "True"})), &g));
        assert!(call_correct(&made("AddMeeting", json!({"attendees": "[\"John\", \"Jane\"]", "online": "true"})), &g));
        assert!(!call_correct(&made("AddMeeting", json!({"attendees": ["Jane", "John"], "online": true})), &g));
    }

    #[test]
    fn no_arguments_tool_searcher_and_rows() {
        assert!(call_correct(&made("GetToday", json!({})), &gold("GetToday", Value::Null)));
        assert!(call_correct(&made("GetToday", Value::Null), &gold("GetToday", json!({}))));
        let ts = gold("ToolSearcher", json!({"keywords": "add schedule"}));
        assert!(call_correct(&made("ToolSearcher", json!({"keywords": "agenda"})), &ts));

        let row = |calls: Vec<CallMade>, gold_call: Option<GoldCall>| {
            let mut r: TaskRow = serde_json::from_value(json!({
                "setting": "react", "strategy": "react", "index": 0, "task_id": "t", "outcome": "answered",
                "steps": 1, "tool_calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0
            }))
            .unwrap();
            r.calls = calls;
            r.gold_call = gold_call;
            r
        };
        let g = gold("GetToday", json!({}));
        let rows = [
            row(vec![made("GetToday", json!({}))], Some(g.clone())),
            row(vec![made("Calculator", json!({})), made("GetToday", json!({}))], Some(g.clone())),
            row(vec![], Some(g)),
            row(vec![made("X", json!({}))], None),
        ];
        assert_eq!(rows.iter().map(row_correct).collect::<Vec<_>>(), [Some(true), Some(false), Some(false), None]);
        let acc = call_accuracy(&rows).unwrap();
        assert!((acc - 100.0 / 3.0).abs() < 1e-9, "{acc}");
        assert_eq!(call_accuracy(&rows[3..]), None);
    }
}
