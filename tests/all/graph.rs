use std::collections::BTreeMap;

use proptest::prelude::*;
use switchyard::graph::{
    ANY_TOOL, END, GraphError, GraphUpdate, START, ToolGraph, WeightChange, WeightFormat, read_trajectories,
    score_factor,
};

const TOL: f64 = 1e-9;

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn deltas(list: &[(&str, i32)]) -> BTreeMap<String, i32> {
    list.iter().map(|&(n, d)| (n.to_owned(), d)).collect()
}

fn w(g: &ToolGraph, from: &str, to: &str) -> f64 {
    g.weight(from, to).unwrap_or_else(|| panic!("no edge {from} -> {to}"))
}

fn assert_close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-6, "expected {expected}, got {actual}");
}

/// JSON keeps f64 to within an ulp or so, not always bit for bit.
fn assert_series_close(a: &[(u32, f64)], b: &[(u32, f64)]) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!(x.0 == y.0 && (x.1 - y.1).abs() < 1e-12, "{a:?} vs {b:?}");
    }
}

/// Every node with out-edges has weights in [0, 1] summing to 1.
fn assert_rows_stochastic(g: &ToolGraph) {
    let nodes = g.tools().map(str::to_owned).chain([START.to_owned()]);
    for node in nodes {
        let row = g.out_edges(&node);
        if row.is_empty() {
            continue;
        }
        let sum: f64 = row.iter().map(|(_, w)| w).sum();
        assert!((sum - 1.0).abs() < TOL, "row {node} sums to {sum}");
        for (to, w) in &row {
            assert!((0.0..=1.0).contains(w), "{node} -> {to} = {w}");
        }
    }
    assert!(g.out_edges(END).is_empty());
}

/// Tools a, b, c with priors from [[a, b], [a, c]]:
/// start -> a 1; a -> b 1/2, a -> c 1/2, a -> a 0, a -> end 0;
/// b -> end 1, b -> b 0; c -> end 1, c -> c 0.
fn abc() -> ToolGraph {
    ToolGraph::from_trajectories(&names(&["a", "b", "c"]), &[names(&["a", "b"]), names(&["a", "c"])])
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn static_weights_are_two_gram_counts() {
    // Read as [start, ..., end]:
    //   T0 [a, b]       start->a, a->b, b->end
    //   T1 [a, c, b]    start->a, a->c, c->b, b->end
    //   T2 [b, b, c]    start->b, b->b, b->c, c->end
    //   T3 [a, b, end]  start->a, a->b, b->end (the trailing `end` is the terminator)
    let trajectories =
        [names(&["a", "b"]), names(&["a", "c", "b"]), names(&["b", "b", "c"]), names(&["a", "b", "end"])];
    let g =
        ToolGraph::from_trajectories(&names(&["a", "b", "c", "d"]), &trajectories).unwrap_or_else(|e| panic!("{e}"));
    // start: a 3 times, b once, of 4.
    assert_close(w(&g, START, "a"), 0.75);
    assert_close(w(&g, START, "b"), 0.25);
    // Unseen first tools keep their edge with weight 0.
    assert_eq!(g.weight(START, "c"), Some(0.0));
    assert_eq!(g.weight(START, "d"), Some(0.0));
    // a: a->b 2, a->c 1, of 3; its self and end edges exist with 0.
    assert_close(w(&g, "a", "b"), 2.0 / 3.0);
    assert_close(w(&g, "a", "c"), 1.0 / 3.0);
    assert_eq!(g.weight("a", "a"), Some(0.0));
    assert_eq!(g.weight("a", END), Some(0.0));
    assert_eq!(g.weight("a", "d"), None);
    // b: b->end 3, b->b 1, b->c 1, of 5.
    assert_close(w(&g, "b", END), 0.6);
    assert_close(w(&g, "b", "b"), 0.2);
    assert_close(w(&g, "b", "c"), 0.2);
    // c: c->b 1, c->end 1, of 2.
    assert_close(w(&g, "c", "b"), 0.5);
    assert_close(w(&g, "c", END), 0.5);
    assert_eq!(g.weight("c", "c"), Some(0.0));
    // d never appears: uniform over self and end.
    assert_close(w(&g, "d", "d"), 0.5);
    assert_close(w(&g, "d", END), 0.5);
    assert_eq!(g.out_edges("d").len(), 2);
    assert_eq!(g.tool_count(), 4);
    assert_eq!(g.iteration(), 0);
    // Before any update the weights are the prior.
    assert_eq!(g.prior("b", END), g.weight("b", END));
    assert_rows_stochastic(&g);
}

#[test]
fn out_edges_are_sorted_by_weight_then_name() {
    let g = ToolGraph::from_trajectories(
        &names(&["a", "b", "c"]),
        &[names(&["a", "c"]), names(&["a", "b"]), names(&["a", "b"])],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let row = g.out_edges("a");
    let order: Vec<&str> = row.iter().map(|(n, _)| n.as_str()).collect();
    // b 2/3, c 1/3, then the zero-weight self and end edges by name.
    assert_eq!(order, ["b", "c", "a", "end"]);
    let into_b: Vec<String> = g.in_edges("b").into_iter().map(|(n, _)| n).collect();
    assert_eq!(into_b, ["a", "b", "start"]);
}

/// Whether `row` is heaviest first, then by name.
fn in_order(row: &[(String, f64)]) -> bool {
    row.windows(2).all(|p| p[0].1 > p[1].1 || (p[0].1 == p[1].1 && p[0].0 < p[1].0))
}

#[test]
fn a_clone_that_gains_tools_orders_its_rows_by_its_own_names() {
    let g = ToolGraph::fully_connected(&names(&["m", "c", "x"]));
    // The name order is built here, and shared with the clone below.
    assert_eq!(g.out_edges("start").into_iter().map(|(n, _)| n).collect::<Vec<_>>(), ["c", "m", "x"]);
    let mut grown = g.clone();
    for tool in ["a", "n", "zz"] {
        assert!(grown.add_tool(tool).unwrap());
    }
    grown.apply_scores(&deltas(&[("n", 2), ("a", 2)]), 0.5, 0.0);
    let start = grown.out_edges("start");
    assert!(in_order(&start), "{start:?}");
    let order: Vec<&str> = start.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(order, ["a", "n", "c", "m", "x", "zz"]);
    for node in ["a", "m", "zz"] {
        assert!(in_order(&grown.out_edges(node)), "{node}");
        assert!(in_order(&grown.in_edges(node)), "{node}");
    }
    // The original keeps its own nodes and order, and knows none of the
    // clone's new names.
    assert_eq!(g.out_edges("start").into_iter().map(|(n, _)| n).collect::<Vec<_>>(), ["c", "m", "x"]);
    assert!(!g.contains("a") && g.score("n").is_none() && g.weight("start", "zz").is_none());
    assert!(grown.contains("a") && g.contains("m") && grown.contains("m"));
    // Nor does a clone of it made before: each is on its own.
    let twin = g.clone();
    let mut other = g.clone();
    assert!(other.add_tool("a").unwrap(), "a is new to this clone");
    assert!(!twin.contains("a"));
}

#[test]
fn fully_connected_has_equal_weights_per_row() {
    let g = ToolGraph::fully_connected(&names(&["a", "b", "c", "a"]));
    assert_eq!(g.tool_count(), 3);
    // Each tool: a, b, c and end, 1/4 each; start: a, b, c, 1/3 each.
    for from in ["a", "b", "c"] {
        for to in ["a", "b", "c", END] {
            assert_close(w(&g, from, to), 0.25);
        }
    }
    for to in ["a", "b", "c"] {
        assert_close(w(&g, START, to), 1.0 / 3.0);
    }
    assert_eq!(g.weight(START, END), None);
    assert_rows_stochastic(&g);
}

#[test]
fn score_factor_matches_the_paper() {
    // f(x) = αx + 1 for x >= 0, exp(αx) below.
    assert_close(score_factor(0.5, 2.0), 2.0);
    assert_close(score_factor(0.5, 0.0), 1.0);
    assert_close(score_factor(0.5, -2.0), 0.367_879_441); // e^-1
    assert_close(score_factor(0.5, -3.0), 0.223_130_160); // e^-1.5
}

#[test]
fn dynamic_update_hand_computed() {
    let mut g = abc();
    let update = g.apply_scores(&deltas(&[("a", 2), ("b", -2)]), 0.5, 0.5);
    // s_a = 2, s_b = -2; f(2) = 2, f(-2) = e^-1 = 0.367879, f(0) = 1.
    // Row a (a, b, c, end): Σ = 2 + e^-1 + 1 + 1 = 4.367879.
    //   w_aa   = 0.5·0   + 0.5·2/Σ      = 0.228944
    //   w_ab   = 0.5·0.5 + 0.5·e^-1/Σ   = 0.292112
    //   w_ac   = 0.5·0.5 + 0.5·1/Σ      = 0.364472
    //   w_aend = 0.5·0   + 0.5·1/Σ      = 0.114472
    assert_close(w(&g, "a", "a"), 0.228_944_048);
    assert_close(w(&g, "a", "b"), 0.292_111_904);
    assert_close(w(&g, "a", "c"), 0.364_472_024);
    assert_close(w(&g, "a", END), 0.114_472_024);
    // Row b (b, end): Σ = e^-1 + 1 = 1.367879.
    //   w_bb   = 0.5·0 + 0.5·e^-1/Σ = 0.134471
    //   w_bend = 0.5·1 + 0.5·1/Σ    = 0.865529
    assert_close(w(&g, "b", "b"), 0.134_470_711);
    assert_close(w(&g, "b", END), 0.865_529_289);
    // Row c has no changed out-neighbour: still the prior.
    assert_eq!(g.weight("c", "c"), Some(0.0));
    assert_eq!(g.weight("c", END), Some(1.0));
    // `start` learns too. Row start (a, b, c; prior 1, 0, 0): Σ = 2 + e^-1 + 1 = 3.367879.
    //   w_start,a = 0.5·1 + 0.5·2/Σ    = 0.796923
    //   w_start,b = 0.5·0 + 0.5·e^-1/Σ = 0.054616
    //   w_start,c = 0.5·0 + 0.5·1/Σ    = 0.148461
    assert_close(w(&g, START, "a"), 0.796_922_742);
    assert_close(w(&g, START, "b"), 0.054_616_266);
    assert_close(w(&g, START, "c"), 0.148_460_992);
    assert_rows_stochastic(&g);

    assert_eq!(update.iteration, 1);
    assert_eq!(update.scores, vec![("a".into(), 2.0), ("b".into(), -2.0)]);
    let changed: Vec<(&str, &str)> = update.weights.iter().map(|c| (&*c.from, &*c.to)).collect();
    assert_eq!(
        changed,
        [
            ("a", "a"),
            ("a", "b"),
            ("a", "c"),
            ("a", END),
            ("b", "b"),
            ("b", END),
            (START, "a"),
            (START, "b"),
            (START, "c")
        ]
    );
    let WeightChange { old, new, .. } = &update.weights[1];
    assert_close(*old, 0.5);
    assert_close(*new, 0.292_111_904);

    // Second run: Δ_b = -1 gives s_b = -3, f(-3) = e^-1.5 = 0.223130.
    // Row a: Σ = 2 + e^-1.5 + 2 = 4.223130; w_ab = 0.25 + 0.5·e^-1.5/Σ = 0.276418.
    // Row b: Σ = 1 + e^-1.5; w_bb = 0.5·e^-1.5/Σ = 0.091213.
    let update = g.apply_scores(&deltas(&[("b", -1)]), 0.5, 0.5);
    assert_eq!(update.iteration, 2);
    assert_close(w(&g, "a", "b"), 0.276_417_628);
    assert_close(w(&g, "a", "a"), 0.236_791_186);
    assert_close(w(&g, "b", "b"), 0.091_212_762);
    assert_close(w(&g, "b", END), 0.908_787_238);
    assert_rows_stochastic(&g);
}

#[test]
fn deltas_are_clamped_and_non_tools_ignored() {
    let mut g = abc();
    let update = g.apply_scores(&deltas(&[("c", 10), ("a", -7), ("ghost", 2), (END, 3), ("b", 0)]), 0.5, 0.5);
    assert_eq!(g.score("c"), Some(3.0));
    assert_eq!(g.score("a"), Some(-3.0));
    assert_eq!(g.score(END), Some(0.0));
    assert_eq!(g.score("b"), Some(0.0));
    assert_eq!(g.score("ghost"), None);
    assert_eq!(update.scores, vec![("a".into(), -3.0), ("c".into(), 3.0)]);
    // Scores accumulate across runs.
    g.apply_scores(&deltas(&[("c", 2)]), 0.5, 0.5);
    assert_eq!(g.score("c"), Some(5.0));
    assert_eq!(g.iteration(), 2);
}

#[test]
fn set_score_recomputes_affected_rows_without_a_new_iteration() {
    let mut g = abc();
    let update = g.set_score("c", -1.0, 0.5, 0.5).unwrap_or_else(|e| panic!("{e}"));
    // f(-1) = e^-0.5 = 0.606531.
    // Row c (c, end): Σ = 1.606531; w_cc = 0.5·e^-0.5/Σ = 0.188770, w_cend = 0.811230.
    // Row a (a, b, c, end): Σ = 3 + e^-0.5; w_ab = 0.25 + 0.5/Σ = 0.388637,
    //   w_ac = 0.25 + 0.5·e^-0.5/Σ = 0.334088.
    assert_close(w(&g, "c", "c"), 0.188_770_334);
    assert_close(w(&g, "c", END), 0.811_229_666);
    assert_close(w(&g, "a", "b"), 0.388_637_391);
    assert_close(w(&g, "a", "c"), 0.334_087_828);
    // b does not lead to c.
    assert_eq!(g.weight("b", END), Some(1.0));
    assert_eq!(update.iteration, 0);
    assert_eq!(g.iteration(), 0);
    assert_eq!(update.scores, vec![("c".into(), -1.0)]);
    assert!(update.weights.iter().all(|c| &*c.from == "a" || &*c.from == "c" || &*c.from == START));
    assert_rows_stochastic(&g);

    assert!(matches!(g.set_score(START, 1.0, 0.5, 0.5), Err(GraphError::NotATool { .. })));
    assert!(matches!(g.set_score("nope", 1.0, 0.5, 0.5), Err(GraphError::NotATool { .. })));
    assert!(matches!(g.set_score("a", f64::NAN, 0.5, 0.5), Err(GraphError::InvalidScore { .. })));
}

#[test]
fn recompute_all_uses_new_parameters_everywhere() {
    let mut g = abc();
    g.set_score("c", -1.0, 0.5, 0.5).unwrap_or_else(|e| panic!("{e}"));
    let update = g.recompute_all(1.0, 0.0);
    // β = 0: pure Δw. Row c with α = 1: w_cc = e^-1 / (e^-1 + 1) = 0.268941.
    assert_close(w(&g, "c", "c"), 0.268_941_421);
    // Row b was never touched before; now uniform over (b, end).
    assert_close(w(&g, "b", "b"), 0.5);
    assert_close(w(&g, "b", END), 0.5);
    assert!(update.scores.is_empty());
    assert!(update.weights.iter().any(|c| &*c.from == "b"));
    // Row start, β = 0, α = 1: f(0), f(0), f(-1) → w_start,a = 1 / (2 + e^-1) = 0.422319.
    assert_close(w(&g, START, "a"), 0.422_318_798);
    assert_rows_stochastic(&g);
}

#[test]
fn history_series_rebuild_per_iteration() {
    let mut g = abc();
    g.apply_scores(&deltas(&[("a", 2), ("b", -2)]), 0.5, 0.5);
    g.apply_scores(&deltas(&[("c", 1)]), 0.5, 0.5);
    g.apply_scores(&deltas(&[("b", -1)]), 0.5, 0.5);
    // A hand edit after iteration 3 replaces that iteration's point.
    g.set_score("b", -4.0, 0.5, 0.5).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(g.iteration(), 3);
    assert_eq!(g.score_series("b"), vec![(0, 0.0), (1, -2.0), (3, -4.0)]);
    assert_eq!(g.score_series("a"), vec![(0, 0.0), (1, 2.0)]);
    assert!(g.score_series("ghost").is_empty());

    let series = g.weight_series("a", "b");
    let iterations: Vec<u32> = series.iter().map(|p| p.0).collect();
    assert_eq!(iterations, [0, 1, 2, 3]);
    assert_close(series[0].1, 0.5);
    assert_close(series[1].1, 0.292_111_904);
    assert_eq!(series[3].1, w(&g, "a", "b"));
    // c -> end only moves when c's or end's score changes (iteration 2).
    let c_end: Vec<u32> = g.weight_series("c", END).iter().map(|p| p.0).collect();
    assert_eq!(c_end, [0, 2]);
    // start learns at every iteration (its row holds every tool).
    let start_a: Vec<u32> = g.weight_series(START, "a").iter().map(|p| p.0).collect();
    assert_eq!(start_a, [0, 1, 2, 3]);
    assert_eq!(g.weight_series(START, "a").last().map(|p| p.1), g.weight(START, "a"));
    assert!(g.weight_series("b", "a").is_empty());
}

#[test]
fn add_tool_joins_with_uniform_prior_and_rescales_start() {
    let mut g = ToolGraph::fully_connected(&names(&["a", "b"]));
    g.apply_scores(&deltas(&[("a", 1)]), 0.5, 0.5);
    assert_eq!(g.add_tool("n").ok(), Some(true));
    assert_eq!(g.add_tool("a").ok(), Some(false));
    assert!(matches!(g.add_tool(END), Err(GraphError::ReservedName { .. })));
    assert_eq!(g.tool_count(), 3);
    assert_close(w(&g, "n", "n"), 0.5);
    assert_close(w(&g, "n", END), 0.5);
    assert_eq!(g.prior("n", END), Some(0.5));
    // start learnt from s_a = 1: w_start,a = 0.5·0.5 + 0.5·f(1)/(f(1) + f(0)) = 0.25 + 0.5·1.5/2.5 = 0.55,
    // w_start,b = 0.45. Adding n rescales the row by 2/3 (0.366667, 0.3) and gives n 1/3;
    // the priors, 1/2 each, become 1/3 each.
    assert_close(w(&g, START, "a"), 0.55 * 2.0 / 3.0);
    assert_close(w(&g, START, "b"), 0.45 * 2.0 / 3.0);
    assert_close(w(&g, START, "n"), 1.0 / 3.0);
    for to in ["a", "b", "n"] {
        assert_close(g.prior(START, to).unwrap_or(f64::NAN), 1.0 / 3.0);
    }
    assert_eq!(g.score_series("n"), vec![(1, 0.0)]);
    let series = g.weight_series(START, "a");
    assert_eq!(series.len(), 2);
    assert_close(series[1].1, 0.55 * 2.0 / 3.0);
    assert_eq!(g.weight_series(START, "n"), vec![(1, 1.0 / 3.0)]);
    // The new tool takes part in later updates.
    g.apply_scores(&deltas(&[("n", 2)]), 0.5, 0.5);
    assert!(w(&g, "n", "n") > 0.5);
    assert_rows_stochastic(&g);
}

#[test]
fn save_load_round_trip() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("graph.json");
    let mut g = abc();
    g.apply_scores(&deltas(&[("a", 2), ("b", -2)]), 0.5, 0.5);
    g.add_tool("d").unwrap_or_else(|e| panic!("{e}"));
    g.apply_scores(&deltas(&[("d", 1)]), 0.5, 0.5);
    g.save(&path).unwrap_or_else(|e| panic!("{e}"));
    let back = ToolGraph::load(&path).unwrap_or_else(|e| panic!("{e}"));

    assert_eq!(back.iteration(), 2);
    assert_eq!(back.tools().collect::<Vec<_>>(), g.tools().collect::<Vec<_>>());
    let all: Vec<String> = g.tools().map(str::to_owned).chain([START.to_owned()]).collect();
    for from in &all {
        let (a, b) = (g.out_edges(from), back.out_edges(from));
        assert_eq!(a.len(), b.len());
        for ((n1, w1), (n2, w2)) in a.iter().zip(&b) {
            assert_eq!(n1, n2);
            assert!((w1 - w2).abs() < 1e-12);
            let (p1, p2) = (g.prior(from, n1), back.prior(from, n2));
            assert!((p1.unwrap_or(-1.0) - p2.unwrap_or(-2.0)).abs() < 1e-12);
            assert_series_close(&g.weight_series(from, n1), &back.weight_series(from, n2));
        }
        assert_series_close(&g.score_series(from), &back.score_series(from));
        assert_eq!(g.score(from), back.score(from));
    }
    // Saving again replaces the file.
    back.save(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(ToolGraph::load(&path).is_ok());
}

#[test]
fn corrupted_files_give_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("broken-graph.json");
    std::fs::write(&path, "{\"version\": 1, \"nodes\": [").unwrap_or_else(|e| panic!("{e}"));
    let err = ToolGraph::load(&path).err().map(|e| e.to_string());
    let err = err.unwrap_or_default();
    assert!(err.contains("broken-graph.json"), "{err}");

    // Well-formed JSON whose row no longer sums to 1.
    let good = dir.path().join("tampered.json");
    abc().save(&good).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(&good).unwrap_or_else(|e| panic!("{e}"));
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    let edges = value["edges"].as_array_mut().unwrap_or_else(|| panic!("no edges"));
    let edge = edges.iter_mut().find(|e| e["from"] == "b" && e["to"] == END).unwrap_or_else(|| panic!("no b -> end"));
    edge["weight"] = serde_json::json!(0.5);
    std::fs::write(&good, value.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let err = ToolGraph::load(&good).err();
    assert!(matches!(err, Some(GraphError::Invalid { .. })), "{err:?}");
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("tampered.json") && msg.contains("`b`"), "{msg}");

    let missing = dir.path().join("missing.json");
    let err = ToolGraph::load(&missing).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("missing.json"), "{err}");
}

#[test]
fn unknown_tool_in_trajectory_is_an_error() {
    let err = ToolGraph::from_trajectories(&names(&["a", "b"]), &[names(&["a", "b"]), names(&["a", "zzz"])]).err();
    match &err {
        Some(GraphError::UnknownTool { tool, trajectory }) => {
            assert_eq!(tool, "zzz");
            assert_eq!(*trajectory, 1);
        }
        other => panic!("expected UnknownTool, got {other:?}"),
    }
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("zzz") && msg.contains('1'), "{msg}");
    // `start` is a node, not a tool a trajectory may name.
    assert!(ToolGraph::from_trajectories(&names(&["a"]), &[names(&["start", "a"])]).is_err());
    assert!(matches!(ToolGraph::from_trajectories(&names(&["a", "end"]), &[]), Err(GraphError::ReservedName { .. })));
}

#[test]
fn trajectories_file_is_read_with_line_numbers_in_errors() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("runs.jsonl");
    let text = "# successful runs\n\
                {\"query\": \"weather in Paris\", \"tools\": [\"geo\", \"weather\"]}\n\
                \n\
                {\"query\": \"time\", \"tools\": [\"clock\"]}\n";
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let list = read_trajectories(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].query, "weather in Paris");
    assert_eq!(list[0].tools, names(&["geo", "weather"]));
    assert_eq!(list[1].tools, names(&["clock"]));

    std::fs::write(&path, format!("{text}{{\"query\": \"x\", \"tools\": 3}}\n")).unwrap_or_else(|e| panic!("{e}"));
    let err = read_trajectories(&path).err();
    assert!(matches!(err, Some(GraphError::TrajectoryLine { line: 5, .. })), "{err:?}");
    let msg = err.map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("runs.jsonl:5"), "{msg}");
}

#[test]
fn weight_formats() {
    assert_eq!(WeightFormat::default(), WeightFormat::Integer);
    assert_eq!(WeightFormat::None.show(0.376), None);
    assert_eq!(WeightFormat::Decimal.show(0.376).as_deref(), Some("0.38"));
    assert_eq!(WeightFormat::Integer.show(0.376).as_deref(), Some("38"));
    assert_eq!(WeightFormat::X10.show(0.376).as_deref(), Some("376"));
    assert_eq!(WeightFormat::Integer.show(1.0).as_deref(), Some("100"));
    assert_eq!(WeightFormat::X10.show(0.0).as_deref(), Some("0"));
    for (text, format) in [
        ("none", WeightFormat::None),
        ("decimal", WeightFormat::Decimal),
        ("integer", WeightFormat::Integer),
        ("x10", WeightFormat::X10),
    ] {
        assert_eq!(text.parse::<WeightFormat>().ok(), Some(format));
        assert_eq!(format.to_string(), text);
        assert_eq!(serde_json::to_string(&format).ok(), Some(format!("\"{text}\"")));
        assert_eq!(serde_json::from_str::<WeightFormat>(&format!("\"{text}\"")).ok(), Some(format));
    }
    assert_eq!("X10".parse::<WeightFormat>().ok(), Some(WeightFormat::X10));
    assert!(matches!("percent".parse::<WeightFormat>(), Err(GraphError::WeightFormat { .. })));
}

fn graph_strategy() -> impl Strategy<Value = (ToolGraph, Vec<String>)> {
    (1usize..8).prop_flat_map(|n| {
        let trajectories = prop::collection::vec(prop::collection::vec(0..n, 0..6), 0..8);
        (Just(n), trajectories, any::<bool>()).prop_map(|(n, raw, full)| {
            let tools: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
            let trajectories: Vec<Vec<String>> =
                raw.iter().map(|t| t.iter().map(|&i| tools[i].clone()).collect()).collect();
            let graph = if full {
                ToolGraph::fully_connected(&tools)
            } else {
                ToolGraph::from_trajectories(&tools, &trajectories).unwrap_or_else(|e| panic!("{e}"))
            };
            (graph, tools)
        })
    })
}

proptest! {
    #[test]
    fn updates_keep_rows_stochastic(
        (mut graph, tools) in graph_strategy(),
        runs in prop::collection::vec(prop::collection::vec((0usize..8, -5i32..6), 0..5), 1..6),
        alpha in 0.0f64..3.0,
        beta in 0.0f64..=1.0,
        edit in prop::option::of((0usize..8, -20.0f64..20.0)),
    ) {
        assert_rows_stochastic(&graph);
        let mut expected: BTreeMap<String, f64> = BTreeMap::new();
        for run in &runs {
            let mut map = BTreeMap::new();
            for &(i, d) in run {
                map.insert(tools[i % tools.len()].clone(), d);
            }
            for (name, d) in &map {
                *expected.entry(name.clone()).or_default() += f64::from((*d).clamp(-3, 3));
            }
            graph.apply_scores(&map, alpha, beta);
            assert_rows_stochastic(&graph);
        }
        for (name, s) in &expected {
            prop_assert_eq!(graph.score(name), Some(*s));
        }
        prop_assert_eq!(graph.iteration() as usize, runs.len());
        if let Some((i, score)) = edit {
            graph.set_score(&tools[i % tools.len()], score, alpha, beta)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_rows_stochastic(&graph);
        }
        graph.recompute_all(alpha * 2.0, 1.0 - beta);
        assert_rows_stochastic(&graph);
    }
}

/// Every edge's weight, keyed by (from, to).
/// Every edge's weight, by its row as the graph holds and its updates name
/// it: the tools that follow the `*` row (a graph without trajectories)
/// under `*`, once.
fn all_weights(g: &ToolGraph) -> BTreeMap<(String, String), f64> {
    let row = |t: &str| if g.follows_any_tool_row(t) { ANY_TOOL.to_owned() } else { t.to_owned() };
    std::iter::once(START.to_owned())
        .chain(g.tools().map(row))
        .flat_map(|from| g.out_edges(&from).into_iter().map(move |(to, w)| ((from.clone(), to), w)))
        .collect()
}

/// Folds an update into weights the way a trace reader does.
fn fold(weights: &mut BTreeMap<(String, String), f64>, update: &GraphUpdate) {
    for ((from, to), w) in weights.iter_mut() {
        *w = update.weight_after(from, to, *w);
    }
}

fn assert_same_weights(folded: &BTreeMap<(String, String), f64>, g: &ToolGraph) {
    let actual = all_weights(g);
    assert_eq!(folded.len(), actual.len());
    for (edge, w) in &actual {
        // Changes below 1e-12 are not listed (and may add up).
        assert!((folded[edge] - w).abs() <= 1e-10, "{edge:?}: folded {}, graph {w}", folded[edge]);
    }
}

#[test]
fn a_large_start_row_is_written_as_a_shared_weight() {
    let tools: Vec<String> = (0..2000).map(|i| format!("t{i:04}")).collect();
    let g0 = ToolGraph::from_trajectories(&tools, &[names(&["t0000", "t0001"]), names(&["t0002"])]);
    let mut g = g0.unwrap_or_else(|e| panic!("{e}"));
    let mut folded = all_weights(&g);
    for run in [&[("t0001", 1), ("t0005", -1)][..], &[("t0001", 1)], &[("t0007", 2), ("t0008", 2)]] {
        let update = g.apply_scores(&deltas(run), 0.5, 0.5);
        // Every start edge changed, but the untold tools share one weight:
        // the update lists the tools told apart by a prior or a score.
        assert!(update.rows.iter().any(|r| &*r.from == START), "{:?}", update.rows);
        assert!(update.weights.len() < 20, "{} weights listed", update.weights.len());
        assert!(update.weights.windows(2).all(|p| (&p[0].from, &p[0].to) < (&p[1].from, &p[1].to)));
        fold(&mut folded, &update);
        assert_same_weights(&folded, &g);
    }
    let json = serde_json::to_string(&g.recompute_all(1.0, 0.25)).unwrap_or_default();
    assert!(json.len() < 4000, "{} bytes", json.len());
}

/// `start`'s long listed row is put in name order by placing each edge at
/// its target's rank, a short row by sorting: both must give the (from, to)
/// order the readers' binary searches rely on, whatever order the tools
/// joined in.
#[test]
fn long_and_short_listed_rows_come_out_in_name_order() {
    // Names not in the order they join, so a node's index says nothing of
    // its name's rank.
    let tools: Vec<String> = (0..600).map(|i| format!("t{:03}", (i * 257) % 600)).collect();
    // Trajectories of two tools set half of `start`'s priors apart, and
    // give each tool row a few observed successors.
    let trajectories: Vec<Vec<String>> =
        (0..300).map(|i| vec![tools[(i * 7) % 600].clone(), tools[(i * 13 + 5) % 600].clone()]).collect();
    let mut g = ToolGraph::from_trajectories(&tools, &trajectories).unwrap_or_else(|e| panic!("{e}"));
    let mut folded = all_weights(&g);
    for run in [&[("t001", 1), ("t299", -2)][..], &[("t450", 3)], &[("t007", -1), ("t100", 2), ("t555", 1)]] {
        let update = g.apply_scores(&deltas(run), 0.5, 0.5);
        let from_start = update.weights.iter().filter(|c| &*c.from == START).count();
        assert!(from_start > 100, "start's row lists {from_start} edges");
        assert!(update.weights.iter().any(|c| &*c.from != START), "a tool row is listed too");
        assert!(
            update.weights.windows(2).all(|p| (&p[0].from, &p[0].to) < (&p[1].from, &p[1].to)),
            "weights out of (from, to) order"
        );
        assert!(update.rows.windows(2).all(|p| p[0].from < p[1].from));
        fold(&mut folded, &update);
        assert_same_weights(&folded, &g);
    }
}

/// A long row whose edges mostly share a weight is ordered by placing
/// those at their name's rank and merging the others around them: some
/// heavier and some lighter than the shared weight, and names that do not
/// join in name order, must still come out heaviest first, then by name.
#[test]
fn a_long_row_of_mostly_one_weight_is_heaviest_first_then_by_name() {
    let tools: Vec<String> = (0..600).map(|i| format!("t{:03}", (i * 257) % 600)).collect();
    let trajectories = [names(&["t010", "t020"]), names(&["t400"])];
    let mut g = ToolGraph::from_trajectories(&tools, &trajectories).unwrap_or_else(|e| panic!("{e}"));
    g.apply_scores(&deltas(&[("t599", 3), ("t001", 1), ("t300", -2), ("t002", -1)]), 0.5, 0.5);
    let start = g.out_edges(START);
    assert_eq!(start.len(), 600);
    assert!(in_order(&start), "{:?}", &start[..8]);
    let shared = start[300].1;
    let heavier = start.iter().filter(|e| e.1 > shared).count();
    let lighter = start.iter().filter(|e| e.1 < shared).count();
    assert!(heavier >= 3 && lighter >= 2, "{heavier} heavier, {lighter} lighter than the shared weight");
}

proptest! {
    #[test]
    fn folding_the_updates_reaches_the_graph(
        (mut graph, tools) in graph_strategy(),
        runs in prop::collection::vec(prop::collection::vec((0usize..8, -5i32..6), 0..5), 1..6),
        alpha in 0.0f64..3.0,
        beta in 0.0f64..=1.0,
        edit in prop::option::of((0usize..8, -20.0f64..20.0)),
    ) {
        let mut folded = all_weights(&graph);
        for run in &runs {
            let map: BTreeMap<String, i32> = run.iter().map(|&(i, d)| (tools[i % tools.len()].clone(), d)).collect();
            fold(&mut folded, &graph.apply_scores(&map, alpha, beta));
            assert_same_weights(&folded, &graph);
        }
        if let Some((i, score)) = edit {
            let update = graph.set_score(&tools[i % tools.len()], score, alpha, beta).unwrap_or_else(|e| panic!("{e}"));
            fold(&mut folded, &update);
        }
        fold(&mut folded, &graph.recompute_all(alpha * 2.0, 1.0 - beta));
        assert_same_weights(&folded, &graph);
    }
}

/// The weight series as the graph documents it, built from the outside:
/// a point per iteration in which the weight moved, the series thinned to
/// every second point (first and newest kept) past 64 points.
fn reference_push(series: &mut Vec<(u32, f64)>, iteration: u32, value: f64) {
    match series.last_mut() {
        Some(last) if last.0 == iteration => last.1 = value,
        _ => series.push((iteration, value)),
    }
    if series.len() > 64 {
        let last = series.len() - 1;
        let mut i = 0;
        series.retain(|_| {
            let keep = i == 0 || i == last || i % 2 == 0;
            i += 1;
            keep
        });
    }
}

#[test]
fn long_sessions_keep_every_edge_series_through_saves_and_loads() {
    // Enough updates that each of start's edges thins its series several
    // times and the graph settles its spilled points many times over.
    let tools: Vec<String> = (0..12).map(|i| format!("t{i:02}")).collect();
    let mut g = ToolGraph::fully_connected(&tools);
    let initial: BTreeMap<String, f64> = tools.iter().map(|t| (t.clone(), w(&g, START, t))).collect();
    let mut reference: BTreeMap<String, Vec<(u32, f64)>> = tools.iter().map(|t| (t.clone(), Vec::new())).collect();
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("graph.json");
    let mut seed = 7u64;
    for run in 0..700u32 {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let tool = &tools[(seed >> 33) as usize % tools.len()];
        let delta = ((seed >> 40) % 7) as i32 - 3;
        let before: BTreeMap<String, f64> = tools.iter().map(|t| (t.clone(), w(&g, START, t))).collect();
        g.apply_scores(&BTreeMap::from([(tool.clone(), delta)]), 0.5, 0.5);
        for t in &tools {
            let now = w(&g, START, t);
            if (now - before[t]).abs() > 1e-12 {
                let series = reference.get_mut(t).unwrap_or_else(|| panic!("{t}"));
                reference_push(series, g.iteration(), now);
            }
        }
        if run % 101 == 0 || run == 699 {
            for t in &tools {
                let series = g.weight_series(START, t);
                assert_eq!(series[0], (0, initial[t]), "{t}: the prior comes first");
                assert_eq!(&series[1..], reference[t].as_slice(), "{t} at run {run}");
            }
            g.save(&path).unwrap_or_else(|e| panic!("{e}"));
            let back = ToolGraph::load(&path).unwrap_or_else(|e| panic!("{e}"));
            for t in &tools {
                assert_eq!(back.weight_series(START, t), g.weight_series(START, t), "{t} loaded at run {run}");
            }
            g = back;
        }
    }
    assert!(reference.values().all(|r| r.len() <= 64 && r.len() >= 32), "every series was thinned");
}

/// Each edge's weight series kept from the outside, a series per edge, by
/// the rule the graph documents: after an update, a listed edge takes a
/// point if it moved by more than 1e-12, and an edge of a row written as a
/// shared weight and not listed takes the row's weight; a rescale of
/// `start` gives each of its edges a point. The graph keeps one series for
/// the edges that share their row's and must give the same.
struct SeriesReference(BTreeMap<(String, String), Vec<(u32, f64)>>);

impl SeriesReference {
    fn new(g: &ToolGraph) -> Self {
        SeriesReference(all_weights(g).into_keys().map(|k| (k, Vec::new())).collect())
    }

    fn update(&mut self, u: &GraphUpdate) {
        for ((from, to), series) in self.0.iter_mut() {
            let listed = u.weights.binary_search_by(|c| (&*c.from, &*c.to).cmp(&(from.as_str(), to.as_str())));
            match listed {
                Ok(i) => {
                    let c = &u.weights[i];
                    if (c.new - c.old).abs() > 1e-12 {
                        reference_push(series, u.iteration, c.new);
                    }
                }
                Err(_) => {
                    if let Some(row) = u.rows.iter().find(|r| *r.from == **from) {
                        reference_push(series, u.iteration, row.rest);
                    }
                }
            }
        }
    }

    fn add_tool(&mut self, g: &mut ToolGraph, name: &str) {
        if g.add_tool(name).unwrap_or_else(|e| panic!("{e}")) {
            for ((from, to), series) in self.0.iter_mut().filter(|((from, _), _)| from == START) {
                reference_push(series, g.iteration(), w(g, from, to));
            }
            for key in all_weights(g).into_keys() {
                self.0.entry(key).or_default();
            }
        }
    }

    fn assert_same(&self, g: &ToolGraph, when: &str) {
        for ((from, to), series) in &self.0 {
            let actual = g.weight_series(from, to);
            assert_eq!(actual.get(1..), Some(series.as_slice()), "{from} -> {to} {when}");
        }
    }
}

/// Drives a graph through score updates, hand edits, α/β edits and new
/// tools, checking every edge's series against the reference.
fn series_session(mut g: ToolGraph, tools: &[String], runs: usize, mut seed: u64, save_every: Option<usize>) {
    let mut reference = SeriesReference::new(&g);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("graph.json");
    let mut next = move |m: u64| {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % m
    };
    let mut added = 0;
    for run in 0..runs {
        let (alpha, beta) = (0.25 * next(5) as f64, 0.25 * next(5) as f64);
        match next(10) {
            0 => {
                let tool = &tools[next(tools.len() as u64) as usize];
                let score = next(9) as f64 - 4.0;
                reference.update(&g.set_score(tool, score, alpha, beta).unwrap_or_else(|e| panic!("{e}")));
            }
            1 => reference.update(&g.recompute_all(alpha, beta)),
            2 => {
                added += 1;
                reference.add_tool(&mut g, &format!("new{added}"));
            }
            _ => {
                let scored =
                    (0..1 + next(3)).map(|_| (tools[next(tools.len() as u64) as usize].clone(), next(7) as i32 - 3));
                reference.update(&g.apply_scores(&scored.collect(), alpha, beta));
            }
        }
        reference.assert_same(&g, &format!("after run {run}"));
        if save_every.is_some_and(|every| run % every == every - 1) {
            g.save(&path).unwrap_or_else(|e| panic!("{e}"));
            g = ToolGraph::load(&path).unwrap_or_else(|e| panic!("{e}"));
            reference.assert_same(&g, &format!("loaded after run {run}"));
        }
    }
}

proptest! {
    #[test]
    fn every_edge_series_is_as_if_kept_per_edge(
        n in 1usize..30,
        full in any::<bool>(),
        runs in 1usize..25,
        seed in any::<u64>(),
    ) {
        let tools: Vec<String> = (0..n).map(|i| format!("t{i:02}")).collect();
        let g = if full {
            ToolGraph::fully_connected(&tools)
        } else {
            // A few trajectories set some priors of `start` and of the rows apart.
            let trajectories: Vec<Vec<String>> =
                (0..n / 3).map(|i| vec![tools[i].clone(), tools[(i * 7 + 1) % n].clone()]).collect();
            ToolGraph::from_trajectories(&tools, &trajectories).unwrap_or_else(|e| panic!("{e}"))
        };
        series_session(g, &tools, runs, seed, Some(7));
    }
}

/// Long enough that every series is thinned several times over, with tools
/// joining (each rescaling `start`) and the graph saved and loaded between.
#[test]
fn a_long_session_keeps_every_edge_series_as_if_kept_per_edge() {
    let tools: Vec<String> = (0..150).map(|i| format!("t{i:03}")).collect();
    let trajectories: Vec<Vec<String>> = (0..20).map(|i| vec![tools[i * 3].clone(), tools[i * 5].clone()]).collect();
    let g = ToolGraph::from_trajectories(&tools, &trajectories).unwrap_or_else(|e| panic!("{e}"));
    series_session(g, &tools, 400, 11, Some(97));
}

/// A row's edges that move together keep one series between them, in
/// memory and in the saved file: at 2,000 tools, 150 updates scoring a few
/// tools write a file a few points per edge larger, not 2,000 series.
#[test]
fn start_edges_that_move_together_are_saved_as_one_series() {
    let tools: Vec<String> = (0..2000).map(|i| format!("t{i:04}")).collect();
    // No trajectories: each tool leads to itself and to `end`, `start` to all.
    let mut g = ToolGraph::from_trajectories(&tools, &[]).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("graph.json");
    g.save(&path).unwrap_or_else(|e| panic!("{e}"));
    let before = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    for i in 0..150 {
        g.apply_scores(&deltas(&[(tools[i % 5].as_str(), 1), ("t1999", -1)]), 0.5, 0.5);
    }
    g.save(&path).unwrap_or_else(|e| panic!("{e}"));
    let after = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    // 64 points of about 30 bytes for `start`'s shared series and for each
    // of the six edges told apart, and their tool rows.
    assert!(after - before < 100_000, "{before} -> {after} bytes");
    let back = ToolGraph::load(&path).unwrap_or_else(|e| panic!("{e}"));
    for t in ["t0000", "t0003", "t0500", "t1999"] {
        assert_eq!(back.weight_series(START, t), g.weight_series(START, t), "{t}");
        assert!(back.weight_series(START, t).len() > 32, "{t}: a series thinned, not lost");
    }
}

proptest! {
    /// A graph keeps buffers between updates (each tool's f(s) among them);
    /// a clone starts without. Whatever edits came before, an update must
    /// give the same bits either way.
    #[test]
    fn a_graph_that_kept_its_buffers_updates_as_a_fresh_clone_does(
        n in 1usize..20,
        full in any::<bool>(),
        ops in prop::collection::vec((0u8..6, 0usize..20, -4i32..5, 0u8..4, 0u8..5), 1..30),
    ) {
        let tools: Vec<String> = (0..n).map(|i| format!("t{i:02}")).collect();
        let mut g = if full {
            ToolGraph::fully_connected(&tools)
        } else {
            ToolGraph::from_trajectories(&tools, &[]).unwrap_or_else(|e| panic!("{e}"))
        };
        for (kind, i, d, a, b) in ops {
            let (alpha, beta) = (f64::from(a) * 0.5, f64::from(b) * 0.25);
            let tool = tools[i % n].clone();
            let mut fresh = g.clone();
            let edit = |g: &mut ToolGraph| match kind {
                0 | 1 => Some(g.apply_scores(&deltas(&[(tool.as_str(), d)]), alpha, beta)),
                2 => g.set_score(&tool, f64::from(d) * 0.7, alpha, beta).ok(),
                3 => Some(g.recompute_all(alpha, beta)),
                4 => {
                    g.add_tool(&format!("new{i}")).unwrap_or_else(|e| panic!("{e}"));
                    None
                }
                _ => {
                    // As a trace puts a graph back: its weights, new scores.
                    let weights = all_weights(g);
                    let edges = weights.iter().map(|((f, t), w)| (f.as_str(), t.as_str(), *w));
                    let scores: Vec<(String, f64)> =
                        g.tools().map(|t| (t.to_owned(), if *t == tool { f64::from(d) } else { 0.5 })).collect();
                    g.restore(g.iteration(), edges.collect::<Vec<_>>(), &scores).unwrap_or_else(|e| panic!("{e}"));
                    None
                }
            };
            let (kept, anew) = (edit(&mut g), edit(&mut fresh));
            prop_assert_eq!(kept, anew);
            prop_assert_eq!(all_weights(&g), all_weights(&fresh));
        }
    }
}
