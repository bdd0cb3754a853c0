//! `bench import`: a benchmark of `../shared/data` as a config and task
//! files Switchyard runs as they are (`--config OUT/switchyard.toml eval
//! --tasks OUT/tasks/SPLIT.jsonl`), reading the data in place.

mod apibank;
mod cotools;
mod files;
mod rest;
mod score;
mod toolbench;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::{Result, eyre};

use switchyard::dataset::CoToolsBench;

#[derive(Subcommand, Debug)]
pub(super) enum BenchCommand {
    /// Turn a dataset folder into OUT/switchyard.toml and OUT/tasks/*.jsonl.
    /// Known: atc-tmdb (ATC's RestBench-TMDB, 20 candidates a task), restbench (its TMDB split),
    /// the CoTools/ToolkenGPT sets funcqa, gsm8k-xl, kamel and simpletoolquestions (a task file per
    /// test split present), api-bank (its level-1 and level-2 sample dialogues, one task per API
    /// call) and toolbench (ToolBench's default evalset, 600 queries).
    Import {
        /// atc-tmdb, restbench, funcqa, gsm8k-xl, kamel, simpletoolquestions, api-bank or toolbench.
        name: String,
        /// The dataset's folder, e.g. ../shared/data/atc-tmdb.
        dir: PathBuf,
        /// Where the config and the task files go.
        out: PathBuf,
        /// The TMDB OpenAPI spec (default: restbench/specs/tmdb_oas.json beside the dataset).
        #[arg(long)]
        spec: Option<PathBuf>,
    },
    /// API-Bank's call accuracy of runs traced with `run --trace`: the first call of each run
    /// against its task's gold call (tasks with a `gold_call`, as `import api-bank` writes them).
    Score {
        /// The task file the runs ran.
        #[arg(long)]
        tasks: PathBuf,
        /// Traces of `run --trace`, one per setting.
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

pub(super) fn run(cmd: BenchCommand) -> Result<ExitCode> {
    match cmd {
        BenchCommand::Import { name, dir, out, spec } => import(&name, &dir, &out, spec),
        BenchCommand::Score { tasks, traces, json } => score::score(&tasks, &traces, json),
    }
}

fn import(name: &str, dir: &Path, out: &Path, spec: Option<PathBuf>) -> Result<ExitCode> {
    if let Some(bench) = CoToolsBench::from_name(name) {
        if spec.is_some() {
            return Err(eyre!("--spec is for the TMDB benchmarks (atc-tmdb, restbench), not {name}"));
        }
        return cotools::import(bench, dir, out);
    }
    if matches!(name, "api-bank" | "toolbench") && spec.is_some() {
        return Err(eyre!("--spec is for atc-tmdb and restbench; {name} brings its own tools"));
    }
    match name {
        "api-bank" => apibank::import(dir, out),
        "toolbench" => toolbench::import(dir, out),
        "atc-tmdb" | "restbench" => rest::import(name, dir, out, spec),
        other => Err(eyre!(
            "unknown benchmark '{other}' (known: atc-tmdb, restbench, funcqa, gsm8k-xl, kamel, \
             simpletoolquestions, api-bank, toolbench)"
        )),
    }
}
