//! The graph as a data structure: tools and the `start` and `end` nodes,
//! weighted edges with their prior, the history of every score and weight,
//! and the log of the edits that made it, with the queries the engine and
//! the UI ask of it. How weights are built and learnt is ToolNet's business
//! (`toolnet.rs`).

use std::sync::{Arc, OnceLock};

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use rustc_hash::FxHashMap;

use super::elements::{Edge, EdgeHistory, Node};
use super::error::GraphError;
use super::ops::{Op, OpLog, StateHash};
use super::row_classes::RowClasses;
use super::row_history::RowHistories;
use super::row_law::{Laws, LongRow, Weights};
use super::row_sums::RowSums;
use super::series::Series;
use super::update::{RowEncoder, majority};

/// Name of the node every task starts from.
pub const START: &str = "start";
/// Name of the node that answers/finishes a task.
pub const END: &str = "end";
/// Name of the row that every tool without a row of its own follows. A
/// graph built without trajectories holds ToolNet's uniform start (every
/// tool to every tool and to `end`, equal weights) as this one row, not a
/// row per tool: n + 1 edges instead of n², the same weights. It is never
/// a tool (a tool's name is letters, digits, `_`, `.` and `-`).
pub const ANY_TOOL: &str = "*";

/// A node as [`ToolGraph::for_each_row`] gives it: (number, name).
pub type NumberedNode<'a> = (usize, &'a Arc<str>);
/// A row's edge as [`ToolGraph::for_each_row`] gives it: (number, name, weight).
pub type NumberedEdge<'a> = (usize, &'a Arc<str>, f64);

/// ToolNet's weighted tool graph with scores and their history.
#[derive(Debug, Clone)]
pub struct ToolGraph {
    pub(super) graph: DiGraph<Node, Edge>,
    /// Names are the library's, not chosen to collide, so FxHash rather
    /// than SipHash: a session looks up every tool of the library once.
    /// Shared by the graph's clones until one adds a tool: a session works
    /// on a clone, and copying 16,000 names was a tenth of a session's
    /// overhead at that scale.
    pub(super) index: Arc<FxHashMap<String, NodeIndex>>,
    pub(super) start: NodeIndex,
    pub(super) end: NodeIndex,
    /// The [`ANY_TOOL`] row, if the graph has one: the out-edges of every
    /// tool that has none of its own.
    pub(super) shared: Option<NodeIndex>,
    pub(super) iteration: u32,
    /// (iteration, factor) of every rescale of the `start` row by `add_tool`;
    /// kept here rather than per edge, since each touches every `start` edge.
    pub(super) start_rescales: Vec<(u32, f64)>,
    /// Every edge's history, and those rows keep for their edges.
    pub(super) row_histories: RowHistories,
    /// The edits since the graph was built or loaded, for its store.
    pub(super) log: OpLog,
    /// Buffers an update reuses (see [`Scratch`]).
    pub(super) scratch: Scratch,
    /// Each node's place in name order (see [`NameRank`]).
    pub(super) name_rank: NameRank,
    /// `start`'s and the [`ANY_TOOL`] row's weights as the rule of their
    /// last update, while they follow it (see `row_law.rs`); their edges'
    /// own weights are stale meanwhile.
    pub(super) laws: Laws,
    /// The library contents (a [`ToolGraph::take_tools`] generation) whose
    /// every tool this graph is known to hold; None once it gains a tool.
    pub(super) tools_of: Option<u64>,
}

/// Each node's place in name order, so rows and updates are put in name
/// order without comparing strings. Built on first use and shared by the
/// graph's clones (a session works on a clone of the graph, and at 16,000
/// tools sorting the names was a good part of a session's first task);
/// nodes are only ever added, never renamed or removed, and adding one
/// starts a new one.
#[derive(Clone, Default)]
pub(super) struct NameRank(Arc<OnceLock<Vec<u32>>>);

impl NameRank {
    /// Each node of `graph` (the graph this belongs to) by its place in
    /// name order, by node index. Takes the nodes apart from the graph so a
    /// caller can hold this beside a mutable borrow of the graph's buffers.
    pub(super) fn of(&self, graph: &DiGraph<Node, Edge>) -> &[u32] {
        self.0.get_or_init(|| {
            let mut order: Vec<NodeIndex> = graph.node_indices().collect();
            order.sort_unstable_by(|&a, &b| graph[a].name.cmp(&graph[b].name));
            let mut rank = vec![0; order.len()];
            for (place, ix) in order.into_iter().enumerate() {
                // Node indices are u32 in petgraph's default graph.
                rank[ix.index()] = place as u32;
            }
            rank
        })
    }
}

impl std::fmt::Debug for NameRank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameRank")
    }
}

/// What an update needs beyond the graph, kept between updates: `start`'s
/// row is as long as the library, so building these afresh each task
/// allocated (and hashed, and compared names) in proportion to it.
pub(super) struct Scratch {
    pub(super) encoder: RowEncoder,
    /// (target, edge) of the row being recomputed, unless it is `start`'s.
    pub(super) row_targets: Vec<(NodeIndex, EdgeIndex)>,
    /// ((target, edge), old, new) of the row being recomputed.
    pub(super) row_edges: Vec<((NodeIndex, EdgeIndex), f64, f64)>,
    /// Per name rank, the place of that target among a long row's listed
    /// edges (`u32::MAX` between uses): puts `start`'s thousands of listed
    /// edges in name order in one pass instead of a sort.
    pub(super) by_rank: Vec<u32>,
    /// Per node index, f(score) at `factors_alpha`, but for the nodes in
    /// `stale_factors`: a row's Σ f(s_k) then reads one dense array instead
    /// of a node per target, and `start`'s row has a target per tool. A
    /// score written must make its node's entry stale
    /// ([`Scratch::forget_factor`]); an array not as long as the graph is
    /// made anew.
    pub(super) factors: Vec<f64>,
    pub(super) factors_alpha: f64,
    /// Nodes whose score was written since `factors` was last brought up
    /// to date.
    pub(super) stale_factors: Vec<NodeIndex>,
    /// Each long row's out-edges and their running sums, by
    /// [`LongRow::slot`] (see `row_sums.rs`): walking them through the
    /// graph's edge lists reads an edge apiece. Adding an edge to the row
    /// must clear its entry.
    pub(super) sums: [RowSums; 2],
    /// The nodes whose factor the update in progress read again.
    pub(super) refactored: Vec<NodeIndex>,
    /// Each long row's edges by what their weight depends on under its law.
    pub(super) classes: [RowClasses; 2],
}

impl Scratch {
    pub(super) fn forget_factor(&mut self, ix: NodeIndex) {
        self.stale_factors.push(ix);
    }
}

/// A cloned graph starts with empty buffers: they hold nothing of the
/// state that cannot be rebuilt from it.
impl Clone for Scratch {
    fn clone(&self) -> Self {
        Scratch::default()
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            encoder: RowEncoder::default(),
            row_targets: Vec::new(),
            row_edges: Vec::new(),
            by_rank: Vec::new(),
            factors: Vec::new(),
            factors_alpha: f64::NAN,
            stale_factors: Vec::new(),
            sums: Default::default(),
            refactored: Vec::new(),
            classes: Default::default(),
        }
    }
}

impl std::fmt::Debug for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scratch")
    }
}

impl ToolGraph {
    /// `start`, `end` and the tools (first occurrence of each name), no edges.
    pub(super) fn with_nodes<'a>(tools: impl Iterator<Item = &'a String>) -> Self {
        let mut graph = DiGraph::new();
        let mut index = FxHashMap::default();
        let node = |name: &str| Node { name: name.into(), score: 0.0, born: 0, history: Series::default() };
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
        ToolGraph {
            graph,
            index: Arc::new(index),
            start,
            end,
            shared: None,
            iteration: 0,
            start_rescales: Vec::new(),
            row_histories: RowHistories::default(),
            log: OpLog::new(0),
            scratch: Scratch::default(),
            name_rank: NameRank::default(),
            laws: Laws::default(),
            tools_of: None,
        }
    }

    /// Adds the [`ANY_TOOL`] row, with no edges yet: from now on every tool
    /// without out-edges of its own follows it.
    pub(super) fn add_shared_row(&mut self) -> NodeIndex {
        let node = Node { name: ANY_TOOL.into(), score: 0.0, born: 0, history: Series::default() };
        let ix = self.graph.add_node(node);
        Arc::make_mut(&mut self.index).insert(ANY_TOOL.to_owned(), ix);
        self.name_rank = NameRank::default();
        self.shared = Some(ix);
        ix
    }

    /// Starts the op log at the current state, identified by a hash of all
    /// of it: two graphs built differently get different heads, so a store
    /// never takes one for the other.
    pub(super) fn restart_log(&mut self) {
        self.log = OpLog::new(self.content_hash());
    }

    /// The id of the current state (see `ops.rs`).
    pub(super) fn head(&self) -> u64 {
        self.log.head()
    }

    fn content_hash(&self) -> u64 {
        fn series(h: &mut StateHash, points: &[(u32, f64)]) {
            h.word(points.len() as u64);
            for &(at, value) in points {
                h.word(u64::from(at));
                h.float(value);
            }
        }
        let mut h = StateHash::new(0);
        h.word(u64::from(self.iteration));
        series(&mut h, &self.start_rescales);
        h.word(self.graph.node_count() as u64);
        for node in self.graph.node_weights() {
            h.text(&node.name);
            h.float(node.score);
            h.word(u64::from(node.born));
            series(&mut h, node.history.points());
        }
        h.word(self.graph.edge_count() as u64);
        let weights = self.weights();
        for e in self.graph.edge_references() {
            let (edge, life) = (e.weight(), self.row_histories.edge(e.id()));
            h.word(e.source().index() as u64);
            h.word(e.target().index() as u64);
            h.float(edge.prior);
            h.float(weights.at(e.source(), e.target(), edge));
            h.word(u64::from(life.born));
            h.float(life.initial);
            h.word(u64::from(life.rescales_before));
            // As if every edge kept its own series: the state, not how it
            // is held.
            series(&mut h, self.row_histories.points(e.source(), e.id()));
        }
        h.finish()
    }

    /// Adds every name of a library the graph lacks, as `add_tool` does.
    /// `generation` names the library's contents (a value no other
    /// contents have): a graph that took them once, and its clones, skip
    /// the check, where each session of a 16,000-tool library compared
    /// 16,000 names.
    pub fn take_tools<'a>(&mut self, generation: u64, names: impl Iterator<Item = &'a str> + Clone) {
        if self.tools_of == Some(generation) {
            return;
        }
        // A graph built from the library holds its tools in the library's
        // order: that is checked by comparing names in turn, cheaper than
        // looking up every one.
        if !self.tools().eq(names.clone()) {
            for name in names {
                // Reserved names are refused where tools are read (manifests,
                // specs); one that got past them is skipped, as before.
                let _ = self.add_tool(name);
            }
        }
        self.tools_of = Some(generation);
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
        let ix = self.graph.add_node(Node {
            name: name.into(),
            score: 0.0,
            born: self.iteration,
            history: Series::default(),
        });
        Arc::make_mut(&mut self.index).insert(name.to_owned(), ix);
        self.name_rank = NameRank::default();
        self.tools_of = None;
        self.add_edge(ix, ix, EdgeHistory::new(0.5, self.iteration));
        self.add_edge(ix, self.end, EdgeHistory::new(0.5, self.iteration));

        // The rescale does not follow the law, nor does the new edge.
        self.write_out_law(LongRow::Start);
        if existing > 0 {
            let factor = existing as f64 / (existing + 1) as f64;
            let ids: Vec<EdgeIndex> =
                self.graph.edges_directed(self.start, Direction::Outgoing).map(|e| e.id()).collect();
            for &id in &ids {
                let edge = &mut self.graph[id];
                edge.prior *= factor;
                edge.held *= factor;
            }
            let weights = Weights { graph: &self.graph, start: self.start, shared: self.shared, laws: &self.laws };
            self.row_histories.record_rescale(weights, self.start, self.iteration, &ids);
            self.start_rescales.push((self.iteration, factor));
        }
        // `start`'s series may hold points from before this edge: it keeps
        // its own. The new tool's row has none, so its edges follow it.
        self.scratch.sums[LongRow::Start.slot()].clear();
        self.scratch.classes[LongRow::Start.slot()].clear();
        let mut life = EdgeHistory::new(1.0 / (existing + 1) as f64, self.iteration);
        life.rescales_before = self.start_rescales.len() as u32;
        life.follows_row = false;
        let id = self.add_edge(self.start, ix, life);
        self.row_histories.adopt(self.start, id);
        self.log.record(Op::AddTool { name: name.to_owned() });
        Ok(true)
    }

    /// The graph's weights as they are read (see `row_law.rs`).
    pub(super) fn weights(&self) -> Weights<'_> {
        Weights { graph: &self.graph, start: self.start, shared: self.shared, laws: &self.laws }
    }

    /// The node of a long row, if the graph has that row.
    pub(super) fn long_row_node(&self, row: LongRow) -> Option<NodeIndex> {
        match row {
            LongRow::Start => Some(self.start),
            LongRow::Shared => self.shared,
        }
    }

    /// Which long row `ix` is, if it is one.
    pub(super) fn long_row(&self, ix: NodeIndex) -> Option<LongRow> {
        LongRow::ALL.into_iter().find(|&row| self.long_row_node(row) == Some(ix))
    }

    /// Writes a long row's weights into its edges and drops its law, before
    /// an edit the law does not describe.
    pub(super) fn write_out_law(&mut self, row: LongRow) {
        let Some(node) = self.long_row_node(row) else { return };
        if let Some(law) = self.laws.slot(row).take() {
            let ids: Vec<EdgeIndex> = self.graph.edges_directed(node, Direction::Outgoing).map(|e| e.id()).collect();
            for id in ids {
                let to = self.graph.raw_edges()[id.index()].target();
                let edge = &mut self.graph[id];
                edge.held = law.weight(edge.prior, to);
            }
            self.scratch.classes[row.slot()].clear();
        }
    }

    /// Writes every law out (see [`ToolGraph::write_out_law`]).
    pub(super) fn write_out_laws(&mut self) {
        for row in LongRow::ALL {
            self.write_out_law(row);
        }
    }

    /// Adds the edge `from -> to` with its history; its first weight is
    /// its prior and its weight.
    pub(super) fn add_edge(&mut self, from: NodeIndex, to: NodeIndex, life: EdgeHistory) -> EdgeIndex {
        let id = self.graph.add_edge(from, to, Edge::new(life.initial));
        self.row_histories.add_edge(id, life);
        id
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
        self.neighbour_names(ix, direction).into_iter().map(|(n, w)| (n.to_string(), w)).collect()
    }

    fn neighbour_names(&self, ix: NodeIndex, direction: Direction) -> Vec<(&str, f64)> {
        self.neighbour_list(ix, direction).into_iter().map(|(_, name, w)| (&**name, w)).collect()
    }

    /// As [`ToolGraph::out_edges`] and [`ToolGraph::in_edges`] order them,
    /// each neighbour as (node number, name, weight).
    fn neighbour_list(&self, ix: NodeIndex, direction: Direction) -> Vec<NumberedEdge<'_>> {
        let mut out = Vec::new();
        self.neighbour_list_into(ix, direction, &mut Vec::new(), &mut out);
        out
    }

    /// As `neighbour_list`, into `out`, with `list` to work in: a walk over
    /// every row keeps both, not two allocations per row.
    fn neighbour_list_into<'a>(
        &'a self,
        ix: NodeIndex,
        direction: Direction,
        list: &mut Vec<(u32, usize, &'a Arc<str>, f64)>,
        out: &mut Vec<NumberedEdge<'a>>,
    ) {
        fn named<'a>(&(_, number, name, w): &(u32, usize, &'a Arc<str>, f64)) -> (usize, &'a Arc<str>, f64) {
            (number, name, w)
        }
        let rank = self.name_rank.of(&self.graph);
        list.clear();
        out.clear();
        let row = if direction == Direction::Outgoing { self.row_of(ix) } else { ix };
        let edges = self.graph.edges_directed(row, direction);
        match (direction, self.weights().law(row)) {
            // Out of a long row under its law, or a row whose weights are its
            // edges' own: decided once for the row, not per edge.
            (Direction::Outgoing, Some(law)) => list.extend(edges.map(|e| {
                let to = e.target();
                (rank[to.index()], to.index(), &self.graph[to].name, law.weight(e.weight().prior, to))
            })),
            (Direction::Outgoing, _) => list.extend(edges.map(|e| {
                let to = e.target();
                (rank[to.index()], to.index(), &self.graph[to].name, e.weight().held)
            })),
            (Direction::Incoming, _) => {
                let weights = self.weights();
                for e in edges {
                    let from = e.source();
                    let weight = weights.at(from, e.target(), e.weight());
                    if Some(from) == self.shared {
                        // Every tool that follows the shared row leads here.
                        list.extend(
                            self.followers().map(|f| (rank[f.index()], f.index(), &self.graph[f].name, weight)),
                        );
                    } else {
                        list.push((rank[from.index()], from.index(), &self.graph[from].name, weight));
                    }
                }
            }
        }
        // Heaviest first, then by name: by its rank, the same order without
        // a string compared (`start`'s row is a library of ties).
        let order = |a: &(u32, usize, &Arc<str>, f64), b: &(u32, usize, &Arc<str>, f64)| {
            b.3.total_cmp(&a.3).then(a.0.cmp(&b.0))
        };
        // The sort handles a row already in order, or in reverse order
        // (tools that joined in name order), in one pass, and a short row
        // costs it little: both go to it.
        let monotone =
            || list.is_sorted_by(|a, b| order(a, b).is_le()) || list.is_sorted_by(|a, b| order(a, b).is_ge());
        let shared = (list.len() * 16 >= rank.len() && list.len() > 64 && !monotone())
            .then(|| majority(list.iter().map(|e| e.3.to_bits())))
            .flatten();
        let Some((bits, _)) = shared else {
            // A tool's row is often two edges (itself and `end`): ordered
            // here, not through the sort's call.
            if let [a, b] = &mut list[..] {
                if order(a, b).is_gt() {
                    std::mem::swap(a, b);
                }
            } else {
                list.sort_unstable_by(order);
            }
            out.extend(list.iter().map(named));
            return;
        };
        // A long row whose edges mostly weigh the same (`start`'s, of a
        // whole library): those are put in order by placing each at its
        // rank, and only the others are sorted, then merged around them.
        // Equal under `total_cmp` is equal bits, so the order is the sort's.
        let shared = f64::from_bits(bits);
        let mut at_rank = vec![u32::MAX; rank.len()];
        let mut others = Vec::new();
        for (i, e) in list.iter().enumerate() {
            if e.3.to_bits() == bits {
                at_rank[e.0 as usize] = i as u32;
            } else {
                others.push(*e);
            }
        }
        others.sort_unstable_by(order);
        let heavier = others.partition_point(|e| e.3.total_cmp(&shared).is_gt());
        out.reserve(list.len());
        out.extend(others[..heavier].iter().map(named));
        out.extend(at_rank.iter().filter(|&&i| i != u32::MAX).map(|&i| named(&list[i as usize])));
        out.extend(others[heavier..].iter().map(named));
    }

    /// Visits every row, `start`'s, then the [`ANY_TOOL`] row if there is
    /// one, then the tools' in the order they joined (a tool that follows
    /// the shared row with no edges of its own), each as ((node number,
    /// name), its score, its out-edges as
    /// [`ToolGraph::out_edges`] orders them, as (number, name, weight)),
    /// borrowing the graph's names. Numbers are dense (below the node
    /// count) and name one node each: a snapshot of 16,000 tools walks
    /// 48,000 edges, and numbers it without hashing a name. The rows are
    /// lent one at a time, from buffers the walk keeps: at 16,000 rows,
    /// a list allocated per row was a good part of a snapshot's cost.
    pub fn for_each_row<'a>(&'a self, mut visit: impl FnMut(NumberedNode<'a>, f64, &[NumberedEdge<'a>])) {
        let (mut list, mut out) = (Vec::new(), Vec::new());
        for ix in std::iter::once(self.start).chain(self.shared).chain(self.tool_indices()) {
            let node = &self.graph[ix];
            if self.row_of(ix) == ix {
                self.neighbour_list_into(ix, Direction::Outgoing, &mut list, &mut out);
            } else {
                out.clear();
            }
            visit((ix.index(), &node.name), node.score, &out);
        }
    }

    /// The current weight of the edge `from -> to`, if there is one.
    pub fn weight(&self, from: &str, to: &str) -> Option<f64> {
        self.edge(from, to).map(|id| self.weights().of(id))
    }

    /// The prior w⁰ of the edge `from -> to`, if there is one.
    pub fn prior(&self, from: &str, to: &str) -> Option<f64> {
        self.edge(from, to).map(|id| self.graph[id].prior)
    }

    fn edge(&self, from: &str, to: &str) -> Option<EdgeIndex> {
        let (&a, &b) = (self.index.get(from)?, self.index.get(to)?);
        let a = self.row_of(a);
        // `start` and the shared row have an edge to every tool while a tool
        // has few in-edges, so walk whichever list is short.
        if a == self.start || Some(a) == self.shared {
            self.graph.edges_directed(b, Direction::Incoming).find(|e| e.source() == a).map(|e| e.id())
        } else {
            self.graph.find_edge(a, b)
        }
    }

    /// Puts the graph back as a trace recorded it: every edge's weight,
    /// every node's score (0 when not listed) and the iteration. The priors
    /// stay this graph's own, so it must have been built as the recorded one
    /// was (same trajectories, same tools). Fails naming the first edge or
    /// node the recorded graph has and this one lacks.
    pub fn restore<'a>(
        &mut self,
        iteration: u32,
        edges: impl IntoIterator<Item = (&'a str, &'a str, f64)>,
        scores: &[(String, f64)],
    ) -> Result<(), GraphError> {
        self.write_out_laws();
        for (from, to, w) in edges {
            let id = self.edge(from, to).ok_or_else(|| GraphError::NotATool { name: format!("{from} -> {to}") })?;
            self.graph[id].held = w;
        }
        for ix in self.graph.node_indices().collect::<Vec<_>>() {
            self.graph[ix].score = 0.0;
        }
        self.scratch.factors.clear();
        for (name, score) in scores {
            let &ix = self.index.get(name).ok_or_else(|| GraphError::NotATool { name: name.clone() })?;
            self.graph[ix].score = *score;
        }
        self.iteration = iteration;
        Ok(())
    }

    /// A node's accumulated score.
    pub fn score(&self, node: &str) -> Option<f64> {
        self.index.get(node).map(|&ix| self.graph[ix].score)
    }

    pub fn contains(&self, node: &str) -> bool {
        self.index.contains_key(node)
    }

    /// Number of tools (`start`, `end` and the [`ANY_TOOL`] row not counted).
    pub fn tool_count(&self) -> usize {
        self.graph.node_count() - 2 - usize::from(self.shared.is_some())
    }

    /// Number of edges, each tool that follows the [`ANY_TOOL`] row counted
    /// with that row's: as many as [`ToolGraph::out_edges`] lists in all.
    pub fn edge_count(&self) -> usize {
        let Some(shared) = self.shared else { return self.graph.edge_count() };
        let row = self.graph.edges_directed(shared, Direction::Outgoing).count();
        self.graph.edge_count() - row + self.followers().count() * row
    }

    /// Whether `tool` has no out-edges of its own and follows the
    /// [`ANY_TOOL`] row: nothing sets its next steps apart yet, and a walk
    /// from it takes its candidates from the retriever.
    pub fn follows_any_tool_row(&self, tool: &str) -> bool {
        self.index.get(tool).is_some_and(|&ix| self.row_of(ix) != ix)
    }

    /// Tool names in the order they joined the graph.
    pub fn tools(&self) -> impl Iterator<Item = &str> {
        self.tool_indices().map(|ix| &*self.graph[ix].name)
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
        std::iter::once((node.born, 0.0)).chain(node.history.points().iter().copied()).collect()
    }

    /// The edge's weight per iteration: its prior when created (iteration 0
    /// for the initial graph), then one point per iteration in which it
    /// changed, or in which an update wrote its row as one shared weight
    /// (see `row_history.rs`).
    pub fn weight_series(&self, from: &str, to: &str) -> Vec<(u32, f64)> {
        let Some(id) = self.edge(from, to) else {
            return Vec::new();
        };
        let life = self.row_histories.edge(id);
        let row = self.graph.raw_edges()[id.index()].source();
        let points = self.row_histories.points(row, id);
        std::iter::once((life.born, life.initial)).chain(points.iter().copied()).collect()
    }

    pub(super) fn tool_index(&self, name: &str) -> Option<NodeIndex> {
        self.index.get(name).copied().filter(|&ix| self.is_tool(ix))
    }

    pub(super) fn tool_indices(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        self.graph.node_indices().filter(move |&ix| self.is_tool(ix))
    }

    fn is_tool(&self, ix: NodeIndex) -> bool {
        ix != self.start && ix != self.end && Some(ix) != self.shared
    }

    /// The node whose out-edges are `ix`'s: the [`ANY_TOOL`] row for a tool
    /// with none of its own, else `ix` itself.
    pub(super) fn row_of(&self, ix: NodeIndex) -> NodeIndex {
        match self.shared {
            Some(shared) if self.is_tool(ix) && self.graph.edges_directed(ix, Direction::Outgoing).next().is_none() => {
                shared
            }
            _ => ix,
        }
    }

    /// The tools that follow the [`ANY_TOOL`] row, in the order they joined.
    pub(super) fn followers(&self) -> impl Iterator<Item = NodeIndex> + '_ {
        self.shared.into_iter().flat_map(move |_| self.tool_indices().filter(move |&ix| self.row_of(ix) != ix))
    }
}

pub(super) fn is_reserved(name: &str) -> bool {
    name == START || name == END || name == ANY_TOOL
}
