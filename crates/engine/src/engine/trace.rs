//! The JSON Lines trace: written as events happen, flushed line by line, so
//! a killed process loses at most the event being written.

use std::fs::File;
use std::io::Write;
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
    #[error("{}: not a trace: {}", path.display(), match torn {
        Some(t) => format!("line {} is incomplete (the writer was probably killed) and no complete event comes before it", t.line),
        None => "the file holds no event".to_string(),
    })]
    Empty { path: PathBuf, torn: Option<TornLine> },
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

/// The last line a killed writer left unfinished: where it is, and how
/// many complete events came before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TornLine {
    /// 1-based.
    pub line: usize,
    pub complete: usize,
}

impl std::fmt::Display for TornLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.complete == 1 { "" } else { "s" };
        write!(
            f,
            "line {} is incomplete: the writer was probably killed; {} complete event{s} read",
            self.line, self.complete
        )
    }
}

/// A trace as read: every complete event, and the torn last line if the
/// writer was killed while writing it.
#[derive(Debug)]
pub struct TraceRead {
    pub events: Vec<Event>,
    pub torn: Option<TornLine>,
}

/// Reads a whole trace. A last line without its newline that does not
/// parse is what a kill mid-write leaves: it is reported in `torn` and the
/// events before it are kept. A bad line anywhere else is an error naming
/// it, and so is a trace with no complete event (an empty file, or one cut
/// in its first line).
pub fn read_trace_file(path: &Path) -> Result<TraceRead, TraceError> {
    let bytes = std::fs::read(path).map_err(|source| TraceError::Io { path: path.to_path_buf(), source })?;
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    // A file that ends with its newline splits into a last, empty piece;
    // any other last piece is a line the writer had not finished.
    let unterminated = lines.pop().filter(|l| !l.is_empty());
    let mut events = Vec::with_capacity(lines.len() + 1);
    let parse_error = |line: usize, why: String| TraceError::Parse { path: path.to_path_buf(), line, why };
    for (i, raw) in lines.iter().enumerate() {
        let text = std::str::from_utf8(raw).map_err(|e| parse_error(i + 1, format!("not UTF-8: {e}")))?;
        if text.trim().is_empty() {
            continue;
        }
        events.push(parse_event(path, i + 1, text)?);
    }
    let mut torn = None;
    if let Some(raw) = unterminated {
        let line = lines.len() + 1;
        // A kill can cut a multi-byte character, or stop right after a
        // complete object before its newline: only the former is torn.
        match std::str::from_utf8(raw).ok().filter(|t| !t.trim().is_empty()) {
            Some(text) => match serde_json::from_str::<Value>(text) {
                Ok(_) => events.push(parse_event(path, line, text)?),
                Err(_) => torn = Some(TornLine { line, complete: events.len() }),
            },
            None if std::str::from_utf8(raw).is_err() => torn = Some(TornLine { line, complete: events.len() }),
            None => {}
        }
    }
    if events.is_empty() {
        return Err(TraceError::Empty { path: path.to_path_buf(), torn });
    }
    Ok(TraceRead { events, torn })
}

/// Reads a whole trace as `read_trace_file` does, for callers that have
/// nowhere to report a torn last line (it is logged).
pub fn read_trace(path: &Path) -> Result<Vec<Event>, TraceError> {
    let read = read_trace_file(path)?;
    if let Some(torn) = read.torn {
        tracing::warn!(path = %path.display(), "{torn}");
    }
    Ok(read.events)
}

fn parse_event(path: &Path, line: usize, text: &str) -> Result<Event, TraceError> {
    let parse_error = |why: String| TraceError::Parse { path: path.to_path_buf(), line, why };
    let mut value: Value = serde_json::from_str(text).map_err(|e| parse_error(e.to_string()))?;
    let v = value.get("v").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
    // Version 2 listed every position of a wrapping task list, which
    // version 3 reads as a cycle as long as the list: nothing to upgrade.
    if v == 1 {
        upgrade_v1(&mut value).map_err(parse_error)?;
    } else if v != 2 && v != SCHEMA_VERSION {
        return Err(TraceError::Version { path: path.to_path_buf(), line, found: v });
    }
    serde_json::from_value(value).map_err(|e| parse_error(e.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<TraceRead, TraceError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        std::fs::write(&p, bytes).unwrap();
        read_trace_file(&p)
    }

    const EVENT: &str = r#"{"v":2,"run":0,"step":0,"t":1,"type":"Paused"}"#;

    #[test]
    fn a_complete_last_line_without_its_newline_is_an_event() {
        let r = read(format!("{EVENT}\n\n{EVENT}").as_bytes()).unwrap();
        assert_eq!((r.events.len(), r.torn), (2, None));
    }

    #[test]
    fn a_torn_last_line_is_reported_with_the_events_before_it() {
        let r = read(format!("{EVENT}\n{EVENT}\n{}", &EVENT[..10]).as_bytes()).unwrap();
        assert_eq!(r.events.len(), 2);
        assert_eq!(r.torn, Some(TornLine { line: 3, complete: 2 }));
        assert_eq!(
            r.torn.unwrap().to_string(),
            "line 3 is incomplete: the writer was probably killed; 2 complete events read"
        );
    }

    #[test]
    fn a_bad_line_before_the_last_is_an_error_naming_it() {
        let e = read(format!("{EVENT}\n{}\n{EVENT}\n", &EVENT[..10]).as_bytes()).unwrap_err();
        assert!(e.to_string().contains("t.jsonl:2"), "{e}");
        let e = read(&[b'{', 0xff, b'\n']).unwrap_err();
        assert!(e.to_string().contains("t.jsonl:1: not a trace event: not UTF-8"), "{e}");
    }

    #[test]
    fn no_complete_event_is_not_a_trace() {
        assert!(matches!(read(b""), Err(TraceError::Empty { torn: None, .. })));
        assert!(matches!(read(b"\n\n"), Err(TraceError::Empty { torn: None, .. })));
        let e = read(&EVENT.as_bytes()[..9]).unwrap_err();
        assert!(matches!(e, TraceError::Empty { torn: Some(TornLine { line: 1, complete: 0 }), .. }), "{e}");
    }
}
