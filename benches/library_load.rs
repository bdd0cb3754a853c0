//! Loading a mixed library of 2,000 and 16,000 tools (TOML manifests, an
//! OpenAI function file and an OpenAPI document, plus the 17 sample tools):
//! `session::load_library` as a session calls it, and `session::prepare` of
//! a ToolNet session over it (the library, the task list, the graph from the
//! sample trajectories, the models, the engine with its retrieval index).
//! Memory and the trace's size are in `library_scale` (not criterion).

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/library.rs"]
mod library;

#[path = "support/peak.rs"]
mod peak;

use std::cell::OnceCell;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Bencher, BenchmarkId, Criterion, criterion_group, criterion_main};
use switchyard::config::Config;
use switchyard::session::{self, ExperienceSource, GraphSource, SessionOptions};
use tempfile::TempDir;

fn library_load(c: &mut Criterion) {
    let mut group = c.benchmark_group("library_load");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for tools in [2_000, 16_000] {
        // Written when a bench of this size first runs: the filter may
        // exclude both.
        let written: OnceCell<(TempDir, Config)> = OnceCell::new();
        let config = || {
            &written
                .get_or_init(|| {
                    let dir = TempDir::new().unwrap();
                    let config = Config::load(&library::write(dir.path(), tools)).unwrap();
                    let loaded = session::load_library(&config).unwrap();
                    assert_eq!(loaded.len(), tools, "the generated library's size");
                    (dir, config)
                })
                .1
        };
        group.bench_with_input(
            BenchmarkId::new("load_library", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, _: &usize| {
                let config = config();
                b.iter_with_large_drop(|| black_box(session::load_library(config).unwrap()));
            }),
        );
        peak::report(&format!("library_load/load_library/{tools}"));
        let opts = SessionOptions {
            graph: GraphSource::Fresh,
            logical_clock: true,
            experience: ExperienceSource::InMemory(Vec::new()),
            ..SessionOptions::default()
        };
        group.bench_with_input(
            BenchmarkId::new("prepare_toolnet", tools),
            &tools,
            peak::tracked_input(|b: &mut Bencher, _: &usize| {
                let config = config();
                b.iter_with_large_drop(|| black_box(session::prepare(config, &opts).unwrap()));
            }),
        );
        peak::report(&format!("library_load/prepare_toolnet/{tools}"));
    }
    group.finish();
}

criterion_group!(benches, library_load);
criterion_main!(benches);
