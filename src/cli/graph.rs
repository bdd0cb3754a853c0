//! `graph`: ToolNet's tool graph, built from trajectories and shown per tool.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::session::{self, GraphSource};

#[derive(Subcommand, Debug)]
pub(super) enum GraphCommand {
    /// Build the static graph from the trajectories and save it.
    Build {
        /// A trajectories file (JSON Lines); the config's without it.
        #[arg(long)]
        trajectories: Option<PathBuf>,
    },
    /// Show a tool's place in the saved graph: edges, weights, score, history.
    Show {
        tool: String,
        #[arg(long)]
        json: bool,
    },
}

pub(super) fn build(mut config: Config, trajectories: Option<PathBuf>) -> Result<ExitCode> {
    if let Some(t) = trajectories {
        config.trajectories = Some(t);
    }
    let library = session::load_library(&config)?;
    let graph = session::build_graph(&config, &library)?;
    let path = config.data_paths()?.graph();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("could not create {}", dir.display()))?;
    }
    graph.save(&path)?;
    let edges = graph.edge_count();
    println!(
        "built the graph of {} tools and {} edges from {}; saved to {}",
        graph.tool_count(),
        edges,
        config
            .trajectories
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "no trajectories (uniform)".into()),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn show(config: &Config, tool: &str, json: bool) -> Result<ExitCode> {
    let library = session::load_library(config)?;
    let graph = session::load_graph(config, config.data_paths().ok().as_ref(), &library, GraphSource::Saved)?;
    if !graph.contains(tool) {
        return Err(eyre!("no tool named '{tool}' in the graph"));
    }
    let fmt = config.params.weight_format;
    let out_edges = graph.out_edges(tool);
    let in_edges = graph.in_edges(tool);
    if json {
        let v = serde_json::json!({
            "tool": tool,
            "score": graph.score(tool),
            "iteration": graph.iteration(),
            "out": out_edges,
            "in": in_edges,
            "score_history": graph.score_series(tool),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{tool}: score {:.0} after {} iterations", graph.score(tool).unwrap_or(0.0), graph.iteration());
    let show = |w: f64| fmt.show(w).unwrap_or_else(|| format!("{w:.3}"));
    println!("  predecessors:");
    for (from, w) in &in_edges {
        println!("    {from:<28} -> {tool:<24} {:>6}", show(*w));
    }
    if graph.follows_any_tool_row(tool) {
        println!("  successors (the uniform row of every tool no trajectory set apart):");
    } else {
        println!("  successors:");
    }
    for (to, w) in &out_edges {
        println!("    {tool:<28} -> {to:<24} {:>6}", show(*w));
    }
    let series = graph.score_series(tool);
    if series.len() > 1 {
        let s: Vec<String> = series.iter().map(|(i, s)| format!("{i}:{s:.0}")).collect();
        println!("  score history (iteration:score): {}", s.join(" "));
    }
    Ok(ExitCode::SUCCESS)
}
