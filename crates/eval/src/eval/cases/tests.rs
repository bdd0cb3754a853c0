use serde_json::json;

use super::*;
use crate::engine::event::{SCHEMA_VERSION, ToolOutcome};
use crate::model::Usage;

fn ev(run: u32, kind: EventKind) -> Event {
    Event { v: SCHEMA_VERSION, run, step: 1, t: 0, kind }
}

/// A run of task `id` that calls the tools given, then ends as `outcome`
/// with `answer`, judged against `gold`.
fn run(n: u32, id: &str, calls: &[(&str, serde_json::Value)], answer: Option<&str>, gold: Option<&str>) -> Vec<Event> {
    let mut out = vec![ev(
        n,
        EventKind::RunStarted {
            task_id: id.into(),
            task: format!("question {id}"),
            gold: gold.map(String::from),
            index: n,
            total: 3,
        },
    )];
    for (k, (tool, args)) in calls.iter().enumerate() {
        let call = u64::from(n) * 10 + k as u64;
        out.push(ev(n, EventKind::ToolCall { call, tool: tool.to_string(), args: args.clone(), lane: None }));
        out.push(ev(
            n,
            EventKind::ToolResult {
                call,
                tool: tool.to_string(),
                outcome: ToolOutcome::Ok { value: json!(1) },
                latency_ms: 1,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: None,
                source: None,
            },
        ));
    }
    let success = gold.zip(answer).map(|(g, a)| crate::task::answer_matches(a, g));
    out.push(ev(
        n,
        EventKind::RunFinished {
            outcome: if answer.is_some() { RunOutcome::Answered } else { RunOutcome::MaxSteps },
            answer: answer.map(String::from),
            success,
            cost: 1.0,
            usage: Usage::default(),
            steps: 2,
            tool_calls: calls.len() as u32,
            expect: None,
        },
    ));
    out
}

fn trace() -> Vec<Event> {
    let geo = ("geo_lookup", json!({"country": "France"}));
    let calc = ("calculator", json!({"expression": "2+2"}));
    [
        run(1, "t1", &[geo.clone(), calc.clone()], Some("Paris"), Some("Paris")),
        run(2, "t2", std::slice::from_ref(&calc), None, None),
        run(3, "t3", &[geo], Some("Lyon"), Some("Paris")),
        run(4, "t1", &[calc], Some("4"), None),
    ]
    .concat()
}

#[test]
fn a_finished_run_is_a_task_with_its_answer_and_calls() {
    let (cases, skipped) = cases_from_events(&trace(), None);
    let c = &cases[0];
    assert_eq!((c.run, c.task.id.as_str(), c.task.query.as_str()), (1, "t1", "question t1"));
    assert_eq!(c.task.answer.as_deref(), Some("Paris"));
    assert_eq!(c.task.tools, ["geo_lookup", "calculator"]);
    let g = c.task.gold_call.as_ref().unwrap();
    assert_eq!((g.tool.as_str(), &g.args), ("geo_lookup", &json!({"country": "France"})));
    assert_eq!(c.note, None);
    assert!(c.task.judge("Paris"));
    assert_eq!(skipped, [(2, "run 2 (t2) ended without an answer (max steps)".to_string())]);
    assert_eq!(cases.iter().map(|c| c.run).collect::<Vec<_>>(), [1, 3, 4]);
}

#[test]
fn a_run_that_missed_its_gold_keeps_the_gold() {
    let (cases, _) = cases_from_events(&trace(), Some(&BTreeSet::from([3])));
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0].task.answer.as_deref(), Some("Paris"));
    assert!(cases[0].note.as_ref().unwrap().contains("keeps the gold \"Paris\", not the run's \"Lyon\""));
}

#[test]
fn a_run_cut_short_or_at_the_cursor_before_its_end() {
    let mut events = trace();
    events.truncate(events.len() - 1);
    let (_, skipped) = cases_from_events(&events, Some(&BTreeSet::from([4])));
    assert_eq!(skipped, [(4, "run 4 did not finish: the trace ends inside it".to_string())]);
    // The replay cursor inside run 1 (after its first call): the whole run is taken.
    let whole = trace();
    let c = case_at(&whole, 2).unwrap();
    assert_eq!((c.run, c.task.tools.len()), (1, 2));
    assert!(case_at(&whole, 0).unwrap_err().contains("no run has started"));
    assert!(case_at(&events, events.len()).unwrap_err().contains("has not finished"));
}

#[test]
fn ids_are_made_unique_and_a_case_is_written_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cases").join("today.jsonl");
    let (cases, _) = cases_from_events(&trace(), None);
    let added = append(&path, &cases).unwrap();
    // Run 4 ran task t1 again to another answer: its own id.
    assert_eq!(
        added,
        [
            Added::New { run: 1, id: "t1".into() },
            Added::New { run: 3, id: "t3".into() },
            Added::New { run: 4, id: "t1-run4".into() },
        ]
    );
    let again = append(&path, &cases[..1]).unwrap();
    assert_eq!(again, [Added::Present { run: 1, id: "t1".into() }]);
    let back = load_tasks(&path).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(back[2].id, "t1-run4");
    assert_eq!(back[0], Task { id: "t1".into(), ..cases[0].task.clone() });
    assert!(matches!(append(&dir.path().join("x.toml"), &cases), Err(CaseError::NotJsonl(_))));
    std::fs::write(&path, "{\"id\": 1}\n").unwrap();
    let e = append(&path, &cases).unwrap_err();
    assert!(e.to_string().contains("line 1"), "{e}");
}

#[test]
fn run_lists_read() {
    let p = parse_runs;
    assert_eq!(p("1,3-5").unwrap().into_iter().collect::<Vec<_>>(), [1, 3, 4, 5]);
    assert_eq!(p(" 2 ").unwrap().len(), 1);
    assert!(p("0").unwrap_err().contains("'0'"));
    assert!(p("5-3").unwrap_err().contains("backwards"));
    assert!(p("1,,2").is_err());
    assert!(p("x").is_err());
}
