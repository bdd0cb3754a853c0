//! Why a manifest, or a set of them, was refused. It lives apart from the
//! loader because the library refuses a duplicate name with the same error
//! while the loader builds a library: neither can own it without the two
//! importing each other.

use std::fmt;
use std::path::PathBuf;

/// Which tool of a file an error is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolRef {
    Named(String),
    /// Position among the file's `[[tool]]` tables, from 0, for a tool with no name.
    Index(usize),
}

impl fmt::Display for ToolRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolRef::Named(n) => write!(f, "tool '{n}'"),
            ToolRef::Index(i) => write!(f, "tool[{i}]"),
        }
    }
}

#[derive(thiserror::Error, Debug)]
pub enum ManifestError {
    #[error("duplicate tool '{name}': defined in {} and again in {}", first.display(), second.display())]
    Duplicate { name: String, first: PathBuf, second: PathBuf },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: line {line}, column {column}: invalid TOML: {message}", path.display())]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    /// A problem outside any `[[tool]]` table.
    #[error("{}: field '{field}': {message}", path.display())]
    File { path: PathBuf, field: String, message: String },
    #[error("{}: {tool}: field '{field}': {message}", path.display())]
    Invalid { path: PathBuf, tool: ToolRef, field: String, message: String },
    #[error("{}: line {line}, column {column}: invalid JSON: {message}", path.display())]
    Json { path: PathBuf, line: usize, column: usize, message: String },
    /// A `$ref` of an OpenAPI document that points nowhere; `at` is the JSON
    /// pointer of the `$ref` member itself.
    #[error("{}: {at}: broken $ref '{target}': {message}", path.display())]
    BrokenRef { path: PathBuf, at: String, target: String, message: String },
}
