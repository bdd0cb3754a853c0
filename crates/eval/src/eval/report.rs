//! An eval's report, drawn from its output folder alone: `report.md`,
//! `summary.json` and the plots. `eval` writes it when it finishes, and
//! `switchyard report DIR` again (after an interrupted eval, or an edit of
//! the results).
//!
//! ToolNet's Figure 4 comes from a trace, not from the results: drawn from
//! one, its data is kept in the folder (`toolnet-fault.json`), so a later
//! report draws it again without the trace.

use std::path::{Path, PathBuf};

use super::fault_figure::{FAULT_FIGURE, FaultFigure, FigureError, fault_figure};
use super::markdown;
use super::plot::{self, PlotError};
use super::summary::{self, ReportError, Summary};
use crate::engine::Event;

/// The report's file name inside an eval's folder.
pub const REPORT: &str = "report.md";

/// Where ToolNet's Figure 4 comes from, when the report draws it: a
/// trace's events, and the tools and node the figure is of (by default
/// [`fault_figure`] chooses them).
#[derive(Clone, Copy, Debug)]
pub struct FaultSource<'a> {
    /// The trace the events were read from, for messages.
    pub trace: &'a Path,
    pub events: &'a [Event],
    pub tool: Option<&'a str>,
    pub backup: Option<&'a str>,
    pub from: Option<&'a str>,
}

#[derive(thiserror::Error, Debug)]
pub enum WriteError {
    #[error(transparent)]
    Folder(#[from] ReportError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("{}: ToolNet's Figure 4: {source}", trace.display())]
    Figure { trace: PathBuf, source: FigureError },
    #[error("{}: not a figure's data: {source}", path.display())]
    Kept { path: PathBuf, source: serde_json::Error },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// What a report wrote: report.md first, then summary.json, then the plots
/// (each SVG before its PNG).
pub struct Written {
    pub files: Vec<PathBuf>,
    pub summary: Summary,
}

/// Writes `report.md`, `summary.json` and the plots that apply into `dir`,
/// from its `eval.json` and `results.jsonl`, and returns the paths written.
pub fn write_report(dir: &Path) -> Result<Vec<PathBuf>, WriteError> {
    write_report_with(dir, None).map(|w| w.files)
}

/// As [`write_report`], drawing ToolNet's Figure 4 from a trace too.
/// Without one, a figure whose data an earlier report kept in `dir` is
/// drawn again.
pub fn write_report_with(dir: &Path, fault: Option<FaultSource>) -> Result<Written, WriteError> {
    let data = summary::load(dir)?;
    let summary = summary::summarize(&data.meta, &data.rows, data.torn);
    let mut plots_written = vec![plot::overview(dir, &summary)?, plot::speed(dir, &summary)?];
    let mut parameters: Vec<&str> = Vec::new();
    for s in &summary.sweeps {
        if !parameters.contains(&s.parameter.as_str()) {
            parameters.push(&s.parameter);
        }
    }
    for p in parameters {
        plots_written.push(plot::sweep(dir, &summary, p)?);
    }
    if let Some(m) = &summary.matrix
        && let Some(w) = plot::matrix(dir, m, &summary.meta.cost_unit)?
    {
        plots_written.push(w);
    }
    let mut extra = Vec::new();
    if let Some(figure) = fault_data(dir, fault, &mut extra)? {
        plots_written.push(plot::fault(dir, &figure)?);
    }
    let links: Vec<markdown::PlotLink> = plots_written.iter().map(|w| w.link.clone()).collect();
    let report_path = dir.join(REPORT);
    write_text(&report_path, &markdown::report(&summary, &links))?;
    let mut files = vec![report_path, summary::write_summary(dir, &summary)?];
    files.extend(extra);
    files.extend(plots_written.into_iter().flat_map(|w| w.files));
    Ok(Written { files, summary })
}

/// ToolNet's Figure 4 alone, from a trace, into `dir` (made if missing):
/// for a `run` with no eval around it. Returns the paths written.
pub fn write_fault_figure(dir: &Path, fault: FaultSource) -> Result<Vec<PathBuf>, WriteError> {
    std::fs::create_dir_all(dir).map_err(|source| WriteError::Io { path: dir.to_path_buf(), source })?;
    let mut files = Vec::new();
    let figure = fault_data(dir, Some(fault), &mut files)?.expect("drawn from the trace given");
    files.extend(plot::fault(dir, &figure)?.files);
    Ok(files)
}

/// The figure's data: from the trace when one is given (and kept in the
/// folder, its path pushed to `written`), else as an earlier report kept it.
fn fault_data(
    dir: &Path,
    fault: Option<FaultSource>,
    written: &mut Vec<PathBuf>,
) -> Result<Option<FaultFigure>, WriteError> {
    let kept = dir.join(FAULT_FIGURE);
    let Some(src) = fault else {
        if !kept.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&kept).map_err(|source| WriteError::Io { path: kept.clone(), source })?;
        let figure = serde_json::from_str(&text).map_err(|source| WriteError::Kept { path: kept.clone(), source })?;
        return Ok(Some(figure));
    };
    let figure = fault_figure(src.events, src.tool, src.backup, src.from)
        .map_err(|source| WriteError::Figure { trace: src.trace.to_path_buf(), source })?;
    write_text(&kept, &serde_json::to_string_pretty(&figure).expect("a figure serialises"))?;
    written.push(kept);
    Ok(Some(figure))
}

fn write_text(path: &Path, text: &str) -> Result<(), WriteError> {
    super::write_atomic(path, text.as_bytes()).map_err(|source| WriteError::Io { path: path.to_path_buf(), source })
}
