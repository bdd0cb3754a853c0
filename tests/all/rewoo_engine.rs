//! The rewoo strategy in the engine: lanes that really run together (a
//! barrier), fault isolation, null filtering, the plan's one retry, the
//! categories rule, per-lane gates, the budget refusing a step, and the
//! classifier's cache.

use crate::common;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Barrier;
use tokio::sync::mpsc::UnboundedReceiver;

use common::{Roles, builtin, settle, until};
use switchyard::budget::experience::ExperienceStore;
use switchyard::engine::LaneAction;
use switchyard::engine::budgeting::BtpSetup;
use switchyard::engine::event::{LabelSource, RefuseReason, RunOutcome, ToolOutcome};
use switchyard::engine::fork::ForkPlan;
use switchyard::engine::{
    Control, Engine, EngineSetup, Event, EventKind, LogicalClock, Models, Scheduled, StrategyKind,
};
use switchyard::model::price::Price;
use switchyard::model::{Role, Usage};
use switchyard::task::Task;
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
use switchyard::tool::{ExecutorSpec, ToolErrorKind, ToolLibrary, ToolSpec};

const IR: &str = "Information Retrieval";
const TC: &str = "Task Completion";

fn with_category(mut t: ToolSpec, category: &str) -> ToolSpec {
    t.category = Some(category.into());
    t
}

/// Country lookups (three of one category), a calculator, a search that finds nothing.
fn library() -> Arc<ToolLibrary> {
    Arc::new(
        ToolLibrary::new(vec![
            with_category(builtin("geo_lookup", "geo_lookup", "Country facts lookup", "country"), IR),
            with_category(builtin("geo_lookup_mirror", "geo_lookup", "Country facts lookup (mirror)", "country"), IR),
            with_category(builtin("geo_lookup_backup", "geo_lookup", "Country facts lookup (backup)", "country"), IR),
            with_category(builtin("web_search", "web_search", "Search the web", "query"), IR),
            with_category(builtin("calculator", "calculator", "Evaluate an arithmetic expression", "expression"), TC),
        ])
        .unwrap(),
    )
}

fn http_tool(name: &str, addr: SocketAddr, timeout_ms: u64) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("Search service {name}"),
        category: Some(IR.into()),
        cost: 1.0,
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        response: None,
        executor: ExecutorSpec::Http {
            method: "POST".into(),
            url: format!("http://{addr}/{name}"),
            headers: BTreeMap::new(),
            timeout_ms,
            query: Vec::new(),
        },
        source: None,
    }
}

fn task(q: &str) -> Task {
    Task { id: "t".into(), query: q.into(), ..Task::default() }
}

fn setup(library: Arc<ToolLibrary>, model: Arc<Roles>) -> EngineSetup {
    let mut s = EngineSetup::new(library, Models::single(model, Price::default()), StrategyKind::Rewoo);
    s.clock = Arc::new(LogicalClock::default());
    s.params.top_k = 5;
    s
}

async fn run(setup: EngineSetup, tasks: Vec<Task>) -> Vec<Event> {
    let (mut engine, handle) = Engine::new(setup);
    let mut rx = engine.subscribe();
    let outcome = tokio::time::timeout(Duration::from_secs(30), engine.run(tasks))
        .await
        .expect("the run did not finish (a lane blocked its siblings?)");
    drop(handle);
    outcome.unwrap();
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        out.push(e);
    }
    out
}

fn results(events: &[Event]) -> Vec<(Option<u32>, String, bool, bool)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { lane, tool, outcome, filtered, .. } => {
                Some((*lane, tool.clone(), matches!(outcome, ToolOutcome::Ok { .. }), *filtered))
            }
            _ => None,
        })
        .collect()
}

fn outcome(events: &[Event]) -> RunOutcome {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::RunFinished { outcome, .. } => Some(outcome.clone()),
            _ => None,
        })
        .expect("no RunFinished")
}

fn solver_prompt(model: &Roles) -> String {
    let reqs = model.requests(Role::Solver);
    assert_eq!(reqs.len(), 1, "one solver call");
    reqs[0].messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n")
}

/// An HTTP server whose replies wait until `parties` requests have arrived.
async fn barrier_server(parties: usize) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let barrier = Arc::new(Barrier::new(parties));
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let barrier = barrier.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let mut got = Vec::new();
                // Headers and the small JSON body arrive together or soon after.
                while !String::from_utf8_lossy(&got).contains("}") {
                    let n = conn.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                barrier.wait().await;
                let body = r#"{"answer": "found"}"#;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(body.as_bytes()).await;
            });
        }
    });
    addr
}

/// A server that reads each request and never answers.
async fn hanging_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((conn, _)) = listener.accept().await {
            open.push(conn);
        }
    });
    addr
}

#[tokio::test]
async fn the_calls_of_a_step_run_together() {
    let addr = barrier_server(2).await;
    // Each search answers only once both have asked. One after another, the
    // first would wait out its 5 s timeout and fail: the test fails, it
    // does not hang.
    let lib =
        Arc::new(ToolLibrary::new(vec![http_tool("search_a", addr, 5000), http_tool("search_b", addr, 5000)]).unwrap());
    let plan =
        "Plan: ask both search services at once.\n#E1 = search_a[{\"q\": \"lyon\"}]; search_b[{\"q\": \"lyon\"}]";
    let model = Roles::new(&[(Role::Planner, plan), (Role::Solver, "Answer: found")]);
    let events = run(setup(lib, model), vec![task("Find Lyon")]).await;

    let mut r = results(&events);
    r.sort();
    assert_eq!(r, vec![(Some(0), "search_a".into(), true, false), (Some(1), "search_b".into(), true, false)]);
    // The clock's readings show the two calls' intervals overlapping: both
    // started before either ended.
    let t =
        |pred: &dyn Fn(&EventKind) -> bool| events.iter().filter(|e| pred(&e.kind)).map(|e| e.t).collect::<Vec<_>>();
    let starts = t(&|k| matches!(k, EventKind::ToolCall { .. }));
    let ends = t(&|k| matches!(k, EventKind::ToolResult { .. }));
    assert_eq!((starts.len(), ends.len()), (2, 2));
    let first_end = *ends.iter().min().unwrap();
    assert!(starts.iter().all(|s| *s < first_end), "starts {starts:?} ends {ends:?}");
    assert_eq!(outcome(&events), RunOutcome::Answered);
}

#[tokio::test]
async fn one_timeout_leaves_the_other_two_results_intact() {
    let plan = "Plan: three lookups at once.\n\
        #E1 = geo_lookup[{\"country\": \"Japan\"}]; geo_lookup_mirror[{\"country\": \"Japan\"}]; geo_lookup_backup[{\"country\": \"Japan\"}]";
    let model = Roles::new(&[(Role::Planner, plan), (Role::Solver, "Answer: Tokyo")]);
    let mut s = setup(library(), model.clone());
    s.tool_timeout = Duration::from_millis(300);
    let fault = Fault { mode: FaultMode::Timeout, scope: FaultScope::UntilCleared };
    s.schedule =
        vec![Scheduled { before_task: 1, control: Control::InjectFault { tool: "geo_lookup_mirror".into(), fault } }];
    let events = run(s, vec![task("Capital of Japan?")]).await;

    let r = results(&events);
    assert_eq!(r.len(), 3);
    assert!(r.contains(&(Some(0), "geo_lookup".into(), true, false)), "{r:?}");
    assert!(r.contains(&(Some(1), "geo_lookup_mirror".into(), false, true)), "{r:?}");
    assert!(r.contains(&(Some(2), "geo_lookup_backup".into(), true, false)), "{r:?}");
    let timed_out = events.iter().any(|e| {
        matches!(&e.kind, EventKind::ToolResult { tool, outcome: ToolOutcome::Err { error }, .. }
            if tool == "geo_lookup_mirror" && error.kind == ToolErrorKind::Timeout)
    });
    assert!(timed_out);
    let prompt = solver_prompt(&model);
    assert!(prompt.contains("#E1 geo_lookup_mirror: null"), "{prompt}");
    assert_eq!(prompt.matches("Tokyo").count(), 2, "both other lanes reach the solver: {prompt}");
}

#[tokio::test]
async fn failures_and_nothing_found_reach_the_solver_as_null() {
    let plan = "Plan: look everywhere.\n\
        #E1 = geo_lookup[{\"country\": \"Japan\"}]; geo_lookup_mirror[{\"country\": \"Japan\"}]; web_search[{\"query\": \"Japan capital\"}]";
    let model = Roles::new(&[(Role::Planner, plan), (Role::Solver, "Answer: Tokyo")]);
    let mut s = setup(library(), model.clone());
    let fault = Fault { mode: FaultMode::Error, scope: FaultScope::UntilCleared };
    s.schedule = vec![Scheduled { before_task: 1, control: Control::InjectFault { tool: "geo_lookup".into(), fault } }];
    let events = run(s, vec![task("Capital of Japan?")]).await;

    let filtered: Vec<String> = results(&events).into_iter().filter(|r| r.3).map(|r| r.1).collect();
    assert_eq!(filtered, vec!["geo_lookup".to_string(), "web_search".to_string()]);
    let (shown, saved) = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::StepFinished { results, tokens_saved, .. } => Some((results.clone(), *tokens_saved)),
            _ => None,
        })
        .unwrap();
    assert_eq!(shown.iter().map(Option::is_some).collect::<Vec<_>>(), vec![false, true, false]);
    assert!(saved > 0, "the error and the nothing-found text would have cost tokens");
    let prompt = solver_prompt(&model);
    assert!(prompt.contains("#E1 geo_lookup: null") && prompt.contains("#E1 web_search: null"), "{prompt}");
    assert!(!prompt.contains("Nothing Found") && !prompt.contains("injected fault"), "{prompt}");
    // The run's summary carries the saving.
    let state = switchyard::engine::SessionState::from_events(&events);
    assert_eq!(state.finished[0].tokens_saved, saved);
}

#[tokio::test]
async fn an_unreadable_plan_gets_one_retry_showing_the_error() {
    let plan = "Plan: compute.\n#E1 = calculator[{\"expression\": \"6*7\"}]";
    let model = Roles::new(&[
        (Role::Planner, "I would use the calculator here."),
        (Role::Planner, plan),
        (Role::Solver, "Answer: 42"),
    ]);
    let events = run(setup(library(), model.clone()), vec![task("6*7?")]).await;

    let rejected: Vec<(u32, bool)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::PlanRejected { attempt, last, .. } => Some((*attempt, *last)),
            _ => None,
        })
        .collect();
    assert_eq!(rejected, vec![(1, false)]);
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::PlanWritten { attempt: 2, .. })));
    let retry = &model.requests(Role::Planner)[1];
    let last = &retry.messages.last().unwrap().content;
    assert!(last.contains("could not be read") && last.contains("no steps"), "{last}");
    assert_eq!(retry.messages[retry.messages.len() - 2].content, "I would use the calculator here.");
    assert_eq!(outcome(&events), RunOutcome::Answered);
}

#[tokio::test]
async fn a_plan_unreadable_twice_fails_the_run_with_the_reason() {
    let model =
        Roles::new(&[(Role::Planner, "#E1 = nonexistent_tool[x]"), (Role::Planner, "#E1 = still_not_a_tool[x]")]);
    let events = run(setup(library(), model.clone()), vec![task("6*7?")]).await;

    assert!(events.iter().any(|e| matches!(e.kind, EventKind::PlanRejected { attempt: 2, last: true, .. })));
    match outcome(&events) {
        RunOutcome::BadPlan { error } => assert!(error.contains("still_not_a_tool"), "{error}"),
        other => panic!("expected BadPlan, got {other:?}"),
    }
    assert!(results(&events).is_empty(), "nothing ran");
    assert!(model.requests(Role::Solver).is_empty());
}

#[tokio::test]
async fn a_step_may_only_join_tools_of_one_category() {
    let mixed = "Plan: both.\n#E1 = calculator[{\"expression\": \"1+1\"}]; geo_lookup[{\"country\": \"Japan\"}]";
    let fine = "Plan: compute.\n#E1 = calculator[{\"expression\": \"1+1\"}]";
    let model = Roles::new(&[(Role::Planner, mixed), (Role::Planner, fine), (Role::Solver, "Answer: 2")]);
    let events = run(setup(library(), model), vec![task("1+1?")]).await;
    let error = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::PlanRejected { error, .. } => Some(error.clone()),
            _ => None,
        })
        .unwrap();
    assert!(error.contains("different categories") && error.contains(TC) && error.contains(IR), "{error}");
    assert_eq!(outcome(&events), RunOutcome::Answered);
}

#[tokio::test]
async fn later_steps_get_earlier_evidence_by_field() {
    let plan = "Plan: look up the country.\n#E1 = geo_lookup[{\"country\": \"Japan\"}]\n\
        Plan: double its population.\n#E2 = calculator[\"#E1 * 2\"]";
    let model = Roles::new(&[(Role::Planner, plan), (Role::Solver, "Answer: x")]);
    let events = run(setup(library(), model), vec![task("Twice Japan's population?")]).await;
    let args: Vec<Value> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { tool, args, .. } if tool == "calculator" => Some(args.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(args.len(), 1);
    let expr = args[0]["expression"].as_str().unwrap();
    assert!(!expr.contains("#E1") && expr.ends_with("* 2"), "{expr}");
}

// ---------------------------------------------------------------- lanes

fn started_lanes(seen: &[Event]) -> Vec<u32> {
    seen.iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { lane, .. } => *lane,
            _ => None,
        })
        .collect()
}

const TWO_LANES: &str = "Plan: both at once.\n\
    #E1 = geo_lookup[{\"country\": \"Japan\"}]; geo_lookup_mirror[{\"country\": \"Japan\"}]";

/// Starts a paused rewoo run and steps the planner through, so the step's
/// lanes wait at their gates.
async fn paused_at_lanes(
    s: EngineSetup,
) -> (
    switchyard::engine::EngineHandle,
    UnboundedReceiver<Event>,
    Vec<Event>,
    tokio::task::JoinHandle<Result<switchyard::engine::SessionOutcome, switchyard::engine::EngineError>>,
) {
    let mut s = s;
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let join = tokio::spawn(engine.run(vec![task("Capital of Japan?")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    handle.send(Control::Step);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::StepStarted { .. })).await;
    settle(&handle, &mut rx, &mut seen).await;
    assert!(started_lanes(&seen).is_empty(), "paused: no lane starts");
    (handle, rx, seen, join)
}

#[tokio::test(flavor = "current_thread")]
async fn a_held_lane_waits_while_its_sibling_runs() {
    let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
    let (handle, mut rx, mut seen, join) = paused_at_lanes(setup(library(), model)).await;
    handle.send(Control::Lane { lane: 0, action: LaneAction::Hold });
    handle.send(Control::Resume);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ToolResult { lane: Some(1), .. })).await;
    settle(&handle, &mut rx, &mut seen).await;
    assert_eq!(started_lanes(&seen), vec![1], "lane 0 is held");

    handle.send(Control::Lane { lane: 0, action: LaneAction::Release });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    assert_eq!(started_lanes(&seen), vec![1, 0]);
    drop(handle);
    join.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn stepping_one_lane_runs_only_that_lane() {
    let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
    let (handle, mut rx, mut seen, join) = paused_at_lanes(setup(library(), model)).await;
    handle.send(Control::Lane { lane: 1, action: LaneAction::Step });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ToolResult { lane: Some(1), .. })).await;
    settle(&handle, &mut rx, &mut seen).await;
    assert_eq!(started_lanes(&seen), vec![1]);
    // A plain step lets exactly one more call through: the other lane.
    handle.send(Control::Step);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ToolResult { lane: Some(0), .. })).await;
    settle(&handle, &mut rx, &mut seen).await;
    assert!(!seen.iter().any(|e| matches!(e.kind, EventKind::ModelCall { role: Role::Solver, .. })), "paused again");
    handle.send(Control::Resume);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    drop(handle);
    join.await.unwrap().unwrap();
}

/// A paused session whose user held a lane, stepped its sibling, failed the
/// held lane and let it go: the tour's ReWOO step.
async fn lanes_acted_on() -> Vec<Event> {
    let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
    let (handle, mut rx, mut seen, join) = paused_at_lanes(setup(library(), model)).await;
    handle.send(Control::Lane { lane: 0, action: LaneAction::Hold });
    handle.send(Control::Lane { lane: 1, action: LaneAction::Step });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ToolResult { lane: Some(1), .. })).await;
    handle.send(Control::Lane { lane: 0, action: LaneAction::Fail { fault: FaultMode::Error } });
    handle.send(Control::Lane { lane: 0, action: LaneAction::Release });
    handle.send(Control::Lane { lane: 0, action: LaneAction::Step });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::StepFinished { .. })).await;
    handle.send(Control::Resume);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    drop(handle);
    join.await.unwrap().unwrap();
    while let Ok(e) = rx.try_recv() {
        seen.push(e);
    }
    seen
}

#[tokio::test(flavor = "current_thread")]
async fn a_fork_replays_the_lanes_the_user_held_stepped_and_failed() {
    let parent = lanes_acted_on().await;
    let lane_events = parent.iter().filter(|e| matches!(e.kind, EventKind::LaneChanged { .. })).count();
    assert_eq!(lane_events, 5, "{parent:?}");
    let last = parent.len() - 1;
    for at in 1..last {
        let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
        let mut s = setup(library(), model);
        s.fork = Some(ForkPlan::new("parent.jsonl", &parent, at).unwrap());
        let (mut engine, handle) = Engine::new(s);
        let mut rx = engine.subscribe();
        // The handle stays: a fork that runs on by itself must not wait for a
        // resume, or a lane's release, where its parent was paused or held one.
        let outcome = tokio::time::timeout(Duration::from_secs(60), engine.run(vec![task("Capital of Japan?")]))
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "fork at {at} waits for a resume nobody will send: {:?}",
                    parent[..at + 2].iter().map(|e| e.kind.name()).collect::<Vec<_>>()
                )
            });
        outcome.unwrap_or_else(|e| panic!("fork at {at}: {e}"));
        drop(handle);
        let mut forked = Vec::new();
        while let Ok(e) = rx.try_recv() {
            forked.push(e);
        }
        assert_eq!(forked[..at], parent[..at], "fork at {at}");
        assert!(matches!(forked[at].kind, EventKind::Forked { .. }), "fork at {at}: {:?}", forked[at].kind);
        assert!(forked.iter().any(|e| matches!(e.kind, EventKind::RunFinished { .. })), "fork at {at}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn failing_a_waiting_lane_fails_only_its_call() {
    let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
    let (handle, mut rx, mut seen, join) = paused_at_lanes(setup(library(), model)).await;
    handle.send(Control::Lane { lane: 0, action: LaneAction::Fail { fault: FaultMode::NothingFound } });
    handle.send(Control::Resume);
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::StepFinished { .. })).await;
    let r = results(&seen);
    assert!(r.contains(&(Some(0), "geo_lookup".into(), true, true)), "nothing found, filtered: {r:?}");
    assert!(r.contains(&(Some(1), "geo_lookup_mirror".into(), true, false)), "{r:?}");
    let faulted = seen
        .iter()
        .any(|e| matches!(&e.kind, EventKind::ToolResult { lane: Some(0), fault: Some(FaultMode::NothingFound), .. }));
    assert!(faulted, "the result says which fault fired");
    drop(handle);
    join.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn failing_a_hung_lane_cuts_it_short_and_spares_its_sibling() {
    let addr = hanging_server().await;
    let lib = Arc::new(
        ToolLibrary::new(vec![
            http_tool("stuck_search", addr, 600_000),
            with_category(builtin("geo_lookup", "geo_lookup", "Country facts lookup", "country"), IR),
        ])
        .unwrap(),
    );
    let plan = "Plan: both.\n#E1 = stuck_search[{\"q\": \"Japan\"}]; geo_lookup[{\"country\": \"Japan\"}]";
    let model = Roles::new(&[(Role::Planner, plan), (Role::Solver, "Answer: Tokyo")]);
    let (mut engine, handle) = Engine::new(setup(lib, model));
    let mut rx = engine.subscribe();
    let join = tokio::spawn(engine.run(vec![task("Capital of Japan?")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ToolResult { lane: Some(1), .. })).await;
    // Lane 0 hangs (its timeout is ten minutes): only the user's fault ends it.
    handle.send(Control::Lane { lane: 0, action: LaneAction::Fail { fault: FaultMode::Error } });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::RunFinished { .. })).await;
    let r = results(&seen);
    assert!(r.contains(&(Some(0), "stuck_search".into(), false, true)), "{r:?}");
    assert!(r.contains(&(Some(1), "geo_lookup".into(), true, false)), "{r:?}");
    assert!(seen.iter().any(|e| matches!(e.kind, EventKind::LaneChanged { lane: 0, .. })));
    drop(handle);
    join.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn lane_controls_outside_a_step_are_refused() {
    let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
    let mut s = setup(library(), model);
    s.start_paused = true;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    let join = tokio::spawn(engine.run(vec![task("Capital of Japan?")]));
    let mut seen = Vec::new();
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::Paused)).await;
    handle.send(Control::Lane { lane: 0, action: LaneAction::Hold });
    until(&mut rx, &mut seen, |k| matches!(k, EventKind::ControlRejected { .. })).await;
    handle.send(Control::Resume);
    drop(handle);
    join.await.unwrap().unwrap();
}

// ---------------------------------------------------------------- budget

#[tokio::test]
async fn a_concurrent_step_spends_each_of_its_calls() {
    let model = Roles::new(&[(Role::Planner, TWO_LANES), (Role::Solver, "Answer: Tokyo")]);
    let mut s = setup(library(), model);
    s.btp = Some(BtpSetup::new(ExperienceStore::in_memory(Vec::new())));
    s.params.budget = Some(10.0);
    let events = run(s, vec![task("Capital of Japan? Country facts lookup")]).await;
    let spent: Vec<(String, f64)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::BudgetSpent { tool, spent, .. } => Some((tool.clone(), *spent)),
            _ => None,
        })
        .collect();
    assert_eq!(spent, vec![("geo_lookup".into(), 1.0), ("geo_lookup_mirror".into(), 2.0)]);
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::PlanMade { .. })));
    let state = switchyard::engine::SessionState::from_events(&events);
    assert_eq!(state.finished[0].spent, 2.0);
}

#[tokio::test]
async fn a_step_costing_more_than_is_left_is_refused_whole() {
    // The planner's reply is far dearer than planned: its tokens eat the budget.
    let plan = "Plan: two at once.\n\
        #E1 = geo_lookup[{\"country\": \"Japan\"}]; geo_lookup_mirror[{\"country\": \"Japan\"}]";
    let model =
        Roles::with_usage(&[(Role::Planner, plan), (Role::Solver, "Answer: I do not know")], Usage::new(90_000, 0));
    let lib = library();
    let mut s = EngineSetup::new(
        lib,
        Models::single(model, Price { input_per_mtok: 100.0, output_per_mtok: 100.0 }),
        StrategyKind::Rewoo,
    );
    s.clock = Arc::new(LogicalClock::default());
    s.btp = Some(BtpSetup::new(ExperienceStore::in_memory(Vec::new())));
    s.params.budget = Some(10.0);
    let events = run(s, vec![task("Capital of Japan? Country facts lookup")]).await;
    let over: Vec<&Event> = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Refused { reason: RefuseReason::OverBudget, .. }))
        .collect();
    assert_eq!(over.len(), 2, "both lanes of the step are refused together");
    assert!(results(&events).is_empty(), "nothing ran");
}

// ---------------------------------------------------------- classifier

fn unlabelled() -> Arc<ToolLibrary> {
    Arc::new(
        ToolLibrary::new(vec![
            builtin("geo_lookup", "geo_lookup", "Country facts lookup", "country"),
            builtin("calculator", "calculator", "Evaluate an arithmetic expression", "expression"),
            with_category(builtin("web_search", "web_search", "Search the web", "query"), "Web"),
        ])
        .unwrap(),
    )
}

fn labels(events: &[Event]) -> Vec<(String, String, LabelSource)> {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolsClassified { labels, .. } => {
                Some(labels.iter().map(|l| (l.tool.clone(), l.category.clone(), l.source)).collect())
            }
            _ => None,
        })
        .expect("no ToolsClassified")
}

#[tokio::test]
async fn labels_come_from_the_manifest_then_the_cache_then_the_classifier() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("categories.json");
    let classified = r#"{"categories": {"geo_lookup": "information retrieval", "calculator": "Task Completion", "web_search": "Task Completion"}}"#;
    let plan = "Plan: compute.\n#E1 = calculator[{\"expression\": \"6*7\"}]";
    let script = [(Role::Classifier, classified), (Role::Planner, plan), (Role::Solver, "Answer: 42")];

    let first = Roles::new(&script);
    let mut s = setup(unlabelled(), first.clone());
    s.label_cache = Some(cache.clone());
    let events = run(s, vec![task("6*7?")]).await;
    assert_eq!(
        labels(&events),
        vec![
            ("geo_lookup".into(), IR.into(), LabelSource::Model),
            ("calculator".into(), TC.into(), LabelSource::Model),
            ("web_search".into(), "Web".into(), LabelSource::Manifest),
        ]
    );
    assert_eq!(first.requests(Role::Classifier).len(), 1);
    let prompt = &first.requests(Role::Classifier)[0].messages[1].content;
    assert!(!prompt.contains("web_search"), "a manifest label is not asked for: {prompt}");
    let planner = &first.requests(Role::Planner)[0].messages[1].content;
    assert!(planner.contains(&format!("calculator [{TC}]")), "the planner sees the categories: {planner}");

    // A second session with the same library and model reads the cache.
    let second = Roles::new(&script[1..]);
    let mut s = setup(unlabelled(), second.clone());
    s.label_cache = Some(cache.clone());
    s.start_paused = false;
    let (mut engine, handle) = Engine::new(s);
    let mut rx = engine.subscribe();
    handle.send(Control::SetCategory { tool: "calculator".into(), category: "Math".into() });
    engine.run(vec![task("6*7?")]).await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    assert!(second.requests(Role::Classifier).is_empty(), "no classifier call: cached");
    assert_eq!(labels(&events)[0], ("geo_lookup".into(), IR.into(), LabelSource::Cache));
    assert!(events.iter().any(|e| matches!(&e.kind, EventKind::CategoryEdited { category, .. } if category == "Math")));

    // The edit was cached too.
    let third = Roles::new(&script[1..]);
    let mut s = setup(unlabelled(), third);
    s.label_cache = Some(cache);
    let events = run(s, vec![task("6*7?")]).await;
    assert_eq!(labels(&events)[1], ("calculator".into(), "Math".into(), LabelSource::Cache));
}

#[tokio::test]
async fn an_unreadable_classification_falls_back_to_the_first_category() {
    let plan = "Plan: compute.\n#E1 = calculator[{\"expression\": \"6*7\"}]";
    let model = Roles::new(&[(Role::Classifier, "no idea"), (Role::Planner, plan), (Role::Solver, "Answer: 42")]);
    let events = run(setup(unlabelled(), model), vec![task("6*7?")]).await;
    let l = labels(&events);
    assert_eq!(l[0], ("geo_lookup".into(), IR.into(), LabelSource::Default));
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::Refused { reason: RefuseReason::Malformed, .. })));
    assert_eq!(outcome(&events), RunOutcome::Answered);
}
