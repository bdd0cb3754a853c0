//! `switchyard`: the command line. Every subcommand is headless for now;
//! the workbench UI comes on top of the same sessions.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::main() {
        Ok(code) => code,
        Err(e) => {
            let top = e.to_string();
            eprintln!("error: {top}");
            // Our errors usually quote their cause already.
            for cause in e.chain().skip(1).map(|c| c.to_string()).filter(|c| !top.contains(c.as_str())) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}
