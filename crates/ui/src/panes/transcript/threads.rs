//! A bridged agent's threads at the top of the transcript: one line each,
//! as a tree, with its calls, tokens and state; the thread followed (`[`
//! and `]`) marked. The entries below are then that thread's alone.

use ratatui::text::{Line, Span};

use crate::PaneCtx;
use crate::engine::fold::RunView;
use crate::engine::fold::threads::{ThreadState, ThreadView};
use crate::format::fmt_count;
use crate::text::fit_spans_counted;

/// The thread the transcript follows, when it is one of this run's.
pub(super) fn followed<'a>(ctx: &PaneCtx<'a>) -> Option<&'a ThreadView> {
    let name = ctx.nav.thread.as_deref()?;
    ctx.state.current.as_ref()?.threads.by_name(name)
}

/// The tree's lines: none while the agent has held a single conversation
/// (and follows none), at most a third of the pane's `h` lines.
pub(super) fn tree_lines(ctx: &PaneCtx, run: &RunView, w: usize, h: usize) -> Vec<Line<'static>> {
    let th = ctx.theme;
    let threads = &run.threads;
    if threads.list.len() < 2 && ctx.nav.thread.is_none() {
        return Vec::new();
    }
    let followed = followed(ctx).map(|t| t.id);
    let tree = threads.tree();
    let room = (h / 3).max(2).saturating_sub(1).min(tree.len());
    // The followed thread stays in view.
    let at = tree.iter().position(|(_, t)| Some(t.id) == followed).unwrap_or(0);
    let first = at.saturating_sub(room.saturating_sub(1)).min(tree.len() - room);
    let head = format!(
        "threads ({}) · [ ] follow one{}",
        tree.len(),
        if followed.is_some() { ", the entries below are its own" } else { "" }
    );
    let mut out = vec![Line::styled(head, th.muted())];
    for (depth, t) in &tree[first..first + room] {
        let mark = if Some(t.id) == followed { "●" } else { "▸" };
        let style = if Some(t.id) == followed { th.accent() } else { th.base() };
        let state_style = match t.state {
            ThreadState::Failed => th.fg(th.failing),
            ThreadState::Answered => th.fg(th.ok),
            _ => th.muted(),
        };
        let tokens = t.usage.prompt_tokens + t.usage.completion_tokens;
        let spans = vec![
            Span::styled(format!("{}{mark} {}", "  ".repeat(*depth), t.name), style),
            Span::styled(
                format!(
                    "  {} model · {} tool calls · {} tok{} · ",
                    t.model_calls,
                    t.tool_calls,
                    fmt_count(tokens),
                    if t.open > 0 { format!(" · {} open", t.open) } else { String::new() }
                ),
                th.muted(),
            ),
            Span::styled(t.state.label(), state_style),
        ];
        out.push(fit_spans_counted(spans, w, th.muted()));
    }
    let hidden = tree.len() - room;
    if hidden > 0 {
        out.push(Line::styled(format!("… {hidden} more threads"), th.muted()));
    }
    out
}
