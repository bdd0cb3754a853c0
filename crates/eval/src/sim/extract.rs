//! Values read out of a task's text: dates, numbers, quoted phrases, proper
//! nouns, IDs, arithmetic and the mentions of an enum's values. What each
//! fills is `arguments`' business.

use crate::retrieve::tokenize;

/// YYYY-MM-DD dates in order, and the text with them blanked out (so their
/// digits are not read as numbers).
pub(super) fn extract_dates(text: &str) -> (Vec<String>, String) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut rest = chars.clone();
    let shape = |i: usize| -> bool {
        let pattern = "dddd-dd-dd";
        if i + pattern.len() > chars.len() {
            return false;
        }
        let ok = pattern.chars().enumerate().all(|(k, p)| match p {
            'd' => chars[i + k].is_ascii_digit(),
            _ => chars[i + k] == '-',
        });
        let before = i == 0 || !chars[i - 1].is_alphanumeric();
        let after = chars.get(i + pattern.len()).is_none_or(|c| !c.is_alphanumeric());
        ok && before && after
    };
    let mut i = 0;
    while i < chars.len() {
        if shape(i) {
            out.push(chars[i..i + 10].iter().collect());
            for c in rest.iter_mut().skip(i).take(10) {
                *c = ' ';
            }
            i += 10;
        } else {
            i += 1;
        }
    }
    (out, rest.into_iter().collect())
}

/// Numbers in order. A '-' is a sign only where a number may start; digits
/// glued to letters (IDs like C0042) are not numbers; thousands separators
/// ("1,250") are read.
pub(super) fn extract_numbers(text: &str) -> Vec<f64> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let starts = c[i].is_ascii_digit() && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let negative = i > 0 && c[i - 1] == '-' && (i == 1 || c[i - 2].is_whitespace() || "([=:".contains(c[i - 2]));
        let mut s = String::new();
        let mut j = i;
        while j < c.len() {
            if c[j].is_ascii_digit() {
                s.push(c[j]);
                j += 1;
            } else if c[j] == ','
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
        let glued = c.get(j).is_some_and(|x| x.is_alphabetic());
        if !glued && let Ok(v) = s.parse::<f64>() {
            out.push(if negative { -v } else { v });
        }
        i = j;
    }
    out
}

/// A quoted phrase and the word that introduces it ("the city 'Lyon'" has
/// the label `city`), stop words skipped.
pub(super) struct Quoted {
    pub(super) text: String,
    pub(super) label: Option<String>,
}

/// Phrases in "double", 'single', “curly” or ‘curly’ quotes, and the text
/// with them blanked out. A straight apostrophe inside a word ("don't")
/// neither opens nor closes a quote.
pub(super) fn extract_quoted(text: &str) -> (Vec<Quoted>, String) {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut rest = c.clone();
    let mut i = 0;
    while i < c.len() {
        let close = match c[i] {
            '"' => Some('"'),
            '“' => Some('”'),
            '‘' => Some('’'),
            '\'' if i == 0 || !c[i - 1].is_alphanumeric() => Some('\''),
            _ => None,
        };
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let end = (i + 1..c.len())
            .find(|&j| c[j] == close && (close != '\'' || c.get(j + 1).is_none_or(|n| !n.is_alphanumeric())));
        match end {
            Some(j) if j > i + 1 => {
                let phrase: String = c[i + 1..j].iter().collect();
                if !phrase.trim().is_empty() {
                    let before: String = c[..i].iter().collect();
                    let label = before.split_whitespace().rev().find_map(|w| tokenize(w).pop());
                    out.push(Quoted { text: phrase.trim().to_string(), label });
                }
                for ch in rest.iter_mut().take(j + 1).skip(i) {
                    *ch = ' ';
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    (out, rest.into_iter().collect())
}

/// Runs of capitalised words that do not start a sentence ("New Zealand"),
/// acronyms left out ("USD" is rarely the name asked for).
pub(super) fn extract_proper(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        let acronym = word.chars().filter(|c| c.is_alphabetic()).all(char::is_uppercase) && word.chars().count() <= 4;
        if capital && !sentence_start && !acronym {
            run.push(word);
        } else if !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
        // A run also ends at punctuation after the word.
        if raw.ends_with([',', ';', ':', '?', '!', '.', ')']) && !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
        sentence_start = raw.ends_with(['.', '?', '!', ':']);
    }
    if !run.is_empty() {
        out.push(run.join(" "));
    }
    out
}

pub(super) fn extract_id(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .find(|w| {
            let letters = w.chars().take_while(char::is_ascii_uppercase).count();
            letters > 0 && w.len() > letters && w.chars().skip(letters).all(|c| c.is_ascii_digit())
        })
        .map(str::to_string)
}

const EXPRESSION_CHARS: &str = "0123456789.+-*/^%()×÷− ";

/// The arithmetic in the task: a quoted phrase that is arithmetic, else the
/// longest run of arithmetic characters with an operator between numbers.
pub(super) fn extract_expression(task: &str, quoted: &[Quoted]) -> Option<String> {
    let is_arith = |s: &str| {
        let s = s.trim();
        s.chars().all(|c| EXPRESSION_CHARS.contains(c))
            && s.chars().any(|c| c.is_ascii_digit())
            && s.chars().any(|c| "+-*/^%×÷−".contains(c))
    };
    if let Some(q) = quoted.iter().find(|q| is_arith(&q.text)) {
        return Some(q.text.trim().to_string());
    }
    let mut best: Option<String> = None;
    let mut cur = String::new();
    let mut consider = |cur: &str| {
        let t = tidy_expression(cur);
        if is_arith(&t) && best.as_ref().is_none_or(|b| t.len() > b.len()) {
            best = Some(t);
        }
    };
    for ch in task.chars() {
        if EXPRESSION_CHARS.contains(ch) {
            cur.push(ch);
        } else {
            consider(&cur);
            cur.clear();
        }
    }
    consider(&cur);
    best
}

/// Trims what cannot end or start an expression (a sentence's full stop,
/// an unmatched parenthesis).
fn tidy_expression(s: &str) -> String {
    let mut t = s.trim().trim_end_matches(['.', ' ', '+', '*', '/', '^', '%', '-']).trim().to_string();
    loop {
        let open = t.matches('(').count();
        let close = t.matches(')').count();
        if close > open && t.ends_with(')') {
            t.pop();
        } else if open > close && t.starts_with('(') {
            t.remove(0);
        } else {
            break;
        }
        t = t.trim().to_string();
    }
    t
}

/// Allowed enum values mentioned in `text`, in order of mention. All-caps
/// values (currency codes) match case-sensitively, so "try" is not TRY;
/// others ignore case, accept a plural "s", and read `_` as a space. A
/// mention inside a longer one ("mile" in "nautical mile") does not count.
pub(super) fn enum_mentions<'a>(text: &str, allowed: &[&'a str]) -> Vec<&'a str> {
    let lower = text.to_lowercase();
    let mut found: Vec<(usize, usize, &'a str)> = Vec::new();
    for &v in allowed {
        let case_sensitive = !v.chars().any(char::is_lowercase);
        let hay = if case_sensitive { text } else { lower.as_str() };
        let needles: Vec<String> = if case_sensitive {
            vec![v.to_string()]
        } else {
            let l = v.to_lowercase();
            let spaced = l.replace('_', " ");
            if spaced == l { vec![l] } else { vec![l, spaced] }
        };
        for needle in needles {
            // Lower-casing that changes byte lengths would shift positions
            // against the case-sensitive matches; such text is skipped.
            if needle.is_empty() || hay.len() != text.len() {
                continue;
            }
            for (pos, _) in hay.match_indices(needle.as_str()) {
                let end = pos + needle.len();
                let before_ok = hay[..pos].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                let mut stop = end;
                if !case_sensitive && hay[end..].starts_with('s') {
                    stop += 1;
                }
                let boundary = |at: usize| hay[at..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if before_ok && (boundary(end) || boundary(stop)) {
                    found.push((pos, end, v));
                }
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out: Vec<(usize, usize, &'a str)> = Vec::new();
    for m in found {
        if out.iter().any(|o| m.0 >= o.0 && m.1 <= o.1) {
            continue;
        }
        out.push(m);
    }
    out.into_iter().map(|(_, _, v)| v).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_task_parts() {
        let (dates, rest) = extract_dates("From 2024-01-15 to 2024-03-01, add 30 days.");
        assert_eq!(dates, ["2024-01-15", "2024-03-01"]);
        assert_eq!(extract_numbers(&rest), [30.0]);
        assert_eq!(extract_numbers("Convert -40 celsius, 1,250 and 3.5 but not C0042 or 10x"), [-40.0, 1250.0, 3.5]);
        let (quoted, rest) = extract_quoted("Define 'don't panic' and the city \"Lyon\", it's ‘x’");
        let texts: Vec<&str> = quoted.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(texts, ["don't panic", "Lyon", "x"]);
        assert_eq!(quoted[1].label.as_deref(), Some("city"));
        assert!(!rest.contains("Lyon"));
        assert_eq!(extract_proper("What is the capital of New Zealand? Ask USD about Peru."), ["New Zealand", "Peru"]);
        assert_eq!(extract_id("Stats for city C0042 please"), Some("C0042".into()));
        assert_eq!(extract_expression("What is (12 + 3) * 4?", &[]), Some("(12 + 3) * 4".into()));
        assert_eq!(extract_expression("Compute 2^10 - 24.", &[]), Some("2^10 - 24".into()));
        let (q, _) = extract_quoted("Evaluate '7 % 3' now");
        assert_eq!(extract_expression("Evaluate '7 % 3' now", &q), Some("7 % 3".into()));
        assert_eq!(extract_expression("No arithmetic in 2024", &[]), None);
    }

    #[test]
    fn enum_mentions_in_order_and_case() {
        let units = ["mile", "nautical_mile", "kilometer", "kilometer_per_hour"];
        assert_eq!(enum_mentions("Convert 3 nautical miles to kilometers", &units), ["nautical_mile", "kilometer"]);
        assert_eq!(enum_mentions("100 kilometer_per_hour in mile", &units), ["kilometer_per_hour", "mile"]);
        let codes = ["USD", "TRY", "JPY"];
        assert_eq!(enum_mentions("try to convert 5 USD to JPY", &codes), ["USD", "JPY"]);
    }
}
