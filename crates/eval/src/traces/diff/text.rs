//! A decision event in one line, for the diff's report and its view.

use serde_json::Value;

use crate::engine::event::{EventKind, RefuseReason, RunOutcome, ToolOutcome};
use crate::text::{ellipsis, one_line};

/// At most this many characters of a value inside a line.
const VALUE: usize = 120;

fn value(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    ellipsis(&one_line(&s), VALUE)
}

fn text(s: &str) -> String {
    ellipsis(&one_line(s), VALUE)
}

/// What the event says, on one line: the task, the tools offered, the
/// reply, the call and its result, the outcome. Events that are not
/// decisions give their type's name.
pub fn describe(kind: &EventKind) -> String {
    match kind {
        EventKind::RunStarted { task_id, task, .. } => format!("task {task_id}: {}", text(task)),
        EventKind::Retrieved { source, hits, .. } => {
            let names: Vec<&str> = hits.iter().take(8).map(|h| h.name.as_str()).collect();
            format!("retrieved ({source}): {}", names.join(", "))
        }
        EventKind::ToolJudged { judge, score, needed } => {
            format!("{judge}: {} (score {score:.3})", if *needed { "needs a tool" } else { "needs no tool" })
        }
        EventKind::Candidates { from, offered } => {
            let names: Vec<String> = offered
                .iter()
                .map(|o| match (&o.shown, o.weight) {
                    (Some(s), _) => format!("{} ({s})", o.name),
                    (None, Some(w)) => format!("{} ({w:.3})", o.name),
                    (None, None) => o.name.clone(),
                })
                .collect();
            format!("from {from}: {}", names.join(", "))
        }
        EventKind::ModelCall { role, model, messages, .. } => {
            let last = messages.last().map(|m| text(&m.content)).unwrap_or_default();
            format!("{role} → {model}, {} messages; last: {last}", messages.len())
        }
        EventKind::ModelReply { role, model, text: reply, tool_calls, usage, .. } => {
            let calls: Vec<String> =
                tool_calls.iter().map(|c| format!("{}({})", c.name, value(&c.arguments))).collect();
            let said = if calls.is_empty() { text(reply) } else { calls.join(", ") };
            format!("{role} ← {model}: {said} [{}+{} tokens]", usage.prompt_tokens, usage.completion_tokens)
        }
        EventKind::ModelFailed { role, model, error, .. } => format!("{role} ← {model} failed: {}", text(error)),
        EventKind::ToolCall { tool, args, lane, .. } => {
            let lane = lane.map(|l| format!(" [lane {l}]")).unwrap_or_default();
            format!("{tool}({}){lane}", value(args))
        }
        EventKind::ToolResult { tool, outcome, fault, filtered, .. } => {
            let what = match outcome {
                ToolOutcome::Ok { value: v } => format!("ok {}", value(v)),
                ToolOutcome::Err { error } => format!("error ({:?}) {}", error.kind, text(&error.message)),
            };
            let fault = fault.map(|f| format!(" [fault {f}]")).unwrap_or_default();
            let filtered = if *filtered { " [filtered to null]" } else { "" };
            format!("{tool} → {what}{fault}{filtered}")
        }
        EventKind::Refused { tool, reason, detail } => {
            format!("{tool} refused ({}): {}", refuse_word(*reason), text(detail))
        }
        EventKind::PlanMade { budget, planned_cost, planned_calls, .. } => {
            format!("budget plan: {planned_calls} calls costing {planned_cost:.3} of {budget:.3}")
        }
        EventKind::PlanWritten { attempt, steps } => {
            let steps: Vec<String> = steps
                .iter()
                .map(|s| {
                    let calls: Vec<String> = s.calls.iter().map(|c| format!("{}[{}]", c.tool, c.input)).collect();
                    format!("#E{} = {}", s.evidence, calls.join(" + "))
                })
                .collect();
            format!("plan (attempt {attempt}): {}", text(&steps.join("; ")))
        }
        EventKind::PlanRejected { attempt, error, .. } => format!("plan rejected (attempt {attempt}): {}", text(error)),
        EventKind::StepStarted { evidence, lanes, .. } => {
            let calls: Vec<String> = lanes.iter().map(|l| format!("{}({})", l.tool, value(&l.args))).collect();
            format!("step #E{evidence}: {}", text(&calls.join(", ")))
        }
        EventKind::StepFinished { evidence, results, .. } => {
            let results: Vec<String> = results.iter().map(|r| r.as_ref().map_or("null".into(), value)).collect();
            format!("step #E{evidence} done: {}", text(&results.join(" | ")))
        }
        EventKind::ProgramWritten { round, program, by_user, .. } => {
            let by = if *by_user { " by the user" } else { "" };
            format!("program round {round}{by}: {} lines: {}", program.lines().count(), text(program))
        }
        EventKind::ProgramFailed { round, error, line, .. } => {
            let at = line.map(|l| format!(" at line {l}")).unwrap_or_default();
            format!("program round {round} failed{at}: {}", text(error))
        }
        EventKind::ProgramReturned { round, value: v } => format!("program round {round} returned {}", value(v)),
        EventKind::RunFinished { outcome, answer, success, cost, usage, steps, tool_calls, expect } => {
            let answer = answer.as_deref().map(|a| format!(" \"{}\"", text(a))).unwrap_or_default();
            let judged = match success {
                Some(true) => ", success",
                Some(false) => ", failure",
                None => "",
            };
            let expected = match expect {
                Some(v) if v.met() => format!("; expectations met ({})", v.checked),
                Some(v) => {
                    let each: Vec<String> = v.broken.iter().map(|b| format!("{}: {}", b.expect, b.detail)).collect();
                    format!("; expectations broken: {}", each.join("; "))
                }
                None => String::new(),
            };
            format!(
                "{}{answer}{judged}; {steps} steps, {tool_calls} tool calls, {} tokens, cost {cost:.4}{expected}",
                outcome_word(outcome),
                usage.prompt_tokens + usage.completion_tokens
            )
        }
        other => other.name().to_string(),
    }
}

fn refuse_word(r: RefuseReason) -> &'static str {
    match r {
        RefuseReason::NotOffered => "not offered",
        RefuseReason::Malformed => "unreadable reply",
        RefuseReason::Forbidden => "allowance spent",
        RefuseReason::Blacklisted => "blacklisted",
        RefuseReason::OverBudget => "over budget",
        RefuseReason::Repeated => "repeated call",
    }
}

/// A run's outcome in one word, as the trace writes it.
pub fn outcome_word(o: &RunOutcome) -> &'static str {
    match o {
        RunOutcome::Answered => "answered",
        RunOutcome::MaxSteps => "max_steps",
        RunOutcome::Stopped => "stopped",
        RunOutcome::Failed { .. } => "failed",
        RunOutcome::Restarted => "restarted",
        RunOutcome::OutOfBudget => "out_of_budget",
        RunOutcome::BadPlan { .. } => "bad_plan",
    }
}
