//! The live sessions of a data directory: `DATA_DIR/sessions/ID.json`
//! (what the session is) beside `ID.sock` (where it listens), in a folder
//! only its user may enter (0700), each file 0600.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What kind of session a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    Ui,
    Run,
    Eval,
    Gateway,
    McpServe,
}

impl std::fmt::Display for SessionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SessionKind::Ui => "ui",
            SessionKind::Run => "run",
            SessionKind::Eval => "eval",
            SessionKind::Gateway => "gateway",
            SessionKind::McpServe => "mcp serve",
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub id: String,
    pub pid: u32,
    pub kind: SessionKind,
    /// The command line that started it.
    pub command: Vec<String>,
    /// Seconds since the Unix epoch.
    pub started: u64,
    pub trace: Option<PathBuf>,
    /// Where it also listens over TCP (`--control`), if it does; never
    /// its token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub control: Option<String>,
    /// The eval a task's engine belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<EvalOf>,
}

/// An eval's task, as its engine's record says it: where the eval keeps
/// its results (a row per task done) and how many tasks it runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalOf {
    pub out: PathBuf,
    pub tasks: u32,
}

impl SessionRecord {
    /// A record of this process's session of `kind`; `job` tells apart the
    /// engines of one process (an eval's `--jobs`).
    pub fn here(kind: SessionKind, job: Option<usize>, trace: Option<PathBuf>) -> SessionRecord {
        let pid = std::process::id();
        let id = match job {
            Some(j) => format!("{pid}-{j}"),
            None => pid.to_string(),
        };
        let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        SessionRecord { id, pid, kind, command: std::env::args().collect(), started, trace, control: None, eval: None }
    }
}

/// Whether a record's session is still there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    Live,
    /// Its process is gone (or its socket with it): the record is left over.
    Stale,
}

#[derive(thiserror::Error, Debug)]
pub enum RegistryError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a session record: {source}")]
    Record { path: PathBuf, source: serde_json::Error },
    #[error("no session '{0}' (switchyard ps lists them)")]
    NoSuch(String),
    #[error("session '{0}' has ended (its record is stale; switchyard ps removes it)")]
    Ended(String),
    #[error("no live session (switchyard ps lists them)")]
    None,
    #[error("{0} live sessions: name one (switchyard ps lists them)")]
    Several(usize),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RegistryError + '_ {
    move |source| RegistryError::Io { path: path.to_path_buf(), source }
}

#[derive(Clone, Debug)]
pub struct Registry {
    dir: PathBuf,
}

impl Registry {
    /// The registry under a data directory (`DATA_DIR/sessions`).
    pub fn under(data_dir: &Path) -> Registry {
        Registry { dir: data_dir.join("sessions") }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn socket(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.sock"))
    }

    /// Where a session's TCP token is kept (0600) when it made one.
    pub fn token_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.token"))
    }

    fn record_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// The folder, made if need be and kept to its user alone.
    pub fn ensure(&self) -> Result<(), RegistryError> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700)).map_err(io(&self.dir))
    }

    /// Writes a record (0600), replacing one of the same id.
    pub fn write(&self, record: &SessionRecord) -> Result<(), RegistryError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.record_path(&record.id);
        let tmp = self.dir.join(format!(".{}.json.tmp", record.id));
        let text = serde_json::to_string_pretty(record).unwrap_or_default();
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io(&tmp))?;
        f.write_all(text.as_bytes()).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))
    }

    /// Removes a record and its socket; what is already gone is no error.
    pub fn remove(&self, id: &str) {
        let _ = std::fs::remove_file(self.record_path(id));
        let _ = std::fs::remove_file(self.socket(id));
        let _ = std::fs::remove_file(self.token_path(id));
    }

    /// Writes a session's TCP token for its user alone (0600).
    pub fn write_token(&self, id: &str, token: &crate::text::secret::Secret) -> Result<PathBuf, RegistryError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.token_path(id);
        let _ = std::fs::remove_file(&path);
        let mut f =
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path).map_err(io(&path))?;
        f.write_all(token.expose().as_bytes()).map_err(io(&path))?;
        Ok(path)
    }

    /// Every record, oldest first, each with whether its session lives. A
    /// file that is not a record is an error naming it.
    pub fn list(&self) -> Result<Vec<(SessionRecord, Liveness)>, RegistryError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(&self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let path = entry.map_err(io(&self.dir))?.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                // Removed since it was listed: its session just ended.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(&path)(e)),
            };
            let record: SessionRecord =
                serde_json::from_str(&text).map_err(|source| RegistryError::Record { path: path.clone(), source })?;
            let live = self.liveness(&record);
            out.push((record, live));
        }
        out.sort_by(|a, b| (a.0.started, &a.0.id).cmp(&(b.0.started, &b.0.id)));
        Ok(out)
    }

    /// Live when its process is there and its socket takes a connection:
    /// a process of the same pid that is another program has no socket.
    pub fn liveness(&self, record: &SessionRecord) -> Liveness {
        if alive(record.pid) && std::os::unix::net::UnixStream::connect(self.socket(&record.id)).is_ok() {
            Liveness::Live
        } else {
            Liveness::Stale
        }
    }

    /// The live session `id` names, or the only live one when none is named.
    pub fn find(&self, id: Option<&str>) -> Result<SessionRecord, RegistryError> {
        let all = self.list()?;
        if let Some(id) = id {
            return match all.into_iter().find(|(r, _)| r.id == id) {
                Some((r, Liveness::Live)) => Ok(r),
                Some(_) => Err(RegistryError::Ended(id.to_string())),
                None => Err(RegistryError::NoSuch(id.to_string())),
            };
        }
        let mut live: Vec<SessionRecord> =
            all.into_iter().filter(|(_, l)| *l == Liveness::Live).map(|(r, _)| r).collect();
        match live.len() {
            0 => Err(RegistryError::None),
            1 => Ok(live.remove(0)),
            n => Err(RegistryError::Several(n)),
        }
    }
}

/// Whether process `pid` is there. A zombie is not: it has ended, only
/// its parent has not yet read how.
pub fn alive(pid: u32) -> bool {
    let exists = i32::try_from(pid).is_ok_and(|pid| {
        // SAFETY: signal 0 only asks whether the process exists.
        unsafe { libc::kill(pid, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
    });
    exists && !zombie(pid)
}

/// Linux's word on `pid`: its state, after the command name in
/// `/proc/PID/stat`, is `Z`. Elsewhere (no /proc) never.
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')))
}
