//! `calculator`: a hand-written recursive-descent evaluator.
//!
//! Grammar (lowest precedence first):
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '%') unary)*
//! unary   := ('-' | '+') unary | power
//! power   := primary (('^' | '**') unary)?        right-associative
//! primary := number | '(' expr ')'
//! ```
//!
//! `%` is the remainder (modulo) with the sign of the dividend, as in most
//! programming languages; it is never "percent", because `50 % 3` would
//! otherwise be ambiguous. Unary minus binds looser than `^`, so `-2^2` is
//! `-4`, as in mathematics. `×`, `÷` and `−` are accepted for people who
//! paste them.

/// Nesting deeper than this is refused rather than risking the stack on
/// hostile input.
const MAX_DEPTH: usize = 200;

pub fn evaluate(expression: &str) -> Result<f64, String> {
    let mut p = Parser { chars: expression.chars().collect(), pos: 0, depth: 0 };
    p.skip_ws();
    if p.pos >= p.chars.len() {
        return Err("empty expression".into());
    }
    let v = p.expr()?;
    p.skip_ws();
    if let Some(c) = p.peek() {
        return Err(format!("unexpected '{c}' at position {}", p.pos + 1));
    }
    if !v.is_finite() {
        return Err("result is not a finite number (overflow)".into());
    }
    Ok(v)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// The next operator, normalised to ASCII, without consuming it.
    fn peek_op(&mut self) -> Option<&'static str> {
        self.skip_ws();
        let c = self.peek()?;
        Some(match c {
            '+' => "+",
            '-' | '−' => "-",
            '*' if self.chars.get(self.pos + 1) == Some(&'*') => "**",
            '*' | '×' => "*",
            '/' | '÷' => "/",
            '%' => "%",
            '^' => "^",
            _ => return None,
        })
    }

    fn take_op(&mut self, op: &str) {
        self.pos += if op == "**" { 2 } else { 1 };
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("expression nested more than {MAX_DEPTH} levels deep"));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<f64, String> {
        let mut v = self.term()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.take_op(op);
            let r = self.term()?;
            v = if op == "+" { v + r } else { v - r };
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        while let Some(op @ ("*" | "/" | "%")) = self.peek_op() {
            self.take_op(op);
            let r = self.unary()?;
            v = match op {
                "*" => v * r,
                "/" if r == 0.0 => return Err("division by zero".into()),
                "/" => v / r,
                _ if r == 0.0 => return Err("modulo by zero".into()),
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<f64, String> {
        self.enter()?;
        let v = match self.peek_op() {
            Some("-") => {
                self.take_op("-");
                -self.unary()?
            }
            Some("+") => {
                self.take_op("+");
                self.unary()?
            }
            _ => self.power()?,
        };
        self.depth -= 1;
        Ok(v)
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.primary()?;
        match self.peek_op() {
            Some(op @ ("^" | "**")) => {
                self.take_op(op);
                let exp = self.unary()?;
                let v = base.powf(exp);
                if v.is_nan() {
                    return Err(format!("{base} ^ {exp} is not a real number"));
                }
                Ok(v)
            }
            _ => Ok(base),
        }
    }

    fn primary(&mut self) -> Result<f64, String> {
        self.skip_ws();
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.enter()?;
                let v = self.expr()?;
                self.depth -= 1;
                self.skip_ws();
                if self.peek() != Some(')') {
                    return Err(format!("missing ')' at position {}", self.pos + 1));
                }
                self.pos += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) => Err(format!("unexpected '{c}' at position {}", self.pos + 1)),
            None => Err("expression ends where a number was expected".into()),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
            self.pos += 1;
        }
        // Scientific notation: 1.5e3, 2E-4.
        if matches!(self.peek(), Some('e' | 'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            } else {
                self.pos = save;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        text.parse::<f64>().map_err(|_| format!("'{text}' is not a number"))
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(evaluate("2 + 3 * 4").unwrap(), 14.0);
        assert_eq!(evaluate("(2 + 3) * 4").unwrap(), 20.0);
        assert_eq!(evaluate("2 ^ 3 ^ 2").unwrap(), 512.0);
        assert_eq!(evaluate("-2 ^ 2").unwrap(), -4.0);
        assert_eq!(evaluate("2 ^ -1").unwrap(), 0.5);
        assert_eq!(evaluate("10 - 4 - 3").unwrap(), 3.0);
        assert_eq!(evaluate("17 % 5").unwrap(), 2.0);
        assert_eq!(evaluate("2 ** 10").unwrap(), 1024.0);
        assert_eq!(evaluate("1.5e3 / 3").unwrap(), 500.0);
        assert_eq!(evaluate("6 × 7 − 2 ÷ 2").unwrap(), 41.0);
    }

    #[test]
    fn errors() {
        assert_eq!(evaluate("1 / 0").unwrap_err(), "division by zero");
        assert_eq!(evaluate("1 % 0").unwrap_err(), "modulo by zero");
        assert!(evaluate("(1 + 2").unwrap_err().contains("missing ')'"));
        assert!(evaluate("1 + ").is_err());
        assert!(evaluate("").is_err());
        assert!(evaluate("2 + x").unwrap_err().contains("'x'"));
        assert!(evaluate("1..2").is_err());
        assert!(evaluate("(-8) ^ 0.5").is_err());
        assert!(evaluate("10 ^ 400").is_err());
        let deep = format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(evaluate(&deep).unwrap_err().contains("nested"));
        let minus = format!("{}1", "-".repeat(10_000));
        assert!(evaluate(&minus).is_err());
    }
}
