//! The viewer's side: connect to a session's socket, say hello, then read
//! its messages and send it requests and controls.

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};
use tokio::net::{TcpStream, UnixStream};

use super::protocol::{ClientMsg, PROTOCOL_VERSION, ServerMsg, Status, line};
use super::registry::{RegistryError, SessionRecord};
use crate::engine::Control;
use crate::text::secret::Secret;

type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// How long a session has to answer a hello: one that does not is hung,
/// and is not waited on.
const WELCOME_WAIT: Duration = Duration::from_secs(5);

#[derive(thiserror::Error, Debug)]
pub enum RemoteError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("{path}: cannot connect: {source} (the session has ended?)")]
    Connect { path: std::path::PathBuf, source: std::io::Error },
    #[error("{addr}: cannot connect: {source} (is the session, or the tunnel to it, there?)")]
    ConnectTcp { addr: String, source: std::io::Error },
    #[error("session {id}: {source}")]
    Io { id: String, source: std::io::Error },
    #[error("session {id} did not answer within {secs} s")]
    Silent { id: String, secs: u64 },
    #[error("session {id} refused: {message}")]
    Refused { id: String, message: String },
    #[error("session {id} sent what is not a message of protocol version {PROTOCOL_VERSION}: {detail}")]
    Garbled { id: String, detail: String },
    #[error("session {id} has ended")]
    Ended { id: String },
}

/// A conversation with one session.
pub struct Connection {
    pub session: SessionRecord,
    /// The session's status when it welcomed us.
    pub status: Status,
    reader: Reader,
    writer: Writer,
}

impl Connection {
    /// Connects to the socket at `path` as `viewer`; `follow`: the cursor
    /// to follow the events from (past the end: from now on); `attach`:
    /// recorded as a viewer that came and went.
    pub async fn open(path: &Path, viewer: &str, follow: Option<u64>, attach: bool) -> Result<Connection, RemoteError> {
        let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let stream = UnixStream::connect(path)
            .await
            .map_err(|source| RemoteError::Connect { path: path.to_path_buf(), source })?;
        let (read, write) = stream.into_split();
        let hello = ClientMsg::Hello { v: PROTOCOL_VERSION, viewer: viewer.to_string(), follow, attach, token: None };
        Connection::greet(id, Box::new(read), Box::new(write), hello).await
    }

    /// `open`, over TCP to a session started with `--control`, presenting
    /// its token.
    pub async fn open_tcp(
        addr: &str,
        token: &Secret,
        viewer: &str,
        follow: Option<u64>,
        attach: bool,
    ) -> Result<Connection, RemoteError> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|source| RemoteError::ConnectTcp { addr: addr.to_string(), source })?;
        // A control is one small line: sent at once, not held back for more.
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        let token = Some(token.expose().to_string());
        let hello = ClientMsg::Hello { v: PROTOCOL_VERSION, viewer: viewer.to_string(), follow, attach, token };
        Connection::greet(addr.to_string(), Box::new(read), Box::new(write), hello).await
    }

    async fn greet(
        id: String,
        read: ReadHalf,
        mut write: WriteHalf,
        hello: ClientMsg,
    ) -> Result<Connection, RemoteError> {
        write.write_all(line(&hello).as_bytes()).await.map_err(|source| RemoteError::Io { id: id.clone(), source })?;
        let mut lines = BufReader::new(read).lines();
        let first = tokio::time::timeout(WELCOME_WAIT, lines.next_line())
            .await
            .map_err(|_| RemoteError::Silent { id: id.clone(), secs: WELCOME_WAIT.as_secs() })?
            .map_err(|source| RemoteError::Io { id: id.clone(), source })?
            .ok_or_else(|| RemoteError::Ended { id: id.clone() })?;
        match parse(&id, &first)? {
            ServerMsg::Welcome { session, status, .. } => {
                let id = session.id.clone();
                let reader = Reader { id: id.clone(), lines };
                Ok(Connection { session, status, reader, writer: Writer { id, write } })
            }
            ServerMsg::Error { message } => Err(RemoteError::Refused { id, message }),
            other => Err(RemoteError::Garbled { id, detail: format!("{other:?} before its welcome") }),
        }
    }

    /// The next message; None when the session closed the connection.
    pub async fn next(&mut self) -> Result<Option<ServerMsg>, RemoteError> {
        self.reader.next().await
    }

    pub async fn send(&mut self, control: Control) -> Result<(), RemoteError> {
        self.writer.say(&ClientMsg::Control { control }).await
    }

    pub async fn ask_status(&mut self) -> Result<(), RemoteError> {
        self.writer.say(&ClientMsg::Status).await
    }

    /// The two halves, for a viewer that reads and writes from separate
    /// tasks (the workbench).
    pub fn split(self) -> (Reader, Writer) {
        (self.reader, self.writer)
    }
}

pub struct Reader {
    id: String,
    lines: Lines<BufReader<ReadHalf>>,
}

impl Reader {
    pub async fn next(&mut self) -> Result<Option<ServerMsg>, RemoteError> {
        match self.lines.next_line().await.map_err(|source| RemoteError::Io { id: self.id.clone(), source })? {
            Some(l) => parse(&self.id, &l).map(Some),
            None => Ok(None),
        }
    }
}

pub struct Writer {
    id: String,
    write: WriteHalf,
}

impl Writer {
    pub async fn send(&mut self, control: Control) -> Result<(), RemoteError> {
        self.say(&ClientMsg::Control { control }).await
    }

    async fn say(&mut self, msg: &ClientMsg) -> Result<(), RemoteError> {
        let msg = line(msg);
        self.write.write_all(msg.as_bytes()).await.map_err(|source| RemoteError::Io { id: self.id.clone(), source })
    }
}

fn parse(id: &str, l: &str) -> Result<ServerMsg, RemoteError> {
    serde_json::from_str(l).map_err(|e| RemoteError::Garbled { id: id.to_string(), detail: e.to_string() })
}
