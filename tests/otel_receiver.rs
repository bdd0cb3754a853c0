//! OpenTelemetry export against a real OTLP receiver (Arize Phoenix, from
//! PyPI): a live session with `--otlp`, then `trace export` of its trace
//! with and without content, each read back through the receiver's own API
//! and compared span by span with what the span builder makes of the trace.
//!
//! Needs SWITCHYARD_OTEL_RECEIVER (the receiver's base URL), as printed by
//! `scripts/otel-receiver.sh env`; without it every test skips, saying so.
//!
//! The session's model is OpenAI-compatible (a scripted server on loopback),
//! so its API key, read from the environment variable the config names, is
//! really sent; no exported attribute may hold it.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchyard::engine::trace::read_trace;
use switchyard::otel::spans::spans;
use switchyard::otel::{AttrValue, Span};

const RECEIVER_VAR: &str = "SWITCHYARD_OTEL_RECEIVER";
const KEY_VAR: &str = "SWITCHYARD_OTEL_TEST_KEY";
const TASK: &str = "Calculate the arithmetic expression 17 * 23";
/// The receiver stores spans a moment after it accepted them.
const ARRIVAL: Duration = Duration::from_secs(60);

const CONTENT_KEYS: [&str; 6] = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "switchyard.plan.steps",
    "switchyard.plan.error",
];

fn receiver() -> Option<String> {
    match std::env::var(RECEIVER_VAR) {
        Ok(u) if !u.trim().is_empty() => Some(u.trim().trim_end_matches('/').to_string()),
        _ => {
            eprintln!("skipped: {RECEIVER_VAR} is not set (scripts/otel-receiver.sh start, then eval its env)");
            None
        }
    }
}

/// An OpenAI-compatible endpoint that calls the calculator, then answers;
/// it keeps every Authorization header it was sent.
struct FakeModel {
    url: String,
    auth: Arc<Mutex<Vec<String>>>,
}

fn fake_model() -> FakeModel {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let auth = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&auth);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap_or((&line, ""));
                if k.eq_ignore_ascii_case("content-length") {
                    len = v.trim().parse().unwrap_or(0);
                }
                if k.eq_ignore_ascii_case("authorization") {
                    seen.lock().unwrap().push(v.trim().to_string());
                }
            }
            let mut body = vec![0u8; len];
            let _ = reader.read_exact(&mut body);
            let content = if n % 2 == 0 {
                json!({"tool": "calculator", "arguments": {"expression": "17 * 23"}}).to_string()
            } else {
                json!({"tool": "finish", "answer": "391"}).to_string()
            };
            let reply = json!({
                "id": "chatcmpl-otel", "object": "chat.completion", "created": 1_700_000_000, "model": "fake",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 40 + n, "completion_tokens": 9},
            })
            .to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                reply.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(reply.as_bytes()));
        }
    });
    FakeModel { url, auth }
}

fn switchyard(args: &[&str], key: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(args)
        .env_remove("SWITCHYARD_DATA_DIR")
        .env(KEY_VAR, key)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {err}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every span of one trace the receiver holds, once `want` of them arrived.
fn received(rt: &tokio::runtime::Runtime, base: &str, trace_id: &str, want: usize) -> Vec<Value> {
    let client = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut q = vec![("trace_id", trace_id.to_string()), ("limit", "1000".to_string())];
            if let Some(c) = &cursor {
                q.push(("cursor", c.clone()));
            }
            let url = format!("{base}/v1/projects/default/spans");
            let page: Value = rt.block_on(async {
                let url = reqwest::Url::parse_with_params(&url, &q).unwrap();
                let r = client.get(url.clone()).send().await.unwrap_or_else(|e| panic!("{url}: {e}"));
                assert!(r.status().is_success(), "{url}: HTTP {}", r.status());
                r.json().await.unwrap()
            });
            all.extend(page["data"].as_array().cloned().unwrap_or_default());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        if all.len() >= want {
            return all;
        }
        assert!(
            started.elapsed() < ARRIVAL,
            "the receiver holds {} of {want} spans of trace {trace_id} after {ARRIVAL:?}",
            all.len()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The trace id of the session root whose seed is `seed`.
fn trace_of_seed(rt: &tokio::runtime::Runtime, base: &str, seed: u64) -> String {
    let client = reqwest::Client::new();
    let url = format!("{base}/v1/projects/default/spans");
    let started = Instant::now();
    loop {
        let q = [("name", "session".to_string()), ("attribute", format!("switchyard.seed:{seed}"))];
        let url = reqwest::Url::parse_with_params(&url, &q).unwrap();
        let page: Value = rt.block_on(async { client.get(url).send().await.unwrap().json().await.unwrap() });
        if let Some(id) = page["data"][0]["context"]["trace_id"].as_str() {
            return id.to_string();
        }
        assert!(started.elapsed() < ARRIVAL, "no session span with seed {seed} arrived: {page}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn as_json(v: &AttrValue) -> Value {
    match v {
        AttrValue::Str(s) => json!(s),
        AttrValue::Int(i) => json!(i),
        AttrValue::F64(f) => json!(f),
        AttrValue::Bool(b) => json!(b),
        AttrValue::Strs(v) => json!(v),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-9,
        _ => a == b,
    }
}

/// The received spans are the expected ones: the same names under the same
/// parents, with every expected attribute and value.
fn compare(expected: &[Span], got: &[Value]) {
    assert_eq!(got.len(), expected.len(), "span count");
    let names: HashMap<&str, &str> =
        got.iter().map(|s| (s["context"]["span_id"].as_str().unwrap(), s["name"].as_str().unwrap())).collect();
    let expected_names: HashMap<u64, &str> = expected.iter().map(|s| (s.id, s.name.as_str())).collect();
    let shape = |name: &str, parent: Option<&str>| format!("{name} <- {}", parent.unwrap_or("-"));
    let mut want: Vec<String> = expected.iter().map(|s| shape(&s.name, s.parent.map(|p| expected_names[&p]))).collect();
    let mut have: Vec<String> = got
        .iter()
        .map(|s| {
            shape(s["name"].as_str().unwrap(), s["parent_id"].as_str().map(|p| names.get(p).copied().unwrap_or("?")))
        })
        .collect();
    want.sort();
    have.sort();
    assert_eq!(have, want, "names and parentage");
    for e in expected {
        let candidates: Vec<&Value> = got.iter().filter(|g| g["name"] == e.name.as_str()).collect();
        let found = candidates
            .iter()
            .find(|g| e.attrs.iter().all(|(k, v)| g["attributes"].get(k).is_some_and(|have| same(have, &as_json(v)))));
        assert!(found.is_some(), "no received span matches {} {:?}; received: {candidates:#?}", e.name, e.attrs);
    }
}

fn attr_text(spans: &[Value]) -> String {
    spans.iter().map(|s| format!("{} {} {}", s["name"], s["status_message"], s["attributes"])).collect()
}

#[test]
fn spans_reach_a_real_receiver_live_and_from_a_trace() {
    let Some(base) = receiver() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let health = rt.block_on(async { reqwest::get(format!("{base}/healthz")).await });
    assert!(health.is_ok_and(|r| r.status().is_success()), "{RECEIVER_VAR}={base} does not answer");

    let d = tempfile::tempdir().unwrap();
    let model = fake_model();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let key = format!("sk-otel-{nanos:x}");
    let seed = (nanos % 1_000_000_007) as u64;
    let config = d.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[models.fake]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"fake-model\"\napi_key_env = \"{KEY_VAR}\"\n\
             native_tools = false\njson_schema = false\nmax_retries = 0\n\
             price = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}\n\n[roles]\nactor = \"fake\"\n",
            model.url
        ),
    )
    .unwrap();
    let trace = d.path().join("run.jsonl");
    let p = |x: &Path| x.to_str().unwrap().to_string();
    let seed_s = seed.to_string();
    let (config_s, data_s, trace_s) = (p(&config), p(d.path()), p(&trace));
    switchyard(
        &[
            "--config",
            &config_s,
            "--data-dir",
            &data_s,
            "run",
            "--strategy",
            "react",
            "--task",
            TASK,
            "--seed",
            &seed_s,
            "--no-save",
            "--trace",
            &trace_s,
            "--otlp",
            &base,
        ],
        &key,
    );
    assert!(
        model.auth.lock().unwrap().iter().any(|a| a == &format!("Bearer {key}")),
        "the model was called with the key"
    );

    let events = read_trace(&trace).unwrap();
    let plain = spans(&events, false);
    assert!(plain.iter().any(|s| s.name == "execute_tool calculator"), "the run called the calculator: {plain:#?}");
    assert!(plain.iter().any(|s| s.name == "chat fake"));

    // Live: the session's spans, found by the seed, then the whole trace.
    let live_id = trace_of_seed(&rt, &base, seed);
    let live = received(&rt, &base, &live_id, plain.len());
    compare(&plain, &live);
    let chat = live.iter().find(|s| s["name"] == "chat fake").unwrap();
    assert_eq!(chat["attributes"]["gen_ai.provider.name"], "openai");
    assert_eq!(chat["attributes"]["gen_ai.request.model"], "fake");
    assert_eq!(chat["attributes"]["gen_ai.operation.name"], "chat");
    assert!(chat["attributes"]["gen_ai.usage.input_tokens"].as_i64().unwrap() >= 40);
    let tool = live.iter().find(|s| s["name"] == "execute_tool calculator").unwrap();
    assert_eq!(tool["attributes"]["gen_ai.tool.name"], "calculator");
    assert!(tool["attributes"]["gen_ai.tool.call.id"].as_str().is_some_and(|id| !id.is_empty()));

    // After the fact, from the trace file: a trace of its own.
    let out = switchyard(&["trace", "export", &trace_s, "--otlp", &base], &key);
    let exported_id = out.split("(trace id ").nth(1).and_then(|r| r.strip_suffix(")\n")).unwrap().to_string();
    assert_ne!(exported_id, live_id);
    let exported = received(&rt, &base, &exported_id, plain.len());
    compare(&plain, &exported);

    // Content only when asked for.
    let out = switchyard(&["trace", "export", &trace_s, "--otlp", &base, "--content"], &key);
    let content_id = out.split("(trace id ").nth(1).and_then(|r| r.strip_suffix(")\n")).unwrap().to_string();
    let with = spans(&events, true);
    let with_content = received(&rt, &base, &content_id, with.len());
    compare(&with, &with_content);
    let tool = with_content.iter().find(|s| s["name"] == "execute_tool calculator").unwrap();
    assert_eq!(tool["attributes"]["gen_ai.tool.call.arguments"], json!({"expression": "17 * 23"}).to_string());
    let chat = with_content.iter().find(|s| s["name"] == "chat fake").unwrap();
    assert!(chat["attributes"]["gen_ai.input.messages"].as_str().is_some_and(|m| m.contains(TASK)));

    for (what, got) in [("live", &live), ("exported", &exported)] {
        for s in got.iter() {
            for k in CONTENT_KEYS {
                assert!(s["attributes"].get(k).is_none(), "{what}: {} carries {k} without opt-in", s["name"]);
            }
        }
        assert!(!attr_text(got).contains(TASK), "{what}: the task text was exported without opt-in");
    }
    for (what, got) in [("live", &live), ("exported", &exported), ("with content", &with_content)] {
        assert!(!attr_text(got).contains(&key), "{what}: the API key was exported");
    }
}
