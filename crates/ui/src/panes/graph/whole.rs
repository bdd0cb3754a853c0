//! The whole graph: a layered (Sugiyama) drawing when it has at most
//! `MAX_DRAWN_NODES` tools, a ranked table when it is larger (or when the
//! drawing does not fit the space).

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::rc::Rc;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::widgets::canvas::{Canvas, Line as CanvasLine};

use super::label::{display_name, fmt_weight, note};
use super::node_state::{NodeState, node_state};
use super::order::tool_nodes;
use crate::PaneCtx;
use crate::engine::fold::GraphView;
use crate::graph::{END, START};
use crate::text::{fit, fit_padded};

/// Above this many tool nodes the whole graph is a ranked table, not a drawing.
pub const MAX_DRAWN_NODES: usize = 60;

/// Edges at least this heavy are drawn; the lighter ones only shape the layers.
const DRAWN_EDGE_WEIGHT: f64 = 0.1;
/// Rows a crowded layer may be spread over (its labels alternate between them).
const MAX_SUBROWS: usize = 3;
/// Rows between layers at most: more stretches the drawing without showing more.
const MAX_GAP: usize = 6;

/// A layered drawing of the graph, from rust-sugiyama, in a form that does not
/// depend on the screen: each node's layer (top to bottom) and its horizontal
/// position in 0..=1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Every node, in name order.
    pub nodes: Vec<PlacedNode>,
    pub layers: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlacedNode {
    pub name: String,
    pub layer: usize,
    pub x: f64,
}

/// The edges that shape the layout: every edge with a positive weight, but no
/// self-loops (ToolNet has one on every tool; the layering cannot use them).
fn layout_edges(g: &GraphView) -> impl Iterator<Item = (&str, &str)> {
    g.out.iter().flat_map(|(f, row)| {
        row.iter().filter(move |(t, w)| **w > 0.0 && *t != f).map(move |(t, _)| (f.as_str(), t.as_str()))
    })
}

/// Every node of the graph, `start` and `end` included, in name order.
fn all_nodes(g: &GraphView) -> BTreeSet<&str> {
    let mut names: BTreeSet<&str> = g.out.keys().map(String::as_str).collect();
    names.extend(g.out.values().flat_map(|r| r.keys().map(String::as_str)));
    names.extend(g.scores.keys().map(String::as_str));
    names
}

/// Lays the graph out in layers. Nodes without a positive edge go in a last
/// layer of their own; other unconnected parts are placed side by side.
pub fn layered_layout(g: &GraphView) -> Layout {
    let names: Vec<&str> = all_nodes(g).into_iter().collect();
    let index: BTreeMap<&str, u32> = names.iter().enumerate().map(|(i, n)| (*n, i as u32)).collect();
    let edges: Vec<(u32, u32)> = layout_edges(g).filter_map(|(f, t)| Some((*index.get(f)?, *index.get(t)?))).collect();
    let mut linked = vec![false; names.len()];
    for (f, t) in &edges {
        linked[*f as usize] = true;
        linked[*t as usize] = true;
    }
    let vertices: Vec<(u32, (f64, f64))> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| linked[*i])
        .map(|(i, n)| (i as u32, (label_width(n) as f64, 1.0)))
        .collect();
    let config = rust_sugiyama::configure::Config {
        vertex_spacing: 2.0,
        transpose: false,
        ranking_type: rust_sugiyama::configure::RankingType::Up,
        ..Default::default()
    };
    let parts =
        if edges.is_empty() { Vec::new() } else { rust_sugiyama::from_vertices_and_edges(&vertices, &edges, &config) };

    // Each part's order varies from run to run: sort by node index, and the
    // parts by their first node, so the same graph is drawn the same way.
    let mut parts: Vec<Vec<(usize, (f64, f64))>> = parts
        .into_iter()
        .map(|(mut p, _, _)| {
            p.sort_by_key(|(i, _)| *i);
            p
        })
        .filter(|p| !p.is_empty())
        .collect();
    parts.sort_by_key(|p| p[0].0);

    let mut placed: Vec<Option<(usize, f64)>> = vec![None; names.len()];
    let mut x_offset = 0.0;
    let mut layers = 0;
    for part in &parts {
        let mut ys: Vec<f64> = part.iter().map(|(_, (_, y))| *y).collect();
        ys.sort_by(f64::total_cmp);
        ys.dedup();
        let min_x = part.iter().map(|(_, (x, _))| *x).fold(f64::INFINITY, f64::min);
        let max_x = part.iter().map(|(_, (x, _))| *x).fold(f64::NEG_INFINITY, f64::max);
        for (i, (x, y)) in part {
            let layer = ys.partition_point(|v| v < y);
            if let Some(slot) = placed.get_mut(*i) {
                *slot = Some((layer, x_offset + x - min_x));
            }
        }
        layers = layers.max(ys.len());
        x_offset += (max_x - min_x) + 12.0;
    }
    let loose_layer = layers;
    let loose: Vec<usize> = (0..names.len()).filter(|i| placed[*i].is_none()).collect();
    let span = x_offset.max(1.0);
    for (k, i) in loose.iter().enumerate() {
        placed[*i] = Some((loose_layer, span * (k as f64 + 0.5) / loose.len() as f64));
    }
    if !loose.is_empty() {
        layers += 1;
    }
    let width = placed.iter().flatten().map(|(_, x)| *x).fold(0.0, f64::max);
    let nodes = names
        .iter()
        .zip(placed)
        .map(|(n, p)| {
            let (layer, x) = p.unwrap_or((loose_layer, 0.0));
            PlacedNode { name: n.to_string(), layer, x: if width > 0.0 { x / width } else { 0.5 } }
        })
        .collect();
    Layout { nodes, layers }
}

/// The label of a node in the drawing: its state symbol and its name.
fn label_width(name: &str) -> usize {
    Span::raw(display_name(name)).width() + if name == START || name == END { 0 } else { 2 }
}

thread_local! {
    /// The last layout, keyed by a hash of the node and edge sets: weights
    /// change every iteration, the edge set rarely, and a render function
    /// cannot keep state of its own. One entry per (UI) thread is enough.
    static LAYOUT_CACHE: RefCell<Option<(u64, Rc<Layout>)>> = const { RefCell::new(None) };
}

fn cached_layout(g: &GraphView) -> Rc<Layout> {
    let mut h = DefaultHasher::new();
    for n in all_nodes(g) {
        n.hash(&mut h);
    }
    0xffu8.hash(&mut h);
    for e in layout_edges(g) {
        e.hash(&mut h);
    }
    let key = h.finish();
    LAYOUT_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        match c.as_ref() {
            Some((k, l)) if *k == key => Rc::clone(l),
            _ => {
                let l = Rc::new(layered_layout(g));
                *c = Some((key, Rc::clone(&l)));
                l
            }
        }
    })
}

pub(super) fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str) {
    let Some(g) = &ctx.state.graph else {
        note(frame, area, ctx.theme, "no graph: this strategy does not learn one");
        return;
    };
    // A graph small enough to draw is cheap to walk; a huge one is not.
    if g.tool_count() <= MAX_DRAWN_NODES && !tool_nodes(g).is_empty() {
        let layout = cached_layout(g);
        if render_layered(frame, area, ctx, focus, g, &layout) {
            return;
        }
    }
    render_table(frame, area, ctx, focus, g);
}

/// Where a node's label sits on the screen.
#[derive(Clone, Copy)]
struct Spot {
    x: u16,
    y: u16,
    width: u16,
}

/// Draws the layout; false when it does not fit (the caller shows the table).
fn render_layered(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str, g: &GraphView, l: &Layout) -> bool {
    let theme = ctx.theme;
    let legend_h = u16::from(area.height >= 6);
    let draw = Rect { height: area.height - legend_h, ..area };
    let w = draw.width as usize;
    if l.layers == 0 || l.layers > draw.height as usize || w < 8 {
        return false;
    }
    let mut by_layer: Vec<Vec<usize>> = vec![Vec::new(); l.layers];
    for (i, n) in l.nodes.iter().enumerate() {
        if let Some(v) = by_layer.get_mut(n.layer) {
            v.push(i);
        }
    }
    for v in &mut by_layer {
        v.sort_by(|a, b| l.nodes[*a].x.total_cmp(&l.nodes[*b].x).then(a.cmp(b)));
    }
    // The labels, state symbol first: their widths decide the placing.
    let states: Vec<Option<NodeState>> =
        l.nodes.iter().map(|n| (n.name != START && n.name != END).then(|| node_state(ctx.state, &n.name))).collect();
    let full_width: Vec<usize> = l
        .nodes
        .iter()
        .zip(&states)
        .map(|(n, st)| Span::raw(display_name(&n.name)).width() + st.map_or(0, |s| Span::raw(s.symbol()).width() + 1))
        .collect();
    let longest = |members: &[usize]| members.iter().map(|i| full_width[*i]).max().unwrap_or(0);
    // Spread a crowded layer over more rows while the height allows.
    let mut subrows = vec![1usize; l.layers];
    loop {
        let used: usize = subrows.iter().sum();
        let worst = (0..l.layers)
            .filter(|&k| subrows[k] < MAX_SUBROWS)
            .map(|k| (room_per_label(by_layer[k].len(), subrows[k], w), k))
            .filter(|(room, k)| *room < longest(&by_layer[*k]) + 1)
            .min();
        match worst {
            Some((_, k)) if used < draw.height as usize => subrows[k] += 1,
            _ => break,
        }
    }
    let used: usize = subrows.iter().sum();
    let gaps = l.layers.saturating_sub(1);
    let gap = (draw.height as usize - used).checked_div(gaps).unwrap_or(0).min(MAX_GAP);
    let total = used + gap * gaps;
    let mut y = draw.y + ((draw.height as usize - total) / 2) as u16;

    let mut spots: Vec<Option<Spot>> = vec![None; l.nodes.len()];
    for (k, members) in by_layer.iter().enumerate() {
        let s = subrows[k];
        for r in 0..s {
            let row: Vec<usize> = members.iter().copied().skip(r).step_by(s).collect();
            if row.is_empty() {
                continue;
            }
            let cap = room_per_label(row.len(), 1, w).saturating_sub(1).max(1);
            let widths: Vec<usize> = row.iter().map(|i| full_width[*i].min(cap)).collect();
            let lefts = place_row(&row.iter().map(|i| l.nodes[*i].x).collect::<Vec<_>>(), &widths, w);
            for ((i, left), width) in row.iter().zip(lefts).zip(widths) {
                spots[*i] = Some(Spot { x: draw.x + left as u16, y: y + r as u16, width: width as u16 });
            }
        }
        y += (s + gap) as u16;
    }

    // Edges as braille lines under the labels: weak ones first, so the
    // focus's and then the path's are drawn over them.
    let index: BTreeMap<&str, usize> = l.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let run = ctx.state.current.as_ref();
    let path_edges: BTreeSet<(&str, &str)> = run
        .map(|r| {
            std::iter::once(START)
                .chain(r.path.iter().map(String::as_str))
                .zip(r.path.iter().map(String::as_str))
                .collect()
        })
        .unwrap_or_default();
    let mut lines: Vec<(u8, (f64, f64, f64, f64))> = Vec::new();
    let centre =
        |s: Spot| (f64::from(s.x - draw.x) + f64::from(s.width) / 2.0, f64::from(draw.height - (s.y - draw.y)) - 0.5);
    for (f, row) in &g.out {
        for (t, wgt) in row {
            if *wgt < DRAWN_EDGE_WEIGHT || f == t {
                continue;
            }
            let (Some(a), Some(b)) = (index.get(f.as_str()), index.get(t.as_str())) else { continue };
            let (Some(sa), Some(sb)) = (spots[*a], spots[*b]) else { continue };
            let rank =
                if path_edges.contains(&(f.as_str(), t.as_str())) { 2 } else { u8::from(f == focus || t == focus) };
            let (x1, y1) = centre(sa);
            let (x2, y2) = centre(sb);
            lines.push((rank, (x1, y1, x2, y2)));
        }
    }
    lines.sort_by_key(|l| l.0);
    let colors = [theme.border, theme.accent, theme.path];
    let canvas = Canvas::default()
        .marker(Marker::Braille)
        .background_color(theme.background)
        .x_bounds([0.0, f64::from(draw.width)])
        .y_bounds([0.0, f64::from(draw.height)])
        .paint(|c| {
            for (rank, (x1, y1, x2, y2)) in &lines {
                c.draw(&CanvasLine { x1: *x1, y1: *y1, x2: *x2, y2: *y2, color: colors[*rank as usize] });
            }
        });
    frame.render_widget(canvas, draw);

    let on_path = |n: &str| n == START || run.is_some_and(|r| r.path.iter().any(|p| p == n));
    let buf = frame.buffer_mut();
    for ((n, spot), st) in l.nodes.iter().zip(&spots).zip(&states) {
        let Some(s) = spot else { continue };
        let name_style = if n.name == focus {
            theme.selected().fg(theme.text)
        } else if on_path(&n.name) {
            Style::default().fg(theme.path).add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(theme.text)
        };
        let mut spans = Vec::with_capacity(2);
        let mut room = s.width as usize;
        if let Some(st) = st {
            let sym = Span::styled(format!("{} ", st.symbol()), Style::default().fg(st.color(theme)));
            room = room.saturating_sub(sym.width());
            spans.push(sym);
        }
        spans.push(Span::styled(fit(display_name(&n.name), room), name_style));
        buf.set_line(s.x, s.y, &Line::from(spans), s.width);
    }

    if legend_h > 0 {
        let legend_area = Rect { y: area.y + area.height - 1, height: 1, ..area };
        render_legend(frame, legend_area, ctx);
    }
    true
}

/// Columns each label gets when `count` labels share `rows` rows of `width`.
fn room_per_label(count: usize, rows: usize, width: usize) -> usize {
    let per_row = count.div_ceil(rows.max(1)).max(1);
    width / per_row
}

/// Left columns for labels of `widths` wanting to be centred at `xs` (0..=1)
/// in `total` columns, in order, with a space between: pushed right past
/// their left neighbour, then pulled back left to fit.
fn place_row(xs: &[f64], widths: &[usize], total: usize) -> Vec<usize> {
    let mut lefts = Vec::with_capacity(xs.len());
    let mut next_free = 0usize;
    for (x, w) in xs.iter().zip(widths) {
        let centre = (x.clamp(0.0, 1.0) * total.saturating_sub(1) as f64).round() as usize;
        let left = centre.saturating_sub(w / 2).max(next_free);
        lefts.push(left);
        next_free = left + w + 1;
    }
    let mut limit = total;
    for (left, w) in lefts.iter_mut().zip(widths).rev() {
        if *left + w > limit {
            *left = limit.saturating_sub(*w);
        }
        limit = left.saturating_sub(1);
    }
    lefts
}

fn render_legend(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let theme = ctx.theme;
    let mut spans = Vec::new();
    for st in [
        NodeState::Ok,
        NodeState::Failing,
        NodeState::Faulted,
        NodeState::Forbidden,
        NodeState::Blacklisted,
        NodeState::Unused,
    ] {
        // The short word: the legend must fit 80 columns.
        let word = if st == NodeState::Faulted { "fault" } else { st.label() };
        spans.push(Span::styled(format!("{} {word} ", st.symbol()), Style::default().fg(st.color(theme))));
    }
    spans.push(Span::styled(format!("│ lines: w ≥ {}", fmt_weight(ctx.state, DRAWN_EDGE_WEIGHT)), theme.muted()));
    let line = Line::from(spans);
    frame.render_widget(Paragraph::new(line), area);
}

/// One row of the ranked table.
#[derive(Clone, Copy)]
struct Ranked<'a> {
    name: &'a str,
    score: f64,
    weight: Option<f64>,
}

/// The table's order: by score, then by weight from the source (tools it
/// does not reach last), then by name.
fn table_order(a: &Ranked, b: &Ranked) -> Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| b.weight.unwrap_or(-1.0).total_cmp(&a.weight.unwrap_or(-1.0)))
        .then_with(|| a.name.cmp(b.name))
}

/// A source row this short is merged in whole; a longer one (`start`'s) is
/// read only for the tools of the scores the table reaches.
const SHORT_ROW: usize = 256;

/// The first `k` tools in [`table_order`]. The graph keeps its tools by
/// score then name, which is that order but for the weights: they only
/// reorder tools of equal score, so each run of equal scores is reordered
/// on its own, and no run past the `k`th tool is read.
fn ranked_rows<'a>(g: &'a GraphView, src_row: &'a BTreeMap<String, f64>, k: usize) -> Vec<Ranked<'a>> {
    let mut out: Vec<Ranked> = Vec::with_capacity(k);
    let short = src_row.len() <= SHORT_ROW;
    // A short row's tools in the table's order, merged into each run.
    let mut in_row: Vec<Ranked> = if short {
        src_row
            .iter()
            .filter(|(t, _)| g.is_tool(t))
            .map(|(t, w)| Ranked { name: t, score: g.score(t), weight: Some(*w) })
            .collect()
    } else {
        Vec::new()
    };
    in_row.sort_by(table_order);
    let mut in_row = in_row.into_iter().peekable();
    let mut tools = g.by_score().peekable();
    let mut run: Vec<Ranked> = Vec::new();
    while out.len() < k {
        let Some(&(_, score)) = tools.peek() else { break };
        let same = |s: f64| s.total_cmp(&score) == Ordering::Equal;
        if short {
            // The run's tools the row does not reach, by name, merged with
            // those it does.
            let mut rest = std::iter::from_fn(|| tools.next_if(|t| same(t.1)))
                .filter(|(name, _)| !src_row.contains_key(*name))
                .map(|(name, score)| Ranked { name, score, weight: None })
                .peekable();
            while out.len() < k {
                let next = match (in_row.peek().filter(|r| same(r.score)), rest.peek()) {
                    (Some(a), Some(b)) if table_order(a, b) == Ordering::Greater => rest.next(),
                    (Some(_), _) => in_row.next(),
                    (None, Some(_)) => rest.next(),
                    (None, None) => break,
                };
                out.extend(next);
            }
            // What `k` left unread of the run is not shown.
            rest.for_each(drop);
        } else {
            run.clear();
            run.extend(std::iter::from_fn(|| tools.next_if(|t| same(t.1))).map(|(name, score)| Ranked {
                name,
                score,
                weight: src_row.get(name).copied(),
            }));
            // The run is in name order: a stable sort by weight keeps it within equal weights.
            run.sort_by(|a, b| b.weight.unwrap_or(-1.0).total_cmp(&a.weight.unwrap_or(-1.0)));
            out.extend(run.iter().take(k - out.len()));
        }
    }
    out
}

/// Tools ranked by score, then by weight from the source node, then by name;
/// only the rows up to the screen's last are ordered (see `ranked_rows`).
fn render_table(frame: &mut Frame, area: Rect, ctx: &PaneCtx, focus: &str, g: &GraphView) {
    let theme = ctx.theme;
    let state = ctx.state;
    // The focus's own row when it leads to other tools; else start's, which
    // reaches every tool (a tool's row is often just itself and `end`).
    let leads_on = g.row(focus).is_some_and(|r| r.keys().any(|t| t != focus && t != END));
    let source = if focus != END && leads_on { focus } else { START };
    let empty = BTreeMap::new();
    let src_row = g.row(source).unwrap_or(&empty);

    let n = g.tool_count();
    let footer_h = u16::from(area.height >= 4);
    let visible = (area.height.saturating_sub(1 + footer_h)) as usize;
    let offset = ctx.nav.table_offset.min(n.saturating_sub(visible));
    let rows = ranked_rows(g, src_row, offset + visible);
    let shown: Vec<&Ranked> = rows.iter().skip(offset).take(visible).collect();

    let w = area.width as usize;
    let rank_w = (offset + visible).max(1).to_string().len().max(1);
    let state_w = if w >= 70 { 16 } else { 2 };
    let w_head = format!("w←{}", display_name(source));
    let fixed = rank_w + 1 + 1 + 7 + 1 + 8 + 1 + 5 + 1 + state_w;
    let name_w = w.saturating_sub(fixed).max(4);
    let mut lines = Vec::with_capacity(area.height as usize);
    lines.push(Line::from(Span::styled(
        format!(
            "{:>rank_w$} {} {:>7} {:>8} {:>5} {}",
            "#",
            fit_padded("tool", name_w),
            "score",
            fit(&w_head, 8),
            "in",
            fit_padded("state", state_w)
        ),
        theme.muted().add_modifier(Modifier::UNDERLINED),
    )));
    for (k, r) in shown.iter().enumerate() {
        let st = node_state(state, r.name);
        let row_style = if r.name == focus { theme.selected() } else { Style::default() };
        let state_text = if state_w > 2 { format!("{} {}", st.symbol(), st.label()) } else { st.symbol().to_string() };
        let spans = vec![
            Span::styled(format!("{:>rank_w$} ", offset + k + 1), theme.muted()),
            Span::styled(fit_padded(r.name, name_w), Style::default().fg(theme.text)),
            Span::raw(format!(" {:>7}", fit(&format!("{:.1}", r.score), 7))),
            Span::raw(format!(
                " {:>8}",
                r.weight.map(|x| fit(&fmt_weight(state, x), 8).into_owned()).unwrap_or_else(|| "–".into())
            )),
            Span::styled(format!(" {:>5} ", g.in_degree(r.name)), theme.muted()),
            Span::styled(fit_padded(&state_text, state_w), Style::default().fg(st.color(theme))),
        ];
        lines.push(Line::from(spans).style(row_style));
    }
    if footer_h > 0 {
        let last = offset + shown.len();
        let first = if shown.is_empty() { 0 } else { offset + 1 };
        let why = if n > MAX_DRAWN_NODES { "too many to draw" } else { "too little room to draw" };
        let text = format!("{first}–{last} of {n} tools by score ({why}) · in: edges in with w > 0");
        let y = area.y + area.height - 1;
        let footer = Rect { y, height: 1, ..area };
        let table = Rect { height: area.height - 1, ..area };
        frame.render_widget(Paragraph::new(lines), table);
        note(frame, footer, theme, &text);
    } else {
        frame.render_widget(Paragraph::new(lines), area);
    }
}
