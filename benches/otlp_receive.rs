//! The OTLP receiver's cost per span: protobuf export requests of whole
//! agent runs (an `invoke_agent` span, two `chat` spans with their messages,
//! two `execute_tool` spans, one HTTP span of the agent's own), decoded,
//! held until each trace is whole, and read into events. The peak resident
//! memory, printed after the bench, stays where it is however many spans
//! pass: a trace is forgotten once it is read.

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::hint::black_box;

use criterion::{Bencher, Criterion, Throughput, criterion_group, criterion_main};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

use switchyard::otel::receive::{Encoding, Receiver};

/// Runs per request, as an SDK's batch of 512 spans would hold about.
const RUNS: u64 = 85;

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.into())) }),
        ..KeyValue::default()
    }
}

fn span(trace: u64, id: u64, parent: Option<u64>, name: &str, ms: (u64, u64), attrs: Vec<KeyValue>) -> Span {
    Span {
        trace_id: (u128::from(trace) + 1).to_be_bytes().to_vec(),
        span_id: (trace * 16 + id).to_be_bytes().to_vec(),
        parent_span_id: parent.map(|p| (trace * 16 + p).to_be_bytes().to_vec()).unwrap_or_default(),
        name: name.into(),
        start_time_unix_nano: 1_700_000_000_000_000_000 + ms.0 * 1_000_000,
        end_time_unix_nano: 1_700_000_000_000_000_000 + ms.1 * 1_000_000,
        attributes: attrs,
        ..Span::default()
    }
}

fn run(trace: u64) -> Vec<Span> {
    let input = r#"[{"role":"system","parts":[{"type":"text","content":"You are a travel agent. Use the tools."}]},{"role":"user","parts":[{"type":"text","content":"What is the weather in the capital of France?"}]}]"#;
    let asked = r#"[{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"geo","arguments":{"country":"France"}},{"type":"tool_call","id":"c2","name":"weather","arguments":{"city":"Paris"}}]}]"#;
    let answered = r#"[{"role":"assistant","parts":[{"type":"text","content":"Paris: mild, 14 C."}]}]"#;
    let chat = |id, ms, output: &str| {
        span(
            trace,
            id,
            Some(1),
            "chat gpt-4o",
            ms,
            vec![
                kv("gen_ai.operation.name", "chat"),
                kv("gen_ai.request.model", "gpt-4o"),
                kv("gen_ai.input.messages", input),
                kv("gen_ai.output.messages", output),
            ],
        )
    };
    let tool = |id, ms, name: &str, args: &str, result: &str| {
        span(
            trace,
            id,
            Some(1),
            &format!("execute_tool {name}"),
            ms,
            vec![
                kv("gen_ai.operation.name", "execute_tool"),
                kv("gen_ai.tool.name", name),
                kv("gen_ai.tool.call.arguments", args),
                kv("gen_ai.tool.call.result", result),
            ],
        )
    };
    vec![
        chat(2, (1, 30), asked),
        tool(3, (31, 35), "geo", r#"{"country":"France"}"#, r#"{"capital":"Paris"}"#),
        tool(4, (31, 40), "weather", r#"{"city":"Paris"}"#, r#"{"temp_c":14}"#),
        span(trace, 5, Some(4), "GET /forecast", (32, 39), vec![kv("http.request.method", "GET")]),
        chat(6, (41, 60), answered),
        span(trace, 1, None, "invoke_agent travel", (0, 61), vec![kv("gen_ai.operation.name", "invoke_agent")]),
    ]
}

fn body(first: u64) -> Vec<u8> {
    let spans: Vec<Span> = (first..first + RUNS).flat_map(run).collect();
    let request = ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            scope_spans: vec![ScopeSpans { spans, ..ScopeSpans::default() }],
            ..ResourceSpans::default()
        }],
    };
    prost::Message::encode_to_vec(&request)
}

fn receive_bench(c: &mut Criterion) {
    let bodies: Vec<Vec<u8>> = (0..8).map(|n| body(n * RUNS)).collect();
    let mut group = c.benchmark_group("otlp_receive");
    group.throughput(Throughput::Elements(RUNS * 6 * bodies.len() as u64));
    let (mut receiver, _) = Receiver::new(200_000, 60_000);
    group.bench_function(
        "protobuf_runs",
        peak::tracked(|b: &mut Bencher| {
            b.iter(|| {
                for body in &bodies {
                    let got = receiver.receive(black_box(body), Encoding::Protobuf, None, 0).unwrap();
                    black_box(got.events);
                }
                assert_eq!(receiver.waiting(), 0, "whole traces are not held");
            })
        }),
    );
    peak::report("otlp_receive/protobuf_runs");
    group.finish();
}

criterion_group!(benches, receive_bench);
criterion_main!(benches);
