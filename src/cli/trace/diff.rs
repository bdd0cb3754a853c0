//! `trace diff A B`: where each run of two traces first parts, and how the
//! summaries moved; exits as `diff` does (0 alike, 1 different, 2 unreadable).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use color_eyre::eyre::Result;

use switchyard::config::Config;
use switchyard::engine::Event;
use switchyard::traces::diff::diff as compare;
use switchyard::traces::diff::render::render;
use switchyard::ui::Theme;

#[derive(Args, Debug)]
pub(crate) struct DiffArgs {
    /// The first trace (A), e.g. a run before a fork or under one setting.
    a: PathBuf,
    /// The second trace (B).
    b: PathBuf,
    /// The report as JSON.
    #[arg(long, conflicts_with = "view")]
    json: bool,
    /// Both traces side by side in the terminal, a shared cursor jumping from divergence to divergence.
    #[arg(long)]
    view: bool,
    /// With --view: dark, light, high-contrast, or a theme file (default: the config's).
    #[arg(long, requires = "view")]
    theme: Option<String>,
}

/// Exit codes, as `diff`'s.
const SAME: u8 = 0;
const DIFFERENT: u8 = 1;
const TROUBLE: u8 = 2;

pub(crate) fn diff(config: &Config, a: DiffArgs) -> Result<ExitCode> {
    let (ea, eb) = match (read(&a.a), read(&a.b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(TROUBLE));
        }
    };
    let d = compare(&ea, &eb);
    let code = ExitCode::from(if d.differs() { DIFFERENT } else { SAME });
    if a.view {
        let theme = Theme::resolve(a.theme.as_deref().unwrap_or(&config.theme))?;
        switchyard::ui::term::check_terminal()?;
        let view = switchyard::ui::diff_screen::DiffScreen::new(name(&a.a), ea, name(&a.b), eb);
        super::super::setup::runtime()?.block_on(switchyard::ui::diff_screen::run(view, theme))?;
    } else if a.json {
        let out = serde_json::json!({
            "a": a.a, "b": a.b, "events": [ea.len(), eb.len()], "differs": d.differs(), "diff": d,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", render(&a.a, ea.len(), &a.b, eb.len(), &d));
    }
    Ok(code)
}

fn name(p: &Path) -> String {
    p.display().to_string()
}

/// A trace, or why it is not one (an empty file is not a trace); a torn
/// last line is said on stderr.
fn read(path: &Path) -> Result<Vec<Event>, String> {
    let read = switchyard::engine::trace::read_trace_file(path).map_err(|e| e.to_string())?;
    if let Some(torn) = read.torn {
        eprintln!("warning: {}: {torn}", path.display());
    }
    Ok(read.events)
}
