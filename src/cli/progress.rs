//! Progress that long commands show on stderr: a bar with done/total and
//! the time left, and embedding through the vector cache behind one.

use indicatif::{ProgressBar, ProgressStyle};

use switchyard::retrieve::cache::VectorCache;
use switchyard::retrieve::{EmbedError, Embedder};

/// Vectors of `texts` in order, from the session's vector cache
/// (`DATA_DIR/retrieval`, keyed by the text's sha256) when known, the rest
/// embedded with a progress bar and kept there.
pub(super) fn embed_cached(
    embedder: &dyn Embedder,
    texts: &[String],
    cache: &mut VectorCache,
    what: &str,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let bar = bar(texts.len() as u64, &format!("embedding {what}"));
    let mut out = Vec::with_capacity(texts.len());
    for chunk in texts.chunks(128) {
        let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
        out.extend(cache.vectors(embedder, &refs)?);
        bar.inc(chunk.len() as u64);
    }
    bar.finish_and_clear();
    cache.save()?;
    Ok(out)
}

/// A progress bar on stderr: done/total and the time left.
pub(super) fn bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ETA {eta} ") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_owned());
    bar
}

/// The eval's bar: done/total, the message (success so far, tokens, cost)
/// and the time left.
pub(super) fn eval_bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("eval [{bar:30}] {pos}/{len} {msg} · ETA {eta} ") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
