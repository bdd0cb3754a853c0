//! How an answer is judged against a gold answer: [`answer_matches`] by
//! default, and numeric scoring as the arithmetic benchmarks score (FuncQA,
//! GSM8K-XL): the number a free-text answer ends on, compared with the gold
//! number rounded to two decimals or within a relative tolerance.
//!
//! The papers' rules, from CoTools' `src/evaluation.py` and ToolkenGPT's
//! `evaluation/metrics.py`:
//!
//! ```text
//! round       round(p, 2) == custom_round(t, 2)
//! approx      |p − t| <= 0.001·|t|      (0.1 %)
//! approx_100  |p − t| <= 0.01·|t|       (1 %)
//! ```
//!
//! `custom_round` keeps two significant digits below 0.1 (0.0523 → 0.052)
//! and two decimals above. CoTools rounds the prediction with plain
//! `round(p, 2)`, so a gold below 0.1 can never be met there; ToolkenGPT
//! applies `custom_round` to both sides, which is what [`Match::Round2`]
//! does. The two agree whenever |t| >= 0.1.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How a task's answer is judged against its gold answer (the task file's
/// `match` field).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Match {
    /// [`answer_matches`]: numbers within float noise (or a cent
    /// when printed with two decimals), text as whole words.
    #[default]
    Exact,
    /// The answer's number and the gold, both rounded to two decimals
    /// (two significant digits below 0.1), are equal.
    Round2,
    /// The answer's number is within this share of the gold: 0.001 is the
    /// papers' `approx`, 0.01 their `approx_100`.
    Approx(f64),
}

impl Match {
    pub fn is_exact(&self) -> bool {
        *self == Match::Exact
    }
}

impl fmt::Display for Match {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Match::Exact => f.write_str("exact"),
            Match::Round2 => f.write_str("round2"),
            Match::Approx(r) => write!(f, "approx:{r}"),
        }
    }
}

impl FromStr for Match {
    type Err = String;

    /// `exact`, `round2`, `approx:REL` (REL a share: 0.001 is 0.1 %), and
    /// the papers' names `round`, `approx` (0.001) and `approx_100` (0.01).
    fn from_str(s: &str) -> Result<Match, String> {
        let known = "expected exact, round2, approx:REL (e.g. approx:0.001), approx or approx_100";
        match s.trim() {
            "exact" => Ok(Match::Exact),
            "round2" | "round" => Ok(Match::Round2),
            "approx" => Ok(Match::Approx(0.001)),
            "approx_100" => Ok(Match::Approx(0.01)),
            other => {
                let rel = other.strip_prefix("approx:").ok_or_else(|| format!("unknown rule '{other}' ({known})"))?;
                match rel.trim().parse::<f64>() {
                    Ok(r) if r.is_finite() && r >= 0.0 => Ok(Match::Approx(r)),
                    _ => Err(format!("'{rel}' in '{other}' is not a share >= 0 (e.g. approx:0.001 for 0.1 %)")),
                }
            }
        }
    }
}

impl Serialize for Match {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Match {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Match, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Whether `answer` gives `gold` under `rule`. For `Round2` and `Approx`
/// the answer's number is the last one it writes (after its last "answer
/// is" or "####" when it has one, as the papers parse); a gold that is not
/// a number, or an answer with none, is judged by [`answer_matches`]
/// instead, so a text gold is never scored as a failed number.
///
/// The report calls this on the answers of a results file to give the
/// approx variants beside the rule the run was judged by:
///
/// ```
/// use switchyard_core::task::{Match, numeric_match};
/// assert!(numeric_match("The answer is 3,770.", "3770", Match::Round2));
/// assert!(numeric_match("0.39364", "0.3936", Match::Round2));
/// assert!(numeric_match("1000.9", "1000", Match::Approx(0.001)));
/// assert!(!numeric_match("1002", "1000", Match::Approx(0.001)));
/// ```
pub fn numeric_match(answer: &str, gold: &str, rule: Match) -> bool {
    let exact = || answer_matches(answer, gold);
    let (Some(t), Some(p)) = (gold_number(gold), answer_number(answer)) else {
        return exact();
    };
    match rule {
        Match::Exact => exact(),
        Match::Round2 => {
            let (p, t) = (custom_round(p), custom_round(t));
            (p - t).abs() <= 1e-9 * t.abs().max(1.0)
        }
        Match::Approx(rel) => (p - t).abs() <= rel * t.abs(),
    }
}

/// Two decimals, or two significant digits for 0 < |x| < 0.1 (ToolkenGPT's
/// `custom_round`: 52.3523 → 52.35, 0.00000233 → 0.0000023).
fn custom_round(x: f64) -> f64 {
    // As the papers count: the zeros after the point of the value printed
    // with ten decimals, so 0.01 has one and 1e-12 has ten.
    let printed = format!("{:.10}", x.abs());
    let (whole, fraction) = printed.split_once('.').unwrap_or((&printed, ""));
    let zeros = fraction.chars().take_while(|&c| c == '0').count();
    let places = if whole == "0" && zeros >= 1 { zeros as i32 + 2 } else { 2 };
    let scale = 10f64.powi(places);
    let r = (x * scale).round() / scale;
    if r.is_finite() { r } else { x }
}

/// The gold as a number: the whole text is one number ("0.3936", "12.0",
/// "-3", "1,200", "1e-5").
fn gold_number(gold: &str) -> Option<f64> {
    let t = gold.trim().trim_end_matches('.').replace(',', "");
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The number a free-text answer ends on: the last one written after its
/// last "answer is" or "####", else the last in the text.
fn answer_number(answer: &str) -> Option<f64> {
    // ASCII lower-casing keeps every byte offset, so the cut falls in the
    // original where it fell in the copy.
    let lower = answer.to_ascii_lowercase();
    let tail = ["answer is", "####"]
        .iter()
        .filter_map(|m| lower.rfind(m).map(|i| i + m.len()))
        .max()
        .map_or(answer, |i| &answer[i..]);
    numbers(tail).last().copied().or_else(|| numbers(answer).last().copied())
}

/// Every number in `text`, in order: thousands separators ("3,770"), signs
/// ("-5", "−5") where a number may start (not the hyphen of "2024-06"),
/// decimals and exponents ("1.5e-3", "2E+10").
fn numbers(text: &str) -> Vec<f64> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let digit_start = c[i].is_ascii_digit() && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '.'));
        // ".5" is a number too.
        let point_start = c[i] == '.'
            && c.get(i + 1).is_some_and(char::is_ascii_digit)
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '.'));
        if !(digit_start || point_start) {
            i += 1;
            continue;
        }
        let sign_at = |k: usize| matches!(c[k], '-' | '−' | '+');
        let negative = i > 0
            && sign_at(i - 1)
            && c[i - 1] != '+'
            && (i == 1 || !(c[i - 2].is_alphanumeric() || matches!(c[i - 2], '.' | '-' | '−')));
        let mut s = String::from(if negative { "-" } else { "" });
        let mut j = i;
        while j < c.len() {
            if c[j].is_ascii_digit() {
                s.push(c[j]);
                j += 1;
            } else if c[j] == ','
                && j > i
                && c.get(j + 1..j + 4).is_some_and(|g| g.iter().all(char::is_ascii_digit))
                && c.get(j + 4).is_none_or(|x| !x.is_ascii_digit())
            {
                j += 1;
            } else {
                break;
            }
        }
        if j + 1 < c.len() && c[j] == '.' && c[j + 1].is_ascii_digit() {
            s.push('.');
            j += 1;
            while j < c.len() && c[j].is_ascii_digit() {
                s.push(c[j]);
                j += 1;
            }
        }
        // An exponent: e or E, an optional sign, digits, and no letter after.
        if j < c.len() && matches!(c[j], 'e' | 'E') {
            let mut k = j + 1;
            if k < c.len() && matches!(c[k], '-' | '+') {
                k += 1;
            }
            let digits = c[k..].iter().take_while(|x| x.is_ascii_digit()).count();
            if digits > 0 && c.get(k + digits).is_none_or(|x| !x.is_alphabetic()) {
                s.extend(&c[j..k + digits]);
                j = k + digits;
            }
        }
        if let Ok(v) = s.parse::<f64>().map(|v| if v == 0.0 { 0.0 } else { v })
            && v.is_finite()
        {
            out.push(v);
        }
        i = j.max(i + 1);
    }
    out
}

/// Relative tolerance for numeric answers: what survives printing a float.
const REL_TOL: f64 = 1e-6;
/// Absolute tolerance when either side is printed with exactly two decimals
/// (money, rounded measurements): a cent either way is the same answer.
const TWO_DECIMALS_TOL: f64 = 0.01 + 1e-9;

/// Whether `answer` gives the gold answer.
///
/// - A numeric gold matches when any number in the answer equals it within a
///   relative 1e-6, or within 0.01 when either number is printed with exactly
///   two decimals. Thousands separators ("1,410,700,000") are read.
/// - Otherwise both are normalised (lower case, accents folded, punctuation
///   to spaces) and the gold must appear in the answer as whole words, so
///   "The capital is Paris." gives "Paris".
/// - An empty gold matches only an empty answer.
pub fn answer_matches(answer: &str, gold: &str) -> bool {
    let gold_t = gold.trim();
    if gold_t.is_empty() {
        return answer.trim().is_empty();
    }
    if let Some(g) = single_number(gold_t) {
        return numbers_in(answer).iter().any(|a| numbers_equal(a, &g));
    }
    let (a, g) = (normalise(answer), normalise(gold_t));
    if g.is_empty() {
        // A gold of punctuation only: compare the raw text.
        return answer.contains(gold_t);
    }
    format!(" {a} ").contains(&format!(" {g} "))
}

#[derive(Debug, Clone, Copy)]
struct Num {
    value: f64,
    two_decimals: bool,
}

fn numbers_equal(a: &Num, g: &Num) -> bool {
    let diff = (a.value - g.value).abs();
    diff <= REL_TOL * a.value.abs().max(g.value.abs())
        || ((a.two_decimals || g.two_decimals) && diff <= TWO_DECIMALS_TOL)
}

/// The gold is a number when, stripped of surrounding punctuation, it is one
/// number and nothing else.
fn single_number(s: &str) -> Option<Num> {
    let t = s.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '+' && c != '.');
    let t = t.trim_end_matches('.');
    let nums = numbers_in(t);
    match nums.as_slice() {
        [n] if t.chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | ',')) => Some(*n),
        _ => None,
    }
}

/// Every number written in `text`, in order. A '-' is a sign only where a
/// number may start (not inside "2024-06-14"); commas group thousands only in
/// groups of three digits.
fn numbers_in(text: &str) -> Vec<Num> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_here = b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'.'));
        if !starts_here {
            i += 1;
            continue;
        }
        let negative = i > 0
            && b[i - 1] == b'-'
            && (i == 1 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'.' || b[i - 2] == b'-'));
        let mut digits = String::new();
        let mut j = i;
        while j < b.len() {
            if b[j].is_ascii_digit() {
                digits.push(b[j] as char);
                j += 1;
            } else if b[j] == b','
                && b.get(j + 1..j + 4).is_some_and(|g| g.iter().all(u8::is_ascii_digit))
                && !b.get(j + 4).is_some_and(u8::is_ascii_digit)
            {
                j += 1;
            } else {
                break;
            }
        }
        let mut decimals = 0;
        if j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit() {
            digits.push('.');
            j += 1;
            while j < b.len() && b[j].is_ascii_digit() {
                digits.push(b[j] as char);
                decimals += 1;
                j += 1;
            }
        }
        if let Ok(v) = digits.parse::<f64>() {
            out.push(Num { value: if negative { -v } else { v }, two_decimals: decimals == 2 });
        }
        i = j;
    }
    out
}

fn normalise(s: &str) -> String {
    crate::text::fold(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_number_is_the_answer() {
        assert_eq!(answer_number("The answer is 3,770."), Some(3770.0));
        assert_eq!(answer_number("It costs $1,234,567.89 in total"), Some(1234567.89));
        assert_eq!(answer_number("From 12 we take 20, leaving -8"), Some(-8.0));
        assert_eq!(answer_number("−8"), Some(-8.0));
        assert_eq!(answer_number("about 1.5e-3 of it"), Some(0.0015));
        assert_eq!(answer_number("2E+10"), Some(2e10));
        assert_eq!(answer_number("3 eggs"), Some(3.0));
        assert_eq!(answer_number("the answer is 42 apples from 3 farms"), Some(3.0));
        assert_eq!(answer_number("answer is 42. Checked twice, in 2 ways."), Some(2.0));
        assert_eq!(answer_number("#### 60"), Some(60.0));
        assert_eq!(answer_number("The answer is .5"), Some(0.5));
        assert_eq!(answer_number("on 2024-06-14"), Some(14.0));
        assert_eq!(answer_number("value 12e"), Some(12.0));
        assert_eq!(answer_number("1,23"), Some(23.0));
        assert_eq!(answer_number("no number"), None);
        assert_eq!(answer_number(""), None);
        assert_eq!(answer_number("1e999"), None);
        assert_eq!(answer_number("Ünïcödé: The Answer Is 7"), Some(7.0));
    }

    #[test]
    fn round2_rounds_both_sides() {
        let m = |a: &str, g: &str| numeric_match(a, g, Match::Round2);
        assert!(m("0.39364", "0.3936"));
        assert!(m("The answer is 1.8476.", "1.8476"));
        assert!(m("2.2481", "2.25"));
        assert!(!m("2.24", "2.2481"));
        assert!(m("32040", "32040.0"));
        assert!(m("32,040.001", "32040.0"));
        assert!(!m("32041", "32040.0"));
        assert!(m("-3.141", "-3.14"));
        // Below 0.1, two significant digits.
        assert!(m("0.0523", "0.05234"));
        assert!(!m("0.05", "0.0523"));
        assert!(!m("0.0012", "0.0049"));
        assert!(m("0", "0"));
        assert!(m("0.00123", "0.0012"));
        assert!(!m("0.001", "0.0012"));
        assert!(m("0.0100", "0.01"));
        assert!(!m("no number", "3"));
        // A text gold is judged as text.
        assert!(m("Vienna Observatory", "Vienna Observatory"));
    }

    #[test]
    fn approx_is_relative() {
        assert!(numeric_match("999", "1000", Match::Approx(0.001)));
        assert!(!numeric_match("998.9", "1000", Match::Approx(0.001)));
        assert!(numeric_match("990", "1000", Match::Approx(0.01)));
        assert!(numeric_match("-1000.5", "-1000", Match::Approx(0.001)));
        assert!(numeric_match("0", "0", Match::Approx(0.001)));
        assert!(!numeric_match("0.0001", "0", Match::Approx(0.001)));
    }

    #[test]
    fn exact_is_answer_matches() {
        assert!(numeric_match("The result is 395.", "395", Match::Exact));
        assert!(!numeric_match("396", "395", Match::Exact));
    }

    #[test]
    fn rules_read_and_print() {
        for (s, m) in [
            ("exact", Match::Exact),
            ("round2", Match::Round2),
            ("round", Match::Round2),
            ("approx", Match::Approx(0.001)),
            ("approx_100", Match::Approx(0.01)),
            ("approx:0.05", Match::Approx(0.05)),
        ] {
            assert_eq!(s.parse::<Match>().unwrap(), m, "{s}");
        }
        assert_eq!(Match::Approx(0.001).to_string(), "approx:0.001");
        assert_eq!(Match::Round2.to_string(), "round2");
        assert!("approx:-1".parse::<Match>().unwrap_err().contains("share"));
        assert!("approx:x".parse::<Match>().is_err());
        assert!("fuzzy".parse::<Match>().unwrap_err().contains("unknown rule 'fuzzy'"));
    }

    #[test]
    fn numbers_compare_numerically() {
        assert!(answer_matches("The result is 395.", "395"));
        assert!(answer_matches("395.0000001", "395"));
        assert!(!answer_matches("396", "395"));
        assert!(answer_matches("1,410,700,000 people", "1410700000"));
        assert!(answer_matches("about 15432.10 yen", "15432.1"));
        assert!(answer_matches("15432.11", "15432.1"));
        assert!(!answer_matches("15432.2", "15432.1"));
        assert!(answer_matches("it is -40 degrees", "-40"));
        assert!(!answer_matches("2024-40", "-40"));
        assert!(answer_matches("6.21371192", "6.21371192237"));
        assert!(!answer_matches("no number here", "3"));
    }

    #[test]
    fn strings_compare_normalised() {
        assert!(answer_matches("The capital is Paris.", "Paris"));
        assert!(answer_matches("paris", "PARIS!"));
        assert!(answer_matches("Brasilia", "Brasília"));
        assert!(answer_matches("Washington, D.C.", "Washington, D.C."));
        assert!(!answer_matches("Parisian", "Paris"));
        assert!(answer_matches("2024-06-23", "2024-06-23"));
        assert!(!answer_matches("2024-06-24", "2024-06-23"));
        assert!(answer_matches("", ""));
        assert!(!answer_matches("x", ""));
    }
}
