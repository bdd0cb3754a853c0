//! Argument parsing and the headless subcommands: the command tree, the flags
//! several subcommands share, and the set-up every subcommand needs.

mod budget;
mod eval;
mod graph;
mod run;
mod trace;
mod ui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::{Control, ParamChange, Scheduled, StrategyKind};
use switchyard::session::{GraphSource, SessionOptions, Tape, TaskSource};
use switchyard::tool::fault::Fault;

use budget::ExperienceCommand;
use eval::EvalArgs;
use graph::GraphCommand;
use run::RunArgs;
use trace::TraceCommand;
use ui::UiArgs;

#[derive(Parser, Debug)]
#[command(name = "switchyard", version, about = "A workbench for tool-using LLM agents")]
struct Cli {
    /// Config file (see config.example.toml); the embedded default without it.
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Where graphs, experience and logs are kept (overrides the config).
    #[arg(long, global = true)]
    data_dir: Option<PathBuf>,
    /// Constrained decoding for every OpenAI-compatible model: on sends each role's JSON schema
    /// (the actor's tool an enum of the offered tools) as response_format; off leaves only the
    /// text protocol (default: each model's `json_schema`).
    #[arg(long, global = true, value_parser = ["on", "off"])]
    constrained: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The workbench (the default): watch, pause, step, break tools, edit scores and parameters.
    Ui(UiArgs),
    /// Step through a recorded trace in the workbench, read-only.
    Replay {
        /// A trace written by `run --trace` or by the workbench.
        file: PathBuf,
        /// dark, light, high-contrast, or a theme file.
        #[arg(long)]
        theme: Option<String>,
    },
    /// Run tasks headless and print a summary.
    Run(RunArgs),
    /// Run a task set under several strategies and compare them.
    Eval(EvalArgs),
    /// BTP's plan for a task: tool, cost, v, F̃, planned calls and cost, R.
    Plan {
        #[arg(long)]
        task: String,
        /// The budget B (default: the config's).
        #[arg(long)]
        budget: Option<f64>,
        #[arg(long)]
        tau: Option<f64>,
        #[arg(long)]
        json: bool,
    },
    /// BTP's experience store.
    #[command(subcommand)]
    Experience(ExperienceCommand),
    /// ToolNet's tool graph.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Recorded traces.
    #[command(subcommand)]
    Trace(TraceCommand),
}

// The flags of every subcommand that runs sessions: run, ui and eval.
#[derive(Args, Debug, Default)]
struct Common {
    /// A task file (TOML or JSON Lines); the config's task set without it.
    #[arg(long)]
    tasks: Option<PathBuf>,
    /// Run this many tasks, cycling through the task list.
    #[arg(long)]
    count: Option<usize>,
    #[arg(long)]
    seed: Option<u64>,
    /// Change a parameter: alpha, beta, tau, budget, top_k, weight_format, max_steps.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Break a tool: TOOL:MODE[:SCOPE][@TASK], e.g. geo_lookup:error@50.
    #[arg(long = "fault", value_name = "SPEC")]
    faults: Vec<String>,
    /// Timestamps in ticks instead of milliseconds (byte-identical traces for a seed).
    #[arg(long)]
    logical_clock: bool,
    /// BTP's budget B per task (same as --set budget=B).
    #[arg(long)]
    budget: Option<f64>,
    /// BTP's value threshold τ (same as --set tau=T).
    #[arg(long)]
    tau: Option<f64>,
    /// BTP planning and enforcement when a budget is set: on or off (default: the config's).
    #[arg(long, value_parser = ["on", "off"])]
    btp: Option<String>,
    /// Replace the tools' costs, e.g. random:1-10 (the BTP paper's setting), drawn with the seed.
    #[arg(long)]
    tool_costs: Option<String>,
}

// The session `run` and `ui` start. The graph and tape flags are a group of
// their own because `--help` lists each subcommand's own flags between them.
#[derive(Args, Debug, Default)]
struct SessionArgs {
    /// One task, typed here.
    #[arg(long)]
    task: Option<String>,
    /// react, toolnet or rewoo (default: the config's).
    #[arg(long)]
    strategy: Option<StrategyKind>,
    #[command(flatten)]
    common: Common,
    /// Write the trace (JSON Lines) here.
    #[arg(long)]
    trace: Option<PathBuf>,
}

// Where a `run` or `ui` session takes ToolNet's graph and the model replies from.
#[derive(Args, Debug, Default)]
struct GraphTapeArgs {
    /// Start from the trajectories' graph, not the saved one.
    #[arg(long)]
    fresh_graph: bool,
    /// Do not save the learnt graph.
    #[arg(long)]
    no_save: bool,
    /// Record every model reply to this cassette.
    #[arg(long, conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Answer model calls from this cassette instead of the models.
    #[arg(long)]
    replay: Option<PathBuf>,
}

pub fn main() -> Result<ExitCode> {
    let cli = Cli::parse();
    let mut config = match &cli.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    if let Some(d) = &cli.data_dir {
        config.data_dir = Some(d.clone());
    }
    if let Some(c) = &cli.constrained {
        config.set_json_schema(c == "on");
    }
    let _log = init_logging(&config);
    match cli.command.unwrap_or(Command::Ui(UiArgs::default())) {
        Command::Ui(a) => ui::workbench(&config, a),
        Command::Replay { file, theme } => ui::replay(&config, &file, theme),
        Command::Run(a) => run::run(&config, a),
        Command::Eval(a) => eval::eval(&config, a),
        Command::Plan { task, budget, tau, json } => budget::plan(&config, &task, budget, tau, json),
        Command::Experience(ExperienceCommand::Import { file }) => budget::experience_import(&config, &file),
        Command::Experience(ExperienceCommand::Show) => budget::experience_show(&config),
        Command::Graph(GraphCommand::Build { trajectories }) => graph::build(config, trajectories),
        Command::Graph(GraphCommand::Show { tool, json }) => graph::show(&config, &tool, json),
        Command::Trace(TraceCommand::Show { file, json }) => trace::show(&file, json),
    }
}

/// Logs go to a file in the data directory, never to the terminal.
fn init_logging(config: &Config) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = config.data_dir().ok()?.join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(tracing_appender::rolling::never(dir, "switchyard.log"));
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWITCHYARD_LOG").unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt().with_writer(writer).with_ansi(false).with_env_filter(filter).try_init().ok()?;
    Some(guard)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().wrap_err("could not start the async runtime")
}

fn common_options(c: &Common) -> Result<SessionOptions> {
    let mut o = SessionOptions {
        seed: c.seed,
        count: c.count,
        logical_clock: c.logical_clock,
        tasks: c.tasks.clone().map(TaskSource::File).unwrap_or_default(),
        ..Default::default()
    };
    for s in &c.set {
        o.param_changes.push(ParamChange::parse(s).map_err(|e| eyre!("--set {s}: {e}"))?);
    }
    if let Some(b) = c.budget {
        o.param_changes.push(ParamChange::parse(&format!("budget={b}")).map_err(|e| eyre!("--budget: {e}"))?);
    }
    if let Some(t) = c.tau {
        o.param_changes.push(ParamChange::parse(&format!("tau={t}")).map_err(|e| eyre!("--tau: {e}"))?);
    }
    o.btp = c.btp.as_deref().map(|b| b == "on");
    if let Some(tc) = &c.tool_costs {
        o.tool_costs = Some(tc.parse().map_err(|e| eyre!("--tool-costs: {e}"))?);
    }
    for f in &c.faults {
        let (spec, at) = match f.rsplit_once('@') {
            Some((spec, n)) => (spec, n.parse::<u32>().map_err(|_| eyre!("--fault {f}: '@{n}' is not a task number"))?),
            None => (f.as_str(), 1),
        };
        if at == 0 {
            return Err(eyre!("--fault {f}: tasks are counted from 1"));
        }
        let (tool, fault) = Fault::parse_spec(spec).map_err(|e| eyre!("--fault: {e}"))?;
        o.schedule.push(Scheduled { before_task: at, control: Control::InjectFault { tool, fault } });
    }
    Ok(o)
}

/// What `run` and `ui` share: the task, strategy, graph and model tape; each
/// decides for itself where the trace goes.
fn session_options(session: &SessionArgs, graph_tape: &GraphTapeArgs) -> Result<SessionOptions> {
    let mut opts = common_options(&session.common)?;
    if let Some(t) = &session.task {
        if session.common.tasks.is_some() {
            return Err(eyre!("--task and --tasks exclude each other: give one task or a task file"));
        }
        opts.tasks = TaskSource::Text(t.clone());
    }
    opts.strategy = session.strategy;
    opts.graph = if graph_tape.fresh_graph { GraphSource::Fresh } else { GraphSource::Saved };
    opts.save_graph = !graph_tape.no_save;
    opts.tape = match (&graph_tape.record, &graph_tape.replay) {
        (Some(r), _) => Tape::Record(r.clone()),
        (_, Some(r)) => Tape::Replay(r.clone()),
        _ => Tape::Live,
    };
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
