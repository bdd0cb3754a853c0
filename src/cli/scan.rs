//! `scan`: failures across many runs, into a folder beside what was scanned.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::trace::read_trace_file;
use switchyard::model::{ChatModel, Role};
use switchyard::retrieve::Embedder;
use switchyard::scan::group::{self, Words};
use switchyard::scan::report::{self, Header};
use switchyard::scan::store::{GROUPS, ScanMeta, Store};
use switchyard::scan::{self, RunScan, Source};

use super::setup::runtime;

#[derive(Args, Debug)]
pub(super) struct ScanArgs {
    /// An eval's folder (its tasks' traces), or trace files.
    #[arg(required = true, value_name = "EVAL_DIR | TRACE")]
    sources: Vec<PathBuf>,
    /// The scan's folder (default: beside the eval, EVALS/scans/NAME; for traces,
    /// DATA_DIR/scans/NAME). A scan there already goes on from the runs it holds.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Start the scan in --out over instead of going on with it.
    #[arg(long)]
    fresh: bool,
    /// The rule scanners only: no model reads the failed runs, nothing is grouped.
    #[arg(long)]
    rules_only: bool,
    /// The configured model that reads the failed runs (default: the `scanner` role's in
    /// [roles], else the actor's).
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// How the failures' phrases are compared: minilm (when installed), or their words.
    #[arg(long, value_enum, default_value_t = Compare::Minilm)]
    embedder: Compare,
    /// How alike (cosine, 0 to 1) two groups' phrases must be on average to join
    /// (default: 0.75 with minilm, 0.5 with words).
    #[arg(long, value_name = "SIM")]
    threshold: Option<f32>,
    /// Score the scanners against the faults injected into the runs (a labelled set: see the
    /// docs): each scanner's precision and recall, printed and in the report.
    #[arg(long)]
    validate: bool,
    /// Then open the Scan view: the kinds of failure and the rules, their runs, each run's
    /// replay at the event its scanner pointed to.
    #[arg(long, conflicts_with = "json")]
    view: bool,
    /// Print the groups and the rules' counts as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Compare {
    Minilm,
    Words,
}

pub(super) fn scan(config: &Config, a: ScanArgs) -> Result<ExitCode> {
    let source = Source::open(&a.sources)?;
    let data_dir = config.data_dir().ok();
    let out = match &a.out {
        Some(d) => d.clone(),
        None => {
            source.default_out(data_dir.as_deref()).ok_or_else(|| eyre!("no folder for the scan: give --out DIR"))?
        }
    };
    if let Source::Eval(dir) = &source
        && std::path::absolute(&out)?.starts_with(std::path::absolute(dir)?)
    {
        return Err(eyre!("--out {}: a scan is kept beside the eval, never inside it", out.display()));
    }
    // Trace files named on the command line are read before anything is
    // written: a bad one is an error naming it.
    let mut given = Vec::new();
    if let Source::Traces(files) = &source {
        for f in files {
            given.push(read_trace_file(f)?.events);
        }
    }
    let model: Option<(String, Arc<dyn ChatModel>)> = match (&a.model, a.rules_only) {
        (_, true) => None,
        (Some(name), false) => Some(config.named_model(name, config.seed)?),
        (None, false) => Some(config.role_model(Role::Scanner, config.seed)?),
    };
    let sources: Vec<String> =
        a.sources.iter().map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()).display().to_string()).collect();
    let meta = ScanMeta {
        source: sources.join(" "),
        model: model.as_ref().map(|(n, _)| n.clone()),
        started: chrono::Local::now().to_rfc3339(),
    };
    let (mut store, mut rows) = Store::open(&out, &meta, a.fresh)?;
    let done: BTreeSet<(String, u32)> = rows.iter().map(RunScan::key).collect();
    let items = source.items()?;
    let quiet = a.json && !std::io::stdout().is_terminal();
    let bar =
        if quiet { indicatif::ProgressBar::hidden() } else { super::progress::bar(items.len() as u64, "scanning") };
    let rt = runtime()?;
    let before = rows.len();
    for (i, item) in items.iter().enumerate() {
        bar.inc(1);
        let events = match given.get_mut(i) {
            Some(events) => std::mem::take(events),
            None => match read_trace_file(&item.path) {
                Ok(read) => read.events,
                Err(e) => {
                    // An eval's trace that cannot be read: its run is
                    // recorded as unscanned, with the reason, and the scan goes on.
                    let Some(row) = &item.row else { return Err(e.into()) };
                    if done.contains(&(item.trace.clone(), 1)) {
                        continue;
                    }
                    let r = unreadable(item, row, &e.to_string());
                    store.append(&r)?;
                    rows.push(r);
                    continue;
                }
            },
        };
        for run in scan::runs(&events) {
            if done.contains(&(item.trace.clone(), run.run)) {
                continue;
            }
            let mut r = scan::scan_rules(&item.trace, item.setting.as_deref(), &run, &item.context);
            if r.failed
                && let Some((_, m)) = &model
            {
                rt.block_on(scan::name_failure(m.as_ref(), &run, &mut r));
            }
            store.append(&r)?;
            rows.push(r);
        }
    }
    bar.finish_and_clear();
    let (groups, embedder_id, threshold) = match &model {
        None => (Vec::new(), None, 0.0),
        Some((_, m)) => {
            let (embedder, default_threshold) = embedder(a.embedder, data_dir.as_deref())?;
            let threshold = a.threshold.unwrap_or(default_threshold);
            if !(0.0..=1.0).contains(&threshold) {
                return Err(eyre!("--threshold {threshold}: a similarity between 0 and 1"));
            }
            let groups = rt
                .block_on(group::groups(&rows, embedder.as_ref(), m.as_ref(), threshold))
                .wrap_err("grouping the failures")?;
            (groups, Some(embedder.id().to_string()), threshold)
        }
    };
    let groups_path = out.join(GROUPS);
    std::fs::write(&groups_path, serde_json::to_string_pretty(&groups)? + "\n")
        .wrap_err_with(|| format!("cannot write {}", groups_path.display()))?;
    let header = Header { source: &source, model: meta.model.as_deref(), embedder: embedder_id.as_deref(), threshold };
    let scores = a.validate.then(|| scan::validate::scores(&rows, &groups));
    let written = report::write(store.dir(), &header, &rows, &groups, scores.as_deref())?;
    if a.json {
        let rules: serde_json::Map<String, serde_json::Value> = scan::RULES
            .iter()
            .map(|r| {
                let n = rows.iter().filter(|x| x.findings.iter().any(|f| f.scanner == r.name())).count();
                (r.name().to_string(), n.into())
            })
            .collect();
        let summary = serde_json::json!({
            "folder": out, "runs": rows.len(), "new": rows.len() - before,
            "failed": rows.iter().filter(|r| r.failed).count(),
            "unscanned": rows.iter().filter(|r| r.unscanned.is_some()).count(),
            "rules": rules, "groups": groups, "validation": scores,
        });
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    let failed = rows.iter().filter(|r| r.failed).count();
    println!(
        "{} runs scanned ({} new), {failed} failed{}",
        rows.len(),
        rows.len() - before,
        match rows.iter().filter(|r| r.unscanned.is_some()).count() {
            0 => String::new(),
            n => format!(", {n} unscanned (see the report)"),
        }
    );
    if !groups.is_empty() {
        println!("{:>5} {:>6}  kind of failure", "runs", "share");
        for g in &groups {
            println!("{:>5} {:>5.0}%  {}", g.count, 100.0 * g.share, g.name);
        }
    }
    let mut rule_line = Vec::new();
    for r in scan::RULES {
        let n = rows.iter().filter(|x| x.findings.iter().any(|f| f.scanner == r.name())).count();
        if n > 0 {
            rule_line.push(format!("{} {n}", r.name()));
        }
    }
    println!("rules: {}", if rule_line.is_empty() { "no finding".to_string() } else { rule_line.join(", ") });
    if let Some(scores) = &scores {
        print!("\n{}", scan::validate::table(scores));
    }
    println!("report: {}", written[0].display());
    if a.view {
        view(config, &source, &rows, &groups, &rt)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The Scan view, and each replay it asks for, until the user quits.
fn view(
    config: &Config,
    source: &Source,
    rows: &[RunScan],
    groups: &[switchyard::scan::group::Group],
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    use switchyard::ui::scan_screen::{ScanScreen, run};
    let theme = switchyard::ui::Theme::resolve(&config.theme)?;
    let mut screen = ScanScreen::new(source, rows, groups);
    loop {
        rt.block_on(run(&mut screen, &theme))?;
        match screen.take_open() {
            Some((trace, at)) => {
                super::ui::replay(config, &trace, Some(config.theme.clone()), at)?;
            }
            None => return Ok(()),
        }
    }
}

/// The embedder the phrases are compared with, and its default threshold.
fn embedder(kind: Compare, data_dir: Option<&std::path::Path>) -> Result<(Box<dyn Embedder>, f32)> {
    use switchyard::dense::minilm::MiniLm;
    if let Compare::Minilm = kind {
        match data_dir.map(|d| MiniLm::load(&MiniLm::folder(d))) {
            Some(Ok(m)) => return Ok((Box::new(m), 0.75)),
            Some(Err(e)) => eprintln!("MiniLM is not installed ({e}): the phrases are compared by their words"),
            None => eprintln!("no data directory for MiniLM: the phrases are compared by their words"),
        }
    }
    Ok((Box::new(Words), 0.5))
}

/// The row of an eval's run whose trace cannot be read.
fn unreadable(item: &scan::Item, row: &switchyard::eval::results::TaskRow, why: &str) -> RunScan {
    RunScan {
        trace: item.trace.clone(),
        run: 1,
        task_id: row.task_id.clone(),
        setting: item.setting.clone(),
        outcome: "unread".into(),
        success: row.success,
        failed: scan::failed(Some(&row.outcome), row.success),
        findings: Vec::new(),
        failure: None,
        unscanned: Some(format!("the trace cannot be read: {why}")),
        faults: Vec::new(),
    }
}

/// The kinds of failure of two evals, from the scans beside them.
pub(super) fn kinds(
    config: &Config,
    before: &std::path::Path,
    after: &std::path::Path,
) -> Result<Vec<switchyard::scan::compare::KindDelta>> {
    use switchyard::scan::compare::{Side, by_kind};
    use switchyard::scan::group::Group;
    use switchyard::scan::store::{RUNS, read_runs};
    let load = |eval: &std::path::Path| -> Result<(Vec<RunScan>, Vec<Group>)> {
        let dir = Source::Eval(eval.to_path_buf())
            .default_out(None)
            .ok_or_else(|| eyre!("{}: no folder name", eval.display()))?;
        let groups_file = dir.join(GROUPS);
        let text = std::fs::read_to_string(&groups_file).map_err(|_| {
            eyre!(
                "{}: no scan with a model beside it ({} is missing): run `switchyard scan {}` first",
                eval.display(),
                groups_file.display(),
                eval.display()
            )
        })?;
        let groups =
            serde_json::from_str(&text).wrap_err_with(|| format!("{}: not a scan's groups", groups_file.display()))?;
        Ok((read_runs(&dir.join(RUNS))?, groups))
    };
    let (rows_b, groups_b) = load(before)?;
    let (rows_a, groups_a) = load(after)?;
    let (embedder, threshold) = embedder(Compare::Minilm, config.data_dir().ok().as_deref())?;
    Ok(by_kind(
        Side { rows: &rows_b, groups: &groups_b },
        Side { rows: &rows_a, groups: &groups_a },
        embedder.as_ref(),
        threshold,
    )?)
}
