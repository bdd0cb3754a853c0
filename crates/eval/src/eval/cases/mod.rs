//! Runs as test cases (`switchyard trace to-tasks`, and `T` in the
//! workbench): a finished run becomes a task of a JSON Lines task file whose
//! gold is what the run did (its answer, the tools it called in order, its
//! first call with the arguments), so a run found in the workbench is an
//! eval case from then on.
//!
//! A run that missed the gold answer of its own task keeps that gold: the
//! case should fail until the bug is fixed, not pin the wrong answer.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::engine::event::{Event, EventKind, RunOutcome};
use crate::engine::fold::{Entry, SessionState};
use crate::task::{GoldCall, Task, TaskError, load_tasks};

/// A run made into a task.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub run: u32,
    pub task: Task,
    /// What a reader should know about how the gold was chosen.
    pub note: Option<String>,
}

#[derive(thiserror::Error, Debug)]
pub enum CaseError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{} is not a JSON Lines task file (cases are appended to one ending in .jsonl)", .0.display())]
    NotJsonl(PathBuf),
    #[error("{0} (cases are not appended to a task file that does not read)")]
    Tasks(#[from] TaskError),
}

/// The case the state's current run makes, or why it makes none: it has not
/// finished, or finished without an answer.
pub fn case_of(state: &SessionState) -> Result<Case, String> {
    let Some(r) = &state.current else {
        return Err("no run has started".into());
    };
    let Some(done) = state.finished.iter().rev().find(|f| f.run == r.run) else {
        return Err(format!(
            "run {} ({}) has not finished: a run becomes a case once it has answered",
            r.run, r.task_id
        ));
    };
    let answer = match (&done.outcome, &done.answer) {
        (RunOutcome::Answered, Some(a)) => a.clone(),
        (o, _) => {
            let how = crate::traces::diff::outcome_word(o).replace('_', " ");
            return Err(format!("run {} ({}) ended without an answer ({how})", r.run, r.task_id));
        }
    };
    if r.task.trim().is_empty() || r.task_id.trim().is_empty() {
        return Err(format!("run {} has no task text or id", r.run));
    }
    let calls: Vec<(&String, &serde_json::Value)> = r
        .transcript
        .iter()
        .filter_map(|e| match e {
            Entry::Call { tool, args, .. } => Some((tool, args)),
            _ => None,
        })
        .collect();
    let (gold, note) = match (&r.gold, done.success) {
        (Some(g), Some(false)) => (
            g.clone(),
            Some(format!(
                "run {} missed its task's gold: the case keeps the gold \"{g}\", not the run's \"{answer}\"",
                r.run
            )),
        ),
        _ => (answer, None),
    };
    // The task file's gold call is one call, judged against the run's first
    // (as API-Bank judges); a call whose arguments are not an object cannot be one.
    let gold_call = calls
        .first()
        .filter(|(_, args)| args.is_object() || args.is_null())
        .map(|(tool, args)| GoldCall { tool: tool.to_string(), args: (*args).clone() });
    let task = Task {
        id: r.task_id.clone(),
        query: r.task.clone(),
        answer: Some(gold),
        tools: calls.iter().map(|(t, _)| t.to_string()).collect(),
        gold_call,
        ..Task::default()
    };
    Ok(Case { run: r.run, task, note })
}

/// The chosen runs of a trace (all with None) as cases, and the runs that
/// make none with the reason.
pub fn cases_from_events(events: &[Event], runs: Option<&BTreeSet<u32>>) -> (Vec<Case>, Vec<(u32, String)>) {
    let wanted = |r: u32| runs.is_none_or(|set| set.contains(&r));
    let mut state = SessionState::default();
    let (mut cases, mut skipped) = (Vec::new(), Vec::new());
    let mut open: BTreeSet<u32> = BTreeSet::new();
    for e in events {
        state.apply(e);
        match &e.kind {
            EventKind::RunStarted { .. } if wanted(e.run) => {
                open.insert(e.run);
            }
            EventKind::RunFinished { .. } if open.remove(&e.run) => match case_of(&state) {
                Ok(c) => cases.push(c),
                Err(why) => skipped.push((e.run, why)),
            },
            _ => {}
        }
    }
    skipped.extend(open.into_iter().map(|r| (r, format!("run {r} did not finish: the trace ends inside it"))));
    skipped.sort_by_key(|s| s.0);
    (cases, skipped)
}

/// The case of the run the replay cursor is in (the run of the last
/// `RunStarted` before it), taken from the whole run, its end included.
pub fn case_at(events: &[Event], cursor: usize) -> Result<Case, String> {
    let cursor = cursor.min(events.len());
    let run = events[..cursor]
        .iter()
        .rev()
        .find(|e| matches!(e.kind, EventKind::RunStarted { .. }))
        .map(|e| e.run)
        .ok_or("no run has started at the cursor: move it into a run (→)")?;
    let end = events
        .iter()
        .enumerate()
        .skip(cursor)
        .find(|(_, e)| e.run == run && matches!(e.kind, EventKind::RunFinished { .. }))
        .map_or(cursor, |(i, _)| i + 1);
    case_of(&SessionState::from_events(&events[..end.max(cursor)]))
}

/// What became of a case offered to a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Added {
    /// Written under this id (the run's task id, made unique in the file).
    New { run: u32, id: String },
    /// The file already holds this very task.
    Present { run: u32, id: String },
}

/// Gives each case an id no other task of `existing` (or an earlier case)
/// holds, and drops a case the file already holds as it is.
pub fn assign_ids(existing: &[Task], cases: &[Case]) -> Vec<(Option<Task>, Added)> {
    let mut known: Vec<Task> = existing.to_vec();
    cases
        .iter()
        .map(|c| {
            let same = |t: &Task| Task { id: t.id.clone(), ..c.task.clone() } == *t;
            if let Some(t) = known.iter().find(|t| same(t)) {
                return (None, Added::Present { run: c.run, id: t.id.clone() });
            }
            let taken = |id: &str| known.iter().any(|t| t.id == id);
            let base = &c.task.id;
            let id = std::iter::once(base.clone())
                .chain(std::iter::once(format!("{base}-run{}", c.run)))
                .chain((2..).map(|n| format!("{base}-run{}-{n}", c.run)))
                .find(|id| !taken(id))
                .unwrap_or_else(|| base.clone());
            let task = Task { id: id.clone(), ..c.task.clone() };
            known.push(task.clone());
            (Some(task), Added::New { run: c.run, id })
        })
        .collect()
}

/// Appends the cases to a JSON Lines task file (created with its folder
/// when missing), each under a free id; a case the file holds already is
/// not written again.
pub fn append(path: &Path, cases: &[Case]) -> Result<Vec<Added>, CaseError> {
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("jsonl")) {
        return Err(CaseError::NotJsonl(path.to_path_buf()));
    }
    let io = |source| CaseError::Io { path: path.to_path_buf(), source };
    let existing = match load_tasks(path) {
        Ok(t) => t,
        Err(TaskError::Empty { .. }) => Vec::new(),
        Err(TaskError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let assigned = assign_ids(&existing, cases);
    let mut text = String::new();
    for task in assigned.iter().filter_map(|(t, _)| t.as_ref()) {
        text.push_str(&serde_json::to_string(task).map_err(|e| io(std::io::Error::other(e)))?);
        text.push('\n');
    }
    if !text.is_empty() {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        // A file whose last line lacks its newline would glue our first line to it.
        let glue = std::fs::read(path).ok().is_some_and(|b| b.last().is_some_and(|&c| c != b'\n'));
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
        f.write_all(format!("{}{text}", if glue { "\n" } else { "" }).as_bytes()).map_err(io)?;
    }
    Ok(assigned.into_iter().map(|(_, a)| a).collect())
}

/// Today's case file under the data folder: `DATA_DIR/cases/YYYY-MM-DD.jsonl`.
pub fn daily_file(data_dir: &Path) -> PathBuf {
    data_dir.join("cases").join(format!("{}.jsonl", chrono::Local::now().format("%Y-%m-%d")))
}

/// The runs of `events` a list such as `1,3-5` names; a run the trace does
/// not hold is an error saying which runs it holds.
pub fn choose_runs(events: &[Event], list: &str) -> Result<BTreeSet<u32>, String> {
    let present: BTreeSet<u32> =
        events.iter().filter(|e| matches!(e.kind, EventKind::RunStarted { .. })).map(|e| e.run).collect();
    let set = parse_runs(list)?;
    if let Some(r) = set.iter().find(|r| !present.contains(r)) {
        let (lo, hi) = (present.first().copied().unwrap_or(0), present.last().copied().unwrap_or(0));
        return Err(format!("run {r} is not in the trace (it holds runs {lo} to {hi})"));
    }
    Ok(set)
}

/// `1,3-5` → {1, 3, 4, 5}.
pub fn parse_runs(list: &str) -> Result<BTreeSet<u32>, String> {
    let mut out = BTreeSet::new();
    for part in list.split(',').map(str::trim) {
        let num = |s: &str| {
            s.trim().parse::<u32>().ok().filter(|&n| n > 0).ok_or(format!("'{s}' is not a run number (1, 2, ...)"))
        };
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (num(lo)?, num(hi)?);
                if lo > hi {
                    return Err(format!("'{part}' runs backwards"));
                }
                out.extend(lo..=hi);
            }
            None => {
                out.insert(num(part)?);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
