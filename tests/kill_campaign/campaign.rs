//! The kill campaign: `switchyard run` (five kinds of session, each saving
//! a different store) and the workbench under a pty, killed with SIGKILL
//! at seeded random moments, again and again in the same data directory.
//! After every kill: every complete trace line is an event (only the last
//! may be cut), every store loads, and the next session, a restart, starts
//! from what the killed one saved.
//!
//! `SWITCHYARD_KILLS` sets the number of kills (default 12, two per
//! target, for CI); `SWITCHYARD_KILL_SEED` the seed (default 16).
//! `scripts/kill-campaign.sh` runs 200 and more in a release build.
//!
//! The moment is the experiment: the run is killed once its trace has a
//! random number of lines, plus a random few hundred microseconds, both
//! drawn from the seed.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

use switchyard::budget::experience::ExperienceStore;
use switchyard::config::Config;
use switchyard::graph::{GraphStore, ToolGraph};
use switchyard::program::protocol::{Probed, ProtocolStore};
use switchyard::tool::tape::ToolTape;

use crate::common::{PATIENCE, Pty, bin, lines_written, poll, read_back};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Toolnet,
    Btp,
    Rewoo,
    Cassette,
    Atc,
    Workbench,
}

const TARGETS: [Target; 6] =
    [Target::Toolnet, Target::Btp, Target::Rewoo, Target::Cassette, Target::Atc, Target::Workbench];

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Toolnet => "run toolnet (graph)",
            Target::Btp => "run BTP budget (experience)",
            Target::Rewoo => "run rewoo (category cache)",
            Target::Cassette => "run --record-tools (cassette)",
            Target::Atc => "run atc --probe (protocols)",
            Target::Workbench => "ui under a pty (graph)",
        }
    }

    /// The session's flags after `run`/`ui`.
    fn args(self, data: &Path) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        match self {
            Target::Toolnet | Target::Workbench => s(&["--strategy", "toolnet"]),
            Target::Btp => s(&["--strategy", "toolnet", "--budget", "20", "--tool-costs", "random:1-10"]),
            Target::Rewoo => s(&["--strategy", "rewoo"]),
            Target::Cassette => {
                let mut a = s(&["--strategy", "react", "--record-tools"]);
                a.push(cassette(data).display().to_string());
                a
            }
            Target::Atc => s(&["--strategy", "atc", "--probe"]),
        }
    }
}

fn cassette(data: &Path) -> PathBuf {
    data.join("tools.jsonl")
}

/// What the data directory holds, read with the library's own loaders:
/// the figures a restart must start from. An error is a torn store.
#[derive(Clone, Debug, Default)]
struct Saved {
    iteration: Option<u32>,
    experience: usize,
    labels_cached: bool,
    protocols: Vec<String>,
    cassette: usize,
}

fn load_stores(data: &Path) -> Result<Saved, String> {
    let mut saved = Saved::default();
    let graph = data.join("graph.json");
    if graph.exists() {
        let g = ToolGraph::load(&graph).map_err(|e| format!("graph: {e}"))?;
        let (opened, _) = GraphStore::open(&graph).map_err(|e| format!("graph store: {e}"))?;
        let opened = opened.ok_or("graph store: the snapshot is there but did not open")?;
        if opened.iteration() != g.iteration() {
            return Err(format!("graph: store at {} but file at {}", opened.iteration(), g.iteration()));
        }
        saved.iteration = Some(g.iteration());
    }
    saved.experience =
        ExperienceStore::open(&data.join("experience.jsonl")).map_err(|e| format!("experience: {e}"))?.len();
    let categories = data.join("categories.json");
    if categories.exists() {
        switchyard::engine::label_cache::load(&categories, "any").map_err(|e| format!("category cache: {e}"))?;
        let text = std::fs::read_to_string(&categories).map_err(|e| e.to_string())?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("category cache: {e}"))?;
        saved.labels_cached = v["entries"].as_object().is_some_and(|e| !e.is_empty());
    }
    let protocols = data.join("protocols");
    if protocols.is_dir() {
        let library = switchyard::session::load_library(&Config::default()).map_err(|e| e.to_string())?;
        let store = ProtocolStore::new(&protocols);
        for spec in library.tools() {
            if store.load(spec).map_err(|e| e.to_string())?.is_some() {
                saved.protocols.push(spec.name.clone());
            }
        }
        for entry in std::fs::read_dir(&protocols).map_err(|e| e.to_string())?.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
                serde_json::from_str::<Probed>(&text).map_err(|e| format!("protocol {}: {e}", path.display()))?;
            }
        }
    }
    let tape = cassette(data);
    if tape.exists() {
        ToolTape::replay(&tape, false).map_err(|e| format!("cassette: {e}"))?;
        // Whole lines only: the one a kill cut is not a recorded call.
        let bytes = std::fs::read(&tape).map_err(|e| e.to_string())?;
        saved.cassette = bytes.iter().filter(|&&b| b == b'\n').count();
    }
    Ok(saved)
}

/// Does a session that started after `before` was saved go on from it?
/// `events`: its trace; `after`: the stores once it ended.
fn continues(target: Target, before: &Saved, events: &[Value], after: &Saved) -> Result<(), String> {
    let started = events.iter().find(|e| e["type"] == "SessionStarted");
    if let (Some(saved), Some(started)) = (before.iteration, started)
        && matches!(target, Target::Toolnet | Target::Btp | Target::Workbench)
    {
        let at = started["graph"]["iteration"].as_u64().ok_or("SessionStarted without the graph")?;
        if at < u64::from(saved) {
            return Err(format!("the graph was saved at iteration {saved}; the restart began at {at}"));
        }
    }
    if let (Some(b), Some(a)) = (before.iteration, after.iteration)
        && a < b
    {
        return Err(format!("the saved graph went back from iteration {b} to {a}"));
    }
    if after.experience < before.experience {
        return Err(format!("experience went from {} to {} records", before.experience, after.experience));
    }
    if after.cassette < before.cassette {
        return Err(format!("the cassette went from {} to {} calls", before.cassette, after.cassette));
    }
    if target == Target::Rewoo && before.labels_cached {
        for e in events.iter().filter(|e| e["type"] == "ToolsClassified") {
            if e["labels"].as_array().into_iter().flatten().any(|l| l["source"] == "model") {
                return Err("the labels were cached, yet the restart asked the classifier".into());
            }
        }
    }
    if target == Target::Atc {
        for e in events.iter().filter(|e| e["type"] == "Probed") {
            let tool = e["tool"].as_str().unwrap_or_default();
            if before.protocols.iter().any(|p| p == tool) {
                return Err(format!("{tool}'s protocol was saved, yet the restart probed it again"));
            }
        }
        if let Some(lost) = before.protocols.iter().find(|p| !after.protocols.contains(p)) {
            return Err(format!("{lost}'s saved protocol was lost"));
        }
    }
    Ok(())
}

#[derive(Default)]
struct Tally {
    kills: usize,
    /// The run ended before its moment came (not a kill).
    finished: usize,
    torn_last_lines: usize,
    bad_traces: usize,
    store_loads: usize,
    bad_stores: usize,
    restarts: usize,
    bad_restarts: usize,
    failures: Vec<String>,
}

struct Session {
    kill: Box<dyn FnOnce()>,
    exited: Box<dyn FnMut() -> bool>,
}

fn spawn_run(target: Target, data: &Path, trace: &Path, seed: u64, count: usize) -> Child {
    bin()
        .arg("--data-dir")
        .arg(data)
        .args(["run", "--seed", &seed.to_string(), "--count", &count.to_string(), "--trace"])
        .arg(trace)
        .args(target.args(data))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn start(target: Target, data: &Path, trace: &Path, seed: u64) -> Session {
    if target == Target::Workbench {
        let args = format!(
            "--data-dir {} ui --pace 0 --seed {seed} --count 400 --trace {} {}",
            data.display(),
            trace.display(),
            target.args(data).join(" ")
        );
        let pty = std::rc::Rc::new(std::cell::RefCell::new(Pty::spawn(data.parent().unwrap(), &args)));
        let pid = pty.borrow_mut().switchyard_pid();
        let p = pty.clone();
        return Session {
            kill: Box::new(move || {
                crate::common::signal(pid, libc::SIGKILL);
                p.borrow_mut().finish();
            }),
            exited: Box::new(move || pty.borrow_mut().child.try_wait().unwrap().is_some()),
        };
    }
    let child = std::rc::Rc::new(std::cell::RefCell::new(spawn_run(target, data, trace, seed, 400)));
    let c = child.clone();
    Session {
        kill: Box::new(move || {
            let mut c = c.borrow_mut();
            let _ = c.kill();
            c.wait().unwrap();
        }),
        exited: Box::new(move || child.borrow_mut().try_wait().unwrap().is_some()),
    }
}

/// Up to this many trace lines before the kill: a few tasks' worth.
fn max_lines(target: Target) -> usize {
    match target {
        Target::Atc => 200,
        Target::Workbench => 150,
        _ => 120,
    }
}

fn kills_wanted() -> usize {
    std::env::var("SWITCHYARD_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
}

#[test]
fn killed_at_random_moments_nothing_is_torn_and_restarts_go_on() {
    let kills = kills_wanted();
    let seed: u64 = std::env::var("SWITCHYARD_KILL_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = TARGETS
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let d = root.path().join(format!("t{i}/data"));
            std::fs::create_dir_all(&d).unwrap();
            d
        })
        .collect();
    let mut tallies: Vec<Tally> = TARGETS.iter().map(|_| Tally::default()).collect();
    // The stores each target's next session starts from.
    let mut saved: Vec<Saved> = TARGETS.iter().map(|_| Saved::default()).collect();

    for i in 0..kills {
        let t = i % TARGETS.len();
        let (target, data, tally) = (TARGETS[t], &dirs[t], &mut tallies[t]);
        // The stores written once per data directory are written again now
        // and then, so that kills also land in the middle of their writing.
        if target == Target::Rewoo && rng.random_bool(0.5) {
            let _ = std::fs::remove_file(data.join("categories.json"));
        }
        if target == Target::Atc && rng.random_bool(0.3) {
            let _ = std::fs::remove_dir_all(data.join("protocols"));
        }
        let before = load_stores(data).unwrap_or_default();
        let trace = data.parent().unwrap().join(format!("trace-{i}.jsonl"));
        let lines = rng.random_range(1..=max_lines(target));
        let extra = Duration::from_micros(rng.random_range(0..=500));
        let mut session = start(target, data, &trace, rng.random_range(0..1000));
        poll(PATIENCE, || lines_written(&trace) >= lines || (session.exited)());
        std::thread::sleep(extra);
        if (session.exited)() {
            tally.finished += 1;
        } else {
            tally.kills += 1;
        }
        (session.kill)();

        let events: Vec<Value> = match read_back(&trace) {
            Ok(read) => {
                tally.torn_last_lines += usize::from(read.torn);
                read.events.iter().map(|e| serde_json::to_value(e).unwrap()).collect()
            }
            Err(e) => {
                tally.bad_traces += 1;
                tally.failures.push(format!("kill {i} ({}): trace: {e}", target.name()));
                Vec::new()
            }
        };
        tally.store_loads += 1;
        let after = match load_stores(data) {
            Ok(s) => s,
            Err(e) => {
                tally.bad_stores += 1;
                tally.failures.push(format!("kill {i} ({}): {e}", target.name()));
                continue;
            }
        };
        // This session was the restart of the one killed before it.
        if i >= TARGETS.len() {
            tally.restarts += 1;
            if let Err(e) = continues(target, &before, &events, &after) {
                tally.bad_restarts += 1;
                tally.failures.push(format!("kill {i} ({}): restart: {e}", target.name()));
            }
        }
        saved[t] = after;
    }

    // A last restart of each: it runs to its end from what was saved.
    for (t, target) in TARGETS.iter().enumerate() {
        let data = &dirs[t];
        let trace = data.parent().unwrap().join("trace-last.jsonl");
        let run_as = if *target == Target::Workbench { Target::Toolnet } else { *target };
        let mut child = spawn_run(run_as, data, &trace, 7, 2);
        let status = child.wait().unwrap();
        let tally = &mut tallies[t];
        tally.restarts += 1;
        let events: Vec<Value> = read_back(&trace)
            .map(|r| r.events.iter().map(|e| serde_json::to_value(e).unwrap()).collect())
            .unwrap_or_default();
        let result = if !status.success() {
            Err(format!("the last restart failed: {status}"))
        } else {
            load_stores(data).and_then(|after| continues(run_as, &saved[t], &events, &after))
        };
        if let Err(e) = result {
            tally.bad_restarts += 1;
            tally.failures.push(format!("last restart ({}): {e}", target.name()));
        }
    }

    let table = table(&tallies);
    println!("{table}");
    let failures: Vec<&String> = tallies.iter().flat_map(|t| &t.failures).collect();
    assert!(failures.is_empty(), "{table}\n{}", failures.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n"));
    let total: usize = tallies.iter().map(|t| t.kills).sum();
    assert!(total * 2 >= kills, "most sessions were killed, not finished:\n{table}");
}

fn table(tallies: &[Tally]) -> String {
    let mut out = format!(
        "{:<32} {:>6} {:>9} {:>11} {:>10} {:>12} {:>12} {:>12}\n",
        "target", "kills", "finished", "torn last", "bad trace", "store loads", "torn stores", "restarts ok"
    );
    let mut sum = Tally::default();
    for (target, t) in TARGETS.iter().zip(tallies) {
        out += &row(target.name(), t);
        sum.kills += t.kills;
        sum.finished += t.finished;
        sum.torn_last_lines += t.torn_last_lines;
        sum.bad_traces += t.bad_traces;
        sum.store_loads += t.store_loads;
        sum.bad_stores += t.bad_stores;
        sum.restarts += t.restarts;
        sum.bad_restarts += t.bad_restarts;
    }
    out += &row("total", &sum);
    out
}

fn row(name: &str, t: &Tally) -> String {
    format!(
        "{:<32} {:>6} {:>9} {:>11} {:>10} {:>12} {:>12} {:>12}\n",
        name,
        t.kills,
        t.finished,
        t.torn_last_lines,
        t.bad_traces,
        t.store_loads,
        t.bad_stores,
        format!("{}/{}", t.restarts - t.bad_restarts, t.restarts)
    )
}
