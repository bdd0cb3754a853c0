//! What a scan reads: an eval's folder (each task's trace, with what its
//! row knows: the setting, the gold tools) or trace files, and where its
//! results go: beside it, never into it.

use std::path::{Path, PathBuf};

use crate::eval::results::{self, META, RESULTS, TaskRow};

use super::run::RunContext;

#[derive(thiserror::Error, Debug)]
pub enum SourceError {
    #[error("{}: not an eval's folder (it has no {META}); scan takes an eval's folder or trace files", .0.display())]
    NotAnEval(PathBuf),
    #[error("{}: no such file or folder", .0.display())]
    Missing(PathBuf),
    #[error("scan takes one eval's folder, or trace files: {} is a folder among other arguments", .0.display())]
    Mixed(PathBuf),
    #[error("nothing to scan: give an eval's folder or trace files")]
    Nothing,
    #[error("{}: the eval kept no trace of its tasks (it ran with --no-traces, or before evals kept them): nothing to scan", .0.display())]
    NoTraces(PathBuf),
    #[error(transparent)]
    Results(#[from] results::ResultsError),
}

/// What `scan` was pointed at.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Eval(PathBuf),
    Traces(Vec<PathBuf>),
}

/// One trace to scan and what is known of it besides its events.
#[derive(Clone, Debug)]
pub struct Item {
    /// How the results name it: relative to the eval's folder, or as given.
    pub trace: String,
    pub path: PathBuf,
    pub setting: Option<String>,
    pub context: RunContext,
    /// The eval's row of its task, when it is an eval's.
    pub row: Option<TaskRow>,
}

impl Source {
    pub fn open(args: &[PathBuf]) -> Result<Source, SourceError> {
        let Some(first) = args.first() else { return Err(SourceError::Nothing) };
        for a in args {
            if !a.exists() {
                return Err(SourceError::Missing(a.clone()));
            }
            if a.is_dir() && args.len() > 1 {
                return Err(SourceError::Mixed(a.clone()));
            }
        }
        if first.is_dir() {
            if !first.join(META).is_file() {
                return Err(SourceError::NotAnEval(first.clone()));
            }
            return Ok(Source::Eval(first.clone()));
        }
        Ok(Source::Traces(args.to_vec()))
    }

    /// What it is, for the report's first line.
    pub fn describe(&self) -> String {
        match self {
            Source::Eval(d) => format!("the eval {}", d.display()),
            Source::Traces(f) if f.len() == 1 => format!("the trace {}", f[0].display()),
            Source::Traces(f) => format!("{} traces", f.len()),
        }
    }

    /// The traces, in the eval's order (setting, then task).
    pub fn items(&self) -> Result<Vec<Item>, SourceError> {
        match self {
            Source::Traces(files) => Ok(files
                .iter()
                .map(|p| Item {
                    trace: p.display().to_string(),
                    path: p.clone(),
                    setting: None,
                    context: RunContext::default(),
                    row: None,
                })
                .collect()),
            Source::Eval(dir) => {
                let (rows, _) = results::read_rows(&dir.join(RESULTS))?;
                if !rows.is_empty() && !dir.join(results::TRACES).is_dir() {
                    return Err(SourceError::NoTraces(dir.clone()));
                }
                let by = results::by_setting(&rows);
                Ok(by
                    .into_iter()
                    .flat_map(|(_, rows)| rows.into_iter().cloned())
                    .map(|row| {
                        let path = results::trace_path(dir, &row.setting, row.index);
                        Item {
                            trace: path.strip_prefix(dir).unwrap_or(&path).display().to_string(),
                            path,
                            setting: Some(row.setting.clone()),
                            context: RunContext { gold_tools: row.gold_tools.clone() },
                            row: Some(row),
                        }
                    })
                    .collect())
            }
        }
    }

    /// Where the scan's folder goes unless told: beside an eval
    /// (`EVALS/scans/NAME`), or under the data directory for traces.
    pub fn default_out(&self, data_dir: Option<&Path>) -> Option<PathBuf> {
        match self {
            Source::Eval(dir) => {
                let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
                Some(dir.parent()?.join("scans").join(dir.file_name()?))
            }
            Source::Traces(files) => {
                let stem = files.first()?.file_stem()?.to_string_lossy().to_string();
                Some(data_dir?.join("scans").join(stem))
            }
        }
    }

    /// Where the trace named `trace` in the results is on disk.
    pub fn path_of(&self, trace: &str) -> PathBuf {
        match self {
            Source::Eval(dir) => dir.join(trace),
            Source::Traces(_) => PathBuf::from(trace),
        }
    }
}
