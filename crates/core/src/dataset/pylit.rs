//! Python literals read as JSON values, for data published as Python source
//! text (API-Bank's `api_info` column, ToolBench's repr'd tool calls). It
//! reads literals only and evaluates nothing: a name other than `None`,
//! `True` and `False`, a call or an operator is an error naming its place.
//!
//! ```text
//! None True False 12 -3.5 1e3 'a' "b" '''c''' r'\d' 'x' 'y' [1, 2] (1,) {'k': v} {1, 2}
//! ```
//!
//! Tuples and sets become arrays; dict keys that are not strings become
//! their text; adjacent strings are joined, as Python does.

use serde_json::{Map, Number, Value};

/// Where and why a text is not a Python literal; `line` and `column` count
/// from 1 within the text given.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct PyLitError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The one literal `text` holds (comments and surrounding blank space allowed).
pub fn parse(text: &str) -> Result<Value, PyLitError> {
    let mut p = Parser { s: text.as_bytes(), text, i: 0 };
    p.skip_space(true);
    let v = p.value()?;
    p.skip_space(true);
    if p.i < p.s.len() {
        return Err(p.error("unexpected text after the literal"));
    }
    Ok(v)
}

/// The `name = literal` statements of `text`, in order (a module of constants,
/// as API-Bank's `api_info` is).
pub fn parse_assignments(text: &str) -> Result<Vec<(String, Value)>, PyLitError> {
    let mut p = Parser { s: text.as_bytes(), text, i: 0 };
    let mut out = Vec::new();
    loop {
        p.skip_space(true);
        if p.i >= p.s.len() {
            return Ok(out);
        }
        let name = p.identifier().ok_or_else(|| p.error("expected `name = value`"))?;
        p.skip_space(false);
        if p.peek() != Some(b'=') {
            return Err(p.error(&format!("expected '=' after '{name}'")));
        }
        p.i += 1;
        p.skip_space(false);
        let v = p.value()?;
        p.skip_space(false);
        match p.peek() {
            None | Some(b'\n' | b'\r' | b';') => {}
            Some(_) => return Err(p.error("expected the end of the line after the value")),
        }
        out.push((name, v));
    }
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn error(&self, message: &str) -> PyLitError {
        let at = self.i.min(self.s.len());
        let before = &self.s[..at];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
        let column = self.text.get(line_start..at).map_or(at - line_start, |t| t.chars().count()) + 1;
        PyLitError { line, column, message: message.to_string() }
    }

    /// Skips blanks and `#` comments; across line ends only when `newlines`
    /// (inside brackets, or between statements).
    fn skip_space(&mut self, newlines: bool) {
        while let Some(c) = self.peek() {
            match c {
                b' ' | b'\t' => self.i += 1,
                b'\n' | b'\r' if newlines => self.i += 1,
                b'\\' if matches!(self.s.get(self.i + 1), Some(b'\n')) => self.i += 2,
                b'#' => {
                    while self.peek().is_some_and(|c| c != b'\n') {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }

    fn identifier(&mut self) -> Option<String> {
        let start = self.i;
        if !self.peek().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') {
            return None;
        }
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            self.i += 1;
        }
        Some(self.text[start..self.i].to_string())
    }

    fn value(&mut self) -> Result<Value, PyLitError> {
        match self.peek() {
            None => Err(self.error("expected a value, found the end of the text")),
            Some(b'[') => self.sequence(b']').map(Value::Array),
            Some(b'(') => self.tuple(),
            Some(b'{') => self.braces(),
            Some(b'\'' | b'"') => self.strings(),
            Some(c) if c.is_ascii_digit() || c == b'-' || c == b'+' || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.i;
                let word = self.identifier().unwrap_or_default();
                // A string prefix: r'..', b'..', u'..', f'..' (read as plain text).
                if word.len() <= 2
                    && word.chars().all(|c| matches!(c.to_ascii_lowercase(), 'r' | 'b' | 'u'))
                    && matches!(self.peek(), Some(b'\'' | b'"'))
                {
                    self.i = start;
                    return self.strings();
                }
                match word.as_str() {
                    "None" => Ok(Value::Null),
                    "True" => Ok(Value::Bool(true)),
                    "False" => Ok(Value::Bool(false)),
                    _ => {
                        self.i = start;
                        Err(self.error(&format!("'{word}' is a name, not a literal (only None, True, False)")))
                    }
                }
            }
            Some(_) => Err(self.error("expected a value")),
        }
    }

    /// Items up to `close`, comma-separated, a trailing comma allowed.
    fn sequence(&mut self, close: u8) -> Result<Vec<Value>, PyLitError> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space(true);
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            self.skip_space(true);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {}
                _ => return Err(self.error(&format!("expected ',' or '{}'", close as char))),
            }
        }
    }

    /// `(x)` is x; `()`, `(x,)` and `(x, y)` are tuples.
    fn tuple(&mut self) -> Result<Value, PyLitError> {
        let open = self.i;
        let items = self.sequence(b')')?;
        let had_comma = self.s[open..self.i].contains(&b',');
        match (items.len(), had_comma) {
            (1, false) => Ok(items.into_iter().next().unwrap_or(Value::Null)),
            _ => Ok(Value::Array(items)),
        }
    }

    /// A dict, or a set (`{a, b}`, read as an array).
    fn braces(&mut self) -> Result<Value, PyLitError> {
        self.i += 1;
        let mut map = Map::new();
        let mut set: Option<Vec<Value>> = None;
        loop {
            self.skip_space(true);
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Ok(set.map_or(Value::Object(map), Value::Array));
            }
            let key = self.value()?;
            self.skip_space(true);
            match (self.peek(), &mut set) {
                (Some(b':'), None) => {
                    self.i += 1;
                    self.skip_space(true);
                    let v = self.value()?;
                    let k = match key {
                        Value::String(s) => s,
                        other => other.to_string(),
                    };
                    map.insert(k, v);
                }
                (Some(b':'), Some(_)) => return Err(self.error("a set cannot hold 'key: value' pairs")),
                (_, Some(items)) => items.push(key),
                (_, None) if map.is_empty() => set = Some(vec![key]),
                (_, None) => return Err(self.error("expected ':' after a dict key")),
            }
            self.skip_space(true);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    /// One string or several adjacent ones, joined.
    fn strings(&mut self) -> Result<Value, PyLitError> {
        let mut out = self.string()?;
        loop {
            let save = self.i;
            self.skip_space(false);
            let prefixed = self.peek().is_some_and(|c| matches!(c.to_ascii_lowercase(), b'r' | b'b' | b'u'))
                && matches!(self.s.get(self.i + 1), Some(b'\'' | b'"'));
            if matches!(self.peek(), Some(b'\'' | b'"')) || prefixed {
                out.push_str(&self.string()?);
            } else {
                self.i = save;
                return Ok(Value::String(out));
            }
        }
    }

    fn string(&mut self) -> Result<String, PyLitError> {
        let mut raw = false;
        while let Some(c) = self.peek().filter(|c| c.is_ascii_alphabetic()) {
            raw |= c.eq_ignore_ascii_case(&b'r');
            self.i += 1;
        }
        let start = self.i;
        let q = self.peek().ok_or_else(|| self.error("expected a string"))?;
        let triple = self.s.get(self.i..self.i + 3) == Some(&[q, q, q]);
        self.i += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                self.i = start;
                return Err(self.error("a string that is never closed"));
            };
            if c == q && (!triple || self.s.get(self.i..self.i + 3) == Some(&[q, q, q])) {
                self.i += if triple { 3 } else { 1 };
                return Ok(out);
            }
            if c == b'\n' && !triple {
                self.i = start;
                return Err(self.error("a line end inside a one-line string"));
            }
            if c == b'\\' && !raw {
                self.i += 1;
                self.escape(&mut out)?;
                continue;
            }
            if c == b'\\' && raw && matches!(self.s.get(self.i + 1), Some(&n) if n == q || n == b'\\') {
                // A raw string keeps the backslash but it still guards the quote.
                out.push('\\');
                out.push(self.s[self.i + 1] as char);
                self.i += 2;
                continue;
            }
            let ch = self.text[self.i..].chars().next().unwrap_or('\u{fffd}');
            out.push(ch);
            self.i += ch.len_utf8();
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), PyLitError> {
        let Some(c) = self.peek() else {
            return Err(self.error("a backslash at the end of the text"));
        };
        self.i += 1;
        let simple = match c {
            b'\n' => Some(None),
            b'n' => Some(Some('\n')),
            b't' => Some(Some('\t')),
            b'r' => Some(Some('\r')),
            b'0' => Some(Some('\0')),
            b'a' => Some(Some('\x07')),
            b'b' => Some(Some('\x08')),
            b'f' => Some(Some('\x0c')),
            b'v' => Some(Some('\x0b')),
            b'\\' | b'\'' | b'"' => Some(Some(c as char)),
            _ => None,
        };
        if let Some(ch) = simple {
            out.extend(ch);
            return Ok(());
        }
        let digits = match c {
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                self.i -= 1;
                let ch = self.text[self.i..].chars().next().unwrap_or('\u{fffd}');
                out.push(ch);
                self.i += ch.len_utf8();
                return Ok(());
            }
        };
        let hex = self.text.get(self.i..self.i + digits).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        let ch = hex.and_then(|h| u32::from_str_radix(h, 16).ok()).and_then(char::from_u32);
        match ch {
            Some(ch) => {
                out.push(ch);
                self.i += digits;
                Ok(())
            }
            None => Err(self.error(&format!("a bad \\{} escape", c as char))),
        }
    }

    fn number(&mut self) -> Result<Value, PyLitError> {
        let start = self.i;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.i += 1;
            self.skip_space(false);
        }
        let digits_start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_')) {
            let c = self.s[self.i];
            self.i += 1;
            if matches!(c, b'e' | b'E') && matches!(self.peek(), Some(b'-' | b'+')) {
                self.i += 1;
            }
        }
        let negative = self.s[start] == b'-';
        let body: String = self.text[digits_start..self.i].chars().filter(|c| *c != '_').collect();
        let lower = body.to_ascii_lowercase();
        let int = if let Some(h) = lower.strip_prefix("0x") {
            i64::from_str_radix(h, 16).ok()
        } else if let Some(o) = lower.strip_prefix("0o") {
            i64::from_str_radix(o, 8).ok()
        } else if let Some(b) = lower.strip_prefix("0b") {
            i64::from_str_radix(b, 2).ok()
        } else {
            lower.parse::<i64>().ok()
        };
        if let Some(n) = int {
            return Ok(Value::Number(Number::from(if negative { -n } else { n })));
        }
        // Beyond i64, or with a fraction or exponent: a float, as JSON readers keep it.
        match lower.parse::<f64>() {
            Ok(f) if f.is_finite() && lower.bytes().any(|b| b.is_ascii_digit()) => {
                Ok(Number::from_f64(if negative { -f } else { f }).map_or(Value::Null, Value::Number))
            }
            _ => {
                let token = self.text[start..self.i].to_string();
                self.i = start;
                Err(self.error(&format!("'{token}' is not a number")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_nested_literals_quotes_and_the_three_constants() {
        let v = parse(
            "{'a': {'type': 'str', 'description': \"It's the user's.\"}, 'n': [1, -2.5, 1e3, (3,), ()],\n \
             'flags': (True, False, None), 'set': {None}, 2: 'two', 'cat': 'a' \"b\",}",
        )
        .unwrap();
        assert_eq!(
            v,
            json!({"a": {"type": "str", "description": "It's the user's."}, "n": [1, -2.5, 1000.0, [3], []],
                   "flags": [true, false, null], "set": [null], "2": "two", "cat": "ab"})
        );
        assert_eq!(parse("(5)").unwrap(), json!(5));
        assert_eq!(parse("  'x' # a comment\n").unwrap(), json!("x"));
    }

    #[test]
    fn reads_escapes_triple_quotes_and_raw_strings() {
        assert_eq!(parse(r"'a\'b\n\tc\\d\x41\u00e9'").unwrap(), json!("a'b\n\tc\\dAé"));
        assert_eq!(parse("'''one\n'two'\nthree'''").unwrap(), json!("one\n'two'\nthree"));
        assert_eq!(parse(r"r'\d+\.'").unwrap(), json!(r"\d+\."));
        assert_eq!(parse(r"'\d'").unwrap(), json!(r"\d"), "an unknown escape is kept");
        assert_eq!(parse("'héllo, 世界'").unwrap(), json!("héllo, 世界"));
    }

    #[test]
    fn reads_assignments_as_api_bank_writes_them() {
        let text = "description = \"Get a token.\"\ninput_parameters = {\n    'username': {'type': 'str', \
                    'description': 'The user.'},\n}\noutput_parameters = None\n";
        let a = parse_assignments(text).unwrap();
        assert_eq!(a.len(), 3);
        assert_eq!(a[0], ("description".to_string(), json!("Get a token.")));
        assert_eq!(a[1].1["username"]["type"], "str");
        assert_eq!(a[2].1, Value::Null);
    }

    #[test]
    fn refuses_what_is_not_a_literal_naming_the_place() {
        let e = parse("{'a': 1,\n 'b': len(x)}").unwrap_err();
        assert_eq!((e.line, e.column), (2, 7), "{e}");
        assert!(e.message.contains("'len' is a name"), "{e}");
        let e = parse("['a', 'b'").unwrap_err();
        assert!(e.message.contains("expected ',' or ']'"), "{e}");
        let e = parse("'never closed").unwrap_err();
        assert!(e.message.contains("never closed"), "{e}");
        let e = parse("1 2").unwrap_err();
        assert!(e.message.contains("after the literal"), "{e}");
        assert!(parse("").is_err());
        assert!(parse("{'a' 1}").is_err());
        assert!(parse("{1, 'a': 2}").is_err());
        assert!(parse("12abc").is_err());
        let e = parse_assignments("x = 1\ny 2\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(parse_assignments(".").is_err());
    }
}
