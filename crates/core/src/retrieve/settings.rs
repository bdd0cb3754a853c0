//! `[retrieval]`: which embedder scores tools, how it blends with BM25,
//! which trained heads reshape it, and whether strategies re-query mid-run.
//!
//! ```toml
//! [retrieval]
//! embedder = "minilm"        # "lexical" (default), "minilm", "mpnet" or "http"
//! lexical_weight = 0.3       # 0 = dense alone; see retrieve::blend
//! heads = "heads.safetensors"
//! minilm_weights = "tuned.safetensors"   # `retrieval tune`'s MiniLM (embedder = "minilm")
//! judge = "judge.safetensors"    # CoTools' tool judge: no tool for a task it finds needs none
//! rescore = "rescore.json"  # `retrieval rescore train`: re-orders the first candidates by their ids' parts
//! # cross_encoder = "cross.safetensors"  # `retrieval cross train`: MiniLM reads the task with each first candidate (not with rescore)
//! requery = true             # react re-retrieves with the task and the evidence so far
//! # embedder = "http" only:
//! url = "http://127.0.0.1:8080/v1"
//! model = "nomic-embed-text"
//! api_key_env = "EMBEDDINGS_KEY"
//! dim = 768
//! timeout_ms = 30000
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use super::blend::DEFAULT_LEXICAL_WEIGHT;
use super::cache::VectorCache;
use super::cotools::{Heads, HeadsError, Judge};
use super::embed::{EmbedError, Embedder};
use super::retriever::{Reshape, Retriever, ToolJudge};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedderKind {
    #[default]
    Lexical,
    Minilm,
    Mpnet,
    Http,
}

impl std::fmt::Display for EmbedderKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EmbedderKind::Lexical => "lexical",
            EmbedderKind::Minilm => "minilm",
            EmbedderKind::Mpnet => "mpnet",
            EmbedderKind::Http => "http",
        })
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RetrievalConfig {
    pub embedder: EmbedderKind,
    pub lexical_weight: f32,
    /// Trained CoTools heads (relative paths: from the config's folder).
    pub heads: Option<PathBuf>,
    /// MiniLM's weights fine-tuned by `retrieval tune` (relative paths:
    /// from the config's folder).
    pub minilm_weights: Option<PathBuf>,
    /// A trained CoTools tool judge: a task it finds needs no tool is
    /// offered none (relative paths: from the config's folder).
    pub judge: Option<PathBuf>,
    /// A trained re-scorer of the first candidates (relative paths: from
    /// the config's folder).
    pub rescore: Option<PathBuf>,
    /// A trained cross-encoder of the first candidates (relative paths:
    /// from the config's folder).
    pub cross_encoder: Option<PathBuf>,
    pub requery: bool,
    pub url: Option<String>,
    pub model: Option<String>,
    pub api_key_env: Option<String>,
    pub dim: Option<usize>,
    pub timeout_ms: u64,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            embedder: EmbedderKind::Lexical,
            lexical_weight: DEFAULT_LEXICAL_WEIGHT,
            heads: None,
            minilm_weights: None,
            judge: None,
            rescore: None,
            cross_encoder: None,
            requery: false,
            url: None,
            model: None,
            api_key_env: None,
            dim: None,
            timeout_ms: 30_000,
        }
    }
}

impl RetrievalConfig {
    /// The first field that is wrong, and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if !(0.0..=1.0).contains(&self.lexical_weight) {
            return Err(("lexical_weight", format!("must be within [0, 1], got {}", self.lexical_weight)));
        }
        if self.timeout_ms == 0 {
            return Err(("timeout_ms", "must be at least 1".into()));
        }
        let http = self.embedder == EmbedderKind::Http;
        match (&self.url, http) {
            (None, true) => return Err(("url", "embedder = \"http\" needs the endpoint's base URL".into())),
            (Some(u), true) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                return Err(("url", format!("'{u}' is not an http(s) URL")));
            }
            (Some(_), false) => {
                return Err(("url", format!("only used with embedder = \"http\", not \"{}\"", self.embedder)));
            }
            _ => {}
        }
        if http && self.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
            return Err(("model", "embedder = \"http\" needs the embedding model's name".into()));
        }
        if let Some(v) = &self.api_key_env
            && v.trim().is_empty()
        {
            return Err(("api_key_env", "names no environment variable".into()));
        }
        if self.dim == Some(0) {
            return Err(("dim", "must be at least 1".into()));
        }
        if self.heads.is_some() && self.embedder == EmbedderKind::Lexical {
            return Err((
                "heads",
                "heads reshape dense vectors: set embedder = \"minilm\", \"mpnet\" or \"http\"".into(),
            ));
        }
        if self.minilm_weights.is_some() && self.embedder != EmbedderKind::Minilm {
            return Err((
                "minilm_weights",
                format!("tuned MiniLM weights need embedder = \"minilm\", not \"{}\"", self.embedder),
            ));
        }
        if self.judge.is_some() && self.embedder == EmbedderKind::Lexical {
            return Err((
                "judge",
                "the judge reads dense vectors: set embedder = \"minilm\", \"mpnet\" or \"http\"".into(),
            ));
        }
        if self.rescore.is_some() && self.embedder == EmbedderKind::Lexical {
            return Err((
                "rescore",
                "the re-scorer re-orders a dense retriever's candidates: set embedder = \"minilm\", \"mpnet\" or \"http\""
                    .into(),
            ));
        }
        if self.cross_encoder.is_some() && self.embedder == EmbedderKind::Lexical {
            return Err((
                "cross_encoder",
                "the cross-encoder re-orders a dense retriever's candidates: set embedder = \"minilm\", \"mpnet\" or \"http\""
                    .into(),
            ));
        }
        if self.cross_encoder.is_some() && self.rescore.is_some() {
            return Err((
                "cross_encoder",
                "one re-scorer of the first candidates: set rescore or cross_encoder, not both".into(),
            ));
        }
        Ok(())
    }

    /// The retriever over `docs` (name, description): BM25, plus `embedder`'s
    /// vectors (cached under `<data_dir>/retrieval`) and `heads`.
    pub fn open<'a>(
        &self,
        docs: impl IntoIterator<Item = (&'a str, &'a str)>,
        embedder: Arc<dyn Embedder>,
        data_dir: &Path,
        heads: Option<Arc<dyn Reshape>>,
    ) -> Result<Retriever, EmbedError> {
        let mut cache = VectorCache::open(&data_dir.join("retrieval"), embedder.as_ref());
        let retriever = Retriever::dense(docs, embedder, &mut cache, heads, self.lexical_weight)?;
        cache.save()?;
        Ok(retriever)
    }
}

/// Trained heads as the retriever applies them, named by their file.
struct HeadsFile {
    heads: Heads,
    label: String,
}

impl Reshape for HeadsFile {
    fn label(&self) -> &str {
        &self.label
    }
    fn query(&self, h: &[f32]) -> Vec<f32> {
        self.heads.encode_query(h)
    }
    fn tool(&self, h: &[f32]) -> Vec<f32> {
        self.heads.encode_tool(h)
    }
}

struct JudgeFile {
    judge: Judge,
    label: String,
}

impl ToolJudge for JudgeFile {
    fn label(&self) -> &str {
        &self.label
    }
    fn judge(&self, h: &[f32]) -> (f32, bool) {
        (self.judge.score(h), self.judge.calls_tool(h))
    }
}

fn file_label(path: &Path) -> String {
    path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned())
}

/// Heads from `path`, refused (naming the file) when trained on another
/// embedder than `embedder`.
pub fn load_heads(path: &Path, embedder: &dyn Embedder) -> Result<Arc<dyn Reshape>, HeadsError> {
    let heads = Heads::load(path)?;
    heads.check_embedder(embedder.id(), embedder.dim())?;
    Ok(Arc::new(HeadsFile { heads, label: file_label(path) }))
}

/// A tool judge from `path`, checked against `embedder` like heads.
pub fn load_judge(path: &Path, embedder: &dyn Embedder) -> Result<Arc<dyn ToolJudge>, HeadsError> {
    let judge = Judge::load(path)?;
    judge.check_embedder(embedder.id(), embedder.dim())?;
    Ok(Arc::new(JudgeFile { judge, label: file_label(path) }))
}
