//! ToolNet's Figure 4 from a trace: a tool breaks, and the scores of it and
//! of its backup, and the weights of the edges into both, over the graph's
//! iterations (one per finished task).
//!
//! The broken tool is the one named, else the first tool with an injected
//! fault. The backup is the one named, else the tool that took the broken
//! one's place: the one called most often right after a failed call of it
//! in the same task (the agent stays where it was and picks a sibling),
//! else the one whose calls per task rose most after the fault, else the
//! broken tool's twin (its strongest sibling sharing the first part of its
//! name, as geo_lookup and geo_lookup_mirror). The edges are those
//! from `start` (every update rewrites that row, so it follows the scores),
//! or from the node named.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::event::{Event, EventKind, ToolOutcome};
use crate::engine::fold::GraphView;
use crate::engine::fold::SessionState;
use crate::graph::{END, START};

#[derive(thiserror::Error, Debug, PartialEq)]
pub enum FigureError {
    #[error("the trace has no ToolNet graph (it was not recorded with the toolnet strategy)")]
    NoGraph,
    #[error("the trace has no injected fault: name the broken tool with --tool")]
    NoFault,
    #[error("no tool took {0}'s place after its fault: name the backup with --backup")]
    NoBackup(String),
    #[error("'{0}' is not a tool of the trace's graph")]
    UnknownTool(String),
}

/// The figure's data, kept beside the plot so it can be drawn again
/// without the trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultFigure {
    pub broken: String,
    pub backup: String,
    /// The node the plotted edges leave.
    pub from: String,
    /// The iteration at which the fault was injected (None: no fault in
    /// the trace, the tools were named).
    pub fault_at: Option<u32>,
    /// (iteration, value), one point per iteration from the first to the last.
    pub broken_score: Vec<(u32, f64)>,
    pub backup_score: Vec<(u32, f64)>,
    pub broken_weight: Vec<(u32, f64)>,
    pub backup_weight: Vec<(u32, f64)>,
}

/// The file the figure's data is kept in, inside an eval's folder.
pub const FAULT_FIGURE: &str = "toolnet-fault.json";

/// The figure from a trace's events.
pub fn fault_figure(
    events: &[Event],
    tool: Option<&str>,
    backup: Option<&str>,
    from: Option<&str>,
) -> Result<FaultFigure, FigureError> {
    let mut state = SessionState::default();
    let mut initial: Option<GraphView> = None;
    let mut fault: Option<(String, u32)> = None;
    // Calls per tool and tasks started, before and after the fault.
    let mut calls: [BTreeMap<String, u32>; 2] = Default::default();
    let mut runs = [0u32; 2];
    // Tools called next after a failed call of the broken tool, and whether
    // the last call of the current task was such a failure.
    let mut replaced: BTreeMap<String, u32> = BTreeMap::new();
    let mut after_failure = false;
    for ev in events {
        state.apply(ev);
        if initial.is_none() {
            initial = state.graph.clone();
        }
        let after = usize::from(fault.is_some());
        match &ev.kind {
            EventKind::FaultInjected { tool: t, .. } if fault.is_none() && tool.is_none_or(|n| n == t) => {
                fault = Some((t.clone(), state.graph.as_ref().map_or(0, |g| g.iteration)));
            }
            EventKind::RunStarted { .. } => {
                runs[after] += 1;
                after_failure = false;
            }
            EventKind::ToolCall { tool: t, .. } => {
                *calls[after].entry(t.clone()).or_default() += 1;
                let broken = tool.or(fault.as_ref().map(|f| f.0.as_str()));
                if after_failure && broken != Some(t.as_str()) {
                    *replaced.entry(t.clone()).or_default() += 1;
                }
                after_failure = false;
            }
            EventKind::ToolResult { tool: t, outcome: ToolOutcome::Err { .. }, .. } => {
                after_failure = tool.or(fault.as_ref().map(|f| f.0.as_str())) == Some(t.as_str());
            }
            _ => {}
        }
    }
    let (Some(g), Some(g0)) = (state.graph.as_ref(), initial.as_ref()) else {
        return Err(FigureError::NoGraph);
    };
    let broken = match (tool, &fault) {
        (Some(t), _) => t.to_string(),
        (None, Some((t, _))) => t.clone(),
        (None, None) => return Err(FigureError::NoFault),
    };
    let known = |t: &str| g.row(t).is_some() || g.scores.contains_key(t) || !g.predecessors(t).is_empty();
    if !known(&broken) {
        return Err(FigureError::UnknownTool(broken));
    }
    let from = match from {
        Some(f) => f.to_string(),
        None if g.weight(START, &broken).is_some() => START.to_string(),
        None => strongest_predecessor(g, &broken).unwrap_or_else(|| START.to_string()),
    };
    let backup = match backup {
        Some(b) if known(b) => b.to_string(),
        Some(b) => return Err(FigureError::UnknownTool(b.to_string())),
        None => most(&replaced)
            .or_else(|| took_over(&broken, &calls, runs))
            .or_else(|| twin(g, &from, &broken))
            .ok_or_else(|| FigureError::NoBackup(broken.clone()))?,
    };
    let last = g.iteration;
    let score = |t: &str| {
        let changes = g.score_changes(t).iter().copied();
        stepped(changes, g0.score(t), last)
    };
    let weight = |t: &str| stepped(g.weight_changes(&from, t).into_iter(), g0.weight(&from, t).unwrap_or(0.0), last);
    Ok(FaultFigure {
        broken_score: score(&broken),
        backup_score: score(&backup),
        broken_weight: weight(&broken),
        backup_weight: weight(&backup),
        fault_at: fault.filter(|(t, _)| *t == broken).map(|(_, at)| at),
        broken,
        backup,
        from,
    })
}

/// The most counted name, the first in order on a tie.
fn most(counts: &BTreeMap<String, u32>) -> Option<String> {
    counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(t, _)| t.clone())
}

/// The tool whose calls per task rose most once the fault was in, if any rose.
fn took_over(broken: &str, calls: &[BTreeMap<String, u32>; 2], runs: [u32; 2]) -> Option<String> {
    if runs[1] == 0 {
        return None;
    }
    let rate = |k: usize, t: &str| calls[k].get(t).copied().unwrap_or(0) as f64 / runs[k].max(1) as f64;
    calls[1]
        .keys()
        .filter(|t| t.as_str() != broken)
        .map(|t| (rate(1, t) - rate(0, t), t))
        .filter(|(rise, _)| *rise > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(a.1)))
        .map(|(_, t)| t.clone())
}

/// The broken tool's strongest sibling from `from`, one sharing the first
/// part of its name preferred.
fn twin(g: &GraphView, from: &str, broken: &str) -> Option<String> {
    fn stem(n: &str) -> &str {
        n.split(['_', '-', '.']).next().unwrap_or(n)
    }
    g.row(from)?
        .iter()
        .filter(|(n, _)| ![broken, END, START, from].contains(&n.as_str()))
        .map(|(n, w)| (stem(n).eq_ignore_ascii_case(stem(broken)), *w, n))
        .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(b.2.cmp(a.2)))
        .map(|t| t.2.clone())
}

fn strongest_predecessor(g: &GraphView, node: &str) -> Option<String> {
    g.predecessors(node)
        .into_iter()
        .filter(|(n, _)| *n != node)
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(n, _)| n.to_string())
}

/// A value at every iteration from 0 to `last`, from its changes
/// (iteration, value) and its value before them.
fn stepped(changes: impl Iterator<Item = (u32, f64)>, initial: f64, last: u32) -> Vec<(u32, f64)> {
    let mut changes = changes.peekable();
    let mut value = initial;
    (0..=last)
        .map(|it| {
            while let Some((_, v)) = changes.next_if(|c| c.0 <= it) {
                value = v;
            }
            (it, value)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stepped_series_holds_each_value_until_the_next_change() {
        let s = stepped([(2, 0.5), (2, 0.6), (4, 0.1)].into_iter(), 0.3, 5);
        assert_eq!(s, vec![(0, 0.3), (1, 0.3), (2, 0.6), (3, 0.6), (4, 0.1), (5, 0.1)]);
    }

    #[test]
    fn the_backup_is_the_tool_whose_use_rose_after_the_fault() {
        let before = BTreeMap::from([("geo".to_string(), 10), ("calc".to_string(), 5)]);
        let after = BTreeMap::from([("geo".to_string(), 1), ("geo_mirror".to_string(), 9), ("calc".to_string(), 5)]);
        assert_eq!(took_over("geo", &[before, after], [10, 10]).as_deref(), Some("geo_mirror"));
        assert_eq!(took_over("geo", &Default::default(), [10, 0]), None);
    }
}
