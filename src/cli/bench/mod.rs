//! `bench import`: a benchmark of `../shared/data` as a config and task
//! files Switchyard runs as they are (`--config OUT/switchyard.toml eval
//! --tasks OUT/tasks/SPLIT.jsonl`), reading the data in place.

mod apibank;
mod cotools;
mod files;
mod score;
mod toolbench;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::dataset::CoToolsBench;
use switchyard::dataset::restbench::{self, RestTask, tool_key};
use switchyard::session;

use files::toml_string;

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
    let (file, default_spec) = match name {
        "api-bank" => return apibank::import(dir, out),
        "toolbench" => return toolbench::import(dir, out),
        "atc-tmdb" => (dir.join("tmdb.data.candidate=20.v2.json"), dir.join("../restbench/specs/tmdb_oas.json")),
        "restbench" => (dir.join("datasets/tmdb.json"), dir.join("specs/tmdb_oas.json")),
        other => {
            return Err(eyre!(
                "unknown benchmark '{other}' (known: atc-tmdb, restbench, funcqa, gsm8k-xl, kamel, \
                 simpletoolquestions, api-bank, toolbench)"
            ));
        }
    };
    let spec = spec.unwrap_or(default_spec);
    let spec = spec.canonicalize().wrap_err_with(|| format!("the TMDB OpenAPI spec {}", spec.display()))?;
    let tasks = restbench::load(&file)?;
    std::fs::create_dir_all(out.join("tasks")).wrap_err_with(|| format!("cannot create {}", out.display()))?;
    let config_path = out.join("switchyard.toml");
    let spec_text = toml_string(&spec.display().to_string());
    let config_text = format!(
        "# Written by `switchyard bench import {name}` from {}.\n\
         # The TMDB API needs a key and a network: each tool answers with a value synthesized\n\
         # from its documented response schema (executor `synthesized`), the same for the same\n\
         # seed and call. Success then means the program ran to an answer, not that it is right.\n\
         library = [{spec_text}]\n\
         data_dir = \"data\"\n\
         tasks = \"tasks/tmdb.jsonl\"\n\
         # No past runs: ToolNet starts from a uniform graph and learns.\n\
         trajectories = \"trajectories.jsonl\"\n\
         strategy = \"atc\"\n\n\
         [params]\n\
         # ATC's setting: every candidate of a task is offered.\n\
         top_k = 20\n\n\
         [[library_options]]\n\
         path = {spec_text}\n\
         executor = {{ kind = \"synthesized\" }}\n",
        file.display()
    );
    std::fs::write(&config_path, config_text).wrap_err_with(|| format!("cannot write {}", config_path.display()))?;
    let trajectories = out.join("trajectories.jsonl");
    std::fs::write(&trajectories, "").wrap_err_with(|| format!("cannot write {}", trajectories.display()))?;
    let config = Config::load(&config_path)?;
    let library = session::load_library(&config)?;
    let names: Vec<&str> = library.names().collect();
    let resolve = |task: &RestTask, n: &str| -> Result<String> {
        let key = tool_key(n);
        names.iter().find(|l| tool_key(l) == key).map(|l| l.to_string()).ok_or_else(|| {
            eyre!(
                "{}: task {} names '{n}', which the spec {} has no operation for",
                file.display(),
                task.id,
                spec.display()
            )
        })
    };
    let path = out.join("tasks/tmdb.jsonl");
    let mut w = std::io::BufWriter::new(
        std::fs::File::create(&path).wrap_err_with(|| format!("cannot write {}", path.display()))?,
    );
    for t in &tasks {
        let tools = t.solution.iter().map(|n| resolve(t, n)).collect::<Result<Vec<_>>>()?;
        let candidates = t.candidates.iter().map(|n| resolve(t, n)).collect::<Result<Vec<_>>>()?;
        let line = serde_json::json!({"id": t.id, "query": t.query, "tools": tools, "candidates": candidates});
        writeln!(w, "{line}")?;
    }
    w.flush()?;
    println!("{} tasks → {}\nconfig → {}", tasks.len(), path.display(), config_path.display());
    println!(
        "run: switchyard --config {} eval --strategy atc,react,toolnet,rewoo --react-k 20 --tasks {}",
        config_path.display(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
