//! Spans out over OTLP/HTTP with the OpenTelemetry SDK's exporter.
//!
//! Live: a thread of its own folds the session's events into spans and hands
//! them to a batch processor, whose own thread does the (blocking) HTTP; the
//! engine only ever sends on an unbounded channel, so a slow or unreachable
//! receiver never holds a run up. After the fact: a trace file's spans are
//! sent in batches, and any failure is the command's error.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::trace::{SpanContext, SpanId, Status as OtelStatus, TraceFlags, TraceId, TraceState};
use opentelemetry::{Array, InstrumentationScope, KeyValue, StringValue, Value};
use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SpanData, SpanEvents, SpanExporter, SpanLinks, SpanProcessor,
};
use tokio::sync::{mpsc, oneshot};

use super::settings::{OtelError, OtelSettings};
use super::spans::{AttrValue, Span, SpanFold, SpanKind, Status, spans};
use crate::engine::event::Event;
use crate::engine::trace::{TornLine, read_trace_file};

/// How long one export may take, retries included.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the end of a session waits for its last spans to be sent.
const FINISH_WAIT: Duration = Duration::from_secs(6);
/// Spans per request when exporting a trace file.
const FILE_BATCH: usize = 512;

/// One session's ids: a trace id, and span ids derived from the fold's
/// local ids, so a child can name its parent before the parent has ended.
struct Ids {
    trace: TraceId,
    salt: u64,
    anchor: SystemTime,
    scope: InstrumentationScope,
}

impl Ids {
    /// `anchor`: the wall-clock time of the engine clock's 0.
    fn new(anchor: SystemTime) -> Self {
        let trace = loop {
            let t: u128 = rand::random();
            if t != 0 {
                break t;
            }
        };
        Ids {
            trace: TraceId::from_bytes(trace.to_be_bytes()),
            salt: rand::random(),
            anchor,
            scope: InstrumentationScope::builder("switchyard").with_version(env!("CARGO_PKG_VERSION")).build(),
        }
    }

    fn span_id(&self, local: u64) -> SpanId {
        // Multiplying by an odd constant and xor-ing a salt are both
        // one-to-one on u64, so local ids never collide.
        let id = self.salt ^ local.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        SpanId::from_bytes(if id == 0 { 1u64 } else { id }.to_be_bytes())
    }

    fn data(&self, s: &Span) -> SpanData {
        let at = |ms: u64| self.anchor + Duration::from_millis(ms);
        SpanData {
            span_context: SpanContext::new(
                self.trace,
                self.span_id(s.id),
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            ),
            parent_span_id: s.parent.map_or(SpanId::INVALID, |p| self.span_id(p)),
            parent_span_is_remote: false,
            span_kind: match s.kind {
                SpanKind::Internal => opentelemetry::trace::SpanKind::Internal,
                SpanKind::Client => opentelemetry::trace::SpanKind::Client,
            },
            name: s.name.clone().into(),
            start_time: at(s.start_ms),
            end_time: at(s.end_ms),
            attributes: s.attrs.iter().map(|(k, v)| KeyValue::new(k.clone(), value(v))).collect(),
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: match &s.status {
                Status::Unset => OtelStatus::Unset,
                Status::Error(d) => OtelStatus::error(d.clone()),
            },
            instrumentation_scope: self.scope.clone(),
        }
    }

    fn trace_hex(&self) -> String {
        format!("{:032x}", self.trace)
    }
}

fn value(v: &AttrValue) -> Value {
    match v {
        AttrValue::Str(s) => Value::String(s.clone().into()),
        AttrValue::Int(i) => Value::I64(*i),
        AttrValue::F64(f) => Value::F64(*f),
        AttrValue::Bool(b) => Value::Bool(*b),
        AttrValue::Strs(v) => Value::Array(Array::String(v.iter().cloned().map(StringValue::from).collect())),
    }
}

/// The OTLP exporter, remembering its first failure (and logging it once:
/// a receiver that is down would otherwise fill the log batch by batch).
#[derive(Debug)]
struct Watched {
    inner: opentelemetry_otlp::SpanExporter,
    url: String,
    failure: Arc<Mutex<Option<String>>>,
}

impl SpanExporter for Watched {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len();
        let result = self.inner.export(batch).await;
        if let Err(e) = &result
            && let Ok(mut first) = self.failure.lock()
            && first.is_none()
        {
            tracing::warn!(
                "OpenTelemetry: could not export {n} spans to {}: {e}; later failures are not logged",
                self.url
            );
            *first = Some(e.to_string());
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

fn exporter(settings: &OtelSettings) -> Result<Watched, OtelError> {
    register_header_secrets();
    let mut inner = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(settings.traces_url.clone())
        // Protobuf whatever OTEL_EXPORTER_OTLP_PROTOCOL says: only HTTP is built in.
        .with_protocol(Protocol::HttpBinary)
        .with_timeout(EXPORT_TIMEOUT)
        .with_retry_policy(RetryPolicy::recommended().with_max_retries(2))
        .build()
        .map_err(|e| OtelError::Endpoint { url: settings.traces_url.clone(), why: e.to_string() })?;
    inner.set_resource(&resource());
    Ok(Watched { inner, url: settings.traces_url.clone(), failure: Arc::new(Mutex::new(None)) })
}

/// The exporter reads a receiver's key from the environment itself
/// (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, `OTEL_EXPORTER_OTLP_HEADERS`:
/// `name=value,...`, values percent-encoded): each value, and its token
/// after a scheme such as `Bearer `, is registered so that an export error
/// quoting it is masked like any other key.
fn register_header_secrets() {
    use crate::text::secret::register;
    for var in ["OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"] {
        let Ok(list) = std::env::var(var) else { continue };
        for (_, value) in list.split(',').filter_map(|pair| pair.split_once('=')) {
            let value = percent_decode(value.trim());
            register(&value);
            if let Some((_, token)) = value.trim().rsplit_once(' ') {
                register(token);
            }
        }
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Who sent the spans. `OTEL_RESOURCE_ATTRIBUTES` adds to it (e.g. a
/// receiver's project name); the service is always `switchyard`.
fn resource() -> Resource {
    Resource::builder().with_service_name("switchyard").build()
}

/// A live session's export, running beside the engine.
pub struct LiveExport {
    done: oneshot::Receiver<()>,
    failure: Arc<Mutex<Option<String>>>,
}

impl LiveExport {
    /// Starts exporting `events` (a subscription taken before the session
    /// runs). Only a bad endpoint fails here; an unreachable receiver is
    /// logged once and otherwise ignored.
    pub fn start(settings: &OtelSettings, mut events: mpsc::UnboundedReceiver<Event>) -> Result<Self, OtelError> {
        let exporter = exporter(settings)?;
        let failure = Arc::clone(&exporter.failure);
        let batch = BatchConfigBuilder::default()
            .with_max_queue_size(1 << 16)
            .with_scheduled_delay(Duration::from_secs(1))
            .build();
        let processor = BatchSpanProcessor::new(exporter, batch);
        let content = settings.content;
        let (tx, done) = oneshot::channel();
        std::thread::Builder::new()
            .name("otel-export".into())
            .spawn(move || {
                let mut fold = SpanFold::new(content);
                let mut ids: Option<Ids> = None;
                while let Some(e) = events.blocking_recv() {
                    let ids = ids.get_or_insert_with(|| Ids::new(SystemTime::now() - Duration::from_millis(e.t)));
                    for s in fold.push(&e) {
                        processor.on_end(ids.data(&s));
                    }
                }
                // The engine is gone: whatever it left open ends here.
                if let Some(ids) = &ids {
                    for s in fold.finish() {
                        processor.on_end(ids.data(&s));
                    }
                }
                let _ = processor.shutdown_with_timeout(EXPORT_TIMEOUT);
                let _ = tx.send(());
            })
            .map_err(|e| OtelError::Endpoint { url: settings.traces_url.clone(), why: e.to_string() })?;
        Ok(LiveExport { done, failure })
    }

    /// Waits, a few seconds at most, for the session's last spans to go out
    /// (the engine must have finished: its end closes the event stream).
    /// Returns the first export failure, if any; it was logged already.
    pub async fn finish(self) -> Option<String> {
        let failed = self.failure.lock().ok().and_then(|f| f.clone());
        // A receiver already found down is not waited for again.
        if failed.is_none() {
            let _ = tokio::time::timeout(FINISH_WAIT, self.done).await;
        }
        self.failure.lock().ok().and_then(|f| f.clone())
    }
}

/// What `export_trace` sent.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSummary {
    pub spans: usize,
    /// The trace id, hex, as receivers show it.
    pub trace_id: String,
    pub url: String,
    /// The trace's last line, torn by a killed writer (what came before it was sent).
    pub torn: Option<TornLine>,
}

/// Sends a trace file's spans. Its times are anchored so that the last
/// event falls at the file's modification time (it was written as it
/// happened). Fails if the file cannot be read or the receiver refuses or
/// cannot be reached.
pub fn export_trace(path: &Path, settings: &OtelSettings) -> Result<ExportSummary, OtelError> {
    let read = read_trace_file(path)?;
    let events = read.events;
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or_else(|_| SystemTime::now());
    let last = events.iter().map(|e| e.t).max().unwrap_or(0);
    let ids = Ids::new(modified.checked_sub(Duration::from_millis(last)).unwrap_or(modified));
    let all = spans(&events, settings.content);
    let exporter = exporter(settings)?;
    for chunk in all.chunks(FILE_BATCH) {
        let batch: Vec<SpanData> = chunk.iter().map(|s| ids.data(s)).collect();
        futures::executor::block_on(exporter.inner.export(batch))
            .map_err(|e| OtelError::Unreachable { url: settings.traces_url.clone(), why: e.to_string() })?;
    }
    let _ = exporter.inner.shutdown();
    Ok(ExportSummary { spans: all.len(), trace_id: ids.trace_hex(), url: settings.traces_url.clone(), torn: read.torn })
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn header_values_are_percent_decoded() {
        assert_eq!(percent_decode("Bearer%20sk-a%2Bb%2fc"), "Bearer sk-a+b/c");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz"), "%zz");
    }
}
