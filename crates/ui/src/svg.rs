//! A drawn screen as a picture: a ratatui [`Buffer`] turned into an SVG
//! document, cell for cell, so the README's picture of the workbench is the
//! app's own rendering rather than a screenshot.
//!
//! Each row's cells are grouped into runs of one style, each run one
//! `<text>` whose characters are placed cell by cell (an `x` per character),
//! so the columns line up whatever monospace font the viewer picks. The
//! lines and blocks a terminal draws by itself rather than from its font —
//! box drawing (light and heavy), block elements and braille dots — are
//! drawn as shapes filling their cells exactly, so borders join and the
//! charts' braille reads as dots, with no gap between rows in any viewer.
//! Colours: the 16 named ones from a fixed palette, indexed ones by the
//! xterm 256-colour table, RGB as given; `Reset` is the style's own
//! foreground or background (a dark terminal by default).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use ratatui::buffer::{Buffer, CellWidth};
use ratatui::style::{Color, Modifier};

/// An RGB colour.
pub type Rgb = [u8; 3];

/// How the picture looks: the terminal's own colours and its font.
#[derive(Clone, Debug, PartialEq)]
pub struct SvgStyle {
    /// What `Color::Reset` is in the foreground.
    pub foreground: Rgb,
    /// What `Color::Reset` is in the background, and the canvas.
    pub background: Rgb,
    /// The 16 named colours, black to white in ANSI order (`Indexed(0..16)` too).
    pub palette: [Rgb; 16],
    /// Pixels per em; a cell is 0.6 em wide (DejaVu Sans Mono's advance)
    /// and 1.2 em tall.
    pub font_size: f32,
    /// The CSS font-family list, monospace first.
    pub font_family: String,
}

impl Default for SvgStyle {
    /// A dark terminal (the palette of VS Code's dark terminal).
    fn default() -> Self {
        SvgStyle {
            foreground: [0xcc, 0xcc, 0xcc],
            background: [0x1e, 0x1e, 0x1e],
            palette: [
                [0x00, 0x00, 0x00],
                [0xcd, 0x31, 0x31],
                [0x0d, 0xbc, 0x79],
                [0xe5, 0xe5, 0x10],
                [0x24, 0x72, 0xc8],
                [0xbc, 0x3f, 0xbc],
                [0x11, 0xa8, 0xcd],
                [0xe5, 0xe5, 0xe5],
                [0x66, 0x66, 0x66],
                [0xf1, 0x4c, 0x4c],
                [0x23, 0xd1, 0x8b],
                [0xf5, 0xf5, 0x43],
                [0x3b, 0x8e, 0xea],
                [0xd6, 0x70, 0xd6],
                [0x29, 0xb8, 0xdb],
                [0xff, 0xff, 0xff],
            ],
            font_size: 15.0,
            font_family: "'DejaVu Sans Mono', Menlo, Consolas, 'Liberation Mono', monospace".into(),
        }
    }
}

impl SvgStyle {
    /// The RGB value of a ratatui colour; `Reset` is `default`.
    pub fn rgb(&self, color: Color, default: Rgb) -> Rgb {
        match color {
            Color::Reset => default,
            Color::Black => self.palette[0],
            Color::Red => self.palette[1],
            Color::Green => self.palette[2],
            Color::Yellow => self.palette[3],
            Color::Blue => self.palette[4],
            Color::Magenta => self.palette[5],
            Color::Cyan => self.palette[6],
            Color::Gray => self.palette[7],
            Color::DarkGray => self.palette[8],
            Color::LightRed => self.palette[9],
            Color::LightGreen => self.palette[10],
            Color::LightYellow => self.palette[11],
            Color::LightBlue => self.palette[12],
            Color::LightMagenta => self.palette[13],
            Color::LightCyan => self.palette[14],
            Color::White => self.palette[15],
            Color::Rgb(r, g, b) => [r, g, b],
            Color::Indexed(i) => self.indexed(i),
        }
    }

    /// xterm's 256 colours: the palette, a 6×6×6 cube, 24 greys.
    fn indexed(&self, i: u8) -> Rgb {
        match i {
            0..16 => self.palette[i as usize],
            16..232 => {
                let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
                let i = i - 16;
                [level(i / 36), level(i / 6 % 6), level(i % 6)]
            }
            _ => {
                let v = 8 + 10 * (i - 232);
                [v, v, v]
            }
        }
    }

    fn cell(&self) -> (f32, f32) {
        (self.font_size * 0.6, self.font_size * 1.2)
    }
}

/// The buffer drawn as a standalone SVG document, one cell of the
/// buffer per cell of a monospace grid (see [`SvgStyle`] for its size).
pub fn buffer_to_svg(buf: &Buffer, style: &SvgStyle) -> String {
    let (cw, ch) = style.cell();
    let area = buf.area;
    let (width, height) = (cw * f32::from(area.width), ch * f32::from(area.height));
    // Where the baseline sits in a cell: DejaVu Sans Mono's ascent and
    // descent (0.928 and 0.236 em) centred in the cell's height.
    let baseline = ch / 2.0 + 0.346 * style.font_size;

    let mut backgrounds = String::new();
    let mut shapes = Shapes::default();
    let mut texts = String::new();

    for row in 0..area.height {
        let y = ch * f32::from(row);
        let cells = row_cells(buf, row, style);
        // Backgrounds: runs of one colour other than the canvas's.
        let mut i = 0;
        while i < cells.len() {
            let bg = cells[i].bg;
            let mut j = i;
            let mut span = 0;
            while j < cells.len() && cells[j].bg == bg && cells[j].col == cells[i].col + span {
                span += cells[j].width;
                j += 1;
            }
            if bg != style.background {
                let x = cw * f32::from(cells[i].col);
                let _ = writeln!(
                    backgrounds,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
                    num(x),
                    num(y),
                    num(cw * f32::from(span)),
                    num(ch),
                    hex(bg)
                );
            }
            i = j;
        }
        // Shapes and decorations.
        for c in &cells {
            let x = cw * f32::from(c.col);
            let w = cw * f32::from(c.width);
            if c.shape {
                draw_shape(&mut shapes, shape_colour(&c.symbol, c.fg, c.bg), &c.symbol, x, y, w, ch);
            }
            let line = (style.font_size / 15.0).max(1.0);
            if c.underline {
                shapes.line(c.fg, Axis::Horizontal, (x, x + w), y + baseline + 2.0 * line, line);
            }
            if c.strike {
                shapes.line(c.fg, Axis::Horizontal, (x, x + w), y + baseline - 0.3 * style.font_size, line);
            }
        }
        // Text: runs of one look, blanks at their ends left out.
        let mut i = 0;
        while i < cells.len() {
            if !cells[i].has_text() {
                i += 1;
                continue;
            }
            let look = cells[i].look();
            let mut j = i + 1;
            while j < cells.len() && (cells[j].blank() || (cells[j].has_text() && cells[j].look() == look)) {
                j += 1;
            }
            while !cells[j - 1].has_text() {
                j -= 1;
            }
            write_text(&mut texts, &cells[i..j], y + baseline, cw, style);
            i = j;
        }
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{family}" font-size="{size}" fill="{fg}" xml:space="preserve">"#,
        w = num(width),
        h = num(height),
        family = escape(&style.font_family),
        size = num(style.font_size),
        fg = hex(style.foreground),
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="{}"/>"#, hex(style.background));
    out.push_str(&backgrounds);
    for (colour, d) in &shapes.finish() {
        let _ = writeln!(out, r#"<path fill="{}" d="{}"/>"#, hex(*colour), d.trim_end());
    }
    out.push_str(&texts);
    out.push_str("</svg>\n");
    out
}

/// One visible cell of a row, its colours resolved.
struct Cell {
    col: u16,
    /// Columns it covers: 2 for a wide character.
    width: u16,
    symbol: String,
    fg: Rgb,
    bg: Rgb,
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    /// Drawn as a shape, not a glyph.
    shape: bool,
}

impl Cell {
    fn blank(&self) -> bool {
        self.symbol.chars().all(|c| c == ' ') && !self.shape
    }

    fn has_text(&self) -> bool {
        !self.blank() && !self.shape
    }

    /// What a run of text shares.
    fn look(&self) -> (Rgb, bool, bool) {
        (self.fg, self.bold, self.italic)
    }
}

/// The row's cells left to right, the columns hidden under a wide
/// character left out.
fn row_cells(buf: &Buffer, row: u16, style: &SvgStyle) -> Vec<Cell> {
    let area = buf.area;
    let mut out = Vec::new();
    let mut col = 0;
    while col < area.width {
        let cell = &buf[(area.x + col, area.y + row)];
        let width = cell.cell_width().clamp(1, area.width - col);
        let m = cell.modifier;
        let mut fg = style.rgb(cell.fg, style.foreground);
        let mut bg = style.rgb(cell.bg, style.background);
        if m.contains(Modifier::REVERSED) {
            std::mem::swap(&mut fg, &mut bg);
        }
        if m.contains(Modifier::DIM) {
            fg = blend(fg, bg, 0.6);
        }
        let mut symbol: String = cell.symbol().chars().filter(|c| !c.is_control()).collect();
        if symbol.is_empty() || m.contains(Modifier::HIDDEN) {
            symbol = " ".into();
        }
        let shape = symbol.chars().count() == 1 && is_shape(symbol.chars().next().unwrap_or(' '));
        out.push(Cell {
            col,
            width,
            shape,
            symbol,
            fg,
            bg,
            bold: m.contains(Modifier::BOLD),
            italic: m.contains(Modifier::ITALIC),
            underline: m.contains(Modifier::UNDERLINED),
            strike: m.contains(Modifier::CROSSED_OUT),
        });
        col += width;
    }
    out
}

/// A run of text, each character at its cell. A cell holding more than
/// one character (a letter and its combining marks) is a text of its own,
/// so its marks stay on it; so is a wide character, so that a viewer
/// which places a text by its first `x` alone (librsvg) lines up what
/// follows it all the same.
fn write_text(out: &mut String, cells: &[Cell], y: f32, cw: f32, style: &SvgStyle) {
    let (fg, bold, italic) = cells[0].look();
    let mut attrs = String::new();
    if fg != style.foreground {
        let _ = write!(attrs, r#" fill="{}""#, hex(fg));
    }
    if bold {
        attrs.push_str(r#" font-weight="bold""#);
    }
    if italic {
        attrs.push_str(r#" font-style="italic""#);
    }
    let mut xs: Vec<String> = Vec::new();
    let mut text = String::new();
    let flush = |out: &mut String, xs: &mut Vec<String>, text: &mut String| {
        if !xs.is_empty() {
            let _ = writeln!(out, r#"<text x="{}" y="{}"{attrs}>{}</text>"#, xs.join(" "), num(y), escape(text));
            xs.clear();
            text.clear();
        }
    };
    for c in cells {
        let x = num(cw * f32::from(c.col));
        if c.width > 1 || c.symbol.chars().count() > 1 {
            flush(out, &mut xs, &mut text);
            xs.push(x);
            text.push_str(&c.symbol);
            flush(out, &mut xs, &mut text);
        } else {
            xs.push(x);
            text.push_str(&c.symbol);
        }
    }
    flush(out, &mut xs, &mut text);
}

/// The characters drawn as shapes: box drawing's light and heavy lines,
/// block elements and braille.
fn is_shape(c: char) -> bool {
    box_arms(c).is_some() || block(c).is_some() || ('\u{2800}'..='\u{28ff}').contains(&c)
}

/// The colour a shape is drawn in: a shade block is its colour over the
/// background at 25, 50 or 75 %.
fn shape_colour(symbol: &str, fg: Rgb, bg: Rgb) -> Rgb {
    match symbol {
        "░" => blend(fg, bg, 0.25),
        "▒" => blend(fg, bg, 0.5),
        "▓" => blend(fg, bg, 0.75),
        _ => fg,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Axis {
    Horizontal,
    Vertical,
}

/// A line's colour, axis, place across the axis and thickness (the last
/// two as `f32` bits, so that keys are ordered).
type LineKey = (Rgb, Axis, u32, u32);

/// The shapes drawn so far, by colour: one path each in the end. Lines
/// are kept apart until then, so that a border's cells become one bar
/// (no seam between cells, and a far smaller file).
#[derive(Default)]
struct Shapes {
    paths: BTreeMap<Rgb, String>,
    /// Each line's spans along its axis.
    lines: BTreeMap<LineKey, Vec<(f32, f32)>>,
}

impl Shapes {
    fn rect(&mut self, colour: Rgb, x: f32, y: f32, w: f32, h: f32) {
        rect(self.paths.entry(colour).or_default(), x, y, w, h);
    }

    /// A bar along `axis` over `span`, at `at` across it, `thick` wide.
    fn line(&mut self, colour: Rgb, axis: Axis, span: (f32, f32), at: f32, thick: f32) {
        self.lines.entry((colour, axis, at.to_bits(), thick.to_bits())).or_default().push(span);
    }

    /// Each colour's path, the lines joined where they touch.
    fn finish(mut self) -> BTreeMap<Rgb, String> {
        for ((colour, axis, at, thick), mut spans) in std::mem::take(&mut self.lines) {
            let (at, thick) = (f32::from_bits(at), f32::from_bits(thick));
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut joined: Vec<(f32, f32)> = Vec::new();
            for (a, b) in spans {
                match joined.last_mut() {
                    Some(last) if a <= last.1 + 0.01 => last.1 = last.1.max(b),
                    _ => joined.push((a, b)),
                }
            }
            for (a, b) in joined {
                match axis {
                    Axis::Horizontal => self.rect(colour, a, at, b - a, thick),
                    Axis::Vertical => self.rect(colour, at, a, thick, b - a),
                }
            }
        }
        self.paths
    }
}

/// Draws `symbol` in the cell at (x, y) of w × h.
fn draw_shape(shapes: &mut Shapes, colour: Rgb, symbol: &str, x: f32, y: f32, w: f32, h: f32) {
    let Some(c) = symbol.chars().next() else { return };
    if let Some([left, right, up, down]) = box_arms(c) {
        // Line widths in px: a light line 1/9 of a cell's width, at least 1.
        let light = (w / 9.0).max(1.0).round();
        let thick = |arm: u8| if arm == 2 { light * 2.0 } else { light };
        let (cx, cy) = (x + (w / 2.0 - light / 2.0).floor(), y + (h / 2.0 - light / 2.0).floor());
        // Each arm runs from the cell's edge to the far side of the
        // crossing line, so corners and tees close.
        let across_v = thick(up.max(down));
        let across_h = thick(left.max(right));
        let (vx0, vx1) = (cx + light / 2.0 - across_v / 2.0, cx + light / 2.0 + across_v / 2.0);
        let (hy0, hy1) = (cy + light / 2.0 - across_h / 2.0, cy + light / 2.0 + across_h / 2.0);
        let vx = |arm: u8| cx + light / 2.0 - thick(arm) / 2.0;
        let hy = |arm: u8| cy + light / 2.0 - thick(arm) / 2.0;
        if left > 0 {
            shapes.line(colour, Axis::Horizontal, (x, vx1), hy(left), thick(left));
        }
        if right > 0 {
            shapes.line(colour, Axis::Horizontal, (vx0, x + w), hy(right), thick(right));
        }
        if up > 0 {
            shapes.line(colour, Axis::Vertical, (y, hy1), vx(up), thick(up));
        }
        if down > 0 {
            shapes.line(colour, Axis::Vertical, (hy0, y + h), vx(down), thick(down));
        }
    } else if let Some(parts) = block(c) {
        for (x0, y0, x1, y1) in parts {
            shapes.rect(colour, x + w * x0, y + h * y0, w * (x1 - x0), h * (y1 - y0));
        }
    } else if ('\u{2800}'..='\u{28ff}').contains(&c) {
        // Dots 1-2-3-7 down the left column, 4-5-6-8 down the right.
        const DOTS: [(f32, f32); 8] =
            [(0.0, 0.0), (0.0, 1.0), (0.0, 2.0), (1.0, 0.0), (1.0, 1.0), (1.0, 2.0), (0.0, 3.0), (1.0, 3.0)];
        let bits = c as u32 - 0x2800;
        let r = (w / 4.0).min(h / 8.0) * 0.62;
        for (k, (col, row)) in DOTS.iter().enumerate() {
            if bits & (1 << k) != 0 {
                let (dx, dy) = (x + w * (0.25 + 0.5 * col), y + h * (0.125 + 0.25 * row));
                let _ = write!(
                    shapes.paths.entry(colour).or_default(),
                    "M{} {}a{r} {r} 0 1 0 {} 0a{r} {r} 0 1 0 {} 0z",
                    num(dx - r),
                    num(dy),
                    num(2.0 * r),
                    num(-2.0 * r),
                    r = num(r)
                );
            }
        }
    }
}

fn rect(d: &mut String, x: f32, y: f32, w: f32, h: f32) {
    let _ = write!(d, "M{} {}h{}v{}h{}z", num(x), num(y), num(w), num(h), num(-w));
}

/// The arms of a box-drawing character: left, right, up, down, each 0
/// (none), 1 (light) or 2 (heavy). Dashed, double, rounded and diagonal
/// lines are left to the font, except that rounded corners are drawn square.
fn box_arms(c: char) -> Option<[u8; 4]> {
    // U+2500..=U+254B, as "LRUD" digits; "" where the font draws it (dashes).
    const TABLE: [&str; 76] = [
        "1100", "2200", "0011", "0022", "", "", "", "", "", "", "", "", // ─ ━ │ ┃ dashes
        "0101", "0201", "0102", "0202", // ┌ ┍ ┎ ┏
        "1001", "2001", "1002", "2002", // ┐ ┑ ┒ ┓
        "0110", "0210", "0120", "0220", // └ ┕ ┖ ┗
        "1010", "2010", "1020", "2020", // ┘ ┙ ┚ ┛
        "0111", "0211", "0121", "0112", "0122", "0221", "0212", "0222", // ├ ┝ ┞ ┟ ┠ ┡ ┢ ┣
        "1011", "2011", "1021", "1012", "1022", "2021", "2012", "2022", // ┤ ┥ ┦ ┧ ┨ ┩ ┪ ┫
        "1101", "2101", "1201", "2201", "1102", "2102", "1202", "2202", // ┬ ┭ ┮ ┯ ┰ ┱ ┲ ┳
        "1110", "2110", "1210", "2210", "1120", "2120", "1220", "2220", // ┴ ┵ ┶ ┷ ┸ ┹ ┺ ┻
        "1111", "2111", "1211", "2211", // ┼ ┽ ┾ ┿
        "1121", "1112", "1122", "2121", "1221", "2112", "1212", "2221", // ╀ ╁ ╂ ╃ ╄ ╅ ╆ ╇
        "2212", "2122", "1222", "2222", // ╈ ╉ ╊ ╋
    ];
    let spec = match c {
        '\u{2500}'..='\u{254b}' => TABLE[c as usize - 0x2500],
        '╭' => "0101",
        '╮' => "1001",
        '╯' => "1010",
        '╰' => "0110",
        '╴' => "1000",
        '╵' => "0010",
        '╶' => "0100",
        '╷' => "0001",
        '╸' => "2000",
        '╹' => "0020",
        '╺' => "0200",
        '╻' => "0002",
        '╼' => "1200",
        '╽' => "0012",
        '╾' => "2100",
        '╿' => "0021",
        _ => return None,
    };
    let d: Vec<u8> = spec.bytes().map(|b| b - b'0').collect();
    (d.len() == 4).then(|| [d[0], d[1], d[2], d[3]])
}

/// A block element's filled parts, as fractions of the cell:
/// (x0, y0, x1, y1) each.
fn block(c: char) -> Option<Vec<(f32, f32, f32, f32)>> {
    let e = |n: u32| n as f32 / 8.0;
    let code = c as u32;
    let (ul, ur, ll, lr) = ((0.0, 0.0, 0.5, 0.5), (0.5, 0.0, 1.0, 0.5), (0.0, 0.5, 0.5, 1.0), (0.5, 0.5, 1.0, 1.0));
    Some(match c {
        '▀' => vec![(0.0, 0.0, 1.0, 0.5)],
        '\u{2581}'..='\u{2588}' => vec![(0.0, 1.0 - e(code - 0x2580), 1.0, 1.0)],
        '\u{2589}'..='\u{258f}' => vec![(0.0, 0.0, e(8 - (code - 0x2588)), 1.0)],
        '▐' => vec![(0.5, 0.0, 1.0, 1.0)],
        '░' | '▒' | '▓' => vec![(0.0, 0.0, 1.0, 1.0)],
        '▔' => vec![(0.0, 0.0, 1.0, e(1))],
        '▕' => vec![(e(7), 0.0, 1.0, 1.0)],
        '▖' => vec![ll],
        '▗' => vec![lr],
        '▘' => vec![ul],
        '▙' => vec![ul, ll, lr],
        '▚' => vec![ul, lr],
        '▛' => vec![ul, ur, ll],
        '▜' => vec![ul, ur, lr],
        '▝' => vec![ur],
        '▞' => vec![ur, ll],
        '▟' => vec![ur, ll, lr],
        _ => return None,
    })
}

/// `a` over `b` at `alpha`.
fn blend(a: Rgb, b: Rgb, alpha: f32) -> Rgb {
    let mix = |x: u8, y: u8| (f32::from(x) * alpha + f32::from(y) * (1.0 - alpha)).round() as u8;
    [mix(a[0], b[0]), mix(a[1], b[1]), mix(a[2], b[2])]
}

fn hex(c: Rgb) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// A coordinate with at most two decimals and no trailing zeros.
fn num(v: f32) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// Text made safe inside an element or a double-quoted attribute.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    use super::*;

    fn svg_of(w: u16, h: u16, fill: impl FnOnce(&mut Buffer)) -> String {
        let mut buf = Buffer::empty(Rect::new(0, 0, w, h));
        fill(&mut buf);
        buffer_to_svg(&buf, &SvgStyle::default())
    }

    #[test]
    fn text_is_escaped_and_placed_cell_by_cell() {
        let svg = svg_of(12, 1, |b| {
            b.set_string(0, 0, "a<b & \"c\"", Style::default());
        });
        assert!(
            svg.contains(r#"<text x="0 9 18 27 36 45 54 63 72" y="14.19">a&lt;b &amp; &quot;c&quot;</text>"#),
            "{svg}"
        );
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"108\" height=\"18\""), "{svg}");
        // It parses as XML, the text read back as written.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let text = doc.descendants().find(|n| n.has_tag_name("text")).unwrap();
        assert_eq!(text.text(), Some("a<b & \"c\""));
    }

    #[test]
    fn a_coloured_bold_cell_has_its_colours_and_weight() {
        let svg = svg_of(4, 1, |b| {
            b.set_string(1, 0, "X", Style::default().light_red().on_blue().bold());
            b.set_string(2, 0, "y", Style::default().fg(Color::Rgb(1, 2, 3)).italic().underlined());
        });
        assert!(svg.contains(r##"<rect x="9" y="0" width="9" height="18" fill="#2472c8"/>"##), "{svg}");
        assert!(svg.contains(r##"<text x="9" y="14.19" fill="#f14c4c" font-weight="bold">X</text>"##), "{svg}");
        assert!(svg.contains(r##"<text x="18" y="14.19" fill="#010203" font-style="italic">y</text>"##), "{svg}");
        // The underline is a bar in the text's colour under its cell.
        assert!(svg.contains(r##"<path fill="#010203" d="M18 16.19h9v1h-9z"/>"##), "{svg}");
        // Reset is the dark canvas and its light text.
        assert!(svg.contains(r##"<rect width="100%" height="100%" fill="#1e1e1e"/>"##), "{svg}");
        assert!(svg.contains(r##"fill="#cccccc""##), "{svg}");
    }

    #[test]
    fn wide_characters_take_two_cells_and_lines_are_shapes() {
        let svg = svg_of(6, 1, |b| {
            b.set_string(0, 0, "界x─┐", Style::default());
        });
        // x sits after the two columns of the wide character.
        assert!(svg.contains(r#"<text x="0" y="14.19">界</text>"#), "{svg}");
        assert!(svg.contains(r#"<text x="18" y="14.19">x</text>"#), "{svg}");
        assert!(!svg.contains('─') && !svg.contains('┐'), "lines are drawn, not typed: {svg}");
        assert!(svg.contains("<path fill=\"#cccccc\""), "{svg}");
    }

    #[test]
    fn indexed_colours_follow_xterm() {
        let s = SvgStyle::default();
        assert_eq!(s.rgb(Color::Indexed(196), [0; 3]), [255, 0, 0]);
        assert_eq!(s.rgb(Color::Indexed(232), [0; 3]), [8, 8, 8]);
        assert_eq!(s.rgb(Color::Indexed(9), [0; 3]), s.rgb(Color::LightRed, [0; 3]));
        assert_eq!(s.rgb(Color::Reset, [1, 2, 3]), [1, 2, 3]);
    }
}
