//! ToolNet's construction and learning rules, as in Liu et al., "ToolNet:
//! Connecting Large Language Models with Massive Tools via Tool Graph"
//! (arXiv:2403.00839, 2024), §3.2 "Static Construction" and §3.3 "Dynamic
//! Construction"; docs/src/papers/toolnet.md restates them for this project:
//!
//! - static, a 2-gram model over successful trajectories read as
//!   `[start, t_1, ..., t_s, end]`:
//!   `w_ij = count(t_s = i, t_{s+1} = j) / count(t_s = i)`; a tool never
//!   seen keeps uniform out-weights, and without trajectories the graph is
//!   fully connected with equal weights;
//! - dynamic, after each run, with s_j the accumulated evaluator score of j:
//!   `f(x) = αx + 1` for x ≥ 0 and `e^(αx)` for x < 0,
//!   `Δw_ij = f(s_j) / Σ_{k ∈ out(i)} f(s_k)`,
//!   `w_ij = β·w⁰_ij + (1 − β)·Δw_ij`.
//!
//! The paper prints s_i in Δw's numerator; it must be the destination's s_j,
//! else a row would not sum to 1.
//!
//! A score change of j changes the rows that lead to j, and `start`'s row
//! learns like every other (§3.3 updates every edge): the first candidates
//! come from the retriever, but they are shown and ranked with their `start`
//! weights, so a broken tool must lose weight there too. The price: `start`
//! has an edge to every tool, and so has the shared row of a graph built
//! without trajectories, so each update changes rows as long as the
//! library. Each is held as the update's rule (`row_law.rs`) and reported
//! group by group (`row_classes.rs`); the update records most of it as one
//! shared weight (`update.rs`), but still lists every edge whose prior
//! sets it apart (at 16,000 tools from the benchmark's trajectories, some
//! 10,000 of `start`'s).

use std::collections::BTreeMap;
use std::sync::Arc;

use petgraph::Direction;
use petgraph::graph::{EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;

use super::elements::EdgeHistory;
use super::error::GraphError;
use super::ops::Op;
use super::row_law::{LongRow, RowLaw, Rule, Weights};
use super::tool_graph::{END, Scratch, ToolGraph, is_reserved};
use super::update::{GraphUpdate, RowChange, WeightChange};

/// α is clamped to `[0, MAX_ALPHA]` so `f` stays positive and finite.
const MAX_ALPHA: f64 = 1e3;

/// `f` of ToolNet's update: maps an accumulated score to a positive factor.
pub fn score_factor(alpha: f64, x: f64) -> f64 {
    if x >= 0.0 { alpha * x + 1.0 } else { (alpha * x).exp() }
}

/// α and β as the update uses them (see [`ToolGraph::apply_scores`]).
#[derive(Debug, Clone, Copy)]
struct Params {
    alpha: f64,
    beta: f64,
}

impl Params {
    fn new(alpha: f64, beta: f64) -> Self {
        let alpha = if alpha.is_finite() { alpha.clamp(0.0, MAX_ALPHA) } else { 0.0 };
        let beta = if beta.is_finite() { beta.clamp(0.0, 1.0) } else { 1.0 };
        Params { alpha, beta }
    }
}

impl ToolGraph {
    /// The graph with no trajectories: every tool to every tool (itself
    /// included) and to `end`, `start` to every tool, equal weights per row.
    /// Duplicate names are kept once; the reserved names are skipped. The
    /// tools' rows are alike and every update keeps them so (a score change
    /// reaches all of them, with the same α and β), so they are held as one,
    /// the [`ANY_TOOL`](super::tool_graph::ANY_TOOL) row: 2n + 1 edges.
    pub fn fully_connected(tools: &[String]) -> Self {
        let mut graph = Self::with_nodes(tools.iter().filter(|t| {
            let reserved = is_reserved(t);
            if reserved {
                tracing::warn!(tool = %t, "reserved name skipped as a tool");
            }
            !reserved
        }));
        let ids: Vec<NodeIndex> = graph.tool_indices().collect();
        let n = ids.len();
        let shared = graph.add_shared_row();
        let w = 1.0 / (n + 1) as f64;
        for &to in &ids {
            graph.add_edge(shared, to, EdgeHistory::new(w, 0));
        }
        graph.add_edge(shared, graph.end, EdgeHistory::new(w, 0));
        for &to in &ids {
            graph.add_edge(graph.start, to, EdgeHistory::new(1.0 / n as f64, 0));
        }
        graph.restart_log();
        graph
    }

    /// The static ToolNet graph: a 2-gram model over `trajectories`, each read
    /// as `[start, t1, ..., ts, end]` (a trailing `end` in the data is
    /// accepted; empty trajectories are ignored).
    pub fn from_trajectories(tools: &[String], trajectories: &[Vec<String>]) -> Result<Self, GraphError> {
        if let Some(name) = tools.iter().find(|t| is_reserved(t)) {
            return Err(GraphError::ReservedName { name: name.clone() });
        }
        let mut graph = Self::with_nodes(tools.iter());
        let node_count = graph.graph.node_count();
        // Per source node: target -> transition count; BTreeMap keeps the edge
        // order (and so everything derived from it) deterministic.
        let mut counts: Vec<BTreeMap<NodeIndex, u64>> = vec![BTreeMap::new(); node_count];
        let mut totals = vec![0u64; node_count];
        for (ti, trajectory) in trajectories.iter().enumerate() {
            let names = match trajectory.split_last() {
                Some((last, rest)) if last == END => rest,
                _ => trajectory.as_slice(),
            };
            if names.is_empty() {
                continue;
            }
            let mut path = Vec::with_capacity(names.len() + 2);
            path.push(graph.start);
            for name in names {
                match graph.tool_index(name) {
                    Some(ix) => path.push(ix),
                    None => {
                        return Err(GraphError::UnknownTool { tool: name.clone(), trajectory: ti });
                    }
                }
            }
            path.push(graph.end);
            for pair in path.windows(2) {
                *counts[pair[0].index()].entry(pair[1]).or_default() += 1;
                totals[pair[0].index()] += 1;
            }
        }

        let ids: Vec<NodeIndex> = graph.tool_indices().collect();
        for &from in &ids {
            let row = &mut counts[from.index()];
            row.entry(from).or_default();
            row.entry(graph.end).or_default();
            let total = totals[from.index()];
            let degree = row.len();
            for (&to, &count) in row.iter() {
                let w = if total > 0 { count as f64 / total as f64 } else { 1.0 / degree as f64 };
                graph.add_edge(from, to, EdgeHistory::new(w, 0));
            }
        }
        let start_total = totals[graph.start.index()];
        for &to in &ids {
            let w = if start_total > 0 {
                let count = counts[graph.start.index()].get(&to).copied().unwrap_or(0);
                count as f64 / start_total as f64
            } else {
                1.0 / ids.len() as f64
            };
            graph.add_edge(graph.start, to, EdgeHistory::new(w, 0));
        }
        graph.restart_log();
        Ok(graph)
    }

    /// Adds the evaluator's scores of one run (one iteration) and updates the
    /// rows of every node with an out-neighbour whose score changed.
    ///
    /// Each Δ is clamped to [-3, 3]; names that are not tools are ignored.
    /// α is clamped to [0, 1000] (0 if not finite) and β to [0, 1] (1 if not
    /// finite), so weights always stay in [0, 1] and rows sum to 1.
    pub fn apply_scores(&mut self, deltas: &BTreeMap<String, i32>, alpha: f64, beta: f64) -> GraphUpdate {
        self.iteration = self.iteration.saturating_add(1);
        let mut changed = Vec::with_capacity(deltas.len());
        let mut applied = BTreeMap::new();
        for (name, &delta) in deltas {
            let Some(ix) = self.tool_index(name) else {
                tracing::warn!(tool = %name, "score for a node that is not a tool ignored");
                continue;
            };
            let delta = delta.clamp(-3, 3);
            if delta != 0 {
                self.graph[ix].score += f64::from(delta);
                self.scratch.forget_factor(ix);
                changed.push(ix);
                applied.insert(name.clone(), delta);
            }
        }
        let update = self.update_after_scores(&changed, Params::new(alpha, beta));
        self.log.record(Op::Scores { deltas: applied, alpha, beta });
        update
    }

    /// Sets a tool's score by hand and recomputes the affected rows at once,
    /// within the current iteration.
    pub fn set_score(&mut self, tool: &str, score: f64, alpha: f64, beta: f64) -> Result<GraphUpdate, GraphError> {
        let ix = self.tool_index(tool).ok_or_else(|| GraphError::NotATool { name: tool.to_owned() })?;
        if !score.is_finite() {
            return Err(GraphError::InvalidScore { name: tool.to_owned(), score });
        }
        let params = Params::new(alpha, beta);
        if self.graph[ix].score == score {
            // Nothing to record, but the caller asked for the rows with the
            // given α and β.
            let rows = self.predecessor_rows(&[ix]);
            let (weights, touched) = self.recompute_rows(&rows, params);
            if touched {
                self.log.record(Op::SetScore { tool: tool.to_owned(), score, alpha, beta });
            }
            return Ok(self.make_update(Vec::new(), weights));
        }
        self.graph[ix].score = score;
        self.scratch.forget_factor(ix);
        let update = self.update_after_scores(&[ix], params);
        self.log.record(Op::SetScore { tool: tool.to_owned(), score, alpha, beta });
        Ok(update)
    }

    /// Recomputes every tool row with the given α and β (after they were
    /// edited), within the current iteration.
    pub fn recompute_all(&mut self, alpha: f64, beta: f64) -> GraphUpdate {
        let rows: Vec<NodeIndex> = std::iter::once(self.start)
            .chain(self.shared)
            .chain(self.tool_indices().filter(|&ix| self.row_of(ix) == ix))
            .collect();
        let (weights, touched) = self.recompute_rows(&rows, Params::new(alpha, beta));
        if touched {
            self.log.record(Op::Recompute { alpha, beta });
        }
        self.make_update(Vec::new(), weights)
    }

    fn update_after_scores(&mut self, changed: &[NodeIndex], params: Params) -> GraphUpdate {
        let iteration = self.iteration;
        let mut scores = Vec::with_capacity(changed.len());
        for &ix in changed {
            let node = &mut self.graph[ix];
            node.history.push(iteration, node.score);
            scores.push(ix);
        }
        scores.sort_unstable();
        scores.dedup();
        let rows = self.predecessor_rows(&scores);
        let (weights, _) = self.recompute_rows(&rows, params);
        self.make_update(scores, weights)
    }

    /// The rows (`start`'s included) that have one of `nodes` as an
    /// out-neighbour: the rows whose Σ f(s_k) the new scores changed.
    fn predecessor_rows(&self, nodes: &[NodeIndex]) -> Vec<NodeIndex> {
        let mut rows: Vec<NodeIndex> =
            nodes.iter().flat_map(|&n| self.graph.edges_directed(n, Direction::Incoming)).map(|e| e.source()).collect();
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    /// Applies w_ij = β·w⁰_ij + (1 − β)·f(s_j) / Σ_k f(s_k) to each row and
    /// returns what the update reports of it (see `update.rs`), and whether
    /// any weight changed at all (even by less than the reported 1e-12: a
    /// store must still record that).
    fn recompute_rows(&mut self, rows: &[NodeIndex], params: Params) -> (Changes, bool) {
        let iteration = self.iteration;
        let mut changes = Changes::default();
        let mut touched = false;
        let mut scratch = std::mem::take(&mut self.scratch);
        let node_count = self.graph.node_count();
        let mut refactored = Refactored::Some;
        if scratch.factors_alpha.to_bits() != params.alpha.to_bits() || scratch.factors.len() != node_count {
            scratch.factors.clear();
            scratch.factors.extend(self.graph.node_weights().map(|n| score_factor(params.alpha, n.score)));
            scratch.factors_alpha = params.alpha;
            scratch.stale_factors.clear();
            scratch.sums.iter_mut().for_each(|sums| sums.all_changed());
            refactored = Refactored::All;
        }
        scratch.refactored.clear();
        for ix in scratch.stale_factors.drain(..) {
            scratch.factors[ix.index()] = score_factor(params.alpha, self.graph[ix].score);
            scratch.sums.iter_mut().for_each(|sums| sums.factor_changed(ix));
            scratch.refactored.push(ix);
        }
        for &row in rows {
            if let Some(long) = self.long_row(row) {
                touched |= self.recompute_long(long, row, &mut scratch, params, refactored, &mut changes);
                continue;
            }
            scratch.row_edges.clear();
            // A slice, not the Vec: read through a reference to the Vec,
            // its pointer and length were loaded again at every edge.
            let factors = scratch.factors.as_slice();
            scratch.row_targets.clear();
            let edges = self.graph.edges_directed(row, Direction::Outgoing);
            scratch.row_targets.extend(edges.map(|e| (e.target(), e.id())));
            // Summed apart from the writes below, in the row's order, with
            // no push in the loop: otherwise the total lived on the stack,
            // a store and a load per edge on the chain of additions.
            let total = scratch.row_targets.iter().fold(0.0, |total, &(to, _)| total + factors[to.index()]);
            // Every tool row holds `end` (score 0, f = 1), so total >= 1.
            if !(total.is_finite() && total > 0.0) {
                continue;
            }
            let graph = &mut self.graph;
            let beta = params.beta;
            // Extended from a slice's iterator, whose length is known: no
            // check of the capacity per edge.
            scratch.row_edges.extend(scratch.row_targets.iter().map(move |&(to, id)| {
                let edge = &mut graph[id];
                let new = learnt_weight(beta, edge.prior, factors[to.index()], total);
                let old = std::mem::replace(&mut edge.held, new);
                ((to, id), old, new)
            }));
            touched = touched || scratch.row_edges.iter().any(|&(_, old, new)| new.to_bits() != old.to_bits());
            let begin = changes.weights.len();
            let rest = scratch.encoder.encode(&scratch.row_edges, &mut changes.weights);
            // The histories take what the update reports: per listed edge,
            // and once for the edges that share the row's weight.
            let weights = Weights { graph: &self.graph, start: self.start, shared: self.shared, laws: &self.laws };
            self.row_histories.record_update(weights, row, iteration, &changes.weights[begin..], rest);
            if let Some(rest) = rest {
                changes.rows.push((row, rest));
            }
            changes.row_ends.push((row, changes.weights.len()));
        }
        self.scratch = scratch;
        (changes, touched)
    }

    /// Updates a long row, `start`'s or the shared one, at node `node` (see
    /// `row_law.rs`): as a new law, reported group by group when the old
    /// law holds with the same α, else edge by edge. Returns whether any
    /// weight changed.
    fn recompute_long(
        &mut self,
        long: LongRow,
        node: NodeIndex,
        scratch: &mut Scratch,
        params: Params,
        refactored: Refactored,
        changes: &mut Changes,
    ) -> bool {
        let node_count = self.graph.node_count();
        let graph = &self.graph;
        let slot = long.slot();
        let edges = || graph.edges_directed(node, Direction::Outgoing).map(|e| (e.target(), e.id())).collect();
        scratch.sums[slot].keep(node_count, edges);
        let total = scratch.sums[slot].total(&scratch.factors);
        if !(total.is_finite() && total > 0.0) {
            // The weights stay, but the law's factors no longer match the
            // scores the next update starts from: it must go edge by edge.
            self.write_out_law(long);
            return false;
        }
        let new = Rule { beta: params.beta, total };
        let row = scratch.sums[slot].edges();
        let begin = changes.weights.len();
        let (rest, touched) = match self.laws.slot(long) {
            Some(law)
                if refactored == Refactored::Some
                    && law.alpha.to_bits() == params.alpha.to_bits()
                    && law.factors.len() == node_count =>
            {
                let classes = &mut scratch.classes[slot];
                if !classes.is_built(row.len()) || classes.is_sparse() {
                    let factors = &law.factors;
                    classes.build(row.iter().map(|&(to, id)| (graph[id].prior, factors[to.index()])));
                }
                let old = law.rule;
                for &ix in &scratch.refactored {
                    let factor = scratch.factors[ix.index()];
                    if let Some(place) = scratch.sums[slot].place(ix) {
                        classes.move_to(place, factor, old);
                    }
                    law.factors[ix.index()] = factor;
                }
                law.rule = new;
                classes.encode(old, new, row, &mut changes.weights)
            }
            law => {
                let factors = scratch.factors.as_slice();
                scratch.row_edges.clear();
                let held = law.as_ref();
                scratch.row_edges.extend(row.iter().map(|&(to, id)| {
                    let edge = &graph[id];
                    let old = held.map_or(edge.held, |law| law.weight(edge.prior, to));
                    ((to, id), old, new.weight(edge.prior, factors[to.index()]))
                }));
                let touched = scratch.row_edges.iter().any(|&(_, old, new)| new.to_bits() != old.to_bits());
                let rest = scratch.encoder.encode(&scratch.row_edges, &mut changes.weights);
                *law = Some(RowLaw { rule: new, alpha: params.alpha, factors: scratch.factors.clone() });
                scratch.classes[slot].clear();
                (rest, touched)
            }
        };
        let weights = Weights { graph: &self.graph, start: self.start, shared: self.shared, laws: &self.laws };
        self.row_histories.record_update(weights, node, self.iteration, &changes.weights[begin..], rest);
        if let Some(rest) = rest {
            changes.rows.push((node, rest));
        }
        changes.row_ends.push((node, changes.weights.len()));
        touched
    }

    /// The update as the events carry it: nodes named, lists sorted by name.
    fn make_update(&mut self, scores: Vec<NodeIndex>, mut changes: Changes) -> GraphUpdate {
        let name_rank = self.name_rank.of(&self.graph);
        let by_rank = &mut self.scratch.by_rank;
        let graph = &self.graph;
        let now = Weights { graph, start: self.start, shared: self.shared, laws: &self.laws };
        let rank = |ix: NodeIndex| name_rank[ix.index()];
        let name = |ix: NodeIndex| graph[ix].name.clone();
        let mut scores: Vec<(Arc<str>, f64)> = scores.into_iter().map(|ix| (name(ix), graph[ix].score)).collect();
        scores.sort_by(|a, b| a.0.cmp(&b.0));

        // Sorted by (from, to) name through their ranks: the rows by their
        // `from`, then each row's edges by their `to` (a row has no
        // parallel edges, so the order is total).
        let mut segments = Vec::with_capacity(changes.row_ends.len());
        let mut begin = 0;
        for &(row, end) in &changes.row_ends {
            if end > begin {
                segments.push((rank(row), row, begin..end));
            }
            begin = end;
        }
        segments.sort_unstable_by_key(|s| s.0);
        let mut weights = Vec::with_capacity(changes.weights.len());
        for (_, row, range) in segments {
            let from = name(row);
            let listed = &mut changes.weights[range];
            let change = |&((to, id), old): &((NodeIndex, EdgeIndex), f64)| WeightChange {
                from: from.clone(),
                to: name(to),
                old,
                new: now.of(id),
            };
            // A row listing a good part of the library (`start`'s) is put in
            // order by placing each edge at its target's rank; a short one
            // is sorted.
            if listed.len() * 16 >= name_rank.len() {
                by_rank.resize(name_rank.len(), u32::MAX);
                for (i, &((to, _), _)) in listed.iter().enumerate() {
                    by_rank[rank(to) as usize] = i as u32;
                }
                for slot in by_rank.iter_mut().filter(|slot| **slot != u32::MAX) {
                    weights.push(change(&listed[*slot as usize]));
                    *slot = u32::MAX;
                }
            } else {
                listed.sort_unstable_by_key(|&((to, _), _)| rank(to));
                weights.extend(listed.iter().map(change));
            }
        }
        let mut rows: Vec<RowChange> =
            changes.rows.into_iter().map(|(row, rest)| RowChange { from: name(row), rest }).collect();
        rows.sort_by(|a, b| a.from.cmp(&b.from));
        GraphUpdate { iteration: self.iteration, scores, weights, rows }
    }
}

/// Which factors an update read again: those of the scores written since
/// the last, or all of them (α changed, or the buffers were new).
#[derive(Clone, Copy, PartialEq)]
enum Refactored {
    Some,
    All,
}

/// w = β·w⁰ + (1 − β)·f(s) / Σf, as every update writes a weight.
fn learnt_weight(beta: f64, prior: f64, factor: f64, total: f64) -> f64 {
    beta * prior + (1.0 - beta) * (factor / total)
}

impl Rule {
    /// The weight of an edge with that prior to a tool of that factor.
    pub(super) fn weight(self, prior: f64, factor: f64) -> f64 {
        learnt_weight(self.beta, prior, factor, self.total)
    }
}

/// The recomputed rows' changes, before their nodes are named.
#[derive(Default)]
struct Changes {
    /// Edges to list, as ((target, edge), old weight), row after row.
    weights: Vec<((NodeIndex, EdgeIndex), f64)>,
    /// Each recomputed row, with the end of its edges in `weights`.
    row_ends: Vec<(NodeIndex, usize)>,
    /// Rows written as a shared weight.
    rows: Vec<(NodeIndex, f64)>,
}
