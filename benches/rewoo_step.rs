//! One ReWOO step of N = 2, 4, 8 calls of 200 ms each: run together, the
//! step should take about as long as one call (goal: within 1.1x of 200 ms),
//! where the seed's reference worker, calling them one after another,
//! takes N x 200 ms.

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::json;
use switchyard::engine::SystemClock;
use switchyard::strategy::rewoo::worker::{StepCall, run_step};

const CALL: Duration = Duration::from_millis(200);

fn step(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let clock = SystemClock::new();
    let mut group = c.benchmark_group("rewoo_step");
    // Every iteration is >= 200 ms: one per sample, ten samples.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in [2usize, 4, 8] {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            b.to_async(&rt).iter(|| {
                let calls = (0..n).map(|lane| StepCall { lane, tool: format!("t{lane}"), args: json!({}) }).collect();
                run_step(calls, Duration::from_secs(5), &clock, |c| async move {
                    tokio::time::sleep(CALL).await;
                    Ok(json!({ "lane": c.lane }))
                })
            })
        });
    }
    group.finish();
}

criterion_group!(benches, step);
criterion_main!(benches);
