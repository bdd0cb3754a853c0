//! The numeric scorings of FuncQA-style tasks, where the gold is a number
//! and the answer is free text ending in one. They mirror CoTools' (and
//! ToolkenGPT's) evaluation: the last number of the answer, thousands
//! commas stripped, against the gold, by one of three rules — `round`
//! (both rounded to 2 decimals), `approx` (within 0.1 % of the gold) and
//! `approx_100` (within 1 %). Unlike theirs, a leading minus sign is kept:
//! their pattern reads "-5" as 5.

use serde::Serialize;

/// How an answer's number is compared with the gold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// CoTools' `round`: equal once both are rounded to 2 decimals.
    Round2,
    /// CoTools' `approx`: within 0.1 % of the gold.
    Approx0_1,
    /// CoTools' `approx_100`: within 1 % of the gold.
    Approx1,
}

/// The gold as a number when the whole gold is one (commas and spaces
/// aside): a gold like "Paris" or "3 apples" is not numeric.
pub(super) fn gold_number(gold: &str) -> Option<f64> {
    let g: String = gold.chars().filter(|c| *c != ',' && !c.is_whitespace()).collect();
    g.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The last number in the text, thousands commas stripped: "about 1,234.5
/// km" is 1234.5, "x = -3." is -3.
pub(super) fn last_number(text: &str) -> Option<f64> {
    let t: String = text.chars().filter(|c| *c != ',').collect();
    let b = t.as_bytes();
    let mut last = None;
    let mut i = 0;
    while i < b.len() {
        let digit_at = |k: usize| b.get(k).is_some_and(u8::is_ascii_digit);
        let starts = digit_at(i) || (b[i] == b'.' && digit_at(i + 1));
        if !starts {
            i += 1;
            continue;
        }
        // A minus is a sign unless it follows a word or number ("10-4" is 4).
        let signed = i > 0 && b[i - 1] == b'-' && (i < 2 || !b[i - 2].is_ascii_alphanumeric());
        let start = if signed { i - 1 } else { i };
        let mut j = i;
        while digit_at(j) {
            j += 1;
        }
        if j < b.len() && b[j] == b'.' && digit_at(j + 1) {
            j += 1;
            while digit_at(j) {
                j += 1;
            }
        }
        last = t[start..j].parse::<f64>().ok();
        i = j;
    }
    last
}

/// Whether the answer's last number matches the gold under the rule.
pub(super) fn matches(answer: &str, gold: f64, rule: Rule) -> bool {
    let Some(p) = last_number(answer) else {
        return false;
    };
    match rule {
        // Whole hundredths, compared as the integers they are.
        Rule::Round2 => (p * 100.0).round() == (gold * 100.0).round(),
        Rule::Approx0_1 => (p - gold).abs() <= gold.abs() * 0.001,
        Rule::Approx1 => (p - gold).abs() <= gold.abs() * 0.01,
    }
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
    let numeric: Vec<(&str, f64)> = pairs.filter_map(|(a, g)| Some((a.unwrap_or(""), gold_number(g?)?))).collect();
    if numeric.is_empty() {
        return None;
    }
    let n = numeric.len() as f64;
    let share = |rule| numeric.iter().filter(|(a, g)| matches(a, *g, rule)).count() as f64 / n;
    Some(NumericScores {
        tasks: numeric.len(),
        round2: share(Rule::Round2),
        approx_0_1: share(Rule::Approx0_1),
        approx_1: share(Rule::Approx1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_number_is_read_with_commas_and_signs() {
        assert_eq!(last_number("The answer is 1,234.5 km"), Some(1234.5));
        assert_eq!(last_number("3 apples and 4 pears: 7."), Some(7.0));
        assert_eq!(last_number("x = -3"), Some(-3.0));
        assert_eq!(last_number("about .5"), Some(0.5));
        assert_eq!(last_number("v2 of the tool says 10-4"), Some(4.0));
        assert_eq!(last_number("it is (-4)"), Some(-4.0));
        assert_eq!(last_number("no number"), None);
        assert_eq!(last_number(""), None);
    }

    #[test]
    fn golds_are_numeric_only_when_wholly_a_number() {
        assert_eq!(gold_number("12,000"), Some(12000.0));
        assert_eq!(gold_number(" -0.25 "), Some(-0.25));
        assert_eq!(gold_number("Paris"), None);
        assert_eq!(gold_number("3 apples"), None);
        assert_eq!(gold_number("NaN"), None);
    }

    #[test]
    fn the_three_rules_tolerate_what_cotools_tolerates() {
        assert!(matches("= 2.71828", 2.72, Rule::Round2));
        assert!(!matches("= 2.729", 2.72, Rule::Round2));
        assert!(matches("1000.9", 1000.0, Rule::Approx0_1));
        assert!(!matches("1001.1", 1000.0, Rule::Approx0_1));
        assert!(matches("1009", 1000.0, Rule::Approx1));
        assert!(!matches("1011", 1000.0, Rule::Approx1));
        assert!(matches("0", 0.0, Rule::Approx0_1));
        assert!(!matches("nothing", 0.0, Rule::Approx1));
    }

    #[test]
    fn scores_are_shares_of_the_numeric_golds() {
        let pairs = [
            (Some("It is 2.001"), Some("2")),
            (Some("5"), Some("4")),
            (None, Some("1")),
            (Some("Paris"), Some("Paris")),
            (Some("7"), None),
        ];
        let s = score(pairs.into_iter()).unwrap();
        assert_eq!(s.tasks, 3);
        assert!((s.round2 - 1.0 / 3.0).abs() < 1e-9);
        assert!((s.approx_0_1 - 1.0 / 3.0).abs() < 1e-9);
        assert!(score([(Some("a"), Some("b"))].into_iter()).is_none());
    }
}
