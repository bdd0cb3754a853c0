//! The graph's state file: the whole graph (nodes, edges with w⁰ and w,
//! scores, iteration, history) as one JSON document, written atomically, and
//! checked for consistency when read back.

use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::Path;

use petgraph::Direction;
use petgraph::graph::DiGraph;
use petgraph::visit::EdgeRef;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::elements::{Edge, EdgeHistory, Node};
use super::error::GraphError;
use super::ops::OpLog;
use super::row_history::RowHistories;
use super::series::Series;
use super::tool_graph::{ANY_TOOL, END, NameRank, START, Scratch, ToolGraph};

/// Version 2 keeps the history a row's edges share once for the row
/// (`row_histories`, and `follows_row` on its edges); version 1, where every
/// edge has its own, is still read. A graph with the `*` row is written as
/// version 3: its tools have no edges of their own, which a build that
/// reads only 1 and 2 would take for a broken file.
const FORMAT_VERSION: u32 = 2;
const FORMAT_VERSION_SHARED_ROW: u32 = 3;
const FORMAT_VERSIONS_READ: [u32; 3] = [1, 2, 3];
const ROW_TOLERANCE: f64 = 1e-6;

#[derive(Serialize, Deserialize)]
struct StoredGraph {
    version: u32,
    iteration: u32,
    nodes: Vec<StoredNode>,
    edges: Vec<StoredEdge>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    start_rescales: Vec<(u32, f64)>,
    /// The id of the saved state (see `ops.rs`), which a journal beside the
    /// file must extend; files from before it get the hash of their content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    head: Option<u64>,
    /// The series of rows whose edges follow them (see `row_history.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    row_histories: Vec<StoredRow>,
}

#[derive(Serialize, Deserialize)]
struct StoredRow {
    from: String,
    history: Vec<(u32, f64)>,
}

#[derive(Serialize, Deserialize)]
struct StoredNode {
    name: String,
    score: f64,
    #[serde(default)]
    born: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    history: Vec<(u32, f64)>,
}

#[derive(Serialize, Deserialize)]
struct StoredEdge {
    from: String,
    to: String,
    prior: f64,
    weight: f64,
    #[serde(default)]
    born: u32,
    /// The weight the edge was created with; the prior if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    initial: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    rescales_before: u32,
    /// The edge's history is its row's; `history` is then empty.
    #[serde(default, skip_serializing_if = "is_false")]
    follows_row: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    history: Vec<(u32, f64)>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Writes the whole graph (nodes, edges with w⁰ and w, scores, iteration,
/// history) as JSON, atomically: a crash leaves the old file or the new one,
/// never a mix.
pub(super) fn write(graph: &ToolGraph, path: &Path) -> Result<(), GraphError> {
    let io_error = |source| GraphError::Io { path: path.to_owned(), source };
    let stored = to_stored(graph);
    let file = atomic_write_file::AtomicWriteFile::open(path).map_err(io_error)?;
    let mut writer = BufWriter::new(file);
    serde_json::to_writer(&mut writer, &stored).map_err(|source| GraphError::Json { path: path.to_owned(), source })?;
    writer.flush().map_err(io_error)?;
    let file = writer.into_inner().map_err(|e| io_error(e.into_error()))?;
    file.commit().map_err(io_error)
}

/// Reads a graph written by [`write`], checking that it is consistent (known
/// nodes, the required edges, rows summing to 1).
pub(super) fn read(path: &Path) -> Result<ToolGraph, GraphError> {
    let bytes = std::fs::read(path).map_err(|source| GraphError::Io { path: path.to_owned(), source })?;
    let stored: StoredGraph =
        serde_json::from_slice(&bytes).map_err(|source| GraphError::Json { path: path.to_owned(), source })?;
    from_stored(stored).map_err(|reason| GraphError::Invalid { path: path.to_owned(), reason })
}

fn to_stored(graph: &ToolGraph) -> StoredGraph {
    let g = &graph.graph;
    let nodes = g
        .node_indices()
        .map(|ix| {
            let n = &g[ix];
            StoredNode { name: n.name.to_string(), score: n.score, born: n.born, history: n.history.points().to_vec() }
        })
        .collect();
    let edges = g
        .edge_references()
        .map(|e| {
            let (w, life) = (e.weight(), graph.row_histories.edge(e.id()));
            let weight = graph.weights().at(e.source(), e.target(), w);
            StoredEdge {
                from: g[e.source()].name.to_string(),
                to: g[e.target()].name.to_string(),
                prior: w.prior,
                weight,
                born: life.born,
                initial: Some(life.initial),
                rescales_before: life.rescales_before,
                follows_row: life.follows_row,
                history: life.history.points().to_vec(),
            }
        })
        .collect();
    let row_histories = g
        .node_indices()
        .filter(|&ix| !graph.row_histories.row(ix).is_empty())
        .map(|ix| StoredRow { from: g[ix].name.to_string(), history: graph.row_histories.row(ix).to_vec() })
        .collect();
    StoredGraph {
        version: if graph.shared.is_some() { FORMAT_VERSION_SHARED_ROW } else { FORMAT_VERSION },
        iteration: graph.iteration,
        nodes,
        edges,
        start_rescales: graph.start_rescales.clone(),
        head: Some(graph.head()),
        row_histories,
    }
}

fn from_stored(stored: StoredGraph) -> Result<ToolGraph, String> {
    if !FORMAT_VERSIONS_READ.contains(&stored.version) {
        return Err(format!("format version {} (this build reads {FORMAT_VERSIONS_READ:?})", stored.version));
    }
    let iteration = stored.iteration;
    let mut graph = DiGraph::with_capacity(stored.nodes.len(), stored.edges.len());
    let mut index = FxHashMap::with_capacity_and_hasher(stored.nodes.len(), Default::default());
    for node in stored.nodes {
        let what = format!("node `{}`", node.name);
        if !node.score.is_finite() {
            return Err(format!("{what} has score {}", node.score));
        }
        if (node.name == START || node.name == END || node.name == ANY_TOOL) && node.score != 0.0 {
            return Err(format!("{what} must keep score 0"));
        }
        check_series(&what, &node.history, node.born, iteration, false)?;
        let name = node.name.clone();
        let ix = graph.add_node(Node {
            name: node.name.into(),
            score: node.score,
            born: node.born,
            history: Series::from_points(node.history),
        });
        if index.insert(name, ix).is_some() {
            return Err(format!("{what} appears twice"));
        }
    }
    let start = *index.get(START).ok_or("no `start` node")?;
    let end = *index.get(END).ok_or("no `end` node")?;
    let shared = index.get(ANY_TOOL).copied();
    if shared.is_some() != (stored.version == FORMAT_VERSION_SHARED_ROW) {
        return Err(format!("a `{ANY_TOOL}` row belongs in a file of format version {FORMAT_VERSION_SHARED_ROW} only"));
    }

    for (i, &(at, factor)) in stored.start_rescales.iter().enumerate() {
        if at > iteration || !(factor > 0.0 && factor <= 1.0) {
            return Err(format!("start rescale {i} ({at}, {factor}) is out of range"));
        }
    }

    let mut row_histories = RowHistories::default();
    // Each row's first point: an edge that follows a row cannot be younger.
    let mut row_begins = FxHashMap::default();
    for row in stored.row_histories {
        let what = format!("the row history of `{}`", row.from);
        let &from = index.get(&row.from).ok_or_else(|| format!("{what} is of an unknown node"))?;
        check_series(&what, &row.history, graph[from].born, iteration, true)?;
        if let Some(&(first, _)) = row.history.first() {
            row_begins.insert(from, first);
        }
        if !row_histories.row(from).is_empty() {
            return Err(format!("{what} appears twice"));
        }
        row_histories.set_row(from, row.history);
    }

    let mut pairs = HashSet::with_capacity(stored.edges.len());
    for edge in stored.edges {
        let what = format!("edge {} -> {}", edge.from, edge.to);
        let from = *index.get(&edge.from).ok_or_else(|| format!("{what} starts at an unknown node"))?;
        let to = *index.get(&edge.to).ok_or_else(|| format!("{what} ends at an unknown node"))?;
        if from == end || to == start || (from == start && to == end) || Some(to) == shared {
            return Err(format!("{what} is not allowed"));
        }
        if !pairs.insert((from, to)) {
            return Err(format!("{what} appears twice"));
        }
        let initial = edge.initial.unwrap_or(edge.prior);
        for (label, w) in [("prior", edge.prior), ("weight", edge.weight), ("initial", initial)] {
            check_weight(&what, label, w)?;
        }
        check_series(&what, &edge.history, edge.born, iteration, true)?;
        if edge.follows_row {
            if !edge.history.is_empty() {
                return Err(format!("{what} follows its row's history but has one of its own"));
            }
            if row_begins.get(&from).is_some_and(|&first| first < edge.born) {
                return Err(format!("{what} follows a row history older than the edge"));
            }
        }
        if edge.rescales_before as usize > stored.start_rescales.len() {
            return Err(format!("{what} refers to a start rescale that is not there"));
        }
        let id = graph.add_edge(from, to, Edge { prior: edge.prior, held: edge.weight });
        row_histories.add_edge(
            id,
            EdgeHistory {
                born: edge.born,
                initial,
                rescales_before: edge.rescales_before,
                follows_row: edge.follows_row,
                history: Series::from_points(edge.history),
            },
        );
        if !edge.follows_row {
            row_histories.adopt(from, id);
        }
    }

    for ix in graph.node_indices() {
        let name = &graph[ix].name;
        let has_row = graph.edges_directed(ix, Direction::Outgoing).next().is_some();
        if Some(ix) == shared && !pairs.contains(&(ix, end)) {
            return Err(format!("the `{ANY_TOOL}` row has no edge to `end`"));
        }
        // A tool without out-edges follows the shared row, if there is one.
        let follows = shared.is_some() && !has_row;
        if ix != start && ix != end && Some(ix) != shared && !follows {
            for (to, label) in [(ix, "a self-edge"), (end, "an edge to `end`")] {
                if !pairs.contains(&(ix, to)) {
                    return Err(format!("tool `{name}` has no {label}"));
                }
            }
        }
        if ix != start && ix != end && Some(ix) != shared && !pairs.contains(&(start, ix)) {
            return Err(format!("`start` has no edge to tool `{name}`"));
        }
        let (mut prior, mut weight, mut any) = (0.0, 0.0, false);
        for e in graph.edges_directed(ix, Direction::Outgoing) {
            prior += e.weight().prior;
            weight += e.weight().held;
            any = true;
        }
        if any {
            for (label, sum) in [("prior", prior), ("weight", weight)] {
                if (sum - 1.0).abs() > ROW_TOLERANCE {
                    return Err(format!("out-{label}s of `{name}` sum to {sum}, not 1"));
                }
            }
        }
    }

    let mut graph = ToolGraph {
        graph,
        index: std::sync::Arc::new(index),
        start,
        end,
        shared,
        iteration,
        start_rescales: stored.start_rescales,
        row_histories,
        log: OpLog::new(0),
        scratch: Scratch::default(),
        name_rank: NameRank::default(),
        laws: Default::default(),
        tools_of: None,
    };
    match stored.head {
        Some(head) => graph.log = OpLog::new(head),
        None => graph.restart_log(),
    }
    Ok(graph)
}

fn check_weight(what: &str, label: &str, w: f64) -> Result<(), String> {
    if (-ROW_TOLERANCE..=1.0 + ROW_TOLERANCE).contains(&w) {
        Ok(())
    } else {
        Err(format!("{what} has {label} {w}, outside [0, 1]"))
    }
}

/// A history series: points from `born` on, by increasing iteration, not past
/// the graph's iteration, with finite (and, for weights, valid) values.
fn check_series(what: &str, series: &[(u32, f64)], born: u32, iteration: u32, weights: bool) -> Result<(), String> {
    if born > iteration {
        return Err(format!("{what} was born at iteration {born}, after {iteration}"));
    }
    let mut last = None;
    for &(at, value) in series {
        if at < born || at > iteration || last.is_some_and(|l| at <= l) {
            return Err(format!("{what} has a history point at iteration {at} out of order"));
        }
        if !value.is_finite() {
            return Err(format!("{what} has history value {value}"));
        }
        if weights {
            check_weight(what, "history value", value)?;
        }
        last = Some(at);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn missing_self_edge_is_rejected() {
        let tools = vec!["a".to_owned()];
        let mut stored = to_stored(&ToolGraph::from_trajectories(&tools, &[]).unwrap_or_else(|e| panic!("{e}")));
        stored.edges.retain(|e| !(e.from == "a" && e.to == "a"));
        // Keep the row summing to 1 so only the missing edge is wrong.
        for e in stored.edges.iter_mut().filter(|e| e.from == "a") {
            e.prior = 1.0;
            e.weight = 1.0;
        }
        let err = from_stored(stored).err().unwrap_or_default();
        assert!(err.contains("self-edge"), "{err}");
    }

    #[test]
    fn unknown_edge_endpoint_is_rejected() {
        let tools = vec!["a".to_owned()];
        let mut stored = to_stored(&ToolGraph::fully_connected(&tools));
        stored.edges[0].to = "ghost".to_owned();
        let err = from_stored(stored).err().unwrap_or_default();
        assert!(err.contains("unknown node"), "{err}");
    }

    /// A graph whose `start` row was written as a shared weight, so its
    /// edges follow the row's series.
    fn learnt() -> ToolGraph {
        let tools: Vec<String> = (0..8).map(|i| format!("t{i}")).collect();
        let mut g = ToolGraph::from_trajectories(&tools, &[]).unwrap_or_else(|e| panic!("{e}"));
        for tool in &tools[..5] {
            g.apply_scores(&BTreeMap::from([(tool.clone(), 1)]), 0.5, 0.5);
        }
        g
    }

    #[test]
    fn a_version_1_file_with_a_series_per_edge_reads_as_the_same_graph() {
        let g = learnt();
        let mut stored = to_stored(&g);
        assert!(stored.edges.iter().any(|e| e.follows_row), "the test needs a following edge");
        // As version 1 wrote it: every edge with its own series.
        let rows: BTreeMap<String, Vec<(u32, f64)>> =
            stored.row_histories.drain(..).map(|r| (r.from, r.history)).collect();
        for e in stored.edges.iter_mut().filter(|e| e.follows_row) {
            e.history = rows.get(&e.from).cloned().unwrap_or_default();
            e.follows_row = false;
        }
        stored.version = 1;
        let json = serde_json::to_string(&stored).unwrap_or_default();
        assert!(!json.contains("follows_row") && !json.contains("row_histories"));
        let back = from_stored(serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}")))
            .unwrap_or_else(|e| panic!("{e}"));
        for from in std::iter::once(START).chain(g.tools()) {
            for (to, _) in g.out_edges(from) {
                assert_eq!(back.weight_series(from, &to), g.weight_series(from, &to), "{from} -> {to}");
            }
        }
    }

    #[test]
    fn a_following_edge_with_a_series_of_its_own_is_rejected() {
        let mut stored = to_stored(&learnt());
        let edge = stored.edges.iter_mut().find(|e| e.follows_row);
        if let Some(edge) = edge {
            edge.history = vec![(1, 0.1)];
        }
        let err = from_stored(stored).err().unwrap_or_default();
        assert!(err.contains("follows its row's history but has one of its own"), "{err}");
    }

    #[test]
    fn the_any_tool_row_round_trips_as_version_3_and_only_there() {
        let tools: Vec<String> = (0..6).map(|i| format!("t{i}")).collect();
        let mut g = ToolGraph::fully_connected(&tools);
        g.apply_scores(&BTreeMap::from([("t1".to_string(), 2)]), 0.5, 0.5);
        let stored = to_stored(&g);
        assert_eq!(stored.version, 3);
        assert_eq!(stored.edges.len(), 2 * tools.len() + 1, "start's row and the shared one");
        let back = from_stored(stored).unwrap_or_else(|e| panic!("{e}"));
        for from in std::iter::once(START).chain(g.tools()) {
            assert_eq!(back.out_edges(from), g.out_edges(from), "{from}");
        }
        let mut older = to_stored(&g);
        older.version = 2;
        let err = from_stored(older).err().unwrap_or_default();
        assert!(err.contains("format version 3 only"), "{err}");
    }

    #[test]
    fn node_index_order_survives_a_round_trip() {
        let tools: Vec<String> = ["x", "b", "a"].iter().map(|s| s.to_string()).collect();
        let g = ToolGraph::fully_connected(&tools);
        let back = from_stored(to_stored(&g)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back.tools().collect::<Vec<_>>(), ["x", "b", "a"]);
    }
}
