//! ToolNet's dynamic update after one task: `apply_scores` with ~5 tool
//! scores on libraries of 4,000 and 16,000 tools, ~10 out-edges per tool;
//! and saving the graph after it (`graph_save`), as the engine does after
//! every task. `graph_update/session_snapshot` is the graph as a session's
//! first event carries it (`GraphSnapshot::of`), once per session;
//! `apply_scores_uniform` the update of a graph built without trajectories.

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Bencher, BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use switchyard::engine::event::GraphSnapshot;
use switchyard::graph::{GraphStore, ToolGraph};

/// A static graph from random trajectories: 9-tool trajectories, one per
/// tool, give each tool ~8 observed successors plus its self and end edges.
fn build(tools: usize, rng: &mut ChaCha8Rng) -> (ToolGraph, Vec<String>) {
    let names: Vec<String> = (0..tools).map(|i| format!("tool_{i:05}")).collect();
    let trajectories: Vec<Vec<String>> =
        (0..tools).map(|_| (0..9).map(|_| names[rng.random_range(0..tools)].clone()).collect()).collect();
    let graph = ToolGraph::from_trajectories(&names, &trajectories).unwrap_or_else(|e| panic!("bench graph: {e}"));
    (graph, names)
}

/// The evaluator's scores for one run: ~5 tools, Δ in [-3, 3].
fn runs(names: &[String], rng: &mut ChaCha8Rng) -> Vec<BTreeMap<String, i32>> {
    (0..256)
        .map(|_| {
            (0..5)
                .map(|_| {
                    let tool = names[rng.random_range(0..names.len())].clone();
                    (tool, rng.random_range(-3..=3))
                })
                .collect()
        })
        .collect()
}

/// The bench of `runs` applied one after another to a copy of `base`: a
/// fresh graph per sample keeps the history (which grows with every
/// update) from piling up across the whole run.
fn updates<'a>(base: &'a ToolGraph, runs: &'a [BTreeMap<String, i32>]) -> impl FnMut(&mut Bencher, &usize) + 'a {
    move |b, _| {
        b.iter_custom(|iters| {
            let mut graph = base.clone();
            let started = Instant::now();
            for i in 0..iters as usize {
                black_box(graph.apply_scores(&runs[i % runs.len()], 0.5, 0.5));
            }
            started.elapsed()
        })
    }
}

/// A library's graphs and scores, made the first time a bench of that
/// size runs.
struct Setup {
    /// From trajectories.
    base: ToolGraph,
    /// From an empty trajectories file, the tools joining in no order of
    /// their names, as a real library's do: most of `start`'s row weighs
    /// the same.
    untrained: ToolGraph,
    /// No trajectories at all: ToolNet's complete graph, every tool's row
    /// the uniform prior over the library (held as one row).
    uniform: ToolGraph,
    runs: Vec<BTreeMap<String, i32>>,
}

impl Setup {
    fn new(tools: usize) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let (base, names) = build(tools, &mut rng);
        let runs = runs(&names, &mut rng);
        let edges: usize = base.tools().map(|t| base.out_edges(t).len()).sum();
        eprintln!("{tools} tools: {:.1} out-edges per tool", edges as f64 / tools as f64);
        let mut shuffled = names;
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.random_range(0..=i));
        }
        let untrained = ToolGraph::from_trajectories(&shuffled, &[]).unwrap_or_else(|e| panic!("bench graph: {e}"));
        let uniform = ToolGraph::fully_connected(&shuffled);
        Setup { base, untrained, uniform, runs }
    }
}

fn graph_update(c: &mut Criterion) {
    let mut group = c.benchmark_group("graph_update");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for tools in [4_000, 16_000] {
        let setup = OnceCell::new();
        let setup = || setup.get_or_init(|| Setup::new(tools));
        group.bench_with_input(
            BenchmarkId::new("session_snapshot", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, _: &usize| {
                let base = &setup().base;
                b.iter(|| black_box(GraphSnapshot::of(base)))
            }),
        );
        peak::report(&format!("graph_update/session_snapshot/{tools}"));
        group.bench_with_input(
            BenchmarkId::new("session_snapshot_untrained", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, _: &usize| {
                let untrained = &setup().untrained;
                b.iter(|| black_box(GraphSnapshot::of(untrained)))
            }),
        );
        peak::report(&format!("graph_update/session_snapshot_untrained/{tools}"));
        group.bench_with_input(
            BenchmarkId::new("apply_scores", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, t: &usize| updates(&setup().base, &setup().runs)(b, t)),
        );
        peak::report(&format!("graph_update/apply_scores/{tools}"));
        group.bench_with_input(
            BenchmarkId::new("apply_scores_uniform", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, t: &usize| updates(&setup().uniform, &setup().runs)(b, t)),
        );
        peak::report(&format!("graph_update/apply_scores_uniform/{tools}"));
    }
    group.finish();
}

/// The save after one update, durable (synced) either way: `journal` is
/// `GraphStore::save` appending the update to the journal (its compaction
/// held off, so every save is an append), `snapshot` the whole graph
/// rewritten atomically, which is also what a compaction costs.
fn graph_save(c: &mut Criterion) {
    let mut group = c.benchmark_group("graph_save");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for tools in [4_000, 16_000] {
        let setup = OnceCell::new();
        let setup = || {
            setup.get_or_init(|| {
                let mut rng = ChaCha8Rng::seed_from_u64(7);
                let (base, names) = build(tools, &mut rng);
                let runs = runs(&names, &mut rng);
                (base, runs)
            })
        };
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("bench dir: {e}"));
        let path = dir.path().join("graph.json");
        group.bench_with_input(
            BenchmarkId::new("journal", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, _: &usize| {
                let (base, runs) = setup();
                b.iter_custom(|iters| {
                    let mut graph = base.clone();
                    let (_, store) = GraphStore::open(&path).unwrap_or_else(|e| panic!("bench store: {e}"));
                    let mut store = store.compact_after(usize::MAX);
                    store.save(&graph).unwrap_or_else(|e| panic!("bench save: {e}"));
                    let mut spent = Duration::ZERO;
                    for i in 0..iters as usize {
                        graph.apply_scores(&runs[i % runs.len()], 0.5, 0.5);
                        let started = Instant::now();
                        black_box(store.save(&graph).unwrap_or_else(|e| panic!("bench save: {e}")));
                        spent += started.elapsed();
                    }
                    spent
                });
            }),
        );
        peak::report(&format!("graph_save/journal/{tools}"));
        group.bench_with_input(
            BenchmarkId::new("snapshot", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, _: &usize| {
                let (base, runs) = setup();
                b.iter_custom(|iters| {
                    let mut graph = base.clone();
                    let mut spent = Duration::ZERO;
                    for i in 0..iters as usize {
                        graph.apply_scores(&runs[i % runs.len()], 0.5, 0.5);
                        let started = Instant::now();
                        graph.save(&path).unwrap_or_else(|e| panic!("bench save: {e}"));
                        spent += started.elapsed();
                    }
                    spent
                });
            }),
        );
        peak::report(&format!("graph_save/snapshot/{tools}"));
    }
    group.finish();
}

criterion_group!(benches, graph_update, graph_save);
criterion_main!(benches);
