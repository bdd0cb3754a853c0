//! Figures people compare, drawn as well as printed: the eval report's
//! plots, the soak's figure, and what they share:
//! grouped bars (one group per row of a table, one bar per measure), the
//! palette, and the writing of an SVG with its PNG twin.
//!
//! The PNG is the SVG rendered by resvg, not drawn a second time by
//! plotters' bitmap backend: that backend has text only through fonts found
//! by fontconfig (`ttf`) or registered by hand (`ab_glyph`, which cannot
//! rotate an axis title). resvg is given DejaVu Sans, compiled into the
//! binary by the `dejavu` crate, and no system font, so a PNG reads the same
//! on a machine with no fonts installed, and always matches its SVG.

mod charts;
mod draw;
mod soak;
#[cfg(test)]
mod tests;

pub use charts::{Written, fault, matrix, overview, speed, strategies, sweep};
pub use draw::{COLOURS, PlotError, Series, draw_error, grouped_bars, write_png, write_svg};
pub use soak::{SoakSeries, soak};
