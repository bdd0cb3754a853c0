//! A `GraphUpdate` is what the trace keeps of ToolNet's update, so folding
//! it over the weights before must give the graph's weights after, edge for
//! edge and bit for bit, with its lists sorted by name. Names here join the
//! graph out of name order, so an update sorted by join order would fail.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use switchyard::graph::{START, ToolGraph};

fn all_weights(graph: &ToolGraph) -> BTreeMap<(String, String), f64> {
    std::iter::once(START)
        .chain(graph.tools())
        .flat_map(|from| graph.out_edges(from).into_iter().map(move |(to, w)| ((from.to_owned(), to), w)))
        .collect()
}

#[test]
fn folding_each_update_over_the_weights_gives_the_graph() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    // Zero-padded names in shuffled order: join order is not name order.
    let mut names: Vec<String> = (0..300).map(|i| format!("t{i:03}")).collect();
    for i in (1..names.len()).rev() {
        names.swap(i, rng.random_range(0..=i));
    }
    let trajectories: Vec<Vec<String>> =
        (0..200).map(|_| (0..4).map(|_| names[rng.random_range(0..names.len())].clone()).collect()).collect();
    let mut graph = ToolGraph::from_trajectories(&names, &trajectories).unwrap_or_else(|e| panic!("graph: {e}"));
    let mut weights = all_weights(&graph);
    let mut listed_any_row = false;
    for step in 0..40 {
        let deltas: BTreeMap<String, i32> =
            (0..5).map(|_| (names[rng.random_range(0..names.len())].clone(), rng.random_range(-3..=3))).collect();
        let update = graph.apply_scores(&deltas, 0.5, 0.5);
        let keys: Vec<(&str, &str)> = update.weights.iter().map(|c| (&*c.from, &*c.to)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "step {step}: weights sorted by (from, to), once each");
        assert!(update.rows.windows(2).all(|w| w[0].from < w[1].from), "step {step}: rows sorted");
        let mut scores: Vec<&str> = update.scores.iter().map(|(n, _)| &**n).collect();
        scores.dedup();
        assert!(scores.windows(2).all(|w| w[0] < w[1]), "step {step}: scores sorted");
        listed_any_row |= !update.rows.is_empty();
        for ((from, to), w) in weights.iter_mut() {
            *w = update.weight_after(from, to, *w);
        }
        let actual = all_weights(&graph);
        assert_eq!(weights.len(), actual.len());
        for (key, w) in &actual {
            assert_eq!(weights[key].to_bits(), w.to_bits(), "step {step}: {key:?}");
        }
    }
    assert!(listed_any_row, "some update wrote a row as a shared weight");
}
