//! `mcp serve`: the library as one MCP server, each call a tool call of a
//! Switchyard session (the gate, faults, approvals, BTP, the trace); and
//! the `mcp login`/`logout` commands (`mcp_login.rs`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, eyre};
use tokio::sync::mpsc;

use switchyard::config::Config;
use switchyard::engine::StrategyKind;
use switchyard::mcp_gateway::{SessionDesk, ToolDesk, serve_http, serve_stdio};
use switchyard::session::TaskSource;
use switchyard::strategy::bridge::BridgeInbox;

use super::agent::with_agent_role;

/// How many tool calls may wait for the engine at once.
const WAITING_CALLS: usize = 256;

#[derive(Subcommand, Debug)]
pub(crate) enum McpCommand {
    /// Serve the library as one MCP server: over stdio (for clients that start their servers), or
    /// Streamable HTTP at http://ADDR/mcp with --listen. Every call is a tool call of a session.
    Serve(Box<ServeArgs>),
    /// Authorize Switchyard for a remote [[mcp]] server that wants a user ([mcp.oauth]): prints the address to
    /// open, waits for the redirect, and keeps the token in the data directory (mode 0600).
    Login(super::mcp_login::LoginArgs),
    /// Forget the token kept for a remote [[mcp]] server.
    Logout {
        /// The [[mcp]] entry's name.
        name: String,
    },
}

#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (loopback unless you name another address).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Write the trace (JSON Lines) here.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    common: crate::cli::args::Common,
    /// Print the summary as JSON (with --listen; over stdio the summary goes to stderr).
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(config: &Config, cmd: McpCommand) -> Result<ExitCode> {
    match cmd {
        McpCommand::Serve(a) => serve(config, *a),
        McpCommand::Login(a) => super::mcp_login::login(config, a),
        McpCommand::Logout { name } => super::mcp_login::logout(config, &name),
    }
}

fn serve(config: &Config, a: ServeArgs) -> Result<ExitCode> {
    let mut opts = crate::cli::setup::common_options(&a.common)?;
    opts.trace = a.trace.clone();
    let config = &with_agent_role(&crate::cli::setup::with_models(config, &a.common.models)?);
    let (calls, inbox) = mpsc::channel(WAITING_CALLS);
    let desk = Arc::new(SessionDesk::new(calls));
    if matches!(opts.tasks, TaskSource::Configured) {
        opts.tasks = TaskSource::Text("an MCP client's tool calls".into());
    }
    opts.strategy = Some(StrategyKind::Agent);
    let mut inbox = BridgeInbox::new(inbox, None);
    inbox.offer = Some(desk.offer_sender());
    opts.bridge = Some(inbox);
    opts.mcp_desk = Some(Arc::clone(&desk));
    let rt = crate::cli::setup::runtime()?;
    let mut prepared = switchyard::session::prepare(config, &opts)?;
    let kind = switchyard::remote::SessionKind::McpServe;
    let endpoint = crate::cli::remote::serve(config, &rt, &mut prepared, kind, a.trace.as_deref())?;
    let listener = match a.listen {
        Some(addr) => Some(
            rt.block_on(tokio::net::TcpListener::bind(addr))
                .map_err(|e| eyre!("the MCP endpoint could not listen on {addr}: {e}"))?,
        ),
        None => None,
    };
    let desk: Arc<dyn ToolDesk> = desk;
    let outcome = rt.block_on(async move {
        let served = async move {
            match listener {
                None => serve_stdio(desk).await,
                Some(listener) => {
                    let addr = listener.local_addr().map_err(|e| e.to_string())?;
                    eprintln!("MCP endpoint ready at http://{addr}/mcp; Ctrl-C ends the session");
                    serve_http(desk, listener).await
                }
            }
        };
        crate::cli::setup::serve_until_signal(prepared, served, "mcp serve").await
    })?;
    // Its viewers get the session's last events before the runtime goes.
    drop(endpoint);
    // Stdin may still be read by a blocking thread: it is not waited for.
    rt.shutdown_timeout(Duration::from_millis(200));
    if a.listen.is_some() {
        return crate::cli::run::report(&outcome.state, a.json, a.trace.as_deref());
    }
    // Over stdio, stdout was the client's: the summary goes to stderr.
    let calls: u32 = outcome.state.finished.iter().map(|r| r.tool_calls).sum();
    match &a.trace {
        Some(t) => eprintln!("mcp serve: session ended after {calls} tool calls; trace: {}", t.display()),
        None => eprintln!("mcp serve: session ended after {calls} tool calls"),
    }
    Ok(ExitCode::SUCCESS)
}
