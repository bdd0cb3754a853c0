//! The summary of a session's runs, as text or JSON, that `run` and `trace show` both print.

use switchyard::engine::event::RunOutcome;
use switchyard::engine::fold::{RunSummary, SessionState};

pub(super) fn run_json(r: &RunSummary) -> serde_json::Value {
    serde_json::json!({
        "run": r.run, "task_id": r.task_id, "outcome": r.outcome, "answer": r.answer, "success": r.success,
        "cost": r.cost, "prompt_tokens": r.usage.prompt_tokens, "completion_tokens": r.usage.completion_tokens,
        "steps": r.steps, "tool_calls": r.tool_calls, "path": r.path,
    })
}

pub(super) fn print_session(state: &SessionState) {
    let models: Vec<String> = state
        .models
        .iter()
        .filter(|m| state.strategy.is_some_and(|s| s.roles().contains(&m.role)))
        .map(|m| format!("{} = {}{}", m.role, m.model.name, if m.model.simulated { " (simulated)" } else { "" }))
        .collect();
    println!(
        "strategy {}, seed {}, {} tools, {} tasks; {}",
        state.strategy.map(|s| s.as_str()).unwrap_or("?"),
        state.seed,
        state.tools.len(),
        state.totals.runs,
        models.join(", ")
    );
    if state.runs_dropped() > 0 {
        println!("(the first {} runs are not kept; the latest {} follow)", state.runs_dropped(), state.finished.len());
    }
    println!("{:>4}  {:<12} {:<8} {:>5} {:>8}  {:<40} path", "run", "task", "result", "steps", "tokens", "answer");
    for r in &state.finished {
        let result = match (&r.success, &r.outcome) {
            (Some(true), _) => "ok",
            (Some(false), RunOutcome::Answered) => "wrong",
            (None, RunOutcome::Answered) => "answered",
            (_, RunOutcome::MaxSteps) => "no answer",
            (_, RunOutcome::Stopped) => "stopped",
            (_, RunOutcome::Restarted) => "restarted",
            (_, RunOutcome::OutOfBudget) => "no budget",
            (_, RunOutcome::Failed { .. }) => "failed",
            (_, RunOutcome::BadPlan { .. }) => "bad plan",
        };
        let answer: String = r.answer.clone().unwrap_or_default().chars().take(40).collect();
        println!(
            "{:>4}  {:<12} {:<8} {:>5} {:>8}  {:<40} {}",
            r.run,
            r.task_id,
            result,
            r.steps,
            r.usage.prompt_tokens + r.usage.completion_tokens,
            answer,
            r.path.join(" > ")
        );
    }
}
