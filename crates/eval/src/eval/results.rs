//! An eval's results on disk: one row per task and setting, appended to
//! `results.jsonl` as each task finishes, so an interrupted eval resumes
//! from what it wrote and a report can be drawn again from the file alone.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::budget::experience::Experience;
use crate::engine::event::RunOutcome;
use crate::engine::fold::RunSummary;
use crate::model::Usage;
use crate::task::GoldCall;

use super::shard::Shard;

/// The file's name inside an eval's folder.
pub const RESULTS: &str = "results.jsonl";

/// What an eval was asked to do, written to `eval.json` before its first
/// task: a report states it, and `--resume` refuses a folder whose eval
/// was a different one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalMeta {
    /// The command line, without the program's path.
    pub command: String,
    /// The config file (None: the embedded default).
    #[serde(default)]
    pub config: Option<PathBuf>,
    /// The task file (or `configured` for the config's task set).
    pub tasks: String,
    pub task_count: usize,
    pub seed: u64,
    pub jobs: usize,
    /// The part of the task list this eval ran (`--shard I/N`); none: all of it.
    #[serde(default, skip_serializing_if = "Shard::whole")]
    pub shard: Shard,
    /// Every setting's label, in the order they run.
    pub settings: Vec<String>,
    /// The parameters every setting starts from (before its sweep value).
    pub params: Value,
    pub cost_unit: String,
    /// When the eval started (RFC 3339).
    pub started: String,
    /// The folders a merged eval was made of (`report DIR DIR…`); none for an eval that ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<PathBuf>,
}

/// The eval's description inside its folder.
pub const META: &str = "eval.json";

impl EvalMeta {
    /// Write it as `eval.json` in the eval's folder `dir`, whole or not at all.
    pub fn write(&self, dir: &Path) -> Result<(), ResultsError> {
        let path = dir.join(META);
        let text = serde_json::to_string_pretty(self).expect("an EvalMeta serialises") + "\n";
        super::write_atomic(&path, text.as_bytes()).map_err(|source| ResultsError::Io { path, source })
    }

    /// Whether the eval in `dir` is this one, so `--resume` may go on with
    /// it: the same tasks, settings, seed and jobs (with learners, N decides
    /// what each task starts from).
    pub fn check_resume(&self, dir: &Path) -> Result<(), ResultsError> {
        let path = dir.join(META);
        let text = std::fs::read_to_string(&path)
            .map_err(|_| ResultsError::Resume(format!("--resume: {} holds no eval (no {META})", dir.display())))?;
        let was: EvalMeta = serde_json::from_str(&text).map_err(|e| {
            ResultsError::Resume(format!("--resume: {} is not an eval's description: {e}", path.display()))
        })?;
        let differs = |what: &str, a: String, b: String| {
            if a == b {
                Ok(())
            } else {
                Err(ResultsError::Resume(format!(
                    "--resume: the eval in {} ran with {what} {a}, this one asks for {b}; resume it with the same flags",
                    dir.display()
                )))
            }
        };
        differs(
            "the tasks",
            format!("{} ({})", was.tasks, was.task_count),
            format!("{} ({})", self.tasks, self.task_count),
        )?;
        differs("the settings", was.settings.join(", "), self.settings.join(", "))?;
        differs("seed", was.seed.to_string(), self.seed.to_string())?;
        differs("--shard", was.shard.to_string(), self.shard.to_string())?;
        differs("--jobs", was.jobs.to_string(), self.jobs.to_string())
    }
}

/// One task run under one setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TaskRow {
    /// The setting's label, as the report's tables show it, e.g.
    /// `react (k=all)`, `toolnet tau=0.1`, `planner=sim-weak solver=sim-strong`.
    pub setting: String,
    pub strategy: String,
    /// The swept parameter and its value in this setting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    /// Role → the model that played it (as the session read it back).
    #[serde(default)]
    pub models: BTreeMap<String, String>,
    /// The task's place in the task list, from 0.
    pub index: usize,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gold_tools: Vec<String>,
    /// The task's gold call (API-Bank), for `eval::apibank`'s call accuracy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_call: Option<GoldCall>,
    #[serde(flatten)]
    pub outcome: RunOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// None when the task has no gold answer (not judged).
    #[serde(default)]
    pub success: Option<bool>,
    pub steps: u32,
    pub tool_calls: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of the prompt tokens, those the model's server served from its cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Everything the run cost (models and tools), in the eval's cost unit.
    pub cost: f64,
    /// The tools called, in order.
    #[serde(default)]
    pub path: Vec<String>,
    /// The calls with their arguments, in order (API-Bank's metric compares them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallMade>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_cost: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_calls: Option<u32>,
    #[serde(default)]
    pub spent: f64,
    #[serde(default)]
    pub tokens_saved: u64,
    #[serde(default)]
    pub reflections: u32,
    /// Each role's model calls in this run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleUse>,
    /// Wall-clock time of the task, including waiting on models and tools.
    #[serde(default)]
    pub wall_ms: u64,
    /// How many tasks' learning this one started from (tasks 0..this, in
    /// order): with `--jobs N`, task i starts from i+1−N of them.
    #[serde(default)]
    pub learnt_from: usize,
    /// The run against the task's expectations (`expect`), when it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<crate::task::ExpectVerdict>,
    /// What this task taught the learners, so a resumed eval rebuilds
    /// their state from the rows alone.
    #[serde(default, skip_serializing_if = "Learned::is_empty")]
    pub learned: Learned,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A swept parameter's value in one setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub name: String,
    pub value: f64,
}

/// One tool call as the run made it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallMade {
    pub tool: String,
    pub args: Value,
}

/// One role's model calls within one task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleUse {
    pub role: String,
    pub model: String,
    pub calls: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
    /// Replies the server cut at their token cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub capped: u64,
    pub cost: f64,
}

/// The learnt state a task adds: ToolNet's score maps (each applied with
/// the setting's α and β, in order), BTP's new tool usages, and rewoo's
/// tool labels when this task was the one to classify the library.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Learned {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<BTreeMap<String, i32>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usages: Vec<Experience>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

impl Learned {
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty() && self.usages.is_empty() && self.labels.is_empty()
    }
}

impl TaskRow {
    /// The row as the engine's run summary, so the metrics of a live
    /// session and of a results file are one computation.
    pub fn summary(&self) -> RunSummary {
        RunSummary {
            run: self.index as u32 + 1,
            task_id: self.task_id.clone(),
            outcome: self.outcome.clone(),
            answer: self.answer.clone(),
            success: self.success,
            cost: self.cost,
            usage: Usage {
                prompt_tokens: self.prompt_tokens,
                completion_tokens: self.completion_tokens,
                cached_tokens: self.cached_tokens,
            },
            steps: self.steps,
            tool_calls: self.tool_calls,
            path: self.path.clone(),
            budget: self.budget,
            planned_cost: self.planned_cost,
            planned_calls: self.planned_calls,
            spent: self.spent,
            tokens_saved: self.tokens_saved,
            reflections: self.reflections,
            expect: self.expect.clone(),
        }
    }
}

#[derive(thiserror::Error, Debug)]
pub enum ResultsError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}, line {line}: {message}", path.display())]
    Parse { path: PathBuf, line: usize, message: String },
    /// A folder `--resume` cannot go on with, and why.
    #[error("{0}")]
    Resume(String),
}

/// The running totals an eval's progress shows besides done/total.
#[derive(Debug, Default)]
pub struct Tally {
    judged: usize,
    succeeded: usize,
    answered: usize,
    tokens: u64,
    cost: f64,
}

impl Tally {
    pub fn add(&mut self, r: &TaskRow) {
        self.judged += usize::from(r.success.is_some());
        self.succeeded += usize::from(r.success == Some(true));
        self.answered += usize::from(r.outcome == RunOutcome::Answered);
        self.tokens += r.prompt_tokens + r.completion_tokens;
        self.cost += r.cost;
    }

    /// Success (or the answered count, while no row was judged), tokens and cost.
    pub fn message(&self, unit: &str) -> String {
        let success = if self.judged == 0 {
            format!("answered {}", self.answered)
        } else {
            format!("success {:.1}%", 100.0 * self.succeeded as f64 / self.judged as f64)
        };
        format!("{success} · {} tok · {:.2} {unit}", self.tokens, self.cost)
    }
}

/// The rows of a results file. A torn last line (the eval was killed while
/// writing it) is left out and counted, so the task it was is run again;
/// a bad line elsewhere is an error naming it.
pub fn read_rows(path: &Path) -> Result<(Vec<TaskRow>, bool), ResultsError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), false)),
        Err(source) => return Err(ResultsError::Io { path: path.into(), source }),
    };
    let mut rows = Vec::new();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut torn = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<TaskRow>(line) {
            Ok(r) => rows.push(r),
            Err(_) if i + 1 == lines.len() && !line.ends_with('\n') => torn = true,
            Err(e) => return Err(ResultsError::Parse { path: path.into(), line: i + 1, message: e.to_string() }),
        }
    }
    Ok((rows, torn))
}

/// Appends rows to a results file, one line each, flushed line by line so
/// a kill loses at most the row being written. A torn last line left by a
/// killed writer is cut off first, so the file stays one row per line.
pub struct RowWriter {
    path: PathBuf,
    file: std::fs::File,
}

impl RowWriter {
    pub fn append(path: &Path) -> Result<RowWriter, ResultsError> {
        let io = |source| ResultsError::Io { path: path.into(), source };
        if let Ok(text) = std::fs::read(path)
            && !text.is_empty()
            && !text.ends_with(b"\n")
        {
            let keep = text.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            let f = std::fs::OpenOptions::new().write(true).open(path).map_err(io)?;
            f.set_len(keep as u64).map_err(io)?;
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(io)?;
        Ok(RowWriter { path: path.into(), file })
    }

    pub fn write(&mut self, row: &TaskRow) -> Result<(), ResultsError> {
        let mut line = serde_json::to_string(row).map_err(|e| ResultsError::Parse {
            path: self.path.clone(),
            line: 0,
            message: e.to_string(),
        })?;
        line.push('\n');
        self.file.write_all(line.as_bytes()).map_err(|source| ResultsError::Io { path: self.path.clone(), source })
    }
}

/// The folder of an eval's traces, one file per task and setting.
pub const TRACES: &str = "traces";

/// Where an eval in `dir` keeps the trace of task `index` (from 0) under
/// `setting`: `traces/SETTING/task-INDEX.jsonl`, the setting's label made
/// a file name (`react (k=all)` → `react-k-all`).
pub fn trace_path(dir: &Path, setting: &str, index: usize) -> PathBuf {
    dir.join(TRACES).join(file_name(setting)).join(format!("task-{index:04}.jsonl"))
}

fn file_name(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() { "setting".into() } else { out }
}

/// Writes one task's events as a trace, whole or not at all, before its
/// row: a row in `results.jsonl` means its trace is on disk.
pub fn write_trace(path: &Path, events: &[crate::engine::Event]) -> Result<(), ResultsError> {
    let io = |source| ResultsError::Io { path: path.into(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut text = String::new();
    for e in events {
        text.push_str(&serde_json::to_string(e).expect("an event serialises"));
        text.push('\n');
    }
    super::write_atomic(path, text.as_bytes()).map_err(io)
}

/// The settings in the order they first appear, each with its rows sorted
/// by task index.
pub fn by_setting(rows: &[TaskRow]) -> Vec<(String, Vec<&TaskRow>)> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<&str, Vec<&TaskRow>> = BTreeMap::new();
    for r in rows {
        if !groups.contains_key(r.setting.as_str()) {
            order.push(r.setting.clone());
        }
        groups.entry(r.setting.as_str()).or_default().push(r);
    }
    order
        .into_iter()
        .map(|s| {
            let mut g = groups.remove(s.as_str()).unwrap_or_default();
            g.sort_by_key(|r| r.index);
            (s, g)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(setting: &str, index: usize) -> TaskRow {
        TaskRow {
            setting: setting.into(),
            strategy: "react".into(),
            sweep: None,
            models: BTreeMap::new(),
            index,
            task_id: format!("t{index}"),
            gold: Some("4".into()),
            gold_tools: vec![],
            gold_call: None,
            outcome: RunOutcome::Answered,
            answer: Some("4".into()),
            success: Some(true),
            steps: 2,
            tool_calls: 1,
            prompt_tokens: 10,
            completion_tokens: 2,
            cached_tokens: 0,
            cost: 0.5,
            path: vec!["calculator".into()],
            calls: vec![],
            budget: None,
            planned_cost: None,
            planned_calls: None,
            spent: 0.0,
            tokens_saved: 0,
            reflections: 0,
            roles: vec![],
            wall_ms: 3,
            learnt_from: 0,
            expect: None,
            learned: Learned::default(),
        }
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_cut_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULTS);
        let mut w = RowWriter::append(&path).unwrap();
        w.write(&row("a", 0)).unwrap();
        w.write(&row("a", 1)).unwrap();
        drop(w);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"setting\":\"a\",\"strat");
        std::fs::write(&path, &text).unwrap();
        let (rows, torn) = read_rows(&path).unwrap();
        assert_eq!((rows.len(), torn), (2, true));
        let mut w = RowWriter::append(&path).unwrap();
        w.write(&row("a", 2)).unwrap();
        let (rows, torn) = read_rows(&path).unwrap();
        assert_eq!(rows.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert!(!torn);
    }

    #[test]
    fn a_bad_line_in_the_middle_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RESULTS);
        let good = serde_json::to_string(&row("a", 0)).unwrap();
        std::fs::write(&path, format!("{good}\nnot json\n{good}\n")).unwrap();
        let e = read_rows(&path).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn settings_keep_their_first_order_and_rows_their_index() {
        let rows = vec![row("b", 1), row("a", 0), row("b", 0)];
        let g = by_setting(&rows);
        assert_eq!(g[0].0, "b");
        assert_eq!(g[0].1.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(g[1].0, "a");
    }

    fn meta() -> EvalMeta {
        EvalMeta {
            command: "eval".into(),
            config: None,
            tasks: "tasks.jsonl".into(),
            task_count: 3,
            seed: 7,
            jobs: 1,
            shard: Shard::WHOLE,
            settings: vec!["react (k=all)".into(), "toolnet".into()],
            params: Value::Null,
            cost_unit: "USD".into(),
            started: "now".into(),
            merged: vec![],
        }
    }

    #[test]
    fn a_resumed_eval_must_be_the_written_one() {
        let dir = tempfile::tempdir().unwrap();
        let e = meta().check_resume(dir.path()).unwrap_err().to_string();
        assert!(e.contains("holds no eval (no eval.json)"), "{e}");
        meta().write(dir.path()).unwrap();
        meta().check_resume(dir.path()).unwrap();
        let e = EvalMeta { seed: 8, ..meta() }.check_resume(dir.path()).unwrap_err().to_string();
        assert!(e.contains("ran with seed 7, this one asks for 8"), "{e}");
        let e = EvalMeta { jobs: 2, ..meta() }.check_resume(dir.path()).unwrap_err().to_string();
        assert!(e.contains("--jobs 1"), "{e}");
        std::fs::write(dir.path().join(META), "{").unwrap();
        let e = meta().check_resume(dir.path()).unwrap_err().to_string();
        assert!(e.contains("is not an eval's description"), "{e}");
    }

    #[test]
    fn the_tally_counts_answers_until_a_row_is_judged() {
        let mut t = Tally::default();
        t.add(&TaskRow { success: None, ..row("a", 0) });
        assert_eq!(t.message("USD"), "answered 1 · 12 tok · 0.50 USD");
        t.add(&row("a", 1));
        t.add(&TaskRow { success: Some(false), ..row("a", 2) });
        assert_eq!(t.message("USD"), "success 50.0% · 36 tok · 1.50 USD");
    }
}
