//! `plan` and `experience`: BTP's budget plan for a task and the experience it is drawn from.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::session;

#[derive(Subcommand, Debug)]
pub(super) enum ExperienceCommand {
    /// Read past trajectories (JSON Lines of {"query", "tools"}) into the store.
    Import { file: PathBuf },
    /// How many usages the store holds, per tool.
    Show,
}

pub(super) fn plan(config: &Config, task: &str, budget: Option<f64>, tau: Option<f64>, json: bool) -> Result<ExitCode> {
    let budget =
        budget.or(config.params.budget).ok_or_else(|| eyre!("no budget: give --budget B (or set params.budget)"))?;
    let tau = tau.unwrap_or(config.params.tau);
    let report = session::plan_task(config, task, budget, tau)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "B = {:.2}, c_s = {:.2}, R = {:.2}, τ = {tau}, λ = {}; {} experience records",
        report.budget, report.fixed_cost, report.remaining, report.lambda, report.experience
    );
    println!("{:<22} {:>8} {:>6} {:>6} {:>6} {:>11}", "tool", "cost", "v", "F̃", "calls", "plan cost");
    for r in &report.rows {
        println!(
            "{:<22} {:>8.2} {:>6.2} {:>6.2} {:>6} {:>11.2}{}",
            r.tool,
            r.cost,
            r.value,
            r.freq,
            r.calls,
            r.cost * f64::from(r.calls),
            if r.defaulted { "  (no experience: defaults)" } else { "" }
        );
    }
    println!("planned: {} calls, {:.2} of R = {:.2}", report.planned_calls, report.planned_cost, report.remaining);
    Ok(ExitCode::SUCCESS)
}

pub(super) fn experience_import(config: &Config, file: &std::path::Path) -> Result<ExitCode> {
    let records = switchyard::budget::experience::import_trajectories(file)?;
    let path = config.data_paths()?.experience();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("could not create {}", dir.display()))?;
    }
    let mut store = switchyard::budget::experience::ExperienceStore::open(&path)?;
    store.append(&records)?;
    println!("imported {} tool usages from {} into {}", records.len(), file.display(), path.display());
    Ok(ExitCode::SUCCESS)
}

pub(super) fn experience_show(config: &Config) -> Result<ExitCode> {
    let path = config.data_paths()?.experience();
    let records = switchyard::budget::experience::ExperienceStore::read(&path)?;
    let mut per_tool: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for r in &records {
        let e = per_tool.entry(r.tool.as_str()).or_default();
        e.0 += 1;
        e.1 += usize::from(r.helpful);
    }
    println!("{}: {} usages", path.display(), records.len());
    for (tool, (n, good)) in per_tool {
        println!("  {tool:<24} {n:>5} used {good:>5} helpful");
    }
    Ok(ExitCode::SUCCESS)
}
