//! `T`'s side effect: a run, made a task by the app, appended to today's
//! case file; what happened is said in the status line.

use std::path::Path;

use crate::eval::cases::{Added, Case, append, daily_file};

/// Appends the case to `DATA_DIR/cases/DATE.jsonl` and says where.
pub fn save(data_dir: Option<&Path>, case: &Case) -> String {
    let Some(dir) = data_dir else {
        return "no data folder to save cases in (set data_dir in the config or SWITCHYARD_DATA_DIR)".into();
    };
    let path = daily_file(dir);
    match append(&path, std::slice::from_ref(case)) {
        Ok(added) => match added.first() {
            Some(Added::New { run, id }) => {
                let note = case.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
                format!("run {run} saved as task {id} to {}{note}", path.display())
            }
            Some(Added::Present { run, id }) => format!("run {run} is already in {} as task {id}", path.display()),
            None => "nothing saved".into(),
        },
        Err(e) => format!("could not save run {}: {e}", case.run),
    }
}
