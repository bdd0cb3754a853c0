//! An eval's report, drawn from its output folder alone: `report.md`,
//! `summary.json` and the plots. `eval` writes it when it finishes;
//! `switchyard report DIR` writes it again (after an interrupted eval, or an
//! edit of the results), and `switchyard compare DIR1 DIR2` sets two evals
//! side by side.
//!
//! ToolNet's Figure 4 comes from a trace, not from the results:
//! `switchyard report DIR --trace FILE [--tool T --backup B --from NODE]`
//! draws it into DIR and keeps its data there (`toolnet-fault.json`), so a
//! later `report DIR` draws it again without the trace.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr};

use switchyard::eval::compare::{compare as compare_rows, describe};
use switchyard::eval::fault_figure::{FAULT_FIGURE, FaultFigure, fault_figure};
use switchyard::eval::markdown;
use switchyard::eval::metrics::{budget_table, table};
use switchyard::eval::summary::{self, Summary};

use switchyard::eval::plot;

/// The report's file name inside an eval's folder.
pub(crate) const REPORT: &str = "report.md";

#[derive(Args, Debug)]
pub(super) struct ReportArgs {
    /// An eval's output folder (with eval.json and results.jsonl).
    dir: PathBuf,
    /// Also draw ToolNet's Figure 4 (a broken tool and its backup over the iterations) from this
    /// trace, e.g. one of `run --count 100 --fault geo_lookup:error@50 --trace FILE`.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The broken tool (default: the first tool with an injected fault in the trace).
    #[arg(long, requires = "trace")]
    tool: Option<String>,
    /// Its backup (default: the tool whose calls rose most after the fault, else its twin).
    #[arg(long, requires = "trace")]
    backup: Option<String>,
    /// The node whose edges into both are plotted (default: start).
    #[arg(long, requires = "trace")]
    from: Option<String>,
    /// Print summary.json instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub(super) struct CompareArgs {
    /// The first eval's output folder (the baseline).
    first: PathBuf,
    /// The second eval's output folder.
    second: PathBuf,
    #[arg(long)]
    json: bool,
}

/// Where ToolNet's Figure 4 comes from, when the report draws it.
#[derive(Clone, Debug, Default)]
pub(crate) struct FaultSource {
    pub trace: PathBuf,
    pub tool: Option<String>,
    pub backup: Option<String>,
    pub from: Option<String>,
}

/// What a report wrote: report.md first, then summary.json, then the plots
/// (each SVG before its PNG).
pub(crate) struct Written {
    pub files: Vec<PathBuf>,
    pub summary: Summary,
}

/// Writes `report.md`, `summary.json` and the plots that apply into `dir`,
/// from its `eval.json` and `results.jsonl`, and returns the paths written.
pub(crate) fn write_report(dir: &Path) -> Result<Vec<PathBuf>> {
    write_report_with(dir, None).map(|w| w.files)
}

/// As [`write_report`], drawing ToolNet's Figure 4 from a trace too.
/// Without one, a figure whose data an earlier report kept in `dir` is
/// drawn again.
pub(crate) fn write_report_with(dir: &Path, fault: Option<&FaultSource>) -> Result<Written> {
    let data = summary::load(dir)?;
    let summary = summary::summarize(&data.meta, &data.rows, data.torn);
    let mut plots_written = vec![plot::overview(dir, &summary)?];
    let mut parameters: Vec<&str> = Vec::new();
    for s in &summary.sweeps {
        if !parameters.contains(&s.parameter.as_str()) {
            parameters.push(&s.parameter);
        }
    }
    for p in parameters {
        plots_written.push(plot::sweep(dir, &summary, p)?);
    }
    if let Some(m) = &summary.matrix
        && let Some(w) = plot::matrix(dir, m, &summary.meta.cost_unit)?
    {
        plots_written.push(w);
    }
    let mut extra = Vec::new();
    if let Some(figure) = fault_data(dir, fault, &mut extra)? {
        plots_written.push(plot::fault(dir, &figure)?);
    }
    let links: Vec<markdown::PlotLink> = plots_written.iter().map(|w| w.link.clone()).collect();
    let report_path = dir.join(REPORT);
    write_text(&report_path, &markdown::report(&summary, &links))?;
    let mut files = vec![report_path, summary::write_summary(dir, &summary)?];
    files.extend(extra);
    files.extend(plots_written.into_iter().flat_map(|w| w.files));
    Ok(Written { files, summary })
}

/// The figure's data: from the trace when one is given (and kept in the
/// folder, its path pushed to `written`), else as an earlier report kept it.
fn fault_data(dir: &Path, fault: Option<&FaultSource>, written: &mut Vec<PathBuf>) -> Result<Option<FaultFigure>> {
    let kept = dir.join(FAULT_FIGURE);
    let Some(src) = fault else {
        if !kept.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&kept).wrap_err_with(|| format!("{}", kept.display()))?;
        let figure =
            serde_json::from_str(&text).wrap_err_with(|| format!("{}: not a figure's data", kept.display()))?;
        return Ok(Some(figure));
    };
    let events = super::setup::read_trace_noting(&src.trace)?;
    let figure = fault_figure(&events, src.tool.as_deref(), src.backup.as_deref(), src.from.as_deref())
        .wrap_err_with(|| format!("{}: ToolNet's Figure 4", src.trace.display()))?;
    write_text(&kept, &serde_json::to_string_pretty(&figure)?)?;
    written.push(kept);
    Ok(Some(figure))
}

fn write_text(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let mut file = atomic_write_file::AtomicWriteFile::open(path).wrap_err_with(|| format!("{}", path.display()))?;
    file.write_all(text.as_bytes()).and_then(|()| file.commit()).wrap_err_with(|| format!("{}", path.display()))
}

/// `switchyard report DIR`: the paths written, then the main table.
pub(super) fn report(a: ReportArgs) -> Result<ExitCode> {
    let fault = a.trace.map(|trace| FaultSource { trace, tool: a.tool, backup: a.backup, from: a.from });
    let w = write_report_with(&a.dir, fault.as_ref())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&w.summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    for f in &w.files {
        println!("wrote {}", f.display());
    }
    println!();
    let unit = &w.summary.meta.cost_unit;
    let metrics = w.summary.metrics();
    print!("{}", table(&metrics, unit));
    if w.summary.settings.iter().any(|s| s.budgeted) {
        let budgeted: Vec<_> = w.summary.settings.iter().filter(|s| s.budgeted).map(|s| s.metrics.clone()).collect();
        print!("{}", budget_table(&budgeted, unit));
    }
    for n in &w.summary.notes {
        println!("note: {n}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `switchyard compare DIR1 DIR2`: the tasks that flipped and the deltas.
pub(super) fn compare(a: CompareArgs) -> Result<ExitCode> {
    let first = summary::load(&a.first)?;
    let second = summary::load(&a.second)?;
    let c = compare_rows(&first.rows, &second.rows);
    if a.json {
        let out = serde_json::json!({
            "first": a.first,
            "second": a.second,
            "cost_unit": first.meta.cost_unit,
            "comparison": c,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("first:  {} ({} rows)", a.first.display(), first.rows.len());
    println!("second: {} ({} rows)", a.second.display(), second.rows.len());
    if first.meta.cost_unit != second.meta.cost_unit {
        println!(
            "note: the costs are in different units ({} against {}); the cost delta mixes them",
            first.meta.cost_unit, second.meta.cost_unit
        );
    }
    println!();
    print!("{}", describe(&c, &first.meta.cost_unit));
    Ok(ExitCode::SUCCESS)
}
