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
