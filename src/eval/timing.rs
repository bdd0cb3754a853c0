//! Where a session's time went, from its trace: in the model, in the tools,
//! or in Switchyard itself (everything else inside the runs: prompts,
//! parsing, the graph, events, the trace). The engine's own overhead per
//! step, set against the model's latency, is the figure that matters.

use serde::Serialize;

use crate::engine::{Event, EventKind};

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimeSplit {
    /// Inside runs, from RunStarted to RunFinished.
    pub runs_ms: u64,
    pub model_ms: u64,
    pub model_calls: u64,
    /// Wall time with at least one tool call running (concurrent lanes counted once).
    pub tool_ms: u64,
    /// Decision steps (a plan step for rewoo).
    pub steps: u64,
}

impl TimeSplit {
    pub fn from_events(events: &[Event]) -> Self {
        let mut t = TimeSplit::default();
        let mut run_start = None;
        let mut open: Vec<(u64, u64)> = Vec::new();
        let mut intervals: Vec<(u64, u64)> = Vec::new();
        for e in events {
            match &e.kind {
                EventKind::RunStarted { .. } => run_start = Some(e.t),
                EventKind::RunFinished { steps, .. } => {
                    if let Some(s) = run_start.take() {
                        t.runs_ms += e.t.saturating_sub(s);
                    }
                    t.steps += u64::from(*steps);
                }
                EventKind::ModelReply { latency_ms, .. } | EventKind::ModelFailed { latency_ms, .. } => {
                    t.model_ms += latency_ms;
                    t.model_calls += 1;
                }
                EventKind::ToolCall { call, .. } => open.push((*call, e.t)),
                EventKind::ToolResult { call, .. } => {
                    if let Some(i) = open.iter().position(|(c, _)| c == call) {
                        let (_, start) = open.swap_remove(i);
                        intervals.push((start, e.t.max(start)));
                    }
                }
                _ => {}
            }
        }
        t.tool_ms = union_length(intervals);
        t
    }

    /// Time inside runs spent neither waiting for a model nor for a tool.
    pub fn engine_ms(&self) -> u64 {
        self.runs_ms.saturating_sub(self.model_ms + self.tool_ms)
    }

    /// One line for a person.
    pub fn describe(&self) -> String {
        let per_step = if self.steps == 0 { 0.0 } else { self.engine_ms() as f64 / self.steps as f64 };
        let per_call = if self.model_calls == 0 { 0.0 } else { self.model_ms as f64 / self.model_calls as f64 };
        format!(
            "time in runs {:.1} s: models {:.1} s ({} calls, {:.0} ms each), tools {:.1} s, switchyard {:.2} s \
             ({per_step:.1} ms per step)",
            self.runs_ms as f64 / 1000.0,
            self.model_ms as f64 / 1000.0,
            self.model_calls,
            per_call,
            self.tool_ms as f64 / 1000.0,
            self.engine_ms() as f64 / 1000.0,
        )
    }
}

fn union_length(mut v: Vec<(u64, u64)>) -> u64 {
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(u64, u64)> = None;
    for (s, e) in v {
        cur = match cur {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_tool_calls_count_once() {
        assert_eq!(union_length(vec![(0, 10), (5, 20), (30, 35)]), 25);
        assert_eq!(union_length(vec![]), 0);
    }
}
