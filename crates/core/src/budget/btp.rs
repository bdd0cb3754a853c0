//! BTP inside a run (BTP §2.2–2.4, Algorithms 1 and 2): the plan made before
//! the first call, the allowances it gives each tool, the blacklist, and
//! whether a call still fits the budget. The engine applies them; the
//! formulas are here.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use serde::{Deserialize, Serialize};

use super::estimate::{Defaults, estimate_with};
use super::experience::{Experience, ExperienceStore, judge_rule};
use super::plan::{Item, make_plan};
use crate::model::Usage;
use crate::model::price::Price;

/// How BTP is set up for a session.
pub struct BtpSetup {
    /// Plan and enforce (Algorithms 1 and 2); off, experience is still gathered.
    pub enforce: bool,
    pub experience: ExperienceStore,
    pub defaults: Defaults,
    /// Real costs are scaled by λ into integers for the DP (appendix A.1).
    pub lambda: f64,
    /// How many retrieved tools the plan chooses among (the paper: 5).
    pub candidates: usize,
    /// Cost per second of a tool call's time.
    pub time_rate: f64,
    /// Ask the `judge` model instead of the rule.
    pub model_judge: bool,
}

impl BtpSetup {
    pub fn new(experience: ExperienceStore) -> Self {
        BtpSetup {
            enforce: true,
            experience,
            defaults: Defaults::default(),
            lambda: 100.0,
            candidates: 5,
            time_rate: 0.0,
            model_judge: false,
        }
    }
}

/// What BTP knows during one run.
pub struct RunBudget {
    pub budget: f64,
    pub spent: f64,
    /// Calls left per planned tool; a tool not here has none.
    pub allowance: BTreeMap<String, u32>,
    pub costs: BTreeMap<String, f64>,
    pub blacklisted: BTreeSet<String>,
    /// Kept back for a model call still to come (rewoo's solver).
    pub reserve: f64,
}

/// Why a call may not happen.
pub enum Verdict {
    Allowed,
    Forbidden(String),
    Blacklisted(String),
}

impl RunBudget {
    /// The budget a plan's rows allow (a plan recorded in a trace).
    pub fn from_rows(budget: f64, rows: &[BudgetRow], reserve: f64) -> RunBudget {
        RunBudget {
            budget,
            spent: 0.0,
            allowance: rows.iter().filter(|r| r.calls > 0).map(|r| (r.tool.clone(), r.calls)).collect(),
            costs: rows.iter().map(|r| (r.tool.clone(), r.cost)).collect(),
            blacklisted: BTreeSet::new(),
            reserve,
        }
    }

    pub fn verdict(&self, tool: &str) -> Verdict {
        if self.blacklisted.contains(tool) {
            return Verdict::Blacklisted(format!("'{tool}' is blacklisted: its result was not helpful for this task"));
        }
        match self.allowance.get(tool) {
            None | Some(0) => Verdict::Forbidden(format!("'{tool}' is forbidden: the plan allows it no more calls")),
            Some(_) => {
                let c = self.costs.get(tool).copied().unwrap_or(0.0);
                if self.over(self.spent, c) {
                    Verdict::Forbidden(format!(
                        "'{tool}' is forbidden: a call ({c:.2}) would exceed the budget ({:.2} of {:.2} spent)",
                        self.spent, self.budget
                    ))
                } else {
                    Verdict::Allowed
                }
            }
        }
    }

    /// Whether spending `cost` more after `spent` would exceed the budget
    /// (the one over-run test: calls, steps and the solver's share alike).
    pub fn over(&self, spent: f64, cost: f64) -> bool {
        spent + cost > self.budget + 1e-9
    }

    pub fn allowed(&self, tool: &str) -> bool {
        matches!(self.verdict(tool), Verdict::Allowed)
    }

    pub fn any_left(&self) -> bool {
        self.allowance.keys().any(|t| self.allowed(t))
    }
}

/// The estimated cost of one actor step: its prompt and a short reply.
pub fn step_cost(price: &Price, prompt_tokens: u64) -> f64 {
    price.cost(Usage::new(prompt_tokens, 50))
}

/// A run's plan (Algorithm 1): the budget to enforce and the rows to show.
pub struct PlannedRun {
    pub run: RunBudget,
    pub rows: Vec<BudgetRow>,
    pub fixed_cost: f64,
    pub planned_cost: f64,
    pub planned_calls: u32,
}

/// The plan's rows and the budget for a run (Algorithm 1).
pub fn plan_run(
    setup: &BtpSetup,
    query: &str,
    candidates: &[(String, f64)],
    budget: f64,
    fixed_cost: f64,
    tau: f64,
    sim: &dyn Fn(&str, &str) -> f64,
) -> PlannedRun {
    let names: Vec<String> = candidates.iter().map(|(n, _)| n.clone()).collect();
    let estimates = estimate_with(query, &names, setup.experience.tally(), tau, setup.defaults, sim);
    let items: Vec<Item> = candidates
        .iter()
        .zip(&estimates)
        .map(|((tool, cost), e)| Item {
            tool: tool.clone(),
            cost: *cost,
            value: e.value,
            max_calls: e.freq.floor().max(0.0) as u32,
        })
        .collect();
    let plan = make_plan(&items, budget - fixed_cost, setup.lambda);
    let rows: Vec<BudgetRow> = plan
        .allowances
        .iter()
        .zip(&estimates)
        .map(|(a, e)| BudgetRow {
            tool: a.tool.clone(),
            cost: a.cost,
            value: e.value,
            freq: e.freq,
            defaulted: e.defaulted,
            calls: a.calls,
        })
        .collect();
    let planned_calls = rows.iter().map(|r| r.calls).sum();
    let run = RunBudget::from_rows(budget, &rows, 0.0);
    PlannedRun { run, rows, fixed_cost, planned_cost: plan.planned_cost, planned_calls }
}

/// One usage for the experience store, judged by the rule.
pub fn usage(query: &str, tool: &str, args: &Value, result: &Result<Value, String>, helpful: bool) -> Experience {
    Experience {
        query: query.to_string(),
        tool: tool.to_string(),
        args: args.clone(),
        result: match result {
            Ok(v) => v.clone(),
            Err(e) => Value::String(format!("error: {e}")),
        },
        helpful,
    }
}

pub fn rule(result: &Result<Value, String>) -> bool {
    judge_rule(result)
}

/// One tool's line in a BTP plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetRow {
    pub tool: String,
    /// c_i: the estimated cost of one call (tool + model step + time).
    pub cost: f64,
    /// v(q_u, t)
    pub value: f64,
    /// F̃(q_u, t)
    pub freq: f64,
    /// No experience: v and F̃ are the configured defaults.
    pub defaulted: bool,
    /// f(q_u, t): the planned calls.
    pub calls: u32,
}

/// BTP's plan for one task, as `switchyard plan` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct BudgetReport {
    pub task: String,
    pub budget: f64,
    pub fixed_cost: f64,
    pub remaining: f64,
    pub lambda: f64,
    pub tau: f64,
    pub experience: usize,
    pub rows: Vec<BudgetRow>,
    pub planned_cost: f64,
    pub planned_calls: u32,
}
