//! A long row's edges grouped by what their weight depends on under a law
//! (`row_law.rs`): the edge's prior and its target's factor. Edges of a
//! group weigh the same under any law, so an update of the row is
//! reported group by group, and only the edges it lists are visited: at
//! 16,000 tools most of them are one group (the same prior, score 0), and an
//! update that listed a dozen edges walked all of them.
//!
//! What is reported is what `RowEncoder::encode` reports of the row's
//! edges one by one (same shared weight, same listed edges, up to their
//! order, which the update puts in name order afterwards).

use petgraph::graph::{EdgeIndex, NodeIndex};
use rustc_hash::FxHashMap;

use super::row_law::Rule;
use super::update::CHANGE_EPSILON;

/// Edges with the same prior and target factor (their bits).
struct Group {
    prior: f64,
    factor: f64,
    /// Places in the row.
    members: Vec<u32>,
}

/// The groups of a long row, kept between updates: building them hashes
/// every edge. Empty until built; cleared whenever the row or the law is
/// made anew.
#[derive(Default)]
pub(super) struct RowClasses {
    groups: Vec<Group>,
    by_key: FxHashMap<(u64, u64), u32>,
    /// Per place: its group, and its place among the group's members.
    group_of: Vec<u32>,
    slot: Vec<u32>,
    /// Per place: the weight before the update of an edge whose group
    /// changed in it (NaN otherwise; weights are never NaN).
    moved_old: Vec<f64>,
    /// The place of each edge moved in this update.
    moved: Vec<u32>,
    /// Groups with members.
    live: usize,
    counts: Vec<(u64, usize)>,
}

impl RowClasses {
    pub(super) fn clear(&mut self) {
        self.groups.clear();
        self.by_key.clear();
        self.group_of.clear();
        self.slot.clear();
        self.live = 0;
    }

    /// Whether the groups are built for a row of `len` edges.
    pub(super) fn is_built(&self, len: usize) -> bool {
        self.group_of.len() == len && len > 0
    }

    /// Groups the row's edges, given as (prior, factor) in row order.
    pub(super) fn build(&mut self, edges: impl Iterator<Item = (f64, f64)>) {
        self.clear();
        let mut last: Option<((u64, u64), u32)> = None;
        for (place, (prior, factor)) in edges.enumerate() {
            let key = (prior.to_bits(), factor.to_bits());
            // Neighbours in the row are often in the same group: no hash then.
            let group = match last {
                Some((k, g)) if k == key => g,
                _ => self.group_for(prior, factor),
            };
            last = Some((key, group));
            self.slot.push(self.groups[group as usize].members.len() as u32);
            self.groups[group as usize].members.push(place as u32);
            self.group_of.push(group);
        }
        self.live = self.groups.iter().filter(|g| !g.members.is_empty()).count();
        self.moved_old.clear();
        self.moved_old.resize(self.group_of.len(), f64::NAN);
    }

    fn group_for(&mut self, prior: f64, factor: f64) -> u32 {
        let key = (prior.to_bits(), factor.to_bits());
        let groups = &mut self.groups;
        *self.by_key.entry(key).or_insert_with(|| {
            groups.push(Group { prior, factor, members: Vec::new() });
            (groups.len() - 1) as u32
        })
    }

    /// Moves the edge at `place` to the group of its new factor, noting
    /// its weight before the update (under `old`).
    pub(super) fn move_to(&mut self, place: usize, factor: f64, old: Rule) {
        let from = self.group_of[place];
        let prior = self.groups[from as usize].prior;
        let to = self.group_for(prior, factor);
        if to == from {
            return;
        }
        let slot = self.slot[place] as usize;
        let members = &mut self.groups[from as usize].members;
        members.swap_remove(slot);
        if let Some(&other) = members.get(slot) {
            self.slot[other as usize] = slot as u32;
        }
        if members.is_empty() {
            self.live -= 1;
        }
        let members = &mut self.groups[to as usize].members;
        if members.is_empty() {
            self.live += 1;
        }
        self.slot[place] = members.len() as u32;
        members.push(place as u32);
        self.group_of[place] = to;
        if self.moved_old[place].is_nan() {
            let g = &self.groups[from as usize];
            self.moved_old[place] = old.weight(g.prior, g.factor);
            self.moved.push(place as u32);
        }
    }

    /// Whether so many groups went empty that walking them costs more
    /// than building them again.
    pub(super) fn is_sparse(&self) -> bool {
        self.groups.len() > 64 && self.live * 4 < self.groups.len()
    }

    /// Reports the update from `old` to `new` as `RowEncoder::encode`
    /// would from the row's edges one by one: appends the edges to list
    /// to `listed` with their old weights, and returns the shared weight
    /// if the row is written as one, and whether any weight changed at all.
    /// Forgets the moves.
    pub(super) fn encode(
        &mut self,
        old: Rule,
        new: Rule,
        edges: &[(NodeIndex, EdgeIndex)],
        listed: &mut Vec<((NodeIndex, EdgeIndex), f64)>,
    ) -> (Option<f64>, bool) {
        let is_changed = |old: f64, new: f64| (new - old).abs() > CHANGE_EPSILON;
        // Counted group by group, as if each moved edge had been in its new
        // group before; then each moved edge is counted again as it was.
        let (mut n_changed, mut n_touched) = (0usize, 0usize);
        self.counts.clear();
        for g in self.groups.iter().filter(|g| !g.members.is_empty()) {
            let (o, n) = (old.weight(g.prior, g.factor), new.weight(g.prior, g.factor));
            let k = g.members.len();
            n_changed += k * usize::from(is_changed(o, n));
            n_touched += k * usize::from(o.to_bits() != n.to_bits());
            self.counts.push((n.to_bits(), k));
        }
        for &place in &self.moved {
            let g = &self.groups[self.group_of[place as usize] as usize];
            let (as_if, n) = (old.weight(g.prior, g.factor), new.weight(g.prior, g.factor));
            let was = self.moved_old[place as usize];
            n_changed = n_changed - usize::from(is_changed(as_if, n)) + usize::from(is_changed(was, n));
            n_touched =
                n_touched - usize::from(as_if.to_bits() != n.to_bits()) + usize::from(was.to_bits() != n.to_bits());
        }
        // The commonest new weight; among equally common ones the smallest
        // bits (as the encoder's count chooses).
        self.counts.sort_unstable_by_key(|&(bits, _)| bits);
        let (mut best, mut i) = ((0u64, 0usize), 0);
        while i < self.counts.len() {
            let bits = self.counts[i].0;
            let mut count = 0;
            while i < self.counts.len() && self.counts[i].0 == bits {
                count += self.counts[i].1;
                i += 1;
            }
            if count > best.1 {
                best = (bits, count);
            }
        }
        let old_of = |g: &Group, place: u32, moved_old: &[f64]| {
            let was = moved_old[place as usize];
            if was.is_nan() { old.weight(g.prior, g.factor) } else { was }
        };
        let rest = (n_changed >= 3 && edges.len() - best.1 + 1 < n_changed).then_some(best.0);
        for g in self.groups.iter().filter(|g| !g.members.is_empty()) {
            let n = new.weight(g.prior, g.factor);
            match rest {
                Some(bits) if n.to_bits() != bits => {
                    listed.extend(g.members.iter().map(|&p| (edges[p as usize], old_of(g, p, &self.moved_old))));
                }
                Some(_) => {}
                None if is_changed(old.weight(g.prior, g.factor), n) => listed.extend(
                    g.members
                        .iter()
                        .map(|&p| (edges[p as usize], old_of(g, p, &self.moved_old)))
                        .filter(|&(_, was)| is_changed(was, n)),
                ),
                // A moved edge may have changed where its group did not.
                None => {}
            }
        }
        if rest.is_none() {
            for &place in &self.moved {
                let g = &self.groups[self.group_of[place as usize] as usize];
                let n = new.weight(g.prior, g.factor);
                let was = self.moved_old[place as usize];
                if !is_changed(old.weight(g.prior, g.factor), n) && is_changed(was, n) {
                    listed.push((edges[place as usize], was));
                }
            }
        }
        for &place in &self.moved {
            self.moved_old[place as usize] = f64::NAN;
        }
        self.moved.clear();
        (rest.map(f64::from_bits), n_touched > 0)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::super::row_law::LongRow;
    use super::super::tool_graph::{ANY_TOOL, END, START, ToolGraph};

    #[derive(Debug, Clone)]
    enum Edit {
        Scores(Vec<(usize, i32)>, usize, usize),
        SetScore(usize, i8, usize, usize),
        Recompute(usize, usize),
        AddTool,
        Clone,
    }

    const ALPHAS: [f64; 3] = [0.5, 1.0, 2.0];
    const BETAS: [f64; 4] = [0.0, 0.3, 0.5, 1.0];

    fn edit() -> impl Strategy<Value = Edit> {
        // Mostly scores under the same α and β, as a session runs.
        prop_oneof![
            6 => (prop::collection::vec((0usize..12, -3i32..=3), 1..4), Just(1usize), Just(2usize))
                .prop_map(|(d, a, b)| Edit::Scores(d, a, b)),
            2 => (prop::collection::vec((0usize..12, -3i32..=3), 1..4), 0usize..3, 0usize..4)
                .prop_map(|(d, a, b)| Edit::Scores(d, a, b)),
            1 => (0usize..12, -4i8..4, 0usize..3, 0usize..4).prop_map(|(t, s, a, b)| Edit::SetScore(t, s, a, b)),
            1 => (0usize..3, 0usize..4).prop_map(|(a, b)| Edit::Recompute(a, b)),
            1 => Just(Edit::AddTool),
            1 => Just(Edit::Clone),
        ]
    }

    /// Every weight of the graph, bit for bit, with the long rows' series.
    fn state(graph: &ToolGraph) -> String {
        let mut out = String::new();
        graph.for_each_row(|(_, name), score, edges| {
            out += &format!("{name} {score:?}:");
            for (_, to, w) in edges {
                out += &format!(" {to}={:x}", w.to_bits());
            }
            out += "\n";
        });
        for tool in graph.tools() {
            out += &format!("{tool} {:?}\n", graph.weight_series(START, tool));
            out += &format!("{tool} {:?}\n", graph.weight_series(ANY_TOOL, tool));
        }
        out += &format!("{END} {:?}\n", graph.weight_series(ANY_TOOL, END));
        out
    }

    proptest! {
        /// The law, its groups and their encoding give the updates, the
        /// weights and their histories that the row updated edge by edge
        /// gives (the graph below writes the laws out before every edit, so
        /// each update of `start` and of the shared row is made edge by
        /// edge), with trajectories or without (the shared row).
        #[test]
        fn the_row_held_as_a_law_updates_as_edge_by_edge(
            tools in 3usize..10,
            trajectories in prop::option::of(prop::collection::vec(prop::collection::vec(0usize..10, 1..4), 0..6)),
            edits in prop::collection::vec(edit(), 1..24),
        ) {
            let mut names: Vec<String> = (0..tools).map(|i| format!("t{i}")).collect();
            let mut held = match trajectories {
                Some(trajectories) => {
                    let trajectories: Vec<Vec<String>> = trajectories
                        .iter()
                        .map(|t| t.iter().map(|&i| names[i % tools].clone()).collect())
                        .collect();
                    ToolGraph::from_trajectories(&names, &trajectories).unwrap()
                }
                None => ToolGraph::fully_connected(&names),
            };
            let mut written = held.clone();
            for edit in edits {
                written.write_out_laws();
                let name = |i: usize, names: &[String]| names[i % names.len()].clone();
                let (a, b) = match edit {
                    Edit::Scores(deltas, a, b) => {
                        let deltas: BTreeMap<String, i32> = deltas.iter().map(|&(t, d)| (name(t, &names), d)).collect();
                        let (alpha, beta) = (ALPHAS[a], BETAS[b]);
                        (held.apply_scores(&deltas, alpha, beta), written.apply_scores(&deltas, alpha, beta))
                    }
                    Edit::SetScore(t, score, a, b) => {
                        let (tool, score, alpha, beta) = (name(t, &names), f64::from(score), ALPHAS[a], BETAS[b]);
                        (held.set_score(&tool, score, alpha, beta).unwrap(), written.set_score(&tool, score, alpha, beta).unwrap())
                    }
                    Edit::Recompute(a, b) => (held.recompute_all(ALPHAS[a], BETAS[b]), written.recompute_all(ALPHAS[a], BETAS[b])),
                    Edit::AddTool => {
                        names.push(format!("n{}", names.len()));
                        let tool = names.last().unwrap();
                        prop_assert_eq!(held.add_tool(tool).unwrap(), written.add_tool(tool).unwrap());
                        continue;
                    }
                    Edit::Clone => {
                        held = held.clone();
                        continue;
                    }
                };
                prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
                prop_assert_eq!(state(&held), state(&written));
                prop_assert_eq!(held.head(), written.head());
            }
        }
    }

    #[test]
    fn a_row_left_as_it_was_is_then_updated_as_edge_by_edge() {
        // With α = 1000 a negative score makes f(s) 0: every tool below 0
        // leaves Σf at 0 and the row is not updated; the next update must
        // read the factors of both scorings.
        let names: Vec<String> = (0..5).map(|i| format!("t{i}")).collect();
        let mut held = ToolGraph::fully_connected(&names);
        let mut written = held.clone();
        let all: BTreeMap<String, i32> = names.iter().map(|n| (n.clone(), -2)).collect();
        let one = BTreeMap::from([("t2".to_owned(), 3)]);
        for deltas in [BTreeMap::from([("t0".to_owned(), 1)]), all, one] {
            written.write_out_laws();
            let (a, b) = (held.apply_scores(&deltas, 1000.0, 0.5), written.apply_scores(&deltas, 1000.0, 0.5));
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            assert_eq!(state(&held), state(&written));
        }
        assert!(held.weight(START, "t2").unwrap() > 0.5, "t2 alone has a factor above 0");
    }

    #[test]
    fn updates_under_one_alpha_are_made_group_by_group() {
        let names: Vec<String> = (0..40).map(|i| format!("t{i}")).collect();
        let mut graph = ToolGraph::fully_connected(&names);
        let deltas = |tool: &str, d: i32| BTreeMap::from([(tool.to_owned(), d)]);
        let built = |graph: &ToolGraph, row: LongRow, len| graph.scratch.classes[row.slot()].is_built(len);
        graph.apply_scores(&deltas("t3", 1), 1.0, 0.5);
        for row in LongRow::ALL {
            assert!(graph.laws.of(row).is_some(), "the first update leaves a law");
        }
        assert!(!built(&graph, LongRow::Start, 40), "made edge by edge");
        assert!(!built(&graph, LongRow::Shared, 41), "made edge by edge");
        let update = graph.apply_scores(&deltas("t7", -2), 1.0, 0.5);
        assert!(built(&graph, LongRow::Start, 40), "the second, group by group");
        assert!(built(&graph, LongRow::Shared, 41), "the second, group by group");
        // The shared row leads to `end` too (score 0): 39 alike.
        let rest = update.rows.iter().find(|r| &*r.from == ANY_TOOL).map(|r| r.rest);
        let listed: Vec<&str> = update.weights.iter().filter(|w| &*w.from == ANY_TOOL).map(|w| &*w.to).collect();
        assert_eq!(listed, ["t3", "t7"]);
        assert_eq!(rest, graph.weight(ANY_TOOL, END));
        assert_eq!(graph.weight("t0", "t5"), graph.weight(ANY_TOOL, "t5"), "t0 follows the shared row");
        // t3 and t7 stand apart from the 38 others, which share one weight.
        let rest = update.rows.iter().find(|r| &*r.from == START).map(|r| r.rest);
        let listed: Vec<&str> = update.weights.iter().filter(|w| &*w.from == START).map(|w| &*w.to).collect();
        assert_eq!(listed, ["t3", "t7"]);
        assert_eq!(rest, graph.weight(START, "t0"));
        let expected = 0.5 / 40.0 + 0.5 * (1.0 / (38.0 + 2.0 + (-2.0f64).exp()));
        assert!((graph.weight(START, "t0").unwrap() - expected).abs() < 1e-15);
        // A changed α makes the row edge by edge again.
        graph.apply_scores(&deltas("t7", 1), 2.0, 0.5);
        assert!(!built(&graph, LongRow::Start, 40));
        assert!(!built(&graph, LongRow::Shared, 41));
    }
}
