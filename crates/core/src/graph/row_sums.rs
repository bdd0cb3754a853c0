//! A long row's out-edges (`start`'s, the shared row's) as an update reads
//! them, with the running sums of their f(s). Such a row leads to every
//! tool, and each task's update sums f(s) over the whole row: a chain of dependent additions as long as the
//! library, kept in the row's order so the total's bits stay the same. A
//! new score changes only the sums from its tool's place on, so those
//! before it are kept.

use petgraph::graph::{EdgeIndex, NodeIndex};

#[derive(Default)]
pub(super) struct RowSums {
    /// (target, edge) in the graph's order; empty until needed.
    edges: Vec<(NodeIndex, EdgeIndex)>,
    /// Per node index, its place in `edges` (`u32::MAX`: not a target).
    place: Vec<u32>,
    /// `sums[i]`: the first `i` edges' f(s) added in order; `sums[0]` is 0.
    sums: Vec<f64>,
    /// How many of `sums` after the first still hold.
    valid: usize,
}

impl RowSums {
    /// Forgets the row: an edge was added to it.
    pub(super) fn clear(&mut self) {
        self.edges.clear();
        self.place.clear();
        self.valid = 0;
    }

    /// The row's (target, edge)s, as [`RowSums::keep`] read them.
    pub(super) fn edges(&self) -> &[(NodeIndex, EdgeIndex)] {
        &self.edges
    }

    /// Reads the row's (target, edge)s from `edges` (the graph's, in its
    /// order) if they are not kept yet.
    pub(super) fn keep(&mut self, node_count: usize, edges: impl FnOnce() -> Vec<(NodeIndex, EdgeIndex)>) {
        if self.edges.is_empty() {
            self.edges = edges();
            self.place.clear();
            self.place.resize(node_count, u32::MAX);
            for (i, &(to, _)) in self.edges.iter().enumerate() {
                self.place[to.index()] = i as u32;
            }
            self.valid = 0;
        }
    }

    /// The place of the edge to `ix` in the row, if it is kept and leads there.
    pub(super) fn place(&self, ix: NodeIndex) -> Option<usize> {
        self.place.get(ix.index()).filter(|&&p| p != u32::MAX).map(|&p| p as usize)
    }

    /// Node `ix`'s f(s) changed.
    pub(super) fn factor_changed(&mut self, ix: NodeIndex) {
        if let Some(&place) = self.place.get(ix.index()) {
            self.valid = self.valid.min(place as usize);
        }
    }

    /// Every f(s) changed (α did, or they were all made anew).
    pub(super) fn all_changed(&mut self) {
        self.valid = 0;
    }

    /// Σ f(s) over the row, in its order, `factors` by node index; only the
    /// sums from the first changed place on are added again.
    pub(super) fn total(&mut self, factors: &[f64]) -> f64 {
        let n = self.edges.len();
        self.sums.resize(n + 1, 0.0);
        let mut total = self.sums[self.valid];
        // Written into slots sized first: a push in the loop put the total
        // on the stack at every edge.
        for (slot, &(to, _)) in self.sums[self.valid + 1..].iter_mut().zip(&self.edges[self.valid..]) {
            total += factors[to.index()];
            *slot = total;
        }
        self.valid = n;
        total
    }
}
