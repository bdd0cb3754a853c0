//! What a report says about an eval's folder, computed from its files alone
//! (`eval.json` and `results.jsonl`), so the report can be drawn again after
//! an interrupted eval or an edit: per setting the metrics, the numeric
//! scorings when golds are numbers, sweeps as series, the model matrix, and
//! how much of the eval is done.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::metrics::{MatrixRow, Metrics};
use super::numeric;
pub use super::numeric::NumericScores;
use super::results::{self, EvalMeta, ResultsError, Sweep, TaskRow};
use crate::engine::event::RunOutcome;
use crate::model::Role;

/// The summary's file name inside an eval's folder.
pub const SUMMARY: &str = "summary.json";

#[derive(thiserror::Error, Debug)]
pub enum ReportError {
    #[error("{}: no such folder (an eval's output folder holds eval.json and results.jsonl)", path.display())]
    NoFolder { path: PathBuf },
    #[error("{}: missing ({what})", path.display())]
    Missing { path: PathBuf, what: &'static str },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: not an eval description: {message}", path.display())]
    Meta { path: PathBuf, message: String },
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{}: no results yet (the eval has finished no task)", path.display())]
    Empty { path: PathBuf },
}

/// An eval's folder as read from disk.
#[derive(Clone, Debug)]
pub struct EvalData {
    pub dir: PathBuf,
    pub meta: EvalMeta,
    pub rows: Vec<TaskRow>,
    /// The last line of the results was torn (the eval was killed while
    /// writing it) and is left out.
    pub torn: bool,
}

/// Reads `DIR/eval.json` and `DIR/results.jsonl`; a folder without either,
/// or without a single finished task, is an error naming the file.
pub fn load(dir: &Path) -> Result<EvalData, ReportError> {
    if !dir.is_dir() {
        return Err(ReportError::NoFolder { path: dir.into() });
    }
    let meta_path = dir.join(results::META);
    let text = match std::fs::read_to_string(&meta_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReportError::Missing {
                path: meta_path,
                what: "the eval's description, written when it starts",
            });
        }
        Err(source) => return Err(ReportError::Io { path: meta_path, source }),
    };
    let meta: EvalMeta = serde_json::from_str(&text)
        .map_err(|e| ReportError::Meta { path: meta_path.clone(), message: e.to_string() })?;
    let rows_path = dir.join(results::RESULTS);
    if !rows_path.is_file() {
        return Err(ReportError::Missing { path: rows_path, what: "the eval's results, one line per finished task" });
    }
    let (rows, torn) = results::read_rows(&rows_path)?;
    if rows.is_empty() {
        return Err(ReportError::Empty { path: rows_path });
    }
    Ok(EvalData { dir: dir.into(), meta, rows, torn })
}

/// Everything `summary.json` holds.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub meta: EvalMeta,
    pub progress: Progress,
    pub settings: Vec<SettingSummary>,
    /// One series per swept setting (its label without the swept value).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sweeps: Vec<SweepSeries>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<Matrix>,
    /// What is not judged and why, what is incomplete.
    pub notes: Vec<String>,
}

/// How much of the eval is done.
#[derive(Clone, Debug, Serialize)]
pub struct Progress {
    /// Rows written: tasks done, over every setting.
    pub done: usize,
    /// The eval's tasks times its settings.
    pub expected: usize,
    pub torn_last_line: bool,
    /// Settings of the eval with no row yet.
    pub not_started: Vec<String>,
}

impl Progress {
    pub fn complete(&self) -> bool {
        self.done >= self.expected && self.not_started.is_empty()
    }
}

/// How a setting's runs kept their tasks' expectations (`expect`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Expectations {
    /// Runs whose task set expectations.
    pub runs: usize,
    /// Of them, those that kept every one.
    pub met: usize,
    /// How often each kind was broken (`tools`, `args`, `max_calls`, …).
    pub broken: BTreeMap<String, usize>,
}

impl Expectations {
    fn of<'a>(rows: impl Iterator<Item = &'a TaskRow>) -> Option<Expectations> {
        let mut e = Expectations::default();
        for v in rows.filter_map(|r| r.expect.as_ref()) {
            e.runs += 1;
            e.met += v.met() as usize;
            for b in &v.broken {
                *e.broken.entry(b.expect.clone()).or_default() += 1;
            }
        }
        (e.runs > 0).then_some(e)
    }
}

/// One setting: what it ran and how it did.
#[derive(Clone, Debug, Serialize)]
pub struct SettingSummary {
    pub setting: String,
    pub strategy: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Sweep>,
    pub models: BTreeMap<String, String>,
    pub done: usize,
    pub expected: usize,
    pub metrics: Metrics,
    /// FuncQA-style scorings, when the golds are numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numeric: Option<NumericScores>,
    /// API-Bank's call accuracy (the first call against the gold call), over
    /// the tasks with a gold call, as a share (0..1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_accuracy: Option<f64>,
    /// The runs against their tasks' expectations, over the tasks that set some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expectations: Option<Expectations>,
    /// Some row of the setting ran under a budget.
    pub budgeted: bool,
    /// What a user waits for: the model calls, tokens and wall time a task took.
    pub speed: Speed,
}

/// Per task, over a setting's rows: the time a user waits and what it went to.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Speed {
    pub model_calls: f64,
    /// Wall-clock seconds a task took, models and tools included.
    pub wall_s: f64,
    pub prompt_tokens_per_call: f64,
    pub completion_tokens_per_call: f64,
    /// The share of the prompt tokens the models' servers took from their
    /// cache; None when no server reported one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_share: Option<f64>,
    /// Replies a task had cut at their token cap.
    pub capped: f64,
}

impl Speed {
    pub fn from_rows(rows: &[&TaskRow]) -> Speed {
        let n = rows.len().max(1) as f64;
        let calls: u64 = rows.iter().flat_map(|r| &r.roles).map(|u| u64::from(u.calls)).sum();
        let per_call = |tokens: u64| if calls == 0 { 0.0 } else { tokens as f64 / calls as f64 };
        let prompt: u64 = rows.iter().flat_map(|r| &r.roles).map(|u| u.prompt_tokens).sum();
        let cached: u64 = rows.iter().flat_map(|r| &r.roles).map(|u| u.cached_tokens).sum();
        Speed {
            model_calls: calls as f64 / n,
            wall_s: rows.iter().map(|r| r.wall_ms as f64 / 1000.0).sum::<f64>() / n,
            prompt_tokens_per_call: per_call(prompt),
            cached_share: (cached > 0).then(|| cached as f64 / prompt.max(1) as f64),
            capped: rows.iter().flat_map(|r| &r.roles).map(|u| u.capped as f64).sum::<f64>() / n,
            completion_tokens_per_call: per_call(rows.iter().flat_map(|r| &r.roles).map(|u| u.completion_tokens).sum()),
        }
    }
}

/// A swept setting's metrics against the swept value (BTP's Figure 3).
#[derive(Clone, Debug, Serialize)]
pub struct SweepSeries {
    /// The swept parameter, e.g. `tau` or `budget`.
    pub parameter: String,
    /// The settings' label with the swept value taken out, e.g. `toolnet btp on`.
    pub series: String,
    pub strategy: String,
    /// The settings ran under a budget: BTP's measures apply.
    pub budgeted: bool,
    pub points: Vec<SweepPoint>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    pub value: f64,
    pub setting: String,
    pub tasks: usize,
    /// None when no task was judged.
    pub success_rate: Option<f64>,
    pub answered_rate: f64,
    /// BTP's pass rates over the judged tasks; None when none was judged.
    pub pbc: Option<f64>,
    pub answered_within_budget: f64,
    pub ac: f64,
    pub pr: Option<f64>,
    pub rfbc: f64,
}

/// The settings laid out by the models they varied (the rewoo paper's
/// Table 4): `axes` are the varied roles, the first two the heat map's
/// rows and columns.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    pub axes: Vec<String>,
    pub cells: Vec<MatrixCell>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MatrixCell {
    pub setting: String,
    /// The model of each varied role, in the order of `axes`.
    pub models: Vec<String>,
    /// Tasks with a gold answer (accuracy is n/a without one).
    pub judged: usize,
    pub answered_pct: f64,
    #[serde(flatten)]
    pub row: MatrixRow,
}

impl Summary {
    /// Whether any task of any setting was judged.
    pub fn judged(&self) -> bool {
        self.settings.iter().any(|s| s.metrics.judged > 0)
    }

    pub fn metrics(&self) -> Vec<Metrics> {
        self.settings.iter().map(|s| s.metrics.clone()).collect()
    }
}

/// The summary of an eval's rows.
pub fn summarize(meta: &EvalMeta, rows: &[TaskRow], torn: bool) -> Summary {
    let groups = results::by_setting(rows);
    let settings: Vec<SettingSummary> = groups
        .iter()
        .map(|(label, rows)| {
            let first = rows[0];
            SettingSummary {
                setting: label.clone(),
                strategy: first.strategy.clone(),
                sweep: first.sweep.clone(),
                models: first.models.clone(),
                done: rows.len(),
                expected: meta.shard.places(meta.task_count).len(),
                metrics: Metrics::from_rows(label.clone(), rows),
                numeric: numeric::score(rows.iter().map(|r| (r.answer.as_deref(), r.gold.as_deref()))),
                call_accuracy: super::apibank::call_accuracy(rows.iter().copied()).map(|p| p / 100.0),
                expectations: Expectations::of(rows.iter().copied()),
                budgeted: rows.iter().any(|r| r.budget.is_some()),
                speed: Speed::from_rows(rows),
            }
        })
        .collect();
    let seen: BTreeSet<&str> = groups.iter().map(|(s, _)| s.as_str()).collect();
    let progress = Progress {
        done: rows.len(),
        expected: meta.shard.places(meta.task_count).len() * meta.settings.len().max(groups.len()),
        torn_last_line: torn,
        not_started: meta.settings.iter().filter(|s| !seen.contains(s.as_str())).cloned().collect(),
    };
    let sweeps = sweeps(&settings);
    let matrix = matrix(&groups, &settings, &meta.cost_unit);
    let notes = notes(&settings, rows, &progress);
    Summary { meta: meta.clone(), progress, settings, sweeps, matrix, notes }
}

/// A setting's label without its swept value: the last word naming the
/// parameter (`toolnet btp on tau=0.1` → `toolnet btp on`).
fn series_label(setting: &str, parameter: &str) -> String {
    let prefix = format!("{parameter}=");
    let words: Vec<&str> = setting.split_whitespace().collect();
    match words.iter().rposition(|w| w.starts_with(&prefix)) {
        Some(i) => words.iter().enumerate().filter(|(k, _)| *k != i).map(|(_, w)| *w).collect::<Vec<_>>().join(" "),
        None => setting.to_string(),
    }
}

fn sweeps(settings: &[SettingSummary]) -> Vec<SweepSeries> {
    let mut out: Vec<SweepSeries> = Vec::new();
    for s in settings {
        let Some(sw) = &s.sweep else { continue };
        let series = series_label(&s.setting, &sw.name);
        let m = &s.metrics;
        let point = SweepPoint {
            value: sw.value,
            setting: s.setting.clone(),
            tasks: m.tasks,
            success_rate: m.success_rate,
            answered_rate: m.answered_rate,
            pbc: m.pbc,
            answered_within_budget: m.answered_within_budget,
            ac: m.ac,
            pr: m.pr,
            rfbc: m.rfbc,
        };
        match out.iter_mut().find(|x| x.parameter == sw.name && x.series == series) {
            Some(x) => {
                x.budgeted |= s.budgeted;
                x.points.push(point);
            }
            None => out.push(SweepSeries {
                parameter: sw.name.clone(),
                series,
                strategy: s.strategy.clone(),
                budgeted: s.budgeted,
                points: vec![point],
            }),
        }
    }
    for s in &mut out {
        s.points.sort_by(|a, b| a.value.total_cmp(&b.value));
    }
    out
}

/// The roles whose model differs between settings, planner and solver
/// first. A role a setting does not use (no model listed) does not count
/// as a difference, so comparing react with rewoo is no matrix.
fn varied_roles(settings: &[SettingSummary]) -> Vec<Role> {
    if settings.len() < 2 {
        return Vec::new();
    }
    Role::ALL
        .into_iter()
        .filter(|r| {
            let models: BTreeSet<&String> = settings.iter().filter_map(|s| s.models.get(r.as_str())).collect();
            models.len() > 1
        })
        .collect()
}

fn matrix(groups: &[(String, Vec<&TaskRow>)], settings: &[SettingSummary], unit: &str) -> Option<Matrix> {
    let varied = varied_roles(settings);
    if varied.is_empty() {
        return None;
    }
    let cells = groups
        .iter()
        .zip(settings)
        .map(|((label, rows), s)| {
            let row = MatrixRow::from_rows(&varied, rows, unit);
            MatrixCell {
                setting: label.clone(),
                models: row.varied.iter().map(|v| v.model.clone()).collect(),
                judged: s.metrics.judged,
                answered_pct: 100.0 * s.metrics.answered_rate,
                row,
            }
        })
        .collect();
    Some(Matrix { axes: varied.iter().map(|r| r.as_str().to_string()).collect(), cells })
}

fn notes(settings: &[SettingSummary], rows: &[TaskRow], progress: &Progress) -> Vec<String> {
    let mut notes = Vec::new();
    let counted = rows.iter().filter(|r| r.outcome != RunOutcome::Restarted);
    let (mut tasks, mut judged) = (0, 0);
    for r in counted {
        tasks += 1;
        judged += usize::from(r.success.is_some());
    }
    if judged == 0 {
        notes.push(
            "No task has a gold answer, so nothing is judged: success is n/a, and `answered` counts the \
             runs that ended with an answer, right or wrong."
                .into(),
        );
    } else if judged < tasks {
        notes.push(format!(
            "{} of {tasks} runs have no gold answer and are not judged: success is over the {judged} judged runs.",
            tasks - judged
        ));
    }
    if rows.iter().all(|r| r.gold_tools.is_empty()) {
        notes.push("No task names its gold tools, so Path% and Prec% are not measured.".into());
    }
    if settings.iter().any(|s| s.numeric.is_some()) {
        notes.push(
            "Numeric golds are also scored as CoTools does, from the last number of the answer (commas \
             stripped): rounded to 2 decimals, within 0.1 % and within 1 % of the gold."
                .into(),
        );
    }
    let restarted = rows.iter().filter(|r| r.outcome == RunOutcome::Restarted).count();
    if restarted > 0 {
        notes.push(format!("{restarted} runs the user restarted are not attempts of their own and are left out."));
    }
    if progress.torn_last_line {
        notes.push(format!(
            "The last line of {} was torn (the eval was stopped while writing it) and is left out.",
            results::RESULTS
        ));
    }
    if !progress.complete() {
        let mut s = format!(
            "The eval is incomplete: {} of {} task runs are done (stopped, or still running; `eval --resume` \
             finishes it).",
            progress.done, progress.expected
        );
        if !progress.not_started.is_empty() {
            s.push_str(&format!(" Not started: {}.", progress.not_started.join(", ")));
        }
        notes.push(s);
    }
    notes
}

/// Writes `summary.json` into the folder, atomically.
pub fn write_summary(dir: &Path, summary: &Summary) -> Result<PathBuf, ReportError> {
    let path = dir.join(SUMMARY);
    let io = |source| ReportError::Io { path: path.clone(), source };
    let mut text = serde_json::to_string_pretty(summary).map_err(|e| io(std::io::Error::other(e)))?;
    text.push('\n');
    super::write_atomic(&path, text.as_bytes()).map_err(io)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swept_value_is_taken_out_of_the_series_label() {
        assert_eq!(series_label("toolnet btp on tau=0.1", "tau"), "toolnet btp on");
        assert_eq!(series_label("react (k=all) budget=20", "budget"), "react (k=all)");
        assert_eq!(series_label("toolnet", "tau"), "toolnet");
    }
}
