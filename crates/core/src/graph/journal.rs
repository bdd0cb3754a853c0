//! The journal beside a snapshot file: the ops applied since the snapshot was
//! written, one JSON line each. Saving an update then costs a line of about
//! a hundred bytes instead of a rewrite of the whole graph, whose `start`
//! row alone has an edge per tool, each growing a history point per update.
//!
//! ```text
//! {"journal":1,"extends":<head of the snapshot>}
//! {"prev":<head>,"head":<head>,"op":{"scores":{"deltas":{"a":2},"alpha":0.5,"beta":0.5}}}
//! ```
//!
//! A crash cannot leave a state that loads as garbage: the header is
//! written atomically and lines are appended in one write each, so a kill
//! or a power cut can only cut the last line short; reading ignores a last
//! line without its newline, and the next writer cuts it off. Appends are
//! not synced one by one (a killed process loses nothing the kernel has);
//! [`Journal::sync`] makes them survive a power cut too. A journal whose
//! header names another head was left over from an older snapshot (one
//! rewritten since) and is ignored.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::GraphError;
use super::ops::Op;
use super::tool_graph::ToolGraph;

const FORMAT_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct Header {
    journal: u32,
    extends: u64,
}

#[derive(Serialize, Deserialize)]
struct Entry<O> {
    prev: u64,
    head: u64,
    op: O,
}

/// The journal of the snapshot at `snapshot`: the same name with
/// `.journal` added (`graph.json.journal`).
pub(super) fn path_beside(snapshot: &Path) -> PathBuf {
    let mut name = snapshot.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

/// What [`replay`] found in a journal that extends the graph it was given.
pub(super) struct Replayed {
    /// The number of entries replayed.
    pub(super) entries: usize,
    /// The length of the complete lines: what a writer keeps.
    pub(super) len: u64,
    /// The head written with the last entry (the header's if none).
    pub(super) head: u64,
}

/// Replays the journal at `path` onto `graph`, which must be the snapshot it
/// was written beside. `Ok(None)` if there is no journal, or one that does
/// not extend `graph` (left over from an older snapshot).
pub(super) fn replay(path: &Path, graph: &mut ToolGraph) -> Result<Option<Replayed>, GraphError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(GraphError::Io { path: path.to_owned(), source }),
    };
    let error = |line: usize, reason: String| GraphError::Journal { path: path.to_owned(), line, reason };
    // Only lines with their newline were written whole.
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < bytes.len() {
        tracing::warn!(path = %path.display(), bytes = bytes.len() - complete, "unfinished last journal line ignored");
    }
    if complete == 0 {
        return Ok(None);
    }
    let mut lines = bytes[..complete - 1].split(|&b| b == b'\n');
    let header = lines.next().unwrap_or_default();
    let header: Header = serde_json::from_slice(header).map_err(|e| error(1, format!("not a journal header: {e}")))?;
    if header.journal != FORMAT_VERSION {
        return Err(error(1, format!("format version {} (this build reads {FORMAT_VERSION})", header.journal)));
    }
    if header.extends != graph.head() {
        tracing::warn!(path = %path.display(), "journal of an older snapshot ignored");
        return Ok(None);
    }
    let mut head = header.extends;
    let mut entries = 0;
    for (i, line) in lines.enumerate() {
        let number = i + 2;
        let entry: Entry<Op> = serde_json::from_slice(line).map_err(|e| error(number, e.to_string()))?;
        if entry.prev != head {
            return Err(error(number, "does not follow the line before it (two writers?)".to_owned()));
        }
        apply(graph, &entry.op).map_err(|e| error(number, e.to_string()))?;
        head = entry.head;
        entries += 1;
    }
    Ok(Some(Replayed { entries, len: complete as u64, head }))
}

fn apply(graph: &mut ToolGraph, op: &Op) -> Result<(), GraphError> {
    match op {
        Op::Scores { deltas, alpha, beta } => {
            graph.apply_scores(deltas, *alpha, *beta);
        }
        Op::SetScore { tool, score, alpha, beta } => {
            graph.set_score(tool, *score, *alpha, *beta)?;
        }
        Op::Recompute { alpha, beta } => {
            graph.recompute_all(*alpha, *beta);
        }
        Op::AddTool { name } => {
            graph.add_tool(name)?;
        }
    }
    Ok(())
}

/// A journal open for appending.
#[derive(Debug)]
pub(super) struct Journal {
    path: PathBuf,
    file: File,
    /// The length of the complete lines, to cut a failed append back to.
    len: u64,
    entries: usize,
}

impl Journal {
    /// A new, empty journal extending the snapshot with head `extends`,
    /// replacing any file at `path` atomically.
    pub(super) fn create(path: &Path, extends: u64) -> Result<Self, GraphError> {
        let io_error = |source| GraphError::Io { path: path.to_owned(), source };
        let mut line = serde_json::to_vec(&Header { journal: FORMAT_VERSION, extends })
            .map_err(|source| GraphError::Json { path: path.to_owned(), source })?;
        line.push(b'\n');
        let mut file = atomic_write_file::AtomicWriteFile::open(path).map_err(io_error)?;
        file.write_all(&line).map_err(io_error)?;
        file.commit().map_err(io_error)?;
        Self::append_to(path, line.len() as u64, 0)
    }

    /// The journal `replayed` came from, with an unfinished last line cut
    /// off so that new lines follow whole ones.
    pub(super) fn reopen(path: &Path, replayed: &Replayed) -> Result<Self, GraphError> {
        let journal = Self::append_to(path, replayed.len, replayed.entries)?;
        let io_error = |source| GraphError::Io { path: path.to_owned(), source };
        let len = journal.file.metadata().map_err(io_error)?.len();
        if len > replayed.len {
            journal.file.set_len(replayed.len).map_err(io_error)?;
            journal.file.sync_data().map_err(io_error)?;
        }
        Ok(journal)
    }

    fn append_to(path: &Path, len: u64, entries: usize) -> Result<Self, GraphError> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|source| GraphError::Io { path: path.to_owned(), source })?;
        Ok(Journal { path: path.to_owned(), file, len, entries })
    }

    /// Syncs what was appended to disk.
    pub(super) fn sync(&self) -> Result<(), GraphError> {
        self.file.sync_data().map_err(|source| GraphError::Io { path: self.path.clone(), source })
    }

    /// The number of entries since the header.
    pub(super) fn entries(&self) -> usize {
        self.entries
    }

    /// Appends the ops, each as (head before, op, head after), in one write.
    pub(super) fn append(&mut self, ops: &[(u64, &Op, u64)]) -> Result<(), GraphError> {
        let mut lines = Vec::with_capacity(128 * ops.len());
        for &(prev, op, head) in ops {
            serde_json::to_writer(&mut lines, &Entry { prev, head, op })
                .map_err(|source| GraphError::Json { path: self.path.clone(), source })?;
            lines.push(b'\n');
        }
        let written = self.file.write_all(&lines);
        if let Err(source) = written {
            // A disk that filled up may have taken part of a line: cut it off
            // so the next append does not follow it.
            if let Err(e) = self.file.set_len(self.len) {
                tracing::warn!(path = %self.path.display(), error = %e, "could not cut a failed journal append");
            }
            return Err(GraphError::Io { path: self.path.clone(), source });
        }
        self.len += lines.len() as u64;
        self.entries += ops.len();
        Ok(())
    }
}
