//! The conversations one agent holds, told apart from the wire: a request
//! that repeats an earlier one and its reply carries that thread on, a
//! second one that does forks it, a new conversation is a thread of its
//! own, `X-Switchyard-Agent` names one; a breakpoint on a thread pauses
//! before its calls; the fold counts each thread's calls and tokens.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard::engine::debug::Condition;
use switchyard::engine::event::ThreadHow;
use switchyard::engine::fold::SessionState;
use switchyard::engine::fold::threads::ThreadState;
use switchyard::engine::{Control, Event, EventKind};
use switchyard::model::ChatModel;
use switchyard::model::wire::Dialect;
use switchyard::sim::{SimConfig, SimModel};
use switchyard::ui::panes::transcript;
use switchyard::ui::{Navigation, PaneCtx, Theme};

use super::gateway::{Rig, rig};

fn sim() -> Arc<dyn ChatModel> {
    Arc::new(SimModel::new(SimConfig { name: "sim".into(), seed: 7, noise: 0.0 }))
}

/// A chat request with `messages`, named `agent` when given; the status,
/// and the reply's message as the agent's next request carries it back.
async fn chat(rig: &Rig, agent: Option<&str>, messages: &[Value]) -> (u16, Value) {
    let body = json!({"model": "sim", "messages": messages});
    let mut rb = rig.http.post(rig.url(Dialect::Chat)).bearer_auth(rig.gateway.token().expose()).json(&body);
    if let Some(name) = agent {
        rb = rb.header("X-Switchyard-Agent", name);
    }
    let resp = rb.send().await.unwrap();
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    (status, body.pointer("/choices/0/message").cloned().unwrap_or(body))
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn opened(events: &[Event]) -> Vec<(u32, String, Option<u32>, ThreadHow)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ThreadOpened { thread, name, parent, how } => {
                Some((*thread, name.clone(), *parent, how.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The thread of each model call, in call order.
fn threads_of_model_calls(events: &[Event]) -> Vec<Option<u32>> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::LaneOpened { model: true, thread, .. } => Some(*thread),
            _ => None,
        })
        .collect()
}

/// Two conversations, one carried on twice from the same reply (a fork),
/// one named by its header, and a request with an empty name refused.
async fn four_threads() -> Vec<Event> {
    let rig = rig(sim()).await;
    let a1 = [json!({"role": "system", "content": "Be brief."}), user("what is the capital of France")];
    let (status, reply) = chat(&rig, None, &a1).await;
    assert_eq!(status, 200, "{reply}");
    let b1 = [user("an unrelated question")];
    assert_eq!(chat(&rig, None, &b1).await.0, 200);
    // The SDK's way of carrying a reply back: extra fields, re-encoded.
    let mut echoed = reply.clone();
    echoed["refusal"] = Value::Null;
    let a2: Vec<Value> = a1.iter().cloned().chain([echoed, user("and of Spain")]).collect();
    assert_eq!(chat(&rig, None, &a2).await.0, 200);
    // Carrying on from the same reply again: the thread forks.
    let a2b: Vec<Value> = a1.iter().cloned().chain([reply, user("and of Italy")]).collect();
    assert_eq!(chat(&rig, None, &a2b).await.0, 200);
    let (status, _) = chat(&rig, Some("scout"), &[user("look around")]).await;
    assert_eq!(status, 200);
    let (status, body) = chat(&rig, Some(""), &[user("x")]).await;
    assert_eq!(status, 400);
    assert!(body.to_string().contains("X-Switchyard-Agent"), "{body}");
    rig.finish().await
}

#[tokio::test]
async fn conversations_continue_fork_and_are_named_and_counted() {
    let events = four_threads().await;

    let opened = opened(&events);
    let names: Vec<(&str, Option<u32>, &ThreadHow)> = opened.iter().map(|o| (o.1.as_str(), o.2, &o.3)).collect();
    assert_eq!(
        names,
        [
            ("t1", None, &ThreadHow::Conversation),
            ("t2", None, &ThreadHow::Conversation),
            ("t1/fork", Some(0), &ThreadHow::Fork),
            ("scout", None, &ThreadHow::Conversation),
        ]
    );
    assert_eq!(threads_of_model_calls(&events), [Some(0), Some(1), Some(0), Some(2), Some(3)]);

    let state = SessionState::from_events(&events);
    let run = state.current.as_ref().unwrap();
    let t1 = run.threads.by_name("t1").unwrap();
    assert_eq!((t1.model_calls, t1.state), (2, ThreadState::Answered));
    assert!(t1.usage.prompt_tokens > 0 && t1.cost >= 0.0);
    let tree: Vec<(usize, &str)> = run.threads.tree().into_iter().map(|(d, t)| (d, t.name.as_str())).collect();
    assert_eq!(tree, [(0, "t1"), (1, "t1/fork"), (0, "t2"), (0, "scout")]);
    // Each transcript entry of a call knows its thread.
    let of_fork = (0..run.transcript.len()).filter(|i| run.threads.of_entry(*i) == Some(2)).count();
    assert!(of_fork >= 3, "the fork's note, prompt and reply: {of_fork}");
}

#[tokio::test]
async fn a_breakpoint_on_a_thread_pauses_before_its_calls_and_not_others() {
    let mut rig = rig(sim()).await;
    let condition: Condition = "thread=scout".parse().unwrap();
    rig.handle.send(Control::SetBreakpoint { condition });
    assert_eq!(chat(&rig, Some("other"), &[user("first")]).await.0, 200, "another thread runs on");
    let scout = {
        let (http, url, token) = (rig.http.clone(), rig.url(Dialect::Chat), rig.gateway.token().expose().to_string());
        tokio::spawn(async move {
            let body = json!({"model": "sim", "messages": [user("look around")]});
            let rb = http.post(url).bearer_auth(token).header("X-Switchyard-Agent", "scout").json(&body);
            rb.send().await.unwrap().status().as_u16()
        })
    };
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(30), rig.events.recv()).await.unwrap().unwrap();
        let hit = matches!(&e.kind, EventKind::BreakpointHit { detail, .. } if detail.contains("thread scout"));
        seen.push(e);
        if hit {
            break;
        }
    }
    let hits = seen.iter().filter(|e| matches!(e.kind, EventKind::BreakpointHit { .. })).count();
    assert_eq!(hits, 1, "the other thread's call met no breakpoint");
    assert!(
        !seen.iter().any(|e| matches!(&e.kind, EventKind::ModelCall { call, .. } if *call == 2)),
        "the scout's call waits at the breakpoint"
    );
    rig.handle.send(Control::Resume);
    assert_eq!(scout.await.unwrap(), 200);
    let events = rig.finish().await;
    let hits = events.iter().filter(|e| matches!(e.kind, EventKind::BreakpointHit { .. })).count();
    assert_eq!(hits, 0, "no more hits after the one seen");
}

/// The Transcript shows the threads as a tree above the entries; followed,
/// one thread's entries alone.
#[tokio::test]
async fn the_transcript_shows_the_tree_and_follows_one_thread() {
    let state = SessionState::from_events(&four_threads().await);
    let draw = |nav: &Navigation| {
        let theme = Theme::default();
        let ctx = PaneCtx { state: &state, nav, theme: &theme, focused: true, now_ms: state.t };
        crate::common::buffer_text(&crate::common::render(120, 40, |f| transcript::render(f, f.area(), &ctx)))
    };
    let all = draw(&Navigation::default());
    assert!(all.contains("threads (4)"), "{all}");
    for row in ["▸ t1 ", "  ▸ t1/fork ", "▸ scout "] {
        assert!(all.contains(row), "{row}\n{all}");
    }
    assert!(all.contains("capital of France") && all.contains("look around"), "{all}");
    let nav = Navigation { thread: Some("scout".into()), ..Navigation::default() };
    let scout = draw(&nav);
    assert!(scout.contains("following thread scout") && scout.contains("● scout"), "{scout}");
    assert!(scout.contains("look around") && !scout.contains("capital of France"), "{scout}");
}
