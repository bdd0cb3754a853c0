//! A session forked from a recorded trace (time travel): set up as the
//! recorded session was, from its first event, so its prefix replays as
//! recorded; what the trace cannot say (the library, the models) is checked
//! against it before anything runs.

use std::path::{Path, PathBuf};

use super::{
    Config, ExperienceSource, GraphSource, Learnt, Prepared, SessionOptions, SetupError, TaskSource, load_task_list,
    shared,
};
use crate::budget::experience::ExperienceStore;
use crate::engine::event::{Event, EventKind, TaskBrief};
use crate::engine::fork::{AtForkPoint, ForkPlan};
use crate::engine::trace::{TraceWriter, read_trace};
use crate::engine::{Control, Labels};
use crate::model::Role;
use crate::task::{Task, TaskList};

/// What the user asks of a fork.
#[derive(Clone, Debug, Default)]
pub struct ForkRequest {
    /// The parent trace.
    pub parent: PathBuf,
    /// Replay this many of its events (the replay's cursor).
    pub at: usize,
    /// Replace the answer the cursor is on (a model reply's text, or a tool
    /// result as JSON).
    pub answer: Option<String>,
    /// The user's changes, applied at the fork point.
    pub controls: Vec<Control>,
    /// What the fork does at its fork point.
    pub at_fork_point: AtForkPoint,
}

/// Sets a fork up: the parent's settings, its tasks, its graph as it was
/// at its start; `opts` gives the trace, the clock, the pace and the tasks
/// file when the config's is not the one the parent ran.
pub fn prepare_fork(config: &Config, req: &ForkRequest, opts: &SessionOptions) -> Result<Prepared, SetupError> {
    let events = read_trace(&req.parent)?;
    let mut plan = ForkPlan::new(&req.parent.display().to_string(), &events, req.at)
        .map_err(|e| SetupError::Invalid(format!("{}: {e}", req.parent.display())))?;
    if let Some(text) = &req.answer {
        plan.edit_answer(&events, text).map_err(|e| SetupError::Invalid(format!("{}: {e}", req.parent.display())))?;
    }
    plan.controls = req.controls.clone();
    plan.at_fork_point = req.at_fork_point;
    plan.origin.resumed = req.at_fork_point == AtForkPoint::AsRecorded;
    let EventKind::SessionStarted {
        strategy, seed, params, models, tools, tasks, task_list, graph, experience, ..
    } = plan.session_started().kind.clone()
    else {
        return Err(SetupError::Invalid(format!(
            "{}: the trace does not start with SessionStarted",
            req.parent.display()
        )));
    };
    let mut opts = opts.clone();
    opts.strategy = Some(strategy);
    opts.seed = Some(seed);
    opts.param_changes.clear();
    opts.schedule.clear();
    // A fork is an experiment: what it learns is not saved.
    opts.save_graph = false;
    opts.start_paused = false;
    let mut shared = shared(config, &opts)?;
    shared.params = params;
    let where_ = req.parent.display();
    // The library must be the recorded one: same tools, same costs.
    for t in tools.iter() {
        match shared.library.get(&t.name) {
            None => {
                return Err(SetupError::Invalid(format!(
                    "{where_}: the trace's tool '{}' is not in this config's library; fork with the config the trace was recorded with (--config)",
                    t.name
                )));
            }
            Some(s) if (s.cost - t.cost).abs() > 1e-9 => {
                return Err(SetupError::Invalid(format!(
                    "{where_}: tool '{}' costs {} here but {} in the trace (was it recorded with --tool-costs?)",
                    t.name, s.cost, t.cost
                )));
            }
            Some(_) => {}
        }
    }
    // The models of the recorded roles: the prefix needs none of them, but
    // what follows the fork point runs on them.
    for m in &models {
        let here = shared.models.get(m.role).model.info().name;
        if here != m.model.name {
            return Err(SetupError::Invalid(format!(
                "{where_}: role {} played '{}' in the trace but '{here}' in this config; fork with that config, or switch the model after the fork point (--model {}=NAME)",
                m.role, m.model.name, m.role
            )));
        }
    }
    let tasks = fork_tasks(config, &opts, &task_list, tasks as usize, &events)?;
    let graph = match (shared.graph(config, &SessionOptions { graph: GraphSource::Fresh, ..opts.clone() })?, graph) {
        (Some(mut g), Some(snap)) => {
            g.restore(snap.iteration, snap.edges(), &snap.scores).map_err(|e| {
                SetupError::Invalid(format!("{where_}: the recorded graph does not fit this library: {e}"))
            })?;
            Some(g)
        }
        (g, _) => g,
    };
    // BTP's experience as the parent started from it (the store only
    // grows), read but not written; the prefix's runs add theirs again.
    let mut records = ExperienceStore::read(&shared.data()?.experience())
        .map_err(|e| SetupError::Invalid(format!("experience: {e}")))?;
    if let Some(n) = experience {
        records.truncate(n as usize);
    }
    // A classification the parent asked the model for is asked again (and
    // answered from the trace), not read from the cache it then filled.
    if plan.prefix().iter().any(|e| matches!(&e.kind, EventKind::ModelCall { role: Role::Classifier, .. })) {
        opts.fresh_categories = true;
    }
    opts.experience = ExperienceSource::InMemory(records.clone());
    let learnt = Learnt { graph, experience: ExperienceStore::in_memory(records), labels: Labels::new() };
    opts.fork = Some(plan);
    let seed = shared.seed;
    let mut prepared = shared.engine(config, &opts, tasks, learnt, seed)?;
    if let Some(p) = &opts.trace {
        if same_file(p, &req.parent) {
            return Err(SetupError::Invalid(format!("{}: a fork cannot write over its parent trace", p.display())));
        }
        prepared.engine.set_trace(TraceWriter::create(p)?);
    }
    Ok(prepared)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The recorded session's tasks, `total` positions cycling through the
/// `recorded` round: the task file's when it lists the same tasks
/// (candidates and match modes come with it), else as the trace names them,
/// with the gold answers its runs carried.
fn fork_tasks(
    config: &Config,
    opts: &SessionOptions,
    recorded: &[TaskBrief],
    total: usize,
    events: &[Event],
) -> Result<TaskList, SetupError> {
    // A version 2 trace listed every position, a version 3 one a round.
    let same = |tasks: &TaskList| {
        tasks.cycle().len() <= recorded.len()
            && recorded
                .iter()
                .enumerate()
                .all(|(i, r)| tasks.get(i).is_some_and(|t| t.id == r.id && t.query == r.query))
    };
    if !matches!(opts.tasks, TaskSource::Text(_))
        && let Ok(tasks) = load_task_list(config, &opts.tasks, Some(total))
        && same(&tasks)
    {
        return Ok(tasks);
    }
    if matches!(opts.tasks, TaskSource::File(_)) {
        return Err(SetupError::Invalid(
            "--tasks: the file does not list the tasks the trace ran (same ids and texts, in order)".into(),
        ));
    }
    let mut tasks: Vec<Task> =
        recorded.iter().map(|b| Task { id: b.id.clone(), query: b.query.clone(), ..Task::default() }).collect();
    let round = tasks.len().max(1);
    for e in events {
        if let EventKind::RunStarted { index, gold: Some(g), .. } = &e.kind
            && let Some(t) = tasks.get_mut((*index as usize).saturating_sub(1) % round)
            && t.answer.is_none()
        {
            t.answer = Some(g.clone());
        }
    }
    Ok(TaskList::cycling(tasks, total))
}
