//! The sample tool library, task sets and trajectories under `sample-tools/`,
//! and the behaviour of each builtin tool.

use std::collections::BTreeSet;
use std::time::Duration;

use rand::SeedableRng;
use serde_json::{Value, json};
use switchyard::model::{ChatModel, ChatRequest, Role};
use switchyard::sim::{SimConfig, SimModel};
use switchyard::strategy::prompt::{
    self, ActorAction, ActorInput, CandidateInput, HistoryEntry, Observation, finish_candidate,
};
use switchyard::task::{Task, answer_matches, embedded_sample_dir, load_tasks};
use switchyard::tool::builtin::{self, BuiltinCtx};
use switchyard::tool::exec::Executor;
use switchyard::tool::{ExecutorSpec, ToolErrorKind, ToolLibrary, manifest};

fn library() -> ToolLibrary {
    // The folder itself, as the default config loads it.
    manifest::load_paths(&[embedded_sample_dir()]).unwrap()
}

fn tasks() -> Vec<Task> {
    load_tasks(&embedded_sample_dir().join("tasks/sample.toml")).unwrap()
}

fn call(function: &str, args: Value) -> Result<Value, switchyard::tool::ToolError> {
    let f = builtin::lookup(function).unwrap_or_else(|| panic!("no builtin {function}"));
    let mut ctx = BuiltinCtx { rng: rand_chacha::ChaCha8Rng::seed_from_u64(7) };
    f(&args, &mut ctx)
}

fn result(function: &str, args: Value) -> Value {
    call(function, args.clone()).unwrap_or_else(|e| panic!("{function}({args}) failed: {e}"))
}

fn failure(function: &str, args: Value) -> String {
    match call(function, args.clone()) {
        Err(e) => {
            assert_eq!(e.kind, ToolErrorKind::Failed);
            e.message
        }
        Ok(v) => panic!("{function}({args}) should fail, gave {v}"),
    }
}

#[test]
fn every_manifest_loads_into_one_library() {
    let lib = library();
    assert!(lib.len() >= 16, "{} tools", lib.len());
    let commands = lib.tools().iter().filter(|t| matches!(t.executor, ExecutorSpec::Command { .. })).count();
    assert!(commands >= 2, "{commands} command tools");
    for t in lib.tools() {
        if let ExecutorSpec::Builtin { function } = &t.executor {
            assert!(builtin::names().contains(&function.as_str()), "{} names unknown builtin {function}", t.name);
        }
        assert!(!t.description.is_empty(), "{}", t.name);
    }
    // Every builtin is offered by some manifest; FuncQA's and GSM8K-XL's
    // arithmetic (`math_*`) by the ones `bench import` writes.
    for f in builtin::names().iter().filter(|f| !f.starts_with("math_")) {
        assert!(
            lib.tools().iter().any(|t| matches!(&t.executor, ExecutorSpec::Builtin { function } if function == f)),
            "builtin {f} is in no manifest"
        );
    }
}

#[test]
fn task_sets_name_known_tools() {
    let lib = library();
    for file in ["tasks/sample.toml", "tasks/smoke.toml"] {
        let tasks = load_tasks(&embedded_sample_dir().join(file)).unwrap();
        for t in &tasks {
            assert!(t.answer.is_some(), "{file}: {} has no gold answer", t.id);
            assert!(!t.tools.is_empty(), "{file}: {} has no gold tools", t.id);
            for tool in &t.tools {
                assert!(lib.get(tool).is_some(), "{file}: {} names unknown tool {tool}", t.id);
            }
        }
    }
    let main = tasks();
    assert!(main.len() >= 48);
    assert!(load_tasks(&embedded_sample_dir().join("tasks/smoke.toml")).unwrap().len() >= 6);
}

fn uses_pair(t: &Task) -> bool {
    t.tools.iter().any(|n| n == "geo_lookup" || n == "geo_lookup_mirror")
}

#[test]
fn the_primary_backup_pair_is_common_and_spread() {
    let tasks = tasks();
    let with_pair = tasks.iter().filter(|t| uses_pair(t)).count();
    assert!(with_pair * 100 >= 35 * tasks.len(), "{with_pair} of {}", tasks.len());
    // Spread: every window of 10 tasks uses the pair at least twice.
    for w in tasks.windows(10) {
        assert!(w.iter().filter(|t| uses_pair(t)).count() >= 2, "sparse around {}", w[0].id);
    }
    // Right after the break at task 50 the pair is needed at once.
    assert!(tasks[49..55].iter().all(uses_pair));
}

#[test]
fn trajectories_name_only_known_useful_tools() {
    let lib = library();
    let text = std::fs::read_to_string(embedded_sample_dir().join("trajectories.jsonl")).unwrap();
    let noisy = ["web_search", "random_calculator"];
    let (mut lines, mut primary, mut mirror) = (0, 0, 0);
    let mut seen = BTreeSet::new();
    let queries: BTreeSet<String> = tasks().into_iter().map(|t| t.query).collect();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        let v: Value = serde_json::from_str(line).unwrap();
        let q = v["query"].as_str().unwrap();
        assert!(!queries.contains(q), "trajectory repeats a task: {q}");
        for tool in v["tools"].as_array().unwrap() {
            let tool = tool.as_str().unwrap();
            assert!(lib.get(tool).is_some(), "unknown tool {tool}");
            assert!(!noisy.contains(&tool), "noisy tool {tool} in a trajectory");
            seen.insert(tool.to_string());
            primary += usize::from(tool == "geo_lookup");
            mirror += usize::from(tool == "geo_lookup_mirror");
        }
    }
    assert!((60..=100).contains(&lines), "{lines} trajectories");
    for t in lib.tools().iter().filter(|t| !noisy.contains(&t.name.as_str())) {
        assert!(seen.contains(&t.name), "{} is in no trajectory", t.name);
    }
    let share = primary as f64 / (primary + mirror) as f64;
    assert!((0.55..=0.65).contains(&share), "primary share {share}");
}

/// Replays every task with the simulated model offered exactly the task's
/// gold tools: it must call them in order, with arguments it fills from the
/// task and the history, and its answer from the real tool results must be
/// the gold answer.
#[tokio::test]
async fn gold_tools_reproduce_every_gold_answer() {
    let lib = library();
    let exec = Executor::new();
    let sim = SimModel::new(SimConfig { noise: 0.0, ..SimConfig::default() });
    let mut all = tasks();
    all.extend(load_tasks(&embedded_sample_dir().join("tasks/smoke.toml")).unwrap());
    for task in &all {
        let candidates: Vec<CandidateInput> = task
            .tools
            .iter()
            .map(|n| {
                let t = lib.get(n).unwrap();
                CandidateInput {
                    name: t.name.clone(),
                    weight: None,
                    description: t.description.clone(),
                    parameters: t.parameters.clone(),
                }
            })
            .chain([finish_candidate(None)])
            .collect();
        let mut history: Vec<HistoryEntry> = Vec::new();
        let answer = loop {
            let view = ActorInput {
                task: task.query.clone(),
                history: history.clone(),
                candidates: candidates.clone(),
                notes: vec![],
            };
            let reply = sim.chat(&ChatRequest::new(Role::Actor, prompt::render_actor(&view))).await.unwrap();
            match prompt::parse_actor_reply(&reply).unwrap() {
                ActorAction::Finish { answer } => break answer,
                ActorAction::Call { tool, arguments } => {
                    let step = history.len();
                    assert!(step < task.tools.len(), "{}: extra call {tool} {arguments}", task.id);
                    assert_eq!(tool, task.tools[step], "{}: step {step} called {tool} {arguments}", task.id);
                    let spec = lib.get(&tool).unwrap();
                    let value = exec
                        .call(spec, &arguments, None, 1, Duration::from_secs(10))
                        .await
                        .unwrap_or_else(|e| panic!("{}: {tool}({arguments}) failed: {e}", task.id));
                    history.push(HistoryEntry { tool, arguments, observation: Observation::Result(value) });
                }
            }
        };
        assert_eq!(history.len(), task.tools.len(), "{}: stopped early with {answer:?}", task.id);
        let gold = task.answer.as_deref().unwrap();
        assert!(answer_matches(&answer, gold), "{}: answer {answer:?}, gold {gold:?}", task.id);
    }
}

#[test]
fn calculator_follows_precedence_and_refuses_nonsense() {
    assert_eq!(result("calculator", json!({"expression": "2 + 3 * 4"})), json!({"result": 14}));
    assert_eq!(result("calculator", json!({"expression": "(2 + 3) * 4"}))["result"], 20);
    assert_eq!(result("calculator", json!({"expression": "2 ^ 3 ^ 2"}))["result"], 512);
    assert_eq!(result("calculator", json!({"expression": "-2 ^ 2"}))["result"], -4);
    assert_eq!(result("calculator", json!({"expression": "7 / 2"}))["result"], 3.5);
    assert_eq!(result("calculator", json!({"expression": "17 % 5"}))["result"], 2);
    assert!(failure("calculator", json!({"expression": "1 / (3 - 3)"})).contains("division by zero"));
    assert!(failure("calculator", json!({"expression": "2 +"})).contains("cannot evaluate"));
    assert!(failure("calculator", json!({"expression": 42})).contains("must be a string"));
    assert!(failure("calculator", json!({})).contains("missing"));
}

#[test]
fn noisy_tools_look_right_and_answer_nothing_useful() {
    let a = result("random_calculator", json!({"expression": "2 + 2"}));
    assert!(a["result"].is_number());
    // Seeded: the same generator gives the same number, another seed another.
    assert_eq!(a, result("random_calculator", json!({"expression": "2 + 2"})));
    let f = builtin::lookup("random_calculator").unwrap();
    let other =
        f(&json!({"expression": "2 + 2"}), &mut BuiltinCtx { rng: rand_chacha::ChaCha8Rng::seed_from_u64(8) }).unwrap();
    assert_ne!(a, other);
    assert_eq!(result("web_search", json!({"query": "capital of France"})), json!("Nothing Found"));
}

#[test]
fn unit_conversions() {
    let conv = |v: f64, from: &str, to: &str| {
        result("unit_convert", json!({"value": v, "from_unit": from, "to_unit": to}))["result"].as_f64().unwrap()
    };
    assert!((conv(10.0, "kilometer", "mile") - 6.213_711_922_37).abs() < 1e-9);
    assert_eq!(conv(100.0, "celsius", "fahrenheit"), 212.0);
    assert_eq!(conv(-40.0, "fahrenheit", "celsius"), -40.0);
    assert_eq!(conv(0.0, "celsius", "kelvin"), 273.15);
    assert!((conv(1.0, "gallon", "liter") - 3.785_411_784).abs() < 1e-12);
    assert_eq!(conv(36.0, "kilometer_per_hour", "meter_per_second"), 10.0);
    assert_eq!(conv(1.0, "hectare", "square_meter"), 10_000.0);
    assert_eq!(conv(2.0, "kibibyte", "byte"), 2048.0);
    assert_eq!(conv(3.0, "km", "meters"), 3000.0);
    assert!(
        failure("unit_convert", json!({"value": 1, "from_unit": "kilogram", "to_unit": "mile"}))
            .contains("cannot convert")
    );
    assert!(
        failure("unit_convert", json!({"value": 1, "from_unit": "furlong", "to_unit": "mile"}))
            .contains("unknown unit")
    );
    assert!(
        failure("unit_convert", json!({"value": -500, "from_unit": "celsius", "to_unit": "kelvin"}))
            .contains("absolute zero")
    );
    // Every unit of the manifest's enum is one the tool knows.
    let lib = library();
    let schema = &lib.get("unit_convert").unwrap().parameters;
    let listed: Vec<&str> =
        schema["properties"]["from_unit"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(listed, builtin::unit_names().collect::<Vec<_>>());
}

#[test]
fn date_arithmetic() {
    assert_eq!(
        result("date_add_days", json!({"date": "2024-02-28", "days": 1})),
        json!({"date": "2024-02-29", "weekday": "Thursday"})
    );
    assert_eq!(result("date_add_days", json!({"date": "2024-03-01", "days": -1}))["date"], "2024-02-29");
    assert_eq!(result("days_between", json!({"start_date": "2024-01-01", "end_date": "2025-01-01"}))["days"], 366);
    assert_eq!(result("days_between", json!({"start_date": "2024-01-10", "end_date": "2024-01-01"}))["days"], -9);
    assert_eq!(result("weekday_of", json!({"date": "1969-07-20"})), json!({"weekday": "Sunday", "day_of_year": 201}));
    assert!(failure("weekday_of", json!({"date": "2023-02-29"})).contains("YYYY-MM-DD"));
    assert!(failure("date_add_days", json!({"date": "2024-01-01", "days": 1.5})).contains("whole number"));
    assert!(failure("date_add_days", json!({"date": "2024-01-01", "days": 1e12})).contains("days must be within"));
}

#[test]
fn lookups_over_the_data_files() {
    let fr = result("geo_lookup", json!({"country": "france"}));
    assert_eq!(
        (fr["capital"].as_str(), fr["currency_code"].as_str(), fr["continent"].as_str()),
        (Some("Paris"), Some("EUR"), Some("Europe"))
    );
    assert!(fr["population"].as_u64().unwrap() > 60_000_000);
    assert_eq!(result("geo_lookup", json!({"country": "Türkiye"}))["capital"], "Ankara");
    assert!(failure("geo_lookup", json!({"country": "Atlantis"})).contains("no country named 'Atlantis'"));

    let lyon = result("city_search", json!({"city_name": "Lyon"}));
    let id = lyon["city_id"].as_str().unwrap();
    assert!(id.starts_with('C'));
    let stats = result("city_stats", json!({"city_id": id}));
    assert_eq!((stats["name"].as_str(), stats["country"].as_str()), (Some("Lyon"), Some("France")));
    assert_eq!(result("city_search", json!({"city_name": "sao paulo"}))["name"], "São Paulo");
    assert!(failure("city_stats", json!({"city_id": "C9999"})).contains("unknown city_id"));

    assert!(
        result("glossary_lookup", json!({"term": "Overfitting"}))["definition"]
            .as_str()
            .unwrap()
            .contains("training data")
    );
    assert_eq!(result("glossary_lookup", json!({"term": "regex"}))["category"], "computing");
    assert!(failure("glossary_lookup", json!({"term": "flux capacitor"})).contains("no glossary entry"));

    let c = result("currency_convert", json!({"amount": 100, "from_currency": "USD", "to_currency": "JPY"}));
    assert_eq!(c["result"], 15000);
    let back = result("currency_convert", json!({"amount": 92, "from_currency": "eur", "to_currency": "usd"}));
    assert_eq!(back["result"], 100);
    assert!(
        failure("currency_convert", json!({"amount": 1, "from_currency": "XXX", "to_currency": "USD"}))
            .contains("unknown currency")
    );
}

#[test]
fn numbers_and_factors() {
    let s = result("number_stats", json!({"numbers": [12, 7, 3, 19, 8]}));
    assert_eq!((s["median"].as_f64(), s["mean"].as_f64(), s["count"].as_u64()), (Some(8.0), Some(9.8), Some(5)));
    assert_eq!(result("number_stats", json!({"numbers": [1, 2, 3, 4]}))["median"], 2.5);
    assert!(failure("number_stats", json!({"numbers": []})).contains("1 to"));
    assert!(failure("number_stats", json!({"numbers": [1, "x"]})).contains("numbers[1]"));
    assert_eq!(
        result("prime_factors", json!({"number": 360})),
        json!({"factors": [2, 2, 2, 3, 3, 5], "is_prime": false})
    );
    assert_eq!(result("prime_factors", json!({"number": 97}))["is_prime"], true);
    assert_eq!(result("prime_factors", json!({"number": 999_999_999_989_i64}))["is_prime"], true);
    assert!(failure("prime_factors", json!({"number": 1})).contains("between 2"));
}

#[tokio::test]
async fn command_tools_run_as_scripts() {
    let lib = library();
    let exec = Executor::new();
    let run = |name: &str, args: Value| {
        let spec = lib.get(name).unwrap().clone();
        let exec = exec.clone();
        async move { exec.call(&spec, &args, None, 1, Duration::from_secs(10)).await }
    };
    let s = run("text_stats", json!({"text": "One two three. Four five! Six?"})).await.unwrap();
    assert_eq!((s["words"].as_u64(), s["sentences"].as_u64()), (Some(6), Some(3)));
    assert_eq!(run("roman_numerals", json!({"value": "1994"})).await.unwrap(), json!({"result": "MCMXCIV"}));
    assert_eq!(run("roman_numerals", json!({"value": "mmxxiv"})).await.unwrap(), json!({"result": 2024}));
    let e = run("roman_numerals", json!({"value": "IIII"})).await.unwrap_err();
    assert!(e.message.contains("not a valid Roman numeral"), "{e:?}");
    assert!(run("roman_numerals", json!({"value": "4000"})).await.is_err());
}
