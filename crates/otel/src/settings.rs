//! Where spans go and what they may carry: `[otel]`, the command line's
//! flags, and the checked settings the exporter runs with.

use serde::Deserialize;

#[derive(thiserror::Error, Debug)]
pub enum OtelError {
    #[error("OTLP endpoint '{url}': {why}")]
    Endpoint { url: String, why: String },
    #[error(transparent)]
    Trace(#[from] crate::engine::trace::TraceError),
    #[error("{path}: {why}")]
    Input { path: String, why: String },
    #[error("could not export to the OTLP receiver at {url}: {why}")]
    Unreachable { url: String, why: String },
}

/// `[otel]` in the config, and the command line's `--otlp` / `--otel-content`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OtelConfig {
    /// The OTLP/HTTP receiver: a base URL (`http://127.0.0.1:6006`, to
    /// which `/v1/traces` is added) or the traces URL itself. None: no export.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Export message, argument and result content too.
    #[serde(default)]
    pub content: bool,
}

impl OtelConfig {
    /// The command line's settings over the config's: an endpoint given
    /// there wins, and content is exported if either asks.
    pub fn over(&self, base: &OtelConfig) -> OtelConfig {
        OtelConfig {
            endpoint: self.endpoint.clone().or_else(|| base.endpoint.clone()),
            content: self.content || base.content,
        }
    }

    /// What to export with, if an endpoint is set; an endpoint that is no
    /// http(s) URL is an error.
    pub fn settings(&self) -> Result<Option<OtelSettings>, OtelError> {
        self.endpoint.as_deref().map(|url| OtelSettings::new(url, self.content)).transpose()
    }
}

/// Where spans go and what they carry, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct OtelSettings {
    /// The full traces URL (`.../v1/traces`).
    pub traces_url: String,
    pub content: bool,
}

impl OtelSettings {
    pub fn new(url: &str, content: bool) -> Result<Self, OtelError> {
        let bad = |why: &str| OtelError::Endpoint { url: url.to_string(), why: why.to_string() };
        let parsed = reqwest::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(bad("OTLP/HTTP needs an http:// or https:// URL"));
        }
        if parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad("names no host"));
        }
        let mut traces = parsed.clone();
        if !parsed.path().ends_with("/v1/traces") {
            let base = parsed.path().trim_end_matches('/');
            traces.set_path(&format!("{base}/v1/traces"));
        }
        Ok(OtelSettings { traces_url: traces.to_string(), content })
    }
}
