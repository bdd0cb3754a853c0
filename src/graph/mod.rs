//! ToolNet's tool graph (DESIGN §3.1): a weighted directed graph over the
//! library with `start` and `end` nodes, built statically from trajectories
//! (2-gram counts) or fully connected, and updated online from evaluator
//! scores.
//!
//! The `start` row learns like every other row (DESIGN §3.1: every edge):
//! the first candidates come from the retriever, but they are shown and
//! ranked with their `start` weights, so a broken tool must lose weight there
//! too. The price: `start` has an edge to every tool, so each update rewrites
//! and records a row as long as the library (about 1 ms and 1 MB of events a
//! run at 16,000 tools).

mod format;
mod store;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::{Deserialize, Serialize};

pub use format::WeightFormat;
pub use store::{Trajectory, read_trajectories};

/// Name of the node every task starts from.
pub const START: &str = "start";
/// Name of the node that answers/finishes a task.
pub const END: &str = "end";

/// A weight change smaller than this is not reported.
const CHANGE_EPSILON: f64 = 1e-12;
/// α is clamped to `[0, MAX_ALPHA]` so `f` stays positive and finite.
const MAX_ALPHA: f64 = 1e3;

#[derive(thiserror::Error, Debug)]
pub enum GraphError {
    #[error("trajectory {trajectory} names unknown tool `{tool}`")]
    UnknownTool { tool: String, trajectory: usize },
    #[error("`{name}` is reserved for the graph's own node and cannot be a tool name")]
    ReservedName { name: String },
    #[error("`{name}` is not a tool of the graph")]
    NotATool { name: String },
    #[error("score {score} for `{name}` is not a finite number")]
    InvalidScore { name: String, score: f64 },
    #[error("unknown weight format `{value}` (expected none, decimal, integer or x10)")]
    WeightFormat { value: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a valid graph file: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: invalid graph: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
    #[error("{}:{line}: invalid trajectory: {source}", path.display())]
    TrajectoryLine {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
}

/// One edge whose weight changed in an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightChange {
    pub from: String,
    pub to: String,
    pub old: f64,
    pub new: f64,
}

/// What one update changed (it goes into the `GraphUpdated` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphUpdate {
    /// The graph's iteration after the update.
    pub iteration: u32,
    /// Nodes whose score changed, with the new score, sorted by name.
    pub scores: Vec<(String, f64)>,
    /// Edges whose weight changed by more than 1e-12, sorted by (from, to).
    pub weights: Vec<WeightChange>,
}

/// `f` of ToolNet's update: maps an accumulated score to a positive factor.
pub fn score_factor(alpha: f64, x: f64) -> f64 {
    if x >= 0.0 { alpha * x + 1.0 } else { (alpha * x).exp() }
}

#[derive(Debug, Clone)]
struct Node {
    name: String,
    score: f64,
    /// Iteration at which the node joined (its score series starts there at 0).
    born: u32,
    /// (iteration, score at the end of that iteration), one point per iteration.
    history: Vec<(u32, f64)>,
}

#[derive(Debug, Clone)]
struct Edge {
    /// w⁰, the static or uniform prior.
    prior: f64,
    weight: f64,
    born: u32,
    /// The weight when the edge was created: the first point of its series.
    initial: f64,
    /// Number of `start` rescales that happened before the edge existed, so
    /// a `start` edge's series applies only the later ones.
    rescales_before: u32,
    history: Vec<(u32, f64)>,
}

impl Edge {
    fn new(prior: f64, born: u32) -> Self {
        Edge { prior, weight: prior, born, initial: prior, rescales_before: 0, history: Vec::new() }
    }
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

/// ToolNet's weighted tool graph with scores and their history.
#[derive(Debug, Clone)]
pub struct ToolGraph {
    graph: DiGraph<Node, Edge>,
    index: HashMap<String, NodeIndex>,
    start: NodeIndex,
    end: NodeIndex,
    iteration: u32,
    /// (iteration, factor) of every rescale of the `start` row by `add_tool`;
    /// kept here rather than per edge, since each touches every `start` edge.
    start_rescales: Vec<(u32, f64)>,
}

impl ToolGraph {
    /// The graph with no trajectories: every tool to every tool (itself
    /// included) and to `end`, `start` to every tool, equal weights per row.
    /// Duplicate names are kept once; the reserved names `start` and `end`
    /// are skipped. It has n² edges, so it suits small libraries.
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
        for &from in &ids {
            let w = 1.0 / (n + 1) as f64;
            for &to in &ids {
                graph.graph.add_edge(from, to, Edge::new(w, 0));
            }
            graph.graph.add_edge(from, graph.end, Edge::new(w, 0));
        }
        for &to in &ids {
            graph.graph.add_edge(graph.start, to, Edge::new(1.0 / n as f64, 0));
        }
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
                graph.graph.add_edge(from, to, Edge::new(w, 0));
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
            graph.graph.add_edge(graph.start, to, Edge::new(w, 0));
        }
        Ok(graph)
    }

    /// `start`, `end` and the tools (first occurrence of each name), no edges.
    fn with_nodes<'a>(tools: impl Iterator<Item = &'a String>) -> Self {
        let mut graph = DiGraph::new();
        let mut index = HashMap::new();
        let node = |name: &str| Node { name: name.to_owned(), score: 0.0, born: 0, history: Vec::new() };
        let start = graph.add_node(node(START));
        index.insert(START.to_owned(), start);
        let end = graph.add_node(node(END));
        index.insert(END.to_owned(), end);
        for name in tools {
            if !index.contains_key(name.as_str()) {
                let ix = graph.add_node(node(name));
                index.insert(name.clone(), ix);
            }
        }
        ToolGraph { graph, index, start, end, iteration: 0, start_rescales: Vec::new() }
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
        for (name, &delta) in deltas {
            let Some(ix) = self.tool_index(name) else {
                tracing::warn!(tool = %name, "score for a node that is not a tool ignored");
                continue;
            };
            let delta = delta.clamp(-3, 3);
            if delta != 0 {
                self.graph[ix].score += f64::from(delta);
                changed.push(ix);
            }
        }
        self.update_after_scores(&changed, Params::new(alpha, beta))
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
            let weights = self.recompute_rows(&rows, params);
            return Ok(self.make_update(Vec::new(), weights));
        }
        self.graph[ix].score = score;
        Ok(self.update_after_scores(&[ix], params))
    }

    /// Recomputes every tool row with the given α and β (after they were
    /// edited), within the current iteration.
    pub fn recompute_all(&mut self, alpha: f64, beta: f64) -> GraphUpdate {
        let rows: Vec<NodeIndex> = std::iter::once(self.start).chain(self.tool_indices()).collect();
        let weights = self.recompute_rows(&rows, Params::new(alpha, beta));
        self.make_update(Vec::new(), weights)
    }

    /// Adds a tool the library gained: self and `end` edges with a uniform
    /// prior, an edge from `start`, whose row is rescaled to sum to 1.
    /// Returns false if the tool was already there.
    pub fn add_tool(&mut self, name: &str) -> Result<bool, GraphError> {
        if is_reserved(name) {
            return Err(GraphError::ReservedName { name: name.to_owned() });
        }
        if self.index.contains_key(name) {
            return Ok(false);
        }
        let existing = self.tool_count();
        let ix =
            self.graph.add_node(Node { name: name.to_owned(), score: 0.0, born: self.iteration, history: Vec::new() });
        self.index.insert(name.to_owned(), ix);
        self.graph.add_edge(ix, ix, Edge::new(0.5, self.iteration));
        self.graph.add_edge(ix, self.end, Edge::new(0.5, self.iteration));

        if existing > 0 {
            let factor = existing as f64 / (existing + 1) as f64;
            let ids: Vec<EdgeIndex> =
                self.graph.edges_directed(self.start, Direction::Outgoing).map(|e| e.id()).collect();
            let iteration = self.iteration;
            for id in ids {
                let edge = &mut self.graph[id];
                edge.prior *= factor;
                edge.weight *= factor;
                push_point(&mut edge.history, iteration, edge.weight);
            }
            self.start_rescales.push((self.iteration, factor));
        }
        let mut edge = Edge::new(1.0 / (existing + 1) as f64, self.iteration);
        edge.rescales_before = self.start_rescales.len() as u32;
        self.graph.add_edge(self.start, ix, edge);
        Ok(true)
    }

    fn update_after_scores(&mut self, changed: &[NodeIndex], params: Params) -> GraphUpdate {
        let iteration = self.iteration;
        let mut scores = Vec::with_capacity(changed.len());
        for &ix in changed {
            let node = &mut self.graph[ix];
            push_point(&mut node.history, iteration, node.score);
            scores.push(ix);
        }
        scores.sort_unstable();
        scores.dedup();
        let rows = self.predecessor_rows(&scores);
        let weights = self.recompute_rows(&rows, params);
        self.make_update(scores, weights)
    }

    /// The tool rows that have one of `nodes` as an out-neighbour.
    fn predecessor_rows(&self, nodes: &[NodeIndex]) -> Vec<NodeIndex> {
        let mut rows: Vec<NodeIndex> =
            nodes.iter().flat_map(|&n| self.graph.edges_directed(n, Direction::Incoming)).map(|e| e.source()).collect();
        rows.sort_unstable();
        rows.dedup();
        rows
    }

    /// Applies w_ij = β·w⁰_ij + (1 − β)·f(s_j) / Σ_k f(s_k) to each row and
    /// returns the edges that changed, with their old weight.
    fn recompute_rows(&mut self, rows: &[NodeIndex], params: Params) -> Vec<(EdgeIndex, f64)> {
        let iteration = self.iteration;
        let mut changes = Vec::new();
        let mut factors: Vec<(EdgeIndex, f64)> = Vec::new();
        for &row in rows {
            factors.clear();
            let mut total = 0.0;
            for e in self.graph.edges_directed(row, Direction::Outgoing) {
                let f = score_factor(params.alpha, self.graph[e.target()].score);
                total += f;
                factors.push((e.id(), f));
            }
            // Every tool row holds `end` (score 0, f = 1), so total >= 1.
            if !(total.is_finite() && total > 0.0) {
                continue;
            }
            for &(id, f) in &factors {
                let edge = &mut self.graph[id];
                let new = params.beta * edge.prior + (1.0 - params.beta) * (f / total);
                let old = edge.weight;
                edge.weight = new;
                if (new - old).abs() > CHANGE_EPSILON {
                    push_point(&mut edge.history, iteration, new);
                    changes.push((id, old));
                }
            }
        }
        changes
    }

    fn make_update(&self, scores: Vec<NodeIndex>, weights: Vec<(EdgeIndex, f64)>) -> GraphUpdate {
        let mut scores: Vec<(String, f64)> =
            scores.into_iter().map(|ix| (self.graph[ix].name.clone(), self.graph[ix].score)).collect();
        scores.sort_by(|a, b| a.0.cmp(&b.0));
        let mut weights: Vec<WeightChange> = weights
            .into_iter()
            .filter_map(|(id, old)| {
                let (from, to) = self.graph.edge_endpoints(id)?;
                Some(WeightChange {
                    from: self.graph[from].name.clone(),
                    to: self.graph[to].name.clone(),
                    old,
                    new: self.graph[id].weight,
                })
            })
            .collect();
        weights.sort_by(|a, b| a.from.cmp(&b.from).then_with(|| a.to.cmp(&b.to)));
        GraphUpdate { iteration: self.iteration, scores, weights }
    }

    /// Out-neighbours with their weights, heaviest first, then by name.
    pub fn out_edges(&self, node: &str) -> Vec<(String, f64)> {
        self.neighbours(node, Direction::Outgoing)
    }

    /// In-neighbours with the weights of their edges into `node`, heaviest
    /// first, then by name.
    pub fn in_edges(&self, node: &str) -> Vec<(String, f64)> {
        self.neighbours(node, Direction::Incoming)
    }

    fn neighbours(&self, node: &str, direction: Direction) -> Vec<(String, f64)> {
        let Some(&ix) = self.index.get(node) else {
            return Vec::new();
        };
        let mut list: Vec<(String, f64)> = self
            .graph
            .edges_directed(ix, direction)
            .map(|e| {
                let other = match direction {
                    Direction::Outgoing => e.target(),
                    Direction::Incoming => e.source(),
                };
                (self.graph[other].name.clone(), e.weight().weight)
            })
            .collect();
        list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        list
    }

    /// The current weight of the edge `from -> to`, if there is one.
    pub fn weight(&self, from: &str, to: &str) -> Option<f64> {
        self.edge(from, to).map(|id| self.graph[id].weight)
    }

    /// The prior w⁰ of the edge `from -> to`, if there is one.
    pub fn prior(&self, from: &str, to: &str) -> Option<f64> {
        self.edge(from, to).map(|id| self.graph[id].prior)
    }

    fn edge(&self, from: &str, to: &str) -> Option<EdgeIndex> {
        let (&a, &b) = (self.index.get(from)?, self.index.get(to)?);
        // `start` has an edge to every tool while a tool has few in-edges, so
        // walk whichever list is short.
        if a == self.start {
            self.graph.edges_directed(b, Direction::Incoming).find(|e| e.source() == a).map(|e| e.id())
        } else {
            self.graph.find_edge(a, b)
        }
    }

    /// A node's accumulated score.
    pub fn score(&self, node: &str) -> Option<f64> {
        self.index.get(node).map(|&ix| self.graph[ix].score)
    }

    pub fn contains(&self, node: &str) -> bool {
        self.index.contains_key(node)
    }

    /// Number of tools (`start` and `end` not counted).
    pub fn tool_count(&self) -> usize {
        self.graph.node_count() - 2
    }

    /// Tool names in the order they joined the graph.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.tool_indices().map(|ix| self.graph[ix].name.as_str())
    }

    /// Number of `apply_scores` calls so far.
    pub fn iteration(&self) -> u32 {
        self.iteration
    }

    /// The node's score per iteration: the score it joined with (0, at
    /// iteration 0 for the initial tools), then one point per iteration in
    /// which it changed. A hand edit at iteration 0 shows as a second point
    /// at 0.
    pub fn score_series(&self, node: &str) -> Vec<(u32, f64)> {
        let Some(&ix) = self.index.get(node) else {
            return Vec::new();
        };
        let node = &self.graph[ix];
        std::iter::once((node.born, 0.0)).chain(node.history.iter().copied()).collect()
    }

    /// The edge's weight per iteration: its prior when created (iteration 0
    /// for the initial graph), then one point per iteration in which it
    /// changed.
    pub fn weight_series(&self, from: &str, to: &str) -> Vec<(u32, f64)> {
        let Some(id) = self.edge(from, to) else {
            return Vec::new();
        };
        let edge = &self.graph[id];
        std::iter::once((edge.born, edge.initial)).chain(edge.history.iter().copied()).collect()
    }

    fn tool_index(&self, name: &str) -> Option<NodeIndex> {
        self.index.get(name).copied().filter(|&ix| ix != self.start && ix != self.end)
    }

    fn tool_indices(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        let (start, end) = (self.start, self.end);
        self.graph.node_indices().filter(move |&ix| ix != start && ix != end)
    }
}

fn is_reserved(name: &str) -> bool {
    name == START || name == END
}

/// Records `value` as the point of `iteration`, replacing an earlier point of
/// the same iteration so a series has one point per iteration.
fn push_point(series: &mut Vec<(u32, f64)>, iteration: u32, value: f64) {
    match series.last_mut() {
        Some(last) if last.0 == iteration => last.1 = value,
        _ => series.push((iteration, value)),
    }
}
