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
