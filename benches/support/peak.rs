//! Each bench's peak resident memory, printed beside criterion's time: a
//! bench that times well but takes the machine's memory should say so.
//!
//! Linux keeps the process's peak (VmHWM in /proc/self/status) and resets
//! it to the current size when "5" is written to /proc/self/clear_refs, so
//! the peak of one bench is read without a thread sampling the RSS.
//! Elsewhere nothing is printed.

use std::sync::atomic::{AtomicBool, Ordering};

use criterion::Bencher;

static RAN: AtomicBool = AtomicBool::new(false);

/// Wraps a bench's routine: the first call (criterion calls it only for a
/// bench its filter selects) resets the peak and marks the bench as run.
#[allow(dead_code)]
pub fn tracked(mut routine: impl FnMut(&mut Bencher<'_>)) -> impl FnMut(&mut Bencher<'_>) {
    move |b: &mut Bencher<'_>| {
        start();
        routine(b)
    }
}

/// [`tracked`] for a bench with an input (`bench_with_input`).
#[allow(dead_code)]
pub fn tracked_input<I: ?Sized>(mut routine: impl FnMut(&mut Bencher<'_>, &I)) -> impl FnMut(&mut Bencher<'_>, &I) {
    move |b: &mut Bencher<'_>, input: &I| {
        start();
        routine(b, input)
    }
}

fn start() {
    if !RAN.swap(true, Ordering::Relaxed) {
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
}

/// After a bench that [`tracked`] wraps: prints its peak RSS if it ran.
#[allow(dead_code)]
pub fn report(name: &str) {
    if RAN.swap(false, Ordering::Relaxed) {
        if let Some(kb) = status_kb("VmHWM:") {
            println!("{name:<40} peak RSS {} MB", kb / 1024);
        }
    }
}

/// A `kB` field of /proc/self/status.
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}
