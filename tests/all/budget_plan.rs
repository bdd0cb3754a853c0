//! The BTP plan (Algorithm 1): the bounded knapsack against brute force and
//! the paper's O(n·R·F) recurrence, the Figure 5 case by hand, λ scaling,
//! tie-breaking and edge cases.

use proptest::prelude::*;
use switchyard::budget::plan::{Item, knapsack, make_plan, scale_capacity, scale_cost};

/// Every f with 0 ≤ f_i ≤ max_i; the best value among those within capacity.
fn brute_force(costs: &[u64], values: &[f64], max: &[u32], capacity: u64) -> f64 {
    let mut best = 0.0f64;
    let mut f = vec![0u32; costs.len()];
    loop {
        let cost: u64 = f.iter().zip(costs).map(|(&k, &c)| u64::from(k) * c).sum();
        if cost <= capacity {
            best = best.max(f.iter().zip(values).map(|(&k, &v)| f64::from(k) * v).sum());
        }
        // Odometer increment; done when it wraps.
        let mut i = 0;
        loop {
            if i == f.len() {
                return best;
            }
            if f[i] < max[i] {
                f[i] += 1;
                break;
            }
            f[i] = 0;
            i += 1;
        }
    }
}

/// The paper's recurrence as written, O(n·R·F): the reference for larger F.
fn algorithm1(costs: &[u64], values: &[f64], max: &[u32], capacity: u64) -> f64 {
    let width = capacity as usize + 1;
    let mut prev = vec![0.0f64; width];
    for i in 0..costs.len() {
        let mut cur = prev.clone();
        for j in 0..width {
            for k in 1..=max[i] as usize {
                let kc = k * costs[i] as usize;
                if j >= kc {
                    cur[j] = cur[j].max(prev[j - kc] + k as f64 * values[i]);
                }
            }
        }
        prev = cur;
    }
    prev[width - 1]
}

fn cost_of(f: &[u32], costs: &[u64]) -> u64 {
    f.iter().zip(costs).map(|(&k, &c)| u64::from(k) * c).sum()
}

fn value_of(f: &[u32], values: &[f64]) -> f64 {
    f.iter().zip(values).map(|(&k, &v)| f64::from(k) * v).sum()
}

fn items(costs: &[f64], values: &[f64], max: &[u32]) -> Vec<Item> {
    costs
        .iter()
        .zip(values)
        .zip(max)
        .enumerate()
        .map(|(i, ((&cost, &value), &max_calls))| Item { tool: format!("t{i}"), cost, value, max_calls })
        .collect()
}

/// n ≤ 5 tools, costs 1..10, max ≤ 3, values 0..1 with two decimals.
fn small_instance() -> impl Strategy<Value = (Vec<u64>, Vec<f64>, Vec<u32>, u64)> {
    (0usize..=5).prop_flat_map(|n| {
        (
            prop::collection::vec(1u64..=10, n),
            prop::collection::vec((0u32..=100).prop_map(|x| f64::from(x) / 100.0), n),
            prop::collection::vec(0u32..=3, n),
            0u64..=20,
        )
    })
}

proptest! {
    #[test]
    fn knapsack_matches_brute_force((costs, values, max, capacity) in small_instance()) {
        let (best, f) = knapsack(&costs, &values, &max, capacity);
        prop_assert_eq!(f.len(), costs.len());
        prop_assert!((best - brute_force(&costs, &values, &max, capacity)).abs() < 1e-9);
        prop_assert!((best - value_of(&f, &values)).abs() < 1e-9);
        prop_assert!(cost_of(&f, &costs) <= capacity);
        for ((&k, &m), &v) in f.iter().zip(&max).zip(&values) {
            prop_assert!(k <= m);
            // A worthless tool never spends budget.
            prop_assert!(v > 0.0 || k == 0);
        }
    }

    /// Larger F goes through the sliding-window (deque) rows.
    #[test]
    fn knapsack_matches_algorithm1_with_large_f(
        (costs, values, max, capacity) in (1usize..=8).prop_flat_map(|n| (
            prop::collection::vec(1u64..=15, n),
            prop::collection::vec((0u32..=100).prop_map(|x| f64::from(x) / 100.0), n),
            prop::collection::vec(0u32..=40, n),
            0u64..=200,
        ))
    ) {
        let (best, f) = knapsack(&costs, &values, &max, capacity);
        prop_assert!((best - algorithm1(&costs, &values, &max, capacity)).abs() < 1e-9);
        prop_assert!((best - value_of(&f, &values)).abs() < 1e-9);
        prop_assert!(cost_of(&f, &costs) <= capacity);
        prop_assert!(f.iter().zip(&max).all(|(k, m)| k <= m));
    }

    /// Real costs at λ ∈ {1, 10, 100}: the real planned cost never exceeds R,
    /// and the plan is the integer optimum of the scaled instance.
    #[test]
    fn real_costs_never_overspend(
        (costs, values, max) in (0usize..=6).prop_flat_map(|n| (
            prop::collection::vec(0.01f64..10.0, n),
            prop::collection::vec(0.0f64..1.0, n),
            prop::collection::vec(0u32..=4, n),
        )),
        remaining in -1.0f64..25.0,
        lambda in prop::sample::select(vec![1.0, 10.0, 100.0]),
    ) {
        let plan = make_plan(&items(&costs, &values, &max), remaining, lambda);
        prop_assert!(plan.planned_cost <= remaining.max(0.0));
        let real: f64 = plan.allowances.iter().map(|a| f64::from(a.calls) * a.cost).sum();
        prop_assert_eq!(plan.planned_cost, real);
        prop_assert!(plan.allowances.iter().all(|a| a.calls <= a.max_calls));
        if remaining > 0.0 {
            let scaled: Vec<u64> = costs.iter().map(|&c| scale_cost(c, lambda)).collect();
            let capacity = scale_capacity(remaining, lambda);
            let best = brute_force(&scaled, &values, &max, capacity);
            prop_assert!((plan.planned_value - best).abs() < 1e-9, "{} vs {}", plan.planned_value, best);
        }
    }

    /// λ = 1 with integer costs is exactly the integer DP.
    #[test]
    fn lambda_one_integer_costs_equal_integer_dp((costs, values, max, capacity) in small_instance()) {
        let real: Vec<f64> = costs.iter().map(|&c| c as f64).collect();
        let plan = make_plan(&items(&real, &values, &max), capacity as f64, 1.0);
        let (best, f) = knapsack(&costs, &values, &max, capacity);
        let calls: Vec<u32> = plan.allowances.iter().map(|a| a.calls).collect();
        prop_assert_eq!(calls, f);
        prop_assert!((plan.planned_value - best).abs() < 1e-9);
    }
}

/// The paper's Figure 5 case: five candidate tools costing 2, 9, 3, 8, 6 and
/// R = 20, with v and F̃ stated here (the paper does not give them):
///
/// | tool | c | v   | F̃ | v/c  |
/// | t1   | 2 | 0.9 | 2 | 0.45 |
/// | t2   | 9 | 0.6 | 1 | 0.07 |
/// | t3   | 3 | 0.8 | 2 | 0.27 |
/// | t4   | 8 | 0.5 | 1 | 0.06 |
/// | t5   | 6 | 0.7 | 1 | 0.12 |
///
/// Taking t1 and t3 fully costs 2·2 + 2·3 = 10 for 1.8 + 1.6 = 3.4, leaving
/// 10: of t2 (9, 0.6), t4 (8, 0.5), t5 (6, 0.7) only one fits (any two cost
/// ≥ 14), so the best is t5 → cost 16, value 4.1. Giving up one t1 (frees 2,
/// 12 left, −0.9) or one t3 (frees 3, 13 left, −0.8) still admits only one of
/// t2/t4/t5 (t5 + t4 = 14 > 13), at most +0.7: 3.2 or 3.3. Giving up more of
/// t1/t3 loses ≥ 1.6 and gains at most t5 + t2 = 1.3 (cost 15) or
/// t5 + t4 = 1.2. So the optimum is f = (2, 0, 2, 0, 1): cost 16, value 4.1.
#[test]
fn paper_figure5_case() {
    let costs = [2u64, 9, 3, 8, 6];
    let values = [0.9, 0.6, 0.8, 0.5, 0.7];
    let max = [2u32, 1, 2, 1, 1];
    let (best, f) = knapsack(&costs, &values, &max, 20);
    assert_eq!(f, vec![2, 0, 2, 0, 1]);
    assert!((best - 4.1).abs() < 1e-12);

    let real = [2.0, 9.0, 3.0, 8.0, 6.0];
    let plan = make_plan(&items(&real, &values, &max), 20.0, 1.0);
    let calls: Vec<u32> = plan.allowances.iter().map(|a| a.calls).collect();
    assert_eq!(calls, vec![2, 0, 2, 0, 1]);
    assert_eq!(plan.planned_cost, 16.0);
    assert!((plan.planned_value - 4.1).abs() < 1e-12);
    assert_eq!(plan.remaining, 20.0);
    let tools: Vec<&str> = plan.allowances.iter().map(|a| a.tool.as_str()).collect();
    assert_eq!(tools, ["t0", "t1", "t2", "t3", "t4"]);
}

#[test]
fn scaling_rounds_costs_up_and_budget_down() {
    assert_eq!(scale_cost(0.25, 10.0), 3);
    assert_eq!(scale_capacity(2.57, 10.0), 25);
    // Float noise (0.7 · 10 = 7.000000000000001) is not a real excess.
    assert_eq!(scale_cost(0.7, 10.0), 7);
    assert_eq!(scale_cost(0.07, 100.0), 7);
    assert_eq!(scale_capacity(0.3, 10.0), 3);
    assert_eq!(scale_cost(3.0, 1.0), 3);
    // Invalid inputs never panic: an invalid λ counts as 1.
    assert_eq!(scale_cost(2.5, 0.0), 3);
    assert_eq!(scale_cost(f64::NAN, 1.0), u64::MAX);
    assert_eq!(scale_capacity(f64::NAN, 1.0), 0);
    assert_eq!(scale_capacity(-3.0, 10.0), 0);
}

#[test]
fn fractional_costs_plan_within_remaining() {
    // At λ = 10: c̃ = ⌈2.5⌉ = 3 and 5, R̃ = ⌊10.5⌋ = 10. Candidates: (2, 0)
    // costs 6 for 1.2, (1, 1) costs 8 for 1.6, (2, 1) costs 11 > 10. So (1, 1),
    // although (2, 1) really costs 1.0 ≤ 1.05: rounding up is conservative.
    let plan = make_plan(&items(&[0.25, 0.5], &[0.6, 1.0], &[2, 1]), 1.05, 10.0);
    let calls: Vec<u32> = plan.allowances.iter().map(|a| a.calls).collect();
    assert_eq!(calls, vec![1, 1]);
    assert!(plan.planned_cost <= 1.05);
    assert_eq!(plan.lambda, 10.0);
}

#[test]
fn no_budget_plans_nothing() {
    for remaining in [0.0, -5.0, f64::NAN] {
        let plan = make_plan(&items(&[1.0, 2.0], &[0.5, 0.9], &[3, 3]), remaining, 1.0);
        assert!(plan.allowances.iter().all(|a| a.calls == 0));
        assert_eq!(plan.allowances.len(), 2);
        assert_eq!(plan.planned_cost, 0.0);
        assert_eq!(plan.planned_value, 0.0);
    }
}

#[test]
fn empty_items() {
    let plan = make_plan(&[], 20.0, 1.0);
    assert!(plan.allowances.is_empty());
    assert_eq!(plan.planned_cost, 0.0);
    assert_eq!(knapsack(&[], &[], &[], 20), (0.0, vec![]));
}

#[test]
fn worthless_tools_get_no_calls() {
    let plan = make_plan(&items(&[1.0, 2.0, 3.0], &[0.0, 0.0, 0.0], &[3, 3, 3]), 20.0, 1.0);
    assert!(plan.allowances.iter().all(|a| a.calls == 0));
    assert_eq!(plan.planned_cost, 0.0);
}

#[test]
fn a_single_tool_too_expensive_or_just_affordable() {
    let plan = make_plan(&items(&[25.0], &[1.0], &[3]), 20.0, 1.0);
    assert_eq!(plan.allowances[0].calls, 0);
    let plan = make_plan(&items(&[7.0], &[1.0], &[3]), 20.0, 1.0);
    assert_eq!(plan.allowances[0].calls, 2);
    assert_eq!(plan.planned_cost, 14.0);
}

#[test]
fn ties_go_to_the_cheapest_plan_then_the_lower_index() {
    // Same value 1.0 for cost 2 or 3: the cheaper plan wins whatever the order.
    assert_eq!(knapsack(&[2, 3], &[1.0, 1.0], &[1, 1], 3).1, vec![1, 0]);
    assert_eq!(knapsack(&[3, 2], &[1.0, 1.0], &[1, 1], 3).1, vec![0, 1]);
    // Identical tools, room for one: the lower index.
    assert_eq!(knapsack(&[2, 2, 2], &[0.5, 0.5, 0.5], &[1, 1, 1], 3).1, vec![1, 0, 0]);
    // With F large enough for the deque rows, the same rule.
    assert_eq!(knapsack(&[1, 1], &[0.5, 0.5], &[20, 20], 25).1, vec![20, 5]);
}

#[test]
fn free_tools_take_their_frequency_limit() {
    let plan = make_plan(&items(&[0.0, 5.0], &[0.4, 0.9], &[3, 9]), 10.0, 1.0);
    let calls: Vec<u32> = plan.allowances.iter().map(|a| a.calls).collect();
    assert_eq!(calls, vec![3, 2]);
    assert_eq!(plan.planned_cost, 10.0);
}

#[test]
fn invalid_items_are_never_planned() {
    let plan = make_plan(&items(&[f64::NAN, -1.0, f64::INFINITY, 1.0], &[1.0, 1.0, 1.0, f64::NAN], &[3; 4]), 10.0, 1.0);
    assert!(plan.allowances.iter().all(|a| a.calls == 0));
    // Mismatched slice lengths: missing values and limits count as 0.
    assert_eq!(knapsack(&[1, 1], &[1.0], &[], 5).1, vec![0, 0]);
}

#[test]
fn wide_frequency_limits_use_wider_cells() {
    // max > 255 needs u16 choice cells; 300 + 2·100 = 500 is optimal (v/c 1.0
    // for the first, 0.6 for the second).
    let (best, f) = knapsack(&[1, 2], &[1.0, 1.2], &[300, 400], 500);
    assert_eq!(f, vec![300, 100]);
    assert!((best - 420.0).abs() < 1e-9);
}

#[test]
fn huge_capacities_stay_feasible() {
    // Costs sharing a factor of 10^9 divide out exactly.
    let costs = [2_000_000_000u64, 9_000_000_000, 3_000_000_000, 8_000_000_000, 6_000_000_000];
    let values = [0.9, 0.6, 0.8, 0.5, 0.7];
    let max = [2u32, 1, 2, 1, 1];
    assert_eq!(knapsack(&costs, &values, &max, 20_000_000_000).1, vec![2, 0, 2, 0, 1]);
    // Coprime costs with a capacity far beyond any table are coarsened: the
    // plan must still fit and take something.
    let costs = [200_000_000_001u64, 900_000_000_007, 300_000_000_011, 800_000_000_017, 600_000_000_023];
    // The slack (the optimum leaves 4·10^11 unused) dwarfs the rounding, so
    // the coarse plan is still the Figure 5 optimum.
    let (best, f) = knapsack(&costs, &values, &max, 2_000_000_000_000);
    assert!(cost_of(&f, &costs) <= 2_000_000_000_000);
    assert_eq!(f, vec![2, 0, 2, 0, 1]);
    assert!((best - 4.1).abs() < 1e-12);
}

/// A plan that allows no call costs +0 and is worth +0: Rust's float `sum`
/// starts from -0.0, which the eval's rows once carried as `-0.0`.
#[test]
fn a_plan_with_no_call_costs_positive_zero() {
    for (costs, remaining) in [(vec![30.0, 50.0], 20.0), (vec![], 20.0), (vec![5.0], 0.0)] {
        let values = vec![0.5; costs.len()];
        let max = vec![3; costs.len()];
        let plan = make_plan(&items(&costs, &values, &max), remaining, 1.0);
        assert!(plan.allowances.iter().all(|a| a.calls == 0));
        assert!(plan.planned_cost == 0.0 && plan.planned_cost.is_sign_positive(), "{:?}", plan.planned_cost);
        assert!(plan.planned_value.is_sign_positive());
        assert_eq!(serde_json::to_string(&plan.planned_cost).unwrap(), "0.0");
    }
}
