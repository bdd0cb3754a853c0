//! The numeric scorings of FuncQA-style tasks, where the gold is a number
//! and the answer is free text ending in one: CoTools' (and ToolkenGPT's)
//! `round` (both rounded to 2 decimals), `approx` (within 0.1 % of the
//! gold) and `approx_100` (within 1 %), each by [`numeric_match`], the rule
//! a task file's `match` names, so a report and a run judge alike.

use serde::Serialize;

use crate::task::{Match, numeric_match};

/// The gold as a number when the whole gold is one (commas and spaces
/// aside): a gold like "Paris" or "3 apples" is not numeric.
pub(super) fn gold_number(gold: &str) -> Option<f64> {
    let g: String = gold.chars().filter(|c| *c != ',' && !c.is_whitespace()).collect();
    g.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// One setting's numeric scorings, over its tasks with a numeric gold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NumericScores {
    /// Tasks whose gold is a number.
    pub tasks: usize,
    /// Shares of those tasks (0..1) whose answer matches: rounded to 2
    /// decimals, within 0.1 %, within 1 %.
    pub round2: f64,
    pub approx_0_1: f64,
    pub approx_1: f64,
}

/// The scorings of (answer, gold) pairs, None when no gold is numeric.
pub(super) fn score<'a>(pairs: impl Iterator<Item = (Option<&'a str>, Option<&'a str>)>) -> Option<NumericScores> {
    let numeric: Vec<(&str, &str)> =
        pairs.filter_map(|(a, g)| g.filter(|g| gold_number(g).is_some()).map(|g| (a.unwrap_or(""), g))).collect();
    if numeric.is_empty() {
        return None;
    }
    let n = numeric.len() as f64;
    let share = |rule| numeric.iter().filter(|(a, g)| numeric_match(a, g, rule)).count() as f64 / n;
    Some(NumericScores {
        tasks: numeric.len(),
        round2: share(Match::Round2),
        approx_0_1: share(Match::Approx(0.001)),
        approx_1: share(Match::Approx(0.01)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golds_are_numeric_only_when_wholly_a_number() {
        assert_eq!(gold_number("12,000"), Some(12000.0));
        assert_eq!(gold_number(" -0.25 "), Some(-0.25));
        assert_eq!(gold_number("Paris"), None);
        assert_eq!(gold_number("3 apples"), None);
        assert_eq!(gold_number("NaN"), None);
    }

    #[test]
    fn scores_are_shares_of_the_numeric_golds() {
        let pairs = [
            (Some("It is 2.001"), Some("2")),
            (Some("5"), Some("4")),
            (None, Some("1")),
            (Some("Paris"), Some("Paris")),
            (Some("7"), None),
            (Some("The answer is 1009."), Some("1000")),
        ];
        let s = score(pairs.into_iter()).unwrap();
        assert_eq!(s.tasks, 4);
        assert!((s.round2 - 1.0 / 4.0).abs() < 1e-9, "{s:?}");
        assert!((s.approx_0_1 - 1.0 / 4.0).abs() < 1e-9, "{s:?}");
        assert!((s.approx_1 - 2.0 / 4.0).abs() < 1e-9, "{s:?}");
        assert!(score([(Some("a"), Some("b"))].into_iter()).is_none());
    }
}
