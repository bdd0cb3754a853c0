//! Retrieval speed (criterion):
//!
//! - `top5_16k`: top-5 by cosine over 16,000 tools × 384 dimensions in the
//!   exact index (one contiguous matrix), per query, the query vector given.
//!   Goal: ≤ 2 ms.
//! - `hybrid_16k`: the whole dense-and-BM25 ranking of a query over 16,000
//!   tool descriptions (BM25 over every document, cosine, z-score blend,
//!   top-5), the query vector already cached.
//! - `hybrid_rescored_16k`: the same with the first 10 candidates re-ordered
//!   by a re-scorer (`retrieval rescore train`): their features and sort.
//! - `minilm/load`, `minilm/embed_32`, `mpnet/load`, `mpnet/embed_32`: each
//!   dense model's load (files checked by sha256, weights mapped) and a
//!   batch of 32 sentences, whose time gives sentences/s.
//! - `minilm/query_16k`, `mpnet/query_16k`: a new query's whole latency over
//!   16,000 tools with that model: the query embedded, then the blended
//!   ranking (the tools' vectors as cached).
//! - `cross_encoder/query_16k`: `hybrid_16k`'s ranking, then MiniLM as a
//!   cross-encoder (`retrieval cross train`) reading the query with each of
//!   the first 5 candidates and re-ordering them.
//!
//! A model's benches are skipped, with the reason printed, without its
//! weights (`scripts/minilm.sh install`, `scripts/mpnet.sh install`).
//!
//! Run: `cargo bench --bench retrieval`

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use switchyard::dense::minilm::MiniLm;
use switchyard::dense::mpnet::MpNet;
use switchyard::dense::{CrossEncoder, CrossRescorer};
use switchyard::lab::cross::CrossTrainer;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::embed::normalise;
use switchyard::retrieve::index::VectorIndex;
use switchyard::retrieve::rescore::{Rescorer, features};
use switchyard::retrieve::{EmbedError, Embedder, Retriever};

const TOOLS: usize = 16_000;
const DIM: usize = 384;

fn unit(rng: &mut ChaCha8Rng) -> Vec<f32> {
    unit_of(rng, DIM)
}

fn unit_of(rng: &mut ChaCha8Rng, dim: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..dim).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    normalise(&mut v);
    v
}

fn seeded(text: &str, dim: usize) -> Vec<f32> {
    let seed = text.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    unit_of(&mut ChaCha8Rng::seed_from_u64(seed), dim)
}

/// Stands in for the embedder once every vector is cached: it hands out
/// seeded random unit vectors, so the bench measures the ranking alone.
struct Seeded;

impl Embedder for Seeded {
    fn id(&self) -> &str {
        "seeded"
    }
    fn dim(&self) -> usize {
        DIM
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| seeded(t, DIM)).collect())
    }
}

/// The tools' vectors as if cached (seeded, of the model's size), every
/// query's from the model itself.
struct ToolsCached {
    model: Arc<dyn Embedder>,
    tools_done: AtomicBool,
}

impl Embedder for ToolsCached {
    fn id(&self) -> &str {
        self.model.id()
    }
    fn dim(&self) -> usize {
        self.model.dim()
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if self.tools_done.swap(true, Ordering::Relaxed) {
            self.model.embed(texts)
        } else {
            Ok(texts.iter().map(|t| seeded(t, self.model.dim())).collect())
        }
    }
}

fn words(rng: &mut ChaCha8Rng, n: usize) -> String {
    const VOCAB: [&str; 24] = [
        "weather",
        "city",
        "price",
        "stock",
        "convert",
        "currency",
        "date",
        "distance",
        "population",
        "search",
        "book",
        "flight",
        "hotel",
        "movie",
        "director",
        "album",
        "artist",
        "birth",
        "place",
        "country",
        "river",
        "length",
        "capital",
        "language",
    ];
    (0..n).map(|_| VOCAB[rng.random_range(0..VOCAB.len())]).collect::<Vec<_>>().join(" ")
}

fn bench(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let index = VectorIndex::from_rows(DIM, (0..TOOLS).map(|_| unit(&mut rng)));
    let query = unit(&mut rng);
    c.bench_function(
        "top5_16k",
        peak::tracked(|b: &mut Bencher| b.iter(|| index.top_k(std::hint::black_box(&query), 5))),
    );
    peak::report("top5_16k");

    // Path ids as Freebase's (domain/type/property), so the re-scorer has parts to read.
    let docs: Vec<(String, String)> =
        (0..TOOLS).map(|i| (format!("d{}/type_{}/prop_{i}", i % 40, i % 400), words(&mut rng, 12))).collect();
    let mut cache = VectorCache::memory(DIM);
    let retriever =
        Retriever::dense(docs.iter().map(|(n, t)| (n.as_str(), t.as_str())), Arc::new(Seeded), &mut cache, None, 0.3)
            .expect("the seeded embedder cannot fail");
    let task = "what is the population of the capital city of a country";
    c.bench_function(
        "hybrid_16k",
        peak::tracked(|b: &mut Bencher| b.iter(|| retriever.search(std::hint::black_box(task), 5))),
    );
    peak::report("hybrid_16k");
    let mut weights = [0.0; features::COUNT];
    weights[0] = 2.0;
    weights[5] = 0.9;
    let rescored = retriever.clone().with_rescorer(Arc::new(Rescorer::new(10, weights, "bench")));
    c.bench_function(
        "hybrid_rescored_16k",
        peak::tracked(|b: &mut Bencher| b.iter(|| rescored.search(std::hint::black_box(task), 5))),
    );
    peak::report("hybrid_rescored_16k");

    let data = std::env::var_os("SWITCHYARD_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/switchyard")));
    let Some(data) = data else { return eprintln!("dense-model benches skipped: no HOME nor SWITCHYARD_DATA_DIR") };
    model_benches(c, "minilm", &MiniLm::folder(&data), MiniLm::load, &docs, &mut rng);
    model_benches(c, "mpnet", &MpNet::folder(&data), MpNet::load, &docs, &mut rng);
    cross_bench(c, &MiniLm::folder(&data), &retriever, &docs);
}

fn cross_bench(c: &mut Criterion, dir: &Path, retriever: &Retriever, docs: &[(String, String)]) {
    if !dir.join("model.safetensors").exists() {
        return eprintln!("cross_encoder benches skipped: no weights in {} (scripts/minilm.sh install)", dir.display());
    }
    // Made when the bench first runs: the filter may exclude it.
    let crossed = OnceCell::new();
    let crossed = || {
        crossed.get_or_init(|| {
            // An untrained head costs what a trained one does; it is saved
            // and loaded as a search would open a trained one.
            let file = tempfile::tempdir().expect("a temporary folder");
            let path = file.path().join("cross.safetensors");
            CrossTrainer::new(dir, &dir.join("model.safetensors"), 5)
                .and_then(|t| t.save(&path, 0.0))
                .expect("weights save");
            let encoder = CrossEncoder::load(dir, &path).expect("cross-encoder loads");
            let docs = docs.iter().map(|(n, t)| (n.as_str(), t.as_str()));
            retriever.clone().with_rescorer(Arc::new(CrossRescorer::new(encoder, docs, Path::new("bench"))))
        })
    };
    let mut g = c.benchmark_group("cross_encoder");
    g.sample_size(10);
    let task = "what is the population of the capital city of a country";
    g.bench_function(
        "query_16k",
        peak::tracked(|b: &mut Bencher| {
            let crossed = crossed();
            b.iter(|| crossed.search(std::hint::black_box(task), 5))
        }),
    );
    peak::report("cross_encoder/query_16k");
    g.finish();
}

fn model_benches<M: Embedder + 'static>(
    c: &mut Criterion,
    name: &str,
    dir: &Path,
    load: impl Fn(&Path) -> Result<M, EmbedError>,
    docs: &[(String, String)],
    rng: &mut ChaCha8Rng,
) {
    if !dir.join("model.safetensors").exists() {
        return eprintln!("{name} benches skipped: no weights in {} (scripts/{name}.sh install)", dir.display());
    }
    let mut g = c.benchmark_group(name);
    g.sample_size(10);
    g.bench_function("load", peak::tracked(|b: &mut Bencher| b.iter(|| load(dir).expect("weights load"))));
    peak::report(&format!("{name}/load"));
    // The model, and the 16,000 tools embedded with it, are made when a
    // bench that needs them first runs: the filter may exclude them.
    let model: OnceCell<Arc<dyn Embedder>> = OnceCell::new();
    let model = || model.get_or_init(|| Arc::new(load(dir).expect("weights load")));
    let sentences: Vec<String> = (0..32).map(|_| words(rng, 10)).collect();
    let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
    g.bench_function(
        "embed_32",
        peak::tracked(|b: &mut Bencher| {
            let model = model();
            b.iter(|| model.embed(&refs).expect("embeds"))
        }),
    );
    peak::report(&format!("{name}/embed_32"));
    let retriever = OnceCell::new();
    let retriever = || {
        retriever.get_or_init(|| {
            let model = Arc::clone(model());
            let mut cache = VectorCache::memory(model.dim());
            let embedder = Arc::new(ToolsCached { model, tools_done: AtomicBool::new(false) });
            Retriever::dense(docs.iter().map(|(n, t)| (n.as_str(), t.as_str())), embedder, &mut cache, None, 0.3)
                .expect("seeded tool vectors cannot fail")
        })
    };
    // A new query every time: the retriever keeps the vectors of past ones.
    let mut n = 0u64;
    g.bench_function(
        "query_16k",
        peak::tracked(|b: &mut Bencher| {
            let retriever = retriever();
            b.iter(|| {
                n += 1;
                retriever
                    .search(&format!("what is the population of the capital city of country {n}"), 5)
                    .expect("searches")
            })
        }),
    );
    peak::report(&format!("{name}/query_16k"));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
