//! The RunResult, the one machine-readable record of a run; every report renders it.

use crate::run::{CaseResult, Verdict};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub hcpspec_version: String,
    pub suite: String,
    /// FNV-1a over the case files run, so two results can tell they ran the same cases.
    pub cases_hash: String,
    pub runtimes: Vec<RuntimeRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeRun {
    /// The adapter spec, e.g. `inproc:reference`.
    pub runtime: String,
    /// What the runtime answered to `initialize`.
    pub info: Value,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub error: usize,
    pub must_fail: usize,
    pub micros: u64,
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let mut s = Summary::default();
        for r in results {
            match r.verdict {
                Verdict::Pass => s.pass += 1,
                Verdict::Fail(_) => s.fail += 1,
                Verdict::Skip { .. } => s.skip += 1,
                Verdict::Error { .. } => s.error += 1,
            }
            if r.level == crate::case::Level::MUST && matches!(r.verdict, Verdict::Fail(_) | Verdict::Error { .. }) {
                s.must_fail += 1;
            }
            s.micros += r.micros;
        }
        s
    }
}

/// FNV-1a 64 over the given byte strings, as hex.
pub fn fnv1a(parts: impl IntoIterator<Item = Vec<u8>>) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for part in parts {
        for b in part {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        h ^= 0xff;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}
