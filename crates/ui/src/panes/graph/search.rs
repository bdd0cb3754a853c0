//! The name search behind the `/` prompt.

use crate::engine::SessionState;
use crate::graph::{ANY_TOOL, END, START};

/// Tool names containing `query` (case-insensitive): names starting with it
/// first, then the others, each group alphabetical; at most `limit`.
pub fn find_tools(state: &SessionState, query: &str, limit: usize) -> Vec<String> {
    let q = query.trim();
    let mut prefix = std::collections::BTreeSet::new();
    let mut inner = std::collections::BTreeSet::new();
    // Only the matches are collected: a library may hold thousands of tools.
    let mut consider = |n: &str| {
        if n == START || n == END {
            return;
        }
        match match_at(n, q) {
            Some(0) => {
                prefix.insert(n.to_string());
            }
            Some(_) => {
                inner.insert(n.to_string());
            }
            None => {}
        }
    };
    state.tools.iter().for_each(|t| consider(&t.name));
    if let Some(g) = &state.graph {
        // The graph may know tools the library no longer lists.
        g.out
            .keys()
            .chain(g.scores.keys())
            .chain(g.out.get(START).into_iter().flat_map(|r| r.keys()))
            .filter(|n| n.as_str() != ANY_TOOL)
            .for_each(|n| consider(n));
    }
    prefix.into_iter().chain(inner).take(limit).collect()
}

/// Where `needle` first occurs in `hay`, ignoring case.
fn match_at(hay: &str, needle: &str) -> Option<usize> {
    if needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        if n.is_empty() {
            return Some(0);
        }
        h.windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
    } else {
        hay.to_lowercase().find(&needle.to_lowercase())
    }
}
