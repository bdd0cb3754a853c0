//! Setting a session up from a config: the library, the task list, the
//! graph, the models (recorded or replayed), the trace; then running it.
//! The command line, the tests and the workbench all start sessions here.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{Config, ConfigError};
use crate::engine::trace::{TraceError, TraceWriter};
use crate::engine::{
    Engine, EngineError, EngineHandle, EngineSetup, LogicalClock, ModelSlot, Models, Scheduled, SessionOutcome,
    StrategyKind, SystemClock,
};
use crate::eval::tasks::{Task, TaskError, load_tasks};
use crate::graph::{GraphError, ToolGraph, read_trajectories};
use crate::model::ChatModel;
use crate::model::cassette::{Cassette, CassetteError};
use crate::tool::ToolLibrary;
use crate::tool::manifest::{ManifestError, load_paths};

#[derive(thiserror::Error, Debug)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Tasks(#[from] TaskError),
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Cassette(#[from] CassetteError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{0}")]
    Invalid(String),
}

/// Where the tasks come from.
#[derive(Clone, Debug, Default)]
pub enum TaskSource {
    /// The config's task file (the sample set by default).
    #[default]
    Configured,
    File(PathBuf),
    /// One task typed on the command line.
    Text(String),
}

/// Where ToolNet's graph comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GraphSource {
    /// The graph saved in the data directory, else built from the trajectories.
    #[default]
    Saved,
    /// Built anew from the trajectories (uniform without them), ignoring any saved graph.
    Fresh,
}

/// How model replies are recorded or replayed.
#[derive(Clone, Debug, Default)]
pub enum Tape {
    #[default]
    Live,
    Record(PathBuf),
    Replay(PathBuf),
}

#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    pub strategy: Option<StrategyKind>,
    pub seed: Option<u64>,
    pub tasks: TaskSource,
    /// Run this many tasks, cycling through the task list.
    pub count: Option<usize>,
    pub graph: GraphSource,
    /// Save the learnt graph to the data directory afterwards.
    pub save_graph: bool,
    pub trace: Option<PathBuf>,
    pub schedule: Vec<Scheduled>,
    pub param_changes: Vec<crate::engine::ParamChange>,
    /// Ticks instead of milliseconds, so a seed gives a byte-identical trace.
    pub logical_clock: bool,
    pub tape: Tape,
    pub start_paused: bool,
    /// Wait this long before each call (the workbench's pace).
    pub pace_ms: u64,
    /// After the last task, wait for the user (the workbench) instead of ending.
    pub linger: bool,
}

pub fn load_library(config: &Config) -> Result<Arc<ToolLibrary>, SetupError> {
    let lib = load_paths(&config.library)?;
    if lib.is_empty() {
        return Err(SetupError::Invalid(format!("the library ({}) holds no tools", show_paths(&config.library))));
    }
    Ok(Arc::new(lib))
}

pub fn load_task_list(config: &Config, source: &TaskSource, count: Option<usize>) -> Result<Vec<Task>, SetupError> {
    let tasks = match source {
        TaskSource::Configured => load_tasks(&config.tasks)?,
        TaskSource::File(p) => load_tasks(p)?,
        TaskSource::Text(t) if t.trim().is_empty() => {
            return Err(SetupError::Invalid("--task: the task text is empty".into()));
        }
        TaskSource::Text(t) => vec![Task { id: "task".into(), query: t.clone(), answer: None, tools: Vec::new() }],
    };
    if tasks.is_empty() {
        return Err(SetupError::Invalid("the task list is empty".into()));
    }
    Ok(match count {
        Some(n) => tasks.iter().cycle().take(n).cloned().collect(),
        None => tasks,
    })
}

pub fn graph_path(config: &Config) -> Result<PathBuf, SetupError> {
    Ok(config.data_dir()?.join("graph.json"))
}

/// ToolNet's static graph from the configured trajectories (uniform without).
pub fn build_graph(config: &Config, library: &ToolLibrary) -> Result<ToolGraph, SetupError> {
    let names: Vec<String> = library.names().map(str::to_string).collect();
    match &config.trajectories {
        Some(p) => {
            let trajectories: Vec<Vec<String>> = read_trajectories(p)?.into_iter().map(|t| t.tools).collect();
            Ok(ToolGraph::from_trajectories(&names, &trajectories)?)
        }
        None => Ok(ToolGraph::fully_connected(&names)),
    }
}

pub fn load_graph(config: &Config, library: &ToolLibrary, source: GraphSource) -> Result<ToolGraph, SetupError> {
    if source == GraphSource::Saved {
        let path = graph_path(config)?;
        if path.exists() {
            return Ok(ToolGraph::load(&path)?);
        }
    }
    build_graph(config, library)
}

/// The models, wrapped in a cassette when recording or replaying.
pub fn prepare_models(config: &Config, seed: u64, tape: &Tape) -> Result<Models, SetupError> {
    match tape {
        Tape::Live => Ok(config.build_models(seed)?),
        Tape::Record(path) => {
            if path.exists() {
                // The cassette appends; start a fresh recording.
                std::fs::remove_file(path).map_err(|e| SetupError::Invalid(format!("{}: {e}", path.display())))?;
            }
            let live = config.build_models(seed)?;
            let mut wrapped: Vec<(String, ModelSlot)> = Vec::new();
            let mut models = None::<Models>;
            for (role, slot) in live.assignments() {
                let name = slot.model.info().name;
                let rec = match wrapped.iter().find(|(n, _)| *n == name) {
                    Some((_, s)) => s.clone(),
                    None => {
                        let s = ModelSlot {
                            model: Arc::new(Cassette::record(slot.model.clone(), path)?) as Arc<dyn ChatModel>,
                            price: slot.price,
                        };
                        wrapped.push((name, s.clone()));
                        s
                    }
                };
                match models.as_mut() {
                    None => models = Some(Models::single(rec.model.clone(), rec.price)),
                    Some(m) => m.set(role, rec),
                }
            }
            models.ok_or_else(|| SetupError::Invalid("no model configured".into()))
        }
        Tape::Replay(path) => {
            let live = config.build_models(seed).ok();
            let cassette: Arc<dyn ChatModel> = Arc::new(Cassette::replay(path)?);
            // Prices still come from the config when it names them.
            let price = live.as_ref().map(|m| m.get(crate::model::Role::Actor).price).unwrap_or_default();
            Ok(Models::single(cassette, price))
        }
    }
}

/// A session ready to run: the engine, its control handle, and what it will do.
pub struct Prepared {
    pub engine: Engine,
    pub handle: EngineHandle,
    pub tasks: Vec<Task>,
    pub graph_file: Option<PathBuf>,
}

pub fn prepare(config: &Config, opts: &SessionOptions) -> Result<Prepared, SetupError> {
    let library = load_library(config)?;
    let tasks = load_task_list(config, &opts.tasks, opts.count)?;
    let strategy = opts.strategy.unwrap_or(config.strategy);
    let seed = opts.seed.unwrap_or(config.seed);
    let mut params = config.params.clone();
    for c in &opts.param_changes {
        c.validate().map_err(|e| SetupError::Invalid(e.to_string()))?;
        params.apply(c);
    }
    for s in &opts.schedule {
        if let crate::engine::Control::InjectFault { tool, .. } = &s.control
            && library.get(tool).is_none()
        {
            return Err(SetupError::Invalid(format!("--fault: no tool named '{tool}' in the library")));
        }
    }
    let graph = match strategy {
        StrategyKind::Toolnet => Some(load_graph(config, &library, opts.graph)?),
        StrategyKind::React => None,
    };
    let models = prepare_models(config, seed, &opts.tape)?;
    let mut setup = EngineSetup::new(library, models, strategy);
    setup.params = params;
    setup.seed = seed;
    setup.graph = graph;
    setup.clock = if opts.logical_clock { Arc::new(LogicalClock::default()) } else { Arc::new(SystemClock::new()) };
    setup.tool_timeout = Duration::from_millis(config.tool_timeout_ms);
    setup.schedule = opts.schedule.clone();
    setup.cost_unit = config.cost_unit.clone();
    setup.start_paused = opts.start_paused;
    setup.pace = Duration::from_millis(opts.pace_ms);
    setup.linger = opts.linger;
    let (mut engine, handle) = Engine::new(setup);
    if let Some(p) = &opts.trace {
        engine.set_trace(TraceWriter::create(p)?);
    }
    let graph_file =
        if opts.save_graph && strategy == StrategyKind::Toolnet { Some(graph_path(config)?) } else { None };
    Ok(Prepared { engine, handle, tasks, graph_file })
}

/// Runs a prepared session to its end and saves the learnt graph if asked.
pub async fn run(prepared: Prepared) -> Result<SessionOutcome, SetupError> {
    let Prepared { engine, handle, tasks, graph_file } = prepared;
    let outcome = engine.run(tasks).await;
    drop(handle);
    let outcome = outcome?;
    if let (Some(path), Some(g)) = (graph_file, outcome.graph.as_ref()) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| SetupError::Invalid(format!("{}: {e}", dir.display())))?;
        }
        g.save(&path)?;
    }
    Ok(outcome)
}

fn show_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}
