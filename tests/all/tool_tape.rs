//! Tool cassettes (`--record-tools`, `--replay-tools`) and the two stand-in
//! executors, `recorded` and `synthesized`: replays keyed by content,
//! unrecorded calls refused, damaged cassettes named by file and line, and
//! every stand-in answer marked as such.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard::config::Config;
use switchyard::engine::StrategyKind;
use switchyard::engine::event::EventKind;
use switchyard::engine::trace::read_trace;
use switchyard::session::{self, ExperienceSource, GraphSource, SessionOptions, SetupError, Tape};
use switchyard::tool::exec::Executor;
use switchyard::tool::manifest::load_file;
use switchyard::tool::synthesized::synthesize;
use switchyard::tool::tape::{TapeError, ToolTape};
use switchyard::tool::{CallSource, ExecutorSpec, ToolErrorKind, ToolSpec};

const TIMEOUT: Duration = Duration::from_secs(30);

fn session_opts(trace: &Path, tool_tape: Tape) -> SessionOptions {
    SessionOptions {
        strategy: Some(StrategyKind::React),
        count: Some(6),
        graph: GraphSource::Fresh,
        trace: Some(trace.to_path_buf()),
        logical_clock: true,
        experience: ExperienceSource::InMemory(Vec::new()),
        tool_tape,
        ..Default::default()
    }
}

fn run(config: &Config, opts: &SessionOptions) -> Result<(), SetupError> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async { session::run(session::prepare(config, opts)?).await.map(|_| ()) })
}

/// The trace as JSON, each ToolResult's `source` taken out and returned
/// apart with the result's error, if any.
fn trace_without_sources(path: &Path) -> (Vec<Value>, Vec<(Option<Value>, Value)>) {
    let mut sources = Vec::new();
    let events = read_trace(path)
        .unwrap()
        .into_iter()
        .map(|e| {
            let is_result = matches!(e.kind, EventKind::ToolResult { .. });
            let mut v = serde_json::to_value(&e).unwrap();
            if is_result {
                let source = v.as_object_mut().unwrap().remove("source");
                sources.push((source, v["error"].clone()));
            }
            v
        })
        .collect();
    (events, sources)
}

#[test]
fn a_replayed_session_matches_the_recorded_one_but_for_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config { data_dir: Some(dir.path().to_path_buf()), ..Config::default() };
    let cassette = dir.path().join("tools.jsonl");
    let (live, replayed) = (dir.path().join("live.jsonl"), dir.path().join("replayed.jsonl"));

    run(&cfg, &session_opts(&live, Tape::Record(cassette.clone()))).unwrap();
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(text.lines().count() > 0, "nothing was recorded");
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["tool"].is_string() && v["args"].is_object() && v["latency_ms"].is_u64(), "{line}");
        assert!(v.get("result").is_some() != v.get("error").is_some(), "a result or an error: {line}");
    }

    run(&cfg, &session_opts(&replayed, Tape::Replay(cassette))).unwrap();
    let (a, live_sources) = trace_without_sources(&live);
    let (b, replay_sources) = trace_without_sources(&replayed);
    assert_eq!(a, b, "the replay's trace differs beyond the marker");
    assert!(live_sources.iter().all(|(s, _)| s.is_none()), "a live call is not marked");
    assert!(replay_sources.iter().any(|(s, _)| s.is_some()));
    for (source, error) in &replay_sources {
        // Calls refused before reaching a tool (bad arguments, unknown
        // tools) were never the tape's to answer.
        let refused = error["kind"] == "bad_arguments"
            || error["message"].as_str().is_some_and(|m| m.starts_with("unknown tool"));
        assert_eq!(source.is_none(), refused, "{source:?} {error}");
        if !refused {
            assert_eq!(source, &Some(json!("recorded")));
        }
    }
}

fn write_cassette(dir: &Path, name: &str, lines: &[Value]) -> std::path::PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn tool(name: &str, executor: ExecutorSpec, response: Option<Value>) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} for tests"),
        category: None,
        cost: 1.0,
        parameters: json!({ "type": "object", "properties": {} }),
        response,
        executor,
        source: None,
    }
}

#[tokio::test]
async fn replay_is_keyed_by_canonical_arguments_in_recorded_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_cassette(
        dir.path(),
        "calls.jsonl",
        &[
            json!({"tool": "geo", "args": {"a": 1, "b": {"x": 1, "y": 2}}, "result": {"n": 1}, "latency_ms": 3}),
            json!({"tool": "geo", "args": {"b": {"y": 2, "x": 1}, "a": 1}, "result": {"n": 2}, "latency_ms": 3}),
            json!({"tool": "geo", "args": {"a": 2}, "error": {"kind": "failed", "message": "boom"}, "latency_ms": 1}),
        ],
    );
    let tape = ToolTape::replay(&path, false).unwrap();
    let args = json!({"b": {"y": 2, "x": 1}, "a": 1});
    // In recorded order, then the last answer again.
    assert_eq!(tape.answer("geo", &args).await.unwrap(), json!({"n": 1}));
    assert_eq!(tape.answer("geo", &json!({"a": 1, "b": {"x": 1, "y": 2}})).await.unwrap(), json!({"n": 2}));
    assert_eq!(tape.answer("geo", &args).await.unwrap(), json!({"n": 2}));
    let err = tape.answer("geo", &json!({"a": 2})).await.unwrap_err();
    assert_eq!((err.kind, err.message.as_str()), (ToolErrorKind::Failed, "boom"));

    let missing = tape.answer("geo", &json!({"z": 1, "a": 3})).await.unwrap_err();
    assert!(missing.message.starts_with(r#"not recorded: tool geo with arguments {"a":3,"z":1}"#), "{missing:?}");
    let other = tape.answer("calc", &json!({"a": 1, "b": {"x": 1, "y": 2}})).await.unwrap_err();
    assert!(other.message.starts_with("not recorded: tool calc"), "{other:?}");
}

#[tokio::test]
async fn recording_appends_one_line_a_call_and_leaves_faults_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let exec = Executor::with_tape(ToolTape::record(&path).unwrap());
    let calc = tool("calc", ExecutorSpec::Builtin { function: "calculator".into() }, None);
    let args = json!({"q": "x", "expression": "2 * 21", "a": [1, {"d": 1, "c": 2}]});
    let first = exec.call(&calc, &args, None, 7, TIMEOUT).await.unwrap();
    let faulted = exec.call(&calc, &args, Some(switchyard::tool::fault::FaultMode::Error), 7, TIMEOUT).await;
    assert!(faulted.is_err());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(line["result"], first);
    assert_eq!(
        serde_json::to_string(&line["args"]).unwrap(),
        r#"{"a":[1,{"c":2,"d":1}],"expression":"2 * 21","q":"x"}"#,
        "arguments are stored with sorted keys"
    );

    let replay = Executor::with_tape(ToolTape::replay(&path, false).unwrap());
    let again = replay.call(&calc, &args, None, 99, TIMEOUT).await;
    assert_eq!(again, Ok(first));
    assert_eq!(replay.source(&calc, None, &again), Some(CallSource::Recorded));
    assert_eq!(exec.source(&calc, None, &again), None, "a recording marks nothing: the tool really ran");
    let injected = switchyard::tool::fault::FaultMode::NothingFound;
    assert_eq!(replay.source(&calc, Some(injected), &again), None, "a fault is the user's, not the tape's");
}

/// A recorder killed mid-line, then a new recording onto the same
/// cassette (a restarted session): the fragment is cut off, not glued to
/// the next line, so the cassette still loads with every whole call.
#[tokio::test]
async fn recording_after_a_kill_cuts_the_unfinished_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let whole = r#"{"tool":"calc","args":{"expression":"1 + 1"},"result":2,"latency_ms":0}"#;
    std::fs::write(&path, format!("{whole}\n{{\"tool\":\"calc\",\"args\":{{\"expr")).unwrap();
    let exec = Executor::with_tape(ToolTape::record(&path).unwrap());
    let calc = tool("calc", ExecutorSpec::Builtin { function: "calculator".into() }, None);
    let args = json!({"expression": "2 * 21"});
    let answer = exec.call(&calc, &args, None, 7, TIMEOUT).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "the fragment is gone: {text}");
    let replay = Executor::with_tape(ToolTape::replay(&path, false).unwrap());
    assert_eq!(replay.call(&calc, &args, None, 1, TIMEOUT).await, Ok(answer));
    assert_eq!(replay.call(&calc, &json!({"expression": "1 + 1"}), None, 1, TIMEOUT).await, Ok(json!(2)));

    // A whole last record without its newline (written by hand) is kept and ended.
    let path = dir.path().join("hand.jsonl");
    std::fs::write(&path, whole).unwrap();
    let exec = Executor::with_tape(ToolTape::record(&path).unwrap());
    exec.call(&calc, &args, None, 7, TIMEOUT).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.starts_with(&format!("{whole}\n")), "{text}");
    ToolTape::replay(&path, false).unwrap();
}

#[test]
fn a_damaged_cassette_names_its_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, "{\"tool\":\"a\",\"args\":{},\"result\":1,\"latency_ms\":0}\nnot json\n").unwrap();
    let err = ToolTape::replay(&path, false).unwrap_err();
    assert!(matches!(err, TapeError::Parse { line: 2, .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("{}:2:", path.display())), "{err}");

    let cfg = Config { data_dir: Some(dir.path().to_path_buf()), ..Config::default() };
    let opts = session_opts(&dir.path().join("t.jsonl"), Tape::Replay(path.clone()));
    let err = session::prepare(&cfg, &opts).err().expect("a damaged cassette is refused");
    assert!(err.to_string().contains("bad.jsonl:2"), "{err}");
}

const RECORDED_MANIFEST: &str = r#"
[[tool]]
name = "weather"
description = "Today's weather in a city (an API we cannot reach here)"
[tool.parameters]
type = "object"
required = ["city"]
[tool.parameters.properties.city]
type = "string"
[tool.executor]
kind = "recorded"
cassette = "calls.jsonl"
"#;

#[tokio::test]
async fn a_recorded_executor_answers_from_its_cassette_beside_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write_cassette(
        dir.path(),
        "calls.jsonl",
        &[json!({"tool": "weather", "args": {"city": "Paris"}, "result": {"sky": "rain"}, "latency_ms": 120})],
    );
    let manifest = dir.path().join("weather.toml");
    std::fs::write(&manifest, RECORDED_MANIFEST).unwrap();
    let tools = load_file(&manifest).unwrap();
    let ExecutorSpec::Recorded { cassette } = &tools[0].executor else { panic!("{:?}", tools[0].executor) };
    assert!(cassette.is_absolute() && cassette.ends_with("calls.jsonl"), "{cassette:?}");

    let exec = Executor::new();
    let ok = exec.call(&tools[0], &json!({"city": "Paris"}), None, 1, TIMEOUT).await;
    assert_eq!(ok, Ok(json!({"sky": "rain"})));
    assert_eq!(exec.source(&tools[0], None, &ok), Some(CallSource::Recorded));
    let missing = exec.call(&tools[0], &json!({"city": "Oslo"}), None, 1, TIMEOUT).await.unwrap_err();
    assert!(missing.message.starts_with(r#"not recorded: tool weather with arguments {"city":"Oslo"}"#), "{missing:?}");

    // A damaged cassette stops the manifest from loading, naming both.
    std::fs::write(dir.path().join("calls.jsonl"), "{oops\n").unwrap();
    let err = load_file(&manifest).unwrap_err().to_string();
    assert!(err.contains("weather.toml") && err.contains("calls.jsonl:1"), "{err}");
    std::fs::remove_file(dir.path().join("calls.jsonl")).unwrap();
    let err = load_file(&manifest).unwrap_err().to_string();
    assert!(err.contains("executor.cassette"), "{err}");
}

const SCHEMA: &str = r#"{
    "type": "object",
    "required": ["city", "temp", "tags"],
    "properties": {
        "city": {"type": "string"},
        "sky": {"enum": ["sun", "rain", "snow"]},
        "temp": {"type": "number", "minimum": -30, "maximum": 45},
        "humidity": {"type": "integer", "minimum": 0, "maximum": 100},
        "windy": {"type": "boolean"},
        "day": {"type": "string", "format": "date"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "station": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string", "example": "Orly"}}}
    }
}"#;

#[test]
fn synthesized_values_fit_the_schema_and_follow_the_seed() {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut distinct = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let v = synthesize(&schema, seed);
        assert_eq!(v, synthesize(&schema, seed), "the same seed gives the same value");
        distinct.insert(v.to_string());
        for key in ["city", "temp", "tags", "sky", "humidity", "windy", "day", "station"] {
            assert!(v.get(key).is_some(), "{key} missing from {v}");
        }
        assert!(v["city"].is_string() && v["windy"].is_boolean());
        assert!(["sun", "rain", "snow"].contains(&v["sky"].as_str().unwrap()), "{v}");
        let t = v["temp"].as_f64().unwrap();
        assert!((-30.0..=45.0).contains(&t), "{t}");
        let h = v["humidity"].as_u64().unwrap();
        assert!(h <= 100, "{h}");
        let day = v["day"].as_str().unwrap();
        assert!(day.len() == 10 && day.starts_with("2024-"), "{day}");
        let tags = v["tags"].as_array().unwrap();
        assert!((1..=3).contains(&tags.len()) && tags.iter().all(|t| t == "a" || t == "b"), "{tags:?}");
        assert!(v["station"]["id"].is_i64() && v["station"]["name"] == "Orly", "{v}");
    }
    assert!(distinct.len() > 10, "seeds give different values: {} distinct of 20", distinct.len());
}

const SYNTH_MANIFEST: &str = r#"
[[tool]]
name = "quote"
description = "A stock quote"
[tool.executor]
kind = "synthesized"
"#;

#[tokio::test]
async fn a_synthesized_tool_needs_a_response_schema_and_is_marked() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("quotes.toml");
    std::fs::write(&manifest, SYNTH_MANIFEST).unwrap();
    let err = load_file(&manifest).unwrap_err().to_string();
    assert!(err.contains("quotes.toml") && err.contains("quote") && err.contains("response"), "{err}");

    let with_schema = format!(
        "{SYNTH_MANIFEST}[tool.response]\ntype = \"object\"\n[tool.response.properties.price]\ntype = \"number\"\nminimum = 1\nmaximum = 2\n"
    );
    std::fs::write(&manifest, with_schema).unwrap();
    let tools = load_file(&manifest).unwrap();
    let exec = Executor::new();
    let a = exec.call(&tools[0], &json!({}), None, 5, TIMEOUT).await;
    assert_eq!(a, exec.call(&tools[0], &json!({}), None, 5, TIMEOUT).await);
    let price = a.as_ref().unwrap()["price"].as_f64().unwrap();
    assert!((1.0..=2.0).contains(&price), "{price}");
    assert_eq!(exec.source(&tools[0], None, &a), Some(CallSource::Synthesized));
}

#[tokio::test]
async fn latency_is_replayed_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let line = json!({"tool": "slow", "args": {}, "result": 1, "latency_ms": 300});
    let path = write_cassette(dir.path(), "slow.jsonl", &[line]);
    let t0 = std::time::Instant::now();
    ToolTape::replay(&path, false).unwrap().answer("slow", &json!({})).await.unwrap();
    assert!(t0.elapsed() < Duration::from_millis(300), "no wait by default: {:?}", t0.elapsed());
    let t0 = std::time::Instant::now();
    ToolTape::replay(&path, true).unwrap().answer("slow", &json!({})).await.unwrap();
    assert!(t0.elapsed() >= Duration::from_millis(300), "the recorded latency: {:?}", t0.elapsed());
}
