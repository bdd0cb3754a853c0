//! Fitting text to the cell grid, for every pane and dialog. Widths are in
//! terminal cells, not characters or bytes: a CJK character takes two cells,
//! and a cut by characters would spill over the next column.
//!
//! (The crate's own `text` module is about answer text, not the screen.)

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Width of `s` in terminal cells.
pub(super) fn width(s: &str) -> usize {
    Span::raw(s).width()
}

/// Width of the spans in terminal cells.
pub(super) fn spans_width(spans: &[Span]) -> usize {
    spans.iter().map(Span::width).sum()
}

fn char_width(c: char) -> usize {
    width(c.encode_utf8(&mut [0u8; 4]))
}

/// `s` cut to at most `max` cells, ending in `…` when cut.
pub(super) fn fit(s: &str, max: usize) -> Cow<'_, str> {
    if width(s) <= max {
        return Cow::Borrowed(s);
    }
    if max == 0 {
        return Cow::Borrowed("");
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = char_width(c);
        if used + cw + 1 > max {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    Cow::Owned(out)
}

/// A name cut as by `fit`, but keeping a `#N` that ends it: the names of
/// two threads run from one tool (`ask_calculator`, `ask_calculator#2`)
/// stay apart when cut (`ask_calcu…#2`).
pub(super) fn fit_name(s: &str, max: usize) -> Cow<'_, str> {
    let suffix = s.rfind('#').map(|i| &s[i..]).filter(|t| t.len() > 1 && t[1..].bytes().all(|b| b.is_ascii_digit()));
    match suffix {
        Some(suffix) if width(s) > max && width(suffix) + 2 <= max => {
            let base = &s[..s.len() - suffix.len()];
            Cow::Owned(format!("{}{suffix}", fit(base, max - width(suffix))))
        }
        _ => fit(s, max),
    }
}

/// `s` cut as by `fit`, then padded with spaces to exactly `cells` cells:
/// a column of a table drawn by hand.
pub(super) fn fit_padded(s: &str, cells: usize) -> String {
    let t = fit(s, cells);
    format!("{t}{}", " ".repeat(cells.saturating_sub(width(&t))))
}

/// The spans cut to `w` cells, ending in `…` (in the style of the span it
/// cuts) when cut.
pub(super) fn fit_spans(spans: Vec<Span<'static>>, w: usize) -> Line<'static> {
    if spans_width(&spans) <= w {
        return Line::from(spans);
    }
    // One cell stays free for the ellipsis.
    let mut cut = cut(&spans, w.saturating_sub(1));
    if w > 0 {
        cut.kept.push(Span::styled("…", cut.edge));
    }
    Line::from(cut.kept)
}

/// The line cut to `width` cells span by span: whole spans while they fit,
/// then the span the edge falls in cut as by `fit`. Unlike `fit_spans`, a
/// cut that falls between two spans leaves no `…`, and the line's own style
/// and alignment are dropped.
pub(super) fn fit_last_span(line: Line<'_>, width: usize) -> Line<'_> {
    if line.width() <= width {
        return line;
    }
    let mut left = width;
    let mut spans = Vec::new();
    for s in line.spans {
        if left == 0 {
            break;
        }
        let sw = s.width();
        if sw <= left {
            left -= sw;
            spans.push(s);
        } else {
            spans.push(Span::styled(fit(&s.content, left).into_owned(), s.style));
            left = 0;
        }
    }
    Line::from(spans)
}

/// The spans cut to `w` cells, ending in `… (+N chars)` in `mark`'s style
/// when cut, so the reader knows how much is hidden; a bare `…` when the
/// count would leave too little of the line.
pub(super) fn fit_spans_counted(spans: Vec<Span<'static>>, w: usize, mark: Style) -> Line<'static> {
    if spans_width(&spans) <= w {
        return Line::from(spans);
    }
    let chars: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let suffix = |hidden: usize| format!("… (+{hidden} chars)");
    if w < width(&suffix(chars)) + 8 {
        let mut kept = cut(&spans, w.saturating_sub(1)).kept;
        kept.push(Span::styled("…", mark));
        return Line::from(kept);
    }
    // The count's width depends on where the cut falls; a narrower count
    // leaves room for more of the line, which can only narrow it further.
    let mut hidden = chars;
    let mut kept = Vec::new();
    for _ in 0..3 {
        let c = cut(&spans, w - width(&suffix(hidden)));
        kept = c.kept;
        if chars - c.chars == hidden {
            break;
        }
        hidden = chars - c.chars;
    }
    kept.push(Span::styled(suffix(hidden), mark));
    Line::from(kept)
}

/// What `cut` kept of a line.
struct Cut {
    kept: Vec<Span<'static>>,
    /// Characters kept.
    chars: usize,
    /// The style of the span the edge fell in (a mark after the cut wears it).
    edge: Style,
}

/// The spans cut to `room` cells, the span the edge falls in cut by
/// characters.
fn cut(spans: &[Span<'static>], room: usize) -> Cut {
    let mut kept = Vec::with_capacity(spans.len() + 1);
    let (mut used, mut chars) = (0, 0);
    let mut edge = Style::default();
    for s in spans {
        let sw = s.width();
        if used + sw <= room {
            used += sw;
            chars += s.content.chars().count();
            kept.push(s.clone());
            continue;
        }
        edge = s.style;
        let mut part = String::new();
        for c in s.content.chars() {
            let cw = char_width(c);
            if used + cw > room {
                break;
            }
            used += cw;
            chars += 1;
            part.push(c);
        }
        if !part.is_empty() {
            kept.push(Span::styled(part, s.style));
        }
        break;
    }
    Cut { kept, chars, edge }
}

/// Splits a line into screen lines of at most `w` cells, at a space when
/// one is near the end; continuation lines are indented under the first.
pub(super) fn wrap(spans: Vec<Span<'static>>, w: usize) -> Vec<Line<'static>> {
    if spans_width(&spans) <= w || w == 0 {
        return vec![Line::from(spans)];
    }
    let chars: Vec<(char, usize)> =
        spans.iter().enumerate().flat_map(|(i, s)| s.content.chars().map(move |c| (c, i))).collect();
    let lead = chars.iter().take_while(|(c, _)| *c == ' ').count();
    let indent = if lead + 2 <= w / 2 { lead + 2 } else { 0 };
    let mut lines = Vec::new();
    let mut start = 0;
    while start < chars.len() {
        let pad = if lines.is_empty() { 0 } else { indent };
        let avail = w - pad;
        let (mut end, mut used) = (start, 0);
        while end < chars.len() {
            let cw = char_width(chars[end].0);
            if used + cw > avail && end > start {
                break;
            }
            used += cw;
            end += 1;
        }
        if end < chars.len()
            && let Some(sp) = chars[start..end].iter().rposition(|(c, _)| *c == ' ')
            && sp + 1 > (end - start) * 2 / 3
        {
            end = start + sp + 1;
        }
        let mut line: Vec<Span<'static>> = Vec::new();
        if pad > 0 {
            line.push(Span::raw(" ".repeat(pad)));
        }
        let mut k = start;
        while k < end {
            let style_of = chars[k].1;
            let mut part = String::new();
            while k < end && chars[k].1 == style_of {
                part.push(chars[k].0);
                k += 1;
            }
            line.push(Span::styled(part, spans[style_of].style));
        }
        lines.push(Line::from(line));
        start = end;
    }
    lines
}

/// Control characters (tabs, carriage returns) would break the cell grid.
pub(super) fn clean(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect())
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use ratatui::style::Color;

    use super::*;

    fn text(line: &Line) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn fit_cuts_by_cells_and_marks_the_cut() {
        assert_eq!(fit("geo_lookup", 20), "geo_lookup");
        assert_eq!(fit("geo_lookup", 5), "geo_…");
        assert_eq!(fit("漢字漢字", 5), "漢字…");
        assert_eq!(fit("abc", 0), "");
    }

    #[test]
    fn fit_name_keeps_the_number_that_tells_two_apart() {
        assert_eq!(fit_name("ask_calculator#2", 12), "ask_calcu…#2");
        assert_eq!(fit_name("ask_calculator", 12), "ask_calcula…");
        assert_eq!(fit_name("ask#2", 12), "ask#2");
        assert_eq!(fit_name("a#b", 2), "a…");
        assert_eq!(fit_name("abcdef#12", 4), "abc…");
    }

    #[test]
    fn fit_padded_fills_the_column_exactly() {
        assert_eq!(fit_padded("tool", 6), "tool  ");
        assert_eq!(fit_padded("geo_lookup", 5), "geo_…");
        // The cut leaves one cell of a wide character free: a space takes it.
        assert_eq!(fit_padded("漢字漢字", 4), "漢… ");
    }

    #[test]
    fn fit_spans_marks_the_cut_in_the_cut_span_style() {
        let red = Style::default().fg(Color::Red);
        let line = fit_spans(vec![Span::raw("ab"), Span::styled("cdef", red)], 4);
        assert_eq!(text(&line), "abc…");
        assert_eq!(line.spans.last().map(|s| s.style), Some(red));
        // A cut at a span's edge is marked too.
        assert_eq!(text(&fit_spans(vec![Span::raw("abc"), Span::styled("def", red)], 4)), "abc…");
        assert_eq!(text(&fit_spans(vec![Span::raw("abc")], 0)), "");
    }

    #[test]
    fn fit_last_span_marks_only_a_span_cut_inside() {
        let line = Line::from(vec![Span::raw("ab"), Span::raw("cdef")]);
        assert_eq!(text(&fit_last_span(line, 4)), "abc…");
        let line = Line::from(vec![Span::raw("ab"), Span::raw("cd")]);
        assert_eq!(text(&fit_last_span(line, 2)), "ab");
    }

    #[test]
    fn fit_spans_counted_counts_the_hidden_characters() {
        let text = "x".repeat(100);
        let line = fit_spans_counted(vec![Span::raw(text)], 40, Style::default());
        let s: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(width(&s), 40, "{s}");
        let kept = s.chars().take_while(|c| *c == 'x').count();
        assert!(s.ends_with(&format!("… (+{} chars)", 100 - kept)), "{s}");
    }

    fn rows_of(lines: &[Line]) -> Vec<String> {
        lines.iter().map(text).collect()
    }

    #[test]
    fn wrap_keeps_every_character_and_indents_continuations() {
        let rows = rows_of(&wrap(vec![Span::raw("abcdef"), Span::raw("ghij")], 4));
        assert_eq!(rows, ["abcd", "  ef", "  gh", "  ij"]);
        let rows = rows_of(&wrap(vec![Span::raw("  the quick brown fox")], 12));
        assert_eq!(rows, ["  the quick ", "    brown ", "    fox"]);
    }

    #[test]
    fn clean_blanks_control_characters() {
        assert_eq!(clean("a\tb\r"), "a b ");
        assert!(matches!(clean("plain"), Cow::Borrowed(_)));
    }
}
