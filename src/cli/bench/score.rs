//! `bench score`: API-Bank's call accuracy from `run --trace` files, until
//! an eval's results rows carry the calls (`eval::apibank::call_accuracy`
//! reads those).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr, eyre};
use serde_json::Value;

use switchyard::eval::apibank::{NAME_ONLY, call_correct};
use switchyard::eval::results::CallMade;
use switchyard::task::{GoldCall, load_tasks};

/// One trace's figures.
#[derive(serde::Serialize)]
struct Scored {
    trace: PathBuf,
    strategy: String,
    runs: usize,
    /// Runs whose first call named the gold tool.
    name_correct: usize,
    /// Runs whose first call was the gold call.
    call_correct: usize,
    call_acc_pct: f64,
    /// Runs whose gold tool is judged by name alone (ToolSearcher), and
    /// the accuracy over the others.
    name_only: usize,
    call_acc_others_pct: Option<f64>,
}

pub(super) fn score(tasks: &Path, traces: &[PathBuf], json: bool) -> Result<ExitCode> {
    let gold: HashMap<String, GoldCall> =
        load_tasks(tasks)?.into_iter().filter_map(|t| Some((t.id, t.gold_call?))).collect();
    if gold.is_empty() {
        return Err(eyre!("{}: no task has a gold_call to score against", tasks.display()));
    }
    let mut rows = Vec::new();
    for trace in traces {
        rows.push(score_trace(trace, &gold)?);
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{:<12} {:>6} {:>10} {:>10} {:>12}  trace", "strategy", "runs", "API name", "call acc", "w/o by-name");
    for r in &rows {
        let pct = |n: usize| 100.0 * n as f64 / r.runs.max(1) as f64;
        let others = r.call_acc_others_pct.map_or("-".to_string(), |p| format!("{p:.1}%"));
        println!(
            "{:<12} {:>6} {:>9.1}% {:>9.1}% {:>12}  {}",
            r.strategy,
            r.runs,
            pct(r.name_correct),
            r.call_acc_pct,
            others,
            r.trace.display()
        );
    }
    if let Some(r) = rows.iter().find(|r| r.name_only > 0) {
        println!(
            "({} of {} runs are of tasks whose gold is {}, judged by name alone; w/o by-name: the others)",
            r.name_only,
            r.runs,
            NAME_ONLY.join(", ")
        );
    }
    println!("(API-Bank call accuracy: the first call of a run is its task's gold call, arguments and all;");
    println!(" API name: its tool is the gold one; over the runs of tasks with a gold call)");
    Ok(ExitCode::SUCCESS)
}

/// The first call of each run of the trace, judged.
fn score_trace(path: &Path, gold: &HashMap<String, GoldCall>) -> Result<Scored> {
    let text = std::fs::read_to_string(path).wrap_err_with(|| format!("cannot read {}", path.display()))?;
    // run number → (task id, first call)
    let mut runs: Vec<(u64, String, Option<CallMade>)> = Vec::new();
    let mut strategy = String::from("?");
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let e: Value = serde_json::from_str(line)
            .wrap_err_with(|| format!("{}, line {}: not a trace event", path.display(), i + 1))?;
        let run = e.get("run").and_then(Value::as_u64).unwrap_or(0);
        match e.get("type").and_then(Value::as_str) {
            Some("SessionStarted") => {
                if let Some(s) = e.get("strategy").and_then(Value::as_str) {
                    strategy = s.to_string();
                }
            }
            Some("RunStarted") => {
                let id = e.get("task_id").and_then(Value::as_str).unwrap_or_default().to_string();
                runs.push((run, id, None));
            }
            Some("ToolCall") => {
                if let Some((_, _, first @ None)) = runs.iter_mut().rev().find(|r| r.0 == run) {
                    let tool = e.get("tool").and_then(Value::as_str).unwrap_or_default().to_string();
                    *first = Some(CallMade { tool, args: e.get("args").cloned().unwrap_or(Value::Null) });
                }
            }
            _ => {}
        }
    }
    let judged: Vec<(&GoldCall, Option<&CallMade>)> =
        runs.iter().filter_map(|(_, id, first)| Some((gold.get(id)?, first.as_ref()))).collect();
    if judged.is_empty() {
        return Err(eyre!(
            "{}: no run of a task with a gold call (is it a `run --trace` of these tasks?)",
            path.display()
        ));
    }
    let name_correct = judged.iter().filter(|(g, c)| c.is_some_and(|c| c.tool == g.tool)).count();
    let call_ok = judged.iter().filter(|(g, c)| c.is_some_and(|c| call_correct(c, g))).count();
    let by_name = |g: &GoldCall| NAME_ONLY.contains(&g.tool.as_str());
    let name_only = judged.iter().filter(|(g, _)| by_name(g)).count();
    let others_ok = judged.iter().filter(|(g, c)| !by_name(g) && c.is_some_and(|c| call_correct(c, g))).count();
    let others = judged.len() - name_only;
    Ok(Scored {
        trace: path.to_path_buf(),
        strategy,
        runs: judged.len(),
        name_correct,
        call_correct: call_ok,
        call_acc_pct: 100.0 * call_ok as f64 / judged.len() as f64,
        name_only,
        call_acc_others_pct: (others > 0).then(|| 100.0 * others_ok as f64 / others as f64),
    })
}
