//! Suspend and resume: a session killed at an approval, suspended by
//! SIGTERM or by `ctl suspend`, is taken up by `switchyard resume` from its
//! own trace at the same point, with nothing called again.

use std::path::Path;
use std::process::{Child, Command};

use switchyard::engine::debug::Decision;
use switchyard::engine::trace::read_trace;
use switchyard::engine::{Control, Event, EventKind};
use switchyard::remote::protocol::ServerMsg;
use switchyard::remote::{Connection, Registry};
use tempfile::TempDir;

use super::cli_helpers::{fails, ok, s};
use super::remote::spawn_session;

/// The call an event says waits for the user, if it does.
fn waits(kind: &EventKind) -> Option<u64> {
    match kind {
        EventKind::ApprovalRequested { call, .. }
        | EventKind::ResultReview { call, .. }
        | EventKind::ReplyReview { call, .. } => Some(*call),
        _ => None,
    }
}

async fn connect(dir: &Path, id: &str) -> Connection {
    Connection::open(&Registry::under(dir).socket(id), "test", Some(0), true).await.unwrap()
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect()
}

fn signal(child: &Child, name: &str) {
    assert!(Command::new("kill").args([name, &child.id().to_string()]).status().unwrap().success());
}

/// A session's events as a user compares two runs: without the clock's
/// readings, and without what only a resumed one has.
fn comparable(events: &[Event]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| !matches!(e.kind, EventKind::Forked { .. } | EventKind::Viewer { .. }))
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap();
            for k in ["t", "latency_ms", "first_token_ms"] {
                v.as_object_mut().unwrap().remove(k);
            }
            v
        })
        .collect()
}

/// `kill -9` while a call waits for its approval: the trace is enough.
/// `resume` replays it (its lines byte for byte), waits at that same call,
/// and once approved goes on without calling anything again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_killed_at_an_approval_resumes_at_that_approval() {
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("t.jsonl");
    let args = ["run", "--count", "2", "--seed", "1", "--no-save", "--approve", "all", "--trace", s(&trace)];
    let (mut child, id, _) = spawn_session(dir.path(), &args);
    let mut conn = connect(dir.path(), &id).await;
    // Two decisions, then killed at the third thing that waits.
    let mut decided = 0;
    let waiting = loop {
        let Some(ServerMsg::Event { event }) = conn.next().await.unwrap() else { continue };
        if let Some(call) = waits(&event.kind) {
            if decided == 2 {
                break call;
            }
            conn.send(Control::Decide { call, decision: Decision::Approve }).await.unwrap();
            decided += 1;
        }
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = lines(&trace);
    let last_call = read_trace(&trace).unwrap().iter().filter_map(|e| call_of(&e.kind)).max().unwrap();

    let resumed = dir.path().join("r.jsonl");
    let (mut child, id, stderr) =
        spawn_session(dir.path(), &["resume", s(&trace), "--headless", "--trace", s(&resumed)]);
    let mut conn = connect(dir.path(), &id).await;
    let mut forked = false;
    loop {
        match conn.next().await.unwrap() {
            Some(ServerMsg::Event { event }) => {
                if let EventKind::Forked { origin, .. } = &event.kind {
                    assert!(origin.resumed && origin.at as usize == killed.len(), "{origin:?}");
                    forked = true;
                    // The same call waits again, and nothing else has happened.
                    conn.ask_status().await.unwrap();
                }
                // Past the replayed prefix, what comes to wait is new.
                if let Some(call) = waits(&event.kind).filter(|_| forked) {
                    conn.send(Control::Decide { call, decision: Decision::Approve }).await.unwrap();
                }
            }
            Some(ServerMsg::Status { status }) => {
                assert_eq!((status.approvals_waiting, status.waiting_call), (1, Some(waiting)), "{status:?}");
                conn.send(Control::Decide { call: waiting, decision: Decision::Approve }).await.unwrap();
            }
            Some(ServerMsg::Ended) | None => break,
            Some(_) => {}
        }
    }
    assert!(forked);
    assert!(child.wait().unwrap().success());
    let said = stderr.join().unwrap();
    assert!(said.contains("a call waits for its approval"), "{said}");
    let after = lines(&resumed);
    assert_eq!(after[..killed.len()], killed[..], "the resumed trace starts with the killed one, byte for byte");
    let events = read_trace(&resumed).unwrap();
    let live = &events[killed.len() + 1..];
    // The call that waited is decided first, and no call is made again.
    let first = live.iter().find(|e| !matches!(e.kind, EventKind::Viewer { .. })).unwrap();
    assert!(matches!(first.kind, EventKind::ReviewPassed { call, .. } if call == waiting), "{first:?}");
    for e in live {
        if let EventKind::ModelCall { call, .. } | EventKind::ToolCall { call, .. } = e.kind {
            assert!(call > last_call, "call {call} made again: {e:?}");
        }
    }
    assert!(matches!(events.last().unwrap().kind, EventKind::SessionFinished { runs: 2, stopped: false }));
}

fn call_of(kind: &EventKind) -> Option<u64> {
    match kind {
        EventKind::ModelCall { call, .. } | EventKind::ToolCall { call, .. } => Some(*call),
        _ => None,
    }
}

/// SIGTERM suspends a headless run (exit 3, the resume line on stderr, the
/// trace ending with `Suspended`); resumed, it ends as the same run never
/// interrupted does, event for event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_suspends_and_the_resumed_run_ends_as_an_unbroken_one() {
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("t.jsonl");
    let run = ["run", "--count", "4", "--seed", "7", "--no-save", "--pace", "30"];
    let (mut child, id, stderr) = spawn_session(dir.path(), &[&run[..], &["--trace", s(&trace)]].concat());
    let mut conn = connect(dir.path(), &id).await;
    loop {
        let Some(ServerMsg::Event { event }) = conn.next().await.unwrap() else { continue };
        if matches!(event.kind, EventKind::RunStarted { index: 2, .. }) {
            break;
        }
    }
    signal(&child, "-TERM");
    assert_eq!(child.wait().unwrap().code(), Some(3), "a suspended run did not finish");
    let said = stderr.join().unwrap();
    assert!(said.contains(&format!("suspended: `switchyard resume {}`", trace.display())), "{said}");
    let suspended = read_trace(&trace).unwrap();
    assert!(matches!(suspended.last().unwrap().kind, EventKind::Suspended));

    let resumed = dir.path().join("r.jsonl");
    let d = s(dir.path());
    ok(&["--data-dir", d, "resume", s(&trace), "--headless", "--trace", s(&resumed)]);
    let other = TempDir::new().unwrap();
    let unbroken = other.path().join("u.jsonl");
    ok(&[&["--data-dir", s(other.path())], &run[..], &["--trace", s(&unbroken)]].concat());
    let (a, b) = (read_trace(&resumed).unwrap(), read_trace(&unbroken).unwrap());
    assert_eq!(comparable(&a), comparable(&b));
}

/// `ctl suspend` on a paused session; resumed, it is paused as it was
/// until `ctl resume`. Then the bad cases: a finished trace has nothing
/// to resume, and a fork cannot go past the suspension.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctl_suspends_a_paused_session_and_it_resumes_paused() {
    let dir = TempDir::new().unwrap();
    let d = s(dir.path());
    let trace = dir.path().join("t.jsonl");
    let args = ["run", "--count", "3", "--seed", "2", "--no-save", "--pace", "30", "--trace", s(&trace)];
    let (mut child, id, _) = spawn_session(dir.path(), &args);
    ok(&["--data-dir", d, "ctl", &id, "pause"]);
    let said = ok(&["--data-dir", d, "ctl", &id, "suspend"]);
    assert!(said.contains(&format!("switchyard resume {}", trace.display())), "{said}");
    assert_eq!(child.wait().unwrap().code(), Some(3));
    let events = read_trace(&trace).unwrap();
    let at = events.len() - 1;
    assert!(matches!(events[at].kind, EventKind::Suspended));

    let resumed = dir.path().join("r.jsonl");
    let (mut child, id, stderr) =
        spawn_session(dir.path(), &["resume", s(&trace), "--headless", "--trace", s(&resumed)]);
    let mut conn = connect(dir.path(), &id).await;
    loop {
        let Some(ServerMsg::Event { event }) = conn.next().await.unwrap() else { continue };
        if matches!(event.kind, EventKind::Forked { .. }) {
            break;
        }
    }
    conn.ask_status().await.unwrap();
    let status = loop {
        if let Some(ServerMsg::Status { status }) = conn.next().await.unwrap() {
            break status;
        }
    };
    assert!(status.paused, "{status:?}");
    ok(&["--data-dir", d, "ctl", &id, "resume"]);
    assert!(child.wait().unwrap().success());
    assert!(stderr.join().unwrap().contains("paused, as it was"));
    let after = read_trace(&resumed).unwrap();
    assert!(matches!(after.last().unwrap().kind, EventKind::SessionFinished { runs: 3, stopped: false }));

    let err = fails(&["--data-dir", d, "resume", s(&resumed), "--headless"]);
    assert!(err.contains("r.jsonl") && err.contains("the session finished (3 runs)"), "{err}");
    let past = (at + 1).to_string();
    let err = fails(&["--data-dir", d, "fork", s(&trace), "--at", &past]);
    assert!(err.contains(&format!("suspended at its event {at}")), "{err}");
}
