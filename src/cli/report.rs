//! `report DIR` (an eval's report written again from its folder, see
//! `eval::report`; several folders merged first, see `eval::merge`; with ToolNet's Figure 4 from `--trace FILE`) and
//! `compare DIR1 DIR2` (two evals side by side).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::eval::compare::{compare as compare_rows, describe};
use switchyard::eval::merge::merge;
use switchyard::eval::metrics::{budget_table, table};
use switchyard::eval::report::{FaultSource, write_fault_figure, write_report_with};
use switchyard::eval::summary;

#[derive(Args, Debug)]
pub(super) struct ReportArgs {
    /// An eval's output folder (with eval.json and results.jsonl); with --trace, a folder with no
    /// eval in it gets Figure 4 alone. Several folders (the shards of an eval, or evals of other
    /// settings over the same tasks) are merged into --out first.
    #[arg(required = true, num_args = 1..)]
    dirs: Vec<PathBuf>,
    /// With several folders: the merged eval's folder (its eval.json names the folders merged).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
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
    /// Also the kinds of failure, from each eval's scan (`switchyard scan DIR` first): how
    /// many runs each kind holds on each side, the one that grew most first.
    #[arg(long)]
    groups: bool,
    #[arg(long)]
    json: bool,
}

/// `switchyard report DIR`: the paths written, then the main table.
pub(super) fn report(a: ReportArgs) -> Result<ExitCode> {
    let dir = match (a.dirs.as_slice(), &a.out) {
        ([one], None) => one.clone(),
        (_, None) => return Err(eyre!("{} folders to merge: give --out DIR for the merged eval", a.dirs.len())),
        (dirs, Some(out)) => {
            let m = merge(dirs, out)?;
            println!("merged {} folders ({} rows) into {}", dirs.len(), m.rows, out.display());
            for n in &m.notes {
                println!("note: {n}");
            }
            out.clone()
        }
    };
    let events = a.trace.as_deref().map(super::setup::read_trace_noting).transpose()?;
    let fault = a.trace.as_deref().zip(events.as_deref()).map(|(trace, events)| FaultSource {
        trace,
        events,
        tool: a.tool.as_deref(),
        backup: a.backup.as_deref(),
        from: a.from.as_deref(),
    });
    // A folder with no eval in it (a `run`'s trace alone) gets the figure alone.
    if let Some(fault) = fault.filter(|_| !dir.join("eval.json").exists()) {
        for f in write_fault_figure(&dir, fault)? {
            println!("wrote {}", f.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let w = write_report_with(&dir, fault)?;
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
    println!("\ntime and tokens per task:");
    print!("{}", switchyard::eval::markdown::speed_table(&w.summary.settings));
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
pub(super) fn compare(config: &switchyard::config::Config, a: CompareArgs) -> Result<ExitCode> {
    let first = summary::load(&a.first)?;
    let second = summary::load(&a.second)?;
    let c = compare_rows(&first.rows, &second.rows);
    let kinds = if a.groups { Some(super::scan::kinds(config, &a.first, &a.second)?) } else { None };
    if a.json {
        let out = serde_json::json!({
            "first": a.first,
            "second": a.second,
            "cost_unit": first.meta.cost_unit,
            "comparison": c,
            "kinds": kinds,
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
    if let Some(kinds) = &kinds {
        println!("\nkinds of failure (from the scans beside the evals):");
        print!("{}", switchyard::scan::compare::table(kinds));
    }
    Ok(ExitCode::SUCCESS)
}
