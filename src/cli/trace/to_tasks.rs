//! `trace to-tasks TRACE`: a trace's finished runs as tasks of a JSON Lines
//! task file, so a run found wrong (or right) becomes an eval case.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::eval::cases::{Added, append, assign_ids, cases_from_events, choose_runs};

#[derive(Args, Debug)]
pub(crate) struct ToTasksArgs {
    /// A trace written by `run --trace` or by the workbench.
    trace: PathBuf,
    /// The runs to take, e.g. 1,3-5 (default: all; only runs that finished with an answer make tasks).
    #[arg(long, value_name = "LIST")]
    runs: Option<String>,
    /// Append the tasks to this .jsonl task file (ids made unique in it, a task it already holds
    /// not written again); without it they are printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn to_tasks(a: ToTasksArgs) -> Result<ExitCode> {
    let events = crate::cli::setup::read_trace_noting(&a.trace)?;
    let chosen = match &a.runs {
        None => None,
        Some(list) => {
            Some(choose_runs(&events, list).map_err(|why| eyre!("--runs {list}: {why} ({})", a.trace.display()))?)
        }
    };
    let (cases, skipped) = cases_from_events(&events, chosen.as_ref());
    for (_, why) in &skipped {
        eprintln!("skipped: {why}");
    }
    for note in cases.iter().filter_map(|c| c.note.as_ref()) {
        eprintln!("note: {note}");
    }
    if cases.is_empty() {
        return Err(eyre!("no chosen run of {} finished with an answer: no task written", a.trace.display()));
    }
    let added = match &a.out {
        Some(out) => append(out, &cases)?,
        None => {
            let assigned = assign_ids(&[], &cases);
            for task in assigned.iter().filter_map(|(t, _)| t.as_ref()) {
                println!("{}", serde_json::to_string(task)?);
            }
            assigned.into_iter().map(|(_, a)| a).collect()
        }
    };
    let new: Vec<String> = added
        .iter()
        .filter_map(|x| match x {
            Added::New { run, id } => Some(format!("run {run} → {id}")),
            Added::Present { .. } => None,
        })
        .collect();
    for x in &added {
        if let Added::Present { run, id } = x {
            eprintln!("run {run}: already in the file as {id}");
        }
    }
    let whither = a.out.as_ref().map_or("printed".to_string(), |p| format!("appended to {}", p.display()));
    eprintln!("{} task{} {whither}: {}", new.len(), if new.len() == 1 { "" } else { "s" }, new.join(", "));
    Ok(ExitCode::SUCCESS)
}
