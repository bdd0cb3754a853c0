//! Argument parsing and the headless subcommands: the command tree and its
//! dispatch; each subcommand in its own file, the flags and set-up they share
//! in `args` and `setup`.

mod args;
mod bench;
mod bridge;
mod budget;
mod debug;
mod eval;
mod fork;
mod graph;
mod otel;
mod otlp;
mod probe;
mod progress;
mod remote;
mod report;
mod resume;
mod retrieval;
mod run;
mod scan;
mod setup;
mod soak_plot;
mod tools;
mod trace;
mod ui;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use color_eyre::eyre::Result;

use switchyard::config::Config;

use budget::ExperienceCommand;
use eval::EvalArgs;
use graph::GraphCommand;
use retrieval::RetrievalCommand;
use run::RunArgs;
use setup::init_logging;
use tools::ToolsCommand;
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
    /// Sessions (ui, run, fork, resume, gateway, mcp serve) also serve their control endpoint over
    /// TCP here: a PORT on 127.0.0.1, or ADDRESS:PORT. Viewers present a token: SWITCHYARD_CONTROL_TOKEN
    /// if set, else a new one kept in DATA_DIR/sessions/ID.token (0600).
    #[arg(long, global = true, value_name = "ADDR")]
    control: Option<String>,
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
        /// Open with the cursor after event N (from 1: the trace's Nth line), e.g. where
        /// `scan` points; the end of the trace without it.
        #[arg(long, value_name = "N")]
        at: Option<usize>,
    },
    /// Run tasks headless and print a summary.
    Run(RunArgs),
    /// Serve the model gateway alone, for an agent started elsewhere: prints the environment it needs.
    Gateway(bridge::gateway::GatewayArgs),
    /// Switchyard as an MCP server: the library's tools, each call a tool call of a session.
    #[command(subcommand)]
    Mcp(bridge::mcp::McpCommand),
    /// Time travel: replay a trace up to event N from its own record (no model or tool called),
    /// then go on live from there with your changes.
    Fork(fork::ForkArgs),
    /// Take up a suspended (or killed) session where it stopped, from its trace: nothing is called
    /// again, and it waits as it waited (paused, or at the approval panel).
    Resume(resume::ResumeArgs),
    /// The live sessions of this data directory, one a line (the records of ended ones removed).
    Ps(remote::PsArgs),
    /// The workbench on a live session of another process; `d` detaches and leaves it running.
    Attach(remote::AttachArgs),
    /// Steer a live session from a script: status, pause, resume, step, fault, approve, set, ...
    Ctl(remote::CtlArgs),
    /// Run a task set under several strategies and compare them.
    Eval(EvalArgs),
    /// Draw an eval's report again from its folder: report.md, summary.json, plots (SVG and PNG).
    Report(report::ReportArgs),
    /// Two evals side by side: the tasks that flipped and how the metrics moved.
    Compare(report::CompareArgs),
    /// Failures across many runs: rule scanners over each run, a model that names each failed
    /// run's failure, the failures grouped into kinds (an eval's folder, or traces).
    Scan(scan::ScanArgs),
    /// Spans of any agent instrumented with OpenTelemetry, received over OTLP/HTTP and written as
    /// a trace (GenAI model and tool calls as events), for replay, trace diff and scan.
    #[command(subcommand)]
    Otlp(otlp::OtlpCommand),
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
    /// The library's tools: list them, or call one by hand.
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// `retrieval search`, by its name before.
    #[command(hide = true)]
    Retrieve(retrieval::SearchArgs),
    /// Tool retrieval: a task's top tools, measured on a benchmark; CoTools' heads, MiniLM and
    /// the re-scorers trained.
    #[command(subcommand)]
    Retrieval(RetrievalCommand),
    /// ATC's black-box probing: learn the response schema of tools that document none.
    Probe(probe::ProbeArgs),
    /// The papers' benchmarks as configs and task files.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The soak's figure from its samples (scripts/soak.sh).
    #[command(hide = true)]
    SoakPlot(soak_plot::SoakPlotArgs),
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
    let command = cli.command.unwrap_or(Command::Ui(UiArgs::default()));
    if let Some(spec) = &cli.control {
        let serves = matches!(
            command,
            Command::Ui(_)
                | Command::Replay { .. }
                | Command::Fork(_)
                | Command::Resume(_)
                | Command::Run(_)
                | Command::Gateway(_)
                | Command::Mcp(_)
        );
        if !serves {
            return Err(color_eyre::eyre::eyre!("--control {spec}: this command serves no session to control"));
        }
        remote::set_control(spec)?;
    }
    match command {
        Command::Ui(a) => ui::workbench(&config, a),
        Command::Replay { file, theme, at } => ui::replay(&config, &file, theme, at),
        Command::Fork(a) => fork::fork(&config, a),
        Command::Resume(a) => resume::resume(&config, a),
        Command::Run(a) => run::run(&config, a),
        Command::Gateway(a) => bridge::gateway::serve(&config, a),
        Command::Mcp(cmd) => bridge::mcp::run(&config, cmd),
        Command::Ps(a) => remote::ps(&config, a),
        Command::Attach(a) => remote::attach(&config, a),
        Command::Ctl(a) => remote::ctl(&config, a),
        Command::Eval(a) => eval::eval(&config, a),
        Command::Report(a) => report::report(a),
        Command::Compare(a) => report::compare(&config, a),
        Command::Scan(a) => scan::scan(&config, a),
        Command::Otlp(cmd) => otlp::run(&config, cmd),
        Command::Plan { task, budget, tau, json } => budget::plan(&config, &task, budget, tau, json),
        Command::Experience(ExperienceCommand::Import { file }) => budget::experience_import(&config, &file),
        Command::Experience(ExperienceCommand::Show) => budget::experience_show(&config),
        Command::Graph(GraphCommand::Build { trajectories }) => graph::build(config, trajectories),
        Command::Graph(GraphCommand::Show { tool, json }) => graph::show(&config, &tool, json),
        Command::Trace(TraceCommand::Show { file, json }) => trace::show(&file, json),
        Command::Trace(TraceCommand::Diff(a)) => trace::diff::diff(&config, a),
        Command::Trace(TraceCommand::ToTasks(a)) => trace::to_tasks::to_tasks(a),
        Command::Trace(TraceCommand::ToTrajectories(a)) => trace::to_trajectories::to_trajectories(a),
        Command::Trace(TraceCommand::Export(a)) => otel::export(a),
        Command::Trace(TraceCommand::Import(a)) => trace::import::import_file(a),
        Command::Tools(ToolsCommand::List { json, mcp_url }) => tools::list(&tools::source(config, mcp_url), json),
        Command::Tools(ToolsCommand::Call { name, args, seed, json, mcp_url }) => {
            tools::call(&tools::source(config, mcp_url), &name, &args, seed, json)
        }
        Command::Retrieve(a) => retrieval::run(&config, RetrievalCommand::Search(a)),
        Command::Retrieval(cmd) => retrieval::run(&config, cmd),
        Command::Probe(a) => probe::probe(&config, a),
        Command::Bench(cmd) => bench::run(cmd),
        Command::SoakPlot(a) => soak_plot::soak_plot(a),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
