//! What `heads` prints and draws: the validation dump, the loss curve, a
//! trained file's summary and the judge's precision and recall.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr};
use serde_json::json;

use switchyard::dataset::cotools::ToolPool;
use switchyard::retrieve::blend::blend;
use switchyard::retrieve::cotools::{Heads, Judge};
use switchyard::retrieve::embed::dot;
use switchyard::retrieve::train::rank_of;

use super::data::Ranked;

pub(super) fn dump(
    path: &Path,
    set: &Ranked,
    texts: &[&str],
    tools: &[Vec<f32>],
    heads: &Heads,
    w: f32,
    pool: &ToolPool,
) -> Result<()> {
    let encoded = heads.encode_tools(tools);
    let mut out = String::new();
    for (i, text) in texts.iter().enumerate() {
        let q = heads.encode_query(set.vectors[i]);
        let dense: Vec<f32> = encoded.iter().map(|t| dot(&q, t)).collect();
        let scores = blend(&set.lexical[i], &dense, w);
        let top: Vec<&str> =
            switchyard::retrieve::index::top_k_of(&scores, 3).iter().map(|&(t, _)| pool.tools[t].id.as_str()).collect();
        let line = json!({"query": text, "gold": pool.tools[set.gold[i]].id, "rank": rank_of(&scores, set.gold[i]), "top": top});
        out.push_str(&format!("{line}\n"));
    }
    std::fs::write(path, out).wrap_err_with(|| format!("{}", path.display()))
}

pub(super) fn show(file: &Path, n: usize, json: bool) -> Result<ExitCode> {
    let heads = match Heads::load(file) {
        Ok(h) => h,
        Err(heads_err) => match Judge::load(file) {
            Ok(j) => return show_judge(&j, file, json),
            Err(_) => return Err(heads_err.into()),
        },
    };
    let summary: serde_json::Value = serde_json::from_str(heads.summary()).unwrap_or(json!(heads.summary()));
    let dims = heads.top_dims(n);
    if json {
        let dims: Vec<_> = dims.iter().map(|(d, w)| json!({"dimension": d, "w_dim": w})).collect();
        let out = json!({"file": file.display().to_string(), "kind": "heads", "embedder": heads.embedder(), "dim": heads.dim(), "hidden": heads.hidden(), "summary": summary, "top_dims": dims});
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: CoTools heads for {} ({} dims, hidden size {})",
        file.display(),
        heads.embedder(),
        heads.dim(),
        heads.hidden()
    );
    println!("training: {}", serde_json::to_string_pretty(&summary)?);
    println!("\nthe {} largest |W_dim| (initialised at 1):\n{:>9}  {:>8}", dims.len(), "dimension", "W_dim");
    for (d, w) in dims {
        println!("{d:>9}  {w:>8.4}");
    }
    Ok(ExitCode::SUCCESS)
}

fn show_judge(j: &Judge, file: &Path, json: bool) -> Result<ExitCode> {
    let summary: serde_json::Value = serde_json::from_str(j.summary()).unwrap_or(json!(j.summary()));
    if json {
        let out = json!({"file": file.display().to_string(), "kind": "judge", "embedder": j.embedder(), "dim": j.dim(), "hidden": j.hidden(), "threshold": j.threshold(), "summary": summary});
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{}: CoTools tool judge for {} ({} dims, hidden size {}), threshold {:.3}",
            file.display(),
            j.embedder(),
            j.dim(),
            j.hidden(),
            j.threshold()
        );
        println!("training: {}", serde_json::to_string_pretty(&summary)?);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(super) struct Prf {
    pub(super) precision: f32,
    pub(super) recall: f32,
    pub(super) f1: f32,
    pub(super) positives: usize,
    pub(super) n: usize,
}

pub(super) fn prf(scores: &[f32], labels: &[bool], threshold: f32) -> Prf {
    let (mut tp, mut fp, mut fneg) = (0usize, 0usize, 0usize);
    for (&s, &l) in scores.iter().zip(labels) {
        match (s > threshold, l) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fneg += 1,
            _ => {}
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f32 / b as f32 };
    let (precision, recall) = (ratio(tp, tp + fp), ratio(tp, tp + fneg));
    let f1 = if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 };
    Prf { precision, recall, f1, positives: tp + fneg, n: labels.len() }
}
