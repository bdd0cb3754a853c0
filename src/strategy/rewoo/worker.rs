//! The ReWOO worker's step runner (DESIGN §3.5): the calls of one plan step
//! run together, each under its own timeout, and failures are filtered to
//! `null` so they cost the solver no tokens.
//!
//! The calls are joined in the caller's task rather than spawned: they are
//! I/O-bound (subprocesses, HTTP, sleeps), so polling them together gives the
//! concurrency that matters, and a borrowed clock and a non-`'static` call
//! function stay usable.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use crate::engine::Clock;
use crate::model::tokens;
use crate::tool::exec::is_nothing_found;
use crate::tool::{ToolError, ToolErrorKind, ToolResult};

/// What the solver sees in place of a filtered lane.
const NULL: &str = "null";

/// One call of a step, as the worker runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct StepCall {
    pub lane: usize,
    pub tool: String,
    pub args: Value,
}

/// What a lane ended with. `filtered` = an error or a nothing-found result,
/// replaced by null before any model sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct LaneResult {
    pub lane: usize,
    pub tool: String,
    pub result: ToolResult,
    /// On the clock passed to [`run_step`].
    pub started: u64,
    pub finished: u64,
    pub filtered: bool,
}

/// Whether a result must reach the solver as `null`.
fn is_filtered(result: &ToolResult) -> bool {
    match result {
        Ok(v) => is_nothing_found(v),
        Err(_) => true,
    }
}

/// Runs all calls of one step concurrently, each under `timeout`; one slow
/// or failing call never blocks or fails its siblings. Results come back in
/// lane order, whatever order the lanes finished in.
pub async fn run_step<F, Fut>(calls: Vec<StepCall>, timeout: Duration, clock: &dyn Clock, call: F) -> Vec<LaneResult>
where
    F: Fn(StepCall) -> Fut,
    Fut: Future<Output = ToolResult>,
{
    let call = &call;
    let lanes = calls.into_iter().map(|c| async move {
        let (lane, tool) = (c.lane, c.tool.clone());
        // Read the clock on the lane's first poll, not when the future is
        // built, so `started` is when the call really began.
        let started = clock.now_ms();
        let result = tokio::time::timeout(timeout, call(c)).await.unwrap_or_else(|_| {
            Err(ToolError::new(
                ToolErrorKind::Timeout,
                format!("'{tool}' timed out after {} ms in the worker", timeout.as_millis()),
            ))
        });
        let finished = clock.now_ms();
        let filtered = is_filtered(&result);
        LaneResult { lane, tool, result, started, finished, filtered }
    });
    let mut results = futures::future::join_all(lanes).await;
    // Callers may hand the calls in any order; the evidence is by lane.
    results.sort_by_key(|r| r.lane);
    results
}

/// The evidence text a solver sees for a lane: the JSON of the result, or
/// "null" when filtered.
pub fn evidence_text(r: &LaneResult) -> String {
    match &r.result {
        Ok(v) if !r.filtered => v.to_string(),
        _ => NULL.to_string(),
    }
}

/// What a filtered lane would have shown the solver: the error as displayed
/// (kind and message), or the nothing-found JSON.
fn unfiltered_text(r: &LaneResult) -> String {
    match &r.result {
        Ok(v) => v.to_string(),
        Err(e) => e.to_string(),
    }
}

/// Tokens the filtering saved: the BPE tokens of what the filtered lanes
/// would have shown minus those of "null".
pub fn tokens_saved(results: &[LaneResult]) -> u64 {
    let null = tokens::count(NULL);
    results
        .iter()
        .filter(|r| r.filtered)
        // An empty error message is shorter than "null": that lane saved nothing.
        .map(|r| tokens::count(&unfiltered_text(r)).saturating_sub(null))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lane(result: ToolResult) -> LaneResult {
        let filtered = is_filtered(&result);
        LaneResult { lane: 0, tool: "t".into(), result, started: 0, finished: 1, filtered }
    }

    #[test]
    fn answers_pass_through_and_failures_become_null() {
        let ok = lane(Ok(json!({"city": "Paris"})));
        assert!(!ok.filtered);
        assert_eq!(evidence_text(&ok), r#"{"city":"Paris"}"#);
        for r in [Ok(json!("Nothing Found")), Ok(json!([])), Err(ToolError::new(ToolErrorKind::Failed, "boom"))] {
            let l = lane(r);
            assert!(l.filtered, "{l:?}");
            assert_eq!(evidence_text(&l), "null");
        }
    }

    #[test]
    fn unfiltered_lanes_save_nothing() {
        assert_eq!(tokens_saved(&[lane(Ok(json!("a long and useful answer about Paris")))]), 0);
        // An error is counted as displayed, kind included.
        let empty = lane(Err(ToolError::new(ToolErrorKind::Failed, "")));
        assert_eq!(tokens_saved(&[empty]), tokens::count("Failed: ") - tokens::count("null"));
    }
}
