//! Exit codes of the `hcpspec` command, as named constants (cf. nextest's exit codes).

/// Conformant: no unexpected failure.
pub const OK: i32 = 0;
/// At least one unexpected failure (a MUST case failed, a mutant survived, lint found issues).
pub const FAILURES: i32 = 1;
/// Usage error or bad input: an argument, a case file, a pack that cannot be read.
pub const USAGE: i32 = 2;
/// The runtime under test could not be reached at all.
pub const UNREACHABLE: i32 = 3;
/// The run finished, but its outputs (result.json and its renderings, or snapshots) could not be
/// written.
pub const OUTPUT: i32 = 4;
/// The run was interrupted (Ctrl-C): its outputs hold the cases that ran (128 + SIGINT, as a
/// shell reports it).
pub const INTERRUPTED: i32 = 130;
