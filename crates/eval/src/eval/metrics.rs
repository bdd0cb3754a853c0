//! Per-strategy metrics over a finished session, and their table.

use serde::Serialize;

use crate::engine::fold::{RunSummary, RunTotals, SessionState};
use crate::eval::figures::{mean, total};
use crate::model::Role;

/// Averages are per task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Metrics {
    pub label: String,
    pub tasks: usize,
    /// Tasks with a gold answer to judge against.
    pub judged: usize,
    pub succeeded: usize,
    /// Over the judged tasks; None when none was judged (n/a), so that an
    /// unjudged run never reads as a failed one.
    pub success_rate: Option<f64>,
    /// Runs that ended with an answer, judged or not.
    pub answered_rate: f64,
    pub avg_steps: f64,
    pub avg_prompt_tokens: f64,
    pub avg_completion_tokens: f64,
    pub avg_cost: f64,
    pub avg_tool_calls: f64,
    /// rewoo: tokens the null filtering kept from the solver.
    pub avg_tokens_saved: f64,
    /// BTP (§3.1 of the paper): pass rate within the budget, average cost, pass
    /// rate ignoring it, rate of runs that went over it. The pass rates are
    /// over the judged tasks (None when none was judged).
    pub pbc: Option<f64>,
    /// Runs that ended with an answer within the budget: BTP's pass rate
    /// stand-in where nothing can be judged (ToolBench without its judge).
    pub answered_within_budget: f64,
    pub ac: f64,
    pub pr: Option<f64>,
    pub rfbc: f64,
    /// Plan against actual, averaged over the runs that had a plan.
    pub planned_cost: f64,
    pub spent_cost: f64,
    pub planned_calls: f64,
    pub used_calls: f64,
    /// ATC's path metrics over the tasks with a gold tool sequence: the
    /// share of the gold tools that were called (Path%) and the share of
    /// the calls that were of gold tools (Prec%); None without gold tools.
    pub path_pct: Option<f64>,
    pub prec_pct: Option<f64>,
    /// atc: rewrites after a failure, per task.
    pub avg_reflections: f64,
}

impl Metrics {
    /// Runs the user restarted are not attempts of their own and are left out.
    pub fn from_runs(label: impl Into<String>, runs: &[RunSummary]) -> Metrics {
        let mut totals = RunTotals::default();
        runs.iter().for_each(|r| totals.add(r));
        Metrics::from_totals(label, &totals)
    }

    /// Adds Path% and Prec% against each task's gold tools (`gold`: task id
    /// to its gold sequence); tasks without one are left out of both.
    pub fn with_gold(mut self, runs: &[RunSummary], gold: &std::collections::HashMap<String, Vec<String>>) -> Metrics {
        let scored: Vec<(f64, f64)> = runs
            .iter()
            .filter(|r| r.outcome != crate::engine::event::RunOutcome::Restarted)
            .filter_map(|r| Some(path_scores(&r.path, gold.get(&r.task_id).filter(|g| !g.is_empty())?)))
            .collect();
        if !scored.is_empty() {
            self.path_pct = Some(100.0 * mean(scored.iter().map(|s| s.0)));
            self.prec_pct = Some(100.0 * mean(scored.iter().map(|s| s.1)));
        }
        self
    }

    /// The metrics of one setting's rows of a results file.
    pub fn from_rows(label: impl Into<String>, rows: &[&crate::eval::results::TaskRow]) -> Metrics {
        let runs: Vec<RunSummary> = rows.iter().map(|r| r.summary()).collect();
        let gold = rows.iter().map(|r| (r.task_id.clone(), r.gold_tools.clone())).collect();
        Metrics::from_runs(label, &runs).with_gold(&runs, &gold)
    }

    /// Over every run of the session, from its totals (the state keeps
    /// only the latest runs): the same figures as [`Metrics::from_runs`]
    /// over all of them.
    pub fn from_state(label: impl Into<String>, state: &SessionState) -> Metrics {
        Self::from_totals(label, &state.totals)
    }

    pub fn from_totals(label: impl Into<String>, t: &RunTotals) -> Metrics {
        let tasks = t.attempts();
        let n = tasks.max(1) as f64;
        let pn = t.planned.max(1) as f64;
        // As `from_runs`: pass rates over the judged runs only, None without one.
        let over_judged = |k: u64| (t.judged > 0).then(|| k as f64 / t.judged as f64);
        Metrics {
            pbc: over_judged(t.succeeded_within),
            answered_within_budget: t.answered_within as f64 / n,
            ac: t.cost / n,
            pr: over_judged(t.succeeded),
            rfbc: t.over_budget as f64 / n,
            planned_cost: t.planned_cost / pn,
            spent_cost: t.planned_spent / pn,
            planned_calls: t.planned_calls / pn,
            used_calls: t.used_calls / pn,
            label: label.into(),
            tasks: tasks as usize,
            succeeded: t.succeeded as usize,
            judged: t.judged as usize,
            success_rate: over_judged(t.succeeded),
            answered_rate: t.answered as f64 / n,
            avg_steps: t.steps / n,
            avg_prompt_tokens: t.prompt_tokens / n,
            avg_completion_tokens: t.completion_tokens / n,
            avg_cost: t.cost / n,
            avg_tool_calls: t.tool_calls / n,
            avg_tokens_saved: t.tokens_saved / n,
            avg_reflections: t.reflections / n,
            path_pct: None,
            prec_pct: None,
        }
    }
}

/// (Path, Prec) of one run: the gold tools called among all gold tools,
/// and the calls of gold tools among all calls (0 when nothing was called).
pub fn path_scores(called: &[String], gold: &[String]) -> (f64, f64) {
    let gold_set: std::collections::BTreeSet<&str> = gold.iter().map(String::as_str).collect();
    let hit = gold_set.iter().filter(|g| called.iter().any(|c| c == *g)).count();
    let path = hit as f64 / gold_set.len().max(1) as f64;
    let good = called.iter().filter(|c| gold_set.contains(c.as_str())).count();
    let prec = if called.is_empty() { 0.0 } else { good as f64 / called.len() as f64 };
    (path, prec)
}

/// The first column's width: `min`, or the longest label, so long
/// settings (`react (k=all) btp on budget=10`) keep the columns aligned.
fn label_width(rows: &[Metrics], min: usize) -> usize {
    rows.iter().map(|m| m.label.chars().count()).max().unwrap_or(0).max(min)
}

/// A rate over the judged tasks as a percentage, n/a where none was judged.
fn judged_pct(rate: Option<f64>) -> String {
    rate.map_or("n/a".to_string(), |r| format!("{:.1}%", 100.0 * r))
}

/// The budget table: PBC, AC, PR, RFBC and plan against actual.
pub fn budget_table(rows: &[Metrics], cost_unit: &str) -> String {
    let w = label_width(rows, 34);
    let mut out = format!(
        "{:<w$} {:>6} {:>7} {:>9} {:>7} {:>7} {:>10} {:>10} {:>8} {:>8}\n",
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
            "{:<w$} {:>6} {:>7} {:>9.2} {:>7} {:>6.1}% {:>10.2} {:>10.2} {:>8.2} {:>8.2}\n",
            m.label,
            m.tasks,
            judged_pct(m.pbc),
            m.ac,
            judged_pct(m.pr),
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
    let w = label_width(rows, 24);
    let mut out = format!(
        "{:<w$} {:>6} {:>9} {:>7} {:>11} {:>11} {:>12} {:>7}\n",
        "strategy",
        "tasks",
        "success",
        "steps",
        "prompt tok",
        "compl. tok",
        format!("cost ({cost_unit})"),
        "tools"
    );
    let paths = rows.iter().any(|m| m.path_pct.is_some());
    let unjudged = rows.iter().any(|m| m.judged < m.tasks);
    if unjudged {
        out.insert_str(out.len() - 1, &format!(" {:>8}", "answered"));
    }
    if paths {
        out.insert_str(out.len() - 1, &format!(" {:>7} {:>7} {:>6}", "path", "prec", "refl"));
    }
    for m in rows {
        let success = m.success_rate.map_or("n/a".to_string(), |r| format!("{:.1}%", 100.0 * r));
        out.push_str(&format!(
            "{:<w$} {:>6} {:>9} {:>7.2} {:>11.1} {:>11.1} {:>12.4} {:>7.2}",
            m.label,
            m.tasks,
            success,
            m.avg_steps,
            m.avg_prompt_tokens,
            m.avg_completion_tokens,
            m.avg_cost,
            m.avg_tool_calls
        ));
        if unjudged {
            out.push_str(&format!(" {:>7.1}%", 100.0 * m.answered_rate));
        }
        if paths {
            let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{p:.1}%"));
            out.push_str(&format!(" {:>7} {:>7} {:>6.2}", pct(m.path_pct), pct(m.prec_pct), m.avg_reflections));
        }
        out.push('\n');
    }
    out.push_str("(steps, tokens, cost and tool calls are averages per task)\n");
    if unjudged {
        out.push_str("(success is over the tasks with a gold answer, n/a when none has one; answered: runs that ended with an answer)\n");
    }
    if paths {
        out.push_str(
            "(path: share of the gold tools called; prec: share of the calls that were gold tools; \
             refl: atc's rewrites after a failure; over the tasks with gold tools)\n",
        );
    }
    out
}

/// One combination of a model matrix (the rewoo paper's Table 4). Figures
/// are per task, over the runs `Metrics` counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MatrixRow {
    pub planner: String,
    pub solver: String,
    /// The roles the matrix set, with the model that played each (planner
    /// and solver among them when varied).
    pub varied: Vec<RoleShare>,
    pub tasks: usize,
    pub succeeded: usize,
    /// None when no task was judged.
    pub accuracy_pct: Option<f64>,
    pub prompt_tokens_per_task: f64,
    pub completion_tokens_per_task: f64,
    /// All of it, models' and tools', as the runs count it.
    pub cost_per_task: f64,
    /// The models' share: what the prices of the roles' models decide.
    pub model_cost_per_task: f64,
    pub tool_cost_per_task: f64,
    pub cost_unit: String,
    pub steps_per_task: f64,
    pub tokens_saved_per_task: f64,
    /// Every role and model that was called, per task.
    pub roles: Vec<RoleShare>,
}

/// One role's model and what its calls took, per task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoleShare {
    pub role: Role,
    pub model: String,
    pub calls_per_task: f64,
    pub prompt_tokens_per_task: f64,
    pub completion_tokens_per_task: f64,
    pub cost_per_task: f64,
}

impl RoleShare {
    /// A role's model before any call is counted.
    fn none(role: Role, model: String) -> RoleShare {
        RoleShare {
            role,
            model,
            calls_per_task: 0.0,
            prompt_tokens_per_task: 0.0,
            completion_tokens_per_task: 0.0,
            cost_per_task: 0.0,
        }
    }
}

impl MatrixRow {
    /// The models are read back from the session, so a row shows what
    /// played, not what was asked for.
    pub fn from_state(varied: &[Role], state: &SessionState) -> MatrixRow {
        let m = Metrics::from_state("", state);
        let n = m.tasks.max(1) as f64;
        let model_of = |role: Role| {
            state.models.iter().find(|r| r.role == role).map(|r| r.model.name.clone()).unwrap_or_else(|| "?".into())
        };
        let share = |role: Role, model: String| {
            let mut s = RoleShare::none(role, model);
            for ((r, name), a) in &state.accounts {
                if *r == role && *name == s.model {
                    s.calls_per_task += a.calls as f64 / n;
                    s.prompt_tokens_per_task += a.usage.prompt_tokens as f64 / n;
                    s.completion_tokens_per_task += a.usage.completion_tokens as f64 / n;
                    s.cost_per_task += a.cost / n;
                }
            }
            s
        };
        MatrixRow {
            planner: model_of(Role::Planner),
            solver: model_of(Role::Solver),
            varied: varied.iter().map(|r| share(*r, model_of(*r))).collect(),
            tasks: m.tasks,
            succeeded: m.succeeded,
            accuracy_pct: m.success_rate.map(|r| 100.0 * r),
            prompt_tokens_per_task: m.avg_prompt_tokens,
            completion_tokens_per_task: m.avg_completion_tokens,
            cost_per_task: m.avg_cost,
            model_cost_per_task: total(state.accounts.values().map(|a| a.cost)) / n,
            tool_cost_per_task: total(state.tool_spend.values().map(|t| t.cost)) / n,
            cost_unit: state.cost_unit.clone(),
            steps_per_task: m.avg_steps,
            tokens_saved_per_task: m.avg_tokens_saved,
            roles: state.accounts.keys().map(|(r, name)| share(*r, name.clone())).collect(),
        }
    }

    /// One setting's rows as a cell of the matrix: the models are those the
    /// rows say played (`?` where none did), the model cost the rows' role
    /// accounts, and the tool cost what remains of the runs' cost.
    pub fn from_rows(varied: &[Role], rows: &[&crate::eval::results::TaskRow], cost_unit: &str) -> MatrixRow {
        let m = Metrics::from_rows("", rows);
        let n = m.tasks.max(1) as f64;
        let counted: Vec<&&crate::eval::results::TaskRow> =
            rows.iter().filter(|r| r.outcome != crate::engine::event::RunOutcome::Restarted).collect();
        let model_of = |role: Role| {
            counted.iter().find_map(|r| r.models.get(role.as_str())).cloned().unwrap_or_else(|| "?".into())
        };
        let mut accounts: std::collections::BTreeMap<(Role, String), RoleShare> = std::collections::BTreeMap::new();
        for u in counted.iter().flat_map(|r| &r.roles) {
            let Some(role) = Role::parse(&u.role) else { continue };
            let s = accounts.entry((role, u.model.clone())).or_insert_with(|| RoleShare::none(role, u.model.clone()));
            s.calls_per_task += u.calls as f64 / n;
            s.prompt_tokens_per_task += u.prompt_tokens as f64 / n;
            s.completion_tokens_per_task += u.completion_tokens as f64 / n;
            s.cost_per_task += u.cost / n;
        }
        let share = |role: Role, model: String| {
            accounts.get(&(role, model.clone())).cloned().unwrap_or_else(|| RoleShare::none(role, model))
        };
        let model_cost = total(accounts.values().map(|s| s.cost_per_task));
        MatrixRow {
            planner: model_of(Role::Planner),
            solver: model_of(Role::Solver),
            varied: varied.iter().map(|r| share(*r, model_of(*r))).collect(),
            tasks: m.tasks,
            succeeded: m.succeeded,
            accuracy_pct: m.success_rate.map(|r| 100.0 * r),
            prompt_tokens_per_task: m.avg_prompt_tokens,
            completion_tokens_per_task: m.avg_completion_tokens,
            cost_per_task: m.avg_cost,
            model_cost_per_task: model_cost,
            tool_cost_per_task: (m.avg_cost - model_cost).max(0.0),
            cost_unit: cost_unit.to_string(),
            steps_per_task: m.avg_steps,
            tokens_saved_per_task: m.avg_tokens_saved,
            roles: accounts.into_values().collect(),
        }
    }

    /// Prompt plus completion tokens per task of one role (any model).
    pub fn role_tokens(&self, role: Role) -> f64 {
        total(
            self.roles
                .iter()
                .filter(|s| s.role == role)
                .map(|s| s.prompt_tokens_per_task + s.completion_tokens_per_task),
        )
    }
}

/// The matrix as a table: one line per combination, the varied roles other
/// than planner and solver in columns of their own.
pub fn matrix_table(rows: &[MatrixRow], cost_unit: &str) -> String {
    let extra: Vec<Role> = rows
        .first()
        .map(|r| r.varied.iter().map(|s| s.role).filter(|r| !matches!(r, Role::Planner | Role::Solver)).collect())
        .unwrap_or_default();
    let mut out = format!("{:<14} {:<14} ", "planner", "solver");
    for r in &extra {
        out.push_str(&format!("{:<14} ", r.as_str()));
    }
    out.push_str(&format!(
        "{:>6} {:>9} {:>11} {:>11} {:>11} {:>10} {:>7} {:>10} {:>12} {:>11}\n",
        "tasks",
        "accuracy",
        "prompt tok",
        "compl. tok",
        "model cost",
        "tool cost",
        "steps",
        "saved tok",
        "planner tok",
        "solver tok"
    ));
    for m in rows {
        out.push_str(&format!("{:<14} {:<14} ", m.planner, m.solver));
        for r in &extra {
            let model = m.varied.iter().find(|s| s.role == *r).map(|s| s.model.as_str()).unwrap_or("?");
            out.push_str(&format!("{model:<14} "));
        }
        out.push_str(&format!(
            "{:>6} {:>9} {:>11.1} {:>11.1} {:>11.6} {:>10.2} {:>7.2} {:>10.1} {:>12.1} {:>11.1}\n",
            m.tasks,
            m.accuracy_pct.map_or("n/a".to_string(), |a| format!("{a:.1}%")),
            m.prompt_tokens_per_task,
            m.completion_tokens_per_task,
            m.model_cost_per_task,
            m.tool_cost_per_task,
            m.steps_per_task,
            m.tokens_saved_per_task,
            m.role_tokens(Role::Planner),
            m.role_tokens(Role::Solver)
        ));
    }
    out.push_str(&format!(
        "(per task; costs in {cost_unit}; tokens and model cost: every role's calls; saved tok: kept from the\n \
         solver by null filtering; planner/solver tok: those roles' prompt + completion tokens)\n"
    ));
    out
}
