//! The contract suite as a [`Suite`]: its case format, its targets (a runtime behind a shim, a
//! fresh adapter per case), the run environment its fixture packs need (the probe), and its
//! mutants and variants (`crate::suites::hcp::runtime::{mutant, variant}`).

use super::steps::{Action, Body, PackRef};
use super::{run_case, Claims};
use crate::adapter::{Adapter, Connector};
use crate::case::matcher::Denials;
use crate::case::paths::{fixture_dir, plain_name, probe_path, relative_file, segment};
use crate::case::{Case, Format};
use crate::error::BadInput;
use crate::knob::{infos, Info};
use crate::run::runner::{RunError, Target};
use crate::run::CaseResult;
use crate::suites::{Context, FuzzError, FuzzNews, FuzzReport, FuzzRun, Stopped, Suite};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The HCP runtime contract (spec 000): hcpspec drives a runtime through its shim.
pub struct Contract;

impl Format for Contract {
    fn body(&self) -> &'static str {
        "steps"
    }
    fn schema(&self) -> &'static jsonschema::Validator {
        crate::schema::case()
    }
    fn check(&self, case: &Case, denials: &Denials) -> Result<(), (String, String)> {
        crate::case::check_expects(case.member("steps"), "/steps", "expect", denials)?;
        let body = Body::of(case).map_err(|e| (String::new(), e.0))?;
        check_paths(&body)
    }
    fn check_fixtures(&self, case: &Case, vectors: &Path) -> Result<(), (String, String)> {
        let body = Body::of(case).map_err(|e| (String::new(), e.0))?;
        check_fixtures(&body, vectors)
    }
}

impl Suite for Contract {
    fn drives(&self) -> &'static str {
        "hcp-runtime"
    }
    fn first_step(&self, case: &Case) -> usize {
        Body::of(case).map_or(0, |b| usize::from(super::implicit_install(&b)))
    }
    fn noun(&self) -> &'static str {
        "runtime"
    }
    fn judged(&self, case: &Case, failure: &crate::run::Failure) -> crate::suites::Judged {
        // The implicit install and a step's implicit "must be ok" are arrangement.
        crate::suites::judged_by_step(case, failure, "/steps", self.first_step(case))
    }
    fn runs_unnamed(&self) -> bool {
        true
    }
    fn target(&self, spec: &str, ctx: &Context) -> Result<Arc<dyn Target>, String> {
        let connect = super::shim::connector(spec, &ctx.options).map_err(|e| e.0)?;
        let env = RunEnv::new(&ctx.vectors, &ctx.probe).map_err(|e| e.0)?;
        Ok(Arc::new(Runtime {
            spec: spec.to_string(),
            connect,
            env,
            claims: OnceLock::new(),
        }))
    }
    fn mutants(&self) -> Vec<Info> {
        infos::<crate::suites::hcp::runtime::mutant::Mutant>()
    }
    /// Generated cases (not the suite's own), `run.jobs` at a time from `run.seed`, each judged
    /// by the oracles and, on another runtime than the reference, against the reference; each
    /// finding shrunk, written under `run.out` and told as it comes. A case that ended in an
    /// error after its install is counted `unplayable`; a stop by `run.stop` is `stopped`.
    fn fuzz(&self, run: &FuzzRun) -> Option<Result<FuzzReport, FuzzError>> {
        Some(fuzz(run))
    }
    fn variants(&self) -> Vec<Info> {
        let mut v = infos::<crate::suites::hcp::runtime::variant::Variant>();
        v.push(Info {
            name: "all",
            about: "every variant's choice at once",
            sections: &[],
        });
        v.extend(crate::knob::freedoms());
        v
    }
}

/// An HCP runtime behind a shim: a fresh adapter per case, judged by what it claimed in
/// `initialize`.
pub struct Runtime {
    spec: String,
    connect: Connector,
    env: RunEnv,
    claims: OnceLock<Claims>,
}

impl Target for Runtime {
    fn spec(&self) -> &str {
        &self.spec
    }
    fn describe(&self) -> Result<Value, String> {
        let info = (self.connect)().and_then(|mut a| {
            a.call("initialize", crate::shim::greeting())
                .map_err(|e| e.to_string())
        })?;
        // Its word map compiles regexes: once per target, however many runs describe it.
        self.claims.get_or_init(|| Claims::from_initialize(&info));
        Ok(info)
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        let claims = self.claims.get_or_init(Claims::default);
        match (self.connect)() {
            Ok(mut adapter) => run_case(case, adapter.as_mut(), &self.env, claims),
            Err(e) => CaseResult::of(
                case,
                crate::run::Verdict::Error {
                    message: crate::snapshot::contain_text(&e),
                },
                vec![],
                vec![],
                std::time::Instant::now(),
            ),
        }
    }
}

/// What an embedded runtime claims in `initialize` (its denial and rule maps, its features).
pub fn embedded_claims(name: &str) -> Option<Claims> {
    let info = super::shim::inproc(name)?
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
    pub fn new(vectors: &Path, probe: &Path) -> Result<RunEnv, BadInput> {
        let denials = crate::case::load_denials(vectors).map_err(|e| BadInput(e.to_string()))?;
        let probe = probe.canonicalize().map_err(|e| {
            BadInput(format!(
                "hcpspec-probe not found at {}: {e}",
                probe.display()
            ))
        })?;
        let bins = tempfile::Builder::new()
            .prefix("hcpspec-bin")
            .tempdir()
            .map_err(|e| BadInput(e.to_string()))?;
        for name in ["hcpspec-probe", "other-probe"] {
            std::os::unix::fs::symlink(&probe, bins.path().join(name))
                .map_err(|e| BadInput(format!("cannot link {name}: {e}")))?;
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

fn fuzz(run: &FuzzRun) -> Result<FuzzReport, FuzzError> {
    let mut env = RunEnv::new(run.vectors, &RunEnv::self_probe())?;
    env.uncapped = true; // the oracles judge whole observations; findings cap nothing they need
    let cfg = super::fuzz::Config {
        runtime: run.spec.to_string(),
        seed: run.seed,
        seconds: run.seconds,
        max_cases: run.trials,
        jobs: run.jobs.max(1),
        max_findings: run.findings,
        out: Some(run.out.to_path_buf()),
        shrink_budget: run.shrink_budget,
        partition: run.partition,
    };
    let fuzzer = super::fuzz::Fuzzer::new(cfg, &env)?;
    (run.tell)(FuzzNews::Started);
    let r = fuzzer
        .run(run.stop, &|p| (run.tell)(FuzzNews::Progress(p)), &|f| {
            (run.tell)(FuzzNews::Found(f))
        })
        .map_err(|e| match e {
            super::fuzz::FuzzError::Unreachable { runtime, why } => {
                FuzzError::Runtime(RunError::Unreachable {
                    spec: runtime,
                    message: why,
                })
            }
            // A panicking worker has always ended the command as exit 2, with its message.
            panicked @ super::fuzz::FuzzError::Panicked { .. } => {
                FuzzError::Input(panicked.to_string().into())
            }
        })?;
    Ok(FuzzReport {
        cases: r.cases,
        findings: r
            .findings
            .iter()
            .map(|f| {
                (
                    f.rule.to_string(),
                    format!("case {}", f.case_index),
                    f.path.clone(),
                )
            })
            .collect(),
        found_after: r.findings.iter().map(|f| f.after).collect(),
        unplayable: r.errors,
        unplayable_named: r
            .errors_named
            .iter()
            .map(|e| (e.error.clone(), format!("case {}", e.case_index)))
            .collect(),
        stopped: r.interrupted.then_some(Stopped::Interrupted),
        elapsed: r.elapsed,
    })
}

/// Every path the case names, checked without touching the file system.
fn check_paths(body: &Body) -> Result<(), (String, String)> {
    let bad = |pointer: String, message: String| (pointer, message);
    for (i, p) in body.setup.packs.iter().enumerate() {
        let here = format!("/setup/packs/{i}");
        match p {
            PackRef::Fixture(name) => {
                plain_name(name).map_err(|m| bad(here.clone(), String::from(m)))?
            }
            PackRef::Inline(inline) => {
                if let Some(name) = &inline.name {
                    plain_name(name).map_err(|m| bad(format!("{here}/name"), String::from(m)))?;
                }
                if let Some(from) = &inline.from {
                    plain_name(from).map_err(|m| bad(format!("{here}/from"), String::from(m)))?;
                }
                for (field, map) in [("files", &inline.files), ("patch", &inline.patch)] {
                    for key in map.keys() {
                        relative_file(key).map_err(|m| {
                            bad(format!("{here}/{field}/{}", segment(key)), String::from(m))
                        })?;
                    }
                }
            }
        }
    }
    for (path, target) in &body.setup.links {
        let here = format!("/setup/links/{}", segment(path));
        super::links::check(path, target).map_err(|m| bad(here, m))?;
    }
    for (i, step) in body.steps.iter().enumerate() {
        if let Action::Probe(path) = &step.action {
            probe_path(path).map_err(|m| bad(format!("/steps/{i}/probe"), String::from(m)))?;
        }
    }
    Ok(())
}

/// The fixture packs a case names (by name or `from`), each a directory of `vectors/packs/`
/// that really is inside it (a symlink out of the vectors tree is refused).
fn check_fixtures(body: &Body, vectors: &Path) -> Result<(), (String, String)> {
    let fixtures = vectors.join("packs");
    for (i, p) in body.setup.packs.iter().enumerate() {
        let (name, pointer) = match p {
            PackRef::Fixture(name) => (name, format!("/setup/packs/{i}")),
            PackRef::Inline(inline) => match &inline.from {
                Some(from) => (from, format!("/setup/packs/{i}/from")),
                None => continue,
            },
        };
        fixture_dir(&fixtures, name).map_err(|message| (pointer, String::from(message)))?;
    }
    Ok(())
}
