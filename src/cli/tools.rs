//! `tools`: every tool of the configured library with its executor, and one
//! call of one tool through the executor a session uses, for checking a
//! source by hand.

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use color_eyre::eyre::{Result, eyre};
use serde_json::{Value, json};

use switchyard::config::Config;
use switchyard::session;
use switchyard::text::spelling::close_names;
use switchyard::tool::exec::Executor;
use switchyard::tool::mcp::McpServerConfig;
use switchyard::tool::{ExecutorSpec, ToolSpec};

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

/// The executor's kind and its key detail: the builtin function, argv[0],
/// METHOD url or the cassette file.
fn executor_line(e: &ExecutorSpec) -> String {
    match e {
        ExecutorSpec::Builtin { function } => format!("builtin {function}"),
        ExecutorSpec::Command { argv, .. } => format!("command {}", argv.first().map_or("", String::as_str)),
        ExecutorSpec::Http { method, url, .. } => format!("http {method} {url}"),
        ExecutorSpec::Recorded { cassette } => format!("recorded {}", shown_path(cassette)),
        ExecutorSpec::Synthesized => "synthesized".into(),
        ExecutorSpec::Mcp { server, tool, .. } => format!("mcp {server}/{tool}"),
    }
}

/// A path relative to the working directory when it lies below it.
fn shown_path(p: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| p.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf())
        .display()
        .to_string()
}

fn cost(c: f64) -> String {
    if c.fract() == 0.0 { format!("{c:.0}") } else { format!("{c}") }
}

fn terminal_width() -> usize {
    if std::io::stdout().is_terminal()
        && let Ok((w, _)) = crossterm::terminal::size()
    {
        return usize::from(w);
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).unwrap_or(DEFAULT_WIDTH)
}

/// The first line of `text`, cut to `width` characters with an ellipsis.
fn cut(text: &str, width: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= width {
        return line.to_string();
    }
    let kept: String = line.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

fn tool_json(t: &ToolSpec) -> Value {
    json!({
        "name": t.name,
        "executor": t.executor,
        "category": t.category,
        "cost": t.cost,
        "source": t.source.as_deref().map(shown_path),
        "description": t.description,
        "parameters": t.parameters,
    })
}

pub(super) fn list(config: &Config, as_json: bool) -> Result<ExitCode> {
    let library = session::load_tools(config)?.library;
    let tools = library.tools();
    if as_json {
        let all: Vec<Value> = tools.iter().map(|t| tool_json(t)).collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<[String; 5]> = tools
        .iter()
        .map(|t| {
            [
                t.name.clone(),
                executor_line(&t.executor),
                t.category.clone().unwrap_or_else(|| "-".into()),
                cost(t.cost),
                t.source.as_deref().map(shown_path).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let mut widths = [0usize; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let used: usize = widths.iter().map(|w| w + 2).sum();
    let room = terminal_width().saturating_sub(used).max(20);
    for (row, t) in rows.iter().zip(tools) {
        let [name, exec, category, cost, source] = row;
        let [wn, we, wc, wk, ws] = widths;
        println!(
            "{name:<wn$}  {exec:<we$}  {category:<wc$}  {cost:>wk$}  {source:<ws$}  {}",
            cut(&t.description, room)
        );
    }
    let n = tools.len();
    println!("{n} tool{}", if n == 1 { "" } else { "s" });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_names_are_near_misses_and_substrings() {
        let names = ["calculator", "random_calculator", "geo_lookup", "city_stats"];
        assert_eq!(close_names("calculater", names.into_iter()), vec!["calculator"]);
        assert_eq!(close_names("lookup", names.into_iter()), vec!["geo_lookup"]);
        assert!(close_names("zzz", names.into_iter()).is_empty());
    }

    #[test]
    fn descriptions_are_cut_to_one_line_and_the_width() {
        assert_eq!(cut("short\nsecond", 10), "short");
        assert_eq!(cut("abcdefghijkl", 5), "abcd…");
    }
}
