//! A run as the model scanner reads it: one line per event that shows what
//! the agent did and what came back, numbered from 1 (`E12`) so the scanner
//! can point at one; the numbers map back to the trace's events. (Small
//! models count lines from 1 whatever the text says: numbering the lines so
//! is what makes their pointing right.) An injected fault's mark is left
//! out: the scanner reads a run as it would read any agent's.

use crate::engine::event::{Event, EventKind, ToolOutcome};
use crate::text::{ellipsis, one_line};
use crate::traces::diff::text::describe;

use super::run::Numbered;

/// At most this many lines: the run's first ones and its last ones.
const HEAD: usize = 16;
const TAIL: usize = 48;

/// The task, its expected answer when known, and the run's lines; and
/// the trace's event number of each line (line `E1` is `[0]`).
pub fn transcript(events: &Numbered) -> (String, Vec<usize>) {
    let mut head = String::new();
    let mut lines = Vec::new();
    let mut numbers = Vec::new();
    for &(at, e) in events {
        match &e.kind {
            EventKind::RunStarted { task, gold, .. } => {
                head += &format!("Task: {}\n", one_line(task));
                if let Some(g) = gold {
                    head += &format!("Expected answer: {}\n", one_line(g));
                }
            }
            kind if shown(kind) => {
                lines.push((e.step, line(e)));
                numbers.push(at);
            }
            _ => {}
        }
    }
    let mut text: Vec<String> =
        lines.iter().enumerate().map(|(i, (step, l))| format!("E{} step {step}: {l}", i + 1)).collect();
    if text.len() > HEAD + TAIL {
        let cut = text.len() - HEAD - TAIL;
        text.splice(HEAD..HEAD + cut, [format!("({cut} events left out)")]);
    }
    (format!("{head}Transcript:\n{}\n", text.join("\n")), numbers)
}

fn shown(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::ModelReply { .. }
            | EventKind::ModelFailed { .. }
            | EventKind::ToolCall { .. }
            | EventKind::ToolResult { .. }
            | EventKind::Refused { .. }
            | EventKind::ToolsNarrowed { .. }
            | EventKind::PlanWritten { .. }
            | EventKind::PlanRejected { .. }
            | EventKind::ProgramFailed { .. }
            | EventKind::ProgramReturned { .. }
            | EventKind::Blacklisted { .. }
            | EventKind::CallAbandoned { .. }
            | EventKind::RunFinished { .. }
    )
}

fn line(e: &Event) -> String {
    match &e.kind {
        EventKind::ToolResult { tool, outcome, .. } => match outcome {
            ToolOutcome::Ok { value } => format!("{tool} → ok {}", short(&value.to_string())),
            ToolOutcome::Err { error } => format!("{tool} → error {}", short(&error.message)),
        },
        EventKind::ToolsNarrowed { kept, dropped, .. } => {
            format!("tools narrowed: kept {}, dropped {}", kept.join(", "), dropped.join(", "))
        }
        EventKind::Blacklisted { tool, reason } => format!("{tool} blacklisted: {}", short(reason)),
        EventKind::CallAbandoned { why, .. } => format!("call abandoned: {}", short(why)),
        other => describe(other),
    }
}

fn short(s: &str) -> String {
    ellipsis(&one_line(s), 159)
}
