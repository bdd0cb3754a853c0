//! The session's side: the endpoint that keeps the session's events for
//! its viewers, answers their requests and hands their controls to the
//! engine, each recorded with the viewer that sent it.
//!
//! Viewers read the one shared log at their own pace, each from its own
//! cursor: a viewer that is slow or gone holds nothing but its cursor, and
//! never slows the session (the engine only appends).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::log::{Batch, Log};
use super::protocol::{ClientMsg, PROTOCOL_VERSION, ServerMsg, Status, line};
use super::registry::{Registry, RegistryError, SessionRecord};
use crate::engine::{Control, EngineHandle, Event, ViewerAction};
use crate::text::secret::Secret;

/// How long a new connection has to say hello.
const HELLO_WAIT: Duration = Duration::from_secs(10);
/// Events sent to a viewer between two looks at what it sent.
const BATCH: usize = 256;
/// An ended session waits for its viewers to have its last events before
/// it goes: while any of them reads on, up to `DRAIN_MAX`; not once none
/// has read for `DRAIN_IDLE` (a viewer that stopped reading).
const DRAIN_MAX: Duration = Duration::from_secs(10);
const DRAIN_IDLE: Duration = Duration::from_secs(1);

#[derive(thiserror::Error, Debug)]
pub enum EndpointError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("{path}: cannot listen: {source}")]
    Bind { path: std::path::PathBuf, source: std::io::Error },
    #[error("--control: cannot listen over TCP: {0}")]
    Tcp(std::io::Error),
}

pub struct Endpoint;

/// Viewers beyond this machine's users (through an SSH or `kubectl
/// port-forward` tunnel): a bound TCP listener, and the token each viewer
/// must present in its hello.
pub struct TcpControl {
    pub listener: std::net::TcpListener,
    pub token: Secret,
}

/// The endpoint runs while this lives; dropped, its record and socket go.
pub struct EndpointGuard {
    registry: Registry,
    id: String,
    tasks: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
}

impl EndpointGuard {
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The TCP address it also listens on, as bound (`--control 0` picks a port).
    pub fn tcp(&self) -> Option<&str> {
        self.shared.record.control.as_deref()
    }
}

impl Drop for EndpointGuard {
    fn drop(&mut self) {
        // The process ends next: the viewers following the session get
        // its last events first (the log's end may still be on its way in).
        let (lock, cvar) = &self.shared.following;
        let mut n = lock.lock().unwrap_or_else(|p| p.into_inner());
        let started = std::time::Instant::now();
        let (mut sent, mut last_read) = (self.shared.sent.load(Ordering::Relaxed), started);
        while *n > 0 && started.elapsed() < DRAIN_MAX && last_read.elapsed() < DRAIN_IDLE {
            n = cvar.wait_timeout(n, DRAIN_IDLE / 4).unwrap_or_else(|p| p.into_inner()).0;
            let now = self.shared.sent.load(Ordering::Relaxed);
            if now != sent {
                (sent, last_read) = (now, std::time::Instant::now());
            }
        }
        for t in &self.tasks {
            t.abort();
        }
        self.registry.remove(&self.id);
    }
}

impl Endpoint {
    /// Listens on the registry's socket for `record`, keeping `events` (a
    /// subscription taken before the session started, so the log holds
    /// them all) and sending viewers' controls through `handle`. Call
    /// within a Tokio runtime.
    pub fn start(
        registry: Registry,
        record: SessionRecord,
        events: mpsc::UnboundedReceiver<Event>,
        handle: EngineHandle,
    ) -> Result<EndpointGuard, EndpointError> {
        Endpoint::start_with(registry, record, events, handle, None)
    }

    /// `start`, and on `tcp` too when given (the record says its address).
    pub fn start_with(
        registry: Registry,
        mut record: SessionRecord,
        events: mpsc::UnboundedReceiver<Event>,
        handle: EngineHandle,
        tcp: Option<TcpControl>,
    ) -> Result<EndpointGuard, EndpointError> {
        use std::os::unix::fs::PermissionsExt;
        let tcp = match tcp {
            Some(TcpControl { listener, token }) => {
                record.control = Some(listener.local_addr().map_err(EndpointError::Tcp)?.to_string());
                listener.set_nonblocking(true).map_err(EndpointError::Tcp)?;
                Some((tokio::net::TcpListener::from_std(listener).map_err(EndpointError::Tcp)?, Arc::new(token)))
            }
            None => None,
        };
        registry.ensure()?;
        let path = registry.socket(&record.id);
        // A socket left by a dead process of the same pid.
        let _ = std::fs::remove_file(&path);
        let bind = |source| EndpointError::Bind { path: path.clone(), source };
        let listener = tokio::net::UnixListener::bind(&path).map_err(bind)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(bind)?;
        registry.write(&record)?;
        let (len, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            log: Mutex::new(Log::spilling_to(registry.dir())),
            len,
            handle,
            record: record.clone(),
            viewers: AtomicU32::new(0),
            sent: std::sync::atomic::AtomicU64::new(0),
            following: (Mutex::new(0), std::sync::Condvar::new()),
        });
        let ingest = tokio::spawn(ingest(shared.clone(), events));
        let serving = shared.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve_viewer(serving.clone(), stream, None));
            }
        });
        let mut tasks = vec![ingest, accept];
        if let Some((listener, token)) = tcp {
            let serving = shared.clone();
            tasks.push(tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    // Lines are small and each one answers: not held back for more.
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(serve_viewer(serving.clone(), stream, Some(token.clone())));
                }
            }));
        }
        Ok(EndpointGuard { registry, id: record.id, tasks, shared })
    }
}

struct Shared {
    log: Mutex<Log>,
    /// The log's length, for viewers waiting on the next event.
    len: watch::Sender<u64>,
    handle: EngineHandle,
    record: SessionRecord,
    viewers: AtomicU32,
    /// Events sent to viewers, all told: whether any still reads.
    sent: std::sync::atomic::AtomicU64,
    /// Viewers following the events that have not had the last one yet.
    following: (Mutex<u32>, std::sync::Condvar),
}

impl Shared {
    fn follow(&self, delta: i32) {
        let (lock, cvar) = &self.following;
        let mut n = lock.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_add_signed(delta);
        cvar.notify_all();
    }
}

impl Shared {
    fn status(&self) -> Status {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let waiting = log.debug.pending.as_ref().map(|p| p.call());
        Status {
            tasks_done: log.done,
            tasks: log.tasks,
            paused: log.paused,
            approvals_waiting: u32::from(waiting.is_some()),
            waiting_call: waiting,
            events: log.len(),
            events_in_memory: log.in_memory() as u64,
            viewers: self.viewers.load(Ordering::Relaxed),
            ended: log.ended,
        }
    }

    /// The log's length, and whether it has ended.
    fn end(&self) -> (u64, bool) {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        (log.len(), log.ended)
    }

    /// The lines of up to `BATCH` events from `from` on: from memory, or
    /// read from the log's file (off the async threads, outside the lock).
    async fn batch(&self, from: u64) -> std::io::Result<Vec<Arc<str>>> {
        let batch = self.log.lock().unwrap_or_else(|p| p.into_inner()).batch(from, BATCH);
        match batch {
            Batch::Lines(lines) => Ok(lines),
            Batch::File(f) => tokio::task::spawn_blocking(move || f.read()).await.map_err(std::io::Error::other)?,
        }
    }
}

/// The session's events into the log; a token of a reply (never recorded)
/// is left out, as the trace leaves it.
async fn ingest(shared: Arc<Shared>, mut events: mpsc::UnboundedReceiver<Event>) {
    while let Some(e) = events.recv().await {
        if e.kind.is_live_only() {
            continue;
        }
        let len = {
            let mut log = shared.log.lock().unwrap_or_else(|p| p.into_inner());
            log.push(e);
            log.len()
        };
        shared.len.send_replace(len);
    }
    let len = {
        let mut log = shared.log.lock().unwrap_or_else(|p| p.into_inner());
        log.ended = true;
        log.len()
    };
    shared.len.send_replace(len);
}

/// A name shown in the trace beside what its viewer did.
fn valid_viewer(name: &str) -> bool {
    (1..=64).contains(&name.chars().count()) && name.chars().all(|c| !c.is_control())
}

/// One viewer, on the Unix socket (`token` None: its permissions let only
/// the user in) or over TCP (the hello must carry `token`).
async fn serve_viewer<S>(shared: Arc<Shared>, stream: S, token: Option<Arc<Secret>>)
where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, mut write) = tokio::io::split(stream);
    let mut lines = BufReader::new(read).lines();
    let hello = match tokio::time::timeout(HELLO_WAIT, lines.next_line()).await {
        Ok(Ok(Some(l))) => l,
        _ => return,
    };
    let (viewer, follow, attach) = match serde_json::from_str::<ClientMsg>(&hello) {
        Ok(ClientMsg::Hello { token: given, .. })
            if token.as_ref().is_some_and(|t| !given.as_deref().is_some_and(|g| t.matches(g))) =>
        {
            let message = "token refused: this session's TCP endpoint takes the token it was started with \
                           (SWITCHYARD_CONTROL_TOKEN)"
                .to_string();
            let _ = write.write_all(line(&ServerMsg::Error { message }).as_bytes()).await;
            return;
        }
        Ok(ClientMsg::Hello { v, viewer, follow, attach, .. }) if v == PROTOCOL_VERSION && valid_viewer(&viewer) => {
            (viewer, follow, attach)
        }
        Ok(ClientMsg::Hello { v, .. }) if v != PROTOCOL_VERSION => {
            let message = format!(
                "this session speaks protocol version {PROTOCOL_VERSION} (switchyard {}), the viewer {v}",
                env!("CARGO_PKG_VERSION")
            );
            let _ = write.write_all(line(&ServerMsg::Error { message }).as_bytes()).await;
            return;
        }
        Ok(ClientMsg::Hello { .. }) => {
            let message = "hello: viewer: 1 to 64 printable characters".to_string();
            let _ = write.write_all(line(&ServerMsg::Error { message }).as_bytes()).await;
            return;
        }
        Ok(_) | Err(_) => {
            let message = format!("the first line must be a hello (protocol version {PROTOCOL_VERSION})");
            let _ = write.write_all(line(&ServerMsg::Error { message }).as_bytes()).await;
            return;
        }
    };
    let welcome = ServerMsg::Welcome { v: PROTOCOL_VERSION, session: shared.record.clone(), status: shared.status() };
    if write.write_all(line(&welcome).as_bytes()).await.is_err() {
        return;
    }
    if attach {
        shared.viewers.fetch_add(1, Ordering::Relaxed);
        shared.handle.send(Control::Viewer { viewer: viewer.clone(), action: ViewerAction::Attached });
    }
    let _ = converse(&shared, &viewer, follow, &mut lines, &mut write).await;
    if attach {
        shared.viewers.fetch_sub(1, Ordering::Relaxed);
        shared.handle.send(Control::Viewer { viewer, action: ViewerAction::Detached });
    }
}

/// Until the viewer goes: its requests answered, and (when it follows)
/// the log sent from its cursor on.
async fn converse<R: AsyncRead + Unpin, W: AsyncWrite + Unpin>(
    shared: &Shared,
    viewer: &str,
    follow: Option<u64>,
    lines: &mut tokio::io::Lines<BufReader<R>>,
    write: &mut W,
) -> std::io::Result<()> {
    let mut len = shared.len.subscribe();
    let mut cursor = follow.map(|c| c.min(*len.borrow()));
    let (mut caught_up, mut ended) = (false, false);
    // Until it has the last event, or goes.
    let following = cursor.map(|_| Following::new(shared));
    loop {
        let more = cursor.is_some_and(|c| c < *len.borrow());
        tokio::select! {
            biased;
            l = lines.next_line() => {
                let Some(l) = l? else { return Ok(()) };
                let reply = match serde_json::from_str::<ClientMsg>(&l) {
                    Ok(ClientMsg::Control { control }) => {
                        // Who sent it, then the control itself: taken as any
                        // control is, wherever the engine waits for one.
                        let who = ViewerAction::Sent { control: Box::new(control.clone()) };
                        let sent = shared.handle.send(Control::Viewer { viewer: viewer.to_string(), action: who })
                            && shared.handle.send(control);
                        if sent { None } else { Some(ServerMsg::Ended) }
                    }
                    Ok(ClientMsg::Status) => Some(ServerMsg::Status { status: shared.status() }),
                    Ok(ClientMsg::Hello { .. }) => Some(ServerMsg::Error { message: "hello: said already".into() }),
                    Err(e) => Some(ServerMsg::Error { message: format!("not a message of protocol version {PROTOCOL_VERSION}: {e}") }),
                };
                if let Some(r) = reply {
                    write.write_all(line(&r).as_bytes()).await?;
                }
            }
            _ = async {}, if more => {
                let from = cursor.unwrap_or_default();
                let batch = shared.batch(from).await?;
                if batch.is_empty() {
                    return Err(std::io::Error::other("the log's file ended early"));
                }
                let out: String = batch.iter().map(|l| &**l).collect();
                write.write_all(out.as_bytes()).await?;
                shared.sent.fetch_add(batch.len() as u64, Ordering::Relaxed);
                cursor = Some(from + batch.len() as u64);
            }
            r = len.changed(), if cursor.is_some() && !more && !ended => {
                if r.is_err() {
                    ended = true;
                }
            }
        }
        if let Some(c) = cursor {
            let (total, over) = shared.end();
            if c == total {
                if !caught_up {
                    caught_up = true;
                    write.write_all(line(&ServerMsg::CaughtUp { events: c }).as_bytes()).await?;
                }
                if over && !ended {
                    ended = true;
                    write.write_all(line(&ServerMsg::Ended).as_bytes()).await?;
                    write.flush().await?;
                    if let Some(f) = &following {
                        f.done();
                    }
                }
            }
        }
    }
}

/// A viewer counted among those following until it has the last event
/// or goes, whichever comes first.
struct Following<'a> {
    shared: &'a Shared,
    counted: std::cell::Cell<bool>,
}

impl<'a> Following<'a> {
    fn new(shared: &'a Shared) -> Following<'a> {
        shared.follow(1);
        Following { shared, counted: std::cell::Cell::new(true) }
    }

    fn done(&self) {
        if self.counted.replace(false) {
            self.shared.follow(-1);
        }
    }
}

impl Drop for Following<'_> {
    fn drop(&mut self) {
        self.done();
    }
}
