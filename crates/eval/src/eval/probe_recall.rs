//! ATC's probes measured against a reference: of the response fields ATC's
//! own probing found for a tool (its probed TMDB spec), how many the probed
//! schema has, and how many the library's documented schema has.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dataset::restbench::tool_key;
use crate::program::protocol::{ProtocolStore, StoreError};
use crate::program::schema::{Shape, field_recall};
use crate::text::ellipsis;
use crate::tool::ToolLibrary;

/// One tool's recall against the reference: of the probe, and of the
/// library's documented schema (both against the same reference).
#[derive(Debug, serde::Serialize)]
pub struct Recall {
    pub tool: String,
    pub reference_fields: usize,
    pub probed_hits: usize,
    pub documented_hits: Option<usize>,
}

#[derive(thiserror::Error, Debug)]
pub enum RecallError {
    /// The reference file is not ATC's probed spec; the message says where.
    #[error("{}: {why}", path.display())]
    Reference { path: PathBuf, why: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no probed tool matches an endpoint of {}", .0.display())]
    NoMatch(PathBuf),
}

/// The recall of each of `targets` whose name matches an endpoint of the
/// `reference` file (ATC's probed spec, `tmdb.spec.probed.v2.json`).
pub fn probe_recall(
    library: &ToolLibrary,
    store: &ProtocolStore,
    targets: &[String],
    reference: &Path,
) -> Result<Vec<Recall>, RecallError> {
    let bad = |why: String| RecallError::Reference { path: reference.to_path_buf(), why };
    let text = std::fs::read_to_string(reference).map_err(|e| bad(e.to_string()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let endpoints = doc
        .get("endpoints")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no 'endpoints' list (expected ATC's probed spec)".into()))?;
    let mut refs: BTreeMap<String, Shape> = BTreeMap::new();
    for (i, e) in endpoints.iter().enumerate() {
        let name = e.get("name").and_then(Value::as_str).ok_or_else(|| bad(format!("endpoints[{i}] has no name")))?;
        let Some(r) = e.get("_responses_json").and_then(Value::as_str) else { continue };
        let shape = Shape::parse_atc(r).map_err(|why| bad(format!("endpoints[{i}] ({name}): {why}")))?;
        refs.insert(tool_key(name), shape);
    }
    let mut rows = Vec::new();
    for t in targets {
        let (Some(spec), Some(reference)) = (library.get(t), refs.get(&tool_key(t))) else { continue };
        let probed = store.load(spec)?.map(|p| p.shape);
        let (probed_hits, total) =
            probed.as_ref().map_or((0, reference.field_paths().len()), |p| field_recall(p, reference));
        let documented_hits = spec.response.as_ref().map(|d| field_recall(&Shape::from_json_schema(d), reference).0);
        rows.push(Recall { tool: t.clone(), reference_fields: total, probed_hits, documented_hits });
    }
    if rows.is_empty() {
        return Err(RecallError::NoMatch(reference.to_path_buf()));
    }
    Ok(rows)
}

/// The recalls as the table `probe --compare` prints, with a pooled row.
pub fn recall_table(rows: &[Recall]) -> String {
    let mut out = format!(
        "\n{:<48} {:>7} {:>8} {:>11}\n",
        "tool (recall of the reference's fields)", "fields", "probed", "documented"
    );
    let pct =
        |h: usize, n: usize| if n == 0 { "-".to_string() } else { format!("{:.1}%", 100.0 * h as f64 / n as f64) };
    for r in rows {
        out.push_str(&format!(
            "{:<48} {:>7} {:>8} {:>11}\n",
            ellipsis(&r.tool, 47),
            r.reference_fields,
            pct(r.probed_hits, r.reference_fields),
            r.documented_hits.map_or("-".into(), |d| pct(d, r.reference_fields))
        ));
    }
    let total: usize = rows.iter().map(|r| r.reference_fields).sum();
    let probed: usize = rows.iter().map(|r| r.probed_hits).sum();
    let documented: usize = rows.iter().filter_map(|r| r.documented_hits).sum();
    out.push_str(&format!(
        "{:<48} {:>7} {:>8} {:>11}\n",
        format!("all {} tools (fields pooled)", rows.len()),
        total,
        pct(probed, total),
        pct(documented, total)
    ));
    out.push_str("(probed: schemas inferred from the probes' responses; documented: the library's response schemas;\n both against the reference's fields. With synthesized tools the responses are generated from the\n documented schemas, so this measures the inference, not the real API.)\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_that_is_not_atcs_spec_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let library = ToolLibrary::new(Vec::new()).unwrap();
        let store = ProtocolStore::new(dir.path());
        let reference = dir.path().join("ref.json");
        let recall = |text: &str| {
            std::fs::write(&reference, text).unwrap();
            probe_recall(&library, &store, &[], &reference).unwrap_err().to_string()
        };
        assert!(recall("{").contains("ref.json: not JSON"));
        assert!(recall("{}").contains("ref.json: no 'endpoints' list"));
        assert!(recall(r#"{"endpoints": [{}]}"#).contains("ref.json: endpoints[0] has no name"));
        assert!(recall(r#"{"endpoints": [{"name": "GET /movie"}]}"#).contains("no probed tool matches"));
    }

    #[test]
    fn the_table_pools_the_fields_of_every_tool() {
        let row =
            |tool: &str, n, p, d| Recall { tool: tool.into(), reference_fields: n, probed_hits: p, documented_hits: d };
        let t = recall_table(&[row("a", 4, 3, Some(2)), row("b", 6, 3, None)]);
        let line =
            |start: &str| t.lines().find(|l| l.starts_with(start)).unwrap().split_whitespace().collect::<Vec<_>>();
        assert_eq!(line("a ")[1..], ["4", "75.0%", "50.0%"]);
        assert_eq!(line("b ")[1..], ["6", "50.0%", "-"]);
        assert_eq!(line("all 2 tools")[5..], ["10", "60.0%", "20.0%"]);
    }
}
