//! Setting a session up from a config: the library, the task list, the
//! graph, the models (recorded or replayed), the trace; then running it.
//! The command line, the tests and the workbench all start sessions here.
//! It is long because every source a session reads is wired here, once.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub mod fork;

pub use crate::budget::ToolCosts;
use crate::budget::btp::{BtpSetup, BudgetReport};
use crate::budget::experience::ExperienceStore;
use crate::config::{Config, ConfigError, DataPaths};
use crate::engine::host::Labels;
use crate::engine::params::Params;
use crate::engine::trace::{TraceError, TraceWriter};
use crate::engine::{
    Engine, EngineError, EngineHandle, EngineSetup, LogicalClock, ModelSlot, Models, Scheduled, SessionOutcome,
    Strategy, StrategyKind, SystemClock,
};
use crate::graph::{END, GraphError, GraphStore, ToolGraph, read_numbered};
use crate::model::cassette::{Cassette, CassetteError};
use crate::model::{ChatModel, Role};
use crate::program::protocol::ProtocolStore;
use crate::retrieve::cotools::HeadsError;
use crate::retrieve::rescore::{RescoreError, Rescorer};
use crate::retrieve::settings::{load_heads, load_judge};
use crate::retrieve::{EmbedError, EmbedderKind, Retriever};
use crate::strategy::atc::Atc;
use crate::strategy::rewoo::Rewoo;
use crate::task::{Task, TaskError, TaskList, load_tasks};
use crate::tool::ToolLibrary;
use crate::tool::exec::Executor;
use crate::tool::manifest::ManifestError;
use crate::tool::mcp::{McpError, McpHub};
use crate::tool::sources::load_library as load_sources;
use crate::tool::tape::{TapeError, ToolTape};
use switchyard_dense::CrossRescorer;

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
    ToolTape(#[from] TapeError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("{config}: {source}")]
    Mcp { config: String, source: McpError },
    #[error("retrieval: {0}")]
    Retrieval(#[from] EmbedError),
    #[error("retrieval: {0}")]
    Heads(#[from] HeadsError),
    #[error("retrieval: {0}")]
    Rescore(#[from] RescoreError),
    #[error(transparent)]
    Otel(#[from] crate::otel::OtelError),
    #[error("{0}")]
    Invalid(String),
}

impl SetupError {
    /// The user suspended the session: not a failure, and its trace ends
    /// with `Suspended` for `switchyard resume`.
    pub fn is_suspended(&self) -> bool {
        matches!(self, SetupError::Engine(EngineError::Suspended))
    }
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

/// How model replies (`tape`) or tool calls (`tool_tape`) are recorded or replayed.
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
    pub tool_tape: Tape,
    /// Replayed tool calls take as long as they were recorded taking.
    pub replay_tools_latency: bool,
    pub start_paused: bool,
    /// Wait this long before each call (the workbench's pace).
    pub pace_ms: u64,
    /// After the last task, wait for the user (the workbench) instead of ending.
    pub linger: bool,
    /// BTP planning and enforcement: None follows the config.
    pub btp: Option<bool>,
    /// Where past tool usages come from and go to.
    pub experience: ExperienceSource,
    /// Replace every tool's cost (the BTP paper's setting: random integers).
    pub tool_costs: Option<ToolCosts>,
    /// rewoo: classify the tools anew, neither reading nor writing the saved
    /// labels (an experiment's pairs then all pay for the same classifier call).
    pub fresh_categories: bool,
    /// atc: probe these tools (empty: every undocumented one) instead of
    /// solving tasks (`switchyard probe`).
    pub probe_only: Option<Vec<String>>,
    /// atc: probe before each run (None: the config's `[atc] probe`).
    pub probe: Option<bool>,
    /// Replay this prefix of a recorded trace first (see `prepare_fork`).
    pub fork: Option<crate::engine::fork::ForkPlan>,
    /// OpenTelemetry export, over the config's `[otel]`.
    pub otel: crate::otel::OtelConfig,
    /// Hand back what the session learnt in its outcome (a concurrent eval).
    pub keep_learning: bool,
    /// An outside agent's session: where its gateway's calls arrive.
    pub bridge: Option<crate::strategy::bridge::BridgeInbox>,
    /// The MCP endpoint that serves this session's tools (the library is
    /// offered there once loaded).
    pub mcp_desk: Option<Arc<crate::mcp_gateway::SessionDesk>>,
}

/// Where BTP's experience comes from.
#[derive(Clone, Debug, Default)]
pub enum ExperienceSource {
    /// `DATA_DIR/experience.jsonl`, appended after each run.
    #[default]
    DataDir,
    /// Held in memory for this session only, starting from these usages (eval).
    InMemory(Vec<crate::budget::experience::Experience>),
}

/// The library with its costs replaced as asked, deterministically for the seed.
pub fn with_costs(library: &ToolLibrary, costs: ToolCosts, seed: u64) -> Result<ToolLibrary, SetupError> {
    use rand::{Rng, SeedableRng};
    let ToolCosts::Random { lo, hi } = costs;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xC057_C057);
    let tools = library
        .tools()
        .iter()
        .map(|t| {
            let mut t = (**t).clone();
            t.cost = f64::from(rng.random_range(lo..=hi));
            t
        })
        .collect();
    Ok(ToolLibrary::new(tools)?)
}

/// The library, and the MCP servers that serve some of its tools: they
/// run while this (or a clone of `mcp`) lives.
pub struct Tools {
    pub library: Arc<ToolLibrary>,
    pub mcp: Option<Arc<McpHub>>,
}

/// Where the OAuth tokens of the `[[mcp]]` server `name` are kept.
pub fn oauth_token_file(config: &Config, name: &str) -> Result<PathBuf, crate::config::ConfigError> {
    Ok(config.data_dir()?.join("oauth").join(format!("{name}.json")))
}

/// Loads every source of tools: the library's files, then the `[[mcp]]`
/// servers (started, and listed; a name another source took gets the
/// server's name in front).
pub fn load_tools(config: &Config) -> Result<Tools, SetupError> {
    let mut lib = load_sources(&config.library, &config.library_options)?;
    let mut mcp = None;
    if !config.mcp.is_empty() {
        let taken: HashSet<String> = lib.names().map(str::to_string).collect();
        let shown = config.path.as_deref().map_or_else(|| "config".to_string(), |p| p.display().to_string());
        let mut servers = config.mcp.clone();
        for s in &mut servers {
            if let Some(o) = s.oauth.as_mut() {
                // Without a data directory the server's connect says so.
                o.token_file = oauth_token_file(config, &s.name).ok();
            }
        }
        let (hub, specs) =
            McpHub::start(&servers, &taken).map_err(|source| SetupError::Mcp { config: shown, source })?;
        for spec in specs {
            lib.insert(spec)?;
        }
        mcp = Some(Arc::new(hub));
    }
    Ok(Tools { library: Arc::new(lib), mcp })
}

/// A run needs at least one tool; listing them does not.
fn with_tools(tools: Tools, config: &Config) -> Result<Tools, SetupError> {
    if !tools.library.is_empty() {
        return Ok(tools);
    }
    let mut sources = show_paths(&config.library);
    let servers: Vec<&str> = config.mcp.iter().map(|s| s.name.as_str()).collect();
    if !servers.is_empty() {
        sources = format!("{sources}; mcp: {}", servers.join(", "));
    }
    Err(SetupError::Invalid(format!("the library ({sources}) holds no tools")))
}

/// The library alone, not empty: any MCP servers are stopped once their
/// tools are listed.
pub fn load_library(config: &Config) -> Result<Arc<ToolLibrary>, SetupError> {
    Ok(with_tools(load_tools(config)?, config)?.library)
}

/// The tasks to run; `count` positions cycling through the source's when given.
pub fn load_task_list(config: &Config, source: &TaskSource, count: Option<usize>) -> Result<TaskList, SetupError> {
    let tasks = match source {
        TaskSource::Configured => load_tasks(&config.tasks)?,
        TaskSource::File(p) => load_tasks(p)?,
        TaskSource::Text(t) if t.trim().is_empty() => {
            return Err(SetupError::Invalid("--task: the task text is empty".into()));
        }
        TaskSource::Text(t) => {
            vec![Task { id: "task".into(), query: t.clone(), ..Task::default() }]
        }
    };
    if tasks.is_empty() {
        return Err(SetupError::Invalid("the task list is empty".into()));
    }
    let len = count.unwrap_or(tasks.len());
    Ok(TaskList::cycling(tasks, len))
}

/// ToolNet's static graph from the configured trajectories (uniform without).
pub fn build_graph(config: &Config, library: &ToolLibrary) -> Result<ToolGraph, SetupError> {
    let names: Vec<String> = library.names().map(str::to_string).collect();
    let mut graph = match &config.trajectories {
        Some(p) => {
            let numbered = read_numbered(p)?;
            // Named by its line here: the graph knows only its place.
            let stranger = numbered.iter().find_map(|(line, t)| {
                t.tools.iter().find(|n| library.get(n).is_none() && n.as_str() != END).map(|n| (*line, n))
            });
            if let Some((line, tool)) = stranger {
                return Err(GraphError::TrajectoryTool { path: p.clone(), line, tool: tool.clone() }.into());
            }
            let trajectories: Vec<Vec<String>> = numbered.into_iter().map(|(_, t)| t.tools).collect();
            ToolGraph::from_trajectories(&names, &trajectories)?
        }
        None => ToolGraph::fully_connected(&names),
    };
    // Known to hold the library's tools, so no engine of a session built
    // from it compares their names again.
    graph.take_tools(library.generation(), library.names());
    Ok(graph)
}

/// An outside agent's graph starts from the config's trajectories where
/// they fit its library; trajectories of other tools (the sample ones
/// under a library of the user's own) leave it uniform rather than stop a
/// session that does not walk the graph itself. ToolNet's own runs need
/// them right.
fn graph_for(
    kind: StrategyKind,
    built: Result<ToolGraph, SetupError>,
    library: &ToolLibrary,
) -> Result<ToolGraph, SetupError> {
    match (kind, built) {
        (StrategyKind::Agent, Err(e)) => {
            tracing::warn!(error = %e, "the trajectories do not fit the library: the agent's graph starts uniform");
            let mut graph = ToolGraph::fully_connected(&library.names().map(str::to_string).collect::<Vec<_>>());
            graph.take_tools(library.generation(), library.names());
            Ok(graph)
        }
        (_, built) => built,
    }
}

pub fn load_graph(
    config: &Config,
    data: Option<&DataPaths>,
    library: &ToolLibrary,
    source: GraphSource,
) -> Result<ToolGraph, SetupError> {
    if source == GraphSource::Saved {
        let path = need(data)?.graph();
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
            // Every configured model records, so the models a role can be
            // switched to are the same with and without the tape.
            let mut by_name: std::collections::BTreeMap<String, ModelSlot> = std::collections::BTreeMap::new();
            for slot in live.available() {
                let model: Arc<dyn ChatModel> = Arc::new(Cassette::record(slot.model.clone(), path)?);
                by_name.insert(slot.model.info().name, ModelSlot { model, price: slot.price });
            }
            wrap_roles(&live, &by_name)
        }
        Tape::Replay(path) => {
            // Every configured model, answered from the cassette under its
            // own name and price, so the replay's roles, accounts and trace
            // are the recorded run's. A config whose models cannot be built
            // here (a missing key) gets one cassette in every role.
            let Ok(live) = config.build_models(seed) else {
                return Ok(Models::single(Arc::new(Cassette::replay(path)?), Default::default()));
            };
            let mut by_name: std::collections::BTreeMap<String, ModelSlot> = std::collections::BTreeMap::new();
            for slot in live.available() {
                let info = slot.model.info();
                let model: Arc<dyn ChatModel> = Arc::new(Cassette::replay_as(path, &info)?);
                by_name.insert(info.name, ModelSlot { model, price: slot.price });
            }
            wrap_roles(&live, &by_name)
        }
    }
}

/// The live models' roles, each played by the wrapped model of the same name.
fn wrap_roles(live: &Models, by_name: &std::collections::BTreeMap<String, ModelSlot>) -> Result<Models, SetupError> {
    let slot_for = |role| -> Result<ModelSlot, SetupError> {
        let name = live.get(role).model.info().name;
        by_name.get(&name).cloned().ok_or_else(|| SetupError::Invalid(format!("no model named '{name}'")))
    };
    let actor = slot_for(crate::model::Role::Actor)?;
    let mut models = Models::single(actor.model, actor.price);
    models.set_reply_tokens(live.reply_tokens());
    for slot in by_name.values() {
        models.offer(slot.clone());
    }
    for (role, _) in live.assignments() {
        models.set(role, slot_for(role)?);
    }
    Ok(models)
}

/// A session ready to run: the engine, its control handle, and what it will do.
pub struct Prepared {
    pub engine: Engine,
    pub handle: EngineHandle,
    pub tasks: TaskList,
    /// The live OpenTelemetry export, when one is configured.
    pub otel: Option<crate::otel::LiveExport>,
}

pub fn prepare(config: &Config, opts: &SessionOptions) -> Result<Prepared, SetupError> {
    let shared = shared(config, opts)?;
    let tasks = load_task_list(config, &opts.tasks, opts.count)?;
    // ToolNet's graph, and where what it learns is kept: saved after every
    // update, so a session killed mid-run keeps every finished task's.
    let (graph, graph_store) = match shared.strategy {
        StrategyKind::Toolnet | StrategyKind::Agent if opts.save_graph => {
            let (saved, store) = GraphStore::open(shared.data()?.graph())?;
            let graph = match (opts.graph, saved) {
                (GraphSource::Saved, Some(g)) => g,
                _ => graph_for(shared.strategy, build_graph(config, &shared.library), &shared.library)?,
            };
            (Some(graph), Some(store))
        }
        StrategyKind::Toolnet | StrategyKind::Agent => {
            let loaded = load_graph(config, shared.data.as_ref(), &shared.library, opts.graph);
            (Some(graph_for(shared.strategy, loaded, &shared.library)?), None)
        }
        StrategyKind::React | StrategyKind::Rewoo | StrategyKind::Atc => (None, None),
    };
    let experience = match &opts.experience {
        ExperienceSource::DataDir => ExperienceStore::open(&shared.data()?.experience())
            .map_err(|e| SetupError::Invalid(format!("experience: {e}")))?,
        ExperienceSource::InMemory(records) => ExperienceStore::in_memory(records.clone()),
    };
    let learnt = Learnt { graph, experience, labels: Labels::new() };
    let mut prepared = shared.engine(config, opts, tasks, learnt, shared.seed)?;
    prepared.engine.set_graph_store(graph_store);
    if let Some(p) = &opts.trace {
        prepared.engine.set_trace(TraceWriter::create(p)?);
    }
    if let Some(settings) = opts.otel.over(&config.otel).settings()? {
        prepared.otel = Some(crate::otel::LiveExport::start(&settings, prepared.engine.subscribe())?);
    }
    Ok(prepared)
}

/// What every engine of a session shares: the library (with the costs the
/// options set), the MCP servers, the tool executor (one connection pool,
/// one tool cassette) and the models (one model cassette).
pub struct Shared {
    pub library: Arc<ToolLibrary>,
    mcp: Option<Arc<McpHub>>,
    executor: Executor,
    models: Models,
    pub strategy: StrategyKind,
    pub seed: u64,
    pub params: Params,
    /// Built once: a copy per engine costs far less than indexing the
    /// library again for every task of a concurrent eval.
    retriever: Retriever,
    /// The data directory's files; None where there is no data directory
    /// (what needs one then fails, naming why).
    pub data: Option<DataPaths>,
}

/// The learnt state an engine starts from.
pub struct Learnt {
    /// ToolNet's graph (None for strategies that walk none).
    pub graph: Option<ToolGraph>,
    pub experience: ExperienceStore,
    /// Tool labels already given (rewoo); empty: classify.
    pub labels: Labels,
}

/// Loads what a session's engines share, checking the options against it.
pub fn shared(config: &Config, opts: &SessionOptions) -> Result<Shared, SetupError> {
    let Tools { library, mcp } = with_tools(load_tools(config)?, config)?;
    let mut library = library;
    let seed = opts.seed.unwrap_or(config.seed);
    // The command line's costs over the config's.
    if let Some(c) = opts.tool_costs.or(config.btp.tool_costs) {
        library = Arc::new(with_costs(&library, c, seed)?);
    }
    if let Some(desk) = &opts.mcp_desk {
        desk.offer(ToolLibrary::clone(&library));
    }
    let strategy = opts.strategy.unwrap_or(config.strategy);
    let mut params = config.params.clone();
    for c in &opts.param_changes {
        c.validate().map_err(|e| SetupError::Invalid(e.to_string()))?;
        params.apply(c);
    }
    // A bridged agent's own tools are named before the agent shows them.
    let own_tools = strategy == crate::engine::StrategyKind::Agent;
    for s in opts.schedule.iter().filter(|_| !own_tools) {
        if let crate::engine::Control::InjectFault { tool, .. } = &s.control
            && library.get(tool).is_none()
        {
            return Err(SetupError::Invalid(format!("--fault: no tool named '{tool}' in the library")));
        }
        let named: Vec<&str> = match &s.control {
            crate::engine::Control::SetApproval { policy } => policy.tools.iter().map(String::as_str).collect(),
            crate::engine::Control::SetBreakpoint { condition } => condition.tool().into_iter().collect(),
            _ => Vec::new(),
        };
        if let Some(t) = named.into_iter().find(|t| library.get(t).is_none()) {
            return Err(SetupError::Invalid(format!("approvals and breakpoints: no tool named '{t}' in the library")));
        }
    }
    let executor = match &opts.tool_tape {
        Tape::Live => Executor::new(),
        Tape::Record(path) => Executor::with_tape(ToolTape::record(path)?),
        Tape::Replay(path) => Executor::with_tape(ToolTape::replay(path, opts.replay_tools_latency)?),
    };
    let executor = match &mcp {
        Some(hub) => executor.with_mcp(Arc::clone(hub)),
        None => executor,
    }
    .with_output_cap(config.tool_output_bytes);
    let models = prepare_models(config, seed, &opts.tape)?;
    for s in &opts.schedule {
        if let crate::engine::Control::InjectModelFault { target, .. } = &s.control {
            crate::engine::check_model_target(&models, target)
                .map_err(|e| SetupError::Invalid(format!("--fault: {e}")))?;
        }
    }
    let data = config.data_paths().ok();
    let retriever = match open_retriever(config, data.as_ref(), &library)? {
        Some(r) => r,
        None => Retriever::lexical(library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str()))),
    };
    Ok(Shared { library, mcp, executor, models, strategy, seed, params, retriever, data })
}

/// The data directory's files, or the error that says there is none.
fn need(data: Option<&DataPaths>) -> Result<&DataPaths, SetupError> {
    data.ok_or(SetupError::Config(ConfigError::NoDataDir))
}

impl Shared {
    /// The data directory's files, or the error that says there is none.
    pub fn data(&self) -> Result<&DataPaths, SetupError> {
        need(self.data.as_ref())
    }

    /// ToolNet's graph as the options ask for it (saved or from the
    /// trajectories), None for the strategies that walk none.
    pub fn graph(&self, config: &Config, opts: &SessionOptions) -> Result<Option<ToolGraph>, SetupError> {
        match self.strategy {
            StrategyKind::Toolnet => Ok(Some(load_graph(config, self.data.as_ref(), &self.library, opts.graph)?)),
            StrategyKind::React | StrategyKind::Rewoo | StrategyKind::Atc | StrategyKind::Agent => Ok(None),
        }
    }

    /// An engine over these parts for `tasks`, starting from `learnt`, with
    /// `seed` for its own randomness (tool calls, fault draws).
    pub fn engine(
        &self,
        config: &Config,
        opts: &SessionOptions,
        tasks: TaskList,
        learnt: Learnt,
        seed: u64,
    ) -> Result<Prepared, SetupError> {
        let plays: Box<dyn Strategy> = match self.strategy {
            StrategyKind::Rewoo => Box::new(Rewoo { categories: config.rewoo.categories.clone() }),
            StrategyKind::Atc => {
                let mut atc = config.atc.clone();
                atc.probe = opts.probe.unwrap_or(atc.probe);
                match &opts.probe_only {
                    Some(tools) => Box::new(Atc::probe_only(atc, tools.clone())),
                    None => Box::new(Atc::new(atc)),
                }
            }
            StrategyKind::Agent => match opts.bridge.as_ref() {
                Some(inbox) => Box::new(inbox.bridge()),
                None => {
                    return Err(SetupError::Invalid(
                        "the agent strategy needs the gateway: start it with `--agent -- CMD` or `switchyard gateway`"
                            .into(),
                    ));
                }
            },
            kind => kind.into(),
        };
        let mut setup = EngineSetup::new(Arc::clone(&self.library), self.models.clone(), plays);
        setup.params = self.params.clone();
        setup.seed = seed;
        setup.graph = learnt.graph;
        setup.labels = learnt.labels;
        setup.clock = if opts.logical_clock { Arc::new(LogicalClock::default()) } else { Arc::new(SystemClock::new()) };
        setup.tool_timeout = Duration::from_millis(config.tool_timeout_ms);
        setup.schedule = opts.schedule.clone();
        setup.cost_unit = config.cost_unit.clone();
        setup.start_paused = opts.start_paused;
        setup.pace = Duration::from_millis(opts.pace_ms);
        setup.linger = opts.linger;
        // Without a data directory rewoo still runs; it only classifies every session.
        setup.label_cache = if opts.fresh_categories { None } else { self.data.as_ref().map(DataPaths::categories) };
        let mut btp = BtpSetup::new(learnt.experience);
        btp.enforce = opts.btp.unwrap_or(config.btp.enabled);
        btp.lambda = config.btp.lambda;
        btp.candidates = config.btp.candidates;
        btp.time_rate = config.btp.time_rate;
        btp.model_judge = config.btp.model_judge;
        btp.defaults =
            crate::budget::estimate::Defaults { value: config.btp.default_value, freq: config.btp.default_freq };
        setup.btp = Some(btp);
        setup.retriever = Some(self.retriever.clone());
        setup.requery = config.retrieval.requery;
        if self.strategy == StrategyKind::Atc {
            setup.protocols = open_protocols(self.data.as_ref(), &setup.library)?;
        }
        setup.executor = self.executor.clone();
        setup.fork = opts.fork.clone();
        setup.keep_learning = opts.keep_learning;
        let (engine, handle) = Engine::new(setup);
        if let Some(hub) = &self.mcp {
            let notifier = handle.notifier();
            hub.listen(Box::new(move |e| notifier.server(e)));
        }
        Ok(Prepared { engine, handle, tasks, otel: None })
    }
}

/// The probed protocols of `DATA_DIR/protocols`, each checked now: a file
/// that cannot be read is an error naming it before anything runs. No data
/// directory: probes last for the session only.
fn open_protocols(data: Option<&DataPaths>, library: &ToolLibrary) -> Result<Option<ProtocolStore>, SetupError> {
    let Some(data) = data else { return Ok(None) };
    let store = ProtocolStore::new(data.protocols());
    if store.dir().is_dir() {
        for t in library.tools() {
            store.load(t).map_err(|e| SetupError::Invalid(e.to_string()))?;
        }
    }
    Ok(Some(store))
}

/// The config's retriever over `library`; None keeps the engine's BM25 (the
/// default, which needs no data directory).
pub fn open_retriever(
    config: &Config,
    data: Option<&DataPaths>,
    library: &ToolLibrary,
) -> Result<Option<Retriever>, SetupError> {
    if config.retrieval.embedder == EmbedderKind::Lexical {
        return Ok(None);
    }
    let data = need(data)?.root().to_path_buf();
    let Some(embedder) = switchyard_dense::embedder(&config.retrieval, &data)? else {
        return Ok(None);
    };
    let heads = match &config.retrieval.heads {
        Some(path) => Some(load_heads(path, embedder.as_ref())?),
        None => None,
    };
    let judge = match &config.retrieval.judge {
        Some(path) => Some(load_judge(path, embedder.as_ref())?),
        None => None,
    };
    let docs = library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str()));
    let retriever = config.retrieval.open(docs, embedder, &data, heads)?;
    let retriever = match judge {
        Some(j) => retriever.with_judge(j),
        None => retriever,
    };
    Ok(Some(match (&config.retrieval.rescore, &config.retrieval.cross_encoder) {
        (Some(path), _) => retriever.with_rescorer(Arc::new(Rescorer::load(path)?)),
        (None, Some(path)) => {
            let docs = library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str()));
            retriever.with_rescorer(Arc::new(CrossRescorer::load(&data, path, docs)?))
        }
        (None, None) => retriever,
    }))
}

/// Runs a prepared session to its end and saves the learnt graph if asked.
pub async fn run(prepared: Prepared) -> Result<SessionOutcome, SetupError> {
    let Prepared { engine, handle, tasks, otel } = prepared;
    let outcome = engine.run(tasks).await;
    drop(handle);
    // The engine is gone, so the export has seen the last event.
    if let Some(export) = otel {
        export.finish().await;
    }
    // The engine saved the learnt graph as it went.
    Ok(outcome?)
}

/// One combination of a model matrix: the models it gives the varied roles,
/// and a copy of the config in which they play them.
#[derive(Clone, Debug)]
pub struct MatrixCell {
    pub roles: Vec<(Role, String)>,
    pub config: Config,
}

/// Every combination of the models listed per role, the first role varying
/// slowest (`planner=A,B solver=A,B`: A·A, A·B, B·A, B·B). Roles not listed
/// keep the config's models.
pub fn model_matrix(config: &Config, axes: &[(Role, Vec<String>)]) -> Result<Vec<MatrixCell>, SetupError> {
    if axes.is_empty() {
        return Err(SetupError::Invalid("the matrix names no role".into()));
    }
    for (i, (role, models)) in axes.iter().enumerate() {
        if axes[..i].iter().any(|(r, _)| r == role) {
            return Err(SetupError::Invalid(format!("the role '{role}' is given twice")));
        }
        if models.is_empty() {
            return Err(SetupError::Invalid(format!("the {role} is given no model")));
        }
        for (j, m) in models.iter().enumerate() {
            if !config.models.contains_key(m) {
                let known: Vec<&str> = config.models.keys().map(String::as_str).collect();
                return Err(SetupError::Invalid(format!(
                    "no model named '{m}' for the {role} (known: {})",
                    known.join(", ")
                )));
            }
            if models[..j].contains(m) {
                return Err(SetupError::Invalid(format!("the model '{m}' is listed twice for the {role}")));
            }
        }
    }
    let mut cells = vec![MatrixCell { roles: Vec::new(), config: config.clone() }];
    for (role, models) in axes {
        cells = cells
            .into_iter()
            .flat_map(|cell| {
                models.iter().map(move |m| {
                    let mut next = cell.clone();
                    next.roles.push((*role, m.clone()));
                    next.config.roles.insert(*role, m.clone());
                    next
                })
            })
            .collect();
    }
    Ok(cells)
}

fn show_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}

/// Plans one task without running it: the same retrieval, estimates and
/// knapsack a run starts with.
pub fn plan_task(config: &Config, task: &str, budget: f64, tau: f64) -> Result<BudgetReport, SetupError> {
    let mut opts = SessionOptions {
        tasks: TaskSource::Text(task.to_string()),
        btp: Some(true),
        logical_clock: true,
        ..Default::default()
    };
    opts.param_changes.push(crate::engine::ParamChange::Budget(Some(budget)));
    opts.param_changes.push(crate::engine::ParamChange::Tau(tau));
    opts.strategy = Some(StrategyKind::React);
    let mut prepared = prepare(config, &opts)?;
    let plan = prepared.engine.plan_only(task)?;
    Ok(BudgetReport { task: task.to_string(), tau, ..plan })
}
