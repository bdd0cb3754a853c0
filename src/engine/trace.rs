//! The JSON Lines trace: written as events happen, flushed line by line, so
//! a killed process loses at most the event being written.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::event::{Event, GraphSnapshot, SCHEMA_VERSION};

#[derive(thiserror::Error, Debug)]
pub enum TraceError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: not a trace event: {why}", path.display())]
    Parse { path: PathBuf, line: usize, why: String },
    #[error("{}:{line}: trace schema version {found}, this build reads versions 1 to {SCHEMA_VERSION}", path.display())]
    Version { path: PathBuf, line: usize, found: u32 },
}

pub struct TraceWriter {
    path: PathBuf,
    file: File,
}

impl TraceWriter {
    pub fn create(path: &Path) -> Result<Self, TraceError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| TraceError::Io { path: dir.to_path_buf(), source })?;
        }
        let file = File::create(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
        Ok(TraceWriter { path: path.to_path_buf(), file })
    }

    pub fn write(&mut self, event: &Event) -> Result<(), TraceError> {
        let mut line = serde_json::to_string(event).map_err(|e| TraceError::Parse {
            path: self.path.clone(),
            line: 0,
            why: e.to_string(),
        })?;
        line.push('\n');
        // One write per line, then flush: a crash cuts at most this line.
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|source| TraceError::Io { path: self.path.clone(), source })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Reads a whole trace. A last line cut short by a crash is dropped (it was
/// the event being written); a bad line anywhere else is an error naming it.
pub fn read_trace(path: &Path) -> Result<Vec<Event>, TraceError> {
    let file = File::open(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let mut events = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if Some(i) == last && !line.ends_with('}') => break,
            Err(e) => return Err(TraceError::Parse { path: path.to_path_buf(), line: i + 1, why: e.to_string() }),
        };
        let v = value.get("v").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
        if v == 1 {
            upgrade_v1(&mut value).map_err(|e| TraceError::Parse { path: path.to_path_buf(), line: i + 1, why: e })?;
        } else if v != SCHEMA_VERSION {
            return Err(TraceError::Version { path: path.to_path_buf(), line: i + 1, found: v });
        }
        let event = serde_json::from_value(value).map_err(|e| TraceError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            why: e.to_string(),
        })?;
        events.push(event);
    }
    Ok(events)
}

/// The graph snapshot as version 1 wrote it: an entry per edge.
#[derive(Deserialize)]
struct SnapshotV1 {
    iteration: u32,
    edges: Vec<(String, String, f64)>,
    scores: Vec<(String, f64)>,
}

/// Reads a version 1 event as version 2. Only the first event's graph
/// snapshot changed shape; an update that lists every changed edge, as
/// version 1 wrote them, is a version 2 update.
fn upgrade_v1(value: &mut Value) -> Result<(), String> {
    if value["type"] != "SessionStarted" {
        return Ok(());
    }
    if let Some(graph) = value.get_mut("graph").filter(|g| !g.is_null()) {
        let old: SnapshotV1 = serde_json::from_value(graph.take()).map_err(|e| e.to_string())?;
        *graph = serde_json::to_value(GraphSnapshot::new(old.iteration, old.edges, old.scores))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
