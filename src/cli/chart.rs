//! Figures people compare, drawn as well as printed: grouped bars (one
//! group per row of a table, one bar per measure), written as SVG.

use std::path::Path;

use color_eyre::eyre::{Result, WrapErr, eyre};
use plotters::style::RGBColor;

/// One bar per group: its legend, its colour, and its value in each group
/// (a percentage; None leaves the bar out).
pub(super) struct Series {
    pub label: String,
    pub colour: RGBColor,
    pub values: Vec<Option<f64>>,
}

/// The palette bars take in order.
pub(super) const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(158, 202, 225),
    RGBColor(214, 39, 40),
    RGBColor(252, 146, 114),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// Grouped bars of percentages under `title`, one group per name.
pub(super) fn grouped_bars(path: &Path, title: &str, groups: &[String], series: &[Series]) -> Result<()> {
    use plotters::prelude::*;
    let fail = |e: String| eyre!("{}: could not draw the chart: {e}", path.display());
    let mut svg = String::new();
    {
        let width = (240 + 160 * groups.len() as u32).clamp(640, 1600);
        let root = SVGBackend::with_string(&mut svg, (width, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let n = groups.len().max(1) as f32;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(44)
            // Room above 100 % for the legend, so it never covers a bar.
            .build_cartesian_2d(0f32..n, 0f32..125f32)
            .map_err(|e| fail(e.to_string()))?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(groups.len().max(1) * 2 + 1)
            .x_label_formatter(&|x| {
                let i = x.floor() as usize;
                if (x - i as f32 - 0.5).abs() < 0.01 {
                    groups.get(i).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| if *y <= 100.0 { format!("{y:.0}") } else { String::new() })
            .y_desc("%")
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        let k_all = series.len().max(1) as f32;
        let w = 0.8 / k_all;
        for (k, s) in series.iter().enumerate() {
            let bars = s.values.iter().enumerate().filter_map(|(i, v)| {
                let x0 = i as f32 + 0.1 + w * k as f32;
                v.map(|v| Rectangle::new([(x0, 0.0), (x0 + w * 0.9, v as f32)], s.colour.filled()))
            });
            let colour = s.colour;
            c.draw_series(bars)
                .map_err(|e| fail(e.to_string()))?
                .label(s.label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .border_style(BLACK)
            .background_style(WHITE)
            .draw()
            .map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    write_svg(path, &svg)
}

/// Writes a drawn picture atomically: a kill mid-write keeps the old one.
pub(super) fn write_svg(path: &Path, svg: &str) -> Result<()> {
    use std::io::Write;
    let mut file = atomic_write_file::AtomicWriteFile::open(path).wrap_err_with(|| format!("{}", path.display()))?;
    file.write_all(svg.as_bytes()).and_then(|()| file.commit()).wrap_err_with(|| format!("{}", path.display()))
}
