//! The optimised BTP plan (`make_plan`, `knapsack`) against Algorithm 1
//! written plainly, as the paper has it: a table over (tool, budget), each
//! cell the best of k = 0..=F̃ calls, then the trace-back. Seeded instances,
//! from small ones full of ties (values in sixteenths, so float sums are
//! exact and equal plans really tie) to the benchmark's n = 1,000, R =
//! 10,000; the plans must be the same call for call, not only as good.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use switchyard::budget::plan::{Item, knapsack, make_plan, scale_capacity, scale_cost};

/// Algorithm 1 with the tie-breaking `plan.rs` documents: among optimal
/// plans the least cost; then, from the last tool back, the fewest calls
/// that keep the optimum. Returns (optimal value, calls per tool).
fn algorithm1(costs: &[u64], values: &[f64], max: &[u32], capacity: u64) -> (f64, Vec<u32>) {
    let n = costs.len();
    let width = capacity as usize + 1;
    // best[j]: the best value within budget j using the tools so far.
    let mut best = vec![0.0f64; width];
    // choice[i][j]: the calls tool i takes in the best plan within budget j.
    let mut choice = vec![vec![0u32; width]; n];
    for i in 0..n {
        let previous = best.clone();
        for j in 0..width {
            for k in 1..=max[i] {
                let spent = u64::from(k) * costs[i];
                if spent > j as u64 {
                    break;
                }
                // Strictly better only, so a tie keeps the fewer calls.
                let candidate = previous[j - spent as usize] + f64::from(k) * values[i];
                if candidate > best[j] {
                    best[j] = candidate;
                    choice[i][j] = k;
                }
            }
        }
    }
    let optimum = best.iter().copied().fold(0.0, f64::max);
    let mut j = best.iter().position(|&v| v == optimum).unwrap_or(0);
    let mut calls = vec![0u32; n];
    for i in (0..n).rev() {
        calls[i] = choice[i][j];
        j -= calls[i] as usize * costs[i] as usize;
    }
    (optimum, calls)
}

/// The plan's value summed as the DP sums it: tool by tool, in order.
fn value_of(calls: &[u32], values: &[f64]) -> f64 {
    calls.iter().zip(values).filter(|(k, _)| **k > 0).fold(0.0, |sum, (&k, &v)| sum + f64::from(k) * v)
}

struct Instance {
    costs: Vec<u64>,
    values: Vec<f64>,
    max: Vec<u32>,
    capacity: u64,
}

impl Instance {
    fn items(&self) -> Vec<Item> {
        (0..self.costs.len())
            .map(|i| Item {
                tool: format!("t{i}"),
                cost: self.costs[i] as f64,
                value: self.values[i],
                max_calls: self.max[i],
            })
            .collect()
    }
}

/// n tools with costs 1..=max_cost, F̃ in 0..=max_f and budget up to
/// `max_capacity`; `sixteenths` draws values from {0, 1/16, ..., 1} (many
/// exact ties), otherwise from [0, 1).
fn instance(rng: &mut ChaCha8Rng, n: usize, max_cost: u64, max_f: u32, capacity: u64, sixteenths: bool) -> Instance {
    Instance {
        costs: (0..n).map(|_| rng.random_range(1..=max_cost)).collect(),
        values: (0..n)
            .map(
                |_| if sixteenths { f64::from(rng.random_range(0u32..=16)) / 16.0 } else { rng.random_range(0.0..1.0) },
            )
            .collect(),
        max: (0..n).map(|_| rng.random_range(0..=max_f)).collect(),
        capacity,
    }
}

fn assert_same_plan(inst: &Instance, label: &str) {
    let (optimum, expected) = algorithm1(&inst.costs, &inst.values, &inst.max, inst.capacity);
    let (best, calls) = knapsack(&inst.costs, &inst.values, &inst.max, inst.capacity);
    assert_eq!(calls, expected, "{label}: knapsack's plan");
    assert_eq!(best, optimum, "{label}: knapsack's value");
    let plan = make_plan(&inst.items(), inst.capacity as f64, 1.0);
    let planned: Vec<u32> = plan.allowances.iter().map(|a| a.calls).collect();
    assert_eq!(planned, expected, "{label}: make_plan's plan");
    assert_eq!(plan.planned_value, value_of(&expected, &inst.values), "{label}: make_plan's value");
}

#[test]
fn small_instances_with_ties_plan_as_algorithm1() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for case in 0..400 {
        let n = rng.random_range(1..=40);
        let capacity = rng.random_range(0..=300);
        let inst = instance(&mut rng, n, 30, 12, capacity, true);
        assert_same_plan(&inst, &format!("sixteenths case {case}"));
    }
}

#[test]
fn mid_sized_instances_plan_as_algorithm1() {
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    for case in 0..60 {
        let n = rng.random_range(1..=300);
        let capacity = rng.random_range(0..=3_000);
        let sixteenths = case % 2 == 0;
        let inst = instance(&mut rng, n, 100, 10, capacity, sixteenths);
        assert_same_plan(&inst, &format!("mid case {case}"));
    }
}

/// The benchmark's shape (`benches/plan.rs`): n = 1,000, R = 10,000, costs
/// 1–100, F̃ ≤ 10.
#[test]
fn benchmark_sized_instances_plan_as_algorithm1() {
    for seed in [7, 8] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let inst = instance(&mut rng, 1_000, 100, 10, 10_000, seed % 2 == 0);
        assert_same_plan(&inst, &format!("n = 1000, seed {seed}"));
    }
}

/// Fractional costs at λ = 10: the plan is Algorithm 1's on the scaled
/// instance (⌈λc⌉, ⌊λR⌋).
#[test]
fn scaled_instances_plan_as_algorithm1() {
    let mut rng = ChaCha8Rng::seed_from_u64(19);
    for case in 0..100 {
        let n = rng.random_range(1..=30);
        let items: Vec<Item> = (0..n)
            .map(|i| Item {
                tool: format!("t{i}"),
                cost: f64::from(rng.random_range(1u32..=50)) / 10.0,
                value: f64::from(rng.random_range(0u32..=8)) / 8.0,
                max_calls: rng.random_range(0..=8),
            })
            .collect();
        let remaining = f64::from(rng.random_range(0u32..=400)) / 10.0;
        let costs: Vec<u64> = items.iter().map(|it| scale_cost(it.cost, 10.0)).collect();
        let values: Vec<f64> = items.iter().map(|it| it.value).collect();
        let max: Vec<u32> = items.iter().map(|it| it.max_calls).collect();
        let (_, expected) = algorithm1(&costs, &values, &max, scale_capacity(remaining, 10.0));
        let plan = make_plan(&items, remaining, 10.0);
        let planned: Vec<u32> = plan.allowances.iter().map(|a| a.calls).collect();
        let real_cost: f64 =
            expected.iter().zip(&items).filter(|(k, _)| **k > 0).map(|(&k, it)| f64::from(k) * it.cost).sum();
        if real_cost <= remaining {
            assert_eq!(planned, expected, "scaled case {case}");
        } else {
            // Decimal costs summed in floats can exceed R by an ulp where the
            // scaled plan fits exactly; `make_plan` then withdraws calls.
            assert!(planned.iter().zip(&expected).all(|(p, e)| p <= e), "scaled case {case}");
            assert!(plan.planned_cost <= remaining, "scaled case {case}");
        }
    }
}
