//! Durable learnt state: a headless run killed with SIGKILL keeps every
//! finished task's graph update, in a file that loads, and the next session
//! goes on from it. A SIGTERM suspends a run whose every call is in process.
//!
//! The trace goes to a FIFO, so the test reads the events as the run writes
//! them and kills it right after the task it chose, with no timing involved.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use switchyard::engine::{Event, EventKind, SessionState};
use switchyard::graph::{START, ToolGraph};

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only reads it.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}: {}", path.display(), std::io::Error::last_os_error());
}

fn spawn_run(data: &Path, trace: &Path, count: u32) -> Child {
    Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(["--data-dir", data.to_str().unwrap(), "run", "--strategy", "toolnet", "--logical-clock"])
        .args(["--count", &count.to_string(), "--trace", trace.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Reads the trace from the FIFO; kills the run with SIGKILL right after
/// its `kill_after`-th finished task; returns every event it had written.
fn run_and_kill(data: &Path, kill_after: u32) -> Vec<Event> {
    let fifo = data.join(format!("trace-{kill_after}.fifo"));
    mkfifo(&fifo);
    let mut child = spawn_run(data, &fifo, 500);
    // Opening blocks until the run opens its end for writing.
    let mut lines = BufReader::new(std::fs::File::open(&fifo).unwrap()).lines();
    let mut events = Vec::new();
    let mut finished = 0;
    for line in lines.by_ref() {
        let e: Event = serde_json::from_str(&line.unwrap()).unwrap();
        let done = matches!(e.kind, EventKind::RunFinished { .. });
        events.push(e);
        if done {
            finished += 1;
            if finished == kill_after {
                child.kill().unwrap();
                break;
            }
        }
    }
    assert_eq!(finished, kill_after, "the run ended before it could be killed");
    // What the run wrote before it died is still in the pipe; a line the
    // kill cut in half is not an event.
    for line in lines {
        match line.ok().and_then(|l| serde_json::from_str::<Event>(&l).ok()) {
            Some(e) => events.push(e),
            None => break,
        }
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run was killed, not finished");
    events
}

fn iteration_of(e: &Event) -> Option<u32> {
    match &e.kind {
        EventKind::GraphUpdated { update } => Some(update.iteration),
        _ => None,
    }
}

#[test]
fn a_run_killed_with_sigkill_keeps_every_finished_tasks_update() {
    for kill_after in [1, 6, 17] {
        let dir = tempfile::tempdir().unwrap();
        let events = run_and_kill(dir.path(), kill_after);
        let saved = ToolGraph::load(&dir.path().join("graph.json"))
            .unwrap_or_else(|e| panic!("killed after task {kill_after}: the saved graph does not load: {e}"));

        // Every task that finished had its update saved; an update emitted
        // by a task the kill cut short may or may not have been.
        let last_finished = events.iter().rposition(|e| matches!(e.kind, EventKind::RunFinished { .. })).unwrap();
        let finished_updates = events[..last_finished].iter().filter_map(iteration_of).max().unwrap_or(0);
        let emitted_updates = events.iter().filter_map(iteration_of).max().unwrap_or(0);
        assert!(finished_updates >= kill_after.min(1), "the finished tasks taught the graph something");
        assert!(
            (finished_updates..=emitted_updates).contains(&saved.iteration()),
            "killed after task {kill_after}: saved iteration {} outside {finished_updates}..={emitted_updates}",
            saved.iteration()
        );

        // And it is exactly the graph the trace describes at that iteration.
        let upto = events.iter().position(|e| iteration_of(e) == Some(saved.iteration())).map_or(1, |i| i + 1);
        let state = SessionState::from_events(&events[..upto]);
        let view = state.graph.as_ref().expect("a toolnet session has a graph");
        for from in std::iter::once(START).chain(saved.tools()) {
            for (to, w) in saved.out_edges(from) {
                let traced = view.weight(from, &to).unwrap_or_else(|| panic!("{from}->{to} not in the trace"));
                assert!((traced - w).abs() < 1e-9, "{from}->{to}: saved {w}, traced {traced}");
            }
        }
    }
}

#[test]
fn the_next_session_goes_on_from_a_killed_runs_graph() {
    let dir = tempfile::tempdir().unwrap();
    run_and_kill(dir.path(), 4);
    let saved = ToolGraph::load(&dir.path().join("graph.json")).unwrap().iteration();
    let trace = dir.path().join("next.jsonl");
    let status = spawn_run(dir.path(), &trace, 2).wait().unwrap();
    assert!(status.success());
    let events = switchyard::engine::trace::read_trace(&trace).unwrap();
    let EventKind::SessionStarted { graph: Some(g), .. } = &events[0].kind else { panic!("no graph at the start") };
    assert_eq!(g.iteration, saved, "the next session starts from the saved graph");
    let after = ToolGraph::load(&dir.path().join("graph.json")).unwrap().iteration();
    assert!(after > saved, "and goes on learning ({saved} -> {after})");
}

#[test]
fn sigterm_suspends_a_run_whose_calls_never_wait() {
    // The simulated model and builtin tools: every future is ready at once,
    // so a run that never yields would not hear the signal until its last task.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("trace.fifo");
    mkfifo(&fifo);
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(["--data-dir", dir.path().to_str().unwrap(), "run", "--strategy", "react", "--no-save"])
        .args(["--task", "What is the sum of 19 and 23?", "--count", "1000000", "--trace", fifo.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(std::fs::File::open(&fifo).unwrap()).lines();
    let finished = |l: &str| l.contains("\"type\":\"RunFinished\"");
    let mut before = 0;
    for line in lines.by_ref() {
        if finished(&line.unwrap()) {
            before += 1;
            if before == 3 {
                break;
            }
        }
    }
    // SAFETY: a plain kill(2) of the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    // The run suspends at its next call; were the signal unheard, it would
    // go on through its million tasks.
    let after = lines.map_while(Result::ok).filter(|l| finished(l)).take(1000).count();
    if after >= 1000 {
        child.kill().unwrap();
        child.wait().unwrap();
        panic!("the run went on for 1000 tasks after SIGTERM");
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "a suspended run did not finish");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("suspended: `switchyard resume"), "{err}");
}
