//! `gateway`: the model gateway alone, for an agent started elsewhere.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;
use color_eyre::eyre::Result;

use switchyard::config::Config;

use super::agent::{gateway_only, with_agent_role};

#[derive(Args, Debug, Default)]
pub(crate) struct GatewayArgs {
    /// Where to listen (default: a free port on 127.0.0.1).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Write the trace (JSON Lines) here.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    common: crate::cli::args::Common,
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
}

/// `switchyard gateway`: prints the environment an agent needs, serves its
/// model calls until Ctrl-C (or SIGTERM), then ends the session as `q`
/// would (the trace closed) and prints its summary.
pub(crate) fn serve(config: &Config, a: GatewayArgs) -> Result<std::process::ExitCode> {
    let mut opts = crate::cli::setup::common_options(&a.common)?;
    opts.trace = a.trace.clone();
    let rt = crate::cli::setup::runtime()?;
    let config = &with_agent_role(&crate::cli::setup::with_models(config, &a.common.models)?);
    let gateway = gateway_only(config, &rt, a.listen, &mut opts)?;
    let mut prepared = switchyard::session::prepare(config, &opts)?;
    let kind = switchyard::remote::SessionKind::Gateway;
    let _endpoint = crate::cli::remote::serve(config, &rt, &mut prepared, kind, a.trace.as_deref())?;
    // The token goes to the user, on stdout only: it is what the agent
    // must send, and nothing Switchyard writes keeps it.
    for (k, v) in gateway.agent_env() {
        println!("export {k}={v}");
    }
    eprintln!("model gateway ready at {}; Ctrl-C ends the session", gateway.openai_base_url());
    let outcome = rt.block_on(crate::cli::setup::serve_until_signal(prepared, std::future::pending(), "gateway"))?;
    drop(gateway);
    crate::cli::run::report(&outcome.state, a.json, a.trace.as_deref())
}
