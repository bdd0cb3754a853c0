use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;

#[test]
fn an_unknown_benchmark_is_an_error_listing_the_known_ones() {
    let d = tempfile::tempdir().unwrap();
    let e = import("toolbank", d.path(), &d.path().join("out"), None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("unknown benchmark 'toolbank'") && KNOWN.iter().all(|k| e.contains(k)), "{e}");
}

#[test]
fn a_spec_is_refused_for_the_benchmarks_that_bring_their_own_tools() {
    let d = tempfile::tempdir().unwrap();
    for name in ["kamel", "api-bank", "toolbench"] {
        let e = import(name, d.path(), &d.path().join("out"), Some("spec.json".into()))
            .map(|_| ())
            .map_err(chain)
            .unwrap_err();
        assert!(e.contains("--spec is for"), "{name}: {e}");
    }
}

/// The error and its causes, as the command line prints them.
fn chain(e: ImportError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text += &format!(": {s}");
        source = s.source();
    }
    text
}

/// A FuncQA folder of one tool and the questions given.
fn funcqa(root: &Path, questions: &str) -> PathBuf {
    let d = root.join("funcqa");
    std::fs::create_dir_all(&d).unwrap();
    let pool = json!({"tool_dict": {"<add>": 0}, "tool_information": {"<add>": {"tool_name": "<add>",
        "tool_description": "+: adds numbers."}}});
    std::fs::write(d.join("tool.json"), pool.to_string()).unwrap();
    std::fs::write(d.join("test_oh.jsonl"), questions).unwrap();
    d
}

#[test]
fn a_small_funcqa_imports_into_a_config_and_tasks_that_load() {
    let tmp = tempfile::tempdir().unwrap();
    let q =
        |i: u32, a: u32, b: u32| json!({"case_idx": i, "question": format!("What is {a} plus {b}?"), "result": a + b});
    let d = funcqa(tmp.path(), &format!("{}\n{}\n", q(0, 2, 3), q(1, 40, 2)));
    let out = tmp.path().join("out");
    let summary = import("funcqa", &d, &out, None).unwrap();

    let config = crate::config::Config::load(&out.join("switchyard.toml")).unwrap();
    assert_eq!(crate::session::load_library(&config).unwrap().len(), 1);
    let tasks = crate::task::load_tasks(&out.join("tasks/test_oh.jsonl")).unwrap();
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[1].query, "What is 40 plus 2?");
    let text = summary.lines.join("\n");
    assert!(text.contains("split test_oh: 2 tasks"), "{text}");
    assert!(text.contains("real builtins"), "{text}");
    assert!(text.contains("run: switchyard --config"), "{text}");
}

#[test]
fn bad_input_is_named_by_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let good = json!({"case_idx": 0, "question": "What is 2 plus 3?", "result": 5});
    let d = funcqa(tmp.path(), &format!("{good}\n{{\"case_idx\": 1, \"question\": \n"));
    let e = import("funcqa", &d, &out, None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("test_oh.jsonl:2: not JSON"), "{e}");
    assert!(!out.join("switchyard.toml").exists(), "nothing is written when a line is bad");

    std::fs::write(d.join("test_oh.jsonl"), format!("{good}\n")).unwrap();
    std::fs::write(d.join("tool.json"), "{\"tool_dict\": {").unwrap();
    let e = import("funcqa", &d, &out, None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("tool.json: not JSON") && e.contains("line 1"), "{e}");

    // A tool the builtins do not have is named, not guessed at.
    std::fs::write(d.join("tool.json"), json!({"tool_information": {"<cube>": "cube: x³"}}).to_string()).unwrap();
    let e = import("funcqa", &d, &out, None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("'cube'"), "{e}");

    // A KB question whose gold tool is not in the pool.
    let k = tmp.path().join("kamel");
    std::fs::create_dir_all(&k).unwrap();
    std::fs::write(k.join("tool.json"), json!({"tool_information": {"<P65>": "discoverer(x): who"}}).to_string())
        .unwrap();
    let q = json!({"case_idx": 0, "question": "Who found X?", "tool": "P99", "result": "Y"});
    std::fs::write(k.join("test_first_10.jsonl"), format!("{q}\n")).unwrap();
    let e = import("kamel", &k, &tmp.path().join("kout"), None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("test_first_10.jsonl: question 1 (case 0): tool 'P99' is not in the tool pool"), "{e}");

    let e = import("funcqa", &tmp.path().join("nowhere"), &out, None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("nowhere"), "{e}");
}

#[test]
fn restbench_without_its_task_files_says_which_it_looked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let e = import("restbench", tmp.path(), &tmp.path().join("out"), None).map(|_| ()).map_err(chain).unwrap_err();
    assert!(e.contains("no RestBench task file found (datasets/tmdb.json, datasets/spotify.json)"), "{e}");
}
