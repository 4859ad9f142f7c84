//! JUnit XML for CI test tabs: one testsuite per runtime, one testcase per case, and one
//! testsuite for transport parity when it differs.
//!
//! A `<failure>` or `<error>` exists exactly for what makes the run exit 1 ([`fails_run`], a
//! parity difference): a JUnit-reading gate and the exit code always agree. Everything else
//! that did not pass (SHOULD, MAY and PROFILE deviations, expected failures, stale
//! expectations without `--strict-expectations`, skipped and unimplemented non-MUST cases) is
//! `<skipped>` with its state and reason as the message, as nextest and BoGo do. A new snapshot
//! (none yet) is a failure only under CI: outside it a passing case with one is a success.

use super::{fails_run, outcome, state, Report, RunResult, State};
use crate::run::expectations::Outcome;
use crate::run::Verdict;
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// XML 1.0 cannot carry most control characters, even escaped: show them escaped as text.
fn x(s: &str) -> String {
    super::printable(s, true)
}

/// One testsuite per suite and runtime (`SUITE RUNTIME`), then a `SUITE transport parity`
/// testsuite where a runtime was observed differently over two transports.
pub fn junit(record: &Report) -> String {
    let mut report = quick_junit::Report::new("hcpspec");
    for result in &record.suites {
        add(&mut report, result);
    }
    report.to_string().unwrap_or_default()
}

fn add(report: &mut quick_junit::Report, result: &RunResult) {
    let rules = result.rules();
    for run in &result.runtimes {
        let mut suite = TestSuite::new(format!("{} {}", x(&result.suite), x(run.shown())));
        for r in &run.cases {
            let detail = match &r.verdict {
                Verdict::Fail(f) => format!(
                    "{}\nstep {} ({}): {} at {}\nexpected: {}\nactual: {}",
                    r.spec,
                    f.step,
                    f.action,
                    f.message,
                    f.path,
                    serde_json::to_string(&f.expected).unwrap_or_default(),
                    serde_json::to_string(&f.actual).unwrap_or_default()
                ),
                Verdict::Error { message } => message.clone(),
                Verdict::Skip { reason } | Verdict::Unimplemented { reason } => reason.clone(),
                Verdict::Pass => String::new(),
            };
            let drift = match &r.annotations.drift {
                Some(crate::snapshot::Drift::Changed { diff }) => {
                    format!("snapshot drift:\n{diff}")
                }
                Some(crate::snapshot::Drift::New) => {
                    "no snapshot yet (a new snapshot fails the run under CI)".to_string()
                }
                None => String::new(),
            };
            let st = state(r);
            let status = if fails_run(r, rules) {
                let kind = match outcome(r) {
                    Outcome::Error => NonSuccessKind::Error,
                    _ => NonSuccessKind::Failure,
                };
                let msg = match st {
                    State::Stale => {
                        "expected to fail, but passes: the expectation is stale".to_string()
                    }
                    State::Pass if r.annotations.drift == Some(crate::snapshot::Drift::New) => {
                        "no snapshot yet: under CI a new snapshot fails the run".to_string()
                    }
                    State::Pass => "the observations drifted from the snapshot".to_string(),
                    _ => format!("{:?} case: {}", r.level, st.label()),
                };
                let mut s = TestCaseStatus::non_success(kind);
                s.set_message(msg)
                    .set_description(x([detail.as_str(), drift.as_str()].join("\n").trim()));
                s
            } else if st == State::Pass {
                TestCaseStatus::success()
            } else if let (State::NotScored, Some(why)) = (st, &r.annotations.not_scored) {
                // Ran and reported, not scored: a JUnit reader sees it skipped, with its verdict.
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!(
                    "not-scored ({:?}, verdict {}, does not fail the run): {}",
                    r.level,
                    r.verdict.label(),
                    x(why)
                ))
                .set_description(x(&detail));
                s
            } else {
                let why = r
                    .annotations
                    .expectation
                    .as_ref()
                    .map(|e| e.reason.clone())
                    .unwrap_or(detail);
                let mut s = TestCaseStatus::skipped();
                s.set_message(format!(
                    "{} ({:?}, does not fail the run): {}",
                    st.label(),
                    r.level,
                    x(&why)
                ));
                s
            };
            let mut tc = TestCase::new(x(&r.name), status);
            tc.set_classname(format!("{}.section-{}", x(run.shown()), x(&r.section)));
            tc.set_time(Duration::from_micros(r.micros));
            suite.add_test_case(tc);
        }
        report.add_test_suite(suite);
    }
    if !result.parity.is_empty() {
        let mut suite = TestSuite::new(format!("{} transport parity", x(&result.suite)));
        for d in &result.parity {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!(
                "{} and {} differ: {}",
                x(&d.left),
                x(&d.right),
                x(&d.what)
            ));
            let mut tc = TestCase::new(x(&d.case), s);
            tc.set_classname(format!("parity.{}", x(&d.runtime)));
            suite.add_test_case(tc);
        }
        report.add_test_suite(suite);
    }
}
