//! How well the scanners find what was injected. A run's label is the kind
//! of fault it met, read from the marks a trace keeps of injected faults
//! (which no scanner reads): a tool that finds nothing (the agent is led
//! to call it again: a looping tool), a tool that answers with an error (a
//! wrong-argument tool), a failing model. Each rule with a kind to find is
//! scored on it: precision over the runs it flagged, recall over the failed
//! runs of its kind; the model scanner's groups by their purity.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::event::{Event, EventKind};
use crate::tool::fault::FaultMode;

use super::group::Group;
use super::rules::{RULES, Rule};
use super::run::RunScan;

pub const LOOPING: &str = "looping tool";
pub const WRONG_ARGUMENT: &str = "wrong-argument tool";
pub const FAILING_MODEL: &str = "failing model";

/// The kinds of fault a run met, from the trace's marks of injected faults.
pub fn faults_met<'a>(events: impl Iterator<Item = &'a Event>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |k: String| {
        if !out.contains(&k) {
            out.push(k);
        }
    };
    for e in events {
        match &e.kind {
            EventKind::ToolResult { fault: Some(f), .. } => add(match f {
                FaultMode::NothingFound => LOOPING.to_string(),
                FaultMode::Error => WRONG_ARGUMENT.to_string(),
                other => format!("tool {other}"),
            }),
            EventKind::ModelFailed { fault: Some(_), .. } | EventKind::ModelReply { fault: Some(_), .. } => {
                add(FAILING_MODEL.to_string())
            }
            _ => {}
        }
    }
    out
}

/// The kind of fault a rule is there to find, in this labelled set.
pub fn target(rule: Rule) -> Option<&'static str> {
    match rule {
        Rule::Looped => Some(LOOPING),
        Rule::IgnoredError => Some(WRONG_ARGUMENT),
        Rule::ModelFailed | Rule::Crashed => Some(FAILING_MODEL),
        _ => None,
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Score {
    pub scanner: String,
    pub finds: String,
    pub flagged: usize,
    pub right: usize,
    /// Failed runs of its kind.
    pub of_kind: usize,
    pub found: usize,
}

impl Score {
    pub fn precision(&self) -> Option<f64> {
        (self.flagged > 0).then(|| self.right as f64 / self.flagged as f64)
    }
    pub fn recall(&self) -> Option<f64> {
        (self.of_kind > 0).then(|| self.found as f64 / self.of_kind as f64)
    }
}

/// Each rule with a kind to find, scored; then the model scanner, whose
/// group counts as finding a kind when most of its runs are of that kind.
pub fn scores(rows: &[RunScan], groups: &[Group]) -> Vec<Score> {
    let mut out = Vec::new();
    for rule in RULES {
        let Some(kind) = target(rule) else { continue };
        let flagged: Vec<&RunScan> =
            rows.iter().filter(|r| r.findings.iter().any(|f| f.scanner == rule.name())).collect();
        let of_kind: Vec<&RunScan> = rows.iter().filter(|r| r.failed && r.faults.iter().any(|f| f == kind)).collect();
        out.push(Score {
            scanner: rule.name().to_string(),
            finds: kind.to_string(),
            flagged: flagged.len(),
            right: flagged.iter().filter(|r| r.faults.iter().any(|f| f == kind)).count(),
            of_kind: of_kind.len(),
            found: of_kind.iter().filter(|r| r.findings.iter().any(|f| f.scanner == rule.name())).count(),
        });
    }
    // The model scanner: each group stands for the kind most of its runs met.
    let key = |r: &RunScan| (r.trace.clone(), r.run);
    let by_key: BTreeMap<(String, u32), &RunScan> = rows.iter().map(|r| (key(r), r)).collect();
    let mut group_kind: BTreeMap<(String, u32), String> = BTreeMap::new();
    for g in groups {
        let members: Vec<&RunScan> = rows
            .iter()
            .filter(|r| r.failure.as_ref().is_some_and(|f| g.phrases.iter().any(|(p, _)| *p == f.phrase)))
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &members {
            for f in &r.faults {
                *counts.entry(f.as_str()).or_default() += 1;
            }
        }
        if let Some((kind, _)) = counts.into_iter().max_by_key(|(k, n)| (*n, std::cmp::Reverse(*k))) {
            for r in &members {
                group_kind.insert(key(r), kind.to_string());
            }
        }
    }
    for kind in [LOOPING, WRONG_ARGUMENT, FAILING_MODEL] {
        let flagged: Vec<&RunScan> = group_kind
            .iter()
            .filter(|(_, k)| k.as_str() == kind)
            .filter_map(|(key, _)| by_key.get(key).copied())
            .collect();
        let of_kind: Vec<&RunScan> = rows.iter().filter(|r| r.failed && r.faults.iter().any(|f| f == kind)).collect();
        out.push(Score {
            scanner: "model".into(),
            finds: kind.to_string(),
            flagged: flagged.len(),
            right: flagged.iter().filter(|r| r.faults.iter().any(|f| f == kind)).count(),
            of_kind: of_kind.len(),
            found: of_kind.iter().filter(|r| group_kind.get(&key(r)).is_some_and(|k| k == kind)).count(),
        });
    }
    out
}

/// The scores as a markdown table.
pub fn table(scores: &[Score]) -> String {
    let pct = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{:.0}%", 100.0 * v));
    let mut s = String::from(
        "| scanner | finds | flagged | of them right | precision | failed runs of the kind | found | recall |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for x in scores {
        s += &format!(
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |\n",
            x.scanner,
            x.finds,
            x.flagged,
            x.right,
            pct(x.precision()),
            x.of_kind,
            x.found,
            pct(x.recall())
        );
    }
    s
}
