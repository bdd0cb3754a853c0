//! RestBench's task files (RestGPT) and ATC's version of them: a JSON list
//! of `{"query", "solution"}`, where ATC's `tmdb.data.candidate=20.v2.json`
//! also gives `qid`, a 20-tool candidate list (`api_list`) and solutions
//! named like `GET_search_person`, while RestBench's `datasets/tmdb.json`
//! names them by method and path (`GET /search/person`). Tool names are
//! mapped onto a library's by [`tool_key`], which both forms and an OpenAPI
//! operation's name reduce to.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::DataError;
use crate::text::spelling::edit_distance;

/// One task: its query, the gold tool sequence, and the candidates it may
/// be offered (empty: the whole library).
#[derive(Clone, Debug, PartialEq)]
pub struct RestTask {
    pub id: String,
    pub query: String,
    pub solution: Vec<String>,
    pub candidates: Vec<String>,
}

#[derive(Deserialize)]
struct Raw {
    query: String,
    solution: Vec<String>,
    #[serde(default)]
    api_list: Vec<String>,
    #[serde(default)]
    qid: Option<String>,
}

pub fn load(path: &Path) -> Result<Vec<RestTask>, DataError> {
    let text = std::fs::read_to_string(path).map_err(|source| DataError::Io { path: path.into(), source })?;
    let raw: Vec<Raw> = serde_json::from_str(&text)
        .map_err(|e| DataError::Format { path: path.into(), reason: format!("not a RestBench task list: {e}") })?;
    if raw.is_empty() {
        return Err(DataError::Format { path: path.into(), reason: "holds no task".into() });
    }
    let stem =
        path.file_stem().and_then(|s| s.to_str()).unwrap_or("task").split('.').next().unwrap_or("task").to_string();
    raw.into_iter()
        .enumerate()
        .map(|(i, r)| {
            if r.query.trim().is_empty() || r.solution.is_empty() {
                return Err(DataError::Format {
                    path: PathBuf::from(path),
                    reason: format!("task {}: an empty query or solution", i + 1),
                });
            }
            Ok(RestTask {
                id: r.qid.unwrap_or_else(|| format!("{stem}-{}", i + 1)),
                query: r.query,
                solution: r.solution,
                candidates: r.api_list,
            })
        })
        .collect()
}

/// What a tool name reduces to for matching: `GET /person/{person_id}`,
/// `GET_person_person_id` and `GET_person-person_id` all give
/// `get_person_person_id`.
pub fn tool_key(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// How a gold tool name was found among a library's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// The same operation by [`tool_key`].
    Exact(String),
    /// The same method and path with a path parameter named otherwise
    /// (`/person/{movie_id}` for `/person/{person_id}`), the only such.
    ParamRenamed(String),
    /// The only operation within two letters of it (`/track/{id}` for
    /// `/tracks/{id}`): a typo in the data.
    NearestSpelling(String),
}

impl Resolved {
    pub fn name(&self) -> &str {
        match self {
            Resolved::Exact(n) | Resolved::ParamRenamed(n) | Resolved::NearestSpelling(n) => n,
        }
    }
}

/// The library's tool a RestBench gold name stands for: by [`tool_key`],
/// else by method and path with path parameters as wildcards, else the one
/// key within edit distance 2. Known quirks of RestBench's own files (a
/// renamed parameter, a missing plural) are found this way; anything else
/// is None, and ambiguity is never guessed.
pub fn resolve<'a>(gold: &str, library: impl IntoIterator<Item = &'a str> + Clone) -> Option<Resolved> {
    let key = tool_key(gold);
    if let Some(n) = library.clone().into_iter().find(|l| tool_key(l) == key) {
        return Some(Resolved::Exact(n.to_string()));
    }
    let unique = |found: Vec<&str>| (found.len() == 1).then(|| found[0].to_string());
    if gold.contains('{') {
        let pattern: Vec<Option<String>> = gold
            .split(|c: char| c == '/' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .map(|p| if p.starts_with('{') { None } else { Some(tool_key(p)) })
            .collect();
        let found: Vec<&str> = library.clone().into_iter().filter(|l| key_fits(&tool_key(l), &pattern)).collect();
        if let Some(n) = unique(found) {
            return Some(Resolved::ParamRenamed(n));
        }
    }
    let found: Vec<&str> = library.into_iter().filter(|l| edit_distance(&tool_key(l), &key) <= 2).collect();
    unique(found).map(Resolved::NearestSpelling)
}

/// Whether a library key reads as the pattern's parts in order, each
/// wildcard standing for one or more `_`-separated words.
fn key_fits(key: &str, pattern: &[Option<String>]) -> bool {
    fn fits(words: &[&str], pattern: &[Option<String>]) -> bool {
        match pattern.split_first() {
            None => words.is_empty(),
            Some((Some(lit), rest)) => {
                let lit_words: Vec<&str> = lit.split('_').collect();
                words.len() >= lit_words.len()
                    && words[..lit_words.len()] == lit_words[..]
                    && fits(&words[lit_words.len()..], rest)
            }
            Some((None, rest)) => (1..=words.len()).any(|k| fits(&words[k..], rest)),
        }
    }
    let words: Vec<&str> = key.split('_').collect();
    fits(&words, pattern)
}

#[cfg(test)]
mod tests {
    use super::{Resolved, resolve, tool_key};

    #[test]
    fn restbench_quirks_resolve_and_ambiguity_does_not() {
        let lib =
            ["GET_person_person_id_movie_credits", "GET_person_person_id_tv_credits", "GET_tracks_id", "GET_albums_id"];
        assert_eq!(
            resolve(" GET /person/{person_id}/movie_credits ", lib),
            Some(Resolved::Exact("GET_person_person_id_movie_credits".into()))
        );
        assert_eq!(
            resolve("GET /person/{movie_id}/movie_credits", lib),
            Some(Resolved::ParamRenamed("GET_person_person_id_movie_credits".into()))
        );
        assert_eq!(resolve("GET /track/{id}", lib), Some(Resolved::NearestSpelling("GET_tracks_id".into())));
        assert_eq!(resolve("GET /person/{x}", lib), None, "two credits tools fit a bare person path? neither does");
        assert_eq!(resolve("GET /nothing/like/it", lib), None);
    }

    #[test]
    fn the_three_namings_meet() {
        let k = "get_person_person_id_movie_credits";
        assert_eq!(tool_key("GET /person/{person_id}/movie_credits"), k);
        assert_eq!(tool_key("GET_person_person_id_movie_credits"), k);
        assert_eq!(tool_key("GET_person-person_id-movie_credits"), k);
    }
}
