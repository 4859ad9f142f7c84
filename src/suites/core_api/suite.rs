//! The core-api suite as a [`Suite`]: scripts played on a core behind its control shim.

use crate::case::matcher::Denials;
use crate::case::{check_expects, Case, Format};
use crate::knob::{infos, Info};
use crate::run::runner::Target;
use crate::suites::{Context, FuzzReport, FuzzRun, Shim, ShimTarget, Suite};
use std::sync::Arc;

/// Harness API v5, core role: hcpspec plays the harness against a core and its gates.
pub struct CoreApi;

impl Format for CoreApi {
    fn body(&self) -> &'static str {
        "script"
    }
    fn schema(&self) -> &'static jsonschema::Validator {
        crate::schema::core_script()
    }
    fn check(&self, case: &Case, denials: &Denials) -> Result<(), (String, String)> {
        let steps = case.member("script").and_then(|s| s.get("steps"));
        check_expects(steps, "/script/steps", "expect", denials)
    }
}

impl Suite for CoreApi {
    fn drives(&self) -> &'static str {
        super::DRIVES
    }
    fn noun(&self) -> &'static str {
        "core"
    }
    fn target(&self, spec: &str, ctx: &Context) -> Result<Arc<dyn Target>, String> {
        Ok(Arc::new(ShimTarget {
            spec: spec.to_string(),
            connect: super::connector(spec, &ctx.options)?,
            describe: ("core.describe", "core"),
            run: super::run_case,
        }))
    }
    fn fuzz(&self, run: &FuzzRun) -> Option<Result<FuzzReport, String>> {
        let connect = match super::connector(run.spec, &Default::default()) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
        if let Err(e) = crate::suites::reachable(run.spec, &connect, "core.describe", "core") {
            return Some(Err(e));
        }
        let budget = super::fuzz::Budget {
            seed: run.seed,
            seconds: run.seconds,
            trials: run.trials,
            findings: run.findings,
        };
        Some(Ok(super::fuzz::run(
            &connect,
            run.cases,
            budget,
            Some(run.out),
            run.stop,
        )))
    }
    fn shim(&self) -> Option<Shim> {
        Some(Shim {
            prefix: "core",
            protocol: super::PROTOCOL,
            make: |name| {
                super::reference::ReferenceCore::named(name)
                    .map(|c| Box::new(c) as Box<dyn crate::adapter::Adapter>)
            },
        })
    }
    fn mutants(&self) -> Vec<Info> {
        infos::<super::reference::Mutant>()
    }
    fn variants(&self) -> Vec<Info> {
        infos::<super::reference::Variant>()
    }
}
