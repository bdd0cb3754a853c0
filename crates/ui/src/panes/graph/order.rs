//! The orders the graph pane's views list nodes in.

use std::cmp::Ordering;

use crate::engine::fold::GraphView;
use crate::graph::{ANY_TOOL, END, START};

/// Descending by weight, then by name: the order candidates are offered in.
pub(super) fn by_weight_desc(a: &(&str, f64), b: &(&str, f64)) -> Ordering {
    b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0))
}

/// Puts the `k` first items of `v` by `cmp` in order at its front, and cuts the
/// rest: O(n + k log k), so a 16,000-wide row costs no full sort per frame.
pub(super) fn top_k<T>(v: &mut Vec<T>, k: usize, cmp: impl Fn(&T, &T) -> Ordering) {
    if k == 0 {
        v.clear();
        return;
    }
    if v.len() > k {
        v.select_nth_unstable_by(k - 1, &cmp);
        v.truncate(k);
    }
    v.sort_by(cmp);
}

/// The `k` first of `items`, given in name order, by [`by_weight_desc`], in
/// that order. One pass that compares weights only, where [`top_k`] on a
/// row of 16,000 tools of mostly one weight compared their names: an item
/// no heavier than the last kept loses to it, whose name comes first.
pub(super) fn top_k_of_named<'a>(items: impl Iterator<Item = (&'a str, f64)>, k: usize) -> Vec<(&'a str, f64)> {
    let mut best: Vec<(&str, f64)> = Vec::with_capacity(k.min(1024) + 1);
    for item in items {
        if best.len() == k && best.last().is_none_or(|last| item.1.total_cmp(&last.1).is_le()) {
            continue;
        }
        let at = best.partition_point(|b| by_weight_desc(b, &item).is_lt());
        best.insert(at, item);
        best.truncate(k);
    }
    best
}

/// The tool nodes of the graph (neither `start` nor `end`), in name order,
/// each once: the merge of the sorted node sets, O(n) without a set.
pub(super) fn tool_nodes(g: &GraphView) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::with_capacity(g.out.len() + 1);
    let mut a = g.out.keys().map(String::as_str).peekable();
    let mut b = g.scores.keys().map(String::as_str).peekable();
    let mut c = g.out.get(START).into_iter().flat_map(|r| r.keys().map(String::as_str)).peekable();
    loop {
        let next = [a.peek(), b.peek(), c.peek()].into_iter().flatten().min().copied();
        let Some(n) = next else { break };
        if a.peek() == Some(&n) {
            a.next();
        }
        if b.peek() == Some(&n) {
            b.next();
        }
        if c.peek() == Some(&n) {
            c.next();
        }
        if n != START && n != END && n != ANY_TOOL {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The one pass keeps what sorting the whole list keeps, ties
        /// (most of a row) included.
        #[test]
        fn the_strongest_of_a_row_in_name_order_are_the_sort_s(
            weights in prop::collection::vec(0u8..4, 0..200),
            k in 0usize..12,
        ) {
            let names: Vec<String> = (0..weights.len()).map(|i| format!("t{i:04}")).collect();
            let row: Vec<(&str, f64)> = names.iter().map(String::as_str).zip(weights.iter().map(|&w| f64::from(w) / 4.0)).collect();
            let mut sorted = row.clone();
            top_k(&mut sorted, k, by_weight_desc);
            prop_assert_eq!(top_k_of_named(row.into_iter(), k), sorted);
        }
    }
}
