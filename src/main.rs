//! `switchyard`: the command line. Every subcommand is headless for now;
//! the workbench UI comes on top of the same sessions.

mod cli;

use std::process::ExitCode;

/// mimalloc rather than the system's malloc: an engine step makes many small
/// short-lived allocations (events, prompts, JSON values), and glibc's
/// malloc and free took about a quarter of a step's time in the profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Piped into `head`, a command line tool ends quietly when the reader
    // goes away; Rust's default is to ignore SIGPIPE and panic on the write.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Children this process started go before the panic message is printed.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        switchyard::tool::child::kill_all();
        report(info);
    }));
    let result = cli::main();
    // Whatever path led here, no child (tool, server) outlives the command.
    switchyard::tool::child::kill_all();
    match result {
        Ok(code) => code,
        Err(e) => {
            // A cause from a library may quote what an endpoint sent back,
            // a key in it: the last place to mask it before the terminal.
            let said = |e: &dyn std::fmt::Display| switchyard::text::secret::redact(&e.to_string()).into_owned();
            let top = said(&e);
            eprintln!("error: {top}");
            // Our errors usually quote their cause already.
            for cause in e.chain().skip(1).map(|c| said(&c)).filter(|c| !top.contains(c.as_str())) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}
