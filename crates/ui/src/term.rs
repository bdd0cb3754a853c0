//! The terminal side: raw mode and the alternate screen, restored on quit,
//! on error, on panic (ratatui's hook) and on SIGTERM or SIGINT; the loop that feeds
//! key presses, engine events and ticks to the app and carries out its
//! effects; redraws only when something changed, at a capped frame rate.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures::StreamExt;
use tokio::sync::mpsc::{self, UnboundedReceiver};

use crate::app::{Action, App, Effect};
use crate::draw::draw;
use crate::engine::{Control, EngineHandle, Event};
use crate::remote::Connection;
use crate::remote::protocol::ServerMsg;
use crate::session::{Prepared, SetupError};
use crate::theme::Theme;

/// At most this many frames a second.
const FRAME: Duration = Duration::from_millis(33);
/// Elapsed times and the clock move on at this rate without events.
const TICK: Duration = Duration::from_millis(250);
/// How long quitting waits for the engine to stop and save.
const STOP_GRACE: Duration = Duration::from_secs(3);
/// Set to a file's path, the workbench appends a line per frame to it:
/// seconds since start, microseconds to render the frame, to draw it (the
/// render and the terminal's output), events folded, runs finished, and
/// the largest number of events waiting at once since the frame before.
/// Off by default; the soak (`scripts/soak.sh`) reads it.
pub const FRAME_LOG: &str = "SWITCHYARD_FRAME_LOG";

#[derive(thiserror::Error, Debug)]
pub enum UiError {
    #[error("the workbench needs a terminal (stdin and stdout must be a TTY); `switchyard run` runs headless")]
    NotATerminal,
    #[error("terminal: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// Quit on a signal rather than by the user: the terminal was restored
    /// and the engine told to stop, as on `q`.
    #[error("interrupted ({0}): the workbench quit; the trace keeps every event written")]
    Interrupted(&'static str),
}

pub fn check_terminal() -> Result<(), UiError> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() { Ok(()) } else { Err(UiError::NotATerminal) }
}

/// Runs the workbench over a live session until the user quits; `T` saves
/// runs as cases under `data_dir`.
pub async fn run_live(prepared: Prepared, theme: Theme, data_dir: Option<PathBuf>) -> Result<LiveEnd, UiError> {
    run_live_app(prepared, theme, data_dir, App::live()).await
}

/// `run_live`, opening on a notice: lines to read or copy first (the
/// exports an agent started elsewhere needs), any key closes it.
pub async fn run_live_noticed(
    prepared: Prepared,
    theme: Theme,
    data_dir: Option<PathBuf>,
    title: &str,
    lines: Vec<String>,
) -> Result<LiveEnd, UiError> {
    let mut app = App::live();
    app.dialog = Some(crate::dialog::Dialog::notice(title, lines));
    run_live_app(prepared, theme, data_dir, app).await
}

async fn run_live_app(
    prepared: Prepared,
    theme: Theme,
    data_dir: Option<PathBuf>,
    app: App,
) -> Result<LiveEnd, UiError> {
    check_terminal()?;
    let mut prepared = prepared;
    let events = prepared.engine.subscribe();
    let handle = prepared.handle.clone();
    let engine = tokio::spawn(crate::session::run(prepared));
    let mut terminal = ratatui::try_init()?;
    let live = Some((events, Steer::Engine(handle)));
    let mut keys = crossterm::event::EventStream::new();
    let result = event_loop(&mut terminal, &mut keys, app, live, &theme, data_dir.as_deref()).await;
    ratatui::restore();
    let signal = match result {
        Err(UiError::Interrupted(name)) => Some(name),
        other => other.map(|_| None)?,
    };
    // The engine was told to stop; give it a moment to finish and save.
    let outcome = match tokio::time::timeout(STOP_GRACE, engine).await {
        Ok(Ok(Ok(_))) => Ok(LiveEnd::Ended),
        Ok(Ok(Err(e))) if e.is_suspended() => return Ok(LiveEnd::Suspended),
        Ok(Ok(Err(e))) => Err(e.into()),
        _ => Ok(LiveEnd::Ended),
    };
    match signal {
        Some(name) => Err(UiError::Interrupted(name)),
        None => outcome,
    }
}

/// How a live workbench's session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveEnd {
    /// Finished or stopped: its trace is complete.
    Ended,
    /// Suspended: `switchyard resume` takes it up again.
    Suspended,
}

/// How an attached workbench ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attached {
    /// The user left; the session goes on.
    Detached,
    /// The session ended (or the user ended it).
    Ended,
    /// The connection failed: why.
    Lost(String),
}

/// The workbench on a session of another process: its events folded
/// from the connection's cursor on, each control sent back over it.
pub async fn run_attached(conn: Connection, theme: Theme, data_dir: Option<PathBuf>) -> Result<Attached, UiError> {
    let app = App::attached(&conn.session.id);
    Screen::open()?.attach(conn, app, &theme, data_dir.as_deref()).await
}

/// The terminal held for attached workbenches one after another (an
/// eval's tasks): raw mode and the alternate screen from `open` until
/// dropped, and one reader of keys throughout, so the screen does not
/// flicker between two and nothing typed meanwhile is lost.
pub struct Screen {
    terminal: ratatui::DefaultTerminal,
    keys: crossterm::event::EventStream,
}

impl Screen {
    pub fn open() -> Result<Screen, UiError> {
        check_terminal()?;
        Ok(Screen { terminal: ratatui::try_init()?, keys: crossterm::event::EventStream::new() })
    }

    /// The workbench `app` on the session of `conn` until the user leaves
    /// or the session ends (an app following an eval leaves when its task
    /// ends).
    pub async fn attach(
        &mut self,
        conn: Connection,
        app: App,
        theme: &Theme,
        data_dir: Option<&Path>,
    ) -> Result<Attached, UiError> {
        let (mut reader, mut writer) = conn.split();
        let (events_tx, events) = mpsc::unbounded_channel();
        // Set as the session's end is read, before the app hears of it: the
        // app may quit on it before the reading task has returned.
        let ended_flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended_seen = ended_flag.clone();
        let reading = tokio::spawn(async move {
            loop {
                match reader.next().await {
                    Ok(Some(ServerMsg::Event { event })) => {
                        if events_tx.send(*event).is_err() {
                            return Attached::Detached;
                        }
                    }
                    Ok(Some(ServerMsg::Ended) | None) => {
                        ended_seen.store(true, std::sync::atomic::Ordering::SeqCst);
                        return Attached::Ended;
                    }
                    Ok(Some(ServerMsg::Error { message })) => return Attached::Lost(message),
                    Ok(Some(_)) => {}
                    Err(e) => return Attached::Lost(e.to_string()),
                }
            }
        });
        let (controls, mut outbox) = mpsc::unbounded_channel::<Control>();
        // Whether the user ended the session (`q`, `q`); and the writing half,
        // kept open until the reading half has told how the session went (a
        // closed half is the end of the conversation to the session).
        let writing = tokio::spawn(async move {
            let mut stopped = false;
            while let Some(c) = outbox.recv().await {
                let stop = c == Control::Stop;
                if writer.send(c).await.is_err() {
                    break;
                }
                stopped |= stop;
            }
            (stopped, writer)
        });
        let live = Some((events, Steer::Remote(controls)));
        let result = event_loop(&mut self.terminal, &mut self.keys, app, live, theme, data_dir).await;
        // What the user sent last (an end of the session) reaches it first.
        let (stopped, _writer) = match tokio::time::timeout(STOP_GRACE, writing).await {
            Ok(Ok((stopped, writer))) => (stopped, Some(writer)),
            _ => (false, None),
        };
        let ended = if stopped {
            reading.abort();
            Attached::Ended
        } else if matches!(result, Ok(Leave::Detach)) {
            // Said by the user: it holds even if the session ended meanwhile.
            reading.abort();
            Attached::Detached
        } else if reading.is_finished() || ended_flag.load(std::sync::atomic::Ordering::SeqCst) {
            reading.await.unwrap_or(Attached::Ended)
        } else {
            // Closes the connection: the session records the viewer gone.
            reading.abort();
            Attached::Detached
        };
        match result {
            Err(UiError::Interrupted(_)) | Ok(_) => Ok(ended),
            Err(e) => Err(e),
        }
    }

    /// Between two attachments, the last screen held: waits up to `wait`
    /// for a key and says whether it asked to leave (`d`, `q`, Ctrl-C).
    pub async fn leave_asked(&mut self, wait: Duration) -> Result<bool, UiError> {
        use crossterm::event::{Event as Term, KeyCode, KeyEventKind, KeyModifiers};
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let key = tokio::select! {
                key = self.keys.next() => key,
                _ = tokio::time::sleep_until(deadline) => return Ok(false),
            };
            match key {
                Some(Ok(Term::Key(k))) if k.kind == KeyEventKind::Press => {
                    let ctrl_c = k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c');
                    if ctrl_c || matches!(k.code, KeyCode::Char('d' | 'q')) {
                        return Ok(true);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(true),
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

/// How the event loop was left.
enum Leave {
    Quit,
    Detach,
    /// Replay: fork after the first `at` events.
    Fork(usize),
}

/// Where the workbench's controls go: the engine in this process, or a
/// session of another one.
enum Steer {
    Engine(EngineHandle),
    Remote(mpsc::UnboundedSender<Control>),
    /// Events from elsewhere that nothing here can steer.
    Nowhere,
}

impl Steer {
    fn send(&self, c: Control) {
        match self {
            Steer::Engine(h) => {
                h.send(c);
            }
            Steer::Remote(tx) => {
                let _ = tx.send(c);
            }
            Steer::Nowhere => {}
        }
    }
}

/// Steps through a recorded trace, read-only; `T` saves runs as cases
/// under `data_dir`. Returns where the user asked to fork (`f`), if they did.
/// `notice`: shown in the status line when the replay opens (e.g. that the
/// trace's last line was torn).
pub async fn run_replay(
    events: Vec<Event>,
    at: Option<usize>,
    theme: Theme,
    data_dir: Option<PathBuf>,
    notice: Option<String>,
) -> Result<Option<usize>, UiError> {
    check_terminal()?;
    let mut terminal = ratatui::try_init()?;
    let mut app = App::replay(events);
    if let Some(n) = at {
        app.seek(n);
    }
    app.nav.flash = notice;
    let mut keys = crossterm::event::EventStream::new();
    let result = event_loop(&mut terminal, &mut keys, app, None, &theme, data_dir.as_deref()).await;
    ratatui::restore();
    result.map(|left| match left {
        Leave::Fork(at) => Some(at),
        Leave::Quit | Leave::Detach => None,
    })
}

/// The workbench on events received from elsewhere (`ui --otlp-listen`),
/// read-only, until the user quits or `events` ends. `from`: where they
/// come from, in the status line.
pub async fn run_watched(
    events: UnboundedReceiver<Event>,
    from: &str,
    theme: Theme,
    data_dir: Option<PathBuf>,
    notice: Option<String>,
) -> Result<(), UiError> {
    check_terminal()?;
    let mut terminal = ratatui::try_init()?;
    let mut app = App::watching(from);
    app.nav.flash = notice;
    let mut keys = crossterm::event::EventStream::new();
    let live = Some((events, Steer::Nowhere));
    let result = event_loop(&mut terminal, &mut keys, app, live, &theme, data_dir.as_deref()).await;
    ratatui::restore();
    result.map(|_| ())
}

async fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    keys: &mut crossterm::event::EventStream,
    mut app: App,
    live: Option<(UnboundedReceiver<Event>, Steer)>,
    theme: &Theme,
    data_dir: Option<&Path>,
) -> Result<Leave, UiError> {
    let (mut engine_events, handle) = match live {
        Some((rx, h)) => (Some(rx), Some(h)),
        None => (None, None),
    };
    let mut tick = tokio::time::interval(TICK);
    let mut sigterm = signal(tokio::signal::unix::SignalKind::terminate())?;
    // In raw mode Ctrl-C arrives as a key; `kill -INT` does not, and would
    // otherwise end the process with the terminal left raw.
    let mut sigint = signal(tokio::signal::unix::SignalKind::interrupt())?;
    // The engine's clock started about when we did: keep it moving between events.
    let started = Instant::now();
    let mut last_frame: Option<Instant> = None;
    let mut frame_log = FrameLog::open();
    loop {
        if app.dirty {
            let due = last_frame.is_none_or(|t| t.elapsed() >= FRAME);
            if due {
                let begun = Instant::now();
                let mut render = Duration::ZERO;
                terminal.draw(|f| {
                    draw(f, &app, theme);
                    render = begun.elapsed();
                })?;
                if let Some(log) = frame_log.as_mut() {
                    log.frame(started, render, begun.elapsed(), &app);
                }
                app.dirty = false;
                last_frame = Some(Instant::now());
            }
        }
        let next_frame = last_frame.map(|t| t + FRAME).unwrap_or_else(Instant::now);
        let effects = tokio::select! {
            key = keys.next() => match key {
                Some(Ok(crossterm::event::Event::Key(k))) => app.update(Action::Key(k)),
                Some(Ok(crossterm::event::Event::Resize(..))) => {
                    app.dirty = true;
                    Vec::new()
                }
                Some(Ok(_)) => Vec::new(),
                Some(Err(e)) => return Err(e.into()),
                None => vec![Effect::Quit],
            },
            ev = recv(&mut engine_events) => match ev {
                Some(ev) => {
                    app.update(Action::Engine(ev));
                    // Take what else has arrived before drawing again.
                    if let Some(rx) = engine_events.as_mut() {
                        if let Some(log) = frame_log.as_mut() {
                            log.backlog = log.backlog.max(rx.len());
                        }
                        while let Ok(ev) = rx.try_recv() {
                            app.update(Action::Engine(ev));
                        }
                    }
                    Vec::new()
                }
                None => {
                    engine_events = None;
                    app.update(Action::EngineEnded { error: None })
                }
            },
            _ = tick.tick() => app.update(Action::Tick { now_ms: started.elapsed().as_millis() as u64 }),
            _ = tokio::time::sleep_until(next_frame.into()), if app.dirty => Vec::new(),
            // SIGTERM (a service manager, a pod going away) suspends; a
            // user's interrupt ends.
            _ = sigterm.recv() => return quit_on_signal(&handle, "SIGTERM", crate::engine::Control::Suspend),
            _ = sigint.recv() => return quit_on_signal(&handle, "SIGINT", crate::engine::Control::Stop),
        };
        for effect in effects {
            match effect {
                Effect::Control(c) => {
                    if let Some(h) = &handle {
                        h.send(c);
                    }
                }
                Effect::SaveCase(case) => {
                    app.nav.flash = Some(crate::cases::save(data_dir, &case));
                    app.dirty = true;
                }
                Effect::Quit => return Ok(Leave::Quit),
                Effect::Detach => return Ok(Leave::Detach),
                Effect::Fork { at } => return Ok(Leave::Fork(at)),
            }
        }
    }
}

/// The per-frame log [`FRAME_LOG`] asks for.
struct FrameLog {
    out: std::io::BufWriter<std::fs::File>,
    backlog: usize,
}

impl FrameLog {
    fn open() -> Option<FrameLog> {
        let path = std::env::var_os(FRAME_LOG).filter(|p| !p.is_empty())?;
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).ok()?;
        Some(FrameLog { out: std::io::BufWriter::new(file), backlog: 0 })
    }

    fn frame(&mut self, started: Instant, render: Duration, draw: Duration, app: &App) {
        use std::io::Write;
        let line = format!(
            "{:.3} {} {} {} {} {}\n",
            started.elapsed().as_secs_f64(),
            render.as_micros(),
            draw.as_micros(),
            app.state.events,
            app.state.totals.runs,
            self.backlog
        );
        // A log that cannot be written is no reason to stop the workbench.
        let _ = self.out.write_all(line.as_bytes()).and_then(|_| self.out.flush());
        self.backlog = 0;
    }
}

async fn recv(rx: &mut Option<UnboundedReceiver<Event>>) -> Option<Event> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// The engine told to stop or suspend (whatever dialog is open), then out
/// with the signal's name.
/// Attached, the session is another process's: a signal only detaches.
fn quit_on_signal(
    handle: &Option<Steer>,
    name: &'static str,
    control: crate::engine::Control,
) -> Result<Leave, UiError> {
    if let Some(Steer::Engine(h)) = handle {
        h.send(control);
    }
    Err(UiError::Interrupted(name))
}

#[cfg(unix)]
fn signal(kind: tokio::signal::unix::SignalKind) -> Result<tokio::signal::unix::Signal, UiError> {
    Ok(tokio::signal::unix::signal(kind)?)
}
