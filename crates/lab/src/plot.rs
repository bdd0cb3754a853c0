//! The heads' training figures: the loss per step, and tool selection on
//! seen and unseen tools per retriever.

use std::path::Path;

use crate::train::{Metrics, TrainLog};
use switchyard_eval::eval::plot::{COLOURS, PlotError, Series, draw_error, grouped_bars, write_svg};

/// The training loss per step, one line per run.
pub fn loss_curve(path: &Path, logs: &[(&str, TrainLog)]) -> Result<(), PlotError> {
    use plotters::prelude::*;
    let fail = draw_error(path, "the loss curve");
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
pub type Row = (String, Metrics, Metrics);
/// A measure of a row: its legend and how to read it.
type Measure = (&'static str, fn(&Row) -> f32);

/// The test figures side by side: per retriever, top-1 and top-5 on seen
/// and on unseen tools, as grouped bars.
pub fn selection_chart(path: &Path, rows: &[Row]) -> Result<(), PlotError> {
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
