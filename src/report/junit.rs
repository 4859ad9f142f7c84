//! JUnit XML for CI test tabs: one testsuite per runtime, one testcase per case.

use super::{outcome, RunResult};
use crate::run::expectations::Outcome;
use crate::run::Verdict;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// XML 1.0 cannot carry most control characters, even escaped: show them escaped as text.
fn x(s: &str) -> String {
    super::printable(s, true)
}

pub fn junit(result: &RunResult) -> String {
    let mut report = Report::new(format!("hcpspec {}", x(&result.suite)));
    for run in &result.runtimes {
        let mut suite = TestSuite::new(x(&run.runtime));
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
            let status = match outcome(r) {
                Outcome::Pass => TestCaseStatus::success(),
                Outcome::Fail | Outcome::Stale => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let msg = if outcome(r) == Outcome::Stale {
                        "expected to fail, but passes: the expectation is stale".to_string()
                    } else {
                        format!("{:?} case failed", r.level)
                    };
                    s.set_message(msg).set_description(x(&detail));
                    s
                }
                Outcome::Error => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
                    s.set_message(x(&detail));
                    s
                }
                Outcome::Unimplemented if r.level == crate::case::Level::MUST => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message("MUST case not implemented by the runtime")
                        .set_description(detail);
                    s
                }
                Outcome::ExpectedFail | Outcome::Skip | Outcome::Unimplemented => {
                    let mut s = TestCaseStatus::skipped();
                    let why = r
                        .annotations
                        .expectation
                        .as_ref()
                        .map(|e| e.reason.clone())
                        .unwrap_or(detail);
                    s.set_message(format!(
                        "{}: {}",
                        crate::report::html::outcome_label(outcome(r)),
                        x(&why)
                    ));
                    s
                }
            };
            let mut tc = TestCase::new(x(&r.name), status);
            tc.set_classname(format!("{}.section-{}", x(&run.runtime), x(&r.section)));
            tc.set_time(Duration::from_micros(r.micros));
            suite.add_test_case(tc);
        }
        report.add_test_suite(suite);
    }
    report.to_string().unwrap_or_default()
}
