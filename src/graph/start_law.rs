//! `start`'s weights held as the rule that made them rather than written
//! edge by edge. `start` leads to every tool, so every update rewrote a
//! row as long as the library (at 16,000 tools, most of a toolnet step).
//! Yet after an update each of its weights is ToolNet's
//! `β·w⁰ + (1 − β)·f(s) / Σf` of that update's β and Σf, its edge's prior
//! and its target's f(s): those few numbers and the factors hold the row.
//! A weight is worked out when read, by the same expression the update
//! would have written, so its bits are the same.
//!
//! The law holds from the first update of the row on; an edit that does
//! not follow it (a rescale when a tool joins, a weight put back from a
//! trace) writes the weights out into the edges and drops it.

use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};

use super::elements::{Edge, Node};

#[derive(Debug, Clone)]
pub(super) struct StartLaw {
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

impl StartLaw {
    /// The weight of `start`'s edge to `to`, whose prior is `prior`.
    pub(super) fn weight(&self, prior: f64, to: NodeIndex) -> f64 {
        self.rule.weight(prior, self.factors[to.index()])
    }
}

/// The graph's weights, `start`'s as its law gives them while one holds.
#[derive(Clone, Copy)]
pub(super) struct Weights<'a> {
    pub(super) graph: &'a DiGraph<Node, Edge>,
    pub(super) start: NodeIndex,
    pub(super) law: Option<&'a StartLaw>,
}

impl Weights<'_> {
    /// The weight of edge `id`.
    pub(super) fn of(&self, id: EdgeIndex) -> f64 {
        let e = &self.graph.raw_edges()[id.index()];
        self.at(e.source(), e.target(), &e.weight)
    }

    /// The weight of the edge `from -> to` that holds `edge`.
    pub(super) fn at(&self, from: NodeIndex, to: NodeIndex, edge: &Edge) -> f64 {
        match self.law {
            Some(law) if from == self.start => law.weight(edge.prior, to),
            _ => edge.held,
        }
    }
}
