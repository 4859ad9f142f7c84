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
/// `hcpspec verify`: no edit found, but the result's case set could not be checked (it names
/// another hcpspec version, or ran vectors from a folder): its summaries agree with its cases.
pub const UNCHECKED: i32 = 5;
/// The run was interrupted (Ctrl-C): its outputs hold the cases that ran (128 + SIGINT, as a
/// shell reports it).
pub const INTERRUPTED: i32 = 130;

/// Every error a command can end with: bad input, an unreachable implementation, a run that
/// could not finish, outputs not written. [`code`] maps each to its exit code.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Input(#[from] crate::error::BadInput),
    #[error(transparent)]
    Unreachable(#[from] crate::error::Unreachable),
    #[error(transparent)]
    Run(#[from] crate::run::runner::RunError),
    #[error(transparent)]
    Write(#[from] crate::report::WriteError),
    /// Outputs not written, saying which (`the run's outputs`).
    #[error("{what} were not written: {source}")]
    Unwritten {
        what: &'static str,
        source: crate::report::WriteError,
    },
}

/// The one place an error becomes an exit code.
pub fn code(e: &Error) -> i32 {
    use crate::run::runner::RunError;
    match e {
        Error::Input(_) => USAGE,
        Error::Unreachable(_) | Error::Run(RunError::Unreachable { .. }) => UNREACHABLE,
        Error::Run(RunError::Snapshot(_)) | Error::Write(_) | Error::Unwritten { .. } => OUTPUT,
        Error::Run(RunError::Declared { .. } | RunError::Input(_)) => USAGE,
    }
}

/// The one place a finished run's stats become its exit code: interrupted, else failed, else
/// conformant.
pub fn of_run(stats: &crate::run::result::RunStats) -> i32 {
    if stats.interrupted {
        INTERRUPTED
    } else if stats.fails() {
        FAILURES
    } else {
        OK
    }
}

/// The one place problems found become an exit code: a fuzzer's findings, lint's issues,
/// snapshots left pending by `review`.
pub fn of_findings(found: usize) -> i32 {
    if found == 0 {
        OK
    } else {
        FAILURES
    }
}

/// The one place self-checks become an exit code: failed when any failed.
pub fn of_self_check(reports: &[crate::suites::selfcheck::SelfCheckReport]) -> i32 {
    if reports.iter().all(|r| r.passed()) {
        OK
    } else {
        FAILURES
    }
}

/// A fuzzer's error is bad input or an unreachable target, as any other command's.
impl From<crate::suites::FuzzError> for Error {
    fn from(e: crate::suites::FuzzError) -> Error {
        match e {
            crate::suites::FuzzError::Input(e) => e.into(),
            crate::suites::FuzzError::Unreachable(e) => e.into(),
            crate::suites::FuzzError::Runtime(e) => e.into(),
        }
    }
}
