//! The MCP gateway in process: tool calls handed to a session through the
//! model gateway's desk (what `/mcp` serves) are the session's tool calls,
//! BTP's budget included; its HTTP endpoint asks for the token and refuses
//! a foreign `Host`. (The MCP Python SDK drives it in `tests/agent_clients.rs`,
//! MCP's conformance suite in `scripts/mcp-conformance.sh server`.)

use std::sync::Arc;

use serde_json::json;
use switchyard::budget::experience::ExperienceStore;
use switchyard::engine::budgeting::BtpSetup;
use switchyard::engine::event::RefuseReason;
use switchyard::engine::{Control, Engine, EngineSetup, Event, EventKind, LogicalClock, ModelSlot, Models};
use switchyard::gateway::{Gateway, GatewaySetup};
use switchyard::mcp_gateway::{DeskError, ToolDesk};
use switchyard::model::Role;
use switchyard::model::price::Price;
use switchyard::sim::{SimConfig, SimModel};
use switchyard::strategy::bridge::Bridge;
use switchyard::task::Task;
use switchyard::tool::ToolErrorKind;
use tokio::sync::mpsc;

use super::common::small_library;

struct Rig {
    gateway: Gateway,
    handle: switchyard::engine::EngineHandle,
    events: mpsc::UnboundedReceiver<Event>,
    /// What `until` read, for `finish` to return with the rest.
    read: Vec<Event>,
    run: tokio::task::JoinHandle<switchyard::engine::SessionOutcome>,
}

async fn rig(budget: Option<f64>) -> Rig {
    let (calls, inbox) = mpsc::channel(16);
    let gateway =
        Gateway::start(GatewaySetup { models: vec!["sim".into()], ..GatewaySetup::default() }, calls).await.unwrap();
    gateway.tools().offer(switchyard::tool::ToolLibrary::clone(&small_library()));
    let model = Arc::new(SimModel::new(SimConfig { name: "sim".into(), seed: 7, noise: 0.0 }));
    let mut models = Models::single(model.clone(), Price::default());
    models.set(Role::Agent, ModelSlot { model, price: Price::default() });
    let bridge = Bridge::new(inbox, None).with_offer(gateway.tools().offer_sender());
    let strategy: Box<dyn switchyard::engine::Strategy> = Box::new(bridge);
    let mut s = EngineSetup::new(small_library(), models, strategy);
    s.clock = Arc::new(LogicalClock::default());
    s.params.top_k = 4;
    // A hung tool is stopped quickly here.
    s.tool_timeout = std::time::Duration::from_millis(300);
    s.params.budget = budget;
    if budget.is_some() {
        s.btp = Some(BtpSetup::new(ExperienceStore::in_memory(Vec::new())));
    }
    let (mut engine, handle) = Engine::new(s);
    let events = engine.subscribe();
    let task = Task { id: "outside".into(), query: "calculate 2 + 3".into(), ..Task::default() };
    let run = tokio::spawn(async move { engine.run(vec![task]).await.unwrap() });
    Rig { gateway, handle, events, read: Vec::new(), run }
}

impl Rig {
    /// Reads events until `n` have matched: the controls sent before took
    /// effect (a control and a request racing would make a flaky test).
    async fn until(&mut self, n: usize, mut hit: impl FnMut(&EventKind) -> bool) {
        let mut seen = 0;
        while seen < n {
            let e = tokio::time::timeout(std::time::Duration::from_secs(30), self.events.recv()).await;
            let e = e.expect("no such event within 30 s").expect("the session ended");
            if hit(&e.kind) {
                seen += 1;
            }
            self.read.push(e);
        }
    }

    async fn finish(mut self) -> Vec<Event> {
        self.handle.send(Control::Stop);
        self.run.await.unwrap();
        let mut out = std::mem::take(&mut self.read);
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }
}

#[tokio::test]
async fn a_call_through_the_desk_is_a_tool_call_of_the_session_with_its_faults() {
    let mut rig = rig(None).await;
    let (tool, fault) = switchyard::tool::fault::Fault::parse_spec("geo_lookup:error").unwrap();
    rig.handle.send(Control::InjectFault { tool, fault });
    rig.until(1, |k| matches!(k, EventKind::FaultInjected { .. })).await;
    let desk = rig.gateway.tools().clone();
    let ok = desk.call("calculator", json!({"expression": "2+3"})).await.unwrap();
    assert_eq!(ok.unwrap()["result"], json!(5));
    let broken = desk.call("geo_lookup", json!({"country": "France"})).await.unwrap();
    assert!(broken.is_err(), "the injected fault reaches the agent: {broken:?}");
    let unknown = desk.find("calculater").await.unwrap_err();
    assert!(matches!(&unknown, DeskError::UnknownTool { hint, .. } if hint.contains("calculator")), "{unknown}");
    let events = rig.finish().await;
    let results: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, fault, .. } => Some((tool.as_str(), fault.is_some())),
            _ => None,
        })
        .collect();
    assert_eq!(results, [("calculator", false), ("geo_lookup", true)]);
}

/// Two clients calling at once are both served, each call its own in the
/// trace; a client that hangs up mid-call leaves the call to finish and be
/// recorded, and the session serves the next one.
#[tokio::test]
async fn calls_at_once_are_all_served_and_a_caller_that_leaves_loses_nothing() {
    let mut rig = rig(None).await;
    let desk = rig.gateway.tools().clone();
    let (a, b) = tokio::join!(
        desk.call("calculator", json!({"expression": "2+3"})),
        desk.call("calculator", json!({"expression": "4*5"}))
    );
    assert_eq!(a.unwrap().unwrap()["result"], json!(5));
    assert_eq!(b.unwrap().unwrap()["result"], json!(20));

    let (tool, fault) = switchyard::tool::fault::Fault::parse_spec("geo_lookup:slow=100").unwrap();
    rig.handle.send(Control::InjectFault { tool, fault });
    rig.until(1, |k| matches!(k, EventKind::FaultInjected { .. })).await;
    let leaving = tokio::spawn({
        let desk = desk.clone();
        async move { desk.call("geo_lookup", json!({"country": "France"})).await }
    });
    rig.until(1, |k| matches!(k, EventKind::ToolCall { tool, .. } if tool == "geo_lookup")).await;
    leaving.abort();
    let after = desk.call("calculator", json!({"expression": "1+1"})).await.unwrap();
    assert_eq!(after.unwrap()["result"], json!(2));
    let events = rig.finish().await;
    let mut results: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, .. } => Some(tool.as_str()),
            _ => None,
        })
        .collect();
    results.sort_unstable();
    assert_eq!(results, ["calculator", "calculator", "calculator", "geo_lookup"], "every call recorded");
}

/// A tool that hangs past its timeout is stopped, and the agent reads a
/// timeout error; the session goes on.
#[tokio::test]
async fn a_tool_that_hangs_is_a_timeout_error_for_the_agent() {
    let mut rig = rig(None).await;
    let (tool, fault) = switchyard::tool::fault::Fault::parse_spec("geo_lookup:timeout").unwrap();
    rig.handle.send(Control::InjectFault { tool, fault });
    rig.until(1, |k| matches!(k, EventKind::FaultInjected { .. })).await;
    let desk = rig.gateway.tools().clone();
    let hung = desk.call("geo_lookup", json!({"country": "France"})).await.unwrap().unwrap_err();
    assert!(hung.kind == switchyard::tool::ToolErrorKind::Timeout, "{hung:?}");
    assert_eq!(desk.call("calculator", json!({"expression": "1+2"})).await.unwrap().unwrap()["result"], json!(3));
    rig.finish().await;
}

#[tokio::test]
async fn btp_refuses_a_bridged_call_its_plan_forbids_and_says_why() {
    // Each tool costs 1: a budget of 1.5 leaves one call in the plan.
    let rig = rig(Some(1.5)).await;
    let desk = rig.gateway.tools().clone();
    let mut refused = Vec::new();
    for _ in 0..3 {
        if let Err(e) = desk.call("calculator", json!({"expression": "2+3"})).await.unwrap() {
            refused.push(e);
        }
    }
    assert!(!refused.is_empty(), "the plan does not allow three calls within 1.5");
    assert!(refused.iter().all(|e| e.kind == ToolErrorKind::Refused && e.message.contains("forbidden")), "{refused:?}");
    let events = rig.finish().await;
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::PlanMade { .. })), "BTP planned the bridged run");
    let refusals =
        events.iter().filter(|e| matches!(&e.kind, EventKind::Refused { reason: RefuseReason::Forbidden, .. })).count();
    assert_eq!(refusals, refused.len(), "each refusal is an event");
    let ran = events.iter().filter(|e| matches!(e.kind, EventKind::ToolCall { .. })).count();
    assert_eq!(ran + refused.len(), 3, "a refused call never runs");
    let spent = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::BudgetSpent { spent, .. } => Some(*spent),
        _ => None,
    });
    assert!(spent.is_some_and(|s| s <= 1.5), "{spent:?}");
}

#[tokio::test]
async fn the_http_endpoint_asks_for_the_token_and_refuses_a_foreign_host() {
    let rig = rig(None).await;
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    let post = |host: Option<&str>, token: Option<&str>| {
        let mut rb =
            http.post(rig.gateway.mcp_url()).header("accept", "application/json, text/event-stream").json(&init);
        if let Some(h) = host {
            rb = rb.header("host", h);
        }
        if let Some(t) = token {
            rb = rb.bearer_auth(t);
        }
        rb.send()
    };
    let token = rig.gateway.token().expose().to_string();
    let none = post(None, None).await.unwrap();
    assert_eq!(none.status(), 401);
    let body: serde_json::Value = none.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32001, "{body}");
    assert_eq!(post(None, Some("sy-wrong")).await.unwrap().status(), 401);
    let foreign = post(Some("evil.example.com"), Some(&token)).await.unwrap();
    assert!(foreign.status().is_client_error(), "DNS rebinding: {}", foreign.status());
    let ok = post(None, Some(&token)).await.unwrap();
    assert!(ok.status().is_success(), "{}", ok.status());
    assert!(ok.text().await.unwrap().contains("switchyard"), "the initialize result names the server");
    rig.finish().await;
}

#[tokio::test]
async fn the_graph_learns_from_a_bridged_run_by_the_rule() {
    let mut rig = rig(None).await;
    let (tool, fault) = switchyard::tool::fault::Fault::parse_spec("geo_lookup:error").unwrap();
    rig.handle.send(Control::InjectFault { tool, fault });
    rig.until(1, |k| matches!(k, EventKind::FaultInjected { .. })).await;
    let desk = rig.gateway.tools().clone();
    desk.call("geo_lookup", json!({"country": "France"})).await.unwrap().unwrap_err();
    desk.call("geo_lookup_mirror", json!({"country": "France"})).await.unwrap().unwrap();
    // The agent is gone (no gateway, no desk): the run ends, and learns.
    drop(desk);
    drop(rig.gateway);
    let outcome = rig.run.await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rig.events.try_recv() {
        events.push(e);
    }
    let scores = events.iter().find_map(|e| match &e.kind {
        EventKind::Evaluated { scores } => Some(scores.clone()),
        _ => None,
    });
    let want = [("geo_lookup".to_string(), -1), ("geo_lookup_mirror".to_string(), 1)].into();
    assert_eq!(scores, Some(want), "the failed tool loses, its backup gains");
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::GraphUpdated { .. })), "the graph learnt");
    let graph = outcome.graph.expect("an agent's session keeps a graph");
    assert!(graph.score("geo_lookup_mirror") > graph.score("geo_lookup"));
}

/// A Chat Completions request offering `names` as function tools.
fn chat_with_tools(names: &[&str], question: &str) -> serde_json::Value {
    let tools: Vec<_> = names
        .iter()
        .map(|n| {
            json!({"type": "function", "function": {"name": n, "description": format!("{n} tool"),
            "parameters": {"type": "object", "properties": {}}}})
        })
        .collect();
    json!({"model": "sim", "messages": [{"role": "user", "content": question}], "tools": tools})
}

async fn post_chat(rig: &Rig, body: &serde_json::Value) -> u16 {
    let url = format!("{}/chat/completions", rig.gateway.openai_base_url());
    let token = rig.gateway.token().expose().to_string();
    reqwest::Client::new().post(url).bearer_auth(token).json(body).send().await.unwrap().status().as_u16()
}

#[tokio::test]
async fn narrowing_keeps_the_top_k_tools_of_an_agent_s_request_and_says_what_it_dropped() {
    let mut rig = rig(None).await;
    let offered = ["web_search", "calculator", "geo_lookup", "geo_lookup_mirror", "agent_own_tool"];
    // Off: the request goes as it is, and nothing is said.
    assert_eq!(post_chat(&rig, &chat_with_tools(&offered, "What is the capital of France?")).await, 200);
    for change in ["narrow=retrieval", "narrow_k=2"] {
        rig.handle.send(Control::SetParam { change: switchyard::engine::ParamChange::parse(change).unwrap() });
    }
    rig.until(2, |k| matches!(k, EventKind::ParamChanged { .. })).await;
    assert_eq!(
        post_chat(&rig, &chat_with_tools(&offered, "What is the capital of France? Look up the country.")).await,
        200
    );
    // A tool the model no longer sees is still served.
    let desk = rig.gateway.tools().clone();
    desk.call("calculator", json!({"expression": "1+1"})).await.unwrap().unwrap();
    let events = rig.finish().await;
    let narrowed: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolsNarrowed { mode, kept, dropped, .. } => Some((*mode, kept.clone(), dropped.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(narrowed.len(), 1, "only the request made with narrowing on: {narrowed:?}");
    let (mode, kept, dropped) = &narrowed[0];
    assert_eq!(*mode, switchyard::engine::Narrowing::Retrieval);
    assert_eq!(kept.len(), 2);
    assert!(kept.iter().all(|k| k.starts_with("geo_lookup")), "the country lookups rank first: {kept:?}");
    assert_eq!(dropped, &["web_search", "calculator", "agent_own_tool"], "the rest, in the request's order");
    // What the retriever shows is the kept ranking, not the whole library.
    let shown: Vec<usize> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Retrieved { hits, .. } => Some(hits.len()),
            _ => None,
        })
        .collect();
    // (The MCP list is ranked too, by the task alone, when narrowing changes.)
    assert!(shown.iter().all(|&n| n <= 2) && shown.contains(&2), "at most K hits a ranking: {shown:?}");
    // The model was asked with the kept tools only.
    let sent = events.iter().rev().find_map(|e| match &e.kind {
        EventKind::ModelCall { wire: Some(w), .. } => Some(w.body["tools"].clone()),
        _ => None,
    });
    let names: Vec<&str> =
        sent.as_ref().unwrap().as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, kept.iter().map(String::as_str).collect::<Vec<_>>());
}

#[tokio::test]
async fn graph_narrowing_ranks_by_the_weights_from_the_agent_s_last_tool() {
    let mut rig = rig(None).await;
    // The agent stands on calculator; geo_lookup_mirror is made the heaviest way on.
    let desk = rig.gateway.tools().clone();
    desk.call("calculator", json!({"expression": "1+1"})).await.unwrap().unwrap();
    rig.handle.send(Control::EditScore { tool: "geo_lookup_mirror".into(), score: 3.0 });
    for change in ["narrow=graph", "narrow_k=1"] {
        rig.handle.send(Control::SetParam { change: switchyard::engine::ParamChange::parse(change).unwrap() });
    }
    rig.until(3, |k| matches!(k, EventKind::ParamChanged { .. } | EventKind::ScoreEdited { .. })).await;
    let offered = ["web_search", "geo_lookup", "geo_lookup_mirror", "agent_own_tool"];
    assert_eq!(post_chat(&rig, &chat_with_tools(&offered, "next?")).await, 200);
    let events = rig.finish().await;
    let kept = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolsNarrowed { kept, .. } => Some(kept.clone()),
        _ => None,
    });
    assert_eq!(kept, Some(vec!["geo_lookup_mirror".to_string()]));
}

#[tokio::test]
async fn narrowing_applies_to_the_mcp_tool_list_and_each_change_is_announced() {
    let rig = rig(None).await;
    let desk = rig.gateway.tools().clone();
    assert_eq!(desk.offered().await.len(), 4, "off: the whole library");
    let mut changes = desk.changes();
    changes.mark_unchanged();
    desk.call("geo_lookup", json!({"country": "France"})).await.unwrap().unwrap();
    rig.handle.send(Control::EditScore { tool: "geo_lookup_mirror".into(), score: 3.0 });
    for change in ["narrow=graph", "narrow_k=1"] {
        rig.handle.send(Control::SetParam { change: switchyard::engine::ParamChange::parse(change).unwrap() });
    }
    let narrowed = changes.wait_for(|o| o.narrowed.as_ref().is_some_and(|n| n.len() == 1)).await.unwrap().clone();
    assert_eq!(narrowed.narrowed, Some(vec!["geo_lookup_mirror".to_string()]), "the heaviest edge from geo_lookup");
    let listed: Vec<String> = desk.offered().await.iter().map(|t| t.name.clone()).collect();
    assert_eq!(listed, ["geo_lookup_mirror"]);
    // A tool no longer listed is still served.
    desk.call("calculator", json!({"expression": "1+1"})).await.unwrap().unwrap();
    rig.handle.send(Control::SetParam { change: switchyard::engine::ParamChange::parse("narrow=off").unwrap() });
    changes.wait_for(|o| o.narrowed.is_none()).await.unwrap();
    assert_eq!(desk.offered().await.len(), 4, "off again: the whole library, announced");
    rig.finish().await;
}

/// A library of the user's own under the sample trajectories (which name
/// other tools): an agent's session starts with a uniform graph instead
/// of refusing to serve.
#[test]
fn an_agent_session_starts_when_the_trajectories_name_other_tools() {
    let dir = tempfile::tempdir().unwrap();
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp-gateway/config.toml");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--json", "--agent", "--", "python3", "-c", "print('done')"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary.pointer("/runs/0/answer"), Some(&json!("done")), "{stderr}");
}
