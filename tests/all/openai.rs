//! The OpenAI-compatible client against an in-process HTTP/1.1 server on
//! loopback that answers in the OpenAI wire format from a script.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::{
    ChatModel, ChatRequest, Message, ModelError, ModelKind, ResponseSchema, Role, ToolDef, tokens,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer. `hang` accepts the request and never answers.
#[derive(Clone)]
pub(crate) struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    hang: bool,
    /// A stream: written without a length, as it goes.
    sse: bool,
    /// Write the body up to this byte, then wait for the test's word.
    hold: Option<(usize, Arc<tokio::sync::Notify>)>,
}

impl Reply {
    pub(crate) fn json(status: u16, body: Value) -> Self {
        Reply::raw(status, &body.to_string())
    }
    pub(crate) fn raw(status: u16, body: &str) -> Self {
        Reply { status, headers: vec![], body: body.to_string(), hang: false, sse: false, hold: None }
    }
    /// A `text/event-stream` body of server-sent events.
    pub(crate) fn sse(events: &str) -> Self {
        Reply { sse: true, ..Reply::raw(200, events) }
    }
    /// The body stops after `at` bytes until `go` is notified.
    pub(crate) fn held(mut self, at: usize, go: Arc<tokio::sync::Notify>) -> Self {
        self.hold = Some((at.min(self.body.len()), go));
        self
    }
    pub(crate) fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
    pub(crate) fn hang() -> Self {
        Reply { status: 0, hang: true, ..Reply::raw(0, "") }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    pub(crate) body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A scripted OpenAI-compatible server on loopback (the model fault tests use it too).
pub(crate) struct Server {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    pub(crate) async fn start(script: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let seen2 = seen.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (seen, script) = (seen2.clone(), script.clone());
                tokio::spawn(async move { serve(stream, seen, script).await });
            }
        });
        Server { addr, seen }
    }

    pub(crate) fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn serve(mut stream: TcpStream, seen: Arc<Mutex<Vec<Seen>>>, script: Arc<Mutex<VecDeque<Reply>>>) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next().unwrap_or_default().split(' ');
    let method = request_line.next().unwrap_or_default().to_string();
    let path = request_line.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or(Value::Null);
    seen.lock().unwrap().push(Seen { method, path, headers, body });

    let reply = script.lock().unwrap().pop_front().unwrap_or_else(|| Reply::raw(599, "test server: script exhausted"));
    if reply.hang {
        std::future::pending::<()>().await;
    }
    let mut out = if reply.sse {
        format!("HTTP/1.1 {} Scripted\r\ncontent-type: text/event-stream\r\nconnection: close\r\n", reply.status)
    } else {
        format!(
            "HTTP/1.1 {} Scripted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            reply.status,
            reply.body.len()
        )
    };
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let (first, rest) = match &reply.hold {
        Some((at, _)) => reply.body.split_at(*at),
        None => (reply.body.as_str(), ""),
    };
    out.push_str(first);
    let _ = stream.write_all(out.as_bytes()).await;
    if let Some((_, go)) = &reply.hold {
        let _ = stream.flush().await;
        go.notified().await;
        let _ = stream.write_all(rest.as_bytes()).await;
    }
    let _ = stream.shutdown().await;
}

pub(crate) fn completion(message: Value, usage: Option<Value>) -> Value {
    let mut v = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    });
    if let Some(u) = usage {
        v["usage"] = u;
    }
    v
}

pub(crate) fn text_reply(text: &str) -> Reply {
    Reply::json(
        200,
        completion(
            json!({"role": "assistant", "content": text}),
            Some(json!({"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17})),
        ),
    )
}

fn config(server: &Server) -> HttpModelConfig {
    let mut cfg = HttpModelConfig::new("local", server.base_url(), "test-model");
    cfg.timeout_ms = 5_000;
    cfg.max_retries = 2;
    cfg
}

fn model(server: &Server) -> HttpModel {
    HttpModel::new(config(server)).unwrap()
}

fn search_tool() -> ToolDef {
    ToolDef {
        name: "search".into(),
        description: "Search the web".into(),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    }
}

fn request() -> ChatRequest {
    ChatRequest::new(Role::Actor, vec![Message::system("You are terse."), Message::user("Say hi.")])
}

fn request_with_tools() -> ChatRequest {
    let mut req = request();
    req.tools = vec![search_tool()];
    req
}

/// Sets an environment variable that only this test reads.
fn set_key(var: &str, value: &str) {
    // SAFETY: each test uses its own variable name, and nothing in this test
    // process reads the environment through libc's getenv while tests run
    // (std's own env access is serialised by std), so no reader races this
    // write.
    unsafe { std::env::set_var(var, value) };
}

#[tokio::test]
async fn plain_reply_with_usage() {
    let server = Server::start(vec![text_reply("Hi.")]).await;
    let m = model(&server);
    let mut req = request();
    req.temperature = Some(0.0);
    req.max_tokens = Some(64);
    let resp = m.chat(&req).await.unwrap();
    assert_eq!(resp.text, "Hi.");
    assert!(resp.tool_calls.is_empty());
    assert_eq!((resp.usage.prompt_tokens, resp.usage.completion_tokens), (12, 5));

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].path, "/v1/chat/completions");
    let body = &seen[0].body;
    assert_eq!(body["model"], "test-model");
    assert_eq!(
        body["messages"],
        json!([{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi."}])
    );
    assert_eq!(body["temperature"], json!(0.0));
    assert_eq!(body["max_tokens"], json!(64));
    assert!(body.get("tools").is_none());
    assert!(body.get("response_format").is_none());
    assert!(seen[0].header("authorization").is_none(), "no key configured, no header");

    let info = m.info();
    assert_eq!(info.name, "local");
    assert_eq!(info.kind, ModelKind::Openai);
    assert!(!info.simulated);
}

#[tokio::test]
async fn a_request_without_a_limit_gets_the_config_s_cap() {
    // llama.cpp's server lets a reply run until the context is full unless
    // told otherwise: a small model then rambles for minutes.
    let server = Server::start(vec![text_reply("a"), text_reply("b")]).await;
    let mut cfg = config(&server);
    cfg.max_tokens = 300;
    let m = HttpModel::new(cfg).unwrap();
    m.chat(&request()).await.unwrap();
    let mut req = request();
    req.max_tokens = Some(16);
    m.chat(&req).await.unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].body["max_tokens"], json!(300));
    assert_eq!(seen[1].body["max_tokens"], json!(16), "the request's own limit wins");
}

#[tokio::test]
async fn the_prompt_cache_s_share_is_read_as_the_server_reports_it() {
    let usage = |cached: Value| json!({"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": cached});
    let mut llama = completion(
        json!({"role": "assistant", "content": "a"}),
        Some(json!({"prompt_tokens": 100, "completion_tokens": 5})),
    );
    llama["timings"] = json!({"cache_n": 64, "prompt_n": 36});
    // llama.cpp's stream: its timings ride on the last chunk, the usage on its own.
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"timings\":{\"cache_n\":90}}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":1}}\n\n",
        "data: [DONE]\n\n"
    );
    let server = Server::start(vec![
        Reply::json(
            200,
            completion(json!({"role": "assistant", "content": "a"}), Some(usage(json!({"cached_tokens": 80})))),
        ),
        Reply::json(200, llama),
        Reply::sse(stream),
        // A server that claims more cached tokens than the prompt had.
        Reply::json(
            200,
            completion(json!({"role": "assistant", "content": "a"}), Some(usage(json!({"cached_tokens": 500})))),
        ),
        text_reply("no cache"),
    ])
    .await;
    let mut cfg = config(&server);
    cfg.cache_prompt = true;
    let m = HttpModel::new(cfg).unwrap();
    let mut cached = Vec::new();
    for _ in 0..5 {
        cached.push(m.chat(&request()).await.unwrap().usage.cached_tokens);
    }
    assert_eq!(cached, vec![80, 64, 90, 100, 0]);
    assert!(server.seen().iter().all(|s| s.body["cache_prompt"] == json!(true)));

    let server = Server::start(vec![text_reply("a")]).await;
    model(&server).chat(&request()).await.unwrap();
    assert!(server.seen()[0].body.get("cache_prompt").is_none(), "not sent unless configured: OpenAI refuses it");
}

#[tokio::test]
async fn native_tool_calls_with_string_object_and_empty_arguments() {
    let message = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"rust\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "search", "arguments": {"q": "tokio"}}},
            {"id": "c3", "type": "function", "function": {"name": "search", "arguments": ""}},
        ]
    });
    let usage = json!({"prompt_tokens": 30, "completion_tokens": 9});
    let server = Server::start(vec![Reply::json(200, completion(message, Some(usage)))]).await;
    let resp = model(&server).chat(&request_with_tools()).await.unwrap();
    assert_eq!(resp.text, "");
    let calls: Vec<(&str, &Value)> = resp.tool_calls.iter().map(|c| (c.name.as_str(), &c.arguments)).collect();
    assert_eq!(
        calls,
        vec![("search", &json!({"q": "rust"})), ("search", &json!({"q": "tokio"})), ("search", &json!({}))]
    );
}

#[tokio::test]
async fn native_arguments_that_are_not_json_are_malformed() {
    let message = json!({"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": "search", "arguments": "{q: rust"}}
    ]});
    let server = Server::start(vec![Reply::json(200, completion(message, None))]).await;
    let err = model(&server).chat(&request_with_tools()).await.unwrap_err();
    match err.root() {
        ModelError::Malformed(msg) => {
            assert!(msg.contains("search") && msg.contains("arguments"), "{msg}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn tool_call_written_as_json_in_content() {
    let bare = r#"{"name": "search", "arguments": {"q": "weather in Oslo"}}"#;
    let fenced =
        "I'll look that up.\n```json\n{\"tool\": \"search\", \"arguments\": {\"q\": \"weather in Oslo\"}}\n```";
    let server = Server::start(vec![text_reply(bare), text_reply(fenced)]).await;
    let m = model(&server);
    for content in [bare, fenced] {
        let resp = m.chat(&request_with_tools()).await.unwrap();
        assert_eq!(resp.text, content, "text stays the raw content");
        assert_eq!(resp.tool_calls.len(), 1, "{content}");
        assert_eq!(resp.tool_calls[0].name, "search");
        assert_eq!(resp.tool_calls[0].arguments, json!({"q": "weather in Oslo"}));
    }
}

#[tokio::test]
async fn json_in_content_is_not_a_call_unless_an_offered_tool_is_named() {
    let unknown = r#"{"name": "rm_rf", "arguments": {}}"#;
    let known = r#"{"name": "search", "arguments": {"q": "x"}}"#;
    let server = Server::start(vec![text_reply(unknown), text_reply(known)]).await;
    let m = model(&server);
    // An unoffered tool name is only text.
    let resp = m.chat(&request_with_tools()).await.unwrap();
    assert!(resp.tool_calls.is_empty());
    assert_eq!(resp.text, unknown);
    // No tools offered: JSON in the content is only text, even naming a real tool.
    let resp = m.chat(&request()).await.unwrap();
    assert!(resp.tool_calls.is_empty());
    assert_eq!(resp.text, known);
}

#[tokio::test]
async fn native_tool_calls_win_over_json_in_content() {
    let message = json!({
        "role": "assistant",
        "content": "{\"name\": \"search\", \"arguments\": {\"q\": \"from text\"}}",
        "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": "{\"q\": \"native\"}"}}]
    });
    let server = Server::start(vec![Reply::json(200, completion(message, None))]).await;
    let resp = model(&server).chat(&request_with_tools()).await.unwrap();
    assert_eq!(resp.tool_calls.len(), 1);
    assert_eq!(resp.tool_calls[0].arguments, json!({"q": "native"}));
}

#[tokio::test]
async fn rate_limited_then_answers_after_retry_after() {
    let server = Server::start(vec![
        Reply::raw(429, r#"{"error": {"message": "slow down"}}"#).header("Retry-After", "0"),
        text_reply("after the wait"),
    ])
    .await;
    let resp = model(&server).chat(&request()).await.unwrap();
    assert_eq!(resp.text, "after the wait");
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn server_error_then_answers_after_backoff() {
    let server = Server::start(vec![Reply::raw(500, "boom"), text_reply("recovered")]).await;
    let resp = model(&server).chat(&request()).await.unwrap();
    assert_eq!(resp.text, "recovered");
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn server_errors_until_retries_run_out() {
    let long_body = "x".repeat(5_000);
    let failing = |body: &str| Reply::raw(503, body).header("Retry-After", "0");
    let server =
        Server::start(vec![failing("first"), failing("second"), failing(&long_body), text_reply("too late")]).await;
    let err = model(&server).chat(&request()).await.unwrap_err();
    assert!(err.to_string().ends_with(&format!("(3 attempts to {}/chat/completions)", server.base_url())), "{err}");
    match err.root() {
        ModelError::Http { status, body } => {
            assert_eq!(*status, 503);
            assert!(body.starts_with("xxx"), "the last failure is reported");
            assert!(body.chars().count() <= 501, "body truncated, was {} chars", body.chars().count());
        }
        other => panic!("expected Http, got {other:?}"),
    }
    assert_eq!(server.seen().len(), 3, "one call and max_retries = 2 retries");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = Server::start(vec![Reply::raw(400, r#"{"error": "bad request"}"#), text_reply("unused")]).await;
    let err = model(&server).chat(&request()).await.unwrap_err();
    assert_eq!(err.root(), &ModelError::Http { status: 400, body: r#"{"error": "bad request"}"#.into() });
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn malformed_json_body() {
    let server = Server::start(vec![Reply::raw(200, "{\"choices\": [ oops")]).await;
    let err = model(&server).chat(&request()).await.unwrap_err();
    match err.root() {
        ModelError::Malformed(msg) => assert!(msg.contains("not a chat completion JSON"), "{msg}"),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn a_reply_without_choices_is_malformed() {
    let server = Server::start(vec![Reply::json(200, json!({"object": "chat.completion", "choices": []}))]).await;
    let err = model(&server).chat(&request()).await.unwrap_err();
    match err.root() {
        ModelError::Malformed(msg) => assert!(msg.contains("no choices"), "{msg}"),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn missing_usage_and_null_content_are_estimated() {
    let req = request();
    let prompt_estimate = tokens::count_messages(&req.messages);
    let server = Server::start(vec![
        // No usage at all, null content.
        Reply::json(200, completion(json!({"role": "assistant", "content": null}), None)),
        // Usage with nulls, missing content.
        Reply::json(
            200,
            completion(json!({"role": "assistant"}), Some(json!({"prompt_tokens": null, "completion_tokens": null}))),
        ),
        // No usage, some text.
        Reply::json(200, completion(json!({"role": "assistant", "content": "Hello there, friend."}), None)),
        // Partial usage: the reported field is kept.
        Reply::json(200, completion(json!({"role": "assistant", "content": "ok"}), Some(json!({"prompt_tokens": 77})))),
    ])
    .await;
    let m = model(&server);

    for _ in 0..2 {
        let resp = m.chat(&req).await.unwrap();
        assert_eq!(resp.text, "");
        assert_eq!(resp.usage.prompt_tokens, prompt_estimate);
        assert!(prompt_estimate > 0);
        assert_eq!(resp.usage.completion_tokens, 0, "nothing was generated");
    }
    let resp = m.chat(&req).await.unwrap();
    assert_eq!(resp.usage.prompt_tokens, prompt_estimate);
    assert_eq!(resp.usage.completion_tokens, tokens::count("Hello there, friend."));
    let resp = m.chat(&req).await.unwrap();
    assert_eq!(resp.usage.prompt_tokens, 77);
    assert_eq!(resp.usage.completion_tokens, tokens::count("ok"));
}

#[tokio::test]
async fn tools_and_response_format_are_sent_when_enabled() {
    let server = Server::start(vec![text_reply("{}")]).await;
    let mut req = request_with_tools();
    let schema = json!({"type": "object", "properties": {"tool": {"enum": ["search"]}}, "required": ["tool"]});
    req.response_schema = Some(ResponseSchema { name: "tool_choice".into(), schema: schema.clone() });
    req = req.stopping_at(&["\nTask:"]);
    model(&server).chat(&req).await.unwrap();
    let body = &server.seen()[0].body;
    assert!(body.get("stop").is_none(), "the schema's grammar ends the reply: {body}");
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "search",
            "description": "Search the web",
            "parameters": search_tool().parameters,
        }}])
    );
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "tool_choice", "schema": schema, "strict": true}})
    );
}

#[tokio::test]
async fn tools_and_response_format_are_not_sent_when_disabled() {
    let server = Server::start(vec![text_reply("plain")]).await;
    let mut cfg = config(&server);
    cfg.native_tools = false;
    cfg.json_schema = false;
    let mut req = request_with_tools();
    req.response_schema = Some(ResponseSchema { name: "x".into(), schema: json!({"type": "object"}) });
    req = req.stopping_at(&["\nObservation:", "\nTask:"]);
    HttpModel::new(cfg).unwrap().chat(&req).await.unwrap();
    let body = &server.seen()[0].body;
    assert_eq!(body["stop"], json!(["\nObservation:", "\nTask:"]), "the text protocol alone: its stop sequences");
    assert!(body.get("tools").is_none(), "{body}");
    assert!(body.get("response_format").is_none(), "{body}");
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn the_key_goes_in_the_authorization_header_and_nowhere_else() {
    const VAR: &str = "SWITCHYARD_TEST_OPENAI_KEY_AUTH";
    const KEY: &str = "sk-test-0123456789abcdef-secret";
    set_key(VAR, KEY);
    let server = Server::start(vec![text_reply("hi"), Reply::raw(401, "unauthorized")]).await;
    let mut cfg = config(&server);
    cfg.api_key_env = Some(VAR.into());
    let m = HttpModel::new(cfg).unwrap();

    m.chat(&request()).await.unwrap();
    assert_eq!(server.seen()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert!(!server.seen()[0].body.to_string().contains(KEY), "the key is not in the body");

    let debug = format!("{m:?}");
    assert!(!debug.contains(KEY), "{debug}");
    assert!(debug.contains(VAR) && debug.contains("redacted"), "{debug}");

    let err = m.chat(&request()).await.unwrap_err();
    assert!(matches!(err.root(), ModelError::Http { status: 401, .. }));
    assert!(!err.to_string().contains(KEY) && !format!("{err:?}").contains(KEY));
}

#[tokio::test]
async fn a_missing_or_empty_key_variable_is_named() {
    const EMPTY: &str = "SWITCHYARD_TEST_OPENAI_KEY_EMPTY";
    set_key(EMPTY, "");
    for var in ["SWITCHYARD_TEST_OPENAI_KEY_NEVER_SET", EMPTY] {
        let mut cfg = HttpModelConfig::new("paid", "http://127.0.0.1:9/v1", "gpt-x");
        cfg.api_key_env = Some(var.into());
        let err = HttpModel::new(cfg).unwrap_err();
        assert_eq!(err, ModelError::MissingKey { model: "paid".into(), var: var.into() });
        assert!(err.to_string().contains(var));
    }
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = Server::start(vec![Reply::hang()]).await;
    let mut cfg = config(&server);
    cfg.timeout_ms = 300;
    let err = HttpModel::new(cfg).unwrap().chat(&request()).await.unwrap_err();
    assert_eq!(err.root(), &ModelError::Timeout { ms: 300 });
    assert_eq!(server.seen().len(), 1, "a timeout is not retried");
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_transport_error() {
    // Bind and drop a listener to get a loopback port nothing listens on.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut cfg = HttpModelConfig::new("gone", format!("http://{addr}/v1/"), "m");
    cfg.max_retries = 0;
    let err = HttpModel::new(cfg).unwrap().chat(&request()).await.unwrap_err();
    assert!(matches!(err.root(), ModelError::Transport(_)), "{err:?}");
}

/// Chaos against the real server (tests/model_chaos.rs) found model errors
/// that did not say where they came from: a 400 or a timeout named neither
/// the endpoint nor whether retries were spent, so a ModelFailed event in a
/// trace of several models could not be traced to its server. Every failed
/// call now names the endpoint and the attempts it made.
#[tokio::test]
async fn a_failed_call_names_its_endpoint_and_the_attempts_it_made() {
    let endpoint = |s: &Server| format!("{}/chat/completions", s.base_url());
    let server = Server::start(vec![Reply::raw(400, r#"{"error": "context_length_exceeded"}"#)]).await;
    let err = model(&server).chat(&request()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "model endpoint answered HTTP 400: {{\"error\": \"context_length_exceeded\"}} (1 attempt to {})",
            endpoint(&server)
        )
    );

    let server = Server::start(vec![Reply::hang()]).await;
    let mut cfg = config(&server);
    cfg.timeout_ms = 200;
    let err = HttpModel::new(cfg).unwrap().chat(&request()).await.unwrap_err();
    assert_eq!(err.to_string(), format!("model call timed out after 200 ms (1 attempt to {})", endpoint(&server)));

    // The exchange a server refuses a response_format in is not an attempt.
    let refusal = r#"{"error": "response_format: unsupported"}"#;
    let server = Server::start(vec![Reply::raw(500, refusal), Reply::raw(503, "busy"), Reply::raw(503, "busy")]).await;
    let mut cfg = config(&server);
    cfg.max_retries = 1;
    let mut req = request();
    req.response_schema = Some(switchyard::strategy::prompt::actor_schema(&["search".to_string()]));
    let err = HttpModel::new(cfg).unwrap().chat(&req).await.unwrap_err();
    assert!(err.to_string().ends_with(&format!("(2 attempts to {})", endpoint(&server))), "{err}");

    // A transport error names the URL itself: it is not said twice.
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut cfg = HttpModelConfig::new("gone", format!("http://{addr}/v1"), "m");
    cfg.max_retries = 1;
    let err = HttpModel::new(cfg).unwrap().chat(&request()).await.unwrap_err().to_string();
    let url = format!("http://{addr}/v1/chat/completions");
    assert!(err.ends_with(" (2 attempts)") && err.matches(&url).count() == 1, "{err}");
}

#[test]
fn config_defaults_from_toml() {
    let cfg: HttpModelConfig = toml::from_str(
        r#"
        name = "qwen"
        base_url = "http://127.0.0.1:8080/v1"
        model = "qwen2.5-coder"
        "#,
    )
    .unwrap();
    assert_eq!(cfg, HttpModelConfig::new("qwen", "http://127.0.0.1:8080/v1", "qwen2.5-coder"));
    assert_eq!((cfg.timeout_ms, cfg.max_retries, cfg.native_tools, cfg.json_schema), (60_000, 3, true, true));
    assert_eq!(cfg.api_key_env, None);
}

/// llama-cpp-python's server refuses OpenAI's `json_schema` response format
/// (it knows `json_object` with a `schema`): the model switches form at once,
/// without spending a retry, and keeps the new form for later calls.
#[tokio::test]
async fn a_refused_response_format_falls_back_to_json_object_then_to_text() {
    let refusal = r#"{"error": {"message": "body.response_format.type: Input should be 'text' or 'json_object'"}}"#;
    let server = Server::start(vec![
        Reply::raw(500, refusal),
        text_reply(r#"{"tool": "finish", "arguments": {}, "answer": "hi"}"#),
        text_reply(r#"{"tool": "finish", "arguments": {}, "answer": "again"}"#),
        Reply::raw(400, r#"{"error": "unsupported response_format"}"#),
        text_reply("plain text"),
    ])
    .await;
    let mut cfg = config(&server);
    cfg.max_retries = 0;
    let m = HttpModel::new(cfg).unwrap();
    let mut req = request();
    req.response_schema = Some(switchyard::strategy::prompt::actor_schema(&["search".to_string()]));
    assert!(m.chat(&req).await.unwrap().text.contains("hi"), "no retry was spent on the switch");
    assert!(m.chat(&req).await.unwrap().text.contains("again"));
    assert_eq!(m.chat(&req).await.unwrap().text, "plain text");
    let seen = server.seen.lock().unwrap().clone();
    let formats: Vec<Option<String>> =
        seen.iter().map(|s| s.body["response_format"]["type"].as_str().map(str::to_string)).collect();
    assert_eq!(
        formats,
        vec![
            Some("json_schema".into()),
            Some("json_object".into()),
            Some("json_object".into()),
            Some("json_object".into()),
            None
        ]
    );
    assert_eq!(seen[1].body["response_format"]["schema"]["properties"]["tool"]["enum"][0], "search");
}

/// A server that answers 200 with a chunked body that never ends, counting
/// what it managed to send before the client hung up.
async fn endless_server() -> (String, Arc<std::sync::atomic::AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = Arc::clone(&sent);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let counter = Arc::clone(&counter);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let _ = stream.read(&mut buf).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let piece = format!("{:x}\r\n{}\r\n", 65536, "x".repeat(65536));
                while stream.write_all(piece.as_bytes()).await.is_ok() {
                    counter.fetch_add(65536, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    (url, sent)
}

#[tokio::test]
async fn an_endless_reply_stops_at_the_cap_with_a_clear_error() {
    let (url, sent) = endless_server().await;
    let mut cfg = HttpModelConfig::new("endless", url, "m");
    cfg.max_reply_bytes = 1 << 20;
    cfg.max_retries = 3;
    let err = HttpModel::new(cfg).unwrap().chat(&request()).await.unwrap_err();
    assert!(matches!(err.root(), ModelError::TooLarge { .. }), "{err:?}");
    let text = err.to_string();
    let want = "model reply passed the 1 MB limit (max_reply_mb) and was cut off: the endpoint may be streaming \
                without end (1 attempt to http://";
    assert!(text.starts_with(want), "{text}");
    // Not retried, and read no further than the cap (plus what the sockets
    // buffer): the server could only send until the client hung up.
    let sent = sent.load(std::sync::atomic::Ordering::Relaxed);
    assert!(sent < 32 << 20, "the client read {sent} bytes of an endless body");
}

#[tokio::test]
async fn a_declared_length_over_the_cap_is_refused_before_reading() {
    let server = Server::start(vec![Reply::raw(200, &"y".repeat(3000))]).await;
    let mut cfg = config(&server);
    cfg.max_reply_bytes = 2048;
    let err = HttpModel::new(cfg).unwrap().chat(&request()).await.unwrap_err();
    assert_eq!(
        err.root().to_string(),
        "model reply passed the 2048 bytes limit (max_reply_mb) and was cut off: the endpoint may be streaming without end"
    );
}

#[tokio::test]
async fn an_anthropic_endpoint_is_spoken_natively() {
    let reply = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Searching."},
            {"type": "tool_use", "id": "toolu_7", "name": "search", "input": {"q": "rust"}}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 21, "output_tokens": 9},
    });
    let server = Server::start(vec![Reply::json(200, reply)]).await;
    let mut cfg = config(&server);
    cfg.api = switchyard::model::wire::Dialect::Anthropic;
    cfg.api_key_env = Some("SWITCHYARD_TEST_ANTHROPIC_KEY".into());
    // SAFETY: the variable is this test's own; no other test reads it.
    unsafe { std::env::set_var("SWITCHYARD_TEST_ANTHROPIC_KEY", "sk-ant-test-key") };
    let model = HttpModel::new(cfg).unwrap();
    assert_eq!(model.info().kind, ModelKind::Anthropic);
    let mut req = request_with_tools().stopping_at(&["\nTask:"]);
    req.messages.insert(0, Message::system("Be brief."));
    let resp = model.chat(&req).await.unwrap();
    assert_eq!(resp.text, "Searching.");
    assert_eq!(resp.tool_calls[0].name, "search");
    assert_eq!(resp.tool_calls[0].arguments, json!({"q": "rust"}));
    assert_eq!((resp.usage.prompt_tokens, resp.usage.completion_tokens), (21, 9));
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some("sk-ant-test-key"));
    assert_eq!(seen.header("authorization"), None);
    assert!(seen.header("anthropic-version").is_some());
    assert_eq!(seen.body["system"], "Be brief.\n\nYou are terse.", "system messages join into one");
    assert_eq!(seen.body["tools"][0]["input_schema"]["required"], json!(["q"]));
    assert!(seen.body["max_tokens"].as_u64().unwrap() > 0, "Anthropic requires max_tokens");
    assert_eq!(seen.body["stop_sequences"], json!(["\nTask:"]));
}

#[tokio::test]
async fn a_responses_endpoint_is_spoken_natively() {
    let reply = json!({
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
        "output": [{"type": "function_call", "id": "fc_1", "call_id": "call_3", "name": "search",
            "arguments": "{\"q\":\"rust\"}", "status": "completed"}],
        "usage": {"input_tokens": 17, "output_tokens": 6, "total_tokens": 23},
    });
    let server = Server::start(vec![Reply::json(200, reply)]).await;
    let mut cfg = config(&server);
    cfg.api = switchyard::model::wire::Dialect::Responses;
    let model = HttpModel::new(cfg).unwrap();
    let resp = model.chat(&request_with_tools().stopping_at(&["\nTask:"])).await.unwrap();
    assert_eq!(resp.tool_calls[0].arguments, json!({"q": "rust"}));
    assert_eq!((resp.usage.prompt_tokens, resp.usage.completion_tokens), (17, 6));
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/responses");
    assert_eq!(seen.body["store"], false);
    assert_eq!(seen.body["tools"][0]["name"], "search");
    assert!(seen.body["input"].as_array().is_some_and(|i| !i.is_empty()));
    assert!(seen.body.get("stop").is_none(), "the Responses API takes no stop sequences");
}

#[tokio::test]
async fn each_role_s_reply_is_capped_and_a_reply_cut_at_the_cap_says_so() {
    // The actor's first reply runs into its cap mid-answer; the second answers.
    let mut cut = completion(
        json!({"role": "assistant", "content": "{\"tool\": \"finish\", \"answer\": \"It is"}),
        Some(json!({"prompt_tokens": 50, "completion_tokens": 64})),
    );
    cut["choices"][0]["finish_reason"] = json!("length");
    let server =
        Server::start(vec![Reply::json(200, cut), text_reply("{\"tool\": \"finish\", \"answer\": \"4\"}")]).await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[models.m]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\nmax_retries = 0\n\n\
             [roles]\nactor = \"m\"\n\n[reply_tokens]\nactor = 64\n",
            server.base_url()
        ),
    )
    .unwrap();
    let trace = dir.path().join("trace.jsonl");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .env_remove("SWITCHYARD_DATA_DIR")
        .arg("--config")
        .arg(&config)
        .args(["run", "--strategy", "react", "--no-save", "--logical-clock", "--task", "What is 2 + 2?", "--trace"])
        .arg(&trace)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s.body["max_tokens"] == json!(64)), "the actor's cap, not the model's 1024");
    let events = switchyard::engine::trace::read_trace(&trace).unwrap();
    let capped: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            switchyard::engine::EventKind::ModelReply { capped, .. } => Some(*capped),
            _ => None,
        })
        .collect();
    assert_eq!(capped, vec![Some(switchyard::engine::event::Capped { max_tokens: Some(64) }), None]);
    let mut state = switchyard::engine::SessionState::default();
    events.iter().for_each(|e| state.apply(e));
    let notes: Vec<&String> = state
        .current
        .as_ref()
        .map(|r| r.transcript.as_slice())
        .unwrap_or_default()
        .iter()
        .filter_map(|e| match e {
            switchyard::engine::fold::Entry::Note(n) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(state.accounts.values().map(|a| a.capped).sum::<u64>(), 1);
    assert!(notes.iter().any(|n| n.contains("actor's reply was cut at its cap (64 tokens, 64 written)")), "{notes:?}");
}

#[test]
fn reply_tokens_are_read_role_by_role_and_checked() {
    use switchyard::config::Config;
    let path = std::path::Path::new("caps.toml");
    let c = Config::parse("[reply_tokens]\nactor = 100\n", path).unwrap();
    assert_eq!(c.reply_tokens.actor, 100);
    assert_eq!(c.reply_tokens.judge, 32, "unset roles keep their defaults");
    assert_eq!(c.reply_tokens.of(switchyard::model::Role::Agent), None, "an agent's requests keep their own");
    for (text, field) in
        [("[reply_tokens]\nactor = 0\n", "reply_tokens.actor"), ("[reply_tokens]\nagent = 5\n", "agent")]
    {
        let e = Config::parse(text, path).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains("caps.toml"), "{text}: {e}");
    }
}

#[tokio::test]
async fn roles_pinned_to_server_slots_say_so_and_the_others_do_not() {
    let server = Server::start(vec![text_reply("a"), text_reply("b"), text_reply("c")]).await;
    let mut cfg = config(&server);
    cfg.slots = [(Role::Actor, 0), (Role::Evaluator, 1)].into_iter().collect();
    let m = HttpModel::new(cfg).unwrap();
    for role in [Role::Actor, Role::Evaluator, Role::Judge] {
        m.chat(&ChatRequest { role, ..request() }).await.unwrap();
    }
    let slots: Vec<Option<u64>> = server.seen().iter().map(|s| s.body.get("id_slot").and_then(Value::as_u64)).collect();
    assert_eq!(slots, vec![Some(0), Some(1), None]);
}

#[test]
fn slots_are_read_per_role_and_refused_where_the_api_has_none() {
    use switchyard::config::Config;
    let path = std::path::Path::new("slots.toml");
    let model = |kind: &str| {
        format!(
            "[models.local]\nkind = \"{kind}\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\
             slots = {{ actor = 0, evaluator = 1 }}\n"
        )
    };
    let c = Config::parse(&model("openai"), path).unwrap();
    assert!(c.build_models(1).is_ok());
    let e = Config::parse(&model("anthropic"), path).unwrap_err().to_string();
    assert!(e.contains("models.local.slots") && e.contains("slots.toml"), "{e}");
    let e = Config::parse(&model("openai").replace("actor = 0", "actr = 0"), path).unwrap_err().to_string();
    assert!(e.contains("actr") && e.contains("slots.toml"), "{e}");
}
