//! A scan's report: `report.md` (the kinds of failure, then each rule's
//! findings, each example with the `replay` line that opens it at the
//! event its scanner pointed to) and `groups.svg`/`groups.png`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::eval::plot::{COLOURS, PlotError, draw_error, write_png, write_svg};

use super::group::Group;
use super::rules::RULES;
use super::run::{Finding, RunScan};
use super::source::Source;

/// What the report says besides the rows and groups.
pub struct Header<'a> {
    pub source: &'a Source,
    pub model: Option<&'a str>,
    pub embedder: Option<&'a str>,
    pub threshold: f32,
}

/// The replay line that opens a run's trace at event `event`.
pub fn replay_line(source: &Source, trace: &str, event: usize) -> String {
    let path = source.path_of(trace);
    let shown = path.display().to_string();
    let quoted = if shown.contains(char::is_whitespace) { format!("'{shown}'") } else { shown };
    format!("switchyard replay {quoted} --at {event}")
}

/// Writes `report.md` and the plot into `dir`; the files written.
pub fn write(
    dir: &Path,
    h: &Header,
    rows: &[RunScan],
    groups: &[Group],
    validation: Option<&[super::validate::Score]>,
) -> Result<Vec<PathBuf>, PlotError> {
    let md = dir.join("report.md");
    let svg = dir.join("groups.svg");
    let png = dir.join("groups.png");
    let mut text = markdown(h, rows, groups, !groups.is_empty() || rows.iter().any(|r| !r.findings.is_empty()));
    if let Some(scores) = validation {
        text += "## Validation\n\nEach scanner against the faults the runs met (the trace's marks of injected faults, \
                 which no scanner reads): precision over the runs it flagged, recall over the failed runs of its \
                 kind. The model scanner finds a kind through the groups most of whose runs met it.\n\n";
        text += &super::validate::table(scores);
    }
    crate::eval::write_atomic(&md, text.as_bytes()).map_err(|source| PlotError::Io { path: md.clone(), source })?;
    let mut written = vec![md];
    if let Some(picture) = plot(&svg, rows, groups)? {
        write_svg(&svg, &picture)?;
        write_png(&png, &picture)?;
        written.extend([svg, png]);
    }
    Ok(written)
}

fn pct(n: usize, of: usize) -> String {
    if of == 0 { "–".into() } else { format!("{:.0}%", 100.0 * n as f64 / of as f64) }
}

fn tasks_of<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for t in ids {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    let more = seen.len().saturating_sub(8);
    let mut s = seen.into_iter().take(8).collect::<Vec<_>>().join(", ");
    if more > 0 {
        s += &format!(" and {more} more");
    }
    s
}

pub fn markdown(h: &Header, rows: &[RunScan], groups: &[Group], with_plot: bool) -> String {
    let failed = rows.iter().filter(|r| r.failed).count();
    let named = rows.iter().filter(|r| r.failure.is_some()).count();
    let unscanned: Vec<&RunScan> = rows.iter().filter(|r| r.unscanned.is_some()).collect();
    let mut s = format!("# Scan of {}\n\n", h.source.describe());
    s += &format!("{} runs scanned, {failed} failed. ", rows.len());
    match h.model {
        Some(m) => {
            s += &format!("The scanner model ({m}) named {named} of the failed runs' failures");
            if !unscanned.is_empty() {
                s += &format!(" ({} unscanned, below)", unscanned.len());
            }
            s += &format!(
                "; they are grouped by {} at similarity {:.2}.\n\n",
                h.embedder.unwrap_or("their words"),
                h.threshold
            );
        }
        None => s += "Rule scanners only (no scanner model).\n\n",
    }
    if with_plot {
        s += "![Kinds of failure and rule findings](groups.png)\n\n";
    }
    if h.model.is_some() {
        s += "## Kinds of failure\n\n| # | kind | runs | share | tasks |\n|---:|---|---:|---:|---|\n";
        for (i, g) in groups.iter().enumerate() {
            s += &format!(
                "| {} | {} | {} | {:.0}% | {} |\n",
                i + 1,
                g.name,
                g.count,
                100.0 * g.share,
                tasks_of(g.tasks.iter().map(String::as_str))
            );
        }
        s.push('\n');
        for (i, g) in groups.iter().enumerate() {
            s += &format!("### {}. {} ({} runs)\n\n", i + 1, g.name, g.count);
            let phrases: Vec<String> = g.phrases.iter().take(6).map(|(p, n)| format!("\"{p}\" ×{n}")).collect();
            s += &format!("Phrases: {}.\n", phrases.join(", "));
            if let Some(why) = &g.unnamed {
                s += &format!("(Named by its most common phrase: {why}.)\n");
            }
            s.push('\n');
            for e in &g.examples {
                s += &format!(
                    "- {} run {} at E{}: {}\n  `{}`\n",
                    e.task_id,
                    e.run,
                    e.event,
                    e.phrase,
                    replay_line(h.source, &e.trace, e.event)
                );
            }
            s.push('\n');
        }
    }
    s += "## Rule scanners\n\n| scanner | finds | runs | of all | of failed | tasks |\n|---|---|---:|---:|---:|---|\n";
    for rule in RULES {
        let hits: Vec<&RunScan> = rows.iter().filter(|r| r.findings.iter().any(|f| f.scanner == rule.name())).collect();
        let failed_hits = hits.iter().filter(|r| r.failed).count();
        s += &format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            rule.name(),
            rule.meaning(),
            hits.len(),
            pct(hits.len(), rows.len()),
            pct(failed_hits, failed),
            tasks_of(hits.iter().map(|r| r.task_id.as_str()))
        );
    }
    s.push('\n');
    for rule in RULES {
        let hits: Vec<(&RunScan, &Finding)> = rows
            .iter()
            .filter_map(|r| Some((r, r.findings.iter().find(|f| f.scanner == rule.name())?)))
            .take(3)
            .collect();
        if hits.is_empty() {
            continue;
        }
        s += &format!("### `{}`\n\n", rule.name());
        for (r, f) in hits {
            s += &format!(
                "- {} run {} at E{}: {}\n  `{}`\n",
                r.task_id,
                r.run,
                f.event,
                f.detail,
                replay_line(h.source, &r.trace, f.event)
            );
        }
        s.push('\n');
    }
    if !unscanned.is_empty() {
        s += "## Unscanned\n\nFailed runs whose failure the scanner model did not name, and why.\n\n";
        for r in &unscanned {
            s += &format!("- {} run {} ({}): {}\n", r.task_id, r.run, r.trace, r.unscanned.as_deref().unwrap_or(""));
        }
        s.push('\n');
    }
    s
}

/// Horizontal bars: each kind of failure's runs, then each rule's.
fn plot(path: &Path, rows: &[RunScan], groups: &[Group]) -> Result<Option<String>, PlotError> {
    use plotters::prelude::*;
    let mut bars: Vec<(String, usize, RGBColor)> =
        groups.iter().take(12).map(|g| (crate::text::ellipsis(&g.name, 43), g.count, COLOURS[0])).collect();
    let mut by_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        for f in &r.findings {
            *by_rule.entry(f.scanner.as_str()).or_default() += 1;
        }
    }
    for rule in RULES {
        if let Some(&n) = by_rule.get(rule.name()) {
            bars.push((format!("rule: {}", rule.name()), n, COLOURS[2]));
        }
    }
    if bars.is_empty() {
        return Ok(None);
    }
    let fail = draw_error(path, "the scan's bars");
    let max = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let (label_w, bar_w, row_h, top) = (330i32, 420i32, 26i32, 48i32);
    let height = (top + row_h * bars.len() as i32 + 24) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, ((label_w + bar_w + 80) as u32, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let title = format!(
            "{} runs, {} failed: kinds of failure (blue), runs each rule flagged (red)",
            rows.len(),
            rows.iter().filter(|r| r.failed).count()
        );
        root.draw(&Text::new(title, (12, 14), ("sans-serif", 16).into_font())).map_err(|e| fail(e.to_string()))?;
        for (i, (label, n, colour)) in bars.iter().enumerate() {
            let y = top + row_h * i as i32;
            let w = (bar_w as f64 * *n as f64 / max as f64).round() as i32;
            let style = ("sans-serif", 13).into_font();
            root.draw(&Text::new(label.clone(), (12, y + 5), style.clone())).map_err(|e| fail(e.to_string()))?;
            root.draw(&Rectangle::new([(label_w, y), (label_w + w.max(1), y + row_h - 6)], colour.filled()))
                .map_err(|e| fail(e.to_string()))?;
            root.draw(&Text::new(n.to_string(), (label_w + w + 6, y + 5), style)).map_err(|e| fail(e.to_string()))?;
        }
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    Ok(Some(svg))
}
