//! The dense models on candle, behind the core's traits: MiniLM and MPNet
//! as [`Embedder`]s, the cross-encoder as a [`Rescore`]. Nothing below this
//! crate names candle, so the engine and strategies build without it, and
//! what is trained is the laboratory's (`switchyard-lab`), not this crate's.
//!
//! [`Rescore`]: crate::retrieve::Rescore

pub mod cross_encoder;
pub mod encoder;
pub mod minilm;
pub mod mpnet;

use std::path::Path;
use std::sync::Arc;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::retrieve::Embedder`), and Cargo alone decides
// which of them this crate may name.
use switchyard_core::retrieve;

use retrieve::http_embed::{HttpEmbedConfig, HttpEmbedder};
use retrieve::{EmbedError, Embedder, EmbedderKind, RetrievalConfig};

pub use cross_encoder::{CrossEncoder, CrossRescorer};
pub use minilm::MiniLm;
pub use mpnet::MpNet;

/// The dense embedder `[retrieval]` names (None: lexical), its files under
/// `data_dir` (`minilm_weights` relative to where the config was read).
pub fn embedder(config: &RetrievalConfig, data_dir: &Path) -> Result<Option<Arc<dyn Embedder>>, EmbedError> {
    Ok(match config.embedder {
        EmbedderKind::Lexical => None,
        EmbedderKind::Minilm => Some(Arc::new(match &config.minilm_weights {
            Some(w) => MiniLm::load_tuned(&MiniLm::folder(data_dir), w)?,
            None => MiniLm::load(&MiniLm::folder(data_dir))?,
        })),
        EmbedderKind::Mpnet => Some(Arc::new(MpNet::load(&MpNet::folder(data_dir))?)),
        EmbedderKind::Http => Some(Arc::new(HttpEmbedder::connect(HttpEmbedConfig {
            base_url: config.url.clone().unwrap_or_default(),
            model: config.model.clone().unwrap_or_default(),
            api_key_env: config.api_key_env.clone(),
            dim: config.dim,
            timeout_ms: config.timeout_ms,
        })?)),
    })
}
