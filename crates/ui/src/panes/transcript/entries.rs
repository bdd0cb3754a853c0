//! What each entry of a run's transcript says, as logical lines: one per
//! thing said, in its styles, not yet fitted to the pane. The pane decides
//! which entries it needs and folds or wraps their lines to its width.

use std::borrow::Cow;

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use serde_json::Value;

use crate::PaneCtx;
use crate::engine::event::{RefuseReason, RunOutcome, ToolOutcome};
use crate::engine::fold::{Entry, RunView};
use crate::format::{fmt_cost, fmt_count, fmt_ms};
use crate::model::{Message, Role, Speaker, Usage};
use crate::panes::fault_tag;
use crate::symbols::{BLACKLISTED, FAILING, FORBIDDEN, OK};
use crate::text::{clean, fit, spans_width, width};
use crate::theme::Theme;
use crate::tool::ToolError;

/// JSON values longer than this (in characters) are folded even when the pane
/// is wide enough to show them.
const VALUE_MAX: usize = 200;
/// Folded model replies show at most this many lines.
const TEXT_LINES_MAX: usize = 8;

/// One line of the log before it is fitted to the pane.
pub(super) struct Logical {
    pub(super) spans: Vec<Span<'static>>,
    /// Folded mode cuts the line at this width even when the pane is wider
    /// (long JSON values).
    pub(super) limit: usize,
}

impl Logical {
    pub(super) fn new(spans: Vec<Span<'static>>) -> Self {
        Logical { spans, limit: usize::MAX }
    }

    fn one(text: impl Into<Cow<'static, str>>, style: Style) -> Self {
        Logical::new(vec![Span::styled(text, style)])
    }
}

/// `next`: the entry after `e`, for a reply the next entry shows better.
pub(super) fn entry_lines(e: &Entry, next: Option<&Entry>, ctx: &PaneCtx, w: usize, out: &mut Vec<Logical>) {
    let th = ctx.theme;
    let unfold = ctx.nav.unfold;
    match e {
        Entry::Prompt { role, model, messages } => prompt_lines(*role, model, messages, ctx, w, out),
        Entry::Reply { role, model, text, usage, cost, latency_ms } => {
            out.push(Logical::new(vec![
                Span::styled(format!("◂ {role}"), th.accent()),
                Span::styled(reply_stats(model, usage, *cost, *latency_ms, &ctx.state.cost_unit), th.muted()),
            ]));
            if text.trim().is_empty() {
                out.push(Logical::one("  (empty reply)", th.muted()));
            }
            // A plan that was read follows, laid out: the raw text would say it twice.
            if *role == Role::Planner && !unfold && matches!(next, Some(Entry::Plan { .. })) {
                let n = text.lines().count();
                out.push(Logical::one(format!("  ({n} lines, read as the plan below; u shows the text)"), th.muted()));
                return;
            }
            text_block(text, "  ", th.base(), unfold, th, out);
        }
        Entry::Streaming { text, .. } => {
            let n = text.split_whitespace().count();
            out.push(Logical::one(format!("◂ streaming… ({n} words so far)"), th.accent()));
            // The tail of a long reply, where the new tokens arrive.
            let lines: Vec<&str> = text.lines().collect();
            let from = if unfold { 0 } else { lines.len().saturating_sub(TEXT_LINES_MAX) };
            if from > 0 {
                out.push(Logical::one(format!("  … ({from} lines above)"), th.muted()));
            }
            for line in &lines[from..] {
                out.push(Logical::new(vec![
                    Span::styled("  ", th.base()),
                    Span::styled(clean(line).into_owned(), th.base()),
                ]));
            }
        }
        Entry::ModelError { role, model, error } => {
            let style = th.fg(th.failing).add_modifier(Modifier::BOLD);
            out.push(Logical::one(format!("{FAILING} {role} · {model} failed: {}", clean(error)), style));
        }
        Entry::Call { tool, args, lane, .. } => {
            let mut head = vec![Span::styled("→ ", th.muted()), Span::styled(tool.clone(), bold(th))];
            head.extend(lane_tag(*lane, th));
            head.push(Span::styled(" ", th.base()));
            value_lines(head, args, None, th.base(), unfold, out);
        }
        Entry::Result { tool, outcome, fault, latency_ms, lane, filtered, .. } => {
            let ok = matches!(outcome, ToolOutcome::Ok { .. });
            let (sym, sym_style) =
                if ok { (OK, th.fg(th.ok)) } else { (FAILING, th.fg(th.failing).add_modifier(Modifier::BOLD)) };
            let tool_style = if ok { bold(th) } else { th.fg(th.failing).add_modifier(Modifier::BOLD) };
            let mut head = vec![Span::styled("← ", th.muted()), Span::styled(tool.clone(), tool_style)];
            head.extend(lane_tag(*lane, th));
            head.push(Span::styled(" ", th.base()));
            head.push(Span::styled(sym, sym_style));
            if let Some(f) = fault {
                head.push(Span::styled(" ", th.base()));
                head.push(Span::styled(fault_tag(f), th.fg(th.fault).add_modifier(Modifier::BOLD)));
            }
            head.push(Span::styled(" ", th.base()));
            let mut tail = format!(" · {}", fmt_ms(*latency_ms));
            if *filtered {
                tail.push_str(" · filtered: the solver sees null");
            }
            let tail = Span::styled(tail, th.muted());
            match outcome {
                ToolOutcome::Ok { value } => value_lines(head, value, Some(tail), th.base(), unfold, out),
                ToolOutcome::Err { error } => {
                    head.push(Span::styled(tool_error(error), th.fg(th.failing)));
                    head.push(tail);
                    out.push(Logical::new(head));
                }
            }
        }
        Entry::Refusal { tool, reason, detail } => {
            let (sym, colour, why) = match reason {
                RefuseReason::Forbidden => (FORBIDDEN, th.forbidden, "forbidden, its budget is spent"),
                RefuseReason::Blacklisted => (BLACKLISTED, th.blacklisted, "blacklisted in this task"),
                RefuseReason::NotOffered => ("!", th.accent, "not among the candidates"),
                RefuseReason::Malformed => ("!", th.accent, "the reply was not an action"),
                RefuseReason::OverBudget => (FORBIDDEN, th.forbidden, "the step would overspend the budget"),
                RefuseReason::Repeated => ("!", th.accent, "the same call already answered"),
            };
            let style = th.fg(colour).add_modifier(Modifier::BOLD);
            let mut spans = vec![Span::styled(format!("{sym} refused {tool}: {why}"), style)];
            if !detail.is_empty() {
                spans.push(Span::styled(format!(" — {}", clean(detail)), th.fg(colour)));
            }
            out.push(Logical::new(spans));
        }
        Entry::Plan { attempt, steps } => {
            let n = steps.len();
            let which = if *attempt > 1 { format!(" (attempt {attempt}, after a retry)") } else { String::new() };
            out.push(Logical::new(vec![
                Span::styled(format!("▤ plan{which}"), th.accent()),
                Span::styled(format!(": {n} step{}", if n == 1 { "" } else { "s" }), th.muted()),
            ]));
            for st in steps {
                if !st.thought.is_empty() {
                    out.push(Logical::one(format!("  Plan: {}", clean(&st.thought)), th.muted()));
                }
                let mut spans = vec![Span::styled(format!("  #E{}", st.evidence), th.accent()), Span::raw(" = ")];
                for (i, c) in st.calls.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled("; ", th.muted()));
                    }
                    spans.push(Span::styled(c.tool.clone(), bold(th)));
                    spans.push(Span::styled(format!("[{}]", clean(&c.input)), th.base()));
                }
                if !st.depends_on.is_empty() {
                    let cited: Vec<String> = st.depends_on.iter().map(|e| format!("#E{e}")).collect();
                    spans.push(Span::styled(format!("  ← {}", cited.join(", ")), th.fg(th.path)));
                }
                out.push(Logical::new(spans));
            }
        }
        Entry::RewooPlanError { attempt, error, last } => {
            let then = if *last { "the run fails" } else { "the planner gets one retry" };
            let style = th.fg(th.failing).add_modifier(Modifier::BOLD);
            out.push(Logical::new(vec![
                Span::styled(format!("{FAILING} plan {attempt} unreadable"), style),
                Span::styled(format!(" ({then}): "), th.fg(th.failing)),
                Span::styled(clean(error).into_owned(), th.fg(th.failing)),
            ]));
        }
        Entry::StepStart { evidence, thought, lanes } => {
            let at_once = match lanes {
                1 => "1 lane".to_string(),
                n => format!("{n} lanes at once"),
            };
            let mut spans = vec![
                Span::styled(format!("▸ step #E{evidence}"), th.accent()),
                Span::styled(format!(" · {at_once}"), th.muted()),
            ];
            if !thought.is_empty() {
                spans.push(Span::styled(format!(" — {}", clean(thought)), th.base()));
            }
            out.push(Logical::new(spans));
        }
        Entry::Evidence { evidence, results, tokens_saved } => {
            let nulls = results.iter().filter(|(_, r)| r.is_none()).count();
            let mut facts = format!(" · {} result{}", results.len(), if results.len() == 1 { "" } else { "s" });
            if nulls > 0 {
                facts.push_str(&format!(", {nulls} null"));
            }
            if *tokens_saved > 0 {
                facts.push_str(&format!(" · {tokens_saved} tokens saved"));
            }
            out.push(Logical::new(vec![
                Span::styled(format!("≡ evidence #E{evidence}"), th.accent()),
                Span::styled(facts, th.muted()),
            ]));
            for (i, (tool, r)) in results.iter().enumerate() {
                let head = vec![
                    Span::styled(format!("  lane {i} "), th.muted()),
                    Span::styled(tool.clone(), bold(th)),
                    Span::styled(": ", th.base()),
                ];
                match r {
                    Some(v) => value_lines(head, v, None, th.base(), unfold, out),
                    None => {
                        let mut spans = head;
                        spans.push(Span::styled("null", bold(th)));
                        spans.push(Span::styled(" (filtered: failed or found nothing)", th.muted()));
                        out.push(Logical::new(spans));
                    }
                }
            }
        }
        Entry::Program { round, program, diff, by_user } => {
            let who = if *by_user {
                "your edit"
            } else if *round == 0 {
                "program"
            } else {
                "rewrite"
            };
            let lines = program.lines().count();
            out.push(Logical::new(vec![
                Span::styled(format!("▸ {who}"), th.accent()),
                Span::styled(
                    format!(" · round {round} · {lines} line{}", if lines == 1 { "" } else { "s" }),
                    th.muted(),
                ),
            ]));
            // A rewrite shows what changed; the first program shows whole.
            let body: Vec<&str> = if diff.is_empty() {
                program.lines().collect()
            } else {
                diff.lines().filter(|l| !l.starts_with("---") && !l.starts_with("+++")).collect()
            };
            let shown = if unfold { body.len() } else { body.len().min(12) };
            for l in &body[..shown] {
                let style = match l.chars().next() {
                    Some('+') if !diff.is_empty() => th.fg(th.ok),
                    Some('-') if !diff.is_empty() => th.fg(th.failing),
                    _ => th.base(),
                };
                out.push(content_line(l, "  ", style, th));
            }
            if shown < body.len() {
                out.push(Logical::one(format!("  … {} more line(s) (u unfolds)", body.len() - shown), th.muted()));
            }
        }
        Entry::ProgramFailed { round, error, line, tool, last } => {
            let mut spans = vec![Span::styled(
                format!("✗ program failed (round {round})"),
                th.fg(th.failing).add_modifier(Modifier::BOLD),
            )];
            if let Some(l) = line {
                spans.push(Span::styled(format!(" at line {l}"), th.muted()));
            }
            if let Some(t) = tool {
                spans.push(Span::styled(" · blamed on ", th.muted()));
                spans.push(Span::styled(t.clone(), bold(th)));
            }
            if *last {
                spans.push(Span::styled(" · no round left", th.muted()));
            }
            out.push(Logical::new(spans));
            out.push(content_line(error, "  ", th.fg(th.failing), th));
        }
        Entry::ProgramReturned { value } => {
            value_lines(vec![Span::styled("✓ program returned ", th.fg(th.ok))], value, None, th.base(), unfold, out);
        }
        Entry::Probe { tool, sample, question, schema, error } => {
            out.push(Logical::new(vec![
                Span::styled(format!("? probe {tool} #{sample}"), th.accent()),
                Span::styled(format!(" — {}", clean(question)), th.base()),
            ]));
            match (schema, error) {
                (Some(s), _) => {
                    value_lines(vec![Span::styled("  schema ", th.muted())], s, None, th.base(), unfold, out)
                }
                (None, Some(e)) => out.push(content_line(e, "  ", th.fg(th.failing), th)),
                (None, None) => {}
            }
        }
        Entry::Note(text) => out.push(Logical::new(vec![
            Span::styled("• ", th.accent()),
            Span::styled(clean(text).into_owned(), th.accent()),
        ])),
    }
}

fn prompt_lines(role: Role, model: &str, messages: &[Message], ctx: &PaneCtx, w: usize, out: &mut Vec<Logical>) {
    let th = ctx.theme;
    out.push(Logical::new(vec![
        Span::styled(format!("▸ {role}"), th.accent()),
        Span::styled(format!(" prompt · {model}"), th.muted()),
    ]));
    if ctx.nav.unfold {
        for m in messages {
            out.push(Logical::one(format!("  {}:", m.role.as_str()), bold(th)));
            let style = if m.role == Speaker::System { th.muted() } else { th.base() };
            for line in m.content.lines() {
                out.push(content_line(line, "    ", style, th));
            }
        }
        return;
    }
    // The system prompt is the same at every step: one line says it is there.
    let mut shown = 0;
    if let Some(sys) = messages.iter().find(|m| m.role == Speaker::System) {
        shown += 1;
        let n = sys.content.lines().count();
        let first = sys.content.lines().next().unwrap_or("");
        let suffix = if n > 1 { format!(" ({n} lines)") } else { String::new() };
        let prefix = "  system: ";
        let room = w.saturating_sub(width(prefix) + width(&suffix));
        out.push(Logical::one(format!("{prefix}{}{suffix}", fit(&clean(first), room)), th.muted()));
    }
    let user = messages.iter().rposition(|m| m.role == Speaker::User);
    if user.is_some() {
        shown += 1;
    }
    let earlier = messages.len().saturating_sub(shown);
    if earlier > 0 {
        out.push(Logical::one(format!("  (+{earlier} earlier messages)"), th.muted()));
    }
    if let Some(u) = user {
        for line in messages[u].content.lines().filter(|l| !l.trim().is_empty()) {
            out.push(content_line(line, "  ", th.base(), th));
        }
    }
}

/// A line of a prompt; candidate lines (`- name [weight 13]: …`) get their
/// name and weight picked out, since they are what the model chose from.
fn content_line(line: &str, indent: &'static str, style: Style, th: &Theme) -> Logical {
    let line = clean(line).into_owned();
    let mut spans = vec![Span::styled(indent, style)];
    if line.starts_with("- ") {
        let (head, rest) = match line.find(": ") {
            Some(i) => (&line[..i], &line[i..]),
            None => (line.as_str(), ""),
        };
        match head.find(" [") {
            Some(j) => {
                spans.push(Span::styled(head[..j].to_string(), bold(th)));
                spans.push(Span::styled(head[j..].to_string(), th.fg(th.chart_weight).add_modifier(Modifier::BOLD)));
            }
            None => spans.push(Span::styled(head.to_string(), bold(th))),
        }
        spans.push(Span::styled(rest.to_string(), style));
    } else {
        spans.push(Span::styled(line, style));
    }
    Logical::new(spans)
}

/// Free text (a model's reply), capped to a few lines when folded.
fn text_block(text: &str, indent: &'static str, style: Style, unfold: bool, th: &Theme, out: &mut Vec<Logical>) {
    let total = text.lines().count();
    let cap = if unfold { usize::MAX } else { TEXT_LINES_MAX };
    for line in text.lines().take(cap) {
        out.push(Logical::new(vec![Span::styled(indent, style), Span::styled(clean(line).into_owned(), style)]));
    }
    if total > cap {
        out.push(Logical::one(format!("{indent}… (+{} lines)", total - cap), th.muted()));
    }
}

/// `head` followed by a JSON value (and `tail`): compact on one line, or
/// pretty-printed below the head when unfolded and long.
fn value_lines(
    head: Vec<Span<'static>>,
    value: &Value,
    tail: Option<Span<'static>>,
    style: Style,
    unfold: bool,
    out: &mut Vec<Logical>,
) {
    let compact = value.to_string();
    let long = compact.chars().count() > VALUE_MAX;
    let mut spans = head;
    if unfold && long {
        spans.extend(tail);
        out.push(Logical::new(spans));
        let pretty = serde_json::to_string_pretty(value).unwrap_or(compact);
        for line in pretty.lines() {
            out.push(Logical::new(vec![Span::styled("    ", style), Span::styled(line.to_string(), style)]));
        }
        return;
    }
    let head_width = spans_width(&spans);
    spans.push(Span::styled(compact, style));
    spans.extend(tail);
    let limit = if long { head_width + VALUE_MAX } else { usize::MAX };
    out.push(Logical { spans, limit });
}

/// The last line of a finished run: what it answered and whether that was right.
pub(super) fn outcome_lines(ctx: &PaneCtx, run: &RunView) -> Option<Vec<Logical>> {
    let th = ctx.theme;
    let s = ctx.state.finished.iter().rev().find(|s| s.run == run.run)?;
    let (text, style) = match (&s.outcome, s.success) {
        (RunOutcome::Answered, Some(true)) => (format!("{OK} answered: {}", answer(s.answer.as_deref())), th.fg(th.ok)),
        (RunOutcome::Answered, Some(false)) => {
            let gold = run.gold.as_deref().map(|g| format!(" (expected {})", clean(g))).unwrap_or_default();
            (format!("{FAILING} answered: {}{gold}", answer(s.answer.as_deref())), th.fg(th.failing))
        }
        (RunOutcome::Answered, None) => (format!("■ answered: {}", answer(s.answer.as_deref())), th.accent()),
        (RunOutcome::MaxSteps, _) => ("■ stopped at the step limit without an answer".to_string(), th.fg(th.failing)),
        (RunOutcome::Stopped, _) => ("■ stopped by the user".to_string(), th.accent()),
        (RunOutcome::Failed { error }, _) => (format!("{FAILING} run failed: {}", clean(error)), th.fg(th.failing)),
        (RunOutcome::Restarted, _) => ("■ restarted".to_string(), th.accent()),
        (RunOutcome::BadPlan { error }, _) => {
            (format!("{FAILING} no readable plan: {}", clean(error)), th.fg(th.failing))
        }
        (RunOutcome::OutOfBudget, _) => {
            ("■ out of budget: no money left for another model call".to_string(), th.fg(th.forbidden))
        }
    };
    let stats =
        format!(" · {} steps · {} tool calls · {} {}", s.steps, s.tool_calls, fmt_cost(s.cost), ctx.state.cost_unit);
    let mut lines = vec![
        Logical::new(Vec::new()),
        Logical::new(vec![Span::styled(text, style.add_modifier(Modifier::BOLD)), Span::styled(stats, th.muted())]),
    ];
    match &s.expect {
        Some(v) if v.met() => {
            lines.push(Logical::new(vec![Span::styled(format!("{OK} expectations met ({})", v.checked), th.fg(th.ok))]))
        }
        Some(v) => {
            let head = format!("{FAILING} {} of {} expectations broken", v.broken.len(), v.checked);
            lines.push(Logical::new(vec![Span::styled(head, th.fg(th.failing).add_modifier(Modifier::BOLD))]));
            for b in &v.broken {
                lines.push(Logical::new(vec![
                    Span::styled(format!("  {}: ", b.expect), th.fg(th.failing)),
                    Span::raw(clean(&b.detail).into_owned()),
                ]));
            }
        }
        None => {}
    }
    Some(lines)
}

fn answer(a: Option<&str>) -> String {
    a.map(|a| clean(a).into_owned()).unwrap_or_else(|| "(none)".to_string())
}

fn reply_stats(model: &str, usage: &Usage, cost: f64, latency_ms: u64, unit: &str) -> String {
    format!(
        " reply · {model} · {}→{} tok · {} {unit} · {}",
        fmt_count(usage.prompt_tokens),
        fmt_count(usage.completion_tokens),
        fmt_cost(cost),
        fmt_ms(latency_ms)
    )
}

fn tool_error(e: &ToolError) -> String {
    let kind = serde_json::to_value(e.kind).ok().and_then(|v| v.as_str().map(|s| s.replace('_', " ")));
    format!("{}: {}", kind.unwrap_or_else(|| "error".to_string()), clean(&e.message))
}

/// ` lane N` after a tool's name, for a call of a plan step's lane.
fn lane_tag(lane: Option<u32>, th: &Theme) -> Option<Span<'static>> {
    lane.map(|l| Span::styled(format!(" lane {l}"), th.muted()))
}

fn bold(th: &Theme) -> Style {
    th.base().add_modifier(Modifier::BOLD)
}
