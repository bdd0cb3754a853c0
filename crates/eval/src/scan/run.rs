//! What a scan reads and writes of one run: its events, numbered by their
//! place in the trace, and the line `runs.jsonl` keeps of it.

use serde::{Deserialize, Serialize};

use crate::engine::event::Event;

/// One run's events, each with its number in the trace (from 1).
pub type Numbered<'a> = [(usize, &'a Event)];

/// What a rule may know of a run besides its events.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    /// The tools the task is known to need (an eval's gold tools).
    pub gold_tools: Vec<String>,
}

/// A scanner's finding: where the run shows its pattern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// A rule's name (`looped`, …).
    pub scanner: String,
    /// The event's number in the trace, from 1 (`replay --at`).
    pub event: usize,
    pub step: u32,
    pub detail: String,
}

/// The model scanner's name for a failed run's failure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Named {
    pub phrase: String,
    /// The event it points at, from 1.
    pub event: usize,
}

/// One run, scanned: a line of the scan's `runs.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunScan {
    /// The trace, relative to the eval's folder for an eval's run.
    pub trace: String,
    pub run: u32,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    pub outcome: String,
    #[serde(default)]
    pub success: Option<bool>,
    /// Judged wrong, or ended without an answer (out of steps or budget,
    /// failed): the runs the model scanner reads and the groups count.
    pub failed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Named>,
    /// Why the model scanner could not name this failed run's failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unscanned: Option<String>,
    /// The kinds of injected fault the run met, from the trace's own marks
    /// (`validate`'s labels; no scanner reads them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

impl RunScan {
    pub fn key(&self) -> (String, u32) {
        (self.trace.clone(), self.run)
    }
}

/// A run's events, each numbered by its place in the trace (from 1).
pub struct RunEvents<'a> {
    pub run: u32,
    pub events: Vec<(usize, &'a Event)>,
}

/// A trace's runs, in order (the session's own events, run 0, left out).
pub fn runs(events: &[Event]) -> Vec<RunEvents<'_>> {
    let mut out: Vec<RunEvents> = Vec::new();
    let mut place: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.run == 0 {
            continue;
        }
        let at = *place.entry(e.run).or_insert_with(|| {
            out.push(RunEvents { run: e.run, events: Vec::new() });
            out.len() - 1
        });
        out[at].events.push((i + 1, e));
    }
    out
}
