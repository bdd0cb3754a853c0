//! The workbench's side of approvals and breakpoints: the panel offered
//! when a call, result or reply waits for the user; `a` and `b`.

use crate::app::App;
use crate::dialog::Dialog;
use crate::engine::debug::ApprovalPolicy;
use crate::engine::{Control, Event, EventKind};

impl App {
    /// After an engine event: offers the panel of what waits, shows it
    /// again when the engine refused the user's decision (with why), and
    /// closes a panel whose call no longer waits.
    pub(crate) fn offer_review(&mut self, ev: &Event) {
        let pending = self.state.debug.pending.clone();
        if let Some(Dialog::Approval(d)) = &self.dialog
            && pending.as_ref().map(|p| p.call()) != Some(d.call())
        {
            self.dialog = None;
        }
        let Some(p) = pending else { return };
        let why = match &ev.kind {
            EventKind::ControlRejected { control, why } if control.starts_with("decide") => Some(why.clone()),
            _ => None,
        };
        let news = why.is_some()
            || matches!(
                ev.kind,
                EventKind::ApprovalRequested { .. } | EventKind::ResultReview { .. } | EventKind::ReplyReview { .. }
            );
        if !news {
            return;
        }
        match &self.dialog {
            None => self.dialog = Some(Dialog::approval(p, why)),
            Some(Dialog::Approval(_)) => {}
            // The user is busy in another dialog: say what waits.
            Some(_) => self.nav.flash = Some(format!("call {} waits for your decision: a shows it", p.call())),
        }
    }

    /// `a`: shows what waits for a decision; otherwise turns the approval
    /// of every call on, or approvals off.
    pub(crate) fn approval_key(&mut self) -> Option<Control> {
        if let Some(p) = self.state.debug.pending.clone() {
            self.dialog = Some(Dialog::approval(p, None));
            return None;
        }
        let policy =
            if self.state.debug.policy.is_off() { ApprovalPolicy::everything() } else { ApprovalPolicy::default() };
        Some(Control::SetApproval { policy })
    }
}
