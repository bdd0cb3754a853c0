//! `otlp serve`: an OTLP/HTTP receiver that writes what an instrumented
//! agent exports as a Switchyard trace; and the receiving half of
//! `ui --otlp-listen`, which shows it in the workbench as it comes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use color_eyre::eyre::{Result, WrapErr, eyre};

use switchyard::config::Config;
use switchyard::engine::event::{Event, EventKind, RunOutcome};
use switchyard::engine::trace::TraceWriter;
use switchyard::otel::receive::{Counts, IDLE_MS, Receiver, WAITING_CAP, serve};

use super::setup::{listen_addr, runtime, stamp};

#[derive(Subcommand, Debug)]
pub(super) enum OtlpCommand {
    /// Receive OpenTelemetry spans over OTLP/HTTP (POST /v1/traces, protobuf or JSON) and write
    /// them as a trace: GenAI model calls, tool calls and agent runs as a session's events, other
    /// spans kept as they came. Ctrl-C ends it.
    Serve(ServeArgs),
}

#[derive(Args, Debug)]
pub(super) struct ServeArgs {
    /// Where to listen: a PORT on 127.0.0.1, or ADDRESS:PORT (4318 is OTLP/HTTP's own port).
    #[arg(long, value_name = "ADDR", default_value = "4318")]
    listen: String,
    /// Write the trace here (default: DATA_DIR/traces/otlp-STAMP.jsonl).
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    receiving: Receiving,
}

/// How long a trace waits for the rest of it; shared with `ui --otlp-listen`.
#[derive(Args, Debug, Default, Clone)]
pub(super) struct Receiving {
    /// Seconds a trace may go without a span before it is written as it is (its root may never
    /// come, e.g. when it lives in another process).
    #[arg(long, value_name = "SECS")]
    idle: Option<u64>,
}

impl Receiving {
    fn receiver(&self) -> (Receiver, Event) {
        Receiver::new(WAITING_CAP, self.idle.map_or(IDLE_MS, |s| s.saturating_mul(1000)))
    }
}

pub(super) fn run(config: &Config, cmd: OtlpCommand) -> Result<ExitCode> {
    match cmd {
        OtlpCommand::Serve(a) => serve_to_file(config, a),
    }
}

pub(super) fn default_trace(config: &Config) -> Result<PathBuf> {
    Ok(config.data_paths()?.traces().join(format!("otlp-{}.jsonl", stamp())))
}

fn serve_to_file(config: &Config, a: ServeArgs) -> Result<ExitCode> {
    let addr = listen_addr("--listen", &a.listen)?;
    let path = match a.trace {
        Some(p) => p,
        None => default_trace(config)?,
    };
    let mut writer = TraceWriter::create(&path).wrap_err("otlp serve --trace")?;
    let rt = runtime()?;
    let counts = rt.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(addr).await.wrap_err_with(|| format!("otlp serve: listen on {addr}"))?;
        let bound = listener.local_addr()?;
        println!("OTLP/HTTP receiver at http://{bound}/v1/traces, writing {}", path.display());
        println!("export OTEL_EXPORTER_OTLP_ENDPOINT=http://{bound}");
        println!("Ctrl-C ends it");
        let (receiver, first) = a.receiving.receiver();
        let sink = move |events: &[Event]| {
            for e in events.iter().filter(|e| !e.kind.is_live_only()) {
                writer.write(e).map_err(|e| e.to_string())?;
                if let Some(line) = said(e) {
                    println!("{line}");
                }
            }
            Ok(())
        };
        serve(listener, receiver, first, sink, interrupted()).await.map_err(|e| eyre!(e))
    })?;
    finished(&counts, &path);
    Ok(ExitCode::SUCCESS)
}

/// Resolves on Ctrl-C or SIGTERM: the receiver writes what it holds, then ends.
pub(super) async fn interrupted() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        // Without signals, nothing but the process's end stops it.
        _ => std::future::pending().await,
    }
}

pub(super) fn finished(counts: &Counts, path: &std::path::Path) {
    println!("received {}", counts.said());
    println!("trace: {}\nreplay it with: switchyard replay {}", path.display(), path.display());
}

/// A line for each run written.
fn said(e: &Event) -> Option<String> {
    match &e.kind {
        EventKind::RunFinished { outcome, steps, tool_calls, .. } => {
            let how = match outcome {
                RunOutcome::Answered => "answered".to_string(),
                RunOutcome::Stopped => "cut short (its trace never ended)".to_string(),
                RunOutcome::Failed { error } => format!("failed: {}", switchyard::text::ellipsis(error, 80)),
                other => format!("{other:?}"),
            };
            let n = |count: u32, what: &str| format!("{count} {what}{}", if count == 1 { "" } else { "s" });
            Some(format!("run {}: {}, {}, {how}", e.run, n(*steps, "model call"), n(*tool_calls, "tool call")))
        }
        _ => None,
    }
}

/// `ui --otlp-listen ADDR`: the receiver behind a read-only workbench; the
/// trace is written all the same.
pub(super) fn watch(
    config: &Config,
    spec: &str,
    receiving: &Receiving,
    theme: switchyard::ui::theme::Theme,
    trace: Option<PathBuf>,
) -> Result<ExitCode> {
    let addr = listen_addr("--otlp-listen", spec)?;
    let path = match trace {
        Some(p) => p,
        None => default_trace(config)?,
    };
    switchyard::ui::term::check_terminal()?;
    let mut writer = TraceWriter::create(&path).wrap_err("ui --otlp-listen: the trace")?;
    let rt = runtime()?;
    let data_dir = config.data_dir().ok();
    let counts = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .wrap_err_with(|| format!("ui --otlp-listen: listen on {addr}"))?;
        let bound = listener.local_addr()?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let (receiver, first) = receiving.receiver();
        let sink = move |events: &[Event]| {
            for e in events {
                if !e.kind.is_live_only() {
                    writer.write(e).map_err(|e| e.to_string())?;
                }
                // The workbench may have quit first: the trace is what counts.
                let _ = tx.send(e.clone());
            }
            Ok(())
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, receiver, first, sink, async {
            let _ = stopped.await;
        }));
        let notice =
            format!("receiving at http://{bound}/v1/traces: export OTEL_EXPORTER_OTLP_ENDPOINT=http://{bound}");
        let shown = switchyard::ui::term::run_watched(rx, &bound.to_string(), theme, data_dir, Some(notice)).await;
        let _ = stop.send(());
        let counts = server.await.map_err(|e| eyre!("the OTLP receiver: {e}"))?.map_err(|e| eyre!(e))?;
        shown?;
        Ok::<_, color_eyre::eyre::Report>(counts)
    })?;
    finished(&counts, &path);
    Ok(ExitCode::SUCCESS)
}
