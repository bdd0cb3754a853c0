//! The workbench headless: keys go through `App::update`, its effects go to
//! a real engine over the control channel, the engine's events come back as
//! actions. Also: a replayed trace shows what was seen live.

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use proptest::prelude::*;

use switchyard::engine::fold::Mode;
use switchyard::engine::{Control, EventKind, ParamChange, SessionState};
use switchyard::session::{GraphSource, SessionOptions};
use switchyard::tool::fault::FaultMode;
use switchyard::ui::app::{Action, App, Effect};

fn key(c: KeyCode) -> Action {
    Action::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn ch(c: char) -> Action {
    key(KeyCode::Char(c))
}

/// A live app wired to a real engine (simulated model, sample tools).
type Rig = common::AppRig;

fn start(paused: bool) -> Rig {
    Rig::start(SessionOptions {
        graph: GraphSource::Fresh,
        logical_clock: true,
        start_paused: paused,
        count: Some(12),
        // A pace makes the engine wait (and so yield) before each call,
        // as it does in the workbench.
        pace_ms: 5,
        ..Default::default()
    })
}

fn typed(text: &str) -> Vec<Action> {
    text.chars().map(ch).collect()
}

#[tokio::test(flavor = "current_thread")]
async fn pause_step_and_resume_from_the_keyboard() {
    let mut rig = start(false);
    rig.until(|k| matches!(k, EventKind::RunStarted { .. })).await;
    assert_eq!(rig.press([ch(' ')]), vec![Control::Pause]);
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    assert_eq!(rig.app.state.mode, Mode::Paused);
    // Space again now resumes; s steps.
    assert_eq!(rig.press([ch('s')]), vec![Control::Step]);
    rig.until(|k| matches!(k, EventKind::Stepped)).await;
    rig.until(|k| matches!(k, EventKind::ModelReply { .. } | EventKind::ToolResult { .. })).await;
    assert_eq!(rig.app.state.mode, Mode::Paused);
    assert_eq!(rig.press([ch(' ')]), vec![Control::Resume]);
    rig.until(|k| matches!(k, EventKind::Resumed)).await;
    assert_eq!(rig.app.state.mode, Mode::Running);
    rig.press([ch('q')]);
    rig.engine.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_fault_injected_from_the_dialog_reaches_the_tool() {
    let mut rig = start(true);
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    // f, filter to the primary, accept the defaults (error, until cleared).
    let mut keys = vec![ch('f')];
    keys.extend(typed("geo_lookup"));
    keys.push(key(KeyCode::Enter));
    let mut sent = rig.press(keys);
    // Some dialogs take a field per Enter: press Enter until it submits.
    for _ in 0..6 {
        if !sent.is_empty() {
            break;
        }
        sent = rig.press([key(KeyCode::Enter)]);
    }
    assert_eq!(sent.len(), 1, "one control sent: {sent:?}");
    let Control::InjectFault { tool, fault } = &sent[0] else { panic!("{sent:?}") };
    assert_eq!(tool, "geo_lookup");
    assert_eq!(fault.mode, FaultMode::Error);
    rig.press([ch(' ')]);
    rig.until(|k| matches!(k, EventKind::FaultInjected { .. })).await;
    assert!(rig.app.state.faults.iter().any(|f| f.tool == "geo_lookup"));
    // The next call of the primary fails with the fault.
    let hit = rig.until(|k| matches!(k, EventKind::ToolResult { tool, .. } if tool == "geo_lookup")).await;
    let EventKind::ToolResult { fault, .. } = hit.kind else { unreachable!() };
    assert_eq!(fault, Some(FaultMode::Error));
    rig.press([ch('q')]);
    rig.engine.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_model_fault_injected_from_the_dialog_hits_the_role_and_x_clears_it() {
    let mut rig = start(true);
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    // f, the actor's target, the second model mode (empty), until cleared.
    let mut keys = vec![ch('f')];
    keys.extend(typed("model:actor"));
    keys.extend([key(KeyCode::Enter), key(KeyCode::Right), key(KeyCode::Enter)]);
    let sent = rig.press(keys);
    let [Control::InjectModelFault { target, fault }] = &sent[..] else { panic!("{sent:?}") };
    assert_eq!((target.as_str(), fault.mode), ("actor", switchyard::model::fault::ModelFaultMode::Empty));
    rig.press([ch(' ')]);
    rig.until(|k| matches!(k, EventKind::ModelFaultInjected { .. })).await;
    assert_eq!(rig.app.state.model_faults.len(), 1);
    let hit = rig.until(|k| matches!(k, EventKind::ModelReply { fault: Some(_), .. })).await;
    let EventKind::ModelReply { role, text, .. } = hit.kind else { unreachable!() };
    assert_eq!((role, text.as_str()), (switchyard::model::Role::Actor, ""));
    // x clears the tools' faults and the models'.
    let sent = rig.press([ch('x')]);
    assert_eq!(sent, vec![Control::ClearFault { tool: None }, Control::ClearModelFault { target: None }]);
    rig.until(|k| matches!(k, EventKind::ModelFaultCleared { target: None })).await;
    assert!(rig.app.state.model_faults.is_empty());
    rig.press([ch('q')]);
    rig.engine.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn a_score_edited_and_alpha_changed_take_effect_and_are_recorded() {
    let mut rig = start(true);
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    let before = rig.app.state.graph.as_ref().unwrap().weight("start", "geo_lookup").unwrap();
    // Focus geo_lookup with the finder, then edit its score.
    let mut keys = vec![ch('/')];
    keys.extend(typed("geo_lookup"));
    keys.push(key(KeyCode::Enter));
    rig.press(keys);
    assert_eq!(rig.app.nav.selected.as_deref(), Some("geo_lookup"));
    let mut keys = vec![ch('e')];
    keys.extend(typed("-3"));
    keys.push(key(KeyCode::Enter));
    let sent = rig.press(keys);
    assert_eq!(sent, vec![Control::EditScore { tool: "geo_lookup".into(), score: -3.0 }]);
    rig.until(|k| matches!(k, EventKind::ScoreEdited { .. })).await;
    let g = rig.app.state.graph.as_ref().unwrap();
    assert_eq!(g.score("geo_lookup"), -3.0);
    assert!(g.weight("start", "geo_lookup").unwrap() < before, "the edited score lowers the weight into it");

    // α through the parameters dialog: the first row is alpha.
    rig.press([ch('p')]);
    rig.press((0..8).map(|_| key(KeyCode::Backspace)));
    rig.press(typed("0.9"));
    let mut sent = rig.press([key(KeyCode::Enter)]);
    for _ in 0..10 {
        if !sent.is_empty() {
            break;
        }
        sent = rig.press([key(KeyCode::Enter)]);
    }
    assert_eq!(sent, vec![Control::SetParam { change: ParamChange::Alpha(0.9) }]);
    let changed = rig.until(|k| matches!(k, EventKind::ParamChanged { .. })).await;
    assert_eq!(rig.app.state.params.alpha, 0.9);
    // Recorded with the step it took effect in.
    assert_eq!(changed.run, 1);
    // Paused: the first q asks how to leave, the second ends the session.
    rig.press([ch('q'), ch('q')]);
    rig.engine.await.unwrap().unwrap();
}

#[test]
fn replay_keys_move_the_cursor_and_controls_are_refused() {
    let events = common::fixture("toolnet-fault.jsonl");
    let total = events.len();
    let mut app = App::replay(events.clone());
    assert_eq!(app.state, SessionState::from_events(&events));
    app.update(key(KeyCode::Home));
    assert_eq!(app.state, SessionState::default());
    app.update(key(KeyCode::Right));
    app.update(key(KeyCode::Right));
    assert_eq!(app.state, SessionState::from_events(&events[..2]));
    for c in "40".chars() {
        app.update(ch(c));
    }
    app.update(key(KeyCode::Enter));
    assert_eq!(app.state, SessionState::from_events(&events[..40]));
    app.update(key(KeyCode::Left));
    assert_eq!(app.state, SessionState::from_events(&events[..39]));
    app.update(key(KeyCode::End));
    assert_eq!(app.nav.replay.unwrap().cursor, total);
    // Read-only: a control key sends nothing.
    assert!(app.update(ch(' ')).is_empty());
    assert!(app.update(ch('p')).is_empty());
    assert!(app.dialog.is_none());
    // At the end of a finished session, and before its first event, there is
    // nothing to fork: the replay stays open and says why.
    assert!(app.update(ch('f')).is_empty());
    let said = app.nav.flash.clone().unwrap_or_default();
    assert!(said.contains("the session had ended there"), "{said}");
    app.update(key(KeyCode::Home));
    assert!(app.update(ch('f')).is_empty());
    assert!(app.nav.flash.as_deref().is_some_and(|f| f.contains("event 0")));
    // Time travel: `f` forks a live session after the events on screen.
    app.update(key(KeyCode::End));
    app.update(key(KeyCode::Left));
    assert_eq!(app.update(ch('f')), vec![Effect::Fork { at: total - 1 }]);
    assert_eq!(app.update(ch('q')), vec![Effect::Quit]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    // The screen at event N of a replay is what the live app showed after
    // N events, whatever N and however the cursor got there.
    #[test]
    fn replay_at_n_equals_live_after_n(n in 0usize..145, back in 0usize..20) {
        let events = common::fixture("toolnet-fault.jsonl");
        let n = n.min(events.len());
        let mut live = App::live();
        for e in &events[..n] {
            live.update(Action::Engine(e.clone()));
        }
        let mut replay = App::replay(events.clone());
        replay.seek(n + back);
        replay.seek(n);
        prop_assert_eq!(&replay.state, &live.state);
    }
}

#[test]
fn only_changes_ask_for_a_redraw() {
    let events = common::fixture("toolnet-fault.jsonl");
    let mut app = App::live();
    app.dirty = false;
    // A key that does nothing, and a key release, change nothing on screen.
    app.update(key(KeyCode::F(5)));
    assert!(!app.dirty);
    app.update(Action::Key(KeyEvent::new_with_kind(
        KeyCode::Char('z'),
        KeyModifiers::NONE,
        crossterm::event::KeyEventKind::Release,
    )));
    assert!(!app.dirty);
    // An engine event does; so does the tick (elapsed times move).
    app.update(Action::Engine(events[0].clone()));
    assert!(app.dirty);
    app.dirty = false;
    app.update(Action::Tick { now_ms: 10 });
    assert!(app.dirty);
}

/// Attached to a session of another process: the status line says so,
/// `d` leaves it running, `q` asks again before it ends it, and Ctrl-C
/// only detaches.
#[test]
fn attached_d_detaches_and_q_asks_before_it_ends_the_session() {
    let render = |app: &App| common::buffer_text(&common::screen(app, 160, 48));
    let mut app = App::attached("4242");
    assert!(render(&app).contains("ATTACHED 4242 · d detach"), "{}", render(&app));
    assert!(matches!(app.update(ch('d'))[..], [Effect::Detach]));

    let mut app = App::attached("4242");
    assert!(app.update(ch('q')).is_empty(), "the first q only asks");
    assert!(render(&app).contains("q again ends session 4242"), "{}", render(&app));
    assert!(matches!(app.update(ch('q'))[..], [Effect::Control(Control::Stop), Effect::Quit]));

    let mut app = App::attached("4242");
    app.update(ch('q'));
    app.update(ch('g'));
    assert!(app.update(ch('q')).is_empty(), "another key in between: asked again");

    let mut app = App::attached("4242");
    let ctrl_c = Action::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(matches!(app.update(ctrl_c)[..], [Effect::Detach]));

    // A live session of this terminal quits at once, as before.
    let mut app = App::live();
    assert!(matches!(app.update(ch('q'))[..], [Effect::Control(Control::Stop), Effect::Quit]));
}

/// `q` on a session that waits for the user (paused here) asks how to
/// leave it: `q` ends it, `s` suspends it, Esc goes back; on a running
/// session `q` quits at once, and Ctrl-C never asks.
#[test]
fn q_on_a_waiting_session_offers_to_suspend_it() {
    let render = |app: &App| common::buffer_text(&common::screen(app, 160, 48));
    let events = common::fixture("toolnet-fault.jsonl");
    let paused = |app: &mut App| {
        app.update(Action::Engine(switchyard::engine::Event { kind: EventKind::Paused, ..events[1].clone() }))
    };
    let mut app = App::live();
    app.update(Action::Engine(events[0].clone()));
    paused(&mut app);
    assert!(app.update(ch('q')).is_empty(), "a waiting session: q asks");
    let asked = render(&app);
    assert!(asked.contains("Leave the session") && asked.contains("suspend it"), "{asked}");
    assert!(app.update(key(KeyCode::Esc)).is_empty());
    assert!(!render(&app).contains("Leave the session"), "Esc goes back");
    app.update(ch('q'));
    assert_eq!(app.update(ch('s')), vec![Effect::Control(Control::Suspend), Effect::Quit]);

    let mut app = App::live();
    app.update(Action::Engine(events[0].clone()));
    paused(&mut app);
    app.update(ch('q'));
    assert_eq!(app.update(ch('q')), vec![Effect::Control(Control::Stop), Effect::Quit]);

    let mut app = App::live();
    app.update(Action::Engine(events[0].clone()));
    paused(&mut app);
    let ctrl_c = Action::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(app.update(ctrl_c), vec![Effect::Control(Control::Stop), Effect::Quit]);
}

/// Following an eval's tasks: when the task's engine ends, the app leaves
/// (so the next task in flight can be followed); a plain attached one
/// stays open on what it saw.
#[test]
fn following_an_eval_moves_on_when_its_task_ends() {
    let mut app = App::following_eval("eval 42 · task 3 · 2/8 done · 2 in flight");
    let shown = common::buffer_text(&common::screen(&app, 160, 48));
    assert!(shown.contains("ATTACHED eval 42 · task 3 · 2/8 done"), "{shown}");
    assert_eq!(app.update(Action::EngineEnded { error: None }), vec![Effect::Quit]);
    let mut app = App::attached("42");
    assert!(app.update(Action::EngineEnded { error: None }).is_empty());
    assert!(!app.quit);
}

/// Watching an agent elsewhere over OTLP: the status line says where from
/// and how many spans wait for their trace to end; keys that would steer
/// are refused, saying so; `q` quits.
#[test]
fn watching_over_otlp_is_read_only_and_shows_spans_waiting() {
    use switchyard::engine::event::{Event, SCHEMA_VERSION};
    let render = |app: &App| common::buffer_text(&common::screen(app, 160, 48));
    let mut app = App::watching("127.0.0.1:4318");
    let waiting = EventKind::SpansWaiting { spans: 12, traces: 1 };
    app.update(Action::Engine(Event { v: SCHEMA_VERSION, run: 0, step: 0, t: 5, kind: waiting }));
    let shown = render(&app);
    assert!(shown.contains("OTLP 127.0.0.1:4318 · read-only"), "{shown}");
    assert!(shown.contains("12 spans in 1 trace not ended yet"), "{shown}");
    assert_eq!(app.state.events, 0, "a live-only event is not one of the session's");
    assert!(app.update(ch(' ')).is_empty(), "space would pause: refused");
    assert!(render(&app).contains("read-only: the agent runs elsewhere"), "{}", render(&app));
    assert!(matches!(app.update(ch('q'))[..], [Effect::Control(Control::Stop), Effect::Quit]));
}
