//! Every key of the workbench, live or in a replay.

use std::cell::Cell;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::kit::{hints, rows};
use super::outcome::Outcome;
use crate::Theme;

/// A section heading (empty key) or a key and what it does.
type Row = (&'static str, &'static str);

const LIVE: &[Row] = &[
    ("", "Run"),
    ("space", "pause / resume"),
    ("s", "step: let one model or tool call through, then pause"),
    ("r", "restart the current task"),
    ("+ / -", "pace: a longer / shorter wait before each call"),
    ("T · q", "save the run as a test case (DATA_DIR/cases) · quit or suspend"),
    ("", "Change the run (takes effect at the next decision point)"),
    ("f", "inject a fault into a tool, a role or a model"),
    ("x", "clear faults (all tools and models)"),
    ("e", "edit the selected node's score"),
    ("p", "parameters: α β τ B K, weight format, steps, pace"),
    ("m", "model per role"),
    ("t", "edit the task text, or pick the next task"),
    ("c", "tool categories (rewoo): see or change a tool's category"),
    ("a", "approve every call on / off (or show the waiting call)"),
    ("Enter/y · k", "in the panel: approve a call / keep a result or reply"),
    ("e · r", "in the panel: edit (Ctrl+S sends) / reject, with a note"),
    ("b", "breakpoints: hit counts; add, delete, enable / disable"),
    ("", "Lanes of a running plan step (rewoo; the Workers pane focused)"),
    ("↑/↓", "pick a lane"),
    ("h", "hold the lane (or release it) while the others run on"),
    ("n", "step the lane: let it start now"),
    ("k", "fail the lane (an error fault)"),
    ("", "The program (atc; the Program pane focused)"),
    ("e", "fix and continue: edit the program, run it as the next round"),
];

const REPLAY: &[Row] = &[
    ("", "Replay"),
    ("← / →", "one event back / forward"),
    ("Home / End", "first / last event"),
    ("digits, Enter", "jump to event N"),
    ("f", "fork: go on live from the cursor, paused"),
    ("b", "breakpoints and their hit counts"),
    ("T", "save the cursor's run as a test case in DATA_DIR/cases"),
    ("q", "quit"),
];

const VIEW: &[Row] = &[
    ("", "View"),
    ("tab / shift-tab", "next / previous pane"),
    ("z", "zoom the focused pane (again to unzoom)"),
    ("g", "graph: neighbourhood / whole graph"),
    ("d", "program (atc): the program / its rewrite's diff"),
    ("o", "program (atc): the program / the probes of tools"),
    ("/", "find a tool by name"),
    ("Enter", "on a found tool: focus it in the graph"),
    ("↑/↓ PgUp/PgDn", "scroll the focused pane"),
    ("u · [ ]", "fold / unfold long values · follow one agent thread"),
    ("?", "this help"),
];

const DIALOG: &[Row] = &[
    ("", "In a dialog"),
    ("Tab / shift-tab", "next / previous field"),
    ("↑/↓", "move in a list"),
    ("← / →", "change a choice"),
    ("Enter", "submit (in a filter: take the selection)"),
    ("Esc", "cancel"),
    ("Ctrl+S / F5", "in the program editor: run it (Enter is a new line there)"),
];

/// The rows the help shows in live mode or in a replay.
fn mode_rows(replay: bool) -> impl Iterator<Item = &'static Row> {
    let (first, last) = if replay { (REPLAY, &[][..]) } else { (LIVE, DIALOG) };
    first.iter().chain(VIEW).chain(last)
}

/// The sections shown in live mode or in a replay, in order, each named by
/// its heading without the parenthesis (`"Lanes of a running plan step"`).
fn sections(replay: bool) -> Vec<&'static str> {
    let name = |heading: &'static str| heading.split(" (").next().unwrap_or(heading);
    mode_rows(replay).filter(|(key, _)| key.is_empty()).map(|(_, heading)| name(heading)).collect()
}

/// The help's rows as Markdown, for the book's key table: an intro line
/// saying which sections live mode and a replay show, then one table per
/// section heading, in the order live mode's help lists them (the replay's
/// own section after live mode's, before the shared ones).
pub fn keys_markdown() -> String {
    let list = |names: Vec<&str>| {
        let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        match quoted.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        }
    };
    let mut out = format!(
        "In live mode the help (`?`) lists the sections {}; in a replay it lists {}.\n",
        list(sections(false)),
        list(sections(true)),
    );
    let cell = |s: &str| s.replace('|', "\\|");
    for row in LIVE.iter().chain(REPLAY).chain(VIEW).chain(DIALOG) {
        match row {
            ("", heading) => out.push_str(&format!("\n## {heading}\n\n| key | what it does |\n|---|---|\n")),
            (key, what) => out.push_str(&format!("| `{}` | {} |\n", cell(key), cell(what))),
        }
    }
    out
}

#[derive(Clone, Debug)]
pub struct HelpDialog {
    replay: bool,
    scroll: usize,
    /// Rows the last frame showed, so paging moves by a screenful.
    page: Cell<usize>,
}

impl HelpDialog {
    pub(super) fn new(replay: bool) -> HelpDialog {
        HelpDialog { replay, scroll: 0, page: Cell::new(10) }
    }

    fn rows(&self) -> impl Iterator<Item = &'static Row> {
        mode_rows(self.replay)
    }

    /// Rows the popup wants: every key, the hint row and the border.
    pub(super) fn height(&self) -> u16 {
        self.len() as u16 + 3
    }

    fn len(&self) -> usize {
        self.rows().count()
    }

    pub(super) fn handle_key(&mut self, key: KeyEvent) -> Outcome {
        let page = self.page.get().max(1);
        let max = self.len().saturating_sub(page);
        self.scroll = match key.code {
            KeyCode::Up => self.scroll.saturating_sub(1),
            KeyCode::Down => self.scroll + 1,
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::PageDown => self.scroll + page,
            _ => return Outcome::Cancel,
        }
        .min(max);
        Outcome::Continue
    }

    pub(super) fn render(&self, frame: &mut Frame, area: Rect, theme: &Theme) {
        let [body, hint_row] = rows(area, [None, Some(1)]);
        let height = body.height as usize;
        self.page.set(height);
        let len = self.len();
        let start = self.scroll.min(len.saturating_sub(height));
        let lines: Vec<Line> = self
            .rows()
            .skip(start)
            .take(height)
            .map(|(key, what)| {
                if key.is_empty() {
                    Line::from(Span::styled(format!(" {what}"), theme.title()))
                } else {
                    Line::from(vec![Span::styled(format!("   {key:<16} "), theme.accent()), Span::raw(*what)])
                }
            })
            .collect();
        frame.render_widget(Paragraph::new(lines), body);
        let end = (start + height).min(len);
        let pos = format!("rows {}–{end} of {len}", start + 1);
        let keys = [("↑/↓ PgUp/PgDn", "scroll"), ("any other key", "closes"), (pos.as_str(), "")];
        frame.render_widget(Paragraph::new(hints(&keys, theme)), hint_row);
    }
}
