//! The evaluator, which scores every tool of a finished trajectory by what
//! its calls did for the answer, and the judge, which tells a useful result
//! from a useless one.

use std::collections::BTreeMap;

use serde_json::Value;

use super::answer::{GIVE_UP, UNREADABLE_PROMPT, value_text};
use super::observation::{is_useful, is_wrong_arithmetic, result_of};
use crate::model::Message;
use crate::strategy::prompt::{self, EvalInput, HistoryEntry};
use crate::task::answer_matches;

/// A call that failed, was refused, found nothing or returned garbage did
/// harm: the most negative score, so a broken tool's weight falls fast.
const FAILURE_SCORE: i32 = -3;
/// A useful result that later calls used, or that became the answer. Kept
/// at +1 on purpose: ToolNet's weights follow the accumulated scores, and a
/// primary that has gathered +2 per task before it breaks needs many -3s to
/// fall below its backup. With +1 per use and the sample task mix, the
/// backup overtakes within a few tasks (the Figure 4 experiment); with +2 for
/// the answer it took noticeably longer in a simulation of the dynamics.
const USED_SCORE: i32 = 1;
/// The result that became the answer: the same +1, for the reason above.
const ANSWER_SCORE: i32 = 1;
/// A result that worked but that nothing used: neither helped nor harmed.
const UNUSED_SCORE: i32 = 0;
/// A useful result for the very arguments another tool failed on earlier in
/// the run: the call that saved the run, which an evaluator reading the
/// trajectory calls essential. Only runs with a failure earn it, so a
/// healthy primary's lead does not grow by it.
const RESCUE_SCORE: i32 = 3;

/// The evaluator's reply: a score for every tool of the trajectory shown.
pub(super) fn evaluator_reply(messages: &[Message]) -> String {
    let scores = prompt::parse_eval_prompt(messages).map(|v| evaluate(&v)).unwrap_or_default();
    prompt::render_eval_reply(&scores)
}

/// The judge's reply: helpful for a useful result whose arithmetic holds.
pub(super) fn judge_reply(messages: &[Message]) -> String {
    let helpful = prompt::parse_judge_prompt(messages)
        .is_some_and(|v| is_useful(&v.observation) && !is_wrong_arithmetic(&v.arguments, &v.observation));
    prompt::render_judge_reply(helpful)
}

/// Scores every tool of a trajectory in [-3, 3] from the observed outcomes;
/// a tool called several times gets the clamped sum of its calls.
fn evaluate(view: &EvalInput) -> BTreeMap<String, i32> {
    let answer_step = view.answer.as_deref().and_then(|a| answer_step(&view.steps, a));
    let mut sums: BTreeMap<String, i32> = BTreeMap::new();
    for (i, step) in view.steps.iter().enumerate() {
        let delta = if !is_useful(&step.observation) || is_wrong_arithmetic(&step.arguments, &step.observation) {
            FAILURE_SCORE
        } else if view.steps[..i]
            .iter()
            .any(|h| h.tool != step.tool && h.arguments == step.arguments && !is_useful(&h.observation))
        {
            RESCUE_SCORE
        } else if Some(i) == answer_step {
            ANSWER_SCORE
        } else if feeds_later(result_of(step), &view.steps[i + 1..]) {
            USED_SCORE
        } else {
            UNUSED_SCORE
        };
        *sums.entry(step.tool.clone()).or_default() += delta;
    }
    sums.into_iter().map(|(tool, sum)| (tool, sum.clamp(-3, 3))).collect()
}

/// The step whose result the answer gives: the last useful step with a
/// value the answer contains; failing that, the last useful step, unless
/// the answer gives up.
fn answer_step(steps: &[HistoryEntry], answer: &str) -> Option<usize> {
    let useful: Vec<usize> = (0..steps.len()).filter(|&i| is_useful(&steps[i].observation)).collect();
    let found = useful.iter().rev().find(|&&i| {
        let mut values = Vec::new();
        scalars(result_of(&steps[i]), &mut values);
        values.iter().any(|v| !v.is_empty() && answer_matches(answer, v))
    });
    if let Some(&i) = found {
        return Some(i);
    }
    let gave_up = answer.trim().is_empty() || answer == GIVE_UP || answer == UNREADABLE_PROMPT;
    if gave_up { None } else { useful.last().copied() }
}

fn scalars(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| scalars(x, out)),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => out.push(value_text(v)),
        Value::Array(a) => a.iter().for_each(|x| scalars(x, out)),
        Value::Null => {}
        other => out.push(value_text(other)),
    }
}

/// Whether a value of this result reappears in a later call's arguments
/// (an ID, a currency code, a country name passed on).
fn feeds_later(result: &Value, later: &[HistoryEntry]) -> bool {
    let mut mine = Vec::new();
    scalars(result, &mut mine);
    let mine: Vec<String> = mine.into_iter().filter(|s| s.chars().count() >= 2).map(|s| s.to_lowercase()).collect();
    later.iter().any(|h| {
        let mut theirs = Vec::new();
        scalars(&h.arguments, &mut theirs);
        theirs.iter().any(|t| mine.contains(&t.to_lowercase()))
    })
}
