//! How the harness suite's self-check runs (the check itself is `suites::SelfCheck`).

/// Scenarios run at once: they mostly wait on (scaled) timers, not on the CPU.
pub const JOBS: usize = crate::suites::WAITING_JOBS;
