//! A trace diff as `trace diff` prints it: the files, the session's
//! settings that differ, each run's first divergence with both sides, and a
//! table of how each run's summary moved.

use std::path::Path;

use super::{At, Divergence, DivergenceKind, RunDiff, RunTotals, Totals, TraceDiff};
use crate::text::ellipsis;

/// The widest a side's text is printed.
const WIDTH: usize = 110;

/// The whole report: the files (and their events' count), the session's settings that differ, each
/// run's first divergence, the deltas.
pub fn render(pa: &Path, a_events: usize, pb: &Path, b_events: usize, d: &TraceDiff) -> String {
    let mut out = format!(
        "A: {} ({} events, {} runs)\nB: {} ({} events, {} runs)\n",
        pa.display(),
        a_events,
        d.a.runs,
        pb.display(),
        b_events,
        d.b.runs
    );
    if d.session.is_empty() {
        out.push_str("session: same settings\n");
    } else {
        out.push_str("session: settings differ\n");
        for c in &d.session {
            out.push_str(&format!("  {:<20} {} → {}\n", c.field, c.a, c.b));
        }
    }
    out.push('\n');
    for r in &d.runs {
        out.push_str(&run_report(r));
    }
    out.push('\n');
    out.push_str(&deltas(d));
    let parted = d.runs.iter().filter(|r| r.divergence.is_some()).count();
    out.push_str(&match (parted, d.differs()) {
        (_, false) => "\nthe traces decide alike\n".to_string(),
        (0, true) => "\nevery run decides alike; the session settings differ\n".to_string(),
        (n, true) => format!("\n{n} of {} runs diverge\n", d.runs.len()),
    });
    out
}

fn run_report(r: &RunDiff) -> String {
    let task = match (&r.task_a, &r.task_b) {
        (Some(x), Some(y)) if x == y => x.clone(),
        (x, y) => format!("{} / {}", x.as_deref().unwrap_or("-"), y.as_deref().unwrap_or("-")),
    };
    let Some(div) = &r.divergence else {
        return format!("run {} ({task}): same decisions\n", r.run);
    };
    let mut out = match div.kind {
        DivergenceKind::RunMissing => {
            let only = if div.a.is_some() { "A" } else { "B" };
            format!("run {} ({task}): only in {only}\n", r.run)
        }
        k => format!("run {} ({task}): first divergence at step {}: {}\n", r.run, div.step, k.label()),
    };
    if div.kind != DivergenceKind::RunMissing {
        out.push_str(&side("A", div.a.as_ref(), div));
        out.push_str(&side("B", div.b.as_ref(), div));
        if let Some(f) = &div.field {
            let path = if f.path.is_empty() { "the value" } else { f.path.as_str() };
            out.push_str(&format!("     differs at {path}:\n       A {}\n       B {}\n", f.a, f.b));
        }
    }
    out
}

fn side(name: &str, at: Option<&At>, div: &Divergence) -> String {
    match at {
        Some(at) => {
            format!("  {name} event {:<6} {:<13} {}\n", at.event, at.name, ellipsis(&at.text, WIDTH).replace('\n', " "))
        }
        None if div.kind == DivergenceKind::EndsEarly => format!("  {name} (the trace stops here)\n"),
        None => format!("  {name} -\n"),
    }
}

/// A value of A and of B: one value when equal, else both and the change.
fn pair<T: PartialEq + Copy>(
    a: Option<T>,
    b: Option<T>,
    show: impl Fn(T) -> String,
    delta: impl Fn(T, T) -> String,
) -> String {
    match (a, b) {
        (Some(x), Some(y)) if x == y => show(x),
        (Some(x), Some(y)) => format!("{} → {}{}", show(x), show(y), delta(x, y)),
        (x, y) => format!("{} → {}", x.map_or("-".into(), &show), y.map_or("-".into(), &show)),
    }
}

fn signed_f(x: f64, y: f64) -> String {
    format!(" ({:+.4})", y - x)
}

fn signed_i(x: u64, y: u64) -> String {
    format!(" ({:+})", y as i64 - x as i64)
}

fn yes_no(s: Option<bool>) -> &'static str {
    match s {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    }
}

/// Per run and in total: outcome, success, cost, tokens, steps, tool calls.
fn deltas(d: &TraceDiff) -> String {
    let none = |_: u64, _: u64| String::new();
    let mut rows: Vec<[String; 7]> = vec![[
        String::new(),
        "outcome".into(),
        "success".into(),
        "cost".into(),
        "tokens".into(),
        "steps".into(),
        "tool calls".into(),
    ]];
    for r in &d.runs {
        let (a, b) = (r.a.as_ref(), r.b.as_ref());
        let get = |f: fn(&RunTotals) -> u64| (a.map(f), b.map(f));
        let outcome = match (a, b) {
            (Some(x), Some(y)) if x.outcome == y.outcome => x.outcome.clone(),
            _ => format!("{} → {}", a.map_or("-", |x| x.outcome.as_str()), b.map_or("-", |x| x.outcome.as_str())),
        };
        let success = match (a.map(|x| x.success), b.map(|x| x.success)) {
            (Some(x), Some(y)) if x == y => yes_no(x).to_string(),
            (x, y) => format!("{} → {}", yes_no(x.flatten()), yes_no(y.flatten())),
        };
        let (ta, tb) = get(|t| t.tokens);
        let (sa, sb) = get(|t| u64::from(t.steps));
        let (ca, cb) = get(|t| u64::from(t.tool_calls));
        rows.push([
            format!("run {}", r.run),
            outcome,
            success,
            pair(a.map(|x| x.cost), b.map(|x| x.cost), |c| format!("{c:.4}"), signed_f),
            pair(ta, tb, |n| n.to_string(), signed_i),
            pair(sa, sb, |n| n.to_string(), signed_i),
            pair(ca, cb, |n| n.to_string(), signed_i),
        ]);
    }
    let (a, b): (&Totals, &Totals) = (&d.a, &d.b);
    let rate = |t: &Totals| if t.judged == 0 { "-".to_string() } else { format!("{}/{}", t.successes, t.judged) };
    rows.push([
        "total".into(),
        pair(Some(u64::from(a.runs)), Some(u64::from(b.runs)), |n| format!("{n} runs"), none),
        if rate(a) == rate(b) { rate(a) } else { format!("{} → {}", rate(a), rate(b)) },
        pair(Some(a.cost), Some(b.cost), |c| format!("{c:.4}"), signed_f),
        pair(Some(a.tokens), Some(b.tokens), |n| n.to_string(), signed_i),
        pair(Some(a.steps), Some(b.steps), |n| n.to_string(), signed_i),
        pair(Some(a.tool_calls), Some(b.tool_calls), |n| n.to_string(), signed_i),
    ]);
    let widths: Vec<usize> = (0..7).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
            format!("{}\n", cells.join("  ").trim_end())
        })
        .collect()
}
