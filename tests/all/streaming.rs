//! Replies their endpoint streams: each dialect's events put back together
//! into the reply it would have sent whole, the text shown as it arrives,
//! a stream cut off mid-reply by a fault, and a pause that lets a started
//! stream finish and holds the next call.

use std::sync::Arc;

use serde_json::{Value, json};
use switchyard::engine::fold::Entry;
use switchyard::engine::{Control, Event, EventKind, SessionState};
use switchyard::gateway::stream::events;
use switchyard::model::fault::ModelFaultMode;
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::stream::{Delta, Tokens};
use switchyard::model::wire::Dialect;
use switchyard::model::{ChatModel, ChatRequest, ChatResponse, Message, ModelError, Role, ToolDef};
use switchyard::ui::panes::models;
use switchyard::ui::{Navigation, PaneCtx, Theme};
use tokio::sync::Notify;

use super::common;
use super::gateway::rig_traced;
use super::openai::{Reply, Server, text_reply};

const TEXT: &str = "The answer is five, as the add tool said when it was asked.";

/// A reply with text and a tool call, whole, as `dialect` writes it.
fn whole(dialect: Dialect) -> Value {
    let args = r#"{"a":2,"b":3}"#;
    match dialect {
        Dialect::Chat => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": TEXT,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "add", "arguments": args}}]}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21},
        }),
        Dialect::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": [{"type": "text", "text": TEXT},
                {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}],
            "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 12, "output_tokens": 9},
        }),
        Dialect::Responses => json!({
            "id": "resp_1", "object": "response", "status": "completed", "model": "m",
            "output": [
                {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": TEXT, "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": args,
                    "status": "completed"},
            ],
            "usage": {"input_tokens": 12, "output_tokens": 9, "total_tokens": 21},
        }),
    }
}

fn model(server: &Server, dialect: Dialect, retries: u32) -> HttpModel {
    let mut cfg = HttpModelConfig::new("local", server.base_url(), "m");
    cfg.api = dialect;
    cfg.timeout_ms = 5_000;
    cfg.max_retries = retries;
    HttpModel::new(cfg).unwrap()
}

fn request() -> ChatRequest {
    let mut req = ChatRequest::new(Role::Actor, vec![Message::user("What is 2 + 3?")]);
    req.tools = vec![ToolDef {
        name: "add".into(),
        description: "Adds two numbers".into(),
        parameters: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
    }];
    req
}

/// The call's answer and what it told its watcher, in order.
async fn ask(model: &HttpModel, fault: Option<ModelFaultMode>) -> (Result<ChatResponse, ModelError>, Vec<Delta>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let answer = model.chat_streaming(&request(), fault, &Tokens::to(tx)).await;
    let mut told = Vec::new();
    while let Ok(d) = rx.try_recv() {
        told.push(d);
    }
    (answer, told)
}

fn text_of(told: &[Delta]) -> String {
    told.iter().filter_map(|d| if let Delta::Text(t) = d { Some(t.as_str()) } else { None }).collect()
}

#[tokio::test]
async fn each_dialect_s_stream_reassembles_into_the_reply_sent_whole() {
    for dialect in [Dialect::Chat, Dialect::Anthropic, Dialect::Responses] {
        let reply = whole(dialect);
        let server =
            Server::start(vec![Reply::json(200, reply.clone()), Reply::sse(&events(dialect, &reply, true))]).await;
        let m = model(&server, dialect, 0);
        // A server that ignores the ask answers in one piece, read as before.
        let one_piece = m.chat(&request()).await.unwrap();
        assert_eq!(one_piece.text, TEXT, "{dialect:?}");
        assert_eq!(one_piece.tool_calls[0].arguments, json!({"a": 2, "b": 3}), "{dialect:?}");
        let (streamed, told) = ask(&m, None).await;
        assert_eq!(streamed.unwrap(), one_piece, "{dialect:?}: the stream put back together is another reply");
        assert!(told.len() > 3, "{dialect:?}: the text came in one piece: {told:?}");
        let shown = text_of(&told);
        assert!(shown.starts_with(TEXT) && shown.contains("→ add "), "{dialect:?}: {shown}");
        let asked = &server.seen()[1].body;
        assert_eq!(asked["stream"], true, "{dialect:?}");
        if dialect == Dialect::Chat {
            assert_eq!(asked["stream_options"]["include_usage"], true);
        }
    }
}

#[tokio::test]
async fn a_stream_cut_off_mid_reply_is_retried_with_its_text_voided() {
    let sse = events(Dialect::Chat, &whole(Dialect::Chat), true);
    let server = Server::start(vec![Reply::sse(&sse), Reply::sse(&sse)]).await;
    let (answer, told) = ask(&model(&server, Dialect::Chat, 1), Some(ModelFaultMode::Truncated)).await;
    assert_eq!(answer.unwrap().text, TEXT, "the retry reads the whole reply");
    // One piece of text, the break, then the whole reply again.
    assert_eq!(told.iter().position(|d| *d == Delta::Restart), Some(1), "{told:?}");
    assert!(text_of(&told[2..]).starts_with(TEXT));
    assert_eq!(server.seen().len(), 2);

    let server = Server::start(vec![Reply::sse(&sse)]).await;
    let (answer, _) = ask(&model(&server, Dialect::Chat, 0), Some(ModelFaultMode::Truncated)).await;
    let error = answer.unwrap_err().to_string();
    assert!(error.contains("broke off mid-reply") && error.contains("1 attempt"), "{error}");
}

#[tokio::test]
async fn a_stream_that_ends_early_or_sends_an_error_fails_the_attempt() {
    let sse = events(Dialect::Chat, &whole(Dialect::Chat), true);
    let early = &sse[..sse.find("\"finish_reason\":\"tool_calls\"").unwrap()];
    let early = &early[..early.rfind("data: ").unwrap()];
    let error = "data: {\"error\": {\"message\": \"the model crashed\"}}\n\n";
    let server = Server::start(vec![Reply::sse(early), Reply::sse(error)]).await;
    let m = model(&server, Dialect::Chat, 0);
    let e = m.chat(&request()).await.unwrap_err().to_string();
    assert!(e.contains("before the reply was finished"), "{e}");
    let e = m.chat(&request()).await.unwrap_err().to_string();
    assert!(e.contains("the model crashed"), "{e}");
}

fn upstream(server: &Server) -> Arc<dyn ChatModel> {
    Arc::new(model(server, Dialect::Chat, 0))
}

/// An agent's streamed call: the Transcript gets its text before the
/// reply, a pause sent mid-stream lets it finish and holds the next call
/// until a step, and the trace keeps the reply whole.
#[tokio::test]
async fn a_pause_mid_stream_lets_it_finish_and_holds_the_next_call() {
    let sse = events(Dialect::Chat, &whole(Dialect::Chat), true);
    let go = Arc::new(Notify::new());
    // Held after its third event: some text has arrived, the rest has not.
    let at = sse.match_indices("data: ").nth(3).unwrap().0;
    let server = Server::start(vec![Reply::sse(&sse).held(at, go.clone()), text_reply("Done.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let mut rig = rig_traced(upstream(&server), switchyard::gateway::DEFAULT_MAX_BODY, Some(&trace), Vec::new()).await;
    let (http, url, token) = (rig.http.clone(), rig.url(Dialect::Chat), rig.gateway.token().expose().to_string());
    let agent = |stream: bool| {
        let (http, url, token) = (http.clone(), url.clone(), token.clone());
        tokio::spawn(async move {
            let ask = json!({"model": "m", "stream": stream, "max_tokens": 50, "messages": [{"role": "user", "content": "2 + 3?"}]});
            let resp = http.post(url).bearer_auth(token).json(&ask).send().await.unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap())
        })
    };
    let first = agent(true);
    let mut seen: Vec<Event> = Vec::new();
    let mut state = SessionState::default();
    while !matches!(seen.last().map(|e| &e.kind), Some(EventKind::ModelTokens { .. })) {
        seen.push(rig.events.recv().await.unwrap());
        state.apply(seen.last().unwrap());
    }
    let shown = state.current.as_ref().and_then(|r| r.transcript.last()).cloned();
    assert!(matches!(&shown, Some(Entry::Streaming { text, .. }) if TEXT.starts_with(text.as_str())), "{shown:?}");
    rig.handle.send(Control::Pause);
    go.notify_one();
    let (status, body) = first.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("add"), "{body}");
    let second = agent(false);
    while !matches!(seen.last().map(|e| &e.kind), Some(EventKind::Paused)) {
        seen.push(rig.events.recv().await.unwrap());
    }
    rig.handle.send(Control::Step);
    let (status, body) = second.await.unwrap();
    assert_eq!((status, body.contains("Done.")), (200, true), "{body}");
    seen.extend(rig.finish().await);
    for e in &seen {
        state.apply(e);
    }

    let names: Vec<&str> = seen.iter().map(|e| e.kind.name()).collect();
    let at =
        |f: &dyn Fn(&EventKind) -> bool| seen.iter().position(|e| f(&e.kind)).unwrap_or_else(|| panic!("{names:?}"));
    let reply = at(&|k| matches!(k, EventKind::ModelReply { call: 1, .. }));
    let paused = at(&|k| matches!(k, EventKind::Paused));
    let stepped = at(&|k| matches!(k, EventKind::Stepped));
    let second_call = at(&|k| matches!(k, EventKind::ModelCall { call, .. } if *call > 1));
    // The stream that had started finished under the pause (the engine
    // hears the pause while it runs); the next call waited for the step.
    assert!(
        paused < stepped && reply < second_call && stepped < second_call,
        "{reply} {paused} {stepped} {second_call}"
    );
    assert!(matches!(&seen[reply].kind, EventKind::ModelReply { first_token_ms: Some(_), .. }));
    assert!(matches!(&seen[second_call + 1].kind, EventKind::ModelReply { first_token_ms: None, .. }));
    let tokens = seen.iter().filter(|e| matches!(e.kind, EventKind::ModelTokens { .. })).count();
    assert!(tokens > 3, "{tokens} pieces");
    // The Transcript's streamed text gave way to the reply; the Models
    // pane counts one streamed reply.
    let transcript = state.current.as_ref().map(|r| r.transcript.clone()).unwrap_or_default();
    assert!(!transcript.iter().any(|e| matches!(e, Entry::Streaming { .. })));
    let account = state.accounts.values().next().unwrap();
    assert_eq!((account.calls, account.streamed), (2, 1));
    let (theme, nav) = (Theme::default(), Navigation::default());
    let ctx = PaneCtx { state: &state, nav: &nav, theme: &theme, focused: true, now_ms: state.t };
    let pane = common::buffer_text(&common::render(120, 8, |f| models::render(f, f.area(), &ctx)));
    assert!(pane.contains("1st tok") && pane.contains("tok/s"), "{pane}");

    // The agent's streamed request reached the upstream as it was sent.
    let sent =
        json!({"model": "m", "stream": true, "max_tokens": 50, "messages": [{"role": "user", "content": "2 + 3?"}]});
    assert_eq!(server.seen()[0].body, sent);

    let written = std::fs::read_to_string(&trace).unwrap();
    assert!(!written.contains("ModelTokens"), "the trace keeps the pieces");
    let replies: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "ModelReply")
        .collect();
    assert_eq!(replies[0]["text"], TEXT, "the trace keeps the whole reply");
}

/// A call through `m`, and what it told its watcher.
async fn told(m: &dyn ChatModel, req: ChatRequest) -> (ChatResponse, Vec<Delta>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = m.chat_streaming(&req, None, &Tokens::to(tx)).await.unwrap();
    let mut pieces = Vec::new();
    while let Ok(d) = rx.try_recv() {
        pieces.push(d);
    }
    (r, pieces)
}

/// A recorded stream replays as one piece, so a replayed trace times its
/// first token as the recording did; an unstreamed answer replays silent.
#[tokio::test]
async fn a_cassette_replays_a_stream_where_the_recording_streamed() {
    use switchyard::model::cassette::Cassette;
    let reply = whole(Dialect::Chat);
    let server = Server::start(vec![Reply::sse(&events(Dialect::Chat, &reply, true)), Reply::json(200, reply)]).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("models.jsonl");
    let recorder = Cassette::record(Arc::new(model(&server, Dialect::Chat, 0)), &path).unwrap();
    let mut other = request();
    other.messages.push(Message::user("And again?"));
    let (streamed, pieces) = told(&recorder, request()).await;
    assert!(pieces.len() > 3);
    let (whole_reply, pieces) = told(&recorder, other.clone()).await;
    assert!(pieces.is_empty(), "the server answered in one piece");

    let replay = Cassette::replay(&path).unwrap();
    let (again, pieces) = told(&replay, request()).await;
    assert_eq!(again, streamed);
    assert_eq!(pieces, [Delta::Text(TEXT.to_string())]);
    let (again, pieces) = told(&replay, other).await;
    assert_eq!((again, pieces), (whole_reply, vec![]));
}
