//! `trace import`: another agent's own session file as a Switchyard trace.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use color_eyre::eyre::{Result, WrapErr};

use switchyard::traces::import::{Format, import};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Agent {
    /// Claude Code's session file (~/.claude/projects/PROJECT/SESSION.jsonl).
    ClaudeCode,
    /// Codex's rollout file (~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl).
    Codex,
}

#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// Whose file it is.
    #[arg(value_enum)]
    agent: Agent,
    /// The session file.
    file: PathBuf,
    /// The trace to write.
    #[arg(long, value_name = "TRACE")]
    out: PathBuf,
}

pub(crate) fn import_file(a: ImportArgs) -> Result<ExitCode> {
    let format = match a.agent {
        Agent::ClaudeCode => Format::ClaudeCode,
        Agent::Codex => Format::Codex,
    };
    let imported = import(&a.file, format)?;
    if let Some(line) = imported.torn {
        eprintln!("{}: line {line} is cut short (the agent was still writing it): left out", a.file.display());
    }
    switchyard::eval::results::write_trace(&a.out, &imported.events)
        .wrap_err_with(|| format!("cannot write {}", a.out.display()))?;
    let calls =
        imported.events.iter().filter(|e| matches!(e.kind, switchyard::engine::EventKind::ToolCall { .. })).count();
    let replies =
        imported.events.iter().filter(|e| matches!(e.kind, switchyard::engine::EventKind::ModelReply { .. })).count();
    println!(
        "{}: {replies} model replies, {calls} tool calls ({} lines of other kinds skipped) → {}",
        a.file.display(),
        imported.skipped,
        a.out.display()
    );
    println!("replay it with: switchyard replay {}", a.out.display());
    Ok(ExitCode::SUCCESS)
}
