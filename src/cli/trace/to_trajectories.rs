//! `trace to-trajectories TRACE...`: the successful runs of traces as
//! ToolNet trajectories, for `graph build --trajectories FILE`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::traces::trajectories::trajectories_from_events;

#[derive(Args, Debug)]
pub(crate) struct ToTrajectoriesArgs {
    /// Traces written by `run --trace`, `eval`, the workbench or an agent's session.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// Append the trajectories to this JSON Lines file; without it they are printed.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn to_trajectories(a: ToTrajectoriesArgs) -> Result<ExitCode> {
    let mut lines = String::new();
    let mut count = 0;
    for trace in &a.traces {
        let events = crate::cli::setup::read_trace_noting(trace)?;
        let (kept, left) = trajectories_from_events(&events);
        for (run, why) in &left {
            eprintln!("{} run {run}: left out: {why}", trace.display());
        }
        for t in &kept {
            lines.push_str(&serde_json::to_string(t)?);
            lines.push('\n');
        }
        count += kept.len();
    }
    if count == 0 {
        return Err(eyre!("no run answered with every tool call succeeding: no trajectory written"));
    }
    match &a.out {
        None => print!("{lines}"),
        Some(out) => {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(out)
                .wrap_err_with(|| format!("could not open {}", out.display()))?;
            file.write_all(lines.as_bytes()).wrap_err_with(|| format!("could not write {}", out.display()))?;
            eprintln!(
                "{count} trajectories appended to {}; `switchyard graph build --trajectories {}` builds the graph",
                out.display(),
                out.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
