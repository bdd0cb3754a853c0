//! What the campaign and the signal tests share: the binary, traces read
//! back, the process tree from /proc, and the workbench under a pty.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use switchyard::engine::Event;

/// Only stops a broken build from hanging CI; no test waits this long when
/// the behaviour is right.
pub const PATIENCE: Duration = Duration::from_secs(60);

pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_switchyard"));
    c.env_remove("SWITCHYARD_DATA_DIR");
    c
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kill").join(name)
}

/// A trace as a killed process left it.
pub struct TraceRead {
    pub events: Vec<Event>,
    /// The last line had no newline: the event being written when it died.
    pub torn: bool,
}

/// The one place the trace is read back (the reader's signature is the
/// lead's to change): every complete line must be an event, checked line by
/// line here as well as by `read_trace`; only a last line without its
/// newline may be cut short.
pub fn read_back(path: &Path) -> Result<TraceRead, String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TraceRead { events: vec![], torn: false }),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let torn = complete < bytes.len();
    for (i, line) in bytes[..complete].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        serde_json::from_slice::<Event>(line)
            .map_err(|e| format!("{}:{}: a complete line is not an event: {e}", path.display(), i + 1))?;
    }
    use switchyard::engine::trace::{TraceError, read_trace_file};
    let events = match read_trace_file(path) {
        Ok(read) => {
            // The reader must say the same of the last line as the bytes do.
            if read.torn.is_some() != torn {
                return Err(format!("{}: reader says torn = {:?}, the bytes {torn}", path.display(), read.torn));
            }
            read.events
        }
        // Killed before its first event was complete: nothing to read, and
        // the reader must say why rather than show "0 events".
        Err(TraceError::Empty { torn: t, .. }) if t.is_some() == torn => Vec::new(),
        Err(e) => return Err(e.to_string()),
    };
    Ok(TraceRead { events, torn })
}

/// The number of complete lines written so far.
pub fn lines_written(path: &Path) -> usize {
    std::fs::read(path).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
}

/// A process as /proc shows it: enough to know it again (pid reuse) and
/// to know it is dead (gone, or a zombie nobody reaped yet).
#[derive(Clone, Debug, PartialEq)]
pub struct Proc {
    pub pid: i32,
    pub comm: String,
    pub start: u64,
}

fn stat(pid: i32) -> Option<(String, char, i32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text[open + 1..close].to_string();
    let rest: Vec<&str> = text[close + 2..].split_whitespace().collect();
    // After the name: state, ppid, ... starttime is field 22 of the line.
    let state = rest.first()?.chars().next()?;
    let ppid = rest.get(1)?.parse().ok()?;
    let start = rest.get(19)?.parse().ok()?;
    Some((comm, state, ppid, start))
}

/// Every living descendant of `root` (not `root` itself).
pub fn descendants(root: i32) -> Vec<Proc> {
    let mut children: BTreeMap<i32, Vec<Proc>> = BTreeMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if let Some((comm, state, ppid, start)) = stat(pid)
            && state != 'Z'
        {
            children.entry(ppid).or_default().push(Proc { pid, comm, start });
        }
    }
    let mut out = Vec::new();
    let mut todo = vec![root];
    while let Some(p) = todo.pop() {
        for c in children.get(&p).into_iter().flatten() {
            todo.push(c.pid);
            out.push(c.clone());
        }
    }
    out
}

pub fn alive(p: &Proc) -> bool {
    matches!(stat(p.pid), Some((_, state, _, start)) if state != 'Z' && start == p.start)
}

/// Polls (bounded) until `cond` holds; false at the deadline.
pub fn poll(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits (bounded) until every one of `procs` is dead; the ones still
/// alive at the deadline.
pub fn still_alive(procs: &[Proc]) -> Vec<Proc> {
    poll(Duration::from_secs(10), || procs.iter().all(|p| !alive(p)));
    procs.iter().filter(|p| alive(p)).cloned().collect()
}

/// SIGKILL to processes this test started or that they started (what a
/// test must clean up when it shows something survived).
pub fn reap(procs: &[Proc]) {
    for p in procs.iter().filter(|p| alive(p)) {
        // SAFETY: kill(2) on a pid we just saw alive with this start time.
        unsafe {
            libc::kill(p.pid, libc::SIGKILL);
        }
    }
}

pub fn signal(pid: i32, sig: i32) {
    // SAFETY: kill(2) on a process this test started.
    let rc = unsafe { libc::kill(pid, sig) };
    assert_eq!(rc, 0, "kill({pid}, {sig}): {}", std::io::Error::last_os_error());
}

/// The workbench (or any subcommand) under `sh -c` in a 160×48 pty; the
/// shell prints `EXIT=` and the terminal's settings after it.
pub struct Pty {
    pub bytes: Receiver<Vec<u8>>,
    pub raw: Vec<u8>,
    pub parser: vt100::Parser,
    pub child: Box<dyn portable_pty::Child + Send + Sync>,
    /// Keeps the terminal open while the program runs.
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    pub fn spawn(dir: &Path, args: &str) -> Pty {
        let pty =
            native_pty_system().openpty(PtySize { rows: 48, cols: 160, pixel_width: 0, pixel_height: 0 }).unwrap();
        let script = format!("{} {args}; echo EXIT=$?; stty -a", env!("CARGO_BIN_EXE_switchyard"));
        let mut cmd = CommandBuilder::new("sh");
        cmd.args(["-c", &script]);
        cmd.env("TERM", "xterm-256color");
        cmd.env_remove("SWITCHYARD_DATA_DIR");
        cmd.cwd(dir);
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Pty { bytes: rx, raw: Vec::new(), parser: vt100::Parser::new(48, 160, 0), child, _master: pty.master }
    }

    /// The switchyard process under the shell, once it has started.
    pub fn switchyard_pid(&mut self) -> i32 {
        let sh = self.child.process_id().unwrap() as i32;
        let mut found = None;
        let ok = poll(PATIENCE, || {
            found = descendants(sh).into_iter().find(|p| p.comm == "switchyard").map(|p| p.pid);
            found.is_some()
        });
        assert!(ok, "switchyard never started under the pty");
        found.unwrap()
    }

    /// Reads output until `pred` holds for the screen.
    pub fn wait(&mut self, what: &str, pred: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if pred(&self.parser.screen().contents()) {
                return;
            }
            match self.bytes.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(b) => {
                    self.parser.process(&b);
                    self.raw.extend_from_slice(&b);
                }
                Err(_) => panic!("waited for {what}; the screen shows:\n{}", self.parser.screen().contents()),
            }
        }
    }

    /// Reads everything until the shell closes the terminal, then reaps it.
    pub fn finish(&mut self) -> String {
        let deadline = Instant::now() + PATIENCE;
        while let Ok(b) = self.bytes.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            self.parser.process(&b);
            self.raw.extend_from_slice(&b);
        }
        self.child.wait().unwrap();
        String::from_utf8_lossy(&self.raw).to_string()
    }
}
