//! The RunResult, the one machine-readable record of a run (schema:
//! `vectors/schemas/run-result.schema.json`); every report is a rendering of it.

use crate::case::Level;
use crate::run::expectations::Outcome;
use crate::run::CaseResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema of this record: `vectors/schemas/run-result.schema.json`.
pub const SCHEMA: &str = "https://hcpspec.dev/schemas/run-result.schema.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    #[serde(rename = "$schema", default)]
    pub schema: String,
    pub hcpspec_version: String,
    pub suite: String,
    /// The suite's sections, in report order (from `vectors/<suite>/suite.json`).
    #[serde(default)]
    pub sections: Vec<crate::case::Section>,
    /// FNV-1a over the case files run, so two results can tell they ran the same cases.
    pub cases_hash: String,
    pub runtimes: Vec<RuntimeRun>,
    /// Cases one runtime answered differently over two transports (empty when it ran over one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parity: Vec<Difference>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeRun {
    /// The adapter spec, e.g. `inproc:reference`.
    pub runtime: String,
    /// What the runtime answered to `initialize`: name, version, features it claims.
    pub info: Value,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

impl RuntimeRun {
    /// The runtime's own name (from `initialize`), else its adapter spec.
    pub fn name(&self) -> String {
        self.info
            .pointer("/runtime/name")
            .and_then(Value::as_str)
            .map(String::from)
            .unwrap_or_else(|| self.runtime.clone())
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub expected_fail: usize,
    pub stale: usize,
    pub skip: usize,
    pub unimplemented: usize,
    pub error: usize,
    /// PROFILE cases the runtime decides otherwise than hcpspec's profile: reported apart,
    /// never failing a run (and not in `fail`, `unimplemented` or `error`).
    #[serde(default)]
    pub profile: usize,
    /// Class and rule checks the runtime's own maps could not classify.
    #[serde(default)]
    pub unclassified: usize,
    /// Unexpected MUST failures and errors: what makes a run red.
    pub must_fail: usize,
    pub drift: usize,
    pub micros: u64,
}

impl RunResult {
    /// Contain everything the result holds, as a live run contains what it keeps: every text
    /// redacted and cut (`snapshot::contain_text`), the runtime's `initialize` answer and every
    /// observation through `snapshot::contain`, verdicts through `run::contain_verdict`. For a
    /// result read from a file (`hcpspec report`), which may have been edited by hand.
    /// Containing twice is containing once, so a live run's result comes out unchanged.
    pub fn contain(&mut self) {
        use crate::snapshot::{contain, contain_text};
        let text = |s: &mut String| *s = contain_text(s);
        text(&mut self.schema);
        text(&mut self.hcpspec_version);
        text(&mut self.suite);
        text(&mut self.cases_hash);
        for s in &mut self.sections {
            text(&mut s.id);
            text(&mut s.title);
        }
        for run in &mut self.runtimes {
            text(&mut run.runtime);
            run.info = contain(&run.info);
            for c in &mut run.cases {
                text(&mut c.name);
                text(&mut c.section);
                text(&mut c.spec);
                crate::run::contain_verdict(&mut c.verdict);
                for o in &mut c.observations {
                    text(&mut o.action);
                    o.value = contain(&o.value);
                }
                c.unclassified.iter_mut().for_each(text);
                if let Some(e) = &mut c.annotations.expectation {
                    text(&mut e.case);
                    text(&mut e.reason);
                    if let Some(i) = &mut e.issue {
                        text(i);
                    }
                }
                if let Some(crate::snapshot::Drift::Changed { diff }) = &mut c.annotations.drift {
                    *diff = crate::snapshot::contain_long(diff);
                }
            }
        }
        for d in &mut self.parity {
            text(&mut d.case);
            text(&mut d.runtime);
            text(&mut d.left);
            text(&mut d.right);
            text(&mut d.what);
        }
    }
}

/// The outcome of a result: as annotated by the run, else from its verdict alone.
pub fn outcome(r: &CaseResult) -> Outcome {
    r.annotations
        .outcome
        .unwrap_or_else(|| Outcome::of(r, None))
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let mut s = Summary::default();
        for r in results {
            let o = outcome(r);
            s.unclassified += r.unclassified.len();
            let deviates = matches!(o, Outcome::Fail | Outcome::Unimplemented | Outcome::Error);
            if r.level == Level::PROFILE && deviates {
                s.profile += 1;
                s.micros += r.micros;
                continue;
            }
            match o {
                Outcome::Pass => s.pass += 1,
                Outcome::Fail => s.fail += 1,
                Outcome::ExpectedFail => s.expected_fail += 1,
                Outcome::Stale => s.stale += 1,
                Outcome::Skip => s.skip += 1,
                Outcome::Unimplemented => s.unimplemented += 1,
                Outcome::Error => s.error += 1,
            }
            if o.fails_run(r.level, false) {
                s.must_fail += 1;
            }
            s.drift += usize::from(r.annotations.drift.is_some());
            s.micros += r.micros;
        }
        s
    }
}

/// Counts per (section, level) for the matrix.
pub fn counts(results: &[CaseResult], section: &str, level: Option<Level>) -> Summary {
    let rs: Vec<CaseResult> = results
        .iter()
        .filter(|r| r.section == section && level.is_none_or(|l| r.level == l))
        .cloned()
        .collect();
    Summary::of(&rs)
}

/// FNV-1a 64 over the given byte strings, as hex.
pub use crate::hash::fnv1a_parts as fnv1a;

/// One case observed differently over two specs of the same runtime.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Difference {
    pub case: String,
    pub runtime: String,
    pub left: String,
    pub right: String,
    /// Where they part: a JSON pointer (`/verdict`, `/failure/…`, `/observations/N/value/…`)
    /// with both values.
    pub what: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {} and {} differ: {}",
            self.case, self.runtime, self.left, self.right, self.what
        )
    }
}
