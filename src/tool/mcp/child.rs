//! The server processes Switchyard starts: each in a process group of its
//! own, killed with its parent even when the parent is killed outright, and
//! listed so a panic or a signal can take them down before the process ends.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::Mutex;

use tokio::process::{Child, Command};

/// Process groups (= the leader's pid) of every running server.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn groups() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills every server process group still running. Safe to call from a
/// panic hook or a signal path: it only sends signals.
pub fn kill_all() {
    let all: Vec<i32> = groups().iter().copied().collect();
    for pgid in all {
        kill_group(pgid);
    }
}

/// SIGKILL to the whole group, so a server's own children (a wrapper's
/// interpreter) go with it.
pub(super) fn kill_group(pgid: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; no
        // memory is touched.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

pub(super) fn forget(pgid: i32) {
    groups().remove(&pgid);
}

/// Starts `command` with piped stdio, in a new process group, with
/// PR_SET_PDEATHSIG so the kernel kills it if Switchyard dies without
/// cleaning up (SIGKILL, abort). Returns the child and its group id.
pub(super) fn spawn(mut command: Command) -> std::io::Result<(Child, i32)> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
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
