//! The flags several subcommands share, apart from the command tree so that
//! each subcommand can flatten them without importing its own dispatcher.

use std::path::PathBuf;

use clap::Args;

use switchyard::engine::StrategyKind;

// The flags of every subcommand that runs sessions: run, ui and eval.
#[derive(Args, Debug, Default)]
pub(super) struct Common {
    /// A task file (TOML or JSON Lines); the config's task set without it.
    #[arg(long)]
    pub(super) tasks: Option<PathBuf>,
    /// Run this many tasks, cycling through the task list.
    #[arg(long)]
    pub(super) count: Option<usize>,
    #[arg(long)]
    pub(super) seed: Option<u64>,
    /// Change a parameter: alpha, beta, tau, budget, top_k, weight_format, max_steps, narrow, narrow_k.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub(super) set: Vec<String>,
    /// Break a tool: TOOL:MODE[:SCOPE][@TASK], e.g. geo_lookup:error@50; or a role's or model's calls:
    /// model:ROLE|MODEL:MODE[:SCOPE][@TASK], MODE malformed, empty, truncated, http-500, 429[=MS], timeout, slow=MS.
    #[arg(long = "fault", value_name = "SPEC")]
    pub(super) faults: Vec<String>,
    /// Give a role a configured model, e.g. actor=gpt-4o-mini or agent=qwen (in place of `[roles]`).
    #[arg(long = "model", value_name = "ROLE=MODEL")]
    pub(super) models: Vec<String>,
    /// Timestamps in ticks instead of milliseconds (byte-identical traces for a seed).
    #[arg(long)]
    pub(super) logical_clock: bool,
    /// BTP's budget B per task (same as --set budget=B).
    #[arg(long)]
    pub(super) budget: Option<f64>,
    /// BTP's value threshold τ (same as --set tau=T).
    #[arg(long)]
    pub(super) tau: Option<f64>,
    /// BTP planning and enforcement when a budget is set: on or off (default: the config's).
    #[arg(long, value_parser = ["on", "off"])]
    pub(super) btp: Option<String>,
    /// Replace the tools' costs, e.g. random:1-10 (the BTP paper's setting), drawn with the seed.
    #[arg(long)]
    pub(super) tool_costs: Option<String>,
    /// Record every tool call to this cassette (JSON Lines, appended).
    #[arg(long, value_name = "FILE", conflicts_with = "replay_tools")]
    pub(super) record_tools: Option<PathBuf>,
    /// Answer tool calls from this cassette instead of the tools.
    #[arg(long, value_name = "FILE")]
    pub(super) replay_tools: Option<PathBuf>,
    /// With --replay-tools: each answer waits as long as the recorded call took.
    #[arg(long, requires = "replay_tools")]
    pub(super) replay_tools_latency: bool,
}

// The session `run` and `ui` start. The graph and tape flags are a group of
// their own because `--help` lists each subcommand's own flags between them.
#[derive(Args, Debug, Default)]
pub(super) struct SessionArgs {
    /// One task, typed here.
    #[arg(long)]
    pub(super) task: Option<String>,
    /// react, toolnet, rewoo or atc (default: the config's).
    #[arg(long)]
    pub(super) strategy: Option<StrategyKind>,
    /// atc: probe the offered tools that document no response before each run (as `[atc] probe`).
    #[arg(long)]
    pub(super) probe: bool,
    #[command(flatten)]
    pub(super) common: Common,
    /// Write the trace (JSON Lines) here.
    #[arg(long)]
    pub(super) trace: Option<PathBuf>,
    /// The workbench waits for your approval: all, tool=NAME or role=ROLE (repeatable; off clears).
    #[arg(long = "approve", value_name = "WHAT")]
    pub(super) approve: Vec<String>,
    /// Pause when COND holds: tool=NAME, error, refusal, unreadable, cost>X, tokens>N,
    /// step=N[@run=M], score<X[:TOOL] (repeatable; the workbench).
    #[arg(long = "break", value_name = "COND")]
    pub(super) breaks: Vec<String>,
    #[command(flatten)]
    pub(super) otel: super::otel::OtelArgs,
}

// Where a `run` or `ui` session takes ToolNet's graph and the model replies from.
#[derive(Args, Debug, Default)]
pub(super) struct GraphTapeArgs {
    /// Start from the trajectories' graph, not the saved one.
    #[arg(long)]
    pub(super) fresh_graph: bool,
    /// Do not save the learnt graph.
    #[arg(long)]
    pub(super) no_save: bool,
    /// Record every model reply to this cassette.
    #[arg(long, conflicts_with = "replay")]
    pub(super) record: Option<PathBuf>,
    /// Answer model calls from this cassette instead of the models.
    #[arg(long)]
    pub(super) replay: Option<PathBuf>,
}
