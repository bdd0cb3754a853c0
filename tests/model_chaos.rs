//! Model server chaos: the real local model server misbehaving
//! under `switchyard run`. Each test starts its own llama-cpp-python server
//! from the venv and weights `scripts/local-model.sh setup` installed, on a
//! port of its own, and kills it by PID (a guard's Drop, so a failing test
//! leaves no server behind). Faults on the wire (slow, stalled, cut off)
//! come from a TCP proxy written here. The file is long (over 600 lines)
//! because the server guard, the proxy, the run harness and the scenarios
//! they serve belong together.
//!
//! Ignored by default (they need the installed model and take minutes);
//! `scripts/model-chaos.sh` and `.ci/run` run them with `--ignored
//! --test-threads=1`. A machine without the model skips with a printed reason.
//! With `SWITCHYARD_CHAOS_REPORT` set, each scenario appends one JSON line of
//! figures there (the script's table).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

const MODEL: &str = "qwen2.5-coder-0.5b-instruct";
/// Loading the 0.5B model takes about 2 s alone; on two busy cores far more.
const SERVER_READY: Duration = Duration::from_secs(180);
/// A hang detector, not a timing: a session of a few tasks that takes this
/// long is stuck.
const SESSION_DEADLINE: Duration = Duration::from_secs(900);
/// The client's timeout where calls must succeed: a call of the 0.5B model
/// takes about 10 s, and several times that on a loaded machine.
const CALL_MS: u64 = 180_000;
/// The timeout where a slow or stalled server must make calls fail: long
/// enough that the calls after the fault, on the same machine, do not.
/// `SWITCHYARD_CHAOS_SLOW_MS` sets it: CI proves the scenarios with a
/// shorter wait (a call of these sessions takes a few seconds on an idle
/// machine); the default is the measuring run's.
fn slow_ms() -> u64 {
    match std::env::var("SWITCHYARD_CHAOS_SLOW_MS") {
        Ok(v) => v.parse().unwrap_or_else(|_| panic!("SWITCHYARD_CHAOS_SLOW_MS={v:?}: not a number of milliseconds")),
        Err(_) => 90_000,
    }
}
/// What a bound derived from the configuration allows on top (process
/// scheduling on a shared machine, the engine's own work).
const MARGIN_MS: u64 = 5_000;
/// The client's backoff before retry n is 500 ms × 2ⁿ, capped at 8 s
/// (crates/core/src/model/http_model.rs); the bounds below are derived from it.
fn backoff_total_ms(retries: u32) -> u64 {
    (0..retries).map(|n| (500u64 << n.min(20)).min(8_000)).sum()
}

// ---------------------------------------------------------------------------
// The installed model and a server of our own

struct Installed {
    python: PathBuf,
    gguf: PathBuf,
}

/// The venv and weights where scripts/local-model.sh puts them, or `None`
/// with the reason printed (the test then passes without running).
fn installed() -> Option<Installed> {
    let data = std::env::var_os("SWITCHYARD_DATA_DIR").map(PathBuf::from).unwrap_or_else(|| {
        let share = std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".local/share"));
        share.join("switchyard")
    });
    let root = data.join("local-model");
    let python = root.join("venv/bin/python");
    let gguf = root.join(format!("models/{MODEL}-q4_k_m.gguf"));
    let ok = PathBuf::from(format!("{}.ok", gguf.display()));
    if !python.exists() || !gguf.exists() || !ok.exists() {
        println!("skipping: the local model is not installed under {} (scripts/local-model.sh setup)", root.display());
        return None;
    }
    Some(Installed { python, gguf })
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A llama-cpp-python server this test started; killed (SIGKILL, by PID) on
/// drop.
struct LlamaServer {
    child: Option<Child>,
    port: u16,
    log: PathBuf,
}

impl LlamaServer {
    fn start(model: &Installed, port: u16, n_ctx: u32, log: &Path) -> LlamaServer {
        let out = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
        let child = Command::new(&model.python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(&model.gguf)
            .args(["--host", "127.0.0.1", "--port", &port.to_string(), "--n_ctx", &n_ctx.to_string()])
            // One thread: on a loaded machine two threads wait on each other at
            // every token (about 1 token/s measured at a load of 10 on 2 cores).
            .args(["--n_threads", "1"])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start llama_cpp.server");
        let mut server = LlamaServer { child: Some(child), port, log: log.to_path_buf() };
        server.wait_ready();
        server
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + SERVER_READY;
        while !answers_models(self.port) {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("the model server exited ({status}); its log:\n{}", tail(&self.log));
            }
            assert!(
                Instant::now() < deadline,
                "the model server did not answer in time; its log:\n{}",
                tail(&self.log)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// SIGKILL (what `Child::kill` sends on Unix), then reap.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn answers_models(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    if s.write_all(b"GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

// ---------------------------------------------------------------------------
// A proxy that misbehaves on the wire

#[derive(Clone, Copy, Debug, PartialEq)]
enum Wire {
    /// Forward the reply, but only after this long.
    Delay(Duration),
    /// Read the request and never answer (nothing reaches the server).
    Stall,
    /// Forward the reply's head and half its body, then close.
    Cut,
}

/// A loopback proxy in front of the server: the first `faulty` exchanges
/// meet `wire`, the rest pass untouched. Counting exchanges rather than
/// switching on a clock keeps the scenario deterministic: the fault stops
/// exactly when the configured number of attempts have met it.
struct Proxy {
    port: u16,
    faulted: Arc<AtomicUsize>,
    passed: Arc<AtomicUsize>,
    _rt: tokio::runtime::Runtime,
}

impl Proxy {
    fn start(upstream: u16, wire: Wire, faulty: usize) -> Proxy {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (faulted, passed) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let seen = Arc::new(AtomicU64::new(0));
        let (f2, p2) = (faulted.clone(), passed.clone());
        rt.spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (faulted, passed, seen) = (f2.clone(), p2.clone(), seen.clone());
                tokio::spawn(async move {
                    let _ = proxy_connection(client, upstream, wire, faulty as u64, seen, faulted, passed).await;
                });
            }
        });
        Proxy { port, faulted, passed, _rt: rt }
    }
}

async fn proxy_connection(
    mut client: tokio::net::TcpStream,
    upstream: u16,
    wire: Wire,
    faulty: u64,
    seen: Arc<AtomicU64>,
    faulted: Arc<AtomicUsize>,
    passed: Arc<AtomicUsize>,
) -> std::io::Result<()> {
    let mut from_client = Vec::new();
    let mut server: Option<(tokio::net::TcpStream, Vec<u8>)> = None;
    loop {
        let Some(request) = read_message(&mut client, &mut from_client).await? else { return Ok(()) };
        let fault = seen.fetch_add(1, Ordering::SeqCst) < faulty;
        if fault && wire == Wire::Stall {
            faulted.fetch_add(1, Ordering::SeqCst);
            // Hold the connection open until the client gives up on it.
            let mut sink = [0u8; 1024];
            while client.read(&mut sink).await? > 0 {}
            return Ok(());
        }
        if server.is_none() {
            server = Some((tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await?, Vec::new()));
        }
        let (up, from_server) = server.as_mut().unwrap();
        up.write_all(&request).await?;
        let Some(reply) = read_message(up, from_server).await? else { return Ok(()) };
        if !fault {
            passed.fetch_add(1, Ordering::SeqCst);
            client.write_all(&reply).await?;
            continue;
        }
        faulted.fetch_add(1, Ordering::SeqCst);
        match wire {
            Wire::Delay(d) => {
                tokio::time::sleep(d).await;
                client.write_all(&reply).await?;
            }
            Wire::Cut => {
                let head = find(&reply, b"\r\n\r\n").map(|i| i + 4).unwrap_or(0);
                let cut = head + (reply.len() - head) / 2;
                client.write_all(&reply[..cut]).await?;
                client.flush().await?;
                return Ok(());
            }
            Wire::Stall => unreachable!("a stalled exchange never reaches the server"),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// One HTTP/1.1 message (head and a Content-Length body) from `s`, bytes
/// beyond it kept in `buf`; `None` at a clean end of stream.
async fn read_message(s: &mut (impl AsyncRead + Unpin), buf: &mut Vec<u8>) -> std::io::Result<Option<Vec<u8>>> {
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while buf.len() < head_end + len {
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(Some(buf.drain(..head_end + len).collect()))
}

// ---------------------------------------------------------------------------
// `switchyard run` as a child process, watched through its trace

struct Client {
    timeout_ms: u64,
    max_retries: u32,
}

impl Client {
    /// The longest a failed call may take: every attempt up to the timeout
    /// (a timeout itself is not retried, so it ends the call), the backoffs
    /// between them, and a margin.
    fn bound_ms(&self) -> u64 {
        (u64::from(self.max_retries) + 1) * self.timeout_ms + backoff_total_ms(self.max_retries) + MARGIN_MS
    }

    /// The longest a call that times out may take: the timeout ends it.
    fn timeout_bound_ms(&self) -> u64 {
        self.timeout_ms + MARGIN_MS
    }
}

/// Replies come whole (`stream = false`): the proxy frames an exchange by
/// its Content-Length. A cut stream is `tests/all/streaming.rs`'s.
fn write_config(dir: &Path, port: u16, client: &Client) -> PathBuf {
    let roles: String = ["planner", "solver", "actor", "evaluator", "classifier", "judge"]
        .iter()
        .map(|r| format!("{r} = \"local\"\n"))
        .collect();
    let toml = format!(
        "data_dir = {data:?}\n\
         [models.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"{MODEL}\"\n\
         timeout_ms = {timeout}\nmax_retries = {retries}\nnative_tools = false\njson_schema = true\nmax_tokens = 256\nstream = false\n\
         [roles]\n{roles}",
        data = dir.join("data").display().to_string(),
        timeout = client.timeout_ms,
        retries = client.max_retries,
    );
    let path = dir.join(format!("chaos-{port}.toml"));
    std::fs::write(&path, toml).unwrap();
    path
}

fn write_tasks(dir: &Path, name: &str, queries: &[String]) -> PathBuf {
    let mut toml = String::new();
    for (i, q) in queries.iter().enumerate() {
        toml.push_str(&format!("[[task]]\nid = \"t{}\"\nquery = {q:?}\n\n", i + 1));
    }
    let path = dir.join(name);
    std::fs::write(&path, toml).unwrap();
    path
}

fn smoke_queries(n: usize) -> Vec<String> {
    [
        "What is the capital of the country 'Germany'?",
        "Calculate (45 - 5) * 2 + 10.",
        "Convert 26.2 mile to kilometer.",
        "What is the population of the city 'Berlin'?",
    ]
    .iter()
    .cycle()
    .take(n)
    .map(|s| s.to_string())
    .collect()
}

struct Session {
    child: Child,
    trace: PathBuf,
}

fn start_session(dir: &Path, config: &Path, tasks: &Path, name: &str) -> Session {
    let trace = dir.join(format!("{name}.jsonl"));
    let child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--config")
        .arg(config)
        .args(["run", "--strategy", "react", "--set", "max_steps=2", "--no-save", "--fresh-graph", "--tasks"])
        .arg(tasks)
        .arg("--trace")
        .arg(&trace)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join(format!("{name}.stderr"))).unwrap())
        .spawn()
        .expect("start switchyard run");
    Session { child, trace }
}

/// The complete events written so far (the last line may be half written).
fn events(trace: &Path) -> Vec<Value> {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

fn of_type<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

impl Session {
    /// Poll the trace until `pred` holds (false if the session ended first).
    fn wait_for(&mut self, pred: impl Fn(&[Value]) -> bool) -> bool {
        let deadline = Instant::now() + SESSION_DEADLINE;
        loop {
            if pred(&events(&self.trace)) {
                return true;
            }
            if self.child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                return pred(&events(&self.trace));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The session's end: its exit status, or `None` (a hang, the child
    /// killed) past the deadline.
    fn finish(mut self) -> (Option<ExitStatus>, Vec<Value>) {
        let deadline = Instant::now() + SESSION_DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (Some(status), events(&self.trace));
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return (None, events(&self.trace));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What one session's trace says about its runs and failed calls.
#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    started: usize,
    failed: Vec<String>,
    not_failed: usize,
    failed_calls: Vec<(u64, String)>,
}

fn tally(events: &[Value]) -> Tally {
    let mut t = Tally { started: of_type(events, "RunStarted").len(), ..Tally::default() };
    for e in of_type(events, "RunFinished") {
        t.runs += 1;
        // The outcome is written flat: "outcome": "failed", "error": ...
        if e["outcome"] == "failed" {
            t.failed.push(e["error"].as_str().unwrap_or_default().to_string());
        } else {
            t.not_failed += 1;
        }
    }
    for e in of_type(events, "ModelFailed") {
        t.failed_calls.push((e["latency_ms"].as_u64().unwrap(), e["error"].as_str().unwrap().to_string()));
    }
    t
}

/// One row of the chaos table.
#[derive(Default)]
struct Row {
    scenario: &'static str,
    runs: usize,
    failed_cleanly: usize,
    recovered: usize,
    hangs: usize,
    max_failed_call_ms: u64,
    bound_ms: u64,
}

impl Row {
    fn add(&mut self, t: &Tally, hung: bool) {
        self.runs += t.runs;
        self.hangs += usize::from(hung) + t.failed_calls.iter().filter(|(ms, _)| *ms > self.bound_ms).count();
        self.max_failed_call_ms =
            t.failed_calls.iter().map(|(ms, _)| *ms).max().unwrap_or(0).max(self.max_failed_call_ms);
    }

    fn report(&self) {
        let line = json!({
            "scenario": self.scenario, "runs": self.runs, "failed_cleanly": self.failed_cleanly,
            "recovered": self.recovered, "hangs": self.hangs,
            "max_failed_call_ms": self.max_failed_call_ms, "bound_ms": self.bound_ms,
        });
        println!("chaos: {line}");
        if let Some(path) = std::env::var_os("SWITCHYARD_CHAOS_REPORT") {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
            writeln!(f, "{line}").unwrap();
        }
    }
}

/// Every run that started finished, the session ended by itself, and no
/// failed call took longer than the configuration allows.
fn assert_clean_end(name: &str, status: Option<ExitStatus>, t: &Tally, bound_ms: u64, stderr: &Path) {
    assert!(status.is_some(), "{name}: the session hung; stderr:\n{}", tail(stderr));
    assert!(t.runs > 0 && t.runs == t.started, "{name}: {} runs started, {} finished", t.started, t.runs);
    for (ms, error) in &t.failed_calls {
        assert!(*ms <= bound_ms, "{name}: a failed call took {ms} ms, beyond the bound {bound_ms} ms: {error}");
    }
}

// ---------------------------------------------------------------------------
// The scenarios

/// The server SIGKILLed while a session's first model call is in flight,
/// with no restart within the client's retries: that run fails with the
/// endpoint and the refused connection named, after the configured
/// attempts; the runs behind it fail the same way, quickly; the session
/// ends. Restarted on the same port, a new session's runs get answers.
#[test]
#[ignore = "needs the installed local model (scripts/local-model.sh setup); run by scripts/model-chaos.sh"]
fn a_server_killed_mid_run_fails_the_runs_cleanly_and_a_restart_recovers() {
    let Some(model) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = dir.path().join("server.log");
    let mut server = LlamaServer::start(&model, port, 4096, &log);
    let client = Client { timeout_ms: CALL_MS, max_retries: 2 };
    let mut row = Row { scenario: "kill mid-run, restart", bound_ms: client.bound_ms(), ..Row::default() };
    let config = write_config(dir.path(), port, &client);

    let tasks = write_tasks(dir.path(), "kill.toml", &smoke_queries(2));
    let mut session = start_session(dir.path(), &config, &tasks, "killed");
    assert!(session.wait_for(|ev| !of_type(ev, "ModelCall").is_empty()), "no model call was made");
    let pid = server.pid();
    server.kill();
    let stderr = dir.path().join("killed.stderr");
    let (status, ev) = session.finish();
    let t = tally(&ev);
    row.add(&t, status.is_none());
    assert_clean_end("killed", status, &t, row.bound_ms, &stderr);
    assert_eq!(status.and_then(|s| s.code()), Some(2), "a failed model is a failed session");
    assert!(!t.failed.is_empty(), "no run failed after the server (pid {pid}) was killed: {t:?}");
    let endpoint = format!("127.0.0.1:{port}/v1/chat/completions");
    for error in &t.failed {
        assert!(error.contains(&endpoint), "the error does not name the endpoint: {error}");
        let cause = ["Connection refused", "connection closed", "Connection reset"];
        assert!(cause.iter().any(|c| error.contains(c)), "the error does not say what happened: {error}");
        assert!(error.contains(&format!("{} attempts", client.max_retries + 1)), "retries not spent: {error}");
        row.failed_cleanly += 1;
    }
    assert!(std::fs::read_to_string(&stderr).unwrap().contains(&endpoint), "the summary names the endpoint");

    let _server = LlamaServer::start(&model, port, 4096, &log);
    let tasks = write_tasks(dir.path(), "after.toml", &smoke_queries(1));
    let session = start_session(dir.path(), &config, &tasks, "restarted");
    let stderr = dir.path().join("restarted.stderr");
    let (status, ev) = session.finish();
    let t = tally(&ev);
    row.add(&t, status.is_none());
    assert_clean_end("restarted", status, &t, row.bound_ms, &stderr);
    assert!(t.failed.is_empty(), "runs after the restart failed: {:?}", t.failed);
    row.recovered += t.not_failed;
    row.report();
}

/// The server SIGKILLed mid-call and restarted at once on the same port:
/// the client's retries (long enough to cover a restart) carry the call
/// across it, in the same session, over a connection pool whose
/// connections died with the server.
#[test]
#[ignore = "needs the installed local model (scripts/local-model.sh setup); run by scripts/model-chaos.sh"]
fn a_server_killed_and_restarted_within_the_retries_is_recovered_in_session() {
    let Some(model) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let log = dir.path().join("server.log");
    let mut server = LlamaServer::start(&model, port, 4096, &log);
    // 0.5 + 1 + 2 + 4 + 8 × 5 s of backoff: over 47 s for the restart.
    let client = Client { timeout_ms: CALL_MS, max_retries: 9 };
    let mut row = Row { scenario: "kill + restart within retries", bound_ms: client.bound_ms(), ..Row::default() };
    let config = write_config(dir.path(), port, &client);
    let tasks = write_tasks(dir.path(), "kill.toml", &smoke_queries(1));
    let mut session = start_session(dir.path(), &config, &tasks, "bounced");
    assert!(session.wait_for(|ev| !of_type(ev, "ModelCall").is_empty()), "no model call was made");
    server.kill();
    server = LlamaServer::start(&model, port, 4096, &log);
    let stderr = dir.path().join("bounced.stderr");
    let (status, ev) = session.finish();
    drop(server);
    let t = tally(&ev);
    row.add(&t, status.is_none());
    assert_clean_end("bounced", status, &t, row.bound_ms, &stderr);
    assert!(t.failed.is_empty(), "a run failed though the server came back within the retries: {:?}", t.failed);
    row.recovered += t.not_failed;
    row.report();
}

/// A wire fault on the first `faulty` exchanges of a two-task session:
/// the first run fails with `expect` in its error, within the bound; the
/// fault then stops and the other runs get answers in the same session.
fn wire_scenario(scenario: &'static str, wire: Wire, faulty: usize, client: Client, bound_ms: u64, expect: &[&str]) {
    let Some(model) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = LlamaServer::start(&model, port, 4096, &dir.path().join("server.log"));
    let proxy = Proxy::start(port, wire, faulty);
    let mut row = Row { scenario, bound_ms, ..Row::default() };
    let config = write_config(dir.path(), proxy.port, &client);
    let tasks = write_tasks(dir.path(), "tasks.toml", &smoke_queries(2));
    let session = start_session(dir.path(), &config, &tasks, "wire");
    let (status, ev) = session.finish();
    let t = tally(&ev);
    row.add(&t, status.is_none());
    assert_clean_end(scenario, status, &t, row.bound_ms, &dir.path().join("wire.stderr"));
    assert_eq!(proxy.faulted.load(Ordering::SeqCst), faulty, "{scenario}: the fault met {faulty} exchanges");
    assert!(proxy.passed.load(Ordering::SeqCst) > 0, "{scenario}: nothing passed after the fault");
    assert_eq!(t.failed.len(), 1, "{scenario}: only the faulted run fails: {:?}", t.failed);
    let error = &t.failed[0];
    let endpoint = format!("127.0.0.1:{}/v1/chat/completions", proxy.port);
    assert!(error.contains(&endpoint), "{scenario}: the error does not name the endpoint: {error}");
    assert!(expect.iter().any(|x| error.contains(x)), "{scenario}: the error does not say why: {error}");
    row.failed_cleanly += 1;
    row.recovered += t.not_failed;
    row.report();
}

/// A reply held back longer than the timeout: the call times out (a
/// timeout is not retried: a slow server would only be slow again), the
/// run fails; the next runs, no longer delayed, get answers.
#[test]
#[ignore = "needs the installed local model (scripts/local-model.sh setup); run by scripts/model-chaos.sh"]
fn a_slow_server_times_out_and_the_session_recovers_when_it_is_fast_again() {
    let client = Client { timeout_ms: slow_ms(), max_retries: 2 };
    let delay = Duration::from_millis(client.timeout_ms + 15_000);
    let bound = client.timeout_bound_ms();
    let expect = format!("timed out after {} ms", client.timeout_ms);
    wire_scenario("slow (reply delayed past timeout)", Wire::Delay(delay), 1, client, bound, &[&expect]);
}

/// A server that takes the request and never answers: the same timeout.
#[test]
#[ignore = "needs the installed local model (scripts/local-model.sh setup); run by scripts/model-chaos.sh"]
fn a_stalled_server_times_out_and_the_session_recovers() {
    let client = Client { timeout_ms: slow_ms(), max_retries: 2 };
    let bound = client.timeout_bound_ms();
    let expect = format!("timed out after {} ms", client.timeout_ms);
    wire_scenario("stalled (never answers)", Wire::Stall, 1, client, bound, &[&expect]);
}

/// Replies cut off half-way through the body, on every attempt of the
/// first call: the broken exchange is retried as configured, then the run
/// fails naming the cut; the next runs get whole replies.
#[test]
#[ignore = "needs the installed local model (scripts/local-model.sh setup); run by scripts/model-chaos.sh"]
fn replies_cut_mid_body_are_retried_then_fail_cleanly() {
    let client = Client { timeout_ms: CALL_MS, max_retries: 2 };
    let bound = client.bound_ms();
    wire_scenario(
        "connection closed mid-body",
        Wire::Cut,
        3,
        client,
        bound,
        &["error decoding response body", "connection closed", "end of file", "IncompleteMessage"],
    );
}

/// A task far longer than the server's context window: the server's 400
/// (context_length_exceeded) is the run's error, named with its cause and
/// the endpoint, not retried; the session goes on to the next task, which
/// fits and gets answers.
#[test]
#[ignore = "needs the installed local model (scripts/local-model.sh setup); run by scripts/model-chaos.sh"]
fn a_task_longer_than_the_context_fails_its_run_and_the_session_goes_on() {
    let Some(model) = installed() else { return };
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let n_ctx = 2048;
    let _server = LlamaServer::start(&model, port, n_ctx, &dir.path().join("server.log"));
    let client = Client { timeout_ms: CALL_MS, max_retries: 2 };
    let mut row = Row { scenario: "context filled (n_ctx 2048)", bound_ms: client.bound_ms(), ..Row::default() };
    let config = write_config(dir.path(), port, &client);
    let long =
        format!("Summarise this log, then say which city it names: {}", "the quick brown fox jumps. ".repeat(600));
    let mut queries = smoke_queries(2);
    queries.insert(1, long);
    // The first task is there only so the long one is met mid-session.
    queries[0] = "Calculate 2 + 2.".into();
    let tasks = write_tasks(dir.path(), "tasks.toml", &queries);
    let session = start_session(dir.path(), &config, &tasks, "ctx");
    let (status, ev) = session.finish();
    let t = tally(&ev);
    row.add(&t, status.is_none());
    assert_clean_end("ctx", status, &t, row.bound_ms, &dir.path().join("ctx.stderr"));
    assert_eq!(t.runs, 3, "the session went on after the long task");
    let runs = of_type(&ev, "RunFinished");
    let long_run = runs[1];
    assert_eq!(long_run["outcome"], "failed", "{long_run}");
    let error = long_run["error"].as_str().unwrap();
    assert!(error.contains("HTTP 400") && error.contains("context"), "the cause is not named: {error}");
    assert!(error.contains(&format!("127.0.0.1:{port}")), "the endpoint is not named: {error}");
    assert!(error.contains("1 attempt"), "a 400 is not retried: {error}");
    row.failed_cleanly += 1;
    assert_ne!(runs[2]["outcome"], "failed", "the task after the long one failed: {}", runs[2]);
    // The run after the long one: the session went on.
    row.recovered += 1;
    row.report();
}
