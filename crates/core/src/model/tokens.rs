//! Token counting with a real BPE tokenizer (cl100k_base), used by the
//! simulated model so its token counts are those of the real prompt text.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

use super::Message;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("cl100k_base ships inside tiktoken-rs"))
}

pub fn count(text: &str) -> u64 {
    bpe().encode_ordinary(text).len() as u64
}

/// Tokens of a chat prompt, with the per-message overhead OpenAI documents
/// for its chat format (about 4 tokens a message plus 3 for the reply).
pub fn count_messages(messages: &[Message]) -> u64 {
    messages.iter().map(|m| 4 + count(&m.content)).sum::<u64>() + 3
}
