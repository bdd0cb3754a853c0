//! Running the `switchyard` binary from a test, and finding the benchmark
//! data of `../shared/data`: one copy for every file that needs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The binary, without the caller's data directory.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_switchyard"));
    c.env_remove("SWITCHYARD_DATA_DIR");
    c
}

/// Runs it; whatever the exit, it must not have panicked.
pub fn run(args: &[&str]) -> Output {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "it panicked: {err}");
    out
}

/// Runs it to success; its stdout.
pub fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs it to failure; its stderr.
pub fn fails(args: &[&str]) -> String {
    let out = run(args);
    assert!(!out.status.success(), "{args:?} should have failed");
    String::from_utf8_lossy(&out.stderr).to_string()
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A file or folder of `../shared/data`, or None with the reason printed
/// (a user's clone has no such folder: the test then skips).
pub fn shared(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(rel);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("skipped: {} not found", p.display());
        None
    }
}

/// A JSON Lines file's values.
pub fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}
