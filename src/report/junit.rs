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
                // What fails the run: the case's own outcome, else its snapshot. A case failing
                // for its snapshot alone says so, whatever its state (a PROFILE deviation's
                // included); the Action counts those messages in one line.
                let msg = match (st, &r.annotations.drift) {
                    _ if outcome(r).fails_run(r.level, rules.strict) => match st {
                        State::Stale => {
                            "expected to fail, but passes: the expectation is stale".to_string()
                        }
                        _ => format!("{:?} case: {}", r.level, st.label()),
                    },
                    (_, Some(crate::snapshot::Drift::New)) => format!(
                        "no snapshot yet: under CI a new snapshot fails the run; record them with `{}`, then commit DIR",
                        x(&super::markdown::record_command(&result.suite, run))
                    ),
                    _ => "the observations drifted from the snapshot".to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A run under CI of `cases` (name, level, verdict JSON), none with a snapshot yet.
    fn first_ci_run(cases: &[(&str, &str, Value)]) -> Report {
        let cases: Vec<Value> = cases
            .iter()
            .map(|(n, level, verdict)| {
                let mut c = serde_json::json!({"name": format!("contract::04-x::{n}"),
                    "section": "4", "level": level, "spec": "", "observations": [],
                    "micros": 1, "drift": {"drift": "new"}});
                for (k, v) in verdict.as_object().unwrap() {
                    c[k] = v.clone();
                }
                c
            })
            .collect();
        serde_json::from_value(serde_json::json!({"hcpspec_version": "0", "suites": [{
            "hcpspec_version": "0", "suite": "contract", "cases_hash": "h",
            "strict_expectations": false, "ci": true, "runtimes": [{"runtime": "stdio:./shim",
            "info": null, "summary": crate::run::result::Summary::default(), "cases": cases}]}]}))
        .expect("a report")
    }

    use serde_json::Value;

    /// A PROFILE deviation with no snapshot yet fails a CI run for its snapshot, and says so:
    /// never "PROFILE case: profile", as if the deviation were the problem.
    #[test]
    fn a_first_ci_run_fails_each_case_for_its_missing_snapshot_only() {
        let fail = serde_json::json!({"verdict": "fail", "step": 1, "action": "exec",
            "path": "/ok", "message": "differs", "expected": true, "actual": false});
        let pass = serde_json::json!({"verdict": "pass"});
        let report = first_ci_run(&[
            ("deviates", "PROFILE", fail.clone()),
            ("fine", "MUST", pass),
            ("broken", "MUST", fail),
        ]);
        let xml = junit(&report);
        assert!(xml.contains("failures=\"3\""), "{xml}");
        assert!(!xml.contains("PROFILE case"), "{xml}");
        let messages: Vec<&str> = xml
            .split("message=\"")
            .skip(1)
            .map(|m| &m[..m.find('"').unwrap()])
            .collect();
        assert_eq!(messages.len(), 3, "{xml}");
        assert!(messages[0].starts_with("no snapshot yet"), "{messages:?}");
        assert!(messages[1].starts_with("no snapshot yet"), "{messages:?}");
        assert_eq!(messages[2], "MUST case: fail");
        // How to record them, in the message: the run again with --accept.
        assert!(
            messages[0].contains(
                "hcpspec run --suite contract --runtime stdio:./shim --snapshots DIR --accept"
            ),
            "{messages:?}"
        );
    }
}
