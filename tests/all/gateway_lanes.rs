//! An outside agent's concurrent calls through the gateway: each a lane,
//! served at once, held, stepped and failed one by one, and not sent (or
//! cut off) when their callers hang up. Concurrency is proven by what a
//! loopback upstream saw in flight at once, never by timing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use switchyard::engine::{Control, Event, EventKind, LaneAction};
use switchyard::model::ChatModel;
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::wire::Dialect;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::gateway::{Rig, rig};

/// What the upstream saw: calls in flight now, the most at once, calls
/// whose request was closed before they were answered; and the gate the
/// test opens to let every held call answer.
#[derive(Clone)]
struct Seen {
    now: Arc<watch::Sender<usize>>,
    most: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    closed: Arc<watch::Sender<usize>>,
    open: watch::Receiver<bool>,
}

struct Upstream {
    base_url: String,
    seen: Seen,
    release: watch::Sender<bool>,
}

/// Counts a call in flight until it ends, answered or closed.
struct InFlight {
    seen: Seen,
    answered: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.seen.now.send_modify(|n| *n -= 1);
        if !self.answered {
            self.seen.closed.send_modify(|n| *n += 1);
        }
    }
}

async fn complete(State(seen): State<Seen>, body: axum::Json<Value>) -> axum::Json<Value> {
    seen.total.fetch_add(1, Ordering::SeqCst);
    seen.now.send_modify(|n| *n += 1);
    seen.most.fetch_max(*seen.now.borrow(), Ordering::SeqCst);
    let mut guard = InFlight { seen: seen.clone(), answered: false };
    let mut open = seen.open.clone();
    let _ = open.wait_for(|go| *go).await;
    guard.answered = true;
    let asked = body.pointer("/messages/0/content").and_then(Value::as_str).unwrap_or("").to_string();
    axum::Json(json!({
        "id": "up", "object": "chat.completion", "created": 0, "model": "held",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": format!("answer to {asked}")}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    }))
}

/// An upstream that holds every call until the test releases them all.
async fn upstream() -> Upstream {
    let (release, open) = watch::channel(false);
    let seen = Seen {
        now: Arc::new(watch::channel(0).0),
        most: Arc::default(),
        total: Arc::default(),
        closed: Arc::new(watch::channel(0).0),
        open,
    };
    let app = axum::Router::new().route("/v1/chat/completions", post(complete)).with_state(seen.clone());
    Upstream { base_url: serve(app).await, seen, release }
}

/// Serves `app` on a loopback port: its `/v1` base URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/v1")
}

fn model(up: &Upstream) -> Arc<dyn ChatModel> {
    let mut cfg = HttpModelConfig::new("held", up.base_url.clone(), "held");
    cfg.max_retries = 0;
    cfg.stream = false;
    Arc::new(HttpModel::new(cfg).unwrap())
}

/// A chat call through the gateway, as its own task: aborting the task
/// is the client hanging up.
fn ask(rig: &Rig, i: usize) -> JoinHandle<(u16, Value)> {
    let (http, url, token) = (rig.http.clone(), rig.url(Dialect::Chat), rig.gateway.token().expose().to_string());
    tokio::spawn(async move {
        let body = json!({"model": "held", "messages": [{"role": "user", "content": format!("question {i}")}]});
        let resp = http.post(url).bearer_auth(token).json(&body).send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.json().await.unwrap_or(Value::Null))
    })
}

/// Waits for a count the upstream keeps to reach `n`; a gateway that
/// never lets it fails the test rather than hanging it.
async fn until(counter: &watch::Sender<usize>, n: usize, what: &str) {
    let mut rx = counter.subscribe();
    let reached = tokio::time::timeout(Duration::from_secs(30), rx.wait_for(|v| *v >= n)).await;
    assert!(reached.is_ok(), "{what}: the upstream saw {} of {n}", *counter.borrow());
}

/// Reads the session's events until `n` of them match, keeping them all.
async fn until_events(rig: &mut Rig, kept: &mut Vec<Event>, n: usize, f: impl Fn(&EventKind) -> bool) {
    while kept.iter().filter(|e| f(&e.kind)).count() < n {
        let next = tokio::time::timeout(Duration::from_secs(30), rig.events.recv()).await;
        let e = next.ok().flatten().unwrap_or_else(|| panic!("the events stopped before {n} matched"));
        kept.push(e);
    }
}

fn count(events: &[Event], f: impl Fn(&EventKind) -> bool) -> usize {
    events.iter().filter(|e| f(&e.kind)).count()
}

#[tokio::test]
async fn ten_concurrent_calls_are_in_flight_upstream_at_once() {
    let up = upstream().await;
    let mut rig = rig(model(&up)).await;
    let calls: Vec<_> = (0..10).map(|i| ask(&rig, i)).collect();
    until(&up.seen.now, 10, "ten concurrent calls").await;
    let mut events = Vec::new();
    until_events(&mut rig, &mut events, 10, |k| matches!(k, EventKind::ModelCall { .. })).await;
    up.release.send(true).unwrap();
    for (i, c) in calls.into_iter().enumerate() {
        let (status, body) = c.await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body.pointer("/choices/0/message/content").and_then(Value::as_str),
            Some(&*format!("answer to question {i}"))
        );
    }
    assert_eq!(up.seen.most.load(Ordering::SeqCst), 10);
    events.extend(rig.finish().await);
    // Each call opened a lane, went out and came back, in that order.
    for e in events.iter().filter_map(|e| match e.kind {
        EventKind::LaneOpened { call, model, .. } => Some((call, model)),
        _ => None,
    }) {
        let (call, model) = e;
        assert!(model);
        let at = |f: &dyn Fn(&EventKind) -> bool| events.iter().position(|e| f(&e.kind)).unwrap();
        let opened = at(&|k| matches!(k, EventKind::LaneOpened { call: c, .. } if *c == call));
        let sent = at(&|k| matches!(k, EventKind::ModelCall { call: c, .. } if *c == call));
        let back = at(&|k| matches!(k, EventKind::ModelReply { call: c, .. } if *c == call));
        assert!(opened < sent && sent < back, "call {call}: opened {opened}, sent {sent}, back {back}");
    }
    assert_eq!(count(&events, |k| matches!(k, EventKind::LaneOpened { .. })), 10);
    assert_eq!(count(&events, |k| matches!(k, EventKind::ModelReply { .. })), 10);
}

#[tokio::test]
async fn callers_that_hang_up_are_not_sent_or_are_cut_off() {
    let up = upstream().await;
    let mut rig = rig(model(&up)).await;
    let mut events = Vec::new();
    rig.handle.send(Control::Pause);
    until_events(&mut rig, &mut events, 1, |k| matches!(k, EventKind::Paused)).await;
    let mut calls: Vec<_> = (0..6).map(|i| ask(&rig, i)).collect();
    until_events(&mut rig, &mut events, 6, |k| matches!(k, EventKind::LaneOpened { .. })).await;
    // Three callers give up while the session is paused: their calls are never sent.
    for c in calls.drain(..3) {
        c.abort();
    }
    let before = |k: &EventKind| matches!(k, EventKind::CallAbandoned { why, .. } if why.contains("before"));
    until_events(&mut rig, &mut events, 3, before).await;
    rig.handle.send(Control::Resume);
    until(&up.seen.now, 3, "the three calls still wanted").await;
    // One more gives up while its call runs: the upstream request is closed.
    calls.remove(0).abort();
    until(&up.seen.closed, 1, "the call whose caller hung up").await;
    let during = |k: &EventKind| matches!(k, EventKind::CallAbandoned { why, .. } if why.contains("while"));
    until_events(&mut rig, &mut events, 1, during).await;
    up.release.send(true).unwrap();
    for c in calls {
        assert_eq!(c.await.unwrap().0, 200);
    }
    events.extend(rig.finish().await);
    assert_eq!(up.seen.total.load(Ordering::SeqCst), 3, "only the calls somebody waited for went out");
    assert_eq!(count(&events, |k| matches!(k, EventKind::ModelCall { .. })), 3);
    assert_eq!(count(&events, |k| matches!(k, EventKind::ModelReply { .. })), 2);
    assert_eq!(count(&events, |k| matches!(k, EventKind::CallAbandoned { .. })), 4);
}

#[tokio::test]
async fn a_lane_is_held_stepped_alone_or_failed_while_the_others_wait() {
    let up = upstream().await;
    let mut rig = rig(model(&up)).await;
    let mut events = Vec::new();
    rig.handle.send(Control::Pause);
    until_events(&mut rig, &mut events, 1, |k| matches!(k, EventKind::Paused)).await;
    let calls: Vec<_> = (0..3).map(|i| ask(&rig, i)).collect();
    until_events(&mut rig, &mut events, 3, |k| matches!(k, EventKind::LaneOpened { .. })).await;
    let lane = |i: usize| match events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::LaneOpened { lane, call, .. } => Some((lane, call)),
            _ => None,
        })
        .nth(i)
    {
        Some(l) => l,
        None => unreachable!("three lanes opened"),
    };
    let ((held, _), (stepped, stepped_call), (failed, failed_call)) = (lane(0), lane(1), lane(2));
    rig.handle.send(Control::Lane { lane: held, action: LaneAction::Hold });
    rig.handle.send(Control::Lane { lane: stepped, action: LaneAction::Step });
    rig.handle.send(Control::Lane {
        lane: failed,
        action: LaneAction::Fail { fault: switchyard::tool::fault::FaultMode::Error },
    });
    // Stepped alone through the closed gate.
    until(&up.seen.now, 1, "the stepped lane").await;
    until_events(
        &mut rig,
        &mut events,
        1,
        |k| matches!(k, EventKind::ModelFailed { call, .. } if *call == failed_call),
    )
    .await;
    // Resuming leaves the held lane held; releasing it lets it go.
    rig.handle.send(Control::Resume);
    rig.handle.send(Control::Lane { lane: held, action: LaneAction::Release });
    until(&up.seen.now, 2, "the released lane").await;
    up.release.send(true).unwrap();
    let answers: Vec<u16> = futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap().0).collect();
    assert_eq!(answers, [200, 200, 502], "the failed lane's caller reads a failed model call");
    events.extend(rig.finish().await);
    assert_eq!(up.seen.total.load(Ordering::SeqCst), 2);
    let sent: Vec<u64> = events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::ModelCall { call, .. } => Some(call),
            _ => None,
        })
        .collect();
    assert_eq!(sent.first(), Some(&stepped_call), "the stepped lane went first");
    let failed_why = events.iter().find_map(|e| match &e.kind {
        EventKind::ModelFailed { call, error, .. } if *call == failed_call => Some(error.clone()),
        _ => None,
    });
    assert_eq!(failed_why.as_deref(), Some("the call was failed by the user"));
    assert_eq!(count(&events, |k| matches!(k, EventKind::LaneChanged { .. })), 4);
}

/// `q` while calls wait at their gates, one of them held: each lane ends
/// in the trace as abandoned, each caller is told the session stopped,
/// none reached the upstream.
#[tokio::test]
async fn quitting_while_lanes_are_held_ends_every_lane() {
    let up = upstream().await;
    let mut rig = rig(model(&up)).await;
    let mut events = Vec::new();
    rig.handle.send(Control::Pause);
    until_events(&mut rig, &mut events, 1, |k| matches!(k, EventKind::Paused)).await;
    let calls: Vec<_> = (0..3).map(|i| ask(&rig, i)).collect();
    until_events(&mut rig, &mut events, 3, |k| matches!(k, EventKind::LaneOpened { .. })).await;
    let first = events.iter().find_map(|e| match e.kind {
        EventKind::LaneOpened { lane, .. } => Some(lane),
        _ => None,
    });
    rig.handle.send(Control::Lane { lane: first.unwrap(), action: LaneAction::Hold });
    until_events(&mut rig, &mut events, 1, |k| matches!(k, EventKind::LaneChanged { .. })).await;
    events.extend(rig.finish().await);
    let answers: Vec<u16> = futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap().0).collect();
    assert_eq!(answers, [503, 503, 503], "each caller is told the session stopped");
    assert_eq!(up.seen.total.load(Ordering::SeqCst), 0, "none was sent");
    let opened = count(&events, |k| matches!(k, EventKind::LaneOpened { .. }));
    let abandoned = count(&events, |k| matches!(k, EventKind::CallAbandoned { .. }));
    assert_eq!((opened, abandoned), (3, 3), "every lane opened is ended");
}

/// An upstream that answers 429 (Retry-After: 1) to a call while another
/// is in flight. With `max_in_flight = 1` the calls take their turns and
/// it never refuses; without, the refused calls are retried after its
/// Retry-After until each is answered. Either way every lane ends.
#[tokio::test]
async fn an_upstream_that_refuses_concurrency_with_429s() {
    async fn one_at_a_time(State(busy): State<Arc<(AtomicUsize, AtomicUsize)>>) -> axum::response::Response {
        use axum::response::IntoResponse;
        if busy.0.fetch_add(1, Ordering::SeqCst) > 0 {
            busy.0.fetch_sub(1, Ordering::SeqCst);
            busy.1.fetch_add(1, Ordering::SeqCst);
            let body = json!({"error": {"message": "one at a time", "type": "rate_limit_error"}});
            return (axum::http::StatusCode::TOO_MANY_REQUESTS, [("retry-after", "1")], axum::Json(body))
                .into_response();
        }
        // Held a while, so the others arrive while it runs.
        tokio::time::sleep(Duration::from_millis(50)).await;
        busy.0.fetch_sub(1, Ordering::SeqCst);
        axum::Json(json!({
            "id": "up", "object": "chat.completion", "created": 0, "model": "held",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        }))
        .into_response()
    }
    for bound in [Some(1), None] {
        let busy = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
        let app = axum::Router::new().route("/v1/chat/completions", post(one_at_a_time)).with_state(busy.clone());
        let mut cfg = HttpModelConfig::new("held", serve(app).await, "held");
        (cfg.max_retries, cfg.stream, cfg.max_in_flight) = (8, false, bound);
        let rig = rig(Arc::new(HttpModel::new(cfg).unwrap())).await;
        let calls: Vec<_> = (0..4).map(|i| ask(&rig, i)).collect();
        let answers: Vec<u16> = futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap().0).collect();
        assert_eq!(answers, [200; 4], "bound {bound:?}");
        let events = rig.finish().await;
        let refused = busy.1.load(Ordering::SeqCst);
        match bound {
            Some(_) => assert_eq!(refused, 0, "taking turns, none was refused"),
            None => assert!(refused > 0, "four at once met the upstream's refusals"),
        }
        assert_eq!(count(&events, |k| matches!(k, EventKind::ModelReply { .. })), 4, "bound {bound:?}");
    }
}
