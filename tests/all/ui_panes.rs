//! The transcript, budget, models, workers panes and the status bar, rendered
//! from fixture traces: snapshots of what a user sees, and the styles that
//! carry meaning checked on the buffer.

use crate::common;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::json;

use switchyard::engine::event::{RefuseReason, ToolOutcome};
use switchyard::engine::fold::{Entry, Mode, ToolSpend};
use switchyard::engine::{Event, EventKind, SessionState};
use switchyard::model::price::Price;
use switchyard::model::{ModelInfo, ModelKind, Role};
use switchyard::ui::panes::{budget, models, status, transcript, workers};
use switchyard::ui::{Navigation, PaneCtx, ReplayInfo, Theme};

const FIXTURE: &str = "toolnet-fault.jsonl";

type Pane = fn(&mut Frame, Rect, &PaneCtx);

const PANES: [(&str, Pane); 5] = [
    ("transcript", transcript::render),
    ("budget", budget::render),
    ("models", models::render),
    ("workers", workers::render),
    ("status", status::render),
];

fn draw_at(pane: Pane, state: &SessionState, view: &Navigation, now_ms: u64, w: u16, h: u16) -> Buffer {
    let theme = Theme::default();
    let ctx = PaneCtx { state, nav: view, theme: &theme, focused: true, now_ms };
    common::render(w, h, |frame| pane(frame, frame.area(), &ctx))
}

fn draw(pane: Pane, state: &SessionState, view: &Navigation, w: u16, h: u16) -> Buffer {
    draw_at(pane, state, view, state.t, w, h)
}

fn end_state() -> SessionState {
    common::fixture_state(FIXTURE, None)
}

/// The number of events up to and including the last failing tool result,
/// and the number up to and including the call that led to it.
fn failing_call_prefixes() -> (usize, usize) {
    let events = common::fixture(FIXTURE);
    let (i, call) = events
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, e)| match &e.kind {
            EventKind::ToolResult { call, outcome: ToolOutcome::Err { .. }, .. } => Some((i, *call)),
            _ => None,
        })
        .expect("the fixture has a failing tool call");
    let j = events[..i]
        .iter()
        .rposition(|e| matches!(&e.kind, EventKind::ToolCall { call: c, .. } if *c == call))
        .expect("the failing result follows its call");
    (i + 1, j + 1)
}

/// The rows of the buffer as text.
fn rows(buf: &Buffer) -> Vec<String> {
    common::buffer_text(buf).lines().map(str::to_string).collect()
}

#[test]
fn every_pane_at_both_sizes_at_the_end_of_the_fixture() {
    let state = end_state();
    let view = Navigation::default();
    for (name, pane) in PANES {
        for (w, h) in [(80, 24), (160, 48)] {
            let h = if name == "status" { 2 } else { h };
            let buf = draw(pane, &state, &view, w, h);
            insta::assert_snapshot!(format!("{name}_end_{w}x{h}"), common::buffer_text(&buf));
        }
    }
}

#[test]
fn mid_run_with_a_call_in_flight() {
    let (_, in_flight) = failing_call_prefixes();
    let state = common::fixture_state(FIXTURE, Some(in_flight));
    let run = state.current.as_ref().unwrap();
    assert_eq!(run.in_flight.len(), 1, "the prefix ends right after a ToolCall");
    let view = Navigation::default();
    let started = run.in_flight[0].started;
    // Elapsed time is measured against the clock the pane is given.
    let buf = draw_at(workers::render, &state, &view, started + 1234, 80, 24);
    insta::assert_snapshot!("workers_in_flight_80x24", common::buffer_text(&buf));
    let row = rows(&buf).into_iter().find(|r| r.contains("… geo_lookup")).expect("the running call is listed");
    assert!(row.contains("1.2 s"), "elapsed time shown: {row}");
    assert!(row.contains(r#"{"country":"Australia"}"#), "arguments shown: {row}");

    let buf = draw(transcript::render, &state, &view, 80, 24);
    insta::assert_snapshot!("transcript_in_flight_80x24", common::buffer_text(&buf));
    let last = rows(&buf).into_iter().rev().nth(1).unwrap();
    assert!(last.contains(r#"→ geo_lookup {"country":"Australia"}"#), "the newest line is the call: {last}");

    let buf = draw(status::render, &state, &view, 80, 2);
    insta::assert_snapshot!("status_in_flight_80x2", common::buffer_text(&buf));
}

#[test]
fn mid_run_right_after_a_failing_call() {
    let (after_failure, _) = failing_call_prefixes();
    let state = common::fixture_state(FIXTURE, Some(after_failure));
    let view = Navigation::default();
    let theme = Theme::default();
    for (name, pane) in PANES {
        let h = if name == "status" { 2 } else { 24 };
        let buf = draw(pane, &state, &view, 80, h);
        insta::assert_snapshot!(format!("{name}_after_failure_80x{h}"), common::buffer_text(&buf));
    }

    // The transcript: the result line is in the failing colour, with ✗ and the fault.
    let buf = draw(transcript::render, &state, &view, 80, 24);
    let line = rows(&buf).into_iter().find(|r| r.contains("← geo_lookup")).expect("the result is shown");
    assert!(line.contains("← geo_lookup ✗ ⚡"), "{line}");
    assert!(line.contains("failed: injected fault: error"), "{line}");
    assert_eq!(common::fg_at(&buf, "✗ ⚡"), theme.failing);
    assert_eq!(common::fg_at(&buf, "geo_lookup ✗"), theme.failing);
    assert_eq!(common::fg_at(&buf, "⚡ error"), theme.fault);

    // Workers: the failed call, newest first, in the failing colour with ✗.
    let buf = draw(workers::render, &state, &view, 80, 24);
    let rows = rows(&buf);
    let first = rows.iter().position(|r| r.contains("run") && r.contains("result")).unwrap() + 1;
    assert!(rows[first].contains("geo_lookup") && rows[first].contains("✗ failed"), "{}", rows[first]);
    let fault = common::find(&buf, "⚡ error").expect("the fault that caused it");
    assert_eq!(fault.1 as usize, first);
    assert_eq!(buf[fault].fg, theme.fault);
    assert_eq!(common::fg_at(&buf, "✗ failed"), theme.failing);
    let (x, y) = common::find(&buf, "✗ failed").unwrap();
    let tool_x = rows[y as usize].find("geo_lookup").unwrap() as u16;
    assert!(tool_x < x);
    assert_eq!(buf[(tool_x, y)].fg, theme.failing, "the failed call's tool name");
    // A successful call is not in the failing colour.
    assert_eq!(common::fg_at(&buf, "✓ ok"), theme.ok);
}

#[test]
fn the_simulated_model_is_marked() {
    let state = end_state();
    let theme = Theme::default();
    let buf = draw(models::render, &state, &Navigation::default(), 80, 24);
    let actor = rows(&buf).into_iter().find(|r| r.contains("actor")).unwrap();
    assert!(actor.contains("sim (simulated)"), "{actor}");
    assert_eq!(common::fg_at(&buf, "(simulated)"), theme.simulated);
    // Every role is listed, also the ones that made no call.
    for role in ["planner", "solver", "actor", "evaluator", "classifier", "judge"] {
        assert!(common::buffer_text(&buf).contains(role), "{role} missing");
    }
    let planner = rows(&buf).into_iter().find(|r| r.contains("planner")).unwrap();
    assert!(planner.contains(" 0 "), "no calls yet: {planner}");
}

#[test]
fn a_switched_role_shows_the_new_model_and_keeps_the_old_ones_cost() {
    let mut state = end_state();
    let before = state.accounts[&(Role::Actor, "sim".to_string())].calls;
    state.apply(&Event {
        v: 1,
        run: 8,
        step: 4,
        t: state.t + 1,
        kind: EventKind::ModelSwitched {
            role: Role::Actor,
            model: ModelInfo { name: "gpt-4o-mini".into(), kind: ModelKind::Openai, simulated: false },
            price: Price { input_per_mtok: 0.15, output_per_mtok: 0.6 },
        },
    });
    let theme = Theme::default();
    let buf = draw(models::render, &state, &Navigation::default(), 160, 48);
    insta::assert_snapshot!("models_switched_160x48", common::buffer_text(&buf));
    let rows = rows(&buf);
    let actor = rows.iter().find(|r| r.contains("actor") && r.contains("gpt-4o-mini")).expect("the new model");
    assert!(!actor.contains("simulated"), "a real model is not marked: {actor}");
    assert!(actor.contains("0.15 / 0.6"), "its price: {actor}");
    let old = rows.iter().find(|r| r.contains("(before)")).expect("the model it replaced");
    assert!(old.contains("sim (simulated)") && old.split_whitespace().any(|c| c == before.to_string()), "{old}");
    let (x, y) = common::find(&buf, "gpt-4o-mini").unwrap();
    assert_eq!(buf[(x, y)].fg, theme.text);
}

#[test]
fn models_counts_calls_and_tokens_from_the_accounts() {
    let state = end_state();
    let (calls, prompt) = state
        .accounts
        .iter()
        .filter(|((r, _), _)| r.as_str() == "actor")
        .fold((0, 0), |(c, p), (_, a)| (c + a.calls, p + a.usage.prompt_tokens));
    let buf = draw(models::render, &state, &Navigation::default(), 160, 48);
    let actor = rows(&buf).into_iter().find(|r| r.contains("actor")).unwrap();
    let cells: Vec<&str> = actor.split_whitespace().collect();
    assert!(cells.contains(&calls.to_string().as_str()), "{calls} calls in {actor}");
    let tokens = format!("{:.1}k", prompt as f64 / 1e3);
    assert!(cells.contains(&tokens.as_str()), "{tokens} in {actor}");
}

#[test]
fn models_show_the_share_of_the_prompt_served_from_cache_once_a_server_reports_one() {
    let mut state = end_state();
    let buf = draw(models::render, &state, &Navigation::default(), 160, 48);
    assert!(!common::buffer_text(&buf).contains("cached"), "no server reported a cache");
    let a = state.accounts.get_mut(&(Role::Actor, "sim".to_string())).unwrap();
    a.usage.cached_tokens = a.usage.prompt_tokens * 3 / 4;
    let buf = draw(models::render, &state, &Navigation::default(), 160, 48);
    let text = common::buffer_text(&buf);
    assert!(text.contains("cached"), "{text}");
    let actor = rows(&buf).into_iter().find(|r| r.contains("actor")).unwrap();
    assert!(actor.split_whitespace().any(|c| c == "75%"), "{actor}");
    let planner = rows(&buf).into_iter().find(|r| r.contains("planner")).unwrap();
    assert!(planner.contains('—'), "no prompt, no share: {planner}");
}

#[test]
fn transcript_scrolls_up_from_the_newest() {
    let state = end_state();
    let follow = draw(transcript::render, &state, &Navigation::default(), 80, 24);
    let follow_rows = rows(&follow);
    assert!(follow_rows[22].contains("✓ answered: AUD"), "follows the newest: {}", follow_rows[22]);

    let view = Navigation { transcript_scroll: 5, ..Default::default() };
    let scrolled = draw(transcript::render, &state, &view, 80, 24);
    insta::assert_snapshot!("transcript_scrolled_80x24", common::buffer_text(&scrolled));
    let scrolled_rows = rows(&scrolled);
    // What was 5 lines above the bottom is now the bottom line.
    assert_eq!(scrolled_rows[22], follow_rows[17]);
    assert!(scrolled_rows[23].contains("↓ 5 newer lines"), "{}", scrolled_rows[23]);

    // Scrolling past the top stops at the first line.
    let view = Navigation { transcript_scroll: usize::MAX, ..Default::default() };
    let top = rows(&draw(transcript::render, &state, &view, 80, 24));
    assert!(top[1].contains("▸ actor prompt · sim"), "{}", top[1]);
}

#[test]
fn transcript_folds_long_values_unless_unfolded() {
    let state = end_state();
    let folded = common::buffer_text(&draw(transcript::render, &state, &Navigation::default(), 80, 48));
    assert!(folded.contains("chars)"), "long lines are folded:\n{folded}");
    assert!(folded.contains("system: You are the evaluator"), "{folded}");
    assert!(folded.contains("(2 lines)"), "the system prompt is one line:\n{folded}");

    let view = Navigation { unfold: true, ..Default::default() };
    let buf = draw(transcript::render, &state, &view, 80, 48);
    insta::assert_snapshot!("transcript_unfolded_80x48", common::buffer_text(&buf));
    let unfolded = common::buffer_text(&buf);
    assert!(!unfolded.contains("chars)"), "nothing is folded:\n{unfolded}");
    assert!(unfolded.contains("Transcript (unfolded)"));

    let buf = draw(transcript::render, &state, &view, 160, 48);
    insta::assert_snapshot!("transcript_unfolded_160x48", common::buffer_text(&buf));
}

#[test]
fn transcript_shows_the_candidates_with_their_weights() {
    let state = end_state();
    let view = Navigation { transcript_scroll: usize::MAX, ..Default::default() };
    let text = common::buffer_text(&draw(transcript::render, &state, &view, 160, 48));
    let run = state.current.as_ref().unwrap();
    assert!(text.contains(&format!("task {}/{}: {}", run.index, state.total_tasks, run.task)), "{text}");
    assert!(text.contains("- city_search [weight 13]"), "{text}");
}

#[test]
fn refusals_and_notes_stand_out() {
    let mut state = common::fixture_state(FIXTURE, Some(failing_call_prefixes().0));
    let run = state.current.as_mut().unwrap();
    run.transcript.push(Entry::Refusal {
        tool: "geo_lookup".into(),
        reason: RefuseReason::Forbidden,
        detail: "no calls left in the plan".into(),
    });
    run.transcript.push(Entry::Refusal {
        tool: "web_search".into(),
        reason: RefuseReason::NotOffered,
        detail: String::new(),
    });
    run.transcript.push(Entry::ModelError { role: Role::Actor, model: "sim".into(), error: "HTTP 500".into() });
    run.transcript.push(Entry::Note("fault injected: geo_lookup error (until cleared)".into()));
    run.transcript.push(Entry::Call {
        call: 99,
        tool: "web_search".into(),
        args: json!({"q": "x".repeat(400)}),
        lane: None,
    });
    let theme = Theme::default();
    let buf = draw(transcript::render, &state, &Navigation::default(), 80, 24);
    let text = common::buffer_text(&buf);
    assert!(text.contains("⊘ refused geo_lookup: forbidden"), "{text}");
    assert_eq!(common::fg_at(&buf, "⊘ refused"), theme.forbidden);
    assert!(text.contains("! refused web_search: not among the candidates"), "{text}");
    assert!(text.contains("✗ actor · sim failed: HTTP 500"), "{text}");
    assert_eq!(common::fg_at(&buf, "✗ actor"), theme.failing);
    assert!(text.contains("• fault injected: geo_lookup error"), "{text}");
    // A long value is one line, with what was left out counted.
    let call = rows(&buf).into_iter().find(|r| r.contains("→ web_search")).unwrap();
    assert!(call.contains("chars)"), "{call}");
}

#[test]
fn budget_shows_spend_per_tool_and_the_bar_against_b() {
    let mut state = end_state();
    let theme = Theme::default();
    let buf = draw(budget::render, &state, &Navigation::default(), 80, 24);
    let text = common::buffer_text(&buf);
    assert!(text.contains("no budget set"), "{text}");
    let geo = rows(&buf).into_iter().find(|r| r.contains("geo_lookup ")).unwrap();
    let spend = &state.tool_spend["geo_lookup"];
    assert!(geo.contains(&format!("✗ {}", spend.errors)), "errors counted: {geo}");
    assert!(geo.contains("⚡"), "the tool still has a fault injected: {geo}");
    assert_eq!(common::fg_at(&buf, &format!("✗ {}", spend.errors)), theme.failing);
    assert!(text.contains(&format!("session {:.2} credits", state.total_cost)), "{text}");

    // Over budget: the bar says so in the failing colour.
    state.params.budget = Some(2.0);
    let buf = draw(budget::render, &state, &Navigation::default(), 80, 24);
    insta::assert_snapshot!("budget_over_80x24", common::buffer_text(&buf));
    let cost = state.current.as_ref().unwrap().cost;
    let label = format!("this task {cost:.2} / 2.00 credits ({:.0}%)", cost / 2.0 * 100.0);
    assert_eq!(common::fg_at(&buf, &label), theme.failing);
    assert_eq!(common::fg_at(&buf, "█"), theme.failing);
}

#[test]
fn budget_lists_the_costliest_tools_of_a_large_library() {
    let mut state = end_state();
    for i in 0..16_000 {
        state
            .tool_spend
            .insert(format!("tool_{i:05}"), ToolSpend { calls: 1, errors: 0, cost: (i % 97) as f64 / 10.0 });
    }
    state.tool_spend.insert("the_expensive_one".into(), ToolSpend { calls: 3, errors: 0, cost: 1000.0 });
    let buf = draw(budget::render, &state, &Navigation::default(), 80, 24);
    let rows = rows(&buf);
    let header = rows.iter().position(|r| r.contains("tool") && r.contains("calls")).unwrap();
    assert!(rows[header + 1].contains("the_expensive_one"), "{}", rows[header + 1]);
    assert!(common::buffer_text(&buf).contains("more tools"));
}

#[test]
fn status_bar_live_replay_and_flash() {
    let state = end_state();
    let done = common::buffer_text(&draw(status::render, &state, &Navigation::default(), 80, 2));
    assert!(done.contains("finished") && done.contains("task 8/8"), "{done}");
    assert!(!done.contains("space"), "nothing left to pause: {done}");

    let (_, in_flight) = failing_call_prefixes();
    let running = common::fixture_state(FIXTURE, Some(in_flight));
    let live = common::buffer_text(&draw(status::render, &running, &Navigation::default(), 80, 2));
    let run = running.current.as_ref().unwrap();
    let graph = running.graph.as_ref().unwrap();
    for part in [
        "running".to_string(),
        format!("task {}/{}", run.index, running.total_tasks),
        format!("run {}", run.run),
        format!("step {}", running.step),
        format!("iteration {}", graph.iteration),
        "α 0.5 β 0.5 τ 0.15 B ∞ K 3".to_string(),
        "space pause · s step · f fault".to_string(),
        "? help · q quit".to_string(),
    ] {
        assert!(live.contains(&part), "'{part}' missing at 80 columns:\n{live}");
    }

    let replay = Navigation { replay: Some(ReplayInfo { cursor: 103, total: 145 }), ..Default::default() };
    let buf = draw(status::render, &common::fixture_state(FIXTURE, Some(103)), &replay, 80, 2);
    insta::assert_snapshot!("status_replay_80x2", common::buffer_text(&buf));
    let text = common::buffer_text(&buf);
    assert!(text.starts_with(" REPLAY event 103/145"), "{text}");
    assert!(text.contains("←/→ step") && text.contains("0-9 jump") && text.contains("? help"), "{text}");

    let flash = Navigation { flash: Some("fault injected on geo_lookup".into()), ..Default::default() };
    let mut paused = common::fixture_state(FIXTURE, Some(103));
    paused.mode = Mode::Paused;
    let buf = draw(status::render, &paused, &flash, 80, 2);
    insta::assert_snapshot!("status_flash_80x2", common::buffer_text(&buf));
    let text = common::buffer_text(&buf);
    assert!(text.contains("paused") && text.contains("space resume"), "{text}");
    let theme = Theme::default();
    let (x, y) = common::find(&buf, "fault injected on geo_lookup").unwrap();
    assert_eq!(buf[(x, y)].bg, theme.selected);

    // One line: the state first, the help key last, all within the width.
    let buf = draw(status::render, &paused, &flash, 80, 1);
    insta::assert_snapshot!("status_flash_80x1", common::buffer_text(&buf));
    let line = common::buffer_text(&buf);
    assert!(line.contains("paused") && line.contains("? help"), "{line}");
    let buf = draw(status::render, &state, &Navigation::default(), 160, 1);
    let line = common::buffer_text(&buf);
    assert!(line.contains("α 0.5 β 0.5 τ 0.15 B ∞ K 3"), "{line}");
}

#[test]
fn nothing_panics_on_empty_states_or_tiny_areas() {
    let (after_failure, in_flight) = failing_call_prefixes();
    let states = [
        SessionState::default(),
        common::fixture_state(FIXTURE, Some(1)),
        common::fixture_state(FIXTURE, Some(2)),
        common::fixture_state(FIXTURE, Some(in_flight)),
        common::fixture_state(FIXTURE, Some(after_failure)),
        end_state(),
        common::fixture_state("react.jsonl", None),
    ];
    let views = [
        Navigation::default(),
        Navigation {
            unfold: true,
            transcript_scroll: 3,
            flash: Some("x".repeat(300)),
            replay: Some(ReplayInfo { cursor: 0, total: 0 }),
            ..Default::default()
        },
    ];
    for state in &states {
        for view in &views {
            for (_, pane) in PANES {
                for (w, h) in [(80, 24), (20, 5), (10, 3), (3, 1), (1, 1)] {
                    let buf = draw(pane, state, view, w, h);
                    assert_eq!(buf.area, Rect::new(0, 0, w, h));
                }
            }
        }
    }
    let empty = common::buffer_text(&draw(transcript::render, &SessionState::default(), &views[0], 40, 5));
    assert!(empty.contains("No task has started yet."), "{empty}");
}
