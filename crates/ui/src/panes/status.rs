//! The status bar: what the engine is doing, where the session stands, the
//! parameters in force and the keys that work now. One or two lines, no
//! border; what matters most comes first, so a narrow screen loses the rest.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::engine::fold::{Mode, SessionState};
use crate::format::{fmt_cost, fmt_ms};
use crate::panes::program;
use crate::symbols::{FAILING, OK, RESTARTING};
use crate::text::{clean, fit, spans_width, width};
use crate::theme::Theme;
use crate::tool::mcp::ServerState;
use crate::{Pane, PaneCtx};

const SEP: &str = " · ";
/// The state line is dense; plain gaps keep α β τ B K on it at 80 columns.
const GAP: &str = "  ";

type Segment = Vec<Span<'static>>;

pub fn render(frame: &mut Frame, area: Rect, ctx: &PaneCtx) {
    if area.width == 0 || area.height == 0 {
        return;
    }
    let th = ctx.theme;
    let w = area.width as usize;
    let info = info(ctx);
    let (keys, always) = keys(ctx);
    let flash = ctx.nav.flash.as_deref().map(|f| {
        // The flash keeps room for the help key, however long it is.
        let room = w.saturating_sub(spans_width(&always) + width(SEP) + 2);
        vec![Span::styled(format!(" {} ", fit(&clean(f), room.max(1))), flash_style(th))]
    });
    let lines = if area.height >= 2 {
        let mut second: Vec<Segment> = flash.into_iter().collect();
        second.extend(keys);
        vec![pack(info, Vec::new(), GAP, w, th), pack(second, always, SEP, w, th)]
    } else {
        let mut one = info;
        if let Some(f) = flash {
            one.insert(1.min(one.len()), f);
        }
        one.extend(keys);
        vec![pack(one, always, SEP, w, th)]
    };
    frame.render_widget(Paragraph::new(lines).style(th.base()), area);
}

/// The run state and where the session stands, most important first.
fn info(ctx: &PaneCtx) -> Vec<Segment> {
    let (s, th) = (ctx.state, ctx.theme);
    let mut out = Vec::new();
    if let Some(r) = &ctx.nav.replay {
        out.push(vec![Span::styled(
            format!(" REPLAY event {}/{} ", r.cursor, r.total),
            th.fg(th.accent).add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )]);
    }
    if let Some(id) = &ctx.nav.attached {
        out.push(vec![Span::styled(
            format!(" ATTACHED {id} · d detach "),
            th.fg(th.accent).add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )]);
    }
    if let Some(from) = &ctx.nav.watching {
        out.push(vec![Span::styled(
            format!(" OTLP {from} · read-only "),
            th.fg(th.accent).add_modifier(Modifier::REVERSED | Modifier::BOLD),
        )]);
        let (spans, traces) = s.spans_waiting;
        if spans > 0 {
            let of = if traces == 1 { "1 trace".to_string() } else { format!("{traces} traces") };
            out.push(plain(format!("{spans} spans in {of} not ended yet"), th));
        }
    }
    let (label, colour) = mode(s, th);
    out.push(vec![Span::styled(format!(" {label} "), th.fg(colour).add_modifier(Modifier::REVERSED | Modifier::BOLD))]);
    if let Some(f) = &s.forked_from {
        let parent =
            std::path::Path::new(&f.parent).file_name().map_or(f.parent.clone(), |n| n.to_string_lossy().into());
        let how = if f.resumed { "resumed" } else { "forked" };
        out.push(vec![Span::styled(format!("{how} from {parent}@{}", f.at), th.fg(th.accent))]);
    }
    if let Some(servers) = servers(s, th) {
        out.push(servers);
    }
    if let Some(agent) = agent(s, th) {
        out.push(agent);
    }
    let task = match &s.current {
        Some(r) => format!("task {}/{}", r.index, s.total_tasks),
        None => format!("task –/{}", s.total_tasks),
    };
    out.push(plain(task, th));
    if let Some(r) = &s.current {
        out.push(plain(format!("run {}", r.run), th));
    }
    out.push(plain(format!("step {}", s.step), th));
    if let Some(g) = &s.graph {
        out.push(plain(format!("iteration {}", g.iteration), th));
    }
    let p = &s.params;
    let budget = p.budget.map_or_else(|| "∞".to_string(), fmt_cost);
    out.push(vec![
        Span::styled(format!("α {} β {} τ {} ", p.alpha, p.beta, p.tau), th.base()),
        Span::styled(format!("B {budget} "), th.base()),
        Span::styled(format!("K {}", p.top_k), th.base()),
    ]);
    out.push(vec![Span::styled(format!("pace {}", fmt_ms(s.pace_ms)), th.muted())]);
    out
}

/// The MCP servers and their state (`mcp time ✓ everything ↻`): a server
/// restarting or down is what a user must see first after the mode.
fn servers(s: &SessionState, th: &Theme) -> Option<Segment> {
    if s.servers.is_empty() {
        return None;
    }
    let mut spans = vec![Span::styled("mcp", th.muted())];
    for (name, (state, _)) in &s.servers {
        let (sym, colour) = match state {
            ServerState::Running => (OK, th.ok),
            ServerState::Restarting => (RESTARTING, th.fault),
            ServerState::Down => (FAILING, th.failing),
        };
        spans.push(Span::styled(format!(" {name} "), th.base()));
        let look = th.fg(colour).add_modifier(Modifier::BOLD);
        let word = if *state == ServerState::Running { String::new() } else { format!(" {state}") };
        spans.push(Span::styled(format!("{sym}{word}"), look));
    }
    Some(spans)
}

/// An outside agent's process: its pid while it runs, how it ended after.
fn agent(s: &SessionState, th: &Theme) -> Option<Segment> {
    let a = s.current.as_ref()?.agent.as_ref()?;
    let (word, colour) = match &a.exit {
        None => (format!("agent pid {} {OK} running", a.pid), th.ok),
        Some(e) => match (e.code, &e.error) {
            (Some(0), None) => (format!("agent pid {} exited 0", a.pid), th.ok),
            (Some(c), None) => (format!("agent pid {} {FAILING} exited {c}", a.pid), th.failing),
            (None, None) => (format!("agent pid {} {FAILING} killed", a.pid), th.failing),
            (_, Some(_)) => (format!("agent {FAILING} did not start"), th.failing),
        },
    };
    Some(vec![Span::styled(word, th.fg(colour).add_modifier(Modifier::BOLD))])
}

fn mode(s: &SessionState, th: &Theme) -> (&'static str, ratatui::style::Color) {
    match s.mode {
        Mode::Idle => ("○ idle", th.muted),
        Mode::Paused => ("‖ paused", th.fault),
        Mode::Finished if s.stopped => ("■ stopped", th.muted),
        Mode::Finished => ("■ finished", th.muted),
        Mode::Suspended => ("⏏ suspended", th.fault),
        Mode::Running if all_done(s) => ("■ all tasks done", th.muted),
        Mode::Running => ("▶ running", th.ok),
    }
}

/// A workbench engine lingers after the last task, waiting for the user, but
/// is no longer running anything.
fn all_done(s: &SessionState) -> bool {
    s.current.as_ref().is_some_and(|r| {
        r.index >= s.total_tasks && s.finished.last().is_some_and(|f| f.run == r.run) && s.picked.is_none()
    })
}

/// The keys that work now, and the ones that are always shown.
fn keys(ctx: &PaneCtx) -> (Vec<Segment>, Segment) {
    let th = ctx.theme;
    let always = [("?", "help"), ("q", "quit")];
    // The keys of a live run, after space (whose meaning follows the state).
    const LIVE: [(&str, &str); 12] = [
        ("s", "step"),
        ("f", "fault"),
        ("x", "clear"),
        ("e", "score"),
        ("p", "params"),
        ("m", "model"),
        ("t", "task"),
        ("c", "categories"),
        ("r", "restart"),
        ("/", "find"),
        ("tab", "pane"),
        ("z", "zoom"),
    ];
    // The lane keys, first while they apply: the workers pane shows a running step.
    const LANES: [(&str, &str); 4] = [("↑/↓", "lane"), ("h", "hold"), ("n", "step lane"), ("k", "fail lane")];
    let lanes = ctx.nav.replay.is_none() && ctx.state.mode != Mode::Finished && lanes_have_keys(ctx);
    let mut list: Vec<(&str, &str)> = if lanes { LANES.to_vec() } else { Vec::new() };
    list.extend(if ctx.nav.replay.is_some() {
        vec![("←/→", "step"), ("Home/End", ""), ("0-9", "jump")]
    } else {
        match ctx.state.mode {
            Mode::Finished => vec![("/", "find"), ("tab", "pane"), ("z", "zoom")],
            Mode::Paused => std::iter::once(("space", "resume")).chain(LIVE).collect(),
            _ => std::iter::once(("space", "pause")).chain(LIVE).collect(),
        }
    });
    if let Some(keys) = program_keys(ctx) {
        // On the program pane, e edits the program, not a node's score.
        list.retain(|k| *k != ("e", "score"));
        list.splice(0..0, keys);
    }
    let mut tail = Vec::new();
    for (i, (k, d)) in always.iter().enumerate() {
        if i > 0 {
            tail.push(Span::styled(SEP, th.muted()));
        }
        tail.extend(key(k, d, th));
    }
    (list.iter().map(|(k, d)| key(k, d, th)).collect(), tail)
}

/// The program pane's keys, first while it has the focus: `e` while the
/// run goes on, `d` and `o` when there is a diff or a probe to show.
fn program_keys(ctx: &PaneCtx) -> Option<Vec<(&'static str, &'static str)>> {
    let (v, s) = (ctx.nav, ctx.state);
    if v.zoom.unwrap_or(v.focus).placed(s.strategy) != Pane::Program {
        return None;
    }
    let mut keys = Vec::new();
    if v.replay.is_none() && s.mode != Mode::Finished {
        keys.push(("e", "edit program"));
    }
    if ctx.program().is_some_and(program::has_diff) {
        keys.push(("d", "diff"));
    }
    if !s.probes.is_empty() {
        keys.push(("o", "probes"));
    }
    Some(keys)
}

/// The workers pane has the focus and a plan step runs (or an agent's
/// calls are open).
fn lanes_have_keys(ctx: &PaneCtx) -> bool {
    let v = ctx.nav;
    v.zoom.unwrap_or(v.focus) == Pane::Workers
        && ctx.state.current.as_ref().and_then(|r| r.active_lanes()).is_some_and(|s| !s.lanes.is_empty())
}

fn key(k: &str, desc: &str, th: &Theme) -> Segment {
    let mut s = vec![Span::styled(k.to_string(), th.accent())];
    if !desc.is_empty() {
        s.push(Span::styled(format!(" {desc}"), th.muted()));
    }
    s
}

fn plain(text: String, th: &Theme) -> Segment {
    vec![Span::styled(text, th.base())]
}

fn flash_style(th: &Theme) -> Style {
    th.selected().fg(th.text)
}

/// Segments in order while they fit in `w`, keeping room for `tail` at the end.
fn pack(segments: Vec<Segment>, tail: Segment, sep: &'static str, w: usize, th: &Theme) -> Line<'static> {
    let sep_w = width(sep);
    let tail_w = spans_width(&tail);
    let reserve = if tail.is_empty() { 0 } else { tail_w + sep_w };
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for seg in segments {
        let sw = spans_width(&seg);
        let extra = if spans.is_empty() { sw } else { sw + sep_w };
        if used + extra + reserve > w {
            if spans.is_empty() && tail_w > w {
                // Too narrow for anything whole: what fits of the help key,
                // or else of the first segment.
                let shown = if tail.is_empty() { &seg } else { &tail };
                let text: String = shown.iter().map(|s| s.content.as_ref()).collect();
                let style = shown.first().map_or_else(Style::default, |s| s.style);
                spans.push(Span::styled(fit(&text, w).into_owned(), style));
                return Line::from(spans);
            }
            break;
        }
        if !spans.is_empty() {
            spans.push(Span::styled(sep, th.muted()));
        }
        spans.extend(seg);
        used += extra;
    }
    if !tail.is_empty() {
        let extra = if spans.is_empty() { tail_w } else { tail_w + sep_w };
        if used + extra <= w {
            if !spans.is_empty() {
                spans.push(Span::styled(sep, th.muted()));
            }
            spans.extend(tail);
        }
    }
    Line::from(spans)
}
