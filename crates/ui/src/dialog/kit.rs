//! Pieces the dialogs share: the popup's place, option rows, error and hint
//! lines, a scrolled window over a list and the keys that move in it,
//! one-line rows holding a field.

use std::cell::Cell;
use std::ops::Range;

use crossterm::event::KeyCode;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::field::Field;
use crate::Theme;
use crate::symbols::FAILING;

/// A centred rectangle of at most `max_w` × `max_h` that leaves a margin
/// around it when the area allows.
pub(super) fn popup(area: Rect, max_w: u16, max_h: u16) -> Rect {
    let w = area.width.saturating_sub(4).max(area.width.min(20)).min(max_w).min(area.width);
    let h = area.height.saturating_sub(2).max(area.height.min(6)).min(max_h).min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

/// The label of a row: a marker and the accent colour when it has the focus.
pub(super) fn label(text: &str, width: usize, focused: bool, theme: &Theme) -> Span<'static> {
    let marker = if focused { "▸ " } else { "  " };
    let style = if focused { theme.accent() } else { Style::default() };
    Span::styled(format!("{marker}{text:<width$}"), style)
}

/// A choice among options: the chosen one in brackets (so it does not rest
/// on colour), highlighted when the row has the focus.
pub(super) fn choice(options: &[&str], chosen: usize, focused: bool, theme: &Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::with_capacity(options.len() * 2);
    for (i, o) in options.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw(" "));
        }
        if i == chosen {
            let style = if focused { theme.selected() } else { theme.accent() };
            spans.push(Span::styled(format!("[{o}]"), style));
        } else {
            spans.push(Span::styled(o.to_string(), theme.muted()));
        }
    }
    spans
}

pub(super) fn error_line(msg: &str, theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(format!("{FAILING} {msg}"), theme.fg(theme.failing)))
}

/// An error on a row of its own, indented like the rows above it.
pub(super) fn error_message(msg: &str, theme: &Theme) -> Line<'static> {
    Line::from(vec![Span::raw("  "), Span::styled(format!("{FAILING} {msg}"), theme.fg(theme.failing))])
}

/// Key hints: the keys in the accent colour, what they do muted.
pub(super) fn hints(keys: &[(&str, &str)], theme: &Theme) -> Line<'static> {
    let mut spans = vec![Span::raw("  ")];
    for (i, (k, what)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.muted()));
        }
        spans.push(Span::styled(k.to_string(), theme.accent()));
        spans.push(Span::styled(format!(" {what}"), theme.muted()));
    }
    Line::from(spans)
}

/// Rows a page key moves a list's selection.
const PAGE: isize = 10;

/// How far a list key (↑ ↓ PgUp PgDn) moves the selection.
pub(super) fn list_step(code: KeyCode) -> isize {
    match code {
        KeyCode::Up => -1,
        KeyCode::Down => 1,
        KeyCode::PageUp => -PAGE,
        _ => PAGE,
    }
}

/// The rows of a list of `len` to show in `height` rows so that `selected`
/// is visible, scrolling no more than needed from the last frame's offset.
pub(super) fn window(selected: usize, len: usize, height: usize, offset: &Cell<usize>) -> Range<usize> {
    if height == 0 || len == 0 {
        return 0..0;
    }
    let mut off = offset.get().min(len.saturating_sub(1));
    if selected < off {
        off = selected;
    } else if selected >= off + height {
        off = selected + 1 - height;
    }
    // Keep the window full when the list shrank under it.
    off = off.min(len.saturating_sub(height));
    offset.set(off);
    off..(off + height).min(len)
}

/// One row: `prefix`, then `field` between brackets `field_w` wide, then `suffix`.
pub(super) fn field_row(
    frame: &mut Frame,
    row: Rect,
    prefix: Line<'static>,
    field: &Field,
    field_w: u16,
    suffix: Line<'static>,
) {
    if row.width == 0 || row.height == 0 {
        return;
    }
    let row = Rect { height: 1, ..row };
    let pw = (prefix.width() as u16).min(row.width);
    frame.render_widget(Paragraph::new(prefix), Rect { width: pw, ..row });
    let mut x = row.x + pw;
    let end = row.x + row.width;
    let put = |frame: &mut Frame, x: u16, s: &'static str| {
        if x < end {
            frame.render_widget(Paragraph::new(s), Rect { x, width: 1, ..row });
        }
    };
    put(frame, x, "[");
    x = x.saturating_add(1);
    let fw = field_w.min(end.saturating_sub(x));
    field.render(frame, Rect { x: x.min(end), width: fw, ..row });
    x = x.saturating_add(fw);
    put(frame, x, "]");
    x = x.saturating_add(2);
    if x < end {
        frame.render_widget(Paragraph::new(suffix), Rect { x, width: end - x, ..row });
    }
}

/// Rows of `area`, one per entry of `heights`; the row given `None` takes
/// what is left. Rows that do not fit come back empty.
pub(super) fn rows<const N: usize>(area: Rect, heights: [Option<u16>; N]) -> [Rect; N] {
    let fixed: u16 = heights.iter().flatten().sum();
    let flex = area.height.saturating_sub(fixed);
    let mut y = area.y;
    let bottom = area.y + area.height;
    heights.map(|h| {
        let h = h.unwrap_or(flex).min(bottom.saturating_sub(y));
        let r = Rect { x: area.x, y, width: area.width, height: h };
        y += h;
        r
    })
}
