use std::path::Path;

use super::*;
use crate::dataset::Question;
use crate::dataset::cotools::ToolDoc;
use crate::retrieve::embed::EmbedError;
use crate::train::TrainProgress;

/// Words hashed into a small vector: queries about a tool share its words.
struct WordHooks {
    embedded: Vec<String>,
    runs: Vec<(String, usize)>,
}

impl Hooks for WordHooks {
    fn embed(&mut self, texts: &[String], what: &str) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        self.embedded.push(what.to_owned());
        Ok(texts.iter().map(|t| words(t)).collect())
    }
    fn start(&mut self, what: &str, steps: usize) {
        self.runs.push((what.to_owned(), steps));
    }
    fn step(&mut self, _: &str, _: &TrainProgress) {}
    fn finish(&mut self) {}
}

fn words(text: &str) -> Vec<f32> {
    let mut v = [0.0f32; 32];
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let h = w.to_lowercase().bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
        v[(h % 32) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.iter().map(|x| x / norm).collect()
}

const TOOLS: [(&str, &str); 8] = [
    ("weather", "forecast rain sun temperature"),
    ("stocks", "share price market ticker"),
    ("flights", "airport plane departure gate"),
    ("recipes", "cook ingredients oven dinner"),
    ("movies", "film cinema actor showing"),
    ("music", "song album singer concert"),
    ("maps", "route street distance walk"),
    ("news", "headline article press today"),
];

fn write_data(dir: &Path) -> HeadsPlan {
    let info: serde_json::Map<String, Value> =
        TOOLS.iter().map(|(id, d)| (format!("<{id}>"), Value::String(d.to_string()))).collect();
    std::fs::write(dir.join("tool.json"), json!({ "tool_information": info }).to_string()).unwrap();
    let mut train = String::new();
    for (id, d) in TOOLS {
        for k in 0..6 {
            let w: Vec<&str> = d.split(' ').collect();
            let q = format!("please {} and {} number {k}", w[k % 4], w[(k + 1) % 4]);
            train.push_str(&format!("{}\n", json!({"question": q, "tool": format!("<{id}>")})));
        }
    }
    std::fs::write(dir.join("train.jsonl"), train).unwrap();
    let test: String =
        TOOLS.iter().map(|(id, d)| format!("{}\n", json!({"question": d, "tool": format!("<{id}>")}))).collect();
    std::fs::write(dir.join("test.jsonl"), test).unwrap();
    HeadsPlan {
        tools: dir.join("tool.json"),
        train: dir.join("train.jsonl"),
        test: Some(dir.join("test.jsonl")),
        synthetic: None,
        holdout: 0.25,
        validation: 0.25,
        tool_text: ToolText::Description,
        negatives_from: NegativesFrom::Any,
        lexical_weight: None,
        no_refit: false,
        dump_validation: Some(dir.join("dump.jsonl")),
        dump_test: Some(dir.join("test-split.jsonl")),
        options: TrainOptions { hidden: 16, epochs: 3, batch: 8, ..TrainOptions::default() },
    }
}

#[test]
fn heads_are_trained_refit_and_tested_on_seen_and_unseen_tools() {
    let dir = tempfile::tempdir().unwrap();
    let plan = write_data(dir.path());
    let mut hooks = WordHooks { embedded: Vec::new(), runs: Vec::new() };
    // An id as long as real ones (`minilm-l6-v2`) and longer: the table's columns must hold.
    let o = train_heads_and_test(plan.prepare().unwrap(), "hashed-words-v1", &mut hooks).unwrap();
    assert_eq!(hooks.embedded, ["tools", "queries", "test"]);
    assert_eq!(hooks.runs.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["training", "training on all kept tools"]);
    assert_eq!((o.held_out_tools, o.pool_size), (2, 8), "a quarter of 8 tools never reaches training");
    assert_eq!(o.trained_tools, 6, "the refit trains on every kept tool");
    assert_eq!(o.logs.len(), 2);
    let names: Vec<&str> = o.rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(names[..2], ["BM25", "hashed-words-v1"], "raw rows are named by the embedder");
    assert!(names[2].starts_with("hashed-words-v1 + BM25 (w="), "{names:?}");
    assert!(o.rows.iter().all(|(_, seen, unseen)| seen.n == 6 && unseen.n == 2), "{:?}", o.rows);
    assert_eq!(o.summary["held_out_tools"], 2);
    let dumped = std::fs::read_to_string(dir.path().join("dump.jsonl")).unwrap();
    assert!(dumped.lines().count() > 0 && dumped.lines().all(|l| l.contains("\"gold\"")));
    // The test split as a question file: `retrieval eval` reads it as is.
    let split = Question::load_with_tools(&dir.path().join("test-split.jsonl")).unwrap();
    let text = std::fs::read_to_string(dir.path().join("test-split.jsonl")).unwrap();
    let unseen = text.lines().filter(|l| l.contains("\"seen\":false")).count();
    assert_eq!((split.len(), unseen), (8, 2), "{text}");

    let text = o.text();
    assert!(text.starts_with("trained on "), "{text}");
    assert!(text.contains("8 tools in the pool") && text.contains("seen tools (6 questions)"), "{text}");
    let table: Vec<&str> = text.lines().skip_while(|l| !l.trim_start().starts_with("top-1")).skip(1).collect();
    assert_eq!(table.len(), o.rows.len(), "a line per retriever: {text}");
    let header = text.lines().find(|l| l.trim_start().starts_with("top-1")).unwrap();
    assert!(table.iter().all(|l| l.len() == header.len()), "columns line up: {text}");
    let json = o.json(Path::new("heads.safetensors"));
    assert_eq!(json["test"].as_array().map(Vec::len), Some(o.rows.len()));
    assert_eq!(json["out"], "heads.safetensors");
}

#[test]
fn synthetic_questions_train_every_tool_and_held_out_tools_stay_unseen() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = write_data(dir.path());
    let mut hooks = WordHooks { embedded: Vec::new(), runs: Vec::new() };
    train_heads_and_test(plan.prepare().unwrap(), "words", &mut hooks).unwrap();
    let steps_without: Vec<usize> = hooks.runs.iter().map(|r| r.1).collect();

    let synthetic: String = TOOLS
        .iter()
        .flat_map(|(id, d)| {
            (0..2).map(move |k| format!("{}\n", json!({"question": format!("{d} {k}"), "tool": id, "synthetic": true})))
        })
        .collect();
    std::fs::write(dir.path().join("synth.jsonl"), synthetic).unwrap();
    plan.synthetic = Some(dir.path().join("synth.jsonl"));
    let mut hooks = WordHooks { embedded: Vec::new(), runs: Vec::new() };
    let with = train_heads_and_test(plan.prepare().unwrap(), "words", &mut hooks).unwrap();
    let steps_with: Vec<usize> = hooks.runs.iter().map(|r| r.1).collect();
    // 16 more pairs at batch 8: two more steps in each of the 3 epochs; the
    // refit trains on the 36 kept questions and the 16 synthetic ones.
    assert_eq!(steps_with[0], steps_without[0] + 2 * 3, "{steps_with:?} against {steps_without:?}");
    assert_eq!(steps_with[1], 52usize.div_ceil(8) * with.best_epoch.max(1), "{steps_with:?}");
    assert_eq!(with.summary["synthetic_pairs"], 16);
    assert_eq!((with.trained_tools, with.held_out_tools), (6, 2), "a synthetic question does not make a tool seen");
    assert!(with.rows.iter().all(|(_, seen, unseen)| seen.n == 6 && unseen.n == 2), "{:?}", with.rows);
    assert!(with.text().contains("and on 16 synthetic questions"), "{}", with.text());

    std::fs::write(dir.path().join("synth.jsonl"), "{\"question\": \"q\", \"tool\": \"nowhere\"}\n").unwrap();
    let err = plan.prepare().err().expect("a synthetic tool outside the pool").to_string();
    assert!(err.contains("synth.jsonl") && err.contains("record 1: tool `nowhere`"), "{err}");
}

#[test]
fn faults_of_the_data_are_found_before_anything_is_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = write_data(dir.path());
    plan.holdout = 1.0;
    assert!(matches!(plan.prepare(), Err(TrainingError::Options(_))));
    plan.holdout = 0.25;
    std::fs::write(dir.path().join("test.jsonl"), "{\"question\": \"q\", \"tool\": \"<nowhere>\"}\n").unwrap();
    let err = plan.prepare().err().expect("a test tool outside the pool");
    assert!(err.to_string().contains("line 1: tool `nowhere` is not in"), "{err}");
    assert!(err.to_string().starts_with(&dir.path().join("test.jsonl").display().to_string()), "{err}");
}

#[test]
fn precision_recall_and_f1_count_scores_above_the_threshold() {
    let p = prf(&[0.9, 0.8, 0.2, 0.7], &[true, false, true, true], 0.5);
    assert_eq!((p.positives, p.n), (3, 4));
    assert!((p.precision - 2.0 / 3.0).abs() < 1e-6 && (p.recall - 2.0 / 3.0).abs() < 1e-6);
    assert_eq!(prf(&[0.1], &[true], 0.5).f1, 0.0);
}

#[test]
fn a_tool_s_domain_is_its_path_id_s_first_segment() {
    let ids = ["people/person/place_of_birth", "music/artist/track", "people/person/nationality", "P19", "weather/"];
    let pool = ToolPool { tools: ids.map(|id| ToolDoc { id: id.into(), description: String::new() }).to_vec() };
    let domains: Vec<Option<&str>> = pool.tools.iter().map(|t| t.domain()).collect();
    assert_eq!(domains, [Some("people"), Some("music"), Some("people"), None, None]);
    let groups = super::domains(&pool);
    assert_eq!(groups[0], groups[2], "{groups:?}");
    let distinct: BTreeSet<u32> = groups.iter().copied().collect();
    assert_eq!(distinct.len(), 4, "two domains and two tools alone: {groups:?}");
}

#[test]
fn domain_negatives_train_and_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let mut plan = write_data(dir.path());
    plan.negatives_from = NegativesFrom::Domain;
    let e = plan.prepare().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("--negatives-from domain needs --negatives"), "{e}");
    plan.options.negatives = 2;
    let mut hooks = WordHooks { embedded: Vec::new(), runs: Vec::new() };
    let o = train_heads_and_test(plan.prepare().unwrap(), "words", &mut hooks).unwrap();
    assert_eq!((o.summary["negatives"].as_u64(), o.summary["negatives_from"].as_str()), (Some(2), Some("domain")));
}

#[test]
fn tuning_refuses_bad_options_and_names_a_model_not_installed() {
    use super::tune::tune_and_validate;
    use crate::minilm_tune::TuneOptions;
    let dir = tempfile::tempdir().unwrap();
    let plan = write_data(dir.path());
    let mut hooks = WordHooks { embedded: Vec::new(), runs: Vec::new() };
    let zero = TuneOptions { epochs: 0, ..TuneOptions::default() };
    let e = tune_and_validate(plan.prepare().unwrap(), dir.path(), &zero, &mut hooks).err().map(|e| e.to_string());
    assert!(e.as_deref().is_some_and(|e| e.contains("--epochs")), "{e:?}");
    let e = tune_and_validate(plan.prepare().unwrap(), &dir.path().join("minilm"), &TuneOptions::default(), &mut hooks)
        .err()
        .map(|e| e.to_string());
    assert!(e.as_deref().is_some_and(|e| e.contains("scripts/minilm.sh install")), "{e:?}");
    assert!(hooks.runs.is_empty(), "nothing trained");
}
