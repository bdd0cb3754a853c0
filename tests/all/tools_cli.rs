//! `tools list` and `tools call` on the real binary with the sample library:
//! every tool with its executor, one call through the session's executor,
//! and exit 1 for bad input, 3 for a tool that fails.

use std::path::Path;
use std::process::{Command, Output};

fn tools(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .env_remove("SWITCHYARD_DATA_DIR")
        .arg("--data-dir")
        .arg(dir)
        .arg("tools")
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "it panicked: {err}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn list_shows_every_sample_tool_with_its_executor_and_the_count() {
    let d = tempfile::tempdir().unwrap();
    let out = tools(d.path(), &["list"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 18, "17 tools and the count: {text}");
    assert_eq!(lines.last(), Some(&"17 tools"));
    let line = |name: &str| *lines.iter().find(|l| l.starts_with(&format!("{name} "))).unwrap();
    let calc = line("calculator");
    assert!(calc.contains("builtin calculator") && calc.contains("math.toml"), "{calc}");
    let stats = line("text_stats");
    assert!(stats.contains("command python3") && stats.contains("Text") && stats.contains("text.toml"), "{stats}");
    assert!(line("geo_lookup_mirror").contains("builtin geo_lookup"), "{text}");
}

#[test]
fn list_json_has_every_tool_with_its_executor_and_parameters() {
    let d = tempfile::tempdir().unwrap();
    let out = tools(d.path(), &["list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let all = v.as_array().unwrap();
    assert_eq!(all.len(), 17);
    assert!(all.iter().all(|t| t["executor"]["kind"].is_string() && t["parameters"]["type"] == "object"), "{v}");
    let stats = all.iter().find(|t| t["name"] == "text_stats").unwrap();
    assert_eq!(stats["executor"]["kind"], "command");
    assert_eq!(stats["executor"]["argv"][0], "python3");
    assert_eq!(stats["category"], "Text");
    assert_eq!(stats["cost"], 1.0);
    assert!(stats["source"].as_str().unwrap().ends_with("text.toml"), "{stats}");
}

#[test]
fn call_runs_a_builtin_and_a_command_tool() {
    let d = tempfile::tempdir().unwrap();
    let out = tools(d.path(), &["call", "calculator", "--args", r#"{"expression":"(17+4)*3"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["result"], 63, "{v}");
    let out = tools(d.path(), &["call", "calculator", "--json", "--args", r#"{"expression":"(17+4)*3"}"#]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["ok"]["result"], 63, "{v}");

    let out = tools(d.path(), &["call", "text_stats", "--args", r#"{"text":"One two three. Four!"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["words"], 4, "{v}");
}

#[test]
fn an_unknown_tool_or_bad_args_exit_1_naming_the_problem() {
    let d = tempfile::tempdir().unwrap();
    let out = tools(d.path(), &["call", "calculater", "--args", "{}"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no tool named 'calculater'") && err.contains("calculator"), "{err}");

    for bad in ["{expression", "[1, 2]", "\"x\""] {
        let out = tools(d.path(), &["call", "calculator", "--args", bad]);
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = stderr(&out);
        assert!(err.contains("--args"), "{bad}: {err}");
    }
    let err = stderr(&tools(d.path(), &["call", "calculator", "--args", "{expression"]));
    assert!(err.contains("line 1 column"), "the parse error: {err}");
}

#[test]
fn a_failing_tool_exits_3_with_its_error_kind_and_message() {
    let d = tempfile::tempdir().unwrap();
    let out = tools(d.path(), &["call", "city_stats", "--args", r#"{"city_id":"C9999"}"#]);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("failed") && err.contains("unknown city_id 'C9999'"), "{err}");

    let out = tools(d.path(), &["call", "city_stats", "--json", "--args", r#"{"city_id":"C9999"}"#]);
    assert_eq!(out.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["error"]["kind"], "failed", "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("C9999"), "{v}");
}
