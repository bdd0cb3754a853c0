//! The workers pane: tool calls in flight, with how long they have been
//! running, and the last calls that finished.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};

use super::transcript::{clean, fit, fmt_ms, width};
use crate::engine::state::FinishedCall;
use crate::ui::PaneCtx;
use crate::ui::symbols::{FAILING, FAULT, OK, RUNNING};

const ELAPSED_W: u16 = 8;

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let block = Block::bordered()
        .border_style(th.border(ctx.focused))
        .style(th.base())
        .title(Line::styled(format!(" {} ", fit("Workers", (area.width as usize).saturating_sub(4))), th.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    let in_flight = ctx.state.current.as_ref().map_or(&[][..], |r| &r.in_flight[..]);
    // The calls in flight come first but leave the finished ones at least
    // half the pane (in-flight calls are few; an agent runs a handful at once).
    let flight_rows = (in_flight.len().max(1) as u16 + 1).min(inner.height.div_ceil(2).max(1));
    let [top, _, bottom] =
        Layout::vertical([Constraint::Length(flight_rows), Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    render_in_flight(frame, top, ctx);
    if bottom.height > 0 {
        render_finished(frame, bottom, ctx);
    }
}

fn render_in_flight(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let calls = ctx.state.current.as_ref().map_or(&[][..], |r| &r.in_flight[..]);
    let heading = Line::from(vec![
        Span::styled("in flight", th.base().add_modifier(Modifier::BOLD)),
        Span::styled(format!(" ({})", calls.len()), th.muted()),
    ]);
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(Paragraph::new(heading), head);
    if body.height == 0 {
        return;
    }
    if calls.is_empty() {
        frame.render_widget(Paragraph::new(Line::styled("no tool call running", th.muted())), body);
        return;
    }
    let w = body.width as usize;
    let tool_w = calls.iter().map(|c| c.tool.chars().count()).max().unwrap_or(4).clamp(4, 24).min(w / 3);
    let args_w = w.saturating_sub(2 + tool_w + 1 + 1 + ELAPSED_W as usize);
    let shown = body.height as usize;
    let running = th.fg(th.accent);
    let mut rows: Vec<Row> = calls
        .iter()
        .take(shown)
        .map(|c| {
            Row::new(vec![
                Cell::from(RUNNING).style(running),
                Cell::from(fit(&c.tool, tool_w).into_owned()).style(th.base().add_modifier(Modifier::BOLD)),
                Cell::from(fit(&clean(&c.args.to_string()), args_w).into_owned()).style(th.muted()),
                num(fmt_ms(ctx.now_ms.saturating_sub(c.started))).style(running),
            ])
        })
        .collect();
    if calls.len() > shown && shown > 0 {
        rows.pop();
        rows.push(Row::new(vec![
            Cell::from(""),
            Cell::from(format!("… {} more", calls.len() - shown + 1)).style(th.muted()),
        ]));
    }
    let widths =
        [Constraint::Length(1), Constraint::Length(tool_w as u16), Constraint::Fill(1), Constraint::Length(ELAPSED_W)];
    frame.render_widget(Table::new(rows, widths).column_spacing(1), body);
}

fn render_finished(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let (s, th) = (ctx.state, ctx.theme);
    let calls = &s.recent_calls;
    let current_run = s.current.as_ref().map(|r| r.run);
    let heading = Line::from(vec![
        Span::styled("finished", th.base().add_modifier(Modifier::BOLD)),
        Span::styled(" (newest first)", th.muted()),
    ]);
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(Paragraph::new(heading), head);
    if body.height == 0 {
        return;
    }
    if calls.is_empty() {
        frame.render_widget(Paragraph::new(Line::styled("no tool call finished yet", th.muted())), body);
        return;
    }
    const RUN_W: u16 = 4;
    const STATE_W: u16 = 8;
    const FAULT_W: u16 = 16;
    let fixed = (RUN_W + STATE_W + ELAPSED_W + FAULT_W + 4) as usize;
    let shown = (body.height as usize).saturating_sub(1);
    let widest = calls.iter().take(shown).map(|c| width(&c.tool)).max().unwrap_or(4).max(4);
    let tool_w = widest.min((body.width as usize).saturating_sub(fixed).max(4));
    let rows: Vec<Row> = calls.iter().take(shown).map(|c| finished_row(c, current_run, tool_w, ctx)).collect();
    let header =
        Row::new(vec![num("run"), Cell::from("tool"), Cell::from("result"), num("latency"), Cell::from("fault")])
            .style(th.muted().add_modifier(Modifier::BOLD));
    let widths = [
        Constraint::Length(RUN_W),
        Constraint::Length(tool_w as u16),
        Constraint::Length(STATE_W),
        Constraint::Length(ELAPSED_W),
        Constraint::Length(FAULT_W),
    ];
    frame.render_widget(Table::new(rows, widths).header(header).column_spacing(1), body);
}

/// A number, right-aligned in its column.
fn num<'a>(s: impl Into<String>) -> Cell<'a> {
    Cell::from(Line::from(s.into()).right_aligned())
}

fn finished_row<'a>(c: &FinishedCall, current_run: Option<u32>, tool_w: usize, ctx: &PaneCtx) -> Row<'a> {
    let th = ctx.theme;
    let (state, style) = if c.ok {
        (format!("{OK} ok"), th.fg(th.ok))
    } else {
        (format!("{FAILING} failed"), th.fg(th.failing).add_modifier(Modifier::BOLD))
    };
    let tool_style = if c.ok { th.base() } else { th.fg(th.failing) };
    let run_style = if Some(c.run) == current_run { th.base() } else { th.muted() };
    let fault = match &c.fault {
        Some(f) => Cell::from(format!("{FAULT} {f}")).style(th.fg(th.fault).add_modifier(Modifier::BOLD)),
        None => Cell::from(""),
    };
    Row::new(vec![
        num(c.run.to_string()).style(run_style),
        Cell::from(fit(&c.tool, tool_w).into_owned()).style(tool_style),
        Cell::from(state).style(style),
        num(fmt_ms(c.latency_ms)).style(th.muted()),
        fault,
    ])
}
