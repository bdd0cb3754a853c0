//! The real binary: its subcommands, and bad input giving a clear error that
//! names the file or field, a non-zero exit and never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_switchyard"));
    c.env_remove("SWITCHYARD_DATA_DIR");
    c
}

fn sample(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-tools").join(rel)
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let out = bin().arg("--data-dir").arg(dir).args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "it panicked: {err}");
    out
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs, expects failure, returns stderr.
fn fails(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(!out.status.success(), "{args:?} succeeded but should not have");
    String::from_utf8(out.stderr).unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn config_with_library(dir: &Path, library: &[&Path]) -> PathBuf {
    let libs: Vec<String> = library.iter().map(|p| format!("{:?}", p.display().to_string())).collect();
    let text =
        format!("library = [{}]\ntasks = {:?}\n", libs.join(", "), sample("tasks/smoke.toml").display().to_string());
    write(dir, "cfg.toml", &text)
}

const GOOD_TOOL: &str = r#"
[[tool]]
name = "calc"
description = "Evaluate an arithmetic expression"
[tool.parameters]
type = "object"
required = ["expression"]
[tool.parameters.properties.expression]
type = "string"
[tool.executor]
kind = "builtin"
function = "calculator"
"#;

#[test]
fn run_prints_a_summary_and_json() {
    let d = tempfile::tempdir().unwrap();
    let smoke = sample("tasks/smoke.toml");
    let text = ok(d.path(), &["run", "--tasks", smoke.to_str().unwrap(), "--no-save"]);
    assert!(text.contains("strategy toolnet"), "{text}");
    assert!(text.contains("(simulated)"), "the summary says the model is simulated: {text}");
    let json = ok(d.path(), &["run", "--tasks", smoke.to_str().unwrap(), "--json", "--strategy", "react"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["metrics"]["label"], "react");
    assert!(v["metrics"]["success_rate"].as_f64().unwrap() > 0.5);
    assert_eq!(v["runs"].as_array().unwrap().len(), v["metrics"]["tasks"].as_u64().unwrap() as usize);
    // Tokens and cost per role and model; react needs no evaluator.
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 1, "{models:?}");
    assert_eq!((models[0]["role"].as_str(), models[0]["simulated"].as_bool()), (Some("actor"), Some(true)));
    assert!(models[0]["prompt_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn a_single_task_runs_and_the_graph_is_saved_and_shown() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(d.path(), &["run", "--task", "Calculate (17 + 4) * 3", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["runs"][0]["answer"], "63");
    assert!(d.path().join("graph.json").exists(), "toolnet saves what it learnt");
    let shown = ok(d.path(), &["graph", "show", "calculator"]);
    assert!(shown.contains("after 1 iterations"), "{shown}");
    assert!(shown.contains("predecessors:") && shown.contains("start"), "{shown}");
    let built = ok(d.path(), &["graph", "build"]);
    assert!(built.contains("17 tools"), "{built}");
    let err = fails(d.path(), &["graph", "show", "nonesuch"]);
    assert!(err.contains("no tool named 'nonesuch'"), "{err}");
}

#[test]
fn eval_compares_strategies() {
    let d = tempfile::tempdir().unwrap();
    let smoke = sample("tasks/smoke.toml");
    let out = ok(d.path(), &["eval", "--tasks", smoke.to_str().unwrap(), "--strategy", "react,toolnet", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["react (k=all)", "toolnet"]);
    let table = ok(d.path(), &["eval", "--tasks", smoke.to_str().unwrap()]);
    assert!(table.contains("prompt tok") && table.contains("toolnet"), "{table}");
}

#[test]
fn a_trace_is_written_and_read_back() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    let smoke = sample("tasks/smoke.toml");
    let live = ok(d.path(), &["run", "--tasks", smoke.to_str().unwrap(), "--trace", trace.to_str().unwrap(), "--json"]);
    let shown = ok(d.path(), &["trace", "show", trace.to_str().unwrap(), "--json"]);
    let (a, b): (serde_json::Value, serde_json::Value) =
        (serde_json::from_str(&live).unwrap(), serde_json::from_str(&shown).unwrap());
    assert_eq!(a["runs"], b["runs"], "the trace folds into what the run reported");
    // A line cut short by a crash is reported, the events before it are
    // all shown; a bad line elsewhere is named.
    let text = std::fs::read_to_string(&trace).unwrap();
    let complete = text.lines().count();
    std::fs::write(&trace, format!("{}{{\"v\":1,\"run\":9,\"st", text)).unwrap();
    let out = run(d.path(), &["trace", "show", trace.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "t.jsonl: line {} is incomplete: the writer was probably killed; {complete} complete events read",
        complete + 1
    );
    assert!(err.contains(&want), "{err}");
    let torn: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(torn["runs"], a["runs"], "every complete event is still read");
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{not json";
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let err = fails(d.path(), &["trace", "show", trace.to_str().unwrap()]);
    assert!(err.contains("t.jsonl:3"), "{err}");
}

/// A kill while the large first event was being written leaves a trace
/// with no complete event: that is an error saying so, not "0 events";
/// and an empty file is not a trace either.
#[test]
fn a_trace_cut_in_its_first_line_or_empty_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    ok(d.path(), &["run", "--count", "2", "--no-save", "--trace", trace.to_str().unwrap()]);
    let text = std::fs::read_to_string(&trace).unwrap();
    let first = text.lines().next().unwrap();
    let cut = write(d.path(), "cut.jsonl", &first[..first.len() / 2]);
    let err = fails(d.path(), &["trace", "show", cut.to_str().unwrap()]);
    assert!(err.contains("cut.jsonl: not a trace: line 1 is incomplete (the writer was probably killed)"), "{err}");
    let empty = write(d.path(), "empty.jsonl", "");
    let err = fails(d.path(), &["trace", "show", empty.to_str().unwrap()]);
    assert!(err.contains("empty.jsonl: not a trace: the file holds no event"), "{err}");
    // A kill inside a multi-byte character is a torn line too, not "not UTF-8".
    let accented = format!("{text}{{\"v\":2,\"answer\":\"S\u{e3}o");
    let mut bytes = accented.into_bytes();
    bytes.pop();
    std::fs::write(&trace, bytes).unwrap();
    let out = run(d.path(), &["trace", "show", trace.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("is incomplete"));
}

/// Without a gold answer nothing can be judged: success is n/a (null in
/// JSON), never 0 %, and no average of nothing prints as -0.00.
#[test]
fn an_unjudged_task_reads_as_not_judged() {
    let d = tempfile::tempdir().unwrap();
    let json = ok(d.path(), &["run", "--task", "what is 2+2", "--no-save", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let m = &v["metrics"];
    assert_eq!(m["judged"], 0);
    for key in ["success_rate", "pbc", "pr"] {
        assert!(m[key].is_null(), "{key} of an unjudged run: {m}");
    }
    assert!(!json.contains("-0.0"), "{json}");
    let trace = d.path().join("t.jsonl");
    let text = ok(d.path(), &["run", "--task", "what is 2+2", "--no-save", "--trace", trace.to_str().unwrap()]);
    let row = text.lines().find(|l| l.starts_with("toolnet")).expect("the summary row");
    assert!(row.split_whitespace().nth(2) == Some("n/a"), "{row}");
    let shown = ok(d.path(), &["trace", "show", trace.to_str().unwrap()]);
    assert!(!shown.contains("-0.0"), "{shown}");
    let row = shown.lines().find(|l| l.starts_with("toolnet")).expect("the summary row");
    assert!(row.split_whitespace().nth(2) == Some("n/a"), "{row}");
}

#[test]
fn a_fault_from_the_command_line_breaks_the_tool() {
    let d = tempfile::tempdir().unwrap();
    let out = ok(
        d.path(),
        &[
            "run",
            "--task",
            "Calculate 6 * 7",
            "--fault",
            "calculator:error",
            "--json",
            "--strategy",
            "react",
            "--set",
            "top_k=1",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_ne!(v["runs"][0]["answer"], "42", "{out}");
    let err = fails(d.path(), &["run", "--fault", "nosuch:error"]);
    assert!(err.contains("no tool named 'nosuch'"), "{err}");
    let err = fails(d.path(), &["run", "--fault", "calculator:explode"]);
    assert!(err.contains("unknown mode 'explode'"), "{err}");
    let err = fails(d.path(), &["run", "--set", "beta=3"]);
    assert!(err.contains("beta"), "{err}");
}

#[test]
fn a_malformed_manifest_names_the_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let bad = write(d.path(), "bad.toml", "[[tool]]\nname = \"x\"\ndescription = \n");
    let cfg = config_with_library(d.path(), &[&bad]);
    let err = fails(d.path(), &["--config", cfg.to_str().unwrap(), "run"]);
    assert!(err.contains("bad.toml") && err.contains("line 3"), "{err}");
}

#[test]
fn an_unknown_executor_names_the_tool_and_field() {
    let d = tempfile::tempdir().unwrap();
    let bad = write(d.path(), "exec.toml", &GOOD_TOOL.replace("kind = \"builtin\"", "kind = \"shell\""));
    let cfg = config_with_library(d.path(), &[&bad]);
    let err = fails(d.path(), &["--config", cfg.to_str().unwrap(), "run"]);
    assert!(err.contains("exec.toml") && err.contains("tool 'calc'") && err.contains("executor"), "{err}");
    assert!(err.contains("shell"), "{err}");
}

#[test]
fn a_duplicate_tool_names_both_files() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.toml", GOOD_TOOL);
    let b = write(d.path(), "b.toml", GOOD_TOOL);
    let cfg = config_with_library(d.path(), &[&a, &b]);
    let err = fails(d.path(), &["--config", cfg.to_str().unwrap(), "run"]);
    assert!(err.contains("duplicate tool 'calc'") && err.contains("a.toml") && err.contains("b.toml"), "{err}");
}

#[test]
fn a_bad_task_file_names_the_file_and_place() {
    let d = tempfile::tempdir().unwrap();
    let t = write(
        d.path(),
        "tasks.jsonl",
        "{\"id\": \"a\", \"query\": \"Calculate 1+1\"}\n{\"id\": \"b\", \"query\": 5}\n",
    );
    let err = fails(d.path(), &["run", "--tasks", t.to_str().unwrap()]);
    assert!(err.contains("tasks.jsonl") && err.contains('2'), "{err}");
    let t = write(d.path(), "tasks.toml", "[[task]]\nid = \"a\"\nquery = \"\"\n");
    let err = fails(d.path(), &["run", "--tasks", t.to_str().unwrap()]);
    assert!(err.contains("tasks.toml") && err.contains("query"), "{err}");
    let err = fails(d.path(), &["run", "--tasks", "/nonexistent/tasks.toml"]);
    assert!(err.contains("/nonexistent/tasks.toml"), "{err}");
}

#[test]
fn a_missing_api_key_variable_is_named_and_nothing_runs() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write(
        d.path(),
        "cfg.toml",
        r#"
[models.remote]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key_env = "SWITCHYARD_TEST_UNSET_KEY"
[roles]
actor = "remote"
"#,
    );
    let out = bin()
        .arg("--data-dir")
        .arg(d.path())
        .args(["--config", cfg.to_str().unwrap(), "run"])
        .env_remove("SWITCHYARD_TEST_UNSET_KEY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SWITCHYARD_TEST_UNSET_KEY") && err.contains("cfg.toml"), "{err}");
}

#[test]
fn a_bad_config_names_the_field() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write(d.path(), "cfg.toml", "[params]\nalpha = 0.5\nbeta = 1.5\n");
    let err = fails(d.path(), &["--config", cfg.to_str().unwrap(), "run"]);
    assert!(err.contains("cfg.toml") && err.contains("params.beta"), "{err}");
    let cfg = write(d.path(), "cfg2.toml", "[roles]\nactor = \"gpt\"\n");
    let err = fails(d.path(), &["--config", cfg.to_str().unwrap(), "run"]);
    assert!(err.contains("roles.actor") && err.contains("no model named 'gpt'"), "{err}");
    let cfg = write(d.path(), "cfg3.toml", "stratgy = \"react\"\n");
    let err = fails(d.path(), &["--config", cfg.to_str().unwrap(), "run"]);
    assert!(err.contains("cfg3.toml") && err.contains("stratgy"), "{err}");
}

#[test]
fn a_server_that_is_down_fails_the_run_cleanly() {
    let d = tempfile::tempdir().unwrap();
    // Port 9 (discard) on loopback: nothing listens there.
    let cfg = write(
        d.path(),
        "cfg.toml",
        "[models.remote]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\nmax_retries = 0\ntimeout_ms = 2000\n[roles]\nactor = \"remote\"\nevaluator = \"remote\"\n",
    );
    let out =
        run(d.path(), &["--config", cfg.to_str().unwrap(), "run", "--task", "Calculate 1+1", "--json", "--no-save"]);
    assert_eq!(out.status.code(), Some(2), "a failed model is a failed run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"][0]["outcome"]["outcome"], "failed", "{v}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("could not reach the model endpoint"), "{err}");
}

#[test]
fn plan_prints_the_knapsack_and_experience_feeds_it() {
    let d = tempfile::tempdir().unwrap();
    let task = "Exchange 100 USD into the currency of the country 'Japan'.";
    let before = ok(d.path(), &["plan", "--task", task, "--budget", "3", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&before).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "the paper's five candidates: {v}");
    assert!(rows.iter().all(|r| r["defaulted"] == true), "no experience yet: defaults");
    assert!(v["planned_cost"].as_f64().unwrap() <= v["remaining"].as_f64().unwrap());
    assert_eq!(v["planned_calls"], 3, "budget 3 at cost 1 a call buys three calls: {v}");
    let imported = ok(d.path(), &["experience", "import", sample("trajectories.jsonl").to_str().unwrap()]);
    assert!(imported.contains("imported 100 tool usages"), "{imported}");
    let after = ok(d.path(), &["plan", "--task", task, "--budget", "3"]);
    assert!(after.contains("100 experience records") && after.contains("currency_convert"), "{after}");
    let shown = ok(d.path(), &["experience", "show"]);
    assert!(shown.contains("100 usages"), "{shown}");
    let err = fails(d.path(), &["plan", "--task", task]);
    assert!(err.contains("--budget"), "{err}");
}

#[test]
fn eval_reports_the_budget_metrics_by_their_names() {
    let d = tempfile::tempdir().unwrap();
    let smoke = sample("tasks/smoke.toml");
    let out = ok(
        d.path(),
        &[
            "eval",
            "--tasks",
            smoke.to_str().unwrap(),
            "--strategy",
            "react",
            "--budget",
            "20",
            "--tool-costs",
            "random:1-10",
            "--sweep",
            "tau=0,0.5",
            "--json",
        ],
    );
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 2, "one row per τ");
    for key in ["pbc", "ac", "pr", "rfbc", "planned_cost", "spent_cost", "planned_calls", "used_calls"] {
        assert!(rows[0][key].is_number(), "{key} in {}", rows[0]);
    }
    assert!(rows[0]["label"].as_str().unwrap().contains("tau=0"));
    assert_eq!(rows[0]["rfbc"], 0.0);
    let table = ok(d.path(), &["eval", "--tasks", smoke.to_str().unwrap(), "--budget", "20", "--btp", "off"]);
    assert!(table.contains("PBC") && table.contains("btp off"), "{table}");
    let err = fails(d.path(), &["eval", "--sweep", "gamma=1"]);
    assert!(err.contains("cannot be swept"), "{err}");
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let d = tempfile::tempdir().unwrap();
    let mut child = bin()
        .arg("--data-dir")
        .arg(d.path())
        .args(["run", "--tasks", sample("tasks/sample.toml").to_str().unwrap(), "--no-save"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Read nothing: close the pipe at once, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Runs, expects exit code 1 (a refused argument, not a clap usage error), returns stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_bad_model_matrix_is_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let smoke = sample("tasks/smoke.toml");
    let tasks = smoke.to_str().unwrap();
    let err = refused(d.path(), &["eval", "--tasks", tasks, "--matrix", "planner=sim,gpt-9"]);
    assert!(err.contains("no model named 'gpt-9'") && err.contains("known: sim, sim-strong, sim-weak"), "{err}");
    let err = refused(d.path(), &["eval", "--tasks", tasks, "--matrix", "chef=sim"]);
    assert!(err.contains("unknown role 'chef'") && err.contains("planner, solver"), "{err}");
    let err = refused(d.path(), &["eval", "--tasks", tasks, "--matrix", "planner"]);
    assert!(err.contains("--matrix planner") && err.contains("ROLE=MODEL"), "{err}");
    let err = refused(d.path(), &["eval", "--tasks", tasks, "--strategy", "react", "--matrix", "planner=sim"]);
    assert!(err.contains("--matrix") && err.contains("--strategy react") && err.contains("rewoo"), "{err}");
    let err = refused(d.path(), &["eval", "--tasks", tasks, "--matrix", "solver=sim", "--matrix", "solver=sim-weak"]);
    assert!(err.contains("'solver' is given twice"), "{err}");
    let err = refused(d.path(), &["eval", "--tasks", tasks, "--matrix", "solver=sim", "--sweep", "tau=0,0.1"]);
    assert!(err.contains("--matrix and --sweep"), "{err}");
    // Nothing ran, so nothing was written to the data directory but the log.
    assert!(!d.path().join("categories.json").exists() && !d.path().join("graph.json").exists());
}

#[test]
fn rewoo_is_offered_wherever_a_strategy_is_chosen() {
    let d = tempfile::tempdir().unwrap();
    for cmd in ["run", "ui", "eval"] {
        let help = ok(d.path(), &[cmd, "--help"]);
        assert!(help.contains("rewoo"), "{cmd} --help names rewoo: {help}");
    }
    assert!(ok(d.path(), &["eval", "--help"]).contains("--matrix"));
    let err = fails(d.path(), &["run", "--strategy", "rewo"]);
    assert!(err.contains("react, toolnet, rewoo or atc"), "{err}");
}

/// Needs the rewoo engine (crates/engine/src/engine/rewoo.rs): every pair runs the smoke
/// tasks and calls its planner and solver.
#[test]
fn eval_matrix_runs_every_planner_and_solver_pair() {
    let d = tempfile::tempdir().unwrap();
    let smoke = sample("tasks/smoke.toml");
    let models = "sim-weak,sim-strong";
    let args = [
        "eval",
        "--tasks",
        smoke.to_str().unwrap(),
        "--matrix",
        &format!("planner={models}"),
        "--matrix",
        &format!("solver={models}"),
    ];
    let json = ok(d.path(), &[&args[..], &["--json", "--strategy", "rewoo"]].concat());
    let rows: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let pairs: Vec<(&str, &str)> =
        rows.iter().map(|r| (r["planner"].as_str().unwrap(), r["solver"].as_str().unwrap())).collect();
    assert_eq!(
        pairs,
        [
            ("sim-weak", "sim-weak"),
            ("sim-weak", "sim-strong"),
            ("sim-strong", "sim-weak"),
            ("sim-strong", "sim-strong")
        ]
    );
    for r in &rows {
        assert_eq!(r["tasks"], 8, "{r}");
        for field in ["prompt_tokens_per_task", "completion_tokens_per_task", "cost_per_task", "steps_per_task"] {
            assert!(r[field].as_f64().unwrap() > 0.0, "{field}: {r}");
        }
        assert!((0.0..=100.0).contains(&r["accuracy_pct"].as_f64().unwrap()), "{r}");
        assert!(r["tokens_saved_per_task"].as_f64().unwrap() >= 0.0, "{r}");
        let roles = r["roles"].as_array().unwrap();
        for role in ["planner", "solver"] {
            let share = roles.iter().find(|s| s["role"] == role).unwrap_or_else(|| panic!("no {role} in {r}"));
            assert_eq!(share["model"], r[role], "{r}");
            assert!(share["prompt_tokens_per_task"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    // The strong model's price shows: its solver costs more than the weak one's.
    let solver_cost = |i: usize| {
        rows[i]["roles"].as_array().unwrap().iter().find(|s| s["role"] == "solver").unwrap()["cost_per_task"]
            .as_f64()
            .unwrap()
    };
    assert!(solver_cost(1) > solver_cost(0), "{rows:?}");
    // The same seed and tasks: the table shows the same four pairs.
    let table = ok(d.path(), &args);
    assert_eq!(
        table.lines().filter(|l| l.starts_with("sim-weak") || l.starts_with("sim-strong")).count(),
        4,
        "{table}"
    );
    assert!(table.contains("accuracy") && table.contains("planner tok") && table.contains("saved tok"), "{table}");
    // An experiment leaves the saved labels alone.
    assert!(!d.path().join("categories.json").exists());
}

#[test]
fn tool_cassette_flags_are_offered_and_a_damaged_cassette_exits_1() {
    let d = tempfile::tempdir().unwrap();
    for cmd in ["run", "eval", "ui"] {
        let help = ok(d.path(), &[cmd, "--help"]);
        for flag in ["--record-tools", "--replay-tools", "--replay-tools-latency"] {
            assert!(help.contains(flag), "{cmd} --help offers {flag}: {help}");
        }
    }
    let smoke = sample("tasks/smoke.toml");
    let smoke = smoke.to_str().unwrap();
    let tape = d.path().join("tools.jsonl");
    let tape = tape.to_str().unwrap();
    ok(d.path(), &["run", "--tasks", smoke, "--no-save", "--logical-clock", "--record-tools", tape]);
    let recorded = std::fs::read_to_string(tape).unwrap();
    assert!(recorded.lines().count() > 0);
    let replayed = ok(d.path(), &["run", "--tasks", smoke, "--no-save", "--logical-clock", "--replay-tools", tape]);
    assert!(replayed.contains("strategy"), "{replayed}");

    let bad = write(d.path(), "bad.jsonl", &format!("{}garbage\n", recorded.lines().next().unwrap().to_owned() + "\n"));
    let out = run(d.path(), &["run", "--tasks", smoke, "--no-save", "--replay-tools", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:2"), "{err}");
    let both = fails(d.path(), &["run", "--record-tools", tape, "--replay-tools", tape]);
    assert!(both.contains("cannot be used with"), "{both}");
}

#[test]
fn a_role_s_model_is_chosen_on_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let smoke = sample("tasks/smoke.toml");
    let smoke = smoke.to_str().unwrap();
    let json = ok(d.path(), &["run", "--tasks", smoke, "--json", "--strategy", "react", "--model", "actor=sim-strong"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["models"][0]["model"], "sim-strong", "{}", v["models"]);
    let err = fails(d.path(), &["run", "--tasks", smoke, "--model", "actor=gpt-9"]);
    assert!(err.contains("--model actor=gpt-9: no model named 'gpt-9'") && err.contains("sim-strong"), "{err}");
    let err = fails(d.path(), &["run", "--tasks", smoke, "--model", "pilot=sim"]);
    assert!(err.contains("unknown role 'pilot'"), "{err}");
}

/// One toolnet task of `cfg`'s, with a data directory of the test's own.
fn toolnet_run(cfg: &Path, data: &Path) -> std::process::Output {
    let args = ["run", "--strategy", "toolnet", "--count", "1"];
    bin().arg("--config").arg(cfg).arg("--data-dir").arg(data).args(args).output().unwrap()
}

/// A trajectory naming a tool the library lacks stops the run with the
/// file and the line, before anything is built or recorded.
#[test]
fn a_trajectory_naming_a_tool_the_library_lacks_is_refused_with_its_line() {
    let d = tempfile::tempdir().unwrap();
    let lib = write(d.path(), "mine.toml", GOOD_TOOL);
    let runs = write(
        d.path(),
        "runs.jsonl",
        "{\"query\": \"1+1\", \"tools\": [\"calc\"]}\n# a comment\n{\"query\": \"x\", \"tools\": [\"calc\", \"ghost\"]}\n",
    );
    let cfg = config_with_library(d.path(), &[&lib]);
    let text =
        std::fs::read_to_string(&cfg).unwrap() + format!("trajectories = {:?}\n", runs.display().to_string()).as_str();
    std::fs::write(&cfg, text).unwrap();
    let out = toolnet_run(&cfg, &d.path().join("data"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains("panicked"), "{err}");
    assert!(err.contains("runs.jsonl:3: the trajectory names `ghost`, which is not in the library"), "{err}");
}

/// The sample trajectories name the sample tools: a config with a library
/// of its own does not inherit them (ToolNet would stop on the first name it
/// lacks), and one that names its trajectories keeps them.
#[test]
fn a_library_of_ones_own_does_not_inherit_the_sample_trajectories() {
    let parse = |text: &str| switchyard::config::Config::parse(text, Path::new("/cfg/switchyard.toml")).unwrap();
    assert!(switchyard::config::Config::default().trajectories.is_some());
    assert_eq!(parse("library = [\"mine.toml\"]\n").trajectories, None);
    let named = parse("library = [\"mine.toml\"]\ntrajectories = \"runs.jsonl\"\n");
    assert_eq!(named.trajectories.as_deref(), Some(Path::new("/cfg/runs.jsonl")));

    let d = tempfile::tempdir().unwrap();
    let lib = write(d.path(), "mine.toml", GOOD_TOOL);
    let cfg = config_with_library(d.path(), &[&lib]);
    let out = toolnet_run(&cfg, &d.path().join("data"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
