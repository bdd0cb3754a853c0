//! The retrieval layer as a user meets it: `[retrieval]` in the config, the
//! engine's Retrieved and RetrievalFallback events, their fold, the
//! retrieval pane, and the CoTools-format loaders on bad input. The real
//! dense model and embeddings endpoint are in `tests/dense_model.rs`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::{self, Scripted, call, finish, small_library};

use switchyard::config::Config;
use switchyard::dataset::{CallText, Question, ToolPool};
use switchyard::engine::fold::Entry;
use switchyard::engine::{Engine, EngineSetup, EventKind, LogicalClock, Models, SessionState, StrategyKind};
use switchyard::model::price::Price;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::embed::normalise;
use switchyard::retrieve::{EmbedError, Embedder, EmbedderKind, Retriever, Scored};
use switchyard::task::Task;
use switchyard::ui::panes::retrieval;
use switchyard::ui::{Navigation, PaneCtx, Theme};

fn parse(toml: &str) -> Result<Config, String> {
    Config::parse(toml, Path::new("/cfg/switchyard.toml")).map_err(|e| e.to_string())
}

#[test]
fn a_retrieval_section_is_read_and_a_bad_one_named_by_its_field() {
    let c =
        parse("[retrieval]\nembedder = \"minilm\"\nlexical_weight = 0.5\nheads = \"h.safetensors\"\nrequery = true\nminilm_weights = \"t.safetensors\"\nrescore = \"r.json\"\n")
            .unwrap();
    assert_eq!(c.retrieval.embedder, EmbedderKind::Minilm);
    assert_eq!(c.retrieval.heads.as_deref(), Some(Path::new("/cfg/h.safetensors")));
    assert_eq!(c.retrieval.minilm_weights.as_deref(), Some(Path::new("/cfg/t.safetensors")));
    assert_eq!(c.retrieval.rescore.as_deref(), Some(Path::new("/cfg/r.json")));
    assert!(c.retrieval.requery);
    let c = parse("[retrieval]\nembedder = \"minilm\"\ncross_encoder = \"c.safetensors\"\n").unwrap();
    assert_eq!(c.retrieval.cross_encoder.as_deref(), Some(Path::new("/cfg/c.safetensors")));
    assert_eq!(Config::default().retrieval.embedder, EmbedderKind::Lexical);
    for (toml, field) in [
        ("[retrieval]\nembedder = \"http\"\nmodel = \"m\"\n", "retrieval.url"),
        ("[retrieval]\nembedder = \"http\"\nurl = \"ftp://x\"\nmodel = \"m\"\n", "retrieval.url"),
        ("[retrieval]\nembedder = \"http\"\nurl = \"http://x/v1\"\n", "retrieval.model"),
        ("[retrieval]\nurl = \"http://x/v1\"\n", "retrieval.url"),
        ("[retrieval]\nlexical_weight = 1.5\n", "retrieval.lexical_weight"),
        ("[retrieval]\nheads = \"h\"\n", "retrieval.heads"),
        ("[retrieval]\nrescore = \"r.json\"\n", "retrieval.rescore"),
        ("[retrieval]\ncross_encoder = \"c\"\n", "retrieval.cross_encoder"),
        ("[retrieval]\nembedder = \"minilm\"\nrescore = \"r\"\ncross_encoder = \"c\"\n", "retrieval.cross_encoder"),
        ("[retrieval]\nembedder = \"mpnet\"\nminilm_weights = \"t\"\n", "retrieval.minilm_weights"),
        ("[retrieval]\nembedder = \"minilm\"\ndim = 0\n", "retrieval.dim"),
        ("[retrieval]\nembedder = \"word2vec\"\n", "word2vec"),
        ("[retrieval]\nembeder = \"minilm\"\n", "embeder"),
    ] {
        let err = parse(toml).expect_err(toml);
        assert!(err.contains(field), "{toml:?}: {err}");
    }
}

/// An embedder whose vectors count known words, and that fails from its
/// `fail_after`-th call on: an endpoint that goes down mid-session.
struct Flaky {
    calls: AtomicUsize,
    fail_after: usize,
}

const VOCAB: [&str; 6] = ["weather", "forecast", "capital", "country", "sum", "number"];

impl Embedder for Flaky {
    fn id(&self) -> &str {
        "flaky"
    }
    fn dim(&self) -> usize {
        VOCAB.len()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.fail_after {
            return Err(EmbedError::Endpoint {
                url: "http://127.0.0.1:9/v1/embeddings".into(),
                reason: "connection refused".into(),
            });
        }
        Ok(texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let mut v: Vec<f32> = VOCAB.iter().map(|w| t.matches(w).count() as f32 + 0.01).collect();
                normalise(&mut v);
                v
            })
            .collect())
    }
}

fn setup(model: Arc<Scripted>, embedder: Flaky) -> EngineSetup {
    let library = small_library();
    let mut s = EngineSetup::new(
        Arc::clone(&library),
        Models::single(model, Price { input_per_mtok: 0.0, output_per_mtok: 0.0 }),
        StrategyKind::React,
    );
    s.clock = Arc::new(LogicalClock::default());
    let mut cache = VectorCache::memory(VOCAB.len());
    let docs = library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str()));
    s.retriever = Some(Retriever::dense(docs, Arc::new(embedder), &mut cache, None, 0.3).unwrap());
    s
}

fn task(q: &str) -> Task {
    Task { id: "t".into(), query: q.into(), answer: Some("4".into()), ..Task::default() }
}

#[tokio::test]
async fn every_ranking_is_an_event_with_its_parts_and_a_failing_embedder_falls_back_to_bm25_visibly() {
    // Building the index is call 1; the first task's query is call 2; the
    // second task's query fails.
    let flaky = Flaky { calls: AtomicUsize::new(0), fail_after: 2 };
    let model = Scripted::new(&[&finish("4"), &finish("4")], "{}");
    let (mut engine, _h) = Engine::new(setup(model, flaky));
    let mut rx = engine.subscribe();
    let outcome =
        engine.run(vec![task("What is the sum of 2 and 2?"), task("What is the sum of 1 and 3?")]).await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    let s = &outcome.state;
    assert_eq!(s.finished.len(), 2, "both tasks ran despite the failure");
    let r = s.retrieval.as_ref().expect("a ranking was folded");
    assert_eq!(r.source, "bm25", "after the failure BM25 ranks alone");
    assert!(r.hits.iter().all(|h| h.dense.is_none()));
    let (from, reason) = s.retrieval_fallback.as_ref().expect("the fallback is in the state");
    assert!(from.contains("flaky") && reason.contains("connection refused"), "{from}: {reason}");
    // Folded up to the fallback, the running task's transcript says so.
    let at = events.iter().position(|e| matches!(e.kind, EventKind::RetrievalFallback { .. })).expect("the event");
    let mid = SessionState::from_events(&events[..=at]);
    let transcript = &mid.current.as_ref().expect("a run is under way").transcript;
    assert!(
        transcript.iter().any(|e| matches!(e, Entry::Note(n) if n.contains("BM25 ranks alone"))),
        "the fallback is a note in the transcript: {transcript:?}"
    );
}

#[tokio::test]
async fn the_first_ranking_carries_dense_scores_and_names_its_source() {
    let flaky = Flaky { calls: AtomicUsize::new(0), fail_after: usize::MAX };
    let model = Scripted::new(&[&call("calculator", serde_json::json!({"expression": "2+2"})), &finish("4")], "{}");
    let mut s = setup(model, flaky);
    s.params.top_k = 2;
    let (mut engine, _h) = Engine::new(s);
    let mut rx = engine.subscribe();
    engine.run(vec![task("What is the sum of 2 and 2?")]).await.unwrap();
    let mut retrieved = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let EventKind::Retrieved { source, hits, .. } = e.kind {
            retrieved.push((source, hits));
        }
    }
    let (source, hits) = retrieved.first().expect("a Retrieved event");
    assert_eq!(source, "bm25 0.30 + flaky 0.70");
    assert_eq!(hits.len(), 2);
    assert!(hits.iter().all(|h| h.dense.is_some() && h.head.is_none()));
    assert!(hits[0].score >= hits[1].score);
}

fn pane_text(state: &SessionState, w: u16, h: u16) -> String {
    let theme = Theme::default();
    let view = Navigation::default();
    let ctx = PaneCtx { state, nav: &view, theme: &theme, focused: false, now_ms: 0 };
    common::buffer_text(&common::render(w, h, |f| retrieval::render(f, f.area(), &ctx)))
}

#[test]
fn the_retrieval_pane_shows_the_source_and_each_score_part() {
    let mut s = SessionState::default();
    assert!(pane_text(&s, 60, 8).contains("no ranking yet"));
    let hit = |name: &str, score: f32, head: Option<f32>| Scored {
        name: name.into(),
        score,
        lexical: 3.5,
        dense: Some(0.41),
        head,
        rescore: None,
    };
    s.retrieval = Some(switchyard::engine::fold::RetrievalView {
        query: "Where was Joe Edwards born?".into(),
        source: "bm25 0.30 + minilm-l6-v2 0.70 + heads(stq.safetensors)".into(),
        hits: vec![
            hit("people/person/place_of_birth", 2.9, Some(0.8)),
            hit("location/location/containedby", 1.2, Some(0.3)),
        ],
    });
    insta::assert_snapshot!("retrieval_pane_with_heads", pane_text(&s, 72, 8));
    s.retrieval_fallback = Some(("http:nomic".into(), "connection refused".into()));
    let text = pane_text(&s, 72, 8);
    assert!(text.contains("http:nomic failed; BM25 alone: connection refused"), "{text}");

    // A re-scorer's score is a column of its own, for the candidates it re-ordered.
    s.retrieval_fallback = None;
    let view = s.retrieval.as_mut().unwrap();
    view.source.push_str(" + rescore(stq-rescore.json, top 1)");
    view.hits[0].rescore = Some(3.25);
    let text = pane_text(&s, 100, 8);
    assert!(text.contains("rescore") && text.contains("3.25"), "{text}");
    let second = text.lines().find(|l| l.contains("location/location/containedby")).unwrap();
    assert!(second.trim_end().trim_end_matches('│').trim_end().ends_with('-'), "{text}");
}

#[test]
fn the_papers_formats_load_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tool.json");
    std::fs::write(
        &tools,
        r#"{"tool_dict": {"<b>": 1, "<a>": 0}, "tool_information": {"<b>": {"tool_name": "<b>", "tool_description": "bee"}, "<a>": "ay(x): an a"}}"#,
    )
    .unwrap();
    let pool = ToolPool::load(&tools).unwrap();
    assert_eq!(pool.tools.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a", "b"], "tool_dict's order");
    assert_eq!(pool.tools[0].description, "ay(x): an a");

    let qs = dir.path().join("q.jsonl");
    std::fs::write(
        &qs,
        "{\"case_idx\": 3, \"question\": \"A?\", \"tool\": \"P1\", \"result\": \"x\"}\n\n{\"tool\": \"P2\"}\n",
    )
    .unwrap();
    let err = Question::load_with_tools(&qs).unwrap_err().to_string();
    assert!(err.contains("q.jsonl:3") && err.contains("`question`"), "{err}");
    std::fs::write(&qs, "{\"question\": \"A?\"}\n").unwrap();
    let err = Question::load_with_tools(&qs).unwrap_err().to_string();
    assert!(err.contains("q.jsonl:1") && err.contains("`tool`"), "{err}");

    let texts = dir.path().join("dev.jsonl");
    std::fs::write(&texts, "{\"text\": \"Question: Who?\\nAnswer: The answer is X\", \"start_str_idx\": [37], \"tool_calling\": [{\"call_tool\": \"<P1>\"}]}\n").unwrap();
    let pairs: Vec<(String, String)> = CallText::load(&texts).unwrap().iter().flat_map(CallText::pairs).collect();
    assert_eq!(pairs, vec![("Who?".to_string(), "P1".to_string())]);
    let as_questions = Question::load_with_tools(&texts).unwrap();
    assert_eq!(as_questions[0].tool.as_deref(), Some("P1"));
    std::fs::write(
        &texts,
        "{\"text\": \"abc\", \"start_str_idx\": [9], \"tool_calling\": [{\"call_tool\": \"<P1>\"}]}\n",
    )
    .unwrap();
    let err = CallText::load(&texts).unwrap_err().to_string();
    assert!(err.contains("dev.jsonl:1") && err.contains("start_str_idx[0]"), "{err}");
    std::fs::write(&tools, "{\"tool_dict\": {}}").unwrap();
    assert!(ToolPool::load(&tools).unwrap_err().to_string().contains("tool_information"));
}

/// Says a query needs a tool when its vector leans to the "sum"/"number"
/// words, as a trained judge would learn from labelled positions.
struct NumbersJudge;

impl switchyard::retrieve::ToolJudge for NumbersJudge {
    fn label(&self) -> &str {
        "numbers.safetensors"
    }
    fn judge(&self, h: &[f32]) -> (f32, bool) {
        let score = (h[4] + h[5]).clamp(0.0, 1.0);
        (score, score > 0.5)
    }
}

#[tokio::test]
async fn a_task_the_judge_finds_needs_no_tool_is_offered_only_the_answer() {
    let flaky = Flaky { calls: AtomicUsize::new(0), fail_after: usize::MAX };
    let model = Scripted::new(
        &[&finish("hi"), &call("calculator", serde_json::json!({"expression": "2+2"})), &finish("4")],
        "{}",
    );
    let mut s = setup(model, flaky);
    s.retriever = s.retriever.map(|r| r.with_judge(Arc::new(NumbersJudge)));
    let (mut engine, _h) = Engine::new(s);
    let mut rx = engine.subscribe();
    engine.run(vec![task("Say hello to the weather"), task("What is the sum of the number 2 and 2?")]).await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    let judged: Vec<(u32, bool)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolJudged { needed, judge, .. } => {
                assert_eq!(judge, "numbers.safetensors");
                Some((e.run, *needed))
            }
            _ => None,
        })
        .collect();
    assert_eq!(judged, vec![(1, false), (2, true)]);
    let offered = |run: u32| {
        events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::Candidates { offered, .. } if e.run == run => {
                    Some(offered.iter().map(|o| o.name.clone()).collect::<Vec<_>>())
                }
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(offered(1), vec!["finish"]);
    assert!(offered(2).contains(&"calculator".to_string()), "{:?}", offered(2));
}

#[test]
fn synthetic_questions_are_written_for_every_tool_and_a_second_run_goes_on() {
    use crate::cli_helpers::{fails, run, s};
    let dir = tempfile::tempdir().unwrap();
    let pool = dir.path().join("tool.json");
    let tools = serde_json::json!({"tool_information": {
        "<people/person/place_of_birth>": {"tool_name": "<people/person/place_of_birth>", "tool_description": "place of birth: retrieves the birthplace of a person."},
        "<film/film/genre>": "genre: specifies the category of a film.",
        "<music/release/track>": "track: identifies the track released by a musician or band."
    }});
    std::fs::write(&pool, tools.to_string()).unwrap();
    let out = dir.path().join("synth.jsonl");
    let args = ["retrieval", "synth", "--tools", s(&pool), "--out", s(&out), "--per-tool", "2"];
    let first = run(&args);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let written = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<serde_json::Value> = written.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 6, "{written}");
    for l in &lines {
        assert_eq!(l["synthetic"], true);
        // The simulated model asks the id's relation, read from the prompt.
        let relation = l["tool"].as_str().unwrap().rsplit('/').next().unwrap().replace('_', " ");
        assert!(l["question"].as_str().unwrap().contains(&relation), "{l}");
    }
    // The file is a question file with `tool`: retrieval eval reads it.
    let eval = run(&["retrieval", "eval", "--tools", s(&pool), "--questions", s(&out), "--json"]);
    assert!(eval.status.success(), "{}", String::from_utf8_lossy(&eval.stderr));

    let again = run(&args);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("0 tools to ask for, 3 already in"));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), written, "nothing asked twice");

    let err = fails(&["retrieval", "synth", "--tools", s(&pool), "--out", s(&out), "--model", "nowhere"]);
    assert!(err.contains("no model named 'nowhere'"), "{err}");
    std::fs::write(&out, format!("{written}{{\"question\": 1}}\n")).unwrap();
    let err = fails(&args);
    assert!(err.contains("synth.jsonl:7: not a synthetic question"), "{err}");
}

#[test]
fn a_model_re_ranks_the_top_candidates_and_the_report_says_what_it_moved() {
    use crate::cli_helpers::{fails, run, s};
    let dir = tempfile::tempdir().unwrap();
    let pool = dir.path().join("tool.json");
    let tools = serde_json::json!({"tool_information": {
        "<people/person/place_of_birth>": "place of birth: the city or town where a person was born.",
        "<location/location/people_born_here>": "people born here: lists people who were born in a location.",
        "<music/artist/track>": "track: a track recorded by a music artist.",
        "<music/release/track>": "track: a track on a music release, such as an album."
    }});
    std::fs::write(&pool, tools.to_string()).unwrap();
    let questions = dir.path().join("q.jsonl");
    let lines = [
        ("Where was Ada Lovelace born?", "people/person/place_of_birth"),
        ("Who was born here in Lima?", "location/location/people_born_here"),
        ("Name a track by the artist Nina Simone.", "music/artist/track"),
        ("Which track is on the release Blue Train?", "music/release/track"),
        ("Which people were born in the town of Osaka?", "location/location/people_born_here"),
        ("What town was the person Ada born in?", "people/person/place_of_birth"),
    ];
    let text: String =
        lines.iter().map(|(q, t)| serde_json::json!({"question": q, "tool": t}).to_string() + "\n").collect();
    std::fs::write(&questions, text).unwrap();
    let eval = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["retrieval", "eval", "--tools", s(&pool), "--questions", s(&questions), "--json"];
        args.extend(extra);
        let out = run(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let refused = |extra: &[&str]| -> String {
        let mut args = vec!["retrieval", "eval", "--tools", s(&pool), "--questions", s(&questions)];
        args.extend(extra);
        fails(&args)
    };
    let plain = eval(&[]);
    assert!(plain.get("rerank").is_none(), "{plain}");
    // Every question not ranked first is written, with its gold tool's rank
    // and the tools ranked above it; the rest are not.
    let misses_at = dir.path().join("misses.jsonl");
    eval(&["--misses", s(&misses_at)]);
    let misses: Vec<serde_json::Value> =
        std::fs::read_to_string(&misses_at).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let missed = (lines.len() as f64 * (1.0 - plain["top1"].as_f64().unwrap())).round() as usize;
    assert!(missed > 0, "{plain}");
    assert_eq!(misses.len(), missed, "{misses:?}");
    for m in &misses {
        let gold = m["tool"].as_str().unwrap();
        assert!(lines.iter().any(|(q, t)| *q == m["question"] && *t == gold), "{m}");
        let top: Vec<&str> = m["top"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        assert_ne!(top[0], gold, "{m}");
        let rank = m["rank"].as_u64().unwrap() as usize;
        assert_eq!(top.iter().position(|t| *t == gold), Some(rank - 1).filter(|r| *r < 5), "{m}");
    }
    let err = refused(&["--misses", s(&dir.path().join("no/such/dir/m.jsonl"))]);
    assert!(err.contains("--misses") && err.contains("m.jsonl"), "{err}");
    // The simulated judge picks the candidate sharing most words with the
    // question, which is not always BM25's first.
    let reranked = eval(&["--rerank-model", "sim", "--rerank-top", "3"]);
    let r = &reranked["rerank"];
    let n = lines.len() as f64;
    assert_eq!((r["top"].as_u64(), r["chosen"].as_u64(), r["failed"].as_u64()), (Some(3), Some(6), Some(0)), "{r}");
    assert!(r["moved"].as_u64().unwrap() > 0, "{r}");
    let gained = r["moved_to_gold"].as_f64().unwrap() - r["moved_from_gold"].as_f64().unwrap();
    let top1 = |v: &serde_json::Value| v["top1"].as_f64().unwrap();
    assert!((top1(&reranked) - top1(&plain) - gained / n).abs() < 1e-9, "{plain}\n{reranked}");

    let err = refused(&["--rerank-model", "gone"]);
    assert!(err.contains("no model named 'gone'"), "{err}");
    let err = refused(&["--rerank-model", "sim", "--rerank-top", "1"]);
    assert!(err.contains("--rerank-top"), "{err}");
}

#[test]
fn retrieval_search_ranks_the_library_and_the_old_name_still_answers_unlisted() {
    use crate::cli_helpers::run;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let search = |first: &[&str]| {
        let mut args = vec!["--data-dir", data];
        args.extend_from_slice(first);
        args.extend_from_slice(&["--task", "Which day of the week was 1 March 2020?", "-k", "3", "--json"]);
        let out = run(&args);
        assert!(out.status.success(), "{first:?}: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let found = search(&["retrieval", "search"]);
    let hits = found["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3, "{found}");
    assert_eq!(hits[0]["name"], "weekday_of", "{found}");
    assert_eq!(search(&["retrieve"]), found, "the name before answers the same");
    let help = String::from_utf8_lossy(&run(&["--help"]).stdout).into_owned();
    assert!(help.contains("\n  retrieval "), "{help}");
    assert!(!help.contains("\n  retrieve "), "one retrieval family in the help: {help}");
}
