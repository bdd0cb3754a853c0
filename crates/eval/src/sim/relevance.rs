//! How well a tool's words fit what the task needs: the lexical relevance
//! the actor ranks candidates by, the planner picks steps by and the
//! classifier files tools by.

use std::collections::HashSet;

use super::extract::extract_quoted;
use crate::retrieve::tokenize;
use crate::strategy::prompt::CandidateInput;

pub(super) fn doc_of(c: &CandidateInput) -> String {
    format!("{} {}", c.name, c.description)
}

/// The words of the task that say what is needed: quoted phrases are the
/// arguments, not the need, so they are left out.
pub(super) fn task_words(task: &str) -> Vec<String> {
    dedup(tokenize(&extract_quoted(task).1))
}

/// Task words found in each document, each weighted by its BM25 inverse
/// document frequency over the documents: a word every candidate has
/// tells them apart less.
pub(super) fn relevance(task_tokens: &[String], docs: &[String]) -> Vec<f64> {
    let doc_tokens: Vec<Vec<String>> = docs.iter().map(|d| dedup(tokenize(d))).collect();
    let n = doc_tokens.len() as f64;
    task_tokens
        .iter()
        .map(|t| {
            let hits: Vec<bool> = doc_tokens.iter().map(|d| d.iter().any(|w| words_match(t, w))).collect();
            let df = hits.iter().filter(|h| **h).count() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            hits.into_iter().map(|h| if h { idf } else { 0.0 }).collect::<Vec<f64>>()
        })
        .fold(vec![0.0; docs.len()], |acc, row| acc.iter().zip(row).map(|(a, b)| a + b).collect())
}

pub(super) fn dedup(v: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    v.into_iter().filter(|t| seen.insert(t.clone())).collect()
}

/// Stemmed words match when equal, when the shorter (of at least four
/// letters) begins the longer ("week", "weekday"), or when they share six
/// leading letters ("conversion", "convert").
pub(super) fn words_match(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.chars().count() >= 4 && long.starts_with(short) {
        return true;
    }
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count() >= 6
}
