//! The processes Switchyard starts (command tools, MCP servers over stdio):
//! each in a process group of its own, killed with its parent even when the
//! parent is killed outright, and listed so a panic or a signal can take
//! them down, with whatever they started, before the process ends.

use std::collections::BTreeSet;
use std::sync::Mutex;

use tokio::process::{Child, Command};

/// Process groups (= the leader's pid) of every running child.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn groups() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills every child process group still running. Safe to call from a
/// panic hook or a signal path: it only sends signals.
pub fn kill_all() {
    let all: Vec<i32> = groups().iter().copied().collect();
    for pgid in all {
        kill_group(pgid);
    }
}

/// SIGKILL to the whole group, so a child's own children (a wrapper's
/// interpreter, a tool's helper) go with it.
pub(crate) fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no
        // memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

pub(crate) fn forget(pgid: i32) {
    groups().remove(&pgid);
}

/// Starts `command` (its stdio as the caller set it) in a new process
/// group, with PR_SET_PDEATHSIG so the kernel kills it if Switchyard dies
/// without cleaning up (SIGKILL, abort). Returns the child and its group id.
///
/// The kernel sends the death signal when the *thread* that forked exits:
/// callers spawn from the runtime's worker threads (or the main thread),
/// which live as long as the process, never from a blocking-pool thread.
pub fn spawn(mut command: Command) -> std::io::Result<(Child, i32)> {
    command.process_group(0).kill_on_drop(true);
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe system calls (prctl, getppid).
    unsafe {
        command.pre_exec(|| {
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl.
                if libc::getppid() == 1 {
                    return Err(std::io::Error::other("parent exited"));
                }
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok()).unwrap_or(0);
    if pgid > 0 {
        groups().insert(pgid);
    }
    Ok((child, pgid))
}

/// `bytes` as a file to give a child as its stdin, already unlinked. Not a
/// pipe: a child that exits without reading its input would make the write
/// raise SIGPIPE, which ends Switchyard (it keeps SIGPIPE's default, to
/// stop quietly when its own output is cut, as in `| head`).
pub fn stdin_file(bytes: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::{Seek, Write};
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("switchyard-stdin-{}-{n}", std::process::id()));
    let mut file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
    std::fs::remove_file(&path)?;
    file.write_all(bytes)?;
    file.rewind()?;
    Ok(file)
}

/// A child's process group, killed when this is dropped unless released:
/// a call abandoned half way (a timeout, a cancelled task, the runtime
/// shutting down on a signal) takes the tool's own children with it.
///
/// Release it only after the leader was waited for; until then the leader's
/// pid holds the group id, so the kill cannot reach a stranger's group.
#[derive(Debug)]
pub struct Group(i32);

impl Group {
    pub fn new(pgid: i32) -> Self {
        Group(pgid)
    }

    /// SIGKILL to the group now; the leader is still to be waited for.
    pub fn kill(&self) {
        kill_group(self.0);
    }

    /// The leader exited and was reaped: nothing left to kill by this id.
    pub(crate) fn release(mut self) {
        forget(self.0);
        self.0 = 0;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.0 > 0 {
            kill_group(self.0);
            forget(self.0);
        }
    }
}
