//! Record and replay of tool calls, so a session whose tools cost money or
//! cannot be reached here can run again without them.
//!
//! A tool cassette is JSON Lines, one call a line:
//! `{"tool": .., "args": .., "result": ..|"error": {"kind", "message"}, "latency_ms": ..}`.
//! Like the model cassette it is keyed by content, not by call order: the
//! tool's name and its arguments in canonical form (object keys sorted at
//! every depth), so concurrent lanes and arguments written in another order
//! find their answers.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{ToolError, ToolErrorKind, ToolResult};
use crate::jsonl::{JsonlError, read_records};

#[derive(thiserror::Error, Debug)]
pub enum TapeError {
    #[error("tool cassette {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("tool cassette {}:{line}: {message}", path.display())]
    Parse { path: PathBuf, line: usize, message: String },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Outcome {
    Result(Value),
    Error(ToolError),
}

#[derive(Serialize, Deserialize)]
struct Line {
    tool: String,
    args: Value,
    #[serde(flatten)]
    outcome: Outcome,
    latency_ms: u64,
}

/// The answers recorded for one key, handed out in recorded order; the
/// last one repeats once they run out (a model that retries a call more
/// often than it was recorded still gets the tool's last word).
struct Answers {
    calls: Vec<(Outcome, u64)>,
    next: usize,
}

enum Mode {
    Record(Mutex<File>),
    Replay { answers: Mutex<HashMap<String, Answers>>, latency: bool },
}

pub struct ToolTape {
    path: PathBuf,
    mode: Mode,
}

impl std::fmt::Debug for ToolTape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.mode {
            Mode::Record(_) => "record",
            Mode::Replay { .. } => "replay",
        };
        f.debug_struct("ToolTape").field("path", &self.path).field("mode", &mode).finish()
    }
}

/// Object keys sorted at every depth, so `{"a":1,"b":2}` and `{"b":2,"a":1}`
/// are one call.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), canonical(v))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn key(tool: &str, args: &Value) -> String {
    format!("{tool}\n{}", canonical(args))
}

impl ToolTape {
    /// Appends every call to `path` (created if missing, extended if not;
    /// a last line a killed recorder left unfinished is cut off first).
    pub fn record(path: &Path) -> Result<Self, TapeError> {
        let file =
            crate::jsonl::open_append(path).map_err(|source| TapeError::Io { path: path.to_path_buf(), source })?;
        Ok(ToolTape { path: path.to_path_buf(), mode: Mode::Record(Mutex::new(file)) })
    }

    /// Loads a cassette to answer calls from. `latency`: each answer waits
    /// as long as the recorded call took. A final line cut short by a
    /// killed recorder is dropped with a warning; any other malformed line
    /// is an error naming it.
    pub fn replay(path: &Path, latency: bool) -> Result<Self, TapeError> {
        let lines: Vec<Line> = read_records(path, "tool cassette").map_err(|e| match e {
            JsonlError::Io(source) => TapeError::Io { path: path.to_path_buf(), source },
            JsonlError::Parse { line, message } => TapeError::Parse { path: path.to_path_buf(), line, message },
        })?;
        let mut answers: HashMap<String, Answers> = HashMap::new();
        for line in lines {
            answers
                .entry(key(&line.tool, &line.args))
                .or_insert_with(|| Answers { calls: Vec::new(), next: 0 })
                .calls
                .push((line.outcome, line.latency_ms));
        }
        Ok(ToolTape { path: path.to_path_buf(), mode: Mode::Replay { answers: Mutex::new(answers), latency } })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn is_replay(&self) -> bool {
        matches!(self.mode, Mode::Replay { .. })
    }

    /// The recorded answer to a call; a call the cassette does not hold is
    /// a tool error, never an invented answer.
    pub async fn answer(&self, tool: &str, args: &Value) -> ToolResult {
        let Mode::Replay { answers, latency } = &self.mode else {
            return Err(ToolError::new(ToolErrorKind::Failed, "tool cassette is recording, not replaying"));
        };
        let found = {
            let mut answers = answers.lock().unwrap_or_else(|p| p.into_inner());
            answers.get_mut(&key(tool, args)).and_then(|a| {
                let i = a.next.min(a.calls.len().saturating_sub(1));
                a.next = a.next.saturating_add(1);
                a.calls.get(i).cloned()
            })
        };
        let Some((outcome, latency_ms)) = found else {
            return Err(ToolError::new(
                ToolErrorKind::Failed,
                format!("not recorded: tool {tool} with arguments {} (in {})", canonical(args), self.path.display()),
            ));
        };
        if *latency && latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(latency_ms)).await;
        }
        match outcome {
            Outcome::Result(v) => Ok(v),
            Outcome::Error(e) => Err(e),
        }
    }

    /// Appends one finished call: a whole line in one write under the lock,
    /// flushed, so concurrent lanes never interleave and a kill loses
    /// nothing already answered.
    pub fn append(&self, tool: &str, args: &Value, result: &ToolResult, latency_ms: u64) -> Result<(), ToolError> {
        let Mode::Record(file) = &self.mode else {
            return Ok(());
        };
        let outcome = match result {
            Ok(v) => Outcome::Result(v.clone()),
            Err(e) => Outcome::Error(e.clone()),
        };
        let line = Line { tool: tool.to_string(), args: canonical(args), outcome, latency_ms };
        let fail = |e: String| {
            ToolError::new(
                ToolErrorKind::Failed,
                format!("tool cassette {}: could not write: {e}", self.path.display()),
            )
        };
        let mut text = serde_json::to_string(&line).map_err(|e| fail(e.to_string()))?;
        text.push('\n');
        let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(text.as_bytes()).and_then(|()| f.flush()).map_err(|e| fail(e.to_string()))
    }
}
