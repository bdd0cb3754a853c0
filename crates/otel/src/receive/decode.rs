//! An OTLP/HTTP export request's body as spans: protobuf or the protocol's
//! JSON mapping, by its `Content-Type`, gzipped or not, by its
//! `Content-Encoding`. Ids, times and attributes come out in plain types,
//! so nothing above this file names the protocol's generated ones.

use std::io::Read;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::Value as Json;

/// How the request was written; the response is written the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Protobuf,
    Json,
}

impl Encoding {
    /// `Content-Type` as the protocol names it; None for another one.
    pub fn of(content_type: Option<&str>) -> Option<Encoding> {
        // Parameters (`; charset=utf-8`) do not change the encoding.
        let media = content_type.unwrap_or("").split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match media.as_str() {
            "application/x-protobuf" | "application/protobuf" => Some(Encoding::Protobuf),
            "application/json" => Some(Encoding::Json),
            _ => None,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// One span as received.
#[derive(Clone, Debug, PartialEq)]
pub struct InSpan {
    pub trace: u128,
    pub id: u64,
    /// None for a trace's root.
    pub parent: Option<u64>,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Attribute values in JSON: strings, numbers, booleans, arrays and
    /// maps as the protocol's `AnyValue` holds them.
    pub attrs: Vec<(String, Json)>,
    /// The span's status was an error: its message (or the `error.type`).
    pub error: Option<String>,
}

impl InSpan {
    pub fn attr(&self, key: &str) -> Option<&Json> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn str_attr(&self, key: &str) -> Option<&str> {
        self.attr(key).and_then(Json::as_str)
    }

    pub fn u64_attr(&self, key: &str) -> Option<u64> {
        match self.attr(key)? {
            Json::Number(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
            Json::String(s) => s.parse().ok(),
            _ => None,
        }
    }

    pub fn ms(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns) / 1_000_000
    }
}

/// What a body held: its spans, and those refused for ids the protocol
/// does not allow (told back to the sender as a partial success).
#[derive(Debug, Default)]
pub struct Decoded {
    pub spans: Vec<InSpan>,
    pub rejected: u64,
}

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum DecodeError {
    #[error("Content-Type {0:?} is not OTLP/HTTP's: send application/x-protobuf or application/json")]
    Media(String),
    #[error("Content-Encoding {0:?} is not supported: send the body as it is, or gzip")]
    Compression(String),
    #[error("the body is not gzip: {0}")]
    Gzip(String),
    #[error("the body is not an ExportTraceServiceRequest in protobuf: {0}")]
    Protobuf(String),
    #[error("the body is not an ExportTraceServiceRequest in OTLP's JSON: {0}")]
    Json(String),
}

/// The request's body, read.
pub fn decode(body: &[u8], encoding: Encoding, content_encoding: Option<&str>) -> Result<Decoded, DecodeError> {
    let unzipped;
    let body = match content_encoding.map(|c| c.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("identity") => body,
        Some("gzip") => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(body).read_to_end(&mut out).map_err(|e| DecodeError::Gzip(e.to_string()))?;
            unzipped = out;
            &unzipped
        }
        Some(other) => return Err(DecodeError::Compression(other.to_string())),
    };
    let request: ExportTraceServiceRequest = match encoding {
        Encoding::Protobuf => <ExportTraceServiceRequest as prost::Message>::decode(body)
            .map_err(|e| DecodeError::Protobuf(e.to_string()))?,
        Encoding::Json => serde_json::from_slice(body).map_err(|e| DecodeError::Json(e.to_string()))?,
    };
    Ok(spans_of(request))
}

fn spans_of(request: ExportTraceServiceRequest) -> Decoded {
    let mut out = Decoded::default();
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            for span in scope.spans {
                let (Ok(trace), Ok(id)) =
                    (<[u8; 16]>::try_from(span.trace_id.as_slice()), <[u8; 8]>::try_from(span.span_id.as_slice()))
                else {
                    out.rejected += 1;
                    continue;
                };
                let (trace, id) = (u128::from_be_bytes(trace), u64::from_be_bytes(id));
                if trace == 0 || id == 0 {
                    out.rejected += 1;
                    continue;
                }
                let parent = <[u8; 8]>::try_from(span.parent_span_id.as_slice())
                    .ok()
                    .map(u64::from_be_bytes)
                    .filter(|p| *p != 0);
                let attrs: Vec<(String, Json)> = span.attributes.into_iter().map(key_value).collect();
                let error = span.status.filter(|s| s.code == StatusCode::Error as i32).map(|s| {
                    if s.message.is_empty() {
                        attrs
                            .iter()
                            .find(|(k, _)| k == "error.type")
                            .and_then(|(_, v)| v.as_str())
                            .unwrap_or("error")
                            .to_string()
                    } else {
                        s.message
                    }
                });
                out.spans.push(InSpan {
                    trace,
                    id,
                    parent,
                    name: span.name,
                    start_ns: span.start_time_unix_nano,
                    end_ns: span.end_time_unix_nano.max(span.start_time_unix_nano),
                    attrs,
                    error,
                });
            }
        }
    }
    out
}

fn key_value(kv: KeyValue) -> (String, Json) {
    (kv.key, kv.value.map(any).unwrap_or(Json::Null))
}

fn any(v: AnyValue) -> Json {
    match v.value {
        None => Json::Null,
        Some(any_value::Value::StringValue(s)) => Json::String(s),
        Some(any_value::Value::BoolValue(b)) => Json::Bool(b),
        Some(any_value::Value::IntValue(i)) => Json::from(i),
        Some(any_value::Value::DoubleValue(f)) => serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number),
        Some(any_value::Value::ArrayValue(a)) => Json::Array(a.values.into_iter().map(any).collect()),
        Some(any_value::Value::KvlistValue(l)) => Json::Object(l.values.into_iter().map(key_value).collect()),
        // Bytes have no JSON of their own: in hex, as ids are.
        Some(any_value::Value::BytesValue(b)) => Json::String(hex(&b)),
        Some(_) => Json::Null,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
