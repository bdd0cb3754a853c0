//! The models pane: which model plays each role, and what it has cost so far.
//! Simulated models are marked, so nobody mistakes a simulated run for a real one.
//! Roles the session's strategy does not call are dimmed (and named below the
//! table), unless they made calls after all. A model fault in force on a
//! role or its model is tagged after the model's name. Once a reply has
//! streamed, the mean time to the first token and the tokens a second after
//! it show too; once the server reports a prompt cache, the share of the
//! prompt tokens it served.

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

use super::budget::visible_columns;
use super::{num, pane_block, pane_title, render_block};
use crate::PaneCtx;
use crate::engine::StrategyKind;
use crate::engine::fold::model_faults;
use crate::engine::fold::{Account, SessionState};
use crate::format::{fmt_cost, fmt_count, fmt_ms};
use crate::model::Role;
use crate::model::price::Price;
use crate::symbols::FAULT;
use crate::text::{fit, fit_name, width};

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let (s, th) = (ctx.state, ctx.theme);
    let block = pane_block(th, ctx.focused, pane_title("Models", area.width, th)).style(th.base());
    let Some(inner) = render_block(frame, area, block) else { return };
    let cost_head = if s.cost_unit.is_empty() { "cost".to_string() } else { format!("cost ({})", s.cost_unit) };
    let widest = s
        .models
        .iter()
        .map(|m| {
            let tag = model_faults::on(&s.model_faults, m.role, &m.model.name).next();
            let tag = tag.map_or(0, |f| width(&format!(" {FAULT} {}", f.fault.mode)));
            width(&m.model.name) + if m.model.simulated { width(SIMULATED) } else { 0 } + tag
        })
        .chain(
            s.accounts
                .keys()
                .filter(|(r, n)| !s.models.iter().any(|m| m.role == *r && m.model.name == *n))
                .map(|(_, n)| width(n) + width(SIMULATED) + width(BEFORE)),
        )
        .max()
        .unwrap_or(5)
        .max(5);
    // A bridged agent's threads, in tree order, each a row under its role's.
    let threads = s.current.as_ref().map(|r| r.threads.tree()).unwrap_or_default();
    let thread_w = threads.iter().map(|(d, t)| 2 * d + 2 + width(&t.name)).max().unwrap_or(0);
    let role_w = s
        .models
        .iter()
        .map(|m| width(m.role.as_str()))
        .chain([width("total"), thread_w.min(THREAD_MAX)])
        .max()
        .unwrap_or(5);
    // role, model, calls, tok in, cached, tok out, cost, avg, first token,
    // tok/s, price: the calls and the cost matter most after who plays the
    // role. The streaming columns only once a reply streamed, the share of
    // the prompt the server took from its cache only once it reported one.
    let widths = [role_w, 0, 6, 7, 6, 7, width(&cost_head).max(9), 7, 7, 6, 21];
    let base = role_w + 1 + widest.min(MODEL_MIN);
    let streams = s.accounts.values().any(|a| a.streamed > 0);
    let caches = s.accounts.values().any(|a| a.usage.cached_tokens > 0);
    let mut priority: Vec<usize> = if streams { vec![2, 6, 3, 5, 7, 8, 9, 10] } else { vec![2, 6, 3, 5, 7, 10] };
    if caches {
        priority.insert(3, 4);
    }
    let mut show = visible_columns(inner.width as usize, base, &widths, &priority);
    show[0] = true;
    show[1] = true;
    let others: usize = widths.iter().zip(&show).skip(2).filter(|(_, s)| **s).map(|(w, _)| w + 1).sum();
    let name_w = widest.min((inner.width as usize).saturating_sub(role_w + 1 + others)).max(1);

    let mut grid: Vec<(Vec<Cell>, Style)> = Vec::with_capacity(s.models.len() + 2);
    let mut total = Account::default();
    let mut dimmed = Vec::new();
    for rm in &s.models {
        let dim = unused(s, rm.role);
        // An outside agent's session lists the roles in use, not those of
        // Switchyard's own strategies.
        if dim && s.strategy == Some(StrategyKind::Agent) {
            continue;
        }
        let a = s.accounts.get(&(rm.role, rm.model.name.clone())).cloned().unwrap_or_default();
        add(&mut total, &a);
        if dim {
            dimmed.push(rm.role.as_str());
        }
        let fault = model_faults::on(&s.model_faults, rm.role, &rm.model.name)
            .next()
            .map(|f| format!(" {FAULT} {}", f.fault.mode));
        let model =
            ModelCell { name: &rm.model.name, simulated: rm.model.simulated, former: false, dim, fault, width: name_w };
        grid.push((cells(rm.role, model, &a, Some(rm.price), ctx), Style::default()));
    }
    // Models that played a role before a switch keep their share of the cost.
    for ((role, name), a) in &s.accounts {
        if s.models.iter().any(|m| m.role == *role && m.model.name == *name) {
            continue;
        }
        add(&mut total, a);
        let simulated = s.available_models.iter().any(|m| m.name == *name && m.simulated);
        let model = ModelCell { name, simulated, former: true, dim: false, fault: None, width: name_w };
        grid.push((cells(*role, model, a, None, ctx), Style::default()));
    }
    if grid.is_empty() {
        grid.push((vec![Cell::from(""), Cell::from("no models yet")], th.muted()));
    }
    // A bridged agent's calls, by the conversation that made them (a part
    // of the role's row above: not counted again in the total).
    for (depth, t) in threads {
        let lead = format!("{}└ ", "  ".repeat(depth));
        let name = format!("{lead}{}", fit_name(&t.name, role_w.saturating_sub(width(&lead))));
        let row = vec![
            Cell::from(fit(&name, role_w).into_owned()),
            Cell::from(t.state.label()),
            num(t.model_calls.to_string()),
            num(fmt_count(t.usage.prompt_tokens)),
            num(String::new()),
            num(fmt_count(t.usage.completion_tokens)),
            num(fmt_cost(t.cost)),
        ];
        grid.push((row, th.muted()));
    }
    let total_row = vec![
        Cell::from("total"),
        Cell::from(""),
        num(total.calls.to_string()),
        num(fmt_count(total.usage.prompt_tokens)),
        num(cached(&total)),
        num(fmt_count(total.usage.completion_tokens)),
        num(fmt_cost(total.cost)),
        num(avg_latency(&total)),
        num(first_token(&total)),
        num(rate(&total)),
    ];
    grid.push((total_row, th.base().add_modifier(Modifier::BOLD)));
    let mut header: Vec<Cell> = vec![Cell::from("role"), Cell::from("model")];
    header.extend(
        ["calls", "tok in", "cached", "tok out", cost_head.as_str(), "avg", "1st tok", "tok/s", "price in/out /Mtok"]
            .map(|h| num(h.to_string())),
    );
    let pick = |cells: Vec<Cell<'static>>| -> Vec<Cell<'static>> {
        cells.into_iter().zip(&show).filter_map(|(c, s)| s.then_some(c)).collect()
    };
    let rows: Vec<Row> = grid.into_iter().map(|(c, style)| Row::new(pick(c)).style(style)).collect();
    let header = Row::new(pick(header)).style(th.muted().add_modifier(Modifier::BOLD));
    let constraints: Vec<Constraint> = widths
        .iter()
        .zip(&show)
        .enumerate()
        .filter(|(_, (_, s))| **s)
        .map(|(i, (w, _))| Constraint::Length(if i == 1 { name_w } else { *w } as u16))
        .collect();
    let table_h = rows.len() as u16 + 1;
    frame.render_widget(Table::new(rows, constraints).header(header).column_spacing(1), inner);
    // What the dimming means, in words, after a blank row.
    if let (false, Some(strategy)) = (dimmed.is_empty(), s.strategy)
        && inner.height > table_h + 1
    {
        let row = Rect { y: inner.y + table_h + 1, height: 1, ..inner };
        let note = format!("dimmed: {} ({strategy} does not use them)", dimmed.join(", "));
        let note = fit(&note, inner.width as usize).into_owned();
        frame.render_widget(Paragraph::new(Span::styled(note, th.muted())), row);
    }
}

/// The roles each strategy calls. The judge is BTP's, with any strategy:
/// it counts as used once it made a call.
fn strategy_roles(strategy: StrategyKind) -> &'static [Role] {
    match strategy {
        StrategyKind::Rewoo => &[Role::Planner, Role::Solver, Role::Classifier],
        StrategyKind::Toolnet => &[Role::Actor, Role::Evaluator],
        StrategyKind::React => &[Role::Actor],
        StrategyKind::Atc => &[Role::Planner],
        StrategyKind::Agent => &[Role::Agent],
    }
}

/// The session's strategy does not call `role`, and no model made a call in it.
fn unused(s: &SessionState, role: Role) -> bool {
    let Some(strategy) = s.strategy else { return false };
    !strategy_roles(strategy).contains(&role) && !s.accounts.iter().any(|((r, _), a)| *r == role && a.calls > 0)
}

/// A thread's name is cut to this in the role column.
const THREAD_MAX: usize = 16;

/// The model column is not squeezed below this to make room for numbers.
const MODEL_MIN: usize = 24;
const SIMULATED: &str = " (simulated)";
const BEFORE: &str = " (before)";

struct ModelCell<'s> {
    name: &'s str,
    simulated: bool,
    /// It played the role before a switch.
    former: bool,
    /// The strategy does not use the role.
    dim: bool,
    /// The model fault in force on the role or the model.
    fault: Option<String>,
    width: usize,
}

fn cells<'a>(role: Role, m: ModelCell, a: &Account, price: Option<Price>, ctx: &PaneCtx) -> Vec<Cell<'a>> {
    let th = ctx.theme;
    // The marks matter more than the end of a long name.
    let marks = if m.simulated { width(SIMULATED) } else { 0 }
        + if m.former { width(BEFORE) } else { 0 }
        + m.fault.as_deref().map_or(0, width);
    let name = fit(m.name, m.width.saturating_sub(marks).max(3)).into_owned();
    let quiet = m.former || m.dim;
    let mut model = vec![Span::styled(name, if quiet { th.muted() } else { th.base() })];
    if m.simulated {
        // Kept in its colour on a dimmed row: it matters whatever the role.
        model.push(Span::styled(SIMULATED, th.fg(th.simulated)));
    }
    if m.former {
        model.push(Span::styled(BEFORE, th.muted()));
    }
    if let Some(f) = m.fault {
        model.push(Span::styled(f, th.fg(th.fault).add_modifier(Modifier::BOLD)));
    }
    let price = price.map(|p| format!("{} / {}", fmt_cost(p.input_per_mtok), fmt_cost(p.output_per_mtok)));
    let figures = if m.dim { th.muted() } else { Style::default() };
    vec![
        Cell::from(role.to_string()).style(if quiet { th.muted() } else { th.fg(th.accent) }),
        Cell::from(Line::from(model)),
        num(a.calls.to_string()).style(figures),
        num(fmt_count(a.usage.prompt_tokens)).style(figures),
        num(cached(a)).style(th.muted()),
        num(fmt_count(a.usage.completion_tokens)).style(figures),
        num(fmt_cost(a.cost)).style(figures),
        num(avg_latency(a)).style(th.muted()),
        num(first_token(a)).style(th.muted()),
        num(rate(a)).style(th.muted()),
        num(price.unwrap_or_default()).style(th.muted()),
    ]
}

fn add(total: &mut Account, a: &Account) {
    total.calls += a.calls;
    total.usage += a.usage;
    total.cost += a.cost;
    total.latency_ms += a.latency_ms;
    total.streamed += a.streamed;
    total.first_token_ms += a.first_token_ms;
    total.streaming_ms += a.streaming_ms;
    total.streamed_tokens += a.streamed_tokens;
}

/// The share of the prompt tokens the server took from its cache.
fn cached(a: &Account) -> String {
    if a.usage.prompt_tokens == 0 {
        return "—".to_string();
    }
    format!("{:.0}%", 100.0 * a.usage.cached_tokens as f64 / a.usage.prompt_tokens as f64)
}

/// Mean time to a streamed reply's first token.
fn first_token(a: &Account) -> String {
    a.time_to_first_token_ms().map_or_else(|| "—".to_string(), fmt_ms)
}

/// Tokens a second once streamed replies began.
fn rate(a: &Account) -> String {
    a.tokens_per_second().map_or_else(|| "—".to_string(), |r| format!("{r:.1}"))
}

/// Mean latency a call. A failed call counts as a call but the fold records
/// no latency for it, so failures pull the mean down a little.
fn avg_latency(a: &Account) -> String {
    a.latency_ms.checked_div(a.calls).map_or_else(|| "—".to_string(), fmt_ms)
}
