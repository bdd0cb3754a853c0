//! Two evals' results side by side: which tasks flipped, and how the main
//! metrics moved.
//!
//! Matching rule. Settings pair up by label first. The settings left over
//! on both sides then pair by strategy, where a strategy names exactly one
//! leftover setting on each side (`react (k=all)` against `react (k=5)`);
//! anything still unpaired is listed, not compared. Within a pair, rows
//! match by task id — the n-th row of a task id with the n-th on the other
//! side, in task order, since `--count` can run a task more than once.
//! The metrics of both sides are computed over the matched rows only, so a
//! delta never mixes in tasks one side did not run.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::Metrics;
use super::results::{TaskRow, by_setting};
use crate::engine::event::RunOutcome;

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub pairs: Vec<SettingPair>,
    /// Settings of one side that found no partner.
    pub only_first: Vec<String>,
    pub only_second: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    Label,
    Strategy,
}

#[derive(Clone, Debug, Serialize)]
pub struct SettingPair {
    pub first: String,
    pub second: String,
    pub paired_by: PairedBy,
    pub matched: usize,
    /// Task ids run on one side only.
    pub only_first: Vec<String>,
    pub only_second: Vec<String>,
    pub changes: Vec<TaskChange>,
    /// Over the matched rows of each side.
    pub metrics_first: Metrics,
    pub metrics_second: Metrics,
    pub delta: Deltas,
}

/// How one task's result moved from the first eval to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Judged: failed, then succeeded.
    Fixed,
    /// Judged: succeeded, then failed.
    Broken,
    /// Not judged: no answer, then an answer.
    Answered,
    /// Not judged: an answer, then none.
    Unanswered,
    /// Not judged: the tools called changed.
    Path,
}

#[derive(Clone, Debug, Serialize)]
pub struct TaskChange {
    pub task_id: String,
    pub change: Change,
    pub before: String,
    pub after: String,
}

/// Second minus first; rates as shares (0..1). None where a side has
/// nothing to measure it on.
#[derive(Clone, Debug, Serialize)]
pub struct Deltas {
    pub success_rate: Option<f64>,
    pub answered_rate: f64,
    pub avg_steps: f64,
    pub avg_tokens: f64,
    pub avg_cost: f64,
    pub avg_tool_calls: f64,
    pub path_pct: Option<f64>,
    pub prec_pct: Option<f64>,
    pub pbc: Option<f64>,
}

impl Deltas {
    fn of(a: &Metrics, b: &Metrics) -> Deltas {
        let opt = |x: Option<f64>, y: Option<f64>| Some(y? - x?);
        Deltas {
            success_rate: opt(a.success_rate, b.success_rate),
            answered_rate: b.answered_rate - a.answered_rate,
            avg_steps: b.avg_steps - a.avg_steps,
            avg_tokens: (b.avg_prompt_tokens + b.avg_completion_tokens)
                - (a.avg_prompt_tokens + a.avg_completion_tokens),
            avg_cost: b.avg_cost - a.avg_cost,
            avg_tool_calls: b.avg_tool_calls - a.avg_tool_calls,
            path_pct: opt(a.path_pct, b.path_pct),
            prec_pct: opt(a.prec_pct, b.prec_pct),
            pbc: opt(a.pbc, b.pbc),
        }
    }
}

impl Comparison {
    /// Changes of every pair, counted by kind.
    pub fn count(&self, change: Change) -> usize {
        self.pairs.iter().flat_map(|p| &p.changes).filter(|c| c.change == change).count()
    }
}

/// Compares the rows of two evals (see the module's matching rule).
pub fn compare(first: &[TaskRow], second: &[TaskRow]) -> Comparison {
    let a = by_setting(first);
    let b = by_setting(second);
    let mut left_a: Vec<usize> = (0..a.len()).collect();
    let mut left_b: Vec<usize> = (0..b.len()).collect();
    let mut pairs: Vec<(usize, usize, PairedBy)> = Vec::new();
    left_a.retain(|&i| match left_b.iter().position(|&j| b[j].0 == a[i].0) {
        Some(k) => {
            pairs.push((i, left_b.remove(k), PairedBy::Label));
            false
        }
        None => true,
    });
    let strategy = |g: &(String, Vec<&TaskRow>)| g.1.first().map(|r| r.strategy.clone()).unwrap_or_default();
    let unique = |left: &[usize], groups: &[(String, Vec<&TaskRow>)], s: &str| {
        let hits: Vec<usize> = left.iter().copied().filter(|&i| strategy(&groups[i]) == s).collect();
        (hits.len() == 1).then(|| hits[0])
    };
    let mut by_strategy = Vec::new();
    for &i in &left_a {
        let s = strategy(&a[i]);
        if let (Some(_), Some(j)) = (unique(&left_a, &a, &s), unique(&left_b, &b, &s)) {
            by_strategy.push((i, j));
        }
    }
    for (i, j) in by_strategy {
        left_a.retain(|&x| x != i);
        left_b.retain(|&x| x != j);
        pairs.push((i, j, PairedBy::Strategy));
    }
    pairs.sort_by_key(|p| p.0);
    Comparison {
        pairs: pairs.into_iter().map(|(i, j, by)| pair(&a[i], &b[j], by)).collect(),
        only_first: left_a.into_iter().map(|i| a[i].0.clone()).collect(),
        only_second: left_b.into_iter().map(|j| b[j].0.clone()).collect(),
    }
}

/// Rows keyed by (task id, how many times the id came before).
fn keyed<'a>(rows: &[&'a TaskRow]) -> Vec<((String, usize), &'a TaskRow)> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    rows.iter()
        .map(|r| {
            let n = seen.entry(r.task_id.as_str()).or_default();
            *n += 1;
            ((r.task_id.clone(), *n - 1), *r)
        })
        .collect()
}

fn answered(r: &TaskRow) -> bool {
    r.outcome == RunOutcome::Answered
}

fn outcome(r: &TaskRow) -> String {
    match &r.outcome {
        RunOutcome::Answered => format!("answered {:?}", crate::text::ellipsis(r.answer.as_deref().unwrap_or(""), 60)),
        RunOutcome::MaxSteps => "step limit".into(),
        RunOutcome::Stopped => "stopped".into(),
        RunOutcome::Failed { error } => format!("failed: {}", crate::text::ellipsis(error, 60)),
        RunOutcome::Restarted => "restarted".into(),
        RunOutcome::OutOfBudget => "out of budget".into(),
        RunOutcome::BadPlan { error } => format!("bad plan: {}", crate::text::ellipsis(error, 60)),
    }
}

fn path(r: &TaskRow) -> String {
    if r.path.is_empty() { "(no tool)".into() } else { r.path.join(" → ") }
}

fn pair(a: &(String, Vec<&TaskRow>), b: &(String, Vec<&TaskRow>), paired_by: PairedBy) -> SettingPair {
    let ka = keyed(&a.1);
    let kb: BTreeMap<(String, usize), &TaskRow> = keyed(&b.1).into_iter().collect();
    let mut matched_a = Vec::new();
    let mut matched_b = Vec::new();
    let mut changes = Vec::new();
    let mut only_first = Vec::new();
    for (key, ra) in &ka {
        let Some(rb) = kb.get(key) else {
            only_first.push(key.0.clone());
            continue;
        };
        matched_a.push(*ra);
        matched_b.push(*rb);
        let change =
            |change, before: String, after: String| TaskChange { task_id: key.0.clone(), change, before, after };
        match (ra.success, rb.success) {
            (Some(false), Some(true)) => changes.push(change(Change::Fixed, outcome(ra), outcome(rb))),
            (Some(true), Some(false)) => changes.push(change(Change::Broken, outcome(ra), outcome(rb))),
            (Some(_), Some(_)) => {}
            _ => {
                if !answered(ra) && answered(rb) {
                    changes.push(change(Change::Answered, outcome(ra), outcome(rb)));
                } else if answered(ra) && !answered(rb) {
                    changes.push(change(Change::Unanswered, outcome(ra), outcome(rb)));
                }
                if ra.path != rb.path {
                    changes.push(change(Change::Path, path(ra), path(rb)));
                }
            }
        }
    }
    let in_a: std::collections::BTreeSet<&(String, usize)> = ka.iter().map(|(k, _)| k).collect();
    let only_second = kb.keys().filter(|k| !in_a.contains(k)).map(|k| k.0.clone()).collect();
    let metrics_first = Metrics::from_rows(a.0.clone(), &matched_a);
    let metrics_second = Metrics::from_rows(b.0.clone(), &matched_b);
    SettingPair {
        first: a.0.clone(),
        second: b.0.clone(),
        paired_by,
        matched: matched_a.len(),
        only_first,
        only_second,
        changes,
        delta: Deltas::of(&metrics_first, &metrics_second),
        metrics_first,
        metrics_second,
    }
}

/// The comparison as text: per pair the flipped tasks, then the deltas.
pub fn describe(c: &Comparison, unit: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let signed_pct = |x: f64| format!("{:+.1} pts", 100.0 * x);
    for p in &c.pairs {
        let name = if p.first == p.second { p.first.clone() } else { format!("{} ↔ {}", p.first, p.second) };
        let _ = writeln!(out, "{name}: {} tasks matched", p.matched);
        if !p.only_first.is_empty() || !p.only_second.is_empty() {
            let _ = writeln!(
                out,
                "  unmatched: {} only in the first, {} only in the second",
                p.only_first.len(),
                p.only_second.len()
            );
        }
        for (kind, title) in [
            (Change::Fixed, "now succeeds"),
            (Change::Broken, "now fails"),
            (Change::Answered, "now answered (not judged)"),
            (Change::Unanswered, "no longer answered (not judged)"),
            (Change::Path, "tools changed (not judged)"),
        ] {
            let hits: Vec<&TaskChange> = p.changes.iter().filter(|t| t.change == kind).collect();
            if hits.is_empty() {
                continue;
            }
            let _ = writeln!(out, "  {title}: {}", hits.len());
            for t in hits {
                let _ = writeln!(out, "    {}: {} → {}", t.task_id, t.before, t.after);
            }
        }
        let d = &p.delta;
        let mut parts = Vec::new();
        if let Some(s) = d.success_rate {
            parts.push(format!("success {}", signed_pct(s)));
        }
        parts.push(format!("answered {}", signed_pct(d.answered_rate)));
        parts.push(format!("steps {:+.2}", d.avg_steps));
        parts.push(format!("tokens {:+.1}", d.avg_tokens));
        parts.push(format!("cost {:+.4} {unit}", d.avg_cost));
        parts.push(format!("tool calls {:+.2}", d.avg_tool_calls));
        if let Some(x) = d.path_pct {
            parts.push(format!("Path% {x:+.1}"));
        }
        if let Some(x) = d.prec_pct {
            parts.push(format!("Prec% {x:+.1}"));
        }
        let any_pass = |pbc: Option<f64>| pbc.is_some_and(|x| x > 0.0);
        if let Some(x) = d.pbc.filter(|_| any_pass(p.metrics_first.pbc) || any_pass(p.metrics_second.pbc)) {
            parts.push(format!("PBC {}", signed_pct(x)));
        }
        let _ = writeln!(out, "  second − first (per task): {}", parts.join(", "));
    }
    for s in &c.only_first {
        let _ = writeln!(out, "{s}: only in the first eval");
    }
    for s in &c.only_second {
        let _ = writeln!(out, "{s}: only in the second eval");
    }
    out
}
