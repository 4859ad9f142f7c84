//! The executor and the judge: run one case on one runtime through an adapter, observe every
//! step, match what it saw against the case's expectations, and return a verdict.

pub mod expectations;
mod materialize;
pub mod mutants;
pub mod parity;
pub mod plan;
pub mod result;
pub mod runner;

use crate::adapter::{Adapter, CallError};
use crate::case::matcher::{self, Claims, Denials};
use crate::case::{Action, Case, CaseError, Level};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use materialize::Vars;

/// What an embedded runtime claims in `initialize` (its denial and rule maps, its features).
pub fn embedded_claims(name: &str) -> Option<Claims> {
    let info = crate::adapter::Inproc::new(name)?
        .call("initialize", json!({}))
        .ok()?;
    Some(Claims::from_initialize(&info))
}

/// What a run needs besides the cases: where the fixtures are, where the probe is.
pub struct RunEnv {
    pub vectors: PathBuf,
    pub denials: Denials,
    /// A directory holding `hcpspec-probe` and `other-probe` (a probe that is never
    /// allow-listed), the runtime's bin search path.
    pub bin_dir: PathBuf,
    /// Keep observations whole (paths by their variables, nothing capped or redacted): set by
    /// the fuzzer, whose oracles judge them and whose findings are cases, not reports.
    pub uncapped: bool,
    _bins: tempfile::TempDir,
}

impl RunEnv {
    /// `probe` is the hcpspec-probe executable; it is linked into a fresh bin directory twice.
    pub fn new(vectors: &Path, probe: &Path) -> Result<RunEnv, String> {
        let denials = crate::case::load_denials(vectors).map_err(|e| e.to_string())?;
        let probe = probe
            .canonicalize()
            .map_err(|e| format!("hcpspec-probe not found at {}: {e}", probe.display()))?;
        let bins = tempfile::Builder::new()
            .prefix("hcpspec-bin")
            .tempdir()
            .map_err(|e| e.to_string())?;
        for name in ["hcpspec-probe", "other-probe"] {
            std::os::unix::fs::symlink(&probe, bins.path().join(name))
                .map_err(|e| format!("cannot link {name}: {e}"))?;
        }
        Ok(RunEnv {
            vectors: vectors.to_path_buf(),
            denials,
            bin_dir: bins.path().to_path_buf(),
            uncapped: false,
            _bins: bins,
        })
    }

    /// The running `hcpspec` executable, which is the probe when started as `hcpspec-probe`.
    pub fn self_probe() -> PathBuf {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hcpspec"))
    }
}

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
}

impl CaseResult {
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

/// The expectation of a step that states none: it must succeed.
fn default_expect(action: &Action) -> Option<Value> {
    match action {
        Action::Install(_) | Action::Connect(_) | Action::Exec(_) => Some(json!({ "ok": true })),
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
        Action::Sense(_) => "runtime.sense",
        Action::Sink(_) => "runtime.senseSink",
        Action::Audit(_) => "runtime.audit",
        Action::Probe(_) | Action::PacksUnchanged(_) => "",
    }
}

/// The name prefix of a case's temp dir; the probe writes reports only below one.
pub const CASE_DIR_PREFIX: &str = "hcpspec-case";

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
    let mut verdict = if !missing.is_empty() {
        Verdict::Skip {
            reason: format!(
                "the runtime does not claim the optional feature{} {:?} in initialize",
                if missing.len() > 1 { "s" } else { "" },
                missing
            ),
        }
    } else {
        match tempfile::Builder::new().prefix(CASE_DIR_PREFIX).tempdir() {
            Ok(tmp) => execute(
                case,
                adapter,
                env,
                claims,
                tmp.path(),
                &mut observations,
                &mut unclassified,
            ),
            Err(e) => Verdict::Error {
                message: format!("cannot create a temp dir: {e}"),
            },
        }
    };
    // What the runtime said, as reports keep it: secrets redacted, texts capped.
    contain_verdict(&mut verdict);
    let unclassified = unclassified
        .iter()
        .map(|n| crate::snapshot::contain_text(n))
        .collect();
    CaseResult {
        name: case.name(),
        section: case.section.clone(),
        level: case.level,
        spec: case.spec.clone(),
        verdict,
        observations,
        unclassified,
        micros: start.elapsed().as_micros() as u64,
        annotations: Annotations::default(),
    }
}

fn execute(
    case: &Case,
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
    let create = match create_params(case, env, &vars, &tmp.join("packs")) {
        Ok(p) => p,
        Err(e) => {
            return Verdict::Error {
                message: e.to_string(),
            }
        }
    };
    // Every case starts with install (`runtime.create`); it is implicit when not written.
    let implicit = crate::case::Step {
        action: Action::Install(Map::new()),
        expect: None,
        note: None,
    };
    let steps: Vec<&crate::case::Step> = match case.steps.first() {
        Some(s) if matches!(s.action, Action::Install(_)) => case.steps.iter().collect(),
        _ => std::iter::once(&implicit).chain(&case.steps).collect(),
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

fn create_params(
    case: &Case,
    env: &RunEnv,
    vars: &Vars,
    packs_dir: &Path,
) -> Result<Value, CaseError> {
    let fixtures = env.vectors.join("packs");
    let mut dirs = Vec::new();
    for (i, p) in case.setup.packs.iter().enumerate() {
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
    for (k, v) in &case.setup.params {
        map.insert(k.clone(), vars.substitute(v));
    }
    map.insert("packDirs".into(), json!(dirs));
    map.insert("workdir".into(), json!(vars.workdir));
    map.insert("path".into(), json!([env.bin_dir]));
    Ok(params)
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
        Action::Connect(p) | Action::Availability(p) => {
            call(adapter, with(json!({ "pack_id": p })))
        }
        Action::Exec(req) | Action::Sense(req) => call(adapter, with(vars.substitute(req))),
        Action::ListPacks(_) | Action::Sink(_) | Action::Audit(_) => call(adapter, with(json!({}))),
        Action::Probe(path) => materialize::read_probe(vars, path).map_err(CallError::Transport),
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

/// Judge every case with `judge` on `jobs` threads; results in case order.
pub fn par_each(
    cases: &[Case],
    jobs: usize,
    judge: &(dyn Fn(&Case) -> CaseResult + Sync),
    on_done: &(dyn Fn(&CaseResult) + Sync),
) -> Vec<CaseResult> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<CaseResult>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(cases.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let result = judge(case);
                on_done(&result);
                results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
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
