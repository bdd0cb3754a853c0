//! The workbench over an atc run, built from hand-written events: the
//! program pane (the running line, each call's result beside its line, a
//! failure and the tool it is blamed on, a rewrite as a diff, the probes),
//! its place in the layout and the tab order, its keys, and fix and
//! continue (`e`, then the editor's Ctrl+S, sends `Control::EditProgram`).
//! Long (over 600 lines) because the atc run's events are written out by
//! hand, as the engine would emit them, until the simulated model speaks atc.

use crate::common;
use common::{app, press, screen};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use serde_json::{Value, json};

use switchyard::engine::event::{
    RoleModel, RunOutcome, SCHEMA_VERSION, StrategyKind, TaskBrief, ToolBrief, ToolOutcome,
};
use switchyard::engine::{Control, Event, EventKind as K, SessionState};
use switchyard::model::price::Price;
use switchyard::model::{ModelInfo, ModelKind, Role, Usage};
use switchyard::program::sandbox::FailKind;
use switchyard::tool::{ToolError, ToolErrorKind};
use switchyard::ui::app::{Action, App, Effect};
use switchyard::ui::dialog::{Dialog, Outcome};
use switchyard::ui::panes::program;
use switchyard::ui::{Navigation, Pane, PaneCtx, ProgramShow, Theme};

const TASK: &str = "What is France's population in millions, and its people per km²?";

/// Round 0: the planner's program. Line 4 reads a field geo_lookup's
/// response does not have.
const ROUND0: &str = "let f = geo_lookup(#{country: \"France\"});\n\
                      let millions = f.population / 1000000.0;\n\
                      print(`population ${millions} million`);\n\
                      let d = calculator(#{expression: `${f.population} / ${f.area}`});\n\
                      #{millions: millions, density: d}";

/// Round 1: the rewrite after the failure, with the field's real name.
const ROUND1: &str = "let f = geo_lookup(#{country: \"France\"});\n\
                      let millions = f.population / 1000000.0;\n\
                      print(`population ${millions} million`);\n\
                      let d = calculator(#{expression: `${f.population} / ${f.area_km2}`});\n\
                      #{millions: millions, density: d}";

fn ev(step: u32, t: u64, kind: K) -> Event {
    Event { v: SCHEMA_VERSION, run: 1, step, t, kind }
}

fn france() -> Value {
    json!({"name": "France", "capital": "Paris", "population": 68170000, "area_km2": 643801, "currency_code": "EUR"})
}

fn started() -> Vec<Event> {
    let model = |name: &str| ModelInfo { name: name.into(), kind: ModelKind::Sim, simulated: true };
    let tool = |name: &str, description: &str| ToolBrief {
        name: name.into(),
        description: description.into(),
        category: None,
        cost: 1.0,
        server: None,
    };
    vec![
        Event {
            v: SCHEMA_VERSION,
            run: 0,
            step: 0,
            t: 0,
            kind: K::SessionStarted {
                schema: SCHEMA_VERSION,
                strategy: StrategyKind::Atc,
                seed: 7,
                params: switchyard::engine::Params::default(),
                models: vec![RoleModel {
                    role: Role::Planner,
                    model: model("sim-weak"),
                    price: Price { input_per_mtok: 0.5, output_per_mtok: 1.5 },
                }],
                tools: vec![
                    tool("calculator", "Evaluate an arithmetic expression"),
                    tool("geo_lookup", "Country facts lookup: capital, population, currency"),
                    tool("city_stats", "Population and area of a city, by its id"),
                ]
                .into(),
                cost_unit: "credits".into(),
                tasks: 2,
                task_list: vec![TaskBrief { id: "france".into(), query: TASK.into() }],
                available_models: vec![model("sim-weak")],
                pace_ms: 0,
                graph: None,
                experience: None,
            },
        },
        ev(0, 100, K::RunStarted { task_id: "france".into(), task: TASK.into(), gold: None, index: 1, total: 2 }),
    ]
}

fn call(step: u32, t: u64, call: u64, tool: &str, args: Value) -> Event {
    ev(step, t, K::ToolCall { call, tool: tool.into(), args, lane: None })
}

fn result(step: u32, t: u64, call: u64, tool: &str, outcome: ToolOutcome) -> Event {
    ev(
        step,
        t,
        K::ToolResult {
            call,
            tool: tool.into(),
            outcome,
            latency_ms: 40,
            cost: 1.0,
            fault: None,
            filtered: false,
            lane: None,
            source: None,
        },
    )
}

/// Round 0 running: geo_lookup (line 1) answered, the program printed, and
/// the calculator's call from line 4 is in flight.
fn running() -> Vec<Event> {
    let mut out = started();
    out.extend([
        ev(1, 200, K::ProgramWritten { round: 0, program: ROUND0.into(), diff: String::new(), by_user: false }),
        ev(1, 210, K::ProgramAt { line: Some(1), tool: "geo_lookup".into() }),
        call(1, 211, 1, "geo_lookup", json!({"country": "France"})),
        result(1, 251, 1, "geo_lookup", ToolOutcome::Ok { value: france() }),
        ev(1, 252, K::ProgramPrinted { text: "population 68.17 million".into() }),
        ev(1, 260, K::ProgramAt { line: Some(4), tool: "calculator".into() }),
        call(1, 261, 2, "calculator", json!({"expression": "68170000 / 643801"})),
    ]);
    out
}

/// Round 0 failed instead: line 4 reads `f.area`, which geo_lookup's
/// response lacks; the failure is blamed on geo_lookup.
fn failed() -> Vec<Event> {
    let mut out = running();
    out.truncate(out.len() - 2);
    out.push(ev(
        1,
        262,
        K::ProgramFailed {
            round: 0,
            kind: FailKind::MissingField,
            error: "property 'area' not found in the map geo_lookup returned (it has: name, capital, population, \
                area_km2, currency_code)"
                .into(),
            line: Some(4),
            snippet: "let d = calculator(#{expression: `${f.population} / ${f.area}`});".into(),
            tool: Some("geo_lookup".into()),
            last: false,
        },
    ));
    out
}

/// The model's rewrite (round 1) ran to its answer.
fn rewritten() -> Vec<Event> {
    let mut out = failed();
    let diff = switchyard::program::attribute::diff(ROUND0, ROUND1);
    out.extend([
        ev(2, 400, K::ProgramWritten { round: 1, program: ROUND1.into(), diff, by_user: false }),
        ev(2, 410, K::ProgramAt { line: Some(1), tool: "geo_lookup".into() }),
        call(2, 411, 3, "geo_lookup", json!({"country": "France"})),
        result(2, 450, 3, "geo_lookup", ToolOutcome::Ok { value: france() }),
        ev(2, 451, K::ProgramPrinted { text: "population 68.17 million".into() }),
        ev(2, 460, K::ProgramAt { line: Some(4), tool: "calculator".into() }),
        call(2, 461, 4, "calculator", json!({"expression": "68170000 / 643801"})),
        result(2, 470, 4, "calculator", ToolOutcome::Ok { value: json!(105.887) }),
        ev(2, 471, K::ProgramReturned { round: 1, value: json!({"millions": 68.17, "density": 105.887}) }),
    ]);
    out
}

/// Black-box probing of city_stats before the program: one probe failed,
/// one answered (its schema drawn from the response), one in the chain of
/// probing with city_search as its helper.
fn probed() -> Vec<Event> {
    let mut out = started();
    let probe = |sample: u32, round: u32, helpers: Vec<String>, ok: bool| {
        K::Probed {
        tool: "city_stats".into(),
        round,
        sample,
        question: "How many people live in Lyon?".into(),
        program: "let s = city_stats(#{city_id: \"lyon\"});\ns".into(),
        helpers,
        response: ok.then(|| json!({"city_id": "lyon", "population": 522250, "area_km2": 47.87})),
        schema: ok.then(|| {
            json!({"type": "object", "properties": {"city_id": {"type": "string"}, "population": {"type": "integer"}, "area_km2": {"type": "number"}}})
        }),
        error: (!ok).then(|| "tool error: unknown city_id 'Lyon' (ids look like 'lyon')".to_string()),
    }
    };
    out.extend([
        ev(1, 120, probe(1, 0, vec![], false)),
        ev(2, 140, probe(2, 0, vec![], true)),
        ev(3, 160, probe(1, 1, vec!["city_search".into()], true)),
    ]);
    out
}

fn state(events: &[Event]) -> SessionState {
    SessionState::from_events(events)
}

fn draw(state: &SessionState, view: &Navigation, w: u16, h: u16) -> Buffer {
    let theme = Theme::default();
    let ctx = PaneCtx { state, nav: view, theme: &theme, focused: true, now_ms: state.t };
    common::render(w, h, |f| program::render(f, f.area(), &ctx))
}

fn text(buf: &Buffer) -> String {
    common::buffer_text(buf)
}

/// The screen row that contains every one of `needles`.
fn row_with(buf: &Buffer, needles: &[&str]) -> String {
    text(buf)
        .lines()
        .find(|r| needles.iter().all(|n| r.contains(n)))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no row with {needles:?}:\n{}", text(buf)))
}

#[test]
fn the_fold_knows_the_running_line_and_forgets_it_when_the_program_ends() {
    let s = state(&running());
    let p = s.current.as_ref().and_then(|r| r.program.as_ref()).expect("a program");
    assert_eq!(p.running_line(), Some(4));
    assert_eq!(p.calls.len(), 2);
    assert_eq!(p.calls[0].result, Some(Ok(france())));
    assert_eq!(p.calls[1].call, Some(2));
    assert_eq!(p.prints, ["population 68.17 million"]);

    // A call still open when the program failed does not run any more.
    let mut events = running();
    events.push(ev(
        1,
        300,
        K::ProgramFailed {
            round: 0,
            kind: FailKind::Deadline,
            error: "the program ran out of time".into(),
            line: Some(4),
            snippet: String::new(),
            tool: None,
            last: true,
        },
    ));
    let s = state(&events);
    let p = s.current.as_ref().and_then(|r| r.program.as_ref()).unwrap();
    assert!(p.ended);
    assert_eq!(p.running_line(), None);

    // Nor when the run ended under it (the user stopped it).
    let mut events = running();
    events.push(ev(
        1,
        300,
        K::RunFinished {
            outcome: RunOutcome::Stopped,
            answer: None,
            success: None,
            cost: 2.0,
            usage: Usage::default(),
            steps: 1,
            tool_calls: 2,
            expect: None,
        },
    ));
    let s = state(&events);
    assert_eq!(s.current.as_ref().and_then(|r| r.program.as_ref()).unwrap().running_line(), None);

    // A call whose end no event told (no ToolCall, no ToolResult) is over
    // once the program makes its next call.
    let mut events = started();
    events.extend([
        ev(1, 200, K::ProgramWritten { round: 0, program: ROUND0.into(), diff: String::new(), by_user: false }),
        ev(1, 210, K::ProgramAt { line: Some(1), tool: "geo_lookup".into() }),
        ev(1, 260, K::ProgramAt { line: Some(4), tool: "calculator".into() }),
    ]);
    let s = state(&events);
    let p = s.current.as_ref().and_then(|r| r.program.as_ref()).unwrap();
    assert_eq!(p.running_line(), Some(4));
    assert!(matches!(p.calls[0].result, Some(Err(_))), "{:?}", p.calls[0]);
}

#[test]
fn a_running_program_highlights_its_line_with_each_result_beside_its_line() {
    let s = state(&running());
    let view = Navigation { focus: Pane::Program, ..Default::default() };
    for (w, h) in [(80, 24), (120, 20)] {
        let buf = draw(&s, &view, w, h);
        insta::assert_snapshot!(format!("program_running_{w}x{h}"), text(&buf));
        row_with(&buf, &["Program · round 0"]);
        row_with(&buf, &["▶ running line 4"]);
        let done = row_with(&buf, &["1 │ let f = geo_lookup", "geo_lookup ✓ {"]);
        assert!(done.contains(r#"{"name":"France"#), "{done}");
        // Beside its line when the width leaves room, else right under it.
        if w >= 120 {
            row_with(&buf, &["▶ 4 │ let d = calculator", "calculator … running"]);
        } else {
            row_with(&buf, &["▶ 4 │ let d = calculator"]);
            row_with(&buf, &["↳ calculator … running"]);
        }
        row_with(&buf, &["printed"]);
        row_with(&buf, &["population 68.17 million"]);
    }
    let buf = draw(&s, &view, 80, 24);
    let theme = Theme::default();
    // The running row is highlighted across, the results in their colours.
    let (_, y) = common::find(&buf, "▶ 4").unwrap();
    assert_eq!(buf[(40, y)].bg, theme.selected, "the running row's background");
    assert_eq!(common::fg_at(&buf, "… running"), theme.accent);
    assert_eq!(common::fg_at(&buf, "✓ {"), theme.ok);
}

#[test]
fn a_failed_program_marks_its_line_and_names_the_tool_it_is_blamed_on() {
    let s = state(&failed());
    let view = Navigation { focus: Pane::Program, ..Default::default() };
    for (w, h) in [(80, 24), (120, 30)] {
        let buf = draw(&s, &view, w, h);
        insta::assert_snapshot!(format!("program_failed_{w}x{h}"), text(&buf));
        let head = row_with(&buf, &["✗ failed (missing field) at line 4"]);
        assert!(head.contains("blamed on geo_lookup"), "{head}");
        row_with(&buf, &["property 'area' not found"]);
        row_with(&buf, &["✗ 4 │ let d = calculator"]);
        // The call on line 1 answered; nothing is running any more.
        row_with(&buf, &["geo_lookup ✓"]);
        assert!(!text(&buf).contains("running"), "{}", text(&buf));
    }
    let buf = draw(&s, &view, 120, 30);
    let theme = Theme::default();
    assert_eq!(common::fg_at(&buf, "✗ failed"), theme.failing);
    assert_eq!(common::fg_at(&buf, "property 'area'"), theme.failing);
    assert_eq!(common::fg_at(&buf, "let d = calculator"), theme.failing);
}

#[test]
fn a_rewrite_shows_as_its_diff_and_its_answer() {
    let s = state(&rewritten());
    let source = Navigation { focus: Pane::Program, ..Default::default() };
    let buf = draw(&s, &source, 100, 24);
    row_with(&buf, &["Program · round 1"]);
    row_with(&buf, &["✓ returned", r#""density":105.887"#]);
    row_with(&buf, &["4 │", "f.area_km2", "calculator ✓ 105.887"]);
    assert_eq!(program::shown(&s, &source), ProgramShow::Source);

    let diff = Navigation { program_show: ProgramShow::Diff, ..source };
    let buf = draw(&s, &diff, 100, 24);
    insta::assert_snapshot!("program_diff_100x24", text(&buf));
    row_with(&buf, &["Program · round 1 · diff"]);
    let removed = row_with(&buf, &["-let d = calculator", "f.area}"]);
    let added = row_with(&buf, &["+let d = calculator", "f.area_km2}"]);
    assert!(!removed.contains("area_km2") && added.contains("area_km2"));
    let theme = Theme::default();
    assert_eq!(common::fg_at(&buf, "-let d"), theme.failing);
    assert_eq!(common::fg_at(&buf, "+let d"), theme.ok);

    // Round 0 has no diff: the pane shows the source whatever was asked.
    let s0 = state(&running());
    assert_eq!(program::shown(&s0, &diff), ProgramShow::Source);
}

#[test]
fn probes_show_their_question_program_response_and_schema() {
    let s = state(&probed());
    // No program yet: the probes are what the pane shows.
    let view = Navigation { focus: Pane::Program, ..Default::default() };
    assert_eq!(program::shown(&s, &view), ProgramShow::Probes);
    let buf = draw(&s, &view, 100, 40);
    insta::assert_snapshot!("program_probes_100x40", text(&buf));
    row_with(&buf, &["3 probes of 1 tool", "2 gave a schema", "1 failed"]);
    // The newest first: the chain probe, with its helper.
    let rows: Vec<String> = text(&buf).lines().map(str::to_string).collect();
    let first = rows.iter().position(|r| r.contains("? city_stats")).unwrap();
    assert!(rows[first].contains("round 1 · sample 1 · after city_search"), "{}", rows[first]);
    row_with(&buf, &["question", "How many people live in Lyon?"]);
    row_with(&buf, &["program", "let s = city_stats(#{city_id: \"lyon\"});"]);
    row_with(&buf, &["response", r#""population":522250"#]);
    row_with(&buf, &["schema", r#""type":"object""#]);
    row_with(&buf, &["✗ error", "unknown city_id 'Lyon'"]);
    let theme = Theme::default();
    assert_eq!(common::fg_at(&buf, "unknown city_id"), theme.failing);

    // Once a program exists, `o` brings the probes back.
    let mut events = probed();
    events.push(ev(
        4,
        200,
        K::ProgramWritten { round: 0, program: ROUND0.into(), diff: String::new(), by_user: false },
    ));
    let s = state(&events);
    assert_eq!(program::shown(&s, &view), ProgramShow::Source);
    let probes = Navigation { program_show: ProgramShow::Probes, ..view };
    assert_eq!(program::shown(&s, &probes), ProgramShow::Probes);
}

#[test]
fn the_program_takes_the_graphs_place_for_atc_only() {
    assert_eq!(Pane::cycle(None), &Pane::ALL);
    assert_eq!(Pane::cycle(Some(StrategyKind::Rewoo)), &Pane::ALL);
    assert!(!Pane::ALL.contains(&Pane::Program), "other strategies keep their tab order");
    assert_eq!(Pane::cycle(Some(StrategyKind::Atc))[0], Pane::Program);

    let mut a = app(running());
    assert_eq!(a.nav.focus, Pane::Program, "atc starts on its program, as others on their graph");
    let wide = text(&screen(&a, 160, 48));
    assert!(wide.contains("Program · round 0") && !wide.contains(" Graph "), "{wide}");
    assert!(wide.contains("calculator … running"), "{wide}");
    let narrow = text(&screen(&a, 80, 24));
    insta::assert_snapshot!("program_screen_80x24", narrow);
    let tabs = narrow.lines().next().unwrap();
    assert!(tabs.contains("Program") && !tabs.contains("Graph"), "{tabs}");
    // tab goes round atc's panes and comes back to the program.
    let mut seen = vec![a.nav.focus];
    for _ in 0..6 {
        press(&mut a, KeyCode::Tab);
        seen.push(a.nav.focus);
    }
    assert_eq!(seen, [&Pane::ATC[..], &[Pane::Program]].concat());
    press(&mut a, KeyCode::BackTab);
    assert_eq!(a.nav.focus, Pane::Retrieval);

    // A toolnet session is as it was.
    let mut a = app(common::fixture("toolnet-fault.jsonl"));
    assert_eq!(a.nav.focus, Pane::Graph);
    press(&mut a, KeyCode::Tab);
    assert_eq!(a.nav.focus, Pane::Transcript);
}

#[test]
fn d_and_o_switch_what_the_pane_shows_or_say_why_not() {
    let mut a = app(running());
    press(&mut a, KeyCode::Char('d'));
    assert_eq!(a.nav.program_show, ProgramShow::Source);
    assert!(a.nav.flash.as_deref().unwrap_or("").contains("no rewrite"), "{:?}", a.nav.flash);
    press(&mut a, KeyCode::Char('o'));
    assert!(a.nav.flash.as_deref().unwrap_or("").contains("no probes"), "{:?}", a.nav.flash);

    let mut a = app(rewritten());
    press(&mut a, KeyCode::Char('d'));
    assert_eq!(a.nav.program_show, ProgramShow::Diff);
    press(&mut a, KeyCode::Char('d'));
    assert_eq!(a.nav.program_show, ProgramShow::Source);
    // The keys belong to the program pane: elsewhere d does nothing.
    a.nav.focus = Pane::Transcript;
    press(&mut a, KeyCode::Char('d'));
    assert_eq!(a.nav.program_show, ProgramShow::Source);

    // The arrows scroll the program; a new program is read from its top.
    a.nav.focus = Pane::Program;
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::PageDown);
    assert_eq!(a.nav.program_scroll, 11);
    press(&mut a, KeyCode::Up);
    assert_eq!(a.nav.program_scroll, 10);
    a.update(Action::Engine(ev(
        3,
        500,
        K::ProgramWritten { round: 2, program: ROUND1.into(), diff: String::new(), by_user: true },
    )));
    assert_eq!(a.nav.program_scroll, 0);

    // They work in a replay too (they only change the view).
    let mut r = App::replay(rewritten());
    assert_eq!(r.nav.focus, Pane::Program);
    press(&mut r, KeyCode::Char('d'));
    assert_eq!(r.nav.program_show, ProgramShow::Diff);
    assert!(press(&mut r, KeyCode::Char('e')).is_empty());
    assert!(r.dialog.is_none());
}

#[test]
fn e_then_ctrl_s_sends_the_edited_program() {
    let mut a = app(failed());
    // On another pane e is the score editor's key, as ever.
    a.nav.focus = Pane::Transcript;
    press(&mut a, KeyCode::Char('e'));
    assert!(!matches!(a.dialog, Some(Dialog::Program(_))));
    a.dialog = None;
    a.nav.focus = Pane::Program;
    assert!(press(&mut a, KeyCode::Char('e')).is_empty());
    assert!(matches!(a.dialog, Some(Dialog::Program(_))), "e opens the program editor");
    let shown = text(&screen(&a, 120, 40));
    assert!(shown.contains("The program of round 0") && shown.contains("f.area}"), "{shown}");
    insta::assert_snapshot!("program_dialog_120x40", shown);

    // Fix line 4: to its end, drop "area}`});", type the right field.
    for _ in 0..3 {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::End);
    for _ in 0.."area}`});".len() {
        press(&mut a, KeyCode::Backspace);
    }
    for c in "area_km2}`});".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    // Enter is a new line in the editor, not a submit.
    assert!(press(&mut a, KeyCode::Enter).is_empty());
    press(&mut a, KeyCode::Backspace);
    let effects = a.update(Action::Key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)));
    assert_eq!(effects, vec![Effect::Control(Control::EditProgram { program: ROUND1.into() })]);
    assert!(a.dialog.is_none());
    let flash = a.nav.flash.clone().unwrap_or_default();
    assert!(flash.contains("your program (5 lines) as the next round"), "{flash}");
}

#[test]
fn the_program_dialog_runs_with_f5_and_refuses_an_empty_program() {
    let s = state(&running());
    let mut d = Dialog::program(&s);
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    assert_eq!(
        d.handle_key(key(KeyCode::F(5)), &s),
        Outcome::Submit(vec![Control::EditProgram { program: ROUND0.into() }])
    );
    // Select everything and cut it: nothing to run.
    let mut d = Dialog::program(&s);
    for _ in 0..ROUND0.len() + 10 {
        let _ = d.handle_key(key(KeyCode::Delete), &s);
    }
    assert_eq!(d.handle_key(key(KeyCode::F(5)), &s), Outcome::Continue);
    let theme = Theme::default();
    let shown = text(&common::render(100, 20, |f| d.render(f, f.area(), &s, &theme)));
    assert!(shown.contains("the program is empty"), "{shown}");
    // Tab indents rather than leaving the editor.
    let _ = d.handle_key(key(KeyCode::Tab), &s);
    let _ = d.handle_key(key(KeyCode::Char('1')), &s);
    assert_eq!(
        d.handle_key(key(KeyCode::F(5)), &s),
        Outcome::Submit(vec![Control::EditProgram { program: "    1".into() }])
    );
    assert_eq!(Dialog::program(&s).handle_key(key(KeyCode::Esc), &s), Outcome::Cancel);
}

#[test]
fn e_says_why_when_the_tasks_programs_have_run_their_course() {
    let mut a = app(rewritten());
    press(&mut a, KeyCode::Char('e'));
    assert!(a.dialog.is_none());
    assert!(a.nav.flash.as_deref().unwrap_or("").contains("r restarts the task"), "{:?}", a.nav.flash);
    // Before any task there is nothing to continue.
    let mut a = app(started()[..1].to_vec());
    press(&mut a, KeyCode::Char('e'));
    assert!(a.dialog.is_none());
    // Before the planner wrote one, the user may write round 0.
    let mut a = app(started());
    press(&mut a, KeyCode::Char('e'));
    assert!(matches!(a.dialog, Some(Dialog::Program(_))));
}

#[test]
fn the_status_bar_offers_the_program_keys_on_the_program_pane() {
    let a = app(rewritten());
    let theme = Theme::default();
    let ctx = PaneCtx { state: &a.state, nav: &a.nav, theme: &theme, focused: false, now_ms: a.state.t };
    let buf = common::render(160, 2, |f| switchyard::ui::panes::status::render(f, f.area(), &ctx));
    let bar = text(&buf);
    assert!(bar.contains("e edit program") && bar.contains("d diff"), "{bar}");
    assert!(!bar.contains("e score"), "{bar}");
}

#[test]
fn the_pane_survives_small_areas_long_programs_and_odd_lines() {
    let long: String = (1..=80).map(|i| format!("let x{i} = {i};\n")).collect();
    let mut events = started();
    events.extend([
        ev(1, 200, K::ProgramWritten { round: 0, program: long, diff: String::new(), by_user: true }),
        ev(1, 210, K::ProgramAt { line: Some(70), tool: "calculator".into() }),
        ev(1, 211, K::ProgramAt { line: Some(0), tool: "calculator".into() }),
        ev(1, 212, K::ProgramAt { line: Some(500), tool: "geo_lookup".into() }),
        ev(1, 213, K::ProgramAt { line: None, tool: "geo_lookup".into() }),
        ev(1, 214, K::ProgramAt { line: Some(60), tool: "calculator".into() }),
        call(1, 215, 1, "calculator", json!({})),
        result(
            1,
            216,
            1,
            "calculator",
            ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, "x".repeat(500)) },
        ),
        ev(1, 217, K::ProgramAt { line: Some(60), tool: "calculator".into() }),
    ]);
    for n in (1..events.len()).step_by(2).chain([events.len()]) {
        let s = state(&events[..n]);
        for show in [ProgramShow::Source, ProgramShow::Diff, ProgramShow::Probes] {
            for scroll in [0, 5, 1000] {
                let view = Navigation { program_show: show, program_scroll: scroll, ..Default::default() };
                for (w, h) in [(1, 1), (3, 3), (10, 4), (20, 6), (40, 10), (80, 24)] {
                    draw(&s, &view, w, h);
                }
            }
        }
    }
    // The running line (60) is kept in view however far the user scrolled.
    let s = state(&events);
    for scroll in [0, 1000] {
        let view = Navigation { program_scroll: scroll, ..Default::default() };
        let buf = draw(&s, &view, 80, 24);
        row_with(&buf, &["▶ 60 │ let x60 = 60;", "×2 calculator … waiting"]);
    }
    let buf = draw(&s, &Navigation::default(), 80, 24);
    row_with(&buf, &["your edit"]);
    // Calls from lines the program does not have are listed apart.
    let buf =
        draw(&s, &Navigation { program_scroll: 1000, program_show: ProgramShow::Source, ..Default::default() }, 80, 60);
    let t = text(&buf);
    assert!(t.contains("calls from no known line"), "{t}");
    let _ = draw(&state(&probed()), &Navigation::default(), 2, 2);
}

#[test]
fn help_lists_the_program_keys() {
    let s = state(&running());
    let theme = Theme::default();
    let live = text(&common::render(160, 48, |f| Dialog::help(false).render(f, f.area(), &s, &theme)));
    for needle in ["fix and continue", "rewrite's diff", "the probes of tools", "Ctrl+S / F5"] {
        assert!(live.contains(needle), "live help lacks '{needle}':\n{live}");
    }
    let replay = text(&common::render(160, 48, |f| Dialog::help(true).render(f, f.area(), &s, &theme)));
    assert!(replay.contains("rewrite's diff") && !replay.contains("fix and continue"), "{replay}");
}
