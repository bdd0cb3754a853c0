//! An OpenAI-compatible `/v1/embeddings` endpoint as an embedder: one pooled
//! vector per input (OpenAI, vLLM, Ollama, TEI, llama.cpp with pooling on).
//! The key comes from the environment variable the config names and is
//! never part of an error.

use std::time::Duration;

use serde_json::{Value, json};

use super::embed::{EmbedError, Embedder, normalise};
use crate::text::error_chain;
use crate::text::secret::{Secret, redact};

/// Inputs per request: endpoints cap the batch (OpenAI at 2,048).
const BATCH: usize = 256;

#[derive(Debug, Clone)]
pub struct HttpEmbedConfig {
    /// Base URL up to `/v1`, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    pub model: String,
    /// Name of the environment variable holding the key, if any.
    pub api_key_env: Option<String>,
    /// Expected dimensions; unknown (learnt from the first reply) when None.
    pub dim: Option<usize>,
    pub timeout_ms: u64,
}

pub struct HttpEmbedder {
    cfg: HttpEmbedConfig,
    id: String,
    url: String,
    key: Option<Secret>,
    dim: usize,
    client: reqwest::Client,
    // The embedder is called from sync code that may itself run inside a
    // tokio runtime; requests run on a thread of their own, on this runtime.
    // Always Some but in `drop`, which takes it out.
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for HttpEmbedder {
    /// A session drops its retriever inside the engine's runtime, where
    /// dropping another runtime the usual way (waiting for its blocking
    /// threads) panics; no request is in flight by then, so nothing waits.
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl std::fmt::Debug for HttpEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEmbedder").field("url", &self.url).field("model", &self.cfg.model).finish_non_exhaustive()
    }
}

impl HttpEmbedder {
    /// Connects and asks for one vector, so a server that is down or a
    /// dimension that is not the configured one is reported now, not on the
    /// first query.
    pub fn connect(cfg: HttpEmbedConfig) -> Result<Self, EmbedError> {
        let url = format!("{}/embeddings", cfg.base_url.trim_end_matches('/'));
        let fail = |reason: String| EmbedError::Endpoint { url: url.clone(), reason };
        let key = match &cfg.api_key_env {
            None => None,
            Some(var) => match Secret::from_env(var) {
                Some(key) => Some(key),
                None => return Err(fail(format!("the environment variable {var} (api_key_env) is not set"))),
            },
        };
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(cfg.timeout_ms))
            .build()
            .map_err(|e| fail(format!("could not build the HTTP client: {e}")))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(format!("could not start the client runtime: {e}")))?;
        let id = format!("http:{}", cfg.model);
        let mut embedder =
            HttpEmbedder { id, url, key, dim: cfg.dim.unwrap_or(0), client, runtime: Some(runtime), cfg };
        let probe = embedder.request(&["dimension probe"])?;
        let got = probe.first().map_or(0, Vec::len);
        match embedder.cfg.dim {
            Some(want) if want != got => {
                return Err(EmbedError::Dimension { url: embedder.url.clone(), got, want });
            }
            _ => embedder.dim = got,
        }
        Ok(embedder)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |reason: String| EmbedError::Endpoint { url: self.url.clone(), reason };
        let body = json!({ "model": self.cfg.model, "input": texts });
        let mut req = self.client.post(&self.url).json(&body);
        if let Some(k) = &self.key {
            req = req.bearer_auth(k.expose());
        }
        let reply: Result<(u16, String), String> = std::thread::scope(|s| {
            s.spawn(|| {
                let Some(runtime) = &self.runtime else { return Err("the client runtime is gone".to_string()) };
                runtime.block_on(async {
                    let resp = req.send().await.map_err(|e| error_chain(&e))?;
                    let status = resp.status().as_u16();
                    let text = resp.text().await.map_err(|e| error_chain(&e))?;
                    Ok((status, text))
                })
            })
            .join()
            .unwrap_or_else(|_| Err("the request thread panicked".into()))
        });
        let (status, text) = reply.map_err(fail)?;
        // Quoted in errors below: an endpoint may echo the key in it.
        let text = redact(&text);
        if !(200..300).contains(&status) {
            let snippet: String = text.chars().take(200).collect();
            return Err(fail(format!("HTTP {status}: {snippet}")));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| fail(format!("the reply is not JSON: {e}")))?;
        let data =
            v.get("data").and_then(Value::as_array).ok_or_else(|| fail("the reply has no `data` list".into()))?;
        if data.len() != texts.len() {
            return Err(fail(format!("{} vectors for {} inputs", data.len(), texts.len())));
        }
        // `index` orders the vectors when present; the list's order otherwise.
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (pos, item) in data.iter().enumerate() {
            let at = item.get("index").and_then(Value::as_u64).map_or(pos, |i| i as usize);
            let emb = item.get("embedding").and_then(Value::as_array).ok_or_else(|| {
                fail(format!(
                    "data[{pos}].embedding is not a list of numbers (per-token embeddings are not pooled vectors)"
                ))
            })?;
            let mut vector = Vec::with_capacity(emb.len());
            for x in emb {
                let x = x.as_f64().ok_or_else(|| {
                    fail(format!(
                        "data[{pos}].embedding holds a non-number (per-token embeddings are not pooled vectors)"
                    ))
                })?;
                vector.push(x as f32);
            }
            if vector.is_empty() {
                return Err(fail(format!("data[{pos}].embedding is empty")));
            }
            normalise(&mut vector);
            let slot = out.get_mut(at).ok_or_else(|| fail(format!("data[{pos}].index {at} is out of range")))?;
            *slot = Some(vector);
        }
        out.into_iter().enumerate().map(|(i, v)| v.ok_or_else(|| fail(format!("no vector for input {i}")))).collect()
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let vectors = self.request(chunk)?;
            if let Some(v) = vectors.iter().find(|v| v.len() != self.dim) {
                return Err(EmbedError::Dimension { url: self.url.clone(), got: v.len(), want: self.dim });
            }
            out.extend(vectors);
        }
        Ok(out)
    }
}
