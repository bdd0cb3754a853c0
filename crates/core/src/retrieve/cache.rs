//! Tool vectors kept between sessions, keyed by the sha256 of the text that
//! was embedded: a new or changed tool is embedded alone, at once, and an
//! unchanged library of 16,000 tools costs a file read, not minutes.
//!
//! One file per embedder under `<data dir>/retrieval/`: a header line
//! `switchyard-vectors 1 <embedder id> <dim>` then, per text, 32 key bytes
//! and `dim` little-endian `f32`s. A file that does not parse is treated as
//! empty (the vectors are derived data) and rewritten.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::embed::{EmbedError, Embedder};

const MAGIC: &str = "switchyard-vectors 1";

pub struct VectorCache {
    path: Option<PathBuf>,
    dim: usize,
    map: HashMap<[u8; 32], Vec<f32>>,
    dirty: bool,
    /// Texts embedded (not found in the cache) since opening.
    embedded: usize,
}

fn key(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl VectorCache {
    /// An in-memory cache (nothing persisted).
    pub fn memory(dim: usize) -> Self {
        VectorCache { path: None, dim, map: HashMap::new(), dirty: false, embedded: 0 }
    }

    /// The cache file of `embedder` under `dir` (`<data dir>/retrieval`).
    pub fn open(dir: &Path, embedder: &dyn Embedder) -> Self {
        let path = dir.join(format!("vectors-{}.bin", file_id(embedder.id())));
        let mut cache = VectorCache::memory(embedder.dim());
        match std::fs::read(&path) {
            Ok(bytes) => match parse(&bytes, embedder.id(), embedder.dim()) {
                Some(map) => cache.map = map,
                None => tracing::warn!(path = %path.display(), "vector cache unreadable; it will be rebuilt"),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(path = %path.display(), error = %e, "vector cache unreadable; it will be rebuilt"),
        }
        cache.path = Some(path);
        cache
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// How many texts had to be embedded since the cache was opened.
    pub fn embedded(&self) -> usize {
        self.embedded
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// A vector per text, embedding (in one call) only those not cached.
    pub fn vectors(&mut self, embedder: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| key(t)).collect();
        let mut missing: Vec<usize> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (i, k) in keys.iter().enumerate() {
            if !self.map.contains_key(k) && seen.insert(*k) {
                missing.push(i);
            }
        }
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let vectors = embedder.embed(&batch)?;
            for (&i, v) in missing.iter().zip(vectors) {
                self.map.insert(keys[i], v);
            }
            self.embedded += missing.len();
            self.dirty = true;
        }
        Ok(keys.iter().map(|k| self.map[k].clone()).collect())
    }

    /// Writes the file when something was added (atomically: a crash keeps
    /// the old file).
    pub fn save(&mut self) -> Result<(), EmbedError> {
        let Some(path) = self.path.clone().filter(|_| self.dirty) else {
            return Ok(());
        };
        let fail = |e: std::io::Error| EmbedError::Cache { path: path.clone(), reason: e.to_string() };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let id = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").trim_start_matches("vectors-").to_owned();
        let mut bytes = Vec::with_capacity(64 + self.map.len() * (32 + 4 * self.dim));
        bytes.extend_from_slice(format!("{MAGIC} {id} {}\n", self.dim).as_bytes());
        let mut entries: Vec<(&[u8; 32], &Vec<f32>)> = self.map.iter().collect();
        entries.sort_by_key(|(k, _)| **k);
        for (k, v) in entries {
            bytes.extend_from_slice(k);
            for x in v {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let mut file = atomic_write_file::AtomicWriteFile::open(&path).map_err(fail)?;
        file.write_all(&bytes).map_err(fail)?;
        file.commit().map_err(fail)?;
        self.dirty = false;
        Ok(())
    }
}

/// An embedder id as it may stand in a file name (`http:m/x` → `http_m_x`).
fn file_id(id: &str) -> String {
    id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

fn parse(bytes: &[u8], id: &str, dim: usize) -> Option<HashMap<[u8; 32], Vec<f32>>> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&bytes[..nl]).ok()?;
    let rest = header.strip_prefix(MAGIC)?.trim();
    let (file_id, file_dim) = rest.rsplit_once(' ')?;
    if file_id != self::file_id(id) || file_dim.parse::<usize>().ok()? != dim {
        return None;
    }
    let body = &bytes[nl + 1..];
    let row = 32 + 4 * dim;
    if body.len() % row != 0 {
        return None;
    }
    let mut map = HashMap::with_capacity(body.len() / row);
    for chunk in body.chunks_exact(row) {
        let k: [u8; 32] = chunk[..32].try_into().ok()?;
        let v = chunk[32..].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        map.insert(k, v);
    }
    Some(map)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts what it is asked to embed; the vector is the text's length.
    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn id(&self) -> &str {
            "count/v1"
        }
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        }
    }

    #[test]
    fn only_new_or_changed_texts_are_embedded_and_the_file_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let e = Counting(AtomicUsize::new(0));
        let mut c = VectorCache::open(dir.path(), &e);
        let v = c.vectors(&e, &["a", "bb", "a"]).unwrap();
        assert_eq!(v, vec![vec![1.0, 1.0], vec![2.0, 1.0], vec![1.0, 1.0]]);
        assert_eq!(e.0.load(Ordering::SeqCst), 2);
        c.save().unwrap();
        let mut again = VectorCache::open(dir.path(), &e);
        assert_eq!(again.len(), 2);
        again.vectors(&e, &["a", "bb", "ccc"]).unwrap();
        assert_eq!(e.0.load(Ordering::SeqCst), 3, "only the new text is embedded");
        assert_eq!(again.embedded(), 1);
    }

    #[test]
    fn a_damaged_file_is_rebuilt_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let e = Counting(AtomicUsize::new(0));
        let mut c = VectorCache::open(dir.path(), &e);
        c.vectors(&e, &["a"]).unwrap();
        c.save().unwrap();
        let path = c.path().unwrap().to_owned();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 3);
        std::fs::write(&path, bytes).unwrap();
        let c = VectorCache::open(dir.path(), &e);
        assert!(c.is_empty());
    }
}
