//! What a training procedure asks of its caller.

use crate::retrieve::embed::EmbedError;
use crate::train::TrainProgress;

/// What the procedure asks of its caller: the vectors of texts (from a
/// cache, with progress shown as it likes) and a word on each step.
pub trait Hooks {
    fn embed(&mut self, texts: &[String], what: &str) -> std::result::Result<Vec<Vec<f32>>, EmbedError>;
    /// A training run of `steps` steps begins.
    fn start(&mut self, what: &str, steps: usize);
    fn step(&mut self, what: &str, p: &TrainProgress);
    fn finish(&mut self);
}
