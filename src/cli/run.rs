//! `run`: tasks headless.

use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::Result;

use switchyard::config::Config;
use switchyard::engine::fold::SessionState;
use switchyard::eval::metrics::{Metrics, table};
use switchyard::remote::SessionKind;
use switchyard::session;

use super::args::{GraphTapeArgs, SessionArgs};
use super::bridge::agent::{AgentArgs, bridge, for_agent};
use super::setup::{Ran, run_headless, runtime, say_suspended, session_options};
use switchyard::traces::session_text::{run_json, session_text};

#[derive(Args, Debug, Default)]
pub(super) struct RunArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
    /// Milliseconds to wait before each call, so a viewer (`switchyard attach`) can follow.
    #[arg(long, default_value_t = 0)]
    pace: u64,
    #[command(flatten)]
    graph_tape: GraphTapeArgs,
    #[command(flatten)]
    agent: AgentArgs,
}

pub(super) fn run(config: &Config, a: RunArgs) -> Result<ExitCode> {
    let debug = super::debug::headless(config, &a.session)?;
    let waits = !debug.is_empty();
    let mut opts = session_options(&a.session, &a.graph_tape)?;
    opts.schedule.extend(debug);
    opts.trace = a.session.trace.clone();
    opts.pace_ms = a.pace;
    let rt = runtime()?;
    let config = &for_agent(&super::setup::with_models(config, &a.session.common.models)?, &a.agent);
    // Listening before the session starts: the agent is given its address.
    let _gateway = bridge(config, &rt, &a.agent, &mut opts, true)?;
    let mut prepared = session::prepare(config, &opts)?;
    let endpoint = super::remote::serve(config, &rt, &mut prepared, SessionKind::Run, opts.trace.as_deref())?;
    if let Some(e) = &endpoint {
        let id = e.id();
        eprintln!("session {id}: switchyard attach {id} opens the workbench on it, switchyard ctl {id} steers it");
        if waits {
            eprintln!("session {id}: waits at each approval and breakpoint for attach or ctl ({id} approve, resume)");
        }
    }
    match run_headless(&rt, prepared)? {
        Ran::Done(outcome) => report(&outcome.state, a.json, a.session.trace.as_deref()),
        Ran::Suspended => Ok(say_suspended(a.session.trace.as_deref())),
    }
}

/// The summary of a headless session, as text or JSON; exit 2 when a model
/// failed for good.
pub(super) fn report(state: &SessionState, json: bool, trace: Option<&std::path::Path>) -> Result<ExitCode> {
    let metrics = Metrics::from_state(state.strategy.map(|s| s.as_str()).unwrap_or("run"), state);
    if json {
        let runs: Vec<serde_json::Value> = state.finished.iter().map(run_json).collect();
        let mut out = serde_json::json!({
            "metrics": metrics, "models": accounts_json(state), "runs": runs, "trace": trace,
        });
        add_dropped(&mut out, state);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", session_text(state));
        print!("{}", table(std::slice::from_ref(&metrics), &state.cost_unit));
        if state.totals.budgeted || state.params.budget.is_some() {
            print!("{}", switchyard::eval::metrics::budget_table(std::slice::from_ref(&metrics), &state.cost_unit));
        }
        for ((role, model), acc) in &state.accounts {
            println!(
                "{role:<10} {model:<12} {:>5} calls {:>9} tokens in {:>7} out {:>10.4} {}",
                acc.calls, acc.usage.prompt_tokens, acc.usage.completion_tokens, acc.cost, state.cost_unit
            );
        }
        if let Some(t) = trace {
            println!("trace: {}", t.display());
        }
    }
    // A model that failed for good (down, refusing the key, ...) is worth a
    // non-zero exit even though the summary was printed.
    if let Some((run, error)) = &state.totals.first_failure {
        eprintln!("error: {} of {} runs failed; the first, run {run}: {error}", state.totals.failed, state.totals.runs);
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// `runs` lists the runs the state kept (the latest); say how many earlier
/// ones it left out, if any.
pub(super) fn add_dropped(out: &mut serde_json::Value, state: &SessionState) {
    if state.runs_dropped() > 0 {
        out["runs_dropped"] = state.runs_dropped().into();
    }
}

/// Calls, tokens and cost per role and model.
fn accounts_json(state: &SessionState) -> Vec<serde_json::Value> {
    state
        .accounts
        .iter()
        .map(|((role, model), a)| {
            let simulated = state.models.iter().any(|m| m.model.name == *model && m.model.simulated);
            serde_json::json!({
                "role": role, "model": model, "simulated": simulated, "calls": a.calls,
                "prompt_tokens": a.usage.prompt_tokens, "completion_tokens": a.usage.completion_tokens,
                "cost": a.cost, "latency_ms": a.latency_ms,
            })
        })
        .collect()
}
