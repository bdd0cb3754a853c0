//! `trace import`: Claude Code's session files and Codex's rollout files,
//! made here from their documented formats, as traces `trace show` and
//! `scan` read.

use std::path::PathBuf;

use serde_json::Value;

use switchyard::engine::EventKind;
use switchyard::engine::event::ToolOutcome;
use switchyard::engine::trace::read_trace;

use crate::cli_helpers::run;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents").join(name)
}

fn import(agent: &str, file: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    run(&["trace", "import", agent, file.to_str().unwrap(), "--out", out.to_str().unwrap()])
}

#[test]
fn a_claude_code_session_becomes_a_run_with_its_calls_results_and_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cc.jsonl");
    let o = import("claude-code", &fixture("claude-code-session.jsonl"), &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The last line was cut while being written: said, and left out.
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 10 is cut short"));
    let events = read_trace(&out).unwrap();
    let replies: Vec<(&str, usize)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelReply { text, tool_calls, .. } => Some((text.as_str(), tool_calls.len())),
            _ => None,
        })
        .collect();
    // The first reply's two lines (one message id) are one reply; the side chain is left out.
    assert_eq!(replies, [("I will read the file.", 1), ("", 1), ("The capital of Australia is Canberra.", 0)]);
    let results: Vec<(String, bool, u64)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, outcome, latency_ms, .. } => {
                Some((tool.clone(), matches!(outcome, ToolOutcome::Err { .. }), *latency_ms))
            }
            _ => None,
        })
        .collect();
    assert_eq!(results, [("Read".to_string(), true, 500), ("Bash".to_string(), false, 1250)]);
    let show = run(&["trace", "show", out.to_str().unwrap(), "--json"]);
    let v: Value = serde_json::from_slice(&show.stdout).unwrap();
    let r = &v["runs"][0];
    assert_eq!(r["task_id"], "7f1c2a9e-1111-4222-8333-944455556666");
    assert_eq!(r["answer"], "The capital of Australia is Canberra.");
    assert_eq!(r["path"], serde_json::json!(["Read", "Bash"]));
    assert_eq!(r["prompt_tokens"], 540);
}

#[test]
fn a_codex_rollout_becomes_a_run_and_scan_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cx.jsonl");
    let o = import("codex", &fixture("codex-rollout.jsonl"), &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let events = read_trace(&out).unwrap();
    let task = events.iter().find_map(|e| match &e.kind {
        EventKind::RunStarted { task, .. } => Some(task.clone()),
        _ => None,
    });
    assert_eq!(task.as_deref(), Some("How many lines does src/main.rs have?"), "the environment is not the task");
    let calls: Vec<(String, Value)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { tool, args, .. } => Some((tool.clone(), args.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls[0], ("shell".to_string(), serde_json::json!({"command": ["wc", "-l", "src/main.rs"]})));
    let first = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolResult { outcome: ToolOutcome::Err { error }, .. } => Some(error.message.clone()),
        _ => None,
    });
    assert_eq!(first.as_deref(), Some("wc: src/main.rs: No such file or directory\n"), "exit code 1 is an error");
    let models: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelReply { model, .. } => Some(model.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(models, ["gpt-5-codex"; 3]);
    let s = run(&["--data-dir", dir.path().to_str().unwrap(), "scan", out.to_str().unwrap(), "--rules-only", "--json"]);
    let v: Value = serde_json::from_slice(&s.stdout).unwrap();
    assert_eq!(v["runs"], 1, "{v}");
}

#[test]
fn a_bad_line_a_file_of_the_other_agent_and_a_missing_file_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let bad = dir.path().join("bad.jsonl");
    let text = std::fs::read_to_string(fixture("codex-rollout.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "{not json";
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let o = import("codex", &bad, &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("bad.jsonl:4: not JSON"), "{err}");
    assert!(!out.exists(), "nothing written");
    let o = import("claude-code", &fixture("codex-rollout.jsonl"), &out);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("is it a Claude Code session file?"), "{err}");
    let o = import("codex", &dir.path().join("none.jsonl"), &out);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("none.jsonl"));
}
