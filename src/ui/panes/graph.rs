//! The graph pane: ToolNet's graph around one node (predecessors, the node,
//! successors, the path of this task and a chart of the node's score and
//! weight over iterations, the picture of ToolNet's Figure 4), or the whole
//! graph (a layered drawing when small, a ranked table when large).
//!
//! In a rewoo session, which has no graph, the pane shows the run's plan.
//!
//! Also the node states every pane shows (`node_state`) and the name search
//! behind the `/` prompt (`find_tools`).

mod neighbourhood;
mod plan;
mod whole;

use std::cmp::Ordering;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{pane_block, render_block};
use crate::engine::state::GraphView;
use crate::engine::{SessionState, StrategyKind};
use crate::graph::{END, START};
use crate::ui::symbols;
use crate::ui::text::fit;
use crate::ui::theme::Theme;
use crate::ui::{GraphMode, PaneCtx};

pub use whole::{Layout, PlacedNode, layered_layout};

/// Above this many tool nodes the whole graph is a ranked table, not a drawing.
pub const MAX_DRAWN_NODES: usize = 60;

/// What a tool looks like to the user right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeState {
    Ok,
    Failing,
    Faulted,
    Forbidden,
    Blacklisted,
    Unused,
}

impl NodeState {
    pub fn symbol(self) -> &'static str {
        match self {
            NodeState::Ok => symbols::OK,
            NodeState::Failing => symbols::FAILING,
            NodeState::Faulted => symbols::FAULT,
            NodeState::Forbidden => symbols::FORBIDDEN,
            NodeState::Blacklisted => symbols::BLACKLISTED,
            NodeState::Unused => "·",
        }
    }

    pub fn color(self, theme: &Theme) -> Color {
        match self {
            NodeState::Ok => theme.ok,
            NodeState::Failing => theme.failing,
            NodeState::Faulted => theme.fault,
            NodeState::Forbidden => theme.forbidden,
            NodeState::Blacklisted => theme.blacklisted,
            NodeState::Unused => theme.muted,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            NodeState::Ok => "ok",
            NodeState::Failing => "failing",
            NodeState::Faulted => "fault injected",
            NodeState::Forbidden => "forbidden",
            NodeState::Blacklisted => "blacklisted",
            NodeState::Unused => "unused",
        }
    }
}

/// The state of `tool`, by precedence Faulted > Blacklisted > Forbidden >
/// Failing > Ok > Unused: what the user can do something about comes first.
pub fn node_state(state: &SessionState, tool: &str) -> NodeState {
    if state.faults.iter().any(|f| f.tool == tool) {
        return NodeState::Faulted;
    }
    if let Some(run) = &state.current {
        if run.blacklisted.contains(tool) {
            return NodeState::Blacklisted;
        }
        if run.forbidden.contains(tool) {
            return NodeState::Forbidden;
        }
    }
    match state.recent_calls.iter().find(|c| c.tool == tool) {
        Some(c) if !c.ok => NodeState::Failing,
        Some(_) => NodeState::Ok,
        // The recent calls are a bounded window: a tool whose calls all fell
        // out of it was called, and its failures (if any) are old news.
        None if state.tool_spend.get(tool).is_some_and(|s| s.calls > 0) => NodeState::Ok,
        None => NodeState::Unused,
    }
}

/// Tool names containing `query` (case-insensitive): names starting with it
/// first, then the others, each group alphabetical; at most `limit`.
pub fn find_tools(state: &SessionState, query: &str, limit: usize) -> Vec<String> {
    let q = query.trim();
    let mut prefix = std::collections::BTreeSet::new();
    let mut inner = std::collections::BTreeSet::new();
    // Only the matches are collected: a library may hold thousands of tools.
    let mut consider = |n: &str| {
        if n == START || n == END {
            return;
        }
        match match_at(n, q) {
            Some(0) => {
                prefix.insert(n.to_string());
            }
            Some(_) => {
                inner.insert(n.to_string());
            }
            None => {}
        }
    };
    state.tools.iter().for_each(|t| consider(&t.name));
    if let Some(g) = &state.graph {
        // The graph may know tools the library no longer lists.
        g.out
            .keys()
            .chain(g.scores.keys())
            .chain(g.out.get(START).into_iter().flat_map(|r| r.keys()))
            .for_each(|n| consider(n));
    }
    prefix.into_iter().chain(inner).take(limit).collect()
}

/// Where `needle` first occurs in `hay`, ignoring case.
fn match_at(hay: &str, needle: &str) -> Option<usize> {
    if needle.is_ascii() {
        let (h, n) = (hay.as_bytes(), needle.as_bytes());
        if n.is_empty() {
            return Some(0);
        }
        h.windows(n.len()).position(|w| w.eq_ignore_ascii_case(n))
    } else {
        hay.to_lowercase().find(&needle.to_lowercase())
    }
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    // rewoo has no ToolNet graph: its plan takes the pane.
    if ctx.state.strategy == Some(StrategyKind::Rewoo) && ctx.state.graph.is_none() {
        return plan::render(frame, area, ctx);
    }
    let focus = ctx.graph_focus();
    let theme = ctx.theme;
    let mode = match ctx.view.graph_mode {
        GraphMode::Neighbourhood => "neighbourhood",
        GraphMode::Whole => "whole",
    };
    let title = Line::from(vec![
        Span::styled(" Graph ", theme.title()),
        Span::styled(format!("· {mode} · "), theme.muted()),
        Span::styled(format!("{} ", display_name(&focus)), theme.accent()),
    ]);
    let Some(inner) = render_block(frame, area, pane_block(theme, ctx.focused, title)) else { return };
    match ctx.view.graph_mode {
        GraphMode::Neighbourhood => neighbourhood::render(frame, inner, ctx, &focus),
        GraphMode::Whole => whole::render(frame, inner, ctx, &focus),
    }
}

/// A node's name as the user knows it: the graph's `end` is the `finish` action.
fn display_name(node: &str) -> &str {
    if node == END { "finish" } else { node }
}

/// A weight as the model is shown it; decimals when the model sees none.
fn fmt_weight(state: &SessionState, w: f64) -> String {
    state.params.weight_format.show(w).unwrap_or_else(|| format!("{w:.2}"))
}

fn fmt_score(s: f64) -> String {
    if s.fract() == 0.0 && s.abs() < 1e6 { format!("{s:.0}") } else { format!("{s:.2}") }
}

/// Descending by weight, then by name: the order candidates are offered in.
fn by_weight_desc(a: &(&str, f64), b: &(&str, f64)) -> Ordering {
    b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0))
}

/// Puts the `k` first items of `v` by `cmp` in order at its front, and cuts the
/// rest: O(n + k log k), so a 16,000-wide row costs no full sort per frame.
fn top_k<T>(v: &mut Vec<T>, k: usize, cmp: impl Fn(&T, &T) -> Ordering) {
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

/// A one-line message in the muted colour.
fn note(frame: &mut Frame, area: Rect, theme: &Theme, text: &str) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    frame.render_widget(Paragraph::new(Span::styled(fit(text, area.width as usize), theme.muted())), area);
}

/// The tool nodes of the graph (neither `start` nor `end`), in name order,
/// each once: the merge of the sorted node sets, O(n) without a set.
fn tool_nodes(g: &GraphView) -> Vec<&str> {
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
        if n != START && n != END {
            out.push(n);
        }
    }
    out
}

/// The current run's path with each call's outcome: Some(true) ok,
/// Some(false) failed, None still running (or no result seen).
fn path_outcomes(state: &SessionState) -> Vec<(&str, Option<bool>, bool)> {
    use crate::engine::state::Entry;
    let Some(run) = &state.current else { return Vec::new() };
    let mut calls: Vec<(u64, &str, Option<bool>, bool)> = Vec::with_capacity(run.path.len());
    for e in &run.transcript {
        match e {
            Entry::Call { call, tool, .. } => calls.push((*call, tool.as_str(), None, false)),
            Entry::Result { call, outcome, fault, .. } => {
                if let Some(c) = calls.iter_mut().rev().find(|c| c.0 == *call) {
                    c.2 = Some(matches!(outcome, crate::engine::event::ToolOutcome::Ok { .. }));
                    c.3 = fault.is_some();
                }
            }
            _ => {}
        }
    }
    if calls.len() == run.path.len() {
        calls.into_iter().map(|(_, t, ok, f)| (t, ok, f)).collect()
    } else {
        // A transcript that does not match the path (cut short): the names alone.
        run.path.iter().map(|t| (t.as_str(), None, false)).collect()
    }
}
