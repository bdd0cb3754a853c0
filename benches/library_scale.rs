//! Memory and trace size of a mixed library of 2,000 and 16,000 tools (the
//! generator in `support/library.rs`). Not a criterion bench: it prints
//! figures. Each measurement runs in a child process of its own (this
//! binary again, told what to do by `SWITCHYARD_SCALE_CHILD`), so VmHWM is
//! that step's peak alone; `baseline` is the child that does nothing.
//!
//! - `load`: `session::load_library`.
//! - `prepare`: `session::prepare` of a ToolNet session (library, graph,
//!   retrieval index, models).
//! - `session`: 5 sample tasks with the simulated model, traced; the trace's
//!   first event (SessionStarted) and the bytes per task after it.
//!
//! Also the load's parts in this process (best of 5): the TOML manifests,
//! the function file, the OpenAPI document, and the whole library.
//!
//! Run: `cargo bench --bench library_scale`

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/library.rs"]
mod library;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;
use switchyard::config::Config;
use switchyard::session::{self, ExperienceSource, GraphSource, SessionOptions};
use switchyard::tool::manifest;
use switchyard::tool::sources;
use tempfile::TempDir;

const CHILD: &str = "SWITCHYARD_SCALE_CHILD";
const TASKS: usize = 5;

/// VmRSS and VmHWM from /proc/self/status, in KiB.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn opts(trace: Option<PathBuf>) -> SessionOptions {
    SessionOptions {
        graph: GraphSource::Fresh,
        logical_clock: true,
        experience: ExperienceSource::InMemory(Vec::new()),
        count: Some(TASKS),
        trace,
        ..SessionOptions::default()
    }
}

fn child(mode: &str, config_path: &Path) {
    let config = Config::load(config_path).unwrap();
    let (rss0, _) = memory();
    let started = Instant::now();
    let mut trace = None;
    match mode {
        "baseline" => {}
        "load" => {
            let lib = session::load_library(&config).unwrap();
            std::hint::black_box(&lib);
        }
        "prepare" => {
            let prepared = session::prepare(&config, &opts(None)).unwrap();
            std::hint::black_box(&prepared.engine);
        }
        "session" => {
            let path = config_path.with_file_name("trace.jsonl");
            let prepared = session::prepare(&config, &opts(Some(path.clone()))).unwrap();
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            let outcome = rt.block_on(session::run(prepared)).unwrap();
            std::hint::black_box(&outcome);
            trace = Some(path);
        }
        other => panic!("unknown child mode '{other}'"),
    }
    let took = started.elapsed();
    let (rss, hwm) = memory();
    println!(
        "  {mode:<8} {:>8.1} ms   VmRSS {:>7.1} MiB (+{:.1} after the config)   VmHWM {:>7.1} MiB",
        took.as_secs_f64() * 1e3,
        mib(rss),
        mib(rss.saturating_sub(rss0)),
        mib(hwm)
    );
    if let Some(path) = trace {
        trace_sizes(&path);
    }
}

/// The trace's first event and the bytes per task after it, by event type.
fn trace_sizes(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let first = lines.next().unwrap();
    let event: Value = serde_json::from_str(first).unwrap();
    assert_eq!(event["type"], "SessionStarted");
    let part = |k: &str| event.get(k).map_or(0, |v| serde_json::to_string(v).unwrap().len());
    println!(
        "  trace: SessionStarted {} bytes ({} tools: tools {} bytes, graph {} bytes, task_list {} bytes)",
        first.len() + 1,
        event["tools"].as_array().map_or(0, Vec::len),
        part("tools"),
        part("graph"),
        part("task_list"),
    );
    let mut by_type: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut rest = 0;
    for line in lines {
        let e: Value = serde_json::from_str(line).unwrap();
        if e["type"] == "GraphUpdated" {
            weight_rows(&e["update"]);
        }
        let entry = by_type.entry(e["type"].as_str().unwrap_or("?").to_string()).or_default();
        entry.0 += 1;
        entry.1 += line.len() + 1;
        rest += line.len() + 1;
    }
    println!(
        "  trace: after it {rest} bytes for {TASKS} tasks = {:.0} bytes a task (whole file {} bytes)",
        rest as f64 / TASKS as f64,
        text.len()
    );
    let mut types: Vec<_> = by_type.into_iter().collect();
    types.sort_by_key(|t| std::cmp::Reverse(t.1.1));
    for (ty, (count, bytes)) in types.iter().take(6) {
        println!("    {ty:<16} {count:>4} events {bytes:>9} bytes ({:.0} a task)", *bytes as f64 / TASKS as f64);
    }
}

/// A GraphUpdated event's listed weight changes by source row: the biggest
/// row's share, and the rows written as one shared weight.
fn weight_rows(update: &Value) {
    let mut rows: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let all = update["weights"].as_array().map_or(&[][..], Vec::as_slice);
    for w in all {
        let row = rows.entry(w["from"].as_str().unwrap_or("?").to_string()).or_default();
        row.0 += 1;
        row.1 += serde_json::to_string(w).unwrap().len() + 1;
    }
    let shared: Vec<&str> =
        update["rows"].as_array().map_or(&[][..], Vec::as_slice).iter().filter_map(|r| r["from"].as_str()).collect();
    if let Some((from, (n, bytes))) = rows.iter().max_by_key(|r| r.1.1) {
        println!(
            "    GraphUpdated: {} weights listed in {} rows (the '{from}' row {n} of them, {bytes} bytes); rows as a shared weight: {shared:?}",
            all.len(),
            rows.len()
        );
    }
}

/// The best of 5 runs of `f`.
fn best(mut f: impl FnMut()) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        let (mode, path) = spec.split_once(' ').unwrap();
        child(mode, Path::new(path));
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for tools in [2_000, 16_000] {
        let dir = TempDir::new().unwrap();
        let config_path = library::write(dir.path(), tools);
        let config = Config::load(&config_path).unwrap();
        let size = |p: &Path| {
            if p.is_dir() {
                std::fs::read_dir(p).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum::<u64>()
            } else {
                std::fs::metadata(p).unwrap().len()
            }
        };
        let (manifests, functions, openapi) =
            (dir.path().join("manifests"), dir.path().join("functions.json"), dir.path().join("openapi.json"));
        println!(
            "{tools} tools ({} sample + generated): manifests {} KiB, functions.json {} KiB, openapi.json {} KiB",
            library::SAMPLE_TOOLS,
            size(&manifests) / 1024,
            size(&functions) / 1024,
            size(&openapi) / 1024
        );
        let fn_opts = config.library_options.iter().find(|o| o.path == functions).unwrap().clone();
        let parts = [
            ("TOML manifests", best(|| drop(manifest::load_paths(std::slice::from_ref(&manifests)).unwrap()))),
            ("function file", best(|| drop(sources::load_json(&functions, &fn_opts).unwrap()))),
            ("OpenAPI document", best(|| drop(sources::load_json(&openapi, &Default::default()).unwrap()))),
            ("load_library", best(|| drop(session::load_library(&config).unwrap()))),
        ];
        let parts: Vec<String> = parts.iter().map(|(what, d)| format!("{what} {}", ms(*d))).collect();
        println!("  load, best of 5: {}", parts.join(", "));
        for mode in ["baseline", "load", "prepare", "session"] {
            let out = Command::new(&exe).env(CHILD, format!("{mode} {}", config_path.display())).output().unwrap();
            assert!(out.status.success(), "{mode}: {}", String::from_utf8_lossy(&out.stderr));
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}
