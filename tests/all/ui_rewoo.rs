//! The workbench over a rewoo run (`common::rewoo_events`): the workers
//! pane's lanes and the keys that steer them, the models pane's roles, the
//! plan in the graph pane, the transcript's plan and evidence, the category
//! dialog.

use crate::common;
use common::{app, press, screen};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use switchyard::engine::LaneAction;
use switchyard::engine::{Control, Event, EventKind, SessionState};
use switchyard::tool::fault::FaultMode;
use switchyard::ui::app::{Action, App, Effect};
use switchyard::ui::dialog::{Dialog, Outcome};
use switchyard::ui::panes::{graph, models, status, transcript, workers};
use switchyard::ui::{Navigation, Pane, PaneCtx, Theme};

type PaneFn = fn(&mut Frame, Rect, &PaneCtx);

/// How long the running lane has run when the mid-run panes are drawn.
const RUNNING_FOR: u64 = 1234;

fn draw_at(pane: PaneFn, state: &SessionState, view: &Navigation, now_ms: u64, w: u16, h: u16) -> Buffer {
    let theme = Theme::default();
    let ctx = PaneCtx { state, nav: view, theme: &theme, focused: true, now_ms };
    common::render(w, h, |frame| pane(frame, frame.area(), &ctx))
}

fn rows(buf: &Buffer) -> Vec<String> {
    common::buffer_text(buf).lines().map(str::to_string).collect()
}

/// The screen row that contains every one of `needles`.
fn row_with(buf: &Buffer, needles: &[&str]) -> String {
    rows(buf)
        .into_iter()
        .find(|r| needles.iter().all(|n| r.contains(n)))
        .unwrap_or_else(|| panic!("no row with {needles:?}:\n{}", common::buffer_text(buf)))
}

/// The clock time lane 0 of #E2 started at.
fn lane0_started(state: &SessionState) -> u64 {
    let step = state.current.as_ref().and_then(|r| r.rewoo.as_ref()).and_then(|w| w.active_step()).unwrap();
    step.lanes[0].started.expect("lane 0 runs")
}

#[test]
fn the_fixture_folds_into_a_step_mid_run() {
    let s = common::rewoo_fixture();
    let w = s.current.as_ref().unwrap().rewoo.as_ref().unwrap();
    assert_eq!(w.plan.len(), 2);
    assert_eq!(w.steps.len(), 2);
    assert!(w.steps[0].finished);
    assert_eq!(w.tokens_saved, 12);
    let step = w.active_step().expect("#E2 runs");
    assert_eq!(step.evidence, 2);
    assert_eq!(step.lanes.len(), 3);
    // #E1's lanes overlapped on the clock.
    let (a, b) = (&w.steps[0].lanes[0], &w.steps[0].lanes[1]);
    assert!(a.started < b.finished && b.started < a.finished, "{a:?} {b:?}");
    let f = common::rewoo_fixture_finished();
    assert!(f.current.as_ref().unwrap().rewoo.as_ref().unwrap().active_step().is_none());
    assert_eq!(f.finished.last().map(|r| r.tokens_saved), Some(21));
}

#[test]
fn workers_pane_shows_the_running_steps_lanes() {
    let state = common::rewoo_fixture();
    let view = Navigation::default();
    let now = lane0_started(&state) + RUNNING_FOR;
    for (w, h) in [(80, 24), (160, 48)] {
        let buf = draw_at(workers::render, &state, &view, now, w, h);
        insta::assert_snapshot!(format!("workers_lanes_{w}x{h}"), common::buffer_text(&buf));
        row_with(&buf, &["step #E2", "3 lanes", "1 running"]);
        let running = row_with(&buf, &["▸", "calculator", "… running"]);
        assert!(running.contains("+0 ms") && running.contains("1.2 s"), "start and elapsed: {running}");
        let waiting = row_with(&buf, &["2 calculator", "◦ waiting"]);
        assert!(waiting.contains("⚡") && waiting.contains("pending"), "the fault asked for: {waiting}");
    }
    // The picked lane moves with the view; the running lane is in the accent colour.
    let buf = draw_at(workers::render, &state, &Navigation { lane: 1, ..Default::default() }, now, 80, 24);
    assert!(row_with(&buf, &["1 calculator"]).starts_with("│▸"));
    let theme = Theme::default();
    assert_eq!(common::fg_at(&buf, "… running"), theme.accent);
}

#[test]
fn workers_pane_shows_null_for_the_filtered_lane_and_the_ok_lanes_result() {
    let events = common::rewoo_events(false);
    // Right after #E1 finished: the pane shows it, done.
    let end_of_e1 = events.iter().position(|e| matches!(e.kind, EventKind::StepFinished { .. })).unwrap() + 1;
    let state = SessionState::from_events(&events[..end_of_e1]);
    let buf = draw_at(workers::render, &state, &Navigation::default(), state.t, 80, 24);
    insta::assert_snapshot!("workers_step_done_80x24", common::buffer_text(&buf));
    row_with(&buf, &["step #E1", "done", "12 tokens saved"]);
    let failed = row_with(&buf, &["0 geo_lookup", "✗ failed"]);
    assert!(failed.contains("null (filtered)"), "{failed}");
    assert!(failed.contains("⚡ error") || failed.contains("⚡  error"), "the fault that fired: {failed}");
    let ok = row_with(&buf, &["1 geo_lookup_mirror", "✓ ok"]);
    assert!(ok.contains(r#"{"name":"France","#), "the result: {ok}");
    assert!(!ok.contains("null"), "{ok}");
    assert_eq!(common::fg_at(&buf, "✗ failed"), Theme::default().failing);
}

#[test]
fn the_finished_calls_table_keeps_long_tool_names_whole() {
    let mut app = app(common::rewoo_events(false));
    app.nav.focus = Pane::Workers;
    // 80 columns show the focused pane alone; 160 put the workers pane in a
    // third of the width, where a fixed fault column used to cut the name.
    for (w, h) in [(80, 24), (160, 48)] {
        let text = common::buffer_text(&screen(&app, w, h));
        assert!(text.contains("geo_lookup_mirror ✓ ok"), "{w}x{h}:\n{text}");
        assert!(!text.contains("geo_lookup…"), "{w}x{h}:\n{text}");
    }
    // Without faults the table has no fault column at all.
    let state = common::fixture_state("react.jsonl", None);
    assert!(state.recent_calls.iter().all(|c| c.fault.is_none()));
    let buf = draw_at(workers::render, &state, &Navigation::default(), state.t, 50, 24);
    assert!(!common::buffer_text(&buf).contains("fault"), "{}", common::buffer_text(&buf));
}

#[test]
fn lane_keys_send_lane_controls() {
    let mut app = app(common::rewoo_events(false));
    app.nav.focus = Pane::Workers;
    assert!(press(&mut app, KeyCode::Down).is_empty());
    assert_eq!(app.nav.lane, 1);
    assert_eq!(
        press(&mut app, KeyCode::Char('h')),
        vec![Effect::Control(Control::Lane { lane: 1, action: LaneAction::Hold })]
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('n')),
        vec![Effect::Control(Control::Lane { lane: 1, action: LaneAction::Step })]
    );
    assert_eq!(
        press(&mut app, KeyCode::Char('k')),
        vec![Effect::Control(Control::Lane { lane: 1, action: LaneAction::Fail { fault: FaultMode::Error } })]
    );
    // Once the engine says the lane is held, h releases it.
    app.update(Action::Engine(Event {
        v: 1,
        run: 1,
        step: 3,
        t: 1500,
        kind: EventKind::LaneChanged { lane: 1, action: LaneAction::Hold },
    }));
    assert_eq!(
        press(&mut app, KeyCode::Char('h')),
        vec![Effect::Control(Control::Lane { lane: 1, action: LaneAction::Release })]
    );
    // The cursor stops at the last lane; the running lane can be failed but not held.
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.nav.lane, 2);
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    press(&mut app, KeyCode::Up);
    assert_eq!(app.nav.lane, 0);
    assert!(press(&mut app, KeyCode::Char('h')).is_empty());
    assert!(app.nav.flash.as_deref().is_some_and(|f| f.contains("lane 0 is running")), "{:?}", app.nav.flash);
    assert_eq!(
        press(&mut app, KeyCode::Char('k')),
        vec![Effect::Control(Control::Lane { lane: 0, action: LaneAction::Fail { fault: FaultMode::Error } })]
    );
}

#[test]
fn lane_keys_do_nothing_without_a_running_step_or_the_workers_pane() {
    let keys = [KeyCode::Char('h'), KeyCode::Char('n'), KeyCode::Char('k')];
    // A finished run: no step is running.
    let mut done = app(common::rewoo_events(true));
    done.nav.focus = Pane::Workers;
    // Before any plan.
    let events = common::rewoo_events(false);
    let before = events.iter().position(|e| matches!(e.kind, EventKind::PlanWritten { .. })).unwrap();
    let mut planning = app(events[..before].to_vec());
    planning.nav.focus = Pane::Workers;
    // A step runs, but another pane has the focus.
    let mut elsewhere = app(common::rewoo_events(false));
    elsewhere.nav.focus = Pane::Transcript;
    for a in [&mut done, &mut planning, &mut elsewhere] {
        for k in keys {
            assert!(press(a, k).is_empty(), "{k:?}");
        }
        press(a, KeyCode::Down);
        assert_eq!(a.nav.lane, 0, "↓ scrolls, it picks no lane");
    }
    // A replay never steers.
    let mut replay = App::replay(common::rewoo_events(false));
    replay.nav.focus = Pane::Workers;
    press(&mut replay, KeyCode::Down);
    assert_eq!(replay.nav.lane, 1, "the view may move in a replay");
    for k in keys {
        assert!(press(&mut replay, k).is_empty());
        assert_eq!(replay.nav.flash.as_deref(), Some("a replay is read-only"));
    }
}

#[test]
fn the_lane_cursor_is_clamped_when_the_lanes_change() {
    let events = common::rewoo_events(true);
    let e2 = events.iter().rposition(|e| matches!(e.kind, EventKind::StepStarted { .. })).unwrap();
    // Pick lane 2 of #E2, then replay from #E1 (two lanes).
    let mut app = App::replay(events.clone());
    app.nav.focus = Pane::Workers;
    app.seek(e2 + 1);
    press(&mut app, KeyCode::Down);
    press(&mut app, KeyCode::Down);
    assert_eq!(app.nav.lane, 2);
    app.seek(e2);
    assert_eq!(app.nav.lane, 1, "#E1 has two lanes");
}

#[test]
fn status_bar_and_help_list_the_lane_keys() {
    let mut app = app(common::rewoo_events(false));
    app.nav.focus = Pane::Workers;
    let text = common::buffer_text(&screen(&app, 160, 48));
    let status = text.lines().last().unwrap();
    for k in ["↑/↓ lane", "h hold", "n step lane", "k fail lane"] {
        assert!(status.contains(k), "{status}");
    }
    app.nav.focus = Pane::Graph;
    let text = common::buffer_text(&screen(&app, 160, 48));
    assert!(!text.lines().last().unwrap().contains("h hold"));
    assert!(text.lines().last().unwrap().contains("c categories"));

    let theme = Theme::default();
    let s = SessionState::default();
    let help = common::buffer_text(&common::render(160, 60, |f| Dialog::help(false).render(f, f.area(), &s, &theme)));
    for needle in ["tool categories", "pick a lane", "hold the lane", "step the lane", "fail the lane"] {
        assert!(help.contains(needle), "help lacks '{needle}':\n{help}");
    }
}

#[test]
fn models_pane_names_the_rewoo_roles_and_dims_the_others() {
    let theme = Theme::default();
    for (name, state) in [("mid", common::rewoo_fixture()), ("finished", common::rewoo_fixture_finished())] {
        for (w, h) in [(80, 24), (160, 48)] {
            let buf = draw_at(models::render, &state, &Navigation::default(), state.t, w, h);
            insta::assert_snapshot!(format!("models_rewoo_{name}_{w}x{h}"), common::buffer_text(&buf));
            row_with(&buf, &["planner", "sim-weak"]);
            row_with(&buf, &["solver", "sim-strong"]);
            row_with(&buf, &["classifier", "sim"]);
            row_with(&buf, &["dimmed: actor, evaluator, judge", "rewoo"]);
            assert_eq!(common::fg_at(&buf, "planner"), theme.accent);
            assert_eq!(common::fg_at(&buf, "solver"), theme.accent, "used, even before its first call");
            assert_eq!(common::fg_at(&buf, "actor"), theme.muted);
            assert_eq!(common::fg_at(&buf, "judge"), theme.muted);
        }
    }
    // A role the strategy does not name is not dimmed once it made a call.
    let mut events = common::rewoo_events(false);
    events.push(Event {
        v: 1,
        run: 1,
        step: 3,
        t: 1500,
        kind: EventKind::ModelReply {
            call: 9,
            role: switchyard::model::Role::Judge,
            model: "sim".into(),
            text: "helpful".into(),
            tool_calls: vec![],
            usage: Default::default(),
            cost: 0.0,
            latency_ms: 3,
            fault: None,
            wire: None,
            first_token_ms: None,
            capped: None,
        },
    });
    let state = SessionState::from_events(&events);
    let buf = draw_at(models::render, &state, &Navigation::default(), state.t, 80, 24);
    assert_eq!(common::fg_at(&buf, "judge"), theme.accent);
    row_with(&buf, &["dimmed: actor, evaluator (rewoo"]);
}

#[test]
fn graph_pane_shows_the_plan() {
    let theme = Theme::default();
    let state = common::rewoo_fixture();
    let view = Navigation::default();
    for (w, h) in [(80, 24), (160, 48)] {
        let buf = draw_at(graph::render, &state, &view, state.t, w, h);
        insta::assert_snapshot!(format!("graph_plan_{w}x{h}"), common::buffer_text(&buf));
        row_with(&buf, &["✓", "#E1", "done", "Look up France"]);
        row_with(&buf, &["▶", "#E2", "running", "← #E1"]);
        row_with(&buf, &["✗", "geo_lookup", "Information Retrieval", "[France]", "error", "→ null"]);
        row_with(&buf, &["✓", "geo_lookup_mirror", "Information Retrieval"]);
        row_with(&buf, &["…", "calculator", "Task Completion", "[#E1.population / 1e6]"]);
        assert_eq!(common::fg_at(&buf, "▶ #E2"), theme.accent);
        assert_eq!(common::fg_at(&buf, "✓ #E1"), theme.ok);
    }
    // The plan scrolls like the graph's table.
    let scrolled = Navigation { table_offset: 2, ..Default::default() };
    let buf = draw_at(graph::render, &state, &scrolled, state.t, 80, 8);
    assert!(!common::buffer_text(&buf).contains("2 steps"), "{}", common::buffer_text(&buf));

    // Before the plan: the tools by category, with where each label came from.
    let events = common::rewoo_events(false);
    let before = events.iter().position(|e| matches!(e.kind, EventKind::PlanWritten { .. })).unwrap();
    let state = SessionState::from_events(&events[..before]);
    let buf = draw_at(graph::render, &state, &view, state.t, 80, 24);
    insta::assert_snapshot!("graph_plan_before_80x24", common::buffer_text(&buf));
    row_with(&buf, &["no plan yet"]);
    row_with(&buf, &["Information Retrieval (3)"]);
    row_with(&buf, &["web_search", "manifest"]);
    row_with(&buf, &["Task Completion (1)"]);
}

#[test]
fn transcript_shows_the_plan_lanes_and_evidence() {
    let state = common::rewoo_fixture_finished();
    let view = Navigation { transcript_scroll: 0, ..Default::default() };
    let buf = draw_at(transcript::render, &state, &view, state.t, 160, 48);
    insta::assert_snapshot!("transcript_rewoo_160x48", common::buffer_text(&buf));
    row_with(&buf, &["#E2 = calculator[#E1.population / 1e6];", "← #E1"]);
    row_with(&buf, &["▸ step #E2", "3 lanes at once"]);
    row_with(&buf, &["→ calculator lane 2"]);
    row_with(&buf, &["← calculator lane 2 ✗", "filtered: the solver sees null"]);
    row_with(&buf, &["≡ evidence #E2", "3 results, 1 null", "9 tokens saved"]);
    row_with(&buf, &["lane 2 calculator: null", "(filtered"]);
    row_with(&buf, &["lane 0 calculator: {\"result\":68.17}"]);
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

fn type_text(d: &mut Dialog, s: &SessionState, text: &str) {
    for c in text.chars() {
        assert_eq!(d.handle_key(key(KeyCode::Char(c)), s), Outcome::Continue);
    }
}

fn dialog_text(d: &Dialog, s: &SessionState, w: u16, h: u16) -> String {
    let theme = Theme::default();
    common::buffer_text(&common::render(w, h, |f| d.render(f, f.area(), s, &theme)))
}

#[test]
fn category_dialog_sets_a_listed_or_a_new_category() {
    let s = common::rewoo_fixture();
    let mut d = Dialog::category(&s, None);
    type_text(&mut d, &s, "mirror");
    assert_eq!(d.handle_key(key(KeyCode::Enter), &s), Outcome::Continue, "Enter picks the tool");
    // From Information Retrieval, → is the next one.
    assert_eq!(d.handle_key(key(KeyCode::Right), &s), Outcome::Continue);
    assert_eq!(
        d.handle_key(key(KeyCode::Enter), &s),
        Outcome::Submit(vec![Control::SetCategory {
            tool: "geo_lookup_mirror".into(),
            category: "Task Completion".into()
        }])
    );

    // A new category, typed in.
    let mut d = Dialog::category(&s, Some("calculator"));
    assert_eq!(d.handle_key(key(KeyCode::Enter), &s), Outcome::Continue);
    type_text(&mut d, &s, "Arithmetic");
    let text = dialog_text(&d, &s, 100, 30);
    assert!(text.contains("Category of calculator, now Task Completion (model)"), "{text}");
    assert!(text.contains("[Arithmetic"), "the name typed in: {text}");
    assert_eq!(
        d.handle_key(key(KeyCode::Enter), &s),
        Outcome::Submit(vec![Control::SetCategory { tool: "calculator".into(), category: "Arithmetic".into() }])
    );

    // The category it already has: nothing to send.
    let mut d = Dialog::category(&s, Some("calculator"));
    d.handle_key(key(KeyCode::Enter), &s);
    assert_eq!(d.handle_key(key(KeyCode::Enter), &s), Outcome::Submit(vec![]));

    // Through the app: c opens it, the submit becomes the control.
    let mut a = app(common::rewoo_events(false));
    press(&mut a, KeyCode::Char('c'));
    assert!(matches!(a.dialog, Some(Dialog::Category(_))));
    for c in "web".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Right);
    let sent = press(&mut a, KeyCode::Enter);
    assert_eq!(
        sent,
        vec![Effect::Control(Control::SetCategory { tool: "web_search".into(), category: "Task Completion".into() })]
    );
    assert!(a.dialog.is_none());
}

#[test]
fn category_dialog_filters_and_says_when_there_are_no_labels() {
    let s = common::rewoo_fixture();
    let mut d = Dialog::category(&s, None);
    type_text(&mut d, &s, "geo");
    let text = dialog_text(&d, &s, 100, 30);
    assert!(text.contains("2 of 4 tools"), "{text}");
    assert!(text.contains("geo_lookup_mirror") && !text.contains("calculator"), "{text}");
    type_text(&mut d, &s, "zzz");
    assert_eq!(d.handle_key(key(KeyCode::Enter), &s), Outcome::Continue);
    assert!(dialog_text(&d, &s, 100, 30).contains("no tool matches"));

    let toolnet = common::fixture_state("toolnet-fault.jsonl", None);
    let mut d = Dialog::category(&toolnet, None);
    let text = dialog_text(&d, &toolnet, 100, 30);
    assert!(text.contains("No tool categories in this session"), "{text}");
    assert_eq!(d.handle_key(key(KeyCode::Char('x')), &toolnet), Outcome::Continue);
    assert_eq!(d.handle_key(key(KeyCode::Enter), &toolnet), Outcome::Cancel);

    // Tiny areas and odd keys do not panic.
    let empty = SessionState::default();
    for st in [&s, &toolnet, &empty] {
        let mut d = Dialog::category(st, Some("nowhere"));
        for (w, h) in [(1, 1), (10, 3), (20, 6), (40, 10), (80, 24)] {
            dialog_text(&d, st, w, h);
        }
        for code in [KeyCode::Enter, KeyCode::Left, KeyCode::Tab, KeyCode::Up, KeyCode::Enter, KeyCode::Backspace] {
            let _ = d.handle_key(key(code), st);
        }
        dialog_text(&d, st, 80, 24);
    }
}

#[test]
fn category_dialog_snapshots() {
    let s = common::rewoo_fixture();
    let list = Dialog::category(&s, Some("geo_lookup"));
    let mut chosen = Dialog::category(&s, Some("geo_lookup"));
    chosen.handle_key(key(KeyCode::Enter), &s);
    chosen.handle_key(key(KeyCode::Right), &s);
    let none = common::fixture_state("toolnet-fault.jsonl", None);
    let cases: [(&str, &Dialog, &SessionState); 3] =
        [("list", &list, &s), ("chosen", &chosen, &s), ("none", &Dialog::category(&none, None), &none)];
    for (name, d, st) in cases {
        for (w, h) in [(80, 24), (160, 48)] {
            insta::assert_snapshot!(format!("dialog_category_{name}_{w}x{h}"), dialog_text(d, st, w, h));
        }
    }
}

#[test]
fn status_bar_in_a_rewoo_step() {
    let mut app = app(common::rewoo_events(false));
    app.nav.focus = Pane::Workers;
    let buf = {
        let theme = Theme::default();
        let ctx = PaneCtx { state: &app.state, nav: &app.nav, theme: &theme, focused: false, now_ms: app.now_ms };
        common::render(80, 2, |f| status::render(f, f.area(), &ctx))
    };
    insta::assert_snapshot!("status_lanes_80x2", common::buffer_text(&buf));
    assert!(rows(&buf)[1].starts_with("↑/↓ lane · h hold"), "{}", rows(&buf)[1]);
}

#[test]
fn rewoo_panes_survive_tiny_areas() {
    let panes: [PaneFn; 5] = [workers::render, models::render, graph::render, transcript::render, status::render];
    for state in [common::rewoo_fixture(), common::rewoo_fixture_finished()] {
        for view in
            [Navigation::default(), Navigation { lane: 7, table_offset: 99, unfold: true, ..Default::default() }]
        {
            for pane in panes {
                for (w, h) in [(1, 1), (3, 3), (10, 4), (20, 6), (40, 8)] {
                    draw_at(pane, &state, &view, state.t, w, h);
                }
            }
        }
    }
}

#[test]
fn workers_pane_marks_a_recorded_answer() {
    let mut events = common::rewoo_events(false);
    for e in events.iter_mut() {
        if let EventKind::ToolResult { tool, source, .. } = &mut e.kind
            && tool == "geo_lookup_mirror"
        {
            *source = Some(switchyard::tool::CallSource::Recorded);
        }
    }
    let end_of_e1 = events.iter().position(|e| matches!(e.kind, EventKind::StepFinished { .. })).unwrap() + 1;
    let state = SessionState::from_events(&events[..end_of_e1]);
    let buf = draw_at(workers::render, &state, &Navigation::default(), state.t, 100, 24);
    let ok = row_with(&buf, &["1 geo_lookup_mirror", "✓ ok"]);
    assert!(ok.contains(r#"[recorded] {"name":"France","#), "the marker before the result: {ok}");
    let failed = row_with(&buf, &["0 geo_lookup", "✗ failed"]);
    assert!(!failed.contains("[recorded]"), "{failed}");
    assert!(
        common::buffer_text(&buf).contains("geo_lookup_mirror [recorded]"),
        "the finished calls: {}",
        common::buffer_text(&buf)
    );
}
