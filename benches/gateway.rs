//! What the model gateway adds to an agent's model call: the same Chat
//! Completions request sent straight to an upstream on loopback, and
//! through the gateway (the engine's bridge, the gate, the events, the HTTP
//! client) to the same upstream. The upstream answers at once, so the
//! difference is the gateway's own time. Streamed: the time to the first
//! event. Besides criterion's estimates, each prints its p50 and p99 over
//! every iteration, and the memory a request waiting at a closed gate holds
//! (RSS over 200 such requests).
//!
//! Fanned out: ten calls at once to an upstream that takes 1 s a call,
//! straight and through the gateway (served concurrently, each a lane);
//! sixteen callers at once, the gateway's added p99; and 300 streamed calls
//! to the slow upstream with half the callers hanging up at seeded points,
//! counting the events that opened a lane against those that ended one.
//!
//! `cargo bench --bench gateway` (figures in docs/src/performance.md).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/peak.rs"]
mod peak;

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

use switchyard::engine::{Engine, EngineHandle, EngineSetup, ModelSlot, Models};
use switchyard::gateway::{Gateway, GatewaySetup};
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::price::Price;
use switchyard::model::{ChatModel, Role};
use switchyard::strategy::bridge::Bridge;
use switchyard::task::Task;
use switchyard::tool::ToolLibrary;

/// An upstream that answers every chat completion at once, the same way.
async fn upstream() -> SocketAddr {
    let reply = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "up",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "The answer is 5."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 6, "total_tokens": 26},
    });
    let app = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(move || std::future::ready(axum::Json(reply.clone()))));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// An upstream that takes `ms` to answer each call, any number at once.
async fn slow_upstream(ms: u64) -> SocketAddr {
    let reply = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "up",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "The answer is 5."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 6, "total_tokens": 26},
    });
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let reply = reply.clone();
            async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                axum::Json(reply)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    addr
}

/// A session bridging one gateway to `upstream`, its engine running.
async fn bridged(upstream: SocketAddr, paused: bool) -> (Gateway, EngineHandle) {
    let (gw, handle, _) = bridged_watched(upstream, paused).await;
    (gw, handle)
}

/// `bridged`, with the session's events.
async fn bridged_watched(
    upstream: SocketAddr,
    paused: bool,
) -> (Gateway, EngineHandle, mpsc::UnboundedReceiver<switchyard::engine::Event>) {
    let (calls, inbox) = mpsc::channel(1024);
    let gateway = Gateway::start(GatewaySetup::default(), calls).await.unwrap();
    let model: Arc<dyn ChatModel> =
        Arc::new(HttpModel::new(HttpModelConfig::new("up", format!("http://{upstream}/v1"), "up")).unwrap());
    let mut models = Models::single(model.clone(), Price::default());
    models.set(Role::Agent, ModelSlot { model, price: Price::default() });
    let strategy: Box<dyn switchyard::engine::Strategy> = Box::new(Bridge::new(inbox, None));
    let mut s = EngineSetup::new(Arc::new(ToolLibrary::default()), models, strategy);
    s.start_paused = paused;
    let (mut engine, handle) = Engine::new(s);
    let events = engine.subscribe();
    let task = Task { id: "bench".into(), query: "an outside agent".into(), ..Task::default() };
    tokio::spawn(async move { engine.run(vec![task]).await });
    (gateway, handle, events)
}

fn ask(stream: bool) -> Value {
    json!({"model": "up", "stream": stream, "messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 3?"}]})
}

/// Times `call` in criterion and keeps every iteration's time.
fn timed<F, Fut>(c: &mut Criterion, rt: &Runtime, name: &str, call: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let samples = Mutex::new(Vec::new());
    c.bench_function(
        name,
        peak::tracked(|b: &mut Bencher| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let t0 = Instant::now();
                        call().await;
                        let took = t0.elapsed();
                        samples.lock().unwrap().push(took);
                        total += took;
                    }
                    total
                })
            })
        }),
    );
    peak::report(name);
    let mut s = samples.into_inner().unwrap();
    // Filtered out (`cargo bench --bench gateway -- NAME`): nothing to say.
    if s.is_empty() {
        return;
    }
    s.sort();
    let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    println!("{name}: p50 {:.0} µs, p99 {:.0} µs over {} calls", micros(at(0.5)), micros(at(0.99)), s.len());
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn rss_kb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4
}

fn gateway(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let up = rt.block_on(upstream());
    let (gw, _handle) = rt.block_on(bridged(up, false));
    let http = reqwest::Client::new();
    let token = gw.token().expose().to_string();
    let direct = format!("http://{up}/v1/chat/completions");
    let through = format!("{}/chat/completions", gw.openai_base_url());

    timed(c, &rt, "direct", || async {
        http.post(&direct).json(&ask(false)).send().await.unwrap().bytes().await.unwrap();
    });
    timed(c, &rt, "through_gateway", || async {
        http.post(&through).bearer_auth(&token).json(&ask(false)).send().await.unwrap().bytes().await.unwrap();
    });
    timed(c, &rt, "through_gateway_first_event", || async {
        let mut resp = http.post(&through).bearer_auth(&token).json(&ask(true)).send().await.unwrap();
        resp.chunk().await.unwrap();
        while resp.chunk().await.unwrap().is_some() {}
    });

    // Requests held at a closed gate: what each costs while it waits.
    let (gw, handle) = rt.block_on(bridged(up, true));
    let (through, token) = (format!("{}/chat/completions", gw.openai_base_url()), gw.token().expose().to_string());
    let before = rss_kb();
    let n = 200;
    let waiting: Vec<_> = (0..n)
        .map(|_| {
            let (http, through, token) = (http.clone(), through.clone(), token.clone());
            rt.spawn(async move { http.post(&through).bearer_auth(&token).json(&ask(true)).send().await })
        })
        .collect();
    // A measurement, not a test: give the requests time to arrive.
    std::thread::sleep(Duration::from_secs(2));
    let after = rss_kb();
    println!(
        "{n} requests waiting at the gate: {} KB more RSS, {:.1} KB each",
        after - before,
        (after - before) as f64 / n as f64
    );
    handle.send(switchyard::engine::Control::Stop);
    for w in waiting {
        let _ = rt.block_on(w);
    }
}

/// Ten calls at once to an upstream that takes 1 s each: straight, and
/// through the gateway; then sixteen at once to the immediate upstream.
fn fanout(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let slow = rt.block_on(slow_upstream(1000));
    let (gw, _handle) = rt.block_on(bridged(slow, false));
    let http = reqwest::Client::new();
    let token = gw.token().expose().to_string();
    let direct = format!("http://{slow}/v1/chat/completions");
    let through = format!("{}/chat/completions", gw.openai_base_url());
    let at_once = |url: String, n: usize| {
        let (http, token) = (http.clone(), token.clone());
        async move {
            let calls = (0..n).map(|_| {
                let (http, url, token) = (http.clone(), url.clone(), token.clone());
                async move {
                    http.post(url).bearer_auth(token).json(&ask(false)).send().await.unwrap().bytes().await.unwrap()
                }
            });
            futures::future::join_all(calls).await;
        }
    };
    timed(c, &rt, "fanout_10x1s_direct", || at_once(direct.clone(), 10));
    timed(c, &rt, "fanout_10x1s_through_gateway", || at_once(through.clone(), 10));

    // Sixteen callers at once to the immediate upstream: each call's own time.
    let up = rt.block_on(upstream());
    let (gw, _handle) = rt.block_on(bridged(up, false));
    let (token, through) = (gw.token().expose().to_string(), format!("{}/chat/completions", gw.openai_base_url()));
    let direct = format!("http://{up}/v1/chat/completions");
    for (name, url) in [("in_flight_16_direct", direct), ("in_flight_16_through_gateway", through)] {
        let samples = Arc::new(Mutex::new(Vec::new()));
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let t0 = Instant::now();
                    for _ in 0..iters {
                        let calls = (0..16).map(|_| {
                            let (http, url, token, samples) =
                                (http.clone(), url.clone(), token.clone(), Arc::clone(&samples));
                            async move {
                                let t = Instant::now();
                                http.post(url)
                                    .bearer_auth(token)
                                    .json(&ask(false))
                                    .send()
                                    .await
                                    .unwrap()
                                    .bytes()
                                    .await
                                    .unwrap();
                                samples.lock().unwrap().push(t.elapsed());
                            }
                        });
                        futures::future::join_all(calls).await;
                    }
                    t0.elapsed()
                })
            })
        });
        let mut s = std::mem::take(&mut *samples.lock().unwrap());
        if s.is_empty() {
            continue;
        }
        s.sort();
        let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        println!("{name}: p50 {:.0} µs, p99 {:.0} µs over {} calls", micros(at(0.5)), micros(at(0.99)), s.len());
    }
}

/// 300 streamed calls at once to an upstream taking 1 s each, half the
/// callers hanging up at seeded points: each lane opened is ended (answered
/// or abandoned), and the memory held before and after. Run with the
/// `hangups` filter or none.
fn hangups(c: &mut Criterion) {
    let _ = c;
    let filter: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filter.is_empty() && !filter.iter().flat_map(|f| f.split('|')).any(|f| "hangups_300".contains(f)) {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let slow = rt.block_on(slow_upstream(1000));
    let (gw, handle, mut events) = rt.block_on(bridged_watched(slow, false));
    let http = reqwest::Client::new();
    let (token, through) = (gw.token().expose().to_string(), format!("{}/chat/completions", gw.openai_base_url()));
    let before = rss_kb();
    let t0 = Instant::now();
    let answered = rt.block_on(async {
        let calls: Vec<_> = (0..300u64)
            .map(|i| {
                let (http, url, token) = (http.clone(), through.clone(), token.clone());
                let call = tokio::spawn(async move {
                    let resp = http.post(url).bearer_auth(token).json(&ask(true)).send().await.ok()?;
                    resp.bytes().await.ok()
                });
                // Every other caller hangs up, somewhere in the first 1.2 s.
                let hang_up = (i % 2 == 1).then(|| Duration::from_millis(i.wrapping_mul(2_654_435_761) % 1200));
                (call, hang_up)
            })
            .collect();
        let mut answered = 0;
        for (call, hang_up) in calls {
            match hang_up {
                Some(after) => {
                    let abort = call.abort_handle();
                    tokio::spawn(async move {
                        tokio::time::sleep(after).await;
                        abort.abort();
                    });
                    let _ = call.await;
                }
                None => answered += usize::from(matches!(call.await, Ok(Some(_)))),
            }
        }
        answered
    });
    let took = t0.elapsed();
    handle.send(switchyard::engine::Control::Stop);
    let (mut opened, mut ended) = (0, 0);
    rt.block_on(async {
        while let Some(e) = events.recv().await {
            match e.kind {
                switchyard::engine::EventKind::LaneOpened { .. } => opened += 1,
                switchyard::engine::EventKind::ModelReply { .. }
                | switchyard::engine::EventKind::ModelFailed { .. }
                | switchyard::engine::EventKind::CallAbandoned { .. } => ended += 1,
                _ => {}
            }
        }
    });
    let after = rss_kb();
    println!(
        "hangups_300: {answered} of 150 waiting callers answered in {:.2} s; lanes opened {opened}, ended {ended}, events lost {}; RSS {} MB before, {} MB after",
        took.as_secs_f64(),
        opened - ended,
        before / 1024,
        after / 1024
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(5));
    targets = gateway
}
criterion_group! {
    name = fanned;
    config = Criterion::default().sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(12));
    targets = fanout, hangups
}
criterion_main!(benches, fanned);
