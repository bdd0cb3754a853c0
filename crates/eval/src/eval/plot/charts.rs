//! The eval report's plots, each written as SVG and PNG beside report.md:
//! success (or answered) and cost per setting, the sweeps against the swept
//! value (BTP's Figure 3), the model matrix as a heat map, and ToolNet's
//! Figure 4 from a trace. Legends sit in a strip of their own below the
//! panels, so they never cover data, and setting names are drawn beside
//! horizontal bars, where long labels fit.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::draw::{COLOURS, PlotError, Result, Series, grouped_bars, write_png, write_svg};
use crate::eval::fault_figure::FaultFigure;
use crate::eval::markdown::PlotLink;
use crate::eval::metrics::Metrics;
use crate::eval::summary::{Matrix, Summary, SweepSeries};

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Drawn = std::result::Result<(), String>;
/// A series over the iterations: (iteration, value).
type Points = Vec<(u32, f64)>;

const FONT: &str = "sans-serif";
const WIDTH: u32 = 1100;
/// The strip below the panels that holds the legend.
const STRIP: u32 = 40;
const GREY: RGBColor = RGBColor(110, 110, 110);

/// A tick's value without float noise: 0.6000000000000001 is 0.6.
fn tick(v: &f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.to_string() }
}

/// The grid's lines, light enough to read the data over.
const BOLD_GRID: RGBColor = RGBColor(205, 205, 205);
const LIGHT_GRID: RGBColor = RGBColor(240, 240, 240);

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A plot written: its link for the report and its two files.
pub struct Written {
    pub link: PlotLink,
    pub files: [PathBuf; 2],
}

/// Draws one picture and writes it as `DIR/NAME.svg` and `DIR/NAME.png`.
fn save(dir: &Path, name: &str, title: &str, size: (u32, u32), draw: impl FnOnce(&Area) -> Drawn) -> Result<Written> {
    let svg_path = dir.join(format!("{name}.svg"));
    let png_path = dir.join(format!("{name}.png"));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)
            .map_err(err)
            .and_then(|()| draw(&root))
            .and_then(|()| root.present().map_err(err))
            .map_err(|why| PlotError::Draw { path: svg_path.clone(), what: title.into(), why })?;
    }
    write_svg(&svg_path, &svg)?;
    write_png(&png_path, &svg)?;
    Ok(Written {
        link: PlotLink { title: title.into(), svg: format!("{name}.svg"), png: format!("{name}.png") },
        files: [svg_path, png_path],
    })
}

fn text_style(size: u32, colour: &'static RGBColor, h: HPos) -> TextStyle<'static> {
    TextStyle::from((FONT, size).into_font()).color(colour).pos(Pos::new(h, VPos::Center))
}

/// How a legend entry shows its series.
#[derive(Clone, Copy)]
enum Swatch {
    Box,
    Line,
    Dashed,
}

/// A legend left to right in its own strip: a swatch and a name per entry.
fn legend(area: &Area, entries: &[(String, RGBColor, Swatch)]) -> Drawn {
    let (_, h) = area.dim_in_pixel();
    let y = h as i32 / 2;
    let mut x = 24;
    let font = TextStyle::from((FONT, 14).into_font());
    for (name, colour, swatch) in entries {
        match swatch {
            Swatch::Box => area.draw(&Rectangle::new([(x, y - 7), (x + 16, y + 7)], colour.filled())),
            Swatch::Line => area.draw(&PathElement::new(vec![(x, y), (x + 22, y)], colour.stroke_width(3))),
            Swatch::Dashed => {
                for k in 0..3 {
                    area.draw(&PathElement::new(vec![(x + 8 * k, y), (x + 8 * k + 5, y)], colour.stroke_width(2)))
                        .map_err(err)?;
                }
                Ok(())
            }
        }
        .map_err(err)?;
        area.draw(&Text::new(name.clone(), (x + 30, y), text_style(14, &BLACK, HPos::Left))).map_err(err)?;
        let (w, _) = area.estimate_text_size(name, &font).map_err(err)?;
        x += 30 + w as i32 + 28;
    }
    Ok(())
}

/// Room for the longest name at 13 px, within reason.
fn label_width<'a>(names: impl Iterator<Item = &'a str>) -> u32 {
    let chars = names.map(|n| n.chars().count()).max().unwrap_or(0) as u32;
    (chars * 8 + 24).clamp(90, 380)
}

fn short(name: &str) -> String {
    crate::text::ellipsis(name, 44)
}

/// Success (or answered) and cost per setting, as two panels of horizontal
/// bars sharing the settings' names on the left. When tasks are judged,
/// the answered share shows light behind the success bar.
pub fn overview(dir: &Path, s: &Summary) -> Result<Written> {
    let judged = s.judged();
    let unit = s.meta.cost_unit.clone();
    let names: Vec<String> = s.settings.iter().map(|x| short(&x.setting)).collect();
    let n = names.len();
    let answered: Vec<f64> = s.settings.iter().map(|x| 100.0 * x.metrics.answered_rate).collect();
    let success: Vec<Option<f64>> = s.settings.iter().map(|x| x.metrics.success_rate.map(|r| 100.0 * r)).collect();
    let costs: Vec<f64> = s.settings.iter().map(|x| x.metrics.avg_cost).collect();
    let max_cost = costs.iter().copied().fold(0.0, f64::max);
    let max_cost = if max_cost > 0.0 { max_cost * 1.3 } else { 1.0 };
    let label_w = label_width(names.iter().map(String::as_str));
    let height = 150 + 44 * n as u32;
    let title = if judged { "Success and cost per setting" } else { "Answered and cost per setting" };
    save(dir, "overview", title, (WIDTH, height), |root| {
        let (main, strip) = root.split_vertically(height - STRIP);
        let main = main.titled(title, (FONT, 20)).map_err(err)?;
        let (left, right) = main.split_horizontally(label_w + (WIDTH - label_w) / 2);
        // Setting i sits at y = n - i - 0.5, the first at the top.
        let y_of = |i: usize| (n - i) as f64 - 0.5;
        let mut c = ChartBuilder::on(&left)
            .margin(10)
            .x_label_area_size(48)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0f64..118f64, 0f64..n as f64)
            .map_err(err)?;
        c.configure_mesh()
            .disable_y_mesh()
            .bold_line_style(BOLD_GRID)
            .light_line_style(LIGHT_GRID)
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&|x| if *x <= 100.0 { format!("{x:.0}") } else { String::new() })
            .x_desc(if judged {
                "% of the judged tasks (success) / of all tasks (answered)"
            } else {
                "% of tasks answered"
            })
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(err)?;
        for (i, name) in names.iter().enumerate() {
            let (px, py) = c.backend_coord(&(0.0, y_of(i)));
            root.draw(&Text::new(name.clone(), (px - 8, py), text_style(13, &BLACK, HPos::Right))).map_err(err)?;
        }
        let bar = |i: usize, v: f64, shrink: f64, colour: RGBColor| {
            Rectangle::new([(0.0, y_of(i) - 0.36 + shrink), (v, y_of(i) + 0.36 - shrink)], colour.filled())
        };
        if judged {
            c.draw_series(answered.iter().enumerate().map(|(i, v)| bar(i, *v, 0.0, COLOURS[1]))).map_err(err)?;
            c.draw_series(success.iter().enumerate().filter_map(|(i, v)| v.map(|v| bar(i, v, 0.12, COLOURS[0]))))
                .map_err(err)?;
        } else {
            c.draw_series(answered.iter().enumerate().map(|(i, v)| bar(i, *v, 0.0, COLOURS[0]))).map_err(err)?;
        }
        c.draw_series(answered.iter().enumerate().map(|(i, a)| {
            let v = success[i];
            let text = match (judged, v) {
                (true, Some(v)) => format!("{v:.1}% / {a:.1}%"),
                (true, None) => format!("n/a / {a:.1}%"),
                (false, _) => format!("{a:.1}%"),
            };
            Text::new(text, (a.max(v.unwrap_or(0.0)) + 1.0, y_of(i)), text_style(12, &BLACK, HPos::Left))
        }))
        .map_err(err)?;

        let mut c = ChartBuilder::on(&right)
            .margin(10)
            .margin_left(24)
            .x_label_area_size(48)
            .y_label_area_size(4)
            .build_cartesian_2d(0f64..max_cost, 0f64..n as f64)
            .map_err(err)?;
        c.configure_mesh()
            .disable_y_mesh()
            .bold_line_style(BOLD_GRID)
            .light_line_style(LIGHT_GRID)
            .y_labels(0)
            .x_labels(6)
            .x_label_formatter(&tick)
            .x_desc(format!("average cost per task ({unit})"))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(err)?;
        c.draw_series(costs.iter().enumerate().map(|(i, v)| bar(i, *v, 0.0, COLOURS[2]))).map_err(err)?;
        c.draw_series(costs.iter().enumerate().map(|(i, v)| {
            Text::new(format!("{v:.3}"), (*v + max_cost * 0.01, y_of(i)), text_style(12, &BLACK, HPos::Left))
        }))
        .map_err(err)?;
        let mut entries = Vec::new();
        if judged {
            entries.push(("success".to_string(), COLOURS[0], Swatch::Box));
            entries.push(("answered".to_string(), COLOURS[1], Swatch::Box));
        } else {
            entries.push(("answered (no gold answers: nothing judged)".to_string(), COLOURS[0], Swatch::Box));
        }
        entries.push((format!("cost ({unit})"), COLOURS[2], Swatch::Box));
        legend(&strip, &entries)
    })
}

/// What a user waits for, per setting: success (or answered), wall time,
/// prompt and completion tokens per task, as four panels of horizontal bars
/// sharing the settings' names on the left (a peer agent beside the
/// strategies, with a real model).
pub fn speed(dir: &Path, s: &Summary) -> Result<Written> {
    let judged = s.judged();
    let names: Vec<String> = s.settings.iter().map(|x| short(&x.setting)).collect();
    let n = names.len();
    let rate = |x: &crate::eval::summary::SettingSummary| {
        100.0 * if judged { x.metrics.success_rate.unwrap_or(0.0) } else { x.metrics.answered_rate }
    };
    type Measure = (String, Vec<f64>, fn(f64) -> String);
    let panels: [Measure; 4] = [
        (
            if judged { "success (% of judged)" } else { "answered (%)" }.to_string(),
            s.settings.iter().map(rate).collect(),
            |v| format!("{v:.0}%"),
        ),
        ("wall seconds per task".into(), s.settings.iter().map(|x| x.speed.wall_s).collect(), |v| {
            if v < 10.0 { format!("{v:.2}") } else { format!("{v:.1}") }
        }),
        ("prompt tokens per task".into(), s.settings.iter().map(|x| x.metrics.avg_prompt_tokens).collect(), |v| {
            format!("{v:.0}")
        }),
        (
            "completion tokens per task".into(),
            s.settings.iter().map(|x| x.metrics.avg_completion_tokens).collect(),
            |v| format!("{v:.0}"),
        ),
    ];
    let label_w = label_width(names.iter().map(String::as_str));
    let height = 130 + 44 * n as u32;
    let title = "The time a user waits, per setting";
    save(dir, "speed", title, (WIDTH, height), |root| {
        let main = root.titled(title, (FONT, 20)).map_err(err)?;
        let (_, rest) = main.split_horizontally(label_w);
        let columns = rest.split_evenly((1, panels.len()));
        let y_of = |i: usize| (n - i) as f64 - 0.5;
        for (k, ((desc, values, fmt), area)) in panels.iter().zip(&columns).enumerate() {
            let max = values.iter().copied().fold(0.0, f64::max);
            let max = if k == 0 {
                130.0
            } else if max > 0.0 {
                max * 1.35
            } else {
                1.0
            };
            let mut c = ChartBuilder::on(area)
                .margin(10)
                .margin_left(if k == 0 { 4 } else { 16 })
                .x_label_area_size(48)
                .y_label_area_size(4)
                .build_cartesian_2d(0f64..max, 0f64..n as f64)
                .map_err(err)?;
            c.configure_mesh()
                .disable_y_mesh()
                .bold_line_style(BOLD_GRID)
                .light_line_style(LIGHT_GRID)
                .y_labels(0)
                .x_labels(4)
                .x_label_formatter(&|x| if k == 0 && *x > 100.0 { String::new() } else { tick(x) })
                .x_desc(desc.as_str())
                .label_style((FONT, 12))
                .axis_desc_style((FONT, 13))
                .draw()
                .map_err(err)?;
            if k == 0 {
                for (i, name) in names.iter().enumerate() {
                    let (px, py) = c.backend_coord(&(0.0, y_of(i)));
                    root.draw(&Text::new(name.clone(), (px - 8, py), text_style(13, &BLACK, HPos::Right)))
                        .map_err(err)?;
                }
            }
            c.draw_series(values.iter().enumerate().map(|(i, v)| {
                Rectangle::new([(0.0, y_of(i) - 0.36), (*v, y_of(i) + 0.36)], COLOURS[[0, 2, 4, 5][k]].filled())
            }))
            .map_err(err)?;
            c.draw_series(
                values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Text::new(fmt(*v), (*v + max * 0.02, y_of(i)), text_style(12, &BLACK, HPos::Left))),
            )
            .map_err(err)?;
        }
        Ok(())
    })
}

const LINE_COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
];

/// One swept parameter: the pass rate (PBC under a budget, else success or
/// answered) and the average cost against the swept value, a line per
/// series (BTP's Figure 3).
pub fn sweep(dir: &Path, s: &Summary, parameter: &str) -> Result<Written> {
    let series: Vec<&SweepSeries> = s.sweeps.iter().filter(|x| x.parameter == parameter).collect();
    let budgeted = s.settings.iter().any(|x| x.budgeted && x.sweep.as_ref().is_some_and(|w| w.name == parameter));
    let judged = s.judged();
    let unit = s.meta.cost_unit.clone();
    // A point with nothing judged is left out: a rate of 0 there would read
    // as failure, not as unknown.
    let (rate_name, rate): (&str, fn(&crate::eval::summary::SweepPoint) -> Option<f64>) = if budgeted && judged {
        ("PBC: solved within the budget (%)", |p| p.pbc.map(|r| 100.0 * r))
    } else if budgeted {
        ("answered within the budget (%)", |p| Some(100.0 * p.answered_within_budget))
    } else if judged {
        ("success (% of judged tasks)", |p| p.success_rate.map(|r| 100.0 * r))
    } else {
        ("answered (% of tasks)", |p| Some(100.0 * p.answered_rate))
    };
    let values = series.iter().flat_map(|x| x.points.iter().map(|p| p.value));
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = if hi > lo { (hi - lo) * 0.05 } else { 0.5 };
    let (x0, x1) = (lo - pad, hi + pad);
    let max_cost = series.iter().flat_map(|x| x.points.iter().map(|p| p.ac)).fold(0.0, f64::max);
    let max_cost = if max_cost > 0.0 { max_cost * 1.2 } else { 1.0 };
    let x_desc = match parameter {
        "tau" => "threshold τ".to_string(),
        "budget" => format!("budget B ({unit})"),
        "alpha" => "α".to_string(),
        "beta" => "β".to_string(),
        "top_k" => "top K (tools offered)".to_string(),
        other => other.to_string(),
    };
    let title = format!("Sweep over {parameter}: pass rate and average cost");
    let height = 520;
    save(dir, &format!("sweep-{parameter}"), &title, (WIDTH, height), |root| {
        let (main, strip) = root.split_vertically(height - STRIP);
        let main = main.titled(&title, (FONT, 20)).map_err(err)?;
        let (left, right) = main.split_horizontally(WIDTH / 2);
        let panels: [(&Area, &str, f64, bool); 2] = [
            (&left, rate_name, 105.0, true),
            (&right, &format!("AC: average cost per task ({unit})"), max_cost, false),
        ];
        for (area, y_desc, y_max, is_rate) in panels {
            let mut c = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(48)
                .y_label_area_size(64)
                .build_cartesian_2d(x0..x1, 0f64..y_max)
                .map_err(err)?;
            c.configure_mesh()
                .bold_line_style(BOLD_GRID)
                .light_line_style(LIGHT_GRID)
                .x_desc(x_desc.as_str())
                .y_desc(y_desc)
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .x_label_formatter(&tick)
                .y_label_formatter(&|y| if is_rate && *y > 100.0 { String::new() } else { tick(y) })
                .draw()
                .map_err(err)?;
            for (k, x) in series.iter().enumerate() {
                let colour = LINE_COLOURS[k % LINE_COLOURS.len()];
                let pts: Vec<(f64, f64)> =
                    x.points.iter().filter_map(|p| Some((p.value, if is_rate { rate(p)? } else { p.ac }))).collect();
                c.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(3))).map_err(err)?;
                c.draw_series(pts.iter().map(|p| Circle::new(*p, 5, colour.filled()))).map_err(err)?;
            }
        }
        let entries: Vec<(String, RGBColor, Swatch)> = series
            .iter()
            .enumerate()
            .map(|(k, x)| (short(&x.series), LINE_COLOURS[k % LINE_COLOURS.len()], Swatch::Line))
            .collect();
        legend(&strip, &entries)
    })
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// White to a strong blue as the share goes from 0 to 100 %.
fn heat(pct: f64) -> RGBColor {
    let t = (pct / 100.0).clamp(0.0, 1.0);
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(mix(247.0, 8.0), mix(251.0, 69.0), mix(255.0, 148.0))
}

/// The matrix as a heat map: the first varied role's models down, the
/// second's across (one row when only one role varied); each cell coloured
/// by accuracy (answered share when nothing is judged) and showing it with
/// the cost per task. None when two settings share a cell (a third varied
/// role), where a map would hide one of them: the table shows all.
pub fn matrix(dir: &Path, m: &Matrix, unit: &str) -> Result<Option<Written>> {
    let axis = |k: usize| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for c in &m.cells {
            let name = c.models.get(k).cloned().unwrap_or_default();
            if !v.contains(&name) {
                v.push(name);
            }
        }
        v
    };
    let rows = axis(0);
    let cols = if m.axes.len() > 1 { axis(1) } else { vec![String::new()] };
    let at = |c: &crate::eval::summary::MatrixCell| {
        let r = rows.iter().position(|x| Some(x) == c.models.first()).unwrap_or(0);
        let k = if m.axes.len() > 1 { cols.iter().position(|x| Some(x) == c.models.get(1)).unwrap_or(0) } else { 0 };
        (r, k)
    };
    let mut seen = std::collections::BTreeSet::new();
    if !m.cells.iter().all(|c| seen.insert(at(c))) {
        return Ok(None);
    }
    let judged = m.cells.iter().any(|c| c.judged > 0);
    let measure = if judged { "accuracy" } else { "answered" };
    let row_axis = m.axes.first().cloned().unwrap_or_default();
    let col_axis = m.axes.get(1).cloned().unwrap_or_default();
    let title = if m.axes.len() > 1 {
        format!("{} (colour) and cost per task by {row_axis} × {col_axis}", capital(measure))
    } else {
        format!("{} (colour) and cost per task by {row_axis}", capital(measure))
    };
    let (cell_w, cell_h) = (170u32, 90u32);
    let label_w = label_width(rows.iter().map(String::as_str)) + 30;
    let width = (label_w + cell_w * cols.len() as u32 + 150).max(620);
    let height = 150 + cell_h * rows.len() as u32;
    let written = save(dir, "matrix", &title, (width, height), |root| {
        let main = root.titled(&title, (FONT, 18)).map_err(err)?;
        let (grid, bar) = main.split_horizontally(width - 120);
        let (nr, nc) = (rows.len() as f64, cols.len() as f64);
        let mut c = ChartBuilder::on(&grid)
            .margin(10)
            .x_label_area_size(56)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0f64..nc, 0f64..nr)
            .map_err(err)?;
        c.configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(if col_axis.is_empty() { String::new() } else { format!("{col_axis} model") })
            .y_desc(format!("{row_axis} model"))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(err)?;
        for (k, name) in cols.iter().enumerate() {
            let (px, py) = c.backend_coord(&(k as f64 + 0.5, 0.0));
            let style = TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
            root.draw(&Text::new(short(name), (px, py + 8), style)).map_err(err)?;
        }
        for (r, name) in rows.iter().enumerate() {
            let (px, py) = c.backend_coord(&(0.0, nr - r as f64 - 0.5));
            root.draw(&Text::new(short(name), (px - 8, py), text_style(14, &BLACK, HPos::Right))).map_err(err)?;
        }
        for cell in &m.cells {
            let (r, k) = at(cell);
            let (x, y) = (k as f64, nr - r as f64 - 1.0);
            let value = if judged { cell.row.accuracy_pct } else { Some(cell.answered_pct) };
            let fill = value.map_or(RGBColor(225, 225, 225), heat);
            c.draw_series([Rectangle::new([(x, y), (x + 1.0, y + 1.0)], fill.filled())]).map_err(err)?;
            c.draw_series([Rectangle::new([(x, y), (x + 1.0, y + 1.0)], WHITE.stroke_width(2))]).map_err(err)?;
            let ink = if value.unwrap_or(0.0) > 55.0 { WHITE } else { BLACK };
            let head = value.map_or("n/a".to_string(), |v| format!("{v:.1}%"));
            c.draw_series([
                Text::new(
                    head,
                    (x + 0.5, y + 0.64),
                    TextStyle::from((FONT, 20).into_font()).color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
                ),
                Text::new(
                    format!("{:.3} {unit}", cell.row.cost_per_task),
                    (x + 0.5, y + 0.32),
                    TextStyle::from((FONT, 13).into_font()).color(&ink).pos(Pos::new(HPos::Center, VPos::Center)),
                ),
            ])
            .map_err(err)?;
        }
        colour_bar(&bar, measure)
    })?;
    Ok(Some(written))
}

/// The heat map's scale: 0 to 100 % from bottom to top, ticked every 25.
fn colour_bar(area: &Area, measure: &str) -> Drawn {
    let (_, h) = area.dim_in_pixel();
    let (top, bottom) = (30i32, h as i32 - 70);
    let span = (bottom - top).max(1);
    for y in top..bottom {
        let pct = 100.0 * f64::from(bottom - y) / f64::from(span);
        area.draw(&Rectangle::new([(20, y), (44, y + 1)], heat(pct).filled())).map_err(err)?;
    }
    area.draw(&Rectangle::new([(20, top), (44, bottom)], BLACK.stroke_width(1))).map_err(err)?;
    for pct in [0, 25, 50, 75, 100] {
        let y = bottom - span * pct / 100;
        area.draw(&PathElement::new(vec![(44, y), (49, y)], BLACK.stroke_width(1))).map_err(err)?;
        area.draw(&Text::new(format!("{pct}%"), (52, y), text_style(12, &BLACK, HPos::Left))).map_err(err)?;
    }
    area.draw(&Text::new(measure.to_string(), (32, top - 14), text_style(13, &BLACK, HPos::Center))).map_err(err)
}

/// ToolNet's Figure 4: the scores of the broken tool and its backup (top)
/// and the weights of the edges into them (bottom) over the iterations,
/// with the moment of the fault marked.
pub fn fault(dir: &Path, f: &FaultFigure) -> Result<Written> {
    let last = f.broken_score.iter().chain(&f.backup_score).map(|p| p.0).max().unwrap_or(1).max(1);
    let range = |series: [&Points; 2]| {
        let (lo, hi) = series
            .iter()
            .flat_map(|s| s.iter().map(|p| p.1))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
        let (lo, hi) = if lo.is_finite() { (lo.min(0.0), hi.max(0.0)) } else { (0.0, 1.0) };
        let pad = ((hi - lo) * 0.08).max(0.05);
        // Weights never go below 0: the axis starts there rather than under it.
        let bottom = if lo < 0.0 { lo - pad } else { 0.0 };
        bottom..(hi + pad)
    };
    let title = match f.fault_at {
        Some(at) => format!("ToolNet: {} breaks at iteration {at}, {} takes over", f.broken, f.backup),
        None => format!("ToolNet: {} and {} over the iterations", f.broken, f.backup),
    };
    let height = 700;
    save(dir, "toolnet-fault", &title, (WIDTH, height), |root| {
        let (main, strip) = root.split_vertically(height - STRIP);
        let main = main.titled(&title, (FONT, 20)).map_err(err)?;
        let panels = main.split_evenly((2, 1));
        let weight_desc = format!("weight of the edge from {}", f.from);
        let specs: [(&Area, &str, [&Points; 2]); 2] = [
            (&panels[0], "score s (accumulated Δ)", [&f.broken_score, &f.backup_score]),
            (&panels[1], &weight_desc, [&f.broken_weight, &f.backup_weight]),
        ];
        for (k, (area, y_desc, series)) in specs.into_iter().enumerate() {
            let y = range(series);
            let mut c = ChartBuilder::on(area)
                .margin(12)
                .x_label_area_size(if k == 1 { 48 } else { 30 })
                .y_label_area_size(72)
                .build_cartesian_2d(0f64..f64::from(last), y.clone())
                .map_err(err)?;
            c.configure_mesh()
                .bold_line_style(BOLD_GRID)
                .light_line_style(LIGHT_GRID)
                .y_label_formatter(&tick)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .x_desc(if k == 1 { "iteration (tasks finished)" } else { "" })
                .y_desc(y_desc)
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .draw()
                .map_err(err)?;
            if let Some(at) = f.fault_at {
                let at = f64::from(at);
                c.draw_series(DashedLineSeries::new([(at, y.start), (at, y.end)], 8, 6, GREY.stroke_width(2)))
                    .map_err(err)?;
            }
            for (s, colour) in series.iter().zip([LINE_COLOURS[1], LINE_COLOURS[0]]) {
                let pts = s.iter().map(|p| (f64::from(p.0), p.1));
                c.draw_series(LineSeries::new(pts, colour.stroke_width(3))).map_err(err)?;
            }
        }
        let mut entries = vec![
            (format!("{} (broken)", f.broken), LINE_COLOURS[1], Swatch::Line),
            (format!("{} (backup)", f.backup), LINE_COLOURS[0], Swatch::Line),
        ];
        if f.fault_at.is_some() {
            entries.push(("fault injected".to_string(), GREY, Swatch::Dashed));
        }
        legend(&strip, &entries)
    })
}

/// `eval --plot`'s rows as grouped bars: what was solved (or answered, where
/// nothing can be judged), and the path measures where there are gold tools.
pub fn strategies(path: &Path, rows: &[Metrics]) -> Result<()> {
    let judged = rows.iter().any(|m| m.judged > 0);
    let mut series = vec![Series {
        label: if judged { "success".into() } else { "answered".into() },
        colour: COLOURS[0],
        values: rows
            .iter()
            .map(|m| if judged { m.success_rate.map(|r| 100.0 * r) } else { Some(100.0 * m.answered_rate) })
            .collect(),
    }];
    if rows.iter().any(|m| m.path_pct.is_some()) {
        series.push(Series {
            label: "Path%".into(),
            colour: COLOURS[2],
            values: rows.iter().map(|m| m.path_pct).collect(),
        });
        series.push(Series {
            label: "Prec%".into(),
            colour: COLOURS[4],
            values: rows.iter().map(|m| m.prec_pct).collect(),
        });
    }
    let names: Vec<String> = rows.iter().map(|m| m.label.clone()).collect();
    grouped_bars(path, "Strategies on the same tasks (%)", &names, &series)
}
