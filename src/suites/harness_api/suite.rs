//! The harness-api suite as a [`Suite`]: scenarios played on a harness started per scenario,
//! hcpspec as its core and gates.

use super::launch::Harness;
use crate::case::matcher::Denials;
use crate::case::{check_expects, Case, Format};
use crate::knob::{infos, Info};
use crate::run::runner::Target;
use crate::run::CaseResult;
use crate::suites::{Context, FuzzReport, FuzzRun, Suite};
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
        check_expects(checks, "/scenario/checks", "expect", denials)?;
        // The scenario as hcpspec's core reads it (`harness_api::scenario_of` at run): what it
        // cannot read is refused here, at load, not an error verdict mid-run.
        match case
            .member("scenario")
            .and_then(serde_json::Value::as_object)
        {
            Some(sc) => {
                crate::suites::world::scenario::unreadable(sc, "/scenario").map_or(Ok(()), Err)?;
                told(sc)
            }
            None => Ok(()),
        }
    }
}

/// A harness is judged "heard from" only by what it was told to send (the spec does not say it
/// answers pings): a scenario that shortens core's drop tells it to renew at least ten times
/// per drop window, so a harness renewing as told is never dropped, whatever else it does.
fn told(sc: &serde_json::Map<String, Value>) -> Result<(), (String, String)> {
    let t: crate::suites::world::scenario::Timers = match sc.get("timers") {
        Some(t) => serde_json::from_value(t.clone()).unwrap_or_default(),
        None => return Ok(()),
    };
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
        let listed = case
            .member("scenario")
            .and_then(|s| s.get("checks"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(|checks| checks.iter().any(|c| c["check"] == failure.action.as_str()));
        if listed {
            Judged::Written
        } else if self.checks().contains(&failure.action.as_str()) {
            Judged::Check(failure.action.clone())
        } else {
            Judged::Arrangement
        }
    }
    fn checks(&self) -> Vec<&'static str> {
        super::judge::ALWAYS.iter().map(|(name, _)| *name).collect()
    }
    fn runs_unnamed(&self) -> bool {
        true
    }
    fn target(&self, spec: &str, _: &Context) -> Result<Arc<dyn Target>, String> {
        Ok(Arc::new(Launched {
            spec: spec.to_string(),
            harness: Harness::parse(spec)?,
        }))
    }
    fn mutants(&self) -> Vec<Info> {
        infos::<super::reference::Mutant>()
    }
    fn variants(&self) -> Vec<Info> {
        infos::<super::reference::Variant>()
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
        Ok(super::info(&self.spec))
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        super::run_case(case, &self.harness)
    }
}
