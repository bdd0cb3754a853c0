//! The planner (role `planner`): one call writes the whole plan; a plan
//! that cannot be read, or that joins tools of different categories in one
//! step, goes back once with the error.

use super::parse::{RewooPlan, RewooPlanError, parse_plan_reply};
use super::prompt::{self as proto, PlannerInput, PlannerTool};
use crate::budget::btp::RunBudget;
use crate::engine::event::EventKind;
use crate::engine::{Halt, Host};
use crate::model::{ChatRequest, Role};
use crate::task::Task;

/// The tools the planner may use: the top-K retrieved, within what the
/// budget's plan allows.
pub fn planner_tools(
    host: &mut dyn Host,
    task: &Task,
    budget: Option<&RunBudget>,
) -> Result<Vec<PlannerTool>, crate::engine::EngineError> {
    let names = match budget {
        Some(b) => b.allowance.keys().filter(|t| b.allowed(t)).cloned().collect(),
        None => {
            let k = host.params().top_k;
            host.retrieve(&task.query, k)?
        }
    };
    Ok(names
        .iter()
        .filter_map(|n| host.library().get(n))
        .map(|t| PlannerTool {
            name: t.name.clone(),
            category: host.labels().get(&t.name).map(|(c, _)| c.clone()),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        })
        .collect())
}

/// The planner's plan: one call, and one retry showing the parse error.
pub async fn write_plan(
    host: &mut dyn Host,
    task: &Task,
    tools: &[PlannerTool],
    budget: Option<&RunBudget>,
) -> Result<RewooPlan, Halt> {
    let mut notes = Vec::new();
    if let Some(b) = budget {
        let allowed: Vec<String> = b
            .allowance
            .iter()
            .filter(|(t, n)| **n > 0 && b.allowed(t))
            .map(|(t, n)| format!("{t} at most {n}×"))
            .collect();
        notes.push(format!(
            "Budget {:.2}: a step that would overspend it is refused. Calls allowed: {}.",
            b.budget,
            if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") }
        ));
    }
    let view = PlannerInput { task: task.query.clone(), tools: tools.to_vec(), notes };
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let mut messages = proto::render_planner(&view);
    let mut attempt = 1u32;
    loop {
        let req = ChatRequest::constrained(Role::Planner, messages.clone(), proto::planner_schema(&names))
            .stopping_at(proto::PLANNER_STOP);
        let reply = host.model(req).await?;
        match parse_plan_reply(&reply.text, &names).map_err(|e| e.to_string()).and_then(|p| check_categories(host, p)) {
            Ok(plan) => {
                host.emit(EventKind::PlanWritten { attempt, steps: plan.steps.clone() })?;
                return Ok(plan);
            }
            Err(error) => {
                let last = attempt == 2;
                host.emit(EventKind::PlanRejected { attempt, error: error.clone(), last })?;
                if last {
                    return Err(Halt::BadPlan(error));
                }
                messages = proto::render_planner_retry(&view, &reply.text, &error);
                attempt += 1;
            }
        }
    }
}

/// A step calls several tools together only when they share a category (the
/// concurrent-calls paper's multi-calling): otherwise the plan goes back for a
/// retry.
fn check_categories(host: &dyn Host, plan: RewooPlan) -> Result<RewooPlan, String> {
    let labels = host.labels();
    for step in &plan.steps {
        let cats: Vec<(&str, &str)> = step
            .calls
            .iter()
            .map(|c| (c.tool.as_str(), labels.get(&c.tool).map(|(k, _)| k.as_str()).unwrap_or("")))
            .collect();
        if let Some((t0, c0)) = cats.first()
            && let Some((t, c)) = cats.iter().find(|(_, c)| c != c0)
        {
            return Err(RewooPlanError::BadLine {
                line: 0,
                text: format!("#E{}", step.evidence),
                why: format!(
                    "{t0} ({c0}) and {t} ({c}) are of different categories; a step may only call tools of one \
                     category together"
                ),
            }
            .to_string()
            .replacen("line 0: ", "", 1));
        }
    }
    Ok(plan)
}
