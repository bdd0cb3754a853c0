//! ATC's part of the folded state: the program of the current run (its
//! source, the line running, each call's result beside its line, the
//! failure and the rewrite) and the probes of the session.

use serde_json::Value;

use crate::engine::event::{EventKind, ToolOutcome};
use crate::program::sandbox::FailKind;

/// How many probes the state keeps for display.
const RECENT_PROBES: usize = 64;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramView {
    pub round: u32,
    pub source: String,
    /// Against the program before it (empty at round 0).
    pub diff: String,
    pub by_user: bool,
    pub calls: Vec<ProgramCall>,
    pub prints: Vec<String>,
    pub failure: Option<ProgramFailure>,
    pub returned: Option<Value>,
    /// The program no longer runs: it returned, failed, or its run ended
    /// under it (stopped, restarted, out of budget).
    pub ended: bool,
}

impl ProgramView {
    /// The line whose call is running now (or waits at the gate to run);
    /// none once the program ended, whatever its calls last heard.
    pub fn running_line(&self) -> Option<u32> {
        if self.ended {
            return None;
        }
        self.calls.last().filter(|c| c.result.is_none()).and_then(|c| c.line)
    }
}

/// One tool call a program made, and what came back to it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramCall {
    pub line: Option<u32>,
    pub tool: String,
    pub call: Option<u64>,
    /// None while it runs; a refusal is an error that never reached the tool.
    pub result: Option<Result<Value, String>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProgramFailure {
    pub kind: FailKind,
    pub error: String,
    pub line: Option<u32>,
    pub snippet: String,
    pub tool: Option<String>,
    pub last: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProbeView {
    pub tool: String,
    pub round: u32,
    pub sample: u32,
    pub question: String,
    pub program: String,
    pub helpers: Vec<String>,
    pub response: Option<Value>,
    pub schema: Option<Value>,
    pub error: Option<String>,
}

/// Folds an ATC event into the run's program view; other events that
/// concern a program's calls (the call, its result, a refusal) too.
pub fn apply(program: &mut Option<ProgramView>, kind: &EventKind) {
    match kind {
        EventKind::ProgramWritten { round, program: source, diff, by_user } => {
            *program = Some(ProgramView {
                round: *round,
                source: source.clone(),
                diff: diff.clone(),
                by_user: *by_user,
                ..ProgramView::default()
            });
        }
        EventKind::ProgramAt { line, tool } => {
            if let Some(p) = program.as_mut() {
                // A program waits for each call, so a new one means the
                // calls before it ended, even one whose end no event told
                // (a tool missing from the library never reaches ToolCall).
                for c in p.calls.iter_mut().filter(|c| c.result.is_none()) {
                    c.result = Some(Err("no result was recorded".into()));
                }
                p.calls.push(ProgramCall { line: *line, tool: tool.clone(), call: None, result: None });
            }
        }
        EventKind::ProgramPrinted { text } => {
            if let Some(p) = program.as_mut() {
                p.prints.push(text.clone());
            }
        }
        EventKind::ProgramFailed { kind, error, line, snippet, tool, last, .. } => {
            if let Some(p) = program.as_mut() {
                p.failure = Some(ProgramFailure {
                    kind: *kind,
                    error: error.clone(),
                    line: *line,
                    snippet: snippet.clone(),
                    tool: tool.clone(),
                    last: *last,
                });
                p.ended = true;
            }
        }
        EventKind::ProgramReturned { value, .. } => {
            if let Some(p) = program.as_mut() {
                p.returned = Some(value.clone());
                p.ended = true;
            }
        }
        EventKind::RunFinished { .. } => {
            if let Some(p) = program.as_mut() {
                p.ended = true;
            }
        }
        EventKind::ToolCall { call, tool, lane: None, .. } => {
            if let Some(c) = pending(program, tool) {
                c.call = Some(*call);
            }
        }
        EventKind::ToolResult { call, outcome, .. } => {
            if let Some(c) = program.as_mut().and_then(|p| p.calls.iter_mut().rev().find(|c| c.call == Some(*call))) {
                c.result = Some(match outcome {
                    ToolOutcome::Ok { value } => Ok(value.clone()),
                    ToolOutcome::Err { error } => Err(error.to_string()),
                });
            }
        }
        EventKind::Refused { tool, detail, .. } => {
            if let Some(c) = pending(program, tool) {
                c.result = Some(Err(format!("refused: {detail}")));
            }
        }
        _ => {}
    }
}

/// The program's call of `tool` that has not reached the tool yet.
fn pending<'a>(program: &'a mut Option<ProgramView>, tool: &str) -> Option<&'a mut ProgramCall> {
    program.as_mut()?.calls.iter_mut().rev().find(|c| c.call.is_none() && c.result.is_none() && c.tool == tool)
}

/// Keeps a probe for display (the most recent ones).
pub fn apply_probe(probes: &mut Vec<ProbeView>, kind: &EventKind) {
    if let EventKind::Probed { tool, round, sample, question, program, helpers, response, schema, error } = kind {
        probes.push(ProbeView {
            tool: tool.clone(),
            round: *round,
            sample: *sample,
            question: question.clone(),
            program: program.clone(),
            helpers: helpers.clone(),
            response: response.clone(),
            schema: schema.clone(),
            error: error.clone(),
        });
        if probes.len() > RECENT_PROBES {
            probes.remove(0);
        }
    }
}
