//! BTP planning (Algorithm 1): n = 1,000 tools with R = 10,000 and F̃ ≤ 10
//! (the goal: median ≤ 10 ms), and the paper's n = 5, R = 20.

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use switchyard::budget::plan::{Item, make_plan};

/// Seeded tools: integer costs 1..=100, values in [0, 1), F̃ 1..=10.
fn random_items(n: usize, seed: u64) -> Vec<Item> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| Item {
            tool: format!("tool_{i:04}"),
            cost: f64::from(rng.random_range(1u32..=100)),
            value: rng.random_range(0.0..1.0),
            max_calls: rng.random_range(1..=10),
        })
        .collect()
}

/// The Figure 5 candidates (costs from the paper, v and F̃ as in the tests).
fn paper_items() -> Vec<Item> {
    [(2.0, 0.9, 2), (9.0, 0.6, 1), (3.0, 0.8, 2), (8.0, 0.5, 1), (6.0, 0.7, 1)]
        .into_iter()
        .enumerate()
        .map(|(i, (cost, value, max_calls))| Item { tool: format!("t{i}"), cost, value, max_calls })
        .collect()
}

fn plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    group.sample_size(20);
    group.warm_up_time(Duration::from_millis(500));
    let large = random_items(1_000, 7);
    group.bench_function(
        "n1000_R10000_F10",
        peak::tracked(|b: &mut Bencher| b.iter(|| make_plan(black_box(&large), black_box(10_000.0), 1.0))),
    );
    peak::report("plan/n1000_R10000_F10");
    let paper = paper_items();
    group.bench_function(
        "paper_n5_R20",
        peak::tracked(|b: &mut Bencher| b.iter(|| make_plan(black_box(&paper), black_box(20.0), 1.0))),
    );
    peak::report("plan/paper_n5_R20");
    group.finish();
}

criterion_group!(benches, plan);
criterion_main!(benches);
