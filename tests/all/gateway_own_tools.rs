//! An outside agent's own tools, seen from the wire: the tool call a reply
//! asks for is a call of the session, the result the agent's next request
//! brings back for its id ends it, and a fault or the user failing its lane
//! rewrites that result before the upstream reads it.

use serde_json::{Value, json};
use switchyard::engine::fold::{LaneState, SessionState};
use switchyard::engine::{Control, Event, EventKind, LaneAction};
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::wire::Dialect;
use switchyard::tool::CallSource;
use switchyard::tool::fault::{Fault, FaultMode};

use super::gateway::{Rig, rig};
use super::openai::{Reply, Server, completion, text_reply};

/// A reply asking for the agent's own `word_count` and `reverse`.
fn asks_for_tools() -> Reply {
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_wc", "type": "function", "function": {"name": "word_count", "arguments": "{\"text\": \"a b c\"}"}},
        {"id": "call_rev", "type": "function", "function": {"name": "reverse", "arguments": "{\"text\": \"abc\"}"}}]});
    Reply::json(200, completion(message, Some(json!({"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}))))
}

fn upstream_model(server: &Server) -> std::sync::Arc<dyn switchyard::model::ChatModel> {
    let mut cfg = HttpModelConfig::new("local", server.base_url(), "test-model");
    cfg.max_retries = 0;
    std::sync::Arc::new(HttpModel::new(cfg).unwrap())
}

async fn until(rig: &mut Rig, kept: &mut Vec<Event>, f: impl Fn(&EventKind) -> bool) {
    while !kept.iter().any(|e| f(&e.kind)) {
        kept.push(rig.events.recv().await.expect("the session ended first"));
    }
}

#[tokio::test]
async fn the_agent_s_own_tools_are_calls_and_faults_rewrite_their_results() {
    let server = Server::start(vec![asks_for_tools(), text_reply("There are 3 words.")]).await;
    let mut rig = rig(upstream_model(&server)).await;
    let mut events = Vec::new();
    let ask = json!({"model": "m", "messages": [{"role": "user", "content": "Count the words in 'a b c' and reverse abc."}],
        "tools": [{"type": "function", "function": {"name": "word_count", "parameters": {"type": "object"}}},
                  {"type": "function", "function": {"name": "reverse", "parameters": {"type": "object"}}}]});
    let (status, first) = rig.send(Dialect::Chat, &ask).await;
    assert_eq!(status, 200, "{first}");
    let calls = first.pointer("/choices/0/message/tool_calls").cloned().unwrap();
    until(&mut rig, &mut events, |k| matches!(k, EventKind::ToolCall { tool, .. } if tool == "reverse")).await;
    // word_count fails by the fault table; reverse by the user's `k` on its lane.
    let (tool, fault) = Fault::parse_spec("word_count:error").unwrap();
    rig.handle.send(Control::InjectFault { tool, fault });
    let reverse_lane = events.iter().find_map(|e| match &e.kind {
        EventKind::LaneOpened { lane, name, .. } if name == "reverse" => Some(*lane),
        _ => None,
    });
    rig.handle
        .send(Control::Lane { lane: reverse_lane.unwrap(), action: LaneAction::Fail { fault: FaultMode::Timeout } });
    until(&mut rig, &mut events, |k| matches!(k, EventKind::LaneChanged { .. })).await;
    until(&mut rig, &mut events, |k| matches!(k, EventKind::FaultInjected { .. })).await;

    let mut next = ask.clone();
    let history = next["messages"].as_array_mut().unwrap();
    history.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
    history.push(json!({"role": "tool", "tool_call_id": "call_wc", "content": "3"}));
    history.push(json!({"role": "tool", "tool_call_id": "call_rev", "content": "cba"}));
    history.push(json!({"role": "tool", "tool_call_id": "call_never_asked", "content": "?"}));
    let (status, second) = rig.send(Dialect::Chat, &next).await;
    assert_eq!(status, 200, "{second}");
    events.extend(rig.finish().await);

    // The upstream read what the session made of the agent's results.
    let sent = &server.seen()[1].body;
    let results: Vec<(&str, &str)> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        results,
        [
            ("call_wc", "Error: injected fault: error"),
            ("call_rev", "Error: 'reverse' timed out (injected)"),
            ("call_never_asked", "?")
        ]
    );
    // Each is a tool call of the session, ended with the result recorded as the agent's.
    let ended: Vec<(String, Option<FaultMode>, Option<CallSource>, bool)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, fault, source, outcome, .. } => Some((
                tool.clone(),
                *fault,
                *source,
                matches!(outcome, switchyard::engine::event::ToolOutcome::Ok { .. }),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        ended,
        [
            ("word_count".to_string(), Some(FaultMode::Error), Some(CallSource::Agent), false),
            ("reverse".to_string(), Some(FaultMode::Timeout), Some(CallSource::Agent), false)
        ]
    );
    assert!(events.iter().any(|e| matches!(&e.kind,
        EventKind::ToolResultUnmatched { id, .. } if id == "call_never_asked")));
    // The run's path and the Workers pane's lanes have them.
    let mut state = SessionState::default();
    for e in &events {
        state.apply(e);
    }
    let run = state.current.as_ref().unwrap();
    assert_eq!(run.path, ["word_count", "reverse"]);
    let lanes: Vec<(&str, LaneState)> =
        run.agent_lanes.as_ref().unwrap().lanes.iter().map(|l| (l.tool.as_str(), l.state)).collect();
    assert!(lanes.contains(&("reverse", LaneState::Done { ok: false, filtered: false })), "{lanes:?}");
}

#[tokio::test]
async fn a_result_the_agent_brings_unchanged_reaches_the_upstream_as_it_was() {
    let server = Server::start(vec![asks_for_tools(), text_reply("Done.")]).await;
    let mut rig = rig(upstream_model(&server)).await;
    let ask = json!({"model": "m", "messages": [{"role": "user", "content": "Count."}]});
    let (_, first) = rig.send(Dialect::Chat, &ask).await;
    let mut next = ask.clone();
    let history = next["messages"].as_array_mut().unwrap();
    history.push(
        json!({"role": "assistant", "content": null, "tool_calls": first.pointer("/choices/0/message/tool_calls")}),
    );
    history.push(json!({"role": "tool", "tool_call_id": "call_wc", "content": "{\"words\": 3}"}));
    history.push(json!({"role": "tool", "tool_call_id": "call_rev", "content": "Error: reverse needs text"}));
    let (status, _) = rig.send(Dialect::Chat, &next).await;
    assert_eq!(status, 200);
    let mut events = Vec::new();
    while let Ok(e) = rig.events.try_recv() {
        events.push(e);
    }
    events.extend(rig.finish().await);
    assert_eq!(server.seen()[1].body["messages"], next["messages"], "nothing rewritten");
    let outcomes: Vec<Value> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { outcome, .. } => Some(serde_json::to_value(outcome).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes[0]["value"], json!({"words": 3}), "a JSON result is read as JSON");
    assert!(outcomes[1]["error"]["message"].as_str().unwrap().contains("reverse needs text"), "{}", outcomes[1]);
}
