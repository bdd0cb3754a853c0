//! The tool-usage plan (BTP §2.2, Algorithm 1): a bounded knapsack
//! over the candidate tools, maximising Σ f_i·v_i subject to Σ f_i·c_i ≤ R
//! and f_i ≤ ⌊F̃_i⌋, solved exactly by dynamic programming with trace-back.
//!
//! The paper's recurrence costs O(n·R·F). Here each item's row is computed
//! in O(R): per residue class j ≡ r (mod c) the candidates
//! `V[j − k·c] + k·v` for k ≤ F form a sliding window over
//! `g(s) = V[r + s·c] − s·v`, whose maximum a monotone deque keeps. For
//! small F the direct k-loop is cheaper (it vectorises), so each item takes
//! whichever is cheaper; both record the chosen k for the trace-back.
//!
//! Tie-breaking, so plans are deterministic: among optimal plans the one
//! with the least (scaled) cost is returned; then, tracing back from the
//! last item to the first, each item takes the fewest calls that keep the
//! optimum, so ties go to the lower-index tool. Tools of value 0 (or less)
//! never get calls: they add nothing and would only spend budget.
//!
//! Before the DP, calls that no optimal plan makes are dropped ([`reduce`]):
//! with many tools most have a value per cost far below the few that fill
//! the budget, and an LP bound proves it. Every optimal plan survives, and
//! with it every choice the trace-back makes (see [`reduce`]), so this
//! changes the speed, never the plan.

use serde::{Deserialize, Serialize};

/// One candidate tool for the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub tool: String,
    /// Real cost per call, c_i > 0.
    pub cost: f64,
    /// Expected value v(q_u, t) ≥ 0.
    pub value: f64,
    /// ⌊F̃(q_u, t)⌋.
    pub max_calls: u32,
}

/// What the plan allows one tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Allowance {
    pub tool: String,
    pub calls: u32,
    /// Real cost per call.
    pub cost: f64,
    pub value: f64,
    pub max_calls: u32,
}

/// The plan for one task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetPlan {
    /// Every item, in input order; `calls` may be 0.
    pub allowances: Vec<Allowance>,
    /// R = B − c_s.
    pub remaining: f64,
    /// Σ calls·cost in real terms; never above `remaining`.
    pub planned_cost: f64,
    pub planned_value: f64,
    /// The λ actually used (an invalid λ is replaced by 1).
    pub lambda: f64,
}

/// Beyond this many bytes of DP table the instance is coarsened (see
/// [`knapsack`]); 64 MiB is ~6× the n = 1,000, R = 10,000 case.
const TABLE_LIMIT_BYTES: u128 = 64 << 20;

/// Per-item method, from measurements at n = 1,000, R = 10,000: the direct
/// k-loop costs F cheap passes over the row (~1 cycle a cell), the deque
/// ~7 passes' worth whatever F. (A log₂F doubling scheme measured no better
/// at F ≤ 10: its merges branch on data.)
const DIRECT_MAX_CALLS: u32 = 6;

/// Relative slack for float noise in λ·x (0.7 × 10 = 7.000000000000001):
/// without it a cost of 0.7 at λ = 10 would plan as 0.8.
const SCALE_TOLERANCE: f64 = 1e-9;

/// λ·x snapped to the nearest integer when it is within float noise of it.
fn scaled(x: f64, lambda: f64) -> f64 {
    let y = x * lambda;
    let near = y.round();
    if (y - near).abs() <= SCALE_TOLERANCE * near.abs().max(1.0) { near } else { y }
}

fn valid_lambda(lambda: f64) -> f64 {
    if lambda.is_finite() && lambda > 0.0 { lambda } else { 1.0 }
}

/// λ scaling of a cost (appendix A.1): c̃ = ⌈λc⌉ as an integer, so the DP
/// never underestimates a call. A cost ≤ 0 scales to 0 (free); NaN or an
/// infinite cost scales to `u64::MAX` (unaffordable). An invalid λ (≤ 0,
/// NaN, ∞) counts as 1.
pub fn scale_cost(cost: f64, lambda: f64) -> u64 {
    if cost.is_nan() || cost == f64::INFINITY {
        return u64::MAX;
    }
    if cost <= 0.0 {
        return 0;
    }
    // `as` saturates, which is the right answer for costs beyond u64.
    scaled(cost, valid_lambda(lambda)).ceil() as u64
}

/// λ scaling of the budget left (appendix A.1): R̃ = ⌊λR⌋ as an integer, so
/// the DP never sees more budget than there is. R ≤ 0 or NaN gives 0; an
/// invalid λ counts as 1.
pub fn scale_capacity(remaining: f64, lambda: f64) -> u64 {
    if remaining.is_nan() || remaining <= 0.0 {
        return 0;
    }
    scaled(remaining, valid_lambda(lambda)).floor() as u64
}

/// Integer bounded knapsack, exact: maximise Σ f_i v_i s.t. Σ f_i c_i ≤
/// capacity, 0 ≤ f_i ≤ max_i. Returns (best value, f), f in input order.
///
/// `f` has `costs.len()` entries; a missing value or max counts as 0. Items
/// of cost 0 are free, so they take all `max_i` calls when their value is
/// positive: F̃ is their only limit and they cannot displace anything. Items
/// with a value that is not positive and finite get 0 calls.
///
/// Memory is one choice cell per (item, capacity unit) after dropping
/// useless items and dividing by the gcd of the costs, plus two f64 rows.
/// Only if that
/// would exceed 64 MiB are costs and capacity coarsened by a factor s
/// (c → ⌈c/s⌉, capacity → ⌊capacity/s⌋, the same conservative rounding as
/// λ): the plan is then still feasible but possibly not optimal.
pub fn knapsack(costs: &[u64], values: &[f64], max: &[u32], capacity: u64) -> (f64, Vec<u32>) {
    let n = costs.len();
    let mut f = vec![0u32; n];
    let mut active: Vec<Active> = Vec::new();
    for (i, &cost) in costs.iter().enumerate() {
        let value = values.get(i).copied().unwrap_or(0.0);
        let max_calls = max.get(i).copied().unwrap_or(0);
        let worth_a_call = value.is_finite() && value > 0.0 && max_calls > 0;
        if !worth_a_call {
            continue;
        }
        if cost == 0 {
            f[i] = max_calls;
        } else if cost <= capacity {
            let max_calls = max_calls.min(u32::try_from(capacity / cost).unwrap_or(u32::MAX));
            active.push(Active { index: i, cost, value, max_calls });
        }
    }
    solve(&active, capacity, &mut f);
    let best = f.iter().zip(values).map(|(&k, &v)| if k == 0 { 0.0 } else { f64::from(k) * v }).sum();
    (best, f)
}

/// The plan for `items` under R = B − c_s (R ≤ 0 → everything 0).
///
/// Costs and R are scaled by λ ([`scale_cost`], [`scale_capacity`]) and
/// the DP runs on integers. Items with a negative or non-finite cost, or a
/// non-finite value, are never planned. Since ⌈λc⌉ ≥ λc and ⌊λR⌋ ≤ λR the
/// plan fits in real terms; float rounding of Σ calls·cost (or λ·x snapped
/// within 1e-9) could still tip it over `remaining` by an ulp, so as a last
/// guard calls are withdrawn, lowest value per cost first, until the real
/// planned cost fits.
pub fn make_plan(items: &[Item], remaining: f64, lambda: f64) -> BudgetPlan {
    let lambda = valid_lambda(lambda);
    let mut allowances: Vec<Allowance> = items
        .iter()
        .map(|it| Allowance {
            tool: it.tool.clone(),
            calls: 0,
            cost: it.cost,
            value: it.value,
            max_calls: it.max_calls,
        })
        .collect();
    if remaining > 0.0 {
        let plannable = |it: &Item| it.cost.is_finite() && it.cost >= 0.0 && it.value.is_finite();
        let costs: Vec<u64> =
            items.iter().map(|it| if plannable(it) { scale_cost(it.cost, lambda) } else { u64::MAX }).collect();
        let values: Vec<f64> = items.iter().map(|it| if plannable(it) { it.value } else { 0.0 }).collect();
        let max: Vec<u32> = items.iter().map(|it| it.max_calls).collect();
        let (_, f) = knapsack(&costs, &values, &max, scale_capacity(remaining, lambda));
        for (a, k) in allowances.iter_mut().zip(f) {
            a.calls = k;
        }
        while real_cost(&allowances) > remaining {
            let Some(worst) = allowances
                .iter()
                .enumerate()
                .filter(|(_, a)| a.calls > 0 && a.cost > 0.0)
                .min_by(|(_, a), (_, b)| (a.value / a.cost).total_cmp(&(b.value / b.cost)))
                .map(|(i, _)| i)
            else {
                break;
            };
            allowances[worst].calls -= 1;
        }
    }
    let planned_cost = real_cost(&allowances);
    // Folded from +0.0: Rust's float `sum` starts from -0.0, and an empty
    // plan's cost would be written and printed as -0.
    let planned_value = allowances.iter().filter(|a| a.calls > 0).fold(0.0, |s, a| s + f64::from(a.calls) * a.value);
    BudgetPlan { allowances, remaining, planned_cost, planned_value, lambda }
}

fn real_cost(allowances: &[Allowance]) -> f64 {
    allowances.iter().filter(|a| a.calls > 0).fold(0.0, |s, a| s + f64::from(a.calls) * a.cost)
}

/// An item that can take at least one call: cost in 1..=capacity, value > 0,
/// and `max_calls` already capped at capacity / cost.
#[derive(Clone, Copy, Debug)]
struct Active {
    index: usize,
    cost: u64,
    value: f64,
    max_calls: u32,
}

/// Fills `f` for the active items.
fn solve(active: &[Active], capacity: u64, f: &mut [u32]) {
    if active.is_empty() {
        return;
    }
    // Everything fits: no choice to make.
    let total: u128 = active.iter().map(|a| u128::from(a.cost) * u128::from(a.max_calls)).sum();
    if total <= u128::from(capacity) {
        for a in active {
            f[a.index] = a.max_calls;
        }
        return;
    }
    let active = reduce(active, capacity);
    if active.is_empty() {
        return;
    }
    // Every plan's cost is a multiple of the gcd, so dividing it out is exact.
    let g = active.iter().fold(0, |g, a| gcd(g, a.cost));
    let capacity = capacity / g;
    let items: Vec<Active> = active.iter().map(|a| Active { cost: a.cost / g, ..*a }).collect();
    let widest = items.iter().map(|a| a.max_calls).max().unwrap_or(0);
    let cell_bytes: u128 = if widest <= u32::from(u8::MAX) {
        1
    } else if widest <= u32::from(u16::MAX) {
        2
    } else {
        4
    };
    // Per capacity unit: one cell per item, two f64 value rows and the
    // deque's (f64 + usize) buffers.
    let per_unit = items.len() as u128 * cell_bytes + 16 + 16;
    if (u128::from(capacity) + 1) * per_unit > TABLE_LIMIT_BYTES {
        let fits = (TABLE_LIMIT_BYTES / per_unit).max(2) - 1;
        let s = u64::try_from(u128::from(capacity).div_ceil(fits)).unwrap_or(u64::MAX).max(2);
        let coarse_capacity = capacity / s;
        let coarse: Vec<Active> = items
            .iter()
            .map(|a| a.cost.div_ceil(s))
            .zip(&items)
            .filter(|&(c, _)| c <= coarse_capacity)
            .map(|(c, a)| Active {
                cost: c,
                max_calls: a.max_calls.min(u32::try_from(coarse_capacity / c).unwrap_or(u32::MAX)),
                ..*a
            })
            .collect();
        return solve(&coarse, coarse_capacity, f);
    }
    // The table fits in 64 MiB, so the capacity fits in usize.
    let capacity = usize::try_from(capacity).unwrap_or(usize::MAX);
    match cell_bytes {
        1 => table_dp::<u8>(&items, capacity, f),
        2 => table_dp::<u16>(&items, capacity, f),
        _ => table_dp::<u32>(&items, capacity, f),
    }
}

/// Relative margin on the bounds of [`reduce`], far above the float error
/// of summing a plan's values (about n·2⁻⁵³ relative) and far below the gap
/// the bounds leave in practice (about 10⁻⁴ relative at n = 1,000).
const BOUND_TOLERANCE: f64 = 1e-7;

/// `active` with every call that no optimal plan makes dropped: an item's
/// `max_calls` becomes the largest k whose bound still reaches a known
/// plan's value, and items left with none go.
///
/// Forcing k calls of an item bounds a plan's value by U(k) = k·v + L(C −
/// k·c), with L the LP relaxation over all items (fractional calls, best
/// value per cost first); the greedy integer plan gives a lower bound G on
/// the optimum. A plan with k calls where U(k) < G is not optimal, and as U
/// is concave in k (U(0) = L(C) ≥ G) neither is any with more.
///
/// Why the DP's answer is unchanged, including its tie-breaking: the
/// reduced instance keeps every optimal plan, so it has the same optimum and
/// the same least optimal cost. Along the trace-back each state (i, j) lies
/// on an optimal plan, and item i's candidate k there reaches the row's
/// maximum only if some optimal plan takes k calls of i from that state;
/// such a plan survives, so the fewest such k is the same in both. Float
/// sums are monotone, so this holds for the DP's float values too, given a
/// margin above rounding ([`BOUND_TOLERANCE`]).
fn reduce(active: &[Active], capacity: u64) -> Vec<Active> {
    let ratio = |a: &Active| a.value / a.cost as f64;
    let mut order: Vec<&Active> = active.iter().collect();
    order.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)));
    // Prefix sums over the ratio order: cost and value of the first i items
    // taken whole.
    let mut whole_cost = Vec::with_capacity(order.len() + 1);
    let mut whole_value = Vec::with_capacity(order.len() + 1);
    let (mut cost, mut value) = (0u128, 0.0f64);
    whole_cost.push(cost);
    whole_value.push(value);
    for a in &order {
        cost += u128::from(a.cost) * u128::from(a.max_calls);
        value += a.value * f64::from(a.max_calls);
        whole_cost.push(cost);
        whole_value.push(value);
    }
    let lp = |room: u64| -> f64 {
        // whole_cost[0] = 0 ≤ room, so at least one prefix fits.
        let whole = whole_cost.partition_point(|&c| c <= u128::from(room)) - 1;
        match order.get(whole) {
            Some(a) => whole_value[whole] + (u128::from(room) - whole_cost[whole]) as f64 * ratio(a),
            None => whole_value[whole],
        }
    };
    let mut greedy = 0.0f64;
    let mut room = capacity;
    for a in &order {
        let k = u64::from(a.max_calls).min(room / a.cost);
        room -= k * a.cost;
        greedy += k as f64 * a.value;
    }
    let bound = lp(capacity);
    if !(bound.is_finite() && greedy.is_finite()) {
        return active.to_vec();
    }
    let floor = greedy - BOUND_TOLERANCE * bound;
    active
        .iter()
        .filter_map(|a| {
            // Items are capped at capacity / cost, so k·c never exceeds it.
            let worth = |k: u32| f64::from(k) * a.value + lp(capacity - u64::from(k) * a.cost) >= floor;
            let max_calls = (1..=a.max_calls).take_while(|&k| worth(k)).last()?;
            Some(Active { max_calls, ..*a })
        })
        .collect()
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A choice-table cell: the number of calls chosen for (item, capacity).
trait Cell: Copy + Default {
    fn from_calls(k: u32) -> Self;
    fn calls(self) -> u32;
}

macro_rules! cell {
    ($t:ty) => {
        impl Cell for $t {
            fn from_calls(k: u32) -> Self {
                // Callers pick the cell width from the largest max_calls.
                k as $t
            }
            fn calls(self) -> u32 {
                u32::from(self)
            }
        }
    };
}
cell!(u8);
cell!(u16);
cell!(u32);

/// Algorithm 1 with trace-back. V[j] is the best value within capacity j
/// (so V is non-decreasing in j); `choice[i][j]` is the k item i took there.
fn table_dp<C: Cell>(items: &[Active], capacity: usize, f: &mut [u32]) {
    let width = capacity + 1;
    let mut prev = vec![0.0f64; width];
    let mut cur = vec![0.0f64; width];
    let mut choice: Vec<C> = vec![C::default(); items.len() * width];
    let mut deque = Deque::default();
    // Items are already capped at capacity / cost, so the casts are lossless.
    for (a, row) in items.iter().zip(choice.chunks_exact_mut(width)) {
        let cost = usize::try_from(a.cost).unwrap_or(usize::MAX);
        if a.max_calls <= DIRECT_MAX_CALLS {
            row_direct(&prev, &mut cur, row, cost, a.value, a.max_calls);
        } else {
            row_deque(&prev, &mut cur, row, cost, a.value, a.max_calls as usize, &mut deque);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    // The least capacity that reaches the optimum: the cheapest optimal plan.
    let best = prev.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut j = prev.iter().position(|&v| v >= best).unwrap_or(capacity);
    for (a, row) in items.iter().zip(choice.chunks_exact(width)).rev() {
        let k = row[j].calls();
        f[a.index] = k;
        // Each recorded k satisfies k·c ≤ j, so this never saturates.
        j = j.saturating_sub(k as usize * a.cost as usize);
    }
}

/// V_i[j] = max_{0 ≤ k ≤ m, kc ≤ j} V_{i−1}[j − kc] + kv, k-outer so the
/// inner loop is a plain max over two slices. Strict `>` keeps the
/// smaller k on ties.
fn row_direct<C: Cell>(prev: &[f64], cur: &mut [f64], row: &mut [C], cost: usize, value: f64, max_calls: u32) {
    cur.copy_from_slice(prev);
    for k in 1..=max_calls {
        let offset = k as usize * cost;
        if offset >= prev.len() {
            break;
        }
        let kv = f64::from(k) * value;
        let kc = C::from_calls(k);
        for ((c, r), &p) in cur[offset..].iter_mut().zip(&mut row[offset..]).zip(&prev[..prev.len() - offset]) {
            let candidate = p + kv;
            if candidate > *c {
                *c = candidate;
                *r = kc;
            }
        }
    }
}

/// Reused buffers for the sliding-window maximum.
#[derive(Default)]
struct Deque {
    value: Vec<f64>,
    step: Vec<usize>,
}

/// The same recurrence in O(R): along j = r + t·c the candidate from step s
/// is g(s) + t·v with g(s) = V_{i−1}[r + s·c] − s·v, for s in [t − m, t].
/// The deque holds steps with strictly decreasing g; popping equal g keeps
/// the latest step, i.e. the fewest calls on ties.
fn row_deque<C: Cell>(
    prev: &[f64],
    cur: &mut [f64],
    row: &mut [C],
    cost: usize,
    value: f64,
    max_calls: usize,
    dq: &mut Deque,
) {
    let width = prev.len();
    let steps = width.div_ceil(cost);
    dq.value.resize(steps, 0.0);
    dq.step.resize(steps, 0);
    for r in 0..cost.min(width) {
        let (mut head, mut tail) = (0usize, 0usize);
        for (t, j) in (r..width).step_by(cost).enumerate() {
            let g = prev[j] - t as f64 * value;
            while tail > head && dq.value[tail - 1] <= g {
                tail -= 1;
            }
            dq.value[tail] = g;
            dq.step[tail] = t;
            tail += 1;
            if dq.step[head] + max_calls < t {
                head += 1;
            }
            let s = dq.step[head];
            let k = t - s;
            // Recomputed from V rather than g + t·v to keep rounding to one add.
            cur[j] = prev[r + s * cost] + k as f64 * value;
            row[j] = C::from_calls(k as u32);
        }
    }
}
