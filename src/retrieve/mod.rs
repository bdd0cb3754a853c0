//! Retrieval of tools for a task (DESIGN §3.3). The built-in retriever is
//! lexical (BM25) and needs no download; its tokenizer and query similarity
//! are shared with the simulated model and budget planning.

pub mod bm25;
mod tokens;

pub use bm25::{Bm25Index, Hit};
pub use tokens::{similarity, tokenize};
