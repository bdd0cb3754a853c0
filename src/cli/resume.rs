//! `resume`: a suspended (or killed) session taken up again where it
//! stopped, from its own trace. The fork machinery replays the trace, so
//! nothing is called again, and the session goes on as it was there:
//! paused, holding a lane, or with the approval that waited open again.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::SessionState;
use switchyard::engine::event::EventKind;
use switchyard::engine::fold::Mode;
use switchyard::engine::fork::{AtForkPoint, resume_point};
use switchyard::remote::SessionKind;
use switchyard::session::SessionOptions;
use switchyard::session::fork::{ForkRequest, prepare_fork};
use switchyard::ui::Theme;

use super::run::report;
use super::setup::{Ran, read_trace_noting, run_headless, runtime, say_suspended};

#[derive(Args, Debug)]
pub(super) struct ResumeArgs {
    /// The trace of the suspended session (or of one whose process was killed).
    file: PathBuf,
    /// Go on headless, as `run` does (`switchyard attach` or `ctl` steer it); default: the workbench.
    #[arg(long)]
    headless: bool,
    /// The task file the session ran, when it is not the config's.
    #[arg(long)]
    tasks: Option<PathBuf>,
    /// Where the resumed session's trace goes (default: DATA_DIR/traces/resume-SECONDS.jsonl).
    /// It holds the whole session: the events replayed, then the new ones.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Timestamps in ticks after the point it resumes from, as `run --logical-clock`.
    #[arg(long)]
    logical_clock: bool,
    /// dark, light, high-contrast, or a theme file (default: the config's).
    #[arg(long, conflicts_with = "headless")]
    theme: Option<String>,
    /// Headless: print the summary as JSON.
    #[arg(long, requires = "headless")]
    json: bool,
}

pub(super) fn resume(config: &Config, a: ResumeArgs) -> Result<ExitCode> {
    let events = read_trace_noting(&a.file)?;
    let at = resume_point(&events).map_err(|e| eyre!("{}: {e}", a.file.display()))?;
    let pace_ms = match events.first().map(|e| &e.kind) {
        Some(EventKind::SessionStarted { pace_ms, .. }) => *pace_ms,
        _ => 0,
    };
    let before = SessionState::from_events(&events[..at]);
    let theme = match a.headless {
        false => {
            let theme = Theme::resolve(a.theme.as_deref().unwrap_or(&config.theme))?;
            switchyard::ui::term::check_terminal()?;
            Some(theme)
        }
        true => None,
    };
    let (opts, trace) =
        super::fork::replayed_options(config, a.logical_clock, a.tasks.as_ref(), a.trace.as_ref(), "resume")?;
    let mut opts = SessionOptions { pace_ms, linger: theme.is_some(), ..opts };
    let req =
        ForkRequest { parent: a.file.clone(), at, at_fork_point: AtForkPoint::AsRecorded, ..ForkRequest::default() };
    let rt = runtime()?;
    let (config, _gateway) = super::fork::agent_for_fork(config, &rt, &a.file, &mut opts)
        .wrap_err_with(|| format!("cannot resume {}", a.file.display()))?;
    let mut prepared = prepare_fork(&config, &req, &opts)?;
    let kind = if theme.is_some() { SessionKind::Ui } else { SessionKind::Run };
    let endpoint = super::remote::serve(&config, &rt, &mut prepared, kind, Some(&trace))?;
    let Some(theme) = theme else {
        if let Some(e) = &endpoint {
            let id = e.id();
            eprintln!("session {id}: resumed from {} at its event {at}; {}", a.file.display(), waits(&before, id));
        }
        return match run_headless(&rt, prepared)? {
            Ran::Done(outcome) => report(&outcome.state, a.json, Some(&trace)),
            Ran::Suspended => Ok(say_suspended(Some(&trace))),
        };
    };
    let end = rt.block_on(switchyard::ui::term::run_live(prepared, theme, config.data_dir().ok()))?;
    println!("resumed from {} at its event {at}", a.file.display());
    Ok(super::ui::ended(end, &trace))
}

/// What a headless session resumed in a waiting state waits for.
fn waits(before: &SessionState, id: &str) -> String {
    if before.debug.pending.is_some() {
        format!("a call waits for its approval: switchyard attach {id}, or ctl {id} approve / reject")
    } else if before.mode == Mode::Paused {
        format!("paused, as it was: switchyard ctl {id} resume goes on")
    } else {
        format!("switchyard attach {id} opens the workbench on it")
    }
}
