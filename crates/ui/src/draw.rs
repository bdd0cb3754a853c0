//! The screen: which pane goes where. Wide terminals show every pane at
//! once; small ones (80×24) show one pane at a time under a tab bar. A
//! zoomed pane takes the whole screen. Pure: it reads the app, never changes it.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Tabs};

use crate::app::App;
use crate::navigation::{Pane, PaneCtx};
use crate::panes;
use crate::theme::Theme;

/// The smallest terminal that shows every pane at once.
pub const WIDE: (u16, u16) = (120, 32);
const STATUS_LINES: u16 = 2;

pub fn draw(frame: &mut Frame, app: &App, theme: &Theme) {
    let area = frame.area();
    frame.render_widget(Block::default().style(theme.base()), area);
    let (main, status) = status_area(area);
    let strategy = app.state.strategy;
    let focus = app.nav.focus.placed(strategy);
    let ctx = |pane: Option<Pane>| PaneCtx {
        state: &app.state,
        nav: &app.nav,
        theme,
        focused: pane.is_some_and(|p| p == focus),
        now_ms: app.now_ms,
    };
    if let Some(z) = app.nav.zoom.map(|z| z.placed(strategy)) {
        render_pane(frame, main, z, &PaneCtx { focused: true, ..ctx(Some(z)) });
    } else if area.width >= WIDE.0 && area.height >= WIDE.1 {
        for (pane, rect) in wide_panes(main, app) {
            render_pane(frame, rect, pane, &ctx(Some(pane)));
        }
    } else {
        let [tabs, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(main);
        let panes = Pane::cycle(strategy);
        let titles: Vec<Line> = panes.iter().map(|p| Line::from(p.title())).collect();
        let selected = panes.iter().position(|p| *p == focus).unwrap_or(0);
        frame.render_widget(
            Tabs::new(titles)
                .select(selected)
                .style(theme.muted())
                .highlight_style(theme.title().add_modifier(Modifier::REVERSED))
                .divider("│"),
            tabs,
        );
        render_pane(frame, body, focus, &ctx(Some(focus)));
    }
    panes::status::render(frame, status, &ctx(None));
    if let Some(find) = &app.find {
        draw_find(frame, main, find, theme);
    }
    if let Some(d) = &app.dialog {
        d.render(frame, area, &app.state, theme);
    }
}

/// Where each pane goes on a wide terminal, in `main` (the screen above the
/// status line, see [`status_area`]).
pub fn wide_panes(main: Rect, app: &App) -> [(Pane, Rect); 6] {
    let strategy = app.state.strategy;
    let [top, bottom] = Layout::vertical([Constraint::Percentage(62), Constraint::Percentage(38)]).areas(main);
    let [graph, transcript] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(top);
    let [budget, middle, workers] = Layout::horizontal([Constraint::Ratio(1, 3); 3]).areas(bottom);
    // A few roles need few lines: the models share their column with
    // the retrieval ranking, which lists the top K.
    let roles = app.state.models.len().max(1) as u16;
    let [models, retrieval] = Layout::vertical([Constraint::Length(roles + 4), Constraint::Min(5)]).areas(middle);
    [
        // atc's program takes the graph's place (see `Pane::ATC`).
        (Pane::Graph.placed(strategy), graph),
        (Pane::Transcript, transcript),
        (Pane::Budget, budget),
        (Pane::Models, models),
        (Pane::Retrieval, retrieval),
        (Pane::Workers, workers),
    ]
}

/// The screen split into the panes' room and the status line's.
pub fn status_area(area: Rect) -> (Rect, Rect) {
    let [main, status] = Layout::vertical([Constraint::Min(1), Constraint::Length(STATUS_LINES)]).areas(area);
    (main, status)
}

/// Draws one pane into `area` (the status line is `panes::status::render`).
pub fn render_pane(frame: &mut Frame, area: Rect, pane: Pane, ctx: &PaneCtx) {
    match pane {
        Pane::Graph => panes::graph::render(frame, area, ctx),
        Pane::Transcript => panes::transcript::render(frame, area, ctx),
        Pane::Budget => panes::budget::render(frame, area, ctx),
        Pane::Models => panes::models::render(frame, area, ctx),
        Pane::Retrieval => panes::retrieval::render(frame, area, ctx),
        Pane::Workers => panes::workers::render(frame, area, ctx),
        Pane::Program => panes::program::render(frame, area, ctx),
    }
}

/// The `/` prompt: the query and the tools it matches, at the bottom.
fn draw_find(frame: &mut Frame, main: Rect, find: &crate::app::Find, theme: &Theme) {
    let height = (find.matches.len() as u16 + 3).min(main.height);
    let width = main.width.min(60);
    let rect = Rect { x: main.x, y: main.y + main.height - height, width, height };
    frame.render_widget(Clear, rect);
    let mut lines = vec![Line::from(vec![
        Span::styled("find: ", theme.accent()),
        Span::raw(find.query.clone()),
        Span::styled("▏", theme.accent()),
    ])];
    if find.matches.is_empty() {
        lines.push(Line::styled("no tool matches", theme.muted()));
    }
    for (i, m) in find.matches.iter().enumerate() {
        let style = if i == find.selected { theme.selected() } else { Style::default() };
        lines.push(Line::styled(m.clone(), style));
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.border(true))
        .title(Span::styled(" find a tool · Enter focus · Esc cancel ", theme.title()));
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.base()), rect);
}
