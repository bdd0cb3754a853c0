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
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// A weight change smaller than this is not reported.
pub(super) const CHANGE_EPSILON: f64 = 1e-12;

/// One edge whose weight changed in an update. The names are the graph's
/// own (`Arc<str>`, serialised as strings): `start`'s row lists thousands
/// of edges per update, and a cloned `String` per name was most of its cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightChange {
    pub from: Arc<str>,
    pub to: Arc<str>,
    pub old: f64,
    pub new: f64,
}

/// A row whose edges all weigh `rest` now, those listed in the update's
/// `weights` aside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowChange {
    pub from: Arc<str>,
    pub rest: f64,
}

/// What one update changed (it goes into the `GraphUpdated` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphUpdate {
    /// The graph's iteration after the update.
    pub iteration: u32,
    /// Nodes whose score changed, with the new score, sorted by name.
    pub scores: Vec<(Arc<str>, f64)>,
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
        if let Ok(i) = self.weights.binary_search_by(|c| (&*c.from, &*c.to).cmp(&(from, to))) {
            return self.weights[i].new;
        }
        match self.rows.binary_search_by(|r| (*r.from).cmp(from)) {
            Ok(i) => self.rows[i].rest,
            Err(_) => before,
        }
    }
}

/// Encodes recomputed rows into an update, keeping its count map between
/// rows and updates: `start`'s row is as long as the library and is
/// encoded after every task.
#[derive(Default)]
pub(super) struct RowEncoder {
    counts: HashMap<u64, usize, BuildHasherDefault<BitsHasher>>,
}

impl RowEncoder {
    /// Encodes a row from its edges as (edge, old, new): the changed edges,
    /// or the commonest new weight and the edges that differ from it when
    /// that lists fewer (the row entry counts as one). Appends the edges to
    /// list, with their old weight, to `listed`; returns the shared weight
    /// if the row is written that way.
    pub(super) fn encode<E: Copy>(&mut self, edges: &[(E, f64, f64)], listed: &mut Vec<(E, f64)>) -> Option<f64> {
        let is_changed = |&(_, old, new): &(E, f64, f64)| (new - old).abs() > CHANGE_EPSILON;
        // The middle edge's new weight is a guess at the majority, counted
        // in the pass that counts the changes: in `start`'s row most edges
        // share one weight, and then the vote's two passes are not needed.
        let guess = edges.get(edges.len() / 2).map_or(0, |e| e.2.to_bits());
        let (mut n_changed, mut n_guess) = (0, 0);
        for e in edges {
            n_changed += usize::from(is_changed(e));
            n_guess += usize::from(e.2.to_bits() == guess);
        }
        // With fewer than three changes no shared weight can list fewer.
        if n_changed >= 3 {
            let found = if n_guess * 2 > edges.len() {
                Some((guess, n_guess))
            } else {
                majority(edges.iter().map(|e| e.2.to_bits()))
            };
            let (bits, count) = match found {
                Some(found) => found,
                None => self.commonest(edges),
            };
            if edges.len() - count + 1 < n_changed {
                listed.extend(edges.iter().filter(|(_, _, new)| new.to_bits() != bits).map(|&(e, old, _)| (e, old)));
                return Some(f64::from_bits(bits));
            }
        }
        listed.extend(edges.iter().filter(|e| is_changed(e)).map(|&(e, old, _)| (e, old)));
        None
    }

    /// The commonest new weight's bits and count; among equally common ones
    /// the smallest bits, so the choice does not depend on the map's order.
    fn commonest<E>(&mut self, edges: &[(E, f64, f64)]) -> (u64, usize) {
        self.counts.clear();
        for (_, _, new) in edges {
            *self.counts.entry(new.to_bits()).or_default() += 1;
        }
        self.counts.iter().map(|(&b, &c)| (b, c)).max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).unwrap_or((0, 0))
    }
}

/// The value held by more than half of `values` and its count, if one is
/// (Boyer and Moore's vote, then a count): then it is the commonest, with
/// no tie, found without hashing. In `start`'s row the tools no one has
/// told apart are most of the row, so this is the usual case.
pub(super) fn majority(values: impl Iterator<Item = u64> + Clone) -> Option<(u64, usize)> {
    let (mut candidate, mut lead, mut len) = (0, 0usize, 0usize);
    for v in values.clone() {
        len += 1;
        if lead == 0 {
            candidate = v;
            lead = 1;
        } else if v == candidate {
            lead += 1;
        } else {
            lead -= 1;
        }
    }
    let count = values.filter(|&v| v == candidate).count();
    (count * 2 > len).then_some((candidate, count))
}

/// A hasher for f64 bit patterns: the map is internal and its keys are not
/// chosen by anyone, so SipHash's protection buys nothing here but costs
/// most of an update's encoding. MurmurHash3's finaliser spreads the high
/// bits (exponent, leading mantissa) into the low ones the table indexes by.
#[derive(Default)]
pub(super) struct BitsHasher(u64);

impl Hasher for BitsHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let mut h = x ^ (x >> 33);
        h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        self.0 = h ^ (h >> 33);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The encoding as first written: every row counted in a map.
    fn by_counting(edges: &[(usize, f64, f64)]) -> (Option<f64>, Vec<(usize, f64)>) {
        let mut listed = Vec::new();
        let changed: Vec<_> = edges.iter().filter(|(_, old, new)| (new - old).abs() > CHANGE_EPSILON).collect();
        if changed.len() >= 3 {
            let mut counts: HashMap<u64, usize> = HashMap::new();
            for (_, _, new) in edges {
                *counts.entry(new.to_bits()).or_default() += 1;
            }
            let (bits, count) = counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).unwrap_or((0, 0));
            if edges.len() - count + 1 < changed.len() {
                listed.extend(edges.iter().filter(|e| e.2.to_bits() != bits).map(|&(e, old, _)| (e, old)));
                return (Some(f64::from_bits(bits)), listed);
            }
        }
        listed.extend(changed.into_iter().map(|&(e, old, _)| (e, old)));
        (None, listed)
    }

    proptest! {
        /// With a weight most of the row shares or without one, ties among
        /// the commonest included, the encoder chooses as a full count does.
        #[test]
        fn the_encoding_is_that_of_a_full_count(
            // Half of the new weights the same one: a majority in most rows.
            row in prop::collection::vec((0u8..4, prop_oneof![Just(2u8), 0u8..5]), 0..60),
        ) {
            let values = [0.0, 0.125, 0.25, 0.5, 1.0];
            let edges: Vec<(usize, f64, f64)> =
                row.iter().enumerate().map(|(i, &(o, n))| (i, values[o as usize], values[n as usize])).collect();
            let mut listed = Vec::new();
            let rest = RowEncoder::default().encode(&edges, &mut listed);
            prop_assert_eq!((rest, listed), by_counting(&edges));
        }
    }

    #[test]
    fn a_middle_weight_held_by_half_the_row_is_not_taken_for_its_majority() {
        // Two weights tie; the middle edge holds the one with the larger
        // bits, which a full count does not choose.
        let edges: Vec<(usize, f64, f64)> =
            [0.25, 0.25, 0.5, 0.5].iter().enumerate().map(|(i, &new)| (i, 0.0, new)).collect();
        let mut listed = Vec::new();
        let rest = RowEncoder::default().encode(&edges, &mut listed);
        assert_eq!(rest, Some(0.25));
        assert_eq!((rest, listed), by_counting(&edges));
    }

    #[test]
    fn a_majority_is_found_only_where_there_is_one() {
        assert_eq!(majority([7, 1, 7, 2, 7].into_iter()), Some((7, 3)));
        assert_eq!(majority([7, 1, 7, 1].into_iter()), None, "half is no majority");
        assert_eq!(majority([1, 2, 3].into_iter()), None);
        assert_eq!(majority(std::iter::empty()), None);
    }
}
