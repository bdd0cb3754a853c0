//! The fold's memory is bounded: a session of 20,000
//! runs keeps a window of the latest runs and bounded graph history, while
//! its totals count every run.

use serde_json::json;

use crate::common;

use switchyard::engine::event::{GraphSnapshot, RunOutcome, StrategyKind, ToolBrief, ToolOutcome};
use switchyard::engine::fold::graph_history::SERIES_CAP;
use switchyard::engine::fold::{RUN_WINDOW, RunSummary, SessionState};
use switchyard::engine::{Event, EventKind, Params};
use switchyard::eval::metrics::Metrics;
use switchyard::graph::{GraphUpdate, RowChange, WeightChange};
use switchyard::model::Usage;
use switchyard::ui::panes::budget;
use switchyard::ui::{Navigation, PaneCtx, Theme};

const RUNS: u32 = 20_000;
const TOOLS: usize = 6;

fn ev(run: u32, t: u64, kind: EventKind) -> Event {
    Event { v: 2, run, step: 1, t, kind }
}

fn tool(i: usize) -> String {
    format!("tool_{i}")
}

fn started() -> Event {
    let names: Vec<String> = (0..TOOLS).map(tool).collect();
    let mut edges = Vec::new();
    for (i, t) in names.iter().enumerate() {
        edges.push(("start".to_string(), t.clone(), 1.0 / TOOLS as f64));
        edges.push((t.clone(), "end".to_string(), 0.5));
        edges.push((t.clone(), tool((i + 1) % TOOLS), 0.5));
    }
    ev(
        0,
        0,
        EventKind::SessionStarted {
            schema: 1,
            strategy: StrategyKind::Toolnet,
            seed: 1,
            params: Params::default(),
            models: vec![],
            tools: names
                .iter()
                .map(|t| ToolBrief { name: t.clone(), description: t.clone(), category: None, cost: 1.0, server: None })
                .collect(),
            cost_unit: "credits".into(),
            tasks: RUNS,
            task_list: vec![],
            available_models: vec![],
            pace_ms: 0,
            graph: Some(GraphSnapshot::new(0, edges, vec![])),
            experience: None,
        },
    )
}

/// Run `run`'s events: one tool call, the graph's update (a score, a listed
/// weight and `start`'s shared row), the end. Every third run is judged
/// right, every fifth goes over its budget, every seventh fails.
fn run_events(run: u32) -> Vec<Event> {
    let t = u64::from(run) * 10;
    let used = tool(run as usize % TOOLS);
    let next = tool((run as usize + 1) % TOOLS);
    let w = f64::from(run % 100) / 100.0;
    let update = GraphUpdate {
        iteration: run,
        scores: vec![(used.as_str().into(), f64::from(run % 7) - 3.0)],
        weights: vec![
            WeightChange { from: "start".into(), to: used.as_str().into(), old: 0.0, new: w },
            WeightChange { from: used.as_str().into(), to: next.into(), old: 0.5, new: 1.0 - w },
        ],
        rows: vec![RowChange { from: "start".into(), rest: (1.0 - w) / (TOOLS - 1) as f64 }],
    };
    let outcome =
        if run % 7 == 0 { RunOutcome::Failed { error: format!("down at {run}") } } else { RunOutcome::Answered };
    vec![
        ev(
            run,
            t,
            EventKind::RunStarted { task_id: format!("t{run}"), task: "q".into(), gold: None, index: run, total: RUNS },
        ),
        ev(run, t + 1, EventKind::ToolCall { call: u64::from(run), tool: used.clone(), args: json!({}), lane: None }),
        ev(
            run,
            t + 2,
            EventKind::ToolResult {
                call: u64::from(run),
                tool: used.clone(),
                outcome: ToolOutcome::Ok { value: json!({"r": run}) },
                latency_ms: 1,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: None,
                source: None,
            },
        ),
        ev(run, t + 3, EventKind::GraphUpdated { update }),
        ev(
            run,
            t + 4,
            EventKind::RunFinished {
                outcome,
                answer: Some("a".into()),
                success: (run % 2 == 0).then_some(run % 3 == 0),
                cost: if run % 5 == 0 { 30.0 } else { 1.5 },
                usage: Usage::new(100 + u64::from(run % 13), 7),
                steps: 1 + run % 4,
                tool_calls: 1,
                expect: None,
            },
        ),
    ]
}

#[test]
fn twenty_thousand_runs_keep_a_window_and_bounded_history_and_count_every_run() {
    let mut state = SessionState::default();
    state.apply(&started());
    // Every run's summary as the fold made it, to check the totals against.
    let mut every: Vec<RunSummary> = Vec::new();
    for run in 1..=RUNS {
        for e in run_events(run) {
            state.apply(&e);
        }
        every.push(state.finished.last().cloned().unwrap());
    }

    // The window: the latest runs, in order.
    assert_eq!(state.finished.len(), RUN_WINDOW);
    assert_eq!(state.finished.first().map(|r| r.run), Some(RUNS - RUN_WINDOW as u32 + 1));
    assert_eq!(state.finished.last().map(|r| r.run), Some(RUNS));
    assert_eq!(state.runs_dropped(), u64::from(RUNS) - RUN_WINDOW as u64);

    // The totals: every run.
    assert_eq!(state.totals.runs, u64::from(RUNS));
    assert_eq!(state.totals.failed, u64::from(RUNS / 7));
    assert_eq!(state.totals.first_failure, Some((7, "down at 7".to_string())));
    assert_eq!(state.succeeded(), every.iter().filter(|r| r.success == Some(true)).count());
    assert_eq!(Metrics::from_state("soak", &state), Metrics::from_runs("soak", &every));
    let m = Metrics::from_state("soak", &state);
    assert_eq!(m.tasks, RUNS as usize);
    assert_eq!(m.judged, RUNS as usize / 2);
    let calls: u64 = state.tool_spend.values().map(|s| s.calls).sum();
    assert_eq!(calls, u64::from(RUNS));
    assert_eq!(state.events, 1 + 5 * u64::from(RUNS));

    // The budget pane counts every run, not the kept window.
    let avg = every.iter().map(|r| r.cost).sum::<f64>() / f64::from(RUNS);
    let theme = Theme::default();
    let view = Navigation::default();
    let ctx = PaneCtx { state: &state, nav: &view, theme: &theme, focused: true, now_ms: state.t };
    let screen = common::buffer_text(&common::render(100, 12, |f| budget::render(f, f.area(), &ctx)));
    let want = format!("{RUNS} runs done, {avg:.2} a run on average");
    assert!(screen.contains(&want), "wanted '{want}' in\n{screen}");

    // The graph's history: every series within its cap, and few series.
    let g = state.graph.as_ref().unwrap();
    let (series, points) = g.history.size();
    assert!(series <= TOOLS * 3 + 1, "{series} series");
    assert!(points <= series * SERIES_CAP, "{points} points in {series} series");
    for i in 0..TOOLS {
        let t = tool(i);
        let next = tool((i + 1) % TOOLS);
        for s in [g.score_changes(&t).to_vec(), g.weight_changes("start", &t), g.weight_changes(&t, &next)] {
            assert!(!s.is_empty() && s.len() <= SERIES_CAP, "{t}: {} points", s.len());
            // Still from the series' first change to its latest, in order.
            assert!(s[0].0 <= TOOLS as u32 + 1, "{t} starts at {}", s[0].0);
            assert!(s.last().unwrap().0 > RUNS - TOOLS as u32 - 1, "{t} ends at {}", s.last().unwrap().0);
            assert!(s.windows(2).all(|w| w[0].0 <= w[1].0));
        }
        // The latest point is the edge's weight now.
        let last = g.weight_changes("start", &t).last().unwrap().1;
        assert_eq!(Some(last), g.weight("start", &t));
    }
}

#[test]
fn a_session_within_the_caps_keeps_every_change() {
    let mut state = SessionState::default();
    state.apply(&started());
    let runs = 600;
    for run in 1..=runs {
        for e in run_events(run) {
            state.apply(&e);
        }
    }
    assert_eq!(state.finished.len(), runs as usize);
    assert_eq!(state.runs_dropped(), 0);
    let g = state.graph.as_ref().unwrap();
    // tool_1 is used (and listed) every sixth run, from run 1; start's
    // shared row gives it the rest in the other runs.
    let changes = g.weight_changes("start", "tool_1");
    assert_eq!(changes.len(), runs as usize);
    for (run, (it, w)) in (1..=runs).zip(&changes) {
        let listed = f64::from(run % 100) / 100.0;
        let want = if run as usize % TOOLS == 1 { listed } else { (1.0 - listed) / (TOOLS - 1) as f64 };
        assert_eq!((*it, *w), (run, want), "run {run}");
    }
    let scores = g.score_changes("tool_1");
    assert_eq!(scores.len(), (1..=runs).filter(|r| *r as usize % TOOLS == 1).count());
}
