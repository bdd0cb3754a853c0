//! Two traces compared (`switchyard trace diff` and its two-column view):
//! runs paired by number, and within a run the decisions (what the agent was
//! offered, asked, answered, called and got back, its plans and programs,
//! its outcome) aligned in order. Timing, call numbering and where a tool
//! result came from (tool or cassette) are left out: two runs of one seed
//! differ there and nowhere that matters, and call numbers shift for every
//! run after one that made an extra call.
//!
//! Reported per run: the first decision where the two part, with both
//! sides; and how the runs' summaries moved.

pub mod render;
pub(crate) mod text;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;
use similar::{Algorithm, DiffTag, capture_diff_slices};

use crate::engine::event::{Event, EventKind};
pub use text::{describe, outcome_word};

/// What two runs first differ in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The task (its id or text).
    Task,
    /// The tools offered, or the retrieval that ranked them.
    Candidates,
    /// What a model was sent.
    ModelCall,
    /// What a model answered (or that it failed).
    ModelReply,
    ToolCall,
    ToolResult,
    Refusal,
    /// BTP's budget plan, or the planner's plan (rewoo).
    Plan,
    /// A plan step's lanes or evidence (rewoo).
    PlanStep,
    /// A program written, failed or returned (atc).
    Program,
    /// How the run ended: outcome, answer, success, cost, tokens, steps.
    Outcome,
    /// The two did different things next (a tool call against an answer, say).
    NextEvent,
    /// One trace stops inside the run (cut short, or still being written).
    EndsEarly,
    /// The run is in one trace only.
    RunMissing,
}

impl DivergenceKind {
    pub fn label(self) -> &'static str {
        match self {
            DivergenceKind::Task => "task",
            DivergenceKind::Candidates => "candidates",
            DivergenceKind::ModelCall => "model prompt",
            DivergenceKind::ModelReply => "model reply",
            DivergenceKind::ToolCall => "tool call",
            DivergenceKind::ToolResult => "tool result",
            DivergenceKind::Refusal => "refusal",
            DivergenceKind::Plan => "plan",
            DivergenceKind::PlanStep => "plan step",
            DivergenceKind::Program => "program",
            DivergenceKind::Outcome => "outcome",
            DivergenceKind::NextEvent => "next event",
            DivergenceKind::EndsEarly => "one trace ends early",
            DivergenceKind::RunMissing => "run missing",
        }
    }
}

/// The decisions, each under the kind a difference in it is reported as;
/// everything else (graph updates, budgets, pauses, the user's controls) is
/// a consequence or an aside and is not aligned.
fn decision(kind: &EventKind) -> Option<DivergenceKind> {
    use DivergenceKind as D;
    Some(match kind {
        EventKind::RunStarted { .. } => D::Task,
        EventKind::Retrieved { .. } | EventKind::ToolJudged { .. } | EventKind::Candidates { .. } => D::Candidates,
        EventKind::ModelCall { .. } => D::ModelCall,
        EventKind::ModelReply { .. } | EventKind::ModelFailed { .. } => D::ModelReply,
        EventKind::ToolCall { .. } => D::ToolCall,
        EventKind::ToolResult { .. } => D::ToolResult,
        EventKind::Refused { .. } => D::Refusal,
        EventKind::PlanMade { .. } | EventKind::PlanWritten { .. } | EventKind::PlanRejected { .. } => D::Plan,
        EventKind::StepStarted { .. } | EventKind::StepFinished { .. } => D::PlanStep,
        EventKind::ProgramWritten { .. } | EventKind::ProgramFailed { .. } | EventKind::ProgramReturned { .. } => {
            D::Program
        }
        EventKind::RunFinished { .. } => D::Outcome,
        _ => return None,
    })
}

/// The event as compared: its kind's fields without timing, call numbers
/// and provenance.
fn key(kind: &EventKind) -> Value {
    let mut v = serde_json::to_value(kind).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        for k in ["latency_ms", "call", "source"] {
            m.remove(k);
        }
        if let Some(Value::Array(lanes)) = m.get_mut("lanes") {
            for lane in lanes.iter_mut().filter_map(Value::as_object_mut) {
                lane.remove("call");
            }
        }
    }
    v
}

/// One side of a divergence: the event, where it is, what it says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct At {
    /// Its place in the trace, counted from 1 (the number `replay` jumps to).
    pub event: usize,
    pub step: u32,
    /// The event's type.
    pub name: &'static str,
    /// What it says, on one line.
    pub text: String,
}

/// The first field two events of one type differ in, both values on one line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Field {
    /// As `messages[3].content`; empty for the whole value.
    pub path: String,
    pub a: String,
    pub b: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Divergence {
    pub kind: DivergenceKind,
    /// The step it happens at (A's, or B's when A has no event there).
    pub step: u32,
    /// None: that trace has no event here.
    pub a: Option<At>,
    pub b: Option<At>,
    /// For two events of one type: the first field that differs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<Field>,
}

/// How a run ended, as its RunFinished says.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunTotals {
    pub outcome: String,
    pub answer: Option<String>,
    pub success: Option<bool>,
    pub cost: f64,
    pub tokens: u64,
    pub steps: u32,
    pub tool_calls: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunDiff {
    pub run: u32,
    pub task_a: Option<String>,
    pub task_b: Option<String>,
    /// None: the two runs decided alike throughout.
    pub divergence: Option<Divergence>,
    /// None: the run did not finish in that trace.
    pub a: Option<RunTotals>,
    pub b: Option<RunTotals>,
}

/// A whole trace's finished runs, added up.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    pub runs: u32,
    /// Runs judged against a gold answer, and those that met it.
    pub judged: u32,
    pub successes: u32,
    pub cost: f64,
    pub tokens: u64,
    pub steps: u64,
    pub tool_calls: u64,
}

/// A session-wide setting the two traces differ in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    pub field: String,
    pub a: String,
    pub b: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceDiff {
    pub session: Vec<Change>,
    pub runs: Vec<RunDiff>,
    pub a: Totals,
    pub b: Totals,
}

impl TraceDiff {
    /// Whether the traces differ in anything compared.
    pub fn differs(&self) -> bool {
        !self.session.is_empty() || self.runs.iter().any(|r| r.divergence.is_some())
    }
}

/// Each run's decisions, as indices into the trace.
fn decisions(events: &[Event]) -> BTreeMap<u32, Vec<usize>> {
    let mut runs: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.run > 0 && decision(&e.kind).is_some() {
            runs.entry(e.run).or_default().push(i);
        }
    }
    runs
}

/// Compares two traces (see the module's comment).
pub fn diff(a: &[Event], b: &[Event]) -> TraceDiff {
    let (da, db) = (decisions(a), decisions(b));
    let numbers: BTreeSet<u32> = da.keys().chain(db.keys()).copied().collect();
    let none = Vec::new();
    let runs = numbers
        .into_iter()
        .map(|run| {
            let (ia, ib) = (da.get(&run), db.get(&run));
            let divergence = match (ia, ib) {
                (Some(ia), Some(ib)) => first_divergence(a, ia, b, ib),
                _ => Some(missing(a, ia.unwrap_or(&none), b, ib.unwrap_or(&none))),
            };
            RunDiff {
                run,
                task_a: task_id(a, ia.unwrap_or(&none)),
                task_b: task_id(b, ib.unwrap_or(&none)),
                divergence,
                a: run_totals(a, ia.unwrap_or(&none)),
                b: run_totals(b, ib.unwrap_or(&none)),
            }
        })
        .collect();
    TraceDiff { session: session_changes(a, b), runs, a: totals(a), b: totals(b) }
}

fn at(events: &[Event], i: usize) -> At {
    let e = &events[i];
    At { event: i + 1, step: e.step, name: e.kind.name(), text: describe(&e.kind) }
}

fn first_divergence(a: &[Event], ia: &[usize], b: &[Event], ib: &[usize]) -> Option<Divergence> {
    let n = ia.len().max(ib.len());
    (0..n).find_map(|k| {
        let (ea, eb) = (ia.get(k).map(|&i| &a[i]), ib.get(k).map(|&i| &b[i]));
        let step = ea.or(eb).map_or(0, |e| e.step);
        let (kx, ky) = (ea.map(|x| key(&x.kind)), eb.map(|y| key(&y.kind)));
        if kx == ky {
            return None;
        }
        let (side_a, side_b) = (ia.get(k).map(|&i| at(a, i)), ib.get(k).map(|&i| at(b, i)));
        match (ea, eb, kx, ky) {
            (Some(x), Some(y), Some(kx), Some(ky)) => {
                let same_type = x.kind.name() == y.kind.name();
                let kind = match (decision(&x.kind), decision(&y.kind)) {
                    (Some(p), Some(q)) if p == q => p,
                    _ => DivergenceKind::NextEvent,
                };
                let field = same_type.then(|| first_field(&kx, &ky)).flatten();
                Some(Divergence { kind, step, a: side_a, b: side_b, field })
            }
            _ => Some(Divergence { kind: DivergenceKind::EndsEarly, step, a: side_a, b: side_b, field: None }),
        }
    })
}

fn missing(a: &[Event], ia: &[usize], b: &[Event], ib: &[usize]) -> Divergence {
    let (side_a, side_b) = (ia.first().map(|&i| at(a, i)), ib.first().map(|&i| at(b, i)));
    let step = side_a.as_ref().or(side_b.as_ref()).map_or(0, |s| s.step);
    Divergence { kind: DivergenceKind::RunMissing, step, a: side_a, b: side_b, field: None }
}

fn task_id(events: &[Event], idx: &[usize]) -> Option<String> {
    idx.iter().find_map(|&i| match &events[i].kind {
        EventKind::RunStarted { task_id, .. } => Some(task_id.clone()),
        _ => None,
    })
}

fn run_totals(events: &[Event], idx: &[usize]) -> Option<RunTotals> {
    idx.iter().rev().find_map(|&i| match &events[i].kind {
        EventKind::RunFinished { outcome, answer, success, cost, usage, steps, tool_calls, .. } => Some(RunTotals {
            outcome: outcome_word(outcome).to_string(),
            answer: answer.clone(),
            success: *success,
            cost: *cost,
            tokens: usage.prompt_tokens + usage.completion_tokens,
            steps: *steps,
            tool_calls: *tool_calls,
        }),
        _ => None,
    })
}

fn totals(events: &[Event]) -> Totals {
    let mut t = Totals::default();
    for e in events {
        if let EventKind::RunFinished { success, cost, usage, steps, tool_calls, .. } = &e.kind {
            t.runs += 1;
            t.judged += u32::from(success.is_some());
            t.successes += u32::from(*success == Some(true));
            t.cost += cost;
            t.tokens += usage.prompt_tokens + usage.completion_tokens;
            t.steps += u64::from(*steps);
            t.tool_calls += u64::from(*tool_calls);
        }
    }
    t
}

/// The settings of the two sessions that differ: strategy, seed, each
/// parameter, each role's model, the tools, the task count, the graph.
fn session_changes(a: &[Event], b: &[Event]) -> Vec<Change> {
    let start = |events: &[Event]| -> Value {
        events
            .iter()
            .find(|e| matches!(e.kind, EventKind::SessionStarted { .. }))
            .map(|e| key(&e.kind))
            .unwrap_or(Value::Null)
    };
    let (sa, sb) = (start(a), start(b));
    let mut out = Vec::new();
    let mut note = |field: String, x: &Value, y: &Value| {
        if x != y {
            out.push(Change { field, a: short(x), b: short(y) });
        }
    };
    for k in ["strategy", "seed", "tasks", "cost_unit"] {
        note(k.to_string(), &sa[k], &sb[k]);
    }
    let names: BTreeSet<&String> =
        sa["params"].as_object().into_iter().chain(sb["params"].as_object()).flat_map(|m| m.keys()).collect();
    for k in names {
        note(k.clone(), &sa["params"][k], &sb["params"][k]);
    }
    let models = |s: &Value| -> BTreeMap<String, Value> {
        s["models"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| (m["role"].as_str().unwrap_or("?").to_string(), m["model"]["name"].clone()))
            .collect()
    };
    let (ma, mb) = (models(&sa), models(&sb));
    let roles: BTreeSet<&String> = ma.keys().chain(mb.keys()).collect();
    for r in roles {
        note(format!("model of {r}"), ma.get(r).unwrap_or(&Value::Null), mb.get(r).unwrap_or(&Value::Null));
    }
    let tools = |s: &Value| -> Value {
        Value::Array(s["tools"].as_array().into_iter().flatten().map(|t| t["name"].clone()).collect())
    };
    note("tools".into(), &tools(&sa), &tools(&sb));
    if sa["graph"] != sb["graph"] {
        // Whole graphs do not fit a line: which learning round each is, and
        // when that is the same, that the weights differ.
        let round = |s: &Value| match &s["graph"] {
            Value::Null => "none".to_string(),
            g => format!("iteration {}", g["iteration"]),
        };
        let (ra, rb) = (round(&sa), round(&sb));
        let (ra, rb) =
            if ra == rb { (format!("{ra}, other weights"), format!("{rb}, other weights")) } else { (ra, rb) };
        out.push(Change { field: "graph at the start".into(), a: ra, b: rb });
    }
    out
}

/// A value on one line, cut.
fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    };
    crate::text::ellipsis(&crate::text::one_line(&s), 60)
}

/// The first field two events of one type differ in, as compared (timing
/// and call numbers left out); None when they match or differ in type.
pub fn field_difference(a: &EventKind, b: &EventKind) -> Option<Field> {
    (a.name() == b.name()).then(|| first_field(&key(a), &key(b))).flatten()
}

/// The first place two values differ: a path and both values there; for
/// two long strings, a window around their first different character.
fn first_field(a: &Value, b: &Value) -> Option<Field> {
    let mut path = String::new();
    let (x, y) = first_difference(a, b, &mut path)?;
    let (x, y) = match (x, y) {
        (Value::String(s), Value::String(t)) => window(s, t),
        (x, y) => (short(x), short(y)),
    };
    Some(Field { path, a: x, b: y })
}

fn first_difference<'v>(a: &'v Value, b: &'v Value, path: &mut String) -> Option<(&'v Value, &'v Value)> {
    if a == b {
        return None;
    }
    const NULL: &Value = &Value::Null;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: Vec<&String> = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))).collect();
            for k in keys {
                let (p, q) = (x.get(k).unwrap_or(NULL), y.get(k).unwrap_or(NULL));
                if p != q {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    return first_difference(p, q, path).or_else(|| {
                        path.truncate(len);
                        None
                    });
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            let k = (0..x.len()).find(|&k| x[k] != y[k])?;
            path.push_str(&format!("[{k}]"));
            first_difference(&x[k], &y[k], path)
        }
        _ => Some((a, b)),
    }
}

/// Both strings from a little before their first different character, on
/// one line and cut, so a long prompt shows where it changed.
fn window(a: &str, b: &str) -> (String, String) {
    let (ca, cb): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let first = ca.iter().zip(&cb).take_while(|(x, y)| x == y).count();
    let from = first.saturating_sub(20);
    let cut = |c: &[char]| {
        let s: String = c[from.min(c.len())..].iter().collect();
        let s = crate::text::ellipsis(&crate::text::one_line(&s), 80);
        if from > 0 { format!("…{s}") } else { s }
    };
    (cut(&ca), cut(&cb))
}

/// One line of the two-column view: a decision of A and of B aligned (either
/// may be missing), as indices into the traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub run: u32,
    pub a: Option<usize>,
    pub b: Option<usize>,
    /// Both sides are there and decided alike.
    pub same: bool,
}

/// Both traces' decisions aligned run by run as `diff` aligns lines (a
/// longest common subsequence), so an extra call on one side leaves a gap
/// on the other and the rest lines up again.
pub fn align(a: &[Event], b: &[Event]) -> Vec<Row> {
    let (da, db) = (decisions(a), decisions(b));
    let numbers: BTreeSet<u32> = da.keys().chain(db.keys()).copied().collect();
    let none = Vec::new();
    let mut rows = Vec::new();
    for run in numbers {
        let (ia, ib) = (da.get(&run).unwrap_or(&none), db.get(&run).unwrap_or(&none));
        let keys = |events: &[Event], idx: &[usize]| -> Vec<String> {
            idx.iter().map(|&i| key(&events[i].kind).to_string()).collect()
        };
        let (ka, kb) = (keys(a, ia), keys(b, ib));
        for op in capture_diff_slices(Algorithm::Myers, &ka, &kb) {
            let (tag, ra, rb) = op.as_tag_tuple();
            let n = ra.len().max(rb.len());
            for k in 0..n {
                let x = (k < ra.len()).then(|| ia[ra.start + k]);
                let y = (k < rb.len()).then(|| ib[rb.start + k]);
                rows.push(Row { run, a: x, b: y, same: tag == DiffTag::Equal });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests;
