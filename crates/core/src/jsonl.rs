//! Reading a JSON Lines recording (a model cassette, a tool cassette) that
//! a killed recorder may have left with its last line cut short.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
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
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(JsonlError::Io)? == 0 {
            return Ok(records);
        }
        line_no += 1;
        let complete = buf.ends_with(b"\n");
        // Bytes, not a String: a line that is not UTF-8 is named by its
        // number, and one cut inside a character by a kill is a torn line.
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t.trim(),
            Err(_) if !complete => {
                tracing::warn!(path = %path.display(), line = line_no, "dropping a {what} line cut short");
                return Ok(records);
            }
            Err(e) => return Err(JsonlError::Parse { line: line_no, message: format!("not UTF-8: {e}") }),
        };
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

/// Opens a recording to append records to (created if missing). A last
/// line that a kill cut short is cut off first, and a whole last record
/// without its newline (written by hand) is ended: else the next record
/// would be glued onto it, and the line in the middle of the file would no
/// longer read.
pub fn open_append(path: &Path) -> std::io::Result<File> {
    let mut file = OpenOptions::new().create(true).read(true).append(true).open(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(file);
    }
    // Only the last line matters: read back from the end to its start.
    let mut start = len;
    let mut tail = Vec::new();
    let mut chunk = vec![0u8; 8192];
    loop {
        let from = start.saturating_sub(chunk.len() as u64);
        let n = (start - from) as usize;
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut chunk[..n])?;
        let found = chunk[..n].iter().rposition(|&b| b == b'\n');
        let keep = found.map_or(0, |i| i + 1);
        tail.splice(0..0, chunk[keep..n].iter().copied());
        start = from + keep as u64;
        if found.is_some() || from == 0 {
            break;
        }
    }
    if tail.is_empty() {
        return Ok(file);
    }
    match serde_json::from_slice::<serde_json::Value>(&tail) {
        Ok(_) => file.write_all(b"\n")?,
        Err(_) => {
            tracing::warn!(path = %path.display(), bytes = tail.len(), "cutting off a line a kill left unfinished");
            file.set_len(start)?;
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Vec<serde_json::Value>, JsonlError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c.jsonl");
        std::fs::write(&p, bytes).unwrap();
        read_records(&p, "test")
    }

    #[test]
    fn a_line_that_is_not_utf8_is_named_by_its_number() {
        match read(b"{\"a\":1}\n{\"b\":\"\xff\"}\n{\"c\":3}\n") {
            Err(JsonlError::Parse { line, message }) => assert_eq!((line, message.starts_with("not UTF-8")), (2, true)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_last_line_cut_inside_a_character_is_dropped() {
        let rows = read("{\"a\":1}\n{\"b\":\"S\u{e3}".as_bytes().split_last().unwrap().1).unwrap();
        assert_eq!(rows.len(), 1);
    }
}
