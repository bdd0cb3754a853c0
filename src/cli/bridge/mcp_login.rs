//! `mcp login` and `mcp logout`: the tokens of a remote `[[mcp]]` server
//! that wants an authorized user (`[mcp.oauth]`), kept in the data
//! directory (mode 0600) and used by every session after.

use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::tool::mcp::McpServerConfig;
use switchyard::tool::mcp::oauth::{self, Login, OAuthConfig};

#[derive(Args, Debug)]
pub(crate) struct LoginArgs {
    /// The `[[mcp]]` entry's name.
    name: String,
    /// Fetch the authorization page without a browser and take the code from its redirect: only for an
    /// authorization server that approves at once (a test server).
    #[arg(long)]
    follow: bool,
    /// Ask for these scopes (space-separated, or the flag repeated) instead of the entry's `scopes` or the
    /// server's: what a refusal for want of scope names.
    #[arg(long, value_name = "SCOPES")]
    scope: Vec<String>,
}

/// The entry `name` and its OAuth settings, with the token file resolved.
fn entry(config: &Config, name: &str) -> Result<(McpServerConfig, String, OAuthConfig)> {
    let origin = config.path.as_deref().map_or_else(|| "the config".to_string(), |p| p.display().to_string());
    let server = config.mcp.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = config.mcp.iter().map(|s| s.name.as_str()).collect();
        eyre!("{origin} has no [[mcp]] entry named '{name}' (it has: {})", names.join(", "))
    })?;
    let url =
        server.url.clone().ok_or_else(|| eyre!("{origin}: mcp '{name}' is started on stdio: it takes no login"))?;
    let mut o = server
        .oauth
        .clone()
        .ok_or_else(|| eyre!("{origin}: mcp '{name}' has no [mcp.oauth] table: add one (empty is enough) to log in"))?;
    o.token_file = Some(switchyard::session::oauth_token_file(config, name)?);
    Ok((server.clone(), url, o))
}

pub(crate) fn login(config: &Config, a: LoginArgs) -> Result<ExitCode> {
    let (_, url, mut o) = entry(config, &a.name)?;
    o.login = if a.follow { Login::Follow } else { Login::Ask };
    if !a.scope.is_empty() {
        o.scopes = a.scope.iter().flat_map(|s| s.split_whitespace()).map(str::to_string).collect();
    }
    let rt = crate::cli::setup::runtime()?;
    rt.block_on(oauth::login(&a.name, &url, &o, &|text| eprintln!("{text}")))
        .map_err(|e| eyre!("mcp login {}: {e}", a.name))?;
    let file = o.token_file.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
    eprintln!("mcp login {}: authorized; the token is kept in {file} (mode 0600)", a.name);
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn logout(config: &Config, name: &str) -> Result<ExitCode> {
    let (_, _, o) = entry(config, name)?;
    let file = o.token_file.expect("resolved by entry");
    let had = oauth::logout(&file).map_err(|e| eyre!("{}: {e}", file.display()))?;
    eprintln!("mcp logout {name}: {}", if had { "the kept token is removed" } else { "no token was kept" });
    Ok(ExitCode::SUCCESS)
}
