//! A long row's weights held as the rule that made them rather than written
//! edge by edge. Two rows lead to every tool: `start`'s, and the
//! [`ANY_TOOL`](super::tool_graph::ANY_TOOL) row of a graph built without
//! trajectories. Every update rewrote them, each as long as the library
//! (at 16,000 tools, most of a toolnet step). Yet after an update each of
//! their weights is ToolNet's `β·w⁰ + (1 − β)·f(s) / Σf` of that update's
//! β and Σf, its edge's prior and its target's f(s): those few numbers and
//! the factors hold the row. A weight is worked out when read, by the same
//! expression the update would have written, so its bits are the same.
//!
//! A law holds from the first update of its row on; an edit that does not
//! follow it (a rescale when a tool joins, a weight put back from a trace)
//! writes the weights out into the edges and drops it.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};

use super::elements::{Edge, Node};

#[derive(Debug, Clone)]
pub(super) struct RowLaw {
    pub(super) rule: Rule,
    /// The α the factors were worked out with.
    pub(super) alpha: f64,
    /// f(s) per node index as the update read it: a score written since
    /// does not move a weight until the row is updated.
    pub(super) factors: Vec<f64>,
}

/// An update's β and Σf: with a prior and a factor, a weight (ToolNet's
/// formula, `Rule::weight` in `toolnet.rs`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Rule {
    pub(super) beta: f64,
    pub(super) total: f64,
}

impl RowLaw {
    /// The weight of the row's edge to `to`, whose prior is `prior`.
    pub(super) fn weight(&self, prior: f64, to: NodeIndex) -> f64 {
        self.rule.weight(prior, self.factors[to.index()])
    }
}

/// The rows a law may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LongRow {
    Start,
    Shared,
}

impl LongRow {
    pub(super) const ALL: [LongRow; 2] = [LongRow::Start, LongRow::Shared];

    pub(super) fn slot(self) -> usize {
        self as usize
    }
}

/// The law of each long row, while one holds.
#[derive(Debug, Clone, Default)]
pub(super) struct Laws([Option<RowLaw>; 2]);

impl Laws {
    pub(super) fn of(&self, row: LongRow) -> Option<&RowLaw> {
        self.0[row.slot()].as_ref()
    }

    pub(super) fn slot(&mut self, row: LongRow) -> &mut Option<RowLaw> {
        &mut self.0[row.slot()]
    }
}

/// The graph's weights, each long row's as its law gives them while one
/// holds.
#[derive(Clone, Copy)]
pub(super) struct Weights<'a> {
    pub(super) graph: &'a DiGraph<Node, Edge>,
    pub(super) start: NodeIndex,
    pub(super) shared: Option<NodeIndex>,
    pub(super) laws: &'a Laws,
}

impl Weights<'_> {
    /// The weight of edge `id`.
    pub(super) fn of(&self, id: EdgeIndex) -> f64 {
        let e = &self.graph.raw_edges()[id.index()];
        self.at(e.source(), e.target(), &e.weight)
    }

    /// The law row `from` follows, if it is a long row that has one.
    pub(super) fn law(&self, from: NodeIndex) -> Option<&RowLaw> {
        if from == self.start {
            self.laws.of(LongRow::Start)
        } else if Some(from) == self.shared {
            self.laws.of(LongRow::Shared)
        } else {
            None
        }
    }

    /// The weight of the edge `from -> to` that holds `edge`.
    pub(super) fn at(&self, from: NodeIndex, to: NodeIndex, edge: &Edge) -> f64 {
        match self.law(from) {
            Some(law) => law.weight(edge.prior, to),
            None => edge.held,
        }
    }
}
