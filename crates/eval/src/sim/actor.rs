//! The actor: one step of a react or ToolNet run. It chooses among the
//! offered candidates by the task's words, the shown weights and seeded
//! noise, follows a chain when a result gives the ID a candidate needs, and
//! answers once nothing is left to do or too much went wrong.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::answer::{GIVE_UP, UNREADABLE_PROMPT, answer_from};
use super::arguments::{fill_arguments, required};
use super::observation::{is_useful, result_of};
use super::relevance::{doc_of, relevance, task_words, words_match};
use crate::model::Message;
use crate::retrieve::{similarity, tokenize};
use crate::strategy::prompt::{self, ActorAction, ActorInput, CandidateInput, FINISH, Observation};

/// After this many failed calls in one run the actor gives up, as a model
/// that keeps hitting errors would.
const MAX_FAILURES: usize = 3;
/// The actor's own step limit, below any engine's: a weak model stops
/// trying eventually.
const MAX_CALLS: usize = 6;
/// A tool already used successfully is rarely worth calling again.
const USED_PENALTY: f64 = 0.1;
/// A tool that failed or was refused in this run: try something else. This
/// is what moves the actor to the backup when the primary breaks mid-task.
const FAILED_PENALTY: f64 = 0.02;
/// Cosine similarity of two descriptions above which the tools are taken
/// for twins (a primary and its mirror): between twins the actor chooses in
/// proportion to the shown weights, not by argmax, so the weights steer it.
pub(super) const TWIN_SIMILARITY: f64 = 0.9;

/// The actor's reply: a call of one of the offered candidates, or the answer.
pub(super) fn actor_reply(messages: &[Message], noise: f64, rng: &mut ChaCha8Rng) -> String {
    let action = match prompt::parse_actor_prompt(messages) {
        Some(view) => act(&view, noise, rng),
        None => ActorAction::Finish { answer: UNREADABLE_PROMPT.into() },
    };
    prompt::render_actor_reply(&action)
}

/// One step of the actor.
fn act(view: &ActorInput, noise: f64, rng: &mut ChaCha8Rng) -> ActorAction {
    let failures = view.history.iter().filter(|h| !is_useful(&h.observation)).count();
    let last_useful = view.history.iter().rev().find(|h| is_useful(&h.observation));
    let best_answer = || match last_useful {
        Some(h) => ActorAction::Finish { answer: answer_from(&view.task, result_of(h)) },
        None => ActorAction::Finish { answer: GIVE_UP.into() },
    };
    if failures >= MAX_FAILURES {
        return ActorAction::Finish { answer: GIVE_UP.into() };
    }
    if view.history.len() >= MAX_CALLS {
        return best_answer();
    }
    let tools: Vec<&CandidateInput> = view.candidates.iter().filter(|c| c.name != FINISH).collect();
    if tools.is_empty() {
        return best_answer();
    }
    let scored = score_candidates(view, &tools);
    // A tool whose required arguments are nowhere to be found is not worth a call.
    let mut pool: Vec<usize> = (0..scored.len()).filter(|&i| scored[i].fillable).collect();
    // Once something useful came back (even if a later call failed): go on
    // only for a reason, and only among the candidates that give it.
    if let Some(last) = last_useful {
        let obs = result_of(last);
        let remaining = uncovered_words(view, &tools);
        let rel = relevance(&remaining, &tools.iter().map(|c| doc_of(c)).collect::<Vec<_>>());
        let open: Vec<usize> =
            (0..scored.len()).filter(|&i| scored[i].fresh && scored[i].fillable && rel[i] > 0.0).collect();
        // A two-step chain: a candidate needs an ID the last result just gave.
        let chain: Vec<usize> = open.iter().copied().filter(|&i| needs_id_from(scored[i].candidate, obs)).collect();
        pool = if chain.is_empty() { open } else { chain };
        if pool.is_empty() {
            return ActorAction::Finish { answer: answer_from(&view.task, obs) };
        }
    }
    if pool.is_empty() {
        return best_answer();
    }
    // A weak model's mistake: any candidate at all.
    if rng.random_bool(noise) {
        let pick = &scored[rng.random_range(0..scored.len())];
        return ActorAction::Call { tool: pick.candidate.name.clone(), arguments: pick.arguments.clone() };
    }
    let noisy: Vec<f64> = scored.iter().map(|s| s.score + noise * rng.random::<f64>()).collect();
    let best = pool.iter().copied().max_by(|&a, &b| noisy[a].total_cmp(&noisy[b])).unwrap_or(0);
    let twins: Vec<usize> = pool
        .iter()
        .copied()
        .filter(|&i| {
            i == best
                || (scored[i].penalty >= scored[best].penalty
                    && similarity(&scored[i].candidate.description, &scored[best].candidate.description)
                        >= TWIN_SIMILARITY)
        })
        .collect();
    let chosen = if twins.len() > 1 {
        let total: f64 = twins.iter().map(|&i| scored[i].weight).sum();
        let mut x = rng.random::<f64>() * total;
        let mut pick = best;
        for &i in &twins {
            if x < scored[i].weight {
                pick = i;
                break;
            }
            x -= scored[i].weight;
        }
        pick
    } else {
        best
    };
    ActorAction::Call { tool: scored[chosen].candidate.name.clone(), arguments: scored[chosen].arguments.clone() }
}

pub(super) struct Scored<'a> {
    candidate: &'a CandidateInput,
    /// The shown weight over the largest shown weight (1 when none is shown).
    weight: f64,
    penalty: f64,
    pub(super) score: f64,
    /// Not used in this run yet, successfully or not.
    fresh: bool,
    pub(super) fillable: bool,
    pub(super) arguments: Value,
}

pub(super) fn score_candidates<'a>(view: &ActorInput, tools: &[&'a CandidateInput]) -> Vec<Scored<'a>> {
    let rel = relevance(&task_words(&view.task), &tools.iter().map(|c| doc_of(c)).collect::<Vec<_>>());
    let max_rel = rel.iter().copied().fold(0.0, f64::max);
    let weights: Vec<Option<f64>> = tools.iter().map(|c| c.weight.as_deref().and_then(parse_weight)).collect();
    let max_w = weights.iter().flatten().copied().fold(0.0, f64::max);
    tools
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (arguments, fillable) = fill_arguments(&view.task, &view.history, &c.parameters);
            let used_ok = view.history.iter().any(|h| h.tool == c.name && is_useful(&h.observation));
            let failed = view.history.iter().any(|h| h.tool == c.name && !is_useful(&h.observation));
            let mut penalty = 1.0;
            if used_ok {
                penalty *= USED_PENALTY;
            }
            if failed {
                penalty *= FAILED_PENALTY;
            }
            let weight = match weights[i] {
                Some(w) if max_w > 0.0 => w / max_w,
                Some(_) => 0.0,
                None => 1.0,
            };
            let rel_norm = if max_rel > 0.0 { rel[i] / max_rel } else { 0.0 };
            Scored {
                candidate: c,
                weight,
                penalty,
                // The floor keeps weights meaningful among tools none of
                // whose words the task uses.
                score: (0.05 + rel_norm) * weight * penalty,
                fresh: !used_ok && !failed,
                fillable,
                arguments,
            }
        })
        .collect()
}

/// Task words that no tool used successfully in this run speaks of: what
/// is still to be done. A tool no longer offered is known by its name.
fn uncovered_words(view: &ActorInput, tools: &[&CandidateInput]) -> Vec<String> {
    let mut covered: Vec<String> = Vec::new();
    for h in view.history.iter().filter(|h| is_useful(&h.observation)) {
        let doc = tools.iter().find(|c| c.name == h.tool).map(|c| doc_of(c)).unwrap_or_else(|| h.tool.clone());
        covered.extend(tokenize(&doc));
        // What was asked and what came back cover the task's words too: a
        // tool that left the list (BTP forbids it) is still remembered by
        // its call and its result, as a real model remembers them.
        if !tools.iter().any(|c| c.name == h.tool) {
            covered.extend(tokenize(&h.arguments.to_string()));
            if let Observation::Result(v) = &h.observation {
                covered.extend(tokenize(&v.to_string()));
            }
        }
    }
    task_words(&view.task).into_iter().filter(|t| !covered.iter().any(|c| words_match(t, c))).collect()
}

/// A shown weight: "37", "0.37" or "370" all read as numbers; only their
/// ratio to the largest matters.
fn parse_weight(s: &str) -> Option<f64> {
    s.trim().trim_end_matches('%').parse::<f64>().ok().filter(|w| w.is_finite() && *w >= 0.0)
}

pub(super) fn needs_id_from(c: &CandidateInput, obs: &Value) -> bool {
    required(&c.parameters).iter().any(|p| p.ends_with("_id") && obs.get(p.as_str()).is_some_and(|v| !v.is_null()))
}
