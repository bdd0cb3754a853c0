//! The two-column trace diff (`switchyard trace diff A B --view`): both
//! traces' decisions side by side, aligned run by run, under one cursor
//! that `n` / `N` move from divergence to divergence. The state and its keys
//! are plain data and the drawing a pure function of them; the terminal
//! loop at the bottom only feeds keys in and frames out.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use crate::Theme;
use crate::engine::{Event, EventKind};
use crate::term::UiError;
use crate::traces::diff::{Row, align, describe, field_difference};

/// Rows a PgUp / PgDn moves.
const PAGE: usize = 10;

/// One line of the columns: a run's heading, or a decision of each side.
#[derive(Clone, Debug, PartialEq)]
enum ViewRow {
    Run { run: u32, task: String, diverges: bool },
    Pair(Row),
}

/// Both traces, their aligned rows and where the user is.
#[derive(Clone, Debug)]
pub struct DiffScreen {
    names: [String; 2],
    events: [Vec<Event>; 2],
    rows: Vec<ViewRow>,
    /// The rows where a stretch of differing decisions begins.
    stops: Vec<usize>,
    cursor: usize,
    help: bool,
    flash: Option<String>,
    quit: bool,
}

const KEYS: &[(&str, &str)] = &[
    ("n / N", "next / previous divergence"),
    ("← / →", "one row back / forward (↑ / ↓ too)"),
    ("PgUp / PgDn", "ten rows back / forward"),
    ("Home / End", "first / last row"),
    ("?", "this help (any key closes it)"),
    ("q / Esc", "quit"),
];

impl DiffScreen {
    /// The view over traces A and B, its cursor on the first divergence.
    pub fn new(name_a: String, a: Vec<Event>, name_b: String, b: Vec<Event>) -> DiffScreen {
        let aligned = align(&a, &b);
        let mut rows = Vec::with_capacity(aligned.len() + 8);
        let mut stops = Vec::new();
        let mut k = 0;
        while k < aligned.len() {
            let run = aligned[k].run;
            let end = aligned[k..].iter().position(|r| r.run != run).map_or(aligned.len(), |n| k + n);
            let part = &aligned[k..end];
            let task = [(&a, part.iter().find_map(|r| r.a)), (&b, part.iter().find_map(|r| r.b))]
                .iter()
                .find_map(|(events, i)| match &events[(*i)?].kind {
                    EventKind::RunStarted { task_id, .. } => Some(task_id.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            rows.push(ViewRow::Run { run, task, diverges: part.iter().any(|r| !r.same) });
            for (n, r) in part.iter().enumerate() {
                if !r.same && (n == 0 || part[n - 1].same) {
                    stops.push(rows.len());
                }
                rows.push(ViewRow::Pair(*r));
            }
            k = end;
        }
        let cursor = stops.first().copied().unwrap_or(0);
        DiffScreen {
            names: [name_a, name_b],
            events: [a, b],
            rows,
            stops,
            cursor,
            help: false,
            flash: None,
            quit: false,
        }
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// How many stretches of differing decisions there are.
    pub fn divergences(&self) -> usize {
        self.stops.len()
    }

    /// The event of each side on the cursor's row, as indices into the traces.
    pub fn at_cursor(&self) -> (Option<usize>, Option<usize>) {
        match self.rows.get(self.cursor) {
            Some(ViewRow::Pair(r)) => (r.a, r.b),
            _ => (None, None),
        }
    }

    pub fn quit(&self) -> bool {
        self.quit
    }

    pub fn key(&mut self, key: KeyEvent) {
        if key.kind != KeyEventKind::Press {
            return;
        }
        self.flash = None;
        if self.help {
            self.help = false;
            return;
        }
        let last = self.rows.len().saturating_sub(1);
        let c = self.cursor;
        match key.code {
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => self.quit = true,
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Char('n') => match self.stops.iter().find(|&&s| s > c) {
                Some(&s) => self.cursor = s,
                None => self.flash = Some(self.no_more("after")),
            },
            KeyCode::Char('N') => match self.stops.iter().rev().find(|&&s| s < c) {
                Some(&s) => self.cursor = s,
                None => self.flash = Some(self.no_more("before")),
            },
            KeyCode::Right | KeyCode::Down => self.cursor = (c + 1).min(last),
            KeyCode::Left | KeyCode::Up => self.cursor = c.saturating_sub(1),
            KeyCode::PageDown => self.cursor = (c + PAGE).min(last),
            KeyCode::PageUp => self.cursor = c.saturating_sub(PAGE),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = last,
            _ => {}
        }
    }

    fn no_more(&self, side: &str) -> String {
        if self.stops.is_empty() {
            "no divergence: the traces decide alike".into()
        } else {
            format!("no divergence {side} this row")
        }
    }

    /// Which divergence the cursor is at or past, counted from 1 (0 before the first).
    fn stop_number(&self) -> usize {
        self.stops.iter().filter(|&&s| s <= self.cursor).count()
    }
}

/// Draws the whole view: the heading, both columns, the events at the
/// cursor in full, the keys.
pub fn render(frame: &mut Frame, view: &DiffScreen, theme: &Theme) {
    let area = frame.area();
    frame.render_widget(Block::default().style(theme.base()), area);
    let [head, columns, detail, hints] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(7), Constraint::Length(1)])
            .areas(area);
    let place = if view.stops.is_empty() {
        "no divergence: the traces decide alike".to_string()
    } else {
        format!("divergence {} of {}", view.stop_number(), view.stops.len())
    };
    let heading = format!(" trace diff · {place} · row {} of {}", view.cursor + 1, view.rows.len());
    frame.render_widget(Paragraph::new(Span::styled(heading, theme.title())), head);
    let [left, right] = Layout::horizontal([Constraint::Ratio(1, 2), Constraint::Ratio(1, 2)]).areas(columns);
    column(frame, left, view, 0, theme);
    column(frame, right, view, 1, theme);
    details(frame, detail, view, theme);
    let hint = match &view.flash {
        Some(f) => Line::from(Span::styled(format!(" {f}"), theme.accent())),
        None => Line::from(Span::styled(
            " n/N next/previous divergence · ←/→ step · PgUp/PgDn · Home/End · ? help · q quit",
            theme.muted(),
        )),
    };
    frame.render_widget(Paragraph::new(hint), hints);
    if view.help {
        help(frame, area, theme);
    }
}

/// One side's column: the rows around the cursor, divergent rows in the
/// failing colour, the cursor's row highlighted.
fn column(frame: &mut Frame, area: Rect, view: &DiffScreen, side: usize, theme: &Theme) {
    let events = &view.events[side];
    let title = format!(" {} {} ({} events) ", ["A", "B"][side], view.names[side], events.len());
    let block = Block::default().borders(Borders::ALL).border_style(theme.border(true)).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = inner.height as usize;
    let first = view.cursor.saturating_sub(height / 2).min(view.rows.len().saturating_sub(height));
    let lines: Vec<Line> = view.rows[first..]
        .iter()
        .take(height)
        .enumerate()
        .map(|(k, row)| {
            let (text, style) = match row {
                ViewRow::Run { run, task, diverges } => {
                    let how = if *diverges { "diverges" } else { "same decisions" };
                    (format!("── run {run} · {task} · {how}"), theme.title())
                }
                ViewRow::Pair(r) => {
                    let i = if side == 0 { r.a } else { r.b };
                    let text = match i {
                        Some(i) => {
                            let e = &events[i];
                            format!("{:>5} s{:<3} {:<12} {}", i + 1, e.step, e.kind.name(), describe(&e.kind))
                        }
                        None => "      ·".to_string(),
                    };
                    let style =
                        if r.same { theme.base() } else { theme.fg(theme.failing).add_modifier(Modifier::BOLD) };
                    (text, style)
                }
            };
            // A mark as well as the colour, for terminals (and readers) without it.
            let (mark, style) =
                if first + k == view.cursor { ("▶", style.patch(theme.selected())) } else { (" ", style) };
            Line::from(Span::styled(format!("{mark}{text}"), style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The events at the cursor in full, and the first field they differ in.
fn details(frame: &mut Frame, area: Rect, view: &DiffScreen, theme: &Theme) {
    let block = Block::default().borders(Borders::ALL).border_style(theme.border(false)).title(" at the cursor ");
    let (a, b) = view.at_cursor();
    let side = |name: &str, events: &[Event], i: Option<usize>| -> Line<'static> {
        let text = match i {
            Some(i) => format!(
                "event {} · step {} · {}: {}",
                i + 1,
                events[i].step,
                events[i].kind.name(),
                describe(&events[i].kind)
            ),
            None => "(no event here)".into(),
        };
        Line::from(vec![Span::styled(format!("{name} "), theme.accent()), Span::raw(text)])
    };
    let mut lines = vec![side("A", &view.events[0], a), side("B", &view.events[1], b)];
    if let (Some(i), Some(j)) = (a, b)
        && let Some(f) = field_difference(&view.events[0][i].kind, &view.events[1][j].kind)
    {
        let path = if f.path.is_empty() { "the value".to_string() } else { f.path };
        lines.push(Line::from(Span::styled(
            format!("differs at {path}: A {} · B {}", f.a, f.b),
            theme.fg(theme.failing),
        )));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }).block(block), area);
}

fn help(frame: &mut Frame, area: Rect, theme: &Theme) {
    let w = 56.min(area.width);
    let h = (KEYS.len() as u16 + 2).min(area.height);
    let popup = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| Line::from(vec![Span::styled(format!(" {k:<12} "), theme.accent()), Span::raw(*what)]))
        .collect();
    let block = Block::default().borders(Borders::ALL).border_style(theme.border(true)).title(" keys ");
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.base().patch(Style::default())), popup);
}

/// Runs the view in the terminal until the user quits; the terminal is
/// restored however it ends (ratatui's panic hook covers a panic).
pub async fn run(mut view: DiffScreen, theme: Theme) -> Result<(), UiError> {
    crate::term::check_terminal()?;
    let mut terminal = ratatui::try_init()?;
    let result = view_loop(&mut terminal, &mut view, &theme).await;
    ratatui::restore();
    result
}

async fn view_loop(
    terminal: &mut ratatui::DefaultTerminal,
    view: &mut DiffScreen,
    theme: &Theme,
) -> Result<(), UiError> {
    let mut keys = crossterm::event::EventStream::new();
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        terminal.draw(|f| render(f, view, theme))?;
        tokio::select! {
            key = keys.next() => match key {
                Some(Ok(crossterm::event::Event::Key(k))) => view.key(k),
                // A resize: drawn again on the next turn.
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            _ = sigterm.recv() => return Ok(()),
        }
        if view.quit {
            return Ok(());
        }
    }
}
