//! The budget pane: what the session has spent, per tool and per model role,
//! against the budget B.
//!
//! B is BTP's allowance per task (DESIGN §3.2), so the bar measures the
//! current run's cost against it; the session total is shown beside it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

use super::graph::{NodeState, node_state};
use super::transcript::{fit, fmt_cost, width};
use crate::engine::SessionState;
use crate::engine::state::ToolSpend;
use crate::model::Role;
use crate::ui::PaneCtx;
use crate::ui::symbols::FAILING;
use crate::ui::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let block = Block::bordered()
        .border_style(th.border(ctx.focused))
        .style(th.base())
        .title(Line::styled(format!(" {} ", fit("Budget", (area.width as usize).saturating_sub(4))), th.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let [head, table] = Layout::vertical([Constraint::Length(3.min(inner.height)), Constraint::Fill(1)]).areas(inner);
    frame.render_widget(Paragraph::new(summary(ctx, inner.width as usize)), head);
    if table.height >= 2 {
        render_table(frame, table, ctx);
    }
}

/// The bar of this run's cost against B, then the session's totals.
fn summary(ctx: &PaneCtx, w: usize) -> Vec<Line<'static>> {
    let (s, th) = (ctx.state, ctx.theme);
    let unit = if s.cost_unit.is_empty() { String::new() } else { format!(" {}", s.cost_unit) };
    let run_cost = s.current.as_ref().map_or(0.0, |r| r.cost);
    let first = match s.params.budget {
        None => Line::from(vec![
            Span::styled(format!("this task {}{unit}", fmt_cost(run_cost)), th.base()),
            Span::styled(" · no budget set (B = ∞)", th.muted()),
        ]),
        Some(b) => budget_bar(run_cost, b, &unit, w, th),
    };
    let runs = s.finished.len();
    let mut second = vec![Span::styled(format!("session {}{unit}", fmt_cost(s.total_cost)), th.base())];
    if runs > 0 {
        let done: f64 = s.finished.iter().map(|r| r.cost).sum();
        second.push(Span::styled(
            format!(" · {runs} runs done, {} a run on average", fmt_cost(done / runs as f64)),
            th.muted(),
        ));
    }
    vec![first, Line::from(second)]
}

fn budget_bar(spent: f64, budget: f64, unit: &str, w: usize, th: &Theme) -> Line<'static> {
    let ratio = if budget > 0.0 {
        spent / budget
    } else if spent > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let over = ratio > 1.0;
    let pct = if ratio.is_finite() { format!(" ({:.0}%)", ratio * 100.0) } else { String::new() };
    let label = format!(" this task {} / {}{unit}{pct}", fmt_cost(spent), fmt_cost(budget));
    let colour = if over { th.failing } else { th.accent };
    let mut label_style = th.fg(colour);
    if over {
        label_style = label_style.add_modifier(Modifier::BOLD);
    }
    let bar_w = w.saturating_sub(width(&label)).min(40);
    if bar_w < 6 {
        return Line::styled(label.trim_start().to_string(), label_style);
    }
    let filled = if ratio.is_finite() { ((ratio.clamp(0.0, 1.0)) * bar_w as f64).round() as usize } else { bar_w };
    Line::from(vec![
        Span::styled("█".repeat(filled), th.fg(colour)),
        Span::styled("░".repeat(bar_w - filled), th.muted()),
        Span::styled(label, label_style),
    ])
}

fn render_table(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let (s, th) = (ctx.state, ctx.theme);
    let roles = role_costs(s);
    // The header and the total take two rows; a few tools come first, then
    // the roles (they are few), then the rest of the tools.
    let body = (area.height as usize).saturating_sub(2);
    let roles_shown = roles.len().min(body.saturating_sub(s.tool_spend.len().min(3)));
    let room = body - roles_shown;
    let ToolsView { top, hidden, calls: tool_calls, errors: tool_errors } = tools_view(s, room);
    let cost_head = if s.cost_unit.is_empty() { "cost".to_string() } else { format!("cost ({})", s.cost_unit) };
    let widest = top
        .iter()
        .map(|(n, _)| width(n) + 2)
        .chain(roles.iter().map(|r| width(r.0.as_str()) + 8))
        .chain((hidden > 0).then(|| width(&format!("… {hidden} more tools"))))
        .max()
        .unwrap_or(5)
        .max(5);
    // tool, calls, errors, cost, share; the cost matters most after the name.
    let widths = [0, 6, 7, width(&cost_head).max(8), 6];
    let base = widest.min(NAME_MIN);
    let mut show = visible_columns(area.width as usize, base, &widths, &[3, 1, 2, 4]);
    show[0] = true;
    let others: usize = widths.iter().zip(&show).skip(1).filter(|(_, s)| **s).map(|(w, _)| w + 1).sum();
    let name_w = widest.min((area.width as usize).saturating_sub(others)).max(1);

    let share = |c: f64| {
        if s.total_cost > 0.0 { format!("{:.0}%", 100.0 * c / s.total_cost) } else { String::from("—") }
    };
    let mut grid: Vec<(Vec<Cell>, Style)> = Vec::with_capacity(top.len() + roles.len() + 2);
    for (name, spend) in &top {
        let mark = tool_mark(s, name, th);
        let room = name_w.saturating_sub(if mark.is_some() { 2 } else { 0 });
        let mut tool = vec![Span::styled(fit(name, room).into_owned(), th.base())];
        if let Some((sym, colour)) = mark {
            tool.push(Span::styled(format!(" {sym}"), th.fg(colour)));
        }
        let errors = if spend.errors > 0 {
            num(format!("{FAILING} {}", spend.errors)).style(th.fg(th.failing))
        } else {
            num("0".to_string()).style(th.muted())
        };
        let cells = vec![
            Cell::from(Line::from(tool)),
            num(spend.calls.to_string()),
            errors,
            num(fmt_cost(spend.cost)),
            num(share(spend.cost)).style(th.muted()),
        ];
        grid.push((cells, Style::default()));
    }
    if hidden > 0 && room > 0 {
        grid.push((vec![Cell::from(format!("… {hidden} more tools"))], th.muted()));
    }
    for (role, calls, cost) in roles.iter().take(roles_shown) {
        let cells = vec![
            Cell::from(fit(&format!("model · {role}"), name_w).into_owned()).style(th.fg(th.accent)),
            num(calls.to_string()),
            Cell::from(""),
            num(fmt_cost(*cost)),
            num(share(*cost)).style(th.muted()),
        ];
        grid.push((cells, Style::default()));
    }
    let model_calls: u64 = roles.iter().map(|r| r.1).sum();
    let total = vec![
        Cell::from("total"),
        num((tool_calls + model_calls).to_string()),
        num(if tool_errors > 0 { format!("{FAILING} {tool_errors}") } else { "0".to_string() }),
        num(fmt_cost(s.total_cost)),
        Cell::from(""),
    ];
    grid.push((total, th.base().add_modifier(Modifier::BOLD)));
    let header = vec![
        Cell::from("tool"),
        num("calls".to_string()),
        num("errors".to_string()),
        num(cost_head),
        num("share".to_string()),
    ];
    let pick = |cells: Vec<Cell<'static>>| -> Vec<Cell<'static>> {
        cells.into_iter().zip(&show).filter_map(|(c, s)| s.then_some(c)).collect()
    };
    let rows: Vec<Row> = grid.into_iter().map(|(cells, style)| Row::new(pick(cells)).style(style)).collect();
    let header = Row::new(pick(header)).style(th.muted().add_modifier(Modifier::BOLD));
    let mut constraints = vec![Constraint::Length(name_w as u16)];
    constraints
        .extend(widths.iter().zip(&show).skip(1).filter(|(_, s)| **s).map(|(w, _)| Constraint::Length(*w as u16)));
    frame.render_widget(Table::new(rows, constraints).header(header).column_spacing(1), area);
}

/// A name column is not squeezed below this to make room for numbers.
const NAME_MIN: usize = 16;

/// Which columns fit in `avail` cells beside a first column of `base` cells,
/// taking the optional ones in `priority` order (indices into `widths`);
/// columns are one cell apart.
pub(crate) fn visible_columns(avail: usize, base: usize, widths: &[usize], priority: &[usize]) -> Vec<bool> {
    let mut show = vec![false; widths.len()];
    let mut used = base;
    for &i in priority {
        if let Some(&w) = widths.get(i)
            && used + 1 + w <= avail
        {
            show[i] = true;
            used += 1 + w;
        }
    }
    show
}

/// A number, right-aligned in its column.
fn num<'a>(s: String) -> Cell<'a> {
    Cell::from(Line::from(s).right_aligned())
}

/// What the table needs from the tools' spend, in one pass.
struct ToolsView<'s> {
    /// The costliest tools, costliest first (ties by calls, then name).
    top: Vec<(&'s String, &'s ToolSpend)>,
    /// Tools left out of `top`.
    hidden: usize,
    calls: u64,
    errors: u64,
}

/// The `n` rows' worth of costliest tools (one row goes to saying how many
/// are hidden when not all fit). A bounded insertion into a short list, so a
/// large library costs one comparison per tool and no allocation per tool.
fn tools_view(s: &SessionState, n: usize) -> ToolsView<'_> {
    let total = s.tool_spend.len();
    let keep = if total > n { n.saturating_sub(1) } else { total };
    let order = |a: &(&String, &ToolSpend), b: &(&String, &ToolSpend)| {
        b.1.cost.total_cmp(&a.1.cost).then_with(|| b.1.calls.cmp(&a.1.calls)).then_with(|| a.0.cmp(b.0))
    };
    let mut v = ToolsView { top: Vec::with_capacity(keep + 1), hidden: total - keep, calls: 0, errors: 0 };
    for item in &s.tool_spend {
        v.calls += item.1.calls;
        v.errors += item.1.errors;
        if keep == 0 || (v.top.len() == keep && order(&item, &v.top[keep - 1]).is_ge()) {
            continue;
        }
        let at = v.top.partition_point(|t| order(t, &item).is_lt());
        v.top.insert(at, item);
        v.top.truncate(keep);
    }
    v
}

/// Model calls and cost per role, summed over the models that played it.
fn role_costs(s: &SessionState) -> Vec<(Role, u64, f64)> {
    let mut out: Vec<(Role, u64, f64)> = Vec::new();
    for ((role, _), a) in &s.accounts {
        match out.iter_mut().find(|r| r.0 == *role) {
            Some(r) => {
                r.1 += a.calls;
                r.2 += a.cost;
            }
            None => out.push((*role, a.calls, a.cost)),
        }
    }
    out
}

/// What is wrong with a tool right now, if anything, as the graph pane
/// shows it: a fault injected, blacklisted or forbidden in this run, failing.
fn tool_mark(s: &SessionState, name: &str, th: &Theme) -> Option<(&'static str, Color)> {
    match node_state(s, name) {
        NodeState::Ok | NodeState::Unused => None,
        st => Some((st.symbol(), st.color(th))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(calls: u64, errors: u64, cost: f64) -> ToolSpend {
        ToolSpend { calls, errors, cost }
    }

    #[test]
    fn tools_view_keeps_the_costliest_in_order_and_counts_all() {
        let mut s = SessionState::default();
        for (name, sp) in [
            ("a", spend(1, 0, 1.0)),
            ("b", spend(5, 2, 9.0)),
            ("c", spend(2, 0, 3.0)),
            ("d", spend(3, 1, 3.0)),
            ("e", spend(1, 0, 0.5)),
        ] {
            s.tool_spend.insert(name.to_string(), sp);
        }
        let v = tools_view(&s, 4);
        let names: Vec<&str> = v.top.iter().map(|(n, _)| n.as_str()).collect();
        // Three rows of tools and one saying two more are hidden; equal cost
        // ranks the more used first.
        assert_eq!(names, ["b", "d", "c"]);
        assert_eq!(v.hidden, 2);
        assert_eq!((v.calls, v.errors), (12, 3));
        let all = tools_view(&s, 5);
        assert_eq!(all.top.len(), 5);
        assert_eq!(all.hidden, 0);
        assert!(tools_view(&s, 0).top.is_empty());
    }

    #[test]
    fn columns_are_taken_by_importance_while_they_fit() {
        let widths = [0, 6, 7, 14, 6];
        assert_eq!(visible_columns(80, 16, &widths, &[3, 1, 2, 4]), [false, true, true, true, true]);
        assert_eq!(visible_columns(40, 16, &widths, &[3, 1, 2, 4]), [false, true, false, true, false]);
        assert_eq!(visible_columns(20, 16, &widths, &[3, 1, 2, 4]), [false, false, false, false, false]);
    }
}
