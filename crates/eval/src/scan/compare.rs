//! Two scans by kind of failure: which kinds grew. The two scans' phrases
//! are grouped together, once, so a kind is the same kind on both sides;
//! each joint group takes the name its most common phrase had in its scan.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::retrieve::embed::{EmbedError, Embedder};

use super::group::{Group, cluster};
use super::run::RunScan;

/// One kind of failure in both scans.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KindDelta {
    pub name: String,
    pub before: usize,
    pub after: usize,
    /// Of each scan's failed runs.
    pub before_share: f64,
    pub after_share: f64,
}

/// One scan: its runs and its groups.
pub struct Side<'a> {
    pub rows: &'a [RunScan],
    pub groups: &'a [Group],
}

/// Every kind of failure of either scan, the one that grew most first.
pub fn by_kind(
    before: Side,
    after: Side,
    embedder: &dyn Embedder,
    threshold: f32,
) -> Result<Vec<KindDelta>, EmbedError> {
    let phrase = |r: &RunScan| r.failure.as_ref().map(|f| f.phrase.clone());
    let mut distinct: Vec<String> = Vec::new();
    for r in before.rows.iter().chain(after.rows) {
        if let Some(p) = phrase(r)
            && !distinct.contains(&p)
        {
            distinct.push(p);
        }
    }
    let refs: Vec<&str> = distinct.iter().map(String::as_str).collect();
    let vectors = if refs.is_empty() { Vec::new() } else { embedder.embed(&refs)? };
    let clusters = cluster(&vectors, threshold);
    let mut of_phrase: BTreeMap<&str, usize> = BTreeMap::new();
    for (k, members) in clusters.iter().enumerate() {
        for &m in members {
            of_phrase.insert(&distinct[m], k);
        }
    }
    let count = |rows: &[RunScan], k: usize| {
        rows.iter().filter(|r| phrase(r).is_some_and(|p| of_phrase.get(p.as_str()) == Some(&k))).count()
    };
    let named = |rows: &[RunScan]| rows.iter().filter(|r| r.failure.is_some()).count().max(1) as f64;
    let (nb, na) = (named(before.rows), named(after.rows));
    let mut out: Vec<KindDelta> = clusters
        .iter()
        .enumerate()
        .map(|(k, members)| {
            // The cluster's most common phrase over both scans names it,
            // by the group it belonged to in its own scan.
            let mut counts: Vec<(usize, &str)> = members
                .iter()
                .map(|&m| {
                    let p = distinct[m].as_str();
                    let n = before.rows.iter().chain(after.rows).filter(|r| phrase(r).as_deref() == Some(p)).count();
                    (n, p)
                })
                .collect();
            counts.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
            let top = counts.first().map_or("", |c| c.1);
            let name = before
                .groups
                .iter()
                .chain(after.groups)
                .find(|g| g.phrases.iter().any(|(p, _)| p == top))
                .map_or_else(|| top.to_string(), |g| g.name.clone());
            let (b, a) = (count(before.rows, k), count(after.rows, k));
            KindDelta { name, before: b, after: a, before_share: b as f64 / nb, after_share: a as f64 / na }
        })
        .collect();
    out.sort_by(|x, y| {
        (y.after as i64 - y.before as i64).cmp(&(x.after as i64 - x.before as i64)).then_with(|| x.name.cmp(&y.name))
    });
    Ok(out)
}

/// The kinds as a table, a line each.
pub fn table(kinds: &[KindDelta]) -> String {
    let mut s = format!("{:>6} {:>6} {:>6}  kind of failure\n", "before", "after", "change");
    for k in kinds {
        s += &format!("{:>6} {:>6} {:>+6}  {}\n", k.before, k.after, k.after as i64 - k.before as i64, k.name);
    }
    s
}
