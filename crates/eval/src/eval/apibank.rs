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

use std::collections::HashMap;
use std::path::{Path, PathBuf};

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

/// One `run --trace` file's API-Bank figures: the first call of each run
/// of a task with a gold call, judged.
#[derive(Debug, serde::Serialize)]
pub struct TraceScore {
    pub trace: PathBuf,
    pub strategy: String,
    pub runs: usize,
    /// Runs whose first call named the gold tool.
    pub name_correct: usize,
    /// Runs whose first call was the gold call.
    pub call_correct: usize,
    pub call_acc_pct: f64,
    /// Runs whose gold tool is judged by name alone (ToolSearcher), and
    /// the accuracy over the others.
    pub name_only: usize,
    pub call_acc_others_pct: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}, line {line}: not a trace event: {source}")]
    Event { path: PathBuf, line: usize, source: serde_json::Error },
    #[error("{0}: no run of a task with a gold call (is it a `run --trace` of these tasks?)")]
    NoGoldRun(PathBuf),
}

/// Score the trace at `path` against the gold calls by task id.
pub fn score_trace(path: &Path, gold: &HashMap<String, GoldCall>) -> Result<TraceScore, ScoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScoreError::Read { path: path.to_path_buf(), source })?;
    // run number → (task id, first call)
    let mut runs: Vec<(u64, String, Option<CallMade>)> = Vec::new();
    let mut strategy = String::from("?");
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e: Value = serde_json::from_str(line).map_err(|source| ScoreError::Event {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        })?;
        let run = e.get("run").and_then(Value::as_u64).unwrap_or(0);
        match e.get("type").and_then(Value::as_str) {
            Some("SessionStarted") => {
                if let Some(s) = e.get("strategy").and_then(Value::as_str) {
                    strategy = s.to_string();
                }
            }
            Some("RunStarted") => {
                let id = e.get("task_id").and_then(Value::as_str).unwrap_or_default().to_string();
                runs.push((run, id, None));
            }
            Some("ToolCall") => {
                if let Some((_, _, first @ None)) = runs.iter_mut().rev().find(|r| r.0 == run) {
                    let tool = e.get("tool").and_then(Value::as_str).unwrap_or_default().to_string();
                    *first = Some(CallMade { tool, args: e.get("args").cloned().unwrap_or(Value::Null) });
                }
            }
            _ => {}
        }
    }
    let judged: Vec<(&GoldCall, Option<&CallMade>)> =
        runs.iter().filter_map(|(_, id, first)| Some((gold.get(id)?, first.as_ref()))).collect();
    if judged.is_empty() {
        return Err(ScoreError::NoGoldRun(path.to_path_buf()));
    }
    let name_correct = judged.iter().filter(|(g, c)| c.is_some_and(|c| c.tool == g.tool)).count();
    let call_ok = judged.iter().filter(|(g, c)| c.is_some_and(|c| call_correct(c, g))).count();
    let by_name = |g: &GoldCall| NAME_ONLY.contains(&g.tool.as_str());
    let name_only = judged.iter().filter(|(g, _)| by_name(g)).count();
    let others_ok = judged.iter().filter(|(g, c)| !by_name(g) && c.is_some_and(|c| call_correct(c, g))).count();
    let others = judged.len() - name_only;
    Ok(TraceScore {
        trace: path.to_path_buf(),
        strategy,
        runs: judged.len(),
        name_correct,
        call_correct: call_ok,
        call_acc_pct: 100.0 * call_ok as f64 / judged.len() as f64,
        name_only,
        call_acc_others_pct: (others > 0).then(|| 100.0 * others_ok as f64 / others as f64),
    })
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

    fn trace_file(lines: &[Value]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        for l in lines {
            use std::io::Write;
            writeln!(f, "{l}").unwrap();
        }
        f
    }

    #[test]
    fn a_trace_is_scored_on_the_first_call_of_each_gold_run() {
        let gold: HashMap<String, GoldCall> = [
            ("a".to_string(), gold("AddAlarm", json!({"time": "9:00"}))),
            ("b".to_string(), gold("ToolSearcher", json!({"keywords": "alarm"}))),
            ("c".to_string(), gold("AddAgenda", json!({"content": "x"}))),
        ]
        .into();
        let f = trace_file(&[
            json!({"type": "SessionStarted", "strategy": "react"}),
            json!({"type": "RunStarted", "run": 0, "task_id": "a"}),
            json!({"type": "ToolCall", "run": 0, "tool": "AddAlarm", "args": {"time": "9:00"}}),
            json!({"type": "ToolCall", "run": 0, "tool": "AddAgenda", "args": {}}),
            json!({"type": "RunStarted", "run": 1, "task_id": "b"}),
            json!({"type": "ToolCall", "run": 1, "tool": "ToolSearcher", "args": {"keywords": "anything"}}),
            json!({"type": "RunStarted", "run": 2, "task_id": "c"}),
            json!({"type": "ToolCall", "run": 2, "tool": "AddAgenda", "args": {"content": "y"}}),
            json!({"type": "RunStarted", "run": 3, "task_id": "no-gold"}),
        ]);
        let s = score_trace(f.path(), &gold).unwrap();
        assert_eq!((s.strategy.as_str(), s.runs, s.name_correct, s.call_correct, s.name_only), ("react", 3, 3, 2, 1));
        assert_eq!(s.call_acc_others_pct, Some(50.0));
    }

    #[test]
    fn a_bad_line_and_a_trace_without_gold_runs_are_errors_naming_the_file() {
        let gold: HashMap<String, GoldCall> = [("a".to_string(), gold("AddAlarm", json!({})))].into();
        let f = trace_file(&[json!({"type": "RunStarted", "run": 0, "task_id": "z"})]);
        let e = score_trace(f.path(), &gold).unwrap_err().to_string();
        assert!(e.contains(&f.path().display().to_string()) && e.contains("no run of a task with a gold call"), "{e}");
        let mut f = trace_file(&[json!({"type": "RunStarted", "run": 0, "task_id": "a"})]);
        use std::io::Write;
        writeln!(f, "{{not json").unwrap();
        let e = score_trace(f.path(), &gold).unwrap_err().to_string();
        assert!(e.contains("line 2: not a trace event"), "{e}");
    }
}
