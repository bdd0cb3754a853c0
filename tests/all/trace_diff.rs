//! `trace diff` and `trace to-tasks` on traces the binary writes: the same
//! seed twice decides alike, a fault on one tool is named at its step and
//! tool result, bad input exits 2 naming the file and line; a trace's runs
//! become a task file that `eval` reads back and judges as successes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli_helpers::{lines, ok, run, s};

/// A headless run of four sample tasks, its trace in `dir/name`.
fn record(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let trace = dir.join(name);
    let data = dir.join("data");
    let mut args = vec!["--data-dir", s(&data), "run", "--logical-clock", "--seed", "7", "--count", "4"];
    args.extend(["--fresh-graph", "--no-save", "--trace", s(&trace)]);
    args.extend(extra);
    ok(&args);
    trace
}

/// `trace diff A B` (and its arguments): its exit code and stdout.
fn diff(a: &Path, b: &Path, more: &[&str]) -> (i32, String) {
    let mut args = vec!["trace", "diff", s(a), s(b)];
    args.extend(more);
    let out = run(&args);
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap())
}

/// The first ToolResult of `trace` that `pick` accepts: its place counted from 1, and its step.
fn first_result(trace: &Path, pick: impl Fn(&Value) -> bool) -> (u64, u64) {
    let events = lines(trace);
    let i = events.iter().position(|e| e["type"] == "ToolResult" && pick(e)).expect("a tool result");
    (i as u64 + 1, events[i]["step"].as_u64().unwrap())
}

#[test]
fn the_same_seed_twice_decides_alike_and_a_fault_is_named_at_its_tool_result() {
    let d = tempfile::tempdir().unwrap();
    let a = record(d.path(), "a.jsonl", &[]);
    let b = record(d.path(), "b.jsonl", &[]);
    let (code, out) = diff(&a, &b, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the traces decide alike"), "{out}");
    assert!(out.contains("run 1 (t01): same decisions"), "{out}");
    let (code, json) = diff(&a, &b, &["--json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!((code, &v["differs"]), (0, &Value::Bool(false)));

    // The same run with the tool of task t01's first call failing once.
    let first_tool = lines(&a).into_iter().find(|e| e["type"] == "ToolCall").expect("a tool call")["tool"]
        .as_str()
        .unwrap()
        .to_string();
    let c = record(d.path(), "c.jsonl", &["--fault", &format!("{first_tool}:error:once")]);
    let (code, json) = diff(&a, &c, &["--json"]);
    assert_eq!(code, 1, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let first = &v["diff"]["runs"][0];
    let div = &first["divergence"];
    assert_eq!(div["kind"], "tool_result", "{div}");
    let (at_c, step) = first_result(&c, |e| e.get("fault").is_some());
    let (at_a, step_a) = first_result(&a, |e| e["run"] == 1);
    assert_eq!(step, step_a);
    assert_eq!((&div["a"]["event"], &div["b"]["event"]), (&Value::from(at_a), &Value::from(at_c)));
    assert_eq!(div["step"], step);
    assert_eq!((div["field"]["path"].as_str(), div["field"]["b"].as_str()), (Some("status"), Some("err")));
    // The run called the mirror after the failure: one more call, and more cost, in run 1.
    assert_eq!(first["b"]["tool_calls"].as_u64().unwrap(), first["a"]["tool_calls"].as_u64().unwrap() + 1);

    let (_, out) = diff(&a, &c, &[]);
    let head = format!("run 1 (t01): first divergence at step {step}: tool result");
    assert!(out.contains(&head), "{out}");
    assert!(
        out.contains(&format!("B event {at_c:<6} ToolResult    {first_tool} → error (Failed) injected fault")),
        "{out}"
    );
    assert!(out.contains("differs at status:"), "{out}");
    let total = out.lines().find(|l| l.starts_with("total")).unwrap();
    assert!(total.contains("4 runs") && total.contains("(+1)"), "{total}");
}

#[test]
fn an_unreadable_trace_exits_2_naming_its_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let a = record(d.path(), "a.jsonl", &[]);
    let text = std::fs::read_to_string(&a).unwrap();
    let mut rows: Vec<&str> = text.lines().collect();
    rows.insert(3, "{\"v\":2,\"run\":1,");
    let bad = d.path().join("bad.jsonl");
    std::fs::write(&bad, rows.join("\n")).unwrap();
    for (x, y, want) in [
        (&a, &bad, "bad.jsonl:4: not a trace event"),
        (&bad, &a, "bad.jsonl:4:"),
        (&a, &d.path().join("none.jsonl"), "none.jsonl"),
    ] {
        let out = run(&["trace", "diff", s(x), s(y)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
    let empty = d.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let out = run(&["trace", "diff", s(&empty), s(&a)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty.jsonl: not a trace: the file holds no event"));
}

#[test]
fn runs_become_tasks_that_eval_judges_as_successes() {
    let d = tempfile::tempdir().unwrap();
    let a = record(d.path(), "a.jsonl", &[]);
    let answers: Vec<(String, String)> = lines(&a)
        .iter()
        .filter(|e| e["type"] == "RunFinished")
        .map(|e| (e["run"].to_string(), e["answer"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(answers.len(), 4);

    // Printed: one task per chosen run, its gold the run's answer, its tools the run's calls.
    let printed = ok(&["trace", "to-tasks", s(&a), "--runs", "2"]);
    let task: Value = serde_json::from_str(printed.trim()).unwrap();
    assert_eq!((task["id"].as_str(), task["answer"].as_str()), (Some("t02"), Some(answers[1].1.as_str())));
    let calls: Vec<Value> = lines(&a).into_iter().filter(|e| e["type"] == "ToolCall" && e["run"] == 2).collect();
    let tools: Vec<&Value> = calls.iter().map(|c| &c["tool"]).collect();
    assert_eq!(task["tools"].as_array().unwrap().iter().collect::<Vec<_>>(), tools);
    assert_eq!(task["gold_call"]["args"], calls[0]["args"]);

    let cases = d.path().join("cases.jsonl");
    let out = run(&["trace", "to-tasks", s(&a), "--runs", "1-2,4", "--out", s(&cases)]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 tasks appended"), "{out:?}");
    let out = run(&["trace", "to-tasks", s(&a), "--out", s(&cases)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("run 1: already in the file as t01") && err.contains("1 task appended"), "{err}");
    assert_eq!(lines(&cases).len(), 4);

    // eval reads the file back; every task is answered as the trace answered it, a success.
    let evals = d.path().join("eval");
    let data = d.path().join("data");
    ok(&[
        "--data-dir",
        s(&data),
        "eval",
        "--tasks",
        s(&cases),
        "--strategy",
        "toolnet",
        "--seed",
        "7",
        "--out",
        s(&evals),
    ]);
    let rows = lines(&evals.join("results.jsonl"));
    assert_eq!(rows.len(), 4);
    for row in &rows {
        assert_eq!(row["success"], true, "{row}");
        let id = row["task_id"].as_str().unwrap();
        let (_, want) = &answers[id.trim_start_matches("t0").parse::<usize>().unwrap() - 1];
        assert_eq!(row["answer"].as_str(), Some(want.as_str()), "{row}");
    }

    let err = run(&["trace", "to-tasks", s(&a), "--runs", "7"]);
    assert!(String::from_utf8_lossy(&err.stderr).contains("run 7 is not in"));
    let err = run(&["trace", "to-tasks", s(&a), "--out", s(&d.path().join("x.toml"))]);
    assert!(String::from_utf8_lossy(&err.stderr).contains("not a JSON Lines task file"));
}
