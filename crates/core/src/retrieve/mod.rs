//! Retrieval of tools for a task (CoTools §3.2, docs/src/papers/cotools.md).
//! The built-in retriever is lexical (BM25) and needs no download; its
//! tokenizer and query similarity are shared with the simulated model and
//! budget planning. Dense embedders (an OpenAI-compatible endpoint here;
//! MiniLM and MPNet in process in `switchyard-dense`, behind [`Embedder`])
//! add cosine scores, and CoTools' trained heads reshape those vectors for
//! tool selection. Training them is the laboratory's (`switchyard-lab`).

pub mod blend;
pub mod bm25;
pub mod cache;
pub mod cotools;
pub mod embed;
pub mod http_embed;
pub mod index;
pub mod rerank;
pub mod rescore;
pub mod retriever;
pub mod settings;
pub mod synthetic_questions;
mod tokens;

pub use bm25::{Bm25Index, Hit};
pub use embed::{EmbedError, Embedder};
pub use retriever::{Rescore, Reshape, Retriever, Scored, ToolJudge};
pub use settings::{EmbedderKind, RetrievalConfig};
pub use tokens::{similarity, tokenize};
