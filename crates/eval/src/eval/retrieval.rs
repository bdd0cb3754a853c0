//! Tool selection measured on a benchmark's questions: where the gold tool
//! lands in the retriever's ranking over the whole pool.

use std::time::Instant;

use serde::Serialize;

use crate::dataset::{Question, ToolPool};
use crate::retrieve::rerank::promote;
use crate::retrieve::{EmbedError, Retriever};

/// Top-1, top-5, MRR and per-query latency over a question set.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RetrievalReport {
    pub source: String,
    pub tools: usize,
    pub questions: usize,
    pub top1: f64,
    pub top5: f64,
    /// Mean reciprocal rank over the full pool (a gold tool never ranked
    /// counts 0).
    pub mrr: f64,
    pub latency_ms_mean: f64,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    /// What the re-ranking judge did, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RerankFigures>,
    /// Every question whose gold tool did not rank first, in question order
    /// (`retrieval eval --misses` writes them; the figures never need them).
    #[serde(skip)]
    pub misses: Vec<Miss>,
}

/// A question the retriever ranked another tool first for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Miss {
    pub question: String,
    /// The gold tool.
    pub tool: String,
    /// The gold tool's 1-based rank over the whole pool (`None`: never ranked).
    pub rank: Option<usize>,
    /// The retriever's first five, best first.
    pub top: Vec<String>,
}

/// A listwise judge over a question's top candidates: given the question
/// and the candidates' names, best first, the index of the one it chooses,
/// or why it chose none (the retriever's order then stands).
pub type Judge<'a> = &'a mut dyn FnMut(&str, &[String]) -> Result<usize, String>;

/// Re-ranking the retriever's `top` candidates with `judge`.
pub struct Rerank<'a> {
    pub top: usize,
    pub judge: Judge<'a>,
}

/// The judge's share of a report: how often it chose, and how often its
/// choice was not already the retriever's first.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RerankFigures {
    pub top: usize,
    pub chosen: usize,
    pub failed: usize,
    pub moved: usize,
    /// Of the moves, those that put the gold tool first, and those that
    /// took it from first.
    pub moved_to_gold: usize,
    pub moved_from_gold: usize,
}

impl RetrievalReport {
    /// What `retrieval eval` prints for the questions of file `questions`.
    pub fn text(&self, questions: &std::path::Path) -> String {
        format!(
            "retrieval over {} tools, {} questions ({})\nsource   {}\ntop-1    {:.1}%\ntop-5    {:.1}%\nMRR      {:.3}\n\
             latency  {:.2} ms mean, {:.2} ms p50, {:.2} ms p95 per query (embedding it included)\n",
            self.tools,
            self.questions,
            questions.display(),
            self.source,
            100.0 * self.top1,
            100.0 * self.top5,
            self.mrr,
            self.latency_ms_mean,
            self.latency_ms_p50,
            self.latency_ms_p95
        ) + self
            .rerank
            .as_ref()
            .map_or(String::new(), |r| {
                format!(
                    "rerank   top {}: {} chosen, {} unanswered; {} moved up, {} of them the gold tool, {} took \
                     the gold tool from first\n",
                    r.top, r.chosen, r.failed, r.moved, r.moved_to_gold, r.moved_from_gold
                )
            })
            .as_str()
    }
}

/// A pool as the retriever's (name, description) documents.
pub fn pool_docs(pool: &ToolPool) -> Vec<(String, String)> {
    pool.tools.iter().map(|t| (t.id.clone(), t.description.clone())).collect()
}

/// Ranks every question's tools; `progress(done, total)` after each.
/// Questions must carry their gold tool ([`Question::load_with_tools`]).
pub fn evaluate(
    retriever: &Retriever,
    questions: &[Question],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<RetrievalReport, EmbedError> {
    evaluate_reranked(retriever, questions, None, progress)
}

/// [`evaluate`], with the top candidates of each question re-ranked by a
/// judge; its time is in the latency.
pub fn evaluate_reranked(
    retriever: &Retriever,
    questions: &[Question],
    mut rerank: Option<Rerank>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<RetrievalReport, EmbedError> {
    let pool = retriever.len();
    let (mut top1, mut top5, mut rr) = (0usize, 0usize, 0.0f64);
    let mut latencies = Vec::with_capacity(questions.len());
    let mut figures = rerank.as_ref().map(|r| RerankFigures { top: r.top, ..RerankFigures::default() });
    let mut misses = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        let gold = q.tool.as_deref().unwrap_or_default();
        let started = Instant::now();
        let mut ranked = retriever.search(&q.question, pool)?;
        if let (Some(r), Some(f)) = (rerank.as_mut(), figures.as_mut()) {
            let names: Vec<String> = ranked.iter().take(r.top).map(|h| h.name.clone()).collect();
            match (r.judge)(&q.question, &names) {
                Ok(chosen) if chosen < names.len() => {
                    f.chosen += 1;
                    if chosen > 0 {
                        f.moved += 1;
                        f.moved_to_gold += usize::from(names[chosen] == gold);
                        f.moved_from_gold += usize::from(names[0] == gold);
                    }
                    promote(&mut ranked, chosen);
                }
                _ => f.failed += 1,
            }
        }
        latencies.push(started.elapsed().as_secs_f64() * 1000.0);
        let rank = ranked.iter().position(|h| h.name == gold);
        if let Some(rank) = rank {
            top1 += usize::from(rank == 0);
            top5 += usize::from(rank < 5);
            rr += 1.0 / (rank + 1) as f64;
        }
        if rank != Some(0) {
            misses.push(Miss {
                question: q.question.clone(),
                tool: gold.to_string(),
                rank: rank.map(|r| r + 1),
                top: ranked.iter().take(5).map(|h| h.name.clone()).collect(),
            });
        }
        progress(i + 1, questions.len());
    }
    let n = questions.len().max(1) as f64;
    latencies.sort_by(f64::total_cmp);
    let pick = |p: f64| latencies.get(((latencies.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
    Ok(RetrievalReport {
        source: retriever.source(),
        tools: pool,
        questions: questions.len(),
        top1: top1 as f64 / n,
        top5: top5 as f64 / n,
        mrr: rr / n,
        latency_ms_mean: crate::eval::figures::mean(latencies.iter().copied()),
        latency_ms_p50: pick(0.5),
        latency_ms_p95: pick(0.95),
        rerank: figures,
        misses,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_reads_as_percentages_and_milliseconds() {
        let r = RetrievalReport {
            source: "bm25".into(),
            tools: 10,
            questions: 4,
            top1: 0.5,
            top5: 0.75,
            mrr: 0.6,
            latency_ms_mean: 1.5,
            latency_ms_p50: 1.0,
            latency_ms_p95: 3.0,
            rerank: None,
            misses: Vec::new(),
        };
        let text = r.text(std::path::Path::new("q.jsonl"));
        assert!(text.starts_with("retrieval over 10 tools, 4 questions (q.jsonl)\nsource   bm25\n"), "{text}");
        assert!(text.contains("top-1    50.0%\ntop-5    75.0%\nMRR      0.600\n"), "{text}");
        assert!(text.contains("latency  1.50 ms mean, 1.00 ms p50, 3.00 ms p95"), "{text}");
    }
}
