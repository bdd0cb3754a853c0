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
