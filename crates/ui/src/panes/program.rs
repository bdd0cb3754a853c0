//! The program pane (atc): the program the planner (or the user) wrote for
//! the current run, as a debugger shows it. Line numbers; the line whose
//! tool call runs highlighted; each call's tool and result beside the line
//! that made it; the failure, its line and the tool it is blamed on; what
//! the program printed. `d` shows a rewrite as its diff, `b` the probes of
//! the tools without a documented response (question, program, response,
//! inferred schema). The keys live in the app; this only draws.

use std::collections::BTreeMap;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use serde_json::Value;

use super::{pane_block, pane_title, render_block};
use crate::engine::SessionState;
use crate::engine::event::RunOutcome;
use crate::engine::fold::Mode;
use crate::engine::fold::program::{ProbeView, ProgramCall, ProgramView};
use crate::navigation::{Navigation, PaneCtx, ProgramShow};
use crate::symbols::{FAILING, OK, RUNNING};
use crate::text::{clean, fit_spans, width, wrap};
use crate::theme::Theme;

/// Prints shown under the program: the last few.
const PRINTS: usize = 5;
/// Cells a result beside its line needs at least; with less room it goes
/// on the row under the line.
const BESIDE_MIN: usize = 16;
/// Rows the failure's message may take in the header.
const ERROR_ROWS: usize = 3;

/// What the pane shows: what the user asked for (`d`, `b`) when there is
/// such a thing, else the program, else the probes.
pub fn shown(state: &SessionState, view: &Navigation) -> ProgramShow {
    let program = state.current.as_ref().and_then(|r| r.program.as_ref());
    match view.program_show {
        ProgramShow::Probes if !state.probes.is_empty() => ProgramShow::Probes,
        ProgramShow::Diff if program.is_some_and(has_diff) => ProgramShow::Diff,
        _ if program.is_none() && !state.probes.is_empty() => ProgramShow::Probes,
        _ => ProgramShow::Source,
    }
}

/// A rewrite whose diff there is to show.
pub fn has_diff(p: &ProgramView) -> bool {
    p.round > 0 && !p.diff.is_empty()
}

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let (s, th) = (ctx.state, ctx.theme);
    let show = shown(s, ctx.nav);
    let program = ctx.program();
    let title = match (show, program) {
        (ProgramShow::Probes, _) => "Program · probes, newest first".to_string(),
        (ProgramShow::Diff, Some(p)) => format!("Program · round {} · diff", p.round),
        (_, Some(p)) => format!("Program · round {}", p.round),
        (_, None) => "Program".to_string(),
    };
    let block = pane_block(th, ctx.focused, pane_title(&title, area.width, th)).style(th.base());
    let Some(inner) = render_block(frame, area, block) else { return };
    let w = inner.width as usize;
    let (mut head, body, focal) = match (show, program) {
        (ProgramShow::Probes, _) => (probes_head(&s.probes, th), probe_lines(&s.probes, th), None),
        (ProgramShow::Diff, Some(p)) => (program_head(s, p, th, w), diff_lines(&p.diff, th), None),
        (_, Some(p)) => {
            let (body, focal) = source_lines(p, th, w);
            (program_head(s, p, th, w), body, focal)
        }
        (_, None) => (no_program(s, th), Vec::new(), None),
    };
    // A blank row sets the header off when the pane has room for it.
    if !body.is_empty() && inner.height >= 10 {
        head.push(Line::default());
    }
    let top = (head.len() as u16).min(inner.height);
    let head: Vec<Line> = head.into_iter().map(|l| fit_spans(l.spans, w)).collect();
    frame.render_widget(Paragraph::new(head), Rect { height: top, ..inner });
    let h = (inner.height - top) as usize;
    if h == 0 {
        return;
    }
    let offset = scroll(ctx.nav.program_scroll, body.len(), h, focal);
    let shown: Vec<Line> = body
        .into_iter()
        .skip(offset)
        .take(h)
        .map(|l| {
            let style = l.style;
            fit_spans(l.spans, w).style(style)
        })
        .collect();
    frame.render_widget(Paragraph::new(shown), Rect { y: inner.y + top, height: h as u16, ..inner });
}

/// The first row to show of `len`: the user's scroll, kept within the rows,
/// moved only as far as it takes to keep the running line (`focal`) in view
/// with a row under it.
fn scroll(wanted: usize, len: usize, h: usize, focal: Option<usize>) -> usize {
    let last = len.saturating_sub(h);
    let mut offset = wanted.min(last);
    if let Some(f) = focal {
        if f < offset {
            offset = f;
        } else if f + 2 > offset + h {
            // One row of what follows, unless the pane has only the one row.
            offset = (f + 2).saturating_sub(h).min(last).min(f);
        }
    }
    offset
}

/// Before the planner wrote anything.
fn no_program(s: &SessionState, th: &Theme) -> Vec<Line<'static>> {
    let why = match &s.current {
        Some(_) => "no program yet: the planner writes one for this task",
        None => "no program yet: no task has started",
    };
    vec![Line::styled(why, th.muted())]
}

/// Where the program stands, and whose it is when the user wrote it (the
/// title has the round); a failure's message under it.
fn program_head(s: &SessionState, p: &ProgramView, th: &Theme, w: usize) -> Vec<Line<'static>> {
    let mut spans = Vec::new();
    if p.by_user {
        spans.push(Span::styled("your edit", th.accent()));
        spans.push(Span::styled(" · ", th.muted()));
    }
    let mut out = Vec::new();
    if let Some(v) = &p.returned {
        spans.push(Span::styled(format!("{OK} returned "), th.fg(th.ok).add_modifier(Modifier::BOLD)));
        spans.push(Span::styled(compact(v), th.base()));
    } else if let Some(f) = &p.failure {
        spans.push(Span::styled(format!("{FAILING} failed"), th.fg(th.failing).add_modifier(Modifier::BOLD)));
        spans.push(Span::styled(format!(" ({})", f.kind.as_str()), th.fg(th.failing)));
        if let Some(l) = f.line {
            spans.push(Span::styled(format!(" at line {l}"), th.base()));
        }
        match &f.tool {
            Some(t) => {
                spans.push(Span::styled(" · blamed on ", th.muted()));
                spans.push(Span::styled(t.clone(), th.base().add_modifier(Modifier::BOLD)));
            }
            None => spans.push(Span::styled(" · blamed on no tool", th.muted())),
        }
        let next = if f.last { " · no round left" } else { " · a rewrite follows" };
        spans.push(Span::styled(next, th.muted()));
        let message = vec![Span::raw("  "), Span::styled(clean(&f.error).into_owned(), th.fg(th.failing))];
        let mut rows = wrap(message, w);
        if rows.len() > ERROR_ROWS {
            rows.truncate(ERROR_ROWS);
            if let Some(last) = rows.last_mut() {
                // Marks the cut; `z` zooms the pane for the rest.
                last.spans.push(Span::styled("…", th.fg(th.failing)));
            }
        }
        out.extend(rows);
    } else if p.ended {
        spans.push(Span::styled(format!("■ {}", ended_word(s)), th.muted()));
    } else {
        let paused = s.mode == Mode::Paused;
        let word = match (p.running_line(), paused) {
            (Some(l), true) => format!("‖ paused at line {l}"),
            (Some(l), false) => format!("▶ running line {l}"),
            (None, true) => "‖ paused".to_string(),
            (None, false) => "▶ running".to_string(),
        };
        spans.push(Span::styled(word, th.accent()));
    }
    out.insert(0, Line::from(spans));
    out
}

/// Why a program that neither returned nor failed no longer runs: its run ended.
fn ended_word(s: &SessionState) -> &'static str {
    let run = s.current.as_ref().map(|r| r.run);
    match s.finished.last().filter(|f| Some(f.run) == run).map(|f| &f.outcome) {
        Some(RunOutcome::Stopped) => "stopped by the user",
        Some(RunOutcome::Restarted) => "the task restarted",
        Some(RunOutcome::OutOfBudget) => "out of budget",
        Some(RunOutcome::Failed { .. }) => "a model call failed",
        Some(RunOutcome::MaxSteps) => "the step limit ended it",
        _ => "ended",
    }
}

/// The source with its line numbers and each line's calls beside it; the
/// row of the running line, if any, is given too (to keep it in view).
fn source_lines(p: &ProgramView, th: &Theme, w: usize) -> (Vec<Line<'static>>, Option<usize>) {
    let source: Vec<String> = p.source.lines().map(|l| clean(&l.replace('\t', "    ")).into_owned()).collect();
    // Per line: how many calls it made, and the last of them.
    let mut by_line: BTreeMap<u32, (usize, &ProgramCall)> = BTreeMap::new();
    for c in &p.calls {
        if let Some(l) = c.line {
            let e = by_line.entry(l).or_insert((0, c));
            *e = (e.0 + 1, c);
        }
    }
    let running = p.running_line();
    let failed = p.failure.as_ref().and_then(|f| f.line);
    let digits = source.len().max(1).to_string().len();
    // The mark, the number between spaces, and "│ ".
    let gutter = digits + 5;
    // Results line up in one column after the longest line that made a
    // call and leaves them room; a longer line has its result under it.
    let room = w.saturating_sub(gutter);
    let beside = |t: &str| width(t) + 2 + BESIDE_MIN <= room;
    let column = by_line
        .keys()
        .filter_map(|l| (*l as usize).checked_sub(1).and_then(|i| source.get(i)))
        .filter(|t| beside(t))
        .map(|t| width(t))
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    let mut focal = None;
    for (i, text) in source.iter().enumerate() {
        let n = i as u32 + 1;
        let (mark, mark_style, text_style) = if running == Some(n) {
            ("▶", th.accent(), th.base().add_modifier(Modifier::BOLD))
        } else if failed == Some(n) {
            (FAILING, th.fg(th.failing).add_modifier(Modifier::BOLD), th.fg(th.failing))
        } else {
            (" ", th.muted(), th.base())
        };
        let mut spans = vec![
            Span::styled(mark, mark_style),
            Span::styled(format!(" {n:>digits$} "), if mark == " " { th.muted() } else { mark_style }),
            Span::styled("│ ", th.muted()),
            Span::styled(text.clone(), text_style),
        ];
        let calls = by_line.get(&n).map(|(count, c)| call_spans(c, *count, p.ended, th));
        let row_style = if running == Some(n) { th.selected() } else { Style::default() };
        if running == Some(n) {
            focal = Some(out.len());
        }
        match calls {
            Some(c) if beside(text) => {
                let pad = column.saturating_sub(width(text)) + 2;
                spans.push(Span::raw(" ".repeat(pad)));
                spans.extend(c);
                out.push(row(spans, row_style));
            }
            Some(c) => {
                out.push(row(spans, row_style));
                let mut under = vec![Span::raw(" ".repeat(gutter)), Span::styled("↳ ", th.muted())];
                under.extend(c);
                out.push(row(under, row_style));
            }
            None => out.push(row(spans, row_style)),
        }
    }
    let unplaced: Vec<&ProgramCall> =
        p.calls.iter().filter(|c| c.line.is_none_or(|l| l == 0 || l as usize > source.len())).collect();
    if !unplaced.is_empty() {
        out.push(Line::default());
        out.push(Line::styled("calls from no known line", th.muted()));
        for c in unplaced {
            let mut spans = vec![Span::raw("  ")];
            spans.extend(call_spans(c, 1, p.ended, th));
            out.push(Line::from(spans));
        }
    }
    if !p.prints.is_empty() {
        out.push(Line::default());
        let n = p.prints.len();
        let heading = if n > PRINTS { format!("printed (the last {PRINTS} of {n})") } else { "printed".to_string() };
        out.push(Line::styled(heading, th.muted()));
        for text in &p.prints[n.saturating_sub(PRINTS)..] {
            out.push(Line::from(vec![Span::raw("  "), Span::raw(clean(text).into_owned())]));
        }
    }
    (out, focal)
}

/// A row in `style` from edge to edge: the spans' own colours (which set
/// a background of their own) keep their foreground under it.
fn row(spans: Vec<Span<'static>>, style: Style) -> Line<'static> {
    let spans = spans.into_iter().map(|s| Span::styled(s.content, s.style.patch(style))).collect::<Vec<_>>();
    Line::from(spans).style(style)
}

/// `×3 tool ✓ value`: the last call a line made and what came back to it.
fn call_spans(c: &ProgramCall, count: usize, ended: bool, th: &Theme) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    if count > 1 {
        out.push(Span::styled(format!("×{count} "), th.muted()));
    }
    out.push(Span::styled(c.tool.clone(), th.base().add_modifier(Modifier::BOLD)));
    match (&c.result, ended) {
        (Some(Ok(v)), _) => {
            out.push(Span::styled(format!(" {OK} "), th.fg(th.ok)));
            out.push(Span::styled(compact(v), th.base()));
        }
        (Some(Err(e)), _) => out.push(Span::styled(format!(" {FAILING} {}", clean(e)), th.fg(th.failing))),
        (None, true) => out.push(Span::styled(" – no result", th.muted())),
        // Not through the gate yet (paused, or the pace's wait).
        (None, false) if c.call.is_none() => out.push(Span::styled(format!(" {RUNNING} waiting"), th.accent())),
        (None, false) => out.push(Span::styled(format!(" {RUNNING} running"), th.accent())),
    }
    out
}

/// The unified diff of a rewrite, added lines in the ok colour and removed
/// ones in the failing colour (their `+`/`-` say it without colour).
fn diff_lines(diff: &str, th: &Theme) -> Vec<Line<'static>> {
    diff.lines()
        .map(|l| {
            let style = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("@@") || l.starts_with('\\') {
                th.muted()
            } else if l.starts_with('+') {
                th.fg(th.ok)
            } else if l.starts_with('-') {
                th.fg(th.failing)
            } else {
                th.base()
            };
            Line::styled(clean(&l.replace('\t', "    ")).into_owned(), style)
        })
        .collect()
}

fn probes_head(probes: &[ProbeView], th: &Theme) -> Vec<Line<'static>> {
    let mut tools: Vec<&str> = probes.iter().map(|p| p.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    let schemas = probes.iter().filter(|p| p.schema.is_some()).count();
    let failed = probes.iter().filter(|p| p.error.is_some()).count();
    let s = |n: usize| if n == 1 { "" } else { "s" };
    let mut spans = vec![
        Span::styled(
            format!("{} probe{} of {} tool{}", probes.len(), s(probes.len()), tools.len(), s(tools.len())),
            th.base().add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!(" · {schemas} gave a schema"), th.muted()),
    ];
    if failed > 0 {
        spans.push(Span::styled(format!(" · {failed} failed"), th.fg(th.failing)));
    }
    vec![Line::from(spans)]
}

/// Each probe, the newest first: what the model asked, the program it
/// wrote, what the tool answered and the schema drawn from it.
fn probe_lines(probes: &[ProbeView], th: &Theme) -> Vec<Line<'static>> {
    let label = |s: &str| Span::styled(format!("  {s:<10}"), th.muted());
    let mut out = Vec::new();
    for p in probes.iter().rev() {
        if !out.is_empty() {
            out.push(Line::default());
        }
        let mut head = vec![
            Span::styled("? ", th.accent()),
            Span::styled(p.tool.clone(), th.base().add_modifier(Modifier::BOLD)),
            Span::styled(format!(" · round {} · sample {}", p.round, p.sample), th.muted()),
        ];
        if !p.helpers.is_empty() {
            head.push(Span::styled(format!(" · after {}", p.helpers.join(", ")), th.muted()));
        }
        out.push(Line::from(head));
        out.push(Line::from(vec![label("question"), Span::raw(clean(&p.question).into_owned())]));
        for (i, l) in p.program.lines().enumerate() {
            let first = if i == 0 { label("program") } else { label("") };
            out.push(Line::from(vec![first, Span::raw(clean(&l.replace('\t', "    ")).into_owned())]));
        }
        if let Some(r) = &p.response {
            out.push(Line::from(vec![label("response"), Span::raw(compact(r))]));
        }
        if let Some(schema) = &p.schema {
            out.push(Line::from(vec![label("schema"), Span::styled(compact(schema), th.fg(th.ok))]));
        }
        if let Some(e) = &p.error {
            out.push(Line::from(vec![
                label(&format!("{FAILING} error")),
                Span::styled(clean(e).into_owned(), th.fg(th.failing)),
            ]));
        }
    }
    out
}

/// A value on one line: compact JSON, control characters blanked.
fn compact(v: &Value) -> String {
    clean(&v.to_string()).into_owned()
}
