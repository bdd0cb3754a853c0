//! The `command` executor: a subprocess started without a shell, given the
//! JSON arguments on stdin, answering JSON on stdout.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use super::child::Group;
use super::{ToolError, ToolErrorKind, ToolResult};

/// How much of stderr is kept (its end, where the error usually is).
const STDERR_KEEP: usize = 4096;
const STDERR_QUOTE: usize = 400;
const STDOUT_QUOTE: usize = 200;

fn err(kind: ToolErrorKind, msg: impl Into<String>) -> ToolError {
    ToolError::new(kind, msg)
}

/// Starts the tool in a process group of its own (see [`super::child`]):
/// the returned group kills it and whatever it started if the call is
/// abandoned before the tool was waited for.
/// Starts the tool: with `input`, given it as stdin and its output piped
/// back; without, all three null.
fn spawn(tool: &str, argv: &[String], cwd: Option<&Path>, input: Option<&[u8]>) -> Result<(Child, Group), ToolError> {
    let (program, rest) =
        argv.split_first().ok_or_else(|| err(ToolErrorKind::Failed, format!("'{tool}' has an empty argv")))?;
    let mut cmd = Command::new(program);
    cmd.args(rest);
    let pipe = || if input.is_some() { Stdio::piped() } else { Stdio::null() };
    let stdin = match input {
        Some(bytes) => Stdio::from(
            super::child::stdin_file(bytes)
                .map_err(|e| err(ToolErrorKind::Failed, format!("could not write the input of '{tool}': {e}")))?,
        ),
        None => Stdio::null(),
    };
    cmd.stdin(stdin).stdout(pipe()).stderr(pipe());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let (child, pgid) = super::child::spawn(cmd)
        .map_err(|e| err(ToolErrorKind::Failed, format!("could not start '{program}': {e}")))?;
    Ok((child, Group::new(pgid)))
}

/// Reads a stream to its end. Keeps the first `keep` bytes (or the last,
/// with `tail`) but drains it all, so the child never blocks on a full pipe.
/// Returns the bytes kept and whether any were dropped.
async fn drain(reader: Option<impl AsyncRead + Unpin>, keep: usize, tail: bool) -> (Vec<u8>, bool) {
    let Some(mut reader) = reader else {
        return (Vec::new(), false);
    };
    // `keep` of the head: past it the answer is lost anyway, so stop reading
    // at once; the tool then meets a closed pipe instead of filling memory.
    let mut kept = Vec::new();
    let mut dropped = false;
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match reader.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if tail {
            kept.extend_from_slice(&chunk[..n]);
            if kept.len() > keep {
                kept.drain(..kept.len() - keep);
                dropped = true;
            }
        } else {
            let room = keep.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..n.min(room)]);
            if n > room {
                return (kept, true);
            }
        }
    }
    (kept, dropped)
}

fn quote_start(bytes: &[u8], max: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn quote_end(bytes: &[u8], max: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let (i, _) = s.char_indices().nth(n - max).unwrap_or((0, ' '));
    format!("...{}", &s[i..])
}

#[cfg(unix)]
fn signal_of(status: &ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: &ExitStatus) -> Option<i32> {
    None
}

/// Runs the tool once. On timeout the process is killed and reaped before
/// this returns.
pub(crate) async fn run(
    tool: &str,
    argv: &[String],
    cwd: Option<&Path>,
    args: &Value,
    timeout: Duration,
    output_cap: u64,
) -> ToolResult {
    let mut input = serde_json::to_vec(args).unwrap_or_else(|_| b"{}".to_vec());
    input.push(b'\n');
    let (mut child, group) = spawn(tool, argv, cwd, Some(&input))?;
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();

    let too_much = || {
        err(
            ToolErrorKind::BadOutput,
            format!(
                "'{tool}' printed more than {} on stdout (tool_output_mb) and was stopped",
                super::limits::megabytes(output_cap)
            ),
        )
    };
    let overflowed = std::sync::atomic::AtomicBool::new(false);
    // Reading stdout and stderr run together: a tool that fills one pipe
    // while we wait on the other would otherwise deadlock. Its input is a
    // file, read when it likes, or never.
    let exchange = async {
        let out = async {
            let out = drain(stdout, usize::try_from(output_cap).unwrap_or(usize::MAX), false).await;
            overflowed.store(out.1, std::sync::atomic::Ordering::Relaxed);
            out
        };
        let (out, errs) = tokio::join!(out, drain(stderr, STDERR_KEEP, true));
        let status = child.wait().await;
        (out, errs, status)
    };
    let ((out, out_cut), (errs, _), status) = match tokio::time::timeout(timeout, exchange).await {
        Ok(r) => {
            group.release();
            r
        }
        Err(_) => {
            drop(group);
            let _ = child.kill().await;
            // A tool that ignored the pipe we closed on it at the cap.
            if overflowed.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(too_much());
            }
            return Err(err(
                ToolErrorKind::Timeout,
                format!("'{tool}' timed out after {} ms and was killed", timeout.as_millis()),
            ));
        }
    };
    let status =
        status.map_err(|e| err(ToolErrorKind::Crashed, format!("'{tool}': lost track of the process: {e}")))?;
    // Before the exit status: the pipe closed at the cap is what killed it.
    if out_cut {
        return Err(too_much());
    }

    if !status.success() {
        let stderr = quote_end(&errs, STDERR_QUOTE);
        let stderr = if stderr.is_empty() { "(nothing on stderr)".to_string() } else { stderr };
        return Err(match (status.code(), signal_of(&status)) {
            (Some(code), _) => err(ToolErrorKind::Failed, format!("'{tool}' exited with code {code}: {stderr}")),
            (None, Some(sig)) => err(ToolErrorKind::Crashed, format!("'{tool}' was killed by signal {sig}: {stderr}")),
            (None, None) => err(ToolErrorKind::Crashed, format!("'{tool}' died ({status}): {stderr}")),
        });
    }
    read_stdout(tool, &out)
}

/// The answer in what a tool that exited cleanly printed on stdout: JSON,
/// else a `BadOutput` error quoting its start. Public so it can be fuzzed
/// without a process.
pub fn read_stdout(tool: &str, out: &[u8]) -> ToolResult {
    if out.iter().all(u8::is_ascii_whitespace) {
        return Err(err(ToolErrorKind::BadOutput, format!("'{tool}' printed nothing on stdout (expected JSON)")));
    }
    serde_json::from_slice(out).map_err(|e| {
        err(ToolErrorKind::BadOutput, format!("'{tool}' did not print JSON ({e}): {}", quote_start(out, STDOUT_QUOTE)))
    })
}

/// An injected crash: the process really starts and is killed at once, so
/// the tool is seen to die as a real crash would.
pub(crate) async fn crash(tool: &str, argv: &[String], cwd: Option<&Path>, timeout: Duration) -> ToolResult {
    let (mut child, group) = spawn(tool, argv, cwd, None)?;
    let pid = child.id().map_or_else(String::new, |p| format!(" (pid {p})"));
    drop(group);
    let how = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => match signal_of(&status) {
            Some(sig) => format!("killed by signal {sig}"),
            None => format!("stopped ({status})"),
        },
        _ => "killed".to_string(),
    };
    Err(err(ToolErrorKind::Crashed, format!("'{tool}'{pid} crashed: {how} (injected)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_keep_the_right_end() {
        assert_eq!(quote_start(b"abcdef", 3), "abc...");
        assert_eq!(quote_end(b"abcdef", 3), "...def");
        assert_eq!(quote_end(b" ab \n", 3), "ab");
    }

    #[tokio::test]
    async fn drain_keeps_head_or_tail() {
        let data: &[u8] = b"0123456789";
        assert_eq!(drain(Some(data), 4, false).await, (b"0123".to_vec(), true));
        assert_eq!(drain(Some(data), 4, true).await, (b"6789".to_vec(), true));
        assert_eq!(drain(Some(data), 40, true).await, (data.to_vec(), false));
    }
}
