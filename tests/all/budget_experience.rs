//! Experience store, trajectory import, rule judge, and the v / F̃ estimates
//! of BTP §2.2 (equations 3 and 4) checked against hand-computed numbers.

use std::path::Path;

use serde_json::{Value, json};
use switchyard::budget::estimate::{Defaults, Estimate, estimate};
use switchyard::budget::experience::{Experience, ExperienceError, ExperienceStore, import_trajectories, judge_rule};
use switchyard::budget::tally::Tally;
use switchyard::retrieve::similarity;

const QU: &str = "weather paris";
const Q1: &str = "weather paris";
const Q2: &str = "weather london";
const Q3: &str = "stock price";

fn usage(query: &str, tool: &str, helpful: bool) -> Experience {
    Experience { query: query.into(), tool: tool.into(), args: Value::Null, result: Value::Null, helpful }
}

fn tiny() -> Vec<Experience> {
    vec![
        usage(Q1, "a", true),
        usage(Q1, "a", true),
        usage(Q2, "a", false),
        usage(Q3, "a", true),
        usage(Q2, "b", false),
        usage(Q3, "b", false),
        usage(Q2, "c", true),
    ]
}

fn names(tools: &[&str]) -> Vec<String> {
    tools.iter().map(|t| t.to_string()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn similarities_used_by_the_hand_computation() {
    // Tokens: {weather, pari} vs {weather, pari} -> 1; vs {weather, london} ->
    // 1 / (√2·√2) = 0.5; vs {stock, pric} -> 0.
    assert!(close(similarity(QU, Q1), 1.0));
    assert!(close(similarity(QU, Q2), 0.5));
    assert!(close(similarity(QU, Q3), 0.0));
}

#[test]
fn value_and_frequency_match_hand_computation() {
    let (w1, w2, w3) = (1f64.exp(), 0.5f64.exp(), 0f64.exp());
    let est = estimate(QU, &names(&["a", "b", "c", "d"]), &tiny(), 0.15, Defaults::default());
    assert_eq!(est.iter().map(|e| e.tool.as_str()).collect::<Vec<_>>(), ["a", "b", "c", "d"]);

    // a: usages q1 ✓, q1 ✓, q2 ✗, q3 ✓
    //   v = (e¹ + e¹ + 0 + e⁰) / (e¹ + e¹ + e^0.5 + e⁰) = 6.43656 / 8.08528 ≈ 0.79609
    //   F(q1,a) = 2, F(q2,a) = 1, F(q3,a) = 1
    //   F̃ = (e¹·2 + e^0.5·1 + e⁰·1) / (e¹ + e^0.5 + e⁰) = 8.08528 / 5.36700 ≈ 1.50648
    let a = &est[0];
    assert!(close(a.value, (2.0 * w1 + w3) / (2.0 * w1 + w2 + w3)), "{a:?}");
    assert!((a.value - 0.79609).abs() < 1e-4);
    assert!(close(a.freq, (2.0 * w1 + w2 + w3) / (w1 + w2 + w3)), "{a:?}");
    assert!((a.freq - 1.50648).abs() < 1e-4);
    assert_eq!((a.uses, a.defaulted), (4, false));

    // b: never helpful, v = 0 < τ = 0.15, so F̃ = 0.
    assert_eq!(est[1], Estimate { tool: "b".into(), value: 0.0, freq: 0.0, uses: 2, defaulted: false });

    // c: one helpful usage for q2: v = e^0.5 / e^0.5 = 1, F̃ = e^0.5·1 / e^0.5 = 1.
    assert_eq!(est[2], Estimate { tool: "c".into(), value: 1.0, freq: 1.0, uses: 1, defaulted: false });

    // d: no experience: the defaults, marked as such.
    assert_eq!(est[3], Estimate { tool: "d".into(), value: 0.5, freq: 1.0, uses: 0, defaulted: true });
}

#[test]
fn tau_filters_frequency_not_value() {
    let exp = tiny();
    // a's v ≈ 0.796: τ = 0.8 zeroes its F̃, τ = 0.79 keeps it.
    let high = estimate(QU, &names(&["a"]), &exp, 0.8, Defaults::default());
    assert!(high[0].value > 0.79 && high[0].value < 0.8);
    assert_eq!(high[0].freq, 0.0);
    let low = estimate(QU, &names(&["a"]), &exp, 0.79, Defaults::default());
    assert!(low[0].freq > 1.5);

    // b has v = 0; with τ = 0 it is no longer filtered:
    // F̃ = (e^0.5·1 + e⁰·1) / (e^0.5 + e⁰) = 1.
    let b = estimate(QU, &names(&["b"]), &exp, 0.0, Defaults::default());
    assert!(close(b[0].freq, 1.0), "{b:?}");
}

#[test]
fn defaults_below_tau_give_zero_frequency() {
    let defaults = Defaults { value: 0.1, freq: 3.0 };
    let below = estimate(QU, &names(&["new"]), &[], 0.15, defaults);
    assert_eq!(below[0], Estimate { tool: "new".into(), value: 0.1, freq: 0.0, uses: 0, defaulted: true });
    let above = estimate(QU, &names(&["new"]), &[], 0.05, defaults);
    assert_eq!(above[0].freq, 3.0);
}

#[test]
fn repeated_use_for_one_query_counts_each_time() {
    // Only q3, twice: F(q3,t) = 2, so F̃ = e⁰·2 / e⁰ = 2 (and v = 2e⁰ / 2e⁰ = 1).
    let exp = vec![usage(Q3, "t", true), usage(Q3, "t", true)];
    let est = estimate(QU, &names(&["t"]), &exp, 0.15, Defaults::default());
    assert_eq!((est[0].value, est[0].freq, est[0].uses), (1.0, 2.0, 2));
}

fn store_path(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("data").join("experience.jsonl")
}

#[test]
fn store_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(&dir);
    let mut store = ExperienceStore::open(&path).unwrap();
    assert!(store.is_empty());
    assert!(!path.exists(), "a missing store is created on the first append, not on open");
    assert_eq!(store.path(), Some(path.as_path()));

    let mut first = usage(Q1, "a", true);
    first.args = json!({"city": "Paris"});
    first.result = json!({"temp": 21.5, "sky": "clear"});
    store.append(&[first.clone(), usage(Q2, "b", false)]).unwrap();
    store.append(&[usage(Q3, "c", true)]).unwrap();
    // Memory keeps what the estimates read; the file keeps the whole usage.
    let expected = vec![usage(Q1, "a", true), usage(Q2, "b", false), usage(Q3, "c", true)];
    assert_eq!(store.tally(), &expected.iter().collect::<Tally>());
    assert_eq!(store.len(), 3);

    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(text.ends_with('\n'));
    let on_disk: Experience = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(on_disk, first, "the file keeps the arguments and the result");
    assert_eq!(ExperienceStore::read(&path).unwrap(), expected.as_slice());
}

#[test]
fn in_memory_store_has_no_file() {
    let mut store = ExperienceStore::in_memory(vec![usage(Q1, "a", true)]);
    store.append(&[usage(Q2, "b", false)]).unwrap();
    assert_eq!(store.tally(), &[usage(Q1, "a", true), usage(Q2, "b", false)].iter().collect::<Tally>());
    assert_eq!(store.path(), None);
}

fn line(e: &Experience) -> String {
    serde_json::to_string(e).unwrap() + "\n"
}

#[test]
fn bad_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("experience.jsonl");
    let text = line(&usage(Q1, "a", true)) + "{\"query\": \"x\", \"tool\": 3}\n" + line(&usage(Q2, "b", true)).as_str();
    std::fs::write(&path, text).unwrap();
    let err = ExperienceStore::open(&path).unwrap_err();
    assert!(matches!(err, ExperienceError::Parse { line: 2, .. }), "{err:?}");
    assert!(err.to_string().starts_with(&format!("{}:2: ", path.display())), "{err}");
}

#[test]
fn cut_last_line_is_dropped_and_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("experience.jsonl");
    let whole = line(&usage(Q1, "a", true));
    std::fs::write(&path, whole.clone() + "{\"query\": \"weather lon").unwrap();
    let mut store = ExperienceStore::open(&path).unwrap();
    assert_eq!(store.tally(), &[usage(Q1, "a", true)].iter().collect::<Tally>());

    // The next append must not glue its record onto the fragment.
    store.append(&[usage(Q3, "c", false)]).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), whole + line(&usage(Q3, "c", false)).as_str());
    assert_eq!(ExperienceStore::read(&path).unwrap(), &[usage(Q1, "a", true), usage(Q3, "c", false)]);
}

#[test]
fn complete_last_record_without_newline_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("experience.jsonl");
    let first = line(&usage(Q1, "a", true));
    std::fs::write(&path, first.trim_end()).unwrap();
    let mut store = ExperienceStore::open(&path).unwrap();
    assert_eq!(store.tally(), &[usage(Q1, "a", true)].iter().collect::<Tally>());
    store.append(&[usage(Q2, "b", true)]).unwrap();
    assert_eq!(ExperienceStore::read(&path).unwrap(), &[usage(Q1, "a", true), usage(Q2, "b", true)]);
}

#[test]
fn record_without_args_or_result_reads_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("experience.jsonl");
    std::fs::write(&path, "{\"query\": \"q\", \"tool\": \"t\", \"helpful\": false}\n\n").unwrap();
    assert_eq!(ExperienceStore::read(&path).unwrap(), &[usage("q", "t", false)]);
}

#[test]
fn import_sample_trajectories() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools/trajectories.jsonl");
    let records = import_trajectories(&path).unwrap();

    // Expected: one usage per tool occurrence, in file order, read independently.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut expected = Vec::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(l).unwrap();
        for t in v["tools"].as_array().unwrap() {
            expected.push(usage(v["query"].as_str().unwrap(), t.as_str().unwrap(), true));
        }
    }
    assert!(expected.len() > text.lines().count() / 2, "sample should not be empty");
    assert_eq!(records, expected);
    assert!(records.iter().all(|r| r.helpful && r.args.is_null() && r.result.is_null()));
}

#[test]
fn import_with_helpful_flags_and_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(&path, "{\"query\": \"q\", \"tools\": [\"a\", \"b\"], \"helpful\": [true, false]}\n").unwrap();
    assert_eq!(import_trajectories(&path).unwrap(), vec![usage("q", "a", true), usage("q", "b", false)]);

    std::fs::write(
        &path,
        "{\"query\": \"q\", \"tools\": [\"a\"]}\n{\"query\": \"q\", \"tools\": [\"a\"], \"helpful\": []}\n",
    )
    .unwrap();
    let err = import_trajectories(&path).unwrap_err();
    assert!(matches!(err, ExperienceError::Parse { line: 2, .. }), "{err:?}");

    let missing = dir.path().join("nope.jsonl");
    assert!(matches!(import_trajectories(&missing), Err(ExperienceError::Io { .. })));
}

#[test]
fn rule_judge() {
    assert!(!judge_rule(&Err("boom".into())));
    assert!(!judge_rule(&Ok(json!("Nothing Found"))));
    assert!(!judge_rule(&Ok(Value::Null)));
    assert!(!judge_rule(&Ok(json!([]))));
    assert!(!judge_rule(&Ok(json!({}))));
    assert!(!judge_rule(&Ok(json!(""))));
    assert!(!judge_rule(&Ok(json!("!#$%&'()*+,-./:;<=>?@[]^_`{|}~"))));
    assert!(judge_rule(&Ok(json!({"capital": "Rome", "population": 58_850_000}))));
    assert!(judge_rule(&Ok(json!("Rome"))));
    assert!(judge_rule(&Ok(json!(0))));
}

/// Equations 3 and 4 summed usage by usage, as the paper writes them.
fn estimate_per_usage(query: &str, tool: &str, experience: &[Experience], tau: f64) -> Option<(f64, f64)> {
    let uses: Vec<&Experience> = experience.iter().filter(|e| e.tool == tool).collect();
    if uses.is_empty() {
        return None;
    }
    let w = |q: &str| similarity(query, q).exp();
    let num: f64 = uses.iter().filter(|u| u.helpful).map(|u| w(&u.query)).sum();
    let den: f64 = uses.iter().map(|u| w(&u.query)).sum();
    let value = num / den;
    let mut distinct: Vec<&str> = uses.iter().map(|u| u.query.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let f = |q: &str| uses.iter().filter(|u| u.query == q).count() as f64;
    let freq = if value < tau {
        0.0
    } else {
        distinct.iter().map(|q| w(q) * f(q)).sum::<f64>() / distinct.iter().map(|q| w(q)).sum::<f64>()
    };
    Some((value, freq))
}

proptest::proptest! {
    /// Counting the usages per tool and query (what the store keeps in
    /// memory) gives the estimates the per-usage sums give.
    #[test]
    fn counted_usages_estimate_as_the_usages_do(
        usages in proptest::collection::vec((0usize..5, 0usize..3, proptest::bool::ANY), 0..60),
        tau in 0.0f64..1.0,
    ) {
        let queries = ["weather paris", "weather london", "stock price", "paris stock", "london"];
        let tools = ["a", "b", "c"];
        let exp: Vec<Experience> = usages.iter().map(|&(q, t, h)| usage(queries[q], tools[t], h)).collect();
        let est = estimate(QU, &names(&tools), &exp, tau, Defaults::default());
        for (e, tool) in est.iter().zip(tools) {
            match estimate_per_usage(QU, tool, &exp, tau) {
                None => proptest::prop_assert!(e.defaulted && e.uses == 0),
                Some((value, freq)) => {
                    proptest::prop_assert!((e.value - value).abs() < 1e-9, "{tool}: v {} vs {value}", e.value);
                    proptest::prop_assert!((e.freq - freq).abs() < 1e-9, "{tool}: F {} vs {freq}", e.freq);
                    proptest::prop_assert_eq!(e.uses, exp.iter().filter(|u| u.tool == tool).count());
                }
            }
        }
    }
}
