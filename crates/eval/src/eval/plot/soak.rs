//! The soak's figure: RSS against tasks finished (headless sessions), trace
//! bytes per task against tasks, and RSS against minutes (the workbench).
//!
//! It reads the samplers' CSV files: headless `secs,tasks,rss_kb,trace_bytes`,
//! workbench `secs,rss_kb,runs,events`, each with a header line.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::draw::{COLOURS, PlotError, Result, draw_error, write_png, write_svg};

/// One sampler's file and the label its line takes.
pub struct SoakSeries {
    pub label: String,
    pub file: PathBuf,
}

/// Rows of numbers from a CSV file with a header.
fn read_csv(path: &Path) -> Result<Vec<Vec<f64>>> {
    let text = std::fs::read_to_string(path).map_err(|source| PlotError::Io { path: path.to_path_buf(), source })?;
    Ok(text
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').map(|v| v.trim().parse::<f64>().ok()).collect::<Option<Vec<f64>>>())
        .collect())
}

type Line = (String, Vec<(f64, f64)>);

/// Draws `OUT/soak.svg` and `OUT/soak.png` from the headless sessions' and
/// the workbench's samples; returns the two paths.
pub fn soak(out: &Path, headless: &[SoakSeries], workbench: Option<&SoakSeries>) -> Result<[PathBuf; 2]> {
    let mut rss_tasks: Vec<Line> = Vec::new();
    let mut trace_per_task: Vec<Line> = Vec::new();
    for s in headless {
        let rows = read_csv(&s.file)?;
        let rss = rows.iter().filter(|r| r.len() >= 4 && r[1] > 0.0).map(|r| (r[1], r[2] / 1024.0)).collect();
        rss_tasks.push((s.label.clone(), rss));
        // Bytes per task from one sample to the next, so a growing cost shows
        // as a rising line rather than hiding in an average.
        let mut per = Vec::new();
        for w in rows.windows(2).filter(|w| w[0].len() >= 4 && w[1].len() >= 4 && w[1][1] > w[0][1]) {
            per.push((w[1][1], (w[1][3] - w[0][3]) / (w[1][1] - w[0][1]) / 1024.0));
        }
        trace_per_task.push((s.label.clone(), per));
    }
    let mut rss_minutes: Vec<Line> = Vec::new();
    if let Some(s) = workbench {
        let rows = read_csv(&s.file)?;
        rss_minutes.push((
            s.label.clone(),
            rows.iter().filter(|r| r.len() >= 2).map(|r| (r[0] / 60.0, r[1] / 1024.0)).collect(),
        ));
    }
    std::fs::create_dir_all(out).map_err(|source| PlotError::Io { path: out.to_path_buf(), source })?;
    let panels: [(&str, &str, &str, &[Line]); 3] = [
        ("RSS against tasks (headless)", "tasks finished", "RSS (MB)", &rss_tasks),
        ("Trace per task (headless)", "tasks finished", "KB of trace per task", &trace_per_task),
        ("RSS against time (workbench)", "minutes", "RSS (MB)", &rss_minutes),
    ];
    let (svg_path, png_path) = (out.join("soak.svg"), out.join("soak.png"));
    let (width, height) = (1500u32, 520u32);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        let fail = draw_error(&svg_path, "the soak's figure");
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        let root = root.titled("Soak: memory and trace size", ("sans-serif", 20)).map_err(|e| fail(e.to_string()))?;
        for (area, (title, x_desc, y_desc, lines)) in root.split_evenly((1, 3)).iter().zip(panels) {
            draw_panel(area, title, x_desc, y_desc, lines).map_err(&fail)?;
        }
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    write_svg(&svg_path, &svg)?;
    write_png(&png_path, &svg)?;
    Ok([svg_path, png_path])
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> std::result::Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let pts = lines.iter().flat_map(|l| l.1.iter());
    let (x1, y1) = pts.fold((1.0f64, 1.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let mut c = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0f64..x1 * 1.02, 0f64..y1 * 1.15)
        .map_err(err)?;
    c.configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        // Whole numbers, but tenths over a short span (a few minutes).
        .x_label_formatter(&|x| if x1 < 10.0 { format!("{x:.1}") } else { format!("{x:.0}") })
        .y_label_formatter(&|y| format!("{y:.0}"))
        .light_line_style(RGBColor(240, 240, 240))
        .draw()
        .map_err(err)?;
    for (k, (label, points)) in lines.iter().enumerate() {
        let colour = COLOURS[(k * 2) % COLOURS.len()];
        c.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))
            .map_err(err)?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(3)));
    }
    if !lines.is_empty() {
        c.configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(err)?;
    }
    Ok(())
}
