//! Approvals and breakpoints in the engine, driven through the control
//! channel by awaiting its events: each decision on a call, a result and a
//! reply (approve, edit, reject, a bad edit refused), in react, rewoo's
//! lanes and atc's programs; each breakpoint condition; and a trace with
//! edits and hits replayed.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use common::{Roles, Scripted, builtin, call, finish, small_library, until};
use switchyard::engine::debug::{ApprovalPolicy, Decision, ReviewKind};
use switchyard::engine::event::{RunOutcome, ToolOutcome};
use switchyard::engine::trace::{TraceWriter, read_trace};
use switchyard::engine::{
    Control, Engine, EngineHandle, EngineSetup, Event, EventKind, LogicalClock, Models, Scheduled, SessionOutcome,
    SessionState, StrategyKind,
};
use switchyard::model::Role;
use switchyard::model::price::Price;
use switchyard::task::Task;
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
use switchyard::tool::{ToolErrorKind, ToolLibrary};

fn task(q: &str, gold: &str) -> Task {
    Task { id: "t".into(), query: q.into(), answer: Some(gold.into()), ..Task::default() }
}

fn calc_task() -> Task {
    task("Evaluate the arithmetic expression 6*7", "42")
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

fn before_first(controls: Vec<Control>) -> Vec<Scheduled> {
    controls.into_iter().map(|control| Scheduled { before_task: 1, control }).collect()
}

fn tools(names: &[&str]) -> Control {
    Control::SetApproval {
        policy: ApprovalPolicy { tools: names.iter().map(|s| s.to_string()).collect(), ..Default::default() },
    }
}

fn brk(c: &str) -> Control {
    Control::SetBreakpoint { condition: c.parse().unwrap() }
}

type Done = tokio::task::JoinHandle<Result<SessionOutcome, switchyard::engine::EngineError>>;

struct Live {
    handle: EngineHandle,
    rx: UnboundedReceiver<Event>,
    seen: Vec<Event>,
    run: Done,
}

impl Live {
    fn start(s: EngineSetup, tasks: Vec<Task>) -> Live {
        let (mut engine, handle) = Engine::new(s);
        let rx = engine.subscribe();
        let run = tokio::spawn(engine.run(tasks));
        Live { handle, rx, seen: Vec::new(), run }
    }

    /// Waits for the event that matches; returns it.
    async fn until(&mut self, pred: impl Fn(&EventKind) -> bool) -> EventKind {
        until(&mut self.rx, &mut self.seen, pred).await;
        self.seen.last().unwrap().kind.clone()
    }

    fn send(&self, c: Control) {
        assert!(self.handle.send(c), "the engine ended early");
    }

    /// Lets the engine run to its end with nobody at the controls.
    async fn finish(mut self) -> (Vec<Event>, SessionOutcome) {
        drop(self.handle);
        while let Some(e) = self.rx.recv().await {
            self.seen.push(e);
        }
        let outcome = self.run.await.unwrap().unwrap();
        (self.seen, outcome)
    }
}

fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.name()).collect()
}

fn pending_call(k: &EventKind) -> u64 {
    match k {
        EventKind::ApprovalRequested { call, .. }
        | EventKind::ResultReview { call, .. }
        | EventKind::ReplyReview { call, .. } => *call,
        other => panic!("nothing waits in {other:?}"),
    }
}

fn is_request(k: &EventKind) -> bool {
    matches!(k, EventKind::ApprovalRequested { .. })
}

fn is_result_review(k: &EventKind) -> bool {
    matches!(k, EventKind::ResultReview { .. })
}

/// The actor's prompts, each its messages joined.
fn prompts(model: &Scripted) -> Vec<String> {
    let seen = model.seen.lock().unwrap();
    seen.iter()
        .filter(|r| r.role == Role::Actor)
        .map(|r| r.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n"))
        .collect()
}

// ---- approvals ----

#[tokio::test(flavor = "current_thread")]
async fn an_approved_call_runs_and_its_kept_result_reaches_the_model() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "6*7"})), &finish("42")], "{}");
    let mut s = setup(model, StrategyKind::React);
    s.schedule = before_first(vec![tools(&["calculator"])]);
    let mut live = Live::start(s, vec![calc_task()]);
    let k = live.until(is_request).await;
    let EventKind::ApprovalRequested { call, tool, args, parameters, lane } = k else { unreachable!() };
    assert_eq!((tool.as_str(), &args, lane), ("calculator", &json!({"expression": "6*7"}), None));
    assert_eq!(parameters["required"], json!(["expression"]), "the schema an edit is checked against");
    // Nothing ran while the call waited.
    assert!(!live.seen.iter().any(|e| matches!(e.kind, EventKind::ToolCall { .. })));
    live.send(Control::Decide { call, decision: Decision::Approve });
    let k = live.until(is_result_review).await;
    assert!(
        matches!(k, EventKind::ResultReview { result: ToolOutcome::Ok { ref value }, .. } if *value == json!({"result": 42}))
    );
    live.send(Control::Decide { call, decision: Decision::Keep });
    let (events, outcome) = live.finish().await;
    let tail: Vec<&str> = names(&events)
        .into_iter()
        .skip_while(|n| *n != "ApprovalRequested")
        .filter(|n| !matches!(*n, "BudgetSpent"))
        .take(6)
        .collect();
    assert_eq!(tail, ["ApprovalRequested", "ReviewPassed", "ToolCall", "ToolResult", "ResultReview", "ReviewPassed"]);
    assert_eq!(outcome.state.finished[0].success, Some(true));
    assert!(outcome.state.debug.pending.is_none());
}

#[tokio::test(flavor = "current_thread")]
async fn a_bad_edit_is_refused_naming_the_field_and_a_good_one_runs_instead() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "6*7"})), &finish("4")], "{}");
    let mut s = setup(model.clone(), StrategyKind::React);
    s.schedule = before_first(vec![tools(&["calculator"])]);
    let mut live = Live::start(s, vec![calc_task()]);
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::EditArgs { args: json!({"expr": "2+2"}) } });
    let k = live.until(|k| matches!(k, EventKind::ControlRejected { .. })).await;
    let EventKind::ControlRejected { control, why } = k else { unreachable!() };
    assert!(control.starts_with("decide") && why.contains("missing required argument 'expression'"), "{why}");
    // Still waiting: a decision of the wrong kind is refused too.
    live.send(Control::Decide { call, decision: Decision::EditReply { text: "no".into() } });
    live.until(|k| matches!(k, EventKind::ControlRejected { .. })).await;
    live.send(Control::Decide { call, decision: Decision::EditArgs { args: json!({"expression": "2+2"}) } });
    let k = live.until(|k| matches!(k, EventKind::CallEdited { .. })).await;
    assert_eq!(
        k,
        EventKind::CallEdited {
            call,
            tool: "calculator".into(),
            before: json!({"expression": "6*7"}),
            after: json!({"expression": "2+2"})
        }
    );
    let k = live.until(|k| matches!(k, EventKind::ToolCall { .. })).await;
    assert!(matches!(k, EventKind::ToolCall { ref args, .. } if *args == json!({"expression": "2+2"})));
    let call2 = pending_call(&live.until(is_result_review).await);
    assert_eq!(call2, call);
    live.send(Control::Decide { call, decision: Decision::Keep });
    let (_, outcome) = live.finish().await;
    // The model saw the result of the call that ran.
    assert!(prompts(&model)[1].contains(r#"result: {"result":4}"#), "{}", prompts(&model)[1]);
    assert_eq!(outcome.state.finished[0].answer.as_deref(), Some("4"));
}

#[tokio::test(flavor = "current_thread")]
async fn a_rejected_call_never_runs_and_the_model_reads_the_note() {
    let model = Scripted::new(
        &[
            &call("web_search", json!({"query": "6*7"})),
            &call("calculator", json!({"expression": "6*7"})),
            &finish("42"),
        ],
        "{}",
    );
    let mut s = setup(model.clone(), StrategyKind::React);
    s.schedule = before_first(vec![tools(&["web_search"])]);
    let mut live = Live::start(s, vec![calc_task()]);
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::Reject { note: "use the calculator".into() } });
    let k = live.until(|k| matches!(k, EventKind::CallRejected { .. })).await;
    assert_eq!(
        k,
        EventKind::CallRejected {
            call,
            tool: "web_search".into(),
            args: json!({"query": "6*7"}),
            note: "use the calculator".into()
        }
    );
    let (events, outcome) = live.finish().await;
    assert!(
        !events.iter().any(|e| matches!(&e.kind, EventKind::ToolCall { tool, .. } if tool == "web_search")),
        "{:?}",
        names(&events)
    );
    assert!(
        prompts(&model)[1].contains("error: the user rejected this call: use the calculator"),
        "{}",
        prompts(&model)[1]
    );
    assert_eq!(outcome.state.finished[0].success, Some(true));
}

#[tokio::test(flavor = "current_thread")]
async fn an_edited_result_is_what_the_model_sees() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "6*7"})), &finish("43")], "{}");
    let mut s = setup(model.clone(), StrategyKind::React);
    s.schedule = before_first(vec![tools(&["calculator"])]);
    let mut live = Live::start(s, vec![calc_task()]);
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::Approve });
    live.until(is_result_review).await;
    live.send(Control::Decide { call, decision: Decision::EditResult { value: json!({"result": 43}) } });
    let k = live.until(|k| matches!(k, EventKind::ResultEdited { .. })).await;
    assert_eq!(
        k,
        EventKind::ResultEdited {
            call,
            tool: "calculator".into(),
            before: ToolOutcome::Ok { value: json!({"result": 42}) },
            after: json!({"result": 43})
        }
    );
    live.finish().await;
    assert!(prompts(&model)[1].contains(r#"result: {"result":43}"#), "{}", prompts(&model)[1]);
}

#[tokio::test(flavor = "current_thread")]
async fn an_edited_reply_is_acted_on_instead_of_the_models() {
    let model = Scripted::new(&[&call("web_search", json!({"query": "6*7"})), &finish("41")], "{}");
    let mut s = setup(model.clone(), StrategyKind::React);
    s.schedule =
        before_first(vec![Control::SetApproval { policy: ApprovalPolicy::parse_all(["role=actor"]).unwrap() }]);
    let mut live = Live::start(s, vec![calc_task()]);
    let k = live.until(|k| matches!(k, EventKind::ReplyReview { .. })).await;
    let EventKind::ReplyReview { call, role, text, .. } = k else { unreachable!() };
    assert_eq!((role, text), (Role::Actor, call_text("web_search", json!({"query": "6*7"}))));
    // A reply cannot be rejected: refused, and it still waits.
    live.send(Control::Decide { call, decision: Decision::Reject { note: "no".into() } });
    live.until(|k| matches!(k, EventKind::ControlRejected { .. })).await;
    let mine = call_text("calculator", json!({"expression": "6*7"}));
    live.send(Control::Decide { call, decision: Decision::EditReply { text: mine.clone() } });
    let k = live.until(|k| matches!(k, EventKind::ReplyEdited { .. })).await;
    assert!(matches!(k, EventKind::ReplyEdited { ref after, .. } if *after == mine));
    // The calculator ran, not the search the model asked for.
    let k = live.until(|k| matches!(k, EventKind::ToolCall { .. })).await;
    assert!(matches!(k, EventKind::ToolCall { ref tool, .. } if tool == "calculator"));
    let call = pending_call(&live.until(|k| matches!(k, EventKind::ReplyReview { .. })).await);
    live.send(Control::Decide { call, decision: Decision::Keep });
    let (_, outcome) = live.finish().await;
    assert_eq!(outcome.state.finished[0].answer.as_deref(), Some("41"));
}

fn call_text(tool: &str, args: Value) -> String {
    call(tool, args)
}

#[tokio::test(flavor = "current_thread")]
async fn with_nobody_to_answer_what_waits_goes_through_and_says_so() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "6*7"})), &finish("42")], "{}");
    let mut s = setup(model, StrategyKind::React);
    s.schedule = before_first(vec![Control::SetApproval { policy: ApprovalPolicy::everything() }]);
    let live = Live::start(s, vec![calc_task()]);
    let (events, outcome) = live.finish().await;
    let auto: Vec<ReviewKind> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ReviewPassed { what, auto: true, .. } => Some(what),
            _ => None,
        })
        .collect();
    assert_eq!(auto, [ReviewKind::Reply, ReviewKind::Call, ReviewKind::Result, ReviewKind::Reply]);
    assert_eq!(outcome.state.finished[0].success, Some(true));
}

#[tokio::test(flavor = "current_thread")]
async fn stop_and_restart_end_the_wait() {
    let model = Scripted::new(&[&call("calculator", json!({"expression": "6*7"}))], "{}");
    let mut s = setup(model, StrategyKind::React);
    s.schedule = before_first(vec![tools(&["calculator"])]);
    let mut live = Live::start(s, vec![calc_task()]);
    let call = pending_call(&live.until(is_request).await);
    // Other controls apply while the call waits; a decision for another call is refused.
    live.send(Control::SetPace { ms: 0 });
    live.until(|k| matches!(k, EventKind::PaceChanged { .. })).await;
    live.send(Control::Decide { call: call + 5, decision: Decision::Approve });
    let k = live.until(|k| matches!(k, EventKind::ControlRejected { .. })).await;
    assert!(matches!(k, EventKind::ControlRejected { ref why, .. } if why.contains(&format!("call {call} does"))));
    live.send(Control::Stop);
    let (events, outcome) = live.finish().await;
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::RunFinished { outcome: RunOutcome::Stopped, .. })));
    assert!(outcome.state.debug.pending.is_none(), "a stopped run's call no longer waits");
}

#[tokio::test(flavor = "current_thread")]
async fn an_unknown_tool_in_a_policy_or_breakpoint_is_refused() {
    let model = Scripted::new(&[&finish("42")], "{}");
    let mut s = setup(model, StrategyKind::React);
    s.schedule = before_first(vec![tools(&["nope"]), brk("tool=nope")]);
    let (events, outcome) = Live::start(s, vec![calc_task()]).finish().await;
    let why: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ControlRejected { why, .. } => Some(why.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(why, ["no tool named 'nope'", "tool=nope: no tool named 'nope'"]);
    assert!(outcome.state.debug.policy.is_off() && outcome.state.debug.breakpoints.is_empty());
}

// rewoo: each lane waits for its approval before any lane starts; a
// rejected lane's note reaches the solver in place of a result.
#[tokio::test(flavor = "current_thread")]
async fn rewoo_lanes_are_approved_one_by_one_and_a_rejection_reaches_the_solver() {
    let lib = Arc::new(
        ToolLibrary::new(vec![
            with_category(builtin("geo_lookup", "geo_lookup", "Country facts lookup", "country")),
            with_category(builtin("geo_lookup_mirror", "geo_lookup", "Country facts lookup (mirror)", "country")),
        ])
        .unwrap(),
    );
    let plan =
        "Plan: look both up.\n#E1 = geo_lookup[{\"country\": \"Japan\"}]; geo_lookup_mirror[{\"country\": \"Japan\"}]";
    let model = Roles::new(&[(Role::Planner, plan), (Role::Solver, "Answer: Tokyo")]);
    let mut s = EngineSetup::new(lib, Models::single(model.clone(), Price::default()), StrategyKind::Rewoo);
    s.clock = Arc::new(LogicalClock::default());
    s.schedule = before_first(vec![tools(&["geo_lookup", "geo_lookup_mirror"])]);
    let mut live = Live::start(s, vec![task("Capital of Japan?", "Tokyo")]);
    let k = live.until(is_request).await;
    assert!(matches!(k, EventKind::ApprovalRequested { lane: Some(0), .. }));
    live.send(Control::Decide { call: pending_call(&k), decision: Decision::Approve });
    let k = live.until(is_request).await;
    assert!(matches!(k, EventKind::ApprovalRequested { lane: Some(1), .. }));
    assert!(
        !live.seen.iter().any(|e| matches!(e.kind, EventKind::ToolCall { .. })),
        "no lane starts before all are vetted"
    );
    live.send(Control::Decide {
        call: pending_call(&k),
        decision: Decision::Reject { note: "the mirror is stale".into() },
    });
    // The approved lane's result waits for review after the step.
    let k = live.until(is_result_review).await;
    live.send(Control::Decide { call: pending_call(&k), decision: Decision::Keep });
    let (events, _) = live.finish().await;
    let rejected = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolResult { tool, outcome: ToolOutcome::Err { error }, filtered, .. }
            if tool == "geo_lookup_mirror" =>
        {
            Some((error.kind, *filtered))
        }
        _ => None,
    });
    assert_eq!(rejected, Some((ToolErrorKind::Rejected, false)), "shown as a lane that failed, but not nulled");
    let solver = model.requests(Role::Solver);
    let prompt: String = solver[0].messages.iter().map(|m| m.content.clone()).collect();
    assert!(prompt.contains("the user rejected this call: the mirror is stale"), "{prompt}");
}

fn with_category(mut t: switchyard::tool::ToolSpec) -> switchyard::tool::ToolSpec {
    t.category = Some("Information Retrieval".into());
    t
}

// atc: a rejected call fails the program at that call; the reflection
// prompt shows the note.
#[tokio::test(flavor = "current_thread")]
async fn an_atc_program_meets_a_rejection_as_a_tool_error_and_reflects_on_it() {
    let lib = Arc::new(
        ToolLibrary::new(vec![builtin("calculator", "calculator", "Evaluate an arithmetic expression", "expression")])
            .unwrap(),
    );
    let program = "let r = calculator(#{expression: \"6*7\"});\nr.result";
    let reply = json!({ "program": program }).to_string();
    let model = Roles::new(&[(Role::Planner, reply.as_str()), (Role::Planner, reply.as_str())]);
    let atc = switchyard::strategy::atc::Atc::new(switchyard::strategy::atc::AtcConfig::default());
    let mut s = EngineSetup::new(
        lib,
        Models::single(model.clone(), Price::default()),
        Box::new(atc) as Box<dyn switchyard::engine::Strategy>,
    );
    s.clock = Arc::new(LogicalClock::default());
    s.schedule = before_first(vec![tools(&["calculator"])]);
    let mut live = Live::start(s, vec![task("Evaluate 6*7", "42")]);
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::Reject { note: "not now".into() } });
    let k = live.until(|k| matches!(k, EventKind::ProgramFailed { .. })).await;
    assert!(
        matches!(k, EventKind::ProgramFailed { ref error, .. } if error.contains("the user rejected this call: not now")),
        "{k:?}"
    );
    // The rewrite's call is approved and runs.
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::Approve });
    let call = pending_call(&live.until(is_result_review).await);
    live.send(Control::Decide { call, decision: Decision::Keep });
    let (_, outcome) = live.finish().await;
    let reflection: String = model.requests(Role::Planner)[1].messages.iter().map(|m| m.content.clone()).collect();
    assert!(reflection.contains("not now"), "{reflection}");
    assert_eq!(outcome.state.finished[0].answer.as_deref(), Some("42"));
}

// ---- breakpoints ----

/// Runs the script with these breakpoints, resuming after every pause;
/// returns the events.
async fn run_with_breaks(
    model: Arc<Scripted>,
    strategy: StrategyKind,
    controls: Vec<Control>,
    tasks: Vec<Task>,
) -> Vec<Event> {
    let mut s = setup(model, strategy);
    s.schedule = before_first(controls);
    let mut live = Live::start(s, tasks);
    loop {
        let k = live.until(|k| matches!(k, EventKind::Paused | EventKind::SessionFinished { .. })).await;
        if matches!(k, EventKind::SessionFinished { .. }) {
            break;
        }
        // The session may end before it would pass another gate.
        live.handle.send(Control::Resume);
    }
    live.finish().await.0
}

/// (id, detail) of each hit, in order.
fn hits(events: &[Event]) -> Vec<(u32, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::BreakpointHit { id, detail, .. } => Some((*id, detail.clone())),
            _ => None,
        })
        .collect()
}

/// The event right after each hit is the pause (the gate was open), and no
/// call starts between the pause and the resume.
fn paused_after_each_hit(events: &[Event]) {
    for (i, e) in events.iter().enumerate() {
        if matches!(e.kind, EventKind::BreakpointHit { .. }) {
            let rest = &events[i + 1..];
            let next = rest.iter().find(|e| !matches!(e.kind, EventKind::BreakpointHit { .. })).unwrap();
            assert_eq!(next.kind, EventKind::Paused, "{:?}", names(events));
            // A hit after the run's last call pauses a session that then ends.
            let resumed = rest.iter().position(|e| e.kind == EventKind::Resumed).unwrap_or(rest.len());
            assert!(
                !rest[..resumed]
                    .iter()
                    .any(|e| matches!(e.kind, EventKind::ToolCall { .. } | EventKind::ModelCall { .. })),
                "a call ran while paused: {:?}",
                names(events)
            );
        }
    }
}

/// Per run: two calculator calls, then the answer.
fn script(runs: usize) -> Arc<Scripted> {
    let one = [
        call("calculator", json!({"expression": "6*7"})),
        call("calculator", json!({"expression": "6*7+0"})),
        finish("42"),
    ];
    let all: Vec<String> = (0..runs).flat_map(|_| one.clone()).collect();
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    Scripted::new(&refs, r#"{"scores": {"calculator": -2}}"#)
}

#[tokio::test(flavor = "current_thread")]
async fn a_named_tool_pauses_before_each_of_its_calls() {
    let events = run_with_breaks(script(1), StrategyKind::React, vec![brk("tool=calculator")], vec![calc_task()]).await;
    let h = hits(&events);
    assert_eq!(h.len(), 2, "{h:?}");
    assert_eq!(h[0], (1, "calculator is about to be called".into()));
    paused_after_each_hit(&events);
    // The hit comes before the call.
    let hit = events.iter().position(|e| matches!(e.kind, EventKind::BreakpointHit { .. })).unwrap();
    let call = events.iter().position(|e| matches!(e.kind, EventKind::ToolCall { .. })).unwrap();
    assert!(hit < call);
    let state = SessionState::from_events(&events);
    assert_eq!(state.debug.breakpoints[0].hits, 2);
}

#[tokio::test(flavor = "current_thread")]
async fn a_tool_error_pauses_but_a_rejection_does_not() {
    let fault = Fault { mode: FaultMode::Error, scope: FaultScope::Once };
    let controls = vec![Control::InjectFault { tool: "calculator".into(), fault }, brk("error")];
    let events = run_with_breaks(script(1), StrategyKind::React, controls, vec![calc_task()]).await;
    let h = hits(&events);
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(h[0].1.contains("calculator failed"), "{h:?}");
    paused_after_each_hit(&events);
}

#[tokio::test(flavor = "current_thread")]
async fn a_refusal_and_an_unreadable_reply_pause_each_on_its_own_breakpoint() {
    let model = Scripted::new(&["I am not sure what to do.", &call("no_such_tool", json!({})), &finish("42")], "{}");
    let events =
        run_with_breaks(model, StrategyKind::React, vec![brk("refusal"), brk("unreadable")], vec![calc_task()]).await;
    let h = hits(&events);
    assert_eq!(h.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [2, 1], "{h:?}");
    assert!(h[1].1.contains("no_such_tool refused (NotOffered)"), "{h:?}");
    paused_after_each_hit(&events);
}

#[tokio::test(flavor = "current_thread")]
async fn cost_and_tokens_over_a_line_pause_once_per_run() {
    // Each model call costs 0.014 (10 + 2 tokens), each calculator call 1.
    let events = run_with_breaks(
        script(2),
        StrategyKind::React,
        vec![brk("cost>1.5"), brk("tokens>30")],
        vec![calc_task(), calc_task()],
    )
    .await;
    let h = hits(&events);
    let runs: Vec<(u32, u32)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::BreakpointHit { id, .. } => Some((e.run, *id)),
            _ => None,
        })
        .collect();
    // Run 1: the second tool call takes the cost over 1.5, the third reply the tokens over 30.
    assert_eq!(runs.iter().filter(|(r, _)| *r == 1).count(), 2, "{h:?}");
    assert!(h[0].1.contains("has cost 2.0280"), "{h:?}");
    assert!(h[1].1.contains("36 tokens"), "{h:?}");
    paused_after_each_hit(&events);
}

#[tokio::test(flavor = "current_thread")]
async fn a_broken_expectation_pauses_when_it_breaks_and_the_run_end_gives_the_verdict() {
    // Calls with other arguments than expected, then a second call over the cap.
    let expect = |v: serde_json::Value| serde_json::from_value::<switchyard::task::Expect>(v).unwrap();
    let strict = Task {
        expect: expect(json!({
            "args": [{"tool": "calculator", "args": {"expression": "6*7"}}],
            "max_calls": 1,
            "tools": ["calculator"]
        })),
        ..calc_task()
    };
    let kept = Task { expect: expect(json!({"tool_set": ["calculator"]})), ..calc_task() };
    let events = run_with_breaks(script(2), StrategyKind::React, vec![brk("expect-failed")], vec![strict, kept]).await;
    let h = hits(&events);
    // Run 1: the first call keeps every expectation; the second breaks two at once.
    assert_eq!(h.len(), 1, "{h:?}");
    assert!(h[0].1.contains("max_calls: 2 calls, at most 1 expected"), "{h:?}");
    assert!(h[0].1.contains("args: call 2 of calculator: 'expression' is \"6*7+0\""), "{h:?}");
    paused_after_each_hit(&events);
    let verdicts: Vec<(u32, Option<switchyard::task::ExpectVerdict>)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunFinished { expect, .. } => Some((e.run, expect.clone())),
            _ => None,
        })
        .collect();
    let first = verdicts[0].1.as_ref().expect("run 1 has a verdict");
    assert_eq!(first.checked, 3);
    assert_eq!(first.broken.iter().map(|b| b.expect.as_str()).collect::<Vec<_>>(), ["max_calls", "args"]);
    assert!(verdicts[1].1.as_ref().is_some_and(|v| v.met() && v.checked == 1), "{verdicts:?}");
}

#[tokio::test(flavor = "current_thread")]
async fn a_step_of_a_run_pauses_before_its_first_call() {
    let events = run_with_breaks(
        script(2),
        StrategyKind::React,
        vec![brk("step=2"), brk("step=1@run=2")],
        vec![calc_task(), calc_task()],
    )
    .await;
    let at: Vec<(u32, u32, u32)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::BreakpointHit { id, .. } => Some((*id, e.run, e.step)),
            _ => None,
        })
        .collect();
    assert_eq!(at, [(1, 1, 2), (2, 2, 1), (1, 2, 2)]);
    paused_after_each_hit(&events);
}

#[tokio::test(flavor = "current_thread")]
async fn a_score_falling_below_the_line_pauses_and_disabled_or_cleared_breakpoints_do_not() {
    let controls = vec![
        brk("score<-1:calculator"),
        brk("score<-1"),
        brk("tool=calculator"),
        Control::ToggleBreakpoint { id: 3 },
        brk("error"),
        Control::ClearBreakpoint { id: 4 },
    ];
    let events = run_with_breaks(script(1), StrategyKind::Toolnet, controls, vec![calc_task()]).await;
    let h = hits(&events);
    assert_eq!(h.iter().map(|(id, _)| *id).collect::<Vec<_>>(), [1, 2], "{h:?}");
    assert!(h[0].1.contains("calculator -2"), "{h:?}");
    let state = SessionState::from_events(&events);
    let rows: Vec<(u32, bool, u32)> = state.debug.breakpoints.iter().map(|b| (b.id, b.enabled, b.hits)).collect();
    assert_eq!(rows, [(1, true, 1), (2, true, 1), (3, false, 0)]);
}

// ---- the trace ----

#[tokio::test(flavor = "current_thread")]
async fn a_trace_with_edits_and_hits_replays_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let model = Scripted::new(
        &[&call("calculator", json!({"expression": "6*7"})), &call("web_search", json!({"query": "x"})), &finish("43")],
        "{}",
    );
    let mut s = setup(model, StrategyKind::React);
    s.schedule = before_first(vec![tools(&["calculator", "web_search"]), brk("tool=web_search")]);
    let (mut engine, handle) = Engine::new(s);
    engine.set_trace(TraceWriter::create(&path).unwrap());
    let rx = engine.subscribe();
    let run = tokio::spawn(engine.run(vec![calc_task()]));
    let mut live = Live { handle, rx, seen: Vec::new(), run };
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::EditArgs { args: json!({"expression": "6*7+1"}) } });
    live.until(is_result_review).await;
    live.send(Control::Decide { call, decision: Decision::EditResult { value: json!({"result": 44}) } });
    live.until(|k| matches!(k, EventKind::Paused)).await;
    live.send(Control::Resume);
    let call = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call, decision: Decision::Reject { note: "enough".into() } });
    let (events, outcome) = live.finish().await;

    let replayed = read_trace(&path).unwrap();
    assert_eq!(replayed, events, "the trace holds every event as it was emitted");
    let kinds: BTreeSet<&str> = names(&replayed).into_iter().collect();
    for k in ["CallEdited", "ResultEdited", "CallRejected", "BreakpointHit", "BreakpointSet", "ApprovalSet"] {
        assert!(kinds.contains(k), "{k} missing from the trace");
    }
    let app = switchyard::ui::app::App::replay(replayed);
    assert_eq!(app.state, outcome.state, "the replay folds to what was seen live");
    assert_eq!(app.state.debug.breakpoints[0].hits, 1);
    let notes: Vec<String> = app
        .state
        .current
        .as_ref()
        .unwrap()
        .transcript
        .iter()
        .filter_map(|e| match e {
            switchyard::engine::fold::Entry::Note(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    for line in [
        r#"call 2 calculator: arguments edited {"expression":"6*7"} → {"expression":"6*7+1"}"#,
        r#"the result of call 2 (calculator) edited: {"result":43} → {"result":44}"#,
        "breakpoint #1 (tool=web_search) hit: web_search is about to be called",
        r#"call 4 web_search {"query":"x"} rejected: enough"#,
    ] {
        assert!(notes.iter().any(|n| n == line), "'{line}' not in the replay's transcript: {notes:#?}");
    }
    // The transcript pane shows them as the run goes: the last one is on screen at the end.
    let text = common::buffer_text(&common::screen(&app, 200, 60));
    assert!(text.contains("rejected: enough"), "{text}");
}

// ---- the command line and the config ----

#[test]
fn bad_flags_name_the_forms_in_the_workbench_and_headless() {
    use crate::cli_helpers::fails;
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    // Read before the workbench needs a terminal, so these fail here too.
    let e = fails(&["--data-dir", dir, "ui", "--break", "tool="]);
    assert!(e.contains("--break 'tool=': the tool's name is empty") && e.contains("step=N@run=M"), "{e}");
    let e = fails(&["--data-dir", dir, "ui", "--approve", "boss=me"]);
    assert!(e.contains("--approve 'boss=me': unknown key 'boss'") && e.contains("tool=NAME, role=ROLE"), "{e}");
    // A headless run takes them (attach or ctl answers), and names a bad one.
    let e = fails(&["--data-dir", dir, "run", "--approve", "boss=me"]);
    assert!(e.contains("--approve 'boss=me': unknown key 'boss'"), "{e}");
    let e = fails(&["--data-dir", dir, "run", "--break", "tool="]);
    assert!(e.contains("--break 'tool=': the tool's name is empty"), "{e}");
}

#[test]
fn the_config_sets_approvals_and_breakpoints_and_names_a_bad_one() {
    use switchyard::config::Config;
    let path = std::path::Path::new("switchyard.toml");
    let c = Config::parse(
        "[approve]\ntools = [\"geo_lookup\"]\nroles = [\"actor\"]\n[debug]\nbreaks = [\"error\", \"cost>0.5\"]\n",
        path,
    )
    .unwrap();
    assert!(c.approve.tool("geo_lookup") && c.approve.role(Role::Actor) && !c.approve.all);
    assert_eq!(c.breaks.iter().map(|b| b.to_string()).collect::<Vec<_>>(), ["error", "cost>0.5"]);
    let e = Config::parse("[debug]\nbreaks = [\"error\", \"costs>1\"]\n", path).unwrap_err().to_string();
    assert!(e.contains("debug.breaks[1]") && e.contains("'costs>1': unknown condition"), "{e}");
    let e = Config::parse("[approve]\neverything = true\n", path).unwrap_err().to_string();
    assert!(e.contains("everything"), "{e}");
}

// ---- forks of a debugged session ----

/// A session with a rejected call, an edited result and a breakpoint hit,
/// forked at every point: the prefix comes back event for event without
/// the user (the decisions are the trace's), and past the fork point the
/// session goes on by itself.
#[tokio::test(flavor = "current_thread")]
async fn a_fork_replays_the_users_decisions_and_the_breakpoints_hits() {
    use switchyard::engine::fork::ForkPlan;
    let script = [
        &call("web_search", json!({"query": "6*7"})) as &str,
        &call("calculator", json!({"expression": "6*7"})),
        &finish("42"),
    ];
    let mut s = setup(Scripted::new(&script, "{}"), StrategyKind::React);
    s.schedule = before_first(vec![tools(&["web_search", "calculator"]), brk("step=2")]);
    let mut live = Live::start(s, vec![calc_task()]);
    let call1 = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call: call1, decision: Decision::Reject { note: "use the calculator".into() } });
    live.until(|k| matches!(k, EventKind::BreakpointHit { .. })).await;
    live.send(Control::Resume);
    let call2 = pending_call(&live.until(is_request).await);
    live.send(Control::Decide { call: call2, decision: Decision::Approve });
    let review = pending_call(&live.until(is_result_review).await);
    live.send(Control::Decide { call: review, decision: Decision::EditResult { value: json!(42) } });
    let (parent, _) = live.finish().await;
    for kind in ["CallRejected", "ResultEdited", "BreakpointHit", "Resumed"] {
        assert!(names(&parent).contains(&kind), "{kind} in {:?}", names(&parent));
    }
    let last = parent.len() - 1;
    for at in 1..last {
        let mut s = setup(Scripted::new(&script, "{}"), StrategyKind::React);
        s.fork = Some(ForkPlan::new("parent.jsonl", &parent, at).unwrap());
        let (mut engine, handle) = Engine::new(s);
        let mut rx = engine.subscribe();
        // Nobody at the controls: what waits past the fork point goes through.
        drop(handle);
        engine
            .run(vec![calc_task()])
            .await
            .unwrap_or_else(|e| panic!("fork at {at}: {e} in {:?}", &names(&parent)[..at + 2]));
        let mut forked = Vec::new();
        while let Ok(e) = rx.try_recv() {
            forked.push(e);
        }
        assert_eq!(forked[..at], parent[..at], "fork at {at}");
        assert!(matches!(forked[at].kind, EventKind::Forked { .. }), "fork at {at}: {:?}", forked[at].kind);
    }
}
