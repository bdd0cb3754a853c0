//! What one update of the graph changed, as the `GraphUpdated` and
//! `ScoreEdited` events carry it, so a reader that folds the events from the
//! first snapshot reaches the graph's weights.
//!
//! A score change rewrites every row that leads to the scored tool, and
//! `start` leads to every tool: listing each changed edge would make every
//! update as long as the library. Yet most of `start`'s edges go to tools no
//! trajectory and no evaluator has told apart (prior and score alike), so
//! they share one new weight. A row where that holds is written as that
//! weight, its `rest`, plus the edges that differ from it: the size of an
//! update follows how many tools have been told apart, not the library's.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// A weight change smaller than this is not reported.
pub(super) const CHANGE_EPSILON: f64 = 1e-12;

/// One edge whose weight changed in an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightChange {
    pub from: String,
    pub to: String,
    pub old: f64,
    pub new: f64,
}

/// A row whose edges all weigh `rest` now, those listed in the update's
/// `weights` aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowChange {
    pub from: String,
    pub rest: f64,
}

/// What one update changed (it goes into the `GraphUpdated` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphUpdate {
    /// The graph's iteration after the update.
    pub iteration: u32,
    /// Nodes whose score changed, with the new score, sorted by name.
    pub scores: Vec<(String, f64)>,
    /// Edges whose weight changed by more than 1e-12, and in a row of
    /// `rows` every edge that does not weigh its `rest` (changed or not),
    /// sorted by (from, to).
    pub weights: Vec<WeightChange>,
    /// Rows written as one shared weight (see the module's comment), sorted
    /// by `from`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowChange>,
}

impl GraphUpdate {
    /// The weight of the edge `from -> to` after the update, given the one
    /// it had before: listed, its row's `rest`, or unchanged.
    pub fn weight_after(&self, from: &str, to: &str, before: f64) -> f64 {
        if let Ok(i) = self.weights.binary_search_by(|c| (c.from.as_str(), c.to.as_str()).cmp(&(from, to))) {
            return self.weights[i].new;
        }
        match self.rows.binary_search_by(|r| r.from.as_str().cmp(from)) {
            Ok(i) => self.rows[i].rest,
            Err(_) => before,
        }
    }
}

/// How one recomputed row goes into an update: the edges to list with their
/// old weight, and the weight every other edge of the row now has, if the
/// row is written that way.
pub(super) struct RowEncoding<E> {
    pub(super) listed: Vec<(E, f64)>,
    pub(super) rest: Option<f64>,
}

/// Encodes a row from its edges as (edge, old, new): the changed edges, or
/// the commonest new weight and the edges that differ from it when that
/// lists fewer (the row entry counts as one).
pub(super) fn encode_row<E: Copy>(edges: &[(E, f64, f64)]) -> RowEncoding<E> {
    let changed = || edges.iter().filter(|(_, old, new)| (new - old).abs() > CHANGE_EPSILON);
    let n_changed = changed().count();
    // With fewer than three changes no shared weight can list fewer.
    if n_changed >= 3 {
        let mut counts: HashMap<u64, usize> = HashMap::new();
        for (_, _, new) in edges {
            *counts.entry(new.to_bits()).or_default() += 1;
        }
        // The commonest weight; among equally common ones the smallest bits,
        // so the choice does not depend on the map's order.
        let (bits, count) = counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).unwrap_or((0, 0));
        if edges.len() - count + 1 < n_changed {
            let listed =
                edges.iter().filter(|(_, _, new)| new.to_bits() != bits).map(|&(e, old, _)| (e, old)).collect();
            return RowEncoding { listed, rest: Some(f64::from_bits(bits)) };
        }
    }
    RowEncoding { listed: changed().map(|&(e, old, _)| (e, old)).collect(), rest: None }
}
