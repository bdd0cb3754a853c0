//! BTP applied by the engine (docs/src/papers/btp.md): the plan made before a
//! run's first call (Algorithm 1, `PlanMade`) and each call spent against it
//! (Algorithm 2, `BudgetSpent`). The formulas are in `budget/`.

use super::conductor::Engine;
use super::error::EngineError;
use super::event::{EventKind, RefuseReason};
use super::host::{Halt, Strategy};
pub use crate::budget::btp::BtpSetup;
use crate::budget::btp::{BudgetReport, PlannedRun, RunBudget, Verdict, plan_run};
use crate::retrieve::similarity;

impl Engine {
    /// Algorithm 1 before the first call, when BTP enforces and a budget is set.
    pub(super) fn plan_budget(&mut self, query: &str, strategy: &dyn Strategy) -> Result<Option<RunBudget>, Halt> {
        let (Some(b), Some(total)) = (self.btp.as_ref(), self.params.budget) else {
            return Ok(None);
        };
        if !b.enforce {
            return Ok(None);
        }
        let (lambda, k) = (b.lambda, b.candidates);
        let candidates = self.retrieve_k(query, k)?;
        if let Some((rows, recorded)) = self.recorded_plan().zip(self.recorded_plan_event()) {
            let reserve = strategy.cost_shape(self, query, &candidates).reserve;
            self.emit(recorded)?;
            return Ok(Some(RunBudget::from_rows(total, &rows, reserve)));
        }
        let p = self.compute_plan(query, &candidates, total, strategy)?;
        self.emit(EventKind::PlanMade {
            budget: total,
            fixed_cost: p.fixed_cost,
            remaining: total - p.fixed_cost,
            lambda,
            tau: self.params.tau,
            rows: p.rows,
            planned_cost: p.planned_cost,
            planned_calls: p.planned_calls,
        })?;
        Ok(Some(p.run))
    }

    /// The plan for a query under the budget `total`, without running anything.
    fn compute_plan(
        &self,
        query: &str,
        candidates: &[String],
        total: f64,
        strategy: &dyn Strategy,
    ) -> Result<PlannedRun, EngineError> {
        let b = self.btp.as_ref().ok_or(EngineError::NoBtp)?;
        let shape = strategy.cost_shape(self, query, candidates);
        let costs: Vec<(String, f64)> = candidates
            .iter()
            .map(|n| {
                let time = self.mean_latency_s(n) * b.time_rate;
                (n.clone(), self.library.get(n).map(|t| t.cost).unwrap_or(0.0) + shape.per_call + time)
            })
            .collect();
        // sim(q_u, q) is the retriever's: dense cosine with an embedder.
        // Past queries are embedded in batches, not one call each.
        if self.retriever.is_dense() {
            let past: Vec<&str> = b.experience.tally().queries().collect();
            self.retriever.warm_queries(&past);
        }
        let sim = |a: &str, b: &str| self.retriever.query_similarity(a, b).unwrap_or_else(|| similarity(a, b));
        let mut p = plan_run(b, query, &costs, total, shape.fixed, self.params.tau, &sim);
        p.run.reserve = shape.reserve;
        Ok(p)
    }

    /// The tool's latency as learnt over the session, in seconds (0 unseen).
    fn mean_latency_s(&self, tool: &str) -> f64 {
        self.latency.get(tool).map_or(0.0, |l| l.mean_ms / 1000.0)
    }

    /// `switchyard plan`: the plan a run of `query` would start with.
    pub fn plan_only(&mut self, query: &str) -> Result<BudgetReport, EngineError> {
        let total = self.params.budget.ok_or(EngineError::NoBudget)?;
        let b = self.btp.as_ref().ok_or(EngineError::NoBtp)?;
        let (lambda, experience, k) = (b.lambda, b.experience.len(), b.candidates);
        let candidates = self.retrieve_k(query, k)?;
        let strategy = self.strategy.take().ok_or(EngineError::Reentered)?;
        let p = self.compute_plan(query, &candidates, total, strategy.as_ref());
        self.strategy = Some(strategy);
        let p = p?;
        Ok(BudgetReport {
            task: query.to_string(),
            budget: total,
            fixed_cost: p.fixed_cost,
            remaining: total - p.fixed_cost,
            lambda,
            tau: self.params.tau,
            experience,
            rows: p.rows,
            planned_cost: p.planned_cost,
            planned_calls: p.planned_calls,
        })
    }

    /// Counts a call against the budget (Algorithm 2: one allowance spent).
    pub(super) fn spend(&mut self, b: &mut RunBudget, tool: &str, notes: &mut Vec<String>) -> Result<(), EngineError> {
        let allowance = b.allowance.get_mut(tool).map(|a| {
            *a = a.saturating_sub(1);
            *a
        });
        let spent = self.tally.cost;
        let amount = spent - b.spent;
        b.spent = spent;
        let left = allowance.unwrap_or(0);
        self.emit(EventKind::BudgetSpent {
            tool: tool.to_string(),
            amount,
            spent,
            left: b.budget - spent,
            allowance: left,
        })?;
        if left == 0 {
            notes.push(format!("'{tool}' is now forbidden: the plan allows it no more calls."));
        }
        Ok(())
    }
}

/// Why the run's budget refuses a call of `tool`, as the refusal event
/// says it; None when the plan allows it.
pub fn refusal(budget: &RunBudget, tool: &str) -> Option<(RefuseReason, String)> {
    match budget.verdict(tool) {
        Verdict::Allowed => None,
        Verdict::Forbidden(d) => Some((RefuseReason::Forbidden, d)),
        Verdict::Blacklisted(d) => Some((RefuseReason::Blacklisted, d)),
    }
}
