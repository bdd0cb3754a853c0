//! The step-wise loop that `react` and `toolnet` share: at each step the
//! actor is offered candidates and chooses one tool call or `finish`. What
//! differs between them is where the candidates come from ([`Candidates`]).

use std::collections::BTreeSet;

use serde_json::Value;

use super::prompt::{self, ActorAction, CandidateLine, HistoryEntry, JudgeInput, Layout, Observation};
use crate::budget::btp::{self, RunBudget};
use crate::engine::event::{EventKind, Offered, RefuseReason};
use crate::engine::{CostShape, Halt, Host, Strategy};
use crate::model::{ChatRequest, Role};
use crate::task::Task;
use crate::tool::nothing_found::is_nothing_found;

/// Where a step's candidates come from.
pub trait Candidates {
    /// The tools offered at `node` (the last tool that helped, or
    /// [`crate::graph::START`]), with their weights if the strategy has any.
    fn candidates(&self, host: &dyn Host, node: &str, retrieved: &[String]) -> Vec<(String, Option<f64>)>;

    /// Whether the candidates are the same at every step of a task, so the
    /// prompt lists them before the task and its history (see [`prompt::Layout`]).
    fn steady(&self, _host: &dyn Host) -> bool {
        false
    }
}

/// BTP's costs for the actor: every tool call costs one actor step; c_s is
/// the first prompt and the final summary.
pub fn cost_shape(strategy: &impl Candidates, host: &dyn Host, query: &str, candidates: &[String]) -> CostShape {
    let tokens = actor_first_prompt_tokens(strategy, host, query, candidates);
    let per_call = btp::step_cost(&host.models().get(Role::Actor).price, tokens);
    CostShape { per_call, fixed: 2.0 * per_call, reserve: 0.0 }
}

/// The tokens of the actor's first prompt over `candidates`, laid out and
/// weighted as [`act`] sends it before the plan narrows the list.
fn actor_first_prompt_tokens(strategy: &impl Candidates, host: &dyn Host, query: &str, candidates: &[String]) -> u64 {
    let format = host.params().weight_format;
    let mut offered: Vec<(String, Option<String>)> = strategy
        .candidates(host, crate::graph::START, candidates)
        .into_iter()
        .map(|(n, w)| (n, w.and_then(|w| format.show(w))))
        .collect();
    if !offered.iter().any(|(n, _)| n == prompt::FINISH) {
        offered.push((prompt::FINISH.to_string(), None));
    }
    let lines: Vec<CandidateLine> = offered.iter().map(|(n, w)| candidate_line(host, n, w.as_deref())).collect();
    let mut described: Vec<CandidateLine> = offered.iter().map(|(n, _)| candidate_line(host, n, None)).collect();
    described.sort_by(|a, b| a.name.cmp(b.name));
    let layout = if strategy.steady(host) { Layout::CandidatesFirst } else { Layout::ToolsSoFar(&described) };
    crate::model::tokens::count_messages(&prompt::render_actor_prompt(query, &[], &lines, &[], layout))
}

/// The tokens of a one-step actor prompt over `candidates`: the measure of
/// a model step that BTP prices for strategies without the actor's loop.
pub fn first_prompt_tokens(host: &dyn Host, query: &str, candidates: &[String]) -> u64 {
    let lines: Vec<CandidateLine> =
        candidates.iter().map(|n| candidate_line(host, n, None)).chain([CandidateLine::finish(None)]).collect();
    crate::model::tokens::count_messages(&prompt::render_actor_prompt(query, &[], &lines, &[], Layout::CandidatesLast))
}

/// A candidate as the prompt lists it, with its weight as shown: the
/// library's tool, or `finish` for a name the library does not have.
fn candidate_line<'a>(host: &'a dyn Host, name: &str, shown: Option<&'a str>) -> CandidateLine<'a> {
    match host.library().get(name) {
        Some(t) => {
            CandidateLine { name: &t.name, weight: shown, description: &t.description, parameters: &t.parameters }
        }
        None => CandidateLine::finish(shown),
    }
}

/// The decision loop. Returns the answer, or None at the step limit.
pub async fn act(
    strategy: &(impl Strategy + Candidates),
    host: &mut dyn Host,
    task: &Task,
    history: &mut Vec<HistoryEntry>,
) -> Result<Option<String>, Halt> {
    let top_k = host.params().top_k;
    // CoTools' judge first: a task that needs no tool is offered none.
    let mut retrieved = if host.needs_tool(&task.query)? { host.retrieve(&task.query, top_k)? } else { Vec::new() };
    let mut node = crate::graph::START.to_string();
    let mut notes: Vec<String> = Vec::new();
    let mut budget = host.plan_budget(&task.query, strategy)?;
    let mut usages = Vec::new();
    let mut told_empty = false;
    let mut looping: BTreeSet<String> = BTreeSet::new();
    let steady = strategy.steady(host);
    // Every tool offered so far in the task, in the order first offered.
    let mut described: Vec<String> = Vec::new();
    let result = loop {
        if host.step() >= host.params().max_steps {
            break Ok(None);
        }
        // Changes made since the last step shape this step's candidates.
        host.next_step()?;
        let mut candidates = strategy.candidates(host, &node, &retrieved);
        if !candidates.iter().any(|(n, _)| n == prompt::FINISH) {
            candidates.push((prompt::FINISH.to_string(), None));
        }
        // A tool the model kept calling with arguments it already had the
        // answer to is taken off the list: with constrained decoding the
        // model cannot name it again, and the loop is broken.
        candidates.retain(|(n, _)| !looping.contains(n));
        if let Some(b) = budget.as_ref() {
            // Algorithm 2: only tools the plan still allows are offered.
            candidates.retain(|(n, _)| n == prompt::FINISH || b.allowed(n));
            if candidates.len() == 1 && b.any_left() {
                // Nothing allowed is reachable from here: offer what is left of the plan.
                let left: Vec<(String, Option<f64>)> =
                    b.allowance.keys().filter(|t| b.allowed(t)).map(|t| (t.clone(), None)).collect();
                candidates.splice(0..0, left);
            }
            if !b.any_left() && !told_empty {
                notes
                    .push("No tool is left within the plan and the budget: answer the task with what you have.".into());
                told_empty = true;
            }
            let c_step = btp::step_cost(&host.models().get(Role::Actor).price, 0);
            if b.over(b.spent, c_step) {
                break Err(Halt::OutOfBudget);
            }
        }
        let format = host.params().weight_format;
        let offered: Vec<Offered> = candidates
            .iter()
            .map(|(name, w)| Offered { name: name.clone(), weight: *w, shown: w.and_then(|w| format.show(w)) })
            .collect();
        host.emit(EventKind::Candidates { from: node.clone(), offered: offered.clone() })?;
        let lines: Vec<CandidateLine> =
            offered.iter().map(|o| candidate_line(host, &o.name, o.shown.as_deref())).collect();
        // New ones by name, not by weight: the first step's tools then
        // read the same from task to task while the weights move.
        let mut new: Vec<&String> = offered.iter().map(|o| &o.name).filter(|n| !described.contains(n)).collect();
        new.sort();
        described.extend(new.into_iter().cloned());
        let so_far: Vec<CandidateLine> = described.iter().map(|n| candidate_line(host, n, None)).collect();
        let layout = if steady { Layout::CandidatesFirst } else { Layout::ToolsSoFar(&so_far) };
        let prompt = prompt::render_actor_prompt(&task.query, history, &lines, &notes, layout);
        notes.clear();
        let names: Vec<String> = offered.iter().map(|o| o.name.clone()).collect();
        let req =
            ChatRequest::constrained(Role::Actor, prompt, prompt::actor_schema(&names)).stopping_at(prompt::ACTOR_STOP);
        let reply = host.model(req).await?;
        let action = match prompt::parse_actor_reply(&reply) {
            Ok(a) => a,
            Err(e) => {
                refuse_malformed(host, &e)?;
                notes.push(format!("Your last reply could not be read ({}). Reply with one JSON object.", e.why));
                continue;
            }
        };
        let (tool, arguments) = match action {
            ActorAction::Finish { answer } => break Ok(Some(answer)),
            ActorAction::Call { tool, arguments } => (tool, arguments),
        };
        if let Some(refusal) = refusal(host, budget.as_ref(), &names, history, &tool, &arguments) {
            let (reason, detail) = refusal;
            host.emit(EventKind::Refused { tool: tool.clone(), reason, detail: detail.clone() })?;
            if reason == RefuseReason::Repeated {
                notes.push(detail.clone());
                looping.insert(tool.clone());
            }
            history.push(HistoryEntry { tool, arguments, observation: Observation::Refused(detail) });
            continue;
        }
        let observation = match host.tool(&tool, &arguments).await? {
            Ok(value) => Observation::Result(value),
            Err(error) => Observation::Error(error.message),
        };
        let raw: Result<Value, String> = match &observation {
            Observation::Result(v) => Ok(v.clone()),
            Observation::Error(e) | Observation::Refused(e) => Err(e.clone()),
        };
        let helpful = judge(host, task, &tool, &arguments, &observation).await?;
        usages.push(btp::usage(&task.query, &tool, &arguments, &raw, helpful));
        if let Some(b) = budget.as_mut() {
            host.spend(b, &tool, &mut notes)?;
            if !helpful {
                b.blacklisted.insert(tool.clone());
                let reason = "the judge found its result unhelpful for this task".to_string();
                host.emit(EventKind::Blacklisted { tool: tool.clone(), reason })?;
                notes.push(format!("'{tool}' is blacklisted for this task: its result was not helpful."));
            }
        }
        // ToolNet moves along an edge only when the call helped: after a
        // failure the agent still stands where it was, so a sibling (the
        // backup of a broken tool) stays within reach.
        if matches!(&observation, Observation::Result(v) if !is_nothing_found(v)) {
            node = tool.clone();
        }
        // CoTools queries with the reasoning so far: with `requery` on, the
        // next step's retrieved tools answer the task plus what was learnt.
        let evidence = match &observation {
            Observation::Result(v) if !is_nothing_found(v) => Some(prompt::compact(v)),
            _ => None,
        };
        history.push(HistoryEntry { tool, arguments, observation });
        if host.requery()
            && let Some(evidence) = evidence
        {
            let query = requery_text(&task.query, &evidence);
            retrieved = host.retrieve(&query, top_k)?;
        }
    };
    host.record_usages(&usages)?;
    result
}

/// The task and the latest evidence, cut so the task stays the larger part
/// of what a short-context embedder sees.
fn requery_text(task: &str, evidence: &str) -> String {
    let cut: String = evidence.chars().take(300).collect();
    format!("{task}\n{cut}")
}

/// Why the actor's call may not run, if it may not: BTP forbids it, it was
/// not offered, or it repeats a call that already answered.
fn refusal(
    host: &dyn Host,
    budget: Option<&RunBudget>,
    offered: &[String],
    history: &[HistoryEntry],
    tool: &str,
    arguments: &Value,
) -> Option<(RefuseReason, String)> {
    if let Some(b) = budget {
        if let Some(r) = crate::engine::budgeting::refusal(b, tool).filter(|_| host.library().get(tool).is_some()) {
            return Some(r);
        }
    }
    if !offered.iter().any(|n| n == tool && n != prompt::FINISH) {
        return Some((
            RefuseReason::NotOffered,
            format!("'{tool}' is not among the candidates ({})", offered.join(", ")),
        ));
    }
    // A small model may call the same tool with the same arguments again
    // and again: the answer is already in its history.
    let answered = history.iter().position(|h| {
        h.tool == tool
            && &h.arguments == arguments
            && matches!(&h.observation, Observation::Result(v) if !is_nothing_found(v))
    })?;
    Some((
        RefuseReason::Repeated,
        format!(
            "'{tool}' already answered these arguments at step {} (see the history); if that answers the task, \
             choose finish with the answer",
            answered + 1
        ),
    ))
}

/// Was the tool's result helpful? The rule by default, the `judge` model if asked.
async fn judge(
    host: &mut dyn Host,
    task: &Task,
    tool: &str,
    arguments: &Value,
    observation: &Observation,
) -> Result<bool, Halt> {
    let raw: Result<Value, String> = match observation {
        Observation::Result(v) => Ok(v.clone()),
        Observation::Error(e) | Observation::Refused(e) => Err(e.clone()),
    };
    let by_rule = btp::rule(&raw);
    if !host.judge_by_model() {
        return Ok(by_rule);
    }
    let view = JudgeInput {
        task: task.query.clone(),
        tool: tool.to_string(),
        arguments: arguments.clone(),
        observation: observation.clone(),
    };
    let req = ChatRequest::constrained(Role::Judge, prompt::render_judge(&view), prompt::judge_schema())
        .stopping_at(prompt::JUDGE_STOP);
    let reply = host.model(req).await?;
    // A verdict that cannot be read falls back to the rule.
    Ok(prompt::parse_judge_reply(&reply).unwrap_or(by_rule))
}

/// A reply that could not be read is recorded as a refusal of no tool.
pub fn refuse_malformed(host: &mut dyn Host, e: &prompt::ReplyError) -> Result<(), crate::engine::EngineError> {
    host.emit(EventKind::Refused { tool: String::new(), reason: RefuseReason::Malformed, detail: e.to_string() })
}
