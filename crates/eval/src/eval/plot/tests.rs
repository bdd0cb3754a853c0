use std::path::Path;

use super::*;

fn png_size(path: &Path) -> (u32, u32) {
    let file = std::fs::File::open(path).unwrap();
    let reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let info = reader.info();
    (info.width, info.height)
}

#[test]
fn grouped_bars_name_every_group_and_series_and_render_to_png() {
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("bars.svg");
    let series = [
        Series { label: "success".into(), colour: COLOURS[0], values: vec![Some(80.0), None] },
        Series { label: "Path%".into(), colour: COLOURS[2], values: vec![Some(50.0), Some(25.0)] },
    ];
    grouped_bars(&svg_path, "Strategies", &["react".into(), "toolnet".into()], &series).unwrap();
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    for text in ["Strategies", "react", "toolnet", "success", "Path%"] {
        assert!(svg.contains(text), "{text} missing from the chart");
    }
    let png_path = dir.path().join("bars.png");
    write_png(&png_path, &svg).unwrap();
    let (w, h) = png_size(&png_path);
    assert!(w >= 2 * 640 && h == 2 * 480, "{w}x{h}: the PNG is the SVG at twice its size");
}

#[test]
fn a_soak_figure_draws_each_sampler_and_a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let headless = dir.path().join("headless.csv");
    std::fs::write(&headless, "secs,tasks,rss_kb,trace_bytes\n0,0,10240,0\n10,5,20480,5000\n20,10,20480,9000\n")
        .unwrap();
    let series = [SoakSeries { label: "toolnet".into(), file: headless }];
    let [svg, png] = soak(&dir.path().join("out"), &series, None).unwrap();
    assert!(std::fs::read_to_string(&svg).unwrap().contains("toolnet"));
    assert!(png_size(&png).0 > 0);

    let missing = dir.path().join("absent.csv");
    let err = soak(dir.path(), &[SoakSeries { label: "x".into(), file: missing.clone() }], None).unwrap_err();
    assert!(matches!(&err, PlotError::Io { path, .. } if *path == missing), "{err}");
    assert!(err.to_string().starts_with(&missing.display().to_string()), "{err}");
}

#[test]
fn a_figure_in_a_folder_that_cannot_be_written_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-folder").join("bars.svg");
    let err = grouped_bars(&path, "t", &["a".into()], &[]).unwrap_err();
    assert!(err.to_string().contains("no-such-folder"), "{err}");
}
