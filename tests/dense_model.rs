//! The dense embedders in process (all-MiniLM-L6-v2, all-mpnet-base-v2) on
//! their real weights. They come from `scripts/minilm.sh install` and
//! `scripts/mpnet.sh install` (CI runs both first); where they are absent
//! each test says so and passes without checking anything.

use std::path::{Path, PathBuf};

use switchyard::dense::minilm::MiniLm;
use switchyard::dense::mpnet::MpNet;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::http_embed::{HttpEmbedConfig, HttpEmbedder};
use switchyard::retrieve::{EmbedError, Embedder, Retriever};

fn data_dir() -> Option<PathBuf> {
    std::env::var_os("SWITCHYARD_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/switchyard")))
}

fn installed(dir: PathBuf, install: &str) -> Option<PathBuf> {
    if dir.join("model.safetensors").exists() {
        Some(dir)
    } else {
        eprintln!("skipped: no weights in {} (run {install})", dir.display());
        None
    }
}

fn weights() -> Option<PathBuf> {
    installed(MiniLm::folder(&data_dir()?), "scripts/minilm.sh install")
}

fn mpnet_weights() -> Option<PathBuf> {
    installed(MpNet::folder(&data_dir()?), "scripts/mpnet.sh install")
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Two questions, each nearer the tool that answers it than the other's.
fn questions_land_nearest_their_tools(m: &dyn Embedder) {
    let texts = [
        "Where was Joe Edwards born?",
        "place of birth: retrieves the birthplace of a person.",
        "film director: gets the director of a film.",
        "Who directed the movie Alien?",
    ];
    let v = m.embed(&texts).unwrap();
    assert_eq!(v.len(), 4);
    assert!(v.iter().all(|x| x.len() == m.dim()));
    for x in &v {
        assert!((cos(x, x) - 1.0).abs() < 1e-4, "not normalised");
    }
    assert!(cos(&v[0], &v[1]) > cos(&v[0], &v[2]));
    assert!(cos(&v[3], &v[2]) > cos(&v[3], &v[1]));
}

#[test]
fn questions_land_nearest_the_tool_that_answers_them() {
    let Some(dir) = weights() else { return };
    let m = MiniLm::load(&dir).unwrap();
    assert_eq!(m.dim(), 384);
    questions_land_nearest_their_tools(&m);
}

#[test]
fn mpnet_lands_questions_nearest_their_tools_and_paraphrases_nearest_each_other() {
    let Some(dir) = mpnet_weights() else { return };
    let m = MpNet::load(&dir).unwrap();
    assert_eq!(m.dim(), 768);
    questions_land_nearest_their_tools(&m);
    let v = m.embed(&["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]).unwrap();
    // The similarities the model's card gives for these three sentences
    // (sentence-transformers, PyTorch): MPNet as written here matches it.
    let got = [cos(&v[0], &v[1]), cos(&v[0], &v[2]), cos(&v[1], &v[2])];
    let card = [0.6817, 0.0492, 0.0421];
    assert!(got.iter().zip(card).all(|(g, c)| (g - c).abs() < 1e-3), "{got:?} against the card's {card:?}");
    same_vector_alone_or_padded(&m);
}

/// Padding to a longer text in the batch must leave a vector as it was: the
/// mask hides padding, and MPNet's positions count real tokens only.
fn same_vector_alone_or_padded(m: &dyn Embedder) {
    let short = "weather";
    let long = "the weather forecast for the next seven days in a city, with temperature, wind and rain";
    let alone = m.embed(&[short]).unwrap().remove(0);
    let batched = m.embed(&[long, short]).unwrap().remove(1);
    let diff: f32 = alone.iter().zip(&batched).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    assert!(diff < 1e-4, "padding changed the vector by {diff}");
}

#[test]
fn a_text_gets_the_same_vector_alone_or_padded_in_a_batch() {
    let Some(dir) = weights() else { return };
    same_vector_alone_or_padded(&MiniLm::load(&dir).unwrap());
}

#[test]
fn a_corrupted_weight_file_is_refused_naming_it() {
    let Some(dir) = weights() else { return };
    let tmp = tempfile::tempdir().unwrap();
    for (name, _) in switchyard::dense::minilm::FILES.list {
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

#[test]
fn a_model_not_installed_is_named_with_the_script_that_installs_it() {
    let empty = tempfile::tempdir().unwrap();
    let err = MpNet::load(empty.path()).err().expect("no files, no model");
    assert!(matches!(err, EmbedError::Missing { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("model.safetensors") && text.contains("scripts/mpnet.sh install"), "{text}");
    let err = MiniLm::load(empty.path()).err().unwrap().to_string();
    assert!(err.contains("scripts/minilm.sh install"), "{err}");
}

/// How the test endpoint answers: OpenAI's shape, one vector cut to the
/// wrong length, or per-token vectors (a llama.cpp server without pooling).
#[derive(Clone, Copy)]
enum Reply {
    Pooled,
    Short,
    PerToken,
}

/// An OpenAI-compatible `/v1/embeddings` endpoint on a real socket, whose
/// vectors are the real MiniLM's. Serves until the test process ends.
fn serve(model: std::sync::Arc<MiniLm>, reply: Reply) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            let mut auth = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if lower.starts_with("authorization:") {
                    auth = line.trim().to_owned();
                }
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).unwrap();
            let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let inputs: Vec<String> =
                req["input"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
            let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
            let vectors = model.embed(&refs).unwrap();
            let data: Vec<serde_json::Value> = vectors
                .into_iter()
                .enumerate()
                .map(|(i, v)| {
                    let embedding = match reply {
                        Reply::Pooled => serde_json::json!(v),
                        Reply::Short => serde_json::json!(v[..100]),
                        Reply::PerToken => serde_json::json!([v.clone(), v]),
                    };
                    serde_json::json!({"object": "embedding", "index": i, "embedding": embedding})
                })
                .collect();
            let out =
                serde_json::json!({"object": "list", "data": data, "model": req["model"], "auth": auth}).to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{out}",
                out.len()
            );
        }
    });
    url
}

fn endpoint(url: &str, dim: Option<usize>) -> HttpEmbedConfig {
    HttpEmbedConfig { base_url: url.into(), model: "all-minilm".into(), api_key_env: None, dim, timeout_ms: 10_000 }
}

#[test]
fn an_embeddings_endpoint_gives_the_same_ranking_as_the_model_in_process() {
    let Some(dir) = weights() else { return };
    let model = std::sync::Arc::new(MiniLm::load(&dir).unwrap());
    let url = serve(std::sync::Arc::clone(&model), Reply::Pooled);
    let http = HttpEmbedder::connect(endpoint(&url, Some(384))).unwrap();
    assert_eq!((http.id(), http.dim()), ("http:all-minilm", 384));
    let texts = ["Where was Joe Edwards born?", "place of birth: the birthplace of a person"];
    let remote = http.embed(&texts).unwrap();
    let local = model.embed(&texts).unwrap();
    for (r, l) in remote.iter().zip(&local) {
        let diff = r.iter().zip(l).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(diff < 1e-5, "{diff}");
    }
}

#[test]
fn a_wrong_dimension_a_per_token_reply_and_a_server_that_is_down_are_named() {
    let Some(dir) = weights() else { return };
    let model = std::sync::Arc::new(MiniLm::load(&dir).unwrap());
    let pooled = serve(std::sync::Arc::clone(&model), Reply::Pooled);
    let err = HttpEmbedder::connect(endpoint(&pooled, Some(768))).unwrap_err();
    assert!(matches!(err, EmbedError::Dimension { got: 384, want: 768, .. }), "{err}");
    assert!(err.to_string().contains(&pooled), "names the endpoint: {err}");

    let short = serve(std::sync::Arc::clone(&model), Reply::Short);
    let err = HttpEmbedder::connect(endpoint(&short, Some(384))).unwrap_err();
    assert!(err.to_string().contains("100 dimensions, expected 384"), "{err}");

    let tokens = serve(std::sync::Arc::clone(&model), Reply::PerToken);
    let err = HttpEmbedder::connect(endpoint(&tokens, None)).unwrap_err().to_string();
    assert!(err.contains("per-token") && err.contains("data[0].embedding"), "{err}");

    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let err = HttpEmbedder::connect(endpoint(&format!("http://{closed}/v1"), None)).unwrap_err().to_string();
    assert!(err.contains(&format!("http://{closed}/v1/embeddings")), "{err}");

    // A key named but not set is said before any request, without a value.
    let mut cfg = endpoint(&pooled, None);
    cfg.api_key_env = Some("SWITCHYARD_TEST_UNSET_EMBED_KEY".into());
    let err = HttpEmbedder::connect(cfg).unwrap_err().to_string();
    assert!(err.contains("SWITCHYARD_TEST_UNSET_EMBED_KEY"), "{err}");
}

#[test]
fn minilm_ranks_a_real_benchmark_better_than_bm25_alone() {
    let Some(dir) = weights() else { return };
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/kamel");
    if !data.join("tool.json").exists() {
        eprintln!("skipped: no {} (../shared/data)", data.display());
        return;
    }
    use switchyard::dataset::{Question, ToolPool};
    use switchyard::eval::retrieval::{evaluate, pool_docs};
    let pool = ToolPool::load(&data.join("tool.json")).unwrap();
    let qs = Question::load_with_tools(&data.join("test_first_60.jsonl")).unwrap();
    let docs = pool_docs(&pool);
    let refs = || docs.iter().map(|(n, t)| (n.as_str(), t.as_str()));
    let lexical = evaluate(&Retriever::lexical(refs()), &qs, &mut |_, _| {}).unwrap();
    let embedder = std::sync::Arc::new(MiniLm::load(&dir).unwrap());
    let mut cache = VectorCache::memory(384);
    let hybrid = Retriever::dense(refs(), embedder, &mut cache, None, 0.3).unwrap();
    let hybrid = evaluate(&hybrid, &qs, &mut |_, _| {}).unwrap();
    eprintln!(
        "KAMEL test_first_60: bm25 top-1 {:.3} top-5 {:.3}; hybrid top-1 {:.3} top-5 {:.3}",
        lexical.top1, lexical.top5, hybrid.top1, hybrid.top5
    );
    assert_eq!(hybrid.questions, 500);
    assert!(hybrid.top5 > lexical.top5, "{hybrid:?} vs {lexical:?}");
    assert!(hybrid.mrr > lexical.mrr);
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
    use switchyard::lab::train::{TrainOptions, rank_of, train_heads};
    use switchyard::retrieve::embed::dot;
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
            .filter(|(v, (_, gold))| {
                let v = q(v);
                rank_of(&t.iter().map(|t| dot(&v, t)).collect::<Vec<_>>(), *gold) == 0
            })
            .count();
        hits as f32 / test.len() as f32
    };
    let raw = top1(&|v| v.to_vec(), &tools);
    let trained = top1(&|v| heads.encode_query(v), &heads.encode_tools(&tools));
    eprintln!("KAMEL top-1 on {} test questions: raw {raw:.3}, heads {trained:.3}", test.len());
    assert!(trained > raw + 0.03, "heads {trained} vs raw {raw}");
}

/// `retrieval tune`'s trainable MiniLM computes what the installed one
/// does, and its saved weights load back into the embedder sessions use.
#[test]
fn the_tunable_minilm_embeds_as_the_installed_one_and_saves_for_it() {
    use switchyard::lab::minilm_tune::TunableMiniLm;
    let Some(dir) = weights() else { return };
    let texts = ["Where was Joe Edwards born?", "film director: gets the director of a film.", "hi"];
    let base = MiniLm::load(&dir).unwrap().embed(&texts).unwrap();
    let tunable = TunableMiniLm::load(&dir).unwrap();
    let ours = tunable.embed(&texts).unwrap();
    let most = |a: &[Vec<f32>], b: &[Vec<f32>]| {
        a.iter().flatten().zip(b.iter().flatten()).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max)
    };
    assert!(most(&base, &ours) < 1e-4, "differs by {}", most(&base, &ours));
    let file = tempfile::tempdir().unwrap();
    let path = file.path().join("tuned.safetensors");
    tunable.save(&path).unwrap();
    let reloaded = MiniLm::load_tuned(&dir, &path).unwrap();
    assert!(reloaded.id().starts_with("minilm-l6-v2-tuned-") && reloaded.id() != MiniLm::load(&dir).unwrap().id());
    assert!(most(&base, &reloaded.embed(&texts).unwrap()) < 1e-4);
}

/// A few steps on made-up names move each question to the tool it was
/// paired with, and the tuned file gives the session embedder the same
/// vectors as the model that was trained.
#[test]
fn tuning_moves_questions_to_their_tools() {
    use switchyard::lab::minilm_tune::{TunableMiniLm, TuneOptions};
    let Some(dir) = weights() else { return };
    let tools =
        ["weather: the forecast for a city", "stocks: the price of a share", "flights: departures from an airport"];
    // Words the model has no reason to tie to these tools.
    let questions = ["what does zorblat say for Paris", "give me the quintrel of ACME", "any vembrik out of Berlin"];
    let right = |m: &TunableMiniLm| {
        let t = m.embed(&tools).unwrap();
        let q = m.embed(&questions).unwrap();
        (0..3).filter(|&i| (0..3).all(|j| j == i || cos(&q[i], &t[i]) > cos(&q[i], &t[j]))).count()
    };
    let m = TunableMiniLm::load(&dir).unwrap();
    let before = right(&m);
    let opts = TuneOptions { lr: 1e-4, ..TuneOptions::default() };
    let mut opt = m.optimiser(&opts).unwrap();
    let losses: Vec<f32> =
        (0..8).map(|_| m.step(&mut opt, &questions, &tools, &[0, 1, 2], opts.temperature).unwrap()).collect();
    assert!(losses.last() < losses.first(), "{losses:?}");
    assert_eq!(right(&m), 3, "before tuning {before} of 3 were nearest their tool; losses {losses:?}");
    assert!(before < 3, "the test needs questions the installed model gets wrong");
    let file = tempfile::tempdir().unwrap();
    let path = file.path().join("tuned.safetensors");
    m.save(&path).unwrap();
    let session = MiniLm::load_tuned(&dir, &path).unwrap();
    let (a, b) = (session.embed(&questions).unwrap(), m.embed(&questions).unwrap());
    assert!(a.iter().flatten().zip(b.iter().flatten()).all(|(x, y)| (x - y).abs() < 1e-4));
}

#[test]
fn a_tuned_weight_file_that_is_missing_or_not_safetensors_is_named() {
    let Some(dir) = weights() else { return };
    let file = tempfile::tempdir().unwrap();
    let missing = file.path().join("none.safetensors");
    let e = MiniLm::load_tuned(&dir, &missing).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("none.safetensors") && e.contains("retrieval tune"), "{e}");
    let junk = file.path().join("junk.safetensors");
    std::fs::write(&junk, b"not a tensor file").unwrap();
    let e = MiniLm::load_tuned(&dir, &junk).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("junk.safetensors"), "{e}");
}

/// A fresh data directory whose MiniLM is the installed one (None without it),
/// for the commands run as a user would.
fn data_with_minilm() -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = weights()?;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::os::unix::fs::symlink(&dir, MiniLm::folder(&data)).unwrap();
    Some((tmp, data))
}

/// `heads train` and `retrieval tune` read the same split flags, so a tuned
/// MiniLM and the heads trained on it hold out the same tools.
#[test]
fn heads_train_and_tune_hold_out_the_same_tools_from_the_same_flags() {
    let Some((tmp, data)) = data_with_minilm() else { return };
    let topics = [
        "weather", "stocks", "flights", "recipes", "movies", "books", "trains", "hotels", "music", "news", "sports",
        "maps",
    ];
    let info: serde_json::Map<String, serde_json::Value> =
        topics.iter().map(|t| (format!("<{t}/item/{t}_info>"), format!("{t}: facts about {t}").into())).collect();
    let pool = tmp.path().join("tool.json");
    std::fs::write(&pool, serde_json::json!({ "tool_information": info }).to_string()).unwrap();
    let questions = tmp.path().join("q.jsonl");
    let lines: String = topics
        .iter()
        .flat_map(|t| {
            [format!("tell me about {t} today"), format!("what is new in {t}?")]
                .map(|q| serde_json::json!({"question": q, "tool": format!("{t}/item/{t}_info")}).to_string() + "\n")
        })
        .collect();
    std::fs::write(&questions, lines).unwrap();
    let split = ["--holdout", "0.25", "--validation", "0.34", "--seed", "5", "--tool-text", "phrase"];
    let run = |args: &[&str]| -> serde_json::Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .args(["--data-dir", data.to_str().unwrap(), "retrieval"])
            .args(args)
            .args(["--tools", pool.to_str().unwrap(), "--train", questions.to_str().unwrap(), "--json"])
            .args(split)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let tuned_at = tmp.path().join("tuned.safetensors");
    let tune = run(&["tune", "--epochs", "1", "--out", tuned_at.to_str().unwrap()]);
    let heads_at = tmp.path().join("heads.safetensors");
    let heads = run(&["heads", "train", "--epochs", "2", "--out", heads_at.to_str().unwrap()]);
    assert_eq!(tune["held_out_tools"], 3, "{tune}");
    let heads = &heads["summary"];
    assert_eq!(heads["seed"], 5, "{heads}");
    for key in ["held_out_tools", "validation_tools", "trained_tools", "pairs"] {
        assert_eq!(tune[key], heads[key], "{key}: {tune}\n{heads}");
    }
    assert!(tuned_at.exists() && heads_at.exists());
}

#[test]
fn a_rescorer_learns_which_way_a_relation_runs_and_the_retriever_uses_it() {
    let Some((tmp, data)) = data_with_minilm() else { return };
    let (pool, questions) = genre_relations(tmp.path());
    let run = |args: &[&str]| run_json(&data, args);
    let rescore = tmp.path().join("rescore.json");
    let (pool_s, questions_s, rescore_s) =
        (pool.to_str().unwrap(), questions.to_str().unwrap(), rescore.to_str().unwrap());
    let trained = run(&[
        "retrieval",
        "rescore",
        "train",
        "--tools",
        pool_s,
        "--train",
        questions_s,
        "--holdout",
        "0",
        "--validation",
        "0.3",
        "--k",
        "4",
        "--out",
        rescore_s,
        "--json",
    ]);
    let (before, after) = (&trained["trained"]["validation_before"], &trained["trained"]["validation_after"]);
    assert!(after["top1"].as_f64() > before["top1"].as_f64(), "{trained:#}");
    assert!(trained["weights"]["property_before_type"].as_f64().unwrap() > 0.0, "{trained:#}");

    let eval = |extra: &[&str]| {
        let mut args = vec!["retrieval", "eval", "--tools", pool_s, "--questions", questions_s, "--json"];
        args.extend_from_slice(extra);
        run(&args)
    };
    let (plain, rescored) = (eval(&[]), eval(&["--rescore", rescore_s]));
    assert!(rescored["source"].as_str().unwrap().ends_with("+ rescore(rescore.json, top 4)"), "{rescored}");
    assert!(rescored["top1"].as_f64() > plain["top1"].as_f64(), "{plain}\n{rescored}");

    // The sessions' retriever (here over the sample library) re-scores its first candidates too.
    let hits = run(&[
        "retrieval",
        "search",
        "--task",
        "What is the weather in Paris?",
        "-k",
        "6",
        "--rescore",
        rescore_s,
        "--json",
    ]);
    assert!(hits["source"].as_str().unwrap().ends_with("+ rescore(rescore.json, top 4)"), "{hits:#}");
    let rescored: Vec<bool> = hits["hits"].as_array().unwrap().iter().map(|h| h["rescore"].is_number()).collect();
    assert_eq!(rescored, [true, true, true, true, false, false], "{hits:#}");
}

/// Each kind of work has a relation and its inverse, with the same words
/// in other roles: the pool and its questions, written in `tmp`.
fn genre_relations(tmp: &Path) -> (PathBuf, PathBuf) {
    let kinds =
        ["film", "book", "album", "game", "play", "opera", "poem", "comic", "podcast", "painting", "ballet", "novel"];
    let mut info = serde_json::Map::new();
    let mut lines = String::new();
    for k in kinds {
        info.insert(format!("<media/{k}/genre>"), format!("genre: the genre of a {k}").into());
        info.insert(format!("<media/genre/{k}s>"), format!("{k}s: the {k}s of a genre").into());
        for (i, name) in ["Alpha", "Beta", "Gamma", "Delta"].iter().enumerate() {
            let q = if i % 2 == 0 {
                format!("What genre of {k} is {name}?")
            } else {
                format!("Which genre is the {k} {name} in?")
            };
            lines += &(serde_json::json!({"question": q, "tool": format!("media/{k}/genre")}).to_string() + "\n");
            let q = format!("Name a {k} of the {name} genre.");
            lines += &(serde_json::json!({"question": q, "tool": format!("media/genre/{k}s")}).to_string() + "\n");
        }
    }
    let pool = tmp.join("tool.json");
    std::fs::write(&pool, serde_json::json!({ "tool_information": info }).to_string()).unwrap();
    let questions = tmp.join("q.jsonl");
    std::fs::write(&questions, lines).unwrap();
    (pool, questions)
}

/// Runs switchyard on `data` with MiniLM as the embedder; its JSON output.
fn run_json(data: &Path, args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .args(["--data-dir", data.to_str().unwrap()])
        .args(args)
        .args(["--embedder", "minilm"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
}

#[test]
fn a_cross_encoder_learns_which_way_a_relation_runs_and_the_retriever_uses_it() {
    let Some((tmp, data)) = data_with_minilm() else { return };
    let (pool, questions) = genre_relations(tmp.path());
    let cross = tmp.path().join("cross.safetensors");
    let (pool_s, questions_s, cross_s) = (pool.to_str().unwrap(), questions.to_str().unwrap(), cross.to_str().unwrap());
    let trained = run_json(
        &data,
        &[
            "retrieval",
            "cross",
            "train",
            "--tools",
            pool_s,
            "--train",
            questions_s,
            "--holdout",
            "0",
            "--validation",
            "0.3",
            "--k",
            "4",
            "--epochs",
            "4",
            "--lr",
            "1e-4",
            "--out",
            cross_s,
            "--json",
        ],
    );
    let losses: Vec<f64> = trained["losses"].as_array().unwrap().iter().map(|l| l.as_f64().unwrap()).collect();
    assert!(losses.last() < losses.first(), "{trained:#}");
    let before = trained["validation_before"]["top1"].as_f64().unwrap();
    let alone = trained["validation_by_blend"][0]["figures"]["top1"].as_f64().unwrap();
    assert!(alone > before, "the pair scores alone beat the retriever on unseen tools: {trained:#}");

    let eval = |extra: &[&str]| {
        let mut args = vec!["retrieval", "eval", "--tools", pool_s, "--questions", questions_s, "--json"];
        args.extend_from_slice(extra);
        run_json(&data, &args)
    };
    let (plain, crossed) = (eval(&[]), eval(&["--cross-encoder", cross_s]));
    assert!(crossed["source"].as_str().unwrap().ends_with("+ rescore(cross cross.safetensors, top 4)"), "{crossed}");
    assert!(crossed["top1"].as_f64() > plain["top1"].as_f64(), "{plain}\n{crossed}");

    // The sessions' retriever (here over the sample library) reads its first candidates with the task.
    let hits = run_json(
        &data,
        &[
            "retrieval",
            "search",
            "--task",
            "What is the weather in Paris?",
            "-k",
            "6",
            "--cross-encoder",
            cross_s,
            "--json",
        ],
    );
    let scored: Vec<bool> = hits["hits"].as_array().unwrap().iter().map(|h| h["rescore"].is_number()).collect();
    assert_eq!(scored, [true, true, true, true, false, false], "{hits:#}");
}

#[test]
fn a_cross_encoder_file_that_is_missing_or_only_minilm_is_named() {
    use switchyard::dense::CrossEncoder;
    use switchyard::lab::cross::{CrossOptions, CrossTrainer, Group};
    use switchyard::lab::minilm_tune::TunableMiniLm;
    let Some(dir) = weights() else { return };
    let file = tempfile::tempdir().unwrap();
    let missing = file.path().join("none.safetensors");
    let e = CrossEncoder::load(&dir, &missing).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("none.safetensors") && e.contains("retrieval cross train"), "{e}");
    // A tuned MiniLM has no head.
    let tuned = file.path().join("tuned.safetensors");
    TunableMiniLm::load(&dir).unwrap().save(&tuned).unwrap();
    let e = CrossEncoder::load(&dir, &tuned).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("tuned.safetensors") && e.contains("not a cross-encoder"), "{e}");
    // A trained one loads back with its settings, and candle's BERT reads
    // it as the trainer's graph does.
    let c = CrossTrainer::new(&dir, &dir.join("model.safetensors"), 3).unwrap();
    let (born, born_here) = ("place of birth: where a person was born", "people born here: who was born in a place");
    let groups = [Group { query: "Where was Joe born?".into(), texts: vec![born.into(), born_here.into()], gold: 0 }];
    let opts = CrossOptions { epochs: 2, questions: 1, ..CrossOptions::default() };
    c.train(&groups, &opts, &mut |_, _, _, _| {}).unwrap();
    let saved = file.path().join("cross.safetensors");
    c.save(&saved, 0.5).unwrap();
    let back = CrossEncoder::load(&dir, &saved).unwrap();
    assert_eq!((back.k, back.blend), (3, 0.5));
    let pairs = [("Where was Joe born?", born), ("Where was Joe born?", born_here)];
    let (read, trained) = (back.scores(&pairs).unwrap(), c.scores(&pairs).unwrap());
    assert!(trained[0] > trained[1], "the head learnt the pair: {trained:?}");
    for (r, t) in read.iter().zip(&trained) {
        assert!((r - t).abs() < 1e-3, "loaded {read:?} against trained {trained:?}");
    }
}
