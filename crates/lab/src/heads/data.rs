//! What training reads and how it is split: (query, tool) examples from an
//! annotated call-text file or a question file, the seeded tool-level
//! splits, and judge examples from call positions.

use std::collections::BTreeSet;
use std::path::Path;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::error::TrainingError;
use crate::dataset::cotools::{CallText, Question, ToolPool};

type Result<T> = std::result::Result<T, TrainingError>;

/// A query and the pool position of its tool.
#[derive(Debug, Clone)]
pub struct Example {
    pub query: String,
    pub tool: usize,
}

/// Examples from `path`: an annotated call-text file (`text` with calls)
/// gives one per call; a question file with `tool` gives one per line.
/// A tool missing from the pool is an error naming the line.
pub fn examples(path: &Path, pool: &ToolPool, pool_path: &Path) -> Result<Vec<Example>> {
    let first = std::fs::read_to_string(path)
        .map_err(|source| TrainingError::Io { path: path.into(), source })?
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.contains("\"text\""))
        .unwrap_or(false);
    let mut raw: Vec<(usize, String, String)> = Vec::new();
    if first {
        for (i, t) in CallText::load(path)?.iter().enumerate() {
            raw.extend(t.pairs().into_iter().map(|(q, tool)| (i + 1, q, tool)));
        }
    } else {
        for (i, q) in Question::load_with_tools(path)?.into_iter().enumerate() {
            raw.push((i + 1, q.question, q.tool.unwrap_or_default()));
        }
    }
    if raw.is_empty() {
        return Err(TrainingError::Data { path: path.into(), why: "no examples (an empty file?)".into() });
    }
    raw.into_iter()
        .map(|(line, query, tool)| {
            let pos = pool.position(&tool).ok_or_else(|| TrainingError::Data {
                path: path.into(),
                why: format!("record {line}: tool `{tool}` is not in {}", pool_path.display()),
            })?;
            Ok(Example { query, tool: pos })
        })
        .collect()
}

/// The distinct tools of `examples` split by a seeded shuffle: `share` of
/// them (rounded) in the first set, the rest in the second.
pub fn split_tools(examples: &[Example], share: f64, rng: &mut ChaCha8Rng) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let mut tools: Vec<usize> = examples.iter().map(|e| e.tool).collect::<BTreeSet<_>>().into_iter().collect();
    tools.shuffle(rng);
    let cut = ((tools.len() as f64) * share).round() as usize;
    let (a, b) = tools.split_at(cut.min(tools.len()));
    (a.iter().copied().collect(), b.iter().copied().collect())
}

pub fn seeded(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Judge examples from annotated texts, grouped by text: the text up to a call is labelled
/// 1; the text up to another word boundary of the same text is 0, at most
/// `negatives` of those per text (all of them when `negatives` is None).
/// A prefix is cut to its last `window` words: whether a tool is due
/// depends on what was just written, and a mean-pooled embedder blurs a
/// long text's ending into its beginning.
pub fn judge_examples(
    path: &Path,
    window: usize,
    negatives: Option<usize>,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<Vec<(String, bool)>>> {
    let mut out = Vec::new();
    for t in CallText::load(path)? {
        let mut one = Vec::new();
        let calls: BTreeSet<usize> = t.calls.iter().map(|c| c.0).collect();
        let chars: Vec<char> = t.text.chars().collect();
        let mut others: Vec<usize> =
            (1..chars.len()).filter(|&i| chars[i - 1].is_whitespace() && !calls.contains(&i)).collect();
        if let Some(k) = negatives {
            others.shuffle(rng);
            others.truncate(k);
            others.sort_unstable();
        }
        for &at in &calls {
            one.push((tail(t.prefix(at), window), true));
        }
        for at in others {
            one.push((tail(t.prefix(at), window), false));
        }
        out.push(one);
    }
    if out.is_empty() {
        return Err(TrainingError::Data { path: path.into(), why: "no annotated texts".into() });
    }
    Ok(out)
}

fn tail(text: &str, words: usize) -> String {
    let all: Vec<&str> = text.split_whitespace().collect();
    all[all.len().saturating_sub(words)..].join(" ")
}

/// Queries ready to rank: raw vectors, BM25 scores, gold tools.
pub struct Ranked<'a> {
    pub vectors: Vec<&'a [f32]>,
    pub lexical: Vec<Vec<f32>>,
    pub gold: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge_examples_label_calls_and_other_word_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let line = r#"{"text": "Q: 2 plus 3?\nA: It is 2+3=5.", "start_str_idx": [26], "tool_calling": [{"call_tool": "<add>"}]}"#;
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let ex = judge_examples(&path, 3, None, &mut seeded(0)).unwrap().remove(0);
        assert_eq!(ex[0], ("It is 2+3=".to_owned(), true));
        assert!(ex[1..].iter().all(|(_, l)| !l));
        assert_eq!(ex.len(), 1 + 7);
        assert_eq!(judge_examples(&path, 3, Some(2), &mut seeded(0)).unwrap()[0].len(), 3);
    }

    #[test]
    fn the_tool_split_is_seeded_and_covers_every_tool() {
        let ex: Vec<Example> = (0..20).map(|i| Example { query: String::new(), tool: i % 10 }).collect();
        let (a, b) = split_tools(&ex, 0.3, &mut seeded(7));
        assert_eq!((a.len(), b.len()), (3, 7));
        assert!(a.is_disjoint(&b));
        assert_eq!(split_tools(&ex, 0.3, &mut seeded(7)).0, a);
    }
}
