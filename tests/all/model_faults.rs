//! Model faults: each mode through the real OpenAI-compatible client
//! against a scripted loopback server (what the server saw, what the
//! engine did), the scopes, the controls, and every strategy's fallbacks
//! under each mode with the simulated model.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::common::{self, Scripted, call, finish, small_library};
use crate::openai::{Reply, Server, text_reply};
use switchyard::engine::event::{RefuseReason, RunOutcome};
use switchyard::engine::{
    Control, Engine, EngineSetup, Event, EventKind, LogicalClock, Models, Scheduled, SessionState, StrategyKind,
};
use switchyard::model::fault::{ModelFault, ModelFaultMode};
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::{ChatModel, Role};
use switchyard::sim::{SimConfig, SimModel};
use switchyard::task::Task;
use switchyard::tool::fault::{Fault, FaultScope};

fn task() -> Task {
    Task {
        id: "t".into(),
        query: "Evaluate the arithmetic expression 6*7".into(),
        answer: Some("42".into()),
        ..Task::default()
    }
}

fn fault(mode: ModelFaultMode, scope: FaultScope) -> ModelFault {
    Fault { mode, scope }
}

fn inject(target: &str, f: ModelFault) -> Scheduled {
    Scheduled { before_task: 1, control: Control::InjectModelFault { target: target.into(), fault: f } }
}

fn setup(model: Arc<dyn ChatModel>, strategy: StrategyKind, schedule: Vec<Scheduled>) -> EngineSetup {
    let mut s = EngineSetup::new(small_library(), Models::single(model, Default::default()), strategy);
    s.clock = Arc::new(LogicalClock::default());
    s.schedule = schedule;
    s
}

/// The OpenAI client on the test server: retries as given, a short backoff
/// is the client's own (500 ms before the first retry).
fn client(server: &Server, max_retries: u32, timeout_ms: u64) -> Arc<dyn ChatModel> {
    let mut cfg = HttpModelConfig::new("local", server.base_url(), "test-model");
    cfg.max_retries = max_retries;
    cfg.timeout_ms = timeout_ms;
    Arc::new(HttpModel::new(cfg).unwrap())
}

async fn drain(rx: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(e) = rx.recv().await {
        out.push(e);
    }
    out
}

/// Runs one task to its end with nobody at the controls.
async fn run(s: EngineSetup, tasks: Vec<Task>) -> (Vec<Event>, SessionState) {
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    drop(handle);
    let outcome = engine.run(tasks).await.unwrap();
    (drain(&mut rx).await, outcome.state)
}

/// The fault of each model call, in order (replies and failures alike).
fn call_faults(events: &[Event]) -> Vec<Option<ModelFaultMode>> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelReply { fault, .. } | EventKind::ModelFailed { fault, .. } => Some(*fault),
            _ => None,
        })
        .collect()
}

fn outcome(state: &SessionState) -> &RunOutcome {
    &state.finished.last().expect("the run finished").outcome
}

fn failed_error(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ModelFailed { error, .. } => Some(error.clone()),
            _ => None,
        })
        .expect("a model call failed")
}

fn refusals(events: &[Event]) -> Vec<RefuseReason> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Refused { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

/// The server's replies for a run that calls the calculator and answers.
fn good_script() -> Vec<Reply> {
    vec![text_reply(&call("calculator", json!({"expression": "6*7"}))), text_reply(&finish("42"))]
}

fn answered(state: &SessionState) -> bool {
    state.finished.last().is_some_and(|r| r.success == Some(true))
}

// Transport faults: one attempt of one call, inside the client's loop.

#[tokio::test]
async fn http_500_is_retried_and_the_retry_reaches_the_endpoint() {
    let server = Server::start(good_script()).await;
    let f = fault(ModelFaultMode::Http500, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert!(answered(&state), "{:?}", outcome(&state));
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Http500), None]);
    // The injected attempt never left the client; its retry and the next call did.
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn http_500_with_no_retry_left_fails_the_run_clearly() {
    let server = Server::start(good_script()).await;
    let f = fault(ModelFaultMode::Http500, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 0, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    let error = failed_error(&events);
    assert!(error.contains("HTTP 500") && error.contains("injected"), "{error}");
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Http500)]);
    assert!(matches!(outcome(&state), RunOutcome::Failed { error } if error.contains("HTTP 500")));
    assert_eq!(server.seen().len(), 0);
}

#[tokio::test]
async fn a_429_waits_its_retry_after_then_the_retry_reaches_the_endpoint() {
    let server = Server::start(good_script()).await;
    // Longer than the client's first backoff (500 ms): only the Retry-After explains the wait.
    let f = fault(ModelFaultMode::RateLimited { retry_after_ms: 1_200 }, FaultScope::Once);
    let started = std::time::Instant::now();
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert!(answered(&state), "{:?}", outcome(&state));
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::RateLimited { retry_after_ms: 1_200 }), None]);
    assert_eq!(server.seen().len(), 2);
    assert!(started.elapsed() >= std::time::Duration::from_millis(1_200), "the Retry-After was not waited");
}

#[tokio::test]
async fn a_timeout_fails_the_call_without_a_retry() {
    let server = Server::start(good_script()).await;
    let f = fault(ModelFaultMode::Timeout, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 200), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert!(failed_error(&events).starts_with("model call timed out after 200 ms (1 attempt to http://"));
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Timeout)]);
    assert!(matches!(outcome(&state), RunOutcome::Failed { .. }));
    assert_eq!(server.seen().len(), 0, "a hung attempt is not retried");
}

#[tokio::test]
async fn slow_answers_within_the_timeout_and_times_out_beyond_it() {
    let server = Server::start(good_script()).await;
    let f = fault(ModelFaultMode::Slow { ms: 30 }, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert!(answered(&state), "{:?}", outcome(&state));
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Slow { ms: 30 }), None]);
    assert_eq!(server.seen().len(), 2);

    let server = Server::start(good_script()).await;
    let f = fault(ModelFaultMode::Slow { ms: 2_000 }, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 100), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert!(failed_error(&events).starts_with("model call timed out after 100 ms (1 attempt to http://"));
    assert!(matches!(outcome(&state), RunOutcome::Failed { .. }));
    assert_eq!(server.seen().len(), 0);
}

// Spoiling faults: the real reply, spoilt before the client's parser reads it.

#[tokio::test]
async fn a_malformed_reply_fails_in_the_client_s_parser() {
    let server = Server::start(good_script()).await;
    let f = fault(ModelFaultMode::Malformed, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    let error = failed_error(&events);
    assert!(error.contains("could not be read") && error.contains("not a chat completion JSON"), "{error}");
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Malformed)]);
    assert!(matches!(outcome(&state), RunOutcome::Failed { .. }));
    assert_eq!(server.seen().len(), 1, "the endpoint answered; its answer was spoilt");
}

#[tokio::test]
async fn an_empty_reply_is_refused_as_malformed_and_the_run_goes_on() {
    let mut script = vec![text_reply(&call("calculator", json!({"expression": "6*7"})))];
    script.extend(good_script());
    let server = Server::start(script).await;
    let f = fault(ModelFaultMode::Empty, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert_eq!(refusals(&events), vec![RefuseReason::Malformed]);
    let empty = events.iter().find_map(|e| match &e.kind {
        EventKind::ModelReply { text, fault: Some(_), .. } => Some(text.clone()),
        _ => None,
    });
    assert_eq!(empty.as_deref(), Some(""));
    assert!(answered(&state), "{:?}", outcome(&state));
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn a_truncated_json_reply_is_refused_as_malformed_and_the_run_goes_on() {
    let mut script = vec![text_reply(&call("calculator", json!({"expression": "6*7"})))];
    script.extend(good_script());
    let server = Server::start(script).await;
    let f = fault(ModelFaultMode::Truncated, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert_eq!(refusals(&events), vec![RefuseReason::Malformed]);
    let cut = events.iter().find_map(|e| match &e.kind {
        EventKind::ModelReply { text, fault: Some(ModelFaultMode::Truncated), .. } => Some(text.clone()),
        _ => None,
    });
    let whole = call("calculator", json!({"expression": "6*7"}));
    assert_eq!(cut.as_deref(), Some(&whole[..whole.len() / 2]));
    assert!(answered(&state), "{:?}", outcome(&state));
}

#[tokio::test]
async fn a_truncated_react_text_reply_is_read_by_the_text_fallback() {
    // Cut half-way, the Action line survives and its input does not.
    let text = "Action: calculator\nAction Input: {\"expression\": \"6*7\"}";
    let mut script = vec![text_reply(text)];
    script.extend(good_script());
    let server = Server::start(script).await;
    let f = fault(ModelFaultMode::Truncated, FaultScope::Once);
    let (events, state) =
        run(setup(client(&server, 2, 5_000), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
    assert!(refusals(&events).is_empty());
    let first_call = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolCall { tool, args, .. } => Some((tool.clone(), args.clone())),
        _ => None,
    });
    assert_eq!(first_call, Some(("calculator".to_string(), json!({}))), "the cut reply's call, without its input");
    assert!(answered(&state), "{:?}", outcome(&state));
}

#[tokio::test]
async fn a_fault_on_a_model_by_name_hits_its_calls_and_a_role_it_does_not_play_is_never_hit() {
    let mut script = vec![text_reply(&call("calculator", json!({"expression": "6*7"})))];
    script.extend(good_script());
    let server = Server::start(script).await;
    let schedule = vec![
        inject("evaluator", fault(ModelFaultMode::Http500, FaultScope::UntilCleared)),
        inject("local", fault(ModelFaultMode::Empty, FaultScope::Once)),
    ];
    let (events, state) = run(setup(client(&server, 2, 5_000), StrategyKind::React, schedule), vec![task()]).await;
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Empty), None, None]);
    assert!(answered(&state));
    // React never calls the evaluator: its fault is still in force; the spent one is gone.
    let left: Vec<(&str, ModelFaultMode)> =
        state.model_faults.iter().map(|f| (f.target.as_str(), f.fault.mode)).collect();
    assert_eq!(left, vec![("evaluator", ModelFaultMode::Http500)]);
}

// Scopes, controls and the fold, with a scripted model.

fn scripted_calls(n: usize) -> Arc<Scripted> {
    let mut replies: Vec<String> = vec![call("calculator", json!({"expression": "6*7"})); n];
    replies.push(finish("42"));
    let refs: Vec<&str> = replies.iter().map(String::as_str).collect();
    Scripted::new(&refs, "{}")
}

#[tokio::test]
async fn once_and_times_run_out() {
    for (scope, hits) in [(FaultScope::Once, 1), (FaultScope::Times { n: 3 }, 3)] {
        let f = fault(ModelFaultMode::Empty, scope);
        let (events, state) =
            run(setup(scripted_calls(4), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
        let faults = call_faults(&events);
        assert_eq!(faults.iter().filter(|f| f.is_some()).count(), hits, "{scope:?}: {faults:?}");
        assert!(faults[..hits].iter().all(Option::is_some), "the first calls are hit");
        assert!(state.model_faults.is_empty(), "a counted fault that ran out is gone from the fold");
    }
}

#[tokio::test]
async fn a_probability_is_drawn_from_the_seed() {
    let pattern = |seed: u64| async move {
        let f = fault(ModelFaultMode::Slow { ms: 1 }, FaultScope::Probability { p: 0.5 });
        let mut s = setup(scripted_calls(12), StrategyKind::React, vec![inject("actor", f)]);
        s.seed = seed;
        s.params.max_steps = 20;
        let (events, _) = run(s, vec![task()]).await;
        call_faults(&events).iter().map(Option::is_some).collect::<Vec<bool>>()
    };
    let a = pattern(7).await;
    assert_eq!(a, pattern(7).await, "the same seed, the same calls hit");
    assert!(a.contains(&true) && a.contains(&false), "p = 0.5 over {} calls hit {a:?}", a.len());
    assert_ne!(a, pattern(8).await, "another seed, another draw");
    for (p, all) in [(0.0, false), (1.0, true)] {
        let f = fault(ModelFaultMode::Slow { ms: 1 }, FaultScope::Probability { p });
        let (events, _) =
            run(setup(scripted_calls(3), StrategyKind::React, vec![inject("actor", f)]), vec![task()]).await;
        assert!(call_faults(&events).iter().all(|f| f.is_some() == all), "p = {p}");
    }
}

#[tokio::test]
async fn without_a_model_fault_no_event_carries_one_and_the_trace_reads_as_before() {
    let (events, _) = run(setup(scripted_calls(1), StrategyKind::React, vec![]), vec![task()]).await;
    assert!(call_faults(&events).iter().all(Option::is_none));
    for e in &events {
        let line = serde_json::to_string(e).unwrap();
        assert!(!line.contains("\"fault\""), "{line}");
    }
}

#[tokio::test]
async fn until_cleared_holds_until_it_is_cleared() {
    // Never cleared: every reply is empty, and the run ends at its step limit.
    let f = fault(ModelFaultMode::Empty, FaultScope::UntilCleared);
    let mut s = setup(scripted_calls(3), StrategyKind::React, vec![inject("actor", f)]);
    s.params.max_steps = 4;
    let (events, state) = run(s, vec![task()]).await;
    assert_eq!(call_faults(&events), vec![Some(ModelFaultMode::Empty); 4]);
    assert_eq!(outcome(&state), &RunOutcome::MaxSteps);
    assert_eq!(state.model_faults.len(), 1, "still in force");

    // Cleared after the first hit: the run goes on unhurt.
    let mut s = setup(scripted_calls(2), StrategyKind::React, vec![inject("actor", f)]);
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let run = tokio::spawn(engine.run(vec![task()]));
    let mut seen = Vec::new();
    handle.send(Control::Step);
    common::until(&mut rx, &mut seen, |k| matches!(k, EventKind::ModelReply { fault: Some(_), .. })).await;
    handle.send(Control::ClearModelFault { target: Some("actor".into()) });
    handle.send(Control::Resume);
    drop(handle);
    seen.extend(drain(&mut rx).await);
    let state = run.await.unwrap().unwrap().state;
    assert!(seen.iter().any(|e| matches!(&e.kind, EventKind::ModelFaultCleared { target: Some(t) } if t == "actor")));
    assert_eq!(call_faults(&seen).iter().filter(|f| f.is_some()).count(), 1);
    assert!(answered(&state));
    assert!(state.model_faults.is_empty());
}

#[tokio::test]
async fn an_unknown_target_is_rejected_and_named() {
    let bad = inject("nobody", fault(ModelFaultMode::Empty, FaultScope::Once));
    let (events, state) = run(setup(scripted_calls(1), StrategyKind::React, vec![bad]), vec![task()]).await;
    let why = events.iter().find_map(|e| match &e.kind {
        EventKind::ControlRejected { control, why } if control == "inject model fault" => Some(why.clone()),
        _ => None,
    });
    let why = why.expect("rejected");
    assert!(why.contains("no role or model named 'nobody'") && why.contains("scripted"), "{why}");
    assert!(call_faults(&events).iter().all(Option::is_none));
    assert!(answered(&state));
}

#[test]
fn the_fold_shows_a_fault_injected_spent_and_cleared() {
    let f = fault(ModelFaultMode::Http500, FaultScope::Times { n: 2 });
    let kinds = [
        EventKind::ModelFaultInjected { target: "actor".into(), fault: f },
        EventKind::ModelFailed {
            call: 1,
            role: Role::Actor,
            model: "m".into(),
            error: "x".into(),
            latency_ms: 0,
            fault: Some(ModelFaultMode::Http500),
        },
    ];
    let events: Vec<Event> = kinds.into_iter().map(|kind| Event { v: 2, run: 1, step: 0, t: 0, kind }).collect();
    let mut state = SessionState::from_events(&events);
    assert_eq!(state.model_faults[0].left, Some(1));
    assert_eq!(state.model_faults[0].describe(), "http-500 (times=2, 1 left)");
    state.apply(&Event { v: 2, run: 1, step: 0, t: 0, kind: EventKind::ModelFaultCleared { target: None } });
    assert!(state.model_faults.is_empty());
}

// Every strategy under every mode, with the simulated model (no HTTP: the
// fault is applied around the whole call): the run ends with an outcome.

#[tokio::test]
async fn every_strategy_ends_every_run_under_every_mode() {
    let modes = [
        ModelFaultMode::Malformed,
        ModelFaultMode::Empty,
        ModelFaultMode::Truncated,
        ModelFaultMode::Http500,
        ModelFaultMode::RateLimited { retry_after_ms: 1 },
        ModelFaultMode::Timeout,
        ModelFaultMode::Slow { ms: 1 },
    ];
    let strategies = [
        (StrategyKind::React, "actor"),
        (StrategyKind::Toolnet, "actor"),
        (StrategyKind::Rewoo, "planner"),
        (StrategyKind::Atc, "planner"),
    ];
    for (strategy, role) in strategies {
        for mode in modes {
            let sim: Arc<dyn ChatModel> = Arc::new(SimModel::new(SimConfig { noise: 0.0, ..SimConfig::default() }));
            let f = fault(mode, FaultScope::Once);
            let (events, state) = run(setup(sim, strategy, vec![inject(role, f)]), vec![task()]).await;
            let what = format!("{strategy} under {mode}");
            assert_eq!(state.finished.len(), 1, "{what}: no run finished");
            assert_eq!(call_faults(&events).iter().filter(|f| f.is_some()).count(), 1, "{what}");
            let outcome = outcome(&state);
            match mode {
                // No retries without an HTTP client: the call's error ends the run.
                ModelFaultMode::Malformed
                | ModelFaultMode::Http500
                | ModelFaultMode::RateLimited { .. }
                | ModelFaultMode::Timeout => {
                    assert!(matches!(outcome, RunOutcome::Failed { .. }), "{what}: {outcome:?}")
                }
                ModelFaultMode::Slow { .. } => assert!(answered(&state), "{what}: {outcome:?}"),
                // A spoilt reply meets the strategy's own reader: react and toolnet
                // refuse it, rewoo's planner retries, atc refuses an empty program
                // and reflects on a cut one that failed; each then answers.
                ModelFaultMode::Empty | ModelFaultMode::Truncated => {
                    let recovery = match (strategy, mode) {
                        (StrategyKind::Rewoo, _) => "PlanRejected",
                        (StrategyKind::Atc, ModelFaultMode::Truncated) => "ProgramFailed",
                        _ => "Refused",
                    };
                    let seen: Vec<&str> = events
                        .iter()
                        .filter(|e| {
                            matches!(
                                &e.kind,
                                EventKind::Refused { reason: RefuseReason::Malformed, .. }
                                    | EventKind::PlanRejected { .. }
                                    | EventKind::ProgramFailed { .. }
                            )
                        })
                        .map(|e| e.kind.name())
                        .collect();
                    assert_eq!(seen, vec![recovery], "{what}");
                    assert!(answered(&state), "{what}: {outcome:?}");
                }
            }
        }
    }
}

// The command line.

#[test]
fn a_model_fault_from_the_command_line_and_its_bad_specs() {
    use crate::cli_helpers::{fails, lines, ok, s};
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("t.jsonl");
    let base = ["--data-dir", s(d.path()), "run", "--task", "Calculate 6 * 7", "--strategy", "react"];
    let mut args = base.to_vec();
    args.extend(["--fault", "model:actor:empty:once", "--trace", s(&trace), "--json"]);
    ok(&args);
    let events = lines(&trace);
    let of = |t: &str| events.iter().filter(|e| e["type"] == t).cloned().collect::<Vec<_>>();
    let injected = of("ModelFaultInjected");
    assert_eq!(injected.len(), 1);
    assert_eq!(injected[0]["target"], "actor");
    assert_eq!(injected[0]["fault"], json!({"mode": "empty", "scope": "once"}));
    let hit: Vec<_> = of("ModelReply").into_iter().filter(|e| e.get("fault").is_some()).collect();
    assert_eq!(hit.len(), 1);
    assert_eq!((hit[0]["fault"]["mode"].as_str(), hit[0]["text"].as_str()), (Some("empty"), Some("")));
    assert!(of("Refused").iter().any(|e| e["reason"] == "malformed"));

    for (spec, needs) in [
        ("model:actor:explode", &["bad model fault", "unknown mode 'explode'", "http-500", "429[=MS]", "slow=MS"][..]),
        ("model:actor", &["no mode"]),
        ("model:nobody:empty", &["no role or model named 'nobody'", "actor", "sim"]),
        ("actor:http-500", &["unknown mode 'http-500'", "model:ROLE:MODE"]),
    ] {
        let mut args = base.to_vec();
        args.extend(["--fault", spec]);
        let err = fails(&args);
        assert!(needs.iter().all(|n| err.contains(n)), "--fault {spec}: {err}");
    }
}
