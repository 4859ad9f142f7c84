//! The core-api suite as a [`Suite`]: scripts played on a core behind its control shim.

use crate::case::matcher::Denials;
use crate::case::{check_expects, Case, Format, Parsed};
use crate::knob::{infos, Info};
use crate::run::runner::Target;
use crate::suites::{Context, FuzzReport, FuzzRun, Shim, ShimTarget, Suite};
use serde_json::Value;
use std::collections::BTreeSet;
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
        check_expects(steps, "/script/steps", "expect", denials)?;
        crate::case::check_expects_something(steps, "/script/steps", "expect")?;
        // `core.start`'s params as a core reads them: `discover` a map, `policy` a list …
        if let Some(start) = case
            .member("script")
            .and_then(|s| s.get("start"))
            .and_then(Value::as_object)
        {
            if let Some(bad) = crate::suites::world::scenario::unreadable(start, "/script/start") {
                return Err(bad);
            }
            if let Some(bad) = files_misnamed(start) {
                return Err(bad);
            }
        }
        check_names(steps)?;
        check_pad_at(steps)
    }
    /// The script in types ([`super::Script`]): a step with no action or two is refused here.
    fn parse(&self, case: &Case) -> Result<Parsed, (String, String)> {
        let script = case.member("script").cloned().unwrap_or_default();
        super::Script::parse(&script)
            .map(Parsed::new)
            .map_err(|(at, why)| (format!("/script{at}"), why))
    }
}

/// `core.start`'s `files` name each file by the SHA-256 of its bytes (`sha256:<hex>`): a
/// content-addressed core stores it under that name and no other, so a made-up one is a
/// fixture a conforming core cannot hold.
fn files_misnamed(start: &serde_json::Map<String, Value>) -> Option<(String, String)> {
    let files = start.get("files")?.as_object()?;
    files.iter().find_map(|(name, text)| {
        let want = format!(
            "sha256:{}",
            crate::hash::sha256_hex(text.as_str().unwrap_or_default().as_bytes())
        );
        (name != &want).then(|| {
            (
                format!(
                    "/script/start/files/{}",
                    name.replace('~', "~0").replace('/', "~1")
                ),
                format!("a file is named by the SHA-256 of its bytes: `{want}`, not `{name}`"),
            )
        })
    })
}

/// A request's `padAt` is a pointer of at most [`crate::pointer::MAX_TOKENS`] tokens: the
/// objects made along it nest as deep (a deeper one is refused again when it is played, as
/// one a template expanded is).
fn check_pad_at(steps: Option<&Value>) -> Result<(), (String, String)> {
    let steps = steps.and_then(Value::as_array).into_iter().flatten();
    for (i, step) in steps.enumerate() {
        let at = step.get("request").and_then(|r| r.get("padAt"));
        if let Some(Err(why)) = at
            .and_then(Value::as_str)
            .map(crate::pointer::bounded_tokens)
        {
            return Err((
                format!("/script/steps/{i}/request/padAt"),
                format!("padAt is {why}"),
            ));
        }
    }
    Ok(())
}

/// Every connection a step uses (`on`, default `h`) was opened by an earlier `connect` or
/// `hello` (`as`, default `h`) and not closed since; every `gateResult` names a gate call an
/// earlier `gate` started (`async`) and no other `gateResult` took. Otherwise the step could
/// only be an error mid-run ("no connection `h2`"): the case is refused at load.
fn check_names(steps: Option<&Value>) -> Result<(), (String, String)> {
    let name = |v: &Value, key: &str| {
        v.get(key)
            .and_then(Value::as_str)
            .unwrap_or("h")
            .to_string()
    };
    let mut open = BTreeSet::new();
    let mut in_flight = BTreeSet::new();
    for (i, step) in steps
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for k in ["connect", "hello"] {
            if let Some(c) = step.get(k) {
                open.insert(name(c, "as"));
            }
        }
        for k in ["request", "await", "send", "close"] {
            if let Some(c) = step.get(k) {
                let on = name(c, "on");
                if !open.contains(&on) {
                    let at = if c.get("on").is_some() {
                        format!("/script/steps/{i}/{k}/on")
                    } else {
                        format!("/script/steps/{i}/{k}")
                    };
                    return Err((
                        at,
                        format!("no connection `{on}`: no earlier connect or hello step opens it (`as`), or a close step closed it"),
                    ));
                }
                if k == "close" {
                    open.remove(&on);
                }
            }
        }
        if let Some(n) = step
            .get("gate")
            .and_then(|g| g.get("async"))
            .and_then(Value::as_str)
        {
            in_flight.insert(n.to_string());
        }
        if let Some(n) = step.get("gateResult").and_then(Value::as_str) {
            if !in_flight.remove(n) {
                return Err((
                    format!("/script/steps/{i}/gateResult"),
                    format!(
                        "no gate call `{n}` in flight: no earlier gate step starts it (`async`)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Suite for CoreApi {
    fn drives(&self) -> &'static str {
        super::DRIVES
    }
    fn jobs(&self, _cores: usize) -> usize {
        crate::suites::WAITING_JOBS
    }
    fn self_check_jobs(&self) -> usize {
        crate::suites::WAITING_JOBS
    }
    fn noun(&self) -> &'static str {
        "core"
    }
    fn judged(&self, case: &Case, failure: &crate::run::Failure) -> crate::suites::Judged {
        super::always::judged(failure)
            .unwrap_or_else(|| crate::suites::judged_by_step(case, failure, "/script/steps", 0))
    }
    fn checks(&self) -> Vec<&'static str> {
        super::always::CHECKS.to_vec()
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
            prefix: "core",
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

/// A case with a step padding a frame past 16 MiB (`padTo`): it holds that frame, and the
/// embedded core's copies of it, in this process.
pub fn heavy(case: &Case) -> bool {
    use serde_json::Value;
    fn pads(v: &Value) -> bool {
        match v {
            Value::Object(o) => o.iter().any(|(k, x)| {
                (k == "padTo" && x.as_u64().is_some_and(|n| n > 16 << 20)) || pads(x)
            }),
            Value::Array(a) => a.iter().any(pads),
            _ => false,
        }
    }
    case.body.values().any(pads)
}

/// A heavy case's turn: one at a time in the process, so that a run's peak memory holds one
/// frame of tens of MiB, not one per heavy case running (docs/security.md, "Memory"). The wait
/// is before the case's clock starts, and the run's guard on a case does not count it
/// (`run::held_back`).
pub(super) fn heavy_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if let Ok(turn) = TURN.try_lock() {
        return turn;
    }
    let _waiting = crate::run::held_back::begin();
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::files_misnamed;
    use serde_json::json;

    /// A case of `steps`, loaded as a file of the suite: its error, one line.
    fn load_error(steps: &str) -> String {
        super::super::script_case("steps", steps)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_step_with_no_action_or_two_is_refused_at_load() {
        let none = load_error(r#"[ { "hello": {} }, { "expect": { "ok": true } } ]"#);
        assert_eq!(
            none,
            "vectors/core-api/1/steps.json:/script/steps/1: a step takes one action (control, connect, request …): none given"
        );
        let two = load_error(r#"[ { "hello": {}, "close": {}, "expect": { "ok": true } } ]"#);
        assert_eq!(
            two,
            "vectors/core-api/1/steps.json:/script/steps/0: a step takes one action: `hello` and `close` given"
        );
    }

    #[test]
    fn a_file_is_named_by_the_hash_of_its_bytes() {
        let real = json!({ "files": { "sha256:b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9": "hello world" } });
        assert_eq!(files_misnamed(real.as_object().unwrap()), None);
        let fake = json!({ "files": { "sha256:aa": "hello world" } });
        let (at, why) = files_misnamed(fake.as_object().unwrap()).expect("refused");
        assert_eq!(at, "/script/start/files/sha256:aa");
        assert!(why.contains("b94d27b9"), "{why}");
    }
}
