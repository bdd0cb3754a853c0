//! The server processes Switchyard starts, with piped stdio, through the
//! process groups of [`crate::tool::child`]: killed with their parent even
//! when it is killed outright.

use std::process::Stdio;

use tokio::process::{Child, Command};

pub use crate::tool::child::kill_all;
pub(super) use crate::tool::child::{forget, kill_group};

/// Starts `command` with piped stdio in a process group of its own (see
/// [`crate::tool::child::spawn`]). Returns the child and its group id.
pub(super) fn spawn(mut command: Command) -> std::io::Result<(Child, i32)> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    crate::tool::child::spawn(command)
}
