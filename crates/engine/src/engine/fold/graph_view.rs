//! ToolNet's graph as the events tell it, with what a view asks of a huge
//! graph every frame kept as the events come (who leads to a node, how
//! many, the tools by score): the index changes with the graph in the same
//! `apply`, so the two live in one file.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::graph_history::History;
use crate::engine::event::GraphSnapshot;
use crate::graph::{ANY_TOOL, END, GraphUpdate, START};

/// ToolNet's graph as the events tell it, with the history a chart needs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphView {
    pub iteration: u32,
    /// The rows and the scores change only through the fold (`apply`):
    /// the index below follows them there.
    pub out: BTreeMap<String, BTreeMap<String, f64>>,
    pub scores: BTreeMap<String, f64>,
    /// Every node's score and every edge's weight after each update that
    /// changed it, per node and per edge, each series bounded (see
    /// `graph_history.rs`): [`GraphView::score_changes`] and
    /// [`GraphView::weight_changes`] read it.
    pub history: History,
    /// What the views ask of a huge graph every frame, kept as the events
    /// come: who leads to a node, how many, and the tools by score.
    index: NodeIndex,
}

impl GraphView {
    pub(super) fn from_snapshot(s: &GraphSnapshot) -> Self {
        let mut g = GraphView { iteration: s.iteration, ..Default::default() };
        // A row at a time, put in name order first: `start`'s row holds
        // every tool, and a map built from sorted entries costs a compare
        // per entry where inserting them one by one costs a search each.
        // The sort is stable, so of a target listed twice the later weight
        // wins, as it would inserted in turn.
        let mut sorted: Vec<(&str, f64)> = Vec::new();
        for (from, row) in s.named_rows() {
            sorted.clear();
            sorted.extend(row);
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            let row = g.out.entry(from.to_string()).or_default();
            if row.is_empty() {
                *row = sorted.iter().map(|&(to, w)| (to.to_string(), w)).collect();
            } else {
                row.extend(sorted.iter().map(|&(to, w)| (to.to_string(), w)));
            }
        }
        for (n, sc) in &s.scores {
            g.scores.insert(n.clone(), *sc);
        }
        // The rows come in name order, so each node's predecessors do too.
        let score = |n: &str| g.scores.get(n).copied().unwrap_or(0.0);
        let mut joined = Vec::new();
        for (from, row) in &g.out {
            joined.extend(g.index.mark(from, score(from)));
            let f = g.index.id(from);
            for (to, &w) in row {
                let t = g.index.id(to);
                g.index.preds[t as usize].push(f);
                if leads_to(from, to, w) {
                    g.index.in_degree[t as usize] += 1;
                }
                if from == START {
                    joined.extend(g.index.mark(to, score(to)));
                }
            }
        }
        for (n, sc) in &g.scores {
            joined.extend(g.index.mark(n, *sc));
        }
        g.index.ranked = joined.into_iter().collect();
        g
    }

    pub(super) fn apply(&mut self, u: &GraphUpdate, bump: bool) {
        if bump {
            self.iteration = u.iteration;
        }
        for (n, s) in &u.scores {
            let old = self.scores.insert(n.to_string(), *s);
            self.index.rescore(n, old, *s);
        }
        // A row at a time, walked beside its listed edges (`start`'s lists
        // thousands). The engine sorts them by (from, to); an update read
        // from a trace may not be, and folds as if applied one by one.
        let mut rest = &u.weights[..];
        while let Some(first) = rest.first() {
            let from = first.from.clone();
            // Counted, not searched for: a trace's update need not be sorted.
            let n = rest.iter().take_while(|c| c.from == from).count();
            let (listed, next) = rest.split_at(n);
            rest = next;
            let score = |scores: &BTreeMap<String, f64>, n: &str| scores.get(n).copied().unwrap_or(0.0);
            self.index.join(&from, score(&self.scores, &from));
            let row = match self.out.get_mut(&*from) {
                Some(row) => row,
                None => self.out.entry(from.to_string()).or_default(),
            };
            let mut added = Vec::new();
            if few_of(listed.len(), row.len()) {
                // A few edges of a long row (`start`'s, where most tools
                // share the row's `rest`): a search each, where a walk would
                // compare names all along the row.
                for c in listed {
                    match row.get_mut(&*c.to) {
                        Some(w) => {
                            let old = std::mem::replace(w, c.new);
                            count_in(&mut self.index, &from, &c.to, old, c.new);
                        }
                        None => added.push(c),
                    }
                }
            } else {
                let mut pending = listed.iter().peekable();
                for (to, w) in row.iter_mut() {
                    while let Some(c) = pending.next_if(|c| &*c.to <= to.as_str()) {
                        if &*c.to == to.as_str() {
                            let old = std::mem::replace(w, c.new);
                            count_in(&mut self.index, &from, to, old, c.new);
                        } else {
                            added.push(c);
                        }
                    }
                    if pending.peek().is_none() {
                        break;
                    }
                }
                added.extend(pending);
            }
            for c in added {
                // A target listed twice (not from this engine) is an
                // existing edge by the second time.
                let old = row.insert(c.to.to_string(), c.new);
                count_in(&mut self.index, &from, &c.to, old.unwrap_or(0.0), c.new);
                if old.is_none() {
                    self.index.add_edge(&from, &c.to);
                    if &*from == START {
                        self.index.join(&c.to, score(&self.scores, &c.to));
                    }
                }
            }
        }
        for r in &u.rows {
            let Some(row) = self.out.get_mut(&*r.from) else { continue };
            // The update's listed edges of this row, sorted by `to` as the
            // row is: a walk beside it, not a search per edge.
            let lo = u.weights.partition_point(|c| c.from < r.from);
            let hi = lo + u.weights[lo..].partition_point(|c| c.from == r.from);
            let listed = &u.weights[lo..hi];
            if few_of(listed.len(), row.len()) {
                // The whole row to `rest` without a name compared, then the
                // few listed edges back by a search each. A count that goes
                // old -> rest -> new ends where old -> new would.
                for (to, w) in row.iter_mut() {
                    count_in(&mut self.index, &r.from, to, *w, r.rest);
                    *w = r.rest;
                }
                for c in listed {
                    if let Some(w) = row.get_mut(&*c.to) {
                        count_in(&mut self.index, &r.from, &c.to, *w, c.new);
                        *w = c.new;
                    }
                }
            } else {
                let mut listed = listed.iter().peekable();
                for (to, w) in row.iter_mut() {
                    while listed.next_if(|c| &*c.to < to.as_str()).is_some() {}
                    // Of a target listed twice, the later weight, as one
                    // edge at a time would leave it.
                    let mut new = r.rest;
                    while let Some(c) = listed.next_if(|c| &*c.to == to.as_str()) {
                        new = c.new;
                    }
                    count_in(&mut self.index, &r.from, to, *w, new);
                    *w = new;
                }
            }
        }
        self.history.record(self.iteration, u);
    }

    pub fn weight(&self, from: &str, to: &str) -> Option<f64> {
        self.row(from)?.get(to).copied()
    }

    /// `node`'s out-edges: its own row, or for a tool without one the
    /// [`ANY_TOOL`] row it follows (a graph built without trajectories
    /// holds the tools' alike rows as that one).
    pub fn row(&self, node: &str) -> Option<&BTreeMap<String, f64>> {
        self.out.get(node).or_else(|| if self.follows_any_tool_row(node) { self.out.get(ANY_TOOL) } else { None })
    }

    /// Whether `node` is a tool with no row of its own that follows the
    /// [`ANY_TOOL`] row.
    pub fn follows_any_tool_row(&self, node: &str) -> bool {
        self.is_tool(node) && !self.out.contains_key(node) && self.out.contains_key(ANY_TOOL)
    }

    /// How many [`GraphView::followers`] there are, without walking them:
    /// `start`'s row but the few tools with rows of their own.
    fn follower_count(&self) -> usize {
        let Some(start) = self.out.contains_key(ANY_TOOL).then(|| self.out.get(START)).flatten() else { return 0 };
        start.len() - self.out.keys().filter(|k| start.contains_key(*k)).count()
    }

    /// The tools that follow the [`ANY_TOOL`] row, in name order: those of
    /// `start`'s row (which leads to every tool) without a row of their own.
    fn followers(&self) -> impl Iterator<Item = &str> {
        let rows = &self.out;
        let start = rows.contains_key(ANY_TOOL).then(|| rows.get(START)).flatten();
        start.into_iter().flat_map(|r| r.keys()).map(String::as_str).filter(move |n| !rows.contains_key(*n))
    }

    /// The edge's weight after each update that changed it, as
    /// (iteration, weight), oldest first (thinned past `SERIES_CAP` points).
    pub fn weight_changes(&self, from: &str, to: &str) -> Vec<(u32, f64)> {
        let from = if self.follows_any_tool_row(from) { ANY_TOOL } else { from };
        self.history.weight_changes(from, to).to_vec()
    }

    /// The node's score after each update that changed it, as
    /// (iteration, score), oldest first (thinned past `SERIES_CAP` points).
    pub fn score_changes(&self, node: &str) -> &[(u32, f64)] {
        self.history.score_changes(node)
    }

    pub fn score(&self, node: &str) -> f64 {
        self.scores.get(node).copied().unwrap_or(0.0)
    }

    /// How many other nodes lead to `node` with a positive weight (self
    /// edges and edges to `end` aside): kept by the fold, so a view of a
    /// huge graph need not walk every edge.
    pub fn in_degree(&self, node: &str) -> u32 {
        let own = self.index.ids.get(node).map_or(0, |&id| self.index.in_degree[id as usize]);
        match self.out.get(ANY_TOOL).and_then(|row| row.get(node)) {
            // The shared row stands for every tool that follows it, but
            // `node` itself (a self edge).
            Some(&w) if w > 0.0 => {
                let followers = self.follower_count() - usize::from(self.follows_any_tool_row(node));
                own.saturating_sub(1) + followers as u32
            }
            _ => own,
        }
    }

    /// Edges into `node`, as (from, weight), in the order of `from`'s name.
    pub fn predecessors(&self, node: &str) -> Vec<(&str, f64)> {
        self.predecessors_cut(node, usize::MAX).0
    }

    /// As [`GraphView::predecessors`], but of the tools that follow the
    /// shared row only the first `keep` in name order, with the count of
    /// them all. They all weigh the same, so a view of the `k` strongest
    /// needs at most `k` of them, not the library's thousands every frame.
    pub fn predecessors_cut(&self, node: &str, keep: usize) -> (Vec<(&str, f64)>, usize) {
        let Some(&id) = self.index.ids.get(node) else { return (Vec::new(), 0) };
        let names = &self.index.names;
        let preds = &self.index.preds[id as usize];
        let mut out: Vec<(&str, f64)> = Vec::with_capacity(preds.len());
        let mut shared = None;
        for f in preds {
            let from = &*names[*f as usize];
            let Some(&w) = self.out.get(from).and_then(|row| row.get(node)) else { continue };
            if from == ANY_TOOL {
                shared = Some(w);
            } else {
                out.push((from, w));
            }
        }
        let Some(w) = shared else {
            let total = out.len();
            return (out, total);
        };
        // Every tool that follows the shared row leads here: merged in name
        // order with the others, both lists being in it.
        let total = out.len() + self.follower_count();
        let own = std::mem::take(&mut out);
        let mut own = own.into_iter().peekable();
        for f in self.followers().take(keep) {
            while let Some(o) = own.next_if(|o| o.0 < f) {
                out.push(o);
            }
            out.push((f, w));
        }
        out.extend(own);
        (out, total)
    }

    /// The tool nodes (neither `start` nor `end`: those with a row, a score
    /// or an edge from `start`) with their score, highest first, then by name.
    pub fn by_score(&self) -> impl Iterator<Item = (&str, f64)> {
        self.index.ranked.iter().map(|(s, n)| (&**n, s.0))
    }

    /// How many tool nodes [`GraphView::by_score`] lists.
    pub fn tool_count(&self) -> usize {
        self.index.ranked.len()
    }

    /// Whether [`GraphView::by_score`] lists `node`.
    pub fn is_tool(&self, node: &str) -> bool {
        self.index.ids.get(node).is_some_and(|id| self.index.ranked_in[*id as usize])
    }
}

/// A score in the ranked order: highest first, by `total_cmp`.
#[derive(Clone, Copy, Debug)]
struct Desc(f64);

impl PartialEq for Desc {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Desc {}

impl PartialOrd for Desc {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Desc {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0)
    }
}

/// The graph's nodes under interned names: each node's predecessors, and
/// the tool nodes ranked by score. Nodes and edges are never removed, so
/// both change only where an update adds an edge or moves a score.
#[derive(Clone, Debug, Default, PartialEq)]
struct NodeIndex {
    ids: rustc_hash::FxHashMap<Arc<str>, u32>,
    names: Vec<Arc<str>>,
    /// Per node, the nodes with an edge to it, in name order.
    preds: Vec<Vec<u32>>,
    /// Per node, how many of `preds` lead to it (see [`GraphView::in_degree`]).
    in_degree: Vec<u32>,
    /// Per node, whether it is in `ranked`.
    ranked_in: Vec<bool>,
    /// The tool nodes by (score, highest first; name).
    ranked: BTreeSet<(Desc, Arc<str>)>,
}

impl NodeIndex {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        let name: Arc<str> = Arc::from(name);
        self.names.push(Arc::clone(&name));
        self.ids.insert(name, id);
        self.preds.push(Vec::new());
        self.in_degree.push(0);
        self.ranked_in.push(false);
        id
    }

    fn add_edge(&mut self, from: &str, to: &str) {
        let (f, t) = (self.id(from), self.id(to));
        let names = &self.names;
        let preds = &mut self.preds[t as usize];
        if let Err(at) = preds.binary_search_by(|p| (*names[*p as usize]).cmp(from)) {
            preds.insert(at, f);
        }
    }

    /// Makes `name` a ranked tool node (with `score`) unless it is one already.
    fn join(&mut self, name: &str, score: f64) {
        if let Some(entry) = self.mark(name, score) {
            self.ranked.insert(entry);
        }
    }

    /// As [`NodeIndex::join`], but returns the entry for `ranked` (None: a
    /// ranked node already, or not a tool): a snapshot's thousands of tools
    /// go in at once.
    fn mark(&mut self, name: &str, score: f64) -> Option<(Desc, Arc<str>)> {
        if name == START || name == END || name == ANY_TOOL {
            return None;
        }
        let id = self.id(name) as usize;
        if self.ranked_in[id] {
            return None;
        }
        self.ranked_in[id] = true;
        Some((Desc(score), Arc::clone(&self.names[id])))
    }

    /// A node's score moved from `old` (None: it had none) to `new`.
    fn rescore(&mut self, name: &str, old: Option<f64>, new: f64) {
        if name == START || name == END || name == ANY_TOOL {
            return;
        }
        let id = self.id(name) as usize;
        if self.ranked_in[id] {
            let key = Arc::clone(&self.names[id]);
            self.ranked.remove(&(Desc(old.unwrap_or(0.0)), Arc::clone(&key)));
            self.ranked.insert((Desc(new), key));
        } else {
            self.join(name, new);
        }
    }
}

/// Whether `listed` edges of a row of `row` are few enough to be searched
/// for one by one rather than met in a walk of the whole row (a search
/// compares about log2(row) names, a walk one per edge of the row).
fn few_of(listed: usize, row: usize) -> bool {
    listed.saturating_mul(16) < row
}

/// Whether an edge of weight `w` counts into its target's in-degree.
fn leads_to(from: &str, to: &str, w: f64) -> bool {
    w > 0.0 && counts_in(from, to)
}

/// Whether an edge counts into its target's in-degree when its weight is
/// positive: self edges and edges to `end` never do.
fn counts_in(from: &str, to: &str) -> bool {
    from != to && to != END
}

/// Counts an edge's change of sign into the in-degrees (see
/// [`GraphView::in_degree`]).
fn count_in(index: &mut NodeIndex, from: &str, to: &str, old: f64, new: f64) {
    // The sign first: most changes keep it, and the names cost a compare
    // each (an update of `start`'s row passes thousands).
    if (old > 0.0) == (new > 0.0) || !counts_in(from, to) {
        return;
    }
    let t = index.id(to) as usize;
    let n = &mut index.in_degree[t];
    if new > 0.0 {
        *n += 1;
    } else {
        *n = n.saturating_sub(1);
    }
}

#[cfg(test)]
mod graph_view_tests {
    use super::*;
    use crate::graph::{GraphUpdate, WeightChange};

    fn change(from: &str, to: &str, new: f64) -> WeightChange {
        WeightChange { from: from.into(), to: to.into(), old: 0.0, new }
    }

    /// What the fold must reach, one edge after the other.
    fn one_by_one(view: &GraphView, u: &GraphUpdate) -> BTreeMap<String, BTreeMap<String, f64>> {
        let mut out = view.out.clone();
        for c in &u.weights {
            out.entry(c.from.to_string()).or_default().insert(c.to.to_string(), c.new);
        }
        out
    }

    /// Positive edges into each node, self edges and `end` aside, counted
    /// afresh from the rows.
    fn in_degree_of(out: &BTreeMap<String, BTreeMap<String, f64>>) -> BTreeMap<String, u32> {
        let mut n = BTreeMap::new();
        for (from, row) in out {
            for (to, w) in row {
                if *w > 0.0 && from != to && to != END {
                    *n.entry(to.clone()).or_default() += 1;
                }
            }
        }
        n
    }

    /// The fold's in-degree of every node the rows name, those of 0 left out.
    fn in_degrees(view: &GraphView) -> BTreeMap<String, u32> {
        let nodes: BTreeSet<&String> =
            view.out.iter().flat_map(|(f, row)| std::iter::once(f).chain(row.keys())).collect();
        nodes.into_iter().map(|n| (n.clone(), view.in_degree(n))).filter(|(_, k)| *k > 0).collect()
    }

    /// A graph built without trajectories holds its tools' rows as the
    /// `*` row: the view reads a tool's edges through it, counts every
    /// tool that follows it as a predecessor, and folds its updates.
    #[test]
    fn tools_without_rows_of_their_own_read_the_any_tool_row() {
        use crate::graph::ToolGraph;
        let tools: Vec<String> = ["a", "b", "c"].iter().map(|t| t.to_string()).collect();
        let mut g = ToolGraph::fully_connected(&tools);
        let mut view = GraphView::from_snapshot(&GraphSnapshot::of(&g));
        let same = |view: &GraphView, g: &ToolGraph| {
            for from in ["start", "a", "b", "c"] {
                for to in ["a", "b", "c", END] {
                    assert_eq!(view.weight(from, to), g.weight(from, to), "{from} -> {to}");
                }
            }
        };
        same(&view, &g);
        assert!(view.follows_any_tool_row("a") && !view.follows_any_tool_row(START));
        assert_eq!(view.tool_count(), 3, "`*` is no tool");
        let preds: Vec<&str> = view.predecessors("b").into_iter().map(|(n, _)| n).collect();
        assert_eq!(preds, ["a", "b", "c", "start"]);
        let (cut, total) = view.predecessors_cut("b", 1);
        assert_eq!((cut.iter().map(|(n, _)| *n).collect::<Vec<_>>(), total), (vec!["a", "start"], 4));
        assert_eq!(view.in_degree("b"), 3, "start, a and c; not b's self edge");
        let update = g.apply_scores(&BTreeMap::from([("a".to_string(), 2)]), 0.5, 0.5);
        assert!(update.rows.iter().any(|r| &*r.from == ANY_TOOL), "{update:?}");
        view.apply(&update, true);
        same(&view, &g);
        assert_eq!(view.weight_changes("b", "a"), view.weight_changes(ANY_TOOL, "a"));
        assert_eq!(view.weight_changes("c", "a").last().map(|p| Some(p.1)), Some(g.weight("c", "a")));
    }

    #[test]
    fn a_shared_row_with_a_few_listed_edges_folds_as_if_one_edge_at_a_time() {
        // 40 tools: the fold walks `start`'s row beside the listed edges;
        // 400: it searches for each listed edge.
        for n in [40, 400] {
            shared_row_folds_as_if_one_edge_at_a_time(n);
        }
    }

    fn shared_row_folds_as_if_one_edge_at_a_time(n: usize) {
        let tools: Vec<String> = (0..n).map(|i| format!("t{i:03}")).collect();
        let mut edges: Vec<(String, String, f64)> =
            tools.iter().map(|t| ("start".to_string(), t.clone(), 1.0 / n as f64)).collect();
        edges.extend(tools.iter().map(|t| (t.clone(), "end".to_string(), 1.0)));
        edges.push(("t001".into(), "t007".into(), 0.5));
        let snapshot = GraphSnapshot::new(0, edges, vec![]);
        let mut view = GraphView::from_snapshot(&snapshot);
        // `start`'s row written as a shared weight: a target twice (the
        // later wins), one whose edge drops to 0, and a tool the graph lacks.
        let update = GraphUpdate {
            iteration: 1,
            scores: vec![("t007".into(), -3.0)],
            weights: vec![
                change("start", "new", 0.05),
                change("start", "t003", 0.1),
                change("start", "t003", 0.12),
                change("start", "t007", 0.0),
            ],
            rows: vec![crate::graph::RowChange { from: "start".into(), rest: 0.02 }],
        };
        let mut expected = view.out.clone();
        for w in expected.get_mut("start").unwrap().values_mut() {
            *w = 0.02;
        }
        for c in &update.weights {
            expected.get_mut("start").unwrap().insert(c.to.to_string(), c.new);
        }
        view.apply(&update, true);
        assert_eq!(view.out, expected, "{n} tools");
        assert_eq!(view.weight("start", "t003"), Some(0.12));
        assert_eq!(view.weight("start", "t020"), Some(0.02));
        assert_eq!(in_degrees(&view), in_degree_of(&view.out), "{n} tools");
        assert_eq!(view.in_degree("t007"), 1, "only t001 still leads to t007");
        assert_eq!(view.predecessors("new"), [("start", 0.05)]);
        assert!(view.is_tool("new"));
        assert_eq!(view.by_score().last(), Some(("t007", -3.0)));
        // The history the charts read: listed edges their own weight, the
        // others the row's.
        assert_eq!(view.weight_changes("start", "t003").last(), Some(&(1, 0.12)));
        assert_eq!(view.weight_changes("start", "t020").last(), Some(&(1, 0.02)));
    }

    #[test]
    fn an_update_out_of_order_with_repeats_and_new_edges_folds_as_if_one_edge_at_a_time() {
        let snapshot = GraphSnapshot::new(
            0,
            [("start", "b", 0.5), ("start", "d", 0.5), ("b", "d", 1.0), ("d", "end", 1.0)]
                .map(|(f, t, w)| (f.to_string(), t.to_string(), w)),
            vec![],
        );
        let mut view = GraphView::from_snapshot(&snapshot);
        assert_eq!(view.predecessors("d"), [("b", 1.0), ("start", 0.5)]);
        // As a hand-edited trace may hold it: rows interleaved, a target
        // twice, targets out of order, edges and nodes the graph lacks.
        let update = GraphUpdate {
            iteration: 1,
            scores: vec![("c".into(), 2.0)],
            weights: vec![
                change("start", "d", 0.0),
                change("start", "a", 0.25),
                change("b", "c", 0.5),
                change("start", "d", 0.75),
                change("start", "c", 0.125),
                change("b", "d", 0.5),
            ],
            rows: vec![],
        };
        let expected = one_by_one(&view, &update);
        view.apply(&update, true);
        assert_eq!(view.out, expected);
        assert_eq!(view.iteration, 1);
        assert_eq!(view.predecessors("c"), [("b", 0.5), ("start", 0.125)]);
        assert_eq!(view.predecessors("d"), [("b", 0.5), ("start", 0.75)]);
        assert_eq!(view.by_score().map(|(n, _)| n).collect::<Vec<_>>(), ["c", "a", "b", "d"]);
        // Positive edges into each node, self edges and `end` aside.
        let in_degree: BTreeMap<String, u32> =
            [("a", 1), ("b", 1), ("c", 2), ("d", 2)].map(|(n, k)| (n.to_string(), k)).into();
        assert_eq!(in_degrees(&view), in_degree);
        assert_eq!(in_degrees(&view), in_degree_of(&view.out));
        // The same update sorted, as the engine writes it, folds the same.
        let mut again = GraphView::from_snapshot(&snapshot);
        let mut sorted = update.clone();
        sorted.weights.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
        sorted.weights.dedup_by(|later, earlier| {
            let same = (&later.from, &later.to) == (&earlier.from, &earlier.to);
            if same {
                earlier.new = later.new;
            }
            same
        });
        again.apply(&sorted, true);
        assert_eq!(again.out, view.out);
        assert_eq!(in_degrees(&again), in_degrees(&view));
    }
}
