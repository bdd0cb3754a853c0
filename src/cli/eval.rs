//! `eval`: strategies compared over a task set, parameter sweeps, and rewoo's model matrix.

use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::engine::{ParamChange, StrategyKind};
use switchyard::eval::report::{MatrixRow, Metrics, matrix_table, table};
use switchyard::model::Role;
use switchyard::session::{self, GraphSource, SessionOptions};

use super::args::Common;
use std::collections::HashMap;

use super::setup::{common_options, runtime, until_sigterm};

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
    /// One row per value: tau=0,0.05,0.1 or budget=10,20,30.
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
    /// Also draw the rows as grouped bars here (SVG): success (or answered, when
    /// no task has a gold answer), and Path% and Prec% when tasks name their gold tools.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<std::path::PathBuf>,
}

pub(super) fn eval(config: &Config, a: EvalArgs) -> Result<ExitCode> {
    if !a.matrix.is_empty() {
        return eval_matrix(config, a);
    }
    let rt = runtime()?;
    let mut rows = Vec::new();
    let mut unit = config.cost_unit.clone();
    let sweep: Vec<(String, String)> = match &a.sweep {
        None => vec![(String::new(), String::new())],
        Some(spec) => {
            let (name, values) = spec.split_once('=').ok_or_else(|| eyre!("--sweep: expected NAME=V1,V2,..."))?;
            if !matches!(name, "tau" | "budget" | "alpha" | "beta" | "top_k") {
                return Err(eyre!("--sweep: '{name}' cannot be swept (tau, budget, alpha, beta, top_k)"));
            }
            values.split(',').map(|v| (name.to_string(), v.trim().to_string())).collect()
        }
    };
    let seed_experience = eval_experience(config, &a, &rt)?;
    // A config may carry the budget too (a benchmark's, as `bench import toolbench` writes),
    // which a later `--set budget=none` lifts.
    let set_budget = a.common.set.iter().rev().find_map(|s| s.strip_prefix("budget=").or(s.strip_prefix("B=")));
    let budgeted = a.common.budget.is_some()
        || set_budget.map_or(config.params.budget.is_some(), |b| b.trim() != "none")
        || a.sweep.as_deref().is_some_and(|s| s.starts_with("budget="));
    let strategies = a.strategy.clone().unwrap_or_else(|| vec![StrategyKind::React, StrategyKind::Toolnet]);
    for (sweep_name, sweep_value) in &sweep {
        for strategy in &strategies {
            let mut opts = eval_options(&a.common, &seed_experience)?;
            if !sweep_name.is_empty() {
                opts.param_changes.push(
                    ParamChange::parse(&format!("{sweep_name}={sweep_value}")).map_err(|e| eyre!("--sweep: {e}"))?,
                );
            }
            opts.strategy = Some(*strategy);
            let mut label = strategy.as_str().to_string();
            if *strategy == StrategyKind::React {
                let k = if a.react_k == "all" {
                    session::load_library(config)?.len()
                } else {
                    a.react_k.parse().map_err(|_| eyre!("--react-k: '{}' is neither a number nor 'all'", a.react_k))?
                };
                opts.param_changes.push(ParamChange::TopK(k));
                label = format!("react (k={})", a.react_k);
            }
            if budgeted {
                let on = opts.btp.unwrap_or(config.btp.enabled);
                label = format!("{label} btp {}", if on { "on" } else { "off" });
            }
            if !sweep_name.is_empty() {
                label = format!("{label} {sweep_name}={sweep_value}");
            }
            let mut gold: HashMap<String, Vec<String>> = HashMap::new();
            let outcome = rt.block_on(until_sigterm(async {
                let prepared = session::prepare(config, &opts)?;
                gold = prepared.tasks.iter().map(|t| (t.id.clone(), t.tools.clone())).collect();
                Ok(session::run(prepared).await?)
            }))?;
            unit = outcome.state.cost_unit.clone();
            rows.push(Metrics::from_state(label, &outcome.state).with_gold(&outcome.state.finished, &gold));
        }
    }
    if let Some(p) = &a.plot {
        plot(p, &rows)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows, &unit));
        if let Some(p) = &a.plot {
            println!("plot: {}", p.display());
        }
        if budgeted {
            print!("{}", switchyard::eval::report::budget_table(&rows, &unit));
        }
    }
    Ok(ExitCode::SUCCESS)
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
            rt.block_on(until_sigterm(async { Ok(session::run(session::prepare(config, &opts)?).await?) }))?.experience;
    }
    Ok(seed_experience)
}

/// One measured session of an experiment: it starts from the trajectories
/// and the given experience, and leaves the saved graph, experience and
/// tool labels alone.
fn eval_options(common: &Common, experience: &[switchyard::budget::experience::Experience]) -> Result<SessionOptions> {
    let mut opts = common_options(common)?;
    opts.experience = session::ExperienceSource::InMemory(experience.to_vec());
    opts.graph = GraphSource::Fresh;
    opts.save_graph = false;
    opts.fresh_categories = true;
    Ok(opts)
}

/// `--matrix ROLE=A,B`: the role and its models.
fn matrix_axis(spec: &str) -> Result<(Role, Vec<String>)> {
    let (role, models) = spec
        .split_once('=')
        .ok_or_else(|| eyre!("--matrix {spec}: expected ROLE=MODEL,MODEL..., e.g. planner=sim-weak,sim-strong"))?;
    let role = Role::parse(role.trim()).ok_or_else(|| {
        eyre!("--matrix {spec}: unknown role '{}' (planner, solver, classifier, actor, evaluator, judge)", role.trim())
    })?;
    let models: Vec<String> = models.split(',').map(|m| m.trim().to_string()).collect();
    if models.iter().any(String::is_empty) {
        return Err(eyre!("--matrix {spec}: an empty model name"));
    }
    Ok((role, models))
}

/// The rewoo paper's Table 4: every combination of the listed models in
/// their roles, each a fresh session over the same tasks with the same seed.
fn eval_matrix(config: &Config, a: EvalArgs) -> Result<ExitCode> {
    if let Some(s) = a.strategy.as_ref().filter(|s| s.iter().any(|k| *k != StrategyKind::Rewoo)) {
        let given: Vec<&str> = s.iter().map(|k| k.as_str()).collect();
        return Err(eyre!(
            "--matrix runs the rewoo strategy; --strategy {} conflicts with it (drop --strategy or give rewoo)",
            given.join(",")
        ));
    }
    if a.sweep.is_some() {
        return Err(eyre!("--matrix and --sweep exclude each other: vary the models or a parameter"));
    }
    let axes = a.matrix.iter().map(|m| matrix_axis(m)).collect::<Result<Vec<_>>>()?;
    let cells = session::model_matrix(config, &axes).map_err(|e| eyre!("--matrix: {e}"))?;
    let varied: Vec<Role> = axes.iter().map(|(r, _)| *r).collect();
    let rt = runtime()?;
    let seed_experience = eval_experience(config, &a, &rt)?;
    let mut rows = Vec::new();
    for cell in &cells {
        let mut opts = eval_options(&a.common, &seed_experience)?;
        opts.strategy = Some(StrategyKind::Rewoo);
        let outcome =
            rt.block_on(until_sigterm(async { Ok(session::run(session::prepare(&cell.config, &opts)?).await?) }))?;
        rows.push(MatrixRow::from_state(&varied, &outcome.state));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        let unit = rows.first().map(|r| r.cost_unit.clone()).unwrap_or_else(|| config.cost_unit.clone());
        print!("{}", matrix_table(&rows, &unit));
    }
    Ok(ExitCode::SUCCESS)
}

/// The rows as grouped bars: what was solved (or answered, where nothing
/// can be judged), and the path measures where there are gold tools.
fn plot(path: &std::path::Path, rows: &[Metrics]) -> Result<()> {
    use super::chart::{COLOURS, Series, grouped_bars};
    let judged = rows.iter().any(|m| m.judged > 0);
    let mut series = vec![Series {
        label: if judged { "success".into() } else { "answered".into() },
        colour: COLOURS[0],
        values: rows.iter().map(|m| Some(100.0 * if judged { m.success_rate } else { m.answered_rate })).collect(),
    }];
    if rows.iter().any(|m| m.path_pct.is_some()) {
        series.push(Series {
            label: "Path%".into(),
            colour: COLOURS[2],
            values: rows.iter().map(|m| m.path_pct).collect(),
        });
        series.push(Series {
            label: "Prec%".into(),
            colour: COLOURS[4],
            values: rows.iter().map(|m| m.prec_pct).collect(),
        });
    }
    let names: Vec<String> = rows.iter().map(|m| m.label.clone()).collect();
    grouped_bars(path, "Strategies on the same tasks (%)", &names, &series)
}
