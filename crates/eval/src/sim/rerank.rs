//! Re-ranking a retriever's candidates (`retrieval eval --rerank-model`):
//! the candidate whose text shares the most with the question, the first
//! of equals, read from the prompt's text.

use super::answer::UNREADABLE_PROMPT;
use crate::model::Message;
use crate::retrieve::rerank::parse_prompt;
use crate::retrieve::similarity;

pub fn rerank_reply(messages: &[Message]) -> String {
    let Some((question, candidates)) = parse_prompt(messages) else {
        return UNREADABLE_PROMPT.to_string();
    };
    let mut best: Option<(f64, &str)> = None;
    for c in &candidates {
        let score = similarity(&question, &c.text());
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c.id.as_str()));
        }
    }
    serde_json::json!({ "tool": best.map_or("", |(_, id)| id) }).to_string()
}
