//! OpenTelemetry spans from event streams: the golden traces and a headless
//! run's trace folded into GenAI spans (names, parentage, times, attributes,
//! content only on opt-in), and `trace export`'s errors. The real receiver
//! is in tests/otel_receiver.rs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use switchyard::engine::event::{Event, EventKind, ToolOutcome};
use switchyard::engine::trace::read_trace;
use switchyard::otel::spans::spans;
use switchyard::otel::{AttrValue, OtelConfig, OtelSettings, Span, Status};

use super::cli_helpers::{fails, ok, run, s};

/// The attributes that carry what users and models wrote.
const CONTENT_KEYS: [&str; 6] = [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "switchyard.plan.steps",
    "switchyard.plan.error",
];

const GOLDEN: [&str; 6] = ["react-btp", "rewoo-btp", "rewoo-weak-planner", "toolnet-fault", "atc-fault", "rewoo-lanes"];

fn golden(name: &str) -> Vec<Event> {
    read_trace(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.jsonl"))).unwrap()
}

fn str_attr<'a>(s: &'a Span, key: &str) -> &'a str {
    s.attr(key).and_then(AttrValue::as_str).unwrap_or_else(|| panic!("span {} has no string {key}", s.name))
}

fn int_attr(s: &Span, key: &str) -> i64 {
    s.attr(key).and_then(AttrValue::as_i64).unwrap_or_else(|| panic!("span {} has no integer {key}", s.name))
}

/// The tree's invariants every stream must keep: one root, the session;
/// runs under it; everything else under a run (or a plan inside one); ids
/// unique; every span within its parent's time.
fn check_tree(all: &[Span]) -> HashMap<u64, &Span> {
    let by_id: HashMap<u64, &Span> = all.iter().map(|s| (s.id, s)).collect();
    assert_eq!(by_id.len(), all.len(), "span ids are unique");
    let roots: Vec<&Span> = all.iter().filter(|s| s.parent.is_none()).collect();
    assert_eq!(roots.len(), 1, "one root: {roots:?}");
    assert_eq!(roots[0].name, "session");
    for s in all {
        assert!(s.start_ms <= s.end_ms, "{} ends before it starts", s.name);
        let Some(p) = s.parent else { continue };
        let parent = by_id[&p];
        assert!(parent.start_ms <= s.start_ms && s.end_ms <= parent.end_ms, "{} lies outside {}", s.name, parent.name);
        let expected: &[&str] = match s.name.as_str() {
            "invoke_agent" => &["session"],
            "plan" => &["invoke_agent"],
            n if n.starts_with("chat ") => &["invoke_agent", "plan"],
            n if n.starts_with("execute_tool ") => &["invoke_agent"],
            other => panic!("unexpected span {other}"),
        };
        assert!(expected.contains(&parent.name.as_str()), "{} under {}", s.name, parent.name);
    }
    by_id
}

/// The run span a call's span hangs under (through a plan).
fn run_of<'a>(by_id: &HashMap<u64, &'a Span>, s: &Span) -> &'a Span {
    let mut at = by_id[&s.parent.unwrap()];
    while at.name != "invoke_agent" {
        at = by_id[&at.parent.unwrap()];
    }
    at
}

#[test]
fn a_react_btp_trace_becomes_genai_spans() {
    let events = golden("react-btp");
    let all = spans(&events, false);
    let by_id = check_tree(&all);
    let session = all.iter().find(|s| s.parent.is_none()).unwrap();
    assert_eq!(str_attr(session, "switchyard.strategy"), "react");
    assert_eq!(session.start_ms, events[0].t);
    assert_eq!(session.end_ms, events.last().unwrap().t);

    let count = |pred: &dyn Fn(&EventKind) -> bool| events.iter().filter(|e| pred(&e.kind)).count();
    let named = |prefix: &str| all.iter().filter(|s| s.name.starts_with(prefix)).count();
    assert_eq!(named("invoke_agent"), count(&|k| matches!(k, EventKind::RunStarted { .. })));
    assert_eq!(named("chat "), count(&|k| matches!(k, EventKind::ModelCall { .. })));
    assert_eq!(named("execute_tool "), count(&|k| matches!(k, EventKind::ToolCall { .. })));
    assert_eq!(named("plan"), count(&|k| matches!(k, EventKind::PlanMade { .. })));

    for run in all.iter().filter(|s| s.name == "invoke_agent") {
        assert_eq!(str_attr(run, "gen_ai.operation.name"), "invoke_agent");
        assert_eq!(str_attr(run, "gen_ai.agent.name"), "react");
        assert!(run.attr("switchyard.outcome").is_some());
    }
    let mut starts: HashMap<u64, &Event> = HashMap::new();
    for e in &events {
        match &e.kind {
            EventKind::ModelCall { call, .. } | EventKind::ToolCall { call, .. } => {
                starts.insert(*call, e);
            }
            EventKind::ModelReply { call, model, usage, tool_calls, .. } => {
                let span =
                    all.iter().find(|s| s.attr("switchyard.call") == Some(&AttrValue::Int(*call as i64))).unwrap();
                assert_eq!(span.name, format!("chat {model}"));
                assert_eq!((span.start_ms, span.end_ms), (starts[call].t, e.t));
                assert_eq!(str_attr(span, "gen_ai.operation.name"), "chat");
                assert_eq!(str_attr(span, "gen_ai.provider.name"), "switchyard.sim");
                assert_eq!(str_attr(span, "gen_ai.request.model"), model);
                assert_eq!(int_attr(span, "gen_ai.usage.input_tokens"), usage.prompt_tokens as i64);
                assert_eq!(int_attr(span, "gen_ai.usage.output_tokens"), usage.completion_tokens as i64);
                let reason = if tool_calls.is_empty() { "stop" } else { "tool_call" };
                assert_eq!(span.attr("gen_ai.response.finish_reasons"), Some(&AttrValue::Strs(vec![reason.into()])));
                assert_eq!(int_attr(run_of(&by_id, span), "switchyard.run"), i64::from(e.run));
            }
            EventKind::ToolResult { call, tool, outcome, .. } => {
                let id = call.to_string();
                let span = all.iter().find(|s| s.attr("gen_ai.tool.call.id").and_then(AttrValue::as_str) == Some(&id));
                let span = span.unwrap_or_else(|| panic!("no span for tool call {call}"));
                assert_eq!(span.name, format!("execute_tool {tool}"));
                assert_eq!(str_attr(span, "gen_ai.tool.name"), tool);
                assert_eq!(str_attr(span, "gen_ai.operation.name"), "execute_tool");
                assert_eq!((span.start_ms, span.end_ms), (starts[call].t, e.t));
                assert_eq!(matches!(outcome, ToolOutcome::Err { .. }), matches!(span.status, Status::Error(_)));
                assert_eq!(int_attr(run_of(&by_id, span), "switchyard.run"), i64::from(e.run));
            }
            EventKind::PlanMade { planned_calls, .. } => {
                let plan = all.iter().find(|s| s.name == "plan" && s.end_ms == e.t).unwrap();
                assert_eq!(str_attr(plan, "switchyard.plan.kind"), "btp");
                assert_eq!(int_attr(plan, "switchyard.plan.planned_calls"), i64::from(*planned_calls));
            }
            _ => {}
        }
    }
}

#[test]
fn rewoo_plans_are_plan_spans_around_the_planners_chat() {
    let events = golden("rewoo-btp");
    let all = spans(&events, false);
    let by_id = check_tree(&all);
    let plans: Vec<&Span> =
        all.iter().filter(|s| s.name == "plan" && str_attr(s, "switchyard.plan.kind") == "rewoo").collect();
    let written = events.iter().filter(|e| matches!(e.kind, EventKind::PlanWritten { .. })).count();
    let rejected = events.iter().filter(|e| matches!(e.kind, EventKind::PlanRejected { .. })).count();
    assert!(rejected > 0, "the golden trace has a rejected plan");
    assert_eq!(plans.len(), written + rejected);
    assert_eq!(plans.iter().filter(|p| matches!(p.status, Status::Error(_))).count(), rejected);
    for chat in all.iter().filter(|s| s.name.starts_with("chat ")) {
        let under_plan = by_id[&chat.parent.unwrap()].name == "plan";
        assert_eq!(under_plan, str_attr(chat, "switchyard.role") == "planner", "{chat:?}");
    }
    for p in &plans {
        assert!(all.iter().any(|c| c.parent == Some(p.id)), "each rewoo plan holds its planner call");
    }
    // BTP's plans too, with a budget.
    assert!(all.iter().any(|s| s.name == "plan" && str_attr(s, "switchyard.plan.kind") == "btp"));
}

/// Strings users and models wrote, long enough not to match by chance.
fn written_texts(events: &[Event]) -> Vec<String> {
    let mut out = Vec::new();
    for e in events {
        match &e.kind {
            EventKind::RunStarted { task, .. } => out.push(task.clone()),
            EventKind::ModelCall { messages, .. } => out.extend(messages.iter().map(|m| m.content.clone())),
            EventKind::ModelReply { text, .. } => out.push(text.clone()),
            EventKind::ToolCall { args, .. } => out.push(args.to_string()),
            EventKind::ToolResult { outcome: ToolOutcome::Ok { value }, .. } => out.push(value.to_string()),
            _ => {}
        }
    }
    out.retain(|t| t.len() >= 12);
    out
}

#[test]
fn content_is_exported_only_when_asked_for() {
    for name in GOLDEN {
        let events = golden(name);
        let texts = written_texts(&events);
        assert!(!texts.is_empty(), "{name}: the trace has content to hide");
        for span in spans(&events, false) {
            for (key, value) in &span.attrs {
                assert!(!CONTENT_KEYS.contains(&key.as_str()), "{name}: {} carries {key} without opt-in", span.name);
                let shown = format!("{value:?}");
                for t in &texts {
                    assert!(!shown.contains(t.as_str()), "{name}: {}.{key} holds content: {t}", span.name);
                }
            }
        }
        // Opted in: the messages, arguments and results are there, as written.
        let with = spans(&events, true);
        check_tree(&with);
        for e in &events {
            match &e.kind {
                EventKind::ModelCall { call, messages, .. } => {
                    let span =
                        with.iter().find(|s| s.attr("switchyard.call") == Some(&AttrValue::Int(*call as i64))).unwrap();
                    let sent: Value = serde_json::from_str(str_attr(span, "gen_ai.input.messages")).unwrap();
                    assert_eq!(sent.as_array().unwrap().len(), messages.len());
                    assert_eq!(sent[0]["parts"][0]["content"], messages[0].content);
                }
                EventKind::ToolCall { call, args, .. } => {
                    let id = call.to_string();
                    let span = with
                        .iter()
                        .find(|s| s.attr("gen_ai.tool.call.id").and_then(AttrValue::as_str) == Some(&id))
                        .unwrap();
                    assert_eq!(str_attr(span, "gen_ai.tool.call.arguments"), args.to_string());
                }
                EventKind::ToolResult { call, outcome: ToolOutcome::Ok { value }, .. } => {
                    let id = call.to_string();
                    let span = with
                        .iter()
                        .find(|s| s.attr("gen_ai.tool.call.id").and_then(AttrValue::as_str) == Some(&id))
                        .unwrap();
                    assert_eq!(str_attr(span, "gen_ai.tool.call.result"), value.to_string());
                }
                _ => {}
            }
        }
    }
}

#[test]
fn a_trace_cut_short_still_gives_closed_spans() {
    let events = golden("rewoo-lanes");
    // Cut inside a tool call: after a ToolCall, before its result.
    let cut = events.iter().position(|e| matches!(e.kind, EventKind::ToolCall { .. })).unwrap() + 1;
    let all = spans(&events[..cut], false);
    check_tree(&all);
    let open: Vec<&str> = all
        .iter()
        .filter(|s| s.attr("switchyard.unfinished") == Some(&AttrValue::Bool(true)))
        .map(|s| s.name.as_str())
        .collect();
    assert!(open.contains(&"session") && open.contains(&"invoke_agent"), "{open:?}");
    assert!(open.iter().any(|n| n.starts_with("execute_tool ")), "{open:?}");
    for s in &all {
        assert!(s.end_ms <= events[cut - 1].t);
    }
}

#[test]
fn endpoints_are_checked_and_completed() {
    let url = |u: &str| OtelSettings::new(u, false).map(|s| s.traces_url);
    assert_eq!(url("http://127.0.0.1:6006").unwrap(), "http://127.0.0.1:6006/v1/traces");
    assert_eq!(url("http://127.0.0.1:6006/").unwrap(), "http://127.0.0.1:6006/v1/traces");
    assert_eq!(url("http://h:4318/v1/traces").unwrap(), "http://h:4318/v1/traces");
    assert_eq!(url("https://h/otel").unwrap(), "https://h/otel/v1/traces");
    for bad in ["ftp://h/", "127.0.0.1:6006", "", "http://"] {
        assert!(url(bad).is_err(), "{bad} should be refused");
    }
    // The command line's endpoint over the config's; content if either asks.
    let config = OtelConfig { endpoint: Some("http://a".into()), content: true };
    let cli = OtelConfig { endpoint: Some("http://b".into()), content: false };
    assert_eq!(cli.over(&config), OtelConfig { endpoint: Some("http://b".into()), content: true });
    assert_eq!(OtelConfig::default().over(&OtelConfig::default()).settings().unwrap(), None);
}

#[test]
fn the_config_names_a_bad_otel_section() {
    let d = tempfile::tempdir().unwrap();
    let write = |text: &str| {
        let p = d.path().join("config.toml");
        std::fs::write(&p, text).unwrap();
        p
    };
    let good =
        switchyard::config::Config::load(&write("[otel]\nendpoint = \"http://127.0.0.1:6006\"\ncontent = true\n"));
    assert_eq!(good.unwrap().otel, OtelConfig { endpoint: Some("http://127.0.0.1:6006".into()), content: true });
    let err = switchyard::config::Config::load(&write("[otel]\nendpoint = \"udp://x\"\n")).unwrap_err().to_string();
    assert!(err.contains("otel.endpoint"), "{err}");
    let err = switchyard::config::Config::load(&write("[otel]\nurl = \"http://x\"\n")).unwrap_err().to_string();
    assert!(err.contains("url"), "{err}");
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn trace_path(dir: &Path) -> PathBuf {
    dir.join("run.jsonl")
}

#[test]
fn a_headless_run_exports_despite_a_receiver_that_is_down() {
    let d = tempfile::tempdir().unwrap();
    let trace = trace_path(d.path());
    let down = format!("http://127.0.0.1:{}", closed_port());
    // The receiver is down: the session runs to its end all the same.
    let out = ok(&[
        "--data-dir",
        s(d.path()),
        "run",
        "--strategy",
        "rewoo",
        "--count",
        "2",
        "--no-save",
        "--trace",
        s(&trace),
        "--otlp",
        &down,
        "--otel-content",
    ]);
    assert!(out.contains("trace:"), "{out}");
    let events = read_trace(&trace).unwrap();
    assert!(matches!(events.last().unwrap().kind, EventKind::SessionFinished { .. }));
    let all = spans(&events, false);
    check_tree(&all);
    assert_eq!(all.iter().filter(|s| s.name == "invoke_agent").count(), 2);
    assert!(all.iter().any(|s| s.name == "plan"), "rewoo's plans");
    assert!(all.iter().any(|s| s.name.starts_with("execute_tool ")));
    // The failure was logged once, in the data directory's log.
    let log = std::fs::read_to_string(d.path().join("logs/switchyard.log")).unwrap_or_default();
    assert_eq!(log.matches("OpenTelemetry: could not export").count(), 1, "{log}");

    // After the fact, the same receiver being down is the command's error.
    let err = fails(&["trace", "export", s(&trace), "--otlp", &down]);
    assert!(err.contains("could not export") && err.contains(&down), "{err}");
}

#[test]
fn trace_export_names_what_is_wrong() {
    let d = tempfile::tempdir().unwrap();
    let down = format!("http://127.0.0.1:{}", closed_port());
    let missing = d.path().join("missing.jsonl");
    let err = fails(&["trace", "export", s(&missing), "--otlp", &down]);
    assert!(err.contains("missing.jsonl"), "{err}");

    let bad = d.path().join("bad.jsonl");
    let first =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/react.jsonl")).unwrap();
    let first = first.lines().next().unwrap();
    std::fs::write(&bad, format!("{first}\n{{\"v\": 2, \"nonsense\": true}}\n{first}\n")).unwrap();
    let err = fails(&["trace", "export", s(&bad), "--otlp", &down]);
    assert!(err.contains("bad.jsonl:2"), "{err}");

    let empty = d.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let err = fails(&["trace", "export", s(&empty), "--otlp", &down]);
    assert!(err.contains("empty.jsonl: not a trace: the file holds no event"), "{err}");

    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/react.jsonl");
    let err = fails(&["trace", "export", s(&golden), "--otlp", "ftp://127.0.0.1/"]);
    assert!(err.contains("ftp://127.0.0.1/"), "{err}");
    // And a bad endpoint stops a session before it starts.
    let out = run(&["--data-dir", s(d.path()), "run", "--count", "1", "--no-save", "--otlp", "not a url"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a url"));
}
