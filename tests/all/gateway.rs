//! The model gateway in process: an engine bridging an outside agent's
//! calls (no agent command: the test is the agent, over HTTP) to a
//! scripted OpenAI-compatible upstream on loopback, or to the simulated
//! model.

use std::sync::Arc;

use serde_json::{Value, json};
use switchyard::engine::fold::Entry;
use switchyard::engine::{
    Control, Engine, EngineHandle, EngineSetup, Event, EventKind, LogicalClock, ModelSlot, Models, SessionOutcome,
};
use switchyard::gateway::{Gateway, GatewaySetup};
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::price::Price;
use switchyard::model::wire::Dialect;
use switchyard::model::{ChatModel, Role};
use switchyard::sim::{SimConfig, SimModel};
use switchyard::strategy::bridge::Bridge;
use switchyard::task::Task;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::common::small_library;
use super::openai::{Reply, Server, completion, text_reply};

pub(crate) struct Rig {
    pub(crate) gateway: Gateway,
    pub(crate) handle: EngineHandle,
    pub(crate) events: mpsc::UnboundedReceiver<Event>,
    run: JoinHandle<SessionOutcome>,
    pub(crate) http: reqwest::Client,
}

async fn rig_with(model: Arc<dyn ChatModel>, max_body: usize) -> Rig {
    rig_traced(model, max_body, None, Vec::new()).await
}

/// `offered`: more configured models, besides the agent role's.
pub(crate) async fn rig_traced(
    model: Arc<dyn ChatModel>,
    max_body: usize,
    trace: Option<&std::path::Path>,
    offered: Vec<Arc<dyn ChatModel>>,
) -> Rig {
    let (calls, inbox) = mpsc::channel(16);
    let setup = GatewaySetup { models: vec![model.info().name], max_body, ..GatewaySetup::default() };
    let gateway = Gateway::start(setup, calls).await.unwrap();
    let mut models = Models::single(model.clone(), Price::default());
    models.set(Role::Agent, ModelSlot { model, price: Price::default() });
    for model in offered {
        models.offer(ModelSlot { model, price: Price::default() });
    }
    let strategy: Box<dyn switchyard::engine::Strategy> = Box::new(Bridge::new(inbox, None));
    let mut s = EngineSetup::new(small_library(), models, strategy);
    s.clock = Arc::new(LogicalClock::default());
    let (mut engine, handle) = Engine::new(s);
    if let Some(path) = trace {
        engine.set_trace(switchyard::engine::trace::TraceWriter::create(path).unwrap());
    }
    let events = engine.subscribe();
    let task = Task { id: "outside".into(), query: "an outside agent".into(), ..Task::default() };
    let run = tokio::spawn(async move { engine.run(vec![task]).await.unwrap() });
    Rig { gateway, handle, events, run, http: reqwest::Client::new() }
}

pub(crate) async fn rig(model: Arc<dyn ChatModel>) -> Rig {
    rig_with(model, switchyard::gateway::DEFAULT_MAX_BODY).await
}

fn upstream(server: &Server) -> Arc<dyn ChatModel> {
    let mut cfg = HttpModelConfig::new("local", server.base_url(), "test-model");
    cfg.timeout_ms = 5_000;
    cfg.max_retries = 0;
    Arc::new(HttpModel::new(cfg).unwrap())
}

fn sim() -> Arc<dyn ChatModel> {
    Arc::new(SimModel::new(SimConfig { name: "sim".into(), seed: 7, noise: 0.0 }))
}

impl Rig {
    pub(crate) fn url(&self, dialect: Dialect) -> String {
        match dialect {
            Dialect::Chat => format!("{}/chat/completions", self.gateway.openai_base_url()),
            Dialect::Responses => format!("{}/responses", self.gateway.openai_base_url()),
            Dialect::Anthropic => format!("{}/v1/messages", self.gateway.anthropic_base_url()),
        }
    }

    /// One request with the session token, as the dialect's SDK sends it.
    pub(crate) async fn send(&self, dialect: Dialect, body: &Value) -> (u16, Value) {
        let token = self.gateway.token().expose().to_string();
        let rb = self.http.post(self.url(dialect)).json(body);
        let rb = match dialect {
            Dialect::Anthropic => rb.header("x-api-key", token).header("anthropic-version", "2023-06-01"),
            _ => rb.bearer_auth(token),
        };
        let resp = rb.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Ends the session as `q` would, and returns every event it sent.
    pub(crate) async fn finish(mut self) -> Vec<Event> {
        self.handle.send(Control::Stop);
        self.run.await.unwrap();
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }
}

#[tokio::test]
async fn a_chat_agent_s_request_reaches_a_chat_upstream_as_it_was_sent() {
    let server = Server::start(vec![text_reply("Paris.")]).await;
    let rig = rig(upstream(&server)).await;
    // Fields the engine's own requests never use travel all the same.
    let sent = json!({
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Capital of France?"}]},
        ],
        "temperature": 0.3,
        "max_tokens": 64,
        "seed": 11,
        "user": "someone",
        "logit_bias": {"50256": -100},
        "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
    });
    let (status, reply) = rig.send(Dialect::Chat, &sent).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(server.seen()[0].body, sent, "the upstream got another body than the agent sent");
    assert_eq!(reply["choices"][0]["message"]["content"], "Paris.");
    assert_eq!(reply["usage"]["prompt_tokens"], 12);
    let events = rig.finish().await;
    let call = events.iter().find_map(|e| match &e.kind {
        EventKind::ModelCall { role: Role::Agent, wire: Some(w), .. } => Some(w.clone()),
        _ => None,
    });
    assert_eq!(call.map(|w| (w.dialect, w.body)), Some((Dialect::Chat, sent)));
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.kind, EventKind::ModelReply { role: Role::Agent, text, .. } if text == "Paris."))
    );
}

#[tokio::test]
async fn an_anthropic_agent_is_translated_to_a_chat_upstream_and_back_with_its_ids() {
    let call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_9", "type": "function",
        "function": {"name": "lookup", "arguments": "{\"city\":\"Oslo\"}"}}]});
    let mut reply = completion(call, Some(json!({"prompt_tokens": 30, "completion_tokens": 8})));
    reply["choices"][0]["finish_reason"] = json!("tool_calls");
    let server = Server::start(vec![Reply::json(200, reply)]).await;
    let rig = rig(upstream(&server)).await;
    let sent = json!({
        "model": "claude-x",
        "max_tokens": 200,
        "system": [{"type": "text", "text": "Be brief."}],
        "tools": [{"name": "lookup", "description": "Find a city", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "Population of Bergen, then Oslo?"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Looking up."},
                {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"city": "Bergen"}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "285,000"}]},
        ],
    });
    let (status, got) = rig.send(Dialect::Anthropic, &sent).await;
    assert_eq!(status, 200, "{got}");
    let upstream_body = &server.seen()[0].body;
    assert_eq!(upstream_body["model"], "test-model");
    assert_eq!(upstream_body["max_tokens"], 200);
    assert_eq!(upstream_body["messages"][0], json!({"role": "system", "content": "Be brief."}));
    assert_eq!(upstream_body["messages"][2]["tool_calls"][0]["id"], "toolu_1");
    assert_eq!(upstream_body["messages"][3], json!({"role": "tool", "tool_call_id": "toolu_1", "content": "285,000"}));
    assert_eq!(upstream_body["tools"][0]["function"]["name"], "lookup");
    assert_eq!(got["type"], "message");
    assert_eq!(got["model"], "claude-x");
    assert_eq!(got["stop_reason"], "tool_use");
    assert_eq!(
        got["content"][0],
        json!({"type": "tool_use", "id": "call_9", "name": "lookup", "input": {"city": "Oslo"}})
    );
    assert_eq!(got["usage"], json!({"input_tokens": 30, "output_tokens": 8}));
    rig.finish().await;
}

#[tokio::test]
async fn an_agent_that_sets_no_reply_limit_gets_the_model_s() {
    // The Agents SDK sets none: a small model then writes until its context
    // is full, and the agent's next request no longer fits.
    let anthropic = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "c",
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1}});
    for api in [Dialect::Chat, Dialect::Anthropic] {
        let replies = if api == Dialect::Chat {
            vec![text_reply("a"), text_reply("b"), text_reply("c")]
        } else {
            vec![
                Reply::json(200, anthropic.clone()),
                Reply::json(200, anthropic.clone()),
                Reply::json(200, anthropic.clone()),
            ]
        };
        let server = Server::start(replies).await;
        let mut cfg = HttpModelConfig::new("local", server.base_url(), "test-model");
        (cfg.api, cfg.max_retries, cfg.max_tokens) = (api, 0, 77);
        let rig = rig(Arc::new(HttpModel::new(cfg).unwrap())).await;
        let hi = json!([{"role": "user", "content": "hi"}]);
        for sent in [
            (Dialect::Chat, json!({"model": "m", "messages": hi})),
            (Dialect::Responses, json!({"model": "m", "input": "hi"})),
            (Dialect::Chat, json!({"model": "m", "messages": hi, "max_completion_tokens": 9})),
        ] {
            let (status, got) = rig.send(sent.0, &sent.1).await;
            assert_eq!(status, 200, "{api}: {got}");
        }
        let limits: Vec<Value> = server
            .seen()
            .iter()
            .map(|s| json!([s.body.get("max_tokens"), s.body.get("max_completion_tokens")]))
            .collect();
        let own = if api == Dialect::Chat { json!([null, 9]) } else { json!([9, null]) };
        assert_eq!(limits, [json!([77, null]), json!([77, null]), own], "{api}: the agent's own limit is kept");
        rig.finish().await;
    }
}

#[tokio::test]
async fn a_responses_agent_s_previous_response_is_answered_from_the_session() {
    let rig = rig(sim()).await;
    let tools = json!([{"type": "function", "name": "add", "description": "Add two numbers",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"]}}]);
    let (status, first) =
        rig.send(Dialect::Responses, &json!({"model": "m", "input": "What is 2 + 3?", "tools": tools})).await;
    assert_eq!(status, 200, "{first}");
    let call = first["output"].as_array().unwrap().iter().find(|i| i["type"] == "function_call").unwrap().clone();
    assert_eq!(call["name"], "add");
    let args: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"a": 2, "b": 3}));
    let next = json!({
        "model": "m",
        "previous_response_id": first["id"],
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "5"}],
        "tools": tools,
    });
    let (status, second) = rig.send(Dialect::Responses, &next).await;
    assert_eq!(status, 200, "{second}");
    assert_eq!(second["output"][0]["content"][0]["text"], "The answer is 5.");
    assert_ne!(first["id"], second["id"]);
    let unknown = json!({"model": "m", "previous_response_id": "resp_nonesuch", "input": "hi"});
    let (status, err) = rig.send(Dialect::Responses, &unknown).await;
    assert_eq!((status, err["error"]["param"].clone()), (404, json!("previous_response_id")));
    rig.finish().await;
}

#[tokio::test]
async fn refusals_come_in_each_dialect_s_own_shape() {
    let rig = rig_with(sim(), 4096).await;
    let token = rig.gateway.token().expose().to_string();
    // A wrong key: 401, and the right one is never in the answer.
    for (dialect, shape) in [(Dialect::Chat, "/error/type"), (Dialect::Anthropic, "/error/type")] {
        let resp = rig.http.post(rig.url(dialect)).bearer_auth("sk-wrong").json(&json!({})).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 401);
        let text = resp.text().await.unwrap();
        assert!(!text.contains(&token));
        let body: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(body.pointer(shape), Some(&json!("authentication_error")), "{dialect}: {body}");
        if dialect == Dialect::Anthropic {
            assert_eq!(body["type"], "error");
        }
    }
    // A field with no counterpart upstream is named, not dropped.
    let document = json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}}]}]});
    let (status, err) = rig.send(Dialect::Anthropic, &document).await;
    assert_eq!(status, 400);
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert!(err["error"]["message"].as_str().unwrap().starts_with("messages[0].content[0].type:"), "{err}");
    let hosted = json!({"model": "m", "input": "hi", "tools": [{"type": "web_search"}]});
    let (status, err) = rig.send(Dialect::Responses, &hosted).await;
    assert_eq!((status, err["error"]["param"].clone()), (400, json!("tools[0].type")));
    // Too large, and not JSON.
    let big = json!({"model": "m", "messages": [{"role": "user", "content": "x".repeat(5000)}]});
    let (status, err) = rig.send(Dialect::Chat, &big).await;
    assert_eq!((status, err["error"]["type"].clone()), (413, json!("invalid_request_error")));
    let resp = rig.http.post(rig.url(Dialect::Chat)).bearer_auth(&token).body("{not json").send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    // The session went on through all of it.
    let (status, ok) =
        rig.send(Dialect::Chat, &json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})).await;
    assert_eq!(status, 200, "{ok}");
    let events = rig.finish().await;
    let calls = events.iter().filter(|e| matches!(e.kind, EventKind::ModelCall { .. })).count();
    assert_eq!(calls, 1, "only the good request reached the model");
    // Each refusal is the session's to show and keep, without the key.
    let refused: Vec<(u16, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::GatewayRefused { status, error, .. } => Some((*status, error.clone())),
            _ => None,
        })
        .collect();
    let statuses: Vec<u16> = refused.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, [401, 401, 400, 400, 413, 400]);
    assert!(refused.iter().all(|(_, e)| !e.contains(&token) && !e.contains("sk-wrong")), "{refused:?}");
    assert!(refused[2].1.starts_with("messages[0].content[0].type:"), "{refused:?}");
    let mut state = switchyard::engine::SessionState::default();
    events.iter().for_each(|e| state.apply(e));
    let notes = state.current.map(|r| r.transcript).unwrap_or_default();
    let shown = notes.iter().filter(|e| matches!(e, Entry::Note(n) if n.contains("gateway refused"))).count();
    assert_eq!(shown, 6, "the Transcript shows each refusal");
}

#[tokio::test]
async fn an_upstream_that_fails_is_a_502_and_the_session_goes_on() {
    let server = Server::start(vec![Reply::raw(500, "overloaded"), text_reply("Back.")]).await;
    let rig = rig(upstream(&server)).await;
    let ask = json!({"model": "test-model", "messages": [{"role": "user", "content": "hi"}]});
    let (status, err) = rig.send(Dialect::Chat, &ask).await;
    assert_eq!(status, 502);
    assert!(err["error"]["message"].as_str().unwrap().contains("HTTP 500"), "{err}");
    let (status, ok) = rig.send(Dialect::Chat, &ask).await;
    assert_eq!((status, ok["choices"][0]["message"]["content"].clone()), (200, json!("Back.")));
    let events = rig.finish().await;
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::ModelFailed { role: Role::Agent, .. })));
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::RunFinished { .. })));
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::SessionFinished { .. })));
}

#[tokio::test]
async fn an_upstream_s_refusal_of_the_request_is_the_agent_s_to_see() {
    let too_long =
        r#"{"error": {"message": "maximum context length is 4096 tokens", "type": "invalid_request_error"}}"#;
    let server = Server::start(vec![Reply::raw(400, too_long), Reply::raw(401, "bad key")]).await;
    let rig = rig(upstream(&server)).await;
    let ask = json!({"model": "test-model", "messages": [{"role": "user", "content": "hi"}]});
    let (status, err) = rig.send(Dialect::Anthropic, &ask_anthropic()).await;
    assert_eq!(status, 400, "not a 502 an agent would retry: {err}");
    assert_eq!(err["error"]["type"], "invalid_request_error");
    assert!(err["error"]["message"].as_str().unwrap().contains("maximum context length"), "{err}");
    // The upstream refusing Switchyard's own key is not the agent's fault.
    let (status, _) = rig.send(Dialect::Chat, &ask).await;
    assert_eq!(status, 502);
    rig.finish().await;
}

fn ask_anthropic() -> Value {
    json!({"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]})
}

#[tokio::test]
async fn a_streamed_reply_reassembles_into_the_reply_it_streams() {
    let rig = rig(sim()).await;
    let tools = json!([{"type": "function", "function": {"name": "add", "parameters": {"type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}}]);
    let ask = json!({"model": "m", "messages": [{"role": "user", "content": "What is 2 + 3?"}], "tools": tools,
        "stream": true, "stream_options": {"include_usage": true}});
    let token = rig.gateway.token().expose().to_string();
    let resp = rig.http.post(rig.url(Dialect::Chat)).bearer_auth(&token).json(&ask).send().await.unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.unwrap();
    let chunks: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(text.trim_end().ends_with("data: [DONE]"));
    let name: String =
        chunks.iter().filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0/function/name")?.as_str()).collect();
    let args: String =
        chunks.iter().filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0/function/arguments")?.as_str()).collect();
    assert_eq!(name, "add");
    assert_eq!(serde_json::from_str::<Value>(&args).unwrap(), json!({"a": 2, "b": 3}));
    let usage = chunks.last().unwrap();
    assert!(usage["usage"]["completion_tokens"].as_u64().unwrap() > 0, "{usage}");
    rig.finish().await;
}

/// A message asking two questions gets two tool calls in one reply (the
/// parallel tool calls agents run at once), each with its own id, and an
/// answer from both results.
#[tokio::test]
async fn the_simulated_model_asks_one_tool_per_question_at_once() {
    let rig = rig(sim()).await;
    let number = json!({"type": "number"});
    let tool = |name: &str| {
        json!({"type": "function", "function": {"name": name, "parameters": {"type": "object",
        "properties": {"a": number, "b": number}, "required": ["a", "b"]}}})
    };
    let question = json!({"role": "user", "content": "What is 2 + 3? What is 4 * 5?"});
    let ask = json!({"model": "m", "messages": [question], "tools": [tool("add"), tool("multiply")]});
    let (status, reply) = rig.send(Dialect::Chat, &ask).await;
    assert_eq!(status, 200, "{reply}");
    let message = &reply["choices"][0]["message"];
    let calls = message["tool_calls"].as_array().unwrap();
    let asked: Vec<(&str, Value)> = calls
        .iter()
        .map(|c| {
            let args = serde_json::from_str(c["function"]["arguments"].as_str().unwrap()).unwrap();
            (c["function"]["name"].as_str().unwrap(), args)
        })
        .collect();
    assert_eq!(asked, [("add", json!({"a": 2, "b": 3})), ("multiply", json!({"a": 4, "b": 5}))]);
    assert_ne!(calls[0]["id"], calls[1]["id"]);

    let result = |call: &Value, out: &str| json!({"role": "tool", "tool_call_id": call["id"], "content": out});
    let messages = json!([question, message, result(&calls[0], "5"), result(&calls[1], "20")]);
    let ask = json!({"model": "m", "messages": messages, "tools": [tool("add"), tool("multiply")]});
    let (status, reply) = rig.send(Dialect::Chat, &ask).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["choices"][0]["message"]["content"], "The answer is 5 and 20.");
    rig.finish().await;
}

#[tokio::test]
async fn an_anthropic_agent_reaches_an_anthropic_upstream_as_it_was_sent() {
    let reply = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": "Hello."}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 5, "output_tokens": 2}});
    let server = Server::start(vec![Reply::json(200, reply.clone())]).await;
    let mut cfg = HttpModelConfig::new("claude", server.base_url(), "claude-test");
    cfg.api = Dialect::Anthropic;
    cfg.max_retries = 0;
    let rig = rig(Arc::new(HttpModel::new(cfg).unwrap())).await;
    let sent = json!({"model": "claude-test", "max_tokens": 64, "system": "Be brief.", "top_p": 0.9,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi", "cache_control": {"type": "ephemeral"}}]}]});
    let (status, got) = rig.send(Dialect::Anthropic, &sent).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(server.seen()[0].body, sent);
    let mut expected = reply;
    expected["id"] = json!("msg_1_1");
    assert_eq!(got, expected, "the agent gets the upstream's reply as it was, its id numbered");
    rig.finish().await;
}

/// `run --json`'s summary and the trace's events.
fn run_cli(args: &[&str]) -> (std::process::Output, Value, Vec<Event>) {
    let dir = tempfile::TempDir::new().unwrap();
    let trace = dir.path().join("t.jsonl");
    let mut all = vec!["--data-dir", dir.path().to_str().unwrap(), "run", "--json", "--trace", trace.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = super::cli_helpers::run(&all);
    let summary = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let events = switchyard::engine::trace::read_trace(&trace).unwrap_or_default();
    (out, summary, events)
}

#[test]
fn only_an_agent_s_session_lists_the_agent_role() {
    let (_, _, events) = run_cli(&["--task", "What is 2 + 3?"]);
    let EventKind::SessionStarted { models, .. } = &events[0].kind else { panic!("{:?}", events[0]) };
    assert!(models.iter().all(|m| m.role != Role::Agent));
    let (_, _, events) = run_cli(&["--agent", "--", "true"]);
    let EventKind::SessionStarted { models, .. } = &events[0].kind else { panic!("{:?}", events[0]) };
    assert!(models.iter().any(|m| m.role == Role::Agent));
}

#[test]
fn an_agent_that_cannot_start_or_fails_at_once_is_recorded_and_the_session_ends() {
    let (out, summary, events) = run_cli(&["--agent", "--", "/nonexistent/agent", "--flag"]);
    assert_eq!(out.status.code(), Some(2), "a failed run: {}", String::from_utf8_lossy(&out.stderr));
    let error = events.iter().find_map(|e| match &e.kind {
        EventKind::AgentExited { error: Some(e), .. } => Some(e.clone()),
        _ => None,
    });
    assert!(error.is_some_and(|e| e.contains("could not start `/nonexistent/agent`")), "{events:?}");
    assert!(matches!(events.last().map(|e| &e.kind), Some(EventKind::SessionFinished { .. })));
    let outcome = &summary["runs"][0]["outcome"];
    assert_eq!(outcome["outcome"], "failed", "{summary}");
    assert!(outcome["error"].as_str().unwrap().contains("could not start"), "{summary}");
    // An agent that exits at once with an error: its code and stderr are kept.
    let script = "echo 'Traceback: no module named agents' >&2; exit 3";
    let (out, _, events) = run_cli(&["--agent", "--", "sh", "-c", script]);
    let exited = events.iter().find_map(|e| match &e.kind {
        EventKind::AgentExited { code, stderr_tail, .. } => Some((*code, stderr_tail.clone())),
        _ => None,
    });
    assert_eq!(
        exited,
        Some((Some(3), vec!["Traceback: no module named agents".to_string()])),
        "{}\n{events:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failed = events.iter().find_map(|e| match &e.kind {
        EventKind::RunFinished { outcome: switchyard::engine::event::RunOutcome::Failed { error }, .. } => {
            Some(error.clone())
        }
        _ => None,
    });
    assert_eq!(failed.as_deref(), Some("the agent exited with code 3: Traceback: no module named agents"));
}

#[test]
fn an_agent_command_needs_the_agent_flag_and_the_flag_a_command() {
    let out = super::cli_helpers::run(&["run", "--", "python3", "agent.py"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("add --agent"));
    let out = super::cli_helpers::run(&["run", "--agent"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs the agent's command after `--`"));
}

#[test]
fn the_task_reaches_the_agent_in_its_arguments_or_on_stdin() {
    // `{task}` in the arguments; the answer is the agent's last line.
    let (_, summary, _) =
        run_cli(&["--task", "Say hi", "--agent", "--", "sh", "-c", "echo thinking; echo \"$0!\"", "{task}"]);
    assert_eq!(summary["runs"][0]["answer"], "Say hi!", "{summary}");
    let (_, summary, _) = run_cli(&["--task", "Say bye", "--agent", "--", "sh", "-c", "read t; echo \"got: $t\""]);
    assert_eq!(summary["runs"][0]["answer"], "got: Say bye", "{summary}");
}

#[tokio::test]
async fn a_hundred_concurrent_streams_are_all_answered() {
    let rig = rig(sim()).await;
    let mut calls = Vec::new();
    for i in 0..100 {
        let (http, url, token) = (rig.http.clone(), rig.url(Dialect::Chat), rig.gateway.token().expose().to_string());
        calls.push(tokio::spawn(async move {
            let ask = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": format!("Question {i}?")}]});
            let resp = http.post(url).bearer_auth(token).json(&ask).send().await.unwrap();
            (resp.status().as_u16(), resp.text().await.unwrap())
        }));
    }
    for c in calls {
        let (status, text) = c.await.unwrap();
        assert_eq!(status, 200);
        assert!(text.ends_with("data: [DONE]\n\n"));
    }
    let events = rig.finish().await;
    assert_eq!(events.iter().filter(|e| matches!(e.kind, EventKind::ModelReply { .. })).count(), 100);
}

#[test]
fn eval_runs_the_agent_once_per_task_and_judges_its_answers() {
    let dir = tempfile::TempDir::new().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(&tasks, "{\"id\": \"a\", \"query\": \"say one\", \"answer\": \"ONE\"}\n{\"id\": \"b\", \"query\": \"say two\", \"answer\": \"TWO\"}\n").unwrap();
    let out = dir.path().join("out");
    let agent = "echo \"$0\" | cut -d' ' -f2 | tr a-z A-Z";
    let stdout = super::cli_helpers::ok(&[
        "--data-dir",
        dir.path().to_str().unwrap(),
        "eval",
        "--json",
        "--tasks",
        tasks.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--agent",
        "--",
        "sh",
        "-c",
        agent,
        "{task}",
    ]);
    let metrics: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(metrics[0]["label"], "agent");
    assert_eq!((metrics[0]["tasks"].clone(), metrics[0]["success_rate"].clone()), (json!(2), json!(1.0)), "{metrics}");
    let refused = super::cli_helpers::run(&["eval", "--jobs", "2", "--agent", "--", "true"]);
    assert!(String::from_utf8_lossy(&refused.stderr).contains("one task at a time"));
}

/// What Codex CLI 0.169 and Claude Code 2.1 send by default (their request
/// shapes, trimmed), read into Chat Completions.
#[test]
fn coding_agents_default_requests_translate() {
    use switchyard::model::wire::WireRequest;
    let codex = json!({
        "model": "m", "store": false, "stream": true, "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "k", "reasoning": {"summary": "auto"}, "client_metadata": {"originator": "codex_exec"},
        "parallel_tool_calls": false, "tool_choice": "auto",
        "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be careful."}]},
                  {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object"}},
                  {"type": "namespace", "name": "multi_agent_v1", "tools": [
                      {"type": "function", "name": "spawn_agent", "parameters": {"type": "object"}}]}],
    });
    let chat = WireRequest { dialect: Dialect::Responses, body: codex }.to_chat().unwrap();
    assert_eq!(chat["messages"][0], json!({"role": "system", "content": "Be careful."}));
    let names: Vec<&str> =
        chat["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["shell", "spawn_agent"]);
    assert!(chat.get("client_metadata").is_none() && chat.get("store").is_none());
    let web = json!({"model": "m", "input": "hi", "tools": [{"type": "web_search", "external_web_access": false}]});
    let err = WireRequest { dialect: Dialect::Responses, body: web }.to_chat().unwrap_err();
    assert_eq!(err.field, "tools[0].type");

    let claude = json!({
        "model": "claude-opus-4-8", "max_tokens": 32000, "stream": true, "metadata": {"user_id": "u"},
        "thinking": {"type": "adaptive"}, "output_config": {"effort": "high"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "system": [{"type": "text", "text": "You are Claude Code.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
                     {"role": "system", "content": "Agent types: general."}],
    });
    let chat = WireRequest { dialect: Dialect::Anthropic, body: claude }.to_chat().unwrap();
    let roles: Vec<&str> = chat["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "system"]);
    assert!(chat.get("thinking").is_none() && chat.get("context_management").is_none());
}

#[tokio::test]
async fn an_agent_naming_a_configured_model_is_answered_by_it() {
    let server = Server::start(vec![text_reply("From the upstream.")]).await;
    let rig = rig_traced(upstream(&server), switchyard::gateway::DEFAULT_MAX_BODY, None, vec![sim()]).await;
    let ask = |model: &str| json!({"model": model, "messages": [{"role": "user", "content": "Say hi."}]});
    let (status, reply) = rig.send(Dialect::Chat, &ask("sim")).await;
    assert_eq!(status, 200, "{reply}");
    assert!(server.seen().is_empty(), "the simulated model answered, not the upstream");
    let (status, reply) = rig.send(Dialect::Chat, &ask("gpt-5-mini")).await;
    assert_eq!((status, &reply["choices"][0]["message"]["content"]), (200, &json!("From the upstream.")));
    let models: Vec<String> = rig
        .finish()
        .await
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ModelCall { role: Role::Agent, model, .. } => Some(model),
            _ => None,
        })
        .collect();
    assert_eq!(models, ["sim", "local"]);
}
