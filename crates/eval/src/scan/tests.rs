use async_trait::async_trait;
use serde_json::{Value, json};

use super::*;
use crate::engine::event::{Capped, Event, RefuseReason, SCHEMA_VERSION, ToolOutcome};
use crate::model::{ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage};
use crate::sim::{SimConfig, SimModel};
use crate::tool::{ToolError, ToolErrorKind};

fn ev(step: u32, kind: EventKind) -> Event {
    Event { v: SCHEMA_VERSION, run: 1, step, t: 0, kind }
}

fn started(gold: &str) -> Event {
    ev(
        0,
        EventKind::RunStarted {
            task_id: "t1".into(),
            task: "What is 2+2?".into(),
            gold: Some(gold.into()),
            index: 0,
            total: 1,
        },
    )
}

fn call(step: u32, tool: &str, args: Value) -> Event {
    ev(step, EventKind::ToolCall { call: step as u64, tool: tool.into(), args, lane: None })
}

fn result(step: u32, tool: &str, outcome: ToolOutcome) -> Event {
    ev(
        step,
        EventKind::ToolResult {
            call: step as u64,
            tool: tool.into(),
            outcome,
            latency_ms: 1,
            cost: 1.0,
            fault: None,
            filtered: false,
            lane: None,
            source: None,
        },
    )
}

fn err(step: u32, tool: &str) -> Event {
    result(step, tool, ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, "bad argument 'x'") })
}

fn ok(step: u32, tool: &str) -> Event {
    result(step, tool, ToolOutcome::Ok { value: json!({"value": 4}) })
}

fn finished(outcome: RunOutcome, answer: Option<&str>, success: Option<bool>) -> Event {
    ev(
        9,
        EventKind::RunFinished {
            outcome,
            answer: answer.map(str::to_string),
            success,
            cost: 1.0,
            usage: Usage::new(1, 1),
            steps: 3,
            tool_calls: 3,
            expect: None,
        },
    )
}

fn scan(events: &[Event], gold_tools: &[&str]) -> RunScan {
    let runs = runs(events);
    let cx = RunContext { gold_tools: gold_tools.iter().map(|s| s.to_string()).collect() };
    scan_rules("t.jsonl", None, &runs[0], &cx)
}

fn names(r: &RunScan) -> Vec<&str> {
    r.findings.iter().map(|f| f.scanner.as_str()).collect()
}

#[test]
fn a_call_made_three_times_with_the_same_arguments_in_any_key_order_loops() {
    let events = vec![
        started("4"),
        call(1, "calc", json!({"a": 1, "b": 2})),
        err(1, "calc"),
        call(2, "calc", json!({"b": 2, "a": 1})),
        err(2, "calc"),
        call(3, "calc", json!({"a": 1, "b": 2})),
        ok(3, "calc"),
        finished(RunOutcome::Answered, Some("4"), Some(true)),
    ];
    let r = scan(&events, &[]);
    assert_eq!(names(&r), vec!["looped"]);
    // The third call is event 6 of the trace.
    assert_eq!(r.findings[0].event, 6);
    assert!(!r.failed);
    // Twice is not a loop, and other arguments are another call.
    let twice = [
        &events[..5],
        &[call(3, "calc", json!({"a": 2})), ok(3, "calc"), finished(RunOutcome::Answered, Some("4"), Some(true))],
    ]
    .concat();
    assert!(names(&scan(&twice, &[])).is_empty());
}

#[test]
fn refused_repeats_count_as_attempts() {
    let repeat = |step| {
        ev(step, EventKind::Refused { tool: "calc".into(), reason: RefuseReason::Repeated, detail: "again".into() })
    };
    let events = vec![
        started("4"),
        call(1, "calc", json!({"a": 1})),
        ok(1, "calc"),
        repeat(2),
        repeat(3),
        finished(RunOutcome::MaxSteps, None, Some(false)),
    ];
    let r = scan(&events, &[]);
    assert_eq!(names(&r), vec!["looped", "ran-out"]);
    assert!(r.failed);
}

#[test]
fn an_error_answered_over_is_ignored_but_one_recovered_from_is_not() {
    let ignored = vec![
        started("4"),
        call(1, "calc", json!({})),
        err(1, "calc"),
        finished(RunOutcome::Answered, Some("5"), Some(false)),
    ];
    let r = scan(&ignored, &[]);
    assert_eq!(names(&r), vec!["ignored-error"]);
    assert_eq!(r.findings[0].event, 3);
    let recovered = vec![
        started("4"),
        call(1, "calc", json!({})),
        err(1, "calc"),
        call(2, "calc_mirror", json!({})),
        ok(2, "calc_mirror"),
        finished(RunOutcome::Answered, Some("4"), Some(true)),
    ];
    assert!(names(&scan(&recovered, &[])).is_empty());
}

#[test]
fn giving_up_running_out_refusals_caps_model_failures_and_crashes_are_each_found() {
    let r =
        scan(&[started("4"), finished(RunOutcome::Answered, Some("I could not find the answer."), Some(false))], &[]);
    assert_eq!(names(&r), vec!["gave-up"]);
    let r = scan(&[started("4"), finished(RunOutcome::OutOfBudget, None, Some(false))], &[]);
    assert_eq!((names(&r), r.findings[0].detail.as_str()), (vec!["ran-out"], "out of budget"));
    let refused =
        ev(1, EventKind::Refused { tool: "calc".into(), reason: RefuseReason::OverBudget, detail: String::new() });
    let r = scan(&[started("4"), refused, finished(RunOutcome::Answered, Some("4"), Some(true))], &[]);
    assert_eq!(names(&r), vec!["btp-refused"]);
    let capped = ev(
        1,
        EventKind::ModelReply {
            call: 1,
            role: Role::Actor,
            model: "m".into(),
            text: "{\"tool\":".into(),
            tool_calls: vec![],
            usage: Usage::new(1, 1),
            cost: 0.0,
            latency_ms: 1,
            fault: None,
            wire: None,
            first_token_ms: None,
            capped: Some(Capped { max_tokens: Some(256) }),
        },
    );
    let r = scan(&[started("4"), capped, finished(RunOutcome::Answered, Some("4"), Some(true))], &[]);
    assert_eq!(names(&r), vec!["reply-capped"]);
    assert!(r.findings[0].detail.contains("256"));
    let failed_call = ev(
        1,
        EventKind::ModelFailed {
            call: 1,
            role: Role::Actor,
            model: "m".into(),
            error: "HTTP 500".into(),
            latency_ms: 1,
            fault: None,
        },
    );
    let crash = finished(RunOutcome::Failed { error: "HTTP 500".into() }, None, Some(false));
    let r = scan(&[started("4"), failed_call, crash], &[]);
    assert_eq!(names(&r), vec!["model-failed", "crashed"]);
    assert!(r.faults.is_empty(), "no fault was injected");
}

#[test]
fn narrowing_that_hides_a_gold_tool_or_one_called_later_is_found() {
    let narrowed = ev(
        1,
        EventKind::ToolsNarrowed {
            call: 1,
            mode: crate::engine::params::Narrowing::Graph,
            kept: vec!["a".into()],
            dropped: vec!["calc".into(), "b".into()],
        },
    );
    let end = finished(RunOutcome::Answered, Some("4"), Some(true));
    assert_eq!(names(&scan(&[started("4"), narrowed.clone(), end.clone()], &["calc"])), vec!["narrowed-out"]);
    assert!(names(&scan(&[started("4"), narrowed.clone(), end.clone()], &["a"])).is_empty());
    let later = vec![started("4"), narrowed, call(2, "b", json!({})), ok(2, "b"), end];
    let r = scan(&later, &[]);
    assert_eq!(names(&r), vec!["narrowed-out"]);
    assert_eq!(r.findings[0].detail, "b was narrowed away");
}

#[test]
fn a_session_trace_is_split_into_its_runs_numbered_by_trace_line() {
    let mut events =
        vec![Event { v: SCHEMA_VERSION, run: 0, step: 0, t: 0, kind: EventKind::FaultCleared { tool: None } }];
    for run in 1..=3 {
        events.push(Event { run, ..started("4") });
        events.push(Event { run, ..finished(RunOutcome::Answered, Some("4"), Some(true)) });
    }
    let split = runs(&events);
    assert_eq!(split.iter().map(|r| r.run).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(split[2].events.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![6, 7]);
}

/// A scanner model that answers `reply` whatever it is asked.
struct Says(&'static str);

#[async_trait]
impl ChatModel for Says {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "says".into(), kind: ModelKind::Sim, simulated: true }
    }
    async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse, ModelError> {
        Ok(ChatResponse::new(self.0, vec![], Usage::new(1, 1)))
    }
}

fn failed_run() -> Vec<Event> {
    vec![
        started("4"),
        call(1, "calc", json!({"a": 1})),
        err(1, "calc"),
        finished(RunOutcome::Answered, Some("5"), Some(false)),
    ]
}

#[tokio::test]
async fn the_simulated_scanner_names_a_failure_at_an_event_the_transcript_shows() {
    let events = failed_run();
    let split = runs(&events);
    let mut r = scan_rules("t.jsonl", None, &split[0], &RunContext::default());
    name_failure(&SimModel::new(SimConfig::default()), &split[0], &mut r).await;
    let f = r.failure.expect("named");
    assert_eq!(f.phrase, "answered despite an unanswered tool error");
    assert_eq!(f.event, 3);
    assert_eq!(r.unscanned, None);
}

#[tokio::test]
async fn a_scanner_answering_nonsense_leaves_the_run_unscanned_with_the_reason() {
    let events = failed_run();
    let split = runs(&events);
    for (reply, why) in [
        ("the run failed because of reasons", "not a JSON object"),
        ("{\"failure\": \"\", \"event\": 3}", "should be 2 to 12 words"),
        ("{\"failure\": \"a tool broke\", \"event\": 99}", "E99"),
        ("{\"failure\": \"a tool broke\"}", "names no event"),
    ] {
        let mut r = scan_rules("t.jsonl", None, &split[0], &RunContext::default());
        name_failure(&Says(reply), &split[0], &mut r).await;
        assert_eq!(r.failure, None, "{reply}");
        assert!(r.unscanned.as_deref().is_some_and(|u| u.contains(why)), "{reply}: {:?}", r.unscanned);
    }
}

#[tokio::test]
async fn alike_phrases_group_and_the_group_takes_the_model_s_name() {
    let row = |task: &str, phrase: &str| RunScan {
        trace: format!("{task}.jsonl"),
        run: 1,
        task_id: task.into(),
        setting: None,
        outcome: "answered".into(),
        success: Some(false),
        failed: true,
        findings: vec![],
        failure: Some(Named { phrase: phrase.into(), event: 4 }),
        unscanned: None,
        faults: vec![],
    };
    let rows = vec![
        row("t1", "the model's calls kept failing"),
        row("t2", "kept repeating the same tool call"),
        row("t3", "the model's calls kept failing"),
        row("t4", "the model calls kept failing badly"),
    ];
    let groups = group::groups(&rows, &group::Words, &SimModel::new(SimConfig::default()), 0.5).await.unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!((groups[0].name.as_str(), groups[0].count), ("the model's calls kept failing", 3));
    assert_eq!(groups[0].tasks, vec!["t1", "t3", "t4"]);
    assert!((groups[0].share - 0.75).abs() < 1e-9);
    assert_eq!(groups[1].examples[0].task_id, "t2");
    // A model that names nothing: the group is named by its commonest phrase, and says why.
    let groups = group::groups(&rows, &group::Words, &Says("no"), 0.5).await.unwrap();
    assert_eq!(groups[0].name, "the model's calls kept failing");
    assert!(groups[0].unnamed.is_some());
}

#[test]
fn clustering_joins_by_average_similarity_only() {
    let v = |x: f32, y: f32| {
        let n = (x * x + y * y).sqrt();
        vec![x / n, y / n]
    };
    // Two tight pairs far apart, and a threshold between.
    let vectors = vec![v(1.0, 0.0), v(0.0, 1.0), v(1.0, 0.1), v(0.1, 1.0)];
    assert_eq!(group::cluster(&vectors, 0.9), vec![vec![0, 2], vec![1, 3]]);
    assert_eq!(group::cluster(&vectors, 0.0).len(), 1);
    assert_eq!(group::cluster(&vectors, 1.01).len(), 4);
}
