//! CoTools' trainable parts (CoTools §3.1–3.2, docs/src/papers/cotools.md), and
//! only its formulas:
//!
//! ```text
//! MLP(h)  = W_down((σ(W_gate h)) ⊙ W_up h)           σ = SiLU
//! E_Q(h)  = norm(W_dim ⊙ (h + MLP_Q(h)))              query encoder (eq. 6)
//! E_T(h)  = norm(W_dim ⊙ (h + MLP_T(h)))              tool encoder (eq. 8)
//! Score   = E_Q(h_q) · E_T(h_t)                         (eq. 9)
//! J(h)    = sigmoid(MLP_J(h))                           tool judge (eq. 3–4)
//! ```
//!
//! `h` is the embedder's vector instead of an LLM's hidden state. Inference
//! is plain Rust (a few hundred thousand multiply-adds per vector); the
//! training is the laboratory's (`switchyard-lab`), on candle. Both are
//! saved as safetensors with their embedder's id, so vectors of one model
//! are never fed to heads trained on another.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::embed::{dot, normalise};

/// Why heads or a judge could not be loaded, saved, trained or used; every
/// variant names the file or the field at fault.
#[derive(Debug, thiserror::Error)]
pub enum HeadsError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: not a heads file: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error(
        "heads file {path} was trained on embedder {trained} ({trained_dim} dims), not {got} ({got_dim} dims); train heads for this embedder with `switchyard retrieval heads train`"
    )]
    Embedder { path: String, trained: String, trained_dim: usize, got: String, got_dim: usize },
    #[error("training: {field}: {reason}")]
    Train { field: String, reason: String },
}

/// `W_down((σ(W_gate h)) ⊙ W_up h)`, row-major: `gate` and `up` are
/// hidden × d, `down` is out × hidden.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlp {
    pub d: usize,
    pub hidden: usize,
    pub out: usize,
    pub gate: Vec<f32>,
    pub up: Vec<f32>,
    pub down: Vec<f32>,
}

impl Mlp {
    /// All zeros: the output is 0, so a residual encoder starts as identity.
    pub fn zeros(d: usize, hidden: usize, out: usize) -> Self {
        Mlp { d, hidden, out, gate: vec![0.0; hidden * d], up: vec![0.0; hidden * d], down: vec![0.0; out * hidden] }
    }

    pub fn forward(&self, h: &[f32]) -> Vec<f32> {
        let a: Vec<f32> = (0..self.hidden)
            .map(|j| {
                let g = dot(&self.gate[j * self.d..(j + 1) * self.d], h);
                let u = dot(&self.up[j * self.d..(j + 1) * self.d], h);
                silu(g) * u
            })
            .collect();
        (0..self.out).map(|i| dot(&self.down[i * self.hidden..(i + 1) * self.hidden], &a)).collect()
    }

    fn tensors<'a>(&'a self, prefix: &str, out: &mut Vec<(String, Vec<usize>, &'a [f32])>) {
        out.push((format!("{prefix}.gate"), vec![self.hidden, self.d], &self.gate));
        out.push((format!("{prefix}.up"), vec![self.hidden, self.d], &self.up));
        out.push((format!("{prefix}.down"), vec![self.out, self.hidden], &self.down));
    }

    fn take(file: &mut SafeFile, prefix: &str, d: usize, hidden: usize, out: usize) -> Result<Self, HeadsError> {
        Ok(Mlp {
            d,
            hidden,
            out,
            gate: file.take(&format!("{prefix}.gate"), &[hidden, d])?,
            up: file.take(&format!("{prefix}.up"), &[hidden, d])?,
            down: file.take(&format!("{prefix}.down"), &[out, hidden])?,
        })
    }
}

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// The query and tool encoders with their shared `W_dim`.
#[derive(Debug, Clone, PartialEq)]
pub struct Heads {
    embedder: String,
    w_dim: Vec<f32>,
    query: Mlp,
    tool: Mlp,
    /// Free-form training summary (JSON), kept in the file's metadata.
    summary: String,
    /// Where the heads were loaded from, for error messages.
    source: Option<PathBuf>,
}

impl Heads {
    /// Untrained heads: `W_dim` = 1 and MLPs that output 0, so encoding is
    /// the identity on normalised vectors (the raw embedder's ranking).
    pub fn identity(embedder: &str, dim: usize, hidden: usize) -> Self {
        Heads {
            embedder: embedder.to_owned(),
            w_dim: vec![1.0; dim],
            query: Mlp::zeros(dim, hidden, dim),
            tool: Mlp::zeros(dim, hidden, dim),
            summary: String::new(),
            source: None,
        }
    }

    /// Trained heads: `W_dim` and the two encoders, with the training's
    /// summary (JSON) to keep in the file.
    pub fn trained(embedder: &str, w_dim: Vec<f32>, query: Mlp, tool: Mlp, summary: &str) -> Self {
        Heads { embedder: embedder.to_owned(), w_dim, query, tool, summary: summary.to_owned(), source: None }
    }

    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    pub fn dim(&self) -> usize {
        self.w_dim.len()
    }

    pub fn hidden(&self) -> usize {
        self.query.hidden
    }

    pub fn summary(&self) -> &str {
        &self.summary
    }

    pub fn set_summary(&mut self, summary: String) {
        self.summary = summary;
    }

    pub fn encode_query(&self, h: &[f32]) -> Vec<f32> {
        encode(&self.query, &self.w_dim, h)
    }

    pub fn encode_tool(&self, h: &[f32]) -> Vec<f32> {
        encode(&self.tool, &self.w_dim, h)
    }

    pub fn encode_tools(&self, hs: &[Vec<f32>]) -> Vec<Vec<f32>> {
        hs.iter().map(|h| self.encode_tool(h)).collect()
    }

    /// The `n` dimensions with the largest |W_dim|, largest first: the ones
    /// the paper reads as carrying tool-selection meaning.
    pub fn top_dims(&self, n: usize) -> Vec<(usize, f32)> {
        let mut dims: Vec<(usize, f32)> = self.w_dim.iter().copied().enumerate().collect();
        dims.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
        dims.truncate(n);
        dims
    }

    pub fn check_embedder(&self, id: &str, dim: usize) -> Result<(), HeadsError> {
        check(&self.source, &self.embedder, self.dim(), id, dim)
    }

    pub fn save(&self, path: &Path) -> Result<(), HeadsError> {
        let d = self.dim();
        let mut tensors = vec![("w_dim".to_owned(), vec![d], self.w_dim.as_slice())];
        self.query.tensors("query", &mut tensors);
        self.tool.tensors("tool", &mut tensors);
        let meta = metadata("heads", &self.embedder, d, self.hidden(), &self.summary);
        write_safetensors(path, &tensors, &meta)
    }

    pub fn load(path: &Path) -> Result<Heads, HeadsError> {
        let mut file = SafeFile::read(path, "heads")?;
        let (d, hidden) = (file.usize_meta("dim")?, file.usize_meta("hidden")?);
        Ok(Heads {
            embedder: file.meta("embedder")?,
            w_dim: file.take("w_dim", &[d])?,
            query: Mlp::take(&mut file, "query", d, hidden, d)?,
            tool: Mlp::take(&mut file, "tool", d, hidden, d)?,
            summary: file.meta("summary").unwrap_or_default(),
            source: Some(path.to_owned()),
        })
    }
}

fn encode(mlp: &Mlp, w_dim: &[f32], h: &[f32]) -> Vec<f32> {
    let r = mlp.forward(h);
    let mut v: Vec<f32> = h.iter().zip(&r).zip(w_dim).map(|((h, r), w)| w * (h + r)).collect();
    normalise(&mut v);
    v
}

/// The tool judge: does the text so far call for a tool here?
#[derive(Debug, Clone, PartialEq)]
pub struct Judge {
    embedder: String,
    mlp: Mlp,
    threshold: f32,
    summary: String,
    source: Option<PathBuf>,
}

impl Judge {
    /// A trained judge at `threshold`, with no summary yet.
    pub fn trained(embedder: &str, mlp: Mlp, threshold: f32) -> Self {
        Judge { embedder: embedder.to_owned(), mlp, threshold, summary: String::new(), source: None }
    }

    pub fn embedder(&self) -> &str {
        &self.embedder
    }

    pub fn dim(&self) -> usize {
        self.mlp.d
    }

    pub fn hidden(&self) -> usize {
        self.mlp.hidden
    }

    pub fn summary(&self) -> &str {
        &self.summary
    }

    pub fn set_summary(&mut self, summary: String) {
        self.summary = summary;
    }

    /// J(h) in [0, 1].
    pub fn score(&self, h: &[f32]) -> f32 {
        let z = self.mlp.forward(h)[0];
        1.0 / (1.0 + (-z).exp())
    }

    /// θ: a score above it calls a tool (the paper's 0.5 unless tuned).
    pub fn threshold(&self) -> f32 {
        self.threshold
    }

    pub fn set_threshold(&mut self, threshold: f32) {
        self.threshold = threshold;
    }

    pub fn calls_tool(&self, h: &[f32]) -> bool {
        self.score(h) > self.threshold
    }

    pub fn check_embedder(&self, id: &str, dim: usize) -> Result<(), HeadsError> {
        check(&self.source, &self.embedder, self.dim(), id, dim)
    }

    pub fn save(&self, path: &Path) -> Result<(), HeadsError> {
        let mut tensors = Vec::new();
        self.mlp.tensors("judge", &mut tensors);
        let mut meta = metadata("judge", &self.embedder, self.dim(), self.hidden(), &self.summary);
        meta.insert("threshold".into(), self.threshold.to_string());
        write_safetensors(path, &tensors, &meta)
    }

    pub fn load(path: &Path) -> Result<Judge, HeadsError> {
        let mut file = SafeFile::read(path, "judge")?;
        let (d, hidden) = (file.usize_meta("dim")?, file.usize_meta("hidden")?);
        let threshold = file.meta("threshold")?;
        let threshold =
            threshold.parse::<f32>().ok().filter(|t| (0.0..=1.0).contains(t)).ok_or_else(|| HeadsError::Format {
                path: path.into(),
                reason: format!("metadata `threshold` {threshold:?} is not in [0, 1]"),
            })?;
        Ok(Judge {
            embedder: file.meta("embedder")?,
            mlp: Mlp::take(&mut file, "judge", d, hidden, 1)?,
            threshold,
            summary: file.meta("summary").unwrap_or_default(),
            source: Some(path.to_owned()),
        })
    }
}

fn check(source: &Option<PathBuf>, trained: &str, trained_dim: usize, id: &str, dim: usize) -> Result<(), HeadsError> {
    if trained == id && trained_dim == dim {
        return Ok(());
    }
    Err(HeadsError::Embedder {
        path: source.as_ref().map_or_else(|| "(unsaved heads)".to_owned(), |p| p.display().to_string()),
        trained: trained.to_owned(),
        trained_dim,
        got: id.to_owned(),
        got_dim: dim,
    })
}

const FORMAT: &str = "switchyard-cotools/1";

fn metadata(kind: &str, embedder: &str, dim: usize, hidden: usize, summary: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("format".to_owned(), FORMAT.to_owned()),
        ("kind".to_owned(), kind.to_owned()),
        ("embedder".to_owned(), embedder.to_owned()),
        ("dim".to_owned(), dim.to_string()),
        ("hidden".to_owned(), hidden.to_string()),
        ("summary".to_owned(), summary.to_owned()),
    ])
}

/// Writes the safetensors layout (u64 header length, JSON header, raw
/// little-endian f32 data) by hand: a few lines, and it lets the metadata
/// ride along, which candle's writer does not. The file appears whole or
/// not at all.
fn write_safetensors(
    path: &Path,
    tensors: &[(String, Vec<usize>, &[f32])],
    meta: &BTreeMap<String, String>,
) -> Result<(), HeadsError> {
    let io = |source| HeadsError::Io { path: path.into(), source };
    let mut header = serde_json::Map::new();
    header.insert("__metadata__".into(), serde_json::to_value(meta).unwrap_or_default());
    let mut offset = 0usize;
    for (name, shape, data) in tensors {
        let end = offset + data.len() * 4;
        header.insert(name.clone(), serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [offset, end]}));
        offset = end;
    }
    let mut json = serde_json::Value::Object(header).to_string().into_bytes();
    // Data aligned to 8 bytes, as the format recommends.
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut bytes = Vec::with_capacity(8 + json.len() + offset);
    bytes.extend_from_slice(&(json.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&json);
    for (_, _, data) in tensors {
        bytes.extend(data.iter().flat_map(|x| x.to_le_bytes()));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mut file = atomic_write_file::AtomicWriteFile::open(path).map_err(io)?;
    file.write_all(&bytes).map_err(io)?;
    file.commit().map_err(io)
}

/// A safetensors file read and checked: every tensor's place within the
/// data, its dtype, and (when taken) its shape.
struct SafeFile {
    path: PathBuf,
    meta: BTreeMap<String, String>,
    tensors: BTreeMap<String, (Vec<usize>, Vec<f32>)>,
}

impl SafeFile {
    fn read(path: &Path, kind: &str) -> Result<SafeFile, HeadsError> {
        let bytes = std::fs::read(path).map_err(|source| HeadsError::Io { path: path.into(), source })?;
        let bad = |reason: String| HeadsError::Format { path: path.into(), reason };
        let len = bytes.get(..8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize);
        let len = len.filter(|&l| l >= 2 && l <= bytes.len() - 8).ok_or_else(|| bad("truncated header".into()))?;
        let header: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(&bytes[8..8 + len]).map_err(|e| bad(format!("header is not JSON: {e}")))?;
        let data = &bytes[8 + len..];
        let mut meta = BTreeMap::new();
        let mut tensors = BTreeMap::new();
        for (name, v) in header {
            if name == "__metadata__" {
                meta = serde_json::from_value(v).map_err(|e| bad(format!("__metadata__: {e}")))?;
                continue;
            }
            let dtype = v.get("dtype").and_then(|d| d.as_str());
            if dtype != Some("F32") {
                return Err(bad(format!("tensor `{name}`: dtype {dtype:?}, expected F32")));
            }
            let shape: Vec<usize> = v
                .get("shape")
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .ok_or_else(|| bad(format!("tensor `{name}`: no shape")))?;
            let range: [usize; 2] = v
                .get("data_offsets")
                .and_then(|s| serde_json::from_value(s.clone()).ok())
                .ok_or_else(|| bad(format!("tensor `{name}`: no data_offsets")))?;
            let count = shape.iter().product::<usize>();
            if range[0] > range[1] || range[1] > data.len() || range[1] - range[0] != count * 4 {
                return Err(bad(format!("tensor `{name}`: data_offsets {range:?} do not fit shape {shape:?}")));
            }
            let values: Vec<f32> = data[range[0]..range[1]]
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if values.iter().any(|x| !x.is_finite()) {
                return Err(bad(format!("tensor `{name}`: a value is not finite")));
            }
            tensors.insert(name, (shape, values));
        }
        let file = SafeFile { path: path.into(), meta, tensors };
        if file.meta("format")? != FORMAT || file.meta("kind")? != kind {
            return Err(bad(format!(
                "metadata says {:?}/{:?}, expected {FORMAT}/{kind}",
                file.meta.get("format"),
                file.meta.get("kind")
            )));
        }
        Ok(file)
    }

    fn meta(&self, key: &str) -> Result<String, HeadsError> {
        self.meta
            .get(key)
            .cloned()
            .ok_or_else(|| HeadsError::Format { path: self.path.clone(), reason: format!("no metadata `{key}`") })
    }

    fn usize_meta(&self, key: &str) -> Result<usize, HeadsError> {
        let v = self.meta(key)?;
        v.parse().ok().filter(|&n| n > 0 && n < 1 << 20).ok_or_else(|| HeadsError::Format {
            path: self.path.clone(),
            reason: format!("metadata `{key}` {v:?} is not a size"),
        })
    }

    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, HeadsError> {
        let bad = |reason: String| HeadsError::Format { path: self.path.clone(), reason };
        let (got, values) = self.tensors.remove(name).ok_or_else(|| bad(format!("no tensor `{name}`")))?;
        if got != shape {
            return Err(bad(format!("tensor `{name}` has shape {got:?}, expected {shape:?}")));
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieve::index::top_k_of;

    fn unit(v: &[f32]) -> Vec<f32> {
        let mut v = v.to_vec();
        normalise(&mut v);
        v
    }

    fn noisy(seed: u32, d: usize) -> Vec<f32> {
        // A small deterministic generator: no rng needed for test vectors.
        let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        unit(
            &(0..d)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    (x % 2000) as f32 / 1000.0 - 1.0
                })
                .collect::<Vec<_>>(),
        )
    }

    fn trained_like(d: usize, hidden: usize) -> Heads {
        let mut h = Heads::identity("test-embedder", d, hidden);
        for (i, w) in h.w_dim.iter_mut().enumerate() {
            *w = 1.0 + (i as f32 * 0.37).sin();
        }
        for (i, x) in h.query.gate.iter_mut().chain(h.tool.up.iter_mut()).enumerate() {
            *x = (i as f32 * 0.11).cos() * 0.1;
        }
        for (i, x) in h.query.up.iter_mut().chain(h.query.down.iter_mut()).chain(h.tool.down.iter_mut()).enumerate() {
            *x = (i as f32 * 0.07).sin() * 0.1;
        }
        h.tool.gate.clone_from(&h.query.up);
        h
    }

    #[test]
    fn encoders_keep_the_dimension_and_give_unit_vectors() {
        let h = trained_like(12, 5);
        let q = h.encode_query(&noisy(1, 12));
        let t = h.encode_tool(&noisy(2, 12));
        assert_eq!((q.len(), t.len(), h.dim(), h.hidden()), (12, 12, 12, 5));
        assert!((dot(&q, &q) - 1.0).abs() < 1e-5 && (dot(&t, &t) - 1.0).abs() < 1e-5);
        assert_ne!(q, h.encode_tool(&noisy(1, 12)), "query and tool encoders are separate");
    }

    #[test]
    fn untrained_heads_rank_exactly_as_the_raw_cosine() {
        let h = Heads::identity("e", 16, 8);
        let tools: Vec<Vec<f32>> = (0..30).map(|i| noisy(i, 16)).collect();
        for q in 100..110 {
            let q = noisy(q, 16);
            let raw: Vec<f32> = tools.iter().map(|t| dot(&q, t)).collect();
            let eq = h.encode_query(&q);
            let heads: Vec<f32> = tools.iter().map(|t| dot(&eq, &h.encode_tool(t))).collect();
            assert_eq!(top_k_of(&raw, 30).iter().map(|p| p.0).collect::<Vec<_>>(), {
                top_k_of(&heads, 30).iter().map(|p| p.0).collect::<Vec<_>>()
            });
        }
    }

    #[test]
    fn heads_and_judge_survive_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = trained_like(8, 3);
        h.set_summary(r#"{"epochs":3}"#.into());
        let path = dir.path().join("sub/heads.safetensors");
        h.save(&path).unwrap();
        let back = Heads::load(&path).unwrap();
        assert_eq!(back.source.as_deref(), Some(path.as_path()));
        assert_eq!(Heads { source: None, ..back }, h);
        let judge =
            Judge { embedder: "e".into(), mlp: h.query.clone(), threshold: 0.4, summary: "s".into(), source: None };
        let mut j = judge.clone();
        j.mlp = Mlp { out: 1, down: h.query.down[..3].to_vec(), ..j.mlp };
        let jp = dir.path().join("judge.safetensors");
        j.save(&jp).unwrap();
        let back = Judge::load(&jp).unwrap();
        assert_eq!(back.score(&noisy(3, 8)), j.score(&noisy(3, 8)));
        assert_eq!(back.threshold(), 0.4);
        assert!(Heads::load(&jp).unwrap_err().to_string().contains("expected switchyard-cotools/1/heads"));
    }

    #[test]
    fn top_dims_are_the_largest_in_absolute_value() {
        let mut h = Heads::identity("e", 5, 2);
        h.w_dim = vec![1.0, -3.0, 2.0, 0.5, 2.0];
        assert_eq!(h.top_dims(3), vec![(1, -3.0), (2, 2.0), (4, 2.0)]);
    }

    #[test]
    fn heads_for_another_embedder_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.safetensors");
        Heads::identity("minilm-l6-v2", 4, 2).save(&path).unwrap();
        let h = Heads::load(&path).unwrap();
        assert!(h.check_embedder("minilm-l6-v2", 4).is_ok());
        let err = h.check_embedder("http:nomic", 768).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()), "{err}");
        assert!(err.contains("minilm-l6-v2 (4 dims), not http:nomic (768 dims)"), "{err}");
    }

    #[test]
    fn corrupt_heads_files_are_refused_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.safetensors");
        Heads::identity("e", 4, 2).save(&path).unwrap();
        let good = std::fs::read(&path).unwrap();
        let cases: Vec<Vec<u8>> = vec![
            good[..good.len() - 4].to_vec(),
            good[..5].to_vec(),
            Vec::new(),
            [&u64::MAX.to_le_bytes()[..], &good[8..]].concat(),
            good.iter().map(|&b| if b == b'F' { b'G' } else { b }).collect(),
        ];
        for (i, bytes) in cases.into_iter().enumerate() {
            std::fs::write(&path, bytes).unwrap();
            let err = Heads::load(&path).expect_err("corrupt file accepted").to_string();
            assert!(err.contains(&path.display().to_string()), "case {i}: {err}");
        }
        let missing = Heads::load(&dir.path().join("none")).unwrap_err().to_string();
        assert!(missing.contains("none"), "{missing}");
    }
}
