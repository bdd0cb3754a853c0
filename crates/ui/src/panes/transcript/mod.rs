//! The transcript pane: what the model was shown (the candidates with their
//! weights), what it answered, what each tool returned, refusals and notes,
//! newest at the bottom.
//!
//! Only the entries needed to fill the pane (plus the scroll offset) are laid
//! out, from the newest backwards, so a long run costs no more per frame than
//! a short one. What each entry says is `entries`' job; this file picks the
//! entries to lay out and fits their lines to the pane.

mod entries;
mod threads;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use self::entries::{Logical, entry_lines, outcome_lines};
use super::{pane_block, pane_title};
use crate::PaneCtx;
use crate::engine::fold::Entry;
use crate::text::{clean, fit_spans_counted, wrap};

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let mut block = pane_block(th, ctx.focused, pane_title(&title(ctx), area.width, th)).style(th.base());
    let inner = block.inner(area);
    let (w, h) = (inner.width as usize, inner.height as usize);
    if w == 0 || h == 0 {
        frame.render_widget(block, area);
        return;
    }
    let tree = ctx.state.current.as_ref().map(|r| threads::tree_lines(ctx, r, w, h)).unwrap_or_default();
    let (mut lines, below) = visible_lines(ctx, w, h.saturating_sub(tree.len()));
    if !tree.is_empty() {
        lines.splice(0..0, tree);
    }
    if below > 0 {
        block = block.title_bottom(Line::styled(format!(" ↓ {below} newer lines "), th.muted()).right_aligned());
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn title(ctx: &PaneCtx) -> String {
    let name = if ctx.nav.unfold { "Transcript (unfolded)" } else { "Transcript" };
    let following = threads::followed(ctx).map(|t| format!(" · following thread {}", t.name)).unwrap_or_default();
    match &ctx.state.current {
        Some(r) => {
            format!("{name}{following} — run {}, task {}/{}: {}", r.run, r.index, ctx.state.total_tasks, clean(&r.task))
        }
        None => name.to_string(),
    }
}

/// The screen lines to show and how many newer lines lie below them.
fn visible_lines(ctx: &PaneCtx, w: usize, h: usize) -> (Vec<Line<'static>>, usize) {
    let th = ctx.theme;
    let Some(run) = &ctx.state.current else {
        return (vec![Line::styled("No task has started yet.", th.muted())], 0);
    };
    let want = h.saturating_add(ctx.nav.transcript_scroll);
    let lay = |logical: Vec<Logical>| -> Vec<Line<'static>> {
        let mut out = Vec::with_capacity(logical.len());
        for l in logical {
            if ctx.nav.unfold {
                out.extend(wrap(l.spans, w));
            } else {
                out.push(fit_spans_counted(l.spans, w.min(l.limit), th.muted()));
            }
        }
        out
    };
    // Chunks of screen lines, newest first.
    let mut chunks: Vec<Vec<Line<'static>>> = Vec::new();
    let mut count = 0;
    if let Some(end) = outcome_lines(ctx, run) {
        let c = lay(end);
        count += c.len();
        chunks.push(c);
    }
    if run.transcript.is_empty() {
        chunks.push(vec![Line::styled("Waiting for the first model call…", th.muted())]);
        count += 1;
    }
    let followed = threads::followed(ctx).map(|t| t.id);
    for (i, e) in run.transcript.iter().enumerate().rev() {
        if count >= want {
            break;
        }
        if let Some(f) = followed
            && !run.threads.of_entry(i).is_some_and(|t| run.threads.within(t, f))
        {
            continue;
        }
        let mut logical = Vec::new();
        if i > 0 && matches!(e, Entry::Prompt { .. }) {
            logical.push(Logical::new(Vec::new()));
        }
        entry_lines(e, run.transcript.get(i + 1), ctx, w, &mut logical);
        let c = lay(logical);
        count += c.len();
        chunks.push(c);
    }
    let all: Vec<Line<'static>> = chunks.into_iter().rev().flatten().collect();
    let total = all.len();
    let below = ctx.nav.transcript_scroll.min(total.saturating_sub(h));
    let end = total - below;
    let start = end.saturating_sub(h);
    (all.into_iter().skip(start).take(end - start).collect(), below)
}
