//! `eval`: strategies compared over a task set, parameter sweeps, and rewoo's model matrix.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::batch::{self, Batch, EvalSpec, matrix_axis};
use switchyard::config::Config;
use switchyard::engine::{ParamChange, StrategyKind};
use switchyard::eval::metrics::{MatrixRow, Metrics, matrix_table, table};
use switchyard::eval::results::{
    EvalMeta, Learned, RESULTS, RowWriter, Tally, by_setting, read_rows, trace_path, write_trace,
};
use switchyard::eval::shard::Shard;
use switchyard::model::Role;
use switchyard::session;
use switchyard::task::Task;

use super::args::Common;

use super::setup::{common_options, runtime, until_signal};

#[derive(Args, Debug)]
pub(super) struct EvalArgs {
    /// Strategies to compare, comma-separated: react, toolnet, rewoo, atc (default: react,toolnet;
    /// with --matrix: rewoo).
    #[arg(long, value_delimiter = ',')]
    strategy: Option<Vec<StrategyKind>>,
    #[command(flatten)]
    common: Common,
    /// How many tools `react` is offered: a number, or `all` (the paper's baseline).
    #[arg(long, default_value = "all")]
    react_k: String,
    /// One row per value: tau=0,0.05,0.1, budget=10,20,30, or narrow=off,graph,retrieval,both
    /// (alpha, beta, top_k, narrow_k too).
    #[arg(long)]
    sweep: Option<String>,
    /// Before measuring, gather experience with one unbudgeted react pass over
    /// the task set (seed + 1), so BTP's v and F̃ see failures, not only the
    /// trajectories' successes.
    #[arg(long)]
    warmup: bool,
    /// Run rewoo once per combination of models: ROLE=MODEL,MODEL..., repeatable, e.g.
    /// --matrix planner=sim-weak,sim-strong --matrix solver=sim-weak,sim-strong.
    #[arg(long = "matrix", value_name = "ROLE=MODELS")]
    matrix: Vec<String>,
    #[arg(long)]
    json: bool,
    /// The setting's name in the results and the report, e.g. the outside
    /// agent's (`--label langgraph`; default: the strategy and what varies).
    /// With one setting only.
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// Run this many tasks at a time, each against the models at once (point
    /// them at a server that batches). Learners (ToolNet's graph, BTP's
    /// experience) commit in task order: task i starts from tasks 1..i−N.
    #[arg(long, default_value_t = 1, value_name = "N")]
    jobs: usize,
    /// Run only tasks I, I+N, I+2N, … (from 0), e.g. one shard per machine of a
    /// Kubernetes indexed job; `report DIR…` merges the shards' folders.
    /// Learners learn from their shard's tasks only.
    #[arg(long, value_name = "I/N", default_value_t = Shard::WHOLE, hide_default_value = true)]
    shard: Shard,
    /// The eval's folder: results.jsonl (a row per task, appended as each
    /// finishes), eval.json and the report (default: DATA_DIR/evals/DATE-TIME).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Keep no trace of each task (`traces/SETTING/task-N.jsonl`, what `scan` and `replay`
    /// read): for a library so large that every trace's list of tools weighs.
    #[arg(long)]
    no_traces: bool,
    /// Go on with the eval in --out DIR: finished tasks are not run again.
    #[arg(long, requires = "out")]
    resume: bool,
    /// Also draw the rows as grouped bars here (SVG): success (or answered, when
    /// no task has a gold answer), and Path% and Prec% when tasks name their gold tools.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,
    #[command(flatten)]
    agent: super::bridge::agent::AgentArgs,
}

pub(super) fn eval(config: &Config, a: EvalArgs) -> Result<ExitCode> {
    let rt = runtime()?;
    let config = &super::bridge::agent::for_agent(&super::setup::with_models(config, &a.common.models)?, &a.agent);
    let mut base = common_options(&a.common)?;
    // Listening before any task starts: each task's agent is given its address.
    let _gateway = super::bridge::agent::bridge(config, &rt, &a.agent, &mut base, false)?;
    if a.agent.agent {
        if a.strategy.is_some() || !a.matrix.is_empty() || a.warmup {
            return Err(eyre!(
                "--agent runs your agent over the tasks: --strategy, --matrix and --warmup do not apply"
            ));
        }
        if a.jobs > 1 {
            return Err(eyre!("--agent runs one task at a time (each task's agent shares the gateway): drop --jobs"));
        }
    }
    let agent_only = [StrategyKind::Agent];
    // A config may carry the budget too (a benchmark's, as `bench import toolbench` writes),
    // which a later `--set budget=none` lifts.
    let set_budget = a.common.set.iter().rev().find_map(|s| s.strip_prefix("budget=").or(s.strip_prefix("B=")));
    let budgeted =
        a.common.budget.is_some() || set_budget.map_or(config.params.budget.is_some(), |b| b.trim() != "none");
    let spec = EvalSpec {
        strategies: if a.agent.agent { Some(&agent_only) } else { a.strategy.as_deref() },
        react_k: &a.react_k,
        sweep: a.sweep.as_deref(),
        matrix: &a.matrix,
        budgeted,
    };
    if a.warmup {
        // The flags are checked before the warm-up's run, not after it.
        batch::settings(config, spec, &base, &[])?;
    }
    let experience = eval_experience(config, &a, &rt)?;
    let mut settings = batch::settings(config, spec, &base, &experience)?;
    if let Some(label) = &a.label {
        match settings.as_mut_slice() {
            [one] if !label.trim().is_empty() => one.label = label.trim().to_string(),
            [_] => return Err(eyre!("--label: the name is empty")),
            many => {
                return Err(eyre!("--label names one setting; this eval compares {}: drop it", many.len()));
            }
        }
    }
    let tasks: Vec<Task> =
        session::load_task_list(config, &settings[0].opts.tasks, a.common.count)?.iter().cloned().collect();
    let jobs = a.jobs.max(1);
    let out = out_dir(config, &a)?;
    // The parameters the tasks ran with: the config's, then each --set.
    let mut params = config.params.clone();
    base.param_changes.iter().for_each(|c| params.apply(c));
    let meta = EvalMeta {
        command: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
        config: config.path.clone(),
        tasks: a.common.tasks.as_ref().map_or_else(|| config.tasks.display().to_string(), |p| p.display().to_string()),
        task_count: tasks.len(),
        seed: a.common.seed.unwrap_or(config.seed),
        jobs,
        shard: a.shard,
        settings: settings.iter().map(|s| s.label.clone()).collect(),
        params: serde_json::to_value(&params)?,
        cost_unit: config.cost_unit.clone(),
        started: chrono::Local::now().to_rfc3339(),
        merged: Vec::new(),
    };
    let results = out.join(RESULTS);
    let (mut rows, torn) = if a.resume {
        meta.check_resume(&out)?;
        read_rows(&results)?
    } else {
        let (old, torn) = read_rows(&results)?;
        if !old.is_empty() || torn {
            return Err(eyre!(
                "{} already holds an eval's results: add --resume to go on with it, or give another --out",
                out.display()
            ));
        }
        meta.write(&out)?;
        (Vec::new(), false)
    };
    if torn {
        eprintln!(
            "{}: the last row was cut short (the eval was killed while writing it); its task runs again",
            results.display()
        );
    }
    let shard_len = a.shard.places(tasks.len()).len();
    let total = (settings.len() * shard_len) as u64;
    let quiet = a.json && !std::io::stdout().is_terminal();
    let bar = if quiet { indicatif::ProgressBar::hidden() } else { super::progress::eval_bar(total) };
    let mut tally = Tally::default();
    for r in &rows {
        tally.add(r);
    }
    bar.set_position(rows.len() as u64);
    bar.set_message(tally.message(&config.cost_unit));
    let mut writer = RowWriter::append(&results)?;
    let mut unit = config.cost_unit.clone();
    for s in &settings {
        let learned: BTreeMap<usize, Learned> =
            rows.iter().filter(|r| r.setting == s.label).map(|r| (r.index, r.learned.clone())).collect();
        if learned.len() >= shard_len {
            continue;
        }
        let of = switchyard::remote::EvalOf { out: out.clone(), tasks: total as u32 };
        let serve = |prepared: &mut session::Prepared, place: usize| {
            super::remote::serve_engine(config, prepared, place, of.clone())
        };
        let batch = Batch {
            config: &s.config,
            opts: &s.opts,
            tasks: &tasks,
            shard: a.shard,
            jobs,
            done: learned,
            on_engine: Some(&serve),
        };
        let mut fresh = Vec::new();
        let outcome = rt.block_on(until_signal(async {
            batch::run(batch, |mut run| {
                let task = &tasks[run.index];
                let events = std::mem::take(&mut run.events);
                if !a.no_traces {
                    write_trace(&trace_path(&out, &s.label, run.index), &events)
                        .map_err(|e| session::SetupError::Invalid(e.to_string()))?;
                }
                let row = run.into_row(&s.label, s.strategy, s.sweep.clone(), task);
                writer.write(&row).map_err(|e| session::SetupError::Invalid(e.to_string()))?;
                tally.add(&row);
                bar.inc(1);
                bar.set_message(tally.message(&unit));
                fresh.push(row);
                Ok(())
            })
            .await
            .map_err(color_eyre::Report::from)
        }));
        rows.extend(fresh);
        if let Err(e) = outcome {
            bar.abandon();
            return Err(e.wrap_err(format!(
                "the eval stopped with {} of {total} tasks recorded in {}; `--resume --out {}` goes on from there",
                rows.len(),
                results.display(),
                out.display()
            )));
        }
        unit = s.config.cost_unit.clone();
    }
    bar.finish_and_clear();
    let grouped = by_setting(&rows);
    let order = |label: &str| meta.settings.iter().position(|s| s == label).unwrap_or(usize::MAX);
    let mut grouped = grouped;
    grouped.sort_by_key(|(label, _)| order(label));
    let metrics: Vec<Metrics> = grouped.iter().map(|(label, rs)| Metrics::from_rows(label.clone(), rs)).collect();
    if let Some(p) = &a.plot {
        switchyard::eval::plot::strategies(p, &metrics)?;
    }
    // Settings under a budget say so in their label (`btp on|off`).
    let budgeted = rows.iter().any(|r| r.budget.is_some()) || settings.iter().any(|s| s.label.contains(" btp "));
    if !a.matrix.is_empty() {
        let varied: Vec<Role> = a.matrix.iter().map(|m| matrix_axis(m).map(|(r, _)| r)).collect::<Result<_, _>>()?;
        let matrix: Vec<MatrixRow> = grouped.iter().map(|(_, rs)| MatrixRow::from_rows(&varied, rs, &unit)).collect();
        if a.json {
            println!("{}", serde_json::to_string_pretty(&matrix)?);
        } else {
            print!("{}", matrix_table(&matrix, &unit));
        }
    } else if a.json {
        println!("{}", serde_json::to_string_pretty(&metrics)?);
    } else {
        print!("{}", table(&metrics, &unit));
        if budgeted {
            print!("{}", switchyard::eval::metrics::budget_table(&metrics, &unit));
        }
    }
    let written = switchyard::eval::report::write_report(&out)?;
    if !a.json {
        println!("results: {}", out.display());
        if let Some(md) = written.first() {
            println!(
                "report: {} ({} plots)",
                md.display(),
                written.iter().filter(|p| p.extension().is_some_and(|e| e == "png")).count()
            );
        }
        if let Some(p) = &a.plot {
            println!("plot: {}", p.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--out`, else a folder named by the date and time in the data directory.
fn out_dir(config: &Config, a: &EvalArgs) -> Result<PathBuf> {
    let dir = match &a.out {
        Some(d) => d.clone(),
        None if a.resume => return Err(eyre!("--resume needs --out DIR: the folder of the eval to go on with")),
        None => {
            let evals = config
                .data_dir()
                .wrap_err("the eval writes its results to a folder: give --out DIR or set a data directory")?
                .join("evals");
            let stamp = chrono::Local::now().format("%Y-%m-%d-%H%M%S").to_string();
            // Two evals started within a second get a folder each.
            (1..)
                .map(|n| if n == 1 { evals.join(&stamp) } else { evals.join(format!("{stamp}-{n}")) })
                .find(|d| !d.exists())
                .unwrap_or_else(|| evals.join(stamp))
        }
    };
    std::fs::create_dir_all(&dir).wrap_err_with(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// BTP's estimates start from the configured trajectories, held in memory:
/// an experiment neither reads nor grows the saved experience.
fn eval_experience(
    config: &Config,
    a: &EvalArgs,
    rt: &tokio::runtime::Runtime,
) -> Result<Vec<switchyard::budget::experience::Experience>> {
    let mut seed_experience = match &config.trajectories {
        Some(p) => switchyard::budget::experience::import_trajectories(p)?,
        None => Vec::new(),
    };
    if a.warmup {
        let mut opts = common_options(&a.common)?;
        opts.seed = Some(opts.seed.unwrap_or(config.seed) + 1);
        opts.strategy = Some(StrategyKind::React);
        opts.btp = Some(false);
        opts.param_changes.push(ParamChange::TopK(session::load_library(config)?.len()));
        opts.experience = session::ExperienceSource::InMemory(seed_experience.clone());
        opts.save_graph = false;
        seed_experience =
            rt.block_on(until_signal(async { Ok(session::run(session::prepare(config, &opts)?).await?) }))?.experience;
    }
    Ok(seed_experience)
}
