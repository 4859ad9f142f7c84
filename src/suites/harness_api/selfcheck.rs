//! How the harness suite's self-check runs (the check itself is `suites::SelfCheck`).

/// Scenarios run at once: they mostly wait on (scaled) timers, not on the CPU. At 32 the whole
/// `cargo test` suites binary took 66 s (80 s at 16) on 2 cores, and passed under a release
/// build running beside it.
pub const JOBS: usize = 2 * crate::suites::WAITING_JOBS;
