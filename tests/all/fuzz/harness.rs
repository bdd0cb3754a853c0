//! Runs one parser's fuzz cases and counts what became of them. A panic is
//! caught and counted, then fails the case, so proptest shrinks it to a
//! minimal input; so does a rejection whose error is not clear.

use std::cell::Cell;
use std::fmt::Debug;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::time::Instant;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

pub enum Verdict {
    Accepted,
    Rejected,
}

/// A case's verdict, or why the parser misbehaved on it.
pub type Check = Result<Verdict, String>;

/// Cases per parser: `ci` in a test run, `SWITCHYARD_FUZZ_CASES` in a campaign.
pub fn cases(ci: u32) -> u32 {
    std::env::var("SWITCHYARD_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(ci)
}

/// A rejection is clear when its message says something and, for a file,
/// names the file.
pub fn clear(message: &str, file: Option<&Path>) -> Check {
    if message.trim().is_empty() {
        return Err("rejected with an empty error message".into());
    }
    if let Some(f) = file
        && !message.contains(&f.display().to_string())
    {
        return Err(format!("the error does not name the file {}: {message}", f.display()));
    }
    Ok(Verdict::Rejected)
}

/// A rejection of a line-oriented file is clear when it also names a line
/// of the file (1-based, at most one past the last line).
pub fn clear_at_line(message: &str, file: &Path, line: usize, text: &[u8]) -> Check {
    let lines = text.split(|&b| b == b'\n').count();
    if line == 0 || line > lines + 1 {
        return Err(format!("the error names line {line} of a file of {lines} lines: {message}"));
    }
    clear(message, Some(file))
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// Runs `check` on `cases(ci)` inputs of `strategy`, prints the parser's
/// line of figures (and appends it to `SWITCHYARD_FUZZ_REPORT`, if set),
/// and fails on the first panic or unclear rejection, shrunk.
pub fn fuzz<S>(name: &str, ci: u32, strategy: S, check: impl Fn(S::Value) -> Check)
where
    S: Strategy,
    S::Value: Debug,
{
    let n = cases(ci);
    let mut runner = TestRunner::new(Config { failure_persistence: None, ..Config::with_cases(n) });
    let (accepted, rejected, panics, unclear) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    // Shrinking runs more cases after the first failure; they are not counted.
    let failed = Cell::new(false);
    let bump = |c: &Cell<u64>| {
        if !failed.get() {
            c.set(c.get() + 1);
        }
    };
    let start = Instant::now();
    let result = runner.run(&strategy, |input| match catch_unwind(AssertUnwindSafe(|| check(input))) {
        Ok(Ok(Verdict::Accepted)) => {
            bump(&accepted);
            Ok(())
        }
        Ok(Ok(Verdict::Rejected)) => {
            bump(&rejected);
            Ok(())
        }
        Ok(Err(why)) => {
            bump(&unclear);
            failed.set(true);
            Err(TestCaseError::fail(why))
        }
        Err(p) => {
            bump(&panics);
            failed.set(true);
            Err(TestCaseError::fail(format!("panicked: {}", panic_text(&*p))))
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let total = accepted.get() + rejected.get() + panics.get() + unclear.get();
    let line = format!(
        "fuzz {name:<22} cases {total:>7}  accepted {:>7}  rejected {:>7}  panics {}  unclear {}  {:>8.0} cases/s",
        accepted.get(),
        rejected.get(),
        panics.get(),
        unclear.get(),
        total as f64 / secs.max(1e-9),
    );
    println!("{line}");
    if let Ok(report) = std::env::var("SWITCHYARD_FUZZ_REPORT")
        && let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(report)
    {
        let _ = writeln!(f, "{line}");
    }
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
}
