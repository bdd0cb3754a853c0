//! The Scan view over a scan's rows and groups: kinds of failure, then
//! rules, then the unscanned; Enter on a run asks for its replay at the
//! event its scanner pointed to.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use switchyard::scan::group::Group;
use switchyard::scan::{Finding, Named, RunScan, Source};
use switchyard::ui::Theme;
use switchyard::ui::scan_screen::{ScanScreen, render};

use crate::common;

fn row(task: &str, failure: Option<(&str, usize)>, findings: &[(&str, usize)], unscanned: Option<&str>) -> RunScan {
    RunScan {
        trace: format!("traces/react/{task}.jsonl"),
        run: 1,
        task_id: task.into(),
        setting: Some("react".into()),
        outcome: "answered".into(),
        success: Some(false),
        failed: true,
        findings: findings
            .iter()
            .map(|(s, e)| Finding { scanner: s.to_string(), event: *e, step: 1, detail: format!("{s} here") })
            .collect(),
        failure: failure.map(|(p, e)| Named { phrase: p.into(), event: e }),
        unscanned: unscanned.map(str::to_string),
        faults: vec![],
    }
}

fn screen() -> ScanScreen {
    let rows = vec![
        row("t1", Some(("the model's calls kept failing", 7)), &[("model-failed", 7), ("crashed", 9)], None),
        row("t2", Some(("the model's calls kept failing", 5)), &[("model-failed", 5)], None),
        row("t3", Some(("kept repeating the same tool call", 12)), &[("looped", 12)], None),
        row("t4", None, &[], Some("the reply is not a JSON object")),
    ];
    let group = |name: &str, tasks: &[&str]| Group {
        name: name.into(),
        count: tasks.len(),
        share: tasks.len() as f64 / 3.0,
        tasks: tasks.iter().map(|t| t.to_string()).collect(),
        phrases: vec![(name.into(), tasks.len())],
        examples: vec![],
        unnamed: None,
    };
    let groups = vec![
        group("the model's calls kept failing", &["t1", "t2"]),
        group("kept repeating the same tool call", &["t3"]),
    ];
    ScanScreen::new(&Source::Eval(PathBuf::from("/evals/e1")), &rows, &groups)
}

fn press(view: &mut ScanScreen, code: KeyCode) {
    view.key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn text(view: &ScanScreen) -> String {
    let theme = Theme::default();
    common::buffer_text(&common::render(120, 20, |f| render(f, view, &theme)))
}

#[test]
fn kinds_come_first_then_rules_then_the_unscanned() {
    let view = screen();
    let labels: Vec<&str> = view.entries().iter().map(|e| e.label.trim()).collect();
    assert_eq!(labels.len(), 2 + 3 + 1, "{labels:?}");
    assert!(labels[0].ends_with("the model's calls kept failing") && labels[0].starts_with("2 "), "{labels:?}");
    assert!(labels[2].ends_with("rule: looped"), "{labels:?}");
    assert!(labels[3].ends_with("rule: model-failed") && labels[3].starts_with("2 "), "{labels:?}");
    assert!(labels[5].ends_with("unscanned"), "{labels:?}");
    let shown = text(&view);
    assert!(shown.contains("scan of the eval /evals/e1 · 4 runs, 4 failed"), "{shown}");
    assert!(shown.contains("▶   2   67%  the model's calls kept failing"), "{shown}");
    // The selected kind's runs, each at its event.
    assert!(shown.contains("t1     react            E7     the model's calls kept failing"), "{shown}");
}

#[test]
fn enter_on_a_run_asks_for_its_replay_at_the_event_and_esc_goes_back() {
    let mut view = screen();
    press(&mut view, KeyCode::Down);
    press(&mut view, KeyCode::Enter);
    assert_eq!(view.take_open(), None, "Enter on a kind opens its runs, not a replay");
    press(&mut view, KeyCode::Enter);
    assert_eq!(view.take_open(), Some((PathBuf::from("/evals/e1/traces/react/t3.jsonl"), Some(12))));
    assert_eq!(view.take_open(), None, "taken once");
    press(&mut view, KeyCode::Esc);
    assert!(!view.quit());
    // The rule `crashed` points at its own event, not the model's.
    for _ in 0..3 {
        press(&mut view, KeyCode::Down);
    }
    press(&mut view, KeyCode::Enter);
    press(&mut view, KeyCode::Enter);
    assert_eq!(view.take_open(), Some((PathBuf::from("/evals/e1/traces/react/t1.jsonl"), Some(9))));
    press(&mut view, KeyCode::Esc);
    press(&mut view, KeyCode::Char('q'));
    assert!(view.quit());
}

#[test]
fn the_unscanned_say_why_and_open_at_the_end() {
    let mut view = screen();
    for _ in 0..5 {
        press(&mut view, KeyCode::Down);
    }
    let shown = text(&view);
    assert!(shown.contains("the reply is not a JSON object"), "{shown}");
    press(&mut view, KeyCode::Right);
    press(&mut view, KeyCode::Right);
    assert_eq!(view.take_open(), Some((PathBuf::from("/evals/e1/traces/react/t4.jsonl"), None)));
}
