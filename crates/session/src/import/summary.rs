//! What an import tells the person who ran it.

/// What an import wrote, line by line, for the command line to print:
/// `lines` on standard output, `warnings` (parts of the data skipped) on
/// standard error.
#[derive(Debug, Default)]
pub struct Summary {
    pub lines: Vec<String>,
    pub warnings: Vec<String>,
}

impl Summary {
    pub(super) fn say(&mut self, line: String) {
        self.lines.push(line);
    }

    pub(super) fn warn(&mut self, line: String) {
        self.warnings.push(line);
    }
}

macro_rules! say {
    ($r:expr, $($t:tt)*) => { $r.say(format!($($t)*)) };
}
pub(super) use say;

macro_rules! skipped {
    ($r:expr, $($t:tt)*) => { $r.warn(format!($($t)*)) };
}
pub(super) use skipped;
