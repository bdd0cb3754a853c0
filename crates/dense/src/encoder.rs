//! What the in-process sentence encoders share: their files, checked by
//! sha256 before anything is read from them; a tokenizer padding to the
//! batch's longest text; batches of similar lengths; mean pooling over the
//! real tokens.

use std::path::Path;
use std::sync::Mutex;

use candle_core::{DType, Device, Tensor};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::retrieve::embed::{EmbedError, normalise};

/// A model's files, their recorded sha256 and the script that installs them.
pub struct Files {
    pub list: &'static [(&'static str, &'static str)],
    pub install: &'static str,
}

impl Files {
    /// Every file present in `dir` with its recorded sha256.
    pub fn check(&self, dir: &Path) -> Result<(), EmbedError> {
        for &(name, want) in self.list {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => EmbedError::Missing { path: path.clone(), install: self.install },
                _ => EmbedError::Load { path: path.clone(), reason: e.to_string() },
            })?;
            let got = sha256_hex(&bytes);
            if got != want {
                return Err(EmbedError::Checksum { path, got, want: want.to_owned(), install: self.install });
            }
        }
        Ok(())
    }
}

pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(bytes))
}

/// The error for a file of `dir` that could not be read as what it is.
pub fn load_error(dir: &Path, name: &str) -> impl Fn(&dyn std::fmt::Display) -> EmbedError {
    let path = dir.join(name);
    move |e| EmbedError::Load { path: path.clone(), reason: e.to_string() }
}

/// `dir/tokenizer.json`, padding with `pad` (id, token) to the batch's
/// longest text and cutting at `max_tokens`. The shipped tokenizers pad
/// every input to a fixed length; the batch's longest gives the same
/// vectors (the mask hides padding) for a fraction of the work.
pub fn tokenizer(dir: &Path, max_tokens: usize, pad: (u32, &str)) -> Result<Mutex<Tokenizer>, EmbedError> {
    let err = load_error(dir, "tokenizer.json");
    let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| err(&e))?;
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        pad_id: pad.0,
        pad_token: pad.1.to_owned(),
        ..Default::default()
    }));
    tokenizer
        .with_truncation(Some(TruncationParams { max_length: max_tokens, ..Default::default() }))
        .map_err(|e| err(&e))?;
    // `Tokenizer` is not `Sync` in every version: one lock keeps it simple.
    Ok(Mutex::new(tokenizer))
}

/// A batch as token ids, attention mask and segment (token type) ids, each
/// `(texts, longest)`.
pub struct Batch {
    pub ids: Vec<u32>,
    pub mask: Vec<u32>,
    /// 0 for a single text's tokens and a pair's first; 1 for its second.
    pub types: Vec<u32>,
    pub n: usize,
    pub len: usize,
}

impl Batch {
    pub fn encode(tokenizer: &Mutex<Tokenizer>, texts: &[&str]) -> Result<Batch, EmbedError> {
        let encodings = {
            let tokenizer = tokenizer.lock().unwrap_or_else(|p| p.into_inner());
            tokenizer.encode_batch(texts.to_vec(), true).map_err(|e| EmbedError::Compute(e.to_string()))?
        };
        Ok(Self::from_encodings(&encodings))
    }

    /// Each `(first, second)` as one sequence, `[CLS] first [SEP] second
    /// [SEP]`, the second's tokens of segment 1: what a cross-encoder reads.
    pub fn encode_pairs(tokenizer: &Mutex<Tokenizer>, pairs: &[(&str, &str)]) -> Result<Batch, EmbedError> {
        let inputs: Vec<tokenizers::EncodeInput> = pairs.iter().map(|&(a, b)| (a, b).into()).collect();
        let encodings = {
            let tokenizer = tokenizer.lock().unwrap_or_else(|p| p.into_inner());
            tokenizer.encode_batch(inputs, true).map_err(|e| EmbedError::Compute(e.to_string()))?
        };
        Ok(Self::from_encodings(&encodings))
    }

    fn from_encodings(encodings: &[tokenizers::Encoding]) -> Batch {
        let len = encodings.first().map_or(0, |e| e.get_ids().len());
        let n = encodings.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        let mut types = Vec::with_capacity(n * len);
        for e in encodings {
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
            types.extend_from_slice(e.get_type_ids());
        }
        Batch { ids, mask, types, n, len }
    }

    pub fn tensor(&self, values: &[u32], device: &Device) -> candle_core::Result<Tensor> {
        Tensor::from_vec(values.iter().map(|&v| i64::from(v)).collect::<Vec<_>>(), (self.n, self.len), device)
    }
}

/// The mean of `hidden` `(n, len, dim)` over the real tokens of `mask`
/// `(n, len)`: `(n, dim)`. Padding must not pull the mean.
pub fn masked_mean(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&m)?.sum(1)?;
    summed.broadcast_div(&m.sum(1)?.clamp(1e-9, f64::MAX)?)
}

/// [`masked_mean`], each vector L2-normalised.
pub fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Vec<Vec<f32>>> {
    let mut pooled = masked_mean(hidden, mask)?.to_vec2::<f32>()?;
    for v in &mut pooled {
        normalise(v);
    }
    Ok(pooled)
}

/// `texts` embedded `batch` at a time by `one_batch`, in the caller's order.
/// Similar lengths in a batch pad less: texts go in sorted by length.
pub fn in_batches(
    texts: &[&str],
    batch: usize,
    mut one_batch: impl FnMut(&[&str]) -> Result<Vec<Vec<f32>>, EmbedError>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by_key(|&i| texts[i].len());
    let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
    for chunk in order.chunks(batch) {
        let part: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
        for (&i, v) in chunk.iter().zip(one_batch(&part)?) {
            vectors[i] = Some(v);
        }
    }
    vectors.into_iter().map(|v| v.ok_or_else(|| EmbedError::Compute("a text got no vector".into()))).collect()
}
