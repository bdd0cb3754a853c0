//! BTP inside a run (DESIGN §3.2, Algorithms 1 and 2): the plan made before
//! the first call, the allowances it gives each tool, the blacklist, and
//! what each call spends of the budget.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::budget::estimate::{Defaults, estimate};
use crate::budget::experience::{Experience, ExperienceStore, judge_rule};
use crate::budget::plan::{Item, make_plan};
use crate::engine::event::PlanRow;
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
pub(super) struct RunBudget {
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
pub(super) enum Verdict {
    Allowed,
    Forbidden(String),
    Blacklisted(String),
}

impl RunBudget {
    pub fn verdict(&self, tool: &str) -> Verdict {
        if self.blacklisted.contains(tool) {
            return Verdict::Blacklisted(format!("'{tool}' is blacklisted: its result was not helpful for this task"));
        }
        match self.allowance.get(tool) {
            None | Some(0) => Verdict::Forbidden(format!("'{tool}' is forbidden: the plan allows it no more calls")),
            Some(_) => {
                let c = self.costs.get(tool).copied().unwrap_or(0.0);
                if self.spent + c > self.budget + 1e-9 {
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

    pub fn allowed(&self, tool: &str) -> bool {
        matches!(self.verdict(tool), Verdict::Allowed)
    }

    pub fn any_left(&self) -> bool {
        self.allowance.keys().any(|t| self.allowed(t))
    }
}

/// The estimated cost of one actor step: its prompt and a short reply.
pub(super) fn step_cost(price: &Price, prompt_tokens: u64) -> f64 {
    price.cost(Usage { prompt_tokens, completion_tokens: 50 })
}

/// The plan's rows and the budget for a run (Algorithm 1).
pub(super) fn plan_run(
    setup: &BtpSetup,
    query: &str,
    candidates: &[(String, f64)],
    budget: f64,
    fixed_cost: f64,
    tau: f64,
) -> (RunBudget, Vec<PlanRow>, f64, u32) {
    let names: Vec<String> = candidates.iter().map(|(n, _)| n.clone()).collect();
    let estimates = estimate(query, &names, setup.experience.records(), tau, setup.defaults);
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
    let rows: Vec<PlanRow> = plan
        .allowances
        .iter()
        .zip(&estimates)
        .map(|(a, e)| PlanRow {
            tool: a.tool.clone(),
            cost: a.cost,
            value: e.value,
            freq: e.freq,
            defaulted: e.defaulted,
            calls: a.calls,
        })
        .collect();
    let planned_calls = rows.iter().map(|r| r.calls).sum();
    let run = RunBudget {
        budget,
        spent: 0.0,
        allowance: rows.iter().filter(|r| r.calls > 0).map(|r| (r.tool.clone(), r.calls)).collect(),
        costs: rows.iter().map(|r| (r.tool.clone(), r.cost)).collect(),
        blacklisted: BTreeSet::new(),
        reserve: 0.0,
    };
    (run, rows, plan.planned_cost, planned_calls)
}

/// One usage for the experience store, judged by the rule.
pub(super) fn usage(
    query: &str,
    tool: &str,
    args: &Value,
    result: &Result<Value, String>,
    helpful: bool,
) -> Experience {
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

pub(super) fn rule(result: &Result<Value, String>) -> bool {
    judge_rule(result)
}
