//! SIGTERM and SIGINT stop Switchyard cleanly: headless `run` and `eval`
//! and the workbench under a pty exit with a message naming the signal,
//! keep the trace written so far, give the terminal back, and leave no
//! child behind: not the command tool that hangs, not the MCP server over
//! stdio, not what either of them started. SIGKILL leaves no direct child
//! either (PR_SET_PDEATHSIG).
//!
//! Switchyard never starts a model server itself (scripts/llama-server.sh
//! is the user's to run), so there is none to check for.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use crate::common::{PATIENCE, Proc, Pty, bin, descendants, fixture, poll, read_back, reap, signal, still_alive};

const TASK: &str = "Ask the slow oracle about the weather";

/// A config whose library is the hanging command tool and the MCP fixture's
/// tool; the task matches the hanging tool, so the first call hangs.
fn config(dir: &Path) -> PathBuf {
    let manifest = dir.join("hang.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"[[tool]]
name = "slow_oracle"
description = "Ask the slow oracle about the weather."
category = "Information Retrieval"
cost = 1
[tool.parameters]
type = "object"
required = ["question"]
[tool.parameters.properties.question]
type = "string"
description = "What to ask the oracle about the weather."
[tool.executor]
kind = "command"
argv = ["python3", "{}"]
timeout_ms = 600000
"#,
            fixture("hang_tool.py").display()
        ),
    )
    .unwrap();
    std::fs::write(dir.join("tasks.toml"), format!("[[task]]\nid = \"h1\"\nquery = \"{TASK}\"\n")).unwrap();
    // No trajectories: the sample ones name tools this library lacks.
    std::fs::write(dir.join("trajectories.jsonl"), "").unwrap();
    let path = dir.join("config.toml");
    std::fs::write(
        &path,
        format!(
            r#"library = ["{manifest}"]
tasks = "tasks.toml"
trajectories = "trajectories.jsonl"
strategy = "toolnet"

[[mcp]]
name = "fixture"
command = "python3"
args = ["{server}"]
"#,
            manifest = manifest.display(),
            server = fixture("mcp_stdio.py").display()
        ),
    )
    .unwrap();
    path
}

/// The processes under `root` once the tool hangs: the tool, its helper
/// and the MCP server with its helper (two `sleep`s, two interpreters).
fn hanging(root: i32) -> Vec<Proc> {
    let mut seen = Vec::new();
    let ready = poll(PATIENCE, || {
        seen = descendants(root);
        seen.iter().filter(|p| p.comm == "sleep").count() >= 2
    });
    assert!(ready, "the tool and the server never both started: {seen:?}");
    seen
}

fn spawn(dir: &Path, args: &[&str]) -> Child {
    let cfg = config(dir);
    bin()
        .current_dir(dir)
        .arg("--config")
        .arg(&cfg)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (bounded) for the process to exit; its status and stderr.
fn ended(mut child: Child) -> (std::process::ExitStatus, String) {
    let ok = poll(PATIENCE, || child.try_wait().unwrap().is_some());
    if !ok {
        let _ = child.kill();
        panic!("it did not exit after the signal");
    }
    let out = child.wait_with_output().unwrap();
    (out.status, String::from_utf8_lossy(&out.stderr).to_string())
}

fn headless(args: &[&str], sig: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(dir.path(), args);
    let pid = child.id() as i32;
    let before = hanging(pid);
    signal(pid, sig);
    let (status, stderr) = ended(child);
    let left = still_alive(&before);
    reap(&left);
    assert!(left.is_empty(), "{args:?} {name}: children left behind: {left:?} (of {before:?})");
    assert!(!status.success(), "{args:?} {name}: an interrupted run does not succeed");
    assert_eq!(status.code(), Some(1), "{args:?} {name}: exited by itself, not by the signal: {status}");
    assert!(stderr.contains(&format!("interrupted ({name})")), "{args:?} {name}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let trace = dir.path().join("t.jsonl");
    if args.contains(&"--trace") {
        let read = read_back(&trace).unwrap();
        assert!(!read.torn, "a clean stop leaves no line half written");
        let calls = read.events.iter().filter(|e| e.kind.name() == "ToolCall").count();
        assert!(calls >= 1, "the trace keeps the call that was hanging");
    }
}

#[test]
fn sigterm_and_sigint_stop_a_headless_run_and_its_children() {
    let run = ["run", "--task", TASK, "--no-save", "--trace", "t.jsonl"];
    headless(&run, libc::SIGTERM, "SIGTERM");
    headless(&run, libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_and_sigint_stop_an_eval_and_its_children() {
    let eval = ["eval", "--strategy", "toolnet", "--out", "ev"];
    headless(&eval, libc::SIGTERM, "SIGTERM");
    headless(&eval, libc::SIGINT, "SIGINT");
}

/// SIGKILL leaves Switchyard no chance to clean up: the kernel kills its
/// direct children (PR_SET_PDEATHSIG). What they started themselves is out
/// of its reach (the helpers are reaped here).
#[test]
fn sigkill_takes_the_tool_and_the_server_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn(dir.path(), &["run", "--task", TASK, "--no-save"]);
    let pid = child.id() as i32;
    let before = hanging(pid);
    let direct: Vec<Proc> = {
        let mut d = descendants(pid);
        d.retain(|p| p.comm != "sleep");
        d
    };
    assert!(direct.len() >= 2, "the tool and the server: {direct:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    let left = still_alive(&direct);
    reap(&before);
    assert!(left.is_empty(), "direct children outlived a SIGKILL: {left:?}");
}

fn workbench(sig: i32, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path());
    let args = format!(
        "--config {} --data-dir {} ui --task '{TASK}' --pace 0 --no-save --trace {}",
        cfg.display(),
        dir.path().join("data").display(),
        dir.path().join("t.jsonl").display()
    );
    let mut pty = Pty::spawn(dir.path(), &args);
    pty.wait("the workbench", |t| t.contains("Transcript"));
    let pid = pty.switchyard_pid();
    let before = hanging(pid);
    signal(pid, sig);
    let raw = pty.finish();
    let left = still_alive(&before);
    reap(&left);
    assert!(left.is_empty(), "workbench {name}: children left behind: {left:?}");
    assert!(raw.contains("EXIT=1"), "workbench {name}: exits 1 after the signal:\n{raw}");
    assert!(raw.contains(&format!("interrupted ({name})")), "workbench {name}: says why:\n{raw}");
    let screen = pty.parser.screen();
    assert!(!screen.alternate_screen(), "workbench {name}: the alternate screen was left");
    assert!(!screen.hide_cursor(), "workbench {name}: the cursor is shown");
    assert!(raw.contains("\u{1b}[?1049l"), "workbench {name}: the bytes that leave the alternate screen");
    assert!(raw.contains("\u{1b}[?25h"), "workbench {name}: the bytes that show the cursor");
    let stty = raw.rsplit("EXIT=").next().unwrap();
    assert!(stty.contains(" icanon") && stty.contains(" echo "), "workbench {name}: raw mode off: {stty}");
    let read = read_back(&dir.path().join("t.jsonl")).unwrap();
    assert!(read.events.iter().any(|e| e.kind.name() == "ToolCall"), "workbench {name}: the trace kept the call");
}

#[test]
fn sigterm_and_sigint_quit_the_workbench_and_restore_the_terminal() {
    workbench(libc::SIGTERM, "SIGTERM");
    workbench(libc::SIGINT, "SIGINT");
}
