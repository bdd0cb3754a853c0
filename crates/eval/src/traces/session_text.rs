//! The summary of a session's runs, as text or JSON, that `run` and
//! `trace show` both print.

use crate::engine::event::RunOutcome;
use crate::engine::fold::{RunSummary, SessionState};

/// A finished run as one JSON object.
pub fn run_json(r: &RunSummary) -> serde_json::Value {
    serde_json::json!({
        "run": r.run, "task_id": r.task_id, "outcome": r.outcome, "answer": r.answer, "success": r.success,
        "cost": r.cost, "prompt_tokens": r.usage.prompt_tokens, "completion_tokens": r.usage.completion_tokens,
        "steps": r.steps, "tool_calls": r.tool_calls, "path": r.path,
    })
}

/// The session's strategy, seed, models and a line per finished run.
pub fn session_text(state: &SessionState) -> String {
    let mut out = String::new();
    let models: Vec<String> = state
        .models
        .iter()
        .filter(|m| state.strategy.is_some_and(|s| s.roles().contains(&m.role)))
        .map(|m| format!("{} = {}{}", m.role, m.model.name, if m.model.simulated { " (simulated)" } else { "" }))
        .collect();
    out += &format!(
        "strategy {}, seed {}, {} tools, {} tasks; {}",
        state.strategy.map(|s| s.as_str()).unwrap_or("?"),
        state.seed,
        state.tools.len(),
        state.totals.runs,
        models.join(", ")
    );
    out.push('\n');
    if state.runs_dropped() > 0 {
        out += &format!(
            "(the first {} runs are not kept; the latest {} follow)\n",
            state.runs_dropped(),
            state.finished.len()
        );
    }
    out += &format!(
        "{:>4}  {:<12} {:<8} {:>5} {:>8}  {:<40} path\n",
        "run", "task", "result", "steps", "tokens", "answer"
    );
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
        out += &format!(
            "{:>4}  {:<12} {:<8} {:>5} {:>8}  {:<40} {}\n",
            r.run,
            r.task_id,
            result,
            r.steps,
            r.usage.prompt_tokens + r.usage.completion_tokens,
            answer,
            r.path.join(" > ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_per_finished_run_after_the_session_line() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/react.jsonl");
        let events = crate::engine::trace::read_trace_file(&path).unwrap().events;
        let state = SessionState::from_events(&events);
        let text = session_text(&state);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("strategy react, seed "), "{text}");
        assert_eq!(
            lines[1].split_whitespace().collect::<Vec<_>>(),
            ["run", "task", "result", "steps", "tokens", "answer", "path"]
        );
        assert_eq!(lines.len(), 2 + state.finished.len(), "{text}");
        assert!(!state.finished.is_empty());
        let first = &state.finished[0];
        assert!(lines[2].trim_start().starts_with(&format!("{}  {}", first.run, first.task_id)), "{text}");
        assert_eq!(run_json(first)["task_id"], first.task_id.as_str());
    }
}
