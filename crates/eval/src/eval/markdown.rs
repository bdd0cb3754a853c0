//! `report.md`: an eval's summary as the papers' tables, in Markdown, with
//! links to the plots drawn beside it.

use std::fmt::Write as _;

use super::summary::{Matrix, SettingSummary, Summary, SweepSeries};

/// A plot written beside the report: its title and file names (relative
/// to the report's folder).
#[derive(Clone, Debug, PartialEq)]
pub struct PlotLink {
    pub title: String,
    pub svg: String,
    pub png: String,
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// A cell's text with the pipes that would split it escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// A table's head: the first `left` columns are names (left-aligned), the
/// rest figures (right-aligned).
fn header(out: &mut String, cols: &[&str], left: usize) {
    let _ = writeln!(out, "| {} |", cols.join(" | "));
    let rule: Vec<&str> = (0..cols.len()).map(|i| if i < left { "---" } else { "---:" }).collect();
    let _ = writeln!(out, "|{}|", rule.join("|"));
}

fn row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}

/// The main table: one line per setting.
pub fn main_table(settings: &[SettingSummary], unit: &str) -> String {
    let paths = settings.iter().any(|s| s.metrics.path_pct.is_some());
    let atc = settings.iter().any(|s| s.strategy == "atc" || s.metrics.avg_reflections > 0.0);
    let cost = format!("cost ({unit})");
    let mut cols =
        vec!["setting", "tasks", "success", "answered", "steps", "prompt tok", "compl. tok", &cost, "tool calls"];
    if paths {
        cols.extend(["Path%", "Prec%"]);
    }
    if atc {
        cols.push("reflections");
    }
    let mut out = String::new();
    header(&mut out, &cols, 1);
    for s in settings {
        let m = &s.metrics;
        let success = m.success_rate.map_or("n/a".to_string(), pct);
        let mut cells = vec![
            cell(&s.setting),
            m.tasks.to_string(),
            success,
            pct(m.answered_rate),
            format!("{:.2}", m.avg_steps),
            format!("{:.1}", m.avg_prompt_tokens),
            format!("{:.1}", m.avg_completion_tokens),
            format!("{:.4}", m.avg_cost),
            format!("{:.2}", m.avg_tool_calls),
        ];
        if paths {
            let p = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.1}%"));
            cells.extend([p(m.path_pct), p(m.prec_pct)]);
        }
        if atc {
            cells.push(format!("{:.2}", m.avg_reflections));
        }
        row(&mut out, &cells);
    }
    out.push_str("\nSteps, tokens, cost and tool calls are averages per task. ");
    out.push_str("Success is over the tasks with a gold answer (n/a when none has one); ");
    out.push_str("answered: runs that ended with an answer, right or wrong.");
    if paths {
        out.push_str(
            " Path%: share of the gold tools that were called; Prec%: share of the calls that were of gold \
             tools (over the tasks with gold tools).",
        );
    }
    if atc {
        out.push_str(" Reflections: atc's rewrites after a failure, per task.");
    }
    out.push('\n');
    out
}

/// CoTools' scorings of numeric golds, for the settings that have some.
pub fn numeric_table(settings: &[SettingSummary]) -> Option<String> {
    let scored: Vec<&SettingSummary> = settings.iter().filter(|s| s.numeric.is_some()).collect();
    if scored.is_empty() {
        return None;
    }
    let mut out = String::new();
    header(&mut out, &["setting", "numeric golds", "round (2 dp)", "approx 0.1%", "approx 1%"], 1);
    for s in scored {
        let Some(n) = &s.numeric else { continue };
        row(&mut out, &[cell(&s.setting), n.tasks.to_string(), pct(n.round2), pct(n.approx_0_1), pct(n.approx_1)]);
    }
    out.push_str(
        "\nThe last number of each answer (thousands commas stripped) against the gold: equal once both are \
         rounded to 2 decimals (CoTools' Round Acc, for GSM8K-XL and FuncQA one-hop), within 0.1 % of the gold \
         (Approx Acc, for FuncQA multi-hop), within 1 %.\n",
    );
    Some(out)
}

/// API-Bank's call accuracy, for the settings whose tasks name a gold call.
pub fn call_table(settings: &[SettingSummary]) -> Option<String> {
    let scored: Vec<&SettingSummary> = settings.iter().filter(|s| s.call_accuracy.is_some()).collect();
    if scored.is_empty() {
        return None;
    }
    let mut out = String::new();
    header(&mut out, &["setting", "tasks", "call accuracy"], 1);
    for s in scored {
        row(&mut out, &[cell(&s.setting), s.metrics.tasks.to_string(), pct(s.call_accuracy.unwrap_or(0.0))]);
    }
    out.push_str(
        "\nAPI-Bank's metric: a task's call is correct when the run's first call names the gold API with the \
         gold arguments (key order free, strings trimmed, numbers by value); ToolSearcher by name only.\n",
    );
    Some(out)
}

/// The runs against their tasks' expectations, for the settings whose tasks set some.
pub fn expect_table(settings: &[SettingSummary]) -> Option<String> {
    let set: Vec<&SettingSummary> = settings.iter().filter(|s| s.expectations.is_some()).collect();
    if set.is_empty() {
        return None;
    }
    let mut out = String::new();
    header(&mut out, &["setting", "runs with expectations", "all kept", "broken"], 1);
    for s in set {
        let Some(e) = &s.expectations else { continue };
        let broken: Vec<String> = e.broken.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
        let kept = format!("{} ({})", e.met, pct(e.met as f64 / e.runs as f64));
        row(&mut out, &[cell(&s.setting), e.runs.to_string(), kept, cell(&broken.join(", "))]);
    }
    out.push_str(
        "
A task's `expect` says what its run should do: tools in order (`tools`) or as a set (`tool_set`), \
         arguments every call of a tool must have (`args`), at most N calls (`max_calls`) or C of cost \
         (`max_cost`).\n",
    );
    Some(out)
}

/// BTP's table: PBC, AC, PR, RFBC and plan against spend.
pub fn budget_table(settings: &[SettingSummary], unit: &str) -> Option<String> {
    let budgeted: Vec<&SettingSummary> = settings.iter().filter(|s| s.budgeted).collect();
    if budgeted.is_empty() {
        return None;
    }
    let ac = format!("AC ({unit})");
    let mut out = String::new();
    header(
        &mut out,
        &[
            "setting",
            "tasks",
            "PBC",
            "answered within B",
            &ac,
            "PR",
            "RFBC",
            "planned cost",
            "spent",
            "planned calls",
            "calls",
        ],
        1,
    );
    // Without a gold answer nothing is solved or not: n/a, not 0 %.
    let judged = |x: Option<f64>| x.map_or("n/a".to_string(), pct);
    for s in budgeted {
        let m = &s.metrics;
        row(
            &mut out,
            &[
                cell(&s.setting),
                m.tasks.to_string(),
                judged(m.pbc),
                pct(m.answered_within_budget),
                format!("{:.2}", m.ac),
                judged(m.pr),
                pct(m.rfbc),
                format!("{:.2}", m.planned_cost),
                format!("{:.2}", m.spent_cost),
                format!("{:.2}", m.planned_calls),
                format!("{:.2}", m.used_calls),
            ],
        );
    }
    out.push_str(
        "\nPBC: solved within the budget (n/a when no task has a gold answer); answered within B: runs that \
         ended with an answer within the budget, right or wrong; AC: average cost per task; PR: solved, budget \
         ignored; RFBC: runs that went over the budget. Planned against spent cost and calls are per task, over the runs that \
         had a plan.\n",
    );
    Some(out)
}

/// One table per swept parameter: a line per series and value, with
/// BTP's measures when the settings ran under a budget.
pub fn sweep_table(sweeps: &[SweepSeries], parameter: &str, unit: &str) -> String {
    let ac = format!("AC ({unit})");
    let sweeps: Vec<&SweepSeries> = sweeps.iter().filter(|s| s.parameter == parameter).collect();
    let budgeted = sweeps.iter().any(|s| s.budgeted);
    let mut cols = vec!["setting", parameter, "tasks", "success", "answered", &ac];
    if budgeted {
        cols.extend(["PBC", "answered within B", "PR", "RFBC"]);
    }
    let mut out = String::new();
    header(&mut out, &cols, 1);
    for s in sweeps {
        for p in &s.points {
            let mut cells = vec![
                cell(&s.series),
                format!("{}", p.value),
                p.tasks.to_string(),
                p.success_rate.map_or("n/a".to_string(), pct),
                pct(p.answered_rate),
                format!("{:.2}", p.ac),
            ];
            if budgeted {
                let judged = |x: Option<f64>| x.map_or("n/a".to_string(), pct);
                cells.extend([judged(p.pbc), pct(p.answered_within_budget), judged(p.pr), pct(p.rfbc)]);
            }
            row(&mut out, &cells);
        }
    }
    out.push_str(
        "
AC: average cost per task.",
    );
    if budgeted {
        out.push_str(" PBC: solved within the budget; PR: solved, budget ignored; RFBC: over the budget.");
    }
    out.push('\n');
    out
}

/// The model matrix: a line per combination, accuracy and cost per task.
pub fn matrix_table(matrix: &Matrix, unit: &str) -> String {
    let mut cols: Vec<String> = matrix.axes.clone();
    cols.extend(
        ["tasks", "accuracy", "answered", "prompt tok", "compl. tok"]
            .into_iter()
            .map(String::from)
            .chain([format!("cost ({unit})"), format!("model cost ({unit})"), format!("tool cost ({unit})")])
            .chain(["steps".to_string()]),
    );
    let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
    let mut out = String::new();
    header(&mut out, &refs, matrix.axes.len());
    for c in &matrix.cells {
        let r = &c.row;
        let mut cells: Vec<String> = c.models.iter().map(|m| cell(m)).collect();
        cells.extend([
            r.tasks.to_string(),
            r.accuracy_pct.map_or("n/a".to_string(), |a| format!("{a:.1}%")),
            format!("{:.1}%", c.answered_pct),
            format!("{:.1}", r.prompt_tokens_per_task),
            format!("{:.1}", r.completion_tokens_per_task),
            format!("{:.4}", r.cost_per_task),
            format!("{:.4}", r.model_cost_per_task),
            format!("{:.4}", r.tool_cost_per_task),
            format!("{:.2}", r.steps_per_task),
        ]);
        row(&mut out, &cells);
    }
    out.push_str(
        "\nPer task. The models are those the runs report for each role; model cost is what their calls \
         cost, tool cost the rest of the runs' cost.\n",
    );
    out
}

/// A section's heading, a blank line before and after it.
fn section(out: &mut String, title: &str) {
    if !out.ends_with("\n\n") {
        out.push('\n');
    }
    let _ = writeln!(out, "## {title}\n");
}

/// Per setting, what a task's wait went to: model calls, tokens and wall time.
pub fn speed_table(settings: &[SettingSummary]) -> String {
    let cached = settings.iter().any(|s| s.speed.cached_share.is_some());
    let mut cols =
        vec!["setting", "tasks", "model calls", "wall s", "prompt tok", "compl. tok", "prompt/call", "compl./call"];
    if cached {
        cols.push("cached");
    }
    let capped = settings.iter().any(|s| s.speed.capped > 0.0);
    if capped {
        cols.push("capped");
    }
    let mut out = String::new();
    header(&mut out, &cols, 1);
    for s in settings {
        let (m, v) = (&s.metrics, &s.speed);
        let mut cells = vec![
            cell(&s.setting),
            m.tasks.to_string(),
            format!("{:.2}", v.model_calls),
            if v.wall_s < 10.0 { format!("{:.2}", v.wall_s) } else { format!("{:.1}", v.wall_s) },
            format!("{:.0}", m.avg_prompt_tokens),
            format!("{:.0}", m.avg_completion_tokens),
            format!("{:.0}", v.prompt_tokens_per_call),
            format!("{:.1}", v.completion_tokens_per_call),
        ];
        if cached {
            cells.push(v.cached_share.map_or("-".to_string(), pct));
        }
        if capped {
            cells.push(format!("{:.2}", v.capped));
        }
        row(&mut out, &cells);
    }
    out.push_str("\nPer task, but per model call for prompt/call and compl./call. Wall time is the task's, from its ");
    out.push_str("start to its answer, waiting on models and tools included.");
    if cached {
        out.push_str(" Cached: the share of the prompt tokens the model's server took from its prompt cache.");
    }
    if capped {
        out.push_str(" Capped: replies a task had cut at their token cap.");
    }
    out.push('\n');
    out
}

/// The whole report.
pub fn report(summary: &Summary, plots: &[PlotLink]) -> String {
    let meta = &summary.meta;
    let unit = meta.cost_unit.as_str();
    let mut out = String::new();
    let _ = writeln!(out, "# Eval report: {}\n", meta.tasks);
    let _ = writeln!(out, "- command: `{}`", meta.command.replace('`', "'"));
    let _ = writeln!(out, "- tasks: {} ({} tasks)", meta.tasks, meta.task_count);
    let _ = writeln!(out, "- settings: {}", meta.settings.join("; "));
    let _ = writeln!(out, "- seed: {}, jobs: {}", meta.seed, meta.jobs);
    if !meta.shard.is_whole() {
        let (i, n) = (meta.shard.index() + 1, meta.shard.count());
        let _ = writeln!(out, "- shard: {} (tasks {i}, {}, {}, … of the list)", meta.shard, i + n, i + 2 * n);
    }
    if !meta.merged.is_empty() {
        let dirs: Vec<String> = meta.merged.iter().map(|d| format!("`{}`", d.display())).collect();
        let _ = writeln!(out, "- merged from: {}", dirs.join(", "));
    }
    if let Some(c) = &meta.config {
        let _ = writeln!(out, "- config: {}", c.display());
    }
    let _ = writeln!(out, "- started: {}", meta.started);
    let p = &summary.progress;
    let state = if p.complete() { "complete" } else { "incomplete" };
    let _ = writeln!(out, "- progress: {} of {} task runs ({state})", p.done, p.expected);
    let _ = writeln!(out, "- costs in {unit}\n");

    section(&mut out, "Results");
    out.push_str(&main_table(&summary.settings, unit));
    section(&mut out, "Time and tokens");
    out.push_str(&speed_table(&summary.settings));
    if let Some(t) = call_table(&summary.settings) {
        section(&mut out, "API calls (API-Bank's metric)");
        out.push_str(&t);
    }
    if let Some(t) = numeric_table(&summary.settings) {
        section(&mut out, "Numeric answers (CoTools' scorings)");
        out.push_str(&t);
    }
    if let Some(t) = expect_table(&summary.settings) {
        section(&mut out, "Expectations on the path");
        out.push_str(&t);
    }
    if let Some(t) = budget_table(&summary.settings, unit) {
        section(&mut out, "Budget (BTP)");
        out.push_str(&t);
    }
    let mut parameters: Vec<&str> = Vec::new();
    for s in &summary.sweeps {
        if !parameters.contains(&s.parameter.as_str()) {
            parameters.push(&s.parameter);
        }
    }
    for p in parameters {
        section(&mut out, &format!("Sweep over {p}"));
        out.push_str(&sweep_table(&summary.sweeps, p, unit));
    }
    if let Some(m) = &summary.matrix {
        section(&mut out, &format!("Models ({})", m.axes.join(" × ")));
        out.push_str(&matrix_table(m, unit));
    }
    if !plots.is_empty() {
        section(&mut out, "Plots");
        for p in plots {
            let _ = writeln!(out, "### {}\n\n![{}]({})\n\n[PNG]({})\n", p.title, p.title, p.svg, p.png);
        }
    }
    if !summary.notes.is_empty() {
        section(&mut out, "Notes");
        for n in &summary.notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    out
}
