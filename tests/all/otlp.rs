//! The OTLP/HTTP receiver: GenAI spans in OTLP's JSON and protobuf become a
//! session's events; other spans are kept and counted; a body it cannot
//! read is answered in the protocol's own error shape; Switchyard's own
//! exporter makes the round trip.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use switchyard::engine::EventKind;
use switchyard::engine::event::{RunOutcome, ToolOutcome};
use switchyard::engine::trace::read_trace;
use switchyard::otel::receive::{Encoding, Receiver};

use crate::cli_helpers::{bin, ok, run};

const TRACE: &str = "5b8efff798038103d269b633813fc60c";

fn kv(key: &str, value: Value) -> Value {
    let v = match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n}),
        other => json!({"stringValue": other.to_string()}),
    };
    json!({"key": key, "value": v})
}

/// A span in OTLP's JSON: times in ms from 0, attributes as JSON values.
fn span(
    id: u64,
    parent: Option<u64>,
    name: &str,
    ms: (u64, u64),
    attrs: &[(&str, Value)],
    error: Option<&str>,
) -> Value {
    let mut s = json!({
        "traceId": TRACE,
        "spanId": format!("{id:016x}"),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": (1_700_000_000_000u64 + ms.0) * 1_000_000,
        "endTimeUnixNano": (1_700_000_000_000u64 + ms.1) * 1_000_000,
        "attributes": attrs.iter().map(|(k, v)| kv(k, v.clone())).collect::<Vec<_>>(),
    });
    if let Some(p) = parent {
        s["parentSpanId"] = json!(format!("{p:016x}"));
    }
    if let Some(e) = error {
        s["status"] = json!({"code": 2, "message": e});
    }
    s
}

fn request(spans: Vec<Value>) -> Value {
    json!({"resourceSpans": [{"resource": {"attributes": [kv("service.name", json!("agent"))]},
        "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]})
}

fn messages(list: Value) -> Value {
    json!(list.to_string())
}

/// An agent's run: a model call that asks for two tools, one of which
/// fails, a model call that answers; an HTTP span of the agent's own; and
/// the run's root.
fn agent_run() -> Vec<Value> {
    vec![
        span(
            2,
            Some(1),
            "chat gpt-4o",
            (10, 40),
            &[
                ("gen_ai.operation.name", json!("chat")),
                ("gen_ai.request.model", json!("gpt-4o")),
                ("gen_ai.usage.input_tokens", json!(100)),
                ("gen_ai.usage.output_tokens", json!(20)),
                (
                    "gen_ai.input.messages",
                    messages(json!([{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}])),
                ),
                (
                    "gen_ai.output.messages",
                    messages(json!([{"role": "assistant", "parts": [
                        {"type": "tool_call", "id": "c1", "name": "geo", "arguments": {"city": "Paris"}},
                        {"type": "tool_call", "id": "c2", "name": "weather", "arguments": "{\"city\":\"Paris\"}"}
                    ], "finish_reason": "tool_call"}])),
                ),
            ],
            None,
        ),
        span(
            3,
            Some(1),
            "execute_tool geo",
            (41, 45),
            &[
                ("gen_ai.operation.name", json!("execute_tool")),
                ("gen_ai.tool.name", json!("geo")),
                ("gen_ai.tool.call.arguments", json!("{\"city\":\"Paris\"}")),
                ("gen_ai.tool.call.result", json!("{\"lat\":48.85}")),
            ],
            None,
        ),
        span(
            4,
            Some(1),
            "execute_tool weather",
            (41, 50),
            &[("gen_ai.operation.name", json!("execute_tool")), ("gen_ai.tool.name", json!("weather"))],
            Some("upstream timed out"),
        ),
        span(5, Some(4), "GET /forecast", (42, 49), &[("http.request.method", json!("GET"))], None),
        span(
            6,
            Some(1),
            "chat gpt-4o",
            (51, 60),
            &[
                ("gen_ai.operation.name", json!("chat")),
                ("gen_ai.request.model", json!("gpt-4o")),
                (
                    "gen_ai.output.messages",
                    messages(json!([{"role": "assistant", "parts": [{"type": "text", "content": "Mild, 14 C."}]}])),
                ),
            ],
            None,
        ),
        span(1, None, "invoke_agent weather-bot", (0, 61), &[("gen_ai.operation.name", json!("invoke_agent"))], None),
    ]
}

#[test]
fn genai_spans_become_a_run_and_other_spans_are_kept_and_counted() {
    let (mut r, first) = Receiver::new(1000, 60_000);
    assert!(matches!(first.kind, EventKind::SessionStarted { .. }));
    let body = request(agent_run()).to_string();
    let got = r.receive(body.as_bytes(), Encoding::Json, None, 0).unwrap();
    assert_eq!(got.rejected, 0);
    let kinds: Vec<&str> = got.events.iter().map(|e| e.kind.name()).collect();
    assert_eq!(
        kinds,
        [
            "RunStarted",
            "ModelCall",
            "ModelReply",
            "ToolCall",
            "ToolCall",
            "SpanReceived",
            "ToolResult",
            "ToolResult",
            "ModelCall",
            "ModelReply",
            "RunFinished"
        ]
    );
    let e = &got.events;
    assert!(matches!(&e[0].kind, EventKind::RunStarted { task, .. } if task == "Weather in Paris?"));
    match &e[2].kind {
        EventKind::ModelReply { tool_calls, usage, .. } => {
            let asked: Vec<(&str, &Value)> = tool_calls.iter().map(|c| (c.name.as_str(), &c.arguments)).collect();
            assert_eq!(asked, [("geo", &json!({"city": "Paris"})), ("weather", &json!({"city": "Paris"}))]);
            assert_eq!((usage.prompt_tokens, usage.completion_tokens), (100, 20));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&e[6].kind, EventKind::ToolResult { tool, outcome: ToolOutcome::Ok { value }, .. }
        if tool == "geo" && *value == json!({"lat": 48.85})));
    assert!(matches!(&e[7].kind, EventKind::ToolResult { outcome: ToolOutcome::Err { error }, .. }
        if error.message == "upstream timed out"));
    // Tool events carry the step of the reply that asked for them.
    assert_eq!((e[3].step, e[8].step), (1, 2));
    match &e[10].kind {
        EventKind::RunFinished { outcome, answer, steps, tool_calls, .. } => {
            assert_eq!(*outcome, RunOutcome::Answered);
            assert_eq!(answer.as_deref(), Some("Mild, 14 C."));
            assert_eq!((*steps, *tool_calls), (2, 2));
        }
        other => panic!("{other:?}"),
    }
    let c = r.counts();
    assert_eq!((c.spans, c.runs, c.model_calls, c.tool_calls, c.plain, c.other_genai), (6, 1, 2, 2, 1, 0));
    assert!(c.said().contains("1 span without GenAI attributes kept as plain spans"), "{}", c.said());
    assert_eq!(r.waiting(), 0, "a whole trace is not held");
}

#[test]
fn a_trace_waits_for_its_root_and_one_cut_short_is_written_at_the_end() {
    let (mut r, _) = Receiver::new(1000, 60_000);
    let mut spans = agent_run();
    let root = spans.pop().unwrap();
    let part = r.receive(request(spans.clone()).to_string().as_bytes(), Encoding::Json, None, 0).unwrap();
    assert!(part.events.is_empty(), "nothing before the root: {:?}", part.events);
    assert_eq!(r.waiting(), 5);
    // The root, in a later request: the run, whole.
    let whole = r.receive(request(vec![root]).to_string().as_bytes(), Encoding::Json, None, 10).unwrap();
    assert_eq!(whole.events.iter().filter(|e| e.kind.name() == "ToolResult").count(), 2);

    // Another trace that never ends: written when the receiver stops.
    let (mut r, _) = Receiver::new(1000, 60_000);
    r.receive(request(spans.clone()).to_string().as_bytes(), Encoding::Json, None, 0).unwrap();
    assert!(r.tick(59_999).is_empty(), "not idle long enough");
    let end = r.finish(true);
    assert!(end.iter().any(|e| matches!(&e.kind, EventKind::RunFinished { outcome: RunOutcome::Stopped, .. })));
    assert!(matches!(end.last().unwrap().kind, EventKind::SessionFinished { runs: 1, .. }));

    // One whose root never comes is written once it has gone quiet.
    let (mut r, _) = Receiver::new(1000, 60_000);
    r.receive(request(spans).to_string().as_bytes(), Encoding::Json, None, 0).unwrap();
    let quiet = r.tick(60_000);
    assert!(quiet.iter().any(|e| e.kind.name() == "RunFinished"));
    assert_eq!(r.waiting(), 0);
}

#[test]
fn memory_holds_only_open_traces_and_the_oldest_goes_past_the_cap() {
    let (mut r, _) = Receiver::new(8, 60_000);
    // Many whole traces: nothing stays.
    for n in 0..2000u64 {
        let id = format!("{:032x}", n + 1);
        let spans: Vec<Value> = agent_run()
            .into_iter()
            .map(|mut s| {
                s["traceId"] = json!(id);
                s
            })
            .collect();
        r.receive(request(spans).to_string().as_bytes(), Encoding::Json, None, n).unwrap();
        assert_eq!(r.waiting(), 0);
    }
    assert_eq!(r.counts().runs, 2000);
    // Two open traces of five spans each pass a cap of 8: the first is written as it is.
    let open = |trace: &str| -> Vec<Value> {
        let mut spans = agent_run();
        spans.pop();
        spans
            .into_iter()
            .map(|mut s| {
                s["traceId"] = json!(trace);
                s
            })
            .collect()
    };
    assert!(
        r.receive(request(open(&"a".repeat(32))).to_string().as_bytes(), Encoding::Json, None, 0)
            .unwrap()
            .events
            .is_empty()
    );
    let pushed = r.receive(request(open(&"b".repeat(32))).to_string().as_bytes(), Encoding::Json, None, 0).unwrap();
    assert!(matches!(&pushed.events[0].kind, EventKind::RunStarted { .. }));
    assert_eq!(r.waiting(), 5);
}

#[test]
fn bad_bodies_are_refused_and_bad_ids_are_a_partial_success() {
    let (mut r, _) = Receiver::new(1000, 60_000);
    let e = r.receive(b"{\"resourceSpans\": [", Encoding::Json, None, 0).unwrap_err();
    assert!(e.to_string().contains("not an ExportTraceServiceRequest in OTLP's JSON"), "{e}");
    let e = r.receive(&[0xff, 0xff, 0xff], Encoding::Protobuf, None, 0).unwrap_err();
    assert!(e.to_string().contains("in protobuf"), "{e}");
    let e = r.receive(b"{}", Encoding::Json, Some("br"), 0).unwrap_err();
    assert!(e.to_string().contains("Content-Encoding \"br\""), "{e}");
    let e = r.receive(b"{}", Encoding::Json, Some("gzip"), 0).unwrap_err();
    assert!(e.to_string().contains("not gzip"), "{e}");
    let mut bad = agent_run();
    bad[0]["spanId"] = json!("00ff");
    let got = r.receive(request(bad).to_string().as_bytes(), Encoding::Json, None, 0).unwrap();
    assert_eq!(got.rejected, 1);
    assert_eq!(r.counts().rejected, 1);
    // Gzipped, as SDKs send it when asked to compress.
    let (mut r, _) = Receiver::new(1000, 60_000);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(request(agent_run()).to_string().as_bytes()).unwrap();
    let got = r.receive(&gz.finish().unwrap(), Encoding::Json, Some("gzip"), 0).unwrap();
    assert_eq!(got.events.iter().filter(|e| e.kind.name() == "ModelCall").count(), 2);
}

/// `otlp serve --listen 0`, and its base URL.
fn serve(trace: &Path) -> (Child, String, std::io::Lines<std::io::BufReader<std::process::ChildStdout>>) {
    let mut child = bin()
        .args(["otlp", "serve", "--listen", "0", "--trace", trace.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.split_whitespace().find(|w| w.starts_with("http://")).unwrap().trim_end_matches(',');
    (child, url.trim_end_matches("/v1/traces").to_string(), lines)
}

fn stop(mut child: Child, lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>) -> Vec<String> {
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert!(status.success(), "{rest:?}");
    rest
}

#[test]
fn the_server_answers_in_the_protocol_s_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("in.jsonl");
    let (child, base, lines) = serve(&trace);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let client = reqwest::Client::new();
    let post = |ct: &'static str, body: Vec<u8>| {
        let req = client.post(format!("{base}/v1/traces")).header("content-type", ct).body(body);
        rt.block_on(async {
            let r = req.send().await.unwrap();
            let status = r.status().as_u16();
            let ct = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
            (status, ct, r.bytes().await.unwrap().to_vec())
        })
    };
    let mut bad = agent_run();
    bad.push(span(9, None, "no trace", (0, 1), &[], None));
    bad[6]["traceId"] = json!("");
    let (status, ct, body) = post("application/json", request(bad).to_string().into_bytes());
    assert_eq!((status, ct.as_str()), (200, "application/json"));
    let body: Value = serde_json::from_slice(&body).unwrap();
    // An int64: a number, or a string as proto3's JSON may write it.
    let rejected = &body["partialSuccess"]["rejectedSpans"];
    assert!(*rejected == json!(1) || *rejected == json!("1"), "{body}");
    let (status, ct, body) = post("application/json", b"{not json".to_vec());
    assert_eq!((status, ct.as_str()), (400, "application/json"));
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["code"], json!(3));
    assert!(body["message"].as_str().unwrap().contains("OTLP's JSON"), "{body}");
    let (status, ct, _) = post("application/x-protobuf", vec![0xff; 9]);
    assert_eq!((status, ct.as_str()), (400, "application/x-protobuf"));
    let (status, _, body) = post("text/plain", b"hello".to_vec());
    assert_eq!(status, 415);
    assert!(String::from_utf8_lossy(&body).contains("application/x-protobuf or application/json"));
    let rest = stop(child, lines);
    assert!(rest.iter().any(|l| l.starts_with("run 1: 2 model calls, 2 tool calls, answered")), "{rest:?}");
    let events = read_trace(&trace).unwrap();
    assert!(matches!(events.last().unwrap().kind, EventKind::SessionFinished { runs: 1, .. }));
    assert!(!events.iter().any(|e| e.kind.is_live_only()), "what waited is shown live, not recorded");
    // What was received reads like any trace.
    let shown = ok(&["trace", "show", trace.to_str().unwrap()]);
    assert!(shown.contains("geo > weather") && shown.contains("Mild, 14 C."), "{shown}");
}

/// A simulated session exported by Switchyard's own exporter, received:
/// the same tasks, calls, results and answers.
#[test]
fn switchyard_s_own_export_makes_the_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let sent = dir.path().join("sent.jsonl");
    let got = dir.path().join("got.jsonl");
    ok(&[
        "--data-dir",
        d,
        "run",
        "--count",
        "4",
        "--seed",
        "7",
        "--fault",
        "geo_lookup:error@2",
        "--trace",
        sent.to_str().unwrap(),
    ]);
    let (child, base, lines) = serve(&got);
    ok(&["trace", "export", sent.to_str().unwrap(), "--otlp", &base, "--content"]);
    let rest = stop(child, lines);
    assert!(rest.iter().any(|l| l.contains("4 runs")), "{rest:?}");
    let (a, b) = (read_trace(&sent).unwrap(), read_trace(&got).unwrap());
    assert_eq!(sketch(&a), sketch(&b));
    // The session's own span is kept, not lost.
    assert!(b.iter().any(|e| matches!(&e.kind, EventKind::SpanReceived { name, .. } if name == "session")));
    // And it scans like any trace.
    let o = run(&["--data-dir", d, "scan", got.to_str().unwrap(), "--rules-only"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// What a run did, as both sides must agree on it.
fn sketch(events: &[switchyard::engine::Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunStarted { task_id, task, .. } => Some(format!("run {task_id}: {task}")),
            EventKind::ModelReply { role, text, tool_calls, .. } => {
                Some(format!("{} replied {text:?} {:?}", role.as_str(), tool_calls))
            }
            EventKind::ToolCall { tool, args, .. } => Some(format!("call {tool} {args}")),
            EventKind::ToolResult { tool, outcome, .. } => Some(match outcome {
                ToolOutcome::Ok { value } => format!("{tool} -> {value}"),
                ToolOutcome::Err { error } => format!("{tool} failed: {}", error.message),
            }),
            EventKind::RunFinished { outcome, answer, success, steps, tool_calls, .. } => {
                Some(format!("end {outcome:?} {answer:?} {success:?} {steps} {tool_calls}"))
            }
            _ => None,
        })
        .collect()
}

/// Two sessions of the same task, under other trace ids: the same task id,
/// so `trace diff` pairs their runs; another task, another id.
#[test]
fn the_same_task_has_the_same_id_in_any_session() {
    let task_id = |trace: &str, task: &str| -> String {
        let (mut r, _) = Receiver::new(1000, 60_000);
        let spans: Vec<Value> = agent_run()
            .into_iter()
            .map(|mut s| {
                s["traceId"] = json!(trace);
                if s["spanId"] == json!(format!("{:016x}", 2)) {
                    let m = json!([{"role": "user", "parts": [{"type": "text", "content": task}]}]);
                    s["attributes"][4] = kv("gen_ai.input.messages", json!(m.to_string()));
                }
                s
            })
            .collect();
        let got = r.receive(request(spans).to_string().as_bytes(), Encoding::Json, None, 0).unwrap();
        match &got.events[0].kind {
            EventKind::RunStarted { task_id, task: t, .. } => {
                assert_eq!(t, task);
                task_id.clone()
            }
            other => panic!("{other:?}"),
        }
    };
    let a = task_id(&"1".repeat(32), "Weather in Paris?");
    assert_eq!(a, task_id(&"2".repeat(32), "Weather in Paris?"));
    assert_ne!(a, task_id(&"3".repeat(32), "Weather in Rome?"));
}
