//! Text folding shared by answer matching and the sample lookups, so that
//! "São Paulo", "sao paulo" and "Sao-Paulo" compare equal everywhere; and
//! an error with its causes on one line, for messages that name them all.

pub mod secret;
pub mod spelling;

/// `e: its source: its source's source …`: transport errors hide the
/// useful part (connection refused, DNS) in their causes. Redacted: a
/// transport error may quote a URL or a body with a key in it.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        cur = s.source();
    }
    secret::redact(&msg).into_owned()
}

/// Lower case, common Latin accents folded, punctuation turned into single
/// spaces, trimmed.
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        let c = match c {
            'á' | 'à' | 'â' | 'ä' | 'ã' | 'å' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' | 'õ' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ñ' => 'n',
            'ç' => 'c',
            c if c.is_alphanumeric() => c,
            _ => ' ',
        };
        if c != ' ' || !(out.is_empty() || out.ends_with(' ')) {
            out.push(c);
        }
    }
    out.trim_end().to_string()
}

/// The text on one line: every run of whitespace (newlines too) one space.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters of `s`, an ellipsis in place of the rest.
pub fn ellipsis(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn folds_case_accents_and_punctuation() {
        assert_eq!(super::fold("  São-Paulo!! "), "sao paulo");
        assert_eq!(super::fold("Ça, c'est Zürich."), "ca c est zurich");
    }
}
