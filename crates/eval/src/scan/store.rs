//! A scan's folder: `scan.json` (what was scanned, and how), `runs.jsonl`
//! (a line per run, appended as each is scanned, so a scan that is killed
//! or that meets new runs goes on from what it wrote), `groups.json`, the
//! report and its plot.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::run::RunScan;

pub const META: &str = "scan.json";
pub const RUNS: &str = "runs.jsonl";
pub const GROUPS: &str = "groups.json";

#[derive(thiserror::Error, Debug)]
pub enum StoreError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}, line {line}: not a scanned run: {why}", path.display())]
    Parse { path: PathBuf, line: usize, why: String },
    #[error("{}: this folder holds a scan of {was}, not of {now}; give another --out, or --fresh to scan again here", path.display())]
    Other { path: PathBuf, was: String, now: String },
}

/// What a scan read and with what, so a second scan into the same folder
/// goes on only when it is the same scan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScanMeta {
    /// The eval's folder or the traces, as given.
    pub source: String,
    /// The model scanner's model; none when only the rules ran.
    pub model: Option<String>,
    pub started: String,
}

/// The folder, open for appending runs.
pub struct Store {
    dir: PathBuf,
    file: std::fs::File,
}

impl Store {
    /// Opens `dir` for a scan described by `meta`: its rows so far (none
    /// when `fresh`), and a store to append to. A torn last line (a kill
    /// mid-write) is cut off; its run is scanned again.
    pub fn open(dir: &Path, meta: &ScanMeta, fresh: bool) -> Result<(Store, Vec<RunScan>), StoreError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StoreError::Io { path: path.clone(), source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let meta_path = dir.join(META);
        let runs_path = dir.join(RUNS);
        let mut rows = Vec::new();
        if !fresh && let Ok(text) = std::fs::read_to_string(&meta_path) {
            let was: ScanMeta = serde_json::from_str(&text).map_err(|e| StoreError::Parse {
                path: meta_path.clone(),
                line: e.line(),
                why: e.to_string(),
            })?;
            let describe = |m: &ScanMeta| match &m.model {
                Some(model) => format!("{} (scanner model {model})", m.source),
                None => format!("{} (rules only)", m.source),
            };
            if was.source != meta.source || was.model != meta.model {
                return Err(StoreError::Other { path: dir.to_path_buf(), was: describe(&was), now: describe(meta) });
            }
            rows = read_runs(&runs_path)?;
        } else {
            let text = serde_json::to_string_pretty(meta).expect("the meta serialises") + "\n";
            crate::eval::write_atomic(&meta_path, text.as_bytes()).map_err(io(&meta_path))?;
            std::fs::write(&runs_path, "").map_err(io(&runs_path))?;
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&runs_path).map_err(io(&runs_path))?;
        Ok((Store { dir: dir.to_path_buf(), file }, rows))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one run, flushed: a kill loses at most this line.
    pub fn append(&mut self, row: &RunScan) -> Result<(), StoreError> {
        let mut line = serde_json::to_string(row).expect("a row serialises");
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|source| StoreError::Io { path: self.dir.join(RUNS), source })
    }
}

/// The runs a scan wrote; a last line cut short is dropped (and cut off
/// the file, so the next line starts clean).
pub fn read_runs(path: &Path) -> Result<Vec<RunScan>, StoreError> {
    let io = |source| StoreError::Io { path: path.to_path_buf(), source };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(e)),
    };
    let mut rows = Vec::new();
    let mut kept = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if !line.ends_with('\n') {
            break;
        }
        if !line.trim().is_empty() {
            rows.push(serde_json::from_str(line).map_err(|e| StoreError::Parse {
                path: path.to_path_buf(),
                line: i + 1,
                why: e.to_string(),
            })?);
        }
        kept += line.len();
    }
    if kept < text.len() {
        let f = std::fs::OpenOptions::new().write(true).open(path).map_err(io)?;
        f.set_len(kept as u64).map_err(io)?;
    }
    Ok(rows)
}
