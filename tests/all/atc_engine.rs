//! The atc strategy in the engine: a program's calls go through the gate,
//! faults and BTP like any other call; failures are attributed and
//! rewritten (with a diff) up to `reflect_rounds`; sandbox escapes end as
//! clear failures and the session goes on; the user's edit runs next (fix
//! and continue); probing saves schemas that later runs use.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use common::{Roles, builtin, settle, until};
use switchyard::budget::experience::ExperienceStore;
use switchyard::engine::budgeting::BtpSetup;
use switchyard::engine::event::{RefuseReason, RunOutcome, ToolOutcome};
use switchyard::engine::{
    Control, Engine, EngineSetup, Event, EventKind, LogicalClock, Models, Scheduled, SessionState, StrategyKind,
};
use switchyard::model::price::Price;
use switchyard::model::{ChatModel, Role};
use switchyard::program::protocol::ProtocolStore;
use switchyard::program::sandbox::FailKind;
use switchyard::sim::{SimConfig, SimModel};
use switchyard::strategy::atc::{Atc, AtcConfig};
use switchyard::task::Task;
use switchyard::tool::ToolLibrary;
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};

/// A planner that writes these programs, in order (and records every request).
fn programs(programs: &[&str]) -> Arc<Roles> {
    let replies: Vec<String> = programs.iter().map(|p| json!({ "program": p }).to_string()).collect();
    let script: Vec<(Role, &str)> = replies.iter().map(|r| (Role::Planner, r.as_str())).collect();
    Roles::new(&script)
}

/// Each planner prompt the model was shown, its messages joined.
fn prompts(model: &Roles) -> Vec<String> {
    model
        .requests(Role::Planner)
        .iter()
        .map(|r| r.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n"))
        .collect()
}

fn library() -> Arc<ToolLibrary> {
    Arc::new(
        ToolLibrary::new(vec![
            builtin("geo_lookup", "geo_lookup", "Country facts lookup: capital, population, currency", "country"),
            builtin("geo_lookup_mirror", "geo_lookup", "Country facts lookup (mirror)", "country"),
            builtin("calculator", "calculator", "Evaluate an arithmetic expression", "expression"),
        ])
        .unwrap(),
    )
}

fn task(id: &str, q: &str) -> Task {
    Task { id: id.into(), query: q.into(), ..Task::default() }
}

fn setup(model: Arc<dyn ChatModel>, config: AtcConfig) -> EngineSetup {
    let mut s = EngineSetup::new(
        library(),
        Models::single(model, Price::default()),
        Box::new(Atc::new(config)) as Box<dyn switchyard::engine::Strategy>,
    );
    s.clock = Arc::new(LogicalClock::default());
    s.params.top_k = 3;
    s
}

async fn run(setup: EngineSetup, tasks: Vec<Task>) -> Vec<Event> {
    let (mut engine, handle) = Engine::new(setup);
    let mut rx = engine.subscribe();
    let outcome = tokio::time::timeout(Duration::from_secs(60), engine.run(tasks)).await.expect("the session hung");
    drop(handle);
    outcome.unwrap();
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

fn kinds(events: &[Event]) -> Vec<&EventKind> {
    events.iter().map(|e| &e.kind).collect()
}

fn answers(events: &[Event]) -> Vec<(RunOutcome, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunFinished { outcome, answer, .. } => Some((outcome.clone(), answer.clone())),
            _ => None,
        })
        .collect()
}

fn failures(events: &[Event]) -> Vec<(FailKind, Option<u32>, Option<String>, bool)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ProgramFailed { kind, line, tool, last, .. } => Some((*kind, *line, tool.clone(), *last)),
            _ => None,
        })
        .collect()
}

const TOKYO: &str = "let g = geo_lookup(#{country: \"Japan\"});\nprint(g.capital);\ng.capital";

#[tokio::test]
async fn a_program_answers_and_each_of_its_calls_goes_through_the_engine() {
    let model = programs(&[TOKYO]);
    let events = run(setup(model, AtcConfig::default()), vec![task("t", "Capital of Japan?")]).await;
    assert_eq!(answers(&events), vec![(RunOutcome::Answered, Some("Tokyo".into()))]);
    let names: Vec<&str> = kinds(&events)
        .into_iter()
        .map(|k| k.name())
        .filter(|n| n.starts_with("Program") || n.starts_with("Tool"))
        .collect();
    assert_eq!(names, ["ProgramWritten", "ProgramAt", "ToolCall", "ToolResult", "ProgramPrinted", "ProgramReturned"]);
    assert!(
        events.iter().any(|e| matches!(&e.kind, EventKind::ProgramAt { line: Some(1), tool } if tool == "geo_lookup"))
    );
    assert!(events.iter().any(|e| matches!(&e.kind, EventKind::ProgramPrinted { text } if text == "Tokyo")));
}

#[tokio::test]
async fn a_missing_field_is_blamed_on_the_tool_and_rewritten_with_a_diff() {
    let wrong = "let g = geo_lookup(#{country: \"Japan\"});\ng.capital_city";
    let right = "let g = geo_lookup(#{country: \"Japan\"});\ng.capital";
    let model = programs(&[wrong, right]);
    let events = run(setup(model.clone(), AtcConfig::default()), vec![task("t", "Capital of Japan?")]).await;
    assert_eq!(failures(&events), vec![(FailKind::MissingField, Some(2), Some("geo_lookup".into()), false)]);
    let prompts = prompts(&model);
    assert_eq!(prompts.len(), 2);
    let reflect = &prompts[1];
    assert!(reflect.contains("It failed at line 2:") && reflect.contains("g.capital_city"), "{reflect}");
    assert!(reflect.contains("attributed to the tool `geo_lookup`"), "{reflect}");
    // The tool documents no response: the rewrite is shown the fields it really gave.
    assert!(reflect.contains("\"capital\": \"str\""), "{reflect}");
    let diff = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ProgramWritten { round: 1, diff, .. } => Some(diff.clone()),
            _ => None,
        })
        .expect("a rewrite");
    assert!(diff.contains("-g.capital_city") && diff.contains("+g.capital"), "{diff}");
    assert_eq!(answers(&events), vec![(RunOutcome::Answered, Some("Tokyo".into()))]);
    let state = SessionState::from_events(&events);
    assert_eq!(state.finished[0].reflections, 1);
}

#[tokio::test]
async fn a_fault_injected_into_a_programs_tool_is_that_tools_error() {
    let mirror = "let g = geo_lookup_mirror(#{country: \"Japan\"});\ng.capital";
    let model = programs(&["let x = 1;\nlet g = geo_lookup(#{country: \"Japan\"});\ng.capital", mirror]);
    let mut s = setup(model, AtcConfig::default());
    s.schedule = vec![Scheduled {
        before_task: 1,
        control: Control::InjectFault {
            tool: "geo_lookup".into(),
            fault: Fault { mode: FaultMode::Error, scope: FaultScope::Once },
        },
    }];
    let events = run(s, vec![task("t", "Capital of Japan?")]).await;
    let faulted = events.iter().any(|e| {
        matches!(&e.kind, EventKind::ToolResult { tool, fault: Some(_), outcome: ToolOutcome::Err { .. }, .. } if tool == "geo_lookup")
    });
    assert!(faulted, "the injected fault hit the program's call");
    assert_eq!(failures(&events), vec![(FailKind::Tool, Some(2), Some("geo_lookup".into()), false)]);
    assert_eq!(answers(&events), vec![(RunOutcome::Answered, Some("Tokyo".into()))]);
}

#[tokio::test]
async fn reflection_stops_after_its_rounds_and_the_next_task_runs() {
    let bad = "let g = geo_lookup(#{country: \"Japan\"});\ng.nope";
    let model = programs(&[bad, bad, "\"two\"", TOKYO]);
    let config = AtcConfig { reflect_rounds: 1, ..AtcConfig::default() };
    let events = run(setup(model, config), vec![task("a", "Capital of Japan?"), task("b", "Capital of Japan?")]).await;
    let f = failures(&events);
    assert_eq!(f.len(), 2);
    assert!(f[1].3, "the second failure of a task with one round is its last");
    assert_eq!(answers(&events), vec![(RunOutcome::MaxSteps, None), (RunOutcome::Answered, Some("two".into()))]);
    let written = events.iter().filter(|e| matches!(e.kind, EventKind::ProgramWritten { .. })).count();
    assert_eq!(written, 3);
}

#[tokio::test]
async fn escapes_end_in_clear_failures_and_the_session_goes_on() {
    let cases: &[(&str, &[FailKind])] = &[
        ("let i = 0;\nloop { i += 1; }", &[FailKind::Limit, FailKind::Deadline]),
        ("fn f(n) { f(n + 1) }\nf(0)", &[FailKind::Limit]),
        ("let s = \"x\";\nloop { s += s; }", &[FailKind::Limit]),
        ("import \"/etc/passwd\" as p;\n1", &[FailKind::Parse]),
        ("open(\"/etc/passwd\")", &[FailKind::UnknownFunction]),
        ("system(\"sh\")", &[FailKind::UnknownFunction]),
        ("env(\"HOME\")", &[FailKind::UnknownFunction]),
        ("web_search(#{query: \"x\"})", &[FailKind::UnknownFunction]),
        ("geo_lookup(\"Japan\")", &[FailKind::Type]),
    ];
    let scripts: Vec<&str> = cases.iter().map(|(p, _)| *p).collect();
    let model = programs(&scripts);
    let config = AtcConfig { reflect_rounds: 0, ..AtcConfig::default() };
    let tasks: Vec<Task> = (0..cases.len()).map(|i| task(&format!("t{i}"), "Capital of Japan?")).collect();
    let events = run(setup(model, config), tasks).await;
    let f = failures(&events);
    assert_eq!(f.len(), cases.len(), "{f:?}");
    for ((program, expected), (kind, ..)) in cases.iter().zip(&f) {
        assert!(expected.contains(kind), "{program}: {kind:?}");
    }
    // Every error names what went wrong.
    for e in &events {
        if let EventKind::ProgramFailed { error, .. } = &e.kind {
            assert!(error.len() > 8, "{error}");
        }
    }
    assert_eq!(answers(&events).len(), cases.len(), "every task finished");
    assert!(!events.iter().any(|e| matches!(&e.kind, EventKind::ToolCall { tool, .. } if tool == "web_search")));
}

fn calls(seen: &[Event]) -> usize {
    seen.iter().filter(|e| matches!(e.kind, EventKind::ToolCall { .. })).count()
}

#[tokio::test]
async fn a_paused_session_steps_through_a_program_one_call_at_a_time() {
    let two = "let a = geo_lookup(#{country: \"Japan\"});\nlet b = geo_lookup(#{country: \"France\"});\n`${a.capital} ${b.capital}`";
    let mut s = setup(programs(&[two]), AtcConfig::default());
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let join = tokio::spawn(engine.run(vec![task("t", "Capitals?")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    handle.send(Control::Step);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ProgramWritten { .. })).await;
    settle(&handle, &mut rx, &mut seen).await;
    assert_eq!(calls(&seen), 0, "the program's first call waits at the gate");
    handle.send(Control::Step);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ToolResult { .. })).await;
    settle(&handle, &mut rx, &mut seen).await;
    assert_eq!(calls(&seen), 1, "one step, one call");
    handle.send(Control::Resume);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    assert_eq!(calls(&seen), 2);
    assert_eq!(answers(&seen), vec![(RunOutcome::Answered, Some("Tokyo Paris".into()))]);
    drop(handle);
    join.await.unwrap().unwrap();
}

#[tokio::test]
async fn fix_and_continue_runs_the_users_program_next() {
    let bad = "let g = geo_lookup(#{country: \"Japan\"});\ng.nope";
    let mine = "let g = geo_lookup(#{country: \"France\"});\ng.capital";
    let mut s = setup(programs(&[bad]), AtcConfig::default());
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let join = tokio::spawn(engine.run(vec![task("t", "Capital of Japan?")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    handle.send(Control::EditProgram { program: mine.into() });
    handle.send(Control::Resume);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    let by_user: Vec<(u32, bool)> = seen
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ProgramWritten { round, by_user, .. } => Some((*round, *by_user)),
            _ => None,
        })
        .collect();
    assert_eq!(by_user, vec![(0, false), (1, true)]);
    assert_eq!(answers(&seen), vec![(RunOutcome::Answered, Some("Paris".into()))]);
    drop(handle);
    join.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_program_edit_is_refused_by_a_strategy_without_programs() {
    let model = common::Scripted::new(&[&common::finish("x")], "{}");
    let mut s = EngineSetup::new(library(), Models::single(model, Price::default()), StrategyKind::React);
    s.clock = Arc::new(LogicalClock::default());
    s.schedule = vec![Scheduled { before_task: 1, control: Control::EditProgram { program: "1".into() } }];
    let events = run(s, vec![task("t", "q")]).await;
    assert!(
        events.iter().any(|e| matches!(&e.kind, EventKind::ControlRejected { control, .. } if control == "program"))
    );
}

#[tokio::test]
async fn the_budget_refuses_a_programs_call_it_has_no_room_for() {
    let model = programs(&[TOKYO]);
    let mut s = setup(model, AtcConfig { reflect_rounds: 0, ..AtcConfig::default() });
    s.btp = Some(BtpSetup::new(ExperienceStore::in_memory(Vec::new())));
    s.params.budget = Some(0.5);
    let events = run(s, vec![task("t", "Capital of Japan?")]).await;
    assert!(events.iter().any(
        |e| matches!(&e.kind, EventKind::Refused { reason: RefuseReason::Forbidden, tool, .. } if tool == "geo_lookup")
    ));
    assert!(!events.iter().any(|e| matches!(e.kind, EventKind::ToolCall { .. })), "nothing ran");
    let f = failures(&events);
    assert_eq!((f[0].0, f[0].2.as_deref()), (FailKind::Tool, Some("geo_lookup")));
}

fn sim() -> Arc<dyn ChatModel> {
    Arc::new(SimModel::new(SimConfig { noise: 0.0, ..SimConfig::default() }))
}

fn city_library(with_example: bool) -> Arc<ToolLibrary> {
    let search = switchyard::tool::ToolSpec {
        parameters: json!({"type": "object", "required": ["city_name"], "properties": {"city_name": {"type": "string", "description": "The city's name, e.g. 'Lyon'."}}}),
        ..builtin("city_search", "city_search", "Find a city by its name and return its city_id.", "city_name")
    };
    let id = if with_example {
        "The city's identifier, e.g. 'C0002'."
    } else {
        "The city's identifier as city_search returns it."
    };
    let stats = switchyard::tool::ToolSpec {
        parameters: json!({"type": "object", "required": ["city_id"], "properties": {"city_id": {"type": "string", "description": id}}}),
        ..builtin("city_stats", "city_stats", "Statistics of a city given its city_id.", "city_id")
    };
    Arc::new(ToolLibrary::new(vec![search, stats]).unwrap())
}

fn saved(events: &[Event]) -> BTreeMap<String, bool> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ProtocolSaved { tool, schema, .. } => Some((tool.clone(), schema.is_some())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn probing_saves_schemas_that_later_runs_show_the_planner() {
    let dir = tempfile::tempdir().unwrap();
    let store = ProtocolStore::new(dir.path().join("protocols"));
    let mut s = EngineSetup::new(
        city_library(true),
        Models::single(sim(), Price::default()),
        Box::new(Atc::probe_only(AtcConfig::default(), vec![])) as Box<dyn switchyard::engine::Strategy>,
    );
    s.clock = Arc::new(LogicalClock::default());
    s.protocols = Some(store.clone());
    let events = run(s, vec![task("probe", "probe the tools")]).await;
    assert_eq!(saved(&events), BTreeMap::from([("city_search".into(), true), ("city_stats".into(), true)]));
    let lib = city_library(true);
    let probed = store.load(lib.get("city_search").unwrap()).unwrap().expect("saved to the data dir");
    assert!(probed.shape.render().contains("\"city_id\": \"str\""), "{}", probed.shape.render());
    assert!(probed.samples >= 1 && !probed.program.is_empty());

    // A later session reads them: the planner is shown the probed schema.
    let mut s = EngineSetup::new(
        city_library(true),
        Models::single(sim(), Price::default()),
        Box::new(Atc::new(AtcConfig::default())) as Box<dyn switchyard::engine::Strategy>,
    );
    s.clock = Arc::new(LogicalClock::default());
    s.protocols = Some(store);
    s.params.top_k = 2;
    let events = run(s, vec![task("t", "What is the elevation of the city 'Lyon'?")]).await;
    let prompt = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ModelCall { messages, .. } => {
                Some(messages.iter().map(|m| m.content.clone()).collect::<String>())
            }
            _ => None,
        })
        .unwrap();
    assert!(prompt.contains("(probed)") && prompt.contains("elevation"), "{prompt}");
    assert_eq!(answers(&events)[0].0, RunOutcome::Answered);
}

#[tokio::test]
async fn a_tool_that_needs_an_id_is_probed_in_a_chain_with_a_helper() {
    let mut s = EngineSetup::new(
        city_library(false),
        Models::single(sim(), Price::default()),
        Box::new(Atc::probe_only(AtcConfig::default(), vec![])) as Box<dyn switchyard::engine::Strategy>,
    );
    s.clock = Arc::new(LogicalClock::default());
    let events = run(s, vec![task("probe", "probe the tools")]).await;
    assert_eq!(saved(&events), BTreeMap::from([("city_search".into(), true), ("city_stats".into(), true)]));
    let chain = events.iter().find_map(|e| match &e.kind {
        EventKind::Probed { tool, round, helpers, error: None, .. } if tool == "city_stats" => {
            Some((*round, helpers.clone()))
        }
        _ => None,
    });
    assert_eq!(chain, Some((1, vec!["city_search".to_string()])), "probed in round 1 with the helper");
    let alone_failed = events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Probed { tool, round: 0, error: Some(_), .. } if tool == "city_stats"));
    assert!(alone_failed, "it could not be probed alone");
}

#[test]
fn the_atc_section_of_a_config_is_checked_field_by_field() {
    use switchyard::config::Config;
    let path = std::path::Path::new("atc.toml");
    let c = Config::parse("[atc]\nreflect_rounds = 1\nprobe = true\n[atc.limits]\ndeadline_ms = 500\n", path).unwrap();
    assert_eq!((c.atc.reflect_rounds, c.atc.probe, c.atc.limits.deadline_ms), (1, true, 500));
    assert_eq!(c.atc.limits.max_tool_calls, 50, "unset limits keep their defaults");
    for (text, field) in [
        ("[atc]\nreflect_rounds = 99\n", "atc.reflect_rounds"),
        ("[atc]\nprobe_samples = 0\n", "atc.probe_samples"),
        ("[atc.limits]\ndeadline_ms = 0\n", "atc.limits"),
        ("[atc]\nreflect = 2\n", "reflect"),
    ] {
        let e = Config::parse(text, path).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("atc.toml"), "{text}: {e}");
    }
}

#[test]
fn the_example_config_sets_atc_as_the_defaults_do() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    let c = switchyard::config::Config::load(&path).unwrap();
    assert_eq!(c.atc, AtcConfig::default());
}
