//! The Scan view (`switchyard scan DIR --view`): a scan's kinds of failure
//! and each rule's findings on the left, the runs of the one selected on
//! the right; Enter on a run asks for its replay at the event its scanner
//! pointed to, and the view comes back when the replay is left. State and
//! keys are plain data, the drawing a pure function of them.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use futures::StreamExt;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::Theme;
use crate::scan::group::Group;
use crate::scan::{RULES, RunScan, Source};
use crate::term::UiError;

/// One entry of the left list: a kind of failure, a rule, or the unscanned runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub label: String,
    /// What the right side says above the runs.
    pub about: String,
    pub runs: Vec<RunAt>,
}

/// A run of an entry, at the event that shows why it is there.
#[derive(Clone, Debug, PartialEq)]
pub struct RunAt {
    pub task_id: String,
    pub setting: Option<String>,
    pub trace: PathBuf,
    pub event: Option<usize>,
    pub says: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Focus {
    Entries,
    Runs,
}

pub struct ScanScreen {
    title: String,
    entries: Vec<Entry>,
    entry: usize,
    run: usize,
    focus: Focus,
    help: bool,
    quit: bool,
    open: Option<(PathBuf, Option<usize>)>,
}

const KEYS: &[(&str, &str)] = &[
    ("↑ / ↓", "the previous / next kind, or run"),
    ("Enter / →", "the kind's runs; on a run, its replay at the event"),
    ("Esc / ←", "back to the kinds"),
    ("?", "this help (any key closes it)"),
    ("q", "quit"),
];

impl ScanScreen {
    /// The kinds of failure (largest first), then each rule that found
    /// something, then the unscanned runs.
    pub fn new(source: &Source, rows: &[RunScan], groups: &[Group]) -> ScanScreen {
        let mut entries = Vec::new();
        for g in groups {
            let runs = rows
                .iter()
                .filter_map(|r| {
                    let f = r.failure.as_ref()?;
                    g.phrases.iter().any(|(p, _)| *p == f.phrase).then(|| RunAt {
                        task_id: r.task_id.clone(),
                        setting: r.setting.clone(),
                        trace: source.path_of(&r.trace),
                        event: Some(f.event),
                        says: f.phrase.clone(),
                    })
                })
                .collect();
            entries.push(Entry {
                label: format!("{:>4} {:>4.0}%  {}", g.count, 100.0 * g.share, g.name),
                about: format!("{} · {} runs in {} tasks", g.name, g.count, g.tasks.len()),
                runs,
            });
        }
        for rule in RULES {
            let runs: Vec<RunAt> = rows
                .iter()
                .filter_map(|r| {
                    let f = r.findings.iter().find(|f| f.scanner == rule.name())?;
                    Some(RunAt {
                        task_id: r.task_id.clone(),
                        setting: r.setting.clone(),
                        trace: source.path_of(&r.trace),
                        event: Some(f.event),
                        says: f.detail.clone(),
                    })
                })
                .collect();
            if !runs.is_empty() {
                entries.push(Entry {
                    label: format!("{:>4}        rule: {}", runs.len(), rule.name()),
                    about: format!("rule {}: {}", rule.name(), rule.meaning()),
                    runs,
                });
            }
        }
        let unscanned: Vec<RunAt> = rows
            .iter()
            .filter_map(|r| {
                Some(RunAt {
                    task_id: r.task_id.clone(),
                    setting: r.setting.clone(),
                    trace: source.path_of(&r.trace),
                    event: None,
                    says: r.unscanned.clone()?,
                })
            })
            .collect();
        if !unscanned.is_empty() {
            entries.push(Entry {
                label: format!("{:>4}        unscanned", unscanned.len()),
                about: "failed runs the scanner model did not name, and why".into(),
                runs: unscanned,
            });
        }
        let failed = rows.iter().filter(|r| r.failed).count();
        ScanScreen {
            title: format!("scan of {} · {} runs, {failed} failed", source.describe(), rows.len()),
            entries,
            entry: 0,
            run: 0,
            focus: Focus::Entries,
            help: false,
            quit: false,
            open: None,
        }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn quit(&self) -> bool {
        self.quit
    }

    /// The replay Enter asked for (a trace and the event to open it at),
    /// taken once.
    pub fn take_open(&mut self) -> Option<(PathBuf, Option<usize>)> {
        self.open.take()
    }

    pub fn key(&mut self, key: KeyEvent) {
        if key.kind != KeyEventKind::Press {
            return;
        }
        if self.help {
            self.help = false;
            return;
        }
        let runs = self.entries.get(self.entry).map_or(0, |e| e.runs.len());
        match (key.code, self.focus) {
            (KeyCode::Char('c'), _) if key.modifiers.contains(KeyModifiers::CONTROL) => self.quit = true,
            (KeyCode::Char('q'), _) => self.quit = true,
            (KeyCode::Char('?'), _) => self.help = true,
            (KeyCode::Up, Focus::Entries) => self.entry = self.entry.saturating_sub(1),
            (KeyCode::Down, Focus::Entries) => self.entry = (self.entry + 1).min(self.entries.len().saturating_sub(1)),
            (KeyCode::Enter | KeyCode::Right, Focus::Entries) if runs > 0 => {
                self.focus = Focus::Runs;
                self.run = 0;
            }
            (KeyCode::Up, Focus::Runs) => self.run = self.run.saturating_sub(1),
            (KeyCode::Down, Focus::Runs) => self.run = (self.run + 1).min(runs.saturating_sub(1)),
            (KeyCode::Enter | KeyCode::Right, Focus::Runs) => {
                if let Some(r) = self.entries.get(self.entry).and_then(|e| e.runs.get(self.run)) {
                    self.open = Some((r.trace.clone(), r.event));
                }
            }
            (KeyCode::Esc | KeyCode::Left, Focus::Runs) => self.focus = Focus::Entries,
            (KeyCode::Esc, Focus::Entries) => self.quit = true,
            _ => {}
        }
    }
}

/// The whole view: the heading, the kinds, the runs of the selected one, the keys.
pub fn render(frame: &mut Frame, view: &ScanScreen, theme: &Theme) {
    let area = frame.area();
    frame.render_widget(Block::default().style(theme.base()), area);
    let [head, body, hints] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(3), Constraint::Length(1)]).areas(area);
    frame.render_widget(Paragraph::new(Span::styled(format!(" {}", view.title), theme.title())), head);
    let [left, right] = Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(body);
    let block = |title: &str, focused: bool| {
        Block::default().borders(Borders::ALL).border_style(theme.border(focused)).title(format!(" {title} "))
    };
    let kinds = block("kinds of failure · rules", view.focus == Focus::Entries);
    let inner = kinds.inner(left);
    frame.render_widget(kinds, left);
    let lines: Vec<Line> = window(view.entries.len(), view.entry, inner.height as usize)
        .map(|i| {
            let e = &view.entries[i];
            let (mark, style) = if i == view.entry { ("▶", theme.selected()) } else { (" ", theme.base()) };
            Line::from(Span::styled(format!("{mark}{}", e.label), style))
        })
        .collect();
    if lines.is_empty() {
        frame.render_widget(Paragraph::new(Span::styled(" no failure found", theme.muted())), inner);
    } else {
        frame.render_widget(Paragraph::new(lines), inner);
    }
    runs(frame, right, view, theme);
    let hint = if view.focus == Focus::Entries {
        " ↑/↓ choose · Enter its runs · ? help · q quit"
    } else {
        " ↑/↓ choose · Enter replay at the event · Esc back · q quit"
    };
    frame.render_widget(Paragraph::new(Span::styled(hint, theme.muted())), hints);
    if view.help {
        help(frame, area, theme);
    }
}

fn runs(frame: &mut Frame, area: Rect, view: &ScanScreen, theme: &Theme) {
    let Some(e) = view.entries.get(view.entry) else {
        frame.render_widget(Block::default().borders(Borders::ALL).border_style(theme.border(false)), area);
        return;
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(view.focus == Focus::Runs))
        .title(format!(" runs ({}) ", e.runs.len()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [about, list] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(inner);
    frame.render_widget(Paragraph::new(Span::styled(e.about.clone(), theme.accent())).wrap(Wrap { trim: true }), about);
    let lines: Vec<Line> = window(e.runs.len(), view.run, list.height as usize)
        .map(|i| {
            let r = &e.runs[i];
            let at = r.event.map_or("      ".to_string(), |n| format!("E{n:<5}"));
            let setting = r
                .setting
                .as_deref()
                .map(|s| format!("{:<16} ", switchyard_core::text::ellipsis(s, 15)))
                .unwrap_or_default();
            let text = format!("{:<6} {setting}{at} {}", r.task_id, r.says);
            let (mark, style) = if view.focus == Focus::Runs && i == view.run {
                ("▶", theme.selected())
            } else {
                (" ", theme.base())
            };
            Line::from(Span::styled(format!("{mark}{text}"), style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), list);
}

/// The indices shown of `len` rows in `height` lines, `at` kept in view.
fn window(len: usize, at: usize, height: usize) -> std::ops::Range<usize> {
    let first = at.saturating_sub(height.saturating_sub(1)).min(len.saturating_sub(height));
    first..(first + height).min(len)
}

fn help(frame: &mut Frame, area: Rect, theme: &Theme) {
    use ratatui::widgets::Clear;
    let w = 64.min(area.width);
    let h = (KEYS.len() as u16 + 2).min(area.height);
    let popup = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(k, what)| Line::from(vec![Span::styled(format!(" {k:<10} "), theme.accent()), Span::raw(*what)]))
        .collect();
    let block = Block::default().borders(Borders::ALL).border_style(theme.border(true)).title(" keys ");
    frame.render_widget(Clear, popup);
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.base()), popup);
}

/// Runs the view until the user quits or asks for a run's replay (then it
/// returns, the terminal restored, and the caller opens the replay and
/// runs the view again).
pub async fn run(view: &mut ScanScreen, theme: &Theme) -> Result<(), UiError> {
    crate::term::check_terminal()?;
    let mut terminal = ratatui::try_init()?;
    let result = view_loop(&mut terminal, view, theme).await;
    ratatui::restore();
    result
}

async fn view_loop(
    terminal: &mut ratatui::DefaultTerminal,
    view: &mut ScanScreen,
    theme: &Theme,
) -> Result<(), UiError> {
    let mut keys = crossterm::event::EventStream::new();
    let mut sigterm = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        terminal.draw(|f| render(f, view, theme))?;
        tokio::select! {
            key = keys.next() => match key {
                Some(Ok(crossterm::event::Event::Key(k))) => view.key(k),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            _ = sigterm.recv() => {
                view.quit = true;
                return Ok(());
            }
        }
        if view.quit || view.open.is_some() {
            return Ok(());
        }
    }
}
