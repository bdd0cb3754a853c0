//! Record and replay of model calls, so a run with a paid model can be
//! debugged again for free (docs/src/models.md).
//!
//! A cassette is JSON Lines, one call a line:
//! `{"key": <hex sha256>, "request": .., "response": .., "model": ..}`.
//! Lines are keyed by the request's content, not by call order, so a replay
//! answers correctly even when concurrent calls finish in another order.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::fault::ModelFaultMode;
use super::stream::{Delta, Tokens};
use super::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, fault_around};
use crate::jsonl::{JsonlError, read_records};

#[derive(thiserror::Error, Debug)]
pub enum CassetteError {
    #[error("cassette {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cassette {}, line {line}: {message}", path.display())]
    Parse { path: PathBuf, line: usize, message: String },
}

#[derive(Serialize, Deserialize)]
struct Line {
    key: String,
    request: ChatRequest,
    response: ChatResponse,
    model: ModelInfo,
    /// The reply streamed in: a replay tells its text as one piece, so the
    /// replayed trace times its first token as the recorded one did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    streamed: bool,
}

/// The answers recorded for one request key (each with whether it
/// streamed), handed out in recorded order; the last one repeats once they
/// run out.
struct Answers {
    responses: Vec<(ChatResponse, bool)>,
    next: usize,
}

enum Mode {
    Record { inner: Arc<dyn ChatModel>, file: Mutex<File> },
    Replay { info: ModelInfo, answers: Mutex<HashMap<String, Answers>> },
}

pub struct Cassette {
    path: PathBuf,
    mode: Mode,
}

impl std::fmt::Debug for Cassette {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match self.mode {
            Mode::Record { .. } => "record",
            Mode::Replay { .. } => "replay",
        };
        f.debug_struct("Cassette").field("path", &self.path).field("mode", &mode).finish()
    }
}

/// The content key of a request: hex sha256 of its canonical JSON (object
/// keys sorted at every depth, so a schema written with its keys in another
/// order is the same request).
pub fn request_key(req: &ChatRequest) -> String {
    let mut v = json!({
        "role": req.role,
        "messages": req.messages,
        "tools": req.tools,
        "response_schema": req.response_schema,
        "temperature": req.temperature,
        "max_tokens": req.max_tokens,
    });
    // A bridged agent's body, whole: two requests that read the same as
    // text may differ in what the agent sent (ids, settings, images).
    if let Some(wire) = &req.wire {
        v["wire"] = json!(wire);
    }
    let digest = Sha256::digest(canonical(v).to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn canonical(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, canonical(v))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(canonical).collect()),
        other => other,
    }
}

impl Cassette {
    /// Passes every call to `inner` and appends each answered call to
    /// `path` (created if missing; an existing cassette is extended, not
    /// truncated). Failed calls are not recorded.
    pub fn record(inner: Arc<dyn ChatModel>, path: &Path) -> Result<Self, CassetteError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| CassetteError::Io { path: path.to_path_buf(), source })?;
        Ok(Cassette { path: path.to_path_buf(), mode: Mode::Record { inner, file: Mutex::new(file) } })
    }

    /// Loads a recorded cassette. A final line cut short by a killed
    /// recorder (no trailing newline, not valid JSON) is dropped with a
    /// warning; any other malformed line is an error naming it.
    pub fn replay(path: &Path) -> Result<Self, CassetteError> {
        let lines: Vec<Line> = read_records(path, "cassette").map_err(|e| match e {
            JsonlError::Io(source) => CassetteError::Io { path: path.to_path_buf(), source },
            JsonlError::Parse { line, message } => CassetteError::Parse { path: path.to_path_buf(), line, message },
        })?;
        let mut answers: HashMap<String, Answers> = HashMap::new();
        let mut info: Option<ModelInfo> = None;
        for line in lines {
            info.get_or_insert(line.model);
            answers
                .entry(line.key)
                .or_insert_with(|| Answers { responses: Vec::new(), next: 0 })
                .responses
                .push((line.response, line.streamed));
        }
        let info = match info {
            Some(m) => ModelInfo { name: m.name, kind: ModelKind::Replay, simulated: m.simulated },
            None => ModelInfo {
                name: path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
                kind: ModelKind::Replay,
                simulated: false,
            },
        };
        Ok(Cassette { path: path.to_path_buf(), mode: Mode::Replay { info, answers: Mutex::new(answers) } })
    }

    /// A replay that stands in for one configured model: it answers from
    /// the whole cassette (requests are keyed by content, roles included)
    /// and bears that model's name, marked as a replay.
    pub fn replay_as(path: &Path, model: &ModelInfo) -> Result<Self, CassetteError> {
        let mut c = Cassette::replay(path)?;
        if let Mode::Replay { info, .. } = &mut c.mode {
            *info = ModelInfo { name: model.name.clone(), kind: ModelKind::Replay, simulated: model.simulated };
        }
        Ok(c)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn append(&self, file: &Mutex<File>, line: &Line) -> Result<(), ModelError> {
        let mut text = serde_json::to_string(line).map_err(|e| {
            ModelError::Other(format!("cassette {}: could not encode a call: {e}", self.path.display()))
        })?;
        text.push('\n');
        // One write of the whole line under the lock: concurrent calls never
        // interleave, and nothing sits in a user-space buffer.
        let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(text.as_bytes())
            .and_then(|()| f.flush())
            .map_err(|e| ModelError::Other(format!("cassette {}: could not write: {e}", self.path.display())))
    }
}

impl Cassette {
    fn keep(
        &self,
        inner: &dyn ChatModel,
        file: &Mutex<File>,
        req: &ChatRequest,
        response: ChatResponse,
        streamed: bool,
    ) -> Result<ChatResponse, ModelError> {
        let line = Line { key: request_key(req), request: req.clone(), response, model: inner.info(), streamed };
        self.append(file, &line)?;
        Ok(line.response)
    }
}

#[async_trait]
impl ChatModel for Cassette {
    fn info(&self) -> ModelInfo {
        match &self.mode {
            Mode::Record { inner, .. } => inner.info(),
            Mode::Replay { info, .. } => info.clone(),
        }
    }

    /// While recording, a transport fault goes to the recorded model (its
    /// retries meet it) and a spoiling one spoils the reply after it is
    /// recorded, so a replay is never of a fault.
    async fn chat_with_fault(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
    ) -> Result<ChatResponse, ModelError> {
        match (&self.mode, fault) {
            (Mode::Record { inner, file }, Some(f)) if f.is_transport() => {
                let response = inner.chat_with_fault(req, Some(f)).await?;
                self.keep(inner.as_ref(), file, req, response, false)
            }
            _ => fault_around(self, req, fault).await,
        }
    }

    /// While recording, the recorded model streams to the watcher; a
    /// replay answers in one piece.
    async fn chat_streaming(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
        tokens: &Tokens,
    ) -> Result<ChatResponse, ModelError> {
        match (&self.mode, fault) {
            (Mode::Record { inner, file }, None) => {
                let response = inner.chat_streaming(req, None, tokens).await?;
                self.keep(inner.as_ref(), file, req, response, tokens.told())
            }
            (Mode::Replay { .. }, None) => {
                let (response, streamed) = self.answer(req)?;
                if streamed {
                    tokens.send(Delta::Text(shown(&response)));
                }
                Ok(response)
            }
            _ => self.chat_with_fault(req, fault).await,
        }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        match &self.mode {
            Mode::Record { inner, file } => {
                let response = inner.chat(req).await?;
                self.keep(inner.as_ref(), file, req, response, false)
            }
            Mode::Replay { .. } => self.answer(req).map(|(response, _)| response),
        }
    }
}

impl Cassette {
    /// The next recorded answer to `req`, and whether it streamed.
    fn answer(&self, req: &ChatRequest) -> Result<(ChatResponse, bool), ModelError> {
        let not_recorded = || ModelError::NotRecorded { path: self.path.display().to_string() };
        let Mode::Replay { answers, .. } = &self.mode else { return Err(not_recorded()) };
        let mut answers = answers.lock().unwrap_or_else(|p| p.into_inner());
        let a = answers.get_mut(&request_key(req)).ok_or_else(not_recorded)?;
        let i = a.next.min(a.responses.len().saturating_sub(1));
        a.next = a.next.saturating_add(1);
        a.responses.get(i).cloned().ok_or_else(not_recorded)
    }
}

/// A recorded reply's text as one piece (its tool calls when it has none).
fn shown(r: &ChatResponse) -> String {
    if !r.text.is_empty() {
        return r.text.clone();
    }
    r.tool_calls.iter().map(|c| format!("→ {} {}", c.name, c.arguments)).collect::<Vec<_>>().join("\n")
}
