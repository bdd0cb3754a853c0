//! `bench import` of the CoTools/ToolkenGPT benchmarks (FuncQA, GSM8K-XL,
//! KAMEL, SimpleToolQuestions) read from `../shared/data` (skipped where
//! absent): tool and task counts against the folders' READMEs, three tasks
//! run with the simulated model, a held-back split recognised by its name,
//! bad input named; and the arithmetic builtins replayed against every
//! call the datasets annotate.

use std::path::Path;

use rand::SeedableRng;
use serde_json::{Map, Value, json};

use crate::cli_helpers::{lines, ok, run, s, shared};
use switchyard::dataset::CallText;
use switchyard::task::{Match, numeric_match};
use switchyard::tool::builtin::{BuiltinCtx, evaluate_expression, lookup, math_tool};

fn tool_count(out: &Path) -> usize {
    switchyard::tool::manifest::load_file(&out.join("tools.toml")).unwrap().len()
}

/// The simulated model runs three tasks of a split and prints its table.
fn runs_three(out: &Path, split: &str) {
    let config = out.join("switchyard.toml");
    let tasks = out.join("tasks").join(format!("{split}.jsonl"));
    let data = out.join("data");
    let table = ok(&[
        "--config",
        s(&config),
        "--data-dir",
        s(&data),
        "eval",
        "--strategy",
        "react",
        "--tasks",
        s(&tasks),
        "--count",
        "3",
    ]);
    assert!(table.contains("strategy") && table.contains("react"), "{table}");
    eprintln!("{split}:\n{table}");
}

#[test]
fn funcqa_imports_with_real_tools_and_runs() {
    let Some(dir) = shared("funcqa") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("funcqa");
    let printed = ok(&["bench", "import", "funcqa", s(&dir), s(&out)]);
    assert!(printed.contains("split test_oh: 60 tasks"), "{printed}");
    assert!(printed.contains("test_mh.jsonl"), "the held-back split is named as absent: {printed}");
    assert_eq!(tool_count(&out), 13);
    let tasks = lines(&out.join("tasks/test_oh.jsonl"));
    assert_eq!(tasks.len(), 60);
    assert!(tasks.iter().all(|t| t["match"] == "round2" && t["answer"].is_string()), "{}", tasks[0]);
    // Train's 608 one-call texts (3 have none) and dev's 39.
    let traj = lines(&out.join("trajectories.jsonl"));
    assert_eq!(traj.len(), 608 + 39);
    assert_eq!(traj[0]["tools"], json!(["remainder"]));
    assert!(!traj[0]["query"].as_str().unwrap().starts_with("Q:"));
    let config = std::fs::read_to_string(out.join("switchyard.toml")).unwrap();
    assert!(config.contains("tasks = \"tasks/test_oh.jsonl\"") && config.contains("real"), "{config}");
    runs_three(&out, "test_oh");
}

#[test]
fn gsm8k_xl_imports_its_chains_as_trajectories_and_runs() {
    let Some(dir) = shared("gsm8k-xl") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("gsm8k");
    ok(&["bench", "import", "gsm8k-xl", s(&dir), s(&out)]);
    assert_eq!(tool_count(&out), 4);
    assert_eq!(lines(&out.join("tasks/test.jsonl")).len(), 568);
    // 1,000 dev texts, of which 30 solve by algebra and annotate no call.
    let traj = lines(&out.join("trajectories.jsonl"));
    assert_eq!(traj.len(), 970);
    assert_eq!(traj[0]["tools"], json!(["add", "divide"]));
    let q = traj[0]["query"].as_str().unwrap();
    assert!(q.ends_with("center of a lollipop?"), "the worked solution is cut off: {q}");
    let calls: usize = traj.iter().map(|t| t["tools"].as_array().unwrap().len()).sum();
    assert_eq!(calls, 3023);
    runs_three(&out, "test");
}

#[test]
fn kamel_imports_every_split_with_gold_tools_and_runs() {
    let Some(dir) = shared("kamel") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("kamel");
    let printed = ok(&["bench", "import", "kamel", s(&dir), s(&out)]);
    assert!(printed.contains("cannot be right"), "{printed}");
    assert_eq!(tool_count(&out), 234);
    for (n, distinct) in [(10, 10), (20, 20), (30, 30), (60, 60), (100, 99)] {
        let tasks = lines(&out.join(format!("tasks/test_first_{n}.jsonl")));
        assert_eq!(tasks.len(), 500, "test_first_{n}");
        let gold: std::collections::BTreeSet<&str> = tasks.iter().map(|t| t["tools"][0].as_str().unwrap()).collect();
        assert_eq!(gold.len(), distinct, "test_first_{n}");
        assert!(tasks.iter().all(|t| t.get("match").is_none()));
    }
    assert_eq!(lines(&out.join("trajectories.jsonl")).len(), 1000);
    let config = std::fs::read_to_string(out.join("switchyard.toml")).unwrap();
    assert!(config.contains("tasks = \"tasks/test_first_100.jsonl\"") && config.contains("NOT REAL"), "{config}");
    // A recorded dev call answers as recorded; an unrecorded one fails.
    let call =
        |args: &str| run(&["--config", s(&out.join("switchyard.toml")), "tools", "call", "P1027", "--args", args]);
    let hit = call(r#"{"entity": "Cholmondeley Award"}"#);
    assert!(String::from_utf8_lossy(&hit.stdout).contains("Society of Authors"), "{hit:?}");
    assert!(!call(r#"{"entity": "Nobody Award"}"#).status.success());
    runs_three(&out, "test_first_100");
}

#[test]
fn simpletoolquestions_imports_1836_tools_and_runs() {
    let Some(dir) = shared("simpletoolquestions") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("stq");
    let printed = ok(&["bench", "import", "simpletoolquestions", s(&dir), s(&out)]);
    assert!(printed.contains("test_unseen_837.jsonl"), "the held-back split is named as absent: {printed}");
    assert_eq!(tool_count(&out), 1836);
    let tasks = lines(&out.join("tasks/test.jsonl"));
    assert_eq!(tasks.len(), 1707);
    assert_eq!(tasks[0]["tools"], json!(["people.person.place_of_birth"]));
    assert_eq!(lines(&out.join("trajectories.jsonl")).len(), 1707);
    runs_three(&out, "test");
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("{} → {}: {e}", from.display(), to.display()));
}

#[test]
fn a_split_under_a_held_back_name_is_recognised() {
    // Built from the files present, standing in for the held-back ones.
    if let Some(dir) = shared("funcqa") {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("funcqa");
        copy(&dir.join("tool.json"), &d.join("tool.json"));
        copy(&dir.join("test_oh.jsonl"), &d.join("test_mh.jsonl"));
        let printed = ok(&["bench", "import", "funcqa", s(&d), s(&tmp.path().join("out"))]);
        assert!(printed.contains("split test_mh: 60 tasks"), "{printed}");
        assert!(printed.contains("absent from") && printed.contains("test_oh.jsonl"), "{printed}");
        let config = std::fs::read_to_string(tmp.path().join("out/switchyard.toml")).unwrap();
        assert!(config.contains("tasks = \"tasks/test_mh.jsonl\""), "{config}");
    }
    if let Some(dir) = shared("kamel") {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("kamel");
        copy(&dir.join("tool.json"), &d.join("tool.json"));
        copy(&dir.join("dev.jsonl"), &d.join("dev.jsonl"));
        copy(&dir.join("test_first_60.jsonl"), &d.join("test_first_234.jsonl"));
        copy(&dir.join("test_first_60.jsonl"), &d.join("test_first_500.jsonl"));
        let out = tmp.path().join("out");
        let printed = ok(&["bench", "import", "kamel", s(&d), s(&out)]);
        assert!(printed.contains("split test_first_234: 500 tasks"), "{printed}");
        assert!(printed.contains("split test_first_500: 500 tasks"), "an unknown N is a split too: {printed}");
        let config = std::fs::read_to_string(out.join("switchyard.toml")).unwrap();
        assert!(config.contains("tasks = \"tasks/test_first_234.jsonl\""), "the full library is the main split");
    }
    if let Some(dir) = shared("simpletoolquestions") {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().join("stq");
        copy(&dir.join("seen/tool.json"), &d.join("seen/tool.json"));
        let seen = std::fs::read_to_string(dir.join("seen/test.jsonl")).unwrap();
        let few: String = seen.lines().take(20).map(|l| format!("{l}\n")).collect();
        std::fs::create_dir_all(d.join("unseen")).unwrap();
        std::fs::write(d.join("unseen/test_unseen_837.jsonl"), &few).unwrap();
        std::fs::write(d.join("seen/test_400.jsonl"), &few).unwrap();
        let out = tmp.path().join("out");
        let printed = ok(&["bench", "import", "simpletoolquestions", s(&d), s(&out)]);
        assert!(printed.contains("split test_unseen_837: 20 tasks"), "{printed}");
        assert!(printed.contains("split test_400: 20 tasks"), "{printed}");
        assert_eq!(lines(&out.join("tasks/test_unseen_837.jsonl")).len(), 20);
    }
}

#[test]
fn bad_input_exits_non_zero_naming_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("funcqa");
    std::fs::create_dir_all(&d).unwrap();
    let pool = json!({"tool_dict": {"<add>": 0}, "tool_information": {"<add>": {"tool_name": "<add>",
        "tool_description": "+: adds numbers."}}});
    std::fs::write(d.join("tool.json"), pool.to_string()).unwrap();
    let good = json!({"case_idx": 0, "question": "What is 2 plus 3?", "result": 5});
    std::fs::write(d.join("test_oh.jsonl"), format!("{good}\n{{\"case_idx\": 1, \"question\": \n")).unwrap();
    let out = run(&["bench", "import", "funcqa", s(&d), s(&tmp.path().join("out"))]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("test_oh.jsonl:2: not JSON"), "{err}");

    // The other bad inputs are the library's tests (crates/session/src/import/tests.rs).
}

/// The arguments a builtin reads, from an annotated call's `call_param`
/// (numbers as text, now and then an expression such as "39/3", which the
/// papers' harness evaluated first): a list tool takes them all, the others
/// in the order of their schema's properties.
fn arguments(parameters: &Value, params: &[String]) -> Value {
    let as_value = |p: &String| match evaluate_expression(p.trim()) {
        Ok(x) => json!(x),
        Err(_) => json!(p.trim()),
    };
    let props = parameters["properties"].as_object().unwrap();
    if props.contains_key("numbers") {
        return json!({"numbers": params.iter().map(as_value).collect::<Vec<_>>()});
    }
    let mut args = Map::new();
    for ((name, _), p) in props.iter().zip(params) {
        args.insert(name.clone(), as_value(p));
    }
    Value::Object(args)
}

/// Replays every annotated call through the builtin of its tool; the data
/// returns the papers' rounded value, so a return matches when both agree
/// rounded to two decimals (two significant digits below 0.1).
fn replay(file: &Path) -> (usize, Vec<String>) {
    let mut ctx = BuiltinCtx { rng: rand_chacha::ChaCha8Rng::seed_from_u64(0) };
    let (mut matched, mut misses) = (0, Vec::new());
    for t in CallText::load(file).unwrap() {
        for ((_, tool), d) in t.calls.iter().zip(&t.details) {
            let (function, parameters) = math_tool(tool).unwrap_or_else(|| panic!("{tool} is no builtin"));
            let args = arguments(&parameters, &d.params);
            let expected = d.returns.join(", ");
            let got = lookup(function).unwrap()(&args, &mut ctx);
            match &got {
                Ok(v) if numeric_match(&v["result"].to_string(), &expected, Match::Round2) => matched += 1,
                _ => misses.push(format!("{tool} {:?} → {got:?}, data says {expected:?}", d.params)),
            }
        }
    }
    (matched, misses)
}

#[test]
fn the_math_builtins_give_the_annotated_returns() {
    // The calls the data gets wrong, each checked by hand:
    // - FuncQA train: 6 `divide` calls whose text gets the quotient wrong
    //   the other way round ("1284.98/2356=1.83", where 2356/1284.98 is
    //   1.83), and "2 cups of flour + 1 cup of sugar = 55 cups";
    // - GSM8K-XL dev: `divide ["10", "1", "2"]` returning 20, which is
    //   10 / (1/2) flattened into a list.
    let expected =
        [("funcqa", "train.jsonl", 601, 608), ("funcqa", "dev.jsonl", 39, 39), ("gsm8k-xl", "dev.jsonl", 3022, 3023)];
    for (set, file, matches, calls) in expected {
        let Some(d) = shared(set) else { continue };
        let (matched, misses) = replay(&d.join(file));
        eprintln!("{set}/{file}: {matched} of {} annotated calls match", matched + misses.len());
        for m in &misses {
            eprintln!("  {m}");
        }
        assert_eq!((matched, matched + misses.len()), (matches, calls), "{set}/{file}: {misses:#?}");
    }
}
