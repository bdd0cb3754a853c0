//! The engine: runs a strategy over a task list as a tokio task, passes a
//! gate before every model and tool call, obeys control messages, and emits
//! versioned events to subscribers and to the trace. It knows nothing of a
//! terminal.

pub mod btp;
pub mod clock;
pub mod control;
pub mod event;
pub mod models;
pub mod params;
pub mod state;
pub mod trace;

mod rewoo;
mod run;

use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;

pub use clock::{Clock, LogicalClock, SystemClock};
pub use event::{Event, EventKind, StrategyKind};
pub use models::{ModelSlot, Models};
pub use control::{Control, LaneAction};
pub use params::{ParamChange, Params};
pub use state::SessionState;

use crate::task::Task;
use crate::graph::ToolGraph;
use crate::retrieve::bm25::Bm25Index;
use crate::tool::ToolLibrary;
use crate::tool::exec::Executor;
use crate::tool::fault::FaultTable;
use event::{GraphSnapshot, RoleModel, TaskBrief, ToolBrief};
use trace::{TraceError, TraceWriter};

/// A control to apply just before task `before_task` (counted from 1)
/// starts: how a scripted experiment breaks a tool at task 50.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheduled {
    pub before_task: u32,
    pub control: Control,
}

pub struct EngineSetup {
    pub library: Arc<ToolLibrary>,
    pub models: Models,
    pub strategy: StrategyKind,
    pub params: Params,
    pub seed: u64,
    /// ToolNet's graph; `toolnet` without one starts fully connected.
    pub graph: Option<ToolGraph>,
    pub clock: Arc<dyn Clock>,
    /// Timeout for tools whose executor names none (builtins).
    pub tool_timeout: Duration,
    pub schedule: Vec<Scheduled>,
    pub cost_unit: String,
    /// Start with the gate closed (the user steps or resumes).
    pub start_paused: bool,
    /// Wait this long before each call while running (see `Control::SetPace`).
    pub pace: Duration,
    /// After the last task, wait for the user instead of ending the session.
    pub linger: bool,
    /// BTP: experience, planning and enforcement (None: neither).
    pub btp: Option<btp::BtpSetup>,
    /// rewoo: the classifier's categories and its cache.
    pub rewoo: RewooSetup,
}

/// What the `rewoo` strategy needs beyond the other strategies.
#[derive(Clone, Debug)]
pub struct RewooSetup {
    pub categories: Vec<crate::strategy::rewoo::prompt::Category>,
    /// Where the classifier's labels are cached, per library and model (None: not cached).
    pub cache: Option<std::path::PathBuf>,
}

impl Default for RewooSetup {
    fn default() -> Self {
        RewooSetup { categories: crate::strategy::rewoo::prompt::default_categories(), cache: None }
    }
}

impl EngineSetup {
    pub fn new(library: Arc<ToolLibrary>, models: Models, strategy: StrategyKind) -> Self {
        EngineSetup {
            library,
            models,
            strategy,
            params: Params::default(),
            seed: 0,
            graph: None,
            clock: Arc::new(SystemClock::new()),
            tool_timeout: Duration::from_secs(10),
            schedule: Vec::new(),
            cost_unit: "credits".into(),
            start_paused: false,
            pace: Duration::ZERO,
            linger: false,
            btp: None,
            rewoo: RewooSetup::default(),
        }
    }
}

#[derive(thiserror::Error, Debug)]
pub enum EngineError {
    #[error("could not write the trace: {0}")]
    Trace(#[from] TraceError),
    #[error("{0}")]
    Setup(String),
}

/// What a finished session hands back: the learnt graph (to save) and the
/// folded state (to summarise).
pub struct SessionOutcome {
    pub graph: Option<ToolGraph>,
    pub state: SessionState,
    /// Every tool usage the experience store holds at the end.
    pub experience: Vec<crate::budget::experience::Experience>,
}

/// The sending side of the control channel.
#[derive(Clone)]
pub struct EngineHandle {
    tx: mpsc::UnboundedSender<Control>,
}

impl EngineHandle {
    /// Returns false once the engine has finished.
    pub fn send(&self, control: Control) -> bool {
        self.tx.send(control).is_ok()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gate {
    Open,
    Closed,
    /// Closed, but one call may pass.
    OneStep,
}

pub struct Engine {
    library: Arc<ToolLibrary>,
    models: Models,
    strategy: StrategyKind,
    params: Params,
    seed: u64,
    graph: Option<ToolGraph>,
    clock: Arc<dyn Clock>,
    tool_timeout: Duration,
    schedule: Vec<Scheduled>,
    cost_unit: String,
    controls: mpsc::UnboundedReceiver<Control>,
    sinks: Vec<mpsc::UnboundedSender<Event>>,
    trace: Option<TraceWriter>,
    index: Bm25Index,
    executor: Executor,
    faults: FaultTable,
    rng: ChaCha8Rng,
    gate: Gate,
    stop: bool,
    /// Abandon the current run and run its task again.
    restart: bool,
    edited_text: Option<String>,
    next_task: Option<usize>,
    pace: Duration,
    linger: bool,
    btp: Option<btp::BtpSetup>,
    rewoo: RewooSetup,
    /// rewoo: every tool's category, once classified.
    labels: std::collections::BTreeMap<String, (String, event::LabelSource)>,
    /// rewoo: the label cache's key and model, so a user's edit is cached too.
    label_key: Option<(String, String)>,
    run_no: u32,
    step: u32,
    next_call: u64,
    state: SessionState,
}

impl Engine {
    pub fn new(setup: EngineSetup) -> (Engine, EngineHandle) {
        let (tx, rx) = mpsc::unbounded_channel();
        let index = Bm25Index::new(setup.library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str())));
        let mut graph = setup.graph;
        if setup.strategy == StrategyKind::Toolnet {
            let g = graph.get_or_insert_with(|| {
                ToolGraph::fully_connected(&setup.library.names().map(str::to_string).collect::<Vec<_>>())
            });
            // A tool added to the library since the graph was saved joins it
            // with a uniform prior.
            for name in setup.library.names() {
                if !g.contains(name) {
                    // Names come from a validated library, so this cannot clash.
                    let _ = g.add_tool(name);
                }
            }
        }
        let engine = Engine {
            library: setup.library,
            models: setup.models,
            strategy: setup.strategy,
            params: setup.params,
            seed: setup.seed,
            graph,
            clock: setup.clock,
            tool_timeout: setup.tool_timeout,
            schedule: setup.schedule,
            cost_unit: setup.cost_unit,
            controls: rx,
            sinks: Vec::new(),
            trace: None,
            index,
            executor: Executor::new(),
            faults: FaultTable::default(),
            rng: ChaCha8Rng::seed_from_u64(setup.seed ^ 0x5eed_fa17),
            gate: if setup.start_paused { Gate::Closed } else { Gate::Open },
            stop: false,
            restart: false,
            edited_text: None,
            next_task: None,
            pace: setup.pace,
            linger: setup.linger,
            btp: setup.btp,
            rewoo: setup.rewoo,
            labels: Default::default(),
            label_key: None,
            run_no: 0,
            step: 0,
            next_call: 0,
            state: SessionState::default(),
        };
        (engine, EngineHandle { tx })
    }

    /// Events from now on, in order, to this receiver.
    pub fn subscribe(&mut self) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.sinks.push(tx);
        rx
    }

    pub fn set_trace(&mut self, trace: TraceWriter) {
        self.trace = Some(trace);
    }

    /// Runs the tasks one after another; returns when all are done (or, when
    /// lingering, when the user stops) or the user stopped the session.
    pub async fn run(mut self, tasks: Vec<Task>) -> Result<SessionOutcome, EngineError> {
        self.params.validate().map_err(|e| EngineError::Setup(format!("parameters: {e}")))?;
        let mut tasks = tasks;
        let models = self
            .models
            .assignments()
            .map(|(role, slot)| RoleModel { role, model: slot.model.info(), price: slot.price })
            .collect();
        let tools = self
            .library
            .tools()
            .iter()
            .map(|t| ToolBrief {
                name: t.name.clone(),
                description: t.description.clone(),
                category: t.category.clone(),
                cost: t.cost,
            })
            .collect();
        let graph = self.graph.as_ref().map(snapshot);
        self.emit(EventKind::SessionStarted {
            schema: event::SCHEMA_VERSION,
            strategy: self.strategy,
            seed: self.seed,
            params: self.params.clone(),
            models,
            tools,
            cost_unit: self.cost_unit.clone(),
            tasks: tasks.len() as u32,
            task_list: tasks.iter().map(|t| TaskBrief { id: t.id.clone(), query: t.query.clone() }).collect(),
            available_models: self.models.available().map(|s| s.model.info()).collect(),
            pace_ms: self.pace.as_millis() as u64,
            graph,
        })?;
        if self.gate == Gate::Closed {
            self.emit(EventKind::Paused)?;
        }
        let total = tasks.len() as u32;
        let mut scheduled_up_to = 0;
        let mut i = 0usize;
        loop {
            if self.stop {
                break;
            }
            if i >= tasks.len() {
                // All done. A lingering engine (the workbench) waits for the
                // user to pick, restart or edit a task, or to quit.
                if !self.linger || tasks.is_empty() {
                    break;
                }
                self.run_no_idle();
                match self.controls.recv().await {
                    Some(c) => self.apply_control(c)?,
                    None => break,
                }
                if let Some(p) = self.next_task.take() {
                    i = p;
                } else if std::mem::take(&mut self.restart) {
                    i = tasks.len() - 1;
                    if let Some(text) = self.edited_text.take() {
                        self.edit_task(&mut tasks[i], i, text)?;
                    }
                }
                continue;
            }
            let n = i as u32 + 1;
            // Scheduled controls fire once, the first time their task comes up.
            if n > scheduled_up_to {
                let due: Vec<Control> =
                    self.schedule.iter().filter(|s| s.before_task == n).map(|s| s.control.clone()).collect();
                for c in due {
                    self.apply_control(c)?;
                }
                scheduled_up_to = n;
            }
            self.run_task(&tasks[i], n, total).await?;
            if std::mem::take(&mut self.restart) {
                if let Some(text) = self.edited_text.take() {
                    self.edit_task(&mut tasks[i], i, text)?;
                }
                continue;
            }
            i = self.next_task.take().unwrap_or(i + 1);
        }
        self.run_no = 0;
        self.step = 0;
        self.emit(EventKind::SessionFinished { runs: self.state.finished.len() as u32, stopped: self.stop })?;
        let experience = self.btp.as_ref().map(|b| b.experience.records().to_vec()).unwrap_or_default();
        Ok(SessionOutcome { graph: self.graph, state: self.state, experience })
    }

    /// Between runs there is no run or step to speak of.
    fn run_no_idle(&mut self) {
        self.step = 0;
    }

    fn edit_task(&mut self, task: &mut Task, i: usize, text: String) -> Result<(), EngineError> {
        task.query = text.clone();
        // The gold answer was for the old text.
        task.answer = None;
        self.emit(EventKind::TaskEdited { index: i as u32 + 1, text })
    }

    fn emit(&mut self, kind: EventKind) -> Result<(), EngineError> {
        let event = Event { v: event::SCHEMA_VERSION, run: self.run_no, step: self.step, t: self.clock.now_ms(), kind };
        if let Some(t) = self.trace.as_mut() {
            t.write(&event)?;
        }
        self.state.apply(&event);
        // A subscriber that went away is no reason to stop the run.
        self.sinks.retain(|s| s.send(event.clone()).is_ok());
        Ok(())
    }

    /// The gate before every model and tool call. Controls that arrived are
    /// applied here, so every change takes effect at a decision point and is
    /// recorded with the step it took effect in.
    async fn pass_gate(&mut self) -> Result<Pass, EngineError> {
        self.apply_pending()?;
        self.wait_pace().await?;
        loop {
            if self.stop {
                return Ok(Pass::Stop);
            }
            if self.restart {
                return Ok(Pass::Restart);
            }
            match self.gate {
                Gate::Open => return Ok(Pass::Go),
                Gate::OneStep => {
                    self.gate = Gate::Closed;
                    self.emit(EventKind::Stepped)?;
                    return Ok(Pass::Go);
                }
                Gate::Closed => match self.controls.recv().await {
                    Some(c) => self.apply_control(c)?,
                    // Nobody can open the gate any more: run on rather than hang.
                    None => {
                        self.gate = Gate::Open;
                        self.emit(EventKind::Resumed)?;
                    }
                },
            }
        }
    }

    /// While running, waits the pace before a call, still obeying controls.
    async fn wait_pace(&mut self) -> Result<(), EngineError> {
        if self.pace.is_zero() || self.gate != Gate::Open {
            return Ok(());
        }
        let deadline = tokio::time::Instant::now() + self.pace;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(deadline) => return Ok(()),
                c = self.controls.recv() => match c {
                    Some(c) => {
                        self.apply_control(c)?;
                        if self.gate != Gate::Open || self.stop || self.restart || self.pace.is_zero() {
                            return Ok(());
                        }
                    }
                    None => {
                        tokio::time::sleep_until(deadline).await;
                        return Ok(());
                    }
                },
            }
        }
    }

    /// Applies the controls that arrived since the last decision point.
    fn apply_pending(&mut self) -> Result<(), EngineError> {
        while let Ok(c) = self.controls.try_recv() {
            self.apply_control(c)?;
        }
        Ok(())
    }

    fn reject(&mut self, control: &str, why: impl Into<String>) -> Result<(), EngineError> {
        self.emit(EventKind::ControlRejected { control: control.to_string(), why: why.into() })
    }

    fn apply_control(&mut self, c: Control) -> Result<(), EngineError> {
        match c {
            Control::Pause => {
                if self.gate == Gate::Open {
                    self.gate = Gate::Closed;
                    self.emit(EventKind::Paused)?;
                }
            }
            Control::Resume => {
                if self.gate != Gate::Open {
                    self.gate = Gate::Open;
                    self.emit(EventKind::Resumed)?;
                }
            }
            Control::Step => {
                if self.gate == Gate::Open {
                    // Stepping a running engine pauses it after the next call.
                    self.emit(EventKind::Paused)?;
                }
                self.gate = Gate::OneStep;
            }
            Control::Stop => self.stop = true,
            Control::InjectFault { tool, fault } => {
                if self.library.get(&tool).is_none() {
                    return self.reject("inject fault", format!("no tool named '{tool}'"));
                }
                self.faults.inject(&tool, fault);
                self.emit(EventKind::FaultInjected { tool, fault })?;
            }
            Control::ClearFault { tool } => {
                self.faults.clear(tool.as_deref());
                self.emit(EventKind::FaultCleared { tool })?;
            }
            Control::EditScore { tool, score } => {
                let (alpha, beta) = (self.params.alpha, self.params.beta);
                let result = match self.graph.as_mut() {
                    Some(g) => g.set_score(&tool, score, alpha, beta).map_err(|e| e.to_string()),
                    None => Err(format!("strategy {} has no tool graph", self.strategy)),
                };
                match result {
                    Ok(update) => self.emit(EventKind::ScoreEdited { tool, score, update })?,
                    Err(why) => self.reject("edit score", why)?,
                }
            }
            Control::SetParam { change } => {
                let rejected = change.validate().err().map(|e| e.to_string());
                if rejected.is_none() {
                    self.params.apply(&change);
                    if matches!(change, ParamChange::Alpha(_) | ParamChange::Beta(_)) {
                        let (alpha, beta) = (self.params.alpha, self.params.beta);
                        if let Some(g) = self.graph.as_mut() {
                            let update = g.recompute_all(alpha, beta);
                            self.emit(EventKind::ParamChanged { change, rejected })?;
                            // New α or β reshape every row at once.
                            return self.emit(EventKind::GraphUpdated { update });
                        }
                    }
                }
                self.emit(EventKind::ParamChanged { change, rejected })?;
            }
            Control::SwitchModel { role, model } => match self.models.switch(role, &model) {
                Some(slot) => {
                    let (info, price) = (slot.model.info(), slot.price);
                    self.emit(EventKind::ModelSwitched { role, model: info, price })?;
                }
                None => {
                    let known: Vec<String> = self.models.available().map(|s| s.model.info().name).collect();
                    self.reject("switch model", format!("no model named '{model}' (known: {})", known.join(", ")))?;
                }
            },
            Control::RestartTask => self.restart = true,
            Control::EditTask { text } => {
                if text.trim().is_empty() {
                    return self.reject("edit task", "the task text is empty");
                }
                self.edited_text = Some(text);
                self.restart = true;
            }
            Control::PickTask { index } => {
                let total = self.state.total_tasks;
                if index == 0 || index > total {
                    return self.reject("pick task", format!("there is no task {index} (1 to {total})"));
                }
                self.next_task = Some(index as usize - 1);
                self.emit(EventKind::TaskPicked { index })?;
            }
            Control::SetPace { ms } => {
                self.pace = Duration::from_millis(ms);
                self.emit(EventKind::PaceChanged { ms })?;
            }
            // Lane controls only mean something while a step's lanes run,
            // where the worker applies them itself.
            Control::Lane { lane, .. } => self.reject("lane", format!("no plan step is running (lane {lane})"))?,
            Control::SetCategory { tool, category } => self.set_category(tool, category)?,
        }
        Ok(())
    }
}

/// What a gate lets happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Go,
    Stop,
    Restart,
}

/// The whole graph as data, for the first event of a trace.
fn snapshot(g: &ToolGraph) -> GraphSnapshot {
    let mut edges = Vec::new();
    let mut scores = Vec::new();
    let nodes: Vec<&str> = std::iter::once(crate::graph::START).chain(g.tools()).collect();
    for node in nodes {
        for (to, w) in g.out_edges(node) {
            edges.push((node.to_string(), to, w));
        }
        if let Some(s) = g.score(node).filter(|s| *s != 0.0) {
            scores.push((node.to_string(), s));
        }
    }
    GraphSnapshot { iteration: g.iteration(), edges, scores }
}
