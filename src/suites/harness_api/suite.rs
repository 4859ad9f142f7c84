//! The harness-api suite as a [`Suite`]: scenarios played on a harness started per scenario,
//! hcpspec as its core and gates.

use super::launch::Harness;
use crate::case::matcher::Denials;
use crate::case::{check_expects, Case, Format, Parsed};
use crate::knob::{infos, Info};
use crate::run::runner::Target;
use crate::run::CaseResult;
use crate::suites::world::scenario::{unreadable, Scenario, Timers};
use crate::suites::{Context, FuzzReport, FuzzRun, Suite};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// Harness API v5, harness role: hcpspec plays core and the gates against a harness.
pub struct HarnessApi;

impl Format for HarnessApi {
    fn body(&self) -> &'static str {
        "scenario"
    }
    fn schema(&self) -> &'static jsonschema::Validator {
        crate::schema::scenario()
    }
    fn check(&self, case: &Case, denials: &Denials) -> Result<(), (String, String)> {
        let checks = case.member("scenario").and_then(|s| s.get("checks"));
        check_expects(checks, "/scenario/checks", "expect", denials)
    }
    /// The scenario as hcpspec's core plays it and the judge reads its checks: what it cannot
    /// read is refused here, at load, not an error verdict mid-run.
    fn parse(&self, case: &Case) -> Result<Parsed, (String, String)> {
        let written = case.member("scenario").unwrap_or(&Value::Null);
        let sc = Scenario::deserialize(written).map_err(|e| {
            written
                .as_object()
                .and_then(|sc| unreadable(sc, "/scenario"))
                .unwrap_or(("/scenario".into(), e.to_string()))
        })?;
        told(&sc.timers)?;
        Ok(Parsed::new(Arc::new(sc)))
    }
}

/// A harness is judged "heard from" only by what it was told to send (the spec does not say it
/// answers pings): a scenario that shortens core's drop tells it to renew at least ten times
/// per drop window, so a harness renewing as told is never dropped, whatever else it does.
fn told(t: &Timers) -> Result<(), (String, String)> {
    if t.renew_every_ms.saturating_mul(10) > t.drop_ms {
        return Err((
            "/scenario/timers/renewEveryMs".into(),
            format!(
                "renewEveryMs {} is more than a tenth of dropMs {}: scale what the harness is told with core's clocks",
                t.renew_every_ms, t.drop_ms
            ),
        ));
    }
    Ok(())
}

impl Suite for HarnessApi {
    fn drives(&self) -> &'static str {
        super::DRIVES
    }
    fn noun(&self) -> &'static str {
        "harness"
    }
    fn judged(&self, case: &Case, failure: &crate::run::Failure) -> crate::suites::Judged {
        use crate::suites::Judged;
        let listed = super::scenario_of(case).is_some_and(|sc| {
            sc.checks
                .iter()
                .any(|c| c.text["check"] == failure.action.as_str())
        });
        if listed {
            Judged::Written
        } else if self.checks().contains(&failure.action.as_str()) {
            Judged::Check(failure.action.clone())
        } else {
            Judged::Arrangement
        }
    }
    fn checks(&self) -> Vec<&'static str> {
        super::judge::always().collect()
    }
    fn runs_unnamed(&self) -> bool {
        true
    }
    fn target(&self, spec: &str, _: &Context) -> Result<Arc<dyn Target>, String> {
        Ok(Arc::new(Launched {
            spec: spec.to_string(),
            harness: Harness::parse(spec).map_err(|e| e.to_string())?,
        }))
    }
    fn mutants(&self) -> Vec<Info> {
        infos::<super::reference::Mutant>()
    }
    fn variants(&self) -> Vec<Info> {
        let mut v = infos::<super::reference::Variant>();
        v.extend(crate::knob::freedoms());
        v
    }
    fn fuzz(&self, run: &FuzzRun) -> Option<Result<FuzzReport, crate::suites::FuzzError>> {
        let harness = match Harness::parse(run.spec) {
            Ok(h) => h,
            Err(e) => return Some(Err(e.into())),
        };
        let cfg = super::fuzz::Config {
            harness,
            seed: run.seed,
            seconds: run.seconds,
            max_cases: run.trials,
            max_findings: run.findings,
            out: Some(run.out.to_path_buf()),
        };
        let r = super::fuzz::run(&cfg, run.cases, run.stop);
        Some(Ok(FuzzReport {
            cases: r.cases,
            findings: r
                .findings
                .into_iter()
                .map(|f| {
                    (
                        format!(
                            "{} ({}) with {} injection(s)",
                            f.check, f.message, f.injections
                        ),
                        f.seed_case,
                        f.path,
                    )
                })
                .collect(),
            found_after: vec![],
            unplayable: r.errors,
            unplayable_named: vec![],
            stopped: None,
            elapsed: r.elapsed,
        }))
    }
    /// The embedded harnesses' scenarios all but all at once: the longest takes 1.7 s, and 124
    /// take 3.3 s at 16, 2.2 s at 64 (release, 2 cores; 0.4 s of CPU either way).
    fn jobs(&self, _cores: usize) -> usize {
        4 * crate::suites::WAITING_JOBS
    }
    fn self_check_jobs(&self) -> usize {
        super::selfcheck::JOBS
    }
}

/// A harness under the launch contract, started afresh for every scenario.
pub struct Launched {
    spec: String,
    harness: Harness,
}

impl Target for Launched {
    fn spec(&self) -> &str {
        &self.spec
    }
    fn describe(&self) -> Result<Value, String> {
        self.harness.startable().map_err(|e| e.to_string())?;
        Ok(super::info(&self.spec))
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        super::run_case(case, &self.harness)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn load(checks: &str) -> Result<crate::case::Case, crate::case::CaseError> {
        let text = format!(
            r#"{{"id": "c", "title": "t", "section": "2", "level": "MUST",
                "spec": "004_0d5b24e47247e871.txt § 2 Work: hello (\"x\")",
                "scenario": {{ "checks": [{{ "check": "ends", "with": "turn.completed" }}, {checks}] }} }}"#
        );
        crate::suites::parse_case(
            Path::new("c.json"),
            &text,
            "harness-api",
            super::super::DRIVES,
            &Default::default(),
        )
    }

    /// A check the schema lets through but that cannot be judged as written is refused at
    /// load, at its pointer, not an error verdict at play.
    #[test]
    fn a_bad_check_is_refused_at_load_at_its_pointer() {
        let e = load(r#"{ "check": "gateCalls", "count": 1 }"#).unwrap_err();
        assert_eq!(e.pointer, "/scenario/checks/1");
        assert!(e.message.contains("missing field `route`"), "{e}");
        let e = load(r#"{ "check": "noFrame", "m": "x", "nth": 2 }"#).unwrap_err();
        assert_eq!(e.pointer, "/scenario/checks/1");
        assert!(e.message.contains("unknown field `nth`"), "{e}");
        let c = load(r#"{ "m": "hello", "check": "frame", "expect": {} }"#).unwrap();
        let sc = super::super::scenario_of(&c).expect("read at load");
        assert_eq!(sc.checks.len(), 2);
        // What the scenario wrote, as it wrote it: a failure quotes it.
        assert_eq!(
            sc.checks[1].text.to_string(),
            r#"{"m":"hello","check":"frame","expect":{}}"#
        );
    }
}
