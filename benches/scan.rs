//! `scan`'s cost per run: the rule scanners over a real session's trace
//! (200 sample tasks, react, the actor's model failing one call in five and
//! the calculator failing every call, so runs of every length and outcome),
//! and the simulated scanner model naming each failed run's failure. A real
//! model's share is its reply time (docs/src/scan.md measures it).

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::hint::black_box;

use criterion::{Bencher, Criterion, Throughput, criterion_group, criterion_main};

use switchyard::config::Config;
use switchyard::engine::trace::read_trace;
use switchyard::engine::{Control, Scheduled, StrategyKind};
use switchyard::model::fault::ModelFaultMode;
use switchyard::scan::{self, RunContext};
use switchyard::session::{self, ExperienceSource, SessionOptions};
use switchyard::sim::{SimConfig, SimModel};
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};

const TASKS: usize = 200;

fn session_trace(dir: &std::path::Path) -> Vec<switchyard::engine::Event> {
    let trace = dir.join("scan.jsonl");
    let fault = |control| Scheduled { before_task: 1, control };
    let opts = SessionOptions {
        strategy: Some(StrategyKind::React),
        count: Some(TASKS),
        save_graph: false,
        logical_clock: true,
        trace: Some(trace.clone()),
        experience: ExperienceSource::InMemory(Vec::new()),
        schedule: vec![
            fault(Control::InjectModelFault {
                target: "actor".into(),
                fault: Fault { mode: ModelFaultMode::Http500, scope: FaultScope::Probability { p: 0.2 } },
            }),
            fault(Control::InjectFault {
                tool: "calculator".into(),
                fault: Fault { mode: FaultMode::Error, scope: FaultScope::UntilCleared },
            }),
        ],
        ..SessionOptions::default()
    };
    let config = Config { data_dir: Some(dir.to_path_buf()), ..Config::default() };
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async { session::run(session::prepare(&config, &opts).unwrap()).await.unwrap() });
    read_trace(&trace).unwrap()
}

fn scan_bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let events = session_trace(dir.path());
    let runs = scan::runs(&events);
    let cx = RunContext::default();
    let failed: Vec<&scan::RunEvents> = runs.iter().filter(|r| scan::scan_rules("t", None, r, &cx).failed).collect();
    assert!(!failed.is_empty(), "the faults fail some runs");
    let mut group = c.benchmark_group("scan");
    group.sample_size(20);
    group.throughput(Throughput::Elements(runs.len() as u64));
    group.bench_function(
        "rules_200_runs",
        peak::tracked(|b: &mut Bencher| {
            b.iter(|| {
                for r in scan::runs(black_box(&events)) {
                    black_box(scan::scan_rules("t", None, &r, &cx));
                }
            })
        }),
    );
    peak::report("scan/rules_200_runs");
    let model = SimModel::new(SimConfig::default());
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    group.throughput(Throughput::Elements(failed.len() as u64));
    group.bench_function(
        "sim_scanner_failed_runs",
        peak::tracked(|b: &mut Bencher| {
            b.iter(|| {
                for r in &failed {
                    let mut row = scan::scan_rules("t", None, r, &cx);
                    rt.block_on(scan::name_failure(&model, r, &mut row));
                    black_box(row);
                }
            })
        }),
    );
    peak::report("scan/sim_scanner_failed_runs");
    group.finish();
}

criterion_group!(benches, scan_bench);
criterion_main!(benches);
