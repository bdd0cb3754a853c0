//! `tools`: every tool of the configured library with its executor, and one
//! call of one tool through the executor a session uses, for checking a
//! source by hand.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use color_eyre::eyre::{Result, eyre};
use serde_json::{Value, json};

use switchyard::config::Config;
use switchyard::session;
use switchyard::text::spelling::close_names;
use switchyard::tool::exec::Executor;
use switchyard::tool::listing;
use switchyard::tool::mcp::McpServerConfig;

use super::setup::runtime;

/// The exit code of `tools call` when the tool itself failed.
const TOOL_FAILED: u8 = 3;
/// The width descriptions are cut to when stdout is not a terminal and
/// `COLUMNS` is not set.
const DEFAULT_WIDTH: usize = 100;

#[derive(Subcommand, Debug)]
pub(super) enum ToolsCommand {
    /// Every tool of the library: name, executor, category, cost, source file, description.
    List {
        #[arg(long)]
        json: bool,
        /// Only the tools of the MCP server at this URL (Streamable HTTP).
        #[arg(long, value_name = "URL")]
        mcp_url: Option<String>,
    },
    /// Call one tool once, without faults; exit 3 when the tool fails.
    Call {
        name: String,
        /// The arguments, a JSON object.
        #[arg(long, value_name = "JSON", default_value = "{}")]
        args: String,
        /// Seeds the tool's randomness (default: the config's seed).
        #[arg(long)]
        seed: Option<u64>,
        #[arg(long)]
        json: bool,
        /// Call a tool of the MCP server at this URL (Streamable HTTP)
        /// instead of the configured library's.
        #[arg(long, value_name = "URL")]
        mcp_url: Option<String>,
    },
}

/// The config's tools, or with `--mcp-url` only that server's.
pub(super) fn source(config: Config, mcp_url: Option<String>) -> Config {
    match mcp_url {
        Some(url) => Config { library: Vec::new(), mcp: vec![McpServerConfig::remote("remote", &url)], ..config },
        None => config,
    }
}

fn terminal_width() -> usize {
    if std::io::stdout().is_terminal()
        && let Ok((w, _)) = crossterm::terminal::size()
    {
        return usize::from(w);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(DEFAULT_WIDTH)
}

pub(super) fn list(config: &Config, as_json: bool) -> Result<ExitCode> {
    let library = session::load_tools(config)?.library;
    let cwd = std::env::current_dir().ok();
    if as_json {
        let all: Vec<Value> = library.tools().iter().map(|t| listing::tool_json(t, cwd.as_deref())).collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", listing::table(library.tools(), terminal_width(), cwd.as_deref()));
    Ok(ExitCode::SUCCESS)
}

pub(super) fn call(config: &Config, name: &str, args: &str, seed: Option<u64>, as_json: bool) -> Result<ExitCode> {
    let session::Tools { library, mcp } = session::load_tools(config)?;
    let Some(spec) = library.get(name) else {
        let close = close_names(name, library.names());
        let hint = if close.is_empty() {
            "; `switchyard tools list` shows them all".to_string()
        } else {
            format!("; did you mean {}?", close.join(", "))
        };
        return Err(eyre!("no tool named '{name}' in the library{hint}"));
    };
    let args: Value = serde_json::from_str(args).map_err(|e| eyre!("--args is not valid JSON: {e}"))?;
    if !args.is_object() {
        return Err(eyre!("--args must be a JSON object, e.g. '{{\"x\": 1}}'"));
    }
    let timeout = Duration::from_millis(config.tool_timeout_ms);
    let seed = seed.unwrap_or(config.seed);
    let executor = match mcp {
        Some(hub) => Executor::new().with_mcp(hub),
        None => Executor::new(),
    }
    .with_output_cap(config.tool_output_bytes);
    let result = runtime()?.block_on(executor.call(spec, &args, None, seed, timeout));
    match result {
        Ok(v) if as_json => println!("{}", serde_json::to_string_pretty(&json!({ "ok": v }))?),
        Ok(v) => println!("{}", serde_json::to_string_pretty(&v)?),
        Err(e) => {
            if as_json {
                println!("{}", serde_json::to_string_pretty(&json!({ "error": e }))?);
            }
            let kind = serde_json::to_value(e.kind)?;
            eprintln!("error: '{name}' failed ({}): {}", kind.as_str().unwrap_or("failed"), e.message);
            return Ok(ExitCode::from(TOOL_FAILED));
        }
    }
    Ok(ExitCode::SUCCESS)
}
