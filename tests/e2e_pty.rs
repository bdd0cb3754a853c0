//! The real binary in a pseudo-terminal, driven as a person would: pause,
//! break the primary tool, step, resume; the screen must show the fault, the
//! primary's weight falling and the backup being chosen. Quitting must give
//! the terminal back as it was.

use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

/// Generous: the run is paced for people; this only stops a broken build
/// from hanging CI.
const PATIENCE: Duration = Duration::from_secs(60);

struct Screen {
    parser: vt100::Parser,
    bytes: Receiver<Vec<u8>>,
    raw: Vec<u8>,
}

impl Screen {
    fn text(&self) -> String {
        self.parser.screen().contents()
    }

    /// Reads output until `pred` holds for the screen, or fails with the screen.
    fn wait(&mut self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let text = self.text();
            if pred(&text) {
                return text;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.bytes.recv_timeout(left) {
                Ok(b) => {
                    self.parser.process(&b);
                    self.raw.extend_from_slice(&b);
                }
                Err(_) => panic!("waited for {what}; the screen shows:\n{text}"),
            }
        }
    }

    /// Reads everything until the shell under the terminal has ended
    /// (closing it), then reaps it. One that does not end within
    /// `PATIENCE` is killed and fails the test, rather than hang it.
    fn end(&mut self, child: &mut (dyn portable_pty::Child + Send + Sync)) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            match self.bytes.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(b) => {
                    self.parser.process(&b);
                    self.raw.extend_from_slice(&b);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    panic!("the program did not end; the screen shows:\n{}", self.text());
                }
            }
        }
        child.wait().unwrap();
    }
}

fn contains_all(text: &str, parts: &[&str]) -> bool {
    parts.iter().all(|p| text.contains(p))
}

/// The workbench under a shell in a 160×48 pseudo-terminal; the shell then
/// prints `EXIT=` and the terminal's settings.
fn spawn(
    dir: &std::path::Path,
    args: &str,
) -> (Screen, Box<dyn Write + Send>, Box<dyn portable_pty::Child + Send + Sync>) {
    spawn_command(dir, &format!("ui {args} --trace {}/t.jsonl", dir.display()))
}

/// Any subcommand under the shell, as `spawn`.
fn spawn_command(
    dir: &std::path::Path,
    command: &str,
) -> (Screen, Box<dyn Write + Send>, Box<dyn portable_pty::Child + Send + Sync>) {
    let pty = native_pty_system().openpty(PtySize { rows: 48, cols: 160, pixel_width: 0, pixel_height: 0 }).unwrap();
    let script = format!(
        "{bin} --data-dir {dir} {command}; echo EXIT=$?; stty -a",
        bin = env!("CARGO_BIN_EXE_switchyard"),
        dir = dir.display()
    );
    let mut cmd = CommandBuilder::new("sh");
    cmd.args(["-c", &script]);
    cmd.env("TERM", "xterm-256color");
    cmd.cwd(dir);
    let child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let keys = pty.master.take_writer().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // The master must outlive the child's use of the terminal.
    std::mem::forget(pty.master);
    (Screen { parser: vt100::Parser::new(48, 160, 0), bytes: rx, raw: Vec::new() }, keys, child)
}

#[test]
fn break_the_primary_and_watch_the_backup_take_over() {
    let dir = tempfile::tempdir().unwrap();
    let (mut screen, mut keys, mut child) = spawn(dir.path(), "--pace 60 --fresh-graph --no-save --seed 42");
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };

    screen.wait("the workbench running", |t| contains_all(t, &["Graph", "Transcript", "running"]));
    press(" ");
    screen.wait("the run paused", |t| t.contains("paused"));

    // Focus the graph on the primary and read its weight from start.
    press("/");
    press("geo_lookup");
    press("\r");
    let before = screen.wait("the graph focused on geo_lookup", |t| start_weight(t).is_some());
    let w0 = start_weight(&before).unwrap();

    // Break it: fault dialog, filter to the primary, accept (error, until cleared).
    press("f");
    press("geo_lookup");
    for _ in 0..4 {
        press("\r");
        if screen.text().contains("⚡") {
            break;
        }
    }
    // One step at a time for a moment, then run on.
    press("s");
    screen.wait("the fault shown", |t| t.contains("⚡") && t.contains("geo_lookup"));
    press("s");
    press("s");
    press(" ");
    // The evaluator has punished the primary (its score is negative), its
    // weight from start has fallen, and the mirror answers on the path.
    let after = screen.wait("the mirror chosen and the primary's weight fallen", |t| {
        let mirror_on_path = t.lines().any(|l| l.contains("start ›") && l.contains("geo_lookup_mirror ✓"));
        let punished = t.contains("score -");
        mirror_on_path && punished && start_weight(t).is_some_and(|w| w < w0)
    });
    assert!(after.contains("failed"), "the primary's failed calls are counted:\n{after}");
    assert!(after.contains("⚡"), "the fault stays shown:\n{after}");

    press("q");
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    assert!(raw.contains("EXIT=0"), "the workbench exited cleanly:\n{}", screen.text());
    assert!(!screen.parser.screen().alternate_screen(), "the alternate screen was left");
    let stty = raw.rsplit("EXIT=0").next().unwrap();
    assert!(stty.contains(" icanon") && stty.contains(" echo "), "cooked mode restored: {stty}");
    assert!(raw.contains("\u{1b}[?1049l"), "left the alternate screen");
}

/// The weight shown on the `start → geo_lookup` edge in the graph pane's
/// predecessor column, as a number.
fn start_weight(screen: &str) -> Option<f64> {
    screen.lines().find_map(|l| {
        let i = l.find("start")?;
        let rest = &l[i + "start".len()..];
        rest.split_whitespace().next()?.trim_matches(|c: char| !c.is_ascii_digit() && c != '.').parse().ok()
    })
}

#[test]
fn a_budget_plan_and_a_blacklisting_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let smoke = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools/tasks/smoke.toml");
    let args = format!(
        "--pace 60 --fresh-graph --no-save --seed 3 --tasks {} --budget 20 --tool-costs random:1-10 \
         --fault geo_lookup:nothing-found:times=2",
        smoke.display()
    );
    let (mut screen, mut keys, mut child) = spawn(dir.path(), &args);
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    // The plan table in the Budget pane, then the judge blacklisting the
    // primary after it found nothing.
    let shown = screen.wait("a plan and a blacklisting", |t| {
        t.contains("left of B 20") && t.contains("plan") && t.contains("■ blacklisted")
    });
    assert!(shown.contains("geo_lookup"), "{shown}");
    press("q");
    screen.end(&mut *child);
    assert!(String::from_utf8_lossy(&screen.raw).contains("EXIT=0"));
}

/// A rewoo step's concurrent calls as lanes: paused before the step, one
/// lane stepped on its own, the other failed by the user and shown as null,
/// then the run goes on.
#[test]
fn a_concurrent_step_is_shown_as_lanes_a_user_can_step_and_fail() {
    let dir = tempfile::tempdir().unwrap();
    let smoke = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools/tasks/smoke.toml");
    let args = format!("--strategy rewoo --paused --pace 60 --seed 42 --tasks {}", smoke.display());
    let (mut screen, mut keys, mut child) = spawn(dir.path(), &args);
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    screen.wait("the workbench paused", |t| contains_all(t, &["Plan", "Workers", "paused"]));
    // The classifier, then the planner: one call each.
    press("s");
    screen.wait("the classifier's labels", |t| t.contains("Information Retrieval"));
    press("s");
    let lanes = screen.wait("the step's two lanes waiting", |t| {
        t.contains("step #E1 · 2 lanes") && t.matches("◦ waiting").count() >= 2
    });
    assert!(lanes.contains("geo_lookup_mirror") || lanes.contains("geo_lookup_…"), "{lanes}");

    // Focus the workers pane (graph → transcript → budget → models → workers).
    press("\t\t\t\t");
    press("n");
    screen.wait("lane 0 done, lane 1 still waiting", |t| t.contains("✓ ok") && t.contains("◦ waiting"));
    press("\x1b[B");
    press("k");
    screen.wait("lane 1's fault pending", |t| t.contains("sent: fail lane 1") && t.contains("⚡ err"));
    press(" ");
    screen.wait("lane 1 failed by the user and filtered", |t| t.contains("✗ failed") && t.contains("null (filtered"));
    screen.wait("the run answered and the next one planned", |t| t.contains("run 2"));

    press("q");
    screen.end(&mut *child);
    assert!(String::from_utf8_lossy(&screen.raw).contains("EXIT=0"), "{}", screen.text());
}

/// Time travel in the workbench: a recorded session replayed to event 15,
/// `f` forks it there: a live session paused at the fork point, saying where
/// it came from; resumed, it runs to its end; its trace starts with the
/// parent's first 15 events.
#[test]
fn replay_forks_a_live_session_at_the_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().join("parent.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--count", "2", "--seed", "4", "--no-save", "--trace"])
        .arg(&parent)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (mut screen, mut keys, mut child) = spawn_command(dir.path(), &format!("replay {}", parent.display()));
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    screen.wait("the replay", |t| t.contains("REPLAY event"));
    press("15\r");
    screen.wait("event 15", |t| t.contains("REPLAY event 15/"));
    press("f");
    let shown = screen.wait("the fork, paused", |t| t.contains("forked from parent.jsonl@15") && t.contains("paused"));
    assert!(!shown.contains("REPLAY"), "{shown}");
    press(" ");
    screen.wait("the session's end", |t| t.contains("all tasks done"));
    press("q");
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    assert!(raw.contains("EXIT=0"), "{raw}");
    let traces: Vec<_> = std::fs::read_dir(dir.path().join("traces")).unwrap().flatten().map(|e| e.path()).collect();
    let fork = traces.iter().find(|p| p.file_name().unwrap().to_string_lossy().starts_with("fork-")).unwrap();
    let read = |p: &std::path::Path| -> Vec<String> {
        std::fs::read_to_string(p).unwrap().lines().map(str::to_string).collect()
    };
    let (a, b) = (read(&parent), read(fork));
    assert_eq!(a[..15], b[..15], "the fork's prefix is the parent's");
    assert!(b[15].contains("\"type\":\"Forked\""), "{}", b[15]);
}

/// Approvals and a breakpoint from the command line: the call waits in a
/// panel until Enter approves it, its result until k keeps it; then the
/// breakpoint on step 2 pauses the run and says so.
#[test]
fn an_approved_call_proceeds_and_a_breakpoint_pauses_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let args = "--strategy react --pace 0 --fresh-graph --no-save --seed 42 \
                --task \"What is the capital of the country 'Australia'?\" \
                --approve tool=geo_lookup --approve tool=geo_lookup_mirror --break step=2";
    let (mut screen, mut keys, mut child) = spawn(dir.path(), args);
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    let panel = screen.wait("the call waiting for approval", |t| t.contains("Approve the call"));
    assert!(panel.contains("\"country\": \"Australia\""), "{panel}");
    assert!(!panel.contains("✓ ok"), "nothing ran before the approval:\n{panel}");
    press("\r");
    screen.wait("its result waiting for review", |t| t.contains("Review the result") && t.contains("Canberra"));
    press("k");
    let paused =
        screen.wait("the breakpoint's pause", |t| t.contains("breakpoint #1 (step=2) hit") && t.contains("paused"));
    assert!(paused.contains("call 2 approved"), "{paused}");
    // A paused session: q asks whether to end or suspend it; q again ends it.
    press("q");
    screen.wait("the question", |t| t.contains("Leave the session"));
    press("q");
    screen.end(&mut *child);
    assert!(String::from_utf8_lossy(&screen.raw).contains("EXIT=0"), "{}", screen.text());
}

/// Suspended at an approval (`q`, then `s`) and taken up by `switchyard
/// resume`: the workbench opens with the same call waiting in its panel.
#[test]
fn a_workbench_suspended_at_an_approval_resumes_to_the_same_panel() {
    let dir = tempfile::tempdir().unwrap();
    let args = "--strategy react --pace 0 --fresh-graph --no-save --seed 42 \
                --task \"What is the capital of the country 'Australia'?\" \
                --approve tool=geo_lookup --approve tool=geo_lookup_mirror";
    let (mut screen, mut keys, mut child) = spawn(dir.path(), args);
    let panel = screen.wait("the call waiting for approval", |t| t.contains("Approve the call"));
    assert!(panel.contains("\"country\": \"Australia\""), "{panel}");
    keys.write_all(b"q").unwrap();
    keys.flush().unwrap();
    screen.wait("the question", |t| t.contains("Leave the session") && t.contains("suspend it"));
    keys.write_all(b"s").unwrap();
    keys.flush().unwrap();
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    let trace = dir.path().join("t.jsonl");
    assert!(raw.contains(&format!("switchyard resume {}", trace.display())) && raw.contains("EXIT=0"), "{raw}");

    let resumed = dir.path().join("r.jsonl");
    let command = format!("resume {} --trace {}", trace.display(), resumed.display());
    let (mut screen, mut keys, mut child) = spawn_command(dir.path(), &command);
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    let panel = screen.wait("the same call waiting again", |t| t.contains("Approve the call"));
    assert!(panel.contains("\"country\": \"Australia\""), "{panel}");
    press("\r");
    screen.wait("its result waiting for review", |t| t.contains("Review the result") && t.contains("Canberra"));
    press("k");
    screen.wait("the run's end", |t| t.contains("all tasks done"));
    press("q");
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    assert!(raw.contains("resumed from") && raw.contains("EXIT=0"), "{raw}");
}

/// A headless eval of `count` react tasks, `jobs` at a time, under `dir`,
/// each model call slowed by `slow_ms` so that a follower sees its tasks.
fn start_eval(dir: &std::path::Path, jobs: u32, count: u32, slow_ms: u32) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir)
        .args(["eval", "--jobs", &jobs.to_string(), "--count", &count.to_string(), "--strategy", "react", "--json"])
        .args(["--fault", &format!("model:actor:slow={slow_ms}"), "--out"])
        .arg(dir.join("ev"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// `attach PID` on an eval: the workbench on one task's engine, saying
/// which and how far the eval is; it moves on to the next task in flight
/// as each ends, and `d` leaves the eval running.
#[test]
fn attach_follows_an_eval_from_task_to_task() {
    let dir = tempfile::tempdir().unwrap();
    let mut eval = start_eval(dir.path(), 2, 16, 500);
    let pid = eval.id();
    let (mut screen, mut keys, mut child) = spawn_command(dir.path(), &format!("attach {pid}"));
    let task = |t: &str| {
        let at = t.find(&format!("ATTACHED eval {pid} · task "))?;
        t[at..].split(" · ").nth(1)?.strip_prefix("task ")?.parse::<u32>().ok()
    };
    let first = screen.wait("an eval's task on screen", |t| task(t).is_some() && t.contains("/16 done"));
    let first = task(&first).unwrap();
    screen.wait("the next task followed", |t| task(t).is_some_and(|n| n != first));
    keys.write_all(b"d").unwrap();
    keys.flush().unwrap();
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    assert!(raw.contains(&format!("detached from eval {pid}; it goes on")) && raw.contains("EXIT=0"), "{raw}");
    assert!(eval.wait().unwrap().success(), "the eval went on to its end");
}

/// Followed to its end, an eval lets its follower go even while nobody
/// has reaped it yet (here the test holds it): each task on screen in
/// turn, then the count of those followed.
#[test]
fn attach_follows_an_eval_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut eval = start_eval(dir.path(), 1, 3, 200);
    let pid = eval.id();
    let (mut screen, _keys, mut child) = spawn_command(dir.path(), &format!("attach {pid}"));
    screen.wait("an eval's task on screen", |t| t.contains(&format!("ATTACHED eval {pid} · task ")));
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    let followed = raw
        .split(&format!("eval {pid} has ended ("))
        .nth(1)
        .and_then(|r| r.split(' ').next()?.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no end said: {raw}"));
    assert!(followed >= 1 && raw.contains("EXIT=0"), "{raw}");
    assert!(eval.wait().unwrap().success());
}

/// `ui --gateway`: the workbench opens on the exports to paste; an agent
/// started elsewhere with them is answered, and its call is on screen.
#[test]
fn the_workbench_as_the_gateway_of_an_agent_started_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let (mut screen, mut keys, mut child) = spawn(dir.path(), "--gateway");
    let shown =
        screen.wait("the exports", |t| t.contains("export OPENAI_API_KEY=") && t.contains("SWITCHYARD_MCP_URL"));
    let value = |name: &str| -> String {
        let at = shown.find(&format!("export {name}=")).unwrap() + name.len() + 8;
        shown[at..].split(|c: char| c.is_whitespace() || c == '│').next().unwrap().to_string()
    };
    let (base, key) = (value("OPENAI_BASE_URL"), value("OPENAI_API_KEY"));
    keys.write_all(b"\x1b").unwrap();
    keys.flush().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ask = serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "Say hello."}]});
    let reply: serde_json::Value = rt.block_on(async {
        let resp = reqwest::Client::new()
            .post(format!("{base}/chat/completions"))
            .bearer_auth(&key)
            .json(&ask)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        resp.json().await.unwrap()
    });
    assert!(reply["choices"][0]["message"]["content"].is_string(), "{reply}");
    screen.wait("the agent's call", |t| t.contains("agent reply") && !t.contains("Paste into"));
    keys.write_all(b"q").unwrap();
    keys.flush().unwrap();
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    assert!(raw.contains("EXIT=0"), "{raw}");
}

/// `attach` on a headless run: the workbench follows it, space pauses it,
/// `d` leaves it paused and running its process; `ctl` ends it.
#[test]
fn attach_pauses_a_headless_run_and_detaches_leaving_it_paused() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--count", "40", "--pace", "200", "--no-save"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(run.stderr.take().unwrap());
    let id = loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "the run named no session");
        if let Some(rest) = line.strip_prefix("session ") {
            break rest.split(':').next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let (mut screen, mut keys, mut child) = spawn_command(dir.path(), &format!("attach {id}"));
    let mut press = |s: &str| {
        keys.write_all(s.as_bytes()).unwrap();
        keys.flush().unwrap();
    };
    screen.wait("the attached workbench", |t| t.contains(&format!("ATTACHED {id}")) && t.contains("running"));
    press(" ");
    screen.wait("the run paused", |t| t.contains("paused"));
    press("d");
    screen.end(&mut *child);
    let raw = String::from_utf8_lossy(&screen.raw).to_string();
    assert!(raw.contains(&format!("detached from session {id}; it goes on")) && raw.contains("EXIT=0"), "{raw}");
    let ctl = |what: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .arg("--data-dir")
            .arg(dir.path())
            .args(["ctl", &id])
            .args(what)
            .output()
            .unwrap()
    };
    let status: serde_json::Value = serde_json::from_slice(&ctl(&["status", "--json"]).stdout).unwrap();
    assert_eq!(status["status"]["paused"], true, "{status}");
    let stopped = ctl(&["stop"]);
    assert!(stopped.status.success(), "{}", String::from_utf8_lossy(&stopped.stderr));
    let status = run.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
