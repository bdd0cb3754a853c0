//! The ReWOO step runner: concurrency proven by a barrier, fault isolation,
//! null filtering with the tokens it saves, and lane order.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard::engine::{Clock, LogicalClock};
use switchyard::model::tokens;
use switchyard::strategy::rewoo::worker::{LaneResult, StepCall, evidence_text, run_step, tokens_saved};
use switchyard::tool::exec::{Executor, NOTHING_FOUND};
use switchyard::tool::fault::FaultMode;
use switchyard::tool::{ExecutorSpec, ToolError, ToolErrorKind, ToolResult, ToolSpec};
use tokio::sync::Barrier;
use tokio::time::Instant;

/// Tokio's clock in ms: under paused time it moves only when every task
/// waits on a timer, so its readings are exact.
struct TokioClock(Instant);

impl TokioClock {
    fn new() -> Self {
        TokioClock(Instant::now())
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
}

fn calls(n: usize) -> Vec<StepCall> {
    (0..n).map(|i| StepCall { lane: i, tool: format!("tool_{i}"), args: json!({"q": i}) }).collect()
}

fn lanes(results: &[LaneResult]) -> Vec<usize> {
    results.iter().map(|r| r.lane).collect()
}

#[tokio::test]
async fn calls_of_a_step_run_together() {
    const N: usize = 4;
    let barrier = Barrier::new(N);
    let clock = LogicalClock::default();
    // Each call returns only once all N have started: run one after another,
    // the first would wait forever, and the outer timeout fails the test.
    let step = run_step(calls(N), Duration::from_secs(600), &clock, |c| {
        let barrier = &barrier;
        async move {
            barrier.wait().await;
            Ok(json!({ "lane": c.lane }))
        }
    });
    let results = tokio::time::timeout(Duration::from_secs(20), step)
        .await
        .expect("the step's calls did not run concurrently (barrier never released)");

    assert_eq!(lanes(&results), (0..N).collect::<Vec<_>>());
    for r in &results {
        assert_eq!(r.result, Ok(json!({ "lane": r.lane })));
        assert!(!r.filtered);
        assert!(r.started < r.finished, "{r:?}");
    }
    // The logical clock orders every reading: all lanes started before any
    // finished, so every pair of intervals overlaps.
    let last_start = results.iter().map(|r| r.started).max().unwrap();
    let first_finish = results.iter().map(|r| r.finished).min().unwrap();
    assert!(last_start < first_finish, "{results:?}");
}

#[tokio::test(start_paused = true)]
async fn a_stuck_call_times_out_alone() {
    let clock = TokioClock::new();
    let timeout = Duration::from_millis(50);
    let results = run_step(calls(3), timeout, &clock, |c| async move {
        if c.lane == 1 {
            std::future::pending::<()>().await;
        }
        Ok(json!({ "answer": c.lane * 10 }))
    })
    .await;

    assert_eq!(lanes(&results), [0, 1, 2]);
    // No lane waited for another to start (lane 2 comes after the stuck one).
    assert!(results.iter().all(|r| r.started == 0), "{results:?}");
    let stuck = &results[1];
    assert!(matches!(&stuck.result, Err(ToolError { kind: ToolErrorKind::Timeout, .. })), "{stuck:?}");
    assert!(stuck.filtered);
    assert_eq!(evidence_text(stuck), "null");
    assert_eq!(stuck.finished - stuck.started, timeout.as_millis() as u64);
    for r in [&results[0], &results[2]] {
        assert_eq!(r.result, Ok(json!({ "answer": r.lane * 10 })));
        assert!(!r.filtered);
        // The siblings were not held back until the stuck call gave up.
        assert_eq!(r.finished, r.started, "{r:?}");
    }
}

fn calculator() -> ToolSpec {
    ToolSpec {
        name: "calculator".into(),
        description: "arithmetic".into(),
        category: None,
        cost: 1.0,
        parameters: json!({"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}),
        response: None,
        executor: ExecutorSpec::Builtin { function: "calculator".into() },
        source: None,
    }
}

#[tokio::test(start_paused = true)]
async fn an_injected_timeout_leaves_its_siblings_intact() {
    let exec = Executor::new();
    let spec = calculator();
    let step: Vec<StepCall> = ["2 + 3", "7 * 6", "10 / 4"]
        .iter()
        .enumerate()
        .map(|(lane, e)| StepCall { lane, tool: spec.name.clone(), args: json!({ "expression": e }) })
        .collect();
    let mut expected = Vec::new();
    for c in &step {
        expected.push(exec.call(&spec, &c.args, None, 1, Duration::from_secs(1)).await);
    }
    assert!(expected.iter().all(Result::is_ok), "{expected:?}");

    let clock = LogicalClock::default();
    let (exec, spec) = (&exec, &spec);
    // The executor would hang the faulted call for 10 s; the worker's own
    // timeout stops it first.
    let results = run_step(step, Duration::from_millis(100), &clock, |c| async move {
        let fault = (c.lane == 1).then_some(FaultMode::Timeout);
        exec.call(spec, &c.args, fault, 1, Duration::from_secs(10)).await
    })
    .await;

    assert!(matches!(&results[1].result, Err(ToolError { kind: ToolErrorKind::Timeout, .. })), "{results:?}");
    assert!(results[1].filtered);
    for i in [0, 2] {
        assert_eq!(results[i].result, expected[i]);
        assert!(!results[i].filtered);
        assert_eq!(evidence_text(&results[i]), expected[i].as_ref().unwrap().to_string());
    }
}

#[tokio::test]
async fn errors_and_nothing_found_reach_the_solver_as_null() {
    let error_message = "upstream answered 503: service unavailable, try again later";
    let answer = json!({"city": "Lyon", "population": 522_250});
    let outcomes: Vec<ToolResult> = vec![
        Ok(answer.clone()),
        Err(ToolError::new(ToolErrorKind::Failed, error_message)),
        Ok(json!(NOTHING_FOUND)),
        Ok(json!({"results": []})),
    ];
    let clock = LogicalClock::default();
    let outcomes = &outcomes;
    let results = run_step(calls(4), Duration::from_secs(5), &clock, |c| async move { outcomes[c.lane].clone() }).await;

    let filtered: Vec<bool> = results.iter().map(|r| r.filtered).collect();
    assert_eq!(filtered, [false, true, true, true]);
    let evidence: Vec<String> = results.iter().map(evidence_text).collect();
    assert_eq!(evidence, [answer.to_string(), "null".into(), "null".into(), "null".into()]);
    // The lane keeps what really happened, for the workbench.
    assert_eq!(&results[1].result, &outcomes[1]);

    // By hand: what each filtered lane would have shown, less "null".
    let null = tokens::count("null");
    let shown = [format!("Failed: {error_message}"), "\"Nothing Found\"".to_string(), r#"{"results":[]}"#.to_string()];
    let expected: u64 = shown.iter().map(|s| tokens::count(s) - null).sum();
    assert!(expected > 0);
    assert_eq!(tokens_saved(&results), expected);
    assert_eq!(tokens_saved(&results[..1]), 0);
}

#[tokio::test(start_paused = true)]
async fn results_come_back_in_lane_order_when_lanes_finish_in_reverse() {
    const N: u64 = 4;
    let clock = TokioClock::new();
    let finish_order = Mutex::new(Vec::new());
    // Handed over shuffled: the order of the results is the lanes', not the input's.
    let mut step = calls(N as usize);
    step.swap(0, 2);
    let step_results = run_step(step, Duration::from_secs(5), &clock, |c| {
        let finish_order = &finish_order;
        async move {
            tokio::time::sleep(Duration::from_millis(10 * (N - c.lane as u64))).await;
            finish_order.lock().unwrap().push(c.lane);
            Ok(Value::from(c.lane as u64))
        }
    })
    .await;

    assert_eq!(*finish_order.lock().unwrap(), [3, 2, 1, 0]);
    assert_eq!(lanes(&step_results), [0, 1, 2, 3]);
    for r in &step_results {
        assert_eq!(r.result, Ok(Value::from(r.lane as u64)));
        assert_eq!(r.tool, format!("tool_{}", r.lane));
        assert_eq!(r.started, 0);
        assert_eq!(r.finished, 10 * (N - r.lane as u64));
    }
}

#[tokio::test]
async fn an_empty_step_is_empty() {
    let clock = LogicalClock::default();
    let results = run_step(Vec::new(), Duration::from_secs(1), &clock, |_| async { Ok(Value::Null) }).await;
    assert!(results.is_empty());
    assert_eq!(tokens_saved(&results), 0);
}
