//! `trace show`: a recorded run rebuilt from its trace and summarised; the
//! other `trace` commands have a file each.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::Result;

use switchyard::engine::fold::SessionState;
use switchyard::eval::metrics::{Metrics, table};

use switchyard::traces::session_text::{run_json, session_text};

pub(super) mod diff;
pub(super) mod import;
pub(super) mod to_tasks;
pub(super) mod to_trajectories;

#[derive(Subcommand, Debug)]
pub(super) enum TraceCommand {
    /// Rebuild a run's state from its trace and summarise it.
    Show {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Two traces run by run: where each run first diverges, and how the summaries moved.
    Diff(diff::DiffArgs),
    /// A trace's finished runs as tasks (gold answer, tools, first call) of a JSON Lines task file.
    ToTasks(to_tasks::ToTasksArgs),
    /// The successful runs of traces (answered, every tool call succeeded) as ToolNet trajectories, the
    /// file `graph build --trajectories` builds the static graph from.
    ToTrajectories(to_trajectories::ToTrajectoriesArgs),
    /// Send a trace's spans to an OpenTelemetry receiver over OTLP/HTTP.
    Export(super::otel::ExportArgs),
    /// Another agent's own session file as a trace: Claude Code's session, Codex's rollout.
    Import(import::ImportArgs),
}

pub(super) fn show(file: &std::path::Path, json: bool) -> Result<ExitCode> {
    let events = super::setup::read_trace_noting(file)?;
    let state = SessionState::from_events(&events);
    if json {
        let runs: Vec<serde_json::Value> = state.finished.iter().map(run_json).collect();
        let m = Metrics::from_state(state.strategy.map(|s| s.as_str()).unwrap_or("trace"), &state);
        let time = switchyard::eval::timing::TimeSplit::from_events(&events);
        let mut out = serde_json::json!({"events": events.len(), "metrics": m, "time": time, "runs": runs});
        super::run::add_dropped(&mut out, &state);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{}: {} events", file.display(), events.len());
        print!("{}", session_text(&state));
        let m = Metrics::from_state(state.strategy.map(|s| s.as_str()).unwrap_or("trace"), &state);
        print!("{}", table(&[m], &state.cost_unit));
        println!("{}", switchyard::eval::timing::TimeSplit::from_events(&events).describe());
    }
    Ok(ExitCode::SUCCESS)
}
