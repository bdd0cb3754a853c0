//! An eval's tasks run N at a time, each on an engine of its own, so the
//! model calls of N tasks are in flight together (a serving engine batches
//! them). What the learners take from a task (ToolNet's graph, BTP's
//! experience, rewoo's tool labels) is committed in task order, and task i
//! starts from what tasks 0..=i−N taught: the same state whatever order the
//! tasks finish in, so results are the same for a seed and N, and with
//! N = 1 every task sees every task before it, as a session does. A shard
//! (`--shard I/N`) runs every Nth task and learns from its own tasks only.

mod settings;

use std::collections::BTreeMap;
use std::time::Instant;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::budget::experience::{Experience, ExperienceStore};
use crate::config::Config;
use crate::engine::StrategyKind;
use crate::engine::event::LabelSource;
use crate::engine::event::RunOutcome;
use crate::engine::{EventKind, Labels, Scheduled, SessionState};
use crate::eval::results::{CallMade, Learned, RoleUse, Sweep, TaskRow};
use crate::eval::shard::Shard;
use crate::graph::ToolGraph;
use crate::session::{self, ExperienceSource, Learnt, SessionOptions, SetupError};
use crate::task::Task;

pub use settings::{EvalSpec, SWEEPABLE, Setting, SettingsError, matrix_axis, settings};

/// One finished task: the fold of its engine's events, what it taught,
/// the calls it made and how long it took.
pub struct TaskRun {
    /// The task's place in the whole task list.
    pub index: usize,
    pub state: SessionState,
    pub learned: Learned,
    /// How many tasks' learning it started from (the shard's first ones).
    pub learnt_from: usize,
    pub calls: Vec<CallMade>,
    /// Everything its engine said, as a trace keeps it (no live-only event).
    pub events: Vec<crate::engine::Event>,
    pub wall_ms: u64,
}

/// The tasks of one setting and how many run at a time.
pub struct Batch<'a> {
    pub config: &'a Config,
    pub opts: &'a SessionOptions,
    /// The whole task list; the batch runs the shard's part of it.
    pub tasks: &'a [Task],
    /// Which tasks run: a task keeps its place in the whole list (its row's
    /// index and its seed), and learns from the shard's earlier tasks only.
    pub shard: Shard,
    /// At least 1.
    pub jobs: usize,
    /// Tasks a resumed eval finished before (by place in the whole list),
    /// with what they taught: not run again, but committed in their turn.
    pub done: BTreeMap<usize, Learned>,
    /// Called with each task's engine before it runs (and its place in the
    /// whole list): what it returns lives as long as the task runs (the
    /// binary serves the engine's control endpoint with it).
    pub on_engine: Option<&'a OnEngine<'a>>,
}

/// What `Batch::on_engine` is.
pub type OnEngine<'a> = dyn Fn(&mut session::Prepared, usize) -> Option<Box<dyn Send>> + Sync + 'a;

/// The learnt state as committed so far.
struct Committed {
    graph: Option<ToolGraph>,
    experience: Vec<Experience>,
    labels: Labels,
    /// Tasks 0..count are in it.
    count: usize,
}

impl Committed {
    fn commit(&mut self, l: &Learned, alpha: f64, beta: f64) {
        if let Some(g) = self.graph.as_mut() {
            for s in &l.scores {
                g.apply_scores(s, alpha, beta);
            }
        }
        self.experience.extend(l.usages.iter().cloned());
        self.adopt_labels(l);
        self.count += 1;
    }

    fn adopt_labels(&mut self, l: &Learned) {
        if self.labels.is_empty() && !l.labels.is_empty() {
            self.labels = l.labels.iter().map(|(t, c)| (t.clone(), (c.clone(), LabelSource::Cache))).collect();
        }
    }

    fn snapshot(&self) -> Learnt {
        Learnt {
            graph: self.graph.clone(),
            experience: ExperienceStore::in_memory(self.experience.clone()),
            labels: self.labels.clone(),
        }
    }
}

/// Each task's own seed for the engine's randomness (tool calls, fault
/// draws), so tasks neither share nor depend on each other's draws.
pub fn task_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Runs the batch, calling `on_done` as each task finishes (in the order
/// they finish). Controls scheduled before task k are given to every task
/// from k on, each engine being fresh.
pub async fn run(b: Batch<'_>, mut on_done: impl FnMut(TaskRun) -> Result<(), SetupError>) -> Result<(), SetupError> {
    let jobs = b.jobs.max(1);
    let shared = session::shared(b.config, b.opts)?;
    let (alpha, beta) = (shared.params.alpha, shared.params.beta);
    let experience = match &b.opts.experience {
        ExperienceSource::InMemory(records) => records.clone(),
        ExperienceSource::DataDir => ExperienceStore::read(&shared.data()?.experience())
            .map_err(|e| SetupError::Invalid(format!("experience: {e}")))?,
    };
    let mut committed =
        Committed { graph: shared.graph(b.config, b.opts)?, experience, labels: Labels::new(), count: 0 };
    // From here on a task is its position in the shard; `places` maps it
    // back to the whole list.
    let places = b.shard.places(b.tasks.len());
    let position = |place: usize| places.binary_search(&place).ok();
    let finished: BTreeMap<usize, Learned> =
        b.done.iter().filter_map(|(p, l)| Some((position(*p)?, l.clone()))).collect();
    let mut taught: BTreeMap<usize, Learned> = finished.clone();
    // rewoo's labels belong to the library and the classifier, not to a
    // task: one task classifies while the others wait, and every later task
    // takes its labels, so N does not change how often the library is classified.
    let labels_first = shared.strategy == crate::engine::StrategyKind::Rewoo;
    if let Some(l) = finished.values().find(|l| !l.labels.is_empty()) {
        committed.adopt_labels(l);
    }
    let mut classifying: Option<usize> = None;
    let mut running = FuturesUnordered::new();
    let mut next = 0;
    loop {
        while running.len() < jobs && next < places.len() {
            if finished.contains_key(&next) {
                next += 1;
                continue;
            }
            // Task `next` starts from tasks 0..=next−jobs, exactly.
            let need = (next + 1).saturating_sub(jobs);
            while committed.count < need {
                match taught.remove(&committed.count) {
                    Some(l) => committed.commit(&l, alpha, beta),
                    None => break,
                }
            }
            if committed.count < need || classifying.is_some() {
                break;
            }
            if labels_first && committed.labels.is_empty() {
                classifying = Some(next);
            }
            let mut opts = b.opts.clone();
            opts.keep_learning = true;
            opts.schedule = b
                .opts
                .schedule
                .iter()
                .filter(|s| s.before_task as usize <= places[next] + 1)
                .map(|s| Scheduled { before_task: 1, control: s.control.clone() })
                .collect();
            let place = places[next];
            let mut prepared = shared.engine(
                b.config,
                &opts,
                vec![b.tasks[place].clone()].into(),
                committed.snapshot(),
                task_seed(shared.seed, place),
            )?;
            let index = next;
            let start_labels = committed.labels.is_empty();
            let learnt_from = committed.count;
            let mut events = prepared.engine.subscribe();
            let kept = b.on_engine.and_then(|f| f(&mut prepared, place));
            running.push(async move {
                let started = Instant::now();
                let outcome = session::run(prepared).await;
                // What it kept may wait on its own way out (an endpoint lets
                // its viewers read the last events): not on this thread.
                if let Some(k) = kept {
                    tokio::task::spawn_blocking(move || drop(k));
                }
                let outcome = outcome?;
                let mut calls = Vec::new();
                let mut trace = Vec::new();
                while let Ok(e) = events.try_recv() {
                    if let EventKind::ToolCall { tool, args, .. } = &e.kind {
                        calls.push(CallMade { tool: tool.clone(), args: args.clone() });
                    }
                    if !e.kind.is_live_only() {
                        trace.push(e);
                    }
                }
                let learned = Learned {
                    scores: outcome.learnt_scores,
                    usages: outcome.experience,
                    labels: if start_labels {
                        outcome.labels.into_iter().map(|(t, (c, _))| (t, c)).collect()
                    } else {
                        BTreeMap::new()
                    },
                };
                Ok::<_, SetupError>((
                    index,
                    TaskRun {
                        index: place,
                        state: outcome.state,
                        learned,
                        learnt_from,
                        calls,
                        events: trace,
                        wall_ms: started.elapsed().as_millis() as u64,
                    },
                ))
            });
            next += 1;
        }
        let Some(done) = running.next().await else {
            if next >= places.len() {
                return Ok(());
            }
            // Nothing runs and the next task waits on a commit that cannot
            // come: only a resumed eval whose rows have a gap gets here.
            return Err(SetupError::Invalid(format!(
                "task {} waits on task {}, which neither ran nor was recorded",
                places[next] + 1,
                places[committed.count] + 1
            )));
        };
        let (at, run) = done?;
        if classifying == Some(at) {
            classifying = None;
            committed.adopt_labels(&run.learned);
        }
        taught.insert(at, run.learned.clone());
        on_done(run)?;
    }
}

impl TaskRun {
    /// The task's row of the results under setting `label` (a strategy,
    /// maybe a swept value): its run's summary, its calls and its use of
    /// each role's model.
    pub fn into_row(self, label: &str, strategy: StrategyKind, sweep: Option<Sweep>, task: &Task) -> TaskRow {
        let run = self;
        let state = &run.state;
        let summary = state.finished.iter().find(|r| r.outcome != RunOutcome::Restarted).cloned();
        let models = state.models.iter().map(|m| (m.role.as_str().to_string(), m.model.name.clone())).collect();
        let roles = state
            .accounts
            .iter()
            .map(|((role, model), a)| RoleUse {
                role: role.as_str().to_string(),
                model: model.clone(),
                calls: a.calls as u32,
                prompt_tokens: a.usage.prompt_tokens,
                completion_tokens: a.usage.completion_tokens,
                cached_tokens: a.usage.cached_tokens,
                capped: a.capped,
                cost: a.cost,
            })
            .collect();
        let base = TaskRow {
            setting: label.to_string(),
            strategy: strategy.as_str().to_string(),
            sweep,
            models,
            index: run.index,
            task_id: task.id.clone(),
            gold: task.answer.clone(),
            gold_tools: task.tools.clone(),
            gold_call: task.gold_call.clone(),
            outcome: RunOutcome::Stopped,
            answer: None,
            success: None,
            steps: 0,
            tool_calls: 0,
            prompt_tokens: 0,
            completion_tokens: 0,
            cached_tokens: 0,
            cost: 0.0,
            path: Vec::new(),
            calls: run.calls,
            budget: None,
            planned_cost: None,
            planned_calls: None,
            spent: 0.0,
            tokens_saved: 0,
            reflections: 0,
            roles,
            wall_ms: run.wall_ms,
            learnt_from: run.learnt_from,
            expect: None,
            learned: run.learned,
        };
        match summary {
            None => base,
            Some(r) => TaskRow {
                outcome: r.outcome,
                answer: r.answer,
                success: r.success,
                steps: r.steps,
                tool_calls: r.tool_calls,
                prompt_tokens: r.usage.prompt_tokens,
                completion_tokens: r.usage.completion_tokens,
                cached_tokens: r.usage.cached_tokens,
                cost: r.cost,
                path: r.path,
                budget: r.budget,
                planned_cost: r.planned_cost,
                planned_calls: r.planned_calls,
                spent: r.spent,
                tokens_saved: r.tokens_saved,
                reflections: r.reflections,
                expect: r.expect,
                ..base
            },
        }
    }
}
