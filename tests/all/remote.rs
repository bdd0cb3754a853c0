//! Sessions reached from another process: a headless `switchyard run`
//! steered through its socket by the protocol's client (the one `attach`
//! and `ctl` use), two viewers at once, one that stops reading, a record
//! whose session is gone, a viewer of another protocol version.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use switchyard::engine::debug::Decision;
use switchyard::engine::trace::read_trace;
use switchyard::engine::{Control, Event, EventKind, ViewerAction};
use switchyard::remote::protocol::ServerMsg;
use switchyard::remote::{Connection, Registry, SessionKind, SessionRecord};
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
use tempfile::TempDir;

use super::cli_helpers::{bin, fails, ok, s};

/// A headless run in the background, and the id it said on stderr.
struct Headless {
    child: Child,
    id: String,
    dir: TempDir,
    trace: PathBuf,
    stderr: std::thread::JoinHandle<String>,
}

fn start(args: &[&str]) -> Headless {
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let mut full = vec!["run", "--trace", s(&trace)];
    full.extend_from_slice(args);
    let (child, id, stderr) = spawn_session(dir.path(), &full);
    Headless { child, id, dir, trace, stderr }
}

/// `switchyard --data-dir DIR ARGS…` in the background, the session id it
/// said on stderr, and the rest of its stderr (drained, so it never blocks
/// on a full pipe).
pub(crate) fn spawn_session(dir: &Path, args: &[&str]) -> (Child, String, std::thread::JoinHandle<String>) {
    let mut child =
        bin().arg("--data-dir").arg(dir).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let id = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "the session ended without naming itself: {said}");
        said.push_str(&line);
        if let Some(rest) = line.strip_prefix("session ") {
            break rest.split(':').next().unwrap().to_string();
        }
    };
    let stderr = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        said + rest.as_str()
    });
    (child, id, stderr)
}

impl Headless {
    fn socket(&self) -> PathBuf {
        Registry::under(self.dir.path()).socket(&self.id)
    }

    fn data_dir(&self) -> &str {
        s(self.dir.path())
    }

    /// Waits for the run to end; its trace.
    fn finish(mut self) -> Vec<Event> {
        let status = self.child.wait().unwrap();
        let err = self.stderr.join().unwrap();
        assert!(status.success(), "the run failed: {err}");
        assert!(!err.contains("panicked"), "{err}");
        read_trace(&self.trace).unwrap()
    }
}

/// The event after the viewer's record of each control it sent: the
/// control's own, as the engine applied it.
fn effects(events: &[Event], viewer: &str) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let EventKind::Viewer { viewer: v, action: ViewerAction::Sent { control } } = &e.kind
            && v == viewer
        {
            let tag = serde_json::to_value(control).unwrap()["control"].as_str().unwrap().to_string();
            out.push((tag, events.get(i + 1).map_or("(none)", |n| n.kind.name())));
        }
    }
    out
}

/// A run that waits at every approval, steered from outside: a pause, a
/// fault and every decision, each recorded with the viewer that sent it
/// and followed by its own event; the run ends as it would in the
/// workbench.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_run_is_steered_through_its_socket() {
    let run = start(&["--count", "2", "--seed", "1", "--approve", "all"]);
    let mut conn = Connection::open(&run.socket(), "steer", Some(0), true).await.unwrap();
    assert_eq!(conn.session.kind, SessionKind::Run);
    let (mut paused, mut decided) = (false, 0);
    while let Some(msg) = conn.next().await.unwrap() {
        let ServerMsg::Event { event } = msg else { continue };
        match event.kind {
            EventKind::ApprovalRequested { call, .. }
            | EventKind::ResultReview { call, .. }
            | EventKind::ReplyReview { call, .. } => {
                if !paused {
                    paused = true;
                    conn.send(Control::Pause).await.unwrap();
                    let fault = Fault { mode: FaultMode::Error, scope: FaultScope::UntilCleared };
                    conn.send(Control::InjectFault { tool: "calculator".into(), fault }).await.unwrap();
                }
                conn.send(Control::Decide { call, decision: Decision::Approve }).await.unwrap();
                decided += 1;
            }
            EventKind::Paused => conn.send(Control::Resume).await.unwrap(),
            EventKind::SessionFinished { .. } => break,
            _ => {}
        }
    }
    drop(conn);
    let events = run.finish();
    assert!(decided > 0, "nothing waited for a decision");
    let attached = events
        .iter()
        .any(|e| matches!(&e.kind, EventKind::Viewer { viewer, action: ViewerAction::Attached } if viewer == "steer"));
    assert!(attached, "the viewer's coming is recorded");
    let effects = effects(&events, "steer");
    assert_eq!(effects[..2], [("pause".into(), "Paused"), ("inject_fault".into(), "FaultInjected")], "{effects:?}");
    let decisions: Vec<&str> = effects.iter().filter(|(c, _)| c == "decide").map(|(_, e)| *e).collect();
    assert_eq!(decisions.len(), decided, "{effects:?}");
    assert!(decisions.iter().all(|e| *e == "ReviewPassed"), "{effects:?}");
    assert!(effects.contains(&("resume".into(), "Resumed")), "{effects:?}");
    let finished = events.iter().filter(|e| matches!(e.kind, EventKind::RunFinished { .. })).count();
    assert_eq!(finished, 2);
}

/// Two viewers of a run paused at its first call: one stops reading and
/// holds its connection, the other resumes the run and follows it to the
/// end. The run ends all the same, the follower got exactly the trace's
/// events, and `ctl` reads the status and refuses what cannot be done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_viewers_and_one_that_stopped_reading() {
    let run = start(&["--count", "20", "--seed", "2", "--break", "step=1@run=1"]);
    let stuck = Connection::open(&run.socket(), "stuck", Some(0), true).await.unwrap();
    let mut follower = Connection::open(&run.socket(), "follower", Some(0), true).await.unwrap();
    let mut seen: Vec<Event> = Vec::new();
    let mut resumed = false;
    while let Some(msg) = follower.next().await.unwrap() {
        match msg {
            ServerMsg::Event { event } => {
                if matches!(event.kind, EventKind::BreakpointHit { .. }) {
                    let dir = run.data_dir();
                    let status = ok(&["--data-dir", dir, "ctl", &run.id, "status", "--json"]);
                    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
                    assert_eq!(status["status"]["paused"], true, "{status}");
                    assert_eq!(status["status"]["viewers"], 2, "{status}");
                    let e = fails(&["--data-dir", dir, "ctl", &run.id, "approve"]);
                    assert!(e.contains("nothing waits for a decision"), "{e}");
                    let e = fails(&["--data-dir", dir, "ctl", &run.id, "fault", "no_such_tool:error"]);
                    assert!(e.contains("no tool named 'no_such_tool'"), "{e}");
                    follower.send(Control::Resume).await.unwrap();
                    resumed = true;
                }
                seen.push(*event);
            }
            ServerMsg::Ended => break,
            _ => {}
        }
    }
    assert!(resumed, "the breakpoint never held");
    drop(follower);
    let events = run.finish();
    drop(stuck);
    let line = |e: &Event| serde_json::to_string(e).unwrap();
    assert_eq!(seen.len(), events.len(), "the follower got every recorded event");
    assert!(seen.iter().zip(&events).all(|(a, b)| line(a) == line(b)), "the follower's events are the trace's");
    let finished = events.iter().filter(|e| matches!(e.kind, EventKind::RunFinished { .. })).count();
    assert_eq!(finished, 20);
}

/// A record whose process is gone: `ctl` and `attach` say it has ended
/// rather than hang on its socket, and `ps` removes it.
#[test]
fn a_stale_record_is_reported_and_removed() {
    let dir = TempDir::new().unwrap();
    let reg = Registry::under(dir.path());
    reg.ensure().unwrap();
    let mut gone = std::process::Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let mut record = SessionRecord::here(SessionKind::Run, None, None);
    record.id = "dead".into();
    record.pid = gone.id();
    reg.write(&record).unwrap();
    // A socket file nobody listens on any more, as `kill -9` leaves it.
    drop(std::os::unix::net::UnixListener::bind(reg.socket("dead")).unwrap());
    let d = s(dir.path());
    let e = fails(&["--data-dir", d, "ctl", "dead", "status"]);
    assert!(e.contains("session 'dead' has ended"), "{e}");
    let e = fails(&["--data-dir", d, "attach", "dead"]);
    assert!(e.contains("session 'dead' has ended"), "{e}");
    let out = bin().args(["--data-dir", d, "ps"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed the record of session dead"));
    assert!(String::from_utf8_lossy(&out.stdout).trim().is_empty());
    assert!(!reg.socket("dead").exists() && reg.list().unwrap().is_empty());
    let e = fails(&["--data-dir", d, "ctl", "dead", "status"]);
    assert!(e.contains("no session 'dead'"), "{e}");
}

/// A process that has ended but whose parent has not read how (a zombie)
/// is gone to the registry: followers of an eval held by a test or a
/// shell must not wait on it for ever.
#[test]
fn a_process_ended_but_not_reaped_is_not_alive() {
    use switchyard::remote::registry::alive;
    assert!(alive(std::process::id()));
    let mut child = std::process::Command::new("true").spawn().unwrap();
    // Waits for its end but leaves it unreaped.
    // SAFETY: a zeroed siginfo_t is valid for waitid to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::waitid(libc::P_PID, child.id(), &mut info, libc::WEXITED | libc::WNOWAIT) };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
    assert!(!alive(child.id()), "a zombie counted as alive");
    assert!(child.wait().unwrap().success());
}

/// What is not this protocol's hello gets an error line naming the
/// versions, and the connection closed; the session goes on.
#[test]
fn another_protocol_version_is_refused_plainly() {
    let run = start(&["--count", "2", "--break", "step=1@run=1"]);
    let ask = |hello: &str| {
        let mut sock = std::os::unix::net::UnixStream::connect(run.socket()).unwrap();
        sock.write_all(hello.as_bytes()).unwrap();
        let mut answer = String::new();
        BufReader::new(sock).read_line(&mut answer).unwrap();
        answer
    };
    let answer = ask("{\"type\":\"hello\",\"v\":99,\"viewer\":\"old\",\"follow\":0}\n");
    assert!(answer.contains("\"error\"") && answer.contains("version 1") && answer.contains("99"), "{answer}");
    let answer = ask("GET / HTTP/1.1\n");
    assert!(answer.contains("the first line must be a hello"), "{answer}");
    let answer = ask("{\"type\":\"hello\",\"v\":1,\"viewer\":\"\",\"follow\":null}\n");
    assert!(answer.contains("viewer: 1 to 64 printable characters"), "{answer}");
    let said = ok(&["--data-dir", run.data_dir(), "ctl", &run.id, "resume"]);
    assert!(said.contains("resume taken"), "{said}");
    let events = run.finish();
    assert!(events.iter().any(|e| matches!(e.kind, EventKind::SessionFinished { .. })));
}

/// The registry keeps its folder and files to the user alone.
#[test]
fn the_registry_is_the_user_s_alone() {
    use std::os::unix::fs::PermissionsExt;
    let run = start(&["--count", "1", "--break", "step=1@run=1"]);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let reg = Registry::under(run.dir.path());
    assert_eq!(mode(reg.dir()), 0o700);
    assert_eq!(mode(&reg.socket(&run.id)), 0o600);
    assert_eq!(mode(&reg.dir().join(format!("{}.json", run.id))), 0o600);
    ok(&["--data-dir", run.data_dir(), "ctl", &run.id, "resume"]);
    let mut run = run;
    assert!(run.child.wait().unwrap().success());
    assert!(reg.list().unwrap().is_empty(), "an ended session leaves no record");
}

/// `mcp serve` is a session like any other: listed, and ended by `ctl`.
#[test]
fn an_mcp_serve_session_is_listed_and_stopped_by_ctl() {
    let dir = TempDir::new().unwrap();
    let d = s(dir.path());
    let mut serve = bin()
        .args(["--data-dir", d, "mcp", "serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(serve.stderr.take().unwrap());
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "mcp serve ended before it was ready");
        if line.contains("MCP endpoint ready") {
            break;
        }
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let listed: serde_json::Value = serde_json::from_str(ok(&["--data-dir", d, "ps", "--json"]).trim()).unwrap();
    assert_eq!(listed["session"]["kind"], "mcp_serve", "{listed}");
    let id = listed["session"]["id"].as_str().unwrap().to_string();
    assert!(ok(&["--data-dir", d, "ctl", &id, "stop"]).contains("stop taken"));
    assert!(serve.wait().unwrap().success());
    assert!(Registry::under(dir.path()).list().unwrap().is_empty());
}

/// `--control`: the session also listens over TCP (for a tunnel), and
/// takes only its token there, compared whole; the token it made is kept
/// for the user alone and appears in no record, trace or log; `ctl` and
/// the client reach it with the token, and nothing without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tcp_a_session_takes_only_its_token() {
    use std::os::unix::fs::PermissionsExt;
    let run = start(&["--control", "0", "--count", "3", "--break", "step=1@run=1"]);
    let reg = Registry::under(run.dir.path());
    let (record, _) = reg.list().unwrap().remove(0);
    let addr = record.control.clone().expect("the record says where it listens");
    assert!(addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"), "loopback, the port bound: {addr}");
    let token_file = reg.token_path(&run.id);
    assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).unwrap();

    let refused = |e: switchyard::remote::RemoteError| e.to_string();
    let wrong = switchyard::text::secret::Secret::new(format!("{}x", &token[..token.len() - 1]));
    let e = Connection::open_tcp(&addr, &wrong, "guess", Some(0), true).await.err().map(refused).unwrap();
    assert!(e.contains("token refused"), "{e}");
    // A hello without any token, as a Unix-socket viewer would send it.
    let mut sock = std::net::TcpStream::connect(&addr).unwrap();
    sock.write_all(b"{\"type\":\"hello\",\"v\":1,\"viewer\":\"bare\",\"follow\":0}\n").unwrap();
    let mut answer = String::new();
    BufReader::new(sock).read_line(&mut answer).unwrap();
    assert!(answer.contains("token refused"), "{answer}");

    let right = switchyard::text::secret::Secret::new(token.clone());
    let mut conn = Connection::open_tcp(&addr, &right, "tunnel", Some(0), true).await.unwrap();
    assert_eq!(conn.session.id, run.id);
    conn.send(Control::SetPace { ms: 1 }).await.unwrap();
    while let Some(msg) = conn.next().await.unwrap() {
        if let ServerMsg::Event { event } = msg
            && matches!(event.kind, EventKind::PaceChanged { .. })
        {
            break;
        }
    }
    drop(conn);
    let out = bin().args(["ctl", &addr, "resume"]).env("SWITCHYARD_CONTROL_TOKEN", &token).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let e = fails(&["ctl", &addr, "status"]);
    assert!(e.contains("give its token as SWITCHYARD_CONTROL_TOKEN"), "{e}");
    let mut run = run;
    assert!(run.child.wait().unwrap().success());
    let dir = run.dir.path();
    let events = read_trace(&run.trace).unwrap();
    assert!(effects(&events, "tunnel").contains(&("set_pace".to_string(), "PaceChanged")));
    let mut written = std::fs::read_to_string(&run.trace).unwrap() + run.stderr.join().unwrap().as_str();
    if let Ok(logs) = std::fs::read_dir(dir.join("logs")) {
        for l in logs.flatten() {
            written += &std::fs::read_to_string(l.path()).unwrap_or_default();
        }
    }
    assert!(!written.contains(token.trim()), "the token was written where it should not be");
    assert!(!token_file.exists(), "an ended session's token goes with its record");
}

/// A token given in SWITCHYARD_CONTROL_TOKEN is the session's (nothing is
/// written); `--control` on a command that serves no session says so.
#[test]
fn a_given_token_is_used_and_control_needs_a_session() {
    let dir = TempDir::new().unwrap();
    let d = s(dir.path());
    let mut child = bin()
        .args(["--data-dir", d, "--control", "127.0.0.1:0", "run", "--count", "2", "--break", "step=1@run=1"])
        .env("SWITCHYARD_CONTROL_TOKEN", "a-token-of-my-own")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("with the token in SWITCHYARD_CONTROL_TOKEN") && !line.contains("a-token"), "{line}");
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let reg = Registry::under(dir.path());
    let (record, _) = reg.list().unwrap().remove(0);
    assert!(!reg.token_path(&record.id).exists());
    let addr = record.control.unwrap();
    let out = bin().args(["ctl", &addr, "resume"]).env("SWITCHYARD_CONTROL_TOKEN", "a-token-of-my-own").output();
    assert!(out.unwrap().status.success());
    assert!(child.wait().unwrap().success());
    let e = fails(&["--control", "7300", "report", d]);
    assert!(e.contains("--control 7300: this command serves no session"), "{e}");
    let e = fails(&["--control", "localhost", "run"]);
    assert!(e.contains("expected PORT"), "{e}");
}

/// `eval --jobs N`: each task's engine is a session of its own while it
/// runs (`PID-N`, N the task's place), listed, steerable, gone with it.
#[test]
fn each_engine_of_an_eval_is_a_session_while_it_runs() {
    let dir = TempDir::new().unwrap();
    let d = s(dir.path());
    let out = dir.path().join("ev");
    let mut eval = bin()
        .args(["--data-dir", d, "eval", "--jobs", "2", "--count", "2", "--strategy", "react", "--json"])
        .args(["--fault", "model:actor:slow=1500", "--out", s(&out)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let reg = Registry::under(dir.path());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let engines = loop {
        let live: Vec<SessionRecord> = reg
            .list()
            .unwrap_or_default()
            .into_iter()
            .filter(|(r, l)| *l == switchyard::remote::Liveness::Live && r.kind == SessionKind::Eval)
            .map(|(r, _)| r)
            .collect();
        if live.len() == 2 {
            break live;
        }
        assert!(std::time::Instant::now() < deadline, "the eval's two engines never ran at once");
        std::thread::yield_now();
    };
    let pid = eval.id().to_string();
    let mut ids: Vec<String> = engines.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    assert_eq!(ids, [format!("{pid}-1"), format!("{pid}-2")]);
    for id in &ids {
        let status: serde_json::Value =
            serde_json::from_str(ok(&["--data-dir", d, "ctl", id, "status", "--json"]).trim()).unwrap();
        assert_eq!(status["status"]["tasks"], 1, "{status}");
        assert_eq!(status["session"]["kind"], "eval", "{status}");
    }
    assert!(ok(&["--data-dir", d, "ctl", &ids[0], "set", "tau=0.2"]).contains("taken"));
    assert!(eval.wait().unwrap().success());
    assert!(reg.list().unwrap().is_empty(), "an ended engine leaves no record");
}

/// A long session keeps only its latest events in memory, the older ones
/// in a file of its endpoint's: a viewer that attaches late reads every
/// event from the first, in order, the file's then the memory's, and
/// they are the trace's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_viewer_reads_a_long_session_from_its_first_event() {
    let run = start(&["--count", "500", "--seed", "3", "--break", "step=1@run=500"]);
    // Told when the breakpoint holds, by a viewer that follows from now on.
    let mut watcher = Connection::open(&run.socket(), "watcher", Some(u64::MAX), false).await.unwrap();
    while let Some(msg) = watcher.next().await.unwrap() {
        if matches!(msg, ServerMsg::Event { event } if matches!(event.kind, EventKind::BreakpointHit { .. })) {
            break;
        }
    }
    let status = ok(&["--data-dir", run.data_dir(), "ctl", &run.id, "status", "--json"]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let (events, in_memory) =
        (status["status"]["events"].as_u64().unwrap(), status["status"]["events_in_memory"].as_u64().unwrap());
    assert!(events > 8000, "{status}");
    assert!(in_memory <= 5120, "the memory holds a window, not the session: {status}");

    let mut late = Connection::open(&run.socket(), "late", Some(0), true).await.unwrap();
    let mut seen: Vec<Event> = Vec::new();
    let mut resumed = false;
    while let Some(msg) = late.next().await.unwrap() {
        match msg {
            ServerMsg::Event { event } => seen.push(*event),
            ServerMsg::CaughtUp { .. } if !resumed => {
                late.send(Control::Resume).await.unwrap();
                resumed = true;
            }
            ServerMsg::Ended => break,
            _ => {}
        }
    }
    drop(late);
    drop(watcher);
    let trace = run.finish();
    let line = |e: &Event| serde_json::to_string(e).unwrap();
    assert_eq!(seen.len(), trace.len(), "every recorded event, once");
    assert!(seen.iter().zip(&trace).all(|(a, b)| line(a) == line(b)), "in the trace's order");
}
