//! What a run has used so far: tokens, cost, tool calls.

use crate::model::Usage;

#[derive(Clone, Copy, Debug, Default)]
pub struct RunTally {
    pub usage: Usage,
    pub cost: f64,
    pub tool_calls: u32,
}

/// A tool's latency, smoothed, for BTP's time term: recent calls weigh
/// more, so a tool that turns slow soon costs more.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Latency {
    pub calls: u64,
    /// Exponentially weighted mean, in milliseconds.
    pub mean_ms: f64,
}

impl Latency {
    const WEIGHT: f64 = 0.2;

    pub fn record(&mut self, ms: u64) {
        self.mean_ms =
            if self.calls == 0 { ms as f64 } else { self.mean_ms + Self::WEIGHT * (ms as f64 - self.mean_ms) };
        self.calls += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::Latency;

    #[test]
    fn latency_starts_at_the_first_call_and_follows_recent_ones() {
        let mut l = Latency::default();
        l.record(100);
        assert_eq!((l.calls, l.mean_ms), (1, 100.0));
        l.record(200);
        assert!((l.mean_ms - 120.0).abs() < 1e-9);
        // A tool that turns slow costs more within a few calls, whatever its history.
        for _ in 0..1000 {
            l.record(100);
        }
        for _ in 0..15 {
            l.record(1000);
        }
        assert!(l.mean_ms > 900.0, "{}", l.mean_ms);
    }
}
