//! What the plots share: grouped bars (one group per row of a table, one bar
//! per measure), the palette, and the writing of an SVG with its PNG twin.

use std::path::{Path, PathBuf};

use plotters::style::RGBColor;

/// Why a figure was not written. Each names the file it was for.
#[derive(thiserror::Error, Debug)]
pub enum PlotError {
    #[error("{}: could not draw {what}: {why}", path.display())]
    Draw { path: PathBuf, what: String, why: String },
    #[error("{}: could not render the PNG: {why}", path.display())]
    Render { path: PathBuf, why: String },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

pub(super) type Result<T> = std::result::Result<T, PlotError>;

/// A drawing error as [`PlotError::Draw`] of `what` for `path`.
pub fn draw_error(path: &Path, what: &str) -> impl Fn(String) -> PlotError {
    let (path, what) = (path.to_path_buf(), what.to_string());
    move |why| PlotError::Draw { path: path.clone(), what: what.clone(), why }
}

/// One bar per group: its legend, its colour, and its value in each group
/// (a percentage; None leaves the bar out).
pub struct Series {
    pub label: String,
    pub colour: RGBColor,
    pub values: Vec<Option<f64>>,
}

/// The palette bars take in order.
pub const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(158, 202, 225),
    RGBColor(214, 39, 40),
    RGBColor(252, 146, 114),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

/// Grouped bars of percentages under `title`, one group per name.
pub fn grouped_bars(path: &Path, title: &str, groups: &[String], series: &[Series]) -> Result<()> {
    use plotters::prelude::*;
    let fail = draw_error(path, "the chart");
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
pub fn write_svg(path: &Path, svg: &str) -> Result<()> {
    write_atomic(path, svg.as_bytes())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::eval::write_atomic(path, bytes).map_err(|source| PlotError::Io { path: path.to_path_buf(), source })
}

/// How many PNG pixels per SVG unit: twice, so text stays sharp when the
/// picture is shown larger than its SVG size.
const PNG_SCALE: f32 = 2.0;

/// The embedded fonts, loaded once: DejaVu Sans regular and bold, standing
/// in for every family a plot names (plotters writes `sans-serif`).
fn fonts() -> std::sync::Arc<resvg::usvg::fontdb::Database> {
    static FONTS: std::sync::OnceLock<std::sync::Arc<resvg::usvg::fontdb::Database>> = std::sync::OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_font_data(dejavu::sans::regular().to_vec());
            db.load_font_data(dejavu::sans::bold().to_vec());
            db.set_sans_serif_family("DejaVu Sans");
            db.set_serif_family("DejaVu Sans");
            db.set_monospace_family("DejaVu Sans");
            std::sync::Arc::new(db)
        })
        .clone()
}

/// The SVG rendered to PNG at `path`, on white.
pub fn write_png(path: &Path, svg: &str) -> Result<()> {
    use resvg::{tiny_skia, usvg};
    let fail = |why: String| PlotError::Render { path: path.to_path_buf(), why };
    let opt = usvg::Options { fontdb: fonts(), font_family: "DejaVu Sans".into(), ..Default::default() };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| fail(e.to_string()))?;
    let size = tree.size();
    let (w, h) = ((size.width() * PNG_SCALE).ceil() as u32, (size.height() * PNG_SCALE).ceil() as u32);
    let mut pixmap = tiny_skia::Pixmap::new(w, h).ok_or_else(|| fail(format!("bad size {w}x{h}")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE), &mut pixmap.as_mut());
    let png = pixmap.encode_png().map_err(|e| fail(e.to_string()))?;
    write_atomic(path, &png)
}
