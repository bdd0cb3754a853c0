//! Argument parsing and the headless subcommands.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::event::RunOutcome;
use switchyard::engine::state::{RunSummary, SessionState};
use switchyard::engine::trace::read_trace;
use switchyard::engine::{Control, ParamChange, Scheduled, StrategyKind};
use switchyard::eval::report::{MatrixRow, Metrics, matrix_table, table};
use switchyard::graph::START;
use switchyard::model::Role;
use switchyard::session::{self, GraphSource, SessionOptions, Tape, TaskSource};
use switchyard::tool::fault::Fault;
use switchyard::ui::Theme;

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

#[derive(Args, Debug, Default)]
struct RunArgs {
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
    /// Print the summary as JSON.
    #[arg(long)]
    json: bool,
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

#[derive(Args, Debug, Default)]
struct UiArgs {
    /// One task, typed here.
    #[arg(long)]
    task: Option<String>,
    /// react, toolnet or rewoo (default: the config's).
    #[arg(long)]
    strategy: Option<StrategyKind>,
    #[command(flatten)]
    common: Common,
    /// Write the trace here (default: a new file under DATA_DIR/traces).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// dark, light, high-contrast, or a theme file (default: the config's).
    #[arg(long)]
    theme: Option<String>,
    /// Milliseconds to wait before each call (default: the config's).
    #[arg(long)]
    pace: Option<u64>,
    /// Start paused: press space to run, s to step.
    #[arg(long)]
    paused: bool,
    /// Start from the trajectories' graph, not the saved one.
    #[arg(long)]
    fresh_graph: bool,
    /// Do not save the learnt graph.
    #[arg(long)]
    no_save: bool,
    /// Record every model reply to this cassette.
    #[arg(long, conflicts_with = "replay_models")]
    record: Option<PathBuf>,
    /// Answer model calls from this cassette instead of the models.
    #[arg(long = "replay-models")]
    replay_models: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct EvalArgs {
    /// Strategies to compare, comma-separated: react, toolnet, rewoo (default: react,toolnet;
    /// with --matrix: rewoo).
    #[arg(long, value_delimiter = ',')]
    strategy: Option<Vec<StrategyKind>>,
    #[command(flatten)]
    common: Common,
    /// How many tools `react` is offered: a number, or `all` (the paper's baseline).
    #[arg(long, default_value = "all")]
    react_k: String,
    /// One row per value: tau=0,0.05,0.1 or budget=10,20,30.
    #[arg(long)]
    sweep: Option<String>,
    /// Before measuring, gather experience with one unbudgeted react pass over
    /// the task set (seed + 1), so BTP's v and F̃ see failures, not only the
    /// trajectories' successes.
    #[arg(long)]
    warmup: bool,
    /// Run rewoo once per combination of models: ROLE=MODEL,MODEL..., repeatable, e.g.
    /// --matrix planner=sim-weak,sim-strong --matrix solver=sim-weak,sim-strong.
    #[arg(long = "matrix", value_name = "ROLE=MODELS")]
    matrix: Vec<String>,
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum GraphCommand {
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

#[derive(Subcommand, Debug)]
enum ExperienceCommand {
    /// Read past trajectories (JSON Lines of {"query", "tools"}) into the store.
    Import { file: PathBuf },
    /// How many usages the store holds, per tool.
    Show,
}

#[derive(Subcommand, Debug)]
enum TraceCommand {
    /// Rebuild a run's state from its trace and summarise it.
    Show {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
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
        Command::Ui(a) => workbench(&config, a),
        Command::Replay { file, theme } => replay(&config, &file, theme),
        Command::Run(a) => run(&config, a),
        Command::Eval(a) => eval(&config, a),
        Command::Plan { task, budget, tau, json } => plan(&config, &task, budget, tau, json),
        Command::Experience(ExperienceCommand::Import { file }) => experience_import(&config, &file),
        Command::Experience(ExperienceCommand::Show) => experience_show(&config),
        Command::Graph(GraphCommand::Build { trajectories }) => graph_build(config, trajectories),
        Command::Graph(GraphCommand::Show { tool, json }) => graph_show(&config, &tool, json),
        Command::Trace(TraceCommand::Show { file, json }) => trace_show(&file, json),
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

/// What `run` and `ui` share: the task, strategy, graph and model tape.
fn session_options(
    common: &Common,
    task: Option<String>,
    strategy: Option<StrategyKind>,
    fresh_graph: bool,
    no_save: bool,
    record: Option<PathBuf>,
    replay: Option<PathBuf>,
) -> Result<SessionOptions> {
    let mut opts = common_options(common)?;
    if let Some(t) = task {
        if common.tasks.is_some() {
            return Err(eyre!("--task and --tasks exclude each other: give one task or a task file"));
        }
        opts.tasks = TaskSource::Text(t);
    }
    opts.strategy = strategy;
    opts.graph = if fresh_graph { GraphSource::Fresh } else { GraphSource::Saved };
    opts.save_graph = !no_save;
    opts.tape = match (record, replay) {
        (Some(r), _) => Tape::Record(r),
        (_, Some(r)) => Tape::Replay(r),
        _ => Tape::Live,
    };
    Ok(opts)
}

fn run(config: &Config, a: RunArgs) -> Result<ExitCode> {
    let mut opts = session_options(&a.common, a.task, a.strategy, a.fresh_graph, a.no_save, a.record, a.replay)?;
    opts.trace = a.trace.clone();
    let prepared = session::prepare(config, &opts)?;
    let outcome = runtime()?.block_on(session::run(prepared))?;
    let state = outcome.state;
    let metrics = Metrics::from_state(state.strategy.map(|s| s.as_str()).unwrap_or("run"), &state);
    if a.json {
        let runs: Vec<serde_json::Value> = state.finished.iter().map(run_json).collect();
        let out =
            serde_json::json!({ "metrics": metrics, "models": accounts_json(&state), "runs": runs, "trace": a.trace });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_session(&state);
        print!("{}", table(std::slice::from_ref(&metrics), &state.cost_unit));
        if state.finished.iter().any(|r| r.budget.is_some()) || state.params.budget.is_some() {
            print!("{}", switchyard::eval::report::budget_table(std::slice::from_ref(&metrics), &state.cost_unit));
        }
        for ((role, model), acc) in &state.accounts {
            println!(
                "{role:<10} {model:<12} {:>5} calls {:>9} tokens in {:>7} out {:>10.4} {}",
                acc.calls, acc.usage.prompt_tokens, acc.usage.completion_tokens, acc.cost, state.cost_unit
            );
        }
        if let Some(t) = &a.trace {
            println!("trace: {}", t.display());
        }
    }
    // A model that failed for good (down, refusing the key, ...) is worth a
    // non-zero exit even though the summary was printed.
    let failed: Vec<&RunSummary> =
        state.finished.iter().filter(|r| matches!(r.outcome, RunOutcome::Failed { .. })).collect();
    if let Some(first) = failed.first() {
        if let RunOutcome::Failed { error } = &first.outcome {
            eprintln!(
                "error: {} of {} runs failed; the first, run {}: {error}",
                failed.len(),
                state.finished.len(),
                first.run
            );
        }
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

/// Calls, tokens and cost per role and model.
fn accounts_json(state: &SessionState) -> Vec<serde_json::Value> {
    state
        .accounts
        .iter()
        .map(|((role, model), a)| {
            let simulated = state.models.iter().any(|m| m.model.name == *model && m.model.simulated);
            serde_json::json!({
                "role": role, "model": model, "simulated": simulated, "calls": a.calls,
                "prompt_tokens": a.usage.prompt_tokens, "completion_tokens": a.usage.completion_tokens,
                "cost": a.cost, "latency_ms": a.latency_ms,
            })
        })
        .collect()
}

fn workbench(config: &Config, a: UiArgs) -> Result<ExitCode> {
    // Everything that can be wrong is found before the terminal is taken over.
    let theme = Theme::resolve(a.theme.as_deref().unwrap_or(&config.theme))?;
    switchyard::ui::term::check_terminal()?;
    let mut opts = session_options(&a.common, a.task, a.strategy, a.fresh_graph, a.no_save, a.record, a.replay_models)?;
    opts.start_paused = a.paused;
    opts.linger = true;
    opts.pace_ms = a.pace.unwrap_or(config.pace_ms);
    let trace = match a.trace {
        Some(t) => t,
        None => {
            let stamp =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            config.data_dir()?.join("traces").join(format!("session-{stamp}.jsonl"))
        }
    };
    opts.trace = Some(trace.clone());
    let prepared = session::prepare(config, &opts)?;
    runtime()?.block_on(switchyard::ui::term::run_live(prepared, theme))?;
    println!("trace: {}\nreplay it with: switchyard replay {}", trace.display(), trace.display());
    Ok(ExitCode::SUCCESS)
}

fn replay(config: &Config, file: &std::path::Path, theme: Option<String>) -> Result<ExitCode> {
    let theme = Theme::resolve(theme.as_deref().unwrap_or(&config.theme))?;
    let events = read_trace(file)?;
    switchyard::ui::term::check_terminal()?;
    runtime()?.block_on(switchyard::ui::term::run_replay(events, theme))?;
    Ok(ExitCode::SUCCESS)
}

fn run_json(r: &RunSummary) -> serde_json::Value {
    serde_json::json!({
        "run": r.run, "task_id": r.task_id, "outcome": r.outcome, "answer": r.answer, "success": r.success,
        "cost": r.cost, "prompt_tokens": r.usage.prompt_tokens, "completion_tokens": r.usage.completion_tokens,
        "steps": r.steps, "tool_calls": r.tool_calls, "path": r.path,
    })
}

fn print_session(state: &SessionState) {
    let models: Vec<String> = state
        .models
        .iter()
        .filter(|m| state.strategy.is_some_and(|s| s.roles().contains(&m.role)))
        .map(|m| format!("{} = {}{}", m.role, m.model.name, if m.model.simulated { " (simulated)" } else { "" }))
        .collect();
    println!(
        "strategy {}, seed {}, {} tools, {} tasks; {}",
        state.strategy.map(|s| s.as_str()).unwrap_or("?"),
        state.seed,
        state.tools.len(),
        state.finished.len(),
        models.join(", ")
    );
    println!("{:>4}  {:<12} {:<8} {:>5} {:>8}  {:<40} path", "run", "task", "result", "steps", "tokens", "answer");
    for r in &state.finished {
        let result = match (&r.success, &r.outcome) {
            (Some(true), _) => "ok",
            (Some(false), RunOutcome::Answered) => "wrong",
            (None, RunOutcome::Answered) => "answered",
            (_, RunOutcome::MaxSteps) => "no answer",
            (_, RunOutcome::Stopped) => "stopped",
            (_, RunOutcome::Restarted) => "restarted",
            (_, RunOutcome::OutOfBudget) => "no budget",
            (_, RunOutcome::Failed { .. }) => "failed",
            (_, RunOutcome::BadPlan { .. }) => "bad plan",
        };
        let answer: String = r.answer.clone().unwrap_or_default().chars().take(40).collect();
        println!(
            "{:>4}  {:<12} {:<8} {:>5} {:>8}  {:<40} {}",
            r.run,
            r.task_id,
            result,
            r.steps,
            r.usage.prompt_tokens + r.usage.completion_tokens,
            answer,
            r.path.join(" > ")
        );
    }
}

fn eval(config: &Config, a: EvalArgs) -> Result<ExitCode> {
    if !a.matrix.is_empty() {
        return eval_matrix(config, a);
    }
    let rt = runtime()?;
    let mut rows = Vec::new();
    let mut unit = config.cost_unit.clone();
    let sweep: Vec<(String, String)> = match &a.sweep {
        None => vec![(String::new(), String::new())],
        Some(spec) => {
            let (name, values) = spec.split_once('=').ok_or_else(|| eyre!("--sweep: expected NAME=V1,V2,..."))?;
            if !matches!(name, "tau" | "budget" | "alpha" | "beta" | "top_k") {
                return Err(eyre!("--sweep: '{name}' cannot be swept (tau, budget, alpha, beta, top_k)"));
            }
            values.split(',').map(|v| (name.to_string(), v.trim().to_string())).collect()
        }
    };
    let seed_experience = eval_experience(config, &a, &rt)?;
    let budgeted = a.common.budget.is_some() || a.sweep.as_deref().is_some_and(|s| s.starts_with("budget="));
    let strategies = a.strategy.clone().unwrap_or_else(|| vec![StrategyKind::React, StrategyKind::Toolnet]);
    for (sweep_name, sweep_value) in &sweep {
        for strategy in &strategies {
            let mut opts = eval_options(&a.common, &seed_experience)?;
            if !sweep_name.is_empty() {
                opts.param_changes.push(
                    ParamChange::parse(&format!("{sweep_name}={sweep_value}")).map_err(|e| eyre!("--sweep: {e}"))?,
                );
            }
            opts.strategy = Some(*strategy);
            let mut label = strategy.as_str().to_string();
            if *strategy == StrategyKind::React {
                let k = if a.react_k == "all" {
                    session::load_library(config)?.len()
                } else {
                    a.react_k.parse().map_err(|_| eyre!("--react-k: '{}' is neither a number nor 'all'", a.react_k))?
                };
                opts.param_changes.push(ParamChange::TopK(k));
                label = format!("react (k={})", a.react_k);
            }
            if budgeted {
                let on = opts.btp.unwrap_or(config.btp.enabled);
                label = format!("{label} btp {}", if on { "on" } else { "off" });
            }
            if !sweep_name.is_empty() {
                label = format!("{label} {sweep_name}={sweep_value}");
            }
            let outcome = rt.block_on(session::run(session::prepare(config, &opts)?))?;
            unit = outcome.state.cost_unit.clone();
            rows.push(Metrics::from_state(label, &outcome.state));
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows, &unit));
        if budgeted {
            print!("{}", switchyard::eval::report::budget_table(&rows, &unit));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// BTP's estimates start from the configured trajectories, held in memory:
/// an experiment neither reads nor grows the saved experience.
fn eval_experience(
    config: &Config,
    a: &EvalArgs,
    rt: &tokio::runtime::Runtime,
) -> Result<Vec<switchyard::budget::experience::Experience>> {
    let mut seed_experience = match &config.trajectories {
        Some(p) => switchyard::budget::experience::import_trajectories(p)?,
        None => Vec::new(),
    };
    if a.warmup {
        let mut opts = common_options(&a.common)?;
        opts.seed = Some(opts.seed.unwrap_or(config.seed) + 1);
        opts.strategy = Some(StrategyKind::React);
        opts.btp = Some(false);
        opts.param_changes.push(ParamChange::TopK(session::load_library(config)?.len()));
        opts.experience = session::ExperienceSource::InMemory(seed_experience.clone());
        opts.save_graph = false;
        seed_experience = rt.block_on(session::run(session::prepare(config, &opts)?))?.experience;
    }
    Ok(seed_experience)
}

/// One measured session of an experiment: it starts from the trajectories
/// and the given experience, and leaves the saved graph, experience and
/// tool labels alone.
fn eval_options(common: &Common, experience: &[switchyard::budget::experience::Experience]) -> Result<SessionOptions> {
    let mut opts = common_options(common)?;
    opts.experience = session::ExperienceSource::InMemory(experience.to_vec());
    opts.graph = GraphSource::Fresh;
    opts.save_graph = false;
    opts.fresh_categories = true;
    Ok(opts)
}

/// `--matrix ROLE=A,B`: the role and its models.
fn matrix_axis(spec: &str) -> Result<(Role, Vec<String>)> {
    let (role, models) = spec
        .split_once('=')
        .ok_or_else(|| eyre!("--matrix {spec}: expected ROLE=MODEL,MODEL..., e.g. planner=sim-weak,sim-strong"))?;
    let role = Role::parse(role.trim()).ok_or_else(|| {
        eyre!("--matrix {spec}: unknown role '{}' (planner, solver, classifier, actor, evaluator, judge)", role.trim())
    })?;
    let models: Vec<String> = models.split(',').map(|m| m.trim().to_string()).collect();
    if models.iter().any(String::is_empty) {
        return Err(eyre!("--matrix {spec}: an empty model name"));
    }
    Ok((role, models))
}

/// The rewoo paper's Table 4: every combination of the listed models in
/// their roles, each a fresh session over the same tasks with the same seed.
fn eval_matrix(config: &Config, a: EvalArgs) -> Result<ExitCode> {
    if let Some(s) = a.strategy.as_ref().filter(|s| s.iter().any(|k| *k != StrategyKind::Rewoo)) {
        let given: Vec<&str> = s.iter().map(|k| k.as_str()).collect();
        return Err(eyre!(
            "--matrix runs the rewoo strategy; --strategy {} conflicts with it (drop --strategy or give rewoo)",
            given.join(",")
        ));
    }
    if a.sweep.is_some() {
        return Err(eyre!("--matrix and --sweep exclude each other: vary the models or a parameter"));
    }
    let axes = a.matrix.iter().map(|m| matrix_axis(m)).collect::<Result<Vec<_>>>()?;
    let cells = session::model_matrix(config, &axes).map_err(|e| eyre!("--matrix: {e}"))?;
    let varied: Vec<Role> = axes.iter().map(|(r, _)| *r).collect();
    let rt = runtime()?;
    let seed_experience = eval_experience(config, &a, &rt)?;
    let mut rows = Vec::new();
    for cell in &cells {
        let mut opts = eval_options(&a.common, &seed_experience)?;
        opts.strategy = Some(StrategyKind::Rewoo);
        let outcome = rt.block_on(session::run(session::prepare(&cell.config, &opts)?))?;
        rows.push(MatrixRow::from_state(&varied, &outcome.state));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        let unit = rows.first().map(|r| r.cost_unit.clone()).unwrap_or_else(|| config.cost_unit.clone());
        print!("{}", matrix_table(&rows, &unit));
    }
    Ok(ExitCode::SUCCESS)
}

fn plan(config: &Config, task: &str, budget: Option<f64>, tau: Option<f64>, json: bool) -> Result<ExitCode> {
    let budget =
        budget.or(config.params.budget).ok_or_else(|| eyre!("no budget: give --budget B (or set params.budget)"))?;
    let tau = tau.unwrap_or(config.params.tau);
    let report = session::plan_task(config, task, budget, tau)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "B = {:.2}, c_s = {:.2}, R = {:.2}, τ = {tau}, λ = {}; {} experience records",
        report.budget, report.fixed_cost, report.remaining, report.lambda, report.experience
    );
    println!("{:<22} {:>8} {:>6} {:>6} {:>6} {:>11}", "tool", "cost", "v", "F̃", "calls", "plan cost");
    for r in &report.rows {
        println!(
            "{:<22} {:>8.2} {:>6.2} {:>6.2} {:>6} {:>11.2}{}",
            r.tool,
            r.cost,
            r.value,
            r.freq,
            r.calls,
            r.cost * f64::from(r.calls),
            if r.defaulted { "  (no experience: defaults)" } else { "" }
        );
    }
    println!("planned: {} calls, {:.2} of R = {:.2}", report.planned_calls, report.planned_cost, report.remaining);
    Ok(ExitCode::SUCCESS)
}

fn experience_import(config: &Config, file: &std::path::Path) -> Result<ExitCode> {
    let records = switchyard::budget::experience::import_trajectories(file)?;
    let path = session::experience_path(config)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("could not create {}", dir.display()))?;
    }
    let mut store = switchyard::budget::experience::ExperienceStore::open(&path)?;
    store.append(&records)?;
    println!("imported {} tool usages from {} into {}", records.len(), file.display(), path.display());
    Ok(ExitCode::SUCCESS)
}

fn experience_show(config: &Config) -> Result<ExitCode> {
    let path = session::experience_path(config)?;
    let store = switchyard::budget::experience::ExperienceStore::open(&path)?;
    let mut per_tool: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for r in store.records() {
        let e = per_tool.entry(r.tool.as_str()).or_default();
        e.0 += 1;
        e.1 += usize::from(r.helpful);
    }
    println!("{}: {} usages", path.display(), store.records().len());
    for (tool, (n, good)) in per_tool {
        println!("  {tool:<24} {n:>5} used {good:>5} helpful");
    }
    Ok(ExitCode::SUCCESS)
}

fn graph_build(mut config: Config, trajectories: Option<PathBuf>) -> Result<ExitCode> {
    if let Some(t) = trajectories {
        config.trajectories = Some(t);
    }
    let library = session::load_library(&config)?;
    let graph = session::build_graph(&config, &library)?;
    let path = session::graph_path(&config)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).wrap_err_with(|| format!("could not create {}", dir.display()))?;
    }
    graph.save(&path)?;
    let edges: usize = std::iter::once(START).chain(graph.tools()).map(|n| graph.out_edges(n).len()).sum();
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

fn graph_show(config: &Config, tool: &str, json: bool) -> Result<ExitCode> {
    let library = session::load_library(config)?;
    let graph = session::load_graph(config, &library, GraphSource::Saved)?;
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
    println!("  successors:");
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

fn trace_show(file: &std::path::Path, json: bool) -> Result<ExitCode> {
    let events = read_trace(file)?;
    let state = SessionState::from_events(&events);
    if json {
        let runs: Vec<serde_json::Value> = state.finished.iter().map(run_json).collect();
        let m = Metrics::from_state(state.strategy.map(|s| s.as_str()).unwrap_or("trace"), &state);
        let time = switchyard::eval::timing::TimeSplit::from_events(&events);
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"events": events.len(), "metrics": m, "time": time, "runs": runs})
            )?
        );
    } else {
        println!("{}: {} events", file.display(), events.len());
        print_session(&state);
        let m = Metrics::from_state(state.strategy.map(|s| s.as_str()).unwrap_or("trace"), &state);
        print!("{}", table(&[m], &state.cost_unit));
        println!("{}", switchyard::eval::timing::TimeSplit::from_events(&events).describe());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
