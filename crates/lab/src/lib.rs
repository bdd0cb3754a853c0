//! The retrieval laboratory: what trains and tunes the retrieval the
//! product runs. CoTools' heads and tool judge on candle (`train`), trained
//! and tested on honest splits (`heads`); MiniLM itself fine-tuned
//! (`minilm_tune`); the learned re-scorer's and the cross-encoder's
//! training (`rescore`, `cross`); and their figures (`plot`). Each writes a
//! file that `[retrieval]` names and the core (or `switchyard-dense`) reads;
//! nothing in a session calls into this crate.

pub mod cross;
pub mod heads;
pub mod minilm_tune;
pub mod plot;
pub mod rescore;
pub mod train;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::retrieve::Embedder`), and Cargo alone decides
// which of them this crate may name.
use switchyard_core::{dataset, retrieve};
