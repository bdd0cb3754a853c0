//! The graph pane of a rewoo session, which has no ToolNet graph: the
//! current run's plan, each step with its thought, its calls (tool, category,
//! lane state) and the evidence it cites; before a plan exists, the tools
//! grouped by category.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::PaneCtx;
use crate::dialog::source_word;
use crate::engine::SessionState;
use crate::engine::event::RewooStep;
use crate::engine::fold::{Entry, LaneState, RewooView, StepView};
use crate::panes::workers::lane_look;
use crate::panes::{pane_block, render_block};
use crate::symbols::{FAILING, FAULT, OK, WAITING};
use crate::text::{clean, fit_spans, width};
use crate::theme::Theme;

/// Where a plan step stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepState {
    Done,
    Running,
    Waiting,
}

pub(super) fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    let th = ctx.theme;
    let mut title = vec![Span::styled(" Plan ", th.title())];
    if let Some(r) = &ctx.state.current {
        title.push(Span::styled(format!("· rewoo · run {} ", r.run), th.muted()));
    }
    let Some(inner) = render_block(frame, area, pane_block(th, ctx.focused, title)) else { return };
    let w = inner.width as usize;
    let rewoo = ctx.state.current.as_ref().and_then(|r| r.rewoo.as_ref()).filter(|p| !p.plan.is_empty());
    let lines = match rewoo {
        Some(p) => plan_lines(ctx.state, p, th),
        None => before_plan(ctx.state, th),
    };
    let h = inner.height as usize;
    let offset = ctx.nav.table_offset.min(lines.len().saturating_sub(h));
    let shown: Vec<Line> = lines.into_iter().skip(offset).take(h).map(|l| fit_spans(l.spans, w)).collect();
    frame.render_widget(Paragraph::new(shown), inner);
}

fn step_state(step: Option<&StepView>) -> StepState {
    match step {
        Some(s) if s.finished => StepState::Done,
        Some(_) => StepState::Running,
        None => StepState::Waiting,
    }
}

fn plan_lines(state: &SessionState, p: &RewooView, th: &Theme) -> Vec<Line<'static>> {
    let view_of = |e: u32| p.steps.iter().rev().find(|s| s.evidence == e);
    let states: Vec<StepState> = p.plan.iter().map(|s| step_state(view_of(s.evidence))).collect();
    let count = |k: StepState| states.iter().filter(|s| **s == k).count();
    let mut facts = vec![format!("{} steps", p.plan.len())];
    for (k, word) in [(StepState::Done, "done"), (StepState::Running, "running"), (StepState::Waiting, "waiting")] {
        if count(k) > 0 {
            facts.push(format!("{} {word}", count(k)));
        }
    }
    if p.attempts > 1 {
        facts.push(format!("attempt {} (after a retry)", p.attempts));
    }
    if p.tokens_saved > 0 {
        facts.push(format!("{} tokens saved", p.tokens_saved));
    }
    let mut out = vec![Line::from(Span::styled(facts.join(" · "), th.muted()))];
    // Columns line up across the whole plan.
    let tool_w = p.plan.iter().flat_map(|s| s.calls.iter().map(|c| width(&c.tool))).max().unwrap_or(4).min(28);
    let cat_w = p
        .plan
        .iter()
        .flat_map(|s| s.calls.iter().filter_map(|c| state.category(&c.tool)).map(width))
        .max()
        .unwrap_or(0)
        .min(24);
    for (step, st) in p.plan.iter().zip(&states) {
        out.push(Line::default());
        out.push(step_line(step, *st, th));
        let view = view_of(step.evidence);
        for (i, c) in step.calls.iter().enumerate() {
            let lane = view.and_then(|v| v.lanes.get(i));
            let (sym, sym_style) = match lane {
                Some(l) => {
                    let (sym, _, style) = lane_look(l.state, th);
                    (sym, style)
                }
                None => (WAITING, th.muted()),
            };
            let text_style = if *st == StepState::Waiting { th.muted() } else { th.base() };
            let category = state.category(&c.tool).unwrap_or("—");
            let mut spans = vec![
                Span::raw("    "),
                Span::styled(sym, sym_style),
                Span::raw(" "),
                Span::styled(format!("{:<tool_w$}", c.tool), text_style.add_modifier(Modifier::BOLD)),
                Span::styled(format!("  {category:<cat_w$}  "), th.muted()),
                Span::styled(format!("[{}]", clean(&c.input)), text_style),
            ];
            let fault = match lane.map(|l| (l.fault, l.pending_fault)) {
                Some((Some(f), _)) => Some(format!(" {FAULT} {f}")),
                Some((None, Some(f))) => Some(format!(" {FAULT} {f} pending")),
                _ => None,
            };
            if let Some(f) = fault {
                spans.push(Span::styled(f, th.fg(th.fault).add_modifier(Modifier::BOLD)));
            }
            if lane.is_some_and(|l| matches!(l.state, LaneState::Done { filtered: true, .. })) {
                spans.push(Span::styled(" → null", th.muted()));
            }
            out.push(Line::from(spans));
        }
    }
    out
}

/// `✓ #E1 done  ← #E0  thought`: the symbol and word say where the step
/// stands, so the styles need not.
fn step_line(step: &RewooStep, st: StepState, th: &Theme) -> Line<'static> {
    let (sym, word, sym_style, style) = match st {
        StepState::Done => (OK, "done", th.fg(th.ok), th.base()),
        StepState::Running => ("▶", "running", th.accent(), th.accent()),
        StepState::Waiting => (WAITING, "waiting", th.muted(), th.muted()),
    };
    let mut spans = vec![
        Span::styled(sym, sym_style),
        Span::styled(format!(" #E{}", step.evidence), style.add_modifier(Modifier::BOLD)),
        Span::styled(format!(" {word:<7}"), style),
    ];
    if !step.depends_on.is_empty() {
        let cited: Vec<String> = step.depends_on.iter().map(|e| format!("#E{e}")).collect();
        spans.push(Span::styled(format!(" ← {}", cited.join(", ")), th.fg(th.path)));
    }
    if !step.thought.is_empty() {
        spans.push(Span::styled(format!("  {}", clean(&step.thought)), style));
    }
    Line::from(spans)
}

/// No plan yet: why (a plan that could not be read), and the tools by category.
fn before_plan(state: &SessionState, th: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let run = state.current.as_ref();
    for e in run.map_or(&[][..], |r| &r.transcript[..]) {
        if let Entry::RewooPlanError { attempt, error, last } = e {
            let then = if *last { "no retry left" } else { "one retry" };
            out.push(Line::from(Span::styled(
                format!("{FAILING} plan {attempt} unreadable ({then}): {}", clean(error)),
                th.fg(th.failing),
            )));
        }
    }
    let waiting = match run {
        Some(_) => "no plan yet: the planner writes one at the start of the run",
        None => "no plan yet: no task has started",
    };
    out.push(Line::from(Span::styled(waiting, th.muted())));
    out.push(Line::default());
    if state.tools.is_empty() && state.labels.is_empty() {
        out.push(Line::from(Span::styled("no tools", th.muted())));
        return out;
    }
    // The session's categories in order, then any other a label names, then
    // the tools nobody labelled.
    let mut groups: Vec<String> = state.categories.clone();
    for (c, _) in state.labels.values() {
        if !groups.contains(c) {
            groups.push(c.clone());
        }
    }
    let mut tools: Vec<&str> = state.tools.iter().map(|t| t.name.as_str()).collect();
    tools.extend(state.labels.keys().map(String::as_str).filter(|k| !state.tools.iter().any(|t| t.name == *k)));
    let tool_w = tools.iter().map(|t| width(t)).max().unwrap_or(4).min(32);
    let group = |title: String, members: Vec<&str>, out: &mut Vec<Line<'static>>| {
        if members.is_empty() {
            return;
        }
        out.push(Line::from(vec![
            Span::styled(title, th.title()),
            Span::styled(format!(" ({})", members.len()), th.muted()),
        ]));
        for t in members {
            let source = state.labels.get(t).map_or("", |(_, s)| source_word(*s));
            out.push(Line::from(vec![
                Span::raw(format!("  {t:<tool_w$}  ")),
                Span::styled(source.to_string(), th.muted()),
            ]));
        }
    };
    for g in groups {
        let members = tools.iter().copied().filter(|t| state.category(t) == Some(g.as_str())).collect();
        group(g, members, &mut out);
    }
    let unlabelled: Vec<&str> = tools.iter().copied().filter(|t| state.category(t).is_none()).collect();
    let title = if state.labels.is_empty() { "not classified yet" } else { "not labelled" };
    group(title.to_string(), unlabelled, &mut out);
    out
}
