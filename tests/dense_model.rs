//! The dense embedder (all-MiniLM-L6-v2 in process) on its real weights.
//! They come from `scripts/minilm.sh install` (CI runs it first); where they
//! are absent each test says so and passes without checking anything.

use std::path::PathBuf;

use switchyard::retrieve::minilm::MiniLm;
use switchyard::retrieve::{EmbedError, Embedder};

fn weights() -> Option<PathBuf> {
    let data = std::env::var_os("SWITCHYARD_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/switchyard")))?;
    let dir = MiniLm::folder(&data);
    if dir.join("model.safetensors").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: no MiniLM weights in {} (run scripts/minilm.sh install)", dir.display());
        None
    }
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn questions_land_nearest_the_tool_that_answers_them() {
    let Some(dir) = weights() else { return };
    let m = MiniLm::load(&dir).unwrap();
    let texts = [
        "Where was Joe Edwards born?",
        "place of birth: retrieves the birthplace of a person.",
        "film director: gets the director of a film.",
        "Who directed the movie Alien?",
    ];
    let v = m.embed(&texts).unwrap();
    assert_eq!(v.len(), 4);
    assert!(v.iter().all(|x| x.len() == 384));
    for x in &v {
        assert!((cos(x, x) - 1.0).abs() < 1e-4, "not normalised");
    }
    assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]));
    assert!(cos(&v[3], &v[2]) > cos(&v[3], &v[1]));
}

#[test]
fn a_text_gets_the_same_vector_alone_or_padded_in_a_batch() {
    let Some(dir) = weights() else { return };
    let m = MiniLm::load(&dir).unwrap();
    let short = "weather";
    let long = "the weather forecast for the next seven days in a city, with temperature, wind and rain";
    let alone = m.embed(&[short]).unwrap().remove(0);
    let batched = m.embed(&[long, short]).unwrap().remove(1);
    let diff: f32 = alone.iter().zip(&batched).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(diff < 1e-4, "padding changed the vector by {diff}");
}

#[test]
fn a_corrupted_weight_file_is_refused_naming_it() {
    let Some(dir) = weights() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (name, _) in switchyard::retrieve::minilm::FILES {
        std::fs::copy(dir.join(name), tmp.path().join(name)).unwrap();
    }
    let mut cfg = std::fs::read(tmp.path().join("config.json")).unwrap();
    cfg.push(b' ');
    std::fs::write(tmp.path().join("config.json"), cfg).unwrap();
    let err = MiniLm::load(tmp.path()).err().expect("a changed file must be refused");
    assert!(matches!(err, EmbedError::Checksum { .. }), "{err}");
    assert!(err.to_string().contains("config.json"), "{err}");
    std::fs::remove_file(tmp.path().join("tokenizer.json")).unwrap();
    let err = MiniLm::load(tmp.path()).err().unwrap();
    assert!(err.to_string().contains("tokenizer.json") && err.to_string().contains("missing"), "{err}");
}

fn kamel() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/kamel");
    if dir.join("dev.jsonl").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: no KAMEL data in {}", dir.display());
        None
    }
}

/// CoTools' heads trained on KAMEL's annotated dev texts rank the right
/// relation first more often on its test questions (same 234 tools) than
/// the raw MiniLM vectors do. About 15 s in release, mostly embedding.
#[test]
fn heads_trained_on_kamel_beat_the_raw_embedder_on_its_test_questions() {
    use switchyard::dataset::cotools::{CallText, Question, ToolPool};
    use switchyard::retrieve::embed::dot;
    use switchyard::retrieve::train::{TrainOptions, rank_of, train_heads};
    let (Some(weights), Some(data)) = (weights(), kamel()) else { return };
    let m = MiniLm::load(&weights).unwrap();
    let pool = ToolPool::load(&data.join("tool.json")).unwrap();
    let pairs: Vec<(String, usize)> = CallText::load(&data.join("dev.jsonl"))
        .unwrap()
        .iter()
        .flat_map(|t| t.pairs())
        .filter_map(|(q, tool)| Some((q, pool.position(&tool)?)))
        .take(600)
        .collect();
    let test: Vec<(String, usize)> = Question::load_with_tools(&data.join("test_first_100.jsonl"))
        .unwrap()
        .into_iter()
        .filter_map(|q| Some((q.question, pool.position(q.tool.as_deref()?)?)))
        .take(200)
        .collect();
    let embed = |texts: Vec<String>| m.embed(&texts.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    let tools = embed(pool.tools.iter().map(|t| t.text()).collect());
    let queries = embed(pairs.iter().map(|p| p.0.clone()).collect());
    let questions = embed(test.iter().map(|p| p.0.clone()).collect());
    let train: Vec<(usize, usize)> = pairs.iter().enumerate().map(|(i, p)| (i, p.1)).collect();
    let opts = TrainOptions { epochs: 8, negatives: 0, ..TrainOptions::default() };
    let (heads, log) = train_heads(&queries, &tools, &train, &opts, m.id(), &mut |_| {}).unwrap();
    assert!(log.epoch_loss.last() < log.epoch_loss.first(), "{:?}", log.epoch_loss);
    let top1 = |q: &dyn Fn(&[f32]) -> Vec<f32>, t: &[Vec<f32>]| {
        let hits = questions
            .iter()
            .zip(&test)
            .filter(|(v, (_, gold))| rank_of(&t.iter().map(|t| dot(&q(v), t)).collect::<Vec<_>>(), *gold) == 0)
            .count();
        hits as f32 / test.len() as f32
    };
    let raw = top1(&|v| v.to_vec(), &tools);
    let trained = top1(&|v| heads.encode_query(v), &heads.encode_tools(&tools));
    eprintln!("KAMEL top-1 on {} test questions: raw {raw:.3}, heads {trained:.3}", test.len());
    assert!(trained > raw + 0.03, "heads {trained} vs raw {raw}");
}
