//! Several eval folders as one: the shards of an eval (`--shard I/N`, each
//! run where a scheduler put it), evals of other settings over the same
//! tasks (an outside agent's beside the strategies'), or both. The merged
//! folder is an eval folder like any other, so `report` and `compare` read it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::results::{self, EvalMeta, RESULTS, TaskRow};
use super::shard::Shard;
use super::summary::{self, EvalData, ReportError};

#[derive(thiserror::Error, Debug)]
pub enum MergeError {
    #[error(transparent)]
    Folder(#[from] ReportError),
    #[error("{}: ran {what} {theirs}, but {} ran {ours}; these do not merge", dir.display(), first.display())]
    Differs { dir: PathBuf, first: PathBuf, what: &'static str, theirs: String, ours: String },
    #[error("{} and {} both ran shard {shard} of the same settings; merge one of them", first.display(), second.display())]
    SameShard { first: PathBuf, second: PathBuf, shard: Shard },
    #[error("{} and {} both hold task {} of setting '{setting}'", first.display(), second.display(), index + 1)]
    SameRow { first: PathBuf, second: PathBuf, setting: String, index: usize },
    #[error("{}: holds an eval of its own; merge into an empty folder or an earlier merge's", out.display())]
    NotEmpty { out: PathBuf },
    #[error("{}: the merged folder cannot be one of the folders merged", out.display())]
    IntoInput { out: PathBuf },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// What a merge wrote, and what it could tell but not mend (a shard that
/// is missing).
pub struct Merged {
    pub meta: EvalMeta,
    pub rows: usize,
    pub notes: Vec<String>,
}

/// Merges the eval folders `dirs` into `out` (made if missing): its
/// `eval.json` names them, its `results.jsonl` holds their rows, each
/// setting's in task order. `out` may be an earlier merge's folder, which
/// is written again.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    let evals: Vec<EvalData> = dirs.iter().map(|d| summary::load(d)).collect::<Result<_, _>>()?;
    check_out(dirs, out)?;
    let first = &evals[0];
    for e in &evals[1..] {
        let differs = |what, theirs: String, ours: String| {
            if theirs == ours {
                Ok(())
            } else {
                Err(MergeError::Differs { dir: e.dir.clone(), first: first.dir.clone(), what, theirs, ours })
            }
        };
        differs(
            "the tasks",
            format!("{} ({})", e.meta.tasks, e.meta.task_count),
            format!("{} ({})", first.meta.tasks, first.meta.task_count),
        )?;
        differs("costs in", e.meta.cost_unit.clone(), first.meta.cost_unit.clone())?;
    }
    let notes = check_shards(&evals)?;
    let mut settings: Vec<String> = Vec::new();
    for s in evals.iter().flat_map(|e| &e.meta.settings) {
        if !settings.contains(s) {
            settings.push(s.clone());
        }
    }
    let mut rows: BTreeMap<(usize, usize), (&Path, &TaskRow)> = BTreeMap::new();
    for e in &evals {
        for r in &e.rows {
            let at = settings.iter().position(|s| *s == r.setting).unwrap_or(settings.len());
            if at == settings.len() {
                // A row of a setting its eval.json does not list (an edited
                // file): kept, after the listed ones.
                settings.push(r.setting.clone());
            }
            if let Some((dir, _)) = rows.insert((at, r.index), (&e.dir, r)) {
                return Err(MergeError::SameRow {
                    first: dir.into(),
                    second: e.dir.clone(),
                    setting: r.setting.clone(),
                    index: r.index,
                });
            }
        }
    }
    let commands: Vec<String> = evals.iter().map(|e| common_part(&e.meta.command)).collect();
    let distinct: BTreeSet<&String> = commands.iter().collect();
    let meta = EvalMeta {
        command: if distinct.len() == 1 { commands[0].clone() } else { commands.join(" ; ") },
        shard: Shard::WHOLE,
        settings,
        started: evals.iter().map(|e| e.meta.started.clone()).min().unwrap_or_default(),
        merged: evals.iter().map(|e| e.dir.clone()).collect(),
        ..first.meta.clone()
    };
    std::fs::create_dir_all(out).map_err(|source| MergeError::Io { path: out.into(), source })?;
    let lines: String =
        rows.values().map(|(_, r)| serde_json::to_string(r).expect("a TaskRow serialises") + "\n").collect();
    let path = out.join(RESULTS);
    super::write_atomic(&path, lines.as_bytes()).map_err(|source| MergeError::Io { path, source })?;
    meta.write(out).map_err(|e| MergeError::Folder(e.into()))?;
    Ok(Merged { meta, rows: rows.len(), notes })
}

/// `out` is empty, new, or an earlier merge's folder, and none of `dirs`.
fn check_out(dirs: &[PathBuf], out: &Path) -> Result<(), MergeError> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if dirs.iter().any(|d| same(d, out)) {
        return Err(MergeError::IntoInput { out: out.into() });
    }
    let held = std::fs::read_to_string(out.join(results::META)).ok();
    let earlier_merge =
        held.as_deref().and_then(|t| serde_json::from_str::<EvalMeta>(t).ok()).is_some_and(|m| !m.merged.is_empty());
    if (held.is_some() || out.join(RESULTS).exists()) && !earlier_merge {
        return Err(MergeError::NotEmpty { out: out.into() });
    }
    Ok(())
}

/// Folders of the same settings are shards of one eval: each shard once,
/// all of the same count. A shard that is missing is a note, so a report
/// of the shards so far can be read.
fn check_shards(evals: &[EvalData]) -> Result<Vec<String>, MergeError> {
    let mut groups: BTreeMap<&[String], Vec<&EvalData>> = BTreeMap::new();
    for e in evals {
        groups.entry(e.meta.settings.as_slice()).or_default().push(e);
    }
    let mut notes = Vec::new();
    for (settings, group) in groups {
        let mut seen: BTreeMap<Shard, &Path> = BTreeMap::new();
        for e in &group {
            if let Some(first) = seen.insert(e.meta.shard, &e.dir) {
                return Err(MergeError::SameShard { first: first.into(), second: e.dir.clone(), shard: e.meta.shard });
            }
            let first = group[0];
            if e.meta.shard.count() != first.meta.shard.count() {
                return Err(MergeError::Differs {
                    dir: e.dir.clone(),
                    first: first.dir.clone(),
                    what: "shard",
                    theirs: e.meta.shard.to_string(),
                    ours: first.meta.shard.to_string(),
                });
            }
            if e.meta.seed != first.meta.seed {
                return Err(MergeError::Differs {
                    dir: e.dir.clone(),
                    first: first.dir.clone(),
                    what: "seed",
                    theirs: e.meta.seed.to_string(),
                    ours: first.meta.seed.to_string(),
                });
            }
        }
        let count = group[0].meta.shard.count();
        let missing: Vec<String> =
            (0..count).filter(|i| !seen.keys().any(|s| s.index() == *i)).map(|i| format!("{i}/{count}")).collect();
        if !missing.is_empty() {
            notes.push(format!(
                "{}: shard {} not merged (its tasks are missing)",
                settings.join(", "),
                missing.join(", ")
            ));
        }
    }
    Ok(notes)
}

/// The command without its `--shard I/N` and `--out DIR`, so the shards of
/// one eval show one command.
fn common_part(command: &str) -> String {
    let mut kept = Vec::new();
    let mut skip = false;
    for w in command.split_whitespace() {
        if skip {
            skip = false;
        } else if w == "--shard" || w == "--out" {
            skip = true;
        } else if !w.starts_with("--shard=") && !w.starts_with("--out=") {
            kept.push(w);
        }
    }
    kept.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shards_of_one_command_show_one_command() {
        assert_eq!(common_part("eval --shard 1/4 --out s1 --jobs 2"), "eval --jobs 2");
        assert_eq!(common_part("eval --shard=0/4 --out=s0"), "eval");
    }
}
