//! Model faults in the workbench: the fault dialog's `model:` targets, the
//! models pane's tag, the transcript's notes and the help.

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use switchyard::engine::{Control, Event, EventKind, SessionState};
use switchyard::model::Role;
use switchyard::model::fault::ModelFaultMode;
use switchyard::tool::fault::{Fault, FaultScope};
use switchyard::ui::dialog::{Dialog, Outcome};
use switchyard::ui::panes::models;
use switchyard::ui::{Navigation, PaneCtx, Theme};

fn state() -> SessionState {
    common::fixture_state("toolnet-fault.jsonl", None)
}

fn press(d: &mut Dialog, s: &SessionState, code: KeyCode) -> Outcome {
    d.handle_key(KeyEvent::new(code, KeyModifiers::NONE), s)
}

fn type_text(d: &mut Dialog, s: &SessionState, text: &str) {
    for c in text.chars() {
        assert_eq!(press(d, s, KeyCode::Char(c)), Outcome::Continue);
    }
}

fn dialog_text(d: &Dialog, s: &SessionState) -> String {
    let theme = Theme::default();
    common::buffer_text(&common::render(110, 30, |f| d.render(f, f.area(), s, &theme)))
}

fn with(mut s: SessionState, kind: EventKind) -> SessionState {
    s.apply(&Event { v: 2, run: s.finished.len() as u32, step: s.step, t: s.t, kind });
    s
}

#[test]
fn the_dialog_lists_roles_and_models_after_the_tools_and_injects_a_model_fault() {
    let s = state();
    let mut d = Dialog::fault(&s, None);
    type_text(&mut d, &s, "model:");
    let screen = dialog_text(&d, &s);
    assert!(screen.contains("model:actor") && screen.contains("role, played by sim"), "{screen}");
    assert!(screen.contains("model:sim") && screen.contains("model, plays"), "{screen}");
    assert!(screen.contains("7 roles and models"), "{screen}");

    type_text(&mut d, &s, "act");
    assert_eq!(press(&mut d, &s, KeyCode::Enter), Outcome::Continue); // on to the mode
    let screen = dialog_text(&d, &s);
    assert!(screen.contains("http-500") && screen.contains("truncated"), "a model's modes: {screen}");
    assert!(!screen.contains("nothing-found"), "not a tool's: {screen}");
    for _ in 0..4 {
        press(&mut d, &s, KeyCode::Right); // malformed → … → 429
    }
    press(&mut d, &s, KeyCode::Tab); // its Retry-After, selected
    type_text(&mut d, &s, "250");
    press(&mut d, &s, KeyCode::Tab); // the scope
    press(&mut d, &s, KeyCode::Right); // until-cleared → once
    assert_eq!(
        press(&mut d, &s, KeyCode::Enter),
        Outcome::Submit(vec![Control::InjectModelFault {
            target: "actor".into(),
            fault: Fault { mode: ModelFaultMode::RateLimited { retry_after_ms: 250 }, scope: FaultScope::Once },
        }])
    );
}

#[test]
fn the_dialog_checks_a_model_fault_s_milliseconds() {
    let s = state();
    let mut d = Dialog::fault(&s, None);
    type_text(&mut d, &s, "model:judge");
    press(&mut d, &s, KeyCode::Enter);
    press(&mut d, &s, KeyCode::Left); // malformed → slow
    press(&mut d, &s, KeyCode::Tab);
    type_text(&mut d, &s, "soon");
    assert_eq!(press(&mut d, &s, KeyCode::Enter), Outcome::Continue);
    assert!(dialog_text(&d, &s).contains("slow wants milliseconds, got 'soon'"));
}

#[test]
fn an_active_model_fault_shows_in_the_dialog_the_models_pane_and_the_transcript() {
    let f = Fault { mode: ModelFaultMode::Empty, scope: FaultScope::Times { n: 2 } };
    let s = with(state(), EventKind::ModelFaultInjected { target: "actor".into(), fault: f });
    assert_eq!(s.model_faults.len(), 1);

    let mut d = Dialog::fault(&s, None);
    type_text(&mut d, &s, "model:actor");
    let screen = dialog_text(&d, &s);
    assert!(screen.contains("active on model:actor: empty (times=2, 2 left)"), "{screen}");

    let theme = Theme::default();
    let view = Navigation::default();
    let draw = |s: &SessionState| {
        let ctx = PaneCtx { state: s, nav: &view, theme: &theme, focused: true, now_ms: s.t };
        common::render(100, 12, |frame| models::render(frame, frame.area(), &ctx))
    };
    let buf = draw(&s);
    let row = common::buffer_text(&buf).lines().find(|l| l.contains("actor")).unwrap_or_default().to_string();
    // ⚡ is two cells wide.
    assert!(row.contains("⚡  empty"), "{}", common::buffer_text(&buf));
    assert_eq!(common::fg_at(&buf, "⚡"), theme.fault);

    // Spent twice, it is gone from the pane.
    let hit = || EventKind::ModelReply {
        call: 99,
        role: Role::Actor,
        model: "sim".into(),
        text: String::new(),
        tool_calls: vec![],
        usage: Default::default(),
        cost: 0.0,
        latency_ms: 0,
        fault: Some(ModelFaultMode::Empty),
        wire: None,
        first_token_ms: None,
        capped: None,
    };
    let s = with(with(s, hit()), hit());
    assert!(s.model_faults.is_empty());
    assert!(!common::buffer_text(&draw(&s)).contains('⚡'));
}

#[test]
fn the_help_names_model_faults() {
    let theme = Theme::default();
    let d = Dialog::help(false);
    let s = SessionState::default();
    let screen = common::buffer_text(&common::render(110, 60, |f| d.render(f, f.area(), &s, &theme)));
    assert!(screen.contains("inject a fault into a tool, a role or a model"), "{screen}");
    assert!(screen.contains("clear faults (all tools and models)"), "{screen}");
}
