//! ReWOO (docs/src/papers/rewoo.md): the classifier labels the library once, a
//! planner writes the whole plan, workers run each step's calls concurrently
//! (the engine's lanes), and a solver answers from the evidence.

pub mod args;
pub mod classify;
pub mod filter;
pub mod parse;
pub mod planner;
pub mod prompt;

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde_json::Value;

use self::args::Evidence;
use self::parse::RewooPlan;
use self::prompt::{Category, SolverCall, SolverInput, SolverStep};
use super::prompt::compact;
use super::stepwise::{first_prompt_tokens, refuse_malformed};
use crate::budget::btp::{self, RunBudget};
use crate::engine::event::{EventKind, RewooStep};
use crate::engine::{CostShape, Halt, Host, LaneRequest, Strategy, StrategyKind};
use crate::model::{ChatRequest, Role};
use crate::task::Task;
use crate::tool::{ToolError, ToolErrorKind};

/// The rewoo strategy, with the categories its classifier labels tools with.
#[derive(Clone, Debug)]
pub struct Rewoo {
    pub categories: Vec<Category>,
}

impl Default for Rewoo {
    fn default() -> Self {
        Rewoo { categories: prompt::default_categories() }
    }
}

#[async_trait]
impl Strategy for Rewoo {
    fn kind(&self) -> StrategyKind {
        StrategyKind::Rewoo
    }

    /// A tool call costs no model step of its own: the fixed cost is one
    /// planner call and one solver call, and the solver's is kept back.
    fn cost_shape(&self, host: &dyn Host, query: &str, candidates: &[String]) -> CostShape {
        let tokens = first_prompt_tokens(host, query, candidates);
        let solver = btp::step_cost(&host.models().get(Role::Solver).price, tokens);
        let planner = btp::step_cost(&host.models().get(Role::Planner).price, tokens);
        CostShape { per_call: 0.0, fixed: planner + solver, reserve: solver }
    }

    /// One run: classify (once), plan, work, solve.
    async fn run(&mut self, host: &mut dyn Host, task: &Task) -> Result<Option<String>, Halt> {
        if host.labels().is_empty() {
            classify::classify(host, &self.categories).await?;
        }
        let mut budget = host.plan_budget(&task.query, self)?;
        let offered = planner::planner_tools(host, task, budget.as_ref())?;
        // Nothing to plan with (the budget allows no tool): the solver
        // answers from the task alone, as an actor would finish.
        let plan = if offered.is_empty() {
            RewooPlan { steps: Vec::new() }
        } else {
            planner::write_plan(host, task, &offered, budget.as_ref()).await?
        };
        let mut usages = Vec::new();
        let result = work_and_solve(host, task, &plan, budget.as_mut(), &mut usages).await;
        host.record_usages(&usages)?;
        result
    }
}

/// The worker runs the plan's steps in order, the calls of each step
/// concurrently; then the solver answers from the evidence.
async fn work_and_solve(
    host: &mut dyn Host,
    task: &Task,
    plan: &RewooPlan,
    mut budget: Option<&mut RunBudget>,
    usages: &mut Vec<crate::budget::experience::Experience>,
) -> Result<Option<String>, Halt> {
    let mut evidence: Evidence = BTreeMap::new();
    let mut solved: Vec<SolverStep> = Vec::new();
    for step in plan.steps.iter().take(host.params().max_steps as usize) {
        host.next_step()?;
        let lanes = lane_requests(host, step, &evidence);
        let lanes = host.step_calls(step.evidence, step.thought.clone(), lanes, budget.as_deref_mut()).await?;
        let mut results = Vec::with_capacity(lanes.len());
        let mut saved = 0;
        let mut calls = Vec::with_capacity(lanes.len());
        for l in &lanes {
            let shown = match &l.result {
                // A result passes as it is; the user's rejection as its note.
                Some(r) if !filter::is_filtered(r) => {
                    Some(r.as_ref().map_or_else(|e| Value::String(e.message.clone()), Value::clone))
                }
                Some(r) => {
                    saved += filter::saved_tokens(r);
                    None
                }
                None => None,
            };
            if let Some(r) = &l.result {
                let raw: Result<Value, String> = r.clone().map_err(|e| e.to_string());
                let helpful = btp::rule(&raw);
                usages.push(btp::usage(&task.query, &l.plan.tool, &l.plan.args, &raw, helpful));
            }
            calls.push(SolverCall {
                tool: l.plan.tool.clone(),
                args: compact(&l.plan.args),
                result: shown.as_ref().map(compact),
            });
            results.push(shown);
        }
        host.emit(EventKind::StepFinished { evidence: step.evidence, results: results.clone(), tokens_saved: saved })?;
        evidence.insert(step.evidence, results);
        solved.push(SolverStep { evidence: step.evidence, thought: step.thought.clone(), calls });
    }
    // The solver is a model call like any other: the budget must pay for it.
    if let Some(b) = budget.as_deref()
        && b.over(host.spent(), b.reserve)
    {
        return Err(Halt::OutOfBudget);
    }
    solve(host, task, solved).await
}

/// A step's calls with their arguments, cited evidence substituted; a call
/// whose arguments cannot be built fails at once, saying why.
fn lane_requests(host: &dyn Host, step: &RewooStep, evidence: &Evidence) -> Vec<LaneRequest> {
    step.calls
        .iter()
        .map(|c| match host.library().get(&c.tool) {
            None => LaneRequest { tool: c.tool.clone(), input: c.input.clone(), args: Value::Null, invalid: None },
            Some(s) => match args::resolve(&c.input, &s.parameters, evidence) {
                Ok(a) => LaneRequest { tool: c.tool.clone(), input: c.input.clone(), args: a, invalid: None },
                Err(why) => LaneRequest {
                    tool: c.tool.clone(),
                    input: c.input.clone(),
                    args: Value::String(c.input.clone()),
                    invalid: Some(ToolError::new(ToolErrorKind::BadArguments, why)),
                },
            },
        })
        .collect()
}

/// The solver's answer from the plan and the evidence.
async fn solve(host: &mut dyn Host, task: &Task, steps: Vec<SolverStep>) -> Result<Option<String>, Halt> {
    let view = SolverInput { task: task.query.clone(), steps };
    let req = ChatRequest::constrained(Role::Solver, prompt::render_solver(&view), prompt::solver_schema())
        .stopping_at(prompt::SOLVER_STOP);
    let reply = host.model(req).await?;
    match prompt::parse_solver_reply(&reply) {
        Ok(a) => Ok(Some(a)),
        Err(e) => {
            refuse_malformed(host, &e)?;
            Ok(None)
        }
    }
}
