//! The budget pane with a BTP plan: plan against actual per tool and the
//! budget bar, rendered from the btp fixture trace (B = 20, geo_lookup
//! blacklisted in run 1), with the styles that carry meaning checked on the
//! buffer.

use crate::common;

use ratatui::buffer::Buffer;

use switchyard::engine::event::BudgetRow;
use switchyard::engine::{EventKind, SessionState};
use switchyard::ui::panes::budget;
use switchyard::ui::{Navigation, PaneCtx, Theme};

const FIXTURE: &str = "btp.jsonl";

fn draw(state: &SessionState, w: u16, h: u16) -> Buffer {
    let theme = Theme::default();
    let view = Navigation::default();
    let ctx = PaneCtx { state, nav: &view, theme: &theme, focused: true, now_ms: state.t };
    common::render(w, h, |frame| budget::render(frame, frame.area(), &ctx))
}

/// The state right after the first Blacklisted event (mid run 1).
fn after_blacklisting() -> SessionState {
    let events = common::fixture(FIXTURE);
    let i = events
        .iter()
        .position(|e| matches!(e.kind, EventKind::Blacklisted { .. }))
        .expect("the fixture blacklists a tool");
    let state = common::fixture_state(FIXTURE, Some(i + 1));
    let run = state.current.as_ref().unwrap();
    assert_eq!(run.run, 1, "the blacklisting happens in run 1");
    assert!(state.finished.is_empty());
    state
}

fn end_state() -> SessionState {
    common::fixture_state(FIXTURE, None)
}

fn rows(buf: &Buffer) -> Vec<String> {
    common::buffer_text(buf).lines().map(str::to_string).collect()
}

/// The table row of `tool`: the name followed by a space, so `geo_lookup`
/// does not match `geo_lookup_mirror`.
fn row_of(buf: &Buffer, tool: &str) -> String {
    let needle = format!("{tool} ");
    rows(buf)
        .into_iter()
        .find(|r| r.contains(&format!("│{needle}")))
        .unwrap_or_else(|| panic!("no row for {tool}:\n{}", common::buffer_text(buf)))
}

#[test]
fn snapshots_mid_run_and_at_the_end() {
    for (name, state) in [("blacklisted", after_blacklisting()), ("end", end_state())] {
        assert!(state.current.as_ref().unwrap().plan.is_some());
        for (w, h) in [(80, 24), (160, 48)] {
            let buf = draw(&state, w, h);
            insta::assert_snapshot!(format!("budget_plan_{name}_{w}x{h}"), common::buffer_text(&buf));
        }
    }
}

#[test]
fn the_blacklisted_tool_is_marked_in_its_colour() {
    let state = after_blacklisting();
    let theme = Theme::default();
    let run = state.current.as_ref().unwrap();
    let tool = run.blacklisted.iter().next().expect("a tool is blacklisted").clone();
    let buf = draw(&state, 80, 24);
    let row = row_of(&buf, &tool);
    assert!(row.contains("■ blacklisted"), "{row}");
    let (used, spent) = run.plan.as_ref().unwrap().used[&tool];
    assert!(row.contains(&format!(" {used} ")) && row.contains(&format!("{spent:.2}")), "{row}");
    assert_eq!(common::fg_at(&buf, "■ blacklisted"), theme.blacklisted);
    assert_eq!(common::fg_at(&buf, &format!("{tool} ")), theme.blacklisted);
    // The others are still allowed: planned and not used.
    for r in run.plan.as_ref().unwrap().rows.iter().filter(|r| r.tool != tool) {
        assert!(row_of(&buf, &r.tool).contains("✓ allowed"), "{}", row_of(&buf, &r.tool));
    }
    assert_eq!(common::fg_at(&buf, "✓ allowed"), theme.ok);
}

#[test]
fn removed_tools_come_last_marked_forbidden() {
    let state = end_state();
    let theme = Theme::default();
    let plan = state.current.as_ref().unwrap().plan.as_ref().unwrap();
    let removed: Vec<&BudgetRow> = plan.rows.iter().filter(|r| r.calls == 0).collect();
    assert!(!removed.is_empty(), "the last plan removes tools");
    let buf = draw(&state, 80, 24);
    let lines = rows(&buf);
    let at = |tool: &str| lines.iter().position(|l| l.contains(&format!("│{tool} "))).unwrap();
    let last_planned = plan.rows.iter().filter(|r| r.calls > 0).map(|r| at(&r.tool)).max().unwrap();
    for r in &removed {
        let row = row_of(&buf, &r.tool);
        assert!(row.contains("⊘ removed"), "{row}");
        assert!(at(&r.tool) > last_planned, "removed rows come after planned ones");
    }
    assert_eq!(common::fg_at(&buf, "⊘ removed"), theme.forbidden);
    // Tools used up to their allowance are exhausted.
    for (tool, (used, _)) in &plan.used {
        let planned = plan.rows.iter().find(|r| &r.tool == tool).unwrap().calls;
        if *used >= planned {
            assert!(row_of(&buf, tool).contains("⊘ exhausted"), "{}", row_of(&buf, tool));
        }
    }
}

#[test]
fn the_bar_shows_c_s_planned_spent_and_left_against_b() {
    let state = end_state();
    let theme = Theme::default();
    let plan = state.current.as_ref().unwrap().plan.as_ref().unwrap();
    let spent: f64 = plan.used.values().map(|u| u.1).sum();
    let buf = draw(&state, 80, 24);
    let text = common::buffer_text(&buf);
    let label = format!("{spent:.2} spent · {:.2} left of B {:.2} credits", plan.remaining - spent, plan.budget);
    assert!(text.contains(&label), "{text}");
    let key = format!("planned {:.2} ({} calls)", plan.planned_cost, plan.planned_calls);
    assert!(text.contains(&key), "{text}");
    assert!(text.contains(&format!("spent {spent:.2}")), "{text}");
    assert!(!text.contains("over plan"), "{text}");
    // Spent and planned-but-unspent take their share of the bar.
    let bar = &rows(&buf)[1];
    let count = |g: char| bar.chars().filter(|c| *c == g).count();
    let cells = count('▓') + count('█') + count('▒') + count('░');
    let at = |x: f64| (x / plan.budget * cells as f64).round() as usize;
    assert_eq!(count('▓'), at(plan.fixed_cost), "{bar}");
    assert_eq!(count('█'), at(plan.fixed_cost + spent) - at(plan.fixed_cost), "{bar}");
    assert_eq!(count('▒'), at(plan.fixed_cost + plan.planned_cost) - at(plan.fixed_cost + spent), "{bar}");
    assert!(count('░') > 0, "{bar}");
    assert_eq!(common::fg_at(&buf, "█"), theme.accent);
}

#[test]
fn spending_over_the_plan_is_drawn_failing() {
    let mut state = end_state();
    let theme = Theme::default();
    let plan = state.current.as_mut().unwrap().plan.as_mut().unwrap();
    let tool = plan.rows.iter().find(|r| r.calls > 0).unwrap().tool.clone();
    let extra = plan.planned_cost + 1.0;
    plan.used.entry(tool.clone()).or_default().1 += extra;
    let spent: f64 = plan.used.values().map(|u| u.1).sum();
    let over = spent - plan.planned_cost;
    let buf = draw(&state, 80, 24);
    let text = common::buffer_text(&buf);
    assert!(text.contains(&format!("over plan {over:.2}")), "{text}");
    assert_eq!(common::fg_at(&buf, &format!("{spent:.2} spent")), theme.failing);
    // The bar's last filled segment and the tool's spent cell.
    let bar = &rows(&buf)[1];
    let last_full = bar.char_indices().filter(|(_, c)| *c == '█').map(|(i, _)| bar[..i].chars().count()).max();
    let (x, y) = (last_full.unwrap() as u16, 1);
    assert_eq!(buf[(x, y)].fg, theme.failing, "{bar}");
    let row = row_of(&buf, &tool);
    let cell = format!("{:.2}", state.current.as_ref().unwrap().plan.as_ref().unwrap().used[&tool].1);
    assert!(row.contains(&cell), "{row}");
    assert_eq!(common::fg_at(&buf, &cell), theme.failing);
}

#[test]
fn narrow_panes_drop_v_and_f_before_planned_cost() {
    let state = end_state();
    let wide = rows(&draw(&state, 80, 24));
    let header = wide.iter().find(|r| r.contains("plan cost")).unwrap();
    assert!(header.contains(" v ") && header.contains("F̃") && header.contains("state"), "{header}");
    let narrow = rows(&draw(&state, 64, 24));
    let header = narrow.iter().find(|r| r.contains("state")).unwrap();
    assert!(header.contains("plan cost"), "{header}");
    assert!(!header.contains(" v ") && !header.contains("F̃"), "{header}");
}

#[test]
fn estimates_have_two_decimals_and_defaults_are_marked() {
    let mut state = end_state();
    let plan = state.current.as_mut().unwrap().plan.as_mut().unwrap();
    plan.rows[0].value = 0.125;
    plan.rows[0].freq = 2.0;
    plan.rows[0].defaulted = true;
    let tool = plan.rows[0].tool.clone();
    let buf = draw(&state, 80, 24);
    let row = row_of(&buf, &tool);
    assert!(row.contains("0.12*") || row.contains("0.13*"), "{row}");
    assert!(row.contains("2.00*"), "{row}");
    assert!(common::buffer_text(&buf).contains("* default v and F̃"), "{}", common::buffer_text(&buf));
    let others = row_of(&buf, &state.current.as_ref().unwrap().plan.as_ref().unwrap().rows[1].tool);
    assert!(others.contains("1.00 ") && !others.contains('*'), "{others}");
}

#[test]
fn a_long_plan_counts_the_rows_it_cannot_show() {
    let mut state = end_state();
    let plan = state.current.as_mut().unwrap().plan.as_mut().unwrap();
    for i in 0..16_000u32 {
        plan.rows.push(BudgetRow {
            tool: format!("a_tool_with_a_rather_long_name_{i:05}"),
            cost: 1.0,
            value: 0.5,
            freq: 1.0,
            defaulted: false,
            calls: i % 3,
        });
    }
    let buf = draw(&state, 160, 48);
    let text = common::buffer_text(&buf);
    assert!(text.contains("more tools"), "{text}");
    // Two planned calls is the most among the added rows, and more than the
    // fixture's plan has, so they lead.
    let header = rows(&buf).iter().position(|r| r.contains("plan cost")).unwrap();
    assert!(rows(&buf)[header + 1].contains(" 2 "), "{}", rows(&buf)[header + 1]);
    let narrow = common::buffer_text(&draw(&state, 80, 24));
    assert!(narrow.contains("a_tool_with_a_rather_long_na…") || narrow.contains("…"), "{narrow}");
}

#[test]
fn without_a_plan_the_pane_keeps_spend_per_tool() {
    let mut state = end_state();
    state.current.as_mut().unwrap().plan = None;
    let text = common::buffer_text(&draw(&state, 80, 24));
    assert!(text.contains("this task") && text.contains("errors") && !text.contains("plan cost"), "{text}");
}

#[test]
fn tiny_sizes_do_not_panic() {
    for state in [after_blacklisting(), end_state()] {
        for w in 0..=40 {
            for h in 0..=10 {
                draw(&state, w, h);
            }
        }
    }
}
