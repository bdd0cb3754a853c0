//! The set-up every subcommand needs: logging, the async runtime, and the
//! session options the shared flags ask for.

use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::{ParamChange, Scheduled, fault_control};
use switchyard::model::Role;
use switchyard::session::{GraphSource, SessionOptions, Tape, TaskSource};

use super::args::{Common, GraphTapeArgs, SessionArgs};

/// Logs go to a file in the data directory, never to the terminal.
pub(super) fn init_logging(config: &Config) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = config.data_dir().ok()?.join("logs");
    std::fs::create_dir_all(&dir).ok()?;
    let (writer, guard) = tracing_appender::non_blocking(tracing_appender::rolling::never(dir, "switchyard.log"));
    let filter = tracing_subscriber::EnvFilter::try_from_env("SWITCHYARD_LOG").unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt()
        .with_writer(Redacting(writer))
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

/// Every log line with the registered secrets masked. Our own code masks
/// what it quotes; this is for the libraries under it (rmcp logs a remote
/// MCP server's error body, which may echo the Authorization header).
struct Redacting<W>(W);

impl<'a, W: tracing_subscriber::fmt::MakeWriter<'a>> tracing_subscriber::fmt::MakeWriter<'a> for Redacting<W> {
    type Writer = Redacting<W::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        Redacting(self.0.make_writer())
    }
}

impl<W: std::io::Write> std::io::Write for Redacting<W> {
    /// The formatter writes a whole event at once, so a secret is never
    /// split across two calls.
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(&switchyard::text::secret::redact_bytes(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Seconds since the epoch: the names of the traces the workbench and forks write.
pub(super) fn stamp() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A trace's complete events; a last line torn by a killed writer is said on
/// stderr (the events before it are all there), not silently dropped.
pub(super) fn read_trace_noting(path: &std::path::Path) -> Result<Vec<switchyard::engine::Event>> {
    let read = switchyard::engine::trace::read_trace_file(path)?;
    if let Some(torn) = read.torn {
        eprintln!("warning: {}: {torn}", path.display());
    }
    Ok(read.events)
}

/// Where a flag says to listen: `PORT` (on loopback) or `ADDRESS:PORT`.
pub(super) fn listen_addr(flag: &str, spec: &str) -> Result<std::net::SocketAddr> {
    match spec.parse::<u16>() {
        Ok(port) => Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port))),
        Err(_) => spec
            .parse()
            .map_err(|_| eyre!("{flag} {spec}: expected PORT (on 127.0.0.1) or ADDRESS:PORT, as 0.0.0.0:7300")),
    }
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().wrap_err("could not start the async runtime")
}

/// Runs `work` to its end, or until SIGTERM or SIGINT (`kill -INT`, Ctrl-C
/// at a shell): then the children Switchyard started are killed, the work
/// is dropped (the session's trace keeps every line written) and the
/// command fails saying which signal stopped it.
pub(super) async fn until_signal<T>(work: impl Future<Output = Result<T>>) -> Result<T> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).wrap_err("could not listen for SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).wrap_err("could not listen for SIGINT")?;
    let name = tokio::select! {
        r = work => return r,
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    switchyard::tool::child::kill_all();
    Err(eyre!("interrupted ({name}): stopped before the end; the trace keeps every event written"))
}

/// The config with `--model ROLE=MODEL`'s roles in place of its own.
pub(super) fn with_models(config: &Config, models: &[String]) -> Result<Config> {
    let mut config = config.clone();
    for m in models {
        let (role, name) = m.split_once('=').ok_or_else(|| eyre!("--model {m}: expected ROLE=MODEL"))?;
        let role = Role::parse(role.trim()).ok_or_else(|| {
            eyre!("--model {m}: unknown role '{role}' (planner, solver, actor, evaluator, classifier, judge, agent)")
        })?;
        let name = name.trim();
        if !config.models.contains_key(name) {
            let known: Vec<&str> = config.models.keys().map(String::as_str).collect();
            return Err(eyre!("--model {m}: no model named '{name}' in the config (it has: {})", known.join(", ")));
        }
        config.roles.insert(role, name.to_string());
    }
    Ok(config)
}

pub(super) fn common_options(c: &Common) -> Result<SessionOptions> {
    let mut o = SessionOptions {
        seed: c.seed,
        count: c.count,
        logical_clock: c.logical_clock,
        tasks: c.tasks.clone().map(TaskSource::File).unwrap_or_default(),
        ..Default::default()
    };
    for s in &c.set {
        o.param_changes.push(ParamChange::parse(s).map_err(|e| eyre!("--set {s}: {e}"))?);
    }
    if let Some(b) = c.budget {
        o.param_changes.push(ParamChange::parse(&format!("budget={b}")).map_err(|e| eyre!("--budget: {e}"))?);
    }
    if let Some(t) = c.tau {
        o.param_changes.push(ParamChange::parse(&format!("tau={t}")).map_err(|e| eyre!("--tau: {e}"))?);
    }
    o.btp = c.btp.as_deref().map(|b| b == "on");
    o.tool_tape = match (&c.record_tools, &c.replay_tools) {
        (Some(r), _) => Tape::Record(r.clone()),
        (_, Some(r)) => Tape::Replay(r.clone()),
        _ => Tape::Live,
    };
    o.replay_tools_latency = c.replay_tools_latency;
    if let Some(tc) = &c.tool_costs {
        o.tool_costs = Some(tc.parse().map_err(|e| eyre!("--tool-costs: {e}"))?);
    }
    for f in &c.faults {
        let (spec, at) = match f.rsplit_once('@') {
            Some((spec, n)) => (spec, n.parse::<u32>().map_err(|_| eyre!("--fault {f}: '@{n}' is not a task number"))?),
            None => (f.as_str(), 1),
        };
        if at == 0 {
            return Err(eyre!("--fault {f}: tasks are counted from 1"));
        }
        let control = fault_control(spec).map_err(|e| eyre!("--fault: {e}"))?;
        o.schedule.push(Scheduled { before_task: at, control });
    }
    Ok(o)
}

/// What `run` and `ui` share: the task, strategy, graph and model tape; each
/// decides for itself where the trace goes.
pub(super) fn session_options(session: &SessionArgs, graph_tape: &GraphTapeArgs) -> Result<SessionOptions> {
    let mut opts = common_options(&session.common)?;
    if let Some(t) = &session.task {
        if session.common.tasks.is_some() {
            return Err(eyre!("--task and --tasks exclude each other: give one task or a task file"));
        }
        opts.tasks = TaskSource::Text(t.clone());
    }
    opts.strategy = session.strategy;
    opts.probe = session.probe.then_some(true);
    opts.otel = session.otel.config();
    opts.graph = if graph_tape.fresh_graph { GraphSource::Fresh } else { GraphSource::Saved };
    opts.save_graph = !graph_tape.no_save;
    opts.tape = match (&graph_tape.record, &graph_tape.replay) {
        (Some(r), _) => Tape::Record(r.clone()),
        (_, Some(r)) => Tape::Replay(r.clone()),
        _ => Tape::Live,
    };
    Ok(opts)
}

/// How a headless session ended.
pub(super) enum Ran {
    Done(Box<switchyard::engine::SessionOutcome>),
    /// Its trace ends with `Suspended`: `switchyard resume` takes it up.
    Suspended,
}

/// The exit code of a headless session that was suspended: it did not
/// finish, and a script should not go on as if it had.
pub(super) const SUSPENDED_EXIT: u8 = 3;

/// How long a session told to suspend on SIGTERM may take to reach its
/// next decision point (a call in flight ends first).
const SUSPEND_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Runs a prepared session headless to its end. SIGTERM (a service manager,
/// a pod going away) suspends it; SIGINT stops it as `until_signal` does.
pub(super) fn run_headless(rt: &tokio::runtime::Runtime, prepared: switchyard::session::Prepared) -> Result<Ran> {
    use tokio::signal::unix::{SignalKind, signal};
    let handle = prepared.handle.clone();
    let ran = rt.block_on(async {
        let mut term = signal(SignalKind::terminate()).wrap_err("could not listen for SIGTERM")?;
        let mut int = signal(SignalKind::interrupt()).wrap_err("could not listen for SIGINT")?;
        let work = switchyard::session::run(prepared);
        tokio::pin!(work);
        tokio::select! {
            r = &mut work => return Ok(r),
            _ = term.recv() => {}
            _ = int.recv() => {
                switchyard::tool::child::kill_all();
                return Err(eyre!("interrupted (SIGINT): stopped before the end; the trace keeps every event written"));
            }
        }
        handle.send(switchyard::engine::Control::Suspend);
        match tokio::time::timeout(SUSPEND_GRACE, &mut work).await {
            Ok(r) => Ok(r),
            Err(_) => {
                switchyard::tool::child::kill_all();
                Err(eyre!(
                    "interrupted (SIGTERM): a call in flight did not end within {SUSPEND_GRACE:?}, so the session \
                     could not suspend; the trace keeps every event written, and `switchyard resume` takes it up \
                     from its last one"
                ))
            }
        }
    })?;
    match ran {
        Ok(outcome) => Ok(Ran::Done(Box::new(outcome))),
        Err(e) if e.is_suspended() => Ok(Ran::Suspended),
        Err(e) => Err(e.into()),
    }
}

/// What a suspended session says on its way out.
pub(super) fn say_suspended(trace: Option<&std::path::Path>) -> std::process::ExitCode {
    match trace {
        Some(t) => eprintln!("suspended: `switchyard resume {}` takes the session up again", t.display()),
        None => eprintln!("suspended, but without a trace (--trace) it cannot be resumed"),
    }
    std::process::ExitCode::from(SUSPENDED_EXIT)
}

/// Runs a prepared session that serves calls from outside (the gateway's
/// agent, an MCP client) until it ends by itself, `served` returns (the
/// client hung up, or the server failed: said on stderr under `what`), or
/// Ctrl-C or SIGTERM comes; then stops it as `q` would, so its trace is
/// closed, and returns its outcome.
pub(super) async fn serve_until_signal(
    prepared: switchyard::session::Prepared,
    served: impl std::future::Future<Output = std::result::Result<(), String>>,
    what: &str,
) -> Result<switchyard::engine::SessionOutcome> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let handle = prepared.handle.clone();
    let mut session = tokio::spawn(switchyard::session::run(prepared));
    tokio::select! {
        r = &mut session => return Ok(r.map_err(|e| eyre!("the session failed: {e}"))??),
        r = served => if let Err(e) = r { eprintln!("{what}: {e}") },
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    handle.send(switchyard::engine::Control::Stop);
    session.await.map_err(|e| eyre!("the session failed: {e}"))?.map_err(|e| {
        if e.is_suspended() {
            // Its agent (or MCP client) is not Switchyard's to start again.
            eyre!(
                "{what}: suspended; the trace ends there, but `switchyard resume` cannot take up a session whose \
                 client it did not start (replay or fork the trace)"
            )
        } else {
            e.into()
        }
    })
}
