//! The config file (`switchyard.toml`, see `config.example.toml`), its
//! embedded default, and the data directory. It is long because every
//! section of the file is read and checked here, in one place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::budget::ToolCosts;
use crate::engine::debug::{ApprovalPolicy, Condition};
use crate::engine::{ModelSlot, Models, Params, StrategyKind};
use crate::model::http_model::{HttpModel, HttpModelConfig};
use crate::model::price::Price;
use crate::model::{ChatModel, ReplyTokens, Role};
use crate::retrieve::RetrievalConfig;
use crate::sim::{SimConfig, SimModel};
use crate::strategy::atc::AtcConfig;
use crate::strategy::rewoo::prompt::{Category, default_categories};
use crate::tool::FileOptions;
use crate::tool::limits::limit_bytes;
use crate::tool::mcp::McpServerConfig;

#[derive(thiserror::Error, Debug)]
pub enum ConfigError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {why}", path.display())]
    Parse { path: PathBuf, why: String },
    #[error("{}: field '{field}': {why}", path.display())]
    Field { path: PathBuf, field: String, why: String },
    #[error("no data directory: set SWITCHYARD_DATA_DIR or `data_dir` in the config")]
    NoDataDir,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ModelConfig {
    Sim {
        #[serde(default)]
        seed: Option<u64>,
        #[serde(default = "default_noise")]
        noise: f64,
        #[serde(default)]
        price: Price,
    },
    /// An HTTP endpoint: `kind = "openai"` (Chat Completions, any
    /// compatible server), `"openai-responses"` (the Responses API) or
    /// `"anthropic"` (Messages); `api` is which, set from the kind.
    #[serde(alias = "anthropic", alias = "openai-responses")]
    Openai {
        #[serde(skip)]
        api: crate::model::wire::Dialect,
        base_url: String,
        model: String,
        #[serde(default)]
        api_key_env: Option<String>,
        #[serde(default = "default_timeout_ms")]
        timeout_ms: u64,
        #[serde(default = "default_retries")]
        max_retries: u32,
        #[serde(default = "yes")]
        native_tools: bool,
        #[serde(default = "yes")]
        json_schema: bool,
        /// The most tokens a reply may take (see `HttpModelConfig::max_tokens`).
        #[serde(default = "default_max_tokens")]
        max_tokens: u32,
        /// The most a reply's body may take, in MB (whole or fractional).
        #[serde(default = "default_max_reply_mb")]
        max_reply_mb: f64,
        /// Ask for replies as streams (see `HttpModelConfig::stream`).
        #[serde(default = "yes")]
        stream: bool,
        /// Send llama.cpp's `cache_prompt` (see `HttpModelConfig::cache_prompt`).
        #[serde(default)]
        cache_prompt: bool,
        /// Pin roles to llama.cpp server slots (see `HttpModelConfig::slots`).
        #[serde(default)]
        slots: BTreeMap<Role, u32>,
        /// The most requests in flight at once (see `HttpModelConfig::max_in_flight`).
        #[serde(default)]
        max_in_flight: Option<usize>,
        #[serde(default)]
        price: Price,
    },
}

/// Each model's `kind` as written: the HTTP kinds share one variant, so
/// which API it names is read here.
fn model_kinds(text: &str) -> BTreeMap<String, String> {
    let Ok(table) = text.parse::<toml::Table>() else { return BTreeMap::new() };
    let Some(models) = table.get("models").and_then(toml::Value::as_table) else { return BTreeMap::new() };
    models.iter().filter_map(|(name, m)| Some((name.clone(), m.get("kind")?.as_str()?.to_string()))).collect()
}

fn default_noise() -> f64 {
    0.1
}
fn default_max_tokens() -> u32 {
    1024
}
fn default_max_reply_mb() -> f64 {
    16.0
}

fn default_timeout_ms() -> u64 {
    60_000
}
fn default_retries() -> u32 {
    3
}
fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    strategy: Option<String>,
    #[serde(default)]
    library: Option<Vec<PathBuf>>,
    #[serde(default)]
    library_options: Vec<FileOptions>,
    #[serde(default)]
    mcp: Vec<McpServerConfig>,
    #[serde(default)]
    tasks: Option<PathBuf>,
    #[serde(default)]
    trajectories: Option<PathBuf>,
    #[serde(default)]
    data_dir: Option<PathBuf>,
    #[serde(default)]
    tool_timeout_ms: Option<u64>,
    #[serde(default)]
    tool_output_mb: Option<f64>,
    #[serde(default)]
    cost_unit: Option<String>,
    #[serde(default)]
    theme: Option<String>,
    #[serde(default)]
    pace_ms: Option<u64>,
    #[serde(default)]
    params: Option<Params>,
    #[serde(default)]
    btp: Option<BtpConfig>,
    #[serde(default)]
    rewoo: Option<RawRewoo>,
    #[serde(default)]
    retrieval: Option<RetrievalConfig>,
    #[serde(default)]
    atc: Option<AtcConfig>,
    #[serde(default)]
    models: BTreeMap<String, ModelConfig>,
    #[serde(default)]
    roles: BTreeMap<String, String>,
    #[serde(default)]
    reply_tokens: Option<ReplyTokens>,
    #[serde(default)]
    approve: Option<ApprovalPolicy>,
    #[serde(default)]
    debug: Option<RawDebug>,
    #[serde(default)]
    otel: Option<crate::otel::OtelConfig>,
}

/// The workbench's debugger (`[debug]`): breakpoints set at the start.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDebug {
    #[serde(default)]
    breaks: Vec<String>,
}

/// BTP's settings (`[btp]`).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BtpConfig {
    /// Plan and enforce when a budget is set.
    pub enabled: bool,
    /// Real costs are scaled by λ into integers for the plan (appendix A.1).
    pub lambda: f64,
    /// Retrieved tools the plan chooses among (the paper: 5).
    pub candidates: usize,
    /// Cost per second of a tool call's time.
    pub time_rate: f64,
    /// Ask the `judge` model whether a result helped, instead of the rule.
    pub model_judge: bool,
    /// v and F̃ for a tool with no experience.
    pub default_value: f64,
    pub default_freq: f64,
    /// Replace every tool's cost, as `--tool-costs` does (the BTP paper's
    /// setting: `"random:1-10"`), so a benchmark's config carries it.
    pub tool_costs: Option<ToolCosts>,
}

impl Default for BtpConfig {
    fn default() -> Self {
        BtpConfig {
            enabled: true,
            lambda: 100.0,
            candidates: 5,
            time_rate: 0.0,
            model_judge: false,
            default_value: 0.5,
            default_freq: 1.0,
            tool_costs: None,
        }
    }
}

/// rewoo's settings (`[rewoo]`).
#[derive(Clone, Debug, PartialEq)]
pub struct RewooConfig {
    /// What the tool classifier may label a tool with.
    pub categories: Vec<Category>,
}

impl Default for RewooConfig {
    fn default() -> Self {
        RewooConfig { categories: default_categories() }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRewoo {
    #[serde(default)]
    categories: Option<Vec<RawCategory>>,
}

/// A category as written: a bare name, or a table with a description. The
/// table is taken apart by hand because an untagged enum reports a stray
/// field only as "did not match any variant".
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum RawCategory {
    Name(String),
    Table(toml::Table),
    Other(toml::Value),
}

impl RawCategory {
    fn category(self) -> Result<Category, String> {
        let (name, description) = match self {
            RawCategory::Name(name) => (name, String::new()),
            RawCategory::Table(mut t) => {
                let text = |t: &mut toml::Table, key: &str| match t.remove(key) {
                    None => Ok(None),
                    Some(toml::Value::String(s)) => Ok(Some(s)),
                    Some(other) => Err(format!("'{key}' must be a string, got {}", other.type_str())),
                };
                let name = text(&mut t, "name")?.ok_or("has no 'name'")?;
                let description = text(&mut t, "description")?.unwrap_or_default();
                if let Some(key) = t.keys().next() {
                    return Err(format!("unknown field '{key}' (expected name, description)"));
                }
                (name, description)
            }
            RawCategory::Other(v) => {
                return Err(format!("must be a name or a table {{ name, description }}, got {}", v.type_str()));
            }
        };
        let name = name.trim().to_string();
        if name.is_empty() {
            return Err("the name is empty".into());
        }
        Ok(Category { name, description: description.trim().to_string() })
    }
}

/// Where a session keeps what it learns and records: the data directory
/// and the files in it, resolved once ([`Config::data_paths`]) and passed
/// down, so no part of a session asks the config again.
#[derive(Clone, Debug, PartialEq)]
pub struct DataPaths {
    root: PathBuf,
}

impl DataPaths {
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// ToolNet's learnt graph (a snapshot and its journal).
    pub fn graph(&self) -> PathBuf {
        self.root.join("graph.json")
    }
    /// BTP's experience: every tool usage, appended.
    pub fn experience(&self) -> PathBuf {
        self.root.join("experience.jsonl")
    }
    /// The classifier's label cache (rewoo).
    pub fn categories(&self) -> PathBuf {
        self.root.join("categories.json")
    }
    /// ATC's probed protocols, a file per tool.
    pub fn protocols(&self) -> PathBuf {
        self.root.join("protocols")
    }
    /// Session and fork traces.
    pub fn traces(&self) -> PathBuf {
        self.root.join("traces")
    }
}

/// Everything a run needs to know before it starts.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where the config came from; None for the embedded default.
    pub path: Option<PathBuf>,
    pub seed: u64,
    pub strategy: StrategyKind,
    pub library: Vec<PathBuf>,
    /// Per-file options of the library's JSON files (`[[library_options]]`).
    pub library_options: Vec<FileOptions>,
    /// MCP servers whose tools join the library (`[[mcp]]`).
    pub mcp: Vec<McpServerConfig>,
    pub tasks: PathBuf,
    pub trajectories: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub tool_timeout_ms: u64,
    /// The most a command tool may print on stdout, or an HTTP tool's body
    /// may take, in bytes (`tool_output_mb`).
    pub tool_output_bytes: u64,
    pub cost_unit: String,
    /// The workbench's theme: a shipped name or a theme file.
    pub theme: String,
    /// The workbench waits this long before each call, so a run can be followed.
    pub pace_ms: u64,
    pub params: Params,
    pub btp: BtpConfig,
    pub rewoo: RewooConfig,
    /// How tools are retrieved (`[retrieval]`).
    pub retrieval: RetrievalConfig,
    /// ATC's reflection, probing and sandbox limits (`[atc]`).
    pub atc: AtcConfig,
    pub models: BTreeMap<String, ModelConfig>,
    /// Role → model name.
    pub roles: BTreeMap<Role, String>,
    /// The most tokens each role's reply may take (`[reply_tokens]`).
    pub reply_tokens: ReplyTokens,
    /// The workbench's approvals (`[approve]`) and breakpoints (`[debug] breaks`).
    pub approve: ApprovalPolicy,
    pub breaks: Vec<Condition>,
    /// OpenTelemetry export of the sessions `session::prepare` starts (`[otel]`).
    pub otel: crate::otel::OtelConfig,
}

/// The sample library, tasks and trajectories shipped in the repository.
pub fn sample_dir() -> PathBuf {
    crate::task::embedded_sample_dir()
}

impl Default for Config {
    /// The embedded default: the simulated model in every role, the sample
    /// tools and tasks, ToolNet. `sim-weak` and `sim-strong` stand in for a
    /// cheap and a strong model, so a planner × solver matrix runs offline.
    fn default() -> Self {
        let dir = sample_dir();
        let sim = |noise: f64, input_per_mtok: f64, output_per_mtok: f64| ModelConfig::Sim {
            seed: None,
            noise,
            price: Price { input_per_mtok, output_per_mtok },
        };
        let models = BTreeMap::from([
            ("sim".to_string(), sim(default_noise(), 0.0, 0.0)),
            ("sim-weak".to_string(), sim(0.35, 0.15, 0.60)),
            ("sim-strong".to_string(), sim(0.03, 2.50, 10.00)),
        ]);
        Config {
            path: None,
            seed: 42,
            strategy: StrategyKind::Toolnet,
            library: vec![dir.clone()],
            library_options: Vec::new(),
            mcp: Vec::new(),
            tasks: dir.join("tasks/sample.toml"),
            trajectories: Some(dir.join("trajectories.jsonl")),
            data_dir: None,
            tool_timeout_ms: 10_000,
            tool_output_bytes: crate::tool::limits::DEFAULT_OUTPUT_CAP,
            cost_unit: "credits".into(),
            theme: "dark".into(),
            pace_ms: 400,
            params: Params::default(),
            btp: BtpConfig::default(),
            rewoo: RewooConfig::default(),
            atc: AtcConfig::default(),
            retrieval: RetrievalConfig::default(),
            models,
            roles: Role::ALL.into_iter().map(|r| (r, "sim".to_string())).collect(),
            reply_tokens: ReplyTokens::default(),
            approve: ApprovalPolicy::default(),
            breaks: Vec::new(),
            otel: Default::default(),
        }
    }
}

impl Config {
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: path.to_path_buf(), why: toml_error(text, &e) })?;
        let field =
            |field: &str, why: String| ConfigError::Field { path: path.to_path_buf(), field: field.to_string(), why };
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let rel = |p: PathBuf| if p.is_absolute() { p } else { base.join(p) };
        let mut c = Config { path: Some(path.to_path_buf()), ..Config::default() };
        if let Some(s) = raw.seed {
            c.seed = s;
        }
        if let Some(s) = raw.strategy {
            c.strategy = s.parse().map_err(|e| field("strategy", e))?;
        }
        if let Some(l) = raw.library {
            if l.is_empty() {
                return Err(field("library", "names no manifest file or folder".into()));
            }
            c.library = l.into_iter().map(rel).collect();
            // The sample trajectories name the sample tools: a library of
            // one's own starts from a uniform graph unless it names its own.
            c.trajectories = None;
        }
        c.library_options = raw.library_options.into_iter().map(|o| FileOptions { path: rel(o.path), ..o }).collect();
        for (i, mut server) in raw.mcp.into_iter().enumerate() {
            server.check().map_err(|(f, why)| field(&format!("mcp[{i}].{f}"), why))?;
            if c.mcp.iter().any(|s| s.name == server.name) {
                return Err(field(
                    &format!("mcp[{i}].name"),
                    format!("a server named '{}' is listed twice", server.name),
                ));
            }
            // A program given by path is found from the config's folder, as
            // every path in the config is; a bare name is looked up on PATH.
            if let Some(cmd) = server.command.as_mut().filter(|c| c.contains('/')) {
                *cmd = rel(PathBuf::from(&*cmd)).display().to_string();
            }
            server.cwd = server.cwd.map(rel);
            c.mcp.push(server);
        }
        if let Some(t) = raw.tasks {
            c.tasks = rel(t);
        }
        if let Some(t) = raw.trajectories {
            c.trajectories = Some(rel(t));
        }
        c.data_dir = raw.data_dir.map(rel);
        if let Some(t) = raw.tool_timeout_ms {
            if t == 0 {
                return Err(field("tool_timeout_ms", "must be at least 1".into()));
            }
            c.tool_timeout_ms = t;
        }
        if let Some(mb) = raw.tool_output_mb {
            c.tool_output_bytes = limit_bytes(mb).map_err(|why| field("tool_output_mb", why))?;
        }
        if let Some(u) = raw.cost_unit {
            c.cost_unit = u;
        }
        if let Some(t) = raw.theme {
            // A theme file is read from the config's folder like any path.
            c.theme = if t.ends_with(".toml") { rel(PathBuf::from(t)).display().to_string() } else { t };
        }
        if let Some(p) = raw.pace_ms {
            c.pace_ms = p;
        }
        c.approve = raw.approve.unwrap_or_default();
        for (i, b) in raw.debug.map(|d| d.breaks).unwrap_or_default().iter().enumerate() {
            c.breaks.push(b.parse().map_err(|why| field(&format!("debug.breaks[{i}]"), why))?);
        }
        if let Some(b) = raw.btp {
            if !(b.lambda.is_finite() && b.lambda >= 1.0) {
                return Err(field("btp.lambda", format!("must be a number >= 1, got {}", b.lambda)));
            }
            if b.candidates == 0 {
                return Err(field("btp.candidates", "must be at least 1".into()));
            }
            if !(0.0..=1.0).contains(&b.default_value) {
                return Err(field("btp.default_value", "must be within [0, 1]".into()));
            }
            if !(b.default_freq.is_finite() && b.default_freq >= 0.0 && b.time_rate.is_finite() && b.time_rate >= 0.0) {
                return Err(field("btp", "default_freq and time_rate must be numbers >= 0".into()));
            }
            c.btp = b;
        }
        if let Some(mut r) = raw.retrieval {
            r.check().map_err(|(f, why)| field(&format!("retrieval.{f}"), why))?;
            r.heads = r.heads.map(rel);
            r.minilm_weights = r.minilm_weights.map(rel);
            r.judge = r.judge.map(rel);
            r.rescore = r.rescore.map(rel);
            r.cross_encoder = r.cross_encoder.map(rel);
            c.retrieval = r;
        }
        if let Some(a) = raw.atc {
            if a.reflect_rounds > 10 {
                return Err(field("atc.reflect_rounds", "must be at most 10".into()));
            }
            if a.probe_samples == 0 || a.probe_samples > 10 {
                return Err(field("atc.probe_samples", "must be within 1..=10".into()));
            }
            if a.probe_rounds > 10 {
                return Err(field("atc.probe_rounds", "must be at most 10".into()));
            }
            if a.limits.max_operations == 0 || a.limits.deadline_ms == 0 || a.limits.max_tool_calls == 0 {
                return Err(field("atc.limits", "max_operations, deadline_ms and max_tool_calls must be > 0".into()));
            }
            c.atc = a;
        }
        if let Some(r) = raw.rewoo
            && let Some(items) = r.categories
        {
            if items.is_empty() {
                return Err(field("rewoo.categories", "lists no category".into()));
            }
            let mut categories: Vec<Category> = Vec::with_capacity(items.len());
            for (i, item) in items.into_iter().enumerate() {
                let at = format!("rewoo.categories[{i}]");
                let category = item.category().map_err(|why| field(&at, why))?;
                if categories.iter().any(|k| k.name == category.name) {
                    return Err(field(&at, format!("'{}' is listed twice", category.name)));
                }
                categories.push(category);
            }
            c.rewoo.categories = categories;
        }
        if let Some(r) = raw.reply_tokens {
            if let Some(role) = Role::ALL.into_iter().find(|role| r.of(*role) == Some(0)) {
                return Err(field(&format!("reply_tokens.{}", role.as_str()), "must be at least 1".into()));
            }
            c.reply_tokens = r;
        }
        if let Some(p) = raw.params {
            p.validate().map_err(|e| field(&format!("params.{}", e.param), e.why))?;
            c.params = p;
        }
        let kinds = model_kinds(text);
        for (name, mut m) in raw.models {
            if let ModelConfig::Openai { api, .. } = &mut m {
                *api = match kinds.get(&name).map(String::as_str) {
                    Some("anthropic") => crate::model::wire::Dialect::Anthropic,
                    Some("openai-responses") => crate::model::wire::Dialect::Responses,
                    _ => crate::model::wire::Dialect::Chat,
                };
            }
            match &m {
                ModelConfig::Openai { api, slots, .. }
                    if !slots.is_empty() && *api != crate::model::wire::Dialect::Chat =>
                {
                    return Err(field(
                        &format!("models.{name}.slots"),
                        "server slots are llama.cpp's (`id_slot`), for a `kind = \"openai\"` model only".into(),
                    ));
                }
                ModelConfig::Sim { noise, .. } if !(0.0..=1.0).contains(noise) => {
                    return Err(field(&format!("models.{name}.noise"), format!("must be within [0, 1], got {noise}")));
                }
                ModelConfig::Openai { base_url, .. }
                    if !(base_url.starts_with("http://") || base_url.starts_with("https://")) =>
                {
                    return Err(field(
                        &format!("models.{name}.base_url"),
                        format!("'{base_url}' is not an http(s) URL"),
                    ));
                }
                ModelConfig::Openai { api_key_env: Some(v), .. } if v.trim().is_empty() => {
                    return Err(field(&format!("models.{name}.api_key_env"), "names no environment variable".into()));
                }
                ModelConfig::Openai { max_reply_mb, .. } if limit_bytes(*max_reply_mb).is_err() => {
                    let why = limit_bytes(*max_reply_mb).err().unwrap_or_default();
                    return Err(field(&format!("models.{name}.max_reply_mb"), why));
                }
                _ => {}
            }
            c.models.insert(name, m);
        }
        for (role, model) in raw.roles {
            let r = Role::parse(&role).ok_or_else(|| {
                field(
                    &format!("roles.{role}"),
                    "unknown role (planner, solver, actor, evaluator, classifier, judge, agent, scanner)".into(),
                )
            })?;
            if !c.models.contains_key(&model) {
                let known: Vec<&str> = c.models.keys().map(String::as_str).collect();
                return Err(field(
                    &format!("roles.{role}"),
                    format!("no model named '{model}' (known: {})", known.join(", ")),
                ));
            }
            c.roles.insert(r, model);
        }
        if let Some(o) = raw.otel {
            o.settings().map_err(|e| field("otel.endpoint", e.to_string()))?;
            c.otel = o;
        }
        Ok(c)
    }

    /// The data directory: the config's, else SWITCHYARD_DATA_DIR, else the
    /// platform's (e.g. ~/.local/share/switchyard).
    /// Turns constrained decoding (JSON-schema response formats) on or off
    /// for every OpenAI-compatible model, to compare the two.
    pub fn set_json_schema(&mut self, on: bool) {
        for m in self.models.values_mut() {
            if let ModelConfig::Openai { json_schema, .. } = m {
                *json_schema = on;
            }
        }
    }

    /// The files of the data directory, resolved once for a session.
    pub fn data_paths(&self) -> Result<DataPaths, ConfigError> {
        self.data_dir().map(|root| DataPaths { root })
    }

    pub fn data_dir(&self) -> Result<PathBuf, ConfigError> {
        if let Some(d) = &self.data_dir {
            return Ok(d.clone());
        }
        if let Some(d) = std::env::var_os("SWITCHYARD_DATA_DIR").filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(d));
        }
        directories::ProjectDirs::from("", "", "switchyard")
            .map(|p| p.data_dir().to_path_buf())
            .ok_or(ConfigError::NoDataDir)
    }

    /// Builds every configured model once. A model a role names must build
    /// (a missing API-key variable is an error here, before anything runs);
    /// the others are only offered for switching if they do.
    pub fn build_models(&self, seed: u64) -> Result<Models, ConfigError> {
        let mut built: BTreeMap<&str, ModelSlot> = BTreeMap::new();
        for name in self.roles.values() {
            if !built.contains_key(name.as_str()) {
                built.insert(name, self.build_model(name, seed)?);
            }
        }
        let actor = built[self.roles[&Role::Actor].as_str()].clone();
        let mut models = Models::single(actor.model, actor.price);
        models.set_reply_tokens(self.reply_tokens);
        for (role, name) in &self.roles {
            models.set(*role, built[name.as_str()].clone());
        }
        for name in self.models.keys() {
            if !built.contains_key(name.as_str())
                && let Ok(slot) = self.build_model(name, seed)
            {
                models.offer(slot);
            }
        }
        Ok(models)
    }

    /// The model a role plays with, built alone (`scan`'s scanner): the
    /// role's model in `[roles]`, else the actor's.
    pub fn role_model(&self, role: Role, seed: u64) -> Result<(String, Arc<dyn ChatModel>), ConfigError> {
        let name = self.roles.get(&role).or_else(|| self.roles.get(&Role::Actor)).cloned().unwrap_or_default();
        self.named_model(&name, seed)
    }

    /// The configured model `name`, built alone.
    pub fn named_model(&self, name: &str, seed: u64) -> Result<(String, Arc<dyn ChatModel>), ConfigError> {
        Ok((name.to_string(), self.build_model(name, seed)?.model))
    }

    fn build_model(&self, name: &str, seed: u64) -> Result<ModelSlot, ConfigError> {
        let origin = self.path.clone().unwrap_or_else(|| PathBuf::from("(default config)"));
        {
            let cfg = self.models.get(name).ok_or_else(|| ConfigError::Field {
                path: origin.clone(),
                field: "roles".into(),
                why: format!("no model named '{name}'"),
            })?;
            let slot = match cfg {
                ModelConfig::Sim { seed: own, noise, price } => ModelSlot {
                    model: Arc::new(SimModel::new(SimConfig {
                        name: name.to_string(),
                        seed: own.unwrap_or(seed),
                        noise: *noise,
                    })) as Arc<dyn ChatModel>,
                    price: *price,
                },
                ModelConfig::Openai {
                    api,
                    base_url,
                    model,
                    api_key_env,
                    timeout_ms,
                    max_retries,
                    native_tools,
                    json_schema,
                    max_tokens,
                    max_reply_mb,
                    stream,
                    cache_prompt,
                    slots,
                    max_in_flight,
                    price,
                } => {
                    if *max_in_flight == Some(0) {
                        return Err(ConfigError::Field {
                            path: origin.clone(),
                            field: format!("models.{name}.max_in_flight"),
                            why: "must be at least 1 (leave it out for no bound)".into(),
                        });
                    }
                    let max_reply_bytes = limit_bytes(*max_reply_mb).map_err(|why| ConfigError::Field {
                        path: origin.clone(),
                        field: format!("models.{name}.max_reply_mb"),
                        why,
                    })?;
                    let m = HttpModel::new(HttpModelConfig {
                        name: name.to_string(),
                        base_url: base_url.clone(),
                        model: model.clone(),
                        api_key_env: api_key_env.clone(),
                        timeout_ms: *timeout_ms,
                        max_retries: *max_retries,
                        native_tools: *native_tools,
                        json_schema: *json_schema,
                        max_tokens: *max_tokens,
                        max_reply_bytes,
                        api: *api,
                        stream: *stream,
                        cache_prompt: *cache_prompt,
                        slots: slots.clone(),
                        max_in_flight: *max_in_flight,
                    })
                    .map_err(|e| ConfigError::Field {
                        path: origin.clone(),
                        field: format!("models.{name}.api_key_env"),
                        why: e.to_string(),
                    })?;
                    ModelSlot { model: Arc::new(m), price: *price }
                }
            };
            Ok(slot)
        }
    }
}

/// A TOML error with its line and column.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
            format!("line {line}, column {col}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}
