//! `bench import api-bank` and `bench import toolbench`: the real data of
//! `../shared/data` (skipped where absent) imported with the counts its
//! READMEs give and run with the simulated model; a small API-Bank folder
//! written here for the gold-call replay, the call accuracy and bad input.

use std::path::Path;

use serde_json::{Value, json};

use crate::cli_helpers::{fails, lines, ok, run, s, shared};
use switchyard::config::Config;
use switchyard::dataset::pylit;
use switchyard::eval::apibank::call_correct;
use switchyard::eval::results::CallMade;
use switchyard::session::ToolCosts;
use switchyard::task::{GoldCall, load_tasks};

/// `eval --count 3` of a split with the simulated model, as JSON.
fn eval3(config: &Path, tasks: &Path, strategies: &str) -> Vec<Value> {
    let out =
        ok(&["--config", s(config), "eval", "--strategy", strategies, "--tasks", s(tasks), "--count", "3", "--json"]);
    serde_json::from_str(&out).unwrap()
}

#[test]
fn api_bank_imports_one_task_per_annotated_call_and_runs() {
    let Some(dir) = shared("api-bank") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ab");
    let printed = ok(&["bench", "import", "api-bank", s(&dir), s(&out)]);
    // The README: 101 APIs; ToolSearcher joins them for level 2.
    assert!(printed.contains("101 APIs of data/all_apis.csv"), "{printed}");
    let functions: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("tools/api-bank.functions.json")).unwrap()).unwrap();
    assert_eq!(functions.len(), 102);
    // 389 calls over 214 dialogues, 119 over 50: one task each.
    let level1 = out.join("tasks/level-1-given-desc.jsonl");
    let level2 = out.join("tasks/level-2-toolsearcher.jsonl");
    let (t1, t2) = (load_tasks(&level1).unwrap(), load_tasks(&level2).unwrap());
    assert_eq!((t1.len(), t2.len()), (389, 119));
    let dialogues = |tasks: &[switchyard::task::Task]| {
        tasks
            .iter()
            .map(|t| t.id.rsplit_once('/').unwrap().0.to_string())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    // Two level-1 dialogues and one level-2 dialogue hold no call.
    assert_eq!((dialogues(&t1), dialogues(&t2)), (212, 49));
    assert_eq!(t2.iter().filter(|t| t.tools == ["ToolSearcher"]).count(), 45);
    for t in t1.iter().chain(&t2) {
        let g = t.gold_call.as_ref().unwrap_or_else(|| panic!("{} has no gold call", t.id));
        assert_eq!(t.tools, std::slice::from_ref(&g.tool));
    }
    // Level 1 offers the dialogue's APIs, the gold among them.
    assert!(t1.iter().all(|t| t.candidates.contains(&t.tools[0]) && t.candidates.len() <= 5));
    let first = &t1[0];
    assert!(first.query.contains("User: ") && first.query.contains("AI: "), "{}", first.query);

    let config = out.join("switchyard.toml");
    // A gold call gets the recorded answer; other arguments a tool error.
    let g = &t1.iter().find(|t| t.tools == ["AddAlarm"]).unwrap().gold_call.clone().unwrap();
    let answer = ok(&["--config", s(&config), "tools", "call", "AddAlarm", "--args", &g.args.to_string()]);
    assert_eq!(answer.trim(), "\"success\"");
    let miss = run(&["--config", s(&config), "tools", "call", "AddAlarm", "--args", r#"{"token": "x", "time": "y"}"#]);
    assert_eq!(miss.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&miss.stderr).contains("not recorded"));

    for split in [&level1, &level2] {
        let m = eval3(&config, split, "react");
        assert_eq!(m[0]["tasks"], 3, "{m:?}");
        assert_eq!(m[0]["judged"], 0, "no gold answers: {m:?}");
    }
    let trace = tmp.path().join("trace.jsonl");
    ok(&[
        "--config",
        s(&config),
        "run",
        "--strategy",
        "react",
        "--tasks",
        s(&level1),
        "--count",
        "3",
        "--trace",
        s(&trace),
    ]);
    let scored: Value =
        serde_json::from_str(&ok(&["bench", "score", "--tasks", s(&level1), s(&trace), "--json"])).unwrap();
    assert_eq!(scored[0]["runs"], 3, "{scored}");
}

#[test]
fn toolbench_imports_the_600_queries_with_btp_setting_and_runs() {
    let Some(dir) = shared("toolbench-samples") else { return };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("tb");
    let printed = ok(&["bench", "import", "toolbench", s(&dir), s(&out)]);
    // The README's 2,128 distinct names count Finish, which is left out.
    let functions: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("tools/toolbench.functions.json")).unwrap()).unwrap();
    assert_eq!(functions.len(), 2127, "{printed}");
    assert!(functions.iter().all(|f| f["function"]["name"] != "Finish"));
    assert!(functions.iter().any(|f| f["function"]["name"] == "7_get_order_history_for_rewards_as_a_service"));
    let all = out.join("tasks/all.jsonl");
    let tasks = load_tasks(&all).unwrap();
    assert_eq!(tasks.len(), 600);
    assert!(tasks.iter().all(|t| t.tools.is_empty() && t.answer.is_none() && !t.candidates.is_empty()));
    for g in ["G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"] {
        assert_eq!(load_tasks(&out.join(format!("tasks/{g}.jsonl"))).unwrap().len(), 100, "{g}");
    }
    let trajectories = lines(&out.join("trajectories.jsonl"));
    assert!(trajectories.len() > 580 && trajectories.len() <= 600, "{}", trajectories.len());
    let gave = trajectories.iter().filter(|t| t["helpful"][0] == true).count();
    assert!((250..=296).contains(&gave), "{gave}");

    // The instruction samples: gold tools named as the evalset names them.
    let examples = load_tasks(&out.join("tasks/data_example.jsonl")).unwrap();
    assert_eq!(examples.len(), 10);
    assert!(examples.iter().all(|t| !t.tools.is_empty() && t.tools.iter().all(|g| t.candidates.contains(g))));
    assert!(examples[0].tools.contains(&"checkhealth_for_squake".to_string()), "{:?}", examples[0].tools);

    let config_path = out.join("switchyard.toml");
    let config = Config::load(&config_path).unwrap();
    assert_eq!(config.params.budget, Some(20.0));
    assert_eq!(config.btp.tool_costs, Some(ToolCosts::Random { lo: 1, hi: 10 }));
    let g1 = out.join("tasks/G1_instruction.jsonl");
    let m = eval3(&config_path, &g1, "react,toolnet");
    assert_eq!(m.len(), 2);
    assert!(m.iter().all(|r| r["tasks"] == 3 && r["label"].as_str().unwrap().contains("btp on")), "{m:?}");
    let m = eval3(&config_path, &out.join("tasks/data_example.jsonl"), "react");
    assert!(m[0]["path_pct"].is_number(), "gold tools give Path%: {m:?}");
}

const CSV_HEADER: &str = "id,类型,应用场景,API名称,参数,路径,类名,input_parameters,expressions,api_info\n";

/// A small API-Bank folder: a catalogue row per `(class, api_info)` and the given dialogues.
fn mini_api_bank(root: &Path, rows: &[(&str, &str)], level1: &[(&str, &str)], level2: &[(&str, &str)]) {
    std::fs::create_dir_all(root.join("data")).unwrap();
    let mut csv = CSV_HEADER.to_string();
    for (i, (class, info)) in rows.iter().enumerate() {
        csv.push_str(&format!("{},x,x,x,x,x,{class},(image: str),x,\"{}\"\n", i + 1, info.replace('"', "\"\"")));
    }
    std::fs::write(root.join("data/all_apis.csv"), csv).unwrap();
    for (folder, files) in [("level-1-given-desc", level1), ("level-2-toolsearcher", level2)] {
        let d = root.join("lv1-lv2-samples").join(folder);
        std::fs::create_dir_all(&d).unwrap();
        for (name, text) in files.iter() {
            std::fs::write(d.join(name), text).unwrap();
        }
    }
}

const TOKEN_INFO: &str = "description = \"Get a token.\"\ninput_parameters = {\n    'username': {'type': 'str', \
                          'description': 'The user.'},\n    'password': {'type': 'str', 'description': 'The password.'}\n}\n\
                          output_parameters = {'token': {'type': 'str', 'description': 'The token.'}}";

fn token_dialogue() -> String {
    let call = json!({"role": "API", "api_name": "GetUserToken", "param_dict": {"username": "alice", "password": "pw1"},
        "result": {"api_name": "GetUserToken", "input": {"username": "alice", "password": "pw1"}, "output": {"token": "t0k"}, "exception": null}});
    format!(
        "{}\n{call}\n{}\n",
        json!({"role": "User", "text": "I am alice, my password is pw1."}),
        json!({"role": "AI", "text": "Done."})
    )
}

#[test]
fn a_small_api_bank_folder_imports_replays_and_scores() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("api-bank");
    let searched = json!({"role": "API", "api_name": "ToolSearcher", "param_dict": {"keywords": "token"},
        "result": {"api_name": "ToolSearcher", "input": {"keywords": "token"}, "exception": null,
                   "output": {"name": "GetUserToken", "description": "Get the user token.",
                              "input_parameters": {"username": {"type": "str", "description": "The user."},
                                                   "password": {"type": "str", "description": "The password."}}}}});
    let level2 = format!("{}\n{searched}\n{}", json!({"role": "User", "text": "Log me in."}), token_dialogue());
    mini_api_bank(
        &root,
        &[("GetUserToken", TOKEN_INFO), ("ImageCaption", ".")],
        &[("GetUserToken-level-1-1.jsonl", &token_dialogue()), ("notes.txt", "not a dialogue")],
        &[("GetUserToken-level-3-1.jsonl", &level2)],
    );
    std::fs::create_dir_all(root.join("test-data")).unwrap();
    let out = tmp.path().join("out");
    let printed = ok(&["bench", "import", "api-bank", s(&root), s(&out)]);
    assert!(printed.contains("no api_info in the catalogue: ImageCaption"), "{printed}");
    assert!(
        printed.contains("not read:") && printed.contains("notes.txt") && printed.contains("test-data"),
        "{printed}"
    );
    let l1 = load_tasks(&out.join("tasks/level-1-given-desc.jsonl")).unwrap();
    let l2 = load_tasks(&out.join("tasks/level-2-toolsearcher.jsonl")).unwrap();
    assert_eq!((l1.len(), l2.len()), (1, 2));
    assert_eq!(l1[0].id, "GetUserToken-level-1-1/1");
    assert_eq!(
        l1[0].gold_call,
        Some(GoldCall { tool: "GetUserToken".into(), args: json!({"username": "alice", "password": "pw1"}) })
    );
    assert_eq!(l2[0].candidates, ["ToolSearcher"]);
    assert_eq!(l2[1].candidates, ["ToolSearcher", "GetUserToken"], "found by the search before");
    assert!(l2[1].query.contains("API call: ToolSearcher"), "{}", l2[1].query);

    let config = out.join("switchyard.toml");
    let answer = ok(&[
        "--config",
        s(&config),
        "tools",
        "call",
        "GetUserToken",
        "--args",
        r#"{"password": "pw1", "username": "alice"}"#,
    ]);
    assert_eq!(serde_json::from_str::<Value>(&answer).unwrap(), json!({"token": "t0k"}));
    let m = eval3(&config, &out.join("tasks/level-1-given-desc.jsonl"), "react,toolnet");
    assert_eq!(m.len(), 2);

    // A trace whose first call is the gold one (a spacing apart) scores 100%; one that calls nothing, 0%.
    let trace = tmp.path().join("trace.jsonl");
    let events = [
        json!({"run": 0, "type": "SessionStarted", "strategy": "react"}),
        json!({"run": 1, "type": "RunStarted", "task_id": "GetUserToken-level-1-1/1"}),
        json!({"run": 1, "type": "ToolCall", "call": 1, "tool": "GetUserToken", "args": {"username": " alice", "password": "pw1"}}),
        json!({"run": 1, "type": "ToolCall", "call": 2, "tool": "GetUserToken", "args": {}}),
    ];
    std::fs::write(&trace, events.iter().map(|e| format!("{e}\n")).collect::<String>()).unwrap();
    let scored: Value = serde_json::from_str(&ok(&[
        "bench",
        "score",
        "--tasks",
        s(&out.join("tasks/level-1-given-desc.jsonl")),
        s(&trace),
        "--json",
    ]))
    .unwrap();
    assert_eq!((scored[0]["runs"].clone(), scored[0]["call_acc_pct"].clone()), (json!(1), json!(100.0)));
}

#[test]
fn bad_api_bank_input_is_an_error_naming_the_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");

    let root = tmp.path().join("torn");
    let torn =
        format!("{}\n{{\"role\": \"API\", \"api_name\": \"GetUserToken\"\n", json!({"role": "User", "text": "hi"}));
    mini_api_bank(&root, &[("GetUserToken", TOKEN_INFO)], &[("GetUserToken-level-1-1.jsonl", &torn)], &[]);
    let err = fails(&["bench", "import", "api-bank", s(&root), s(&out)]);
    assert!(err.contains("GetUserToken-level-1-1.jsonl:2"), "{err}");

    let root = tmp.path().join("broken-info");
    let broken = "description = \"Get a token.\"\ninput_parameters = {'username': {'type': 'str'},, }";
    mini_api_bank(
        &root,
        &[("ImageCaption", "."), ("GetUserToken", broken)],
        &[("GetUserToken-level-1-1.jsonl", &token_dialogue())],
        &[],
    );
    let err = fails(&["bench", "import", "api-bank", s(&root), s(&out)]);
    // The second row starts on line 3 of the file.
    assert!(err.contains("all_apis.csv:3") && err.contains("GetUserToken") && err.contains("api_info"), "{err}");

    let err = fails(&["bench", "import", "toolbench", s(&root), s(&out)]);
    assert!(err.contains("default_evalset_gpt-3.5-turbo_CoT"), "{err}");
    let err = fails(&["bench", "import", "no-such-bench", s(&root), s(&out)]);
    assert!(err.contains("api-bank") && err.contains("toolbench"), "{err}");
}

#[test]
fn the_call_metric_and_the_literal_parser() {
    let gold =
        GoldCall { tool: "BookHotel".into(), args: json!({"name": "Hilton", "rooms": 2, "guests": ["Ann", "Bo"]}) };
    let made = |args: Value| CallMade { tool: "BookHotel".into(), args };
    assert!(
        call_correct(&made(json!({"guests": ["Ann", "Bo"], "rooms": 2, "name": "Hilton "})), &gold),
        "key order, spacing"
    );
    assert!(
        call_correct(&made(json!({"name": "Hilton", "rooms": "2", "guests": "['Ann', 'Bo']"})), &gold),
        "text forms"
    );
    assert!(!call_correct(&made(json!({"name": "Hilton", "rooms": 3, "guests": ["Ann", "Bo"]})), &gold));
    assert!(!call_correct(&CallMade { tool: "BookTicket".into(), args: gold.args.clone() }, &gold));

    let v = pylit::parse("{'a': {'b': [None, True, False]}, \"q\": 'it\\'s', 'n': -1.5}").unwrap();
    assert_eq!(v, json!({"a": {"b": [null, true, false]}, "q": "it's", "n": -1.5}));
    assert!(pylit::parse("{'a': open('x')}").is_err());
}

#[test]
fn the_config_carries_tool_costs_and_refuses_bad_ones() {
    let c = Config::parse("[btp]\ntool_costs = \"random:2-5\"\n", Path::new("c.toml")).unwrap();
    assert_eq!(c.btp.tool_costs, Some(ToolCosts::Random { lo: 2, hi: 5 }));
    let e = Config::parse("[btp]\ntool_costs = \"random:0-5\"\n", Path::new("c.toml")).unwrap_err().to_string();
    assert!(e.contains("c.toml") && e.contains("1 <= LO <= HI"), "{e}");
}
