//! The graph's nodes and edges as the graph holds them: score or weight,
//! and the history of each (an edge's apart from its weight).

use std::sync::Arc;

use super::series::Series;

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) name: Arc<str>,
    pub(super) score: f64,
    /// Iteration at which the node joined (its score series starts there at 0).
    pub(super) born: u32,
    /// (iteration, score at the end of that iteration), one point per iteration.
    pub(super) history: Series,
}

/// An edge's weight and prior, all the update reads and writes of it.
/// Kept apart from its history ([`EdgeHistory`]) so that the graph's edges
/// stay two to a cache line: an update at 16,000 tools rewrites every one
/// of `start`'s edges, and with the history beside the weight each edge
/// took a line of its own.
#[derive(Debug, Clone)]
pub(super) struct Edge {
    /// w⁰, the static or uniform prior.
    pub(super) prior: f64,
    /// The weight as last written into the edge: for `start`'s edges,
    /// not the weight while the row's law holds (see `row_law.rs`).
    pub(super) held: f64,
}

impl Edge {
    pub(super) fn new(prior: f64) -> Self {
        Edge { prior, held: prior }
    }
}

/// What an edge's weight series needs besides its weight, by edge index
/// (see `row_history.rs`, which keeps them).
#[derive(Debug, Clone)]
pub(super) struct EdgeHistory {
    pub(super) born: u32,
    /// The weight when the edge was created: the first point of its series.
    pub(super) initial: f64,
    /// Number of `start` rescales that happened before the edge existed, so
    /// a `start` edge's series applies only the later ones.
    pub(super) rescales_before: u32,
    /// Whether the edge's history is its row's (see `row_history.rs`);
    /// if not, it is `history`.
    pub(super) follows_row: bool,
    pub(super) history: Series,
}

impl EdgeHistory {
    /// The history of an edge that follows its row: one its row has had
    /// since before any update.
    pub(super) fn new(initial: f64, born: u32) -> Self {
        EdgeHistory { born, initial, rescales_before: 0, follows_row: true, history: Series::default() }
    }
}
