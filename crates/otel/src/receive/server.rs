//! The HTTP side: `POST /v1/traces`, answered as OTLP/HTTP says. A body
//! that cannot be read is a 400 with a `google.rpc.Status` in the request's
//! own encoding; a media type that is not the protocol's, a 415; spans
//! refused for their ids, a partial success.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTracePartialSuccess, ExportTraceServiceResponse};

use super::decode::{DecodeError, Encoding};
use super::genai::Counts;
use super::receiver::Receiver;
use crate::engine::event::{Event, EventKind, SCHEMA_VERSION};

/// The largest body read (a batch of spans with their messages).
const BODY_LIMIT: usize = 64 * 1024 * 1024;
/// How often traces gone quiet are looked for.
const TICK: Duration = Duration::from_secs(1);

/// `google.rpc.Status`, the body of the protocol's errors.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// gRPC's INVALID_ARGUMENT, the code OTLP/HTTP's errors carry.
const INVALID_ARGUMENT: i32 = 3;

#[derive(thiserror::Error, Debug)]
pub enum ServeError {
    #[error("the OTLP receiver: {0}")]
    Io(#[from] std::io::Error),
    #[error("the OTLP receiver could not record what it received: {0}")]
    Sink(String),
}

struct Shared<S> {
    receiver: Receiver,
    sink: S,
    started: Instant,
    /// The sink's first failure: the server stops on it.
    failed: Option<String>,
    /// The spans and traces waiting that the sink was last told of.
    told: (u64, u64),
}

type Handle<S> = Arc<Mutex<Shared<S>>>;

/// Serves until `shutdown` resolves, handing each batch of events to
/// `sink` (the trace file, a workbench) as traces complete; at the end,
/// what is still open and the session's last event. `first`: the
/// session's first event, handed to the sink before anything is served.
pub async fn serve<S>(
    listener: tokio::net::TcpListener,
    receiver: Receiver,
    first: Event,
    mut sink: S,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Counts, ServeError>
where
    S: FnMut(&[Event]) -> Result<(), String> + Send + 'static,
{
    sink(std::slice::from_ref(&first)).map_err(ServeError::Sink)?;
    let shared: Handle<S> =
        Arc::new(Mutex::new(Shared { receiver, sink, started: Instant::now(), failed: None, told: (0, 0) }));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(traces::<S>))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(shared.clone());
    let ticking = {
        let shared = shared.clone();
        let stop_tx = stop_tx.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            loop {
                tick.tick().await;
                let mut g = shared.lock().unwrap_or_else(|p| p.into_inner());
                let now = g.started.elapsed().as_millis() as u64;
                let events = g.receiver.tick(now);
                if deliver(&mut g, &events).is_err() {
                    let _ = stop_tx.send(true);
                }
            }
        })
    };
    let mut sink_failed = stop_rx.clone();
    let graceful = async move {
        tokio::select! {
            _ = shutdown => {}
            _ = sink_failed.wait_for(|f| *f) => {}
        }
    };
    let served = axum::serve(listener, app).with_graceful_shutdown(graceful).await;
    ticking.abort();
    let mut g = shared.lock().unwrap_or_else(|p| p.into_inner());
    served?;
    if let Some(why) = g.failed.clone() {
        return Err(ServeError::Sink(why));
    }
    let events = g.receiver.finish(false);
    deliver(&mut g, &events).map_err(ServeError::Sink)?;
    drop(stop_tx);
    Ok(g.receiver.counts().clone())
}

/// Hands `events` to the sink, and then how many spans wait, when that
/// changed (a live-only event: a watcher sees spans come before their
/// trace is whole; a trace file does not keep it).
fn deliver<S>(g: &mut Shared<S>, events: &[Event]) -> Result<(), String>
where
    S: FnMut(&[Event]) -> Result<(), String>,
{
    if let Some(f) = &g.failed {
        return Err(f.clone());
    }
    let now = (g.receiver.waiting() as u64, g.receiver.open_traces() as u64);
    let mut batch = events.to_vec();
    if now != g.told {
        g.told = now;
        let kind = EventKind::SpansWaiting { spans: now.0, traces: now.1 };
        batch.push(Event { v: SCHEMA_VERSION, run: 0, step: 0, t: events.last().map_or(0, |e| e.t), kind });
    }
    if batch.is_empty() {
        return Ok(());
    }
    (g.sink)(&batch).inspect_err(|e| g.failed = Some(e.clone()))
}

async fn traces<S>(State(shared): State<Handle<S>>, headers: HeaderMap, body: Bytes) -> Response
where
    S: FnMut(&[Event]) -> Result<(), String> + Send + 'static,
{
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let Some(encoding) = Encoding::of(content_type) else {
        let e = DecodeError::Media(content_type.unwrap_or("").to_string());
        return status(StatusCode::UNSUPPORTED_MEDIA_TYPE, Encoding::Json, &e.to_string());
    };
    let content_encoding = headers.get(header::CONTENT_ENCODING).and_then(|v| v.to_str().ok());
    let mut g = shared.lock().unwrap_or_else(|p| p.into_inner());
    let now = g.started.elapsed().as_millis() as u64;
    let accepted = match g.receiver.receive(&body, encoding, content_encoding, now) {
        Ok(a) => a,
        Err(e) => return status(StatusCode::BAD_REQUEST, encoding, &e.to_string()),
    };
    if let Err(why) = deliver(&mut g, &accepted.events) {
        // Retryable for the sender; the server stops on it.
        return status(StatusCode::SERVICE_UNAVAILABLE, encoding, &format!("could not record the spans: {why}"));
    }
    drop(g);
    let partial_success = (accepted.rejected > 0).then(|| ExportTracePartialSuccess {
        rejected_spans: i64::try_from(accepted.rejected).unwrap_or(i64::MAX),
        error_message: format!(
            "{} spans refused: a trace id must be 16 bytes and a span id 8, not all zero",
            accepted.rejected
        ),
    });
    let response = ExportTraceServiceResponse { partial_success };
    let body = match encoding {
        Encoding::Protobuf => prost::Message::encode_to_vec(&response),
        // proto3's JSON leaves an unset message out rather than writing null.
        Encoding::Json if response.partial_success.is_none() => b"{}".to_vec(),
        Encoding::Json => serde_json::to_vec(&response).unwrap_or_else(|_| b"{}".to_vec()),
    };
    (StatusCode::OK, [(header::CONTENT_TYPE, encoding.content_type())], body).into_response()
}

/// An error as the protocol writes it.
fn status(code: StatusCode, encoding: Encoding, message: &str) -> Response {
    let s = RpcStatus { code: INVALID_ARGUMENT, message: message.to_string() };
    let body = match encoding {
        Encoding::Protobuf => prost::Message::encode_to_vec(&s),
        Encoding::Json => serde_json::json!({"code": s.code, "message": s.message}).to_string().into_bytes(),
    };
    (code, [(header::CONTENT_TYPE, encoding.content_type())], body).into_response()
}
