//! Durable learnt state: a graph kept on disk as a snapshot (`snapshot.rs`)
//! and a journal of the ops applied since (`journal.rs`). The engine saves
//! after every task; a save writes only what changed (nothing if nothing
//! did), and a run killed at any instant loads back everything up to its
//! last save. [`ToolGraph::save`] and [`ToolGraph::load`] use the same two
//! files.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::error::GraphError;
use super::journal::{self, Journal};
use super::snapshot;
use super::tool_graph::ToolGraph;

/// Replaying a journal entry costs about as much per tool as reading this
/// many bytes of snapshot (measured at 4,000 and 16,000 tools: 37 and 48).
/// A save rewrites the snapshot once the journal would take longer to
/// replay than the snapshot to read, so a load never takes much more than
/// twice the reading. The snapshot grows by a history point per `start`
/// edge per update: rewrites after a fixed count of entries would cost more
/// and more per save, while this rule spaces them out as the file grows.
const REPLAY_BYTES_PER_TOOL: u64 = 40;

/// A graph's files: the snapshot at the given path and its journal beside it
/// (`graph.json` and `graph.json.journal`).
///
/// ```no_run
/// # use switchyard_core::graph::{GraphError, GraphStore, ToolGraph};
/// # fn run(tools: &[String], tasks: &[std::collections::BTreeMap<String, i32>]) -> Result<(), GraphError> {
/// let (saved, mut store) = GraphStore::open("data/graph.json")?;
/// let mut graph = saved.unwrap_or_else(|| ToolGraph::fully_connected(tools));
/// for deltas in tasks {
///     graph.apply_scores(deltas, 0.5, 0.5);
///     store.save(&graph)?; // a line in the journal (store.sync() puts it on disk)
/// }
/// # Ok(())
/// # }
/// ```
///
/// The store expects to be the only writer of its files while it is open;
/// if the snapshot is rewritten behind its back (by [`ToolGraph::save`]),
/// its next save rewrites the snapshot rather than extend a journal the
/// other file no longer matches.
#[derive(Debug)]
pub struct GraphStore {
    path: PathBuf,
    journal_path: PathBuf,
    /// The head (see `ops.rs`) of the state on disk, snapshot and journal
    /// together; `None` when nothing is there, or nothing this store trusts.
    saved: Option<u64>,
    /// The head of the snapshot on disk, which a new journal must extend.
    snapshot_head: Option<u64>,
    journal: Option<Journal>,
    /// The snapshot as this store last wrote or read it.
    stamp: Option<Stamp>,
    /// A fixed number of journal entries after which to rewrite the
    /// snapshot, instead of the measured rule of [`REPLAY_BYTES_PER_TOOL`].
    compact_after: Option<usize>,
}

/// Enough of a file's metadata to notice that it was replaced.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(Stamp { len: meta.len(), modified: meta.modified().ok() })
    }
}

impl GraphStore {
    /// Opens the store whose snapshot is at `path`, with the graph saved
    /// there (snapshot and journal), or `None` if there is no snapshot yet.
    /// An unfinished last journal line (a crash while saving) is dropped;
    /// a file that is damaged otherwise is an error naming it.
    pub fn open(path: impl Into<PathBuf>) -> Result<(Option<ToolGraph>, GraphStore), GraphError> {
        let path = path.into();
        let journal_path = journal::path_beside(&path);
        let mut store = GraphStore {
            path,
            journal_path,
            saved: None,
            snapshot_head: None,
            journal: None,
            stamp: None,
            compact_after: None,
        };
        // Stamped before reading: if the file changes in between, the next
        // save sees a stamp that does not match and rewrites it.
        store.stamp = Stamp::of(&store.path);
        let mut graph = match snapshot::read(&store.path) {
            Ok(graph) => graph,
            Err(GraphError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                store.stamp = None;
                return Ok((None, store));
            }
            Err(e) => return Err(e),
        };
        store.snapshot_head = Some(graph.head());
        store.saved = Some(graph.head());
        if let Some(replayed) = journal::replay(&store.journal_path, &mut graph)? {
            store.saved = Some(replayed.head);
            store.journal = Some(Journal::reopen(&store.journal_path, &replayed)?);
        }
        Ok((Some(graph), store))
    }

    /// Rewrites the snapshot once the journal would hold more than `ops`
    /// entries, rather than when replaying it would take longer than
    /// reading the snapshot (the default).
    pub fn compact_after(mut self, ops: usize) -> Self {
        self.compact_after = Some(ops);
        self
    }

    /// The snapshot's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes `graph` the saved state, durably against a killed process
    /// (see [`GraphStore::sync`] for a power cut). Returns
    /// whether anything was written: `false` if the files already hold
    /// `graph`'s state. Usually a journal line per op since the last save;
    /// the whole snapshot when the journal has grown as costly to replay as
    /// the snapshot is to read, or when `graph` is not the graph saved last
    /// (another one, or one more than a thousand ops ahead).
    pub fn save(&mut self, graph: &ToolGraph) -> Result<bool, GraphError> {
        if self.stamp.is_some() && Stamp::of(&self.path) != self.stamp {
            tracing::warn!(path = %self.path.display(), "graph file replaced by another writer; rewriting it");
            self.saved = None;
        }
        if self.saved == Some(graph.head()) {
            return Ok(false);
        }
        let ops = self.saved.and_then(|saved| graph.log.since(saved));
        let journalled = self.journal.as_ref().map_or(0, Journal::entries);
        match (ops, self.snapshot_head) {
            (Some(ops), Some(extends)) if !self.compaction_due(journalled + ops.len(), graph) => {
                let journal = match &mut self.journal {
                    Some(journal) => journal,
                    none => none.insert(Journal::create(&self.journal_path, extends)?),
                };
                journal.append(&ops)?;
                self.saved = Some(graph.head());
            }
            _ => self.compact(graph)?,
        }
        Ok(true)
    }

    /// Syncs the journal to disk, so what was saved survives a power cut
    /// as well as a killed process (a session does it as it ends).
    pub fn sync(&mut self) -> Result<(), GraphError> {
        self.journal.as_ref().map_or(Ok(()), Journal::sync)
    }

    fn compaction_due(&self, entries: usize, graph: &ToolGraph) -> bool {
        match self.compact_after {
            Some(limit) => entries > limit,
            None => {
                let snapshot = self.stamp.map_or(0, |s| s.len);
                entries as u64 * graph.tool_count().max(1) as u64 * REPLAY_BYTES_PER_TOOL > snapshot
            }
        }
    }

    /// Writes `graph` as the snapshot and starts an empty journal: loading
    /// then reads one file and replays nothing.
    pub fn compact(&mut self, graph: &ToolGraph) -> Result<(), GraphError> {
        let head = graph.head();
        // Forgotten first, so a failure below leaves a store that rewrites
        // everything next time rather than trusting half-written files.
        self.saved = None;
        self.journal = None;
        let unchanged = self.snapshot_head == Some(head) && Stamp::of(&self.path) == self.stamp;
        if !unchanged {
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| GraphError::Io { path: dir.to_owned(), source })?;
            }
            snapshot::write(graph, &self.path)?;
            self.stamp = Stamp::of(&self.path);
            self.snapshot_head = Some(head);
        }
        // The snapshot is written before the journal is emptied: a crash in
        // between leaves a journal of the older snapshot, which is ignored.
        self.journal = Some(Journal::create(&self.journal_path, head)?);
        self.saved = Some(head);
        Ok(())
    }
}

impl ToolGraph {
    /// Writes the whole graph (nodes, edges with w⁰ and w, scores, iteration,
    /// history) as JSON, atomically: a crash leaves the old file or the new
    /// one, never a mix. A journal beside it (see [`GraphStore`]) is removed,
    /// as it extended the file this one replaces.
    pub fn save(&self, path: &Path) -> Result<(), GraphError> {
        snapshot::write(self, path)?;
        let journal = journal::path_beside(path);
        match std::fs::remove_file(&journal) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(GraphError::Io { path: journal, source: e }),
            _ => Ok(()),
        }
    }

    /// Reads a graph written by [`ToolGraph::save`] or a [`GraphStore`],
    /// replaying the journal beside it if there is one, and checking that it
    /// is consistent (known nodes, the required edges, rows summing to 1).
    pub fn load(path: &Path) -> Result<Self, GraphError> {
        let mut graph = snapshot::read(path)?;
        journal::replay(&journal::path_beside(path), &mut graph)?;
        Ok(graph)
    }
}
