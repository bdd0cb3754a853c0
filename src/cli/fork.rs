//! `fork`: time travel, headless. A recorded trace is replayed up to an
//! event (no model or tool is called for that part) and the session goes on
//! live from there, with the user's changes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::engine::event::EventKind;
use switchyard::engine::trace::read_trace;
use switchyard::engine::{Control, StrategyKind};
use switchyard::model::Role;
use switchyard::session::fork::{ForkRequest, prepare_fork};
use switchyard::session::{SessionOptions, TaskSource};

use super::args::Common;
use super::run::report;
use super::setup::{Ran, common_options, run_headless, runtime, say_suspended, stamp};

#[derive(Args, Debug)]
pub(super) struct ForkArgs {
    /// The parent: a trace written by `run --trace`, the workbench or another fork.
    file: PathBuf,
    /// Replay this many of its events, then go on live (the cursor `switchyard replay` shows).
    #[arg(long, value_name = "N")]
    at: usize,
    /// Replace the answer the cursor is on: a model reply's text, or a tool result (JSON).
    #[arg(long, value_name = "TEXT")]
    answer: Option<String>,
    /// At the fork point: change a parameter (alpha, beta, tau, budget, top_k, weight_format, max_steps, narrow, narrow_k).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// At the fork point: break a tool, TOOL:MODE[:SCOPE].
    #[arg(long = "fault", value_name = "SPEC")]
    faults: Vec<String>,
    /// At the fork point: give a role another configured model.
    #[arg(long = "model", value_name = "ROLE=MODEL")]
    models: Vec<String>,
    /// At the fork point: new text for the task under way (its run starts again with it).
    #[arg(long, value_name = "TEXT")]
    task_text: Option<String>,
    /// The task file the parent ran, when it is not the config's.
    #[arg(long)]
    tasks: Option<PathBuf>,
    /// Where the fork's trace goes (default: DATA_DIR/traces/fork-SECONDS.jsonl).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Timestamps in ticks after the fork point, as `run --logical-clock`.
    #[arg(long)]
    logical_clock: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

pub(super) fn fork(config: &Config, a: ForkArgs) -> Result<ExitCode> {
    let controls = fork_controls(&a)?;
    let (mut opts, trace) = replayed_options(config, a.logical_clock, a.tasks.as_ref(), a.trace.as_ref(), "fork")?;
    let req =
        ForkRequest { parent: a.file.clone(), at: a.at, answer: a.answer.clone(), controls, ..ForkRequest::default() };
    let rt = runtime()?;
    let (config, _gateway) = agent_for_fork(config, &rt, &a.file, &mut opts)?;
    let mut prepared = prepare_fork(&config, &req, &opts)?;
    let kind = switchyard::remote::SessionKind::Run;
    let _endpoint = super::remote::serve(&config, &rt, &mut prepared, kind, Some(&trace))?;
    let outcome = match run_headless(&rt, prepared)? {
        Ran::Done(outcome) => outcome,
        Ran::Suspended => return Ok(say_suspended(Some(&trace))),
    };
    if !a.json {
        println!("forked from {} after its event {}", a.file.display(), a.at);
    }
    report(&outcome.state, a.json, Some(&trace))
}

/// The options of a session that replays a trace first (a fork, a
/// resume): the clock, the task file when it is not the config's, and its
/// trace (default: DATA_DIR/traces/PREFIX-SECONDS.jsonl), returned too.
pub(super) fn replayed_options(
    config: &Config,
    logical_clock: bool,
    tasks: Option<&PathBuf>,
    trace: Option<&PathBuf>,
    prefix: &str,
) -> Result<(SessionOptions, PathBuf)> {
    let mut opts = common_options(&Common { logical_clock, ..Common::default() })?;
    if let Some(t) = tasks {
        opts.tasks = TaskSource::File(t.clone());
    }
    let trace = match trace {
        Some(t) => t.clone(),
        None => config.data_paths()?.traces().join(format!("{prefix}-{}.jsonl", stamp())),
    };
    opts.trace = Some(trace.clone());
    Ok((opts, trace))
}

/// An outside agent's session: its command is started again, behind a
/// gateway of its own, and its first calls answered from the trace. The
/// config gets the agent role; the gateway lives as long as the fork.
pub(super) fn agent_for_fork(
    config: &Config,
    rt: &tokio::runtime::Runtime,
    parent: &std::path::Path,
    opts: &mut switchyard::session::SessionOptions,
) -> Result<(Config, Option<switchyard::gateway::Gateway>)> {
    match recorded_agent(parent)? {
        None => Ok((config.clone(), None)),
        Some((argv, answer_file)) => {
            let config = super::bridge::agent::with_agent_role(config);
            let (gateway, _) = super::bridge::agent::start_agent(&config, rt, None, argv, answer_file, opts)?;
            Ok((config, Some(gateway)))
        }
    }
}

/// The agent command a trace of an outside agent's session started, `{task}`
/// unfilled, and where it wrote its answer; None for Switchyard's own
/// strategies.
fn recorded_agent(trace: &std::path::Path) -> Result<Option<(Vec<String>, Option<PathBuf>)>> {
    let events = read_trace(trace)?;
    let agent =
        events.iter().any(|e| matches!(e.kind, EventKind::SessionStarted { strategy: StrategyKind::Agent, .. }));
    if !agent {
        return Ok(None);
    }
    let started = events.iter().find_map(|e| match &e.kind {
        EventKind::AgentStarted { argv, answer_file, .. } if !argv.is_empty() => {
            Some((argv.clone(), answer_file.clone()))
        }
        _ => None,
    });
    started.map(Some).ok_or_else(|| {
        eyre!(
            "{}: the agent of this session was not started by Switchyard (`switchyard gateway`, `ui --gateway`, or a \
             trace older than the agent's recorded command): it cannot be started again to answer from the trace",
            trace.display()
        )
    })
}

/// The user's changes, as the controls the fork applies at its fork point.
fn fork_controls(a: &ForkArgs) -> Result<Vec<Control>> {
    let mut controls = Vec::new();
    if let Some(text) = &a.task_text {
        controls.push(Control::EditTask { text: text.clone() });
    }
    // The same spellings as `run`'s flags; a fault's @TASK makes no sense here.
    if let Some(f) = a.faults.iter().find(|f| f.contains('@')) {
        return Err(eyre!("--fault {f}: a fork's faults start at the fork point (no @TASK)"));
    }
    let common = Common { set: a.set.clone(), faults: a.faults.clone(), ..Common::default() };
    let opts = common_options(&common)?;
    controls.extend(opts.param_changes.into_iter().map(|change| Control::SetParam { change }));
    controls.extend(opts.schedule.into_iter().map(|s| s.control));
    for m in &a.models {
        let (role, model) = m.split_once('=').ok_or_else(|| eyre!("--model {m}: expected ROLE=MODEL"))?;
        let role = Role::parse(role.trim()).ok_or_else(|| {
            eyre!("--model {m}: unknown role '{role}' (actor, evaluator, planner, solver, classifier, judge)")
        })?;
        controls.push(Control::SwitchModel { role, model: model.trim().to_string() });
    }
    Ok(controls)
}
