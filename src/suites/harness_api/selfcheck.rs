//! How the harness suite's self-check runs (the check itself is `suites::SelfCheck`).

/// Scenarios run at once: they mostly wait on (scaled) timers, not on the CPU. At 64 the whole
/// `cargo test` suites binary took 75-78 s on 2 cores (96-99 s at 32), 87 s beside three busy
/// loops at nice 10 (a load of 15), and passed; its peak memory 750-800 MiB (570 at 32).
pub const JOBS: usize = 4 * crate::suites::WAITING_JOBS;
