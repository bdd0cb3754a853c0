//! The retriever every strategy stands on: the top-K tools for a query,
//! each with the parts of its score (lexical BM25, dense cosine, the trained
//! heads' cosine) so a user can see why a tool was offered.
//!
//! Lexical alone is today's BM25 ranking, unchanged. With a dense embedder
//! the ranking is the blend of [`super::blend`] over the whole pool: the
//! heads' cosine when heads are loaded, else the raw cosine, standardised
//! and weighed against standardised BM25 by `lexical_weight` (0 = dense
//! alone).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::blend::blend;
use super::bm25::Bm25Index;
use super::cache::VectorCache;
use super::embed::{EmbedError, Embedder, dot};
use super::index::{VectorIndex, top_k_of};
use crate::dataset::ToolDoc;

/// Query and tool encoders applied on top of the embedder's vectors
/// (CoTools' heads), behind a trait so the retriever does not care how
/// they were trained.
pub trait Reshape: Send + Sync {
    /// What to show as the heads' source, e.g. the file they came from.
    fn label(&self) -> &str;
    fn query(&self, h: &[f32]) -> Vec<f32>;
    fn tool(&self, h: &[f32]) -> Vec<f32>;
}

/// CoTools' tool judge on the query vector: does this query need a tool?
pub trait ToolJudge: Send + Sync {
    fn label(&self) -> &str;
    /// The judge's score in [0, 1] and whether it passes the threshold.
    fn judge(&self, h: &[f32]) -> (f32, bool);
}

/// A re-ordering of a search's first candidates (the trained re-scorer of
/// [`super::rescore`]), behind a trait as the heads are.
pub trait Rescore: Send + Sync {
    fn label(&self) -> &str;
    /// How many of the first candidates it re-orders.
    fn k(&self) -> usize;
    /// Re-orders the first [`Self::k`] of `ranked` for `query`.
    fn rescore(&self, query: &str, ranked: &mut [Scored]);
}

/// A ranked tool and the parts of its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    pub name: String,
    /// What the ranking used: BM25 alone, or the blend.
    pub score: f32,
    /// BM25 of the query against the tool's name and description.
    pub lexical: f32,
    /// Cosine of the raw embedder vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense: Option<f32>,
    /// Cosine after the trained heads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<f32>,
    /// The re-scorer's score, for the first candidates it re-ordered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rescore: Option<f32>,
}

struct Dense {
    embedder: Arc<dyn Embedder>,
    // Shared by the copies, as the lexical index is.
    raw: Arc<VectorIndex>,
    heads: Option<(Arc<dyn Reshape>, Arc<VectorIndex>)>,
    judge: Option<Arc<dyn ToolJudge>>,
    /// Query vectors already computed (BTP compares one query with every
    /// past one, again on every task).
    queries: Mutex<HashMap<String, Vec<f32>>>,
}

/// A copy shares the embedder and starts with the query vectors known so
/// far (the concurrent eval's engines each take one).
impl Clone for Dense {
    fn clone(&self) -> Self {
        let queries = self.queries.lock().map(|q| q.clone()).unwrap_or_default();
        Dense {
            embedder: Arc::clone(&self.embedder),
            raw: self.raw.clone(),
            heads: self.heads.clone(),
            judge: self.judge.clone(),
            queries: Mutex::new(queries),
        }
    }
}

/// Past queries kept before the query cache starts over.
const QUERY_CACHE: usize = 20_000;

#[derive(Clone)]
pub struct Retriever {
    /// Shared: every engine of a session (one a task in a concurrent eval)
    /// takes a copy, and the index is as large as the library.
    lexical: Arc<Bm25Index>,
    dense: Option<Dense>,
    lexical_weight: f32,
    rescorer: Option<Arc<dyn Rescore>>,
}

impl std::fmt::Debug for Retriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retriever").field("source", &self.source()).field("tools", &self.len()).finish()
    }
}

impl Retriever {
    /// BM25 over `(name, text)` documents; needs nothing.
    pub fn lexical<'a>(docs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Retriever { lexical: Arc::new(Bm25Index::new(docs)), dense: None, lexical_weight: 1.0, rescorer: None }
    }

    /// BM25 plus dense vectors of every document's `name: text`, taken from
    /// `cache` (only new or changed texts are embedded), reshaped by `heads`
    /// when given. Names must be distinct.
    pub fn dense<'a>(
        docs: impl IntoIterator<Item = (&'a str, &'a str)>,
        embedder: Arc<dyn Embedder>,
        cache: &mut VectorCache,
        heads: Option<Arc<dyn Reshape>>,
        lexical_weight: f32,
    ) -> Result<Self, EmbedError> {
        let docs: Vec<(&str, &str)> = docs.into_iter().collect();
        let lexical = Arc::new(Bm25Index::new(docs.iter().copied()));
        let texts: Vec<String> = docs.iter().map(|(n, t)| doc_text(n, t)).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = cache.vectors(embedder.as_ref(), &refs)?;
        let dim = embedder.dim();
        let raw = Arc::new(VectorIndex::from_rows(dim, vectors.iter().cloned()));
        let heads = heads.map(|h| {
            let index = Arc::new(VectorIndex::from_rows(dim, vectors.iter().map(|v| h.tool(v))));
            (h, index)
        });
        Ok(Retriever {
            lexical,
            dense: Some(Dense { embedder, raw, heads, judge: None, queries: Mutex::new(HashMap::new()) }),
            lexical_weight: lexical_weight.clamp(0.0, 1.0),
            rescorer: None,
        })
    }

    pub fn len(&self) -> usize {
        self.lexical.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lexical.is_empty()
    }

    pub fn names(&self) -> &[String] {
        self.lexical.names()
    }

    /// Whether a dense embedder takes part.
    pub fn is_dense(&self) -> bool {
        self.dense.is_some()
    }

    /// Where the scores come from, for the views and the trace:
    /// `bm25`, `bm25 0.3 + minilm-l6-v2 0.7`, `… + heads(FILE)`.
    pub fn source(&self) -> String {
        let Some(d) = &self.dense else { return "bm25".into() };
        let mut s = if self.lexical_weight <= 0.0 {
            d.embedder.id().to_owned()
        } else {
            format!("bm25 {:.2} + {} {:.2}", self.lexical_weight, d.embedder.id(), 1.0 - self.lexical_weight)
        };
        if let Some((h, _)) = &d.heads {
            s.push_str(&format!(" + heads({})", h.label()));
        }
        if let Some(r) = &self.rescorer {
            s.push_str(&format!(" + rescore({}, top {})", r.label(), r.k()));
        }
        s
    }

    /// Re-orders each search's first candidates with a trained re-scorer
    /// ([`super::rescore`]).
    pub fn with_rescorer(mut self, rescorer: Arc<dyn Rescore>) -> Self {
        self.rescorer = Some(rescorer);
        self
    }

    /// Adds CoTools' tool judge (it reads the dense query vector, so a
    /// lexical retriever has none).
    pub fn with_judge(mut self, judge: Arc<dyn ToolJudge>) -> Self {
        if let Some(d) = self.dense.as_mut() {
            d.judge = Some(judge);
        }
        self
    }

    /// The judge's verdict on `query`: None without a judge, else (its
    /// label, score, whether a tool is needed).
    pub fn judge(&self, query: &str) -> Option<Result<(String, f32, bool), EmbedError>> {
        let judge = self.dense.as_ref()?.judge.as_ref()?;
        Some(self.query_vector(query).map(|q| {
            let (score, needed) = judge.judge(&q);
            (judge.label().to_owned(), score, needed)
        }))
    }

    /// Leaves the dense part out from now on (the endpoint failed): BM25
    /// ranks alone, as with no embedder. The re-scorer goes too: it was
    /// trained on the dense ranking's scores.
    pub fn drop_dense(&mut self) {
        self.dense = None;
        self.lexical_weight = 1.0;
        self.rescorer = None;
    }

    /// The `k` best tools for `query`, best first. Lexically, tools sharing
    /// no word with the query are left out; with a dense part every tool
    /// has a score.
    pub fn search(&self, query: &str, k: usize) -> Result<Vec<Scored>, EmbedError> {
        let Some(r) = &self.rescorer else { return self.search_unrescored(query, k) };
        let mut ranked = self.search_unrescored(query, k.max(r.k()))?;
        r.rescore(query, &mut ranked);
        ranked.truncate(k);
        Ok(ranked)
    }

    /// [`Self::search`] before the re-scorer (what it is trained on).
    pub fn search_unrescored(&self, query: &str, k: usize) -> Result<Vec<Scored>, EmbedError> {
        let Some(d) = &self.dense else {
            return Ok(self.search_lexical(query, k));
        };
        let q = self.query_vector(query)?;
        let lexical = self.lexical.scores(query);
        let raw = d.raw.scores(&q);
        let head = d.heads.as_ref().map(|(h, index)| index.scores(&h.query(&q)));
        let signal = head.as_ref().unwrap_or(&raw);
        let ranking =
            if self.lexical_weight <= 0.0 { signal.clone() } else { blend(&lexical, signal, self.lexical_weight) };
        let names = self.lexical.names();
        Ok(top_k_of(&ranking, k)
            .into_iter()
            .map(|(i, score)| Scored {
                name: names[i].clone(),
                score,
                lexical: lexical[i],
                dense: Some(raw[i]),
                head: head.as_ref().map(|h| h[i]),
                rescore: None,
            })
            .collect())
    }

    /// BM25 alone, whatever else is loaded.
    pub fn search_lexical(&self, query: &str, k: usize) -> Vec<Scored> {
        self.lexical
            .search(query, k)
            .into_iter()
            .map(|h| Scored {
                name: h.name,
                score: h.score as f32,
                lexical: h.score as f32,
                dense: None,
                head: None,
                rescore: None,
            })
            .collect()
    }

    /// The dense vector of a query (raw, before heads); cached.
    pub fn query_vector(&self, query: &str) -> Result<Vec<f32>, EmbedError> {
        let Some(d) = &self.dense else {
            return Err(EmbedError::Compute("no dense embedder is loaded".into()));
        };
        if let Some(v) = d.queries.lock().unwrap_or_else(|p| p.into_inner()).get(query) {
            return Ok(v.clone());
        }
        let v =
            d.embedder.embed(&[query])?.pop().ok_or_else(|| EmbedError::Compute("no vector for the query".into()))?;
        let mut cache = d.queries.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= QUERY_CACHE {
            cache.clear();
        }
        cache.insert(query.to_owned(), v.clone());
        Ok(v)
    }

    /// Embeds the queries not yet cached, in batched calls, so that a
    /// loop of [`Retriever::query_similarity`] over them (BTP's estimates
    /// over the experience store) finds them ready. A failure leaves them
    /// out; each is then tried, and its failure seen, where it is used.
    pub fn warm_queries(&self, queries: &[&str]) {
        let Some(d) = &self.dense else { return };
        let mut missing: Vec<&str> = {
            let cache = d.queries.lock().unwrap_or_else(|p| p.into_inner());
            queries.iter().copied().filter(|q| !cache.contains_key(*q)).collect()
        };
        missing.sort_unstable();
        missing.dedup();
        missing.truncate(QUERY_CACHE);
        if missing.is_empty() {
            return;
        }
        let Ok(vectors) = d.embedder.embed(&missing) else { return };
        let mut cache = d.queries.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() + missing.len() > QUERY_CACHE {
            cache.clear();
        }
        for (q, v) in missing.into_iter().zip(vectors) {
            cache.insert(q.to_owned(), v);
        }
    }

    /// How alike two queries are, for BTP's sim(q_u, q): the cosine of their
    /// dense vectors when an embedder is loaded, else None (the caller keeps
    /// its lexical similarity).
    pub fn query_similarity(&self, a: &str, b: &str) -> Option<f64> {
        let va = self.query_vector(a).ok()?;
        let vb = self.query_vector(b).ok()?;
        Some(f64::from(dot(&va, &vb)))
    }
}

/// The text a tool is embedded from: its name's words, then its
/// description (see [`ToolDoc::text`]).
pub fn doc_text(name: &str, text: &str) -> String {
    ToolDoc { id: name.to_owned(), description: text.to_owned() }.text()
}

/// Hits as `retrieve --task` prints them: rank, tool, score and its parts.
pub fn hits_table(hits: &[Scored]) -> String {
    let width = hits.iter().map(|h| h.name.chars().count()).max().unwrap_or(4).max(4);
    // The re-scorer's column only where one ran, so other tables keep their shape.
    let rescored = hits.iter().any(|h| h.rescore.is_some());
    let mut out =
        format!("{:>3}  {:width$}  {:>8}  {:>8}  {:>7}  {:>7}", "#", "tool", "score", "lexical", "dense", "head");
    out += if rescored { "  rescore\n" } else { "\n" };
    let opt = |v: Option<f32>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.3}"));
    for (i, h) in hits.iter().enumerate() {
        out += &format!(
            "{:>3}  {:width$}  {:>8.3}  {:>8.3}  {:>7}  {:>7}",
            i + 1,
            h.name,
            h.score,
            h.lexical,
            opt(h.dense),
            opt(h.head)
        );
        out += &if rescored { format!("  {:>7}\n", opt(h.rescore)) } else { "\n".to_owned() };
    }
    if hits.is_empty() {
        out += "  (no tool shares a word with the task)\n";
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy embedder: one dimension per known word.
    struct Words;
    const VOCAB: [&str; 4] = ["weather", "rain", "stock", "price"];
    impl Embedder for Words {
        fn id(&self) -> &str {
            "words"
        }
        fn dim(&self) -> usize {
            VOCAB.len()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v: Vec<f32> = VOCAB.iter().map(|w| t.matches(w).count() as f32).collect();
                    super::super::embed::normalise(&mut v);
                    v
                })
                .collect())
        }
    }

    #[test]
    fn dense_alone_finds_a_tool_that_shares_no_word_with_the_query() {
        let docs = [("forecast", "tells if it will rain"), ("quote", "the price of a stock")];
        let mut cache = VectorCache::memory(4);
        let r = Retriever::dense(docs, Arc::new(Words), &mut cache, None, 0.0).unwrap();
        let hits = r.search("any rain tomorrow?", 2).unwrap();
        assert_eq!(hits[0].name, "forecast");
        assert!(hits[0].dense.unwrap() > hits[1].dense.unwrap());
        assert_eq!(r.source(), "words");
        assert!(Retriever::lexical(docs).search_lexical("weather", 2).is_empty());
    }

    /// Counts its calls, for checking that queries are embedded in batches.
    struct Calls(std::sync::atomic::AtomicUsize);
    impl Embedder for Calls {
        fn id(&self) -> &str {
            "calls"
        }
        fn dim(&self) -> usize {
            VOCAB.len()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Words.embed(texts)
        }
    }

    #[test]
    fn past_queries_are_embedded_in_one_batch_before_they_are_compared() {
        let calls = Arc::new(Calls(std::sync::atomic::AtomicUsize::new(0)));
        let mut cache = VectorCache::memory(4);
        let r = Retriever::dense([("forecast", "rain")], calls.clone(), &mut cache, None, 0.3).unwrap();
        let before = calls.0.load(std::sync::atomic::Ordering::SeqCst);
        let past = ["rain today?", "stock price", "rain today?", "weather"];
        r.warm_queries(&past);
        assert_eq!(calls.0.load(std::sync::atomic::Ordering::SeqCst), before + 1);
        for q in past {
            assert!(r.query_similarity("rain today?", q).is_some());
        }
        assert_eq!(calls.0.load(std::sync::atomic::Ordering::SeqCst), before + 1, "every query was ready");
    }

    #[test]
    fn a_dropped_dense_part_leaves_the_plain_bm25_ranking() {
        let docs = [("forecast", "weather and rain"), ("quote", "stock price")];
        let mut cache = VectorCache::memory(4);
        // A re-scorer that turns the first two around.
        struct Swap;
        impl Rescore for Swap {
            fn label(&self) -> &str {
                "swap"
            }
            fn k(&self) -> usize {
                2
            }
            fn rescore(&self, _: &str, ranked: &mut [Scored]) {
                ranked.swap(0, 1);
            }
        }
        let mut r =
            Retriever::dense(docs, Arc::new(Words), &mut cache, None, 0.5).unwrap().with_rescorer(Arc::new(Swap));
        assert!(r.source().starts_with("bm25 0.50 + words") && r.source().ends_with("+ rescore(swap, top 2)"));
        assert_eq!(r.search("stock", 1).unwrap()[0].name, "forecast", "re-scored");
        r.drop_dense();
        assert_eq!(r.search("stock", 5).unwrap(), Retriever::lexical(docs).search_lexical("stock", 5));
        assert_eq!(r.source(), "bm25");
    }

    #[test]
    fn the_hits_table_shows_each_part_of_a_score_or_a_dash() {
        let r = Retriever::lexical([("weather_now", "the weather today"), ("stock_quote", "a stock's price")]);
        let text = hits_table(&r.search_lexical("weather", 5));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].split_whitespace().collect::<Vec<_>>(), ["#", "tool", "score", "lexical", "dense", "head"]);
        let first: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!((first[0], first[1], first[4], first[5]), ("1", "weather_now", "-", "-"));
        assert_eq!(hits_table(&[]).lines().nth(1), Some("  (no tool shares a word with the task)"));
    }
}
