//! Dialogs over the workbench: inject fault, edit score, parameters, model
//! per role, task text or next task, help.
