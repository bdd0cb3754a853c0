//! What the session spent, as the fold keeps it: per model role (calls,
//! tokens, cost, latency, streaming) and per tool.

use crate::model::Usage;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Account {
    pub calls: u64,
    pub usage: Usage,
    pub cost: f64,
    pub latency_ms: u64,
    /// Replies that streamed, and over them: the time to their first
    /// token, the time from it to the end, and their tokens.
    pub streamed: u64,
    pub first_token_ms: u64,
    pub streaming_ms: u64,
    pub streamed_tokens: u64,
    /// Replies the server cut at their token cap.
    pub capped: u64,
}

impl Account {
    /// The mean time to a streamed reply's first token.
    pub fn time_to_first_token_ms(&self) -> Option<u64> {
        (self.streamed > 0).then(|| self.first_token_ms / self.streamed)
    }

    /// Tokens a second once a streamed reply has begun.
    pub fn tokens_per_second(&self) -> Option<f64> {
        (self.streaming_ms > 0).then(|| self.streamed_tokens as f64 * 1000.0 / self.streaming_ms as f64)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolSpend {
    pub calls: u64,
    pub errors: u64,
    pub cost: f64,
}
