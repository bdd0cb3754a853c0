//! One `[[mcp]]` entry of the config: how to reach a server (a command on
//! stdio, or a Streamable HTTP `url`), what to take from it and how to price it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::oauth::OAuthConfig;
use crate::tool::HeaderValue;

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// Names the server in tool names, errors, events and the workbench.
    pub name: String,
    /// The server program, started with `args` and spoken to on stdio.
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables handed to the server, by name; their values
    /// come from Switchyard's own environment (so secrets stay out of files).
    #[serde(default)]
    pub env: Vec<String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A remote server (Streamable HTTP) instead of a command.
    #[serde(default)]
    pub url: Option<String>,
    /// Sent with every HTTP request, as in a manifest
    /// (`"literal"` or `{ env = "VAR", prefix = "Bearer " }`).
    #[serde(default)]
    pub headers: BTreeMap<String, HeaderValue>,
    /// Bounds starting the server and each call.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// Only these of the server's tools (by the server's names).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Cost of one call of each tool (default 1) and their category.
    #[serde(default)]
    pub cost: Option<f64>,
    #[serde(default)]
    pub category: Option<String>,
    /// Per tool, by the server's name: `[mcp.overrides.get_time] cost = 2`.
    #[serde(default)]
    pub overrides: BTreeMap<String, ToolOverride>,
    /// Restarts after the server dies or hangs, before it is left down.
    #[serde(default = "default_restarts")]
    pub max_restarts: u32,
    /// The longest message a stdio server may send, in MB: one without end
    /// stops the server instead of filling memory.
    #[serde(default = "default_max_message_mb")]
    pub max_message_mb: f64,
    /// A remote server that wants an authorized user: `[mcp.oauth]`.
    #[serde(default)]
    pub oauth: Option<OAuthConfig>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    #[serde(default)]
    pub cost: Option<f64>,
    #[serde(default)]
    pub category: Option<String>,
}

fn default_timeout_ms() -> u64 {
    30_000
}

fn default_restarts() -> u32 {
    3
}

fn default_max_message_mb() -> f64 {
    16.0
}

/// How a server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport<'a> {
    Stdio { command: &'a str },
    Http { url: &'a str },
}

impl McpServerConfig {
    /// A remote server at `url` with defaults, for `tools … --mcp-url`.
    pub fn remote(name: &str, url: &str) -> Self {
        McpServerConfig {
            name: name.to_string(),
            command: None,
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            url: Some(url.to_string()),
            headers: BTreeMap::new(),
            timeout_ms: default_timeout_ms(),
            tools: None,
            cost: None,
            category: None,
            overrides: BTreeMap::new(),
            max_restarts: default_restarts(),
            max_message_mb: default_max_message_mb(),
            oauth: None,
        }
    }

    /// `max_message_mb` in bytes.
    pub fn max_message_bytes(&self) -> u64 {
        // `check` refused a limit that is no size; the default is one.
        crate::tool::limits::limit_bytes(self.max_message_mb).unwrap_or(crate::tool::limits::DEFAULT_OUTPUT_CAP)
    }

    pub fn transport(&self) -> Transport<'_> {
        match (&self.command, &self.url) {
            (Some(command), _) => Transport::Stdio { command },
            (None, Some(url)) => Transport::Http { url },
            // `check` refuses an entry with neither.
            (None, None) => Transport::Stdio { command: "" },
        }
    }

    /// The first thing wrong with the entry: the field and why.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.name.trim().is_empty() || self.name.chars().any(|c| c.is_whitespace() || c == '.') {
            return Err(("name", format!("'{}' must be a non-empty name without spaces or dots", self.name)));
        }
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => return Err(("url", "give either `command` or `url`, not both".into())),
            (None, None) => return Err(("command", "give the server's `command` (stdio) or its `url` (HTTP)".into())),
            (Some(c), None) if c.trim().is_empty() => return Err(("command", "is empty".into())),
            (None, Some(u)) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                return Err(("url", format!("'{u}' is not an http:// or https:// URL")));
            }
            _ => {}
        }
        if self.command.is_none() && (!self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some()) {
            return Err(("args", "`args`, `env` and `cwd` are for a `command` server".into()));
        }
        if self.url.is_none() && !self.headers.is_empty() {
            return Err(("headers", "`headers` are for a `url` server".into()));
        }
        if let Some(o) = &self.oauth {
            if self.url.is_none() {
                return Err(("oauth", "is for a `url` server".into()));
            }
            if o.client_secret_env.is_some() && o.client_id.is_none() {
                return Err((
                    "oauth.client_secret_env",
                    "goes with the pre-registered `client_id` it belongs to".into(),
                ));
            }
            if let Some(u) = o.client_metadata_url.as_ref().filter(|u| !u.starts_with("https://")) {
                return Err(("oauth.client_metadata_url", format!("'{u}' is not an https:// URL")));
            }
        }
        if self.timeout_ms == 0 {
            return Err(("timeout_ms", "must be at least 1".into()));
        }
        crate::tool::limits::limit_bytes(self.max_message_mb).map_err(|why| ("max_message_mb", why))?;
        let bad_cost = |c: f64| !(c.is_finite() && c >= 0.0);
        if let Some(c) = self.cost.filter(|c| bad_cost(*c)) {
            return Err(("cost", format!("must be a number >= 0, got {c}")));
        }
        if self.overrides.values().any(|o| o.cost.is_some_and(bad_cost)) {
            return Err(("overrides", "a cost must be a number >= 0".into()));
        }
        Ok(())
    }
}
