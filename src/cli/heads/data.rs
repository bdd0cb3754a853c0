//! What `heads` reads and how it is split: (query, tool) examples from an
//! annotated call-text file or a question file, the seeded tool-level
//! splits, judge examples from call positions, and embedding through a
//! small on-disk vector cache (the same texts are embedded on every run).

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};

use color_eyre::eyre::{Result, WrapErr, eyre};
use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

use switchyard::dataset::cotools::{CallText, Question, ToolPool};
use switchyard::retrieve::Embedder;

/// A query and the pool position of its tool.
#[derive(Debug, Clone)]
pub(super) struct Example {
    pub(super) query: String,
    pub(super) tool: usize,
}

/// Examples from `path`: an annotated call-text file (`text` with calls)
/// gives one per call; a question file with `tool` gives one per line.
/// A tool missing from the pool is an error naming the line.
pub(super) fn examples(path: &Path, pool: &ToolPool, pool_path: &Path) -> Result<Vec<Example>> {
    let first = std::fs::read_to_string(path)
        .wrap_err_with(|| format!("could not read {}", path.display()))?
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
        return Err(eyre!("{}: no examples (an empty file?)", path.display()));
    }
    raw.into_iter()
        .map(|(line, query, tool)| {
            let pos = pool.position(&tool).ok_or_else(|| {
                eyre!("{}: record {line}: tool `{tool}` is not in {}", path.display(), pool_path.display())
            })?;
            Ok(Example { query, tool: pos })
        })
        .collect()
}

/// The distinct tools of `examples` split by a seeded shuffle: `share` of
/// them (rounded) in the first set, the rest in the second.
pub(super) fn split_tools(
    examples: &[Example],
    share: f64,
    rng: &mut ChaCha8Rng,
) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let mut tools: Vec<usize> = examples.iter().map(|e| e.tool).collect::<BTreeSet<_>>().into_iter().collect();
    tools.shuffle(rng);
    let cut = ((tools.len() as f64) * share).round() as usize;
    let (a, b) = tools.split_at(cut.min(tools.len()));
    (a.iter().copied().collect(), b.iter().copied().collect())
}

pub(super) fn seeded(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Judge examples from annotated texts, grouped by text: the text up to a call is labelled
/// 1; the text up to another word boundary of the same text is 0, at most
/// `negatives` of those per text (all of them when `negatives` is None).
/// A prefix is cut to its last `window` words: whether a tool is due
/// depends on what was just written, and a mean-pooled embedder blurs a
/// long text's ending into its beginning.
pub(super) fn judge_examples(
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
        return Err(eyre!("{}: no annotated texts", path.display()));
    }
    Ok(out)
}

fn tail(text: &str, words: usize) -> String {
    let all: Vec<&str> = text.split_whitespace().collect();
    all[all.len().saturating_sub(words)..].join(" ")
}

/// Vectors of `texts` in order, from the cache at `cache` when known,
/// the rest embedded (with a progress bar) and added to it. A cache that
/// cannot be read is rebuilt, not trusted.
pub(super) fn embed_cached(
    embedder: &dyn Embedder,
    texts: &[String],
    cache: &Path,
    what: &str,
) -> Result<Vec<Vec<f32>>> {
    let d = embedder.dim();
    let mut known = read_cache(cache, d);
    let key = |t: &str| -> [u8; 32] { Sha256::digest(t.as_bytes()).into() };
    let mut todo: Vec<&str> = texts.iter().map(String::as_str).filter(|t| !known.contains_key(&key(t))).collect();
    todo.sort_unstable();
    todo.dedup();
    if !todo.is_empty() {
        let bar = bar(todo.len() as u64, &format!("embedding {what}"));
        for chunk in todo.chunks(128) {
            let vs = embedder.embed(chunk)?;
            for (t, v) in chunk.iter().zip(vs) {
                known.insert(key(t), v);
            }
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
        write_cache(cache, &known).wrap_err_with(|| format!("vector cache {}", cache.display()))?;
    }
    Ok(texts.iter().map(|t| known[&key(t)].clone()).collect())
}

pub(super) fn cache_path(data_dir: &Path, embedder: &str) -> PathBuf {
    let safe: String = embedder.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    data_dir.join("vectors").join(format!("{safe}.bin"))
}

/// Records of a 32-byte sha256 of the text then `d` little-endian f32.
fn read_cache(path: &Path, d: usize) -> HashMap<[u8; 32], Vec<f32>> {
    let Ok(bytes) = std::fs::read(path) else { return HashMap::new() };
    let record = 32 + 4 * d;
    if bytes.len() % record != 0 {
        eprintln!("warning: vector cache {} is damaged; rebuilding it", path.display());
        return HashMap::new();
    }
    bytes
        .chunks_exact(record)
        .map(|r| {
            let key: [u8; 32] = r[..32].try_into().unwrap_or([0; 32]);
            (key, r[32..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
        })
        .collect()
}

fn write_cache(path: &Path, known: &HashMap<[u8; 32], Vec<f32>>) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut keys: Vec<&[u8; 32]> = known.keys().collect();
    keys.sort_unstable();
    let mut bytes = Vec::new();
    for k in keys {
        bytes.extend_from_slice(k);
        bytes.extend(known[k].iter().flat_map(|x| x.to_le_bytes()));
    }
    let mut file = atomic_write_file::AtomicWriteFile::open(path)?;
    file.write_all(&bytes)?;
    file.commit()
}

/// A progress bar on stderr: done/total and the time left.
pub(super) fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ETA {eta} ") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_owned());
    bar
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
