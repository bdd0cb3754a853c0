//! The rule scanners: each reads one run's events and says where, if
//! anywhere, the run shows its pattern. They read what a trace records of
//! the run (calls, results, replies, outcomes), never an injected fault's
//! mark, so they judge an instrumented agent's trace as they judge one of
//! Switchyard's own (docs/src/scan.md explains each).

use std::collections::BTreeMap;

use crate::engine::event::{Event, EventKind, RefuseReason, RunOutcome, ToolOutcome};

use super::run::{Finding, Numbered, RunContext};

/// Every rule scanner, in the order a report lists them.
pub const RULES: [Rule; 10] = [
    Rule::Looped,
    Rule::IgnoredError,
    Rule::GaveUp,
    Rule::RanOut,
    Rule::BtpRefused,
    Rule::NarrowedOut,
    Rule::ReplyCapped,
    Rule::ModelFailed,
    Rule::Crashed,
    Rule::ExpectFailed,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    Looped,
    IgnoredError,
    GaveUp,
    RanOut,
    BtpRefused,
    NarrowedOut,
    ReplyCapped,
    ModelFailed,
    Crashed,
    ExpectFailed,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Looped => "looped",
            Rule::IgnoredError => "ignored-error",
            Rule::GaveUp => "gave-up",
            Rule::RanOut => "ran-out",
            Rule::BtpRefused => "btp-refused",
            Rule::NarrowedOut => "narrowed-out",
            Rule::ReplyCapped => "reply-capped",
            Rule::ModelFailed => "model-failed",
            Rule::Crashed => "crashed",
            Rule::ExpectFailed => "expect-failed",
        }
    }

    /// One line for the report and `scan --help`.
    pub fn meaning(self) -> &'static str {
        match self {
            Rule::Looped => "the same tool with the same arguments three times or more",
            Rule::IgnoredError => "a tool failed, no tool answered after it, and the run answered anyway",
            Rule::GaveUp => "the run answered nothing, or an answer that says it cannot",
            Rule::RanOut => "the run ended out of budget or out of steps",
            Rule::BtpRefused => "BTP refused a call: over the budget, or the tool's allowance spent",
            Rule::NarrowedOut => "narrowing hid a tool the task needed (a gold tool, or one called after)",
            Rule::ReplyCapped => "a model reply was cut at its token cap",
            Rule::ModelFailed => "a model call failed after its retries",
            Rule::Crashed => "the run stopped on an error: the agent crashed, or a plan could not run",
            Rule::ExpectFailed => "the run broke its task's expectations (tools, arguments, calls, cost)",
        }
    }

    pub fn parse(s: &str) -> Option<Rule> {
        RULES.into_iter().find(|r| r.name() == s)
    }
}

/// Every finding of every rule on one run, in the order of [`RULES`].
pub fn scan_run(events: &Numbered, cx: &RunContext) -> Vec<Finding> {
    RULES.into_iter().filter_map(|r| check(r, events, cx)).collect()
}

fn finding(rule: Rule, (at, e): (usize, &Event), detail: String) -> Finding {
    Finding { scanner: rule.name().to_string(), event: at, step: e.step, detail }
}

fn finished<'a>(events: &Numbered<'a>) -> Option<(usize, &'a Event)> {
    events.iter().rev().find(|(_, e)| matches!(e.kind, EventKind::RunFinished { .. })).copied()
}

fn check<'a>(rule: Rule, events: &Numbered<'a>, cx: &RunContext) -> Option<Finding> {
    let end = finished(events);
    let outcome = end.and_then(|(_, e)| match &e.kind {
        EventKind::RunFinished { outcome, answer, .. } => Some((outcome, answer.as_deref())),
        _ => None,
    });
    let answered = matches!(outcome, Some((RunOutcome::Answered, _)));
    match rule {
        Rule::Looped => {
            // Attempts: calls made, and calls refused as repeats of one
            // that had answered (a refusal does not record the arguments).
            let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
            let mut last_args: BTreeMap<&str, String> = BTreeMap::new();
            for &(at, e) in events {
                let key = match &e.kind {
                    EventKind::ToolCall { tool, args, .. } => {
                        let args = canonical(args);
                        last_args.insert(tool, args.clone());
                        (tool.clone(), args)
                    }
                    EventKind::Refused { tool, reason: RefuseReason::Repeated, .. } => {
                        (tool.clone(), last_args.get(tool.as_str()).cloned().unwrap_or_default())
                    }
                    _ => continue,
                };
                let n = seen.entry(key.clone()).or_default();
                *n += 1;
                if *n == 3 {
                    return Some(finding(rule, (at, e), format!("{} called with {} three times", key.0, key.1)));
                }
            }
            None
        }
        Rule::IgnoredError => {
            if !answered {
                return None;
            }
            let mut last_error = None;
            for &(at, e) in events {
                match &e.kind {
                    EventKind::ToolResult { tool, outcome: ToolOutcome::Err { error }, .. } => {
                        last_error =
                            Some((at, e, format!("{tool} failed ({}), then the run answered", short(&error.message))))
                    }
                    EventKind::ToolResult { outcome: ToolOutcome::Ok { .. }, .. } => last_error = None,
                    _ => {}
                }
            }
            last_error.map(|(at, e, d)| finding(rule, (at, e), d))
        }
        Rule::GaveUp => {
            let (RunOutcome::Answered, answer) = outcome? else { return None };
            let answer = answer.unwrap_or("").trim();
            let lower = answer.to_lowercase();
            let gives_up = answer.is_empty() || GIVE_UP.iter().any(|p| lower.contains(p));
            if !gives_up {
                return None;
            }
            let said = if answer.is_empty() { "an empty answer".to_string() } else { format!("\"{}\"", short(answer)) };
            Some(finding(rule, end?, format!("answered {said}")))
        }
        Rule::RanOut => match outcome? {
            (RunOutcome::MaxSteps, _) => Some(finding(rule, end?, "out of steps".into())),
            (RunOutcome::OutOfBudget, _) => Some(finding(rule, end?, "out of budget".into())),
            _ => None,
        },
        Rule::BtpRefused => events.iter().find_map(|&(at, e)| match &e.kind {
            EventKind::Refused {
                tool, reason: reason @ (RefuseReason::OverBudget | RefuseReason::Forbidden), ..
            } => {
                let why = if *reason == RefuseReason::OverBudget { "over the budget" } else { "its allowance spent" };
                Some(finding(rule, (at, e), format!("{tool} refused: {why}")))
            }
            _ => None,
        }),
        Rule::NarrowedOut => {
            for (i, &(at, e)) in events.iter().enumerate() {
                let EventKind::ToolsNarrowed { dropped, .. } = &e.kind else { continue };
                let called_after = |t: &String| {
                    events[i + 1..]
                        .iter()
                        .any(|(_, e)| matches!(&e.kind, EventKind::ToolCall { tool, .. } if tool == t))
                };
                if let Some(t) = dropped.iter().find(|t| cx.gold_tools.contains(t) || called_after(t)) {
                    return Some(finding(rule, (at, e), format!("{t} was narrowed away")));
                }
            }
            None
        }
        Rule::ReplyCapped => events.iter().find_map(|&(at, e)| match &e.kind {
            EventKind::ModelReply { role, capped: Some(c), .. } => {
                let cap = c.max_tokens.map(|n| format!(" of {n} tokens")).unwrap_or_default();
                Some(finding(rule, (at, e), format!("the {role}'s reply was cut at its cap{cap}")))
            }
            _ => None,
        }),
        Rule::ModelFailed => events.iter().rev().find_map(|&(at, e)| match &e.kind {
            EventKind::ModelFailed { role, model, error, .. } => {
                Some(finding(rule, (at, e), format!("{role} ({model}): {}", short(error))))
            }
            _ => None,
        }),
        Rule::Crashed => match outcome? {
            (RunOutcome::Failed { error }, _) => Some(finding(rule, end?, short(error))),
            (RunOutcome::BadPlan { error }, _) => Some(finding(rule, end?, format!("bad plan: {}", short(error)))),
            _ => None,
        },
        Rule::ExpectFailed => match &end?.1.kind {
            EventKind::RunFinished { expect: Some(v), .. } if !v.met() => {
                let each: Vec<String> = v.broken.iter().map(|b| format!("{}: {}", b.expect, b.detail)).collect();
                Some(finding(rule, end?, short(&each.join("; "))))
            }
            _ => None,
        },
    }
}

/// What an answer that gives up says (lowercase).
const GIVE_UP: [&str; 10] = [
    "i cannot",
    "i can't",
    "unable to",
    "could not find",
    "couldn't find",
    "i don't know",
    "i do not know",
    "not able to",
    "no answer",
    "sorry",
];

/// The arguments as one string whatever their keys' order (the build's
/// maps keep the order they were written in).
fn canonical(v: &serde_json::Value) -> String {
    fn sorted(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                serde_json::Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            serde_json::Value::Array(a) => serde_json::Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

fn short(s: &str) -> String {
    crate::text::ellipsis(&crate::text::one_line(s), 119)
}
