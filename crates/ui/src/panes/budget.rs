//! The budget pane: what the session has spent, per tool and per model role,
//! against the budget B.
//!
//! B is BTP's allowance per task (BTP §2.1, docs/src/papers/btp.md), so the bar
//! measures the current run's cost against it; the session total is shown
//! beside it. When the run has a BTP plan the pane shows the plan against what
//! was used of it instead: c_s, planned, spent and what is left of B, and a row
//! per planned tool with its state.

use crate::eval::figures::total;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::graph::{NodeState, node_state};
use super::{num, pane_block, pane_title, render_block};
use crate::PaneCtx;
use crate::engine::SessionState;
use crate::engine::event::BudgetRow;
use crate::engine::fold::{PlanView, RunView, ToolSpend};
use crate::format::fmt_cost;
use crate::model::Role;
use crate::symbols::{BLACKLISTED, FAILING, FORBIDDEN, OK};
use crate::text::{fit, fit_name, width};
use crate::theme::Theme;

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let block = pane_block(th, ctx.focused, pane_title("Budget", area.width, th)).style(th.base());
    let Some(inner) = render_block(frame, area, block) else { return };
    let [head, table] = Layout::vertical([Constraint::Length(3.min(inner.height)), Constraint::Fill(1)]).areas(inner);
    if let Some((run, plan)) = ctx.state.current.as_ref().and_then(|r| r.plan.as_ref().map(|p| (r, p))) {
        frame.render_widget(Paragraph::new(plan_summary(ctx, plan, inner.width as usize)), head);
        if table.height >= 2 {
            render_plan_table(frame, table, ctx, run, plan);
        }
        return;
    }
    frame.render_widget(Paragraph::new(summary(ctx, inner.width as usize)), head);
    if table.height >= 2 {
        render_table(frame, table, ctx);
    }
}

/// The bar of this run's cost against B, then the session's totals.
fn summary(ctx: &PaneCtx, w: usize) -> Vec<Line<'static>> {
    let (s, th) = (ctx.state, ctx.theme);
    let unit = unit_suffix(s);
    let run_cost = s.current.as_ref().map_or(0.0, |r| r.cost);
    let first = match s.params.budget {
        None => Line::from(vec![
            Span::styled(format!("this task {}{unit}", fmt_cost(run_cost)), th.base()),
            Span::styled(" · no budget set (B = ∞)", th.muted()),
        ]),
        Some(b) => budget_bar(run_cost, b, &unit, w, th),
    };
    vec![first, session_line(s, &unit, th)]
}

fn unit_suffix(s: &SessionState) -> String {
    if s.cost_unit.is_empty() { String::new() } else { format!(" {}", s.cost_unit) }
}

fn session_line(s: &SessionState, unit: &str, th: &Theme) -> Line<'static> {
    // The totals, not the window of kept runs: a long session keeps only the
    // latest thousand, and the count must not stop there.
    let runs = s.totals.attempts();
    let mut spans = vec![Span::styled(format!("session {}{unit}", fmt_cost(s.total_cost)), th.base())];
    if runs > 0 {
        spans.push(Span::styled(
            format!(" · {runs} runs done, {} a run on average", fmt_cost(s.totals.cost / runs as f64)),
            th.muted(),
        ));
    }
    Line::from(spans)
}

/// Glyphs of the plan bar's segments: each segment has its own glyph, so the
/// bar reads without colour.
const BAR_FIXED: &str = "▓";
const BAR_SPENT: &str = "█";
const BAR_PLANNED: &str = "▒";
const BAR_FREE: &str = "░";

/// Spend beyond plan smaller than this is rounding, not overspending.
const EPS: f64 = 1e-9;

/// The plan's bar against B, its key with the numbers, the session's totals.
fn plan_summary(ctx: &PaneCtx, plan: &PlanView, w: usize) -> Vec<Line<'static>> {
    let (s, th) = (ctx.state, ctx.theme);
    let unit = unit_suffix(s);
    let spent = total(plan.used.values().map(|u| u.1));
    let over = spent > plan.planned_cost + EPS;
    let left = plan.remaining - spent;
    let mut label_style = th.fg(if over || left < -EPS { th.failing } else { th.accent });
    if over {
        label_style = label_style.add_modifier(Modifier::BOLD);
    }
    let label = format!(" {} spent · {} left of B {}{unit}", fmt_cost(spent), fmt_cost(left), fmt_cost(plan.budget));
    let bar_w = w.saturating_sub(width(&label)).min(48);
    let first = if bar_w < 6 {
        Line::styled(label.trim_start().to_string(), label_style)
    } else {
        let mut spans = plan_bar(plan, spent, bar_w, th);
        spans.push(Span::styled(label, label_style));
        Line::from(spans)
    };

    let free = (plan.remaining - plan.planned_cost.max(spent)).max(0.0);
    let mut keys: Vec<Span<'static>> = Vec::new();
    let mut used_w = 0;
    let mut key = |glyph: &str, text: String, colour: Color| {
        let sep = if keys.is_empty() { "" } else { " · " };
        let piece = width(sep) + width(glyph) + 1 + width(&text);
        if used_w + piece > w {
            return;
        }
        used_w += piece;
        if !sep.is_empty() {
            keys.push(Span::styled(sep, th.muted()));
        }
        keys.push(Span::styled(format!("{glyph} "), th.fg(colour)));
        keys.push(Span::styled(text, th.base()));
    };
    let calls = if plan.planned_calls == 1 { "call" } else { "calls" };
    key(BAR_FIXED, format!("c_s {}", fmt_cost(plan.fixed_cost)), th.muted);
    key(BAR_SPENT, format!("spent {}", fmt_cost(spent)), if over { th.failing } else { th.accent });
    key(BAR_PLANNED, format!("planned {} ({} {calls})", fmt_cost(plan.planned_cost), plan.planned_calls), th.accent);
    if over {
        key(BAR_SPENT, format!("over plan {}", fmt_cost(spent - plan.planned_cost)), th.failing);
    }
    key(BAR_FREE, format!("unplanned {}", fmt_cost(free)), th.muted);
    key("τ", format!("{:.2}", plan.tau), th.muted);
    vec![first, Line::from(keys), session_line(s, &unit, th)]
}

/// c_s, then the spent part of the plan, the unspent part, spend beyond the
/// plan (failing colour) and the unplanned rest, scaled to `w` cells.
fn plan_bar(plan: &PlanView, spent: f64, w: usize, th: &Theme) -> Vec<Span<'static>> {
    let fixed = plan.fixed_cost.max(0.0);
    let planned = plan.planned_cost.max(0.0);
    let spent = spent.max(0.0);
    let ends = [fixed, fixed + spent.min(planned), fixed + planned, fixed + planned.max(spent)];
    let scale = plan.budget.max(ends[3]);
    let cell = |x: f64| -> usize {
        if scale > 0.0 && x.is_finite() { ((x / scale) * w as f64).round().clamp(0.0, w as f64) as usize } else { 0 }
    };
    let glyphs = [(BAR_FIXED, th.muted), (BAR_SPENT, th.accent), (BAR_PLANNED, th.accent), (BAR_SPENT, th.failing)];
    let mut spans = Vec::with_capacity(5);
    let mut at = 0;
    for (end, (glyph, colour)) in ends.iter().zip(glyphs) {
        let to = cell(*end).max(at);
        if to > at {
            spans.push(Span::styled(glyph.repeat(to - at), th.fg(colour)));
        }
        at = to;
    }
    if w > at {
        spans.push(Span::styled(BAR_FREE.repeat(w - at), th.muted()));
    }
    spans
}

/// Where a planned tool stands in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlanState {
    Allowed,
    Exhausted,
    Blacklisted,
    Removed,
}

impl PlanState {
    fn of(run: &RunView, row: &BudgetRow, used: u32) -> Self {
        if run.blacklisted.contains(&row.tool) {
            PlanState::Blacklisted
        } else if row.calls == 0 {
            PlanState::Removed
        } else if used >= row.calls {
            PlanState::Exhausted
        } else {
            PlanState::Allowed
        }
    }

    fn label(self) -> &'static str {
        match self {
            PlanState::Allowed => "allowed",
            PlanState::Exhausted => "exhausted",
            PlanState::Blacklisted => "blacklisted",
            PlanState::Removed => "removed",
        }
    }

    /// An exhausted tool is forbidden to the model like a removed one, but
    /// it got what the plan gave it, so it is not drawn as a warning.
    fn symbol_colour(self, th: &Theme) -> (&'static str, Color) {
        match self {
            PlanState::Allowed => (OK, th.ok),
            PlanState::Exhausted => (FORBIDDEN, th.muted),
            PlanState::Blacklisted => (BLACKLISTED, th.blacklisted),
            PlanState::Removed => (FORBIDDEN, th.forbidden),
        }
    }
}

/// Planned tools first, most planned calls first, then the removed ones;
/// ties keep the plan's order.
fn plan_order(plan: &PlanView) -> Vec<usize> {
    let mut order: Vec<usize> = (0..plan.rows.len()).collect();
    order.sort_by_key(|&i| (plan.rows[i].calls == 0, std::cmp::Reverse(plan.rows[i].calls)));
    order
}

fn render_plan_table(frame: &mut Frame, area: Rect, ctx: &PaneCtx, run: &RunView, plan: &PlanView) {
    let th = ctx.theme;
    let order = plan_order(plan);
    let any_default = plan.rows.iter().any(|r| r.defaulted);
    // The header and the total take two rows, a note on defaults one more.
    let note = any_default && area.height >= 5;
    let body = (area.height as usize).saturating_sub(2 + usize::from(note));
    let (shown, hidden) = if order.len() > body {
        (body.saturating_sub(1), order.len() - body.saturating_sub(1))
    } else {
        (order.len(), 0)
    };
    let more = format!("… {hidden} more tools");
    let widest = order[..shown]
        .iter()
        .map(|&i| width(&plan.rows[i].tool))
        .chain((hidden > 0).then(|| width(&more)))
        .max()
        .unwrap_or(5)
        .max(5);
    // tool, planned calls, planned cost, used calls, spent, v, F̃, state:
    // the state and the counts matter most, v and F̃ least.
    let widths = [0, 4, 9, 4, 8, 5, 5, 13];
    let base = widest.min(NAME_MIN);
    let mut show = visible_columns(area.width as usize, base, &widths, &[7, 1, 3, 4, 2, 6, 5]);
    show[0] = true;
    let others: usize = widths.iter().zip(&show).skip(1).filter(|(_, s)| **s).map(|(w, _)| w + 1).sum();
    let name_w = widest.min((area.width as usize).saturating_sub(others)).max(1);

    let estimate = |x: f64, defaulted: bool| {
        let text = if defaulted { format!("{x:.2}*") } else { format!("{x:.2}") };
        num(text).style(if defaulted { th.muted() } else { th.base() })
    };
    let mut grid: Vec<(Vec<Cell>, Style)> = Vec::with_capacity(shown + 2);
    for &i in &order[..shown] {
        let row = &plan.rows[i];
        let (used, spent) = plan.used.get(&row.tool).copied().unwrap_or((0, 0.0));
        let state = PlanState::of(run, row, used);
        let (sym, colour) = state.symbol_colour(th);
        let name_style = match state {
            PlanState::Blacklisted | PlanState::Removed => th.fg(colour),
            _ => th.base(),
        };
        let planned_cost = f64::from(row.calls) * row.cost;
        let spent_cell = num(fmt_cost(spent));
        let spent_cell = if spent > planned_cost + EPS { spent_cell.style(th.fg(th.failing)) } else { spent_cell };
        let cells = vec![
            Cell::from(fit(&row.tool, name_w).into_owned()).style(name_style),
            num(row.calls.to_string()),
            num(fmt_cost(planned_cost)),
            num(used.to_string()),
            spent_cell,
            estimate(row.value, row.defaulted),
            estimate(row.freq, row.defaulted),
            Cell::from(format!("{sym} {}", state.label())).style(th.fg(colour)),
        ];
        grid.push((cells, Style::default()));
    }
    if hidden > 0 && body > 0 {
        grid.push((vec![Cell::from(fit(&more, name_w).into_owned())], th.muted()));
    }
    let used_calls: u32 = plan.used.values().map(|u| u.0).sum();
    let spent = total(plan.used.values().map(|u| u.1));
    let spent_total = num(fmt_cost(spent));
    let spent_total = if spent > plan.planned_cost + EPS { spent_total.style(th.fg(th.failing)) } else { spent_total };
    let total = vec![
        Cell::from("total"),
        num(plan.planned_calls.to_string()),
        num(fmt_cost(plan.planned_cost)),
        num(used_calls.to_string()),
        spent_total,
        Cell::from(""),
        Cell::from(""),
        Cell::from(""),
    ];
    grid.push((total, th.base().add_modifier(Modifier::BOLD)));
    let header = ["tool", "plan", "plan cost", "used", "spent", "v", "F̃", "state"]
        .into_iter()
        .enumerate()
        .map(|(i, h)| if i == 0 || i == 7 { Cell::from(h) } else { num(h.to_string()) })
        .collect::<Vec<_>>();
    let [table, foot] = Layout::vertical([Constraint::Fill(1), Constraint::Length(u16::from(note))]).areas(area);
    frame.render_widget(columns_table(grid, header, &show, &widths, name_w, th), table);
    if note {
        let text = fit("* default v and F̃: no experience with the tool", area.width as usize).into_owned();
        frame.render_widget(Paragraph::new(Line::styled(text, th.muted())), foot);
    }
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
    // A bridged agent's spending by conversation: a third of the rows at most.
    let threads = s.current.as_ref().map(|r| r.threads.tree()).unwrap_or_default();
    let threads_shown = threads.len().min((body - roles_shown) / 3);
    let room = body - roles_shown - threads_shown;
    let ToolsTable { top, hidden, calls: tool_calls, errors: tool_errors } = tools_view(s, room);
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
    for (depth, t) in threads.iter().take(threads_shown) {
        let lead = format!("{}thread · ", "  ".repeat(*depth));
        let name = format!("{lead}{}", fit_name(&t.name, name_w.saturating_sub(width(&lead))));
        let cells = vec![
            Cell::from(fit(&name, name_w).into_owned()).style(th.muted()),
            num((t.model_calls + t.tool_calls).to_string()).style(th.muted()),
            Cell::from(""),
            num(fmt_cost(t.cost)).style(th.muted()),
            num(share(t.cost)).style(th.muted()),
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
    frame.render_widget(columns_table(grid, header, &show, &widths, name_w, th), area);
}

/// A name column is not squeezed below this to make room for numbers.
const NAME_MIN: usize = 16;

/// Which columns fit in `avail` cells beside a first column of `base` cells,
/// taking the optional ones in `priority` order (indices into `widths`);
/// columns are one cell apart.
/// A table of the columns `show` keeps: the name column `name_w` wide, the
/// others at their `widths`.
fn columns_table(
    grid: Vec<(Vec<Cell<'static>>, Style)>,
    header: Vec<Cell<'static>>,
    show: &[bool],
    widths: &[usize],
    name_w: usize,
    th: &Theme,
) -> Table<'static> {
    let pick = |cells: Vec<Cell<'static>>| -> Vec<Cell<'static>> {
        cells.into_iter().zip(show).filter_map(|(c, s)| s.then_some(c)).collect()
    };
    let rows: Vec<Row> = grid.into_iter().map(|(cells, style)| Row::new(pick(cells)).style(style)).collect();
    let header = Row::new(pick(header)).style(th.muted().add_modifier(Modifier::BOLD));
    let mut constraints = vec![Constraint::Length(name_w as u16)];
    constraints
        .extend(widths.iter().zip(show).skip(1).filter(|(_, s)| **s).map(|(w, _)| Constraint::Length(*w as u16)));
    Table::new(rows, constraints).header(header).column_spacing(1)
}

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

/// What the table needs from the tools' spend, in one pass.
struct ToolsTable<'s> {
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
fn tools_view(s: &SessionState, n: usize) -> ToolsTable<'_> {
    let total = s.tool_spend.len();
    let keep = if total > n { n.saturating_sub(1) } else { total };
    let order = |a: &(&String, &ToolSpend), b: &(&String, &ToolSpend)| {
        b.1.cost.total_cmp(&a.1.cost).then_with(|| b.1.calls.cmp(&a.1.calls)).then_with(|| a.0.cmp(b.0))
    };
    let mut v = ToolsTable { top: Vec::with_capacity(keep + 1), hidden: total - keep, calls: 0, errors: 0 };
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

    fn row(tool: &str, calls: u32) -> BudgetRow {
        BudgetRow { tool: tool.into(), cost: 2.0, value: 1.0, freq: 3.0, defaulted: false, calls }
    }

    #[test]
    fn plan_rows_go_by_planned_calls_then_removed_in_plan_order() {
        let plan = PlanView {
            rows: vec![row("gone", 0), row("one", 1), row("three", 3), row("also_gone", 0), row("one_more", 1)],
            ..Default::default()
        };
        let names: Vec<&str> = plan_order(&plan).into_iter().map(|i| plan.rows[i].tool.as_str()).collect();
        assert_eq!(names, ["three", "one", "one_more", "gone", "also_gone"]);
    }

    #[test]
    fn the_bar_splits_b_into_its_segments_and_shows_overspend() {
        let th = Theme::default();
        let plan = PlanView { budget: 20.0, fixed_cost: 4.0, remaining: 16.0, planned_cost: 8.0, ..Default::default() };
        let text = |spans: &[Span]| spans.iter().map(|s| s.content.as_ref()).collect::<String>();
        assert_eq!(
            text(&plan_bar(&plan, 2.0, 20, &th)),
            format!("{}{}{}{}", "▓".repeat(4), "█".repeat(2), "▒".repeat(6), "░".repeat(8))
        );
        let over = plan_bar(&plan, 12.0, 20, &th);
        assert_eq!(text(&over), format!("{}{}{}{}", "▓".repeat(4), "█".repeat(8), "█".repeat(4), "░".repeat(4)));
        assert_eq!(over[2].style.fg, Some(th.failing));
        assert_eq!(over[1].style.fg, Some(th.accent));
        // Spend beyond B stretches the scale instead of overflowing the bar.
        assert_eq!(text(&plan_bar(&plan, 100.0, 20, &th)).chars().count(), 20);
    }
}
