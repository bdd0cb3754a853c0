//! The history of ToolNet's scores and weights that the workbench charts,
//! kept per node and per edge under interned names, each series bounded.
//!
//! A series is a node's score, or an edge's weight, after each update that
//! changed it, as (iteration, value). It keeps every change up to
//! [`SERIES_CAP`] points; past that it is thinned to one point per stretch
//! of iterations (the last change in it, as the chart reads a step
//! function), keeping its first point, so a chart still spans the whole
//! session at about the resolution it draws (512 points at most).
//!
//! A row an update wrote as one shared weight (`start`'s, whose edges to
//! the tools move together) goes into one series for the row; an edge of
//! that row gets a series of its own only once an update lists it, begun
//! with the row's series, and from then on takes the row's shared weights
//! when an update does not list it. Memory is so bounded by the edges and
//! nodes that ever changed on their own, not by the session's length.

use rustc_hash::FxHashMap as HashMap;

use crate::graph::GraphUpdate;

/// The most points a series keeps before it is thinned to half as many.
pub const SERIES_CAP: usize = 1024;

/// One value's changes, (iteration, value), oldest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    points: Vec<(u32, f64)>,
}

impl Series {
    pub fn points(&self) -> &[(u32, f64)] {
        &self.points
    }

    fn push(&mut self, iteration: u32, value: f64) {
        self.points.push((iteration, value));
        if self.points.len() > SERIES_CAP {
            self.thin();
        }
    }

    /// Down to at most `SERIES_CAP / 2 + 1` points: the first, then the last
    /// change in each stretch of `stride` iterations.
    fn thin(&mut self) {
        let (first, last) = match (self.points.first(), self.points.last()) {
            (Some(f), Some(l)) => (f.0, l.0),
            _ => return,
        };
        let span = (last - first) as usize + 1;
        let stride = span.div_ceil(SERIES_CAP / 2).max(1) as u32;
        let bucket = |p: &(u32, f64)| (p.0 - first) / stride;
        let mut kept: Vec<(u32, f64)> = Vec::with_capacity(SERIES_CAP / 2 + 2);
        kept.push(self.points[0]);
        for p in &self.points[1..] {
            let n = kept.len();
            if n > 1 && bucket(&kept[n - 1]) == bucket(p) {
                kept[n - 1] = *p;
            } else {
                kept.push(*p);
            }
        }
        // `kept` sits in the old allocation's place; the capacity stays
        // one cap's worth, which the series will fill again.
        self.points.clear();
        self.points.extend(kept);
    }
}

/// Scores per node and weights per edge, their names interned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    scores: HashMap<u32, Series>,
    /// Edges an update listed at least once.
    edges: HashMap<(u32, u32), Series>,
    /// Rows an update wrote as a shared weight: the shared weight's series.
    rows: HashMap<u32, Series>,
    /// Per such row, its edges that have a series of their own.
    row_edges: HashMap<u32, Vec<u32>>,
}

impl History {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        id
    }

    /// Records what `u` changed, at `iteration`.
    pub fn record(&mut self, iteration: u32, u: &GraphUpdate) {
        for (n, s) in &u.scores {
            let id = self.intern(n);
            self.scores.entry(id).or_default().push(iteration, *s);
        }
        let mut listed = Vec::with_capacity(u.weights.len());
        for c in &u.weights {
            let (from, to) = (self.intern(&c.from), self.intern(&c.to));
            listed.push((from, to));
            if !self.edges.contains_key(&(from, to)) {
                // An edge of a shared row begins with the row's history.
                let begun = self.rows.get(&from).cloned().unwrap_or_default();
                self.edges.insert((from, to), begun);
                self.row_edges.entry(from).or_default().push(to);
            }
            if let Some(s) = self.edges.get_mut(&(from, to)) {
                s.push(iteration, c.new);
            }
        }
        listed.sort_unstable();
        for r in &u.rows {
            let from = self.intern(&r.from);
            self.rows.entry(from).or_default().push(iteration, r.rest);
            for to in self.row_edges.get(&from).into_iter().flatten() {
                if listed.binary_search(&(from, *to)).is_err()
                    && let Some(s) = self.edges.get_mut(&(from, *to))
                {
                    s.push(iteration, r.rest);
                }
            }
        }
    }

    /// The node's score after each update that changed it.
    pub fn score_changes(&self, node: &str) -> &[(u32, f64)] {
        self.ids.get(node).and_then(|id| self.scores.get(id)).map(Series::points).unwrap_or_default()
    }

    /// The edge's weight after each update that changed it.
    pub fn weight_changes(&self, from: &str, to: &str) -> &[(u32, f64)] {
        let Some(f) = self.ids.get(from) else {
            return &[];
        };
        let edge = self.ids.get(to).and_then(|t| self.edges.get(&(*f, *t)));
        edge.or_else(|| self.rows.get(f)).map(Series::points).unwrap_or_default()
    }

    /// How many series there are and the points they hold: (series, points).
    pub fn size(&self) -> (usize, usize) {
        let all = self.scores.values().chain(self.edges.values()).chain(self.rows.values());
        all.fold((0, 0), |(n, p), s| (n + 1, p + s.points.len()))
    }
}
