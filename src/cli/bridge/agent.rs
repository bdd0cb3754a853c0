//! `--agent -- CMD` (run, ui, eval) and `gateway`: an outside agent whose
//! model calls go through Switchyard's gateway.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use color_eyre::eyre::{Result, eyre};
use tokio::sync::mpsc;

use switchyard::config::Config;
use switchyard::engine::StrategyKind;
use switchyard::gateway::{Gateway, GatewaySetup};
use switchyard::model::Role;
use switchyard::session::{SessionOptions, TaskSource};
use switchyard::strategy::bridge::BridgeInbox;
use switchyard::strategy::bridge::process::AgentCommand;

/// How many bridged calls may wait for the engine at once before the
/// gateway holds the next agent request back.
const WAITING_CALLS: usize = 256;

#[derive(Args, Debug, Default)]
pub(crate) struct AgentArgs {
    /// Run your own agent: give its command after `--` (`{task}` in it is the task, else the task is on its
    /// stdin). Its model calls go through Switchyard, which sets OPENAI_BASE_URL, OPENAI_API_KEY,
    /// ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY for it.
    #[arg(long)]
    pub(crate) agent: bool,
    /// Where the model gateway listens (default: a free port on 127.0.0.1).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<SocketAddr>,
    /// The agent writes its answer to this file (default: its last line on stdout).
    #[arg(long, value_name = "FILE", requires = "agent")]
    pub(crate) answer_file: Option<PathBuf>,
    /// The agent's command and its arguments (after `--`).
    #[arg(last = true, value_name = "CMD")]
    pub(crate) command: Vec<String>,
}

/// The gateway's setup from the config: the agent role's model is the one
/// `GET /v1/models` names first.
fn setup(config: &Config, listen: Option<SocketAddr>) -> GatewaySetup {
    let mut models: Vec<String> = config.roles.get(&Role::Agent).into_iter().cloned().collect();
    models.extend(config.models.keys().filter(|m| !models.contains(m)).cloned().collect::<Vec<_>>());
    let mut s = GatewaySetup { models, ..GatewaySetup::default() };
    if let Some(addr) = listen {
        s.listen = addr;
    }
    s
}

/// With `--agent`, the config with the agent role (the actor's model by
/// default); without, the config as it is: other sessions list no agent role.
pub(crate) fn for_agent(config: &Config, a: &AgentArgs) -> Config {
    if a.agent { with_agent_role(config) } else { config.clone() }
}

/// The agent role defaults to the actor's model.
pub(crate) fn with_agent_role(config: &Config) -> Config {
    let mut config = config.clone();
    if !config.roles.contains_key(&Role::Agent) {
        let actor = config.roles.get(&Role::Actor).cloned().unwrap_or_else(|| "sim".into());
        config.roles.insert(Role::Agent, actor);
    }
    config
}

/// Starts the gateway and points the session at it, when `--agent` asks
/// for one. `one_run`: without `--task`, `--tasks` or `{task}`, the session
/// is one run of the agent, its command line as the task.
pub(crate) fn bridge(
    config: &Config,
    rt: &tokio::runtime::Runtime,
    a: &AgentArgs,
    opts: &mut SessionOptions,
    one_run: bool,
) -> Result<Option<Gateway>> {
    if !a.agent {
        if !a.command.is_empty() {
            return Err(eyre!("a command after `--` is an agent's: add --agent (switchyard run --agent -- CMD)"));
        }
        if a.listen.is_some() {
            return Err(eyre!("--listen is the gateway's: add --agent -- CMD, or run `switchyard gateway`"));
        }
        return Ok(None);
    }
    if a.command.is_empty() {
        return Err(eyre!("--agent needs the agent's command after `--` (e.g. --agent -- python3 my_agent.py)"));
    }
    let (gateway, cmd) = start_agent(config, rt, a.listen, a.command.clone(), a.answer_file.clone(), opts)?;
    if one_run && matches!(opts.tasks, TaskSource::Configured) && !cmd.takes_task() {
        opts.tasks = TaskSource::Text(cmd.shown(""));
    }
    Ok(Some(gateway))
}

/// The gateway listening, and the session set to start `argv` as its
/// agent with the gateway's address and token.
pub(crate) fn start_agent(
    config: &Config,
    rt: &tokio::runtime::Runtime,
    listen: Option<SocketAddr>,
    argv: Vec<String>,
    answer_file: Option<PathBuf>,
    opts: &mut SessionOptions,
) -> Result<(Gateway, AgentCommand)> {
    let (calls, inbox) = mpsc::channel(WAITING_CALLS);
    let gateway = rt.block_on(Gateway::start(setup(config, listen), calls)).map_err(|e| {
        eyre!("the model gateway could not listen on {}: {e}", listen.map_or("127.0.0.1:0".into(), |l| l.to_string()))
    })?;
    let cmd = AgentCommand { argv, env: gateway.agent_env(), answer_file };
    opts.strategy = Some(StrategyKind::Agent);
    let mut inbox = BridgeInbox::new(inbox, Some(cmd.clone()));
    inbox.offer = Some(gateway.tools().offer_sender());
    opts.bridge = Some(inbox);
    opts.mcp_desk = Some(gateway.tools().clone());
    eprintln!(
        "model gateway: {} (Anthropic: {}; MCP: {})",
        gateway.openai_base_url(),
        gateway.anthropic_base_url(),
        gateway.mcp_url()
    );
    Ok((gateway, cmd))
}

/// `switchyard gateway`: the gateway alone, for an agent started elsewhere.
pub(crate) fn gateway_only(
    config: &Config,
    rt: &tokio::runtime::Runtime,
    listen: Option<SocketAddr>,
    opts: &mut SessionOptions,
) -> Result<Gateway> {
    let (calls, inbox) = mpsc::channel(WAITING_CALLS);
    let gateway = rt
        .block_on(Gateway::start(setup(config, listen), calls))
        .map_err(|e| eyre!("the model gateway could not listen: {e}"))?;
    if matches!(opts.tasks, TaskSource::Configured) {
        opts.tasks = TaskSource::Text("an agent started outside Switchyard".into());
    }
    opts.strategy = Some(StrategyKind::Agent);
    let mut inbox = BridgeInbox::new(inbox, None);
    inbox.offer = Some(gateway.tools().offer_sender());
    opts.bridge = Some(inbox);
    opts.mcp_desk = Some(gateway.tools().clone());
    Ok(gateway)
}
