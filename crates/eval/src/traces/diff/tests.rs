use serde_json::json;

use super::*;
use crate::engine::event::{Offered, RunOutcome, SCHEMA_VERSION, ToolOutcome};
use crate::engine::params::Params;
use crate::model::{Message, Role, Usage};
use crate::tool::{ToolError, ToolErrorKind};

fn ev(run: u32, step: u32, t: u64, kind: EventKind) -> Event {
    Event { v: SCHEMA_VERSION, run, step, t, kind }
}

fn start(alpha: f64) -> Event {
    ev(
        0,
        0,
        0,
        EventKind::SessionStarted {
            schema: SCHEMA_VERSION,
            strategy: crate::engine::StrategyKind::React,
            seed: 7,
            params: Params { alpha, ..Params::default() },
            models: vec![],
            tools: Vec::new().into(),
            cost_unit: "USD".into(),
            tasks: 1,
            task_list: vec![],
            available_models: vec![],
            pace_ms: 0,
            graph: None,
            experience: None,
        },
    )
}

/// A run that calls `geo_lookup` once and answers; `t0` shifts every
/// timestamp, `call0` every call number, `result` is what the tool gave.
fn run(run: u32, t0: u64, call0: u64, result: ToolOutcome, answer: &str) -> Vec<Event> {
    let usage = Usage::new(100, 10);
    vec![
        ev(
            run,
            0,
            t0,
            EventKind::RunStarted {
                task_id: format!("t{run}"),
                task: "capital of France?".into(),
                gold: Some("Paris".into()),
                index: run,
                total: 2,
            },
        ),
        ev(
            run,
            1,
            t0 + 1,
            EventKind::Candidates {
                from: "start".into(),
                offered: vec![Offered { name: "geo_lookup".into(), weight: Some(1.0), shown: None }],
            },
        ),
        ev(
            run,
            1,
            t0 + 2,
            EventKind::ModelCall {
                call: call0,
                role: Role::Actor,
                model: "sim".into(),
                simulated: true,
                messages: vec![Message::user("capital of France?")],
                wire: None,
            },
        ),
        ev(
            run,
            1,
            t0 + 9,
            EventKind::ModelReply {
                call: call0,
                role: Role::Actor,
                model: "sim".into(),
                text: "{\"tool\":\"geo_lookup\"}".into(),
                tool_calls: vec![],
                usage,
                cost: 0.0,
                latency_ms: 7 + t0,
                fault: None,
                wire: None,
                first_token_ms: None,
                capped: None,
            },
        ),
        ev(
            run,
            1,
            t0 + 10,
            EventKind::ToolCall {
                call: call0 + 1,
                tool: "geo_lookup".into(),
                args: json!({"country": "France"}),
                lane: None,
            },
        ),
        ev(
            run,
            1,
            t0 + 30,
            EventKind::ToolResult {
                call: call0 + 1,
                tool: "geo_lookup".into(),
                outcome: result,
                latency_ms: 20 + t0,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: None,
                source: None,
            },
        ),
        ev(run, 1, t0 + 31, EventKind::Evaluated { scores: Default::default() }),
        ev(
            run,
            2,
            t0 + 40,
            EventKind::RunFinished {
                outcome: RunOutcome::Answered,
                answer: Some(answer.into()),
                success: Some(answer == "Paris"),
                cost: 1.0,
                usage,
                steps: 2,
                tool_calls: 1,
                expect: None,
            },
        ),
    ]
}

fn ok() -> ToolOutcome {
    ToolOutcome::Ok { value: json!({"capital": "Paris"}) }
}

fn trace(runs: Vec<Vec<Event>>, alpha: f64) -> Vec<Event> {
    std::iter::once(start(alpha)).chain(runs.into_iter().flatten()).collect()
}

#[test]
fn timing_and_call_numbers_do_not_count() {
    let a = trace(vec![run(1, 0, 1, ok(), "Paris"), run(2, 100, 3, ok(), "Paris")], 0.5);
    let b = trace(vec![run(1, 5, 1, ok(), "Paris"), run(2, 900, 40, ok(), "Paris")], 0.5);
    let d = diff(&a, &b);
    assert!(!d.differs(), "{d:#?}");
    assert_eq!(d.runs.len(), 2);
    assert_eq!((d.a.runs, d.a.successes, d.b.tool_calls), (2, 2, 2));
    assert!(align(&a, &b).iter().all(|r| r.same));
}

#[test]
fn a_different_tool_result_is_named_with_its_step_and_events() {
    let err = ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, "injected fault") };
    let a = trace(vec![run(1, 0, 1, ok(), "Paris"), run(2, 100, 3, ok(), "Paris")], 0.5);
    let b = trace(vec![run(1, 0, 1, ok(), "Paris"), run(2, 100, 3, err, "Lyon")], 0.5);
    let d = diff(&a, &b);
    assert!(d.differs());
    assert_eq!(d.runs[0].divergence, None);
    let div = d.runs[1].divergence.as_ref().unwrap();
    assert_eq!((div.kind, div.step), (DivergenceKind::ToolResult, 1));
    // Run 2's ToolResult is the 6th event of run 2, after SessionStarted and run 1's 8.
    let (ea, eb) = (div.a.as_ref().unwrap(), div.b.as_ref().unwrap());
    assert_eq!((ea.event, eb.event, ea.name), (15, 15, "ToolResult"));
    assert_eq!(a[ea.event - 1].kind.name(), "ToolResult");
    assert!(ea.text.contains("ok {\"capital\":\"Paris\"}"), "{}", ea.text);
    assert!(eb.text.contains("error (Failed) injected fault"), "{}", eb.text);
    let f = div.field.as_ref().unwrap();
    assert_eq!((f.path.as_str(), f.a.as_str(), f.b.as_str()), ("status", "ok", "err"));
    // The deltas: B's run 2 missed its gold.
    assert_eq!((d.a.successes, d.b.successes), (2, 1));
    assert_eq!(d.runs[1].b.as_ref().unwrap().success, Some(false));
}

#[test]
fn a_cut_trace_ends_early_and_a_missing_run_is_named() {
    let a = trace(vec![run(1, 0, 1, ok(), "Paris"), run(2, 100, 3, ok(), "Paris")], 0.5);
    let mut b = trace(vec![run(1, 0, 1, ok(), "Paris")], 0.5);
    b.truncate(b.len() - 3);
    let d = diff(&a, &b);
    let first = d.runs[0].divergence.as_ref().unwrap();
    assert_eq!(first.kind, DivergenceKind::EndsEarly);
    assert!(first.b.is_none());
    assert_eq!(first.a.as_ref().unwrap().name, "ToolResult");
    assert_eq!(d.runs[0].b, None);
    let second = d.runs[1].divergence.as_ref().unwrap();
    assert_eq!((second.kind, d.runs[1].task_b.as_deref()), (DivergenceKind::RunMissing, None));
}

#[test]
fn doing_something_else_next_is_a_next_event_divergence() {
    let a = trace(vec![run(1, 0, 1, ok(), "Paris")], 0.5);
    let mut b = a.clone();
    // B answers straight after the model's reply: no tool call, no result.
    b.drain(5..8);
    let d = diff(&a, &b);
    let div = d.runs[0].divergence.as_ref().unwrap();
    assert_eq!(div.kind, DivergenceKind::NextEvent);
    assert_eq!((div.a.as_ref().unwrap().name, div.b.as_ref().unwrap().name), ("ToolCall", "RunFinished"));
    assert_eq!(div.field, None);
}

#[test]
fn session_settings_are_listed_and_count_as_a_difference() {
    let a = trace(vec![run(1, 0, 1, ok(), "Paris")], 0.5);
    let b = trace(vec![run(1, 0, 1, ok(), "Paris")], 0.7);
    let d = diff(&a, &b);
    assert!(d.differs());
    assert_eq!(d.session, [Change { field: "alpha".into(), a: "0.5".into(), b: "0.7".into() }]);
    assert!(d.runs.iter().all(|r| r.divergence.is_none()));
}

#[test]
fn a_changed_prompt_shows_where_in_the_text() {
    let a = trace(vec![run(1, 0, 1, ok(), "Paris")], 0.5);
    let mut b = a.clone();
    let long = "You are an agent. ".repeat(10);
    let mut a = a;
    if let EventKind::ModelCall { messages, .. } = &mut a[3].kind {
        messages[0].content = format!("{long}Observation: Paris");
    }
    if let EventKind::ModelCall { messages, .. } = &mut b[3].kind {
        messages[0].content = format!("{long}Observation: error");
    }
    let d = diff(&a, &b);
    let div = d.runs[0].divergence.as_ref().unwrap();
    assert_eq!(div.kind, DivergenceKind::ModelCall);
    let f = div.field.as_ref().unwrap();
    assert_eq!(f.path, "messages[0].content");
    assert!(f.a.starts_with('…') && f.a.ends_with("Observation: Paris"), "{}", f.a);
    assert!(f.b.ends_with("Observation: error"), "{}", f.b);
}

#[test]
fn alignment_lines_up_again_after_an_extra_call() {
    let a = trace(vec![run(1, 0, 1, ok(), "Paris")], 0.5);
    let mut b = a.clone();
    // B calls the tool twice (a retry), then goes on as A does.
    let (call, result) = (b[5].clone(), b[6].clone());
    b.splice(7..7, [call, result]);
    let rows = align(&a, &b);
    let changed: Vec<&Row> = rows.iter().filter(|r| !r.same).collect();
    assert_eq!(changed.len(), 2, "{rows:?}");
    assert!(changed.iter().all(|r| r.a.is_none() && r.b.is_some()));
    assert!(rows.last().unwrap().same, "the outcomes line up: {rows:?}");
    assert_eq!(rows.len(), 9);
    // The positional first divergence is the extra call (a ToolCall against A's RunFinished).
    let div = diff(&a, &b).runs[0].divergence.clone().unwrap();
    assert_eq!((div.kind, div.b.unwrap().name), (DivergenceKind::NextEvent, "ToolCall"));
}

#[test]
fn the_printed_report_names_each_run_and_the_deltas() {
    use std::path::Path;
    let err = ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, "injected fault") };
    let a = trace(vec![run(1, 0, 1, ok(), "Paris"), run(2, 100, 3, ok(), "Paris")], 0.5);
    let b = trace(vec![run(1, 0, 1, ok(), "Paris"), run(2, 100, 3, err, "Lyon")], 0.5);
    let text = super::render::render(Path::new("a.jsonl"), a.len(), Path::new("b.jsonl"), b.len(), &diff(&a, &b));
    assert!(text.starts_with(&format!("A: a.jsonl ({} events, 2 runs)\nB: b.jsonl", a.len())), "{text}");
    assert!(text.contains("session: same settings"), "{text}");
    assert!(text.contains("run 1 (") && text.contains("): same decisions"), "{text}");
    assert!(text.contains("first divergence at step 1"), "{text}");
    assert!(text.contains("differs at status:\n       A ok\n       B err"), "{text}");
    assert!(text.contains("yes → no"), "{text}");
    assert!(text.ends_with("\n1 of 2 runs diverge\n"), "{text}");
    let same = super::render::render(Path::new("a"), a.len(), Path::new("a"), a.len(), &diff(&a, &a));
    assert!(same.ends_with("\nthe traces decide alike\n"), "{same}");
}
