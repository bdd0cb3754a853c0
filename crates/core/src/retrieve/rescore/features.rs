//! What the re-scorer reads of one candidate: how the question's words meet
//! the parts of the tool's id. A path id (`tv/tv_program/genre`) names a
//! domain, a subject type and a property; a question usually asks for the
//! property first and names the subject after it ("What genre of TV program
//! is …?"), while the inverse relation (`tv/tv_genre/programs`) has the same
//! words in the other roles. A mean-pooled embedder sees the same bag of
//! words in both; the order of the matches tells them apart.

use super::super::tokens::tokenize;

/// The features' names, in the order [`features`] returns them; a saved
/// model records them so a file from another feature set is refused.
pub const NAMES: [&str; 9] = [
    "score_z",
    "lexical_z",
    "type_coverage",
    "property_coverage",
    "domain_coverage",
    "property_before_type",
    "property_position",
    "type_position",
    "log_rank",
];

pub const COUNT: usize = NAMES.len();

/// The question's stemmed words, each with its place in the question.
pub struct QuestionWords {
    words: Vec<(usize, String)>,
    len: usize,
}

impl QuestionWords {
    pub fn new(question: &str) -> Self {
        let mut words = Vec::new();
        let mut len = 0;
        for word in question.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            for token in tokenize(word) {
                words.push((len, token));
            }
            len += 1;
        }
        QuestionWords { words, len: len.max(1) }
    }

    /// The share of `part`'s words found in the question and where the
    /// first of them is (0 at the start, towards 1 at the end); None where
    /// the part has no words or none is found.
    fn meet(&self, part: &str) -> (f32, Option<f32>) {
        let tokens = tokenize(&part.replace('_', " "));
        if tokens.is_empty() {
            return (0.0, None);
        }
        let mut found = 0;
        let mut first: Option<usize> = None;
        for t in &tokens {
            if let Some(&(at, _)) = self.words.iter().find(|(_, w)| alike(w, t)) {
                found += 1;
                first = Some(first.map_or(at, |f| f.min(at)));
            }
        }
        (found as f32 / tokens.len() as f32, first.map(|f| f as f32 / self.len as f32))
    }
}

/// Same stem, or one a prefix of the other at five letters or more
/// (`origin` and `originate`, `compos` and `composer`).
fn alike(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    a == b || (short.len() >= 5 && long.starts_with(short))
}

/// The parts of a tool id: (domain, subject type, property). An id that is
/// not a path of three or more parts is all property.
fn parts(id: &str) -> (&str, &str, &str) {
    let id = id.trim_matches(|c| c == '<' || c == '>');
    let segments: Vec<&str> = id.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [domain, kind, .., property] if segments.len() >= 3 => (domain, kind, property),
        _ => ("", "", id),
    }
}

/// The features of candidate `id` at `rank` (0 = first) for `question`;
/// `score_z` and `lexical_z` are its retriever score and BM25 standardised
/// over the candidates re-scored.
pub fn features(question: &QuestionWords, id: &str, rank: usize, score_z: f32, lexical_z: f32) -> [f32; COUNT] {
    let (domain, kind, property) = parts(id);
    let (domain_coverage, _) = question.meet(domain);
    let (type_coverage, type_at) = question.meet(kind);
    let (property_coverage, property_at) = question.meet(property);
    let order = match (property_at, type_at) {
        (Some(p), Some(t)) if p < t => 1.0,
        (Some(p), Some(t)) if p > t => -1.0,
        _ => 0.0,
    };
    [
        score_z,
        lexical_z,
        type_coverage,
        property_coverage,
        domain_coverage,
        order,
        property_at.unwrap_or(1.0),
        type_at.unwrap_or(1.0),
        ((rank + 1) as f32).ln(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(question: &str, id: &str) -> f32 {
        features(&QuestionWords::new(question), id, 0, 0.0, 0.0)[5]
    }

    #[test]
    fn the_asked_property_comes_before_its_subject() {
        let q = "What genre of TV program is Taiyo Sentai Sun Vulcan?";
        assert_eq!(order(q, "tv/tv_program/genre"), 1.0);
        assert_eq!(order(q, "tv/tv_genre/programs"), -1.0);
        assert_eq!(order("Who directed it?", "film/film/directed_by"), 0.0);
    }

    #[test]
    fn coverage_and_position_read_the_question_words() {
        let q = QuestionWords::new("Where was the composer of Ohio born?");
        let f = features(&q, "<music/composition/composer>", 2, 0.5, -0.5);
        assert_eq!((f[0], f[1]), (0.5, -0.5));
        assert_eq!(f[3], 1.0, "composer is found");
        assert_eq!(f[2], 0.0, "composition is not: neither is a prefix of the other");
        assert!((f[6] - 3.0 / 7.0).abs() < 1e-6, "composer is the fourth of seven words: {}", f[6]);
        assert_eq!(f[7], 1.0, "no type word: at the end");
        assert!((f[8] - 3f32.ln()).abs() < 1e-6);
        // A flat id is all property.
        let g = features(&QuestionWords::new("weather in Paris"), "get_weather", 0, 0.0, 0.0);
        assert_eq!((g[2], g[3], g[4]), (0.0, 0.5, 0.0));
    }
}
