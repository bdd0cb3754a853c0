//! Time, injectable: the system clock for real runs, a logical clock that
//! makes traces byte-identical for a seed.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

pub trait Clock: Send + Sync {
    /// Milliseconds since the clock's origin.
    fn now_ms(&self) -> u64;
}

/// Wall time since the engine started.
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    pub fn new() -> Self {
        SystemClock { origin: Instant::now() }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }
}

/// Advances by one tick every time it is read: time is ordered but says
/// nothing of the machine, so the same seed gives the same trace.
#[derive(Default)]
pub struct LogicalClock {
    ticks: AtomicU64,
}

impl Clock for LogicalClock {
    fn now_ms(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::Relaxed)
    }
}
