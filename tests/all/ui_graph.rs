//! The graph pane: snapshots at 80×24 and 160×48 from the fault fixture,
//! meaning carried by style on the buffer, node states, the find search, and
//! no panics at tiny sizes or on an empty session.

use crate::common;

use std::collections::BTreeSet;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;

use switchyard::engine::event::{GraphSnapshot, ToolBrief};
use switchyard::engine::fold::{ActiveFault, FinishedCall, RunView, ToolSpend};
use switchyard::engine::{Event, EventKind, Params, SessionState, StrategyKind};
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
use switchyard::ui::panes::graph::{self, NodeState, find_tools, node_state};
use switchyard::ui::symbols;
use switchyard::ui::{GraphMode, Navigation, PaneCtx, Theme};

const FIXTURE: &str = "toolnet-fault.jsonl";
/// The first 102 events end with geo_lookup's first failed call (task 7, with
/// the fault injected after task 1 still active).
const JUST_FAILED: usize = 102;

fn view(mode: GraphMode, selected: Option<&str>) -> Navigation {
    Navigation { graph_mode: mode, selected: selected.map(str::to_string), ..Default::default() }
}

fn draw(state: &SessionState, view: &Navigation, w: u16, h: u16) -> Buffer {
    let theme = Theme::default();
    let ctx = PaneCtx { state, nav: view, theme: &theme, focused: true, now_ms: state.t };
    common::render(w, h, |f| graph::render(f, Rect::new(0, 0, w, h), &ctx))
}

/// The row of the buffer and the column where `text` starts, for every
/// occurrence.
fn find_text(buf: &Buffer, text: &str) -> Vec<(u16, u16)> {
    let cols: Vec<char> = text.chars().collect();
    let mut hits = Vec::new();
    for y in 0..buf.area.height {
        let row: Vec<String> = (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect();
        for x in 0..row.len() {
            if cols.iter().enumerate().all(|(k, c)| row.get(x + k).is_some_and(|s| s.chars().eq(std::iter::once(*c)))) {
                hits.push((x as u16, y));
            }
        }
    }
    hits
}

fn snapshot_both(name: &str, state: &SessionState, view: &Navigation) {
    for (w, h) in [(80, 24), (160, 48)] {
        let buf = draw(state, view, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), common::buffer_text(&buf));
    }
}

#[test]
fn neighbourhood_at_the_end_focused_on_geo_lookup() {
    let state = common::fixture_state(FIXTURE, None);
    snapshot_both("neighbourhood_end_geo_lookup", &state, &view(GraphMode::Neighbourhood, Some("geo_lookup")));
}

#[test]
fn neighbourhood_just_after_geo_lookup_failed() {
    let state = common::fixture_state(FIXTURE, Some(JUST_FAILED));
    assert_eq!(state.current.as_ref().unwrap().path, vec!["geo_lookup".to_string()]);
    // Follows the agent: the focus is the last tool on the path.
    snapshot_both("neighbourhood_geo_lookup_failed", &state, &view(GraphMode::Neighbourhood, None));
}

#[test]
fn whole_graph_is_layered_when_small() {
    let state = common::fixture_state(FIXTURE, None);
    let v = view(GraphMode::Whole, Some("geo_lookup"));
    snapshot_both("whole_layered", &state, &v);
    let buf = draw(&state, &v, 160, 48);
    let text = common::buffer_text(&buf);
    for tool in state.tools.iter() {
        assert!(text.contains(&tool.name), "{} missing from the drawing:\n{text}", tool.name);
    }
    assert!(!text.contains("of 17 tools"), "the sample library is drawn, not tabled");
}

#[test]
fn layout_is_the_same_every_time() {
    let state = common::fixture_state(FIXTURE, None);
    let g = state.graph.as_ref().unwrap();
    let first = graph::layered_layout(g);
    assert_eq!(first.nodes.len(), 19, "17 tools, start and end");
    for _ in 0..20 {
        assert_eq!(graph::layered_layout(g), first);
    }
    let layer = |n: &str| first.nodes.iter().find(|p| p.name == n).unwrap().layer;
    assert_eq!(layer("start"), 0);
    assert!(layer("city_search") < layer("city_stats"), "an edge points down the layers");
    assert!(first.nodes.iter().all(|p| p.layer <= layer("end")), "end is at the bottom");
}

/// A session over `n` tools: start → each (descending weights), each → end,
/// scores rising with the index so the ranking is known.
fn large_state(n: usize) -> SessionState {
    let names: Vec<String> = (0..n).map(|i| format!("tool_{i:04}")).collect();
    let mut edges = Vec::new();
    for (i, t) in names.iter().enumerate() {
        edges.push(("start".to_string(), t.clone(), 1.0 / (i as f64 + 2.0)));
        edges.push((t.clone(), "end".to_string(), 1.0));
        edges.push((t.clone(), t.clone(), 0.0));
    }
    // Two edges into tool_0199 besides start's.
    edges.push(("tool_0000".into(), "tool_0199".into(), 0.5));
    edges.push(("tool_0001".into(), "tool_0199".into(), 0.5));
    let scores = names.iter().enumerate().map(|(i, t)| (t.clone(), i as f64 / 10.0)).collect();
    started(&names, GraphSnapshot::new(3, edges, scores))
}

/// A toolnet session over `names` whose first event carries `graph`.
fn started(names: &[String], graph: GraphSnapshot) -> SessionState {
    let ev = Event {
        v: 1,
        run: 0,
        step: 0,
        t: 0,
        kind: EventKind::SessionStarted {
            schema: 1,
            strategy: StrategyKind::Toolnet,
            seed: 1,
            params: Params::default(),
            models: vec![],
            tools: names
                .iter()
                .map(|t| ToolBrief {
                    name: t.clone(),
                    description: format!("{t} does things"),
                    category: None,
                    cost: 1.0,
                    server: None,
                })
                .collect(),
            cost_unit: "call".into(),
            tasks: 1,
            task_list: vec![],
            available_models: vec![],
            pace_ms: 0,
            graph: Some(graph),
            experience: None,
        },
    };
    SessionState::from_events([&ev])
}

/// Without trajectories every tool follows the shared row: focused on one,
/// the neighbourhood counts every other tool and `start` as predecessors
/// (not its own self edge) and every tool and `end` as successors.
#[test]
fn a_shared_row_neighbourhood_counts_each_side_in_full() {
    let names: Vec<String> = (0..60).map(|i| format!("tool_{i:04}")).collect();
    let state = started(&names, GraphSnapshot::of(&switchyard::graph::ToolGraph::fully_connected(&names)));
    let text = common::buffer_text(&draw(&state, &view(GraphMode::Neighbourhood, Some("tool_0059")), 160, 48));
    let line = text.lines().find(|l| l.contains("more")).unwrap_or_else(|| panic!("{text}"));
    let more: Vec<usize> = line
        .split('+')
        .skip(1)
        .map(|part| part.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{line}")))
        .collect();
    // As many rows shown on each side: 60 predecessors, 61 successors.
    assert_eq!(more.len(), 2, "{line}");
    assert_eq!(more[1], more[0] + 1, "{line}");
}

#[test]
fn whole_graph_is_a_ranked_table_when_large() {
    let state = large_state(240);
    let v = view(GraphMode::Whole, Some("tool_0199"));
    snapshot_both("whole_table", &state, &v);
    let text = common::buffer_text(&draw(&state, &v, 160, 48));
    assert!(text.contains("of 240 tools"), "{text}");
    // Highest score first: tool_0239 (23.9) is rank 1.
    let first_row = text.lines().find(|l| l.contains("tool_") && !l.contains("Graph")).unwrap();
    assert!(first_row.contains(" 1 ") && first_row.contains("tool_0239"), "{first_row}");
}

#[test]
fn ranked_table_scrolls_and_counts_in_edges() {
    let state = large_state(240);
    let mut v = view(GraphMode::Whole, Some("start"));
    v.table_offset = 40;
    let text = common::buffer_text(&draw(&state, &v, 160, 48));
    let rows: Vec<&str> = text.lines().filter(|l| l.contains("tool_") && !l.contains("Graph")).collect();
    let cells: Vec<&str> = rows[0].trim_matches('│').split_whitespace().collect();
    assert_eq!(&cells[..2], ["41", "tool_0199"], "{}", rows[0]);
    // start, tool_0000 and tool_0001 point at tool_0199.
    assert!(cells.contains(&"3"), "in-degree 3 expected: {}", rows[0]);
    // Scrolling past the end shows the last rows rather than nothing.
    v.table_offset = 10_000;
    let text = common::buffer_text(&draw(&state, &v, 160, 48));
    assert!(text.contains("tool_0000") && text.contains("of 240 tools"), "{text}");
}

#[test]
fn failing_geo_lookup_carries_fault_colour_and_symbol() {
    let state = common::fixture_state(FIXTURE, Some(JUST_FAILED));
    let theme = Theme::default();
    assert_eq!(node_state(&state, "geo_lookup"), NodeState::Faulted);
    // From start, geo_lookup is a successor row in the right column.
    let v = view(GraphMode::Neighbourhood, Some("start"));
    let buf = draw(&state, &v, 160, 48);
    let (x, y) = *find_text(&buf, "geo_lookup ").iter().find(|(x, _)| *x > 80).expect("geo_lookup row");
    let row: String = (x..buf.area.width).map(|c| buf[(c, y)].symbol().to_string()).collect();
    let sym_x = x + row.find(symbols::FAULT).map(|b| row[..b].chars().count() as u16).expect("fault symbol on the row");
    assert_eq!(buf[(sym_x, y)].fg, theme.fault);
    assert_ne!(theme.fault, theme.ok);
    // The agent stands on start: its successors are the candidates, marked.
    assert_eq!(buf[(x - 1, y)].symbol(), "›");
    // geo_lookup is on this task's path: its name is in the path colour.
    assert_eq!(buf[(x, y)].fg, theme.path);

    // In the layered drawing too.
    let buf = draw(&state, &view(GraphMode::Whole, None), 160, 48);
    // The symbol is wide (two cells), then a space, then the name.
    let (x, y) = *find_text(&buf, "geo_lookup")
        .iter()
        .find(|(x, y)| *x >= 3 && buf[(x - 3, *y)].symbol() == symbols::FAULT)
        .expect("geo_lookup's label with its fault symbol");
    assert_eq!(buf[(x - 3, y)].fg, theme.fault);
}

#[test]
fn the_path_line_shows_each_call_outcome() {
    let state = common::fixture_state(FIXTURE, Some(107));
    let buf = draw(&state, &view(GraphMode::Neighbourhood, None), 160, 48);
    let text = common::buffer_text(&buf);
    let want = format!("start › geo_lookup {} › geo_lookup_mirror {}", symbols::FAILING, symbols::OK);
    assert!(text.contains(&want), "{want} not in\n{text}");
    let theme = Theme::default();
    let (x, y) = find_text(&buf, &want)[0];
    let fail_x = x + "start › geo_lookup ".chars().count() as u16;
    assert_eq!(buf[(fail_x, y)].symbol(), symbols::FAILING);
    assert_eq!(buf[(fail_x, y)].fg, theme.fault, "the failure was injected");
}

#[test]
fn chart_shows_the_twin_overtaking() {
    let state = common::fixture_state(FIXTURE, None);
    let text = common::buffer_text(&draw(&state, &view(GraphMode::Neighbourhood, Some("geo_lookup")), 160, 48));
    assert!(text.contains("w city_search→ ━ geo_lookup"), "the edge it was reached by:\n{text}");
    assert!(text.contains("• geo_lookup_mirror"), "the twin's series is named:\n{text}");
}

fn session_with(tool: &str) -> SessionState {
    let mut state = SessionState::default();
    state.tools =
        vec![ToolBrief { name: tool.into(), description: String::new(), category: None, cost: 1.0, server: None }]
            .into();
    state.current = Some(RunView::default());
    state
}

fn call(tool: &str, ok: bool) -> FinishedCall {
    FinishedCall { call: 1, run: 1, tool: tool.into(), ok, latency_ms: 1, fault: None, source: None }
}

#[test]
fn node_state_precedence() {
    let mut s = session_with("t");
    assert_eq!(node_state(&s, "t"), NodeState::Unused);
    s.recent_calls.push_front(call("t", true));
    assert_eq!(node_state(&s, "t"), NodeState::Ok);
    s.recent_calls.push_front(call("t", false));
    assert_eq!(node_state(&s, "t"), NodeState::Failing, "the newest call decides");
    s.recent_calls.push_front(call("other", true));
    assert_eq!(node_state(&s, "t"), NodeState::Failing, "other tools' calls do not count");
    s.current.as_mut().unwrap().forbidden.insert("t".into());
    assert_eq!(node_state(&s, "t"), NodeState::Forbidden);
    s.current.as_mut().unwrap().blacklisted.insert("t".into());
    assert_eq!(node_state(&s, "t"), NodeState::Blacklisted);
    s.faults.push(ActiveFault {
        tool: "t".into(),
        fault: Fault { mode: FaultMode::Error, scope: FaultScope::UntilCleared },
        left: None,
    });
    assert_eq!(node_state(&s, "t"), NodeState::Faulted);
    assert_eq!(node_state(&s, "other"), NodeState::Ok);
}

#[test]
fn node_state_of_a_tool_whose_calls_left_the_recent_window() {
    let mut s = session_with("t");
    s.tool_spend.insert("t".into(), ToolSpend { calls: 3, errors: 1, cost: 3.0 });
    assert_eq!(node_state(&s, "t"), NodeState::Ok);
}

#[test]
fn node_states_have_distinct_symbols_and_the_shared_ones() {
    let all = [
        NodeState::Ok,
        NodeState::Failing,
        NodeState::Faulted,
        NodeState::Forbidden,
        NodeState::Blacklisted,
        NodeState::Unused,
    ];
    let syms: BTreeSet<&str> = all.iter().map(|s| s.symbol()).collect();
    assert_eq!(syms.len(), all.len());
    assert_eq!(NodeState::Faulted.symbol(), symbols::FAULT);
    assert_eq!(NodeState::Failing.symbol(), symbols::FAILING);
    let theme = Theme::default();
    assert_eq!(NodeState::Failing.color(&theme), theme.failing);
    assert_eq!(NodeState::Blacklisted.color(&theme), theme.blacklisted);
}

#[test]
fn fixture_node_states() {
    let state = common::fixture_state(FIXTURE, None);
    assert_eq!(node_state(&state, "geo_lookup"), NodeState::Faulted);
    assert_eq!(node_state(&state, "geo_lookup_mirror"), NodeState::Ok);
    assert_eq!(node_state(&state, "web_search"), NodeState::Unused);
    // Before the fault: geo_lookup had one good call.
    let early = common::fixture_state(FIXTURE, Some(15));
    assert_eq!(node_state(&early, "geo_lookup"), NodeState::Ok);
}

#[test]
fn find_tools_puts_prefix_matches_first() {
    let state = common::fixture_state(FIXTURE, None);
    assert_eq!(find_tools(&state, "geo", 10), vec!["geo_lookup", "geo_lookup_mirror"]);
    assert_eq!(find_tools(&state, "CITY", 10), vec!["city_search", "city_stats"]);
    // Prefix matches, then the others containing it, each alphabetical.
    assert_eq!(find_tools(&state, "calc", 10), vec!["calculator", "random_calculator"]);
    assert_eq!(find_tools(&state, "r", 3), vec!["random_calculator", "roman_numerals", "calculator"]);
    assert_eq!(find_tools(&state, "lookup", 10), vec!["geo_lookup", "geo_lookup_mirror", "glossary_lookup"]);
    assert!(find_tools(&state, "zzz", 10).is_empty());
    assert!(find_tools(&state, "end", 10).iter().all(|n| n != "end"), "end is not a tool");
    assert_eq!(find_tools(&state, "", 100).len(), 17);
    assert!(find_tools(&SessionState::default(), "geo", 10).is_empty());
}

#[test]
fn no_panic_at_tiny_sizes_or_on_empty_state() {
    let states = [
        SessionState::default(),
        common::fixture_state(FIXTURE, Some(1)),
        common::fixture_state(FIXTURE, Some(JUST_FAILED)),
        common::fixture_state(FIXTURE, None),
        large_state(200),
    ];
    let sizes = [(10, 3), (20, 5), (1, 1), (2, 2), (30, 8), (40, 14), (80, 24), (200, 60)];
    for s in &states {
        for mode in [GraphMode::Neighbourhood, GraphMode::Whole] {
            for sel in [None, Some("geo_lookup"), Some("start"), Some("end"), Some("no_such_tool")] {
                for (w, h) in sizes {
                    let buf = draw(s, &view(mode, sel), w, h);
                    assert_eq!(buf.area, Rect::new(0, 0, w, h));
                }
            }
        }
    }
    let empty = common::buffer_text(&draw(&SessionState::default(), &view(GraphMode::Neighbourhood, None), 80, 24));
    assert!(empty.contains("Graph"), "{empty}");
}

#[test]
fn the_title_names_mode_and_focus() {
    let state = common::fixture_state(FIXTURE, None);
    let text = common::buffer_text(&draw(&state, &view(GraphMode::Whole, Some("calculator")), 80, 24));
    let top = text.lines().next().unwrap();
    assert!(top.contains("Graph") && top.contains("whole") && top.contains("calculator"), "{top}");
    assert_ne!(Theme::default().fault, Color::Reset);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Any drawable graph (cycles, self-loops, edges into start and out of end,
    /// zero weights, loose nodes) lays out without a panic or a hang (the
    /// library's default network-simplex ranking can cycle forever), every
    /// node in a layer, and draws.
    #[test]
    fn any_small_graph_lays_out(
        n in 1usize..61,
        edges in proptest::collection::vec((0usize..62, 0usize..62, 0u8..4), 0..200),
    ) {
        let name = |i: usize| match i % (n + 2) {
            0 => "start".to_string(),
            1 => "end".to_string(),
            k => format!("t{k}"),
        };
        let mut g = switchyard::engine::fold::GraphView::default();
        for i in 0..n + 2 {
            g.out.entry(name(i)).or_default();
        }
        for (f, t, w) in edges {
            g.out.entry(name(f)).or_default().insert(name(t), f64::from(w) / 4.0);
        }
        let l = graph::layered_layout(&g);
        proptest::prop_assert!(l.nodes.iter().all(|p| p.layer < l.layers && (0.0..=1.0).contains(&p.x)));
        let mut state = SessionState::default();
        state.graph = Some(g);
        for (w, h) in [(80, 24), (30, 8)] {
            draw(&state, &view(GraphMode::Whole, Some("t2")), w, h);
        }
    }
}

#[test]
fn a_snapshot_names_each_node_once_and_gives_a_uniform_row_one_weight() {
    let edges = vec![
        ("start".to_string(), "a".to_string(), 0.75),
        ("start".to_string(), "b".to_string(), 0.25),
        ("a".to_string(), "a".to_string(), 0.5),
        ("a".to_string(), "end".to_string(), 0.5),
        ("start".to_string(), "c".to_string(), 0.0),
    ];
    let snapshot = GraphSnapshot::new(4, edges.clone(), vec![]);
    let json = serde_json::to_string(&snapshot).unwrap();
    assert_eq!(
        json,
        r#"{"iteration":4,"nodes":["start","a","b","end","c"],"rows":[[0,[1,2,4],[0.75,0.25,0.0]],[1,[1,3],0.5]],"scores":[]}"#
    );
    let back: GraphSnapshot = serde_json::from_str(&json).unwrap();
    let mut got: Vec<(String, String, f64)> = back.edges().map(|(f, t, w)| (f.into(), t.into(), w)).collect();
    let mut want = edges;
    got.sort_by(|x, y| x.partial_cmp(y).unwrap());
    want.sort_by(|x, y| x.partial_cmp(y).unwrap());
    assert_eq!(got, want);
}

proptest::proptest! {
    /// The engine's snapshot of its graph, built row by row from the graph,
    /// is the snapshot of the graph's edges (rows in the graph's order,
    /// each in `out_edges` order), numbered and named alike.
    #[test]
    fn a_snapshot_of_a_graph_is_the_snapshot_of_its_edges(
        n in 1usize..12,
        runs in proptest::collection::vec((0usize..12, -3i32..4), 0..6),
        added in 0usize..3,
    ) {
        use switchyard::graph::{START, ToolGraph};
        let tools: Vec<String> = (0..n).map(|i| format!("t{:02}", (i * 7) % 12)).collect();
        let trajectories = vec![vec![tools[0].clone(), tools[n - 1].clone()]];
        let mut g = ToolGraph::from_trajectories(&tools, &trajectories).unwrap();
        for (i, d) in runs {
            g.apply_scores(&[(tools[i % n].clone(), d)].into_iter().collect(), 0.5, 0.5);
        }
        for i in 0..added {
            g.add_tool(&format!("new{i}")).unwrap();
        }
        let froms: Vec<String> = std::iter::once(START.to_owned()).chain(g.tools().map(str::to_owned)).collect();
        let edges: Vec<(String, String, f64)> =
            froms.iter().flat_map(|f| g.out_edges(f).into_iter().map(move |(t, w)| (f.clone(), t, w))).collect();
        let scores: Vec<(String, f64)> = froms
            .iter()
            .filter_map(|f| g.score(f).filter(|&s| s != 0.0).map(|s| (f.clone(), s)))
            .collect();
        proptest::prop_assert_eq!(GraphSnapshot::of(&g), GraphSnapshot::new(g.iteration(), edges, scores));
    }
}

#[test]
fn a_shared_row_weight_reaches_every_unlisted_edge_and_its_history() {
    use switchyard::graph::{GraphUpdate, RowChange, WeightChange};
    let mut state = large_state(4);
    let update = |iteration, weights: Vec<(&str, f64)>, rest| GraphUpdate {
        iteration,
        scores: vec![],
        weights: weights
            .into_iter()
            .map(|(to, new)| WeightChange { from: "start".into(), to: to.into(), old: 0.0, new })
            .collect(),
        rows: vec![RowChange { from: "start".into(), rest }],
    };
    let event = |u| Event { v: 2, run: 1, step: 0, t: 1, kind: EventKind::GraphUpdated { update: u } };
    state.apply(&event(update(4, vec![("tool_0001", 0.4)], 0.2)));
    state.apply(&event(update(5, vec![("tool_0002", 0.0)], 1.0 / 3.0)));
    let g = state.graph.as_ref().unwrap();
    let row: Vec<f64> = (0..4).map(|i| g.weight("start", &format!("tool_{i:04}")).unwrap()).collect();
    assert_eq!(row, [1.0 / 3.0, 1.0 / 3.0, 0.0, 1.0 / 3.0]);
    assert_eq!(g.weight_changes("start", "tool_0001"), [(4, 0.4), (5, 1.0 / 3.0)]);
    assert_eq!(g.weight_changes("start", "tool_0002"), [(4, 0.2), (5, 0.0)]);
    assert_eq!(g.weight_changes("start", "tool_0003"), [(4, 0.2), (5, 1.0 / 3.0)]);
    assert!(g.weight_changes("tool_0003", "end").is_empty());
    // tool_0002 lost its only positive edge in.
    assert_eq!(g.in_degree("tool_0002"), 0);
    assert_eq!(g.in_degree("tool_0003"), 1);
}

/// A random session's graph: `n` tools, a snapshot of random edges and
/// scores (few distinct values, so the ranked table has ties to break),
/// then random updates (scores, listed weights, new edges, shared rows).
fn random_graph_state(n: usize, edges: &[(usize, usize, u8)], updates: &[Vec<(usize, usize, u8)>]) -> SessionState {
    use switchyard::graph::{GraphUpdate, RowChange, WeightChange};
    let name = |i: usize| match i % (n + 2) {
        0 => "start".to_string(),
        1 => "end".to_string(),
        k => format!("t{k:03}"),
    };
    let mut snapshot: Vec<(String, String, f64)> = (2..n + 2).map(|i| ("start".into(), name(i), 0.5)).collect();
    snapshot.extend(edges.iter().map(|(f, t, w)| (name(*f), name(*t), f64::from(*w) / 4.0)));
    snapshot.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    snapshot.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let scores: std::collections::BTreeMap<String, f64> =
        edges.iter().map(|(f, _, w)| (name(*f), f64::from(*w % 3))).filter(|(n, _)| n.starts_with('t')).collect();
    let mut state = SessionState::default();
    let started = Event {
        v: 1,
        run: 0,
        step: 0,
        t: 0,
        kind: EventKind::SessionStarted {
            schema: 1,
            strategy: StrategyKind::Toolnet,
            seed: 1,
            params: Params::default(),
            models: vec![],
            tools: Vec::new().into(),
            cost_unit: "call".into(),
            tasks: 1,
            task_list: vec![],
            available_models: vec![],
            pace_ms: 0,
            graph: Some(GraphSnapshot::new(1, snapshot, scores.into_iter().collect())),
            experience: None,
        },
    };
    state.apply(&started);
    for (k, changes) in updates.iter().enumerate() {
        let mut weights: Vec<WeightChange> = changes
            .iter()
            .map(|(f, t, w)| WeightChange {
                from: name(*f).into(),
                to: name(*t).into(),
                old: 0.0,
                new: f64::from(*w) / 8.0,
            })
            .collect();
        weights.sort_by(|a, b| (&a.from, &a.to).cmp(&(&b.from, &b.to)));
        weights.dedup_by(|a, b| a.from == b.from && a.to == b.to);
        let mut rows: Vec<RowChange> = changes
            .iter()
            .filter(|(_, _, w)| w % 2 == 0)
            .map(|(f, _, w)| RowChange { from: name(*f).into(), rest: f64::from(*w) / 16.0 })
            .collect();
        rows.sort_by(|a, b| a.from.cmp(&b.from));
        rows.dedup_by(|a, b| a.from == b.from);
        let scores: BTreeSet<(String, u8)> = changes.iter().map(|(_, t, w)| (name(*t), w % 4)).collect();
        let mut scores: Vec<(std::sync::Arc<str>, f64)> =
            scores.into_iter().map(|(n, s)| (n.into(), f64::from(s))).collect();
        scores.dedup_by(|a, b| a.0 == b.0);
        let update = GraphUpdate { iteration: k as u32 + 2, scores, weights, rows };
        state.apply(&Event { v: 2, run: 1, step: 0, t: 1, kind: EventKind::GraphUpdated { update } });
    }
    state
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// The fold's indexes say what a walk of the whole graph says: each
    /// node's predecessors (in the same order), the tools by score, and the
    /// ranked table's rows, whether the source row is short or `start`'s.
    #[test]
    fn the_graph_index_agrees_with_a_walk_of_the_graph(
        n in 1usize..320,
        edges in proptest::collection::vec((0usize..330, 0usize..330, 0u8..8), 0..300),
        updates in proptest::collection::vec(proptest::collection::vec((0usize..330, 0usize..330, 0u8..8), 0..12), 0..12),
    ) {
        let state = random_graph_state(n, &edges, &updates);
        let g = state.graph.as_ref().unwrap();
        let mut nodes: BTreeSet<&str> = g.out.keys().map(String::as_str).collect();
        nodes.extend(g.out.values().flat_map(|r| r.keys().map(String::as_str)));
        nodes.extend(g.scores.keys().map(String::as_str));
        nodes.insert("nowhere");
        for node in &nodes {
            let walk: Vec<(&str, f64)> =
                g.out.iter().filter_map(|(f, row)| row.get(*node).map(|w| (f.as_str(), *w))).collect();
            proptest::prop_assert_eq!(g.predecessors(node), walk, "into {}", node);
        }
        let mut tools: BTreeSet<&str> = g.out.keys().map(String::as_str).collect();
        tools.extend(g.scores.keys().map(String::as_str));
        tools.extend(g.out.get("start").into_iter().flat_map(|r| r.keys().map(String::as_str)));
        tools.remove("start");
        tools.remove("end");
        let mut by_score: Vec<(&str, f64)> = tools.iter().map(|t| (*t, g.score(t))).collect();
        by_score.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        proptest::prop_assert_eq!(g.by_score().collect::<Vec<_>>(), by_score.clone());
        proptest::prop_assert_eq!(g.tool_count(), tools.len());

        // The table's rows, drawn, against the same order with the source's weights.
        if tools.len() > graph::MAX_DRAWN_NODES {
            let focus = by_score.iter().map(|t| t.0).find(|t| g.out.get(*t).is_some_and(|r| r.keys().any(|k| k != t && k != "end")));
            for (focus, source) in [("start", "start")].into_iter().chain(focus.map(|f| (f, f))) {
                let mut want: Vec<(&str, f64, f64)> = by_score
                    .iter()
                    .map(|(t, s)| (*t, *s, g.weight(source, t).unwrap_or(-1.0)))
                    .collect();
                want.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.total_cmp(&a.2)).then(a.0.cmp(b.0)));
                for offset in [0, 45] {
                    let mut v = view(GraphMode::Whole, Some(focus));
                    v.table_offset = offset;
                    let text = common::buffer_text(&draw(&state, &v, 160, 48));
                    let shown: Vec<String> = text
                        .lines()
                        .filter_map(|l| {
                            let cells: Vec<&str> = l.trim_start_matches('│').split_whitespace().collect();
                            (cells.len() > 2 && cells[0].parse::<usize>().is_ok() && cells[1].starts_with('t'))
                                .then(|| cells[1].to_string())
                        })
                        .collect();
                    let first = offset.min(want.len().saturating_sub(shown.len()));
                    let expected: Vec<String> =
                        want.iter().skip(first).take(shown.len()).map(|t| t.0.to_string()).collect();
                    proptest::prop_assert!(!shown.is_empty());
                    proptest::prop_assert_eq!(shown, expected, "focus {} offset {}", focus, offset);
                }
            }
        }
    }
}
