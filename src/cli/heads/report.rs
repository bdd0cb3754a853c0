//! What `heads` prints and draws: the validation dump, the loss curve, a
//! trained file's summary and the judge's precision and recall.

use std::path::Path;
use std::process::ExitCode;

use color_eyre::eyre::{Result, WrapErr, eyre};
use serde_json::json;

use switchyard::dataset::cotools::ToolPool;
use switchyard::retrieve::blend::blend;
use switchyard::retrieve::cotools::{Heads, Judge};
use switchyard::retrieve::embed::dot;
use switchyard::retrieve::train::{Metrics, TrainLog, rank_of};

use super::super::chart::{COLOURS, Series, grouped_bars, write_svg};
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

pub(super) fn plot(path: &Path, logs: &[(&str, TrainLog)]) -> Result<()> {
    use plotters::prelude::*;
    let fail = |e: String| eyre!("{}: could not draw the loss curve: {e}", path.display());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (800, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let steps = logs.iter().map(|(_, l)| l.step_loss.len()).max().unwrap_or(1).max(2);
        let top = logs.iter().flat_map(|(_, l)| l.step_loss.iter().copied()).fold(0.0f32, f32::max).max(1e-3) * 1.05;
        let mut chart = ChartBuilder::on(&root)
            .caption("CoTools heads: training loss per step", ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0..steps, 0f32..top)
            .map_err(|e| fail(e.to_string()))?;
        chart.configure_mesh().x_desc("step").y_desc("loss").draw().map_err(|e| fail(e.to_string()))?;
        for (i, (name, log)) in logs.iter().enumerate() {
            let colour = Palette99::pick(i).to_rgba();
            chart
                .draw_series(LineSeries::new(log.step_loss.iter().enumerate().map(|(x, y)| (x, *y)), colour))
                .map_err(|e| fail(e.to_string()))?
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], colour));
        }
        chart.configure_series_labels().border_style(BLACK).draw().map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    write_svg(path, &svg)
}

/// A retriever's name and its figures on seen and on unseen tools.
type Row = (String, Metrics, Metrics);
/// A measure of a row: its legend and how to read it.
type Measure = (&'static str, fn(&Row) -> f32);

/// The test figures side by side: per retriever, top-1 and top-5 on seen
/// and on unseen tools, as grouped bars.
pub(super) fn chart(path: &Path, rows: &[Row]) -> Result<()> {
    let measures: [Measure; 4] = [
        ("seen top-1", |r| r.1.top1),
        ("seen top-5", |r| r.1.top5),
        ("unseen top-1", |r| r.2.top1),
        ("unseen top-5", |r| r.2.top5),
    ];
    let series: Vec<Series> = measures
        .iter()
        .enumerate()
        .map(|(k, (label, value))| Series {
            label: label.to_string(),
            colour: COLOURS[k],
            values: rows.iter().map(|r| Some(100.0 * value(r) as f64)).collect(),
        })
        .collect();
    let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    grouped_bars(path, "Tool selection over the whole pool (%)", &names, &series)
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
