//! What viewers from another process cost a session: a headless session
//! of the sample tasks (simulated model, sample tools), with no endpoint,
//! with its endpoint and no viewer, with five viewers following every
//! event, and with one viewer that connected and never reads. Criterion
//! reports tasks a second; each prints its peak RSS.
//!
//! `round_trip`: a viewer's control to the event that says it was taken,
//! as the viewer reads it (the event-to-viewer latency is at most this),
//! with its p50 and p99 over every iteration.
//!
//! `cargo bench --bench remote` (figures in docs/src/performance.md).

#[path = "support/peak.rs"]
mod peak;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::{Bencher, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tokio::runtime::Runtime;

use switchyard::config::Config;
use switchyard::engine::{Control, EventKind};
use switchyard::remote::protocol::ServerMsg;
use switchyard::remote::{Connection, Endpoint, Registry, SessionKind, SessionRecord, TcpControl};
use switchyard::session::{self, ExperienceSource, GraphSource, SessionOptions};
use switchyard::text::secret::Secret;

/// Tasks in each measured session.
const TASKS: usize = 50;

/// How the session is watched.
#[derive(Clone, Copy, Debug)]
enum Watch {
    NoEndpoint,
    Viewers(usize),
    /// One viewer that connects and never reads a line.
    Stuck,
}

fn options(count: usize, paused: bool) -> SessionOptions {
    SessionOptions {
        count: Some(count),
        seed: Some(7),
        logical_clock: true,
        start_paused: paused,
        linger: paused,
        graph: GraphSource::Fresh,
        experience: ExperienceSource::InMemory(Vec::new()),
        ..SessionOptions::default()
    }
}

/// One session of `TASKS` tasks, watched as asked; the time until its
/// last task ended (not until its viewers drained).
async fn session(config: &Config, dir: &std::path::Path, watch: Watch) -> Duration {
    let mut prepared = session::prepare(config, &options(TASKS, false)).unwrap();
    let registry = Registry::under(dir);
    let mut viewers = Vec::new();
    let mut stuck = None;
    let _guard = match watch {
        Watch::NoEndpoint => None,
        Watch::Viewers(_) | Watch::Stuck => {
            let record = SessionRecord::here(SessionKind::Run, Some(0), None);
            let events = prepared.engine.subscribe();
            let guard = Endpoint::start(registry.clone(), record, events, prepared.handle.clone()).unwrap();
            let socket = registry.socket(guard.id());
            match watch {
                Watch::Viewers(n) => {
                    for i in 0..n {
                        let mut c = Connection::open(&socket, &format!("bench-{i}"), Some(0), true).await.unwrap();
                        viewers.push(tokio::spawn(async move {
                            while let Ok(Some(msg)) = c.next().await {
                                if matches!(msg, ServerMsg::Ended) {
                                    break;
                                }
                            }
                        }));
                    }
                }
                _ => stuck = Some(Connection::open(&socket, "stuck", Some(0), true).await.unwrap()),
            }
            Some(guard)
        }
    };
    let started = Instant::now();
    session::run(prepared).await.unwrap();
    let took = started.elapsed();
    for v in viewers {
        v.await.unwrap();
    }
    drop(stuck);
    took
}

/// The embedded default config, its data directory a fresh one.
fn config(dir: &std::path::Path) -> Config {
    Config { data_dir: Some(dir.to_path_buf()), ..Config::default() }
}

fn attached(c: &mut Criterion) {
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let mut g = c.benchmark_group("attached");
    g.throughput(Throughput::Elements(TASKS as u64));
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, watch) in [
        ("no_endpoint", Watch::NoEndpoint),
        ("viewers_0", Watch::Viewers(0)),
        ("viewers_5", Watch::Viewers(5)),
        ("stuck_viewer", Watch::Stuck),
    ] {
        let id = BenchmarkId::from_parameter(name);
        g.bench_function(
            id,
            peak::tracked(|b: &mut Bencher| {
                b.iter_custom(|iters| {
                    (0..iters).map(|_| rt.block_on(session(&config, dir.path(), watch))).sum::<Duration>()
                })
            }),
        );
        peak::report(&format!("attached/{name}"));
    }
    g.finish();
}

fn round_trip(c: &mut Criterion) {
    round_trip_over(c, false);
    round_trip_over(c, true);
}

/// A control sent to the event that says it was taken, over the Unix
/// socket or over TCP (`--control`, the token checked at the hello).
fn round_trip_over(c: &mut Criterion, tcp: bool) {
    let name = if tcp { "round_trip_tcp" } else { "round_trip" };
    let rt = Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let registry = Registry::under(dir.path());
    // A lingering session, paused before its first call: it only obeys.
    let mut prepared = session::prepare(&config, &options(1, true)).unwrap();
    let _in = rt.enter();
    let record = SessionRecord::here(SessionKind::Run, Some(1), None);
    let events = prepared.engine.subscribe();
    let token = Secret::random("bench");
    let control =
        tcp.then(|| TcpControl { listener: std::net::TcpListener::bind("127.0.0.1:0").unwrap(), token: token.clone() });
    let guard = Endpoint::start_with(registry.clone(), record, events, prepared.handle.clone(), control).unwrap();
    let handle = prepared.handle.clone();
    let running = rt.spawn(session::run(prepared));
    let mut conn = match guard.tcp() {
        Some(addr) => rt.block_on(Connection::open_tcp(addr, &token, "bench", Some(u64::MAX), false)),
        None => rt.block_on(Connection::open(&registry.socket(guard.id()), "bench", Some(u64::MAX), false)),
    }
    .unwrap();
    let samples = Mutex::new(Vec::new());
    let mut paused = true;
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let sent = Instant::now();
                    conn.send(if paused { Control::Resume } else { Control::Pause }).await.unwrap();
                    loop {
                        match conn.next().await.unwrap() {
                            Some(ServerMsg::Event { event })
                                if matches!(event.kind, EventKind::Paused | EventKind::Resumed) =>
                            {
                                break;
                            }
                            Some(_) => {}
                            None => panic!("the session ended"),
                        }
                    }
                    let took = sent.elapsed();
                    samples.lock().unwrap().push(took);
                    total += took;
                    paused = !paused;
                }
                total
            })
        })
    });
    handle.send(Control::Stop);
    let _ = rt.block_on(running);
    let mut s = samples.into_inner().unwrap();
    if s.is_empty() {
        return;
    }
    s.sort();
    let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e6;
    println!("{name}: p50 {:.0} µs, p99 {:.0} µs over {} controls", at(0.5), at(0.99), s.len());
}

criterion_group!(benches, attached, round_trip);
criterion_main!(benches);
