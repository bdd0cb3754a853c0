//! The failed runs' phrases grouped into kinds of failure: the phrases
//! embedded (MiniLM when installed, else their words), joined while the
//! groups' average similarity stays above a threshold, then each group
//! named by the scanner model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::ChatModel;
use crate::retrieve::embed::{EmbedError, Embedder, normalise};

use super::prompt;
use super::run::RunScan;

/// How many example runs a group keeps.
const EXAMPLES: usize = 3;

/// One kind of failure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub name: String,
    /// Failed runs in it.
    pub count: usize,
    /// Of the failed runs the scanner named.
    pub share: f64,
    /// Its tasks, each once, in the order met.
    pub tasks: Vec<String>,
    /// Its phrases, most common first, with their counts.
    pub phrases: Vec<(String, usize)>,
    pub examples: Vec<Example>,
    /// Why the model's name was not taken (its most common phrase is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unnamed: Option<String>,
}

/// A run of a group, at the event its scanner pointed to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Example {
    pub trace: String,
    pub run: u32,
    pub task_id: String,
    pub event: usize,
    pub phrase: String,
}

/// Groups the named failures of `rows`, largest first.
pub async fn groups(
    rows: &[RunScan],
    embedder: &dyn Embedder,
    model: &dyn ChatModel,
    threshold: f32,
) -> Result<Vec<Group>, EmbedError> {
    let named: Vec<&RunScan> = rows.iter().filter(|r| r.failure.is_some()).collect();
    // Each distinct phrase embedded once, in the order first met.
    let mut distinct: Vec<&str> = Vec::new();
    let mut place: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &named {
        let p = r.failure.as_ref().map(|f| f.phrase.as_str()).unwrap_or_default();
        if !place.contains_key(p) {
            place.insert(p, distinct.len());
            distinct.push(p);
        }
    }
    let vectors = if distinct.is_empty() { Vec::new() } else { embedder.embed(&distinct)? };
    let clusters = cluster(&vectors, threshold);
    let mut out = Vec::new();
    for members in clusters {
        let runs: Vec<&RunScan> = named
            .iter()
            .filter(|r| members.contains(&place[r.failure.as_ref().map(|f| f.phrase.as_str()).unwrap_or_default()]))
            .copied()
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &runs {
            *counts.entry(r.failure.as_ref().map(|f| f.phrase.as_str()).unwrap_or_default()).or_default() += 1;
        }
        let mut phrases: Vec<(String, usize)> = counts.into_iter().map(|(p, n)| (p.to_string(), n)).collect();
        phrases.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut tasks: Vec<String> = Vec::new();
        for r in &runs {
            if !tasks.contains(&r.task_id) {
                tasks.push(r.task_id.clone());
            }
        }
        // Examples from different tasks first.
        let mut examples: Vec<Example> = Vec::new();
        let mut first_of_task: Vec<&RunScan> = Vec::new();
        for r in &runs {
            if !first_of_task.iter().any(|f| f.task_id == r.task_id) {
                first_of_task.push(r);
            }
        }
        for r in first_of_task.iter().chain(runs.iter()) {
            if examples.len() == EXAMPLES {
                break;
            }
            if examples.iter().any(|e| e.trace == r.trace && e.run == r.run) {
                continue;
            }
            let f = r.failure.as_ref().expect("a named run");
            examples.push(Example {
                trace: r.trace.clone(),
                run: r.run,
                task_id: r.task_id.clone(),
                event: f.event,
                phrase: f.phrase.clone(),
            });
        }
        let top: Vec<(String, usize)> = phrases.iter().take(12).cloned().collect();
        let (name, unnamed) = match model.chat(&prompt::group_request(&top)).await {
            Ok(reply) => match prompt::read_name(&reply.text) {
                Ok(name) => (name, None),
                Err(why) => (phrases[0].0.clone(), Some(why)),
            },
            Err(e) => (phrases[0].0.clone(), Some(format!("the scanner model failed: {e}"))),
        };
        out.push(Group {
            name,
            count: runs.len(),
            share: runs.len() as f64 / named.len().max(1) as f64,
            tasks,
            phrases,
            examples,
            unnamed,
        });
    }
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    Ok(out)
}

/// Average-linkage clustering of unit vectors: the two groups most alike
/// are joined while their mean cosine similarity is at least `threshold`.
/// Groups come back in the order of their first member.
pub fn cluster(vectors: &[Vec<f32>], threshold: f32) -> Vec<Vec<usize>> {
    let n = vectors.len();
    let mut groups: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let sim = |a: usize, b: usize| -> f32 { vectors[a].iter().zip(&vectors[b]).map(|(x, y)| x * y).sum() };
    // Pairwise sums of similarity between groups, kept as groups join.
    let mut sums: Vec<Vec<f32>> = (0..n).map(|a| (0..n).map(|b| sim(a, b)).collect()).collect();
    loop {
        let mut best: Option<(usize, usize, f32)> = None;
        for a in 0..groups.len() {
            for b in a + 1..groups.len() {
                let mean = sums[a][b] / (groups[a].len() * groups[b].len()) as f32;
                if mean >= threshold && best.is_none_or(|(_, _, m)| mean > m) {
                    best = Some((a, b, mean));
                }
            }
        }
        let Some((a, b, _)) = best else { break };
        // a < b: joining b into a leaves a's place as it is.
        let from_b = sums[b].clone();
        for (into, v) in sums[a].iter_mut().zip(from_b) {
            *into += v;
        }
        let row_a = sums[a].clone();
        for (row, v) in sums.iter_mut().zip(row_a) {
            row[a] = v;
        }
        sums.remove(b);
        for s in &mut sums {
            s.remove(b);
        }
        let joined = groups.remove(b);
        groups[a].extend(joined);
    }
    for g in &mut groups {
        g.sort_unstable();
    }
    groups.sort_by_key(|g| g[0]);
    groups
}

/// An embedder of a phrase's words, for when MiniLM is not installed: each
/// word (lowercase, a plural's or a tense's ending cut, common words left
/// out) hashed into one of 512 dimensions.
pub struct Words;

const STOP: [&str; 24] = [
    "a", "an", "the", "of", "to", "and", "or", "in", "on", "at", "by", "for", "with", "its", "it", "is", "was", "were",
    "be", "been", "then", "after", "from", "that",
];

impl Embedder for Words {
    fn id(&self) -> &str {
        "words"
    }
    fn dim(&self) -> usize {
        512
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 512];
                for w in t.split(|c: char| !c.is_alphanumeric() && c != '_').filter(|w| !w.is_empty()) {
                    let w = w.to_lowercase();
                    if STOP.contains(&w.as_str()) {
                        continue;
                    }
                    let stem = ["ing", "ed", "es", "s"]
                        .iter()
                        .find_map(|e| w.strip_suffix(e).filter(|s| s.len() >= 3))
                        .unwrap_or(&w);
                    let h = stem
                        .bytes()
                        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
                    v[(h % 512) as usize] += 1.0;
                }
                normalise(&mut v);
                v
            })
            .collect())
    }
}
