//! Approvals and breakpoints from the config and the command line: the
//! workbench gets them as controls applied before the first task; a
//! headless `run`, with nobody to approve a call or resume a pause, refuses
//! the flags and goes on without the config's sections, saying so.

use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::engine::debug::{APPROVE_FORMS, ApprovalPolicy, Condition};
use switchyard::engine::{Control, Scheduled};

use super::args::SessionArgs;

/// The config's approvals and breakpoints, then the flags', as controls
/// before the first task. Nothing when none is set, so a trace is as it was.
pub(super) fn schedule(config: &Config, s: &SessionArgs) -> Result<Vec<Scheduled>> {
    let mut policy = config.approve.clone();
    for a in &s.approve {
        policy.add(a).map_err(|e| eyre!("--approve {e}"))?;
    }
    let mut breaks = config.breaks.clone();
    for b in &s.breaks {
        breaks.push(b.parse::<Condition>().map_err(|e| eyre!("--break {e}"))?);
    }
    let mut out = Vec::new();
    if policy != ApprovalPolicy::default() {
        out.push(Scheduled { before_task: 1, control: Control::SetApproval { policy } });
    }
    out.extend(
        breaks.into_iter().map(|condition| Scheduled { before_task: 1, control: Control::SetBreakpoint { condition } }),
    );
    Ok(out)
}

/// `run` has nobody to answer: the flags are an error, the config's
/// sections are left out with a warning.
pub(super) fn refuse_headless(config: &Config, s: &SessionArgs) -> Result<()> {
    if !s.approve.is_empty() {
        return Err(eyre!(
            "--approve: a headless run has nobody to approve a call; use `switchyard ui` (forms: {APPROVE_FORMS})"
        ));
    }
    if !s.breaks.is_empty() {
        return Err(eyre!("--break: a headless run has nobody to resume it after a pause; use `switchyard ui`"));
    }
    if config.approve != ApprovalPolicy::default() || !config.breaks.is_empty() {
        eprintln!(
            "note: the config's [approve] and [debug] breaks are for the workbench; this headless run goes on without them"
        );
    }
    Ok(())
}
