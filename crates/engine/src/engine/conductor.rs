//! The engine as conductor: it runs a strategy over a task list as a tokio
//! task, owns the gate, the controls, the events and the trace, and keeps the
//! session's learnt state (the graph, the tool labels). It knows nothing of
//! a terminal, and nothing of any strategy but the [`Strategy`] trait.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;

use super::clock::{Clock, SystemClock};
use super::control::Control;
use super::error::EngineError;
use super::event::{self, Event, EventKind, GraphSnapshot, RoleModel, RunOutcome, TaskBrief};
use super::fold::SessionState;
use super::fork::{ForkPlan, Forked, Replaying};
use super::gate::Gate;
use super::host::{Halt, Labels, Strategy};
use super::models::Models;
use super::params::Params;
use super::run_tally::{Latency, RunTally};
use super::trace::TraceWriter;
use crate::budget::btp::BtpSetup;
use crate::graph::{GraphStore, ToolGraph};
use crate::retrieve::Retriever;
use crate::task::{Task, TaskList};
use crate::tool::ToolLibrary;
use crate::tool::exec::Executor;
use crate::tool::fault::FaultTable;

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
    pub strategy: Box<dyn Strategy>,
    pub params: Params,
    pub seed: u64,
    /// ToolNet's graph; a strategy that walks one starts fully connected without.
    pub graph: Option<ToolGraph>,
    /// Where the learnt graph is saved after every update (None: not saved).
    pub graph_store: Option<GraphStore>,
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
    pub btp: Option<BtpSetup>,
    /// Where tool labels (rewoo's categories) are cached, per library and model.
    pub label_cache: Option<PathBuf>,
    /// Runs the tool calls; the session configures its tool cassette here.
    pub executor: Executor,
    /// Ranks tools for a query (None: BM25 over the library).
    pub retriever: Option<Retriever>,
    /// atc: where probed tool protocols are kept (None: not kept).
    pub protocols: Option<crate::program::protocol::ProtocolStore>,
    /// Strategies re-retrieve mid-run with the evidence so far.
    pub requery: bool,
    /// Tool labels already given (rewoo's categories), e.g. by an earlier
    /// task of a concurrent eval; empty: the strategy classifies.
    pub labels: Labels,
    /// Replay this recorded prefix first, then run live (time travel).
    pub fork: Option<ForkPlan>,
    /// Hand back in the outcome what the session learnt (ToolNet's score
    /// maps, BTP's new usages), for a concurrent eval that commits them in
    /// task order. Off, a long session keeps none of it in memory.
    pub keep_learning: bool,
}

impl EngineSetup {
    pub fn new(library: Arc<ToolLibrary>, models: Models, strategy: impl Into<Box<dyn Strategy>>) -> Self {
        EngineSetup {
            library,
            models,
            strategy: strategy.into(),
            params: Params::default(),
            seed: 0,
            graph: None,
            graph_store: None,
            clock: Arc::new(SystemClock::new()),
            tool_timeout: Duration::from_secs(10),
            schedule: Vec::new(),
            cost_unit: "credits".into(),
            start_paused: false,
            pace: Duration::ZERO,
            linger: false,
            btp: None,
            label_cache: None,
            executor: Executor::new(),
            retriever: None,
            requery: false,
            protocols: None,
            labels: Labels::new(),
            fork: None,
            keep_learning: false,
        }
    }
}

/// What a session learnt, in order, for its outcome.
#[derive(Default)]
pub(super) struct Kept {
    pub(super) scores: Vec<BTreeMap<String, i32>>,
    pub(super) usages: Vec<crate::budget::experience::Experience>,
}

/// What a finished session hands back: the learnt graph (to save) and the
/// folded state (to summarise; without the graph's view, which a fold of
/// the events gives, see [`SessionState::without_graph`]).
pub struct SessionOutcome {
    pub graph: Option<ToolGraph>,
    pub state: SessionState,
    /// The tool usages this session added to the experience store, in
    /// order (kept only with `EngineSetup::keep_learning`).
    pub experience: Vec<crate::budget::experience::Experience>,
    /// The score maps ToolNet learnt from, in order: applied with the same
    /// α and β to another copy of the graph they give the same update
    /// (kept only with `EngineSetup::keep_learning`).
    pub learnt_scores: Vec<BTreeMap<String, i32>>,
    /// The tool labels at the end.
    pub labels: Labels,
    /// The tool and model faults in force at the end, as the engine's own
    /// tables hold them: what a fold of the trace must agree with.
    pub faults: Vec<super::fold::ActiveFault>,
    pub model_faults: Vec<super::fold::ActiveModelFault>,
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

    /// A handle for news from outside the user (a tool server's state)
    /// that does not keep the control channel open.
    pub fn notifier(&self) -> Notifier {
        Notifier { tx: self.tx.downgrade() }
    }
}

/// Tells the engine what happened to a tool server; the engine records it
/// at its next decision point.
#[derive(Clone, Debug)]
pub struct Notifier {
    tx: mpsc::WeakUnboundedSender<Control>,
}

impl Notifier {
    pub fn server(&self, e: crate::tool::mcp::ServerEvent) {
        if let Some(tx) = self.tx.upgrade() {
            let _ = tx.send(Control::ServerState { server: e.server, state: e.state, detail: e.detail });
        }
    }
}

pub struct Engine {
    pub(super) library: Arc<ToolLibrary>,
    pub(super) models: Models,
    /// Taken out while a run is under way (it then borrows the engine as its host).
    pub(super) strategy: Option<Box<dyn Strategy>>,
    pub(super) kind: event::StrategyKind,
    pub(super) params: Params,
    pub(super) seed: u64,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) tool_timeout: Duration,
    schedule: Vec<Scheduled>,
    cost_unit: String,
    pub(super) controls: mpsc::UnboundedReceiver<Control>,
    sinks: Vec<mpsc::UnboundedSender<Event>>,
    trace: Option<TraceWriter>,
    pub(super) retriever: Retriever,
    pub(super) requery: bool,
    pub(super) executor: Executor,
    pub(super) faults: FaultTable,
    pub(super) model_faults: FaultTable<crate::model::fault::ModelFaultMode>,
    pub(super) rng: ChaCha8Rng,
    pub(super) gate: Gate,
    pub(super) stop: bool,
    /// Abandon the current run and run its task again.
    pub(super) restart: bool,
    pub(super) edited_text: Option<String>,
    /// atc: the user's edit of the running program, for its next round.
    pub(super) user_program: Option<String>,
    pub(super) protocols: Option<crate::program::protocol::ProtocolStore>,
    /// The current task's candidate set (empty: the whole library).
    pub(super) candidates: Vec<String>,
    pub(super) next_task: Option<usize>,
    pub(super) pace: Duration,
    linger: bool,
    pub(super) btp: Option<BtpSetup>,
    /// Learnt state the user can edit: ToolNet's graph and the tool labels.
    pub(super) graph: Option<ToolGraph>,
    pub(super) graph_store: Option<GraphStore>,
    pub(super) labels: Labels,
    pub(super) label_cache: Option<PathBuf>,
    /// The label cache's key and model, so a user's edit is cached too.
    pub(super) label_key: Option<(String, String)>,
    /// Per-tool latency, for BTP's time term.
    pub(super) latency: BTreeMap<String, Latency>,
    pub(super) run_no: u32,
    pub(super) step: u32,
    pub(super) next_call: u64,
    pub(super) tally: RunTally,
    /// The run against its task's expectations.
    pub(super) expecting: super::expecting::Expecting,
    pub(super) state: SessionState,
    /// What the session learnt, kept for the outcome (`keep_learning`).
    pub(super) kept: Option<Kept>,
    /// A fork's prefix still being replayed.
    pub(super) fork: Option<Replaying>,
    /// Past the fork point: the user's replacement answer, until used.
    pub(super) forked: Option<Forked>,
    /// Added to the clock, so a fork's time goes on from its parent's.
    pub(super) t_offset: u64,
    /// Controls to apply at the next decision point: the user's changes at
    /// a fork point, and what arrived while its prefix was replayed.
    pub(super) deferred: Vec<Control>,
    /// A bridged agent's calls not yet ended, each a lane.
    pub(super) agent: super::agent::state::AgentLanes,
    /// Approvals and breakpoints.
    pub(super) debug: super::debug::Debugger,
}

impl Engine {
    pub fn new(setup: EngineSetup) -> (Engine, EngineHandle) {
        let (tx, rx) = mpsc::unbounded_channel();
        let retriever = setup.retriever.unwrap_or_else(|| {
            Retriever::lexical(setup.library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str())))
        });
        let mut graph = setup.graph;
        if setup.strategy.walks_graph() {
            let g = graph.get_or_insert_with(|| {
                ToolGraph::fully_connected(&setup.library.names().map(str::to_string).collect::<Vec<_>>())
            });
            // A tool added to the library since the graph was saved joins it
            // with a uniform prior.
            g.take_tools(setup.library.generation(), setup.library.names());
        }
        let engine = Engine {
            library: setup.library,
            models: setup.models,
            kind: setup.strategy.kind(),
            strategy: Some(setup.strategy),
            params: setup.params,
            seed: setup.seed,
            clock: setup.clock,
            tool_timeout: setup.tool_timeout,
            schedule: setup.schedule,
            cost_unit: setup.cost_unit,
            controls: rx,
            sinks: Vec::new(),
            trace: None,
            retriever,
            requery: setup.requery,
            executor: setup.executor,
            faults: FaultTable::default(),
            model_faults: FaultTable::default(),
            rng: ChaCha8Rng::seed_from_u64(setup.seed ^ 0x5eed_fa17),
            gate: if setup.start_paused { Gate::Closed } else { Gate::Open },
            stop: false,
            restart: false,
            edited_text: None,
            user_program: None,
            protocols: setup.protocols,
            candidates: Vec::new(),
            next_task: None,
            pace: setup.pace,
            linger: setup.linger,
            btp: setup.btp,
            graph,
            graph_store: setup.graph_store,
            labels: setup.labels,
            label_cache: setup.label_cache,
            label_key: None,
            latency: BTreeMap::new(),
            run_no: 0,
            step: 0,
            next_call: 0,
            tally: RunTally::default(),
            expecting: Default::default(),
            state: SessionState::without_graph(),
            kept: setup.keep_learning.then(Kept::default),
            fork: setup.fork.map(Replaying::new),
            forked: None,
            t_offset: 0,
            deferred: Vec::new(),
            agent: Default::default(),
            debug: Default::default(),
        };
        (engine, EngineHandle { tx })
    }

    /// Events from now on, in order, to this receiver.
    pub fn subscribe(&mut self) -> mpsc::UnboundedReceiver<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.sinks.push(tx);
        rx
    }

    /// Where the learnt graph is saved after every update (None: not saved).
    pub fn set_graph_store(&mut self, store: Option<GraphStore>) {
        self.graph_store = store;
    }

    pub fn set_trace(&mut self, trace: TraceWriter) {
        self.trace = Some(trace);
    }

    /// Runs the tasks one after another; returns when all are done (or, when
    /// lingering, when the user stops) or the user stopped the session.
    pub async fn run(mut self, tasks: impl Into<TaskList>) -> Result<SessionOutcome, EngineError> {
        self.params.validate()?;
        let mut tasks: TaskList = tasks.into();
        let models = self
            .models
            .assignments()
            .map(|(role, slot)| RoleModel { role, model: slot.model.info(), price: slot.price })
            .collect();
        let tools = self.library.briefs();
        let graph = self.graph.as_ref().map(GraphSnapshot::of);
        self.emit(EventKind::SessionStarted {
            schema: event::SCHEMA_VERSION,
            strategy: self.kind,
            seed: self.seed,
            params: self.params.clone(),
            models,
            tools,
            cost_unit: self.cost_unit.clone(),
            tasks: tasks.len() as u32,
            // One round when the list wraps (schema 3): the trace of a long
            // `--count` session does not open with every position listed.
            task_list: tasks.cycle().iter().map(|t| TaskBrief { id: t.id.clone(), query: t.query.clone() }).collect(),
            available_models: self.models.available().map(|s| s.model.info()).collect(),
            pace_ms: self.pace.as_millis() as u64,
            graph,
            experience: self
                .btp
                .as_ref()
                .filter(|b| b.enforce && self.params.budget.is_some())
                .map(|b| b.experience.len() as u64),
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
                self.step = 0;
                match self.controls.recv().await {
                    Some(c) => self.apply_control(c)?,
                    None => break,
                }
                if let Some(p) = self.next_task.take() {
                    i = p;
                } else if std::mem::take(&mut self.restart) {
                    i = tasks.len() - 1;
                    if let Some(text) = self.edited_text.take() {
                        self.edit_task(&mut tasks, i, text)?;
                    }
                }
                continue;
            }
            let n = i as u32 + 1;
            // Scheduled controls fire once, the first time their task comes up.
            // A fork replays the controls its parent applied before this task.
            self.replay_controls()?;
            if n > scheduled_up_to {
                let due: Vec<Control> =
                    self.schedule.iter().filter(|s| s.before_task == n).map(|s| s.control.clone()).collect();
                for c in due {
                    self.apply_control(c)?;
                }
                scheduled_up_to = n;
            }
            let Some(task) = tasks.get(i) else { break };
            self.run_task(task, n, total).await?;
            if std::mem::take(&mut self.restart) {
                if let Some(text) = self.edited_text.take() {
                    self.edit_task(&mut tasks, i, text)?;
                }
                continue;
            }
            i = self.next_task.take().unwrap_or(i + 1);
        }
        self.run_no = 0;
        self.step = 0;
        // Tools that joined the graph since it was saved are kept too, and
        // everything saved is synced to disk once, here.
        self.save_graph()?;
        if let Some(store) = self.graph_store.as_mut() {
            store.sync()?;
        }
        self.emit(EventKind::SessionFinished { runs: self.state.totals.runs as u32, stopped: self.stop })?;
        let kept = self.kept.unwrap_or_default();
        let faults = self
            .faults
            .remaining()
            .map(|(tool, fault, left)| super::fold::ActiveFault { tool: tool.to_string(), fault, left })
            .collect();
        let model_faults = self
            .model_faults
            .remaining()
            .map(|(target, fault, left)| super::fold::ActiveModelFault { target: target.to_string(), fault, left })
            .collect();
        Ok(SessionOutcome {
            graph: self.graph,
            state: self.state,
            experience: kept.usages,
            learnt_scores: kept.scores,
            labels: self.labels,
            faults,
            model_faults,
        })
    }

    /// One run: the strategy takes the task as far as it goes, between
    /// `RunStarted` and `RunFinished`.
    async fn run_task(&mut self, task: &Task, index: u32, total: u32) -> Result<(), EngineError> {
        self.run_no += 1;
        self.step = 0;
        self.tally = RunTally::default();
        self.expecting = super::expecting::Expecting::new(task.expect.clone());
        self.candidates = task.candidates.clone();
        // An edit made for another run's program does not carry over.
        self.user_program = None;
        self.emit(EventKind::RunStarted {
            task_id: task.id.clone(),
            task: task.query.clone(),
            gold: task.answer.clone(),
            index,
            total,
        })?;
        // The strategy borrows the engine as its host while it runs.
        let mut strategy = self.strategy.take().ok_or(EngineError::Reentered)?;
        let found = strategy.run(self, task).await;
        self.strategy = Some(strategy);
        let (outcome, answer) = match found {
            Ok(Some(a)) => (RunOutcome::Answered, Some(a)),
            Ok(None) => (RunOutcome::MaxSteps, None),
            Err(Halt::Stopped) => (RunOutcome::Stopped, None),
            Err(Halt::Restarted) => (RunOutcome::Restarted, None),
            Err(Halt::OutOfBudget) => (RunOutcome::OutOfBudget, None),
            Err(Halt::ModelFailed(error)) => (RunOutcome::Failed { error }, None),
            Err(Halt::BadPlan(error)) => (RunOutcome::BadPlan { error }, None),
            Err(Halt::Engine(e)) => return Err(e),
        };
        // A run the user cut short neither succeeded nor failed.
        let cut_short = matches!(outcome, RunOutcome::Stopped | RunOutcome::Restarted);
        let success =
            task.answer.as_ref().filter(|_| !cut_short).map(|_| answer.as_deref().is_some_and(|a| task.judge(a)));
        let (steps, tally) = (self.step, self.tally);
        let expect = if cut_short { None } else { self.expecting.verdict(tally.cost) };
        self.emit(EventKind::RunFinished {
            outcome,
            answer,
            success,
            cost: tally.cost,
            usage: tally.usage,
            steps,
            tool_calls: tally.tool_calls,
            expect,
        })
    }

    fn edit_task(&mut self, tasks: &mut TaskList, i: usize, text: String) -> Result<(), EngineError> {
        if let Some(mut task) = tasks.get(i).cloned() {
            task.query = text.clone();
            // The gold answer was for the old text.
            task.answer = None;
            tasks.set(i, task);
        }
        self.emit(EventKind::TaskEdited { index: i as u32 + 1, text })
    }

    pub(super) fn emit(&mut self, kind: EventKind) -> Result<(), EngineError> {
        let t = self.clock.now_ms() + self.t_offset;
        let event = Event { v: event::SCHEMA_VERSION, run: self.run_no, step: self.step, t, kind };
        if self.replaying() {
            // The recorded pauses and server news that come before this
            // event; unless this is one the engine makes itself (a
            // breakpoint's pause), to be matched with its recorded twin.
            if !super::fork::echoed(&event.kind) {
                self.echo_recorded()?;
            }
            if self.replaying() {
                let (event, done) = self.replayed(event)?;
                self.publish(event)?;
                return if done { self.go_live() } else { Ok(()) };
            }
        }
        self.publish(event)
    }

    /// An event shown as it happens and never recorded (a reply's tokens):
    /// the fold and the subscribers see it, the trace, a fork's replay and
    /// the breakpoints do not.
    pub(super) fn publish_live(&mut self, kind: EventKind) -> Result<(), EngineError> {
        debug_assert!(kind.is_live_only());
        // The last event's time: reading the clock would move a logical
        // clock on by the number of pieces, and a replay (in one piece)
        // would not keep the recorded times.
        let t = self.state.t;
        let event = Event { v: event::SCHEMA_VERSION, run: self.run_no, step: self.step, t, kind };
        self.state.apply(&event);
        self.sinks.retain(|s| s.send(event.clone()).is_ok());
        Ok(())
    }

    /// Writes an event to the trace, the fold and the subscribers.
    pub(super) fn publish(&mut self, event: Event) -> Result<(), EngineError> {
        if let Some(t) = self.trace.as_mut() {
            t.write(&event)?;
        }
        self.state.apply(&event);
        if let EventKind::ToolCall { tool, args, .. } = &event.kind {
            self.expecting.call(tool, args);
        }
        // A subscriber that went away is no reason to stop the run.
        self.sinks.retain(|s| s.send(event.clone()).is_ok());
        self.watch(&event)
    }
}
