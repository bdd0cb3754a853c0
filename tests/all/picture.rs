//! The README's picture of the workbench, drawn by the workbench itself: the
//! app at 160×48 in the middle of ToolNet's Figure 4 (the golden
//! `toolnet-fault` session: simulated model, seed 42, the sample tools, the
//! favourite `geo_lookup` broken before task 3), turned into SVG by
//! `ui::svg` and into PNG by resvg. The committed files must be what the app
//! draws now, so the picture cannot drift from the app:
//!
//! `SWITCHYARD_BLESS_DOCS=1 cargo test --test all picture` draws them again.

use std::path::{Path, PathBuf};

use crossterm::event::KeyCode;
use resvg::{tiny_skia, usvg};

use switchyard::engine::{Event, EventKind};
use switchyard::ui::svg::{SvgStyle, buffer_to_svg};

use crate::common;

const SIZE: (u16, u16) = (160, 48);
/// PNG pixels per SVG pixel: sharp when shown larger than the SVG's size.
const PNG_SCALE: f32 = 2.0;
/// How far a pixel of the committed PNG may be from a fresh rendering, per
/// channel: room for another CPU's rounding in the anti-aliasing, far below
/// what a changed glyph, line or colour makes.
const PNG_TOLERANCE: u8 = 3;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The session the picture is a moment of, and that moment: the mirror's
/// answer in the second task whose call of the broken primary failed. By
/// then the evaluator has punished the primary once, its weight has fallen
/// under its twin's on the chart, and the transcript shows the failed call
/// and the agent turning to the backup.
fn figure_4_moment() -> (Vec<Event>, usize) {
    let events = switchyard::engine::trace::read_trace(&root().join("tests/golden/toolnet-fault.jsonl")).unwrap();
    let failed_runs: Vec<u32> = events
        .iter()
        .filter(|e| matches!(&e.kind, EventKind::ToolResult { tool, fault: Some(_), .. } if tool == "geo_lookup"))
        .map(|e| e.run)
        .collect();
    let run = *failed_runs.iter().filter(|r| **r != failed_runs[0]).min().expect("two runs hit the fault");
    let at = events
        .iter()
        .position(|e| e.run == run && matches!(&e.kind, EventKind::GraphUpdated { .. }))
        .expect("the graph learns from that run");
    (events, at + 1)
}

/// The workbench that saw the first `n` events live, its graph focused on
/// the broken tool as the README's tour does (`/geo_lookup` Enter).
fn workbench(events: &[Event]) -> switchyard::ui::app::App {
    let mut app = common::app(events.to_vec());
    common::press(&mut app, KeyCode::Char('/'));
    for c in "geo_lookup".chars() {
        common::press(&mut app, KeyCode::Char(c));
    }
    common::press(&mut app, KeyCode::Enter);
    app
}

/// DejaVu (compiled in by the `dejavu` crate) and no system font, so the
/// PNG is the same on every machine: Sans Mono for the text, Sans for the
/// few symbols Mono lacks (⚡).
fn fonts() -> std::sync::Arc<usvg::fontdb::Database> {
    let mut db = usvg::fontdb::Database::new();
    for font in [
        dejavu::sans_mono::regular(),
        dejavu::sans_mono::bold(),
        dejavu::sans_mono::oblique(),
        dejavu::sans_mono::bold_oblique(),
        dejavu::sans::regular(),
        dejavu::sans::bold(),
    ] {
        db.load_font_data(font.to_vec());
    }
    db.set_monospace_family("DejaVu Sans Mono");
    db.set_sans_serif_family("DejaVu Sans");
    db.set_serif_family("DejaVu Sans");
    std::sync::Arc::new(db)
}

fn rasterize(svg: &str) -> tiny_skia::Pixmap {
    let opt = usvg::Options { fontdb: fonts(), font_family: "DejaVu Sans Mono".into(), ..Default::default() };
    let tree = usvg::Tree::from_str(svg, &opt).expect("the SVG parses");
    let size = tree.size();
    let (w, h) = ((size.width() * PNG_SCALE).ceil() as u32, (size.height() * PNG_SCALE).ceil() as u32);
    let mut pixmap = tiny_skia::Pixmap::new(w, h).unwrap();
    resvg::render(&tree, tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE), &mut pixmap.as_mut());
    pixmap
}

fn stale(path: &Path, why: &str) -> ! {
    panic!(
        "{} is not what the workbench draws now ({why}).\nDraw it again and commit it:\n  \
         SWITCHYARD_BLESS_DOCS=1 cargo test --test all picture",
        path.display()
    )
}

#[test]
fn the_readme_picture_is_what_the_workbench_draws() {
    let (events, n) = figure_4_moment();
    let app = workbench(&events[..n]);
    let buf = common::screen(&app, SIZE.0, SIZE.1);
    let text = common::buffer_text(&buf);

    // The moment shows what the README says it does.
    for want in [
        "Graph · neighbourhood · geo_lookup",
        "⚡  fault injected",
        "› geo_lookup ✗ › geo_lookup_mirror ✓",
        "score ━ geo_lookup",
        "-> error: injected fault: error",
        "geo_lookup -3",
        "Budget",
        "actor      sim (simulated)",
        "Retrieval · bm25",
        "▶ running",
    ] {
        assert!(text.contains(want), "'{want}' is not in the picture:\n{text}");
    }

    let svg = buffer_to_svg(&buf, &SvgStyle::default());
    let png = rasterize(&svg);
    let dir = root().join("docs/src/images");
    let (svg_path, png_path) = (dir.join("workbench.svg"), dir.join("workbench.png"));
    if std::env::var("SWITCHYARD_BLESS_DOCS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(&svg_path, &svg).unwrap();
        std::fs::write(&png_path, png.encode_png().unwrap()).unwrap();
        return;
    }

    let committed = std::fs::read_to_string(&svg_path).unwrap_or_else(|e| stale(&svg_path, &e.to_string()));
    if committed != svg {
        let line = committed
            .lines()
            .zip(svg.lines())
            .position(|(a, b)| a != b)
            .map_or(format!("{} lines, now {}", committed.lines().count(), svg.lines().count()), |i| {
                format!("line {} differs", i + 1)
            });
        stale(&svg_path, &line);
    }
    let bytes = std::fs::read(&png_path).unwrap_or_else(|e| stale(&png_path, &e.to_string()));
    let old = tiny_skia::Pixmap::decode_png(&bytes).unwrap_or_else(|e| stale(&png_path, &e.to_string()));
    if (old.width(), old.height()) != (png.width(), png.height()) {
        stale(&png_path, &format!("{}×{}, now {}×{}", old.width(), old.height(), png.width(), png.height()));
    }
    let off = old.data().iter().zip(png.data()).filter(|(a, b)| a.abs_diff(**b) > PNG_TOLERANCE).count();
    if off > 0 {
        stale(&png_path, &format!("{off} channel values differ"));
    }
}
