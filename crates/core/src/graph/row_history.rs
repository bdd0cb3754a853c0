//! The weight histories of a row's edges, kept once for the row while its
//! edges move together.
//!
//! An update rewrites every row that leads to a scored tool, and `start`
//! leads to every tool: at 16,000 tools, a point per edge per update was a
//! fifth of the update's time and a heap block per edge. Yet most of
//! `start`'s edges take the same new weight (the update writes them as the
//! row's `rest`, see `update.rs`), so their series are the same. An edge
//! *follows* its row while that holds: its history is the row's series.
//! The first time an update gives it a weight of its own (it is listed),
//! it leaves the row with a copy of the row's series and keeps its own
//! from then on, taking the row's point whenever an update writes the row
//! as one shared weight and does not list it.
//!
//! The rule for a point is that of a series kept per edge: a listed edge
//! gets one when its weight moved by more than 1e-12, and an edge the
//! update did not list in a shared row gets the row's point (as the
//! workbench's history does, `engine/fold/graph_history.rs`).

use petgraph::graph::{EdgeIndex, NodeIndex};
use rustc_hash::FxHashMap;

use super::elements::EdgeHistory;
use super::row_law::Weights;
use super::series::Series;
use super::update::{CHANGE_EPSILON, majority};

/// Every edge's history, by edge index, and per row that has one the
/// series its following edges share and its edges that keep their own.
#[derive(Debug, Clone, Default)]
pub(super) struct RowHistories {
    rows: FxHashMap<NodeIndex, RowHistory>,
    edges: Vec<EdgeHistory>,
}

#[derive(Debug, Clone, Default)]
struct RowHistory {
    series: Series,
    own: Vec<EdgeIndex>,
}

impl RowHistories {
    /// Takes the history of the edge the graph just added as `id`: edges
    /// are only ever added, so their indices are this list's.
    pub(super) fn add_edge(&mut self, id: EdgeIndex, edge: EdgeHistory) {
        debug_assert_eq!(id.index(), self.edges.len(), "edge histories out of step with the graph");
        self.edges.push(edge);
    }

    /// What edge `id`'s series needs besides its weight.
    pub(super) fn edge(&self, id: EdgeIndex) -> &EdgeHistory {
        &self.edges[id.index()]
    }

    /// The history of edge `id`, an edge of row `from`.
    pub(super) fn points(&self, from: NodeIndex, id: EdgeIndex) -> &[(u32, f64)] {
        let edge = &self.edges[id.index()];
        if edge.follows_row { self.row(from) } else { edge.history.points() }
    }

    /// The series shared by row `from`'s following edges.
    pub(super) fn row(&self, from: NodeIndex) -> &[(u32, f64)] {
        self.rows.get(&from).map(|r| r.series.points()).unwrap_or_default()
    }

    /// Sets row `from`'s shared series (as a store read it).
    pub(super) fn set_row(&mut self, from: NodeIndex, points: Vec<(u32, f64)>) {
        self.rows.entry(from).or_default().series = Series::from_points(points);
    }

    /// Notes that `id`, an edge of row `from` that does not follow it, keeps
    /// its own series.
    pub(super) fn adopt(&mut self, from: NodeIndex, id: EdgeIndex) {
        self.rows.entry(from).or_default().own.push(id);
    }

    /// Records an update of row `from` at `iteration`: `listed` is what the
    /// update lists of the row as ((target, edge), old weight), the graph's
    /// edges hold their new weights, and `rest` is the row's shared weight
    /// if the update wrote it as one.
    pub(super) fn record_update(
        &mut self,
        weights: Weights,
        from: NodeIndex,
        iteration: u32,
        listed: &[((NodeIndex, EdgeIndex), f64)],
        rest: Option<f64>,
    ) {
        if listed.is_empty() && rest.is_none() {
            return;
        }
        let row = self.rows.entry(from).or_default();
        for &((_, id), old) in listed {
            let edge = &mut self.edges[id.index()];
            row.detach(id, edge);
            let weight = weights.of(id);
            if (weight - old).abs() > CHANGE_EPSILON {
                edge.history.push(iteration, weight);
            }
        }
        if let Some(rest) = rest {
            // An own edge at `rest` was not listed: it takes the row's point.
            for &id in &row.own {
                if weights.of(id).to_bits() == rest.to_bits() {
                    self.edges[id.index()].history.push(iteration, rest);
                }
            }
            row.series.push(iteration, rest);
        }
    }

    /// Records that `edges`, row `from`'s, were rescaled at `iteration`:
    /// each takes a point at its new weight. Following edges share one if
    /// most of them agree; the others leave the row.
    pub(super) fn record_rescale(&mut self, weights: Weights, from: NodeIndex, iteration: u32, edges: &[EdgeIndex]) {
        let row = self.rows.entry(from).or_default();
        let histories = &mut self.edges;
        let following =
            || edges.iter().filter(|&&id| histories[id.index()].follows_row).map(|&id| weights.of(id).to_bits());
        let shared = majority(following()).map(|(bits, _)| bits);
        for &id in edges {
            let edge = &mut histories[id.index()];
            if edge.follows_row && Some(weights.of(id).to_bits()) != shared {
                row.detach(id, edge);
            }
        }
        for &id in &row.own {
            histories[id.index()].history.push(iteration, weights.of(id));
        }
        if let Some(bits) = shared {
            row.series.push(iteration, f64::from_bits(bits));
        }
    }
}

impl RowHistory {
    /// Lets a following edge keep its own series from now on, begun with
    /// the row's.
    fn detach(&mut self, id: EdgeIndex, edge: &mut EdgeHistory) {
        if edge.follows_row {
            edge.follows_row = false;
            edge.history = self.series.clone();
            self.own.push(id);
        }
    }
}
