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

#[cfg(test)]
mod tests {
    use super::tool_key;

    #[test]
    fn the_three_namings_meet() {
        let k = "get_person_person_id_movie_credits";
        assert_eq!(tool_key("GET /person/{person_id}/movie_credits"), k);
        assert_eq!(tool_key("GET_person_person_id_movie_credits"), k);
        assert_eq!(tool_key("GET_person-person_id-movie_credits"), k);
    }
}
