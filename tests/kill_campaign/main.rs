//! The real binary killed and signalled: the kill campaign
//! (SIGKILL at seeded random moments, then every store must load and a
//! restarted session go on from it) and clean shutdown on SIGTERM and
//! SIGINT (terminal restored, every child process gone).
//!
//! Its own test binary so `scripts/kill-campaign.sh` can run it alone, in a
//! release build, with `SWITCHYARD_KILLS` set.

mod campaign;
mod common;
mod signals;
