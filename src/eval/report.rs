//! Per-strategy metrics over a finished session, and their table.

use serde::Serialize;

use crate::engine::state::{RunSummary, SessionState};

/// Averages are per task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Metrics {
    pub label: String,
    pub tasks: usize,
    pub succeeded: usize,
    pub success_rate: f64,
    pub avg_steps: f64,
    pub avg_prompt_tokens: f64,
    pub avg_completion_tokens: f64,
    pub avg_cost: f64,
    pub avg_tool_calls: f64,
}

impl Metrics {
    /// Runs the user restarted are not attempts of their own and are left out.
    pub fn from_runs(label: impl Into<String>, runs: &[RunSummary]) -> Metrics {
        let runs: Vec<RunSummary> =
            runs.iter().filter(|r| r.outcome != crate::engine::event::RunOutcome::Restarted).cloned().collect();
        let runs = runs.as_slice();
        let n = runs.len().max(1) as f64;
        let sum = |f: fn(&RunSummary) -> f64| runs.iter().map(f).sum::<f64>() / n;
        let succeeded = runs.iter().filter(|r| r.success == Some(true)).count();
        Metrics {
            label: label.into(),
            tasks: runs.len(),
            succeeded,
            success_rate: succeeded as f64 / n,
            avg_steps: sum(|r| r.steps as f64),
            avg_prompt_tokens: sum(|r| r.usage.prompt_tokens as f64),
            avg_completion_tokens: sum(|r| r.usage.completion_tokens as f64),
            avg_cost: sum(|r| r.cost),
            avg_tool_calls: sum(|r| r.tool_calls as f64),
        }
    }

    pub fn from_state(label: impl Into<String>, state: &SessionState) -> Metrics {
        Self::from_runs(label, &state.finished)
    }
}

/// A plain-text table, one row per metrics line.
pub fn table(rows: &[Metrics], cost_unit: &str) -> String {
    let mut out = format!(
        "{:<24} {:>6} {:>9} {:>7} {:>11} {:>11} {:>12} {:>7}\n",
        "strategy",
        "tasks",
        "success",
        "steps",
        "prompt tok",
        "compl. tok",
        format!("cost ({cost_unit})"),
        "tools"
    );
    for m in rows {
        out.push_str(&format!(
            "{:<24} {:>6} {:>8.1}% {:>7.2} {:>11.1} {:>11.1} {:>12.4} {:>7.2}\n",
            m.label,
            m.tasks,
            100.0 * m.success_rate,
            m.avg_steps,
            m.avg_prompt_tokens,
            m.avg_completion_tokens,
            m.avg_cost,
            m.avg_tool_calls
        ));
    }
    out.push_str("(steps, tokens, cost and tool calls are averages per task)\n");
    out
}
