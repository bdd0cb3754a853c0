//! The workbench's dialogs, driven with synthetic keys against fixture states.

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::buffer::Buffer;

use switchyard::engine::event::{EventKind, ToolBrief};
use switchyard::engine::{Control, ParamChange, SessionState};
use switchyard::graph::WeightFormat;
use switchyard::model::{ModelInfo, ModelKind, Role};
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
use switchyard::ui::Theme;
use switchyard::ui::dialog::{Dialog, Outcome};

const FIXTURE: &str = "toolnet-fault.jsonl";

fn state() -> SessionState {
    common::fixture_state(FIXTURE, None)
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

/// Presses `code` and expects the dialog to stay open.
fn press(d: &mut Dialog, s: &SessionState, code: KeyCode) {
    assert_eq!(d.handle_key(key(code), s), Outcome::Continue, "after {code:?}");
}

fn presses(d: &mut Dialog, s: &SessionState, code: KeyCode, times: usize) {
    for _ in 0..times {
        press(d, s, code);
    }
}

fn type_text(d: &mut Dialog, s: &SessionState, text: &str) {
    for c in text.chars() {
        press(d, s, KeyCode::Char(c));
    }
}

fn enter(d: &mut Dialog, s: &SessionState) -> Outcome {
    d.handle_key(key(KeyCode::Enter), s)
}

fn draw(d: &Dialog, s: &SessionState, w: u16, h: u16) -> Buffer {
    let theme = Theme::default();
    common::render(w, h, |f| d.render(f, f.area(), s, &theme))
}

fn text(d: &Dialog, s: &SessionState, w: u16, h: u16) -> String {
    common::buffer_text(&draw(d, s, w, h))
}

/// The foreground of the first cell of the first occurrence of `needle`.
fn fg_of(buf: &Buffer, needle: &str) -> ratatui::style::Color {
    let area = buf.area;
    for y in 0..area.height {
        let row: Vec<&str> = (0..area.width).map(|x| buf[(x, y)].symbol()).collect();
        let first: String = needle.chars().next().unwrap().to_string();
        for x in 0..area.width as usize {
            if row[x] == first {
                let tail: String = row[x..].concat();
                if tail.starts_with(needle) {
                    return buf[(x as u16, y)].fg;
                }
            }
        }
    }
    panic!("'{needle}' not on screen:\n{}", common::buffer_text(buf));
}

/// The fault dialog, filtered to the mirror, mode crash and scope "times" (N field focused).
fn mirror_crash_times(s: &SessionState) -> Dialog {
    let mut d = Dialog::fault(s, None);
    type_text(&mut d, s, "mirror");
    press(&mut d, s, KeyCode::Enter); // take the only match, on to the mode
    presses(&mut d, s, KeyCode::Right, 5); // error → … → crash
    press(&mut d, s, KeyCode::Tab);
    presses(&mut d, s, KeyCode::Right, 2); // until-cleared → once → times
    press(&mut d, s, KeyCode::Tab);
    d
}

#[test]
fn fault_dialog_injects_the_filtered_tool_with_mode_and_scope() {
    let s = state();
    let mut d = mirror_crash_times(&s);
    type_text(&mut d, &s, "3");
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![Control::InjectFault {
            tool: "geo_lookup_mirror".into(),
            fault: Fault { mode: FaultMode::Crash, scope: FaultScope::Times { n: 3 } },
        }])
    );
}

#[test]
fn fault_dialog_refuses_a_bad_count_and_shows_why() {
    let s = state();
    let theme = Theme::default();
    let mut d = mirror_crash_times(&s);
    type_text(&mut d, &s, "0");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    let buf = draw(&d, &s, 80, 24);
    assert!(common::buffer_text(&buf).contains("times must be at least 1"), "{}", common::buffer_text(&buf));
    assert_eq!(fg_of(&buf, "✗ N: times must be at least 1"), theme.failing);

    press(&mut d, &s, KeyCode::Backspace);
    type_text(&mut d, &s, "abc");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    assert!(text(&d, &s, 80, 24).contains("times wants a whole number, got 'abc'"));

    // Fixed, it goes through: the error does not stick.
    presses(&mut d, &s, KeyCode::Backspace, 3);
    type_text(&mut d, &s, "4");
    assert!(!text(&d, &s, 80, 24).contains('✗'));
    let Outcome::Submit(c) = enter(&mut d, &s) else { panic!("a valid fault was not submitted") };
    assert!(matches!(&c[..], [Control::InjectFault { fault: Fault { scope: FaultScope::Times { n: 4 }, .. }, .. }]));
}

#[test]
fn fault_dialog_checks_probability_and_slow_ms() {
    let s = state();
    let mut d = Dialog::fault(&s, Some("calculator"));
    press(&mut d, &s, KeyCode::Enter);
    presses(&mut d, &s, KeyCode::Right, 4); // slow
    press(&mut d, &s, KeyCode::Tab); // the ms field, value selected
    type_text(&mut d, &s, "soon");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    assert!(text(&d, &s, 80, 24).contains("slow wants milliseconds, got 'soon'"));
    presses(&mut d, &s, KeyCode::Backspace, 4);
    type_text(&mut d, &s, "150");
    press(&mut d, &s, KeyCode::Tab); // scope
    press(&mut d, &s, KeyCode::Left); // until-cleared → probability
    press(&mut d, &s, KeyCode::Tab); // p
    type_text(&mut d, &s, "1.5");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    assert!(text(&d, &s, 80, 24).contains("p must be within [0, 1]"));
    presses(&mut d, &s, KeyCode::Backspace, 3);
    type_text(&mut d, &s, "0.25");
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![Control::InjectFault {
            tool: "calculator".into(),
            fault: Fault { mode: FaultMode::Slow { ms: 150 }, scope: FaultScope::Probability { p: 0.25 } },
        }])
    );
}

#[test]
fn fault_dialog_starts_on_the_focused_tool_and_shows_its_faults() {
    let s = state();
    let mut d = Dialog::fault(&s, Some("geo_lookup"));
    let buf = draw(&d, &s, 80, 24);
    let screen = common::buffer_text(&buf);
    assert!(screen.contains("active on geo_lookup: error (until-cleared)"), "{screen}");
    assert_eq!(fg_of(&buf, "active on geo_lookup"), Theme::default().fault);
    // Enter takes the tool, Enter again injects the default fault.
    press(&mut d, &s, KeyCode::Enter);
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![Control::InjectFault {
            tool: "geo_lookup".into(),
            fault: Fault { mode: FaultMode::Error, scope: FaultScope::UntilCleared },
        }])
    );
}

#[test]
fn fault_dialog_with_no_match_does_not_submit() {
    let s = state();
    let mut d = Dialog::fault(&s, None);
    type_text(&mut d, &s, "no-such-tool");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    press(&mut d, &s, KeyCode::Tab);
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    assert!(text(&d, &s, 80, 24).contains("no tool matches the filter"));
}

#[test]
fn fault_dialog_handles_a_huge_library() {
    let mut s = state();
    s.tools = (0..16_000)
        .map(|i| ToolBrief {
            name: format!("tool_{i:05}"),
            description: "x".into(),
            category: None,
            cost: 1.0,
            server: None,
        })
        .collect();
    let mut d = Dialog::fault(&s, Some("tool_08000"));
    assert!(text(&d, &s, 160, 48).contains("tool_08000"));
    type_text(&mut d, &s, "1599");
    // tool_01599, tool_11599, tool_15990 … tool_15999
    assert!(text(&d, &s, 160, 48).contains("12 of 16000 tools"));
    press(&mut d, &s, KeyCode::Down);
    press(&mut d, &s, KeyCode::Down);
    press(&mut d, &s, KeyCode::Enter);
    let Outcome::Submit(c) = enter(&mut d, &s) else { panic!("not submitted") };
    assert!(matches!(&c[..], [Control::InjectFault { tool, .. }] if tool == "tool_15990"), "{c:?}");
}

#[test]
fn score_dialog_sets_a_number_and_refuses_anything_else() {
    let s = state();
    let now = s.graph.as_ref().unwrap().score("geo_lookup");
    let mut d = Dialog::score(&s, "geo_lookup");
    let screen = text(&d, &s, 80, 24);
    assert!(screen.contains(&format!("score now {now:.3}")), "{screen}");
    // The weights into the node from its predecessors are shown.
    assert!(screen.contains("city_search") && screen.contains("start"), "{screen}");

    type_text(&mut d, &s, "abc");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    let buf = draw(&d, &s, 80, 24);
    assert_eq!(fg_of(&buf, "✗ 'abc' is not a number"), Theme::default().failing);
    presses(&mut d, &s, KeyCode::Backspace, 3);
    type_text(&mut d, &s, "inf");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    presses(&mut d, &s, KeyCode::Backspace, 3);
    type_text(&mut d, &s, "-2.5");
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::EditScore { tool: "geo_lookup".into(), score: -2.5 }]));
}

#[test]
fn score_dialog_prefills_the_current_score() {
    let s = state();
    let now = s.graph.as_ref().unwrap().score("geo_lookup");
    let mut d = Dialog::score(&s, "geo_lookup");
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::EditScore { tool: "geo_lookup".into(), score: now }]));
}

#[test]
fn params_dialog_sends_only_the_changed_values() {
    let s = state();
    assert_eq!(s.params.weight_format, WeightFormat::Integer);
    let mut d = Dialog::params(&s);
    type_text(&mut d, &s, "0.8"); // alpha, its value selected
    presses(&mut d, &s, KeyCode::Down, 5); // weight_format
    press(&mut d, &s, KeyCode::Right); // integer → x10
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![
            Control::SetParam { change: ParamChange::Alpha(0.8) },
            Control::SetParam { change: ParamChange::WeightFormat(WeightFormat::X10) },
        ])
    );
}

#[test]
fn params_dialog_sends_pace_and_typed_values() {
    let s = state();
    let mut d = Dialog::params(&s);
    presses(&mut d, &s, KeyCode::Tab, 3); // budget
    type_text(&mut d, &s, "12.5");
    press(&mut d, &s, KeyCode::Tab); // top_k
    press(&mut d, &s, KeyCode::Tab); // weight_format, typed this time
    type_text(&mut d, &s, "decimal");
    presses(&mut d, &s, KeyCode::Tab, 2); // narrow: off → graph → retrieval, back to graph
    presses(&mut d, &s, KeyCode::Right, 2);
    press(&mut d, &s, KeyCode::Left);
    presses(&mut d, &s, KeyCode::Tab, 2); // pace
    type_text(&mut d, &s, "250");
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![
            Control::SetParam { change: ParamChange::Budget(Some(12.5)) },
            Control::SetParam { change: ParamChange::WeightFormat(WeightFormat::Decimal) },
            Control::SetParam { change: ParamChange::Narrow(switchyard::engine::Narrowing::Graph) },
            Control::SetPace { ms: 250 },
        ])
    );
    // Nothing changed: nothing sent.
    let mut d = Dialog::params(&s);
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![]));
}

#[test]
fn params_dialog_refuses_an_invalid_value() {
    let s = state();
    let mut d = Dialog::params(&s);
    press(&mut d, &s, KeyCode::Down); // beta
    type_text(&mut d, &s, "3");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    let buf = draw(&d, &s, 80, 24);
    let screen = common::buffer_text(&buf);
    assert!(screen.contains("must be within [0, 1]"), "{screen}");
    assert!(screen.contains("nothing was sent"), "{screen}");
    assert_eq!(fg_of(&buf, "✗ must be within [0, 1]"), Theme::default().failing);
    press(&mut d, &s, KeyCode::Backspace);
    type_text(&mut d, &s, "0.25");
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::SetParam { change: ParamChange::Beta(0.25) }]));
}

/// The fixture's session, offering a second (real) model to switch to.
fn two_model_state() -> SessionState {
    let mut events = common::fixture(FIXTURE);
    let EventKind::SessionStarted { available_models, .. } = &mut events[0].kind else {
        panic!("the fixture starts with SessionStarted")
    };
    available_models.push(ModelInfo { name: "gpt-4o-mini".into(), kind: ModelKind::Openai, simulated: false });
    assert_eq!(available_models.len(), 2);
    SessionState::from_events(&events)
}

#[test]
fn model_dialog_switches_a_role() {
    let s = two_model_state();
    let mut d = Dialog::model(&s);
    let buf = draw(&d, &s, 80, 24);
    let screen = common::buffer_text(&buf);
    assert!(screen.contains("sim (simulated)") && screen.contains("gpt-4o-mini"), "{screen}");
    assert_eq!(fg_of(&buf, "sim (simulated)"), Theme::default().simulated);
    press(&mut d, &s, KeyCode::Right); // actor: sim → gpt-4o-mini
    press(&mut d, &s, KeyCode::Down); // evaluator: look, don't change
    press(&mut d, &s, KeyCode::Right);
    press(&mut d, &s, KeyCode::Left);
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![Control::SwitchModel { role: Role::Actor, model: "gpt-4o-mini".into() }])
    );
}

#[test]
fn model_dialog_without_alternatives_sends_nothing() {
    let s = state();
    let mut d = Dialog::model(&s);
    press(&mut d, &s, KeyCode::Right);
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![]));
}

#[test]
fn task_dialog_edits_the_text() {
    let s = state();
    let original = s.current.as_ref().unwrap().task.clone();
    let mut d = Dialog::task(&s);
    assert!(text(&d, &s, 80, 24).contains("Find the city 'Sydney'"));
    // Unchanged text is refused: that is what `r` is for.
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    assert!(text(&d, &s, 160, 48).contains("the text is unchanged"));
    type_text(&mut d, &s, " Answer briefly.");
    assert_eq!(
        enter(&mut d, &s),
        Outcome::Submit(vec![Control::EditTask { text: format!("{original} Answer briefly.") }])
    );
}

#[test]
fn task_dialog_multiline_text_with_alt_enter() {
    let s = state();
    let original = s.current.as_ref().unwrap().task.clone();
    let mut d = Dialog::task(&s);
    assert_eq!(d.handle_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT), &s), Outcome::Continue);
    type_text(&mut d, &s, "Be brief.");
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::EditTask { text: format!("{original}\nBe brief.") }]));
}

#[test]
fn task_dialog_picks_the_next_task() {
    let s = state();
    let mut d = Dialog::task(&s);
    press(&mut d, &s, KeyCode::Tab);
    presses(&mut d, &s, KeyCode::Down, 2);
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::PickTask { index: 3 }]));

    let mut d = Dialog::task(&s);
    press(&mut d, &s, KeyCode::Tab);
    type_text(&mut d, &s, "brazil");
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::PickTask { index: 7 }]));

    let mut d = Dialog::task(&s);
    press(&mut d, &s, KeyCode::Tab);
    type_text(&mut d, &s, "zzz");
    assert_eq!(enter(&mut d, &s), Outcome::Continue);
    assert!(text(&d, &s, 80, 24).contains("no task matches"));
}

#[test]
fn task_dialog_before_any_run_offers_only_the_list() {
    let s = common::fixture_state(FIXTURE, Some(1));
    assert!(s.current.is_none());
    let mut d = Dialog::task(&s);
    assert_eq!(enter(&mut d, &s), Outcome::Submit(vec![Control::PickTask { index: 1 }]));
}

#[test]
fn esc_cancels_every_dialog() {
    let s = two_model_state();
    let dialogs = [
        Dialog::fault(&s, Some("geo_lookup")),
        Dialog::score(&s, "geo_lookup"),
        Dialog::params(&s),
        Dialog::model(&s),
        Dialog::task(&s),
        Dialog::help(false),
        Dialog::help(true),
    ];
    for mut d in dialogs {
        if !matches!(d, Dialog::Help(_)) {
            type_text(&mut d, &s, "1");
        }
        assert_eq!(d.handle_key(key(KeyCode::Esc), &s), Outcome::Cancel, "{}", d.title());
    }
}

#[test]
fn key_releases_are_ignored() {
    let s = state();
    let mut d = Dialog::score(&s, "geo_lookup");
    let mut release = key(KeyCode::Enter);
    release.kind = KeyEventKind::Release;
    assert_eq!(d.handle_key(release, &s), Outcome::Continue);
}

#[test]
fn help_lists_every_key_and_closes_on_any_other_key() {
    let s = state();
    let live = text(&Dialog::help(false), &s, 160, 48);
    for needle in [
        "space",
        "step",
        "inject a fault",
        "clear faults",
        "edit the selected node's score",
        "parameters",
        "model per role",
        "task text",
        "restart",
        "find a tool",
        "found tool",
        "tab / shift-tab",
        "zoom",
        "neighbourhood",
        "PgUp/PgDn",
        "fold / unfold",
        "+ / -",
        "quit",
    ] {
        assert!(live.contains(needle), "live help lacks '{needle}':\n{live}");
    }
    let replay = text(&Dialog::help(true), &s, 160, 48);
    for needle in ["one event", "Home / End", "jump to event N", "zoom", "find a tool", "quit"] {
        assert!(replay.contains(needle), "replay help lacks '{needle}':\n{replay}");
    }
    assert!(!replay.contains("inject a fault"));

    let mut d = Dialog::help(false);
    let first = text(&d, &s, 80, 24);
    press(&mut d, &s, KeyCode::Down);
    press(&mut d, &s, KeyCode::PageDown);
    let scrolled = text(&d, &s, 80, 24);
    assert_ne!(first, scrolled);
    assert!(scrolled.contains("this help"), "the last rows are reachable:\n{scrolled}");
    press(&mut d, &s, KeyCode::PageUp);
    press(&mut d, &s, KeyCode::PageUp);
    assert_eq!(text(&d, &s, 80, 24), first);
    assert_eq!(d.handle_key(key(KeyCode::Char('f')), &s), Outcome::Cancel);
}

#[test]
fn dialogs_survive_tiny_areas_and_empty_sessions() {
    let empty = SessionState::default();
    for s in [state(), empty] {
        let dialogs = [
            Dialog::fault(&s, None),
            Dialog::score(&s, "nowhere"),
            Dialog::params(&s),
            Dialog::model(&s),
            Dialog::task(&s),
            Dialog::help(false),
        ];
        for mut d in dialogs {
            for (w, h) in [(1, 1), (10, 3), (20, 6), (40, 10), (80, 24)] {
                draw(&d, &s, w, h);
            }
            for code in [KeyCode::Down, KeyCode::Up, KeyCode::Right, KeyCode::Tab, KeyCode::Enter] {
                let _ = d.handle_key(key(code), &s);
            }
            draw(&d, &s, 80, 24);
        }
    }
}

#[test]
fn dialog_snapshots() {
    let s = state();
    let m = two_model_state();
    let mut fault_bad = mirror_crash_times(&s);
    type_text(&mut fault_bad, &s, "0");
    let mut params_bad = Dialog::params(&s);
    press(&mut params_bad, &s, KeyCode::Down);
    type_text(&mut params_bad, &s, "3");
    let _ = enter(&mut params_bad, &s);
    let mut model_changed = Dialog::model(&m);
    press(&mut model_changed, &m, KeyCode::Right);
    let mut task_list = Dialog::task(&s);
    press(&mut task_list, &s, KeyCode::Tab);
    presses(&mut task_list, &s, KeyCode::Down, 2);

    let cases: [(&str, &Dialog, &SessionState); 9] = [
        ("fault", &Dialog::fault(&s, Some("geo_lookup")), &s),
        ("fault_invalid", &fault_bad, &s),
        ("score", &Dialog::score(&s, "geo_lookup"), &s),
        ("params_invalid", &params_bad, &s),
        ("model", &model_changed, &m),
        ("task", &Dialog::task(&s), &s),
        ("task_list", &task_list, &s),
        ("help_live", &Dialog::help(false), &s),
        ("help_replay", &Dialog::help(true), &s),
    ];
    for (name, d, st) in cases {
        for (w, h) in [(80, 24), (160, 48)] {
            insta::assert_snapshot!(format!("dialog_{name}_{w}x{h}"), text(d, st, w, h));
        }
    }
}
