//! The host suite as a [`Suite`]: cases played on an adapter behind its host shim, linked with recording fakes.

use crate::case::matcher::Denials;
use crate::case::{check_expects, Case, Format, Parsed};
use crate::knob::{infos, Info};
use crate::run::runner::Target;
use crate::suites::{Context, FuzzReport, FuzzRun, Shim, ShimTarget, Suite};
use std::sync::Arc;

/// Host runtime adapters (spec 003): hcpspec calls an adapter through its host shim.
pub struct Host;

impl Format for Host {
    fn body(&self) -> &'static str {
        "host"
    }
    fn schema(&self) -> &'static jsonschema::Validator {
        crate::schema::host_case()
    }
    fn check(&self, case: &Case, denials: &Denials) -> Result<(), (String, String)> {
        let steps = case.member("host").and_then(|s| s.get("steps"));
        // A command gives its bytes or the abstract body its Core encodes, never both: which
        // would cross is nowhere said (docs/host-protocol.md § 5).
        for (i, step) in steps
            .and_then(|s| s.as_array())
            .into_iter()
            .flatten()
            .enumerate()
        {
            let c = &step["params"]["command"];
            if let Some(raw) = ["payload", "payloadText"]
                .into_iter()
                .find(|k| c.get(*k).is_some())
            {
                if c.get("body").is_some() {
                    return Err((
                        format!("/host/steps/{i}/params/command"),
                        format!("gives both `body` and `{raw}`: a command gives its bytes or the body its Core encodes, not both"),
                    ));
                }
            }
        }
        check_expects(steps, "/host/steps", "expect", denials)?;
        // A case the fuzzer wrote is judged by the invariants instead.
        if case.member("host").and_then(|h| h.get("invariants"))
            != Some(&serde_json::Value::Bool(true))
        {
            crate::case::check_expects_something(steps, "/host/steps", "expect")?;
        }
        Ok(())
    }
    /// The steps in types ([`super::Step`]).
    fn parse(&self, case: &Case) -> Result<Parsed, (String, String)> {
        let host = case.member("host").cloned().unwrap_or_default();
        super::step::parse_steps(&host)
            .map(Parsed::new)
            .map_err(|(at, why)| (format!("/host{at}"), why))
    }
}

impl Suite for Host {
    fn drives(&self) -> &'static str {
        super::DRIVES
    }
    fn noun(&self) -> &'static str {
        "adapter"
    }
    /// Its cases take microseconds of CPU, and one waits a second for an idle session
    /// (`wait-idle-blocks-until-idle`): at two at a time the self-check mostly waited on it.
    fn self_check_jobs(&self) -> usize {
        crate::suites::WAITING_JOBS
    }
    fn judged(&self, case: &Case, failure: &crate::run::Failure) -> crate::suites::Judged {
        match failure.action.strip_prefix("always-check ") {
            Some(check) => crate::suites::Judged::Check(check.to_string()),
            None => crate::suites::judged_by_step(case, failure, "/host/steps", 0),
        }
    }
    fn checks(&self) -> Vec<&'static str> {
        super::ALWAYS.iter().map(|(name, _, _)| *name).collect()
    }
    fn target(&self, spec: &str, ctx: &Context) -> Result<Arc<dyn Target>, String> {
        let target = ShimTarget::of(
            spec,
            &ctx.options,
            super::connector,
            &super::DESCRIBE,
            super::run_case,
        );
        Ok(Arc::new(target.map_err(|e| e.to_string())?))
    }
    fn fuzz(&self, run: &FuzzRun) -> Option<Result<FuzzReport, crate::suites::FuzzError>> {
        let connect = match crate::suites::fuzz_connector(run, super::connector, &super::DESCRIBE) {
            Ok(c) => c,
            Err(e) => return Some(Err(e)),
        };
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
            prefix: "host",
            protocol: super::PROTOCOL,
            make: super::embedded,
        })
    }
    fn mutants(&self) -> Vec<Info> {
        infos::<super::reference::Mutant>()
    }
    fn variants(&self) -> Vec<Info> {
        let mut v = infos::<super::reference::Variant>();
        v.extend(crate::knob::freedoms());
        v
    }
}

#[cfg(test)]
mod tests {
    /// A step with no call is refused at load, naming the file and the step.
    #[test]
    fn a_step_with_no_call_is_refused_at_load() {
        use std::path::Path;
        let text = r#"{"id": "steps", "title": "t", "section": "H1", "level": "MUST",
            "spec": "003_43d43b314353d2bc.txt § H1 (\"x\")",
            "host": { "steps": [ { "params": {}, "expect": {} } ] } }"#;
        let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
        let denials = crate::case::load_denials(&vectors).unwrap();
        let file = Path::new("vectors/host/H1/steps.json");
        let e = crate::suites::parse_case(file, text, "host", "host", &denials).unwrap_err();
        assert_eq!(e.file, file);
        assert_eq!(e.pointer, "/host/steps/0");
        assert!(e.to_string().lines().count() == 1, "{e}");
    }
}
