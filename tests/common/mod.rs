//! Helpers shared by the tests of hostile shims.

use hcpspec::run::Verdict;
use std::time::Duration;

/// A hostile shim's case ended in an error verdict naming `evidence`, well within its deadline.
#[allow(dead_code)] // not every test binary uses it
pub fn errors_with((v, took): (Verdict, Duration), mode: &str, evidence: &str) {
    assert!(took < Duration::from_secs(6), "{mode}: took {took:?}");
    match v {
        Verdict::Error { message } => assert!(
            message.contains(evidence),
            "{mode}: `{evidence}` not in {message}"
        ),
        other => panic!("{mode}: expected an error verdict, got {other:?}"),
    }
}
pub mod markdown;
