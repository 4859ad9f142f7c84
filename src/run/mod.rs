//! The executor and the judge: run one case on one runtime through an adapter, observe every
//! step, match what it saw against the case's expectations, and return a verdict.

pub mod expectations;
pub mod held_back;
pub mod parity;
pub mod plan;
pub mod pool;
pub mod result;
pub mod runner;
pub mod session;
pub mod turn;
pub mod versions;

use crate::case::{Case, Level};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail(Failure),
    /// Not run: the case needs an optional feature the runtime does not claim, or the
    /// expectations file skips it.
    Skip {
        reason: String,
    },
    /// The runtime answered "method not found" to a method the case needs. Never a pass: it
    /// fails a MUST case unless the expectations file gives a reason.
    Unimplemented {
        reason: String,
    },
    /// The case could not be judged: the runtime broke the transport, or the case's setup failed.
    Error {
        message: String,
    },
}

impl Verdict {
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail(_) => "fail",
            Verdict::Skip { .. } => "skip",
            Verdict::Unimplemented { .. } => "unimplemented",
            Verdict::Error { .. } => "error",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub step: usize,
    pub action: String,
    pub path: String,
    pub message: String,
    pub expected: Value,
    pub actual: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub step: usize,
    pub action: String,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub name: String,
    pub section: String,
    pub level: Level,
    pub spec: String,
    /// The case's title and assumption, so that a report explains a case without its file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumption: Option<String>,
    #[serde(flatten)]
    pub verdict: Verdict,
    pub observations: Vec<Observation>,
    /// Class and rule checks the runtime's own maps could not classify (passed, reported).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unclassified: Vec<String>,
    pub micros: u64,
    /// What the run made of the verdict: expectations and snapshot drift.
    #[serde(flatten)]
    pub annotations: Annotations,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<expectations::Outcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectation: Option<expectations::Entry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<crate::snapshot::Drift>,
    /// Why the case is not scored for this target: it is of a later protocol version than the
    /// target states (`since hcpspec-core/2; the core states hcpspec-core/1`, `run::versions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_scored: Option<String>,
    /// Every message to and from the implementation, in order (`crate::trace`): kept for a
    /// case that did not pass (any state but pass, or its snapshot drifted), else none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::Trace>,
}

impl CaseResult {
    /// The result of one case: its verdict and what was observed, nothing annotated yet.
    pub fn of(
        case: &Case,
        verdict: Verdict,
        observations: Vec<Observation>,
        unclassified: Vec<String>,
        started: std::time::Instant,
    ) -> CaseResult {
        CaseResult {
            name: case.name(),
            section: case.section.clone(),
            level: case.level,
            spec: case.spec.clone(),
            title: case.title.clone(),
            assumption: case.assumption.clone(),
            verdict,
            observations,
            unclassified,
            micros: started.elapsed().as_micros() as u64,
            annotations: Annotations::default(),
        }
    }

    /// A human explanation of a failure: case, citation, step, expected against actual.
    pub fn explain(&self, case: &Case) -> String {
        let mut out = format!(
            "{} ({:?}, section {})\n  title: {}\n  spec:  {}\n",
            self.name, case.level, case.section, case.title, case.spec
        );
        if let Some(a) = &case.assumption {
            out += &format!("  assumption: {a}\n");
        }
        match &self.verdict {
            Verdict::Fail(f) => {
                let pretty = |v: &Value| {
                    serde_json::to_string_pretty(v)
                        .unwrap_or_default()
                        .replace('\n', "\n    ")
                };
                out += &format!(
                    "  step {} ({}): {} at `{}`\n  expected:\n    {}\n  actual ({} observed):\n    {}\n",
                    f.step,
                    f.action,
                    f.message,
                    if f.path.is_empty() { "/" } else { &f.path },
                    pretty(&f.expected),
                    f.action,
                    pretty(&f.actual)
                );
            }
            Verdict::Error { message } => out += &format!("  error: {message}\n"),
            Verdict::Skip { reason } => out += &format!("  skipped: {reason}\n"),
            Verdict::Unimplemented { reason } => out += &format!("  unimplemented: {reason}\n"),
            Verdict::Pass => out += "  passed\n",
        }
        out
    }
}

/// Judge every case with `judge` on `jobs` threads; results in case order.
pub fn par_each(
    cases: &[Case],
    jobs: usize,
    judge: &(dyn Fn(&Case) -> CaseResult + Sync),
    on_done: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult> {
    pool::each(cases, jobs, &pool::never, &|_, case| {
        // A panic is the case's error, never the end of the run.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| judge(case)))
            .unwrap_or_else(|_| {
                CaseResult::of(
                    case,
                    Verdict::Error {
                        message: "hcpspec panicked while running the case".into(),
                    },
                    vec![],
                    vec![],
                    std::time::Instant::now(),
                )
            });
        on_done(&result);
        result
    })
    .into_iter()
    .map(|r| match r {
        Some(Ok(result)) => result,
        _ => unreachable!("the pool never halts here, and a panic is the case's error above"),
    })
    .collect()
}

/// A verdict's texts (they quote the runtime: errors, skip reasons, failure messages) as
/// reports keep them.
pub fn contain_verdict(v: &mut Verdict) {
    match v {
        Verdict::Pass => {}
        Verdict::Skip { reason } | Verdict::Unimplemented { reason } => {
            *reason = crate::snapshot::contain_text(reason)
        }
        Verdict::Error { message } => *message = crate::snapshot::contain_text(message),
        Verdict::Fail(f) => {
            f.message = crate::snapshot::contain_text(&f.message);
            f.path = crate::snapshot::contain_text(&f.path);
            f.action = crate::snapshot::contain_text(&f.action);
            f.expected = crate::snapshot::contain(&f.expected);
            f.actual = crate::snapshot::contain(&f.actual);
        }
    }
}
