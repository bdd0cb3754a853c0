//! Synthetic questions for a tool (`retrieval synth`): the tool's relation
//! asked of a named subject, in a few wordings, from the prompt's text.

use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::answer::UNREADABLE_PROMPT;
use crate::model::Message;
use crate::retrieve::synthetic_questions::parse_prompt;

const NAMES: &[&str] = &["Ada Lovelace", "Lima", "The Long Road", "Mount Kenya", "Nina Simone", "Blue Train", "Osaka"];
const WORDINGS: &[&str] = &["What is the {r} of {s}?", "Tell me the {r} of {s}.", "Which {r} does {s} have?"];

pub fn synth_reply(messages: &[Message], rng: &mut ChaCha8Rng) -> String {
    let Some((tool, n)) = parse_prompt(messages) else {
        return UNREADABLE_PROMPT.to_string();
    };
    let last = tool.id.rsplit('/').next().unwrap_or(&tool.id);
    let relation = last.replace(['_', '.', '-'], " ");
    let offset = rng.random_range(0..WORDINGS.len());
    let questions: Vec<String> = (0..n)
        .map(|i| {
            let subject = NAMES.choose(rng).copied().unwrap_or("it");
            WORDINGS[(offset + i) % WORDINGS.len()].replace("{r}", relation.trim()).replace("{s}", subject)
        })
        .collect();
    json!({ "questions": questions }).to_string()
}
