//! Runs a program against the host: the sandbox runs on a thread of its
//! own (rhai is synchronous), and each tool call it makes comes back here
//! to go through the host like any other call — the gate (so a user can
//! pause and step inside a program), injected faults, BTP's admission and
//! spending, and the events. The program waits while its call runs.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::mpsc;

use crate::budget::btp::{self, RunBudget};
use crate::budget::experience::Experience;
use crate::engine::event::EventKind;
use crate::engine::{Halt, Host};
use crate::program::sandbox::{self, Binding, CallRequest, FailKind, Failure, Limits, Outcome, Port};

enum FromProgram {
    Call(CallRequest, std::sync::mpsc::Sender<Result<Value, String>>),
    Print(String),
    Done(Outcome),
}

struct ChannelPort {
    tx: mpsc::UnboundedSender<FromProgram>,
}

impl Port for ChannelPort {
    fn call(&mut self, req: CallRequest) -> Result<Value, String> {
        let (reply, answer) = std::sync::mpsc::channel();
        self.tx.send(FromProgram::Call(req, reply)).map_err(|_| "the session ended".to_string())?;
        answer.recv().map_err(|_| "the session stopped the program".to_string())?
    }

    fn print(&mut self, text: String) {
        let _ = self.tx.send(FromProgram::Print(text));
    }
}

/// What one execution did besides its outcome: every response each tool
/// gave (for probing), and the usages BTP keeps as experience.
#[derive(Default)]
pub struct Trail {
    pub responses: Vec<(String, Value)>,
    pub usages: Vec<Experience>,
}

/// Runs `source` to its end. A halt of the session (stop, restart, the
/// model or engine failing) stops the program and is returned as such.
pub async fn execute(
    host: &mut dyn Host,
    source: &str,
    bindings: &[Binding],
    limits: &Limits,
    query: &str,
    mut budget: Option<&mut RunBudget>,
    trail: &mut Trail,
) -> Result<Outcome, Halt> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let spawned = {
        let (source, bindings, limits, cancel) =
            (source.to_string(), bindings.to_vec(), limits.clone(), cancel.clone());
        let tx = tx.clone();
        std::thread::Builder::new().name("atc-program".into()).spawn(move || {
            let out = sandbox::run(&source, &bindings, &limits, Box::new(ChannelPort { tx: tx.clone() }), cancel);
            let _ = tx.send(FromProgram::Done(out));
        })
    };
    drop(tx);
    if let Err(e) = spawned {
        return Ok(failed(FailKind::Runtime, format!("the sandbox could not start: {e}")));
    }
    // The program stops at its next operation or call once this is set.
    let stop = |halt: Halt| {
        cancel.store(true, Ordering::Relaxed);
        Err(halt)
    };
    let mut notes = Vec::new();
    loop {
        let Some(msg) = rx.recv().await else {
            return Ok(failed(FailKind::Runtime, "the sandbox ended without an outcome".into()));
        };
        match msg {
            FromProgram::Done(out) => return Ok(out),
            FromProgram::Print(text) => {
                if let Err(e) = host.emit(EventKind::ProgramPrinted { text }) {
                    return stop(e.into());
                }
            }
            FromProgram::Call(req, reply) => {
                if let Err(e) = host.emit(EventKind::ProgramAt { line: req.line, tool: req.tool.clone() }) {
                    return stop(e.into());
                }
                if let Some((reason, detail)) =
                    budget.as_deref().and_then(|b| crate::engine::budgeting::refusal(b, &req.tool))
                {
                    if let Err(e) =
                        host.emit(EventKind::Refused { tool: req.tool.clone(), reason, detail: detail.clone() })
                    {
                        return stop(e.into());
                    }
                    let _ = reply.send(Err(format!("refused by the budget: {detail}")));
                    continue;
                }
                let result = match host.tool(&req.tool, &req.args).await {
                    Ok(r) => r,
                    Err(halt) => return stop(halt),
                };
                let raw: Result<Value, String> = result.map_err(|e| e.message);
                let helpful = btp::rule(&raw);
                trail.usages.push(btp::usage(query, &req.tool, &req.args, &raw, helpful));
                if let Ok(v) = &raw {
                    trail.responses.push((req.tool.clone(), v.clone()));
                }
                if let Some(b) = budget.as_deref_mut() {
                    if let Err(e) = host.spend(b, &req.tool, &mut notes) {
                        return stop(e.into());
                    }
                    if !helpful && b.blacklisted.insert(req.tool.clone()) {
                        let reason = "its result was not helpful for this task".to_string();
                        if let Err(e) = host.emit(EventKind::Blacklisted { tool: req.tool.clone(), reason }) {
                            return stop(e.into());
                        }
                    }
                }
                // A program that ended meanwhile (cancelled) no longer listens.
                let _ = reply.send(raw);
            }
        }
    }
}

fn failed(kind: FailKind, message: String) -> Outcome {
    Outcome { result: Err(Failure { kind, message, line: None, tool: None }), calls: Vec::new() }
}
