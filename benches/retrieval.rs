//! Retrieval speed (criterion):
//!
//! - `top5_16k`: top-5 by cosine over 16,000 tools × 384 dimensions in the
//!   exact index (one contiguous matrix), per query, the query vector given.
//!   Goal: ≤ 2 ms.
//! - `hybrid_16k`: the whole dense-and-BM25 ranking of a query over 16,000
//!   tool descriptions (BM25 over every document, cosine, z-score blend,
//!   top-5), the query vector already cached.
//! - `minilm_load` and `minilm_embed_32`: the dense model's load (files
//!   checked by sha256, weights mapped) and a batch of 32 sentences, whose
//!   time gives sentences/s. Skipped, with the reason printed, without the
//!   weights (`scripts/minilm.sh install`).
//!
//! Run: `cargo bench --bench retrieval`

#[path = "support/allocator.rs"]
mod allocator;

use std::path::PathBuf;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::embed::normalise;
use switchyard::retrieve::index::VectorIndex;
use switchyard::retrieve::minilm::MiniLm;
use switchyard::retrieve::{EmbedError, Embedder, Retriever};

const TOOLS: usize = 16_000;
const DIM: usize = 384;

fn unit(rng: &mut ChaCha8Rng) -> Vec<f32> {
    let mut v: Vec<f32> = (0..DIM).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    normalise(&mut v);
    v
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
        Ok(texts
            .iter()
            .map(|t| {
                let seed = t.bytes().fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
                unit(&mut ChaCha8Rng::seed_from_u64(seed))
            })
            .collect())
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
    c.bench_function("top5_16k", |b| b.iter(|| index.top_k(std::hint::black_box(&query), 5)));

    let docs: Vec<(String, String)> = (0..TOOLS).map(|i| (format!("tool_{i}"), words(&mut rng, 12))).collect();
    let mut cache = VectorCache::memory(DIM);
    let retriever =
        Retriever::dense(docs.iter().map(|(n, t)| (n.as_str(), t.as_str())), Arc::new(Seeded), &mut cache, None, 0.3)
            .expect("the seeded embedder cannot fail");
    let task = "what is the population of the capital city of a country";
    c.bench_function("hybrid_16k", |b| b.iter(|| retriever.search(std::hint::black_box(task), 5)));

    let dir = std::env::var_os("SWITCHYARD_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share/switchyard")))
        .map(|d| MiniLm::folder(&d));
    match dir.filter(|d| d.join("model.safetensors").exists()) {
        None => eprintln!("minilm benches skipped: no weights (scripts/minilm.sh install)"),
        Some(dir) => {
            let mut g = c.benchmark_group("minilm");
            g.sample_size(10);
            g.bench_function("load", |b| b.iter(|| MiniLm::load(&dir).expect("weights load")));
            let model = MiniLm::load(&dir).expect("weights load");
            let sentences: Vec<String> = (0..32).map(|_| words(&mut rng, 10)).collect();
            let refs: Vec<&str> = sentences.iter().map(String::as_str).collect();
            g.bench_function("embed_32", |b| b.iter(|| model.embed(&refs).expect("embeds")));
            g.finish();
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
