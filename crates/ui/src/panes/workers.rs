//! The workers pane: tool calls in flight, with how long they have been
//! running, and the last calls that finished. In a rewoo run the calls in
//! flight are the lanes of a plan step: the pane shows the step's lanes
//! (running or not) with their start, elapsed time, state and result.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use serde_json::Value;

use super::{fault_tag, num, pane_block, pane_title, render_block};
use crate::PaneCtx;
use crate::engine::fold::{FinishedCall, LaneState, LaneView, SessionState, StepView};
use crate::format::fmt_ms;
use crate::symbols::{FAILING, FAULT, FORBIDDEN, HELD, NULL, OK, RUNNING, WAITING};
use crate::text::{clean, fit, fit_spans, width};
use crate::theme::Theme;

const ELAPSED_W: u16 = 8;

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let block = pane_block(th, ctx.focused, pane_title("Workers", area.width, th)).style(th.base());
    let Some(inner) = render_block(frame, area, block) else { return };
    let step = ctx.shown_step();
    let top_rows = match step {
        // Heading, column names, one row a lane; the finished calls keep a
        // few rows (the lanes matter more while a step runs).
        Some(s) => (s.lanes.len().max(1) as u16 + 2).min(inner.height.saturating_sub(4).max(inner.height.div_ceil(2))),
        None => {
            let in_flight = ctx.state.current.as_ref().map_or(0, |r| r.in_flight.len());
            // The calls in flight come first but leave the finished ones at least
            // half the pane (in-flight calls are few; an agent runs a handful at once).
            (in_flight.max(1) as u16 + 1).min(inner.height.div_ceil(2).max(1))
        }
    };
    let [top, _, bottom] =
        Layout::vertical([Constraint::Length(top_rows), Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
    match step {
        Some(s) => render_lanes(frame, top, s, ctx),
        None => render_in_flight(frame, top, ctx),
    }
    if bottom.height > 0 {
        render_finished(frame, bottom, ctx);
    }
}

/// How a lane's state looks: symbol, word, style.
pub fn lane_look(state: LaneState, th: &Theme) -> (&'static str, &'static str, Style) {
    let (sym, style) = match state {
        LaneState::Waiting => (WAITING, th.muted()),
        LaneState::Held => (HELD, th.fg(th.fault).add_modifier(Modifier::BOLD)),
        LaneState::Running => (RUNNING, th.fg(th.accent)),
        LaneState::Done { ok: true, filtered: false } => (OK, th.fg(th.ok)),
        LaneState::Done { ok: true, filtered: true } => (NULL, th.muted().add_modifier(Modifier::BOLD)),
        LaneState::Done { ok: false, .. } => (FAILING, th.fg(th.failing).add_modifier(Modifier::BOLD)),
        LaneState::Refused => (FORBIDDEN, th.fg(th.forbidden)),
    };
    (sym, lane_word(state), style)
}

/// A lane's state in a word.
pub fn lane_word(state: LaneState) -> &'static str {
    match state {
        LaneState::Waiting => "waiting",
        LaneState::Held => "held",
        LaneState::Running => "running",
        LaneState::Done { ok: true, filtered: false } => "ok",
        // Ran, said nothing was found: the solver sees null.
        LaneState::Done { ok: true, filtered: true } => "null",
        LaneState::Done { ok: false, .. } => "failed",
        LaneState::Refused => "refused",
    }
}

/// The step's heading: `step #E2 · 3 lanes · 1 running — thought`; an
/// agent's calls: `agent calls · 12 lanes · 10 running · 2 waiting`.
fn step_heading(step: &StepView, w: usize, th: &Theme) -> Line<'static> {
    let count = |f: fn(&LaneState) -> bool| step.lanes.iter().filter(|l| f(&l.state)).count();
    let n = step.lanes.len();
    let mut facts = vec![format!("{n} lane{}", if n == 1 { "" } else { "s" })];
    if step.agent {
        let open = step.open();
        facts.push(format!("{} running", count(|s| *s == LaneState::Running)));
        for (word, n) in [("waiting", count(|s| *s == LaneState::Waiting)), ("held", count(|s| *s == LaneState::Held))]
        {
            if n > 0 {
                facts.push(format!("{n} {word}"));
            }
        }
        if !open {
            facts.push("all ended".into());
        }
    } else if step.finished {
        facts.push("done".into());
    } else {
        facts.push(format!("{} running", count(|s| *s == LaneState::Running)));
        let held = count(|s| *s == LaneState::Held);
        if held > 0 {
            facts.push(format!("{held} held"));
        }
    }
    if step.tokens_saved > 0 {
        facts.push(format!("{} tokens saved", step.tokens_saved));
    }
    let head = if step.agent { "agent calls".to_string() } else { format!("step #E{}", step.evidence) };
    let facts = format!(" · {}", facts.join(" · "));
    let mut spans = vec![
        Span::styled(head.clone(), th.base().add_modifier(Modifier::BOLD)),
        Span::styled(facts.clone(), th.muted()),
    ];
    let room = w.saturating_sub(width(&head) + width(&facts) + 3);
    if !step.thought.is_empty() && room >= 8 {
        spans.push(Span::styled(format!(" — {}", fit(&clean(&step.thought), room)), th.muted()));
    }
    fit_spans(spans, w)
}

fn render_lanes(frame: &mut Frame, area: Rect, step: &StepView, ctx: &PaneCtx) {
    let th = ctx.theme;
    let w = area.width as usize;
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(Paragraph::new(step_heading(step, w, th)), head);
    // The column names take a row; lanes fill the rest.
    let shown = (body.height as usize).saturating_sub(1);
    if shown == 0 || step.lanes.is_empty() {
        return;
    }
    let active = if step.agent { step.open() } else { !step.finished };
    let cursor = ctx.nav.lane.min(step.lanes.len() - 1);
    // Keep the picked lane in view.
    let first = cursor.saturating_sub(shown - 1).min(step.lanes.len().saturating_sub(shown));
    let lanes = &step.lanes[first..(first + shown).min(step.lanes.len())];
    let num_w = step.lanes.iter().map(|l| l.lane.to_string().len()).max().unwrap_or(1).max(1);
    let tool_w =
        lanes.iter().map(|l| width(&with_server(&l.tool, ctx.state))).max().unwrap_or(4).clamp(4, 24).min(w / 4).max(1);
    let state_w = lanes.iter().map(|l| state_label(l.state, th).0.chars().count()).max().unwrap_or(5).max(5);
    const START_W: usize = 7;
    let fixed = 1 + num_w + tool_w + state_w + START_W + ELAPSED_W as usize + 6;
    let result_w = w.saturating_sub(fixed);
    let step_start = step.lanes.iter().filter_map(|l| l.started).min();
    let rows: Vec<Row> = lanes
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let picked = active && first + i == cursor;
            let (label, style) = state_label(l.state, th);
            let start = match (l.started, step_start) {
                (Some(s), Some(f)) => format!("+{}", fmt_ms(s.saturating_sub(f))),
                _ => "—".to_string(),
            };
            let elapsed = match (l.state, l.started) {
                (LaneState::Running, Some(s)) => fmt_ms(ctx.now_ms.saturating_sub(s)),
                (LaneState::Done { .. }, _) => match (l.latency_ms, l.started, l.finished) {
                    (Some(ms), _, _) => fmt_ms(ms),
                    (None, Some(s), Some(f)) => fmt_ms(f.saturating_sub(s)),
                    _ => "—".to_string(),
                },
                _ => "—".to_string(),
            };
            let elapsed_style = if l.state == LaneState::Running { th.fg(th.accent) } else { th.muted() };
            let row = Row::new(vec![
                Cell::from(if picked { "▸" } else { " " }).style(th.accent()),
                num(l.lane.to_string()).style(th.muted()),
                Cell::from(fit(&with_server(&l.tool, ctx.state), tool_w).into_owned())
                    .style(th.base().add_modifier(Modifier::BOLD)),
                Cell::from(label).style(style),
                num(start).style(th.muted()),
                num(elapsed).style(elapsed_style),
                Cell::from(lane_result(l, result_w, th)),
            ]);
            if picked && ctx.focused { row.style(th.selected()) } else { row }
        })
        .collect();
    let header = Row::new(vec![
        Cell::from(""),
        num("#"),
        Cell::from("tool"),
        Cell::from("state"),
        num("start"),
        num("elapsed"),
        Cell::from("result"),
    ])
    .style(th.muted().add_modifier(Modifier::BOLD));
    let widths = [
        Constraint::Length(1),
        Constraint::Length(num_w as u16),
        Constraint::Length(tool_w as u16),
        Constraint::Length(state_w as u16),
        Constraint::Length(START_W as u16),
        Constraint::Length(ELAPSED_W),
        Constraint::Fill(1),
    ];
    frame.render_widget(Table::new(rows, widths).header(header).column_spacing(1), body);
}

/// The state column: symbol and word, in the state's style.
fn state_label(state: LaneState, th: &Theme) -> (String, Style) {
    let (sym, word, style) = lane_look(state, th);
    (format!("{sym} {word}"), style)
}

/// What a lane produced, or what it will be called with: a fault tag (fired
/// or asked for), then the result (null marked filtered), the error, or the
/// arguments while it has not ended.
fn lane_result(l: &LaneView, w: usize, th: &Theme) -> Line<'static> {
    let mut spans = Vec::new();
    let fault_style = th.fg(th.fault).add_modifier(Modifier::BOLD);
    match (l.fault, l.pending_fault) {
        (Some(f), _) => spans.push(Span::styled(format!("{FAULT} {f} "), fault_style)),
        (None, Some(f)) => spans.push(Span::styled(format!("{FAULT} {f} pending "), fault_style)),
        _ => {}
    }
    if let Some(src) = l.source {
        spans.push(Span::styled(format!("[{}] ", src.label()), th.muted()));
    }
    let filtered = matches!(l.state, LaneState::Done { filtered: true, .. });
    if filtered {
        spans.push(Span::styled("null", th.base().add_modifier(Modifier::BOLD)));
        spans.push(Span::styled(" (filtered)", th.muted()));
    }
    let lead = if filtered { ": " } else { "" };
    match &l.result {
        Some(Ok(v)) => {
            let style = if filtered { th.muted() } else { th.base() };
            // A model's reply is text: shown without JSON's quotes.
            let text = match v {
                Value::String(t) => clean(t).into_owned(),
                v => clean(&v.to_string()).into_owned(),
            };
            spans.push(Span::styled(format!("{lead}{text}"), style));
        }
        Some(Err(e)) => {
            let style = if filtered { th.muted() } else { th.fg(th.failing) };
            spans.push(Span::styled(format!("{lead}{}", clean(e)), style));
        }
        None if l.state == LaneState::Refused => spans.push(Span::styled("never ran", th.muted())),
        // An agent's model call has no arguments: it is said what it is.
        None if l.args.is_null() && !l.input.is_empty() => {
            spans.push(Span::styled(format!("{} call", l.input), th.muted()))
        }
        None => spans.push(Span::styled(clean(&l.args.to_string()).into_owned(), th.muted())),
    }
    fit_spans(spans, w)
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
    let labels: Vec<String> = calls.iter().map(|c| with_server(&c.tool, ctx.state)).collect();
    let tool_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4).clamp(4, 24).min(w / 3);
    let args_w = w.saturating_sub(2 + tool_w + 1 + 1 + ELAPSED_W as usize);
    let shown = body.height as usize;
    let running = th.fg(th.accent);
    let mut rows: Vec<Row> = calls
        .iter()
        .zip(&labels)
        .take(shown)
        .map(|(c, label)| {
            Row::new(vec![
                Cell::from(RUNNING).style(running),
                Cell::from(fit(label, tool_w).into_owned()).style(th.base().add_modifier(Modifier::BOLD)),
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
    let shown = (body.height as usize).saturating_sub(1);
    // The fault column is as wide as the faults it shows, and gone without
    // any: a fixed width would take the room long tool names need.
    let fault_w = calls.iter().take(shown).filter_map(|c| c.fault.as_ref()).map(|f| width(&fault_tag(f))).max();
    let fault_w = fault_w.map(|w| w.max(width("fault")));
    let fixed = (RUN_W + STATE_W + ELAPSED_W + 3) as usize + fault_w.map_or(0, |w| w + 1);
    let widest = calls.iter().take(shown).map(|c| width(&tool_label(c, ctx.state))).max().unwrap_or(4).max(4);
    let tool_w = widest.min((body.width as usize).saturating_sub(fixed).max(4));
    let with_fault = fault_w.is_some();
    let rows: Vec<Row> =
        calls.iter().take(shown).map(|c| finished_row(c, current_run, tool_w, with_fault, ctx)).collect();
    let mut header = vec![num("run"), Cell::from("tool"), Cell::from("result"), num("latency")];
    let mut widths = vec![
        Constraint::Length(RUN_W),
        Constraint::Length(tool_w as u16),
        Constraint::Length(STATE_W),
        Constraint::Length(ELAPSED_W),
    ];
    if let Some(w) = fault_w {
        header.push(Cell::from("fault"));
        widths.push(Constraint::Length(w as u16));
    }
    let header = Row::new(header).style(th.muted().add_modifier(Modifier::BOLD));
    frame.render_widget(Table::new(rows, widths).header(header).column_spacing(1), body);
}

/// The tool's name, marked when a cassette or a synthesizer answered for it
/// so a stand-in is never taken for the real tool.
fn tool_label(c: &FinishedCall, state: &SessionState) -> String {
    let tool = with_server(&c.tool, state);
    match c.source {
        Some(src) => format!("{tool} [{}]", src.label()),
        None => tool,
    }
}

/// A tool of an MCP server with the server's name: `get_time @time`.
fn with_server(tool: &str, state: &SessionState) -> String {
    match state.tool_servers.get(tool) {
        Some(server) => format!("{tool} @{server}"),
        None => tool.to_string(),
    }
}

fn finished_row<'a>(
    c: &FinishedCall,
    current_run: Option<u32>,
    tool_w: usize,
    with_fault: bool,
    ctx: &PaneCtx,
) -> Row<'a> {
    let th = ctx.theme;
    let (state, style) = if c.ok {
        (format!("{OK} ok"), th.fg(th.ok))
    } else {
        (format!("{FAILING} failed"), th.fg(th.failing).add_modifier(Modifier::BOLD))
    };
    let tool_style = if c.ok { th.base() } else { th.fg(th.failing) };
    let run_style = if Some(c.run) == current_run { th.base() } else { th.muted() };
    let mut cells = vec![
        num(c.run.to_string()).style(run_style),
        Cell::from(fit(&tool_label(c, ctx.state), tool_w).into_owned()).style(tool_style),
        Cell::from(state).style(style),
        num(fmt_ms(c.latency_ms)).style(th.muted()),
    ];
    if with_fault {
        cells.push(match &c.fault {
            Some(f) => Cell::from(fault_tag(f)).style(th.fg(th.fault).add_modifier(Modifier::BOLD)),
            None => Cell::from(""),
        });
    }
    Row::new(cells)
}
