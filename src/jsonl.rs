//! Reading a JSON Lines recording (a model cassette, a tool cassette) that
//! a killed recorder may have left with its last line cut short.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::de::DeserializeOwned;

/// Why a recording could not be read.
#[derive(Debug)]
pub enum JsonlError {
    Io(std::io::Error),
    /// A line (1-based) that is not a record.
    Parse {
        line: usize,
        message: String,
    },
}

/// Every record of the file. Blank lines are skipped; a final line without
/// its newline that is not complete JSON is what a kill mid-write leaves,
/// and is dropped with a warning naming `what`; any other line that does
/// not parse is an error naming it.
pub fn read_records<T: DeserializeOwned>(path: &Path, what: &str) -> Result<Vec<T>, JsonlError> {
    let mut reader = BufReader::new(File::open(path).map_err(JsonlError::Io)?);
    let mut records = Vec::new();
    let mut buf = String::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        if reader.read_line(&mut buf).map_err(JsonlError::Io)? == 0 {
            return Ok(records);
        }
        line_no += 1;
        let complete = buf.ends_with('\n');
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str(text) {
            Ok(record) => records.push(record),
            Err(e) if !complete && e.is_eof() => {
                tracing::warn!(path = %path.display(), line = line_no, "dropping a {what} line cut short");
                return Ok(records);
            }
            Err(e) => return Err(JsonlError::Parse { line: line_no, message: e.to_string() }),
        }
    }
}
