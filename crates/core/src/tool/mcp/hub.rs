//! The session's MCP servers: started together, called by name, restarted
//! (bounded, with backoff) when they die or hang, stopped when the hub goes.
//! The hub runs its own small runtime, so servers outlive no caller's and
//! any runtime (or none) can call through it.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::runtime::{Handle, Runtime};
use tokio::task::JoinHandle;

use super::config::McpServerConfig;
use super::link::{LinkError, McpLink, RemoteTool};
use super::rmcp_link::connect;
use super::tools;
use crate::tool::{ToolError, ToolErrorKind, ToolResult, ToolSpec};

/// The first restart waits this long; each next one twice as long.
const BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(4);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    Running,
    Restarting,
    Down,
}

impl std::fmt::Display for ServerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerState::Running => "running",
            ServerState::Restarting => "restarting",
            ServerState::Down => "down",
        })
    }
}

/// A server's state changed (or, to a new listener, what it is now).
#[derive(Clone, Debug, PartialEq)]
pub struct ServerEvent {
    pub server: String,
    pub state: ServerState,
    pub detail: Option<String>,
}

pub type Listener = Box<dyn Fn(ServerEvent) + Send + Sync>;

#[derive(thiserror::Error, Debug)]
#[error("mcp server '{server}': {message}")]
pub struct McpError {
    pub server: String,
    pub message: String,
}

#[derive(Default)]
struct Shared {
    listener: Mutex<Option<Listener>>,
    closing: AtomicBool,
}

impl Shared {
    fn tell(&self, event: ServerEvent) {
        if let Some(l) = self.listener.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            l(event);
        }
    }
}

struct Server {
    config: McpServerConfig,
    link: Mutex<Option<Arc<dyn McpLink>>>,
    state: Mutex<(ServerState, Option<String>)>,
    shared: Arc<Shared>,
    rt: Handle,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    fn name(&self) -> &str {
        &self.config.name
    }

    fn set_state(&self, state: ServerState, detail: Option<String>) {
        *lock(&self.state) = (state, detail.clone());
        if !self.shared.closing.load(Ordering::SeqCst) {
            self.shared.tell(ServerEvent { server: self.name().to_string(), state, detail });
        }
    }

    /// Makes `link` the live connection and watches it for a death of its own.
    fn adopt(self: &Arc<Self>, link: Arc<dyn McpLink>) {
        *lock(&self.link) = Some(Arc::clone(&link));
        let me = Arc::clone(self);
        self.rt.spawn(async move {
            let why = link.closed().await;
            me.broken(&link, why);
        });
    }

    /// The connection `link` failed: unless that was already seen, drop it
    /// and restart the server in the background.
    fn broken(self: &Arc<Self>, link: &Arc<dyn McpLink>, why: String) {
        {
            let mut current = lock(&self.link);
            if !current.as_ref().is_some_and(|c| Arc::ptr_eq(c, link)) {
                return;
            }
            *current = None;
        }
        if self.shared.closing.load(Ordering::SeqCst) {
            return;
        }
        let old = Arc::clone(link);
        let me = Arc::clone(self);
        self.rt.spawn(async move {
            old.close().await;
            me.restart(why).await;
        });
    }

    async fn restart(self: Arc<Self>, mut why: String) {
        let max = self.config.max_restarts;
        for attempt in 1..=max {
            self.set_state(ServerState::Restarting, Some(format!("attempt {attempt}/{max}: {why}")));
            let wait = BACKOFF.saturating_mul(1 << (attempt - 1).min(8)).min(MAX_BACKOFF);
            tokio::time::sleep(wait).await;
            if self.shared.closing.load(Ordering::SeqCst) {
                return;
            }
            match connect(&self.config).await {
                Ok(link) if self.shared.closing.load(Ordering::SeqCst) => {
                    link.kill();
                    return;
                }
                Ok(link) => {
                    self.adopt(link);
                    self.set_state(ServerState::Running, Some(format!("restarted after: {why}")));
                    return;
                }
                Err(e) => why = e.to_string(),
            }
        }
        self.set_state(ServerState::Down, Some(why));
    }

    fn unavailable(&self) -> ToolError {
        let (state, detail) = lock(&self.state).clone();
        let detail = detail.map(|d| format!(": {d}")).unwrap_or_default();
        ToolError::new(ToolErrorKind::Failed, format!("mcp server '{}' is {state}{detail}", self.name()))
    }

    async fn call(self: Arc<Self>, tool: String, args: Map<String, Value>, timeout: Duration) -> ToolResult {
        let name = self.name().to_string();
        let Some(link) = lock(&self.link).clone() else {
            return Err(self.unavailable());
        };
        match tokio::time::timeout(timeout, link.call_tool(&tool, args)).await {
            Ok(Ok(out)) if out.is_error => Err(ToolError::new(
                ToolErrorKind::Failed,
                format!("mcp server '{name}', tool '{tool}': {}", tools::error_text(&out)),
            )),
            Ok(Ok(out)) => Ok(tools::observation(&out)),
            Ok(Err(LinkError::Refused(e))) => {
                Err(ToolError::new(ToolErrorKind::Failed, format!("mcp server '{name}' refused '{tool}': {e}")))
            }
            Ok(Err(LinkError::Broken(e) | LinkError::Start(e))) => {
                self.broken(&link, e.clone());
                Err(ToolError::new(ToolErrorKind::Crashed, format!("mcp server '{name}' failed: {e}; restarting it")))
            }
            Err(_) => {
                let ms = timeout.as_millis();
                self.broken(&link, format!("no answer to '{tool}' in {ms} ms"));
                Err(ToolError::new(
                    ToolErrorKind::Timeout,
                    format!("mcp server '{name}' did not answer '{tool}' in {ms} ms; restarting it"),
                ))
            }
        }
    }
}

/// Aborts the call's task when the caller gives up on it (a lane failed by
/// the user, a run stopped).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub struct McpHub {
    servers: Vec<Arc<Server>>,
    shared: Arc<Shared>,
    rt: Option<Runtime>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub").field("servers", &self.names()).finish()
    }
}

impl McpHub {
    /// Starts every server and lists its tools, all at once; the first
    /// that cannot be started is the error (and the others are stopped).
    /// `taken` holds the tool names other sources use. Blocks the calling
    /// thread (any runtime's, or none).
    pub fn start(configs: &[McpServerConfig], taken: &HashSet<String>) -> Result<(McpHub, Vec<ToolSpec>), McpError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("mcp")
            .enable_all()
            .build()
            .map_err(|e| McpError { server: "*".into(), message: format!("no runtime: {e}") })?;
        let shared = Arc::new(Shared::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let jobs: Vec<_> = configs.to_vec();
        rt.spawn(async move {
            let started = futures::future::join_all(jobs.iter().map(|c| async {
                let link = connect(c).await?;
                let tools = link.list_tools().await?;
                Ok::<(Arc<dyn McpLink>, Vec<RemoteTool>), LinkError>((link, tools))
            }))
            .await;
            let _ = tx.send(started);
        });
        let handle = rt.handle().clone();
        // From here the hub owns the runtime: dropped in an async context,
        // a runtime must be shut down in the background, as the hub does.
        let mut hub = McpHub { servers: Vec::new(), shared: Arc::clone(&shared), rt: Some(rt) };
        let started = rx.recv().map_err(|_| McpError { server: "*".into(), message: "the start was lost".into() })?;
        let mut failure = None;
        let mut links = Vec::new();
        for (config, result) in configs.iter().zip(started) {
            match result {
                Ok(pair) => links.push((config, pair)),
                Err(e) => {
                    failure.get_or_insert(McpError { server: config.name.clone(), message: e.to_string() });
                }
            }
        }
        let mut taken = taken.clone();
        let mut specs = Vec::new();
        for (config, (link, remote)) in links {
            let server = Arc::new(Server {
                config: config.clone(),
                link: Mutex::new(None),
                state: Mutex::new((ServerState::Running, None)),
                shared: Arc::clone(&shared),
                rt: handle.clone(),
            });
            server.adopt(link);
            let found = tools::specs(config, &remote, &taken);
            taken.extend(found.iter().map(|t| t.name.clone()));
            specs.extend(found);
            hub.servers.push(server);
        }
        match failure {
            // Dropping the hub stops the servers that did start.
            Some(e) => Err(e),
            None => Ok((hub, specs)),
        }
    }

    fn names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name()).collect()
    }

    /// Hears every state change from now on, after the current state of
    /// each server.
    pub fn listen(&self, listener: Listener) {
        for s in &self.servers {
            let (state, detail) = lock(&s.state).clone();
            listener(ServerEvent { server: s.name().to_string(), state, detail });
        }
        *lock(&self.shared.listener) = Some(listener);
    }

    /// The process of a server started on stdio, while it runs.
    pub fn pid(&self, server: &str) -> Option<u32> {
        let s = self.servers.iter().find(|s| s.name() == server)?;
        lock(&s.link).as_ref()?.pid()
    }

    /// Calls `tool` (the server's own name for it) on `server`.
    pub async fn call(&self, server: &str, tool: &str, args: &Value, timeout: Duration) -> ToolResult {
        let Some(s) = self.servers.iter().find(|s| s.name() == server) else {
            return Err(ToolError::new(ToolErrorKind::Failed, format!("no mcp server named '{server}'")));
        };
        let Some(rt) = self.rt.as_ref() else {
            return Err(ToolError::new(ToolErrorKind::Failed, "the mcp servers are stopped"));
        };
        let args = args.as_object().cloned().unwrap_or_default();
        let mut task = AbortOnDrop(rt.spawn(Arc::clone(s).call(tool.to_string(), args, timeout)));
        match (&mut task.0).await {
            Ok(r) => r,
            Err(e) => {
                Err(ToolError::new(ToolErrorKind::Crashed, format!("mcp server '{server}': the call was lost: {e}")))
            }
        }
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        for s in &self.servers {
            if let Some(link) = lock(&s.link).take() {
                link.kill();
            }
        }
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}
