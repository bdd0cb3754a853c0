//! The eval report: results folders written row by row with serde (no eval
//! is run), drawn by `switchyard report` and compared by `switchyard
//! compare`; the tables, the summary, every plot decoded (the SVG as XML,
//! the PNG's pixels), the flipped tasks, and clear errors on bad folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use switchyard::engine::event::RunOutcome;
use switchyard::eval::compare::{Change, PairedBy, compare};
use switchyard::eval::results::{EvalMeta, Learned, RESULTS, RoleUse, Sweep, TaskRow};
use switchyard::eval::summary::summarize;

fn row(setting: &str, strategy: &str, index: usize) -> TaskRow {
    TaskRow {
        setting: setting.into(),
        strategy: strategy.into(),
        sweep: None,
        models: BTreeMap::from([("actor".to_string(), "sim".to_string())]),
        index,
        task_id: format!("t{index}"),
        gold: Some("42".into()),
        gold_tools: vec![],
        outcome: RunOutcome::Answered,
        answer: Some("It is 42.".into()),
        success: Some(true),
        steps: 2,
        tool_calls: 1,
        prompt_tokens: 100,
        completion_tokens: 10,
        cached_tokens: 0,
        cost: 1.0,
        path: vec!["calculator".into()],
        calls: vec![],
        budget: None,
        planned_cost: None,
        planned_calls: None,
        spent: 0.0,
        tokens_saved: 0,
        reflections: 0,
        roles: vec![],
        wall_ms: 5,
        learnt_from: 0,
        expect: None,
        gold_call: None,
        learned: Learned::default(),
    }
}

fn meta(settings: &[String], tasks: usize) -> EvalMeta {
    EvalMeta {
        command: "eval --strategy react,toolnet".into(),
        config: None,
        tasks: "tasks.toml".into(),
        task_count: tasks,
        seed: 7,
        jobs: 1,
        shard: Default::default(),
        settings: settings.to_vec(),
        params: serde_json::json!({"alpha": 0.5}),
        cost_unit: "credits".into(),
        started: "2026-05-01T10:00:00Z".into(),
        merged: vec![],
    }
}

fn write_eval(dir: &Path, meta: &EvalMeta, rows: &[TaskRow]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("eval.json"), serde_json::to_string_pretty(meta).unwrap()).unwrap();
    let lines: String = rows.iter().map(|r| serde_json::to_string(r).unwrap() + "\n").collect();
    std::fs::write(dir.join(RESULTS), lines).unwrap();
}

/// Two strategies over a budget sweep, judged, with gold tools.
fn budget_sweep() -> (EvalMeta, Vec<TaskRow>) {
    let mut rows = Vec::new();
    let mut settings = Vec::new();
    for strategy in ["react", "toolnet"] {
        for b in [5.0, 10.0, 20.0] {
            let label = format!("{strategy} btp on budget={b}");
            settings.push(label.clone());
            for i in 0..6 {
                let mut r = row(&label, strategy, i);
                r.sweep = Some(Sweep { name: "budget".into(), value: b });
                r.budget = Some(b);
                r.planned_cost = Some(b * 0.8);
                r.planned_calls = Some(2);
                r.cost = (i as f64 + 1.0) * b / 5.0;
                r.success = Some(i % 3 != 0);
                r.gold_tools = vec!["calculator".into()];
                rows.push(r);
            }
        }
    }
    (meta(&settings, 6), rows)
}

/// A planner × solver matrix with numeric golds.
fn model_matrix() -> (EvalMeta, Vec<TaskRow>) {
    let mut rows = Vec::new();
    let mut settings = Vec::new();
    for (p, planner) in ["sim-weak", "sim-strong"].into_iter().enumerate() {
        for (s, solver) in ["sim-weak", "sim-strong"].into_iter().enumerate() {
            let label = format!("planner={planner} solver={solver}");
            settings.push(label.clone());
            for i in 0..4 {
                let mut r = row(&label, "rewoo", i);
                r.models = BTreeMap::from([("planner".into(), planner.into()), ("solver".into(), solver.into())]);
                r.gold = Some("1234.5".into());
                r.answer = Some(if i < p + s + 1 { "about 1,234.51 km".into() } else { "1300".into() });
                r.success = Some(i < p + s + 1);
                r.roles = vec![
                    RoleUse {
                        role: "planner".into(),
                        model: planner.into(),
                        calls: 1,
                        prompt_tokens: 50,
                        completion_tokens: 5,
                        cached_tokens: 0,
                        capped: 0,
                        cost: 0.1,
                    },
                    RoleUse {
                        role: "solver".into(),
                        model: solver.into(),
                        calls: 1,
                        prompt_tokens: 50,
                        completion_tokens: 5,
                        cached_tokens: 30,
                        capped: 1,
                        cost: 0.2,
                    },
                ];
                rows.push(r);
            }
        }
    }
    (meta(&settings, 4), rows)
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_switchyard"));
    c.env_remove("SWITCHYARD_DATA_DIR");
    c
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "it panicked: {err}");
    out
}

fn report(dir: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), dir.as_os_str()];
    args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
    let out = run(&args);
    assert!(out.status.success(), "report failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn report_fails(dir: &Path) -> String {
    let out = run(&["report".as_ref(), dir.as_os_str()]);
    assert!(!out.status.success(), "report of {} should fail", dir.display());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The SVG is well-formed XML with an `<svg>` root and some text in it.
fn check_svg(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: not XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg", "{}", path.display());
    assert!(doc.descendants().any(|n| n.has_tag_name("text")), "{}: no text", path.display());
}

/// The PNG decodes, has a size, and is not one flat colour.
fn check_png(path: &Path) {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert!(info.width > 0 && info.height > 0, "{}", path.display());
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let colours: std::collections::BTreeSet<&[u8]> = pixels.iter().copied().collect();
    assert!(colours.len() > 16, "{}: {} colours, a blank picture", path.display(), colours.len());
    let dark = pixels.iter().filter(|p| p[..3].iter().all(|c| *c < 80)).count();
    assert!(dark > 500, "{}: almost nothing dark (no text?)", path.display());
}

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

#[test]
fn a_budget_sweep_report_has_the_tables_the_summary_and_decodable_plots() {
    let dir = tempfile::tempdir().unwrap();
    let (meta, rows) = budget_sweep();
    write_eval(dir.path(), &meta, &rows);
    let out = report(dir.path(), &[]);
    for f in ["report.md", "summary.json", "overview.svg", "overview.png", "sweep-budget.svg", "sweep-budget.png"] {
        assert!(out.contains(&dir.path().join(f).display().to_string()), "{f} not listed:\n{out}");
    }
    assert!(out.contains("react btp on budget=5") && out.contains("PBC"), "{out}");

    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    for needle in [
        "# Eval report: tasks.toml",
        "eval --strategy react,toolnet",
        "seed: 7",
        "## Results",
        "| setting | tasks | success | answered |",
        "| Path% | Prec% |",
        "## Budget (BTP)",
        "| setting | tasks | PBC | answered within B | AC (credits) | PR | RFBC |",
        "## Sweep over budget",
        "| toolnet btp on | 10 |",
        "(sweep-budget.svg)",
        "(overview.png)",
        "36 of 36 task runs (complete)",
    ] {
        assert!(md.contains(needle), "report.md lacks {needle:?}:\n{md}");
    }

    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["settings"].as_array().unwrap().len(), 6);
    assert_eq!(summary["progress"]["done"], 36);
    assert_eq!(summary["progress"]["expected"], 36);
    assert_eq!(summary["meta"]["seed"], 7);
    assert!(summary["settings"][0]["metrics"]["pbc"].is_number());
    assert_eq!(summary["sweeps"].as_array().unwrap().len(), 2);

    let svgs = files_with(dir.path(), "svg");
    let pngs = files_with(dir.path(), "png");
    // overview, speed and the sweep.
    assert_eq!(svgs.len(), 3, "{svgs:?}");
    assert_eq!(pngs.len(), 3, "{pngs:?}");
    svgs.iter().for_each(|p| check_svg(p));
    pngs.iter().for_each(|p| check_png(p));
}

#[test]
fn a_model_matrix_gets_its_table_a_heat_map_and_the_numeric_scorings() {
    let dir = tempfile::tempdir().unwrap();
    let (meta, rows) = model_matrix();
    write_eval(dir.path(), &meta, &rows);
    report(dir.path(), &[]);
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("## Models (planner × solver)"), "{md}");
    assert!(md.contains("| planner | solver | tasks | accuracy |"), "{md}");
    assert!(md.contains("| sim-strong | sim-strong | 4 | 75.0% |"), "{md}");
    assert!(md.contains("## Numeric answers"), "{md}");
    // 1234.51 rounds to 1234.51, not 1234.50; it is within 0.1 %.
    assert!(md.contains("| planner=sim-weak solver=sim-weak | 4 | 0.0% | 25.0% | 25.0% |"), "{md}");
    assert!(!md.contains("## Budget"), "{md}");
    // Two calls a task of 50 prompt tokens each, 30 of the solver's from the server's cache.
    assert!(md.contains("| compl./call | cached |"), "{md}");
    assert!(
        md.contains("| planner=sim-weak solver=sim-weak | 4 | 2.00 | 0.01 | 100 | 10 | 50 | 5.0 | 30.0% |"),
        "{md}"
    );
    for f in ["matrix.svg", "overview.svg", "speed.svg"] {
        check_svg(&dir.path().join(f));
    }
    check_png(&dir.path().join("matrix.png"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["matrix"]["axes"], serde_json::json!(["planner", "solver"]));
    assert_eq!(summary["matrix"]["cells"].as_array().unwrap().len(), 4);
    assert!((summary["matrix"]["cells"][0]["model_cost_per_task"].as_f64().unwrap() - 0.3).abs() < 1e-9);
    assert_eq!(summary["settings"][0]["numeric"]["tasks"], 4);
}

#[test]
fn unjudged_tasks_say_so_and_an_interrupted_eval_is_reported_as_incomplete() {
    let dir = tempfile::tempdir().unwrap();
    let settings = vec!["react (k=all)".to_string(), "toolnet".to_string()];
    let mut rows = Vec::new();
    for i in 0..5 {
        let mut r = row("react (k=all)", "react", i);
        r.gold = None;
        r.success = None;
        if i == 0 {
            r.outcome = RunOutcome::MaxSteps;
            r.answer = None;
        }
        rows.push(r);
    }
    write_eval(dir.path(), &meta(&settings, 5), &rows);
    let out = report(dir.path(), &[]);
    assert!(out.contains("answered"), "{out}");
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| react (k=all) | 5 | n/a | 80.0% |"), "{md}");
    assert!(md.contains("No task has a gold answer"), "{md}");
    assert!(md.contains("5 of 10 task runs (incomplete)"), "{md}");
    assert!(md.contains("Not started: toolnet."), "{md}");
    assert!(!md.contains("## Numeric") && !md.contains("## Sweep") && !md.contains("## Models"), "{md}");
    assert_eq!(files_with(dir.path(), "png").len(), 2);
    check_png(&dir.path().join("overview.png"));
    check_png(&dir.path().join("speed.png"));
}

#[test]
fn toolnets_figure_4_is_drawn_from_a_trace_and_again_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let (meta, rows) = budget_sweep();
    write_eval(dir.path(), &meta, &rows);
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/toolnet-fault.jsonl");
    let out = report(dir.path(), &["--trace", trace.to_str().unwrap()]);
    assert!(out.contains("toolnet-fault.png"), "{out}");
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("toolnet-fault.json")).unwrap()).unwrap();
    assert_eq!(data["broken"], "geo_lookup");
    assert_eq!(data["backup"], "geo_lookup_mirror", "the tool called after its failed calls");
    assert_eq!(data["from"], "start");
    check_svg(&dir.path().join("toolnet-fault.svg"));
    check_png(&dir.path().join("toolnet-fault.png"));
    std::fs::remove_file(dir.path().join("toolnet-fault.png")).unwrap();
    let out = report(dir.path(), &[]);
    assert!(out.contains("toolnet-fault.png"), "drawn again from its kept data: {out}");
    assert!(dir.path().join("toolnet-fault.png").is_file());
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("ToolNet: geo_lookup breaks at iteration"), "{md}");

    let named = report(dir.path(), &["--trace", trace.to_str().unwrap(), "--backup", "city_search"]);
    assert!(named.contains("toolnet-fault.svg"));
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("toolnet-fault.json")).unwrap()).unwrap();
    assert_eq!(data["backup"], "city_search");
    let out = run(&[
        "report".as_ref(),
        dir.path().as_os_str(),
        "--trace".as_ref(),
        trace.as_os_str(),
        "--tool".as_ref(),
        "no_such_tool".as_ref(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("'no_such_tool' is not a tool"));
}

#[test]
fn bad_folders_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nowhere");
    assert!(report_fails(&missing).contains("no such folder"));

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = report_fails(&empty);
    assert!(e.contains("eval.json") && e.contains("missing"), "{e}");

    let (meta, rows) = budget_sweep();
    write_eval(&empty, &meta, &[]);
    let e = report_fails(&empty);
    assert!(e.contains("results.jsonl") && e.contains("no results yet"), "{e}");

    std::fs::remove_file(empty.join(RESULTS)).unwrap();
    let e = report_fails(&empty);
    assert!(e.contains("results.jsonl") && e.contains("missing"), "{e}");

    let good = serde_json::to_string(&rows[0]).unwrap();
    std::fs::write(empty.join(RESULTS), format!("{good}\n{{\"setting\": 3}}\n{good}\n")).unwrap();
    let e = report_fails(&empty);
    assert!(e.contains("results.jsonl, line 2"), "{e}");

    std::fs::write(empty.join("eval.json"), "{\"command\": 1}").unwrap();
    let e = report_fails(&empty);
    assert!(e.contains("eval.json") && e.contains("not an eval description"), "{e}");

    let out = run(&["compare".as_ref(), missing.as_os_str(), empty.as_os_str()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nowhere"));
}

/// The first eval: t0 succeeds, t1 fails, t2 unjudged without an answer;
/// the second: t0 fails, t1 succeeds, t2 answered by other tools.
fn before_after(second_label: &str) -> (Vec<TaskRow>, Vec<TaskRow>) {
    let first = (0..3)
        .map(|i| {
            let mut r = row("react (k=all)", "react", i);
            r.success = Some(i == 0);
            if i == 2 {
                r.gold = None;
                r.success = None;
                r.outcome = RunOutcome::MaxSteps;
            }
            r
        })
        .collect();
    let second = (0..3)
        .map(|i| {
            let mut r = row(second_label, "react", i);
            r.success = Some(i == 1);
            r.cost = 2.0;
            if i == 2 {
                r.gold = None;
                r.success = None;
                r.path = vec!["search".into()];
            }
            r
        })
        .collect();
    (first, second)
}

#[test]
fn compare_finds_the_flipped_tasks_and_pairs_renamed_settings_by_strategy() {
    let (a, b) = before_after("react (k=all)");
    let c = compare(&a, &b);
    assert_eq!(c.pairs.len(), 1);
    let p = &c.pairs[0];
    assert_eq!((p.paired_by, p.matched), (PairedBy::Label, 3));
    let of = |kind| p.changes.iter().filter(|t| t.change == kind).map(|t| t.task_id.as_str()).collect::<Vec<_>>();
    assert_eq!(of(Change::Broken), vec!["t0"]);
    assert_eq!(of(Change::Fixed), vec!["t1"]);
    assert_eq!(of(Change::Answered), vec!["t2"]);
    assert_eq!(of(Change::Path), vec!["t2"]);
    assert!((p.delta.avg_cost - 1.0).abs() < 1e-9);
    assert_eq!(p.delta.success_rate, Some(0.0));

    let (a, b) = before_after("react (k=5)");
    let c = compare(&a, &b);
    assert_eq!(c.pairs[0].paired_by, PairedBy::Strategy);
    assert_eq!(c.count(Change::Fixed), 1);

    let mut other = b.clone();
    for r in &mut other {
        r.strategy = "toolnet".into();
    }
    let c = compare(&a, &other);
    assert!(c.pairs.is_empty());
    assert_eq!((c.only_first.len(), c.only_second.len()), (1, 1));
}

#[test]
fn compare_runs_as_a_command_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = before_after("react (k=all)");
    let settings = vec!["react (k=all)".to_string()];
    let (da, db) = (dir.path().join("a"), dir.path().join("b"));
    write_eval(&da, &meta(&settings, 3), &a);
    write_eval(&db, &meta(&settings, 3), &b);
    let out = run(&["compare".as_ref(), da.as_os_str(), db.as_os_str()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("now fails: 1") && text.contains("t0:"), "{text}");
    assert!(text.contains("now succeeds: 1") && text.contains("t1:"), "{text}");
    assert!(text.contains("cost +1.0000 credits"), "{text}");
    let out = run(&["compare".as_ref(), da.as_os_str(), db.as_os_str(), "--json".as_ref()]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let changes = v["comparison"]["pairs"][0]["changes"].as_array().unwrap();
    assert!(changes.iter().any(|c| c["task_id"] == "t0" && c["change"] == "broken"), "{v}");
}

#[test]
fn the_summary_counts_what_is_done_against_what_was_asked() {
    let (meta, mut rows) = budget_sweep();
    rows.truncate(10);
    let s = summarize(&meta, &rows, true);
    assert_eq!((s.progress.done, s.progress.expected), (10, 36));
    assert!(!s.progress.complete());
    assert_eq!(s.progress.not_started.len(), 4);
    assert!(s.notes.iter().any(|n| n.contains("torn")));
    assert_eq!(s.settings[1].done, 4);
}
