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
    /// BTP (DESIGN §3.2): pass rate within the budget, average cost, pass
    /// rate ignoring it, rate of runs that went over it.
    pub pbc: f64,
    pub ac: f64,
    pub pr: f64,
    pub rfbc: f64,
    /// Plan against actual, averaged over the runs that had a plan.
    pub planned_cost: f64,
    pub spent_cost: f64,
    pub planned_calls: f64,
    pub used_calls: f64,
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
        let within = |r: &RunSummary| r.budget.is_none_or(|b| r.cost <= b + 1e-9);
        let over = runs.iter().filter(|r| !within(r)).count();
        let pbc = runs.iter().filter(|r| r.success == Some(true) && within(r)).count() as f64 / n;
        let planned: Vec<&RunSummary> = runs.iter().filter(|r| r.planned_cost.is_some()).collect();
        let pn = planned.len().max(1) as f64;
        Metrics {
            pbc,
            ac: sum(|r| r.cost),
            pr: succeeded as f64 / n,
            rfbc: over as f64 / n,
            planned_cost: planned.iter().map(|r| r.planned_cost.unwrap_or(0.0)).sum::<f64>() / pn,
            spent_cost: planned.iter().map(|r| r.cost).sum::<f64>() / pn,
            planned_calls: planned.iter().map(|r| r.planned_calls.unwrap_or(0) as f64).sum::<f64>() / pn,
            used_calls: planned.iter().map(|r| r.tool_calls as f64).sum::<f64>() / pn,
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

/// The budget table: PBC, AC, PR, RFBC and plan against actual.
pub fn budget_table(rows: &[Metrics], cost_unit: &str) -> String {
    let mut out = format!(
        "{:<34} {:>6} {:>7} {:>9} {:>7} {:>7} {:>10} {:>10} {:>8} {:>8}\n",
        "setting",
        "tasks",
        "PBC",
        format!("AC ({cost_unit})"),
        "PR",
        "RFBC",
        "plan cost",
        "spent",
        "plan n",
        "used n"
    );
    for m in rows {
        out.push_str(&format!(
            "{:<34} {:>6} {:>6.1}% {:>9.2} {:>6.1}% {:>6.1}% {:>10.2} {:>10.2} {:>8.2} {:>8.2}\n",
            m.label,
            m.tasks,
            100.0 * m.pbc,
            m.ac,
            100.0 * m.pr,
            100.0 * m.rfbc,
            m.planned_cost,
            m.spent_cost,
            m.planned_calls,
            m.used_calls
        ));
    }
    out.push_str("(PBC: solved within the budget; AC: average cost; PR: solved, budget ignored; RFBC: over the budget;\n plan/spent/n: planned and actual cost and tool calls per task, over the runs with a plan)\n");
    out
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
