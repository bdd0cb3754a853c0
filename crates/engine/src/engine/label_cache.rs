//! The classifier's labels, cached per library and model so a session does
//! not pay for classifying the same tools again. One JSON file, written
//! atomically; a file that cannot be read is reported, never overwritten
//! silently.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(thiserror::Error, Debug)]
pub enum CacheError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a label cache ({source}); move it away to start a new one")]
    Json { path: PathBuf, source: serde_json::Error },
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Stored {
    /// Key → (model, tool → category).
    entries: BTreeMap<String, Entry>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Entry {
    model: String,
    labels: BTreeMap<String, String>,
}

/// What the labels depend on: the tools (names and descriptions), the
/// categories offered and the model. Any change makes a new key.
pub fn key(tools: &[(String, String)], categories: &[String], model: &str) -> String {
    let mut h = Sha256::new();
    for c in categories {
        h.update(c.as_bytes());
        h.update([0]);
    }
    h.update([1]);
    for (name, description) in tools {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(description.as_bytes());
        h.update([0]);
    }
    h.update(model.as_bytes());
    let digest = h.finalize();
    digest.iter().take(12).map(|b| format!("{b:02x}")).collect()
}

/// The labels cached under `key`, if any (a missing file is an empty cache).
pub fn load(path: &Path, key: &str) -> Result<Option<BTreeMap<String, String>>, CacheError> {
    Ok(read(path)?.entries.remove(key).map(|e| e.labels))
}

/// Stores (or replaces) the labels under `key`, keeping the other entries.
pub fn store(path: &Path, key: &str, model: &str, labels: &BTreeMap<String, String>) -> Result<(), CacheError> {
    let mut stored = read(path)?;
    stored.entries.insert(key.to_string(), Entry { model: model.to_string(), labels: labels.clone() });
    let io = |source| CacheError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = atomic_write_file::AtomicWriteFile::open(path).map_err(io)?;
    let text =
        serde_json::to_string_pretty(&stored).map_err(|source| CacheError::Json { path: path.into(), source })?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.commit().map_err(io)
}

fn read(path: &Path) -> Result<Stored, CacheError> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|source| CacheError::Json { path: path.to_owned(), source }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Stored::default()),
        Err(source) => Err(CacheError::Io { path: path.to_owned(), source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_and_loads_by_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/categories.json");
        let tools = vec![("a".to_string(), "looks up".to_string())];
        let cats = vec!["X".to_string(), "Y".to_string()];
        let k = key(&tools, &cats, "sim");
        assert_ne!(k, key(&tools, &cats, "other"), "the model is part of the key");
        assert_ne!(k, key(&[("a".into(), "computes".into())], &cats, "sim"), "so is every description");
        assert_eq!(load(&path, &k).unwrap(), None);
        let labels = BTreeMap::from([("a".to_string(), "X".to_string())]);
        store(&path, &k, "sim", &labels).unwrap();
        store(&path, "other", "m", &BTreeMap::new()).unwrap();
        assert_eq!(load(&path, &k).unwrap(), Some(labels));
    }

    #[test]
    fn a_broken_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("categories.json");
        std::fs::write(&path, "{ not json").unwrap();
        let e = load(&path, "k").unwrap_err().to_string();
        assert!(e.contains("categories.json"), "{e}");
        assert!(store(&path, "k", "m", &BTreeMap::new()).is_err(), "never overwritten silently");
    }
}
