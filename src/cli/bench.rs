//! `bench import` (the library's `import`) and `bench score` (API-Bank's
//! call accuracy of traced runs, `eval::apibank::score_trace`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::{Result, eyre};

use switchyard::eval::apibank::{NAME_ONLY, score_trace};
use switchyard::task::{GoldCall, load_tasks};

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
        /// The dataset's folder, e.g. data/atc-tmdb.
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
        BenchCommand::Import { name, dir, out, spec } => {
            let report = switchyard::import::import(&name, &dir, &out, spec)?;
            for w in &report.warnings {
                eprintln!("{w}");
            }
            for l in &report.lines {
                println!("{l}");
            }
            Ok(ExitCode::SUCCESS)
        }
        BenchCommand::Score { tasks, traces, json } => score(&tasks, &traces, json),
    }
}

fn score(tasks: &Path, traces: &[PathBuf], json: bool) -> Result<ExitCode> {
    let gold: HashMap<String, GoldCall> =
        load_tasks(tasks)?.into_iter().filter_map(|t| Some((t.id, t.gold_call?))).collect();
    if gold.is_empty() {
        return Err(eyre!("{}: no task has a gold_call to score against", tasks.display()));
    }
    let rows = traces.iter().map(|t| score_trace(t, &gold)).collect::<Result<Vec<_>, _>>()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<12} {:>6} {:>10} {:>10} {:>12}  trace", "strategy", "runs", "API name", "call acc", "w/o by-name");
    for r in &rows {
        let pct = |n: usize| 100.0 * n as f64 / r.runs.max(1) as f64;
        let others = r.call_acc_others_pct.map_or("-".to_string(), |p| format!("{p:.1}%"));
        println!(
            "{:<12} {:>6} {:>9.1}% {:>9.1}% {:>12}  {}",
            r.strategy,
            r.runs,
            pct(r.name_correct),
            r.call_acc_pct,
            others,
            r.trace.display()
        );
    }
    if let Some(r) = rows.iter().find(|r| r.name_only > 0) {
        println!(
            "({} of {} runs are of tasks whose gold is {}, judged by name alone; w/o by-name: the others)",
            r.name_only,
            r.runs,
            NAME_ONLY.join(", ")
        );
    }
    println!("(API-Bank call accuracy: the first call of a run is its task's gold call, arguments and all;");
    println!(" API name: its tool is the gold one; over the runs of tasks with a gold call)");
    Ok(ExitCode::SUCCESS)
}
