//! `ui` and `replay`: the workbench, live or over a recorded trace.

use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::engine::fork::AtForkPoint;
use switchyard::engine::trace::read_trace_file;
use switchyard::remote::SessionKind;
use switchyard::session::fork::{ForkRequest, prepare_fork};
use switchyard::session::{self, SessionOptions};
use switchyard::ui::Theme;
use switchyard::ui::term::LiveEnd;

use super::args::{GraphTapeArgs, SessionArgs};
use super::bridge::agent::{AgentArgs, bridge, for_agent, gateway_only, with_agent_role};
use super::setup::{runtime, session_options, stamp};

// The workbench always writes a trace, so its help says where by default; and
// `replay` is already the subcommand that replays a trace, so here the cassette
// flag says that it replays the models.
#[derive(Args, Debug, Default)]
#[command(
    mut_arg("trace", |a| a.help("Write the trace here (default: a new file under DATA_DIR/traces)")),
    mut_arg("replay", |a| a.long("replay-models").value_name("REPLAY_MODELS")),
)]
pub(super) struct UiArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// dark, light, high-contrast, or a theme file (default: the config's).
    #[arg(long)]
    theme: Option<String>,
    /// Milliseconds to wait before each call (default: the config's).
    #[arg(long)]
    pace: Option<u64>,
    /// Start paused: press space to run, s to step.
    #[arg(long)]
    paused: bool,
    #[command(flatten)]
    graph_tape: GraphTapeArgs,
    #[command(flatten)]
    agent: AgentArgs,
    /// Serve the model and MCP gateways for an agent started elsewhere (a notebook, a
    /// service): the workbench opens on the exports to paste, and shows its calls as they come.
    #[arg(long, conflicts_with = "agent")]
    gateway: bool,
    /// Watch an agent instrumented with OpenTelemetry: receive its spans over OTLP/HTTP here (a
    /// PORT on 127.0.0.1, or ADDRESS:PORT) and show its runs read-only as their traces complete.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["agent", "gateway"])]
    otlp_listen: Option<String>,
    #[command(flatten)]
    receiving: super::otlp::Receiving,
}

pub(super) fn workbench(config: &Config, a: UiArgs) -> Result<ExitCode> {
    // Everything that can be wrong is found before the terminal is taken over.
    let theme = Theme::resolve(a.theme.as_deref().unwrap_or(&config.theme))?;
    if let Some(spec) = &a.otlp_listen {
        return super::otlp::watch(config, spec, &a.receiving, theme, a.session.trace);
    }
    let debug = super::debug::schedule(config, &a.session)?;
    switchyard::ui::term::check_terminal()?;
    let mut opts = session_options(&a.session, &a.graph_tape)?;
    opts.schedule.extend(debug);
    opts.start_paused = a.paused;
    opts.linger = true;
    opts.pace_ms = a.pace.unwrap_or(config.pace_ms);
    let trace = match a.session.trace {
        Some(t) => t,
        None => config.data_paths()?.traces().join(format!("session-{}.jsonl", stamp())),
    };
    opts.trace = Some(trace.clone());
    let rt = runtime()?;
    let models = super::setup::with_models(config, &a.session.common.models)?;
    if a.gateway {
        let config = &with_agent_role(&models);
        let gateway = gateway_only(config, &rt, a.agent.listen, &mut opts)?;
        let mut prepared = session::prepare(config, &opts)?;
        let _endpoint = super::remote::serve(config, &rt, &mut prepared, SessionKind::Ui, Some(&trace))?;
        // The token is the user's to paste, on screen only: nothing written keeps it.
        let lines: Vec<String> = gateway.agent_env().into_iter().map(|(k, v)| format!("export {k}={v}")).collect();
        let title = "Paste into the agent's shell";
        let end =
            rt.block_on(switchyard::ui::term::run_live_noticed(prepared, theme, config.data_dir().ok(), title, lines))?;
        drop(gateway);
        if end == LiveEnd::Suspended {
            // Nobody here can start its agent again.
            println!("suspended: the trace ends there, but its agent was started elsewhere, so it cannot be resumed");
        }
        println!("trace: {}\nreplay it with: switchyard replay {}", trace.display(), trace.display());
        return Ok(ExitCode::SUCCESS);
    }
    let config = &for_agent(&models, &a.agent);
    let _gateway = bridge(config, &rt, &a.agent, &mut opts, true)?;
    let mut prepared = session::prepare(config, &opts)?;
    let _endpoint = super::remote::serve(config, &rt, &mut prepared, SessionKind::Ui, Some(&trace))?;
    let end = rt.block_on(switchyard::ui::term::run_live(prepared, theme, config.data_dir().ok()))?;
    Ok(ended(end, &trace))
}

/// What the workbench says of its session once the terminal is back.
pub(super) fn ended(end: LiveEnd, trace: &std::path::Path) -> ExitCode {
    match end {
        LiveEnd::Suspended => {
            println!("suspended: the trace ends there\ntake it up again with: switchyard resume {}", trace.display())
        }
        LiveEnd::Ended => {
            println!("trace: {}\nreplay it with: switchyard replay {}", trace.display(), trace.display())
        }
    }
    ExitCode::SUCCESS
}

pub(super) fn replay(
    config: &Config,
    file: &std::path::Path,
    theme: Option<String>,
    at: Option<usize>,
) -> Result<ExitCode> {
    let theme = Theme::resolve(theme.as_deref().unwrap_or(&config.theme))?;
    let read = read_trace_file(file)?;
    if let Some(n) = at.filter(|n| *n > read.events.len()) {
        return Err(eyre!("--at {n}: {} holds {} events", file.display(), read.events.len()));
    }
    // Said again in the replay's status line: stderr is hidden behind it.
    let torn = read.torn.map(|t| format!("{}: {t}", file.display()));
    if let Some(t) = &torn {
        eprintln!("warning: {t}");
    }
    switchyard::ui::term::check_terminal()?;
    let rt = runtime()?;
    let replay = switchyard::ui::term::run_replay(read.events, at, theme.clone(), config.data_dir().ok(), torn);
    let Some(at) = rt.block_on(replay)? else {
        return Ok(ExitCode::SUCCESS);
    };
    // `f` in the replay: the same session goes on live from the cursor,
    // paused there so the user can change things first.
    let trace = config.data_paths()?.traces().join(format!("fork-{}.jsonl", stamp()));
    let mut opts = SessionOptions {
        linger: true,
        pace_ms: config.pace_ms,
        trace: Some(trace.clone()),
        ..SessionOptions::default()
    };
    let req =
        ForkRequest { parent: file.to_path_buf(), at, at_fork_point: AtForkPoint::Pause, ..ForkRequest::default() };
    let (config, _gateway) = &super::fork::agent_for_fork(config, &rt, file, &mut opts)?;
    let mut prepared = prepare_fork(config, &req, &opts)?;
    let _endpoint = super::remote::serve(config, &rt, &mut prepared, SessionKind::Ui, Some(&trace))?;
    let end = rt.block_on(switchyard::ui::term::run_live(prepared, theme, config.data_dir().ok()))?;
    println!("forked from {} after its event {at}", file.display());
    Ok(ended(end, &trace))
}
