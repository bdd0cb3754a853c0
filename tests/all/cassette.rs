//! Record / replay: content-keyed answers, order independence, duplicates,
//! and errors that name the file and line.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::json;
use switchyard::model::cassette::{Cassette, CassetteError, request_key};
use switchyard::model::{
    ChatModel, ChatRequest, ChatResponse, Message, ModelError, ModelInfo, ModelKind, ResponseSchema, Role,
    ToolCallRequest, Usage,
};

/// Answers with the prompt and how many calls it has had, so a repeated
/// request gets a different answer each time.
struct Counting {
    calls: AtomicUsize,
    simulated: bool,
}

impl Counting {
    fn new(simulated: bool) -> Arc<Self> {
        Arc::new(Counting { calls: AtomicUsize::new(0), simulated })
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl ChatModel for Counting {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "counting".into(), kind: ModelKind::Sim, simulated: self.simulated }
    }
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        let last = req.messages.last().map(|m| m.content.clone()).unwrap_or_default();
        if last == "fail" {
            return Err(ModelError::Other("inner failure".into()));
        }
        Ok(ChatResponse {
            text: format!("{last} #{n}"),
            tool_calls: vec![ToolCallRequest { name: "echo".into(), arguments: json!({"n": n}) }],
            usage: Usage::new(10 + n as u64, n as u64),
            wire: None,
            capped: false,
        })
    }
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest::new(Role::Solver, vec![Message::system("sys"), Message::user(text)])
}

#[tokio::test]
async fn replay_answers_by_content_in_any_order_without_the_inner_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let inner = Counting::new(false);
    let requests = [ask("alpha"), ask("beta"), ask("gamma")];

    let recorder = Cassette::record(inner.clone(), &path).unwrap();
    assert_eq!(recorder.info().name, "counting");
    let mut recorded = Vec::new();
    for r in &requests {
        recorded.push(recorder.chat(r).await.unwrap());
    }
    assert_eq!(inner.calls(), 3);
    drop(recorder);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["key"], request_key(&requests[0]));
    assert_eq!(first["request"], serde_json::to_value(&requests[0]).unwrap());
    assert_eq!(first["response"], serde_json::to_value(&recorded[0]).unwrap());
    assert_eq!(first["model"]["name"], "counting");

    let replay = Cassette::replay(&path).unwrap();
    for i in [2, 0, 1] {
        assert_eq!(replay.chat(&requests[i]).await.unwrap(), recorded[i]);
    }
    assert_eq!(inner.calls(), 3, "replay never calls the recorded model");
    let info = replay.info();
    assert_eq!((info.name.as_str(), info.kind, info.simulated), ("counting", ModelKind::Replay, false));
}

#[tokio::test]
async fn replay_of_a_simulated_model_still_says_simulated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sim.jsonl");
    let recorder = Cassette::record(Counting::new(true), &path).unwrap();
    recorder.chat(&ask("x")).await.unwrap();
    let info = Cassette::replay(&path).unwrap().info();
    assert_eq!(info.kind, ModelKind::Replay);
    assert!(info.simulated);
}

#[tokio::test]
async fn an_unrecorded_request_is_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let recorder = Cassette::record(Counting::new(false), &path).unwrap();
    recorder.chat(&ask("known")).await.unwrap();
    // A failed inner call passes its error through and writes nothing.
    assert_eq!(recorder.chat(&ask("fail")).await.unwrap_err(), ModelError::Other("inner failure".into()));

    let replay = Cassette::replay(&path).unwrap();
    let expected = ModelError::NotRecorded { path: path.display().to_string() };
    assert_eq!(replay.chat(&ask("unknown")).await.unwrap_err(), expected);
    assert_eq!(replay.chat(&ask("fail")).await.unwrap_err(), expected);
    // Same messages, other settings: another request.
    let mut warmer = ask("known");
    warmer.temperature = Some(0.7);
    assert_eq!(replay.chat(&warmer).await.unwrap_err(), expected);
    assert!(replay.chat(&ask("known")).await.is_ok());
}

#[tokio::test]
async fn duplicate_keys_replay_in_recorded_order_then_repeat_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dup.jsonl");
    let recorder = Cassette::record(Counting::new(false), &path).unwrap();
    let a1 = recorder.chat(&ask("same")).await.unwrap();
    let other = recorder.chat(&ask("other")).await.unwrap();
    let a2 = recorder.chat(&ask("same")).await.unwrap();
    assert_ne!(a1, a2);

    let replay = Cassette::replay(&path).unwrap();
    assert_eq!(replay.chat(&ask("same")).await.unwrap(), a1);
    assert_eq!(replay.chat(&ask("same")).await.unwrap(), a2);
    assert_eq!(replay.chat(&ask("same")).await.unwrap(), a2, "the last answer repeats");
    assert_eq!(replay.chat(&ask("other")).await.unwrap(), other);
    assert_eq!(replay.chat(&ask("other")).await.unwrap(), other);
}

#[tokio::test]
async fn recording_appends_to_an_existing_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grow.jsonl");
    let first = Cassette::record(Counting::new(false), &path).unwrap().chat(&ask("one")).await.unwrap();
    let second = Cassette::record(Counting::new(false), &path).unwrap().chat(&ask("two")).await.unwrap();
    let replay = Cassette::replay(&path).unwrap();
    assert_eq!(replay.chat(&ask("one")).await.unwrap(), first);
    assert_eq!(replay.chat(&ask("two")).await.unwrap(), second);
}

#[tokio::test]
async fn a_malformed_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    Cassette::record(Counting::new(false), &path).unwrap().chat(&ask("ok")).await.unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push('\n'); // a blank line is skipped but still counted
    text.push_str("{\"key\": \"abc\", \"request\": 42}\n");
    std::fs::write(&path, text).unwrap();

    match Cassette::replay(&path) {
        Err(e @ CassetteError::Parse { line, .. }) => {
            assert_eq!(line, 3);
            let msg = e.to_string();
            assert!(msg.contains("bad.jsonl") && msg.contains("line 3"), "{msg}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_line_cut_short_by_a_kill_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.jsonl");
    let recorder = Cassette::record(Counting::new(false), &path).unwrap();
    let kept = recorder.chat(&ask("kept")).await.unwrap();
    recorder.chat(&ask("lost")).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    // Cut the second line in half, as a kill mid-write would.
    let cut = text.find('\n').unwrap() + 1 + (text.len() - text.find('\n').unwrap()) / 2;
    std::fs::write(&path, &text[..cut]).unwrap();

    let replay = Cassette::replay(&path).unwrap();
    assert_eq!(replay.chat(&ask("kept")).await.unwrap(), kept);
    assert!(matches!(replay.chat(&ask("lost")).await, Err(ModelError::NotRecorded { .. })));
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.jsonl");
    let err = Cassette::replay(&path).unwrap_err();
    assert!(matches!(err, CassetteError::Io { .. }));
    assert!(err.to_string().contains("absent.jsonl"), "{err}");
}

#[test]
fn the_key_ignores_json_key_order_but_not_content() {
    let with_schema = |schema: serde_json::Value| {
        let mut r = ask("q");
        r.response_schema = Some(ResponseSchema { name: "s".into(), schema });
        r
    };
    let a: serde_json::Value = serde_json::from_str(r#"{"type": "object", "required": ["x"]}"#).unwrap();
    let b: serde_json::Value = serde_json::from_str(r#"{"required": ["x"], "type": "object"}"#).unwrap();
    let c: serde_json::Value = serde_json::from_str(r#"{"required": ["y"], "type": "object"}"#).unwrap();
    assert_eq!(request_key(&with_schema(a.clone())), request_key(&with_schema(b)));
    assert_ne!(request_key(&with_schema(a)), request_key(&with_schema(c)));
    let key = request_key(&ask("q"));
    assert_eq!(key.len(), 64);
    assert!(key.chars().all(|ch| ch.is_ascii_hexdigit()));
    let mut other_role = ask("q");
    other_role.role = Role::Planner;
    assert_ne!(request_key(&other_role), key);
}
