//! Which retriever the `--embedder`, `--lexical-weight`, `--heads` and
//! `--rescore` flags choose over the config's `[retrieval]`, and opening it
//! over a pool with a progress bar while the cache fills.

use std::path::PathBuf;
use std::sync::Arc;

use color_eyre::eyre::{Result, eyre};

use switchyard::config::Config;
use switchyard::dense::CrossRescorer;
use switchyard::lab::heads::{HeadsPlan, Pairs};
use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::rescore::Rescorer;
use switchyard::retrieve::retriever::doc_text;
use switchyard::retrieve::settings::load_heads;
use switchyard::retrieve::{EmbedderKind, Reshape, RetrievalConfig, Retriever};

use crate::cli::progress::embed_cached;

/// Which retriever: the config's `[retrieval]` unless a flag says otherwise.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct HowArgs {
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
    /// A trained cross-encoder of the first candidates (`retrieval cross train`).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["no_cross_encoder", "rescore"])]
    cross_encoder: Option<PathBuf>,
    /// Leave out the config's cross-encoder.
    #[arg(long)]
    no_cross_encoder: bool,
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
        if let Some(c) = &self.cross_encoder {
            r.cross_encoder = Some(c.clone());
            r.rescore = None;
        }
        if self.no_cross_encoder {
            r.cross_encoder = None;
        }
        r.check().map_err(|(f, why)| eyre!("retrieval.{f}: {why}"))?;
        Ok(r)
    }
}

/// What a re-scorer of the first candidates trains on: heads train's split
/// of `plan` (the same flags hold out the same tools), its pool, and the
/// retriever of `how` with no re-scorer (trained on its own order, never on
/// an older re-scorer's).
pub(crate) struct FirstCandidates {
    pub train: Pairs,
    pub validation: Pairs,
    pub docs: Vec<(String, String)>,
    pub how: RetrievalConfig,
    pub retriever: Retriever,
}

impl FirstCandidates {
    pub(super) fn open(config: &Config, plan: &HeadsPlan, how: &HowArgs) -> Result<Self> {
        let prepared = plan.prepare()?;
        let (train, validation) = prepared.kept_examples();
        if validation.is_empty() {
            return Err(eyre!("--validation: no tool left to validate the re-scorer on"));
        }
        let mut how = how.apply(config)?;
        how.rescore = None;
        how.cross_encoder = None;
        if how.embedder == EmbedderKind::Lexical {
            return Err(eyre!(
                "retrieval.embedder: a re-scorer re-orders a dense retriever's candidates (--embedder minilm)"
            ));
        }
        let docs: Vec<(String, String)> =
            prepared.pool().tools.iter().map(|t| (t.id.clone(), t.description.clone())).collect();
        let retriever = open(config, &how, &docs)?;
        Ok(FirstCandidates { train, validation, docs, how, retriever })
    }
}

/// Builds the retriever over `docs`, embedding what the cache lacks with a
/// progress bar (a 16,000-tool library takes minutes the first time).
pub(super) fn open(config: &Config, how: &RetrievalConfig, docs: &[(String, String)]) -> Result<Retriever> {
    let refs = docs.iter().map(|(n, t)| (n.as_str(), t.as_str()));
    let data = config.data_dir()?;
    let Some(embedder) = switchyard::dense::embedder(how, &data)? else {
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
    Ok(match (&how.rescore, &how.cross_encoder) {
        (Some(path), _) => retriever.with_rescorer(Arc::new(Rescorer::load(path)?)),
        (None, Some(path)) => retriever.with_rescorer(Arc::new(CrossRescorer::load(
            &data,
            path,
            docs.iter().map(|(n, t)| (n.as_str(), t.as_str())),
        )?)),
        (None, None) => retriever,
    })
}
