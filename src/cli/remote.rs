//! Sessions from another process: the endpoint every session serves, and
//! `ps`, `attach` and `ctl`, which find a session there and look at it or
//! steer it.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::debug::{Condition, Decision};
use switchyard::engine::{Control, EventKind, ParamChange, ViewerAction, fault_control};
use switchyard::remote::protocol::ServerMsg;
use switchyard::remote::{Connection, Endpoint, EndpointGuard, Liveness, Registry, SessionKind, SessionRecord, Status};
use switchyard::session::Prepared;

/// How long `ctl` waits for the session to take its control: a session
/// takes controls at its next decision point.
const TAKEN_WAIT: Duration = Duration::from_secs(10);
/// After it took it, how long `ctl` waits for a refusal.
const REFUSAL_WAIT: Duration = Duration::from_millis(300);

/// Serves `prepared`'s control endpoint under the config's data directory
/// while the guard lives. A session that cannot serve one runs anyway,
/// saying why on stderr.
pub(super) fn serve(
    config: &Config,
    rt: &tokio::runtime::Runtime,
    prepared: &mut Prepared,
    kind: SessionKind,
    trace: Option<&std::path::Path>,
) -> Option<EndpointGuard> {
    let started = config.data_dir().map_err(|e| e.to_string()).and_then(|dir| {
        let _in_runtime = rt.enter();
        let record = SessionRecord::here(kind, None, trace.map(std::path::Path::to_path_buf));
        let events = prepared.engine.subscribe();
        Endpoint::start(Registry::under(&dir), record, events, prepared.handle.clone()).map_err(|e| e.to_string())
    });
    match started {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("warning: no control endpoint for this session (switchyard attach cannot reach it): {e}");
            None
        }
    }
}

fn registry(config: &Config) -> Result<Registry> {
    Ok(Registry::under(&config.data_dir()?))
}

/// A viewer's name in the session's trace: what it is and its process.
fn viewer(what: &str) -> String {
    format!("{what}-{}", std::process::id())
}

#[derive(Args, Debug)]
pub(super) struct PsArgs {
    /// One JSON object per session.
    #[arg(long)]
    json: bool,
}

/// `switchyard ps`: the live sessions, one a line; the records of dead ones
/// removed.
pub(super) fn ps(config: &Config, a: PsArgs) -> Result<ExitCode> {
    let reg = registry(config)?;
    let rt = super::setup::runtime()?;
    let mut listed = 0;
    for (record, live) in reg.list()? {
        if live == Liveness::Stale {
            reg.remove(&record.id);
            eprintln!("removed the record of session {} (pid {}): it has ended", record.id, record.pid);
            continue;
        }
        let status = rt.block_on(async {
            let path = reg.socket(&record.id);
            Connection::open(&path, &viewer("ps"), None, false).await.map(|c| c.status)
        });
        let status = match status {
            Ok(s) => s,
            Err(e) => {
                eprintln!("session {}: {e}", record.id);
                continue;
            }
        };
        if a.json {
            println!("{}", serde_json::json!({"session": record, "status": status}));
        } else {
            println!("{}", ps_line(&record, &status));
        }
        listed += 1;
    }
    if listed == 0 && !a.json {
        eprintln!("no live sessions under {}", reg.dir().display());
    }
    Ok(ExitCode::SUCCESS)
}

fn ps_line(r: &SessionRecord, s: &Status) -> String {
    let state = if s.ended {
        "ended"
    } else if s.paused {
        "paused"
    } else {
        "running"
    };
    let waiting = match s.approvals_waiting {
        0 => String::new(),
        n => format!("  {n} approval waiting"),
    };
    let viewers = match s.viewers {
        0 => String::new(),
        n => format!("  {n} attached"),
    };
    let command = r.command.iter().skip(1).cloned().collect::<Vec<_>>().join(" ");
    let command = switchyard::text::ellipsis(&command, 60);
    format!(
        "{:<10} pid {:<8} {:<9} tasks {}/{}  {state}{waiting}{viewers}  switchyard {command}",
        r.id, r.pid, r.kind, s.tasks_done, s.tasks
    )
}

#[derive(Args, Debug)]
pub(super) struct AttachArgs {
    /// The session's id, as `switchyard ps` lists it (default: the only live one).
    id: Option<String>,
    /// dark, light, high-contrast, or a theme file (default: the config's).
    #[arg(long)]
    theme: Option<String>,
}

/// `switchyard attach`: the workbench on a live session, from its first
/// event on; `d` leaves it running.
pub(super) fn attach(config: &Config, a: AttachArgs) -> Result<ExitCode> {
    let theme = switchyard::ui::Theme::resolve(a.theme.as_deref().unwrap_or(&config.theme))?;
    let reg = registry(config)?;
    let record = reg.find(a.id.as_deref())?;
    switchyard::ui::term::check_terminal()?;
    let rt = super::setup::runtime()?;
    let id = record.id.clone();
    let how = rt.block_on(async {
        let conn = Connection::open(&reg.socket(&id), &viewer("attach"), Some(0), true).await?;
        Ok::<_, color_eyre::Report>(switchyard::ui::term::run_attached(conn, theme, config.data_dir().ok()).await?)
    })?;
    use switchyard::ui::term::Attached;
    match how {
        Attached::Detached => println!("detached from session {id}; it goes on (switchyard attach {id})"),
        Attached::Ended => println!("session {id} has ended"),
        Attached::Lost(why) => return Err(eyre!("session {id}: the connection was lost: {why}")),
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args, Debug)]
pub(super) struct CtlArgs {
    /// The session's id, as `switchyard ps` lists it.
    id: String,
    #[command(subcommand)]
    command: CtlCommand,
}

#[derive(Subcommand, Debug)]
enum CtlCommand {
    /// Tasks done of total, paused or running, what waits for a decision.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Hold the session at its next decision point.
    Pause,
    Resume,
    /// Let one model or tool call through, then pause again.
    Step,
    /// End the session, as `q` does in its workbench.
    Stop,
    /// End its process but not the session: `switchyard resume TRACE` takes it up.
    Suspend,
    /// Break a tool or a model: TOOL:MODE or model:TARGET:MODE, as --fault takes.
    Fault {
        spec: String,
    },
    /// Clear one tool's faults, or every tool's.
    ClearFault {
        tool: Option<String>,
    },
    /// Let the call (or keep the result or reply) that waits for a decision.
    Approve,
    /// Refuse the call that waits; the model is told why.
    Reject {
        #[arg(default_value = "rejected from ctl")]
        note: String,
    },
    /// A parameter, as --set takes it: alpha=0.8, beta=…, tau=…, budget=…
    Set {
        change: String,
    },
    /// Give a tool's ToolNet score a value.
    Score {
        tool: String,
        score: f64,
    },
    /// Pause before the calls a condition names, as --break takes it.
    Break {
        condition: String,
    },
    /// Milliseconds to wait before each call.
    Pace {
        ms: u64,
    },
}

/// `switchyard ctl ID COMMAND`: one control or request over the protocol.
pub(super) fn ctl(config: &Config, a: CtlArgs) -> Result<ExitCode> {
    let reg = registry(config)?;
    let record = reg.find(Some(&a.id))?;
    let rt = super::setup::runtime()?;
    rt.block_on(async {
        // From the end: only what happens after the control matters.
        let mut conn = Connection::open(&reg.socket(&record.id), &viewer("ctl"), Some(u64::MAX), false).await?;
        let control = match a.command {
            CtlCommand::Status { json } => {
                let s = &conn.status;
                if json {
                    println!("{}", serde_json::json!({"session": conn.session, "status": s}));
                } else {
                    println!("{}", ps_line(&conn.session, s));
                }
                return Ok(ExitCode::SUCCESS);
            }
            command => to_control(command, &conn.status)?,
        };
        let word = describe(&control);
        let suspend = control == Control::Suspend;
        conn.send(control).await?;
        let code = taken(&mut conn, &word).await?;
        if suspend && code == ExitCode::SUCCESS {
            match &record.trace {
                Some(t) => println!("take it up again with: switchyard resume {}", t.display()),
                None => println!("it wrote no trace (no --trace): it cannot be resumed"),
            }
        }
        Ok(code)
    })
}

fn to_control(command: CtlCommand, status: &Status) -> Result<Control> {
    let waiting = || status.waiting_call.ok_or_else(|| eyre!("nothing waits for a decision in this session"));
    Ok(match command {
        CtlCommand::Status { .. } => unreachable!("answered without a control"),
        CtlCommand::Pause => Control::Pause,
        CtlCommand::Resume => Control::Resume,
        CtlCommand::Step => Control::Step,
        CtlCommand::Stop => Control::Stop,
        CtlCommand::Suspend => Control::Suspend,
        CtlCommand::Fault { spec } => fault_control(&spec).map_err(|e| eyre!("fault: {e}"))?,
        CtlCommand::ClearFault { tool } => Control::ClearFault { tool },
        CtlCommand::Approve => Control::Decide { call: waiting()?, decision: Decision::Approve },
        CtlCommand::Reject { note } => Control::Decide { call: waiting()?, decision: Decision::Reject { note } },
        CtlCommand::Set { change } => {
            Control::SetParam { change: ParamChange::parse(&change).map_err(|e| eyre!("set {change}: {e}"))? }
        }
        CtlCommand::Score { tool, score } => Control::EditScore { tool, score },
        CtlCommand::Break { condition } => Control::SetBreakpoint {
            condition: condition.parse::<Condition>().map_err(|e| eyre!("break {condition}: {e}"))?,
        },
        CtlCommand::Pace { ms } => Control::SetPace { ms },
    })
}

/// The control's name in messages, from its tag in the protocol.
fn describe(c: &Control) -> String {
    serde_json::to_value(c)
        .ok()
        .and_then(|v| v.get("control").and_then(|t| t.as_str()).map(|t| t.replace('_', " ")))
        .unwrap_or_else(|| "control".into())
}

/// Waits until the session records the control as ours, then for a
/// refusal of it: exit 1 with the session's reason, else 0.
async fn taken(conn: &mut Connection, word: &str) -> Result<ExitCode> {
    let me = viewer("ctl");
    let id = conn.session.id.clone();
    let seen = tokio::time::timeout(TAKEN_WAIT, async {
        loop {
            match conn.next().await? {
                Some(ServerMsg::Event { event }) => {
                    if let EventKind::Viewer { viewer, action: ViewerAction::Sent { .. } } = &event.kind
                        && *viewer == me
                    {
                        return Ok::<bool, color_eyre::Report>(true);
                    }
                }
                Some(ServerMsg::Ended) | None => return Ok(false),
                Some(_) => {}
            }
        }
    })
    .await;
    match seen {
        Err(_) => {
            println!(
                "session {id}: {word} sent; not taken yet (the session takes controls at its next decision point)"
            );
            return Ok(ExitCode::SUCCESS);
        }
        Ok(Ok(false)) => return Err(eyre!("session {id} has ended; {word} was not taken")),
        Ok(Err(e)) => return Err(e).wrap_err(format!("session {id}")),
        Ok(Ok(true)) => {}
    }
    let refusal = tokio::time::timeout(REFUSAL_WAIT, async {
        while let Ok(Some(msg)) = conn.next().await {
            if let ServerMsg::Event { event } = msg {
                return match event.kind {
                    EventKind::ControlRejected { control, why } => Some(format!("{control} refused: {why}")),
                    _ => None,
                };
            }
        }
        None
    })
    .await;
    match refusal {
        Ok(Some(why)) => {
            eprintln!("error: session {id}: {why}");
            Ok(ExitCode::FAILURE)
        }
        _ => {
            println!("session {id}: {word} taken");
            Ok(ExitCode::SUCCESS)
        }
    }
}
