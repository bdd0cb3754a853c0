//! `scan` on an eval's folder and on traces, as a user runs it.

use std::path::Path;

use serde_json::Value;

use crate::cli_helpers::run;

fn eval(data: &str, out: &Path, faults: &[&str]) {
    let mut args =
        vec!["--data-dir", data, "eval", "--strategy", "react", "--count", "12", "--out", out.to_str().unwrap()];
    for f in faults {
        args.extend_from_slice(&["--fault", f]);
    }
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn scan(data: &str, args: &[&str]) -> std::process::Output {
    let mut all = vec!["--data-dir", data, "scan"];
    all.extend_from_slice(args);
    run(&all)
}

fn json(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn an_eval_with_a_failing_model_is_scanned_beside_it_grouped_and_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let evals = dir.path().join("evals");
    let ev = evals.join("faulty");
    eval(data, &ev, &["model:actor:http-500:p=0.3", "calculator:error:until-cleared"]);
    // Each task's trace is kept in the eval's folder.
    let traces = std::fs::read_dir(ev.join("traces/react-k-all")).unwrap().count();
    assert_eq!(traces, 12);

    let first = json(&scan(data, &[ev.to_str().unwrap(), "--embedder", "words", "--json"]));
    let out = evals.join("scans/faulty");
    assert_eq!(first["folder"], out.to_str().unwrap(), "beside the eval, never in it");
    assert!(!ev.join("scans").exists());
    assert_eq!(first["runs"], 12);
    let failed = first["failed"].as_u64().unwrap();
    assert!(failed > 0, "{first}");
    // Every failed run the model stopped is found by the rules, and named.
    let results = std::fs::read_to_string(ev.join("results.jsonl")).unwrap();
    let crashed = results.lines().filter(|l| l.contains("\"outcome\":\"failed\"")).count() as u64;
    assert!(crashed > 0, "p=0.3 over 12 tasks fails some model call: {results}");
    assert_eq!(first["rules"]["crashed"], crashed);
    assert_eq!(first["rules"]["model-failed"].as_u64().unwrap(), crashed);
    let groups = first["groups"].as_array().unwrap();
    let grouped: u64 = groups.iter().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(grouped + first["unscanned"].as_u64().unwrap(), failed);
    let model_group =
        groups.iter().find(|g| g["name"] == "the model's calls kept failing").expect("a group of its own");
    assert_eq!(model_group["count"].as_u64().unwrap(), crashed);

    // The report: each example with the replay line that opens it at its event.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let example = &model_group["examples"][0];
    let line = format!(
        "switchyard replay {} --at {}",
        ev.join(example["trace"].as_str().unwrap()).display(),
        example["event"]
    );
    assert!(report.contains(&line), "{line}\n{report}");
    assert!(out.join("groups.png").is_file() && out.join("groups.svg").is_file());
    // The event it points to is a failed model call of that trace.
    let trace = std::fs::read_to_string(ev.join(example["trace"].as_str().unwrap())).unwrap();
    let at = example["event"].as_u64().unwrap() as usize;
    let pointed: Value = serde_json::from_str(trace.lines().nth(at - 1).unwrap()).unwrap();
    assert_eq!(pointed["type"], "ModelFailed", "{pointed}");

    // Again: nothing new to scan, the same groups.
    let again = json(&scan(data, &[ev.to_str().unwrap(), "--embedder", "words", "--json"]));
    assert_eq!((again["runs"].clone(), again["new"].clone()), (12.into(), 0.into()));
    assert_eq!(again["groups"], first["groups"]);
    // A killed scan's torn last line: that run is scanned again, once.
    let runs = out.join("runs.jsonl");
    let text = std::fs::read_to_string(&runs).unwrap();
    let cut = text.trim_end().rfind('\n').unwrap() + 20;
    std::fs::write(&runs, &text[..cut]).unwrap();
    let resumed = json(&scan(data, &[ev.to_str().unwrap(), "--embedder", "words", "--json"]));
    assert_eq!((resumed["runs"].clone(), resumed["new"].clone()), (12.into(), 1.into()));
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), text);
    // Another scanner model into the same folder is refused, --fresh starts over.
    let other = scan(data, &[ev.to_str().unwrap(), "--rules-only"]);
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("--fresh"), "{}", String::from_utf8_lossy(&other.stderr));
    let fresh = json(&scan(data, &[ev.to_str().unwrap(), "--rules-only", "--fresh", "--json"]));
    assert_eq!((fresh["new"].clone(), fresh["groups"].clone()), (12.into(), Value::Array(vec![])));
}

#[test]
fn traces_are_scanned_run_by_run_and_bad_input_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let trace = dir.path().join("run.jsonl");
    let o = run(&[
        "--data-dir",
        data,
        "run",
        "--count",
        "6",
        "--fault",
        "model:actor:http-500:p=0.3",
        "--no-save",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    // Runs the model failed make `run` exit non-zero; the trace holds them all.
    assert!(trace.is_file(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = json(&scan(data, &[trace.to_str().unwrap(), "--embedder", "words", "--json"]));
    assert_eq!(s["runs"], 6, "{s}");
    assert_eq!(s["folder"], dir.path().join("scans/run").to_str().unwrap());

    // A folder that is not an eval.
    let o = scan(data, &[dir.path().to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not an eval's folder"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A trace of another schema version: named, with its line, and nothing written.
    let future = dir.path().join("future.jsonl");
    std::fs::write(&future, "{\"v\":99,\"run\":0,\"step\":0,\"t\":0,\"type\":\"Suspended\"}\n").unwrap();
    let o = scan(data, &[future.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("future.jsonl:1") && err.contains("version 99"), "{err}");
    assert!(!dir.path().join("scans/future").exists());
    // A scan is never written inside the eval.
    let ev = dir.path().join("ev");
    eval(data, &ev, &[]);
    // An eval that kept no traces: said, not scanned as twelve unreadable runs.
    let bare = dir.path().join("bare");
    let o = run(&[
        "--data-dir",
        data,
        "eval",
        "--strategy",
        "react",
        "--count",
        "2",
        "--no-traces",
        "--out",
        bare.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let o = scan(data, &[bare.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("kept no trace"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = scan(data, &[ev.to_str().unwrap(), "--out", ev.join("s").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("beside the eval"));
}

#[test]
fn replay_opens_at_the_event_it_is_given_and_refuses_one_past_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("run.jsonl");
    let o = run(&[
        "--data-dir",
        dir.path().to_str().unwrap(),
        "run",
        "--count",
        "1",
        "--no-save",
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let n = std::fs::read_to_string(&trace).unwrap().lines().count();
    let past = (n + 1).to_string();
    let o = run(&["replay", trace.to_str().unwrap(), "--at", &past]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(&format!("holds {n} events")),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn compare_by_kind_says_which_kinds_of_failure_grew() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let (before, after) = (dir.path().join("before"), dir.path().join("after"));
    eval(data, &before, &["calculator:error:until-cleared"]);
    eval(data, &after, &["calculator:error:until-cleared", "model:actor:http-500:p=0.3"]);
    let ask = |args: &[&str]| {
        let mut all = vec!["--data-dir", data, "compare", before.to_str().unwrap(), after.to_str().unwrap()];
        all.extend_from_slice(args);
        run(&all)
    };
    // Before a scan: an error that says what to run.
    let o = ask(&["--groups"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("switchyard scan"), "{}", String::from_utf8_lossy(&o.stderr));
    for e in [&before, &after] {
        json(&scan(data, &[e.to_str().unwrap(), "--embedder", "words", "--json"]));
    }
    let c = json(&ask(&["--groups", "--json"]));
    let kinds = c["kinds"].as_array().unwrap();
    let grew = &kinds[0];
    assert_eq!(grew["name"], "the model's calls kept failing", "{c}");
    assert_eq!(grew["before"], 0);
    let failed_after = std::fs::read_to_string(after.join("results.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"outcome\":\"failed\""))
        .count();
    assert_eq!(grew["after"].as_u64().unwrap() as usize, failed_after);
    // The calculator's failures are one kind on both sides.
    let calc: Vec<&serde_json::Value> = kinds.iter().filter(|k| k["before"].as_u64().unwrap() > 0).collect();
    assert!(!calc.is_empty(), "{c}");
    let plain = ask(&["--groups"]);
    assert!(String::from_utf8_lossy(&plain.stdout).contains("kinds of failure (from the scans beside the evals)"));
}

#[test]
fn expectations_on_the_path_are_judged_reported_and_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let tasks = dir.path().join("tasks.toml");
    std::fs::write(
        &tasks,
        r#"[[task]]
id = "kept"
query = "What is the capital of the country 'Australia'?"
answer = "Canberra"
[task.expect]
tools = ["geo_lookup"]
args = [{ tool = "geo_lookup", args = { country = "Australia" } }]
max_calls = 2

[[task]]
id = "broken"
query = "Calculate (17 + 5) * 3 - 4."
answer = "62"
[task.expect]
tool_set = ["geo_lookup"]
"#,
    )
    .unwrap();
    let ev = dir.path().join("ev");
    let o = run(&[
        "--data-dir",
        data,
        "eval",
        "--strategy",
        "react",
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        ev.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<Value> = std::fs::read_to_string(ev.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows[0]["expect"], serde_json::json!({"checked": 3}));
    assert_eq!(rows[1]["expect"]["broken"][0]["detail"], "never called: geo_lookup");
    let report = std::fs::read_to_string(ev.join("report.md")).unwrap();
    assert!(report.contains("## Expectations on the path"), "{report}");
    assert!(report.contains("| 2 | 1 (50.0%) | tool_set ×1 |"), "{report}");
    let s = json(&scan(data, &[ev.to_str().unwrap(), "--rules-only", "--json"]));
    assert_eq!(s["rules"]["expect-failed"], 1, "{s}");

    // A mistake in an expectation names the task and the field.
    std::fs::write(&tasks, "[[task]]\nid = \"a\"\nquery = \"q\"\n[task.expect]\nmax_cost = -1\n").unwrap();
    let o = run(&["--data-dir", data, "run", "--tasks", tasks.to_str().unwrap(), "--no-save"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("expect.max_cost") && err.contains("task 1"), "{err}");
    std::fs::write(&tasks, "[[task]]\nid = \"a\"\nquery = \"q\"\n[task.expect]\nmax_call = 1\n").unwrap();
    let o = run(&["--data-dir", data, "run", "--tasks", tasks.to_str().unwrap(), "--no-save"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("max_call"), "{err}");
}
