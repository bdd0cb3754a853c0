//! The engine through its control channel: gates, stepping, controls taking
//! effect at decision points, refusals, faults, and the fold.

use crate::common;

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use common::{Scripted, call, finish, small_library};
use switchyard::engine::event::{RefuseReason, RunOutcome, ToolOutcome};
use switchyard::engine::fold::{Mode, SessionState};
use switchyard::engine::trace::{TraceWriter, read_trace};
use switchyard::engine::{
    Control, Engine, EngineSetup, Event, EventKind, LogicalClock, Models, ParamChange, Scheduled, StrategyKind,
};
use switchyard::model::price::Price;
use switchyard::task::Task;
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};

fn task(q: &str, gold: &str) -> Task {
    Task { id: "t".into(), query: q.into(), answer: Some(gold.into()), ..Task::default() }
}

fn setup(model: Arc<Scripted>, strategy: StrategyKind) -> EngineSetup {
    let mut s = EngineSetup::new(
        small_library(),
        Models::single(model, Price { input_per_mtok: 1000.0, output_per_mtok: 2000.0 }),
        strategy,
    );
    s.clock = Arc::new(LogicalClock::default());
    s.params.top_k = 4;
    s
}

async fn drain(rx: &mut UnboundedReceiver<Event>) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(e) = rx.recv().await {
        out.push(e);
    }
    out
}

/// Reads events until one matches.
async fn until(rx: &mut UnboundedReceiver<Event>, seen: &mut Vec<Event>, pred: impl Fn(&EventKind) -> bool) {
    loop {
        let e = rx.recv().await.expect("engine ended before the expected event");
        let hit = pred(&e.kind);
        seen.push(e);
        if hit {
            return;
        }
    }
}

fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}

// The engine runs on the same single thread as the test, so whenever the
// test waits, the engine runs until it blocks at a closed gate: a gate that
// failed to close would let it run on, and the order below would show it.
#[tokio::test(flavor = "current_thread")]
async fn step_lets_exactly_one_call_through() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "6*7"})), &finish("42")], r#"{"scores": {}}"#);
    let mut s = setup(model, StrategyKind::React);
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let run = tokio::spawn(engine.run(vec![task("Evaluate the arithmetic expression 6*7", "42")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    // Three calls in this run: actor, calculator, actor (react has no evaluator).
    for _ in 0..3 {
        handle.send(Control::Step);
        until(&mut rx, &mut seen, |k| matches!(k, EventKind::ModelReply { .. } | EventKind::ToolResult { .. })).await;
    }
    handle.send(Control::Resume);
    drop(handle);
    seen.extend(drain(&mut rx).await);
    let outcome = run.await.unwrap().unwrap();

    // Between two Stepped events, exactly one call starts.
    let mut calls_per_step = Vec::new();
    for e in &seen {
        match e.kind {
            EventKind::Stepped => calls_per_step.push(0),
            EventKind::ModelCall { .. } | EventKind::ToolCall { .. } => {
                *calls_per_step.last_mut().expect("a call happened before any step") += 1;
            }
            _ => {}
        }
    }
    assert_eq!(calls_per_step, vec![1, 1, 1], "events: {:?}", names(&seen));
    assert_eq!(outcome.state.finished.len(), 1);
    assert_eq!(outcome.state.finished[0].success, Some(true));
}

#[tokio::test(flavor = "current_thread")]
async fn pause_resume_and_a_change_made_while_paused_is_recorded_at_that_step() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "1+1"})), &finish("2")], "{}");
    let (mut engine, handle) = Engine::new(setup(model, StrategyKind::React));
    let mut rx = engine.subscribe();
    handle.send(Control::Pause);
    let run = tokio::spawn(engine.run(vec![task("Evaluate the arithmetic expression 1+1", "2")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    handle.send(Control::SetParam { change: ParamChange::Alpha(0.9) });
    handle.send(Control::SetParam { change: ParamChange::Beta(7.0) });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ParamChanged { rejected: Some(_), .. })).await;
    // Nothing ran while paused.
    assert!(!seen.iter().any(|e| matches!(e.kind, EventKind::ModelCall { .. })));
    handle.send(Control::Resume);
    drop(handle);
    seen.extend(drain(&mut rx).await);
    let outcome = run.await.unwrap().unwrap();

    let changed: Vec<&Event> = seen.iter().filter(|e| matches!(e.kind, EventKind::ParamChanged { .. })).collect();
    assert_eq!(changed.len(), 2);
    // Recorded in run 1, step 1: the decision point where it took effect.
    assert_eq!((changed[0].run, changed[0].step), (1, 1));
    assert_eq!(outcome.state.params.alpha, 0.9);
    assert_eq!(outcome.state.params.beta, 0.5, "an invalid beta is refused, not applied");
    let first_call = seen.iter().position(|e| matches!(e.kind, EventKind::ModelCall { .. })).unwrap();
    let resumed = seen.iter().position(|e| matches!(e.kind, EventKind::Resumed)).unwrap();
    assert!(resumed < first_call);
}

#[tokio::test]
async fn a_tool_that_was_not_offered_is_refused_and_never_runs() {
    // react offers the top 1 retrieved tool: the calculator for this task.
    let model = Scripted::new(
        &[&call("web_search", json!({"query": "x"})), &call("calculator", json!({"expression": "2+3"})), &finish("5")],
        "{}",
    );
    let mut s = setup(model.clone(), StrategyKind::React);
    s.params.top_k = 1;
    let (mut engine, _h) = Engine::new(s);
    let mut rx = engine.subscribe();
    let outcome = engine.run(vec![task("Evaluate the arithmetic expression 2+3", "5")]).await.unwrap();
    let events = drain(&mut rx).await;
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Refused { tool, reason, .. } => Some((tool.as_str(), *reason)),
            _ => None,
        })
        .collect();
    assert_eq!(refused, vec![("web_search", RefuseReason::NotOffered)]);
    let ran: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ran, vec!["calculator"]);
    // The model is told about the refusal in its next prompt.
    let second = &model.seen.lock().unwrap()[1];
    assert!(second.messages[1].content.contains("refused: 'web_search' is not among the candidates"));
    assert_eq!(outcome.state.finished[0].success, Some(true));
}

#[tokio::test]
async fn malformed_replies_are_refused_and_the_run_goes_on() {
    let model = Scripted::new(&["I think I should use a tool", &finish("4")], "{}");
    let (engine, _h) = Engine::new(setup(model, StrategyKind::React));
    let outcome = engine.run(vec![task("2+2", "4")]).await.unwrap();
    let r = &outcome.state.finished[0];
    assert_eq!(r.steps, 2);
    assert_eq!(r.success, Some(true));
}

#[tokio::test]
async fn a_scheduled_fault_hits_the_tool_and_the_run_goes_on() {
    let model = Scripted::new(
        &[
            &call("geo_lookup", json!({"country": "France"})),
            &call("geo_lookup_mirror", json!({"country": "France"})),
            &finish("Paris"),
        ],
        "{}",
    );
    let mut s = setup(model, StrategyKind::React);
    s.schedule = vec![Scheduled {
        before_task: 1,
        control: Control::InjectFault {
            tool: "geo_lookup".into(),
            fault: Fault { mode: FaultMode::Crash, scope: FaultScope::Once },
        },
    }];
    let (mut engine, _h) = Engine::new(s);
    let mut rx = engine.subscribe();
    let outcome = engine.run(vec![task("What is the capital of 'France'?", "Paris")]).await.unwrap();
    let events = drain(&mut rx).await;
    let results: Vec<(&str, bool, Option<FaultMode>)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, outcome, fault, .. } => {
                Some((tool.as_str(), matches!(outcome, ToolOutcome::Ok { .. }), *fault))
            }
            _ => None,
        })
        .collect();
    assert_eq!(results, vec![("geo_lookup", false, Some(FaultMode::Crash)), ("geo_lookup_mirror", true, None)]);
    assert_eq!(outcome.state.finished[0].success, Some(true));
    assert!(outcome.state.faults.is_empty(), "a once-fault is spent after one call");
}

#[tokio::test]
async fn toolnet_evaluates_and_updates_the_graph_and_score_edits_recompute_rows() {
    let model = Scripted::new(
        &[&call("geo_lookup", json!({"country": "Japan"})), &finish("Tokyo")],
        r#"{"scores": {"geo_lookup": 2, "nonexistent": 3}}"#,
    );
    let (mut engine, handle) = Engine::new(setup(model, StrategyKind::Toolnet));
    let mut rx = engine.subscribe();
    handle.send(Control::EditScore { tool: "web_search".into(), score: -3.0 });
    let outcome = engine.run(vec![task("What is the capital of 'Japan'?", "Tokyo")]).await.unwrap();
    let events = drain(&mut rx).await;
    let evaluated = events.iter().find_map(|e| match &e.kind {
        EventKind::Evaluated { scores } => Some(scores.clone()),
        _ => None,
    });
    assert_eq!(
        evaluated.unwrap().into_iter().collect::<Vec<_>>(),
        vec![("geo_lookup".to_string(), 2)],
        "only tools used are scored"
    );
    let g = outcome.graph.unwrap();
    assert_eq!(g.score("geo_lookup"), Some(2.0));
    assert_eq!(g.score("web_search"), Some(-3.0));
    // The engine's own fold leaves the graph's view out; a fold of its
    // events sees the same graph the engine holds.
    assert!(outcome.state.graph.is_none());
    let folded = SessionState::from_events(&events);
    let view = folded.graph.as_ref().unwrap();
    for from in ["start", "geo_lookup", "calculator"] {
        for (to, w) in g.out_edges(from) {
            assert!((view.weight(from, &to).unwrap() - w).abs() < 1e-12, "{from}->{to}");
        }
    }
    // From start, the well-scored tool now outweighs the penalised one.
    assert!(g.weight("start", "geo_lookup").unwrap() > g.weight("start", "web_search").unwrap());
}

/// Without trajectories a tool's row is the uniform prior over the whole
/// library: from it the actor is offered what the retriever picks (top-K),
/// weighed from that row, and `finish`, not every tool of the library.
#[tokio::test]
async fn toolnet_offers_the_retrievers_picks_from_a_tool_of_the_uniform_row() {
    let model = Scripted::new(&[&call("geo_lookup", json!({"country": "Japan"})), &finish("Tokyo")], "{}");
    let mut s = setup(model, StrategyKind::Toolnet);
    s.params.top_k = 2;
    let (mut engine, _handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let outcome = engine.run(vec![task("What is the capital of 'Japan'?", "Tokyo")]).await.unwrap();
    let events = drain(&mut rx).await;
    let g = outcome.graph.unwrap();
    assert!(g.follows_any_tool_row("geo_lookup"));
    let offered = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Candidates { from, offered } if from == "geo_lookup" => Some(offered.clone()),
            _ => None,
        })
        .expect("candidates offered from geo_lookup");
    let names: Vec<&str> = offered.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names.len(), 3, "two retrieved tools and finish, of a library of four: {names:?}");
    assert!(names.contains(&"finish"), "{names:?}");
    for o in &offered {
        let to = if o.name == "finish" { "end" } else { o.name.as_str() };
        assert_eq!(o.weight, g.weight("geo_lookup", to), "{}", o.name);
    }
}

/// A graph saved before the library gained a tool takes it in when a
/// session starts; one holding the library's tools in another order keeps
/// them as they are.
#[tokio::test]
async fn a_session_brings_its_graph_up_to_the_library() {
    use switchyard::graph::ToolGraph;
    let names: Vec<String> = small_library().names().map(str::to_owned).collect();
    assert!(names.len() > 2, "{names:?}");
    let run = |graph: ToolGraph| async move {
        let model = Scripted::new(&[&finish("Tokyo")], r#"{"scores": {}}"#);
        let mut s = setup(model, StrategyKind::Toolnet);
        s.graph = Some(graph);
        let (engine, _handle) = Engine::new(s);
        engine.run(vec![task("What is the capital of 'Japan'?", "Tokyo")]).await.unwrap().graph.unwrap()
    };

    let missing = names.last().unwrap().clone();
    let older = ToolGraph::fully_connected(&names[..names.len() - 1]);
    assert!(!older.contains(&missing));
    let g = run(older).await;
    assert!(g.contains(&missing), "{missing} joined");
    assert_eq!(g.tools().collect::<Vec<_>>(), names, "the new tool last");
    assert!(g.weight("start", &missing).is_some_and(|w| w > 0.0));

    let reversed: Vec<String> = names.iter().rev().cloned().collect();
    let g = run(ToolGraph::fully_connected(&reversed)).await;
    assert_eq!(g.tools().collect::<Vec<_>>(), reversed, "nothing added, nothing moved");
}

/// A graph built for a library is known to hold its tools, and its clones
/// skip the check; a library that gained a tool since is other contents,
/// and the session still takes the tool in.
#[tokio::test]
async fn a_graph_built_for_a_library_takes_in_a_tool_the_library_gained_since() {
    let before = small_library();
    // The sample trajectories name tools this library lacks.
    let config = switchyard::config::Config { trajectories: None, ..Default::default() };
    let graph = switchyard::session::build_graph(&config, &before).unwrap();
    let mut after = (*before).clone();
    after
        .insert(common::builtin("calculator_two", "calculator", "Evaluate an expression, again", "expression"))
        .unwrap();
    assert_ne!(after.generation(), before.generation());
    assert!(!graph.contains("calculator_two"));
    let model = Scripted::new(&[&finish("Tokyo")], r#"{"scores": {}}"#);
    let mut s = setup(model, StrategyKind::Toolnet);
    s.library = Arc::new(after);
    s.graph = Some(graph.clone());
    let (engine, _handle) = Engine::new(s);
    let g = engine.run(vec![task("What is the capital of 'Japan'?", "Tokyo")]).await.unwrap().graph.unwrap();
    assert!(g.contains("calculator_two"), "the tool the library gained joined");
    assert_eq!(g.tool_count(), graph.tool_count() + 1);
}

#[tokio::test]
async fn stop_ends_the_session_and_keeps_what_was_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let model = Scripted::new(&[&call("calculator", json!({"expression": "1+2"})), &finish("3")], "{}");
    let mut s = setup(model, StrategyKind::React);
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    engine.set_trace(TraceWriter::create(&path).unwrap());
    handle.send(Control::Step);
    handle.send(Control::Stop);
    let outcome =
        engine.run(vec![task("Evaluate the arithmetic expression 1+2", "3"), task("1+2", "3")]).await.unwrap();
    assert_eq!(outcome.state.finished.len(), 1);
    assert_eq!(outcome.state.finished[0].outcome, RunOutcome::Stopped);
    assert_eq!(outcome.state.mode, Mode::Finished);
    let replayed = SessionState::from_events(&read_trace(&path).unwrap());
    assert_eq!(replayed, outcome.state);
}

#[tokio::test]
async fn live_fold_trace_fold_and_engine_state_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let model = Scripted::new(
        &[
            &call("web_search", json!({"query": "Peru"})),
            &call("geo_lookup", json!({"country": "Peru"})),
            &finish("Lima"),
        ],
        r#"{"scores": {"web_search": -3, "geo_lookup": 1}}"#,
    );
    let (mut engine, _h) = Engine::new(setup(model, StrategyKind::Toolnet));
    engine.set_trace(TraceWriter::create(&path).unwrap());
    let mut rx = engine.subscribe();
    let outcome = engine.run(vec![task("capital of 'Peru'", "Lima")]).await.unwrap();
    let live = drain(&mut rx).await;
    let from_trace = read_trace(&path).unwrap();
    assert_eq!(live, from_trace);
    // The engine's own fold leaves the graph's view out (the engine holds
    // the graph); folded alike, the events give its state.
    assert_eq!(SessionState::without_graph().fold(&live), outcome.state);
    assert!(SessionState::from_events(&live).graph.is_some());
    let acct = &outcome.state.accounts[&(switchyard::model::Role::Actor, "scripted".to_string())];
    assert_eq!(acct.calls, 3);
    assert_eq!(acct.usage.prompt_tokens, 30);
    // 10 prompt tokens at 1000/M and 2 completion tokens at 2000/M, per call.
    assert!((acct.cost - 3.0 * (10.0 * 1000.0 + 2.0 * 2000.0) / 1e6).abs() < 1e-12);
}

#[tokio::test]
async fn every_fault_mode_gives_its_observation_and_event() {
    use switchyard::tool::ToolErrorKind;
    let modes = [
        (FaultMode::Error, Some(ToolErrorKind::Failed)),
        (FaultMode::NothingFound, None),
        (FaultMode::Garbage, None),
        (FaultMode::Timeout, Some(ToolErrorKind::Timeout)),
        (FaultMode::Slow { ms: 5 }, None),
        (FaultMode::Crash, Some(ToolErrorKind::Crashed)),
    ];
    for (mode, error) in modes {
        let model = Scripted::new(&[&call("calculator", json!({"expression": "2+3"})), &finish("done")], "{}");
        let mut s = setup(model.clone(), StrategyKind::React);
        s.tool_timeout = std::time::Duration::from_millis(50);
        s.schedule = vec![Scheduled {
            before_task: 1,
            control: Control::InjectFault { tool: "calculator".into(), fault: Fault { mode, scope: FaultScope::Once } },
        }];
        let (mut engine, _h) = Engine::new(s);
        let mut rx = engine.subscribe();
        engine.run(vec![task("Evaluate the arithmetic expression 2+3", "5")]).await.unwrap();
        let events = drain(&mut rx).await;
        assert!(events.iter().any(|e| matches!(&e.kind, EventKind::FaultInjected { tool, fault } if tool == "calculator" && fault.mode == mode)));
        let (outcome, fault) = events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::ToolResult { outcome, fault, .. } => Some((outcome.clone(), *fault)),
                _ => None,
            })
            .unwrap();
        assert_eq!(fault, Some(mode));
        match (outcome, error) {
            (ToolOutcome::Err { error }, Some(kind)) => assert_eq!(error.kind, kind, "{mode}"),
            (ToolOutcome::Ok { value }, None) => match mode {
                FaultMode::NothingFound => assert_eq!(value, json!("Nothing Found")),
                FaultMode::Garbage => assert!(value.as_str().is_some_and(|s| !s.chars().any(char::is_alphanumeric))),
                _ => assert_eq!(value["result"], json!(5), "slow still answers"),
            },
            (other, want) => panic!("{mode}: got {other:?}, wanted {want:?}"),
        }
        // The model saw the observation in its next prompt.
        let seen = model.seen.lock().unwrap();
        let next = &seen[1].messages[1].content;
        let expected = match error {
            Some(_) => "-> error:",
            None => "-> result:",
        };
        assert!(next.contains(expected), "{mode}: {next}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn restart_edit_and_pick_steer_the_task_list() {
    let model = Scripted::new(
        &[
            // Restarted after this reply, before the calculator runs.
            &call("calculator", json!({"expression": "1+1"})),
            &finish("2"),
            &finish("9"),
        ],
        "{}",
    );
    let mut s = setup(model.clone(), StrategyKind::React);
    s.start_paused = true;
    s.linger = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let tasks =
        vec![task("Evaluate the arithmetic expression 1+1", "2"), task("three", "3"), task("Evaluate 4+5", "9")];
    let run = tokio::spawn(engine.run(tasks));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    // One call (the actor), then a restart of task 1 with new text.
    handle.send(Control::Step);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ModelReply { .. })).await;
    handle.send(Control::EditTask { text: "Evaluate the arithmetic expression 2*1".into() });
    handle.send(Control::PickTask { index: 3 });
    handle.send(Control::PickTask { index: 7 });
    handle.send(Control::Resume);
    // Task 1 again (edited), then task 3 as picked, skipping task 2; then the
    // engine lingers until told to stop.
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    handle.send(Control::Stop);
    seen.extend(drain(&mut rx).await);
    let outcome = run.await.unwrap().unwrap();
    let runs: Vec<(String, RunOutcome)> = outcome
        .state
        .finished
        .iter()
        .map(|r| (r.task_id.clone() + r.run.to_string().as_str(), r.outcome.clone()))
        .collect();
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert_eq!(outcome.state.finished[0].outcome, RunOutcome::Restarted);
    assert_eq!(outcome.state.finished[0].success, None, "a restarted run is no attempt");
    let started: Vec<(u32, String)> = seen
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunStarted { index, task, .. } => Some((*index, task.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        started,
        vec![
            (1, "Evaluate the arithmetic expression 1+1".to_string()),
            (1, "Evaluate the arithmetic expression 2*1".to_string()),
            (3, "Evaluate 4+5".to_string()),
        ]
    );
    assert!(
        seen.iter().any(|e| matches!(&e.kind, EventKind::ControlRejected { control, .. } if control == "pick task"))
    );
    assert!(!seen.iter().any(|e| matches!(e.kind, EventKind::ToolCall { .. })), "the restart came before the tool ran");
    assert_eq!(outcome.state.task_list[0].query, "Evaluate the arithmetic expression 2*1");
    assert_eq!(outcome.state.finished[1].success, None, "the edited task has no gold answer");
    assert_eq!(outcome.state.finished[2].success, Some(true));
}

#[tokio::test]
async fn a_role_switches_to_another_model() {
    let a = Scripted::new(&[&finish("x")], "{}");
    let mut models = Models::single(a, Price::default());
    models.offer(switchyard::engine::ModelSlot {
        model: std::sync::Arc::new(Renamed("other", Scripted::new(&[&finish("2")], "{}"))),
        price: Price { input_per_mtok: 1.0, output_per_mtok: 1.0 },
    });
    let mut s = EngineSetup::new(small_library(), models, StrategyKind::React);
    s.clock = Arc::new(LogicalClock::default());
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    handle.send(Control::SwitchModel { role: switchyard::model::Role::Actor, model: "other".into() });
    handle.send(Control::SwitchModel { role: switchyard::model::Role::Judge, model: "nonesuch".into() });
    let outcome = engine.run(vec![task("1+1", "2")]).await.unwrap();
    let events = drain(&mut rx).await;
    assert!(events.iter().any(|e| matches!(&e.kind, EventKind::ModelSwitched { model, .. } if model.name == "other")));
    assert!(
        events.iter().any(|e| matches!(&e.kind, EventKind::ControlRejected { why, .. } if why.contains("nonesuch")))
    );
    assert_eq!(outcome.state.finished[0].answer.as_deref(), Some("2"), "the switched model answered");
    let actor = outcome.state.models.iter().find(|m| m.role == switchyard::model::Role::Actor).unwrap();
    assert_eq!(actor.model.name, "other");
}

/// A model under another name.
struct Renamed(&'static str, Arc<Scripted>);

#[async_trait::async_trait]
impl switchyard::model::ChatModel for Renamed {
    fn info(&self) -> switchyard::model::ModelInfo {
        switchyard::model::ModelInfo { name: self.0.into(), ..self.1.info() }
    }
    async fn chat(
        &self,
        req: &switchyard::model::ChatRequest,
    ) -> Result<switchyard::model::ChatResponse, switchyard::model::ModelError> {
        self.1.chat(req).await
    }
}

/// A model that repeats a call it already has the answer to is refused, told
/// so, and no longer offered that tool in this task.
#[tokio::test]
async fn a_repeated_answered_call_is_refused_and_leaves_the_candidates() {
    let c = call("calculator", json!({"expression": "6*7"}));
    let model = Scripted::new(&[&c, &c, &finish("42")], r#"{"scores": {}}"#);
    let (mut engine, handle) = Engine::new(setup(model.clone(), StrategyKind::React));
    let mut rx = engine.subscribe();
    engine.run(vec![task("Evaluate the arithmetic expression 6*7", "42")]).await.unwrap();
    drop(handle);
    let events = drain(&mut rx).await;
    let calls = events.iter().filter(|e| matches!(e.kind, EventKind::ToolCall { .. })).count();
    assert_eq!(calls, 1, "the repeat never ran");
    assert!(events.iter().any(|e| matches!(&e.kind, EventKind::Refused { reason: RefuseReason::Repeated, .. })));
    let seen = model.seen.lock().unwrap();
    let last = &seen.last().unwrap().messages[1].content;
    let candidates = last.split("Candidates:").nth(1).unwrap();
    assert!(!candidates.contains("- calculator"), "{candidates}");
    assert!(last.contains("already answered these arguments"), "the model is told why");
    let state = SessionState::from_events(&events);
    assert_eq!(state.finished[0].success, Some(true));
}

#[test]
fn a_version_1_trace_reads_with_its_graph_snapshot_upgraded() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/toolnet-fault.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&path).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(first["v"], 1);
    let old: Vec<(String, String, f64)> = serde_json::from_value(first["graph"]["edges"].clone()).unwrap();
    let events = read_trace(&path).unwrap();
    let EventKind::SessionStarted { graph: Some(g), .. } = &events[0].kind else { panic!("no graph snapshot") };
    let edges: Vec<(String, String, f64)> = g.edges().map(|(f, t, w)| (f.into(), t.into(), w)).collect();
    assert_eq!(edges, old);

    let dir = tempfile::tempdir().unwrap();
    let future = dir.path().join("future.jsonl");
    std::fs::write(&future, "{\"v\":4,\"run\":0,\"step\":0,\"t\":0,\"type\":\"Paused\"}\n").unwrap();
    let err = read_trace(&future).unwrap_err().to_string();
    assert!(err.contains("trace schema version 4, this build reads versions 1 to 3"), "{err}");
}

/// A version 2 trace (every position of the task list listed) reads as
/// the same events as this build's record of the same session, and folds
/// to the same state: `toolnet-v2.jsonl` is the golden `toolnet.jsonl` as
/// version 2 wrote it.
#[test]
fn a_version_2_trace_reads_as_the_same_session() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let old = read_trace(&root.join("tests/fixtures/toolnet-v2.jsonl")).unwrap();
    let now = read_trace(&root.join("tests/golden/toolnet.jsonl")).unwrap();
    assert_eq!((old[0].v, now[0].v), (2, 3));
    let kinds = |events: &[switchyard::engine::Event]| -> Vec<EventKind> {
        let unversioned = |e: &switchyard::engine::Event| {
            let mut k = e.kind.clone();
            if let EventKind::SessionStarted { schema, .. } = &mut k {
                *schema = 0;
            }
            k
        };
        events.iter().map(unversioned).collect()
    };
    assert_eq!(kinds(&old), kinds(&now));
    let (a, b) = (SessionState::from_events(&old), SessionState::from_events(&now));
    assert_eq!((a.task_list, a.total_tasks, a.finished), (b.task_list, b.total_tasks, b.finished));
}
