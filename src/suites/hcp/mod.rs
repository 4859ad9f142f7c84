//! The HCP contract suite (spec 000): its step vocabulary (install, activate, connect, exec,
//! availability, Sense, audit, probe …, `steps.rs`) and the executor that drives a runtime's
//! shim through them and judges what each step observed.

pub mod fuzz;
mod links;
mod materialize;
pub mod mutate;
pub mod pack;
pub mod probe;
pub mod runtime;
pub mod shim;
pub mod steps;
mod suite;

use crate::adapter::{Adapter, CallError};
use crate::case::matcher::{self, Claims};
use crate::case::{Case, CaseError};
use crate::run::{
    contain_verdict, par_each, Annotations, CaseResult, Failure, Observation, Verdict,
};
use serde_json::{json, Map, Value};
use std::path::Path;
use std::time::Instant;
use steps::{Action, Body, Step};

pub use materialize::Vars;
pub use suite::{embedded_claims, Contract, RunEnv, Runtime};

/// The expectation of a step that states none: it must succeed.
fn default_expect(action: &Action) -> Option<Value> {
    match action {
        Action::Install(_) | Action::Connect(_) | Action::Exec(_) | Action::Cli(_) => {
            Some(json!({ "ok": true }))
        }
        Action::PacksUnchanged(_) => Some(json!({ "changed": [] })),
        Action::Activate(_) => Some(json!({ "$each": { "ok": true } })),
        _ => None,
    }
}

fn method(action: &Action) -> &'static str {
    match action {
        Action::Install(_) => "runtime.create",
        Action::Activate(_) => "runtime.activate",
        Action::Connect(_) => "runtime.connect",
        Action::Exec(_) => "runtime.exec",
        Action::Availability(_) => "runtime.availability",
        Action::ListPacks(_) => "runtime.listPacks",
        Action::GetPack(_) => "runtime.getPack",
        Action::Skill(_) => "runtime.skill",
        Action::Cli(_) => "runtime.cli",
        Action::Sense(_) => "runtime.sense",
        Action::Sink(_) => "runtime.senseSink",
        Action::Audit(_) => "runtime.audit",
        Action::SetSense(_) => "runtime.setSense",
        Action::Grants(_) => "runtime.grants",
        Action::Probe(_) | Action::PacksUnchanged(_) | Action::Wait(_) => "",
    }
}

/// The longest `wait` step: the suite stays fast.
pub const MAX_WAIT_MS: u64 = 100;

/// The name prefix of a case's temp dir; the probe writes reports only below one.
pub const CASE_DIR_PREFIX: &str = "hcpspec-case";

/// The requirement (`"requires": ["denial-map"]`) of a case that judges the pipeline's order by
/// denial classes: met by a runtime whose `initialize` declares a denial map, not a feature.
pub const DENIAL_MAP: &str = "denial-map";

/// The requirement (`"requires": ["connect"]`) of a case that judges what a connect did (the
/// availability it leaves): met by every runtime but a driver without `connect`.
pub const CONNECT: &str = "connect";

/// Run `case` once on the runtime behind `adapter`, in a fresh temp directory, judged by what
/// the runtime claimed in `initialize`.
pub fn run_case(
    case: &Case,
    adapter: &mut dyn Adapter,
    env: &RunEnv,
    claims: &Claims,
) -> CaseResult {
    let start = Instant::now();
    let mut observations = Vec::new();
    let mut unclassified = Vec::new();
    let missing: Vec<&String> = case
        .requires
        .iter()
        .filter(|f| !claims.features.contains(f))
        .collect();
    // A case that can tell which step denied only by the classes of the runtime's own denial
    // map (two checks with no effect of their own, the pipeline's order) needs that map:
    // without one it is unimplemented, never a pass (docs/shim-protocol.md, `denials`).
    let needs_map = case.requires.iter().any(|r| r == DENIAL_MAP) && claims.denials.is_none();
    let missing: Vec<&String> = missing
        .into_iter()
        .filter(|f| *f != DENIAL_MAP && *f != CONNECT)
        .collect();
    let mut verdict = if needs_map {
        Verdict::Unimplemented {
            reason: "the case tells which step denied by its denial class, and the runtime \
                     declares no denial map in initialize"
                .into(),
        }
    } else if !missing.is_empty() {
        Verdict::Skip {
            reason: format!(
                "the runtime does not claim the optional feature{} {:?} in initialize",
                if missing.len() > 1 { "s" } else { "" },
                missing
            ),
        }
    } else if let Some(reason) = connectless_skip(case, claims) {
        Verdict::Skip { reason }
    } else {
        match Body::of(case).map_err(|e| e.0).and_then(|body| {
            tempfile::Builder::new()
                .prefix(CASE_DIR_PREFIX)
                .tempdir()
                .map(|tmp| (body, tmp))
                .map_err(|e| format!("cannot create a temp dir: {e}"))
        }) {
            Ok((body, tmp)) => execute(
                case,
                &body,
                adapter,
                env,
                claims,
                tmp.path(),
                &mut observations,
                &mut unclassified,
            ),
            Err(message) => Verdict::Error { message },
        }
    };
    // What the runtime said, as reports keep it: secrets redacted, texts capped.
    contain_verdict(&mut verdict);
    let unclassified = unclassified
        .iter()
        .map(|n| crate::snapshot::contain_text(n))
        .collect();
    CaseResult::of(case, verdict, observations, unclassified, start)
}

/// A driver without `connect` (`"connect": false` in initialize; spec 000 § Drivers, "an
/// optional `connect`"): hcpspec sends it no `runtime.connect`. A connect step written with no
/// expectation only arranges a precondition (the pack connected), which such a driver meets by
/// minting inside exec, so the step is left out; a case that expects something of a connect's
/// answer has connect as its subject, and is skipped with the reason, never passed (issue 44).
fn connectless_skip(case: &Case, claims: &Claims) -> Option<String> {
    let judges_connect = Body::of(case)
        .ok()?
        .steps
        .iter()
        .any(|s| matches!(s.action, Action::Connect(_)) && s.expect.is_some())
        || case.requires.iter().any(|r| r == CONNECT);
    (claims.no_connect && judges_connect).then(|| {
        "the runtime's driver has no connect (\"connect\": false in initialize), and this case judges a connect's answer or effect".into()
    })
}

/// Is this step a connect a driver without `connect` is never sent (see [`connectless_skip`])?
fn connect_left_out(step: &Step, claims: &Claims) -> bool {
    claims.no_connect && matches!(step.action, Action::Connect(_)) && step.expect.is_none()
}

#[allow(clippy::too_many_arguments)]
fn execute(
    case: &Case,
    body: &Body,
    adapter: &mut dyn Adapter,
    env: &RunEnv,
    claims: &Claims,
    tmp: &Path,
    observations: &mut Vec<Observation>,
    unclassified: &mut Vec<String>,
) -> Verdict {
    let tmp = tmp.canonicalize().unwrap_or_else(|_| tmp.to_path_buf());
    let vars = Vars {
        workdir: tmp.join("work"),
        tmp: tmp.clone(),
    };
    for d in [vars.workdir.clone(), tmp.join("probe"), tmp.join("packs")] {
        if let Err(e) = std::fs::create_dir_all(&d) {
            return Verdict::Error {
                message: format!("cannot create {}: {e}", d.display()),
            };
        }
    }
    if let Err(message) = links::make(&body.setup.links, &vars) {
        return Verdict::Error { message };
    }
    let create = match create_params(case, body, env, &vars, &tmp.join("packs")) {
        Ok(p) => p,
        Err(e) => {
            return Verdict::Error {
                message: e.to_string(),
            }
        }
    };
    // Every case starts with install (`runtime.create`); it is implicit when not written.
    let implicit = Step {
        action: Action::Install(Map::new()),
        expect: None,
        note: None,
    };
    let steps: Vec<&Step> = match implicit_install(body) {
        false => body.steps.iter().collect(),
        true => std::iter::once(&implicit).chain(&body.steps).collect(),
    };
    let redact = crate::snapshot::Redact::new(
        &tmp.display().to_string(),
        &env.bin_dir.display().to_string(),
    );
    let mut redact = redact;
    redact.uncapped = env.uncapped;
    let mut runtime_id: Option<String> = None;
    let mut verdict = Verdict::Pass;
    let packs_at_start = fingerprint(&tmp.join("packs"));
    for (i, step) in steps.iter().enumerate() {
        if connect_left_out(step, claims) {
            continue;
        }
        let spawned_before = probe::spawns(&tmp).len();
        let observed = match observe(
            &step.action,
            adapter,
            &vars,
            &create,
            runtime_id.as_deref(),
            &packs_at_start,
        ) {
            Ok(v) => v,
            Err(e) if e.not_implemented() => {
                verdict = Verdict::Unimplemented {
                    reason: format!("runtime does not implement {}: {e}", method(&step.action)),
                };
                break;
            }
            Err(e) => {
                verdict = Verdict::Error {
                    message: format!("step {i} ({}): {e}", step.action.name()),
                };
                break;
            }
        };
        if matches!(step.action, Action::Install(_)) {
            runtime_id = observed
                .get("runtime_id")
                .and_then(Value::as_str)
                .map(String::from);
        }
        // Observations are kept normalised (paths as the case's variables), so that they read
        // like the case and compare across runs and transports; matching sees the raw value.
        let normalised = crate::snapshot::normalize(&observed, &redact);
        observations.push(Observation {
            step: i,
            action: step.action.name().into(),
            value: normalised.clone(),
        });
        let expected = step
            .expect
            .as_ref()
            .map(|e| vars.substitute(e))
            .or_else(|| default_expect(&step.action));
        if let Some(expected) = expected {
            match matcher::check(&expected, &observed, claims) {
                Ok(notes) => {
                    if let Some(message) =
                        ran_when_denied(&step.action, &expected, &observed, &tmp, spawned_before)
                    {
                        verdict = Verdict::Fail(Failure {
                            step: i,
                            action: step.action.name().into(),
                            path: "/error".into(),
                            message,
                            expected: crate::snapshot::normalize(&expected, &redact),
                            actual: normalised,
                        });
                        break;
                    }
                    unclassified.extend(notes.into_iter().map(|n| format!("step {i}: {n}")))
                }
                Err(m) => {
                    let expected = crate::snapshot::normalize(&m.expected, &redact);
                    verdict = Verdict::Fail(Failure {
                        step: i,
                        action: step.action.name().into(),
                        path: m.path,
                        message: m.message,
                        expected,
                        actual: normalised,
                    });
                    break;
                }
            }
        }
    }
    if let Some(id) = runtime_id {
        let _ = adapter.call("runtime.dispose", json!({ "runtime_id": id }));
    }
    verdict
}

/// A denial runs nothing: an exec (or CLI) step whose expectation asks for a `$denial` fails when
/// a bin of the case's path was spawned during it, whatever its error says (with no denial map,
/// an adapter's failure text would pass any class).
/// (An expectation that also allows a run, `$anyOf` a denial or `ok: true`, is judged only when
/// the runtime answered `ok: false`.)
fn ran_when_denied(
    action: &Action,
    expected: &Value,
    observed: &Value,
    tmp: &Path,
    before: usize,
) -> Option<String> {
    let denied = observed.get("ok") == Some(&Value::Bool(false));
    if !matches!(action, Action::Exec(_) | Action::Cli(_)) || !denied || !asks_denial(expected) {
        return None;
    }
    let spawns = probe::spawns(tmp);
    let new = spawns.get(before..).filter(|s| !s.is_empty())?;
    let what: Vec<String> = new
        .iter()
        .map(|r| format!("{} {}", r["program"].as_str().unwrap_or("?"), r["argv"]))
        .collect();
    Some(format!(
        "the step expects a denial, yet {} bin start{} ran during it ({}): a denial runs nothing",
        new.len(),
        if new.len() > 1 { "s" } else { "" },
        what.join("; ")
    ))
}

/// Does an expectation ask for a denial (`$denial` anywhere but under `$not`)?
fn asks_denial(e: &Value) -> bool {
    match e {
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| k == "$denial" || (k != "$not" && asks_denial(v))),
        Value::Array(a) => a.iter().any(asks_denial),
        _ => false,
    }
}

fn create_params(
    case: &Case,
    body: &Body,
    env: &RunEnv,
    vars: &Vars,
    packs_dir: &Path,
) -> Result<Value, CaseError> {
    let fixtures = env.vectors.join("packs");
    let mut dirs = Vec::new();
    for (i, p) in body.setup.packs.iter().enumerate() {
        dirs.push(
            materialize::pack(&case.file, i, p, &fixtures, packs_dir)?
                .display()
                .to_string(),
        );
    }
    let mut params = json!({
        "principal": { "id": "user_42", "kind": "human" },
        "tenant_id": "acme",
        "project_id": null,
        "grants": null,
        "allowBins": ["hcpspec-probe"],
    });
    let map = params.as_object_mut().expect("object literal");
    for (k, v) in &body.setup.params {
        map.insert(k.clone(), vars.substitute(v));
    }
    pad_hub(map, 2 * body.steps.len() + 2);
    map.insert("packDirs".into(), json!(dirs));
    map.insert("workdir".into(), json!(vars.workdir));
    map.insert("path".into(), json!([env.bin_dir]));
    Ok(params)
}

/// Each hub script repeated at its last outcome to `mints` outcomes, more than a case's steps can
/// mint (a runtime may mint at connect and in every exec), so a script is never used up: a shim
/// that repeats the last outcome of a used-up script and one that then lets every mint succeed
/// (what `hcpspec-shim/1` first said) see the same outcomes (docs/shim-protocol.md, CHANGELOG).
fn pad_hub(params: &mut Map<String, Value>, mints: usize) {
    let Some(Value::Object(hub)) = params.get_mut("hub") else {
        return;
    };
    for script in hub.values_mut() {
        if let Value::Array(outcomes) = script {
            if let Some(last) = outcomes.last().cloned() {
                outcomes.resize(outcomes.len().max(mints), last);
            }
        }
    }
}

/// Every file under `dir` (relative path → FNV-1a of its bytes), for `packsUnchanged`.
fn fingerprint(dir: &Path) -> std::collections::BTreeMap<String, u64> {
    fn walk(root: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, u64>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(bytes) = std::fs::read(&p) {
                let h = crate::hash::fnv1a64(&bytes);
                let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
                out.insert(rel, h);
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn observe(
    action: &Action,
    adapter: &mut dyn Adapter,
    vars: &Vars,
    create: &Value,
    rt: Option<&str>,
    packs_at_start: &std::collections::BTreeMap<String, u64>,
) -> Result<Value, CallError> {
    let with = |extra: Value| -> Value {
        let mut m = Map::new();
        m.insert("runtime_id".into(), json!(rt));
        if let Value::Object(x) = extra {
            m.extend(x);
        }
        Value::Object(m)
    };
    let call = |adapter: &mut dyn Adapter, params: Value| -> Result<Value, CallError> {
        if rt.is_none() {
            return Err(CallError::Transport(
                "no runtime: the install step did not create one".into(),
            ));
        }
        adapter.call(method(action), params)
    };
    match action {
        Action::Install(_) => adapter.call("runtime.create", create.clone()),
        Action::Activate(ids) => call(adapter, with(json!({ "pack_ids": ids.to_vec() }))),
        Action::Connect(p) | Action::Availability(p) | Action::GetPack(p) | Action::Skill(p) => {
            call(adapter, with(json!({ "pack_id": p })))
        }
        // An exec answered with an error (but "not implemented") is the runtime throwing where
        // the contract wants a value (spec 000: "denials come back as values an agent can branch
        // on, never as thrown exceptions"): observed as `{thrown}`, which no envelope matches.
        Action::Exec(req) | Action::Cli(req) => match call(adapter, with(vars.substitute(req))) {
            Err(CallError::Rpc(e)) if e.code != crate::shim::METHOD_NOT_FOUND => {
                Ok(json!({ "thrown": { "code": e.code, "message": e.message } }))
            }
            other => other,
        },
        Action::Sense(req) => call(adapter, with(vars.substitute(req))),
        Action::SetSense(sense) => call(adapter, with(json!({ "sense": sense }))),
        Action::Grants(_) => call(adapter, with(json!({}))),
        Action::ListPacks(_) | Action::Sink(_) | Action::Audit(_) => call(adapter, with(json!({}))),
        Action::Probe(path) => materialize::read_probe(vars, path),
        Action::Wait(ms) => {
            std::thread::sleep(std::time::Duration::from_millis((*ms).min(MAX_WAIT_MS)));
            Ok(json!({ "waited_ms": (*ms).min(MAX_WAIT_MS) }))
        }
        Action::PacksUnchanged(_) => {
            let now = fingerprint(&vars.tmp.join("packs"));
            let before = packs_at_start;
            let mut changed: Vec<&String> = now
                .iter()
                .filter(|(k, v)| before.get(*k) != Some(v))
                .map(|(k, _)| k)
                .chain(before.keys().filter(|k| !now.contains_key(*k)))
                .collect();
            changed.sort();
            changed.dedup();
            Ok(json!({ "changed": changed }))
        }
    }
}

/// Run every case on fresh adapters from `connect`, `jobs` at a time; results in case order.
pub fn run_all<F>(
    cases: &[Case],
    env: &RunEnv,
    claims: &Claims,
    jobs: usize,
    connect: F,
    on_done: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult>
where
    F: Fn() -> Result<Box<dyn Adapter>, String> + Sync,
{
    par_each(
        cases,
        jobs,
        &|case| match connect() {
            Ok(mut adapter) => run_case(case, adapter.as_mut(), env, claims),
            Err(e) => CaseResult {
                name: case.name(),
                section: case.section.clone(),
                level: case.level,
                spec: case.spec.clone(),
                title: case.title.clone(),
                assumption: case.assumption.clone(),
                verdict: Verdict::Error {
                    message: crate::snapshot::contain_text(&e),
                },
                observations: vec![],
                unclassified: vec![],
                micros: 0,
                annotations: Annotations::default(),
            },
        },
        on_done,
    )
}

/// Whether a case's first written step is not an install, so that the executor plays an
/// implicit one as step 0 (and the written `steps[i]` is step `i + 1` in failures).
pub fn implicit_install(body: &steps::Body) -> bool {
    !matches!(
        body.steps.first().map(|s| &s.action),
        Some(steps::Action::Install(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readings of a used-up script (repeat the last outcome; mint) agree on every mint a
    /// case of `steps` steps can make once the script is padded.
    #[test]
    fn a_padded_hub_script_is_never_used_up() {
        let mut p =
            json!({ "hub": { "a": [{ "ok": false }, { "ok": true, "token": "T" }], "b": [] } });
        let map = p.as_object_mut().unwrap();
        pad_hub(map, 8);
        let a = p["hub"]["a"].as_array().unwrap();
        assert_eq!(a.len(), 8);
        assert_eq!(a[0], json!({ "ok": false }));
        assert!(a[1..]
            .iter()
            .all(|o| o == &json!({ "ok": true, "token": "T" })));
        // No script is no script: every mint succeeds under both readings already.
        assert_eq!(p["hub"]["b"], json!([]));
    }
}
