//! The graph's durable state: `GraphStore` (snapshot + journal) and the
//! `ToolGraph::save`/`load` that share its files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use switchyard::graph::{END, GraphError, GraphStore, START, ToolGraph};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn deltas(list: &[(&str, i32)]) -> BTreeMap<String, i32> {
    list.iter().map(|&(n, d)| (n.to_owned(), d)).collect()
}

fn abcd() -> ToolGraph {
    ToolGraph::from_trajectories(
        &names(&["a", "b", "c", "d"]),
        &[names(&["a", "b"]), names(&["a", "c", "d"]), names(&["d", "b"])],
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn journal_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".journal");
    PathBuf::from(name)
}

fn open(path: &Path) -> (Option<ToolGraph>, GraphStore) {
    GraphStore::open(path).unwrap_or_else(|e| panic!("{e}"))
}

fn save(store: &mut GraphStore, g: &ToolGraph) -> bool {
    store.save(g).unwrap_or_else(|e| panic!("{e}"))
}

fn load(path: &Path) -> ToolGraph {
    ToolGraph::load(path).unwrap_or_else(|e| panic!("{e}"))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// JSON keeps an f64 to within an ulp, not always bit for bit.
fn close(x: f64, y: f64) -> bool {
    (x - y).abs() < 1e-12
}

fn series_close(a: &[(u32, f64)], b: &[(u32, f64)]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0 && close(x.1, y.1))
}

/// Where `a` and `b` differ (scores, weights, priors, their series,
/// iteration, tools), or `None`.
fn difference(a: &ToolGraph, b: &ToolGraph) -> Option<String> {
    if a.iteration() != b.iteration() {
        return Some(format!("iteration {} vs {}", a.iteration(), b.iteration()));
    }
    let tools: Vec<&str> = a.tools().collect();
    if tools != b.tools().collect::<Vec<_>>() {
        return Some(format!("tools {tools:?} vs {:?}", b.tools().collect::<Vec<_>>()));
    }
    for from in tools.iter().copied().chain([START, END]) {
        let (sa, sb) = (a.score(from).unwrap_or(f64::NAN), b.score(from).unwrap_or(f64::NAN));
        if !close(sa, sb) || !series_close(&a.score_series(from), &b.score_series(from)) {
            return Some(format!("score of {from}: {:?} vs {:?}", a.score_series(from), b.score_series(from)));
        }
        let (ea, eb) = (a.out_edges(from), b.out_edges(from));
        if ea.len() != eb.len() {
            return Some(format!("out-edges of {from}: {ea:?} vs {eb:?}"));
        }
        for (to, w) in &ea {
            let other = b.weight(from, to).unwrap_or(f64::NAN);
            let priors = (a.prior(from, to).unwrap_or(f64::NAN), b.prior(from, to).unwrap_or(f64::NAN));
            let (wa, wb) = (a.weight_series(from, to), b.weight_series(from, to));
            if !close(*w, other) || !close(priors.0, priors.1) || !series_close(&wa, &wb) {
                return Some(format!("{from} -> {to}: {w} {priors:?} {wa:?} vs {other} {wb:?}"));
            }
        }
    }
    None
}

fn assert_same(a: &ToolGraph, b: &ToolGraph) {
    if let Some(d) = difference(a, b) {
        panic!("graphs differ: {d}");
    }
}

/// Five edits of every kind, each followed by `after(graph)`.
fn edit(g: &mut ToolGraph, mut after: impl FnMut(&ToolGraph)) {
    g.apply_scores(&deltas(&[("a", 2), ("b", -3), ("nope", 1)]), 0.5, 0.5);
    after(g);
    g.add_tool("e").unwrap_or_else(|e| panic!("{e}"));
    after(g);
    g.apply_scores(&deltas(&[("e", 1), ("c", 7)]), 0.5, 0.5);
    after(g);
    g.set_score("d", -1.5, 0.5, 0.5).unwrap_or_else(|e| panic!("{e}"));
    after(g);
    g.recompute_all(0.75, 0.25);
    after(g);
}

#[test]
fn saved_after_each_edit_loads_back_the_same_graph() {
    let dir = tempdir();
    // The store makes the data directory on its first save.
    let path = dir.path().join("data").join("graph.json");
    let (none, mut store) = open(&path);
    assert!(none.is_none());
    let mut g = abcd();
    assert!(save(&mut store, &g));
    edit(&mut g, |g| assert!(save(&mut store, g)));

    // One journal line per edit after the header.
    let lines = String::from_utf8(read(&journal_of(&path))).unwrap_or_default().lines().count();
    assert_eq!(lines, 1 + 5);
    let (back, mut reopened) = open(&path);
    let back = back.unwrap_or_else(|| panic!("nothing loaded"));
    assert_same(&g, &back);
    assert_same(&g, &load(&path));
    // What was loaded is what is on disk: nothing to write.
    assert!(!save(&mut reopened, &back));

    // The loaded graph goes on learning like the original.
    let mut back = back;
    for h in [&mut g, &mut back] {
        h.apply_scores(&deltas(&[("e", -2)]), 0.5, 0.5);
    }
    assert_same(&g, &back);
    assert!(save(&mut reopened, &back));
    assert_same(&g, &load(&path));
}

#[test]
fn an_unchanged_graph_is_not_written() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let (_, mut store) = open(&path);
    let mut g = abcd();
    g.apply_scores(&deltas(&[("a", 1)]), 0.5, 0.5);
    assert!(save(&mut store, &g));
    g.apply_scores(&deltas(&[("b", 1)]), 0.5, 0.5);
    assert!(save(&mut store, &g));

    let files = [path.clone(), journal_of(&path)];
    let stamp = || {
        files
            .iter()
            .map(|f| std::fs::metadata(f).map(|m| (m.len(), m.modified().ok())).unwrap_or_else(|e| panic!("{e}")))
            .collect::<Vec<_>>()
    };
    let before = stamp();
    assert!(!save(&mut store, &g));
    // Edits that change nothing: the score a tool already has, with the
    // α and β its rows were computed with; the parameters of a full
    // recompute that was just done.
    assert!(g.set_score("b", 1.0, 0.5, 0.5).is_ok());
    assert!(!save(&mut store, &g));
    g.recompute_all(0.5, 0.5);
    assert!(save(&mut store, &g));
    let after_recompute = stamp();
    g.recompute_all(0.5, 0.5);
    assert!(!save(&mut store, &g));
    assert!(!save(&mut store, &g.clone()));
    assert_eq!(stamp(), after_recompute);
    assert_ne!(before, after_recompute);
}

/// A kill while appending leaves a journal cut anywhere: every cut loads as
/// one of the saved states (the last one whose line is whole).
#[test]
fn a_journal_cut_anywhere_loads_the_last_complete_state() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let journal = journal_of(&path);
    let (_, mut store) = open(&path);
    let mut g = abcd();
    save(&mut store, &g);
    let mut states = vec![g.clone()];
    let mut ends = vec![read(&journal).len()];
    edit(&mut g, |g| {
        save(&mut store, g);
        states.push(g.clone());
        ends.push(read(&journal).len());
    });
    drop(store);
    let full = read(&journal);

    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap_or_else(|e| panic!("{e}"));
    let copy_path = copy.join("graph.json");
    std::fs::copy(&path, &copy_path).unwrap_or_else(|e| panic!("{e}"));
    for cut in 0..=full.len() {
        write(&journal_of(&copy_path), &full[..cut]);
        let whole = ends.iter().filter(|&&end| end <= cut).count();
        let expected = &states[whole.saturating_sub(1)];
        let loaded = ToolGraph::load(&copy_path).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        if let Some(d) = difference(expected, &loaded) {
            panic!("cut at {cut} of {}: {d}", full.len());
        }
    }

    // A store opened on a cut journal drops the unfinished line, so what it
    // appends next follows a whole one.
    let cut = ends[3] + (ends[4] - ends[3]) / 2;
    write(&journal_of(&copy_path), &full[..cut]);
    let (loaded, mut store) = open(&copy_path);
    let mut loaded = loaded.unwrap_or_else(|| panic!("nothing loaded"));
    assert_same(&states[3], &loaded);
    loaded.apply_scores(&deltas(&[("a", -1)]), 0.5, 0.5);
    assert!(save(&mut store, &loaded));
    assert_same(&loaded, &load(&copy_path));
}

#[test]
fn damaged_files_are_refused_with_their_name() {
    let dir = tempdir();
    let path = dir.path().join("learnt-graph.json");
    let (_, mut store) = open(&path);
    let mut g = abcd();
    save(&mut store, &g);
    edit(&mut g, |g| {
        save(&mut store, g);
    });
    drop(store);

    // A whole line that is not an entry: damage, not a crash.
    let journal = journal_of(&path);
    let text = String::from_utf8(read(&journal)).unwrap_or_default();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = "{\"prev\": 1, \"head\": 2}";
    write(&journal, format!("{}\n", lines.join("\n")).as_bytes());
    let err = GraphStore::open(&path).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("learnt-graph.json.journal:3:"), "{err}");
    let err = ToolGraph::load(&path).err();
    assert!(matches!(err, Some(GraphError::Journal { line: 3, .. })), "{err:?}");

    // Lines out of order (two writers) are refused too.
    lines.swap(2, 3);
    write(&journal, format!("{}\n", lines[..4].join("\n")).as_bytes());
    let err = ToolGraph::load(&path).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("learnt-graph.json.journal:3:") && err.contains("follow"), "{err}");

    // A snapshot cut short (which its atomic write rules out) never loads.
    let snapshot = read(&path);
    for cut in [0, 1, snapshot.len() / 3, snapshot.len() - 1] {
        write(&path, &snapshot[..cut]);
        let err = GraphStore::open(&path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("learnt-graph.json"), "cut at {cut}: {err}");
        assert!(ToolGraph::load(&path).is_err(), "cut at {cut}");
    }
}

#[test]
fn a_journal_of_another_snapshot_is_ignored() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let (_, mut store) = open(&path);
    let mut g = abcd();
    save(&mut store, &g);
    g.apply_scores(&deltas(&[("a", 3)]), 0.5, 0.5);
    save(&mut store, &g);
    let journal = read(&journal_of(&path));

    // `ToolGraph::save` replaces the snapshot and drops the journal...
    let other = ToolGraph::fully_connected(&names(&["x", "y"]));
    other.save(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!journal_of(&path).exists());
    assert_same(&other, &load(&path));
    // ...and a journal of the older snapshot put back is not applied to it.
    write(&journal_of(&path), &journal);
    assert_same(&other, &load(&path));

    // The store notices the snapshot was replaced under it, and rewrites it.
    g.apply_scores(&deltas(&[("b", 1)]), 0.5, 0.5);
    assert!(save(&mut store, &g));
    assert_same(&g, &load(&path));
}

#[test]
fn another_graph_or_a_long_journal_rewrites_the_snapshot() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let (_, store) = open(&path);
    let mut store = store.compact_after(2);
    let mut g = abcd();
    save(&mut store, &g);
    let journal_lines = || String::from_utf8(read(&journal_of(&path))).unwrap_or_default().lines().count();
    let mut most = 0;
    edit(&mut g, |g| {
        assert!(save(&mut store, g));
        most = most.max(journal_lines());
    });
    assert_eq!(most, 1 + 2);
    assert_same(&g, &load(&path));

    let other = ToolGraph::fully_connected(&names(&["x", "y"]));
    assert!(save(&mut store, &other));
    assert_eq!(journal_lines(), 1);
    assert_same(&other, &load(&path));
    // Back to the first graph: the store cannot tell what of it is on disk.
    assert!(save(&mut store, &g));
    assert_same(&g, &load(&path));
}

/// By default the journal is cut when replaying it would cost more than
/// reading the snapshot: an entry costs about 40 bytes of snapshot per tool.
#[test]
fn the_journal_never_outgrows_the_snapshot() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let (_, mut store) = open(&path);
    let mut g = abcd();
    let mut compactions = 0;
    let mut last = 0;
    for i in 0..200 {
        g.apply_scores(&deltas(&[(["a", "b", "c", "d"][i % 4], [1, -1, 2][i % 3])]), 0.5, 0.5);
        assert!(save(&mut store, &g));
        let entries = String::from_utf8(read(&journal_of(&path))).unwrap_or_default().lines().count() - 1;
        let snapshot = read(&path).len();
        assert!(entries * g.tool_count() * 40 <= snapshot, "{entries} entries beside {snapshot} bytes");
        compactions += usize::from(entries < last);
        last = entries;
    }
    assert!(compactions >= 2, "{compactions}");
    assert_same(&g, &load(&path));
}

#[test]
fn graphs_built_alike_are_one_state_and_built_apart_are_two() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let (_, mut store) = open(&path);
    assert!(save(&mut store, &abcd()));
    assert!(!save(&mut store, &abcd()));
    let other = ToolGraph::from_trajectories(&names(&["a", "b", "c", "d"]), &[names(&["a", "b"])])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(save(&mut store, &other));
    assert_same(&other, &load(&path));
}

#[test]
fn a_graph_file_from_before_the_journal_still_loads() {
    let dir = tempdir();
    let path = dir.path().join("graph.json");
    let mut g = abcd();
    g.apply_scores(&deltas(&[("a", 2)]), 0.5, 0.5);
    g.save(&path).unwrap_or_else(|e| panic!("{e}"));
    // The files written before the journal existed had no `head`.
    let mut value: serde_json::Value = serde_json::from_slice(&read(&path)).unwrap_or_else(|e| panic!("{e}"));
    assert!(value.as_object_mut().and_then(|o| o.remove("head")).is_some());
    write(&path, value.to_string().as_bytes());

    let (loaded, mut store) = open(&path);
    let mut loaded = loaded.unwrap_or_else(|| panic!("nothing loaded"));
    assert_same(&g, &loaded);
    assert!(!save(&mut store, &loaded));
    loaded.apply_scores(&deltas(&[("b", 1)]), 0.5, 0.5);
    assert!(save(&mut store, &loaded));
    assert_same(&loaded, &load(&path));
}
