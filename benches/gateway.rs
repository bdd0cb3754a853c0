//! What the model gateway adds to an agent's model call: the same Chat
//! Completions request sent straight to an upstream on loopback, and
//! through the gateway (the engine's bridge, the gate, the events, the HTTP
//! client) to the same upstream. The upstream answers at once, so the
//! difference is the gateway's own time. Streamed: the time to the first
//! event. Besides criterion's estimates, each prints its p50 and p99 over
//! every iteration, and the memory a request waiting at a closed gate holds
//! (RSS over 200 such requests).
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
use switchyard::model::openai::{OpenAiConfig, OpenAiModel};
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

/// A session bridging one gateway to `upstream`, its engine running.
async fn bridged(upstream: SocketAddr, paused: bool) -> (Gateway, EngineHandle) {
    let (calls, inbox) = mpsc::channel(1024);
    let gateway = Gateway::start(GatewaySetup::default(), calls).await.unwrap();
    let model: Arc<dyn ChatModel> =
        Arc::new(OpenAiModel::new(OpenAiConfig::new("up", format!("http://{upstream}/v1"), "up")).unwrap());
    let mut models = Models::single(model.clone(), Price::default());
    models.set(Role::Agent, ModelSlot { model, price: Price::default() });
    let strategy: Box<dyn switchyard::engine::Strategy> = Box::new(Bridge::new(inbox, None));
    let mut s = EngineSetup::new(Arc::new(ToolLibrary::default()), models, strategy);
    s.start_paused = paused;
    let (engine, handle) = Engine::new(s);
    let task = Task { id: "bench".into(), query: "an outside agent".into(), ..Task::default() };
    tokio::spawn(async move { engine.run(vec![task]).await });
    (gateway, handle)
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

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(5));
    targets = gateway
}
criterion_main!(benches);
