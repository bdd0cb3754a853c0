//! Okapi BM25 over tool name + description.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::tokens::tokenize;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A retrieved document (tool) and its BM25 score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub name: String,
    pub score: f64,
}

/// An inverted index of tools (name + text), ranked with BM25
/// (k1 = 1.2, b = 0.75).
#[derive(Debug, Clone, Default)]
pub struct Bm25Index {
    names: Vec<String>,
    doc_len: Vec<u32>,
    avg_len: f64,
    /// term -> (document, term frequency), documents in increasing order.
    postings: HashMap<String, Vec<(u32, u32)>>,
}

impl Bm25Index {
    /// Indexes `(name, text)` pairs; the name's words count as part of the
    /// text. A name seen again is ignored (the first entry wins).
    pub fn new<'a>(docs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut index = Bm25Index::default();
        let mut seen = std::collections::HashSet::new();
        for (name, text) in docs {
            if !seen.insert(name) {
                continue;
            }
            let doc = index.names.len() as u32;
            let tokens: Vec<String> = tokenize(name).into_iter().chain(tokenize(text)).collect();
            index.doc_len.push(tokens.len() as u32);
            let mut tf: HashMap<String, u32> = HashMap::new();
            for token in tokens {
                *tf.entry(token).or_default() += 1;
            }
            for (token, count) in tf {
                index.postings.entry(token).or_default().push((doc, count));
            }
            index.names.push(name.to_owned());
        }
        let total: u64 = index.doc_len.iter().map(|&l| u64::from(l)).sum();
        index.avg_len = if index.names.is_empty() { 0.0 } else { total as f64 / index.names.len() as f64 };
        index
    }

    /// The `k` best documents for `query`, best first (ties by name);
    /// documents sharing no term with the query are left out.
    pub fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        if k == 0 || self.names.is_empty() {
            return Vec::new();
        }
        let mut scores: HashMap<u32, f64> = HashMap::new();
        self.each_part(query, |doc, part| *scores.entry(doc).or_insert(0.0) += part);
        let mut ranked: Vec<(u32, f64)> = scores.into_iter().filter(|&(_, s)| s > 0.0).collect();
        ranked
            .sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| self.names[a.0 as usize].cmp(&self.names[b.0 as usize])));
        ranked.truncate(k);
        ranked.into_iter().map(|(doc, score)| Hit { name: self.names[doc as usize].clone(), score }).collect()
    }

    /// Every document's score for `query`, in indexing order (0 for those
    /// sharing no term): the lexical signal of a hybrid ranking.
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let mut out = vec![0.0f32; self.names.len()];
        self.each_part(query, |doc, part| out[doc as usize] += part as f32);
        out
    }

    /// Calls `f(document, part)` for every (query term, document holding
    /// it) pair: a document's BM25 score is the sum of its parts.
    fn each_part(&self, query: &str, mut f: impl FnMut(u32, f64)) {
        let mut terms = tokenize(query);
        terms.sort_unstable();
        terms.dedup();
        let n = self.names.len() as f64;
        for term in &terms {
            let Some(postings) = self.postings.get(term) else {
                continue;
            };
            let df = postings.len() as f64;
            // Lucene's idf: always positive, so a term in most documents
            // still counts a little instead of penalising them.
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in postings {
                f(doc, self.part(idf, doc, tf));
            }
        }
    }

    fn part(&self, idf: f64, doc: u32, tf: u32) -> f64 {
        let tf = f64::from(tf);
        let len_norm = if self.avg_len > 0.0 { f64::from(self.doc_len[doc as usize]) / self.avg_len } else { 1.0 };
        idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len_norm))
    }

    /// Indexed names, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of indexed documents.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}
