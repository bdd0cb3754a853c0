//! The focused node in the middle, its predecessors left, its successors
//! right, the task's path beneath, and the chart of its score and incoming
//! weight over iterations (with its strongest twin's weight: ToolNet Fig. 4).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph};

use super::label::{display_name, fmt_score, fmt_weight, note};
use super::node_state::node_state;
use super::order::{by_weight_desc, top_k, top_k_of_named};
use crate::PaneCtx;
use crate::engine::SessionState;
use crate::engine::fold::GraphView;
use crate::graph::{END, START};
use crate::symbols;
use crate::text::{fit, fit_last_span, fit_padded, spans_width};

/// Below this inner height the chart is dropped and the columns keep the room.
const MIN_HEIGHT_FOR_CHART: u16 = 14;
/// Below this inner width the three columns become one.
const MIN_WIDTH_FOR_COLUMNS: u16 = 36;
/// The chart's least height, in rows, when it is shown.
const MIN_CHART_ROWS: u16 = 7;
/// The focus box with all its lines and borders.
const FOCUS_BOX_ROWS: u16 = 9;
/// Points per series at most; longer histories are sampled.
const MAX_POINTS: usize = 512;

pub(super) fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str) {
    let state = ctx.state;
    let graph = state.graph.as_ref();
    let series = graph.and_then(|g| chart_series(state, g, focus));
    let path_h = u16::from(area.height >= 4);
    // The columns take what their rows need (at least the focus box); the
    // chart takes the rest.
    let rows = area.height as usize;
    let preds = predecessors(state, focus, rows);
    let succs = successors(state, focus, rows);
    let list_rows = |n: &(Vec<Row>, usize)| (n.1.min(rows) as u16).saturating_add(2);
    let need = list_rows(&preds).max(list_rows(&succs)).max(FOCUS_BOX_ROWS);
    let chart_h = if series.is_some() && area.height >= MIN_HEIGHT_FOR_CHART {
        (area.height - path_h).saturating_sub(need).max(MIN_CHART_ROWS)
    } else {
        0
    };
    let [cols, path, chart] = Layout::vertical([
        Constraint::Length(area.height - chart_h - path_h),
        Constraint::Length(path_h),
        Constraint::Length(chart_h),
    ])
    .areas(area);

    if graph.is_none() && state.current.is_none() {
        note(frame, cols, ctx.theme, "no graph yet: the session has not started");
    } else {
        render_columns(frame, cols, ctx, focus, &preds, &succs);
    }
    if path.height > 0 {
        render_path(frame, path, ctx);
    }
    if let (Some(s), true) = (series, chart.height > 0) {
        render_charts(frame, chart, ctx, focus, &s);
    }
}

/// One row of the side columns.
struct Row<'a> {
    name: &'a str,
    weight: f64,
}

/// The strongest rows of a side, and how many there are in all.
type Rows<'a> = (Vec<Row<'a>>, usize);

fn render_columns(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str, preds: &Rows, succs: &Rows) {
    if area.height == 0 {
        return;
    }
    let state = ctx.state;
    if area.width < MIN_WIDTH_FOR_COLUMNS {
        // Too narrow for three columns: the focus in one line, its successors under it.
        let [head, rest] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
        let st = node_state(state, focus);
        let line = Line::from(vec![
            Span::styled(format!("{} ", st.symbol()), ctx.theme.fg(st.color(ctx.theme))),
            Span::styled(display_name(focus).to_string(), ctx.theme.accent()),
        ]);
        frame.render_widget(Paragraph::new(line), head);
        render_side(frame, rest, ctx, focus, succs, Side::Successors);
        return;
    }
    let [left, mid, right] =
        Layout::horizontal([Constraint::Percentage(30), Constraint::Percentage(30), Constraint::Percentage(40)])
            .areas(area);
    render_side(frame, left, ctx, focus, preds, Side::Predecessors);
    // The box sits in the middle of the band the lists fill, beside them.
    let band = (preds.1.max(succs.1).saturating_add(2)).min(area.height as usize) as u16;
    render_focus(frame, Rect { height: band.max(FOCUS_BOX_ROWS).min(mid.height), ..mid }, ctx, focus);
    render_side(frame, right, ctx, focus, succs, Side::Successors);
}

/// Edges into `focus` (strongest first) and how many there are, keeping
/// only the `rows` that can be seen.
fn predecessors<'a>(state: &'a SessionState, focus: &str, rows: usize) -> Rows<'a> {
    let Some(g) = &state.graph else { return (Vec::new(), 0) };
    // One more than shown: the focus may be among them. Its self edge is
    // counted in the total even where the cut left it out.
    let (all, total) = g.predecessors_cut(focus, rows.saturating_add(1));
    let total = total - usize::from(g.row(focus).is_some_and(|r| r.contains_key(focus)));
    let v = top_k_of_named(all.into_iter().filter(|(n, _)| *n != focus), rows);
    (v.into_iter().map(|(name, weight)| Row { name, weight }).collect(), total)
}

/// Edges out of `focus` (strongest first); without a graph, the candidates
/// the agent was offered there.
fn successors<'a>(state: &'a SessionState, focus: &str, rows: usize) -> Rows<'a> {
    // A row is in name order: its strongest are found without a sort.
    if let Some(g) = &state.graph {
        let Some(row) = g.row(focus) else { return (Vec::new(), 0) };
        let v = top_k_of_named(row.iter().map(|(n, w)| (n.as_str(), *w)), rows);
        return (v.into_iter().map(|(name, weight)| Row { name, weight }).collect(), row.len());
    }
    let mut v: Vec<(&str, f64)> = match &state.current {
        Some(run) if run.from == focus => {
            run.candidates.iter().map(|c| (c.name.as_str(), c.weight.unwrap_or(0.0))).collect()
        }
        _ => Vec::new(),
    };
    let total = v.len();
    top_k(&mut v, rows, by_weight_desc);
    (v.into_iter().map(|(name, weight)| Row { name, weight }).collect(), total)
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Predecessors,
    Successors,
}

fn render_side(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str, rows: &Rows, side: Side) {
    if area.height == 0 || area.width < 4 {
        return;
    }
    let (rows, total) = rows;
    let theme = ctx.theme;
    let state = ctx.state;
    let run = state.current.as_ref();
    let on_path = |n: &str| n == START || run.is_some_and(|r| r.path.iter().any(|p| p == n));
    // Candidates are marked where they are offered: among the successors of
    // the node the agent stands on (`finish` is the offered name of `end`).
    let offered_here = side == Side::Successors && run.is_some_and(|r| r.from == focus);
    let candidate = |n: &str| {
        offered_here && run.is_some_and(|r| r.candidates.iter().any(|c| c.name == n || c.name == display_name(n)))
    };
    let w = area.width as usize;
    let with_score = side == Side::Successors && w >= 24;
    // mark, name, weight, [score], symbol, with a space between and a margin.
    let fixed = 1 + 1 + 4 + 1 + if with_score { 6 } else { 0 } + 2 + 1;
    let name_w = w.saturating_sub(fixed).max(1);
    let mut lines = Vec::with_capacity(area.height as usize);
    let head = match side {
        Side::Predecessors => "from",
        Side::Successors => "to",
    };
    let mut header = format!(" {} {:>4}", fit_padded(head, name_w), "w");
    if with_score {
        header.push_str(&format!(" {:>5}", "score"));
    }
    lines.push(Line::from(Span::styled(header, theme.muted().add_modifier(Modifier::UNDERLINED))));
    let room = (area.height as usize).saturating_sub(1);
    let shown = if rows.len() > room { room.saturating_sub(1) } else { rows.len() };
    for r in rows.iter().take(shown) {
        let mark = if candidate(r.name) { "›" } else { " " };
        let name_style = if on_path(r.name) { theme.fg(theme.path).add_modifier(Modifier::BOLD) } else { theme.base() };
        let mut spans = vec![
            Span::styled(mark, theme.accent()),
            Span::styled(fit_padded(display_name(r.name), name_w), name_style),
            Span::raw(format!(" {:>4}", fit(&fmt_weight(state, r.weight), 4))),
        ];
        if with_score {
            let score = state.graph.as_ref().map(|g| g.score(r.name)).unwrap_or(0.0);
            spans.push(Span::styled(format!(" {:>5}", fit(&fmt_score(score), 5)), theme.muted()));
        }
        if r.name != START && r.name != END {
            let st = node_state(state, r.name);
            spans.push(Span::styled(format!(" {}", st.symbol()), theme.fg(st.color(theme))));
        }
        lines.push(Line::from(spans));
    }
    if *total > shown {
        lines.push(Line::from(Span::styled(format!(" +{} more", total - shown), theme.muted())));
    } else if rows.is_empty() {
        let none = match side {
            Side::Predecessors => " (no edges in)",
            Side::Successors => " (no edges out)",
        };
        lines.push(Line::from(Span::styled(none, theme.muted())));
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn render_focus(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str) {
    let theme = ctx.theme;
    let state = ctx.state;
    let g = state.graph.as_ref();
    let known = focus == START || g.is_some_and(|g| g.row(focus).is_some() || g.scores.contains_key(focus));
    let mut lines = Vec::new();
    if focus != START && focus != END {
        let st = node_state(state, focus);
        lines.push(Line::from(Span::styled(format!("{} {}", st.symbol(), st.label()), theme.fg(st.color(theme)))));
    }
    if let Some(g) = g {
        if known {
            lines.push(Line::from(format!("score {}", fmt_score(g.score(focus)))));
        } else {
            lines.push(Line::from(Span::styled("not in the graph", theme.muted())));
        }
        lines.push(Line::from(Span::styled(format!("iteration {}", g.iteration), theme.muted())));
    }
    if let Some(spend) = state.tool_spend.get(focus) {
        lines.push(Line::from(Span::styled(format!("{} calls, {} failed", spend.calls, spend.errors), theme.muted())));
    }
    if let Some(run) = &state.current {
        let steps: Vec<String> =
            run.path.iter().enumerate().filter(|(_, p)| *p == focus).map(|(i, _)| (i + 1).to_string()).collect();
        if !steps.is_empty() {
            lines.push(Line::from(Span::styled(format!("path step {}", steps.join(",")), theme.fg(theme.path))));
        } else if focus == run.from {
            lines.push(Line::from(Span::styled("agent is here", theme.fg(theme.path))));
        }
    }
    if let Some(server) = state.tool_servers.get(focus) {
        let st = state.servers.get(server).map_or_else(|| "state unknown".to_string(), |(s, _)| s.to_string());
        lines.push(Line::from(Span::styled(format!("mcp server {server} ({st})"), theme.muted())));
    }
    if let Some(t) = state.tool(focus) {
        lines.push(Line::from(Span::styled(t.description.clone(), theme.muted().add_modifier(Modifier::ITALIC))));
    }
    // Centre the box vertically; it needs its lines and two borders.
    let h = (lines.len() as u16 + 2).min(area.height);
    let top = area.y + area.height.saturating_sub(h) / 2;
    let r = Rect { x: area.x + u16::from(area.width > 2), y: top, width: area.width.saturating_sub(2), height: h };
    let block = Block::bordered()
        .border_style(theme.accent())
        .title(Span::styled(fit(display_name(focus), r.width.saturating_sub(2) as usize), theme.accent()));
    let inner = block.inner(r);
    frame.render_widget(block, r);
    let lines: Vec<Line> =
        lines.into_iter().map(|l| fit_last_span(l, inner.width as usize)).take(inner.height as usize).collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// `path  start › city_search ✓ › geo_lookup ✗ › …`, cut from the left so the
/// newest steps stay visible.
fn render_path(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let theme = ctx.theme;
    let Some(run) = &ctx.state.current else {
        note(frame, area, theme, "no task running");
        return;
    };
    let label = format!("task {} ", run.index);
    let mut segments: Vec<Vec<Span>> = vec![vec![Span::styled(START, theme.fg(theme.path))]];
    for (tool, ok, fault) in path_outcomes(ctx.state) {
        let (sym, color) = match ok {
            Some(true) => (symbols::OK, theme.ok),
            Some(false) if fault => (symbols::FAILING, theme.fault),
            Some(false) => (symbols::FAILING, theme.failing),
            None => (symbols::RUNNING, theme.muted),
        };
        segments.push(vec![
            Span::styled(" › ", theme.muted()),
            Span::styled(tool.to_string(), theme.fg(theme.path)),
            Span::styled(format!(" {sym}"), theme.fg(color)),
        ]);
    }
    let room = (area.width as usize).saturating_sub(label.len());
    let mut used = 0;
    let mut keep = segments.len();
    while keep > 0 {
        let w = spans_width(&segments[keep - 1]);
        if used + w + 2 > room && keep < segments.len() {
            break;
        }
        used += w;
        keep -= 1;
    }
    let mut spans = vec![Span::styled(label, theme.muted())];
    if keep > 0 {
        spans.push(Span::styled("…", theme.muted()));
    }
    spans.extend(segments.into_iter().skip(keep).flatten());
    frame.render_widget(Paragraph::new(fit_last_span(Line::from(spans), area.width as usize)), area);
}

/// What the chart plots for the focused node.
struct Series {
    /// The node before the focus on the path, or `start`.
    prev: String,
    score: Vec<(f64, f64)>,
    weight: Vec<(f64, f64)>,
    /// The strongest sibling and its weight from `prev`.
    twin: Option<(String, Vec<(f64, f64)>)>,
    x: [f64; 2],
}

fn chart_series(state: &SessionState, g: &GraphView, focus: &str) -> Option<Series> {
    if focus == START || focus == END {
        return None;
    }
    let prev = previous_node(state, g, focus);
    let last = g.iteration;
    let score = sampled(g.score_changes(focus).iter().copied(), last, g.score(focus));
    let weight = g.weight(&prev, focus).map(|w| sampled(g.weight_changes(&prev, focus).into_iter(), last, w));
    let twin = twin_of(g, &prev, focus).and_then(|t| {
        let w = g.weight(&prev, t)?;
        let pts = sampled(g.weight_changes(&prev, t).into_iter(), last, w);
        Some((t.to_string(), pts))
    });
    if score.is_empty() && weight.is_none() {
        return None;
    }
    let weight = weight.unwrap_or_default();
    let firsts = [&score, &weight].into_iter().chain(twin.iter().map(|t| &t.1)).filter_map(|s| s.first().map(|p| p.0));
    let x0 = firsts.fold(f64::INFINITY, f64::min);
    let x0 = if x0.is_finite() { x0 } else { 0.0 };
    let x1 = (last as f64).max(x0 + 1.0);
    Some(Series { prev, score, weight, twin, x: [x0, x1] })
}

/// Where the agent came to `focus` from: the step before it on this task's
/// path, the node the agent stands on when it is a candidate, else `start`
/// (or its strongest predecessor when `start` has no edge to it).
fn previous_node(state: &SessionState, g: &GraphView, focus: &str) -> String {
    if let Some(run) = &state.current {
        if let Some(i) = run.path.iter().rposition(|p| p == focus) {
            return if i == 0 { START.to_string() } else { run.path[i - 1].clone() };
        }
        if run.candidates.iter().any(|c| c.name == focus) {
            return run.from.clone();
        }
    }
    if g.weight(START, focus).is_some() {
        return START.to_string();
    }
    let mut preds = g.predecessors(focus);
    preds.retain(|(n, _)| *n != focus);
    preds.into_iter().min_by(by_weight_desc).map(|(n, _)| n.to_string()).unwrap_or_else(|| START.to_string())
}

/// The focus's competitor among `prev`'s other successors: the strongest one
/// sharing the first part of its name (geo_lookup → geo_lookup_mirror), else
/// the strongest one.
fn twin_of<'a>(g: &'a GraphView, prev: &str, focus: &str) -> Option<&'a str> {
    let row = g.row(prev)?;
    let stem = &focus.as_bytes()[..focus.find(['_', '-', '.']).unwrap_or(focus.len())];
    // Whether `n`'s first part is the focus's, ignoring ASCII case, without
    // splitting it: `prev`'s row may be the shared row, 16,000 names a frame.
    let shares_stem = |n: &str| {
        let n = n.as_bytes();
        n.len() >= stem.len()
            && n[..stem.len()].eq_ignore_ascii_case(stem)
            && n.get(stem.len()).is_none_or(|b| matches!(b, b'_' | b'-' | b'.'))
    };
    // The row is in name order, so of the strongest the first met has the
    // first name: a tie never replaces it, and no names are compared.
    let mut best: Option<(bool, f64, &str)> = None;
    for (n, &w) in row {
        let n = n.as_str();
        let shared = shares_stem(n);
        let better = best.is_none_or(|(s, bw, _)| shared.cmp(&s).then(w.total_cmp(&bw)).is_gt());
        if better && n != focus && n != END && n != prev && n != START {
            best = Some((shared, w, n));
        }
    }
    best.map(|t| t.2)
}

/// A value per iteration from its changes (iteration, value), from its
/// first change to `last`; a value that never changed is flat from 0.
fn sampled(changes: impl Iterator<Item = (u32, f64)>, last: u32, current: f64) -> Vec<(f64, f64)> {
    let changes: Vec<(u32, f64)> = changes.collect();
    let Some(&(first, _)) = changes.first() else {
        return vec![(0.0, current), (f64::from(last.max(1)), current)];
    };
    let last = last.max(first);
    let span = (last - first) as usize + 1;
    let stride = span.div_ceil(MAX_POINTS).max(1);
    let mut out = Vec::with_capacity(span / stride + 2);
    let mut j = 0;
    let mut value = changes[0].1;
    let mut it = first;
    loop {
        while j < changes.len() && changes[j].0 <= it {
            value = changes[j].1;
            j += 1;
        }
        out.push((f64::from(it), value));
        if it >= last {
            break;
        }
        it = (it + stride as u32).min(last);
    }
    out
}

fn render_charts(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str, s: &Series) {
    let theme = ctx.theme;
    let (score_area, weight_area) = if area.width >= 50 {
        let [a, _, b] =
            Layout::horizontal([Constraint::Percentage(45), Constraint::Length(2), Constraint::Fill(1)]).areas(area);
        (Some(a), b)
    } else {
        (None, area)
    };
    let x_axis = || {
        Axis::default()
            .bounds(s.x)
            .style(theme.muted())
            .labels([format!("it {}", s.x[0] as u32), format!("{}", s.x[1] as u32)])
    };
    if let Some(a) = score_area {
        let (lo, hi) = bounds(s.score.iter().map(|p| p.1), true);
        let title = Line::from(vec![
            Span::styled("score ", theme.title()),
            Span::styled(format!("━ {}", display_name(focus)), theme.fg(theme.chart_score)),
        ]);
        let ds = Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(theme.chart_score))
            .data(&s.score);
        let chart = Chart::new(vec![ds])
            .block(Block::default().borders(Borders::TOP).border_style(theme.border(false)).title(title))
            .x_axis(x_axis())
            .y_axis(Axis::default().bounds([lo, hi]).style(theme.muted()).labels([fmt_score(lo), fmt_score(hi)]))
            .legend_position(None);
        frame.render_widget(chart, a);
    }
    let all = s.weight.iter().chain(s.twin.iter().flat_map(|t| t.1.iter())).map(|p| p.1);
    let (lo, hi) = bounds(all, false);
    let mut title = vec![
        Span::styled(format!("w {}→ ", display_name(&s.prev)), theme.title()),
        Span::styled(format!("━ {}", display_name(focus)), theme.fg(theme.chart_weight)),
    ];
    let mut sets = vec![
        Dataset::default()
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(theme.chart_weight))
            .data(&s.weight),
    ];
    if let Some((name, pts)) = &s.twin {
        // A different glyph as well as a different colour tells the twin apart.
        title.push(Span::styled(format!("  • {}", display_name(name)), theme.fg(theme.accent)));
        sets.push(
            Dataset::default()
                .marker(Marker::Dot)
                .graph_type(GraphType::Line)
                .style(Style::default().fg(theme.accent))
                .data(pts),
        );
    }
    let width = weight_area.width as usize;
    let chart = Chart::new(sets)
        .block(
            Block::default()
                .borders(Borders::TOP)
                .border_style(theme.border(false))
                .title(fit_last_span(Line::from(title), width.saturating_sub(2))),
        )
        .x_axis(x_axis())
        .y_axis(
            Axis::default()
                .bounds([lo, hi])
                .style(theme.muted())
                .labels([fmt_weight(ctx.state, lo), fmt_weight(ctx.state, hi)]),
        )
        .legend_position(None);
    frame.render_widget(chart, weight_area);
}

/// Axis bounds around the values, with a little room above; scores keep 0 in
/// view so the sign of a score is plain, weights start at 0.
fn bounds(values: impl Iterator<Item = f64>, signed: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values.filter(|v| v.is_finite()).fold((0.0f64, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
    if !signed {
        lo = 0.0;
        hi = (hi * 1.15).max(0.01);
    } else if hi - lo < 1e-9 {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// The current run's path with each call's outcome: Some(true) ok,
/// Some(false) failed, None still running (or no result seen).
fn path_outcomes(state: &SessionState) -> Vec<(&str, Option<bool>, bool)> {
    use crate::engine::fold::Entry;
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
