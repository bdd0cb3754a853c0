//! Approvals and breakpoints from the config and the command line: the
//! workbench gets them as controls applied before the first task; a
//! headless `run` takes the flags (it waits for `switchyard attach` or
//! `ctl` at each) and goes on without the config's sections, saying so.

use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::engine::debug::{ApprovalPolicy, Condition};
use switchyard::engine::{Control, Scheduled};

use super::args::SessionArgs;

/// The config's approvals and breakpoints, then the flags', as controls
/// before the first task. Nothing when none is set, so a trace is as it was.
pub(super) fn schedule(config: &Config, s: &SessionArgs) -> Result<Vec<Scheduled>> {
    flagged(config.approve.clone(), config.breaks.clone(), s)
}

/// `run` answers from another process: the flags' approvals and
/// breakpoints wait for `attach` or `ctl`, the config's sections (written
/// for the workbench) are left out with a warning.
pub(super) fn headless(config: &Config, s: &SessionArgs) -> Result<Vec<Scheduled>> {
    if config.approve != ApprovalPolicy::default() || !config.breaks.is_empty() {
        eprintln!(
            "note: the config's [approve] and [debug] breaks are for the workbench; this headless run goes on without them"
        );
    }
    flagged(ApprovalPolicy::default(), Vec::new(), s)
}

/// `policy` and `breaks` with the flags' added, as controls.
fn flagged(mut policy: ApprovalPolicy, mut breaks: Vec<Condition>, s: &SessionArgs) -> Result<Vec<Scheduled>> {
    for a in &s.approve {
        policy.add(a).map_err(|e| eyre!("--approve {e}"))?;
    }
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
