//! The worker's null filtering (docs/src/papers/rewoo.md): a result that is an
//! error or says nothing was found reaches the solver as `null`, so it costs no
//! tokens downstream; what that saved is counted.

use crate::model::tokens;
use crate::tool::ToolResult;

/// What the solver sees in place of a filtered result.
const NULL: &str = "null";

/// Whether a result must reach the solver as `null`: the engine marks each
/// lane's result with it as the call ends.
pub use crate::engine::is_filtered;

/// Tokens one filtered result saved: the BPE tokens of what it would have
/// shown (the error as displayed, or the nothing-found JSON) minus "null".
pub fn saved_tokens(result: &ToolResult) -> u64 {
    let shown = match result {
        Ok(v) => v.to_string(),
        Err(e) => e.to_string(),
    };
    // An empty error message is shorter than "null": that result saved nothing.
    tokens::count(&shown).saturating_sub(tokens::count(NULL))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ToolError, ToolErrorKind};
    use serde_json::json;

    #[test]
    fn answers_pass_and_failures_are_filtered() {
        assert!(!is_filtered(&Ok(json!({"city": "Paris"}))));
        for r in [Ok(json!("Nothing Found")), Ok(json!([])), Err(ToolError::new(ToolErrorKind::Failed, "boom"))] {
            assert!(is_filtered(&r), "{r:?}");
        }
    }

    #[test]
    fn a_filtered_result_saves_what_it_would_have_shown() {
        let err = Err(ToolError::new(ToolErrorKind::Failed, "the service answered HTTP 503 Service Unavailable"));
        let shown = "Failed: the service answered HTTP 503 Service Unavailable";
        assert_eq!(saved_tokens(&err), tokens::count(shown) - tokens::count("null"));
        let empty = Err(ToolError::new(ToolErrorKind::Failed, ""));
        assert_eq!(saved_tokens(&empty), tokens::count("Failed: ") - tokens::count("null"));
    }
}
