//! Approvals and breakpoints in the workbench, headless: keys go through
//! `App::update`, the controls they make go to a real engine (the simulated
//! model, the sample tools), its events come back as actions.

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use switchyard::engine::debug::{ApprovalPolicy, Decision};
use switchyard::engine::event::RunOutcome;
use switchyard::engine::fold::Mode;
use switchyard::engine::{Control, EventKind, Scheduled, StrategyKind};
use switchyard::session::{GraphSource, SessionOptions, TaskSource};
use switchyard::ui::app::{Action, App};
use switchyard::ui::dialog::Dialog;

fn key(c: KeyCode) -> Action {
    Action::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn ch(c: char) -> Action {
    key(KeyCode::Char(c))
}

fn ctrl_s() -> Action {
    Action::Key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL))
}

fn typed(text: &str) -> Vec<Action> {
    text.chars().map(ch).collect()
}

const AUSTRALIA: &str = "What is the capital of the country 'Australia'?";

type Rig = common::AppRig;

fn start(schedule: Vec<Scheduled>) -> Rig {
    Rig::start(SessionOptions {
        strategy: Some(StrategyKind::React),
        tasks: TaskSource::Text(AUSTRALIA.into()),
        graph: GraphSource::Fresh,
        logical_clock: true,
        start_paused: true,
        pace_ms: 5,
        schedule,
        ..Default::default()
    })
}

impl common::AppRig {
    fn screen(&self) -> String {
        common::buffer_text(&common::screen(&self.app, 160, 48))
    }

    fn panel_open(&self) -> bool {
        matches!(self.app.dialog, Some(Dialog::Approval(_)))
    }

    /// Answers whatever waits with Enter (approve, keep) until the run ends.
    async fn approve_to_the_end(&mut self) {
        loop {
            let k = self
                .until(|k| {
                    matches!(
                        k,
                        EventKind::ApprovalRequested { .. }
                            | EventKind::ResultReview { .. }
                            | EventKind::ReplyReview { .. }
                            | EventKind::RunFinished { .. }
                    )
                })
                .await
                .kind;
            if matches!(k, EventKind::RunFinished { .. }) {
                return;
            }
            assert!(self.panel_open(), "the panel opens by itself for {}", k.name());
            assert_eq!(self.press([key(KeyCode::Enter)]).len(), 1);
        }
    }
}

/// The notes of the current run's transcript.
fn notes(app: &App) -> Vec<String> {
    let run = app.state.current.as_ref().expect("a run");
    run.transcript
        .iter()
        .filter_map(|e| match e {
            switchyard::engine::fold::Entry::Note(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

fn is_pending(k: &EventKind) -> bool {
    matches!(k, EventKind::ApprovalRequested { .. } | EventKind::ResultReview { .. } | EventKind::ReplyReview { .. })
}

#[tokio::test(flavor = "current_thread")]
async fn a_toggles_approvals_and_the_panel_approves_edits_and_checks_an_edit() {
    let mut rig = start(Vec::new());
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    assert_eq!(rig.press([ch('a')]), vec![Control::SetApproval { policy: ApprovalPolicy::everything() }]);
    rig.until(|k| matches!(k, EventKind::ApprovalSet { .. })).await;
    rig.press([ch(' ')]);
    // The actor's reply first: kept with Enter.
    let k = rig.until(is_pending).await.kind;
    assert!(matches!(k, EventKind::ReplyReview { .. }), "{k:?}");
    assert!(rig.screen().contains("Review the reply"), "{}", rig.screen());
    let call = match &k {
        EventKind::ReplyReview { call, .. } => *call,
        _ => unreachable!(),
    };
    assert_eq!(rig.press([key(KeyCode::Enter)]), vec![Control::Decide { call, decision: Decision::Keep }]);

    // The call: its arguments, edited.
    let k = rig.until(is_pending).await.kind;
    let EventKind::ApprovalRequested { call, tool, args, .. } = k else { panic!("{k:?}") };
    assert!(tool.starts_with("geo_lookup"), "{tool}");
    assert_eq!(args, json!({"country": "Australia"}));
    assert!(rig.screen().contains("Approve the call") && rig.screen().contains("\"Australia\""), "{}", rig.screen());
    // Not JSON: said at once, nothing sent.
    let mut keys = vec![ch('e'), ch('x')];
    keys.push(ctrl_s());
    assert!(rig.press(keys).is_empty());
    assert!(rig.screen().contains("not JSON"), "{}", rig.screen());
    // JSON that does not fit the schema: the field is named, nothing sent.
    let mut keys = vec![key(KeyCode::Backspace), key(KeyCode::Down), key(KeyCode::End)];
    keys.extend(std::iter::repeat_n(key(KeyCode::Backspace), "\"Australia\"".len()));
    keys.push(ch('7'));
    keys.push(ctrl_s());
    assert!(rig.press(keys).is_empty());
    assert!(rig.screen().contains("argument 'country' must be string"), "{}", rig.screen());
    let mut keys = vec![key(KeyCode::Backspace)];
    keys.extend(typed("\"New Zealand\""));
    keys.push(ctrl_s());
    let after = json!({"country": "New Zealand"});
    assert_eq!(rig.press(keys), vec![Control::Decide { call, decision: Decision::EditArgs { args: after.clone() } }]);
    let k = rig.until(|k| matches!(k, EventKind::CallEdited { .. })).await.kind;
    assert_eq!(k, EventKind::CallEdited { call, tool: tool.clone(), before: args, after: after.clone() });
    let k = rig.until(|k| matches!(k, EventKind::ToolCall { .. })).await.kind;
    assert!(matches!(k, EventKind::ToolCall { args, .. } if args == after));
    // Its result: kept with k; the rest approved with Enter.
    let k = rig.until(is_pending).await.kind;
    assert!(matches!(k, EventKind::ResultReview { .. }), "{k:?}");
    assert_eq!(rig.press([ch('k')]).len(), 1);
    rig.approve_to_the_end().await;
    let edit =
        format!(r#"call {call} {tool}: arguments edited {{"country":"Australia"}} → {{"country":"New Zealand"}}"#);
    assert!(notes(&rig.app).contains(&edit), "the edit is in the transcript: {:#?}", notes(&rig.app));
    // a again turns approvals off.
    assert_eq!(rig.press([ch('a')]), vec![Control::SetApproval { policy: ApprovalPolicy::default() }]);
    rig.press([ch('q')]);
    rig.engine.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn r_rejects_a_call_with_a_note_the_model_reads_and_esc_hides_the_panel() {
    let policy = ApprovalPolicy::parse_all(["tool=geo_lookup", "tool=geo_lookup_mirror"]).unwrap();
    let mut rig = start(vec![Scheduled { before_task: 1, control: Control::SetApproval { policy } }]);
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    rig.press([ch(' ')]);
    let k = rig.until(is_pending).await.kind;
    let EventKind::ApprovalRequested { call, tool, .. } = k else { panic!("{k:?}") };
    // Esc hides the panel; a shows it again.
    rig.press([key(KeyCode::Esc)]);
    assert!(rig.app.dialog.is_none());
    assert!(rig.press([ch('a')]).is_empty(), "a shows what waits instead of switching approvals");
    assert!(rig.panel_open());
    let mut keys = vec![ch('r')];
    keys.extend(typed("ask about New Zealand"));
    keys.push(key(KeyCode::Enter));
    let note = "ask about New Zealand".to_string();
    assert_eq!(rig.press(keys), vec![Control::Decide { call, decision: Decision::Reject { note: note.clone() } }]);
    let k = rig.until(|k| matches!(k, EventKind::CallRejected { .. })).await.kind;
    assert!(matches!(k, EventKind::CallRejected { tool: ref t, note: ref n, .. } if *t == tool && *n == note));
    // The next prompt tells the model.
    let k = rig.until(|k| matches!(k, EventKind::ModelCall { .. })).await.kind;
    let EventKind::ModelCall { messages, .. } = k else { unreachable!() };
    let prompt: String = messages.iter().map(|m| m.content.clone()).collect();
    assert!(prompt.contains("the user rejected this call: ask about New Zealand"), "{prompt}");
    rig.approve_to_the_end().await;
    assert!(
        !rig.seen.iter().any(|e| matches!(&e.kind, EventKind::ToolCall { call: c, .. } if *c == call)),
        "the rejected call never ran"
    );
    rig.press([ch('q')]);
    rig.engine.await.unwrap().unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn b_sets_a_breakpoint_whose_hit_pauses_and_counts_and_the_replay_shows_it() {
    let mut rig = start(Vec::new());
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    // With no breakpoint yet, the keys go to the new condition.
    let mut keys = vec![ch('b')];
    keys.extend(typed("tool=nope"));
    keys.push(key(KeyCode::Enter));
    assert!(rig.press(keys).is_empty());
    assert!(rig.screen().contains("no tool named 'nope'"), "{}", rig.screen());
    let mut keys: Vec<Action> = std::iter::repeat_n(key(KeyCode::Backspace), "tool=nope".len()).collect();
    keys.extend(typed("cost>lots"));
    keys.push(key(KeyCode::Enter));
    assert!(rig.press(keys).is_empty());
    assert!(rig.screen().contains("'lots' is not a number"), "{}", rig.screen());
    let mut keys: Vec<Action> = std::iter::repeat_n(key(KeyCode::Backspace), "cost>lots".len()).collect();
    keys.extend(typed("step=2"));
    keys.push(key(KeyCode::Enter));
    assert_eq!(rig.press(keys), vec![Control::SetBreakpoint { condition: "step=2".parse().unwrap() }]);
    rig.until(|k| matches!(k, EventKind::BreakpointSet { .. })).await;
    rig.press([ch(' ')]);
    let k = rig.until(|k| matches!(k, EventKind::BreakpointHit { .. })).await.kind;
    assert!(matches!(k, EventKind::BreakpointHit { id: 1, .. }));
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    assert_eq!(rig.app.state.mode, Mode::Paused);
    assert_eq!(rig.app.state.debug.breakpoints[0].hits, 1);
    // The list shows the hit; space disables the breakpoint.
    rig.press([ch('b')]);
    let screen = rig.screen();
    assert!(screen.lines().any(|l| l.contains("[x]") && l.contains("1  step=2")), "{screen}");
    assert_eq!(rig.press([ch(' ')]), vec![Control::ToggleBreakpoint { id: 1 }]);
    let k = rig.until(|k| matches!(k, EventKind::BreakpointSet { .. })).await.kind;
    assert!(matches!(k, EventKind::BreakpointSet { enabled: false, .. }));
    rig.press([ch(' ')]);
    rig.until(|k| matches!(k, EventKind::RunFinished { .. })).await;
    rig.press([ch('q')]);
    rig.engine.await.unwrap().unwrap();

    // The replay shows the hit in the transcript and the list, read-only.
    let mut replay = App::replay(rig.seen.clone());
    assert_eq!(replay.state.debug.breakpoints[0].hits, 1);
    let effects = replay.update(ch('b'));
    assert!(effects.is_empty());
    replay.update(ch('d'));
    let text = common::buffer_text(&common::screen(&replay, 160, 48));
    assert!(text.contains("a replay is read-only") && text.contains("step=2"), "{text}");
    let notes = notes(&replay);
    assert!(notes.iter().any(|n| n.starts_with("breakpoint #1 (step=2) hit")), "{notes:?}");
}

/// `q` while a reply waits for review asks whether to end the session or
/// suspend it; `q` again ends it, and the trace closes the run and the
/// session.
#[tokio::test(flavor = "current_thread")]
async fn q_while_a_review_waits_asks_then_ends_and_the_run_is_closed() {
    let mut rig = start(Vec::new());
    rig.until(|k| matches!(k, EventKind::Paused)).await;
    rig.press([ch('a')]);
    rig.until(|k| matches!(k, EventKind::ApprovalSet { .. })).await;
    rig.press([ch(' ')]);
    rig.until(is_pending).await;
    assert!(rig.panel_open() && rig.screen().contains("q quit"), "{}", rig.screen());
    assert!(rig.press([ch('q')]).is_empty(), "a waiting session: q asks first");
    assert!(rig.screen().contains("Leave the session"), "{}", rig.screen());
    assert_eq!(rig.press([ch('q')]), vec![Control::Stop]);
    assert!(rig.app.quit);
    let finished = rig.until(|k| matches!(k, EventKind::RunFinished { .. })).await.kind;
    assert!(matches!(finished, EventKind::RunFinished { outcome: RunOutcome::Stopped, .. }), "{finished:?}");
    rig.until(|k| matches!(k, EventKind::SessionFinished { stopped: true, .. })).await;
}
