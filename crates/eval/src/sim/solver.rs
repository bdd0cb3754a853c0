//! The rewoo solver (docs/src/papers/rewoo.md): the answer from the evidence of
//! the last step that has usable evidence.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use super::answer::{GIVE_UP, UNREADABLE_PROMPT, answer_from, value_text};
use super::observation::{is_useful, is_wrong_arithmetic};
use crate::model::Message;
use crate::strategy::prompt::Observation;
use crate::strategy::rewoo::prompt::{self as rp, SolverInput};

/// A lane whose evidence can answer.
struct Usable {
    step: usize,
    value: Value,
}

pub(super) fn solver_reply(messages: &[Message], noise: f64, rng: &mut ChaCha8Rng) -> String {
    let answer = match rp::parse_solver_prompt(messages) {
        Some(view) => solve(&view, noise, rng),
        None => UNREADABLE_PROMPT.into(),
    };
    rp::render_solver_reply(&answer)
}

/// The answer from the last step with usable evidence (later steps build on
/// earlier ones), its first usable lane; nothing usable, no answer.
fn solve(view: &SolverInput, noise: f64, rng: &mut ChaCha8Rng) -> String {
    let usable = usable(view);
    let Some(last) = usable.last().map(|u| u.step) else { return GIVE_UP.into() };
    let chosen = usable.iter().position(|u| u.step == last).unwrap_or(0);
    if rng.random_bool(noise / 2.0) {
        return misread(&view.task, &usable, chosen, rng);
    }
    answer_from(&view.task, &usable[chosen].value)
}

/// Evidence that is there (not null), useful (not empty or garbage) and not
/// arithmetic the solver can see is wrong, in plan order.
fn usable(view: &SolverInput) -> Vec<Usable> {
    let mut out = Vec::new();
    for (step, s) in view.steps.iter().enumerate() {
        for call in &s.calls {
            let Some(text) = &call.result else { continue };
            // Evidence is JSON when the tool returned JSON; anything else
            // (a cut-off long result, plain text) is read as text.
            let value = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()));
            let args = serde_json::from_str(&call.args).unwrap_or(Value::Null);
            let obs = Observation::Result(value);
            if is_useful(&obs)
                && !is_wrong_arithmetic(&args, &obs)
                && let Observation::Result(value) = obs
            {
                out.push(Usable { step, value });
            }
        }
    }
    out
}

/// A noisy solver's slip: the answer from other evidence if there is any,
/// else another field of the right evidence.
fn misread(task: &str, usable: &[Usable], chosen: usize, rng: &mut ChaCha8Rng) -> String {
    if usable.len() > 1 {
        let k = rng.random_range(0..usable.len() - 1);
        return answer_from(task, &usable[if k >= chosen { k + 1 } else { k }].value);
    }
    let right = answer_from(task, &usable[chosen].value);
    let others: Vec<String> = match &usable[chosen].value {
        Value::Object(m) => m.values().map(value_text).filter(|t| !t.is_empty() && *t != right).collect(),
        _ => Vec::new(),
    };
    if others.is_empty() { right } else { others[rng.random_range(0..others.len())].clone() }
}
