//! Which retriever the `--embedder`, `--lexical-weight`, `--heads` and
//! `--rescore` flags choose over the config's `[retrieval]`, and opening it
//! over a pool with a progress bar while the cache fills.

use std::path::PathBuf;
use std::sync::Arc;

use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::rescore::Rescorer;
use switchyard::retrieve::retriever::doc_text;
use switchyard::retrieve::settings::load_heads;
use switchyard::retrieve::{EmbedderKind, Reshape, RetrievalConfig, Retriever};

use super::progress::embed_cached;

/// Which retriever: the config's `[retrieval]` unless a flag says otherwise.
#[derive(clap::Args, Debug, Default)]
pub(super) struct HowArgs {
    /// lexical, minilm, mpnet or http (default: the config's).
    #[arg(long, value_parser = ["lexical", "minilm", "mpnet", "http"])]
    embedder: Option<String>,
    /// The lexical share of the blend, 0 to 1 (default: the config's).
    #[arg(long)]
    lexical_weight: Option<f32>,
    /// Trained CoTools heads (`retrieval heads train`).
    #[arg(long)]
    heads: Option<PathBuf>,
    /// A trained re-scorer of the first candidates (`retrieval rescore train`).
    #[arg(long, conflicts_with = "no_rescore")]
    rescore: Option<PathBuf>,
    /// Leave out the config's re-scorer.
    #[arg(long)]
    no_rescore: bool,
}

impl HowArgs {
    pub(super) fn apply(&self, config: &Config) -> Result<RetrievalConfig> {
        let mut r = config.retrieval.clone();
        if let Some(e) = &self.embedder {
            r.embedder = match e.as_str() {
                "minilm" => EmbedderKind::Minilm,
                "mpnet" => EmbedderKind::Mpnet,
                "http" => EmbedderKind::Http,
                _ => EmbedderKind::Lexical,
            };
        }
        if let Some(w) = self.lexical_weight {
            r.lexical_weight = w;
        }
        if let Some(h) = &self.heads {
            r.heads = Some(h.clone());
        }
        if let Some(s) = &self.rescore {
            r.rescore = Some(s.clone());
        }
        if self.no_rescore {
            r.rescore = None;
        }
        r.check().map_err(|(f, why)| eyre!("retrieval.{f}: {why}"))?;
        Ok(r)
    }
}

/// Builds the retriever over `docs`, embedding what the cache lacks with a
/// progress bar (a 16,000-tool library takes minutes the first time).
pub(super) fn open(config: &Config, how: &RetrievalConfig, docs: &[(String, String)]) -> Result<Retriever> {
    let refs = docs.iter().map(|(n, t)| (n.as_str(), t.as_str()));
    let data = config.data_dir()?;
    let Some(embedder) = how.embedder(&data)? else {
        return Ok(Retriever::lexical(refs));
    };
    let heads: Option<Arc<dyn Reshape>> = match &how.heads {
        Some(p) => Some(load_heads(p, embedder.as_ref())?),
        None => None,
    };
    let mut cache = VectorCache::open(&data.join("retrieval"), embedder.as_ref());
    let texts: Vec<String> = docs.iter().map(|(n, t)| doc_text(n, t)).collect();
    // Fills the cache with a progress bar; the retriever then embeds nothing.
    embed_cached(embedder.as_ref(), &texts, &mut cache, "tools")?;
    let retriever = Retriever::dense(refs, embedder, &mut cache, heads, how.lexical_weight)?;
    cache.save()?;
    Ok(match &how.rescore {
        Some(path) => retriever.with_rescorer(Arc::new(Rescorer::load(path)?)),
        None => retriever,
    })
}
