//! Scanning many runs for failures (`switchyard scan`, docs/src/scan.md):
//! rule scanners over each run's events, a model scanner that names a
//! failed run's failure in a short phrase, and the phrases grouped into
//! kinds of failure, each with its count, its tasks and example runs.
//! The results live in a folder of their own beside what was scanned.

pub mod compare;
pub mod group;
pub mod prompt;
pub mod report;
pub mod rules;
mod run;
pub mod source;
pub mod store;
mod transcript;
pub mod validate;

use crate::engine::event::{EventKind, RunOutcome};
use crate::model::ChatModel;

pub use rules::{RULES, Rule};
pub use run::{Finding, Named, Numbered, RunContext, RunEvents, RunScan, runs};
pub use source::{Item, Source, SourceError};
pub use transcript::transcript;

/// A run as the rule scanners see it: its task, its outcome and every
/// rule's finding. The model scanner's part is added by [`name_failure`].
pub fn scan_rules(trace: &str, setting: Option<&str>, run: &RunEvents, cx: &RunContext) -> RunScan {
    let mut task_id = String::new();
    let mut outcome = None;
    let mut success = None;
    for (_, e) in &run.events {
        match &e.kind {
            EventKind::RunStarted { task_id: t, .. } => task_id = t.clone(),
            EventKind::RunFinished { outcome: o, success: s, .. } => {
                outcome = Some(o.clone());
                success = *s;
            }
            _ => {}
        }
    }
    let failed = failed(outcome.as_ref(), success);
    RunScan {
        trace: trace.to_string(),
        run: run.run,
        task_id,
        setting: setting.map(str::to_string),
        outcome: outcome.as_ref().map_or("unfinished", crate::traces::diff::text::outcome_word).to_string(),
        success,
        failed,
        findings: rules::scan_run(&run.events, cx),
        failure: None,
        unscanned: None,
        faults: validate::faults_met(run.events.iter().map(|(_, e)| *e)),
    }
}

/// A run failed when it was judged wrong or ended without an answer
/// (out of steps or budget, on an error); one the user cut short did not.
pub fn failed(outcome: Option<&RunOutcome>, success: Option<bool>) -> bool {
    success == Some(false)
        || matches!(
            outcome,
            Some(
                RunOutcome::MaxSteps | RunOutcome::OutOfBudget | RunOutcome::Failed { .. } | RunOutcome::BadPlan { .. }
            )
        )
}

/// Asks the model scanner to name a failed run's failure. A reply that is
/// not a short phrase and an event of the run marks the run unscanned,
/// with the reason; so does a model that fails.
pub async fn name_failure(model: &dyn ChatModel, run: &RunEvents<'_>, scan: &mut RunScan) {
    let (text, numbers) = transcript(&run.events);
    // The lines the transcript kept (a long run's middle is left out).
    let shown: Vec<usize> = text.lines().filter_map(|l| l.strip_prefix('E')?.split_once(' ')?.0.parse().ok()).collect();
    match model.chat(&prompt::failure_request(&text)).await {
        Ok(reply) => match prompt::read_failure(&reply.text, &shown) {
            Ok((phrase, line)) => scan.failure = Some(Named { phrase, event: numbers[line - 1] }),
            Err(why) => {
                let said = crate::text::ellipsis(&crate::text::one_line(&reply.text), 99);
                scan.unscanned = Some(format!("{why} (it said: {said})"));
            }
        },
        Err(e) => scan.unscanned = Some(format!("the scanner model failed: {e}")),
    }
}

#[cfg(test)]
mod tests;
