//! The contract between a dialog and the app, apart from the `Dialog` enum
//! so that each dialog can speak it without importing its own dispatcher.

use crate::engine::Control;

/// What a key did to a dialog.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Keep the dialog open.
    Continue,
    /// Close it; nothing to send.
    Cancel,
    /// Close it and send these controls, in order (empty when nothing changed).
    Submit(Vec<Control>),
    /// Quit the workbench, as `q` does outside a dialog: a dialog that
    /// waits on the user (an approval) must not keep them from leaving.
    Quit,
    /// End the session and quit, asking nothing more.
    End,
    /// Suspend the session and quit: `switchyard resume` takes it up.
    Suspend,
}
