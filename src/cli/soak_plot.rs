//! `soak-plot` (hidden; `scripts/soak.sh` calls it): the soak's figure, as
//! SVG and PNG, from the samplers' CSV files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::{Result, eyre};

use switchyard::eval::plot::{SoakSeries, soak};

#[derive(Args, Debug)]
pub(super) struct SoakPlotArgs {
    /// Where soak.svg and soak.png go.
    #[arg(long)]
    out: PathBuf,
    /// A headless session's samples, LABEL=FILE (repeatable).
    #[arg(long, value_name = "LABEL=FILE")]
    headless: Vec<String>,
    /// The workbench session's samples, [LABEL=]FILE.
    #[arg(long, value_name = "[LABEL=]FILE")]
    workbench: Option<String>,
}

pub(super) fn soak_plot(a: SoakPlotArgs) -> Result<ExitCode> {
    let series = |label: &str, file: &str| SoakSeries { label: label.into(), file: file.into() };
    let mut headless = Vec::new();
    for spec in &a.headless {
        let (label, file) = spec.split_once('=').ok_or_else(|| eyre!("--headless {spec}: LABEL=FILE"))?;
        headless.push(series(label, file));
    }
    let workbench = a.workbench.as_deref().map(|spec| {
        let (label, file) = spec.split_once('=').unwrap_or(("workbench, pace 0", spec));
        series(label, file)
    });
    let [svg, png] = soak(&a.out, &headless, workbench.as_ref())?;
    println!("{}\n{}", svg.display(), png.display());
    Ok(ExitCode::SUCCESS)
}
