//! Past tool usages, the experience BTP's estimates are drawn from (BTP §2.2,
//! docs/src/papers/btp.md): a JSON Lines store in the data directory, an
//! importer for recorded trajectories, and the rule-based helpfulness judge.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tally::Tally;
use crate::tool::nothing_found::is_nothing_found;

/// One past tool usage: U = (q, t, args, result, score ∈ {0,1}).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experience {
    pub query: String,
    pub tool: String,
    #[serde(default)]
    pub args: Value,
    #[serde(default)]
    pub result: Value,
    pub helpful: bool,
}

impl Experience {
    /// The record as a fork or a batch starts from it.
    fn without_payload(&self) -> Experience {
        Experience {
            query: self.query.clone(),
            tool: self.tool.clone(),
            args: Value::Null,
            result: Value::Null,
            helpful: self.helpful,
        }
    }
}

#[derive(thiserror::Error, Debug)]
pub enum ExperienceError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{}:{line}: {why}", path.display())]
    Parse { path: PathBuf, line: usize, why: String },
}

/// How the file ended when it was read, so the first append leaves it well formed.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tail {
    /// Empty, missing, or ending in a newline.
    Clean,
    /// The last record parsed but has no newline (written by hand): add one.
    MissingNewline,
    /// The last line was cut by a crash and was dropped: cut the file back to
    /// this length, else the next record would be glued onto the fragment.
    Remnant(u64),
}

/// The store: JSON Lines in the data directory (`experience.jsonl`),
/// appended after each run, flushed per write.
///
/// In memory it keeps only what the estimates read: the usages counted per
/// tool and distinct query ([`Tally`]). The usages themselves, with their
/// arguments and results (whole tool outputs), stay in the file, so a long
/// session's memory grows neither with what its tools returned nor with how
/// many times it ran the same tasks.
#[derive(Debug)]
pub struct ExperienceStore {
    tally: Tally,
    path: Option<PathBuf>,
    tail: Tail,
}

impl ExperienceStore {
    /// Reads the store at `path`. A missing file is an empty store (the file
    /// is created on the first append). A line that does not parse is an
    /// error naming `file:line`, except a last line without a newline, which
    /// is what a crash mid-write leaves and is dropped.
    pub fn open(path: &Path) -> Result<Self, ExperienceError> {
        let mut tally = Tally::new();
        let tail = parse(path, |record| tally.add(&record.query, &record.tool, record.helpful))?;
        Ok(Self { tally, path: Some(path.to_owned()), tail })
    }

    /// The usages in the store at `path`, oldest first, without their
    /// arguments and results (what forks and batches start from). Read as
    /// [`ExperienceStore::open`] reads it.
    pub fn read(path: &Path) -> Result<Vec<Experience>, ExperienceError> {
        let mut records = Vec::new();
        parse(path, |record| records.push(record.without_payload()))?;
        Ok(records)
    }

    /// A store that lives only in memory (tests, evaluation).
    pub fn in_memory(records: Vec<Experience>) -> Self {
        Self { tally: records.iter().collect(), path: None, tail: Tail::Clean }
    }

    /// The usages, counted: what BTP's estimates read.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// How many usages the store holds.
    pub fn len(&self) -> usize {
        self.tally.usages()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Adds `new` to memory and, for a file-backed store, to the file: one
    /// write per line, flushed, so a crash loses at most the line being
    /// written. Memory is only updated for lines that reached the file.
    pub fn append(&mut self, new: &[Experience]) -> Result<(), ExperienceError> {
        let Some(path) = self.path.clone() else {
            new.iter().for_each(|e| self.tally.add(&e.query, &e.tool, e.helpful));
            return Ok(());
        };
        if new.is_empty() {
            return Ok(());
        }
        let io_err = |source| ExperienceError::Io { path: path.clone(), source };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io_err)?;
        }
        let mut file = OpenOptions::new().create(true).append(true).open(&path).map_err(io_err)?;
        match self.tail {
            Tail::Clean => {}
            Tail::MissingNewline => file.write_all(b"\n").map_err(io_err)?,
            Tail::Remnant(len) => file.set_len(len).map_err(io_err)?,
        }
        self.tail = Tail::Clean;
        for record in new {
            let mut line =
                serde_json::to_string(record).map_err(|e| io_err(io::Error::new(io::ErrorKind::InvalidData, e)))?;
            line.push('\n');
            file.write_all(line.as_bytes()).map_err(io_err)?;
            file.flush().map_err(io_err)?;
            self.tally.add(&record.query, &record.tool, record.helpful);
        }
        Ok(())
    }
}

/// Reads the JSON Lines at `path`, giving each record to `each` in order,
/// and says how the file ended.
fn parse(path: &Path, mut each: impl FnMut(Experience)) -> Result<Tail, ExperienceError> {
    let io_err = |source| ExperienceError::Io { path: path.to_owned(), source };
    let text = match File::open(path) {
        Ok(mut f) => {
            let mut text = String::new();
            f.read_to_string(&mut text).map_err(io_err)?;
            text
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_err(e)),
    };
    let mut tail = Tail::Clean;
    let mut offset = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let complete = line.ends_with('\n');
        if line.trim().is_empty() {
            if !complete {
                tail = Tail::Remnant(start as u64);
            }
            continue;
        }
        match serde_json::from_str::<Experience>(line) {
            Ok(record) => {
                each(record);
                if !complete {
                    tail = Tail::MissingNewline;
                }
            }
            Err(_) if !complete => tail = Tail::Remnant(start as u64),
            Err(e) => {
                return Err(ExperienceError::Parse { path: path.to_owned(), line: i + 1, why: e.to_string() });
            }
        }
    }
    Ok(tail)
}

impl<'a> FromIterator<&'a Experience> for Tally {
    fn from_iter<I: IntoIterator<Item = &'a Experience>>(iter: I) -> Self {
        let mut t = Tally::new();
        for e in iter {
            t.add(&e.query, &e.tool, e.helpful);
        }
        t
    }
}

/// One line of a trajectories file.
#[derive(Deserialize)]
struct Trajectory {
    query: String,
    tools: Vec<String>,
    #[serde(default)]
    helpful: Option<Vec<bool>>,
}

/// Imports past trajectories (one `{"query": "...", "tools": ["a", "b"]}`
/// per line, as in `sample-tools/trajectories.jsonl`, optionally with a
/// `"helpful": [true, false]` array aligned with `tools`) as usages. A
/// recorded trajectory is a successful one, so without `helpful` every tool
/// in it counts as helpful. Arguments and results were not recorded: Null.
pub fn import_trajectories(path: &Path) -> Result<Vec<Experience>, ExperienceError> {
    let text = std::fs::read_to_string(path).map_err(|source| ExperienceError::Io { path: path.to_owned(), source })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parse = |why: String| ExperienceError::Parse { path: path.to_owned(), line: i + 1, why };
        let t: Trajectory = serde_json::from_str(line).map_err(|e| parse(e.to_string()))?;
        let helpful = match t.helpful {
            Some(h) if h.len() != t.tools.len() => {
                return Err(parse(format!("{} helpful flags for {} tools", h.len(), t.tools.len())));
            }
            Some(h) => h,
            None => vec![true; t.tools.len()],
        };
        out.extend(t.tools.into_iter().zip(helpful).map(|(tool, helpful)| Experience {
            query: t.query.clone(),
            tool,
            args: Value::Null,
            result: Value::Null,
            helpful,
        }));
    }
    Ok(out)
}

/// The default, rule-based helpfulness judge (BTP §2.4, the blacklist): an
/// error, an empty or null result, a "nothing found" result, or garbage (a
/// string with no letter or digit) is unhelpful; anything else is helpful.
pub fn judge_rule(result: &Result<Value, String>) -> bool {
    match result {
        Err(_) => false,
        Ok(v) if is_nothing_found(v) => false,
        Ok(Value::String(s)) => s.chars().any(char::is_alphanumeric),
        Ok(_) => true,
    }
}
