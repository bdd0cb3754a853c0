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
use switchyard::remote::{
    Connection, Endpoint, EndpointGuard, EvalOf, Liveness, Registry, SessionKind, SessionRecord, Status, TcpControl,
};
use switchyard::session::Prepared;
use switchyard::text::secret::Secret;

/// How long `ctl` waits for the session to take its control: a session
/// takes controls at its next decision point.
const TAKEN_WAIT: Duration = Duration::from_secs(10);
/// After it took it, how long `ctl` waits for a refusal.
const REFUSAL_WAIT: Duration = Duration::from_millis(300);

/// The variable that carries a TCP endpoint's token, to the session (to
/// use it rather than make one) and to `attach` and `ctl`.
const TOKEN_VAR: &str = "SWITCHYARD_CONTROL_TOKEN";

/// `--control ADDR`: where sessions of this process also listen over TCP.
static CONTROL: std::sync::OnceLock<std::net::SocketAddr> = std::sync::OnceLock::new();

/// `--control`: a port (on loopback) or an address and port.
pub(super) fn set_control(spec: &str) -> Result<()> {
    let addr = super::setup::listen_addr("--control", spec)?;
    let _ = CONTROL.set(addr);
    Ok(())
}

/// Serves `prepared`'s control endpoint under the config's data directory
/// while the guard lives. A session that cannot serve one runs anyway,
/// saying why on stderr; but one asked to listen over TCP (`--control`)
/// that cannot is an error.
pub(super) fn serve(
    config: &Config,
    rt: &tokio::runtime::Runtime,
    prepared: &mut Prepared,
    kind: SessionKind,
    trace: Option<&std::path::Path>,
) -> Result<Option<EndpointGuard>> {
    let tcp = match CONTROL.get() {
        Some(addr) => {
            let listener =
                std::net::TcpListener::bind(addr).wrap_err_with(|| format!("--control {addr}: cannot listen"))?;
            Some((listener, Secret::from_env(TOKEN_VAR)))
        }
        None => None,
    };
    let dir = match config.data_dir() {
        Ok(d) => d,
        Err(e) if tcp.is_none() => {
            eprintln!("warning: no control endpoint for this session (switchyard attach cannot reach it): {e}");
            return Ok(None);
        }
        Err(e) => return Err(e).wrap_err("--control"),
    };
    let registry = Registry::under(&dir);
    let record = SessionRecord::here(kind, None, trace.map(std::path::Path::to_path_buf));
    // A token made here is kept for the user alone; one given is not written.
    let (tcp, token_file) = match tcp {
        Some((listener, Some(token))) => (Some(TcpControl { listener, token }), None),
        Some((listener, None)) => {
            let token = Secret::random("syc");
            registry.ensure()?;
            let path = registry.write_token(&record.id, &token)?;
            (Some(TcpControl { listener, token }), Some(path))
        }
        None => (None, None),
    };
    let wants_tcp = tcp.is_some();
    let started = {
        let _in_runtime = rt.enter();
        let events = prepared.engine.subscribe();
        Endpoint::start_with(registry, record, events, prepared.handle.clone(), tcp)
    };
    match started {
        Ok(guard) => {
            if let (Some(addr), id) = (guard.tcp(), guard.id()) {
                match &token_file {
                    Some(f) => eprintln!(
                        "session {id}: also on tcp {addr}; its token is in {} (give it to attach or ctl as {TOKEN_VAR})",
                        f.display()
                    ),
                    None => eprintln!("session {id}: also on tcp {addr}, with the token in {TOKEN_VAR}"),
                }
            }
            Ok(Some(guard))
        }
        Err(e) if wants_tcp => Err(e).wrap_err("--control"),
        Err(e) => {
            eprintln!("warning: no control endpoint for this session (switchyard attach cannot reach it): {e}");
            Ok(None)
        }
    }
}

/// Serves the endpoint of one task's engine of an eval, `ID = PID-N` for
/// the task at `place` (N counted from 1), while what it returns lives. In
/// the runtime.
pub(super) fn serve_engine(
    config: &Config,
    prepared: &mut Prepared,
    place: usize,
    of: EvalOf,
) -> Option<Box<dyn Send>> {
    let dir = config.data_dir().ok()?;
    let record = SessionRecord { eval: Some(of), ..SessionRecord::here(SessionKind::Eval, Some(place + 1), None) };
    let events = prepared.engine.subscribe();
    match Endpoint::start(Registry::under(&dir), record, events, prepared.handle.clone()) {
        Ok(guard) => Some(Box::new(guard)),
        Err(e) => {
            // Said once per task would flood the progress bar: logged.
            tracing::warn!("no control endpoint for task {}: {e}", place + 1);
            None
        }
    }
}

/// A session named by `target`: an id of this data directory's, or an
/// address a session listens on with `--control` (its token from
/// `token_file` or the environment).
async fn connect(
    config: &Config,
    target: Option<&str>,
    token_file: Option<&std::path::Path>,
    viewer: &str,
    follow: Option<u64>,
    attach: bool,
) -> Result<Connection> {
    if let Some(addr) = target.filter(|t| t.parse::<std::net::SocketAddr>().is_ok()) {
        let token = match token_file {
            Some(f) => {
                let text = std::fs::read_to_string(f).wrap_err_with(|| format!("--token-file {}", f.display()))?;
                Secret::new(text.trim())
            }
            None => Secret::from_env(TOKEN_VAR).ok_or_else(|| {
                eyre!(
                    "{addr} is a TCP endpoint: give its token as {TOKEN_VAR} or --token-file (the session said where it keeps it)"
                )
            })?,
        };
        return Ok(Connection::open_tcp(addr, &token, viewer, follow, attach).await?);
    }
    let reg = registry(config)?;
    let record = reg.find(target)?;
    Ok(Connection::open(&reg.socket(&record.id), viewer, follow, attach).await?)
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
    let tcp = r.control.as_ref().map(|a| format!("  tcp {a}")).unwrap_or_default();
    let command = r.command.iter().skip(1).cloned().collect::<Vec<_>>().join(" ");
    let command = switchyard::text::ellipsis(&command, 60);
    format!(
        "{:<10} pid {:<8} {:<9} tasks {}/{}  {state}{waiting}{viewers}{tcp}  switchyard {command}",
        r.id, r.pid, r.kind, s.tasks_done, s.tasks
    )
}

#[derive(Args, Debug)]
pub(super) struct AttachArgs {
    /// The session's id, as `switchyard ps` lists it (default: the only live one), or the
    /// ADDRESS:PORT of one started with `--control` (its token in SWITCHYARD_CONTROL_TOKEN).
    id: Option<String>,
    /// The TCP endpoint's token from this file rather than SWITCHYARD_CONTROL_TOKEN.
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
    /// On an eval (its pid): follow this task first (its number; default: the first in flight).
    #[arg(long, value_name = "N")]
    task: Option<usize>,
    /// dark, light, high-contrast, or a theme file (default: the config's).
    #[arg(long)]
    theme: Option<String>,
}

/// The live engines of the eval of process `pid`, by task: (task, record).
fn eval_engines(reg: &Registry, pid: u32) -> Result<Vec<(usize, SessionRecord)>> {
    let mut out: Vec<(usize, SessionRecord)> = reg
        .list()?
        .into_iter()
        .filter(|(r, l)| *l == Liveness::Live && r.kind == SessionKind::Eval && r.pid == pid)
        .filter_map(|(r, _)| Some((r.id.rsplit_once('-')?.1.parse().ok()?, r)))
        .collect();
    out.sort_by_key(|(n, _)| *n);
    Ok(out)
}

/// The eval `target` names: its pid (no session has that id, its task
/// engines do), or none named and every live session one eval's.
fn eval_named(reg: &Registry, target: Option<&str>) -> Result<Option<u32>> {
    let live: Vec<SessionRecord> =
        reg.list()?.into_iter().filter(|(_, l)| *l == Liveness::Live).map(|(r, _)| r).collect();
    let pid = match target {
        Some(t) if live.iter().any(|r| r.id == t) => return Ok(None),
        Some(t) => match t.parse::<u32>() {
            Ok(pid) => pid,
            Err(_) => return Ok(None),
        },
        None => match live.first() {
            Some(r) if r.kind == SessionKind::Eval && live.iter().all(|o| o.pid == r.pid) => r.pid,
            _ => return Ok(None),
        },
    };
    let engines = live.iter().any(|r| r.kind == SessionKind::Eval && r.pid == pid);
    Ok((engines || is_eval_process(pid)).then_some(pid))
}

/// Whether process `pid` is a `switchyard eval`, by its command line where
/// /proc tells: an eval between two tasks, or not yet at its first, has no
/// engine listed.
fn is_eval_process(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|b| {
        let args: Vec<&[u8]> = b.split(|&c| c == 0).collect();
        args.first().is_some_and(|a| a.ends_with(b"switchyard")) && args.contains(&&b"eval"[..])
    })
}

/// `attach PID` on an eval: the workbench on one task's engine (the one
/// picked, else the first in flight), then on the next in flight as each
/// ends, until the eval does or the user detaches.
fn attach_eval(config: &Config, pid: u32, mut pick: Option<usize>, theme: switchyard::ui::Theme) -> Result<ExitCode> {
    use switchyard::ui::term::Attached;
    let reg = registry(config)?;
    let rt = super::setup::runtime()?;
    let data_dir = config.data_dir().ok();
    let (how, followed) = rt.block_on(async {
        // One terminal throughout: the last task stays on screen until the
        // next is, and a key pressed between two is read.
        let mut screen = switchyard::ui::term::Screen::open()?;
        let mut followed = 0;
        loop {
            let engines = eval_engines(&reg, pid)?;
            let chosen = engines.iter().find(|(n, _)| pick.is_none_or(|p| *n == p)).or(engines.first());
            let Some((task, record)) = chosen.cloned() else {
                if !switchyard::remote::registry::alive(pid) {
                    return Ok::<_, color_eyre::Report>((Attached::Ended, followed));
                }
                // Between two tasks: the next engine is on its way.
                if screen.leave_asked(Duration::from_millis(50)).await? {
                    return Ok((Attached::Detached, followed));
                }
                continue;
            };
            pick = None;
            let label = eval_label(pid, task, engines.len(), record.eval.as_ref());
            let attached = async {
                let conn = Connection::open(&reg.socket(&record.id), &viewer("attach"), Some(0), true).await?;
                let app = switchyard::ui::app::App::following_eval(&label);
                Ok::<_, color_eyre::Report>(screen.attach(conn, app, &theme, data_dir.as_deref()).await?)
            };
            match attached.await {
                Ok(Attached::Ended) => followed += 1,
                Ok(Attached::Lost(why)) => {
                    return Err(eyre!("eval {pid}, task {task}: the connection was lost: {why}"));
                }
                Ok(how) => return Ok((how, followed)),
                // Its task ended between the listing and the connection.
                Err(_) if reg.liveness(&record) != Liveness::Live => {}
                Err(e) => return Err(e),
            }
        }
    })?;
    match how {
        Attached::Ended => println!("eval {pid} has ended ({followed} of its tasks followed)"),
        _ => println!("detached from eval {pid}; it goes on (switchyard attach {pid})"),
    }
    Ok(ExitCode::SUCCESS)
}

/// What the status line says of the eval followed: its pid, the task on
/// screen, how many are done of all, how many run.
fn eval_label(pid: u32, task: usize, in_flight: usize, of: Option<&EvalOf>) -> String {
    let done = of.map(|o| {
        let rows = std::fs::read_to_string(o.out.join("results.jsonl")).map_or(0, |t| t.lines().count());
        format!(" · {rows}/{} done", o.tasks)
    });
    format!("eval {pid} · task {task}{} · {in_flight} in flight", done.unwrap_or_default())
}

/// `switchyard attach`: the workbench on a live session, from its first
/// event on; `d` leaves it running.
pub(super) fn attach(config: &Config, a: AttachArgs) -> Result<ExitCode> {
    let theme = switchyard::ui::Theme::resolve(a.theme.as_deref().unwrap_or(&config.theme))?;
    let target = a.id.as_deref();
    if let Some(pid) = eval_named(&registry(config)?, target)? {
        return attach_eval(config, pid, a.task, theme);
    }
    if target.is_none_or(|t| t.parse::<std::net::SocketAddr>().is_err()) {
        // Said plainly before the terminal is needed: no such session.
        registry(config)?.find(target)?;
    }
    switchyard::ui::term::check_terminal()?;
    let rt = super::setup::runtime()?;
    let (id, how) = rt.block_on(async {
        let conn = connect(config, target, a.token_file.as_deref(), &viewer("attach"), Some(0), true).await?;
        let id = conn.session.id.clone();
        let how = switchyard::ui::term::run_attached(conn, theme, config.data_dir().ok()).await?;
        Ok::<_, color_eyre::Report>((id, how))
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
    /// The session's id, as `switchyard ps` lists it, or the ADDRESS:PORT of one started with
    /// `--control` (its token in SWITCHYARD_CONTROL_TOKEN).
    id: String,
    /// The TCP endpoint's token from this file rather than SWITCHYARD_CONTROL_TOKEN.
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
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
    let rt = super::setup::runtime()?;
    rt.block_on(async {
        // From the end: only what happens after the control matters.
        let mut conn =
            connect(config, Some(&a.id), a.token_file.as_deref(), &viewer("ctl"), Some(u64::MAX), false).await?;
        let record = conn.session.clone();
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
