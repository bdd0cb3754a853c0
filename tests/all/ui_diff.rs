//! The two-column trace diff drawn from two fixture traces that differ in one
//! tool result, and `T`, which makes the run in view a test case.

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use switchyard::engine::event::ToolOutcome;
use switchyard::engine::{Event, EventKind};
use switchyard::task::load_tasks;
use switchyard::ui::Theme;
use switchyard::ui::app::{App, Effect};
use switchyard::ui::diff_screen::{DiffScreen, render};

/// The react fixture, and a copy whose city_stats result (run 2, step 2) says otherwise.
fn traces() -> (Vec<Event>, Vec<Event>, usize) {
    let a = common::fixture("react.jsonl");
    let mut b = a.clone();
    let i = b
        .iter()
        .position(|e| matches!(&e.kind, EventKind::ToolResult { tool, .. } if tool == "city_stats"))
        .expect("the fixture calls city_stats");
    if let EventKind::ToolResult { outcome: ToolOutcome::Ok { value }, .. } = &mut b[i].kind {
        value["population"] = json!("CHANGED");
    }
    (a, b, i)
}

fn press(view: &mut DiffScreen, code: KeyCode) {
    view.key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn screen(view: &DiffScreen, w: u16, h: u16) -> ratatui::buffer::Buffer {
    let theme = Theme::default();
    common::render(w, h, |f| render(f, view, &theme))
}

#[test]
fn the_view_opens_on_the_divergent_tool_result_and_n_jumps_between_divergences() {
    let (a, b, i) = traces();
    let mut view = DiffScreen::new("a.jsonl".into(), a, "b.jsonl".into(), b);
    assert_eq!(view.divergences(), 1);
    assert_eq!(view.at_cursor(), (Some(i), Some(i)));
    let buf = screen(&view, 140, 30);
    let text = common::buffer_text(&buf);
    insta::assert_snapshot!("diff_view_140x30", text);
    assert!(text.contains("divergence 1 of 1"), "{text}");
    assert!(text.contains("differs at value.population"), "{text}");
    // The divergent row is drawn in the failing colour, a run heading in the title one.
    let theme = Theme::default();
    assert_eq!(common::fg_at(&buf, "22 s2   ToolResult   city_stats"), theme.failing);
    assert_eq!(common::fg_at(&buf, "── run 3 · s3 · same decisions"), theme.title);

    press(&mut view, KeyCode::Char('n'));
    assert_eq!(view.at_cursor(), (Some(i), Some(i)), "no later divergence: the cursor stays");
    assert!(common::buffer_text(&screen(&view, 140, 30)).contains("no divergence after this row"));
    press(&mut view, KeyCode::Home);
    assert_eq!(view.cursor(), 0);
    press(&mut view, KeyCode::Right);
    press(&mut view, KeyCode::Right);
    assert_eq!(view.cursor(), 2);
    press(&mut view, KeyCode::Char('n'));
    assert_eq!(view.at_cursor(), (Some(i), Some(i)));
    press(&mut view, KeyCode::Char('N'));
    assert_eq!(view.at_cursor(), (Some(i), Some(i)), "no earlier divergence");
    press(&mut view, KeyCode::End);
    press(&mut view, KeyCode::Char('N'));
    assert_eq!(view.at_cursor(), (Some(i), Some(i)));

    press(&mut view, KeyCode::Char('?'));
    let help = common::buffer_text(&screen(&view, 140, 30));
    assert!(help.contains("next / previous divergence") && help.contains("q / Esc"), "{help}");
    press(&mut view, KeyCode::Char('x'));
    assert!(!view.quit());
    press(&mut view, KeyCode::Char('q'));
    assert!(view.quit());
}

#[test]
fn identical_traces_have_no_divergence_to_jump_to() {
    let (a, _, _) = traces();
    let mut view = DiffScreen::new("a".into(), a.clone(), "b".into(), a);
    assert_eq!((view.divergences(), view.cursor()), (0, 0));
    press(&mut view, KeyCode::Char('n'));
    let text = common::buffer_text(&screen(&view, 100, 20));
    assert!(text.contains("no divergence: the traces decide alike"), "{text}");
    assert!(text.contains("same decisions"), "{text}");
}

fn shift_t(app: &mut App) -> Vec<Effect> {
    app.update(switchyard::ui::app::Action::Key(KeyEvent::new(KeyCode::Char('T'), KeyModifiers::SHIFT)))
}

#[test]
fn t_in_a_replay_saves_the_run_at_the_cursor_as_a_case() {
    let (events, _, _) = traces();
    let mut app = App::replay(events.clone());
    // Inside run 2, before its end: the whole run is taken.
    let inside = events.iter().position(|e| e.run == 2 && matches!(e.kind, EventKind::ToolCall { .. })).unwrap();
    app.seek(inside + 1);
    let effects = shift_t(&mut app);
    let [Effect::SaveCase(case)] = effects.as_slice() else { panic!("{effects:?}") };
    assert_eq!((case.run, case.task.id.as_str(), case.task.answer.as_deref()), (2, "s2", Some("3878000")));
    assert_eq!(case.task.tools, ["city_search", "city_stats"]);

    let d = tempfile::tempdir().unwrap();
    let said = switchyard::ui::cases::save(Some(d.path()), case);
    assert!(said.starts_with("run 2 saved as task s2 to ") && said.contains("/cases/"), "{said}");
    let file = switchyard::eval::cases::daily_file(d.path());
    assert_eq!(load_tasks(&file).unwrap(), std::slice::from_ref(&case.task));
    let again = switchyard::ui::cases::save(Some(d.path()), case);
    assert!(again.contains("already in"), "{again}");
    assert!(switchyard::ui::cases::save(None, case).contains("no data folder"));

    app.seek(0);
    assert!(shift_t(&mut app).is_empty());
    let flash = app.nav.flash.clone().unwrap();
    assert!(flash.contains("no run has started"), "{flash}");
}

#[test]
fn t_live_saves_a_finished_run_and_says_why_not_for_a_running_one() {
    let (events, _, _) = traces();
    let inside = events.iter().position(|e| e.run == 3 && matches!(e.kind, EventKind::ToolCall { .. })).unwrap();
    let mut app = common::app(events[..=inside].to_vec());
    assert!(shift_t(&mut app).is_empty());
    let flash = app.nav.flash.clone().unwrap();
    assert!(flash.contains("run 3 (s3) has not finished"), "{flash}");
    let mut app = common::app(events);
    let effects = shift_t(&mut app);
    let [Effect::SaveCase(case)] = effects.as_slice() else { panic!("{effects:?}") };
    assert_eq!((case.run, case.task.answer.as_deref()), (8, Some("AUD")));
}
