//! `[[mcp]]` entries: what the config accepts and how a bad one is named,
//! and what a server's state changes do to the session state and the
//! workbench (no server needed: `tests/mcp_servers.rs` runs real ones).

use std::path::Path;

use crate::common;

use ratatui::Frame;
use ratatui::layout::Rect;
use switchyard::config::Config;
use switchyard::engine::event::ToolBrief;
use switchyard::engine::fold::Entry;
use switchyard::engine::{Event, EventKind, SessionState};
use switchyard::tool::mcp::{ServerState, Transport};
use switchyard::ui::panes::{status, workers};
use switchyard::ui::{Navigation, PaneCtx, Theme};

fn parse(toml: &str) -> Result<Config, String> {
    Config::parse(toml, Path::new("/cfg/switchyard.toml")).map_err(|e| e.to_string())
}

#[test]
fn an_mcp_entry_takes_a_command_or_a_url() {
    let c = parse(
        "[[mcp]]\nname = \"time\"\ncommand = \"bin/time-server\"\nargs = [\"--utc\"]\nenv = [\"TOKEN\"]\n\
         tools = [\"now\"]\noverrides = { now = { cost = 2 } }\n\
         [[mcp]]\nname = \"remote\"\nurl = \"https://x.example/mcp\"\n\
         headers = { Authorization = { env = \"KEY\", prefix = \"Bearer \" } }\n",
    )
    .unwrap();
    assert_eq!(c.mcp.len(), 2);
    // A program given by path is found from the config's folder.
    assert_eq!(c.mcp[0].transport(), Transport::Stdio { command: "/cfg/bin/time-server" });
    assert_eq!(c.mcp[0].overrides["now"].cost, Some(2.0));
    assert_eq!(c.mcp[1].transport(), Transport::Http { url: "https://x.example/mcp" });
    assert_eq!(c.mcp[0].max_restarts, 3);
}

#[test]
fn a_bad_mcp_entry_is_named_by_its_field() {
    for (toml, field) in [
        ("[[mcp]]\nname = \"a\"\n", "mcp[0].command"),
        ("[[mcp]]\nname = \"a\"\ncommand = \"x\"\nurl = \"http://h/mcp\"\n", "mcp[0].url"),
        ("[[mcp]]\nname = \"a\"\nurl = \"ftp://h\"\n", "mcp[0].url"),
        ("[[mcp]]\nname = \"has space\"\ncommand = \"x\"\n", "mcp[0].name"),
        ("[[mcp]]\nname = \"a\"\ncommand = \"x\"\ntimeout_ms = 0\n", "mcp[0].timeout_ms"),
        ("[[mcp]]\nname = \"a\"\ncommand = \"x\"\ncost = -1\n", "mcp[0].cost"),
        ("[[mcp]]\nname = \"a\"\nurl = \"http://h/mcp\"\nargs = [\"x\"]\n", "mcp[0].args"),
        ("[[mcp]]\nname = \"a\"\ncommand = \"x\"\n[[mcp]]\nname = \"a\"\ncommand = \"y\"\n", "mcp[1].name"),
        ("[[mcp]]\nname = \"a\"\ncommand = \"x\"\n[mcp.oauth]\n", "mcp[0].oauth"),
        (
            "[[mcp]]\nname = \"a\"\nurl = \"http://h/mcp\"\n[mcp.oauth]\nclient_secret_env = \"S\"\n",
            "mcp[0].oauth.client_secret_env",
        ),
        (
            "[[mcp]]\nname = \"a\"\nurl = \"http://h/mcp\"\n[mcp.oauth]\nclient_metadata_url = \"http://x/c.json\"\n",
            "mcp[0].oauth.client_metadata_url",
        ),
    ] {
        let err = parse(toml).unwrap_err();
        assert!(err.contains("switchyard.toml") && err.contains(field), "{toml}: {err}");
    }
    // An unknown key is a parse error naming it.
    let err = parse("[[mcp]]\nname = \"a\"\ncommand = \"x\"\nargv = []\n").unwrap_err();
    assert!(err.contains("argv"), "{err}");
}

fn text(pane: fn(&mut Frame, Rect, &PaneCtx), state: &SessionState, w: u16, h: u16) -> String {
    let theme = Theme::default();
    let view = Navigation::default();
    let ctx = PaneCtx { state, nav: &view, theme: &theme, focused: true, now_ms: state.t };
    common::buffer_text(&common::render(w, h, |frame| pane(frame, frame.area(), &ctx)))
}

fn ev(run: u32, kind: EventKind) -> Event {
    Event { v: 1, run, step: 0, t: 0, kind }
}

fn server(name: &str, state: ServerState, detail: Option<&str>) -> EventKind {
    EventKind::ServerState { server: name.into(), state, detail: detail.map(str::to_string) }
}

#[test]
fn server_states_fold_into_the_state_and_show_in_the_workbench() {
    let mut events = common::fixture("toolnet-fault.jsonl");
    // The fixture's library, with one tool of a server.
    if let EventKind::SessionStarted { tools, .. } = &mut events[0].kind {
        let time = ToolBrief {
            name: "get_time".into(),
            description: "The time".into(),
            category: None,
            cost: 1.0,
            server: Some("time".into()),
        };
        *tools = tools.iter().cloned().chain([time]).collect();
    }
    let run = events.iter().find(|e| matches!(e.kind, EventKind::RunStarted { .. })).unwrap().run;
    let cut = events.iter().position(|e| matches!(e.kind, EventKind::RunStarted { .. })).unwrap() + 1;
    let mut shown: Vec<Event> = events[..cut].to_vec();
    shown.push(ev(run, server("time", ServerState::Running, None)));
    let state = SessionState::from_events(&shown);
    assert_eq!(state.tool_servers.get("get_time").map(String::as_str), Some("time"));
    assert_eq!(state.servers["time"].0, ServerState::Running);
    // The first report of a running server is not news for the transcript.
    assert!(!state.current.as_ref().unwrap().transcript.iter().any(|e| matches!(e, Entry::Note(_))));
    let bar = text(status::render, &state, 160, 2);
    assert!(bar.contains("mcp time ✓"), "{bar}");

    shown.push(ev(run, server("time", ServerState::Restarting, Some("attempt 1/3: the server exited with status 1"))));
    shown.push(ev(
        run,
        EventKind::ToolCall { call: 99, tool: "get_time".into(), args: serde_json::json!({}), lane: None },
    ));
    let state = SessionState::from_events(&shown);
    assert_eq!(state.servers["time"].0, ServerState::Restarting);
    let note = state.current.as_ref().unwrap().transcript.iter().rev().find_map(|e| match e {
        Entry::Note(n) => Some(n.clone()),
        _ => None,
    });
    assert_eq!(note.as_deref(), Some("mcp server 'time' restarting: attempt 1/3: the server exited with status 1"));
    let bar = text(status::render, &state, 160, 2);
    assert!(bar.contains("time ↻ restarting"), "{bar}");
    let pane = text(workers::render, &state, 80, 12);
    assert!(pane.contains("get_time @time"), "{pane}");

    shown.push(ev(run, server("time", ServerState::Down, Some("could not start 'x'"))));
    let state = SessionState::from_events(&shown);
    let bar = text(status::render, &state, 160, 2);
    assert!(bar.contains("time ✗ down"), "{bar}");
}
