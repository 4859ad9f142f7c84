//! `hcpspec fuzz`: a black-box, structure-aware protocol fuzzer against any runtime.
//!
//! Case number `i` of a run seeded with `s` is generated from its own PRNG stream
//! ([`Rng::for_case`]), runs through `run::run_case` on the runtime under test and on the
//! reference, and is judged by the [`oracle`]s. Every case that breaks a rule is shrunk
//! ([`shrink`]); a shrunk case whose signature (the rule and a hash of the shrunk input) the run
//! has not found yet is written as a regression case under the output directory
//! (`vectors/found/<signature>.json`), after checking that the written case passes on the
//! reference and does not pass on the runtime. A case's signature depends on that case alone, so
//! the shards of a partitioned run (`Config::partition`) find together what the whole run finds.

pub mod differential;
mod grants;
pub mod oracle;
pub mod shrink;
pub mod targets;

use crate::adapter::{Adapter, Connector, Inproc};
use crate::case::matcher::Claims;
use crate::error::BadInput;
use crate::hash::fnv1a_parts;
use crate::mutate::Rng;
use crate::run::{CaseResult, Verdict};
use crate::suites::hcp::mutate::case::{case_json, generate, CaseMeta, FuzzCase};
use crate::suites::hcp::mutate::pack::Fixture;
use crate::suites::hcp::{run_case, RunEnv};
use crate::suites::{FuzzFinding, FuzzProgress};
use oracle::{Classes, Ctx, Model, Violation};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest a fuzz run may be told to last, in seconds (`--seconds`): a week.
pub const MAX_SECONDS: f64 = 7.0 * 86400.0;

#[derive(Debug, Clone)]
pub struct Config {
    /// The runtime under test, as `--runtime` takes it (`inproc:mutant:no-confirm-gate`, …).
    pub runtime: String,
    pub seed: u64,
    /// Stop generating after this long.
    pub seconds: f64,
    /// Stop generating after this many cases.
    pub max_cases: Option<u64>,
    pub jobs: usize,
    /// Stop after this many findings.
    pub max_findings: Option<usize>,
    /// Where findings are written (`vectors/found`); `None` keeps them in memory.
    pub out: Option<PathBuf>,
    /// Runs of a case the shrinker may spend on one finding (0: no shrinking).
    pub shrink_budget: usize,
    /// `(k, n)`: play only the case numbers `i` with `i % n == k - 1` (shard k of n, 1-based).
    pub partition: Option<(u64, u64)>,
}

impl Config {
    pub fn new(runtime: &str) -> Config {
        Config {
            runtime: runtime.into(),
            seed: 1,
            seconds: 60.0,
            max_cases: None,
            jobs: 1,
            max_findings: None,
            out: None,
            shrink_budget: 400,
            partition: None,
        }
    }
}

#[derive(Debug)]
pub struct Report {
    pub cases: u64,
    /// Cases whose run on the runtime ended in an error (transport, protocol) after a successful
    /// install: a runtime that errors on everything finds nothing, so this must stay low.
    pub errors: u64,
    pub elapsed: Duration,
    pub findings: Vec<FuzzFinding>,
    /// Differences on points the spec leaves to the runtime, written as `PROFILE` cases: reported,
    /// never a finding (they fail no run).
    pub profile: Vec<FuzzFinding>,
    /// The first [`ERRORS_NAMED`] of the `errors`, by case number.
    pub errors_named: Vec<ErrorCase>,
    /// Stopped by the caller's stop flag (Ctrl-C) before the budget ran out.
    pub interrupted: bool,
}

/// How many of the cases that ended in an error a run names (the rest are counted):
/// docs/security.md.
pub const ERRORS_NAMED: usize = 10_000;

/// A case whose run on the runtime ended in an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCase {
    pub case_index: u64,
    /// The generator's seed of the case (what its canary is made of).
    pub case_seed: u64,
    /// The error's first line.
    pub error: String,
}

/// Why a fuzz run ended without its report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FuzzError {
    /// The runtime could not be reached, at the start or in the middle of the run (exit 3).
    #[error("runtime {runtime} unreachable: {why}")]
    Unreachable { runtime: String, why: String },
    /// A worker panicked: a bug to reproduce on one job from the seed.
    #[error("a fuzz worker panicked; rerun with --jobs 1 --seed {seed} to reproduce")]
    Panicked { seed: u64 },
}

/// One fuzz case run on the runtime and (when it is another) the reference, and judged.
pub struct Judged {
    pub violations: Vec<Violation>,
    pub runtime: CaseResult,
    pub reference: Option<CaseResult>,
}

/// The adapters of one worker: the runtime under test (reconnected after a broken transport)
/// and the reference.
struct Adapters<'c> {
    connect: &'c Connector,
    runtime: Option<Box<dyn Adapter>>,
    reference: Inproc,
}

impl Adapters<'_> {
    fn runtime(&mut self) -> Result<&mut Box<dyn Adapter>, String> {
        if self.runtime.is_none() {
            self.runtime = Some((self.connect)()?);
        }
        Ok(self.runtime.as_mut().expect("connected above"))
    }
}

pub struct Fuzzer<'e> {
    pub cfg: Config,
    env: &'e RunEnv,
    pub fixtures: Vec<Fixture>,
    connect: Connector,
    classes: Classes,
    /// What the runtime under test claimed in `initialize` (its denial and rule maps).
    claims: Claims,
    /// The runtime under test is not the reference itself.
    differential: bool,
}

impl<'e> Fuzzer<'e> {
    pub fn new(cfg: Config, env: &'e RunEnv) -> Result<Fuzzer<'e>, BadInput> {
        let fixtures = Fixture::load_all(&env.vectors.join("packs"))?;
        if fixtures.is_empty() {
            return Err(BadInput(format!(
                "no fixture packs under {}",
                env.vectors.join("packs").display()
            )));
        }
        let connect = super::shim::connector(&cfg.runtime, &Default::default())?;
        let claims = connect()
            .and_then(|mut a| {
                a.call("initialize", crate::shim::greeting())
                    .map_err(|e| e.to_string())
            })
            .map(|info| Claims::from_initialize(&info))
            .unwrap_or_default();
        Ok(Fuzzer {
            claims,
            differential: cfg.runtime != "inproc:reference",
            classes: Classes::new(&crate::suites::hcp::runtime::denial_map()),
            cfg,
            env,
            fixtures,
            connect,
        })
    }

    fn unreachable(&self, why: String) -> FuzzError {
        FuzzError::Unreachable {
            runtime: self.cfg.runtime.clone(),
            why,
        }
    }

    /// The number of the `j`-th case this run plays: `j` itself, or with a partition k/n the
    /// `j`-th number `i` with `i % n == k - 1`. Striding rather than blocks needs no count, so
    /// a time-bounded shard is defined too, and a shard stopped early has played the low numbers
    /// as every other shard has.
    pub fn index(&self, j: u64) -> Option<u64> {
        match self.cfg.partition {
            None => Some(j),
            Some((k, n)) => j.checked_mul(n)?.checked_add(k.checked_sub(1)?),
        }
    }

    /// The fuzz case number `index` of this run.
    pub fn case(&self, index: u64) -> FuzzCase {
        let mut rng = Rng::for_case(self.cfg.seed, index);
        let seed = rng.next_u64();
        generate(&mut rng, &self.fixtures, seed)
    }

    fn adapters(&self) -> Adapters<'_> {
        Adapters {
            connect: &self.connect,
            runtime: None,
            reference: super::shim::inproc("reference").expect("the reference is embedded"),
        }
    }

    fn observations(result: &CaseResult, slots: usize) -> Vec<Option<&Value>> {
        let mut out = vec![None; slots];
        for o in &result.observations {
            if let Some(x) = out.get_mut(o.step) {
                *x = Some(&o.value);
            }
        }
        out
    }

    fn judge(&self, ad: &mut Adapters, fc: &FuzzCase, index: u64) -> Result<Judged, String> {
        let case = fc.to_case(&self.fixtures, CaseMeta::explore(index), &BTreeMap::new());
        let runtime = run_case(&case, ad.runtime()?.as_mut(), self.env, &self.claims);
        if matches!(&runtime.verdict, Verdict::Error { .. }) {
            ad.runtime = None; // a broken transport: the next case reconnects
        }
        let reference = self
            .differential
            .then(|| run_case(&case, &mut ad.reference, self.env, &reference_claims()));
        let model = Model::of(fc, &self.fixtures);
        let ctx = Ctx {
            case: fc,
            model: &model,
            layout: fc.layout(),
            classes: &self.classes,
            claims: &self.claims,
        };
        let n = ctx.layout.len();
        let obs = Self::observations(&runtime, n);
        let ref_obs = reference.as_ref().map(|r| Self::observations(r, n));
        let mut violations = oracle::invariants(&ctx, &obs, ref_obs.as_deref());
        if let (Some(r), Some(ro)) = (&reference, &ref_obs) {
            if violations.is_empty() {
                violations = differential::differential(&ctx, &obs, ro);
            }
            if violations.is_empty() {
                if let (Verdict::Error { message }, false) =
                    (&runtime.verdict, matches!(r.verdict, Verdict::Error { .. }))
                {
                    violations.push(Violation {
                        rule: "runtime-error",
                        slot: 0,
                        expect: Value::Null,
                        message: message.clone(),
                        differential: true,
                        profile: refused_create(fc, message),
                    });
                }
            }
        }
        Ok(Judged {
            violations,
            runtime,
            reference,
        })
    }

    /// Shrink a case that broke `v`'s rule while the rule still fires: the shrunk case and its
    /// own violation (which gives the expectation's step and value).
    fn shrunk(
        &self,
        ad: &mut Adapters,
        fc: FuzzCase,
        v: &Violation,
        index: u64,
        stop: &AtomicBool,
    ) -> (FuzzCase, Violation) {
        let (rule, profile) = (v.rule, v.profile);
        let same = |x: &Violation| x.rule == rule && x.profile == profile;
        let mut still = |c: &FuzzCase| {
            self.judge(ad, c, index)
                .is_ok_and(|j| j.violations.iter().any(same))
        };
        let small = shrink::shrink(fc.clone(), &mut still, self.cfg.shrink_budget, stop);
        match self
            .judge(ad, &small, index)
            .ok()
            .and_then(|j| j.violations.into_iter().find(same))
        {
            Some(sv) => (small, sv),
            None => (fc, v.clone()),
        }
    }

    /// A finding's signature, which names its file: the rule and a hash of the shrunk input as
    /// the runtime is sent it, without the case's own seed (the canary's value), so that cases
    /// that shrink to the same input are one finding whichever case number, shard or job found
    /// them.
    pub fn signature(&self, rule: &str, small: &FuzzCase) -> String {
        let mut input = small.clone();
        if input.canary == FuzzCase::plain(input.seed).canary {
            input.canary = FuzzCase::plain(0).canary;
        }
        input.seed = 0;
        let case = input.to_case(&self.fixtures, CaseMeta::explore(0), &BTreeMap::new());
        let hash = fnv1a_parts([
            rule.as_bytes().to_vec(),
            serde_json::to_vec(&case_json(&case)).unwrap_or_default(),
        ]);
        format!("{rule}-{}", &hash[..8])
    }

    /// Render, check and write one shrunk finding as the case file `<signature>.json`.
    fn finding(
        &self,
        ad: &mut Adapters,
        (small, v): (FuzzCase, Violation),
        index: u64,
        after: Duration,
        signature: String,
        steps_before: usize,
    ) -> FuzzFinding {
        let rule = v.rule;
        let r = oracle::rule(rule);
        let mut expects = BTreeMap::new();
        if !v.expect.is_null() {
            expects.insert(v.slot, v.expect.clone());
        }
        let meta = |id: String| {
            CaseMeta {
            file: self
                .cfg
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("vectors/found"))
                .join(format!("{id}.json")),
            id,
            title: format!("fuzz: {}", r.title),
            section: r.section.to_string(),
            spec: r.spec.to_string(),
            assumption: Some(format!(
                "Found by `hcpspec fuzz --runtime {} --seed {}` (case {index}, case seed {:#x}): the oracle `{rule}` ({}) fired: {}. The expectation is what the reference runtime (inproc:reference) does on the same input; the steps without one are observed only.{}",
                self.cfg.runtime,
                self.cfg.seed,
                small.seed,
                if v.differential { "differential agreement with the reference" } else { "fail-closed invariant" },
                v.message,
                if v.profile { " PROFILE: the spec leaves this point to the runtime (vectors/contract/ASSUMPTIONS.md); hcpspec's reference decides it this way." } else { "" },
            )),
            notes: true,
        }
        };
        let id = signature.clone();
        let mut case = small.to_case(&self.fixtures, meta(id.clone()), &expects);
        if v.profile {
            case.level = crate::case::Level::PROFILE;
        }
        let on_reference = run_case(&case, &mut ad.reference, self.env, &reference_claims());
        let on_runtime = ad
            .runtime()
            .map(|a| run_case(&case, a.as_mut(), self.env, &self.claims));
        let reproduces = matches!(on_reference.verdict, Verdict::Pass)
            && on_runtime.is_ok_and(|r| !matches!(r.verdict, Verdict::Pass));
        let path = self.cfg.out.as_ref().and_then(|dir| {
            let path = dir.join(format!("{id}.json"));
            let text = crate::suites::hcp::mutate::case::pretty(&case_json(&case));
            std::fs::create_dir_all(dir).ok()?;
            std::fs::write(&path, text).ok()?;
            Some(path)
        });
        FuzzFinding {
            rule,
            profile: v.profile,
            signature,
            message: v.message.clone(),
            case_index: index,
            after,
            steps: (
                steps_before,
                crate::suites::hcp::steps::Body::of(&case).map_or(0, |b| b.steps.len()),
            ),
            case,
            path,
            reproduces,
        }
    }

    /// Fuzz until the time or case budget runs out, `max_findings` are found, or `stop` is set.
    /// `on_progress` is called about once a second, `on_finding` for each finding as it is
    /// written.
    /// The runtime under test could not be reached (exit 3, as `run` says it).
    pub fn run(
        &self,
        stop: &AtomicBool,
        on_progress: &(dyn Fn(FuzzProgress) + Sync),
        on_finding: &(dyn Fn(&FuzzFinding) + Sync),
    ) -> Result<Report, FuzzError> {
        self.run_observed(stop, on_progress, on_finding, &|_| {})
    }

    /// [`Self::run`], telling `on_case` the number of every case played, once judged.
    pub fn run_observed(
        &self,
        stop: &AtomicBool,
        on_progress: &(dyn Fn(FuzzProgress) + Sync),
        on_finding: &(dyn Fn(&FuzzFinding) + Sync),
        on_case: &(dyn Fn(u64) + Sync),
    ) -> Result<Report, FuzzError> {
        // Reachable at all? (exit 3 otherwise, like `run`)
        (self.connect)().map_err(|why| self.unreachable(why))?;
        let start = Instant::now();
        let sh = Shared {
            start,
            // Bounded, so that no number of seconds can overflow an Instant (a week at most).
            deadline: start
                + Duration::try_from_secs_f64(self.cfg.seconds.clamp(0.0, MAX_SECONDS))
                    .unwrap_or(Duration::ZERO),
            stop,
            next: AtomicU64::new(0),
            cases: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            done: AtomicBool::new(false),
            claimed: Mutex::new(BTreeSet::new()),
            findings: Mutex::new(Vec::new()),
            profile: Mutex::new(Vec::new()),
            profile_rules: Mutex::new(BTreeSet::new()),
            errors_named: Mutex::new(Vec::new()),
            failure: Mutex::new(None),
        };
        std::thread::scope(|s| {
            for _ in 0..self.cfg.jobs.max(1) {
                s.spawn(|| {
                    let work =
                        std::panic::AssertUnwindSafe(|| self.worker(&sh, on_finding, on_case));
                    if std::panic::catch_unwind(work).is_err() {
                        lock(&sh.failure).get_or_insert(FuzzError::Panicked {
                            seed: self.cfg.seed,
                        });
                    }
                    sh.done.store(true, Ordering::Relaxed);
                });
            }
            let mut last = Instant::now();
            while !sh.done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20));
                if last.elapsed() >= Duration::from_secs(1) {
                    last = Instant::now();
                    on_progress(FuzzProgress {
                        cases: sh.cases.load(Ordering::Relaxed),
                        errors: sh.errors.load(Ordering::Relaxed),
                        findings: lock(&sh.findings).len(),
                        elapsed: start.elapsed(),
                    });
                }
            }
        });
        if let Some(e) = sh.failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        let order = |all: Mutex<Vec<FuzzFinding>>| {
            let mut all = all.into_inner().unwrap_or_else(|p| p.into_inner());
            all.sort_by(|a, b| {
                (a.case_index, a.rule, &a.signature).cmp(&(b.case_index, b.rule, &b.signature))
            });
            all
        };
        let findings = order(sh.findings);
        let profile = order(sh.profile);
        let mut errors_named = sh
            .errors_named
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        errors_named.sort_by_key(|e| e.case_index);
        Ok(Report {
            cases: sh.cases.load(Ordering::Relaxed),
            errors: sh.errors.load(Ordering::Relaxed),
            elapsed: start.elapsed(),
            findings,
            profile,
            errors_named,
            interrupted: stop.load(Ordering::Relaxed),
        })
    }

    fn worker(
        &self,
        sh: &Shared,
        on_finding: &(dyn Fn(&FuzzFinding) + Sync),
        on_case: &(dyn Fn(u64) + Sync),
    ) {
        let mut ad = self.adapters();
        let finished = || sh.done.load(Ordering::Relaxed) || sh.stop.load(Ordering::Relaxed);
        while !finished() && Instant::now() < sh.deadline {
            let Some(index) = self.index(sh.next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            if self.cfg.max_cases.is_some_and(|m| index >= m) {
                break;
            }
            let fc = self.case(index);
            let judged = match self.judge(&mut ad, &fc, index) {
                Ok(j) => j,
                Err(why) => {
                    *lock(&sh.failure) = Some(self.unreachable(why));
                    break;
                }
            };
            sh.cases.fetch_add(1, Ordering::Relaxed);
            on_case(index);
            let installed = judged
                .runtime
                .observations
                .first()
                .is_some_and(|o| o.value["ok"] == true);
            if let (true, Verdict::Error { message }) = (installed, &judged.runtime.verdict) {
                sh.errors.fetch_add(1, Ordering::Relaxed);
                let mut named = lock(&sh.errors_named);
                if named.len() < ERRORS_NAMED {
                    named.push(ErrorCase {
                        case_index: index,
                        case_seed: fc.seed,
                        // Quoting the runtime: cut and redacted as reports keep texts.
                        error: crate::snapshot::contain_text(
                            message.lines().next().unwrap_or_default(),
                        ),
                    });
                }
            }
            // Every rule the case broke, shrunk; kept when no case found its signature before.
            let mut rules = BTreeSet::new();
            for v in &judged.violations {
                if !rules.insert((v.rule, v.profile)) {
                    continue;
                }
                // A difference on an open point is reported once per rule: shrinking each would
                // spend the run on what fails nothing.
                if v.profile && !lock(&sh.profile_rules).insert(v.rule) {
                    continue;
                }
                let after = sh.start.elapsed();
                let small = self.shrunk(&mut ad, fc.clone(), v, index, sh.stop);
                let signature = self.signature(v.rule, &small.0);
                if !lock(&sh.claimed).insert(signature.clone()) {
                    continue;
                }
                let steps = fc.layout().len();
                let f = self.finding(&mut ad, small, index, after, signature, steps);
                on_finding(&f);
                if f.profile {
                    lock(&sh.profile).push(f);
                    continue;
                }
                let mut all = lock(&sh.findings);
                all.push(f);
                if self.cfg.max_findings.is_some_and(|m| all.len() >= m) {
                    sh.done.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    }
}

/// What the workers of one run share.
struct Shared<'s> {
    start: Instant,
    deadline: Instant,
    stop: &'s AtomicBool,
    next: AtomicU64,
    cases: AtomicU64,
    errors: AtomicU64,
    done: AtomicBool,
    /// The signatures found so far.
    claimed: Mutex<BTreeSet<String>>,
    findings: Mutex<Vec<FuzzFinding>>,
    profile: Mutex<Vec<FuzzFinding>>,
    /// The rules reported as `PROFILE` so far.
    profile_rules: Mutex<BTreeSet<&'static str>>,
    errors_named: Mutex<Vec<ErrorCase>>,
    failure: Mutex<Option<FuzzError>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A `runtime.create` answered "invalid params" for an input the spec lets a runtime refuse:
/// a blank Principal id or kind, a blank tenant or project (spec 000 gives such ids no
/// meaning). The runtime said no; it did not break.
fn refused_create(fc: &FuzzCase, message: &str) -> bool {
    let blank = |s: &str| s.trim().is_empty();
    message.starts_with("step 0 (install): ")
        && message.ends_with(&format!("(code {})", crate::shim::INVALID_PARAMS))
        && (blank(&fc.principal.id)
            || blank(&fc.principal.kind)
            || fc.tenant_id.as_deref().is_some_and(blank)
            || fc.project_id.as_deref().is_some_and(blank))
}

/// The reference, judged by its own maps.
fn reference_claims() -> Claims {
    crate::suites::hcp::embedded_claims("reference").unwrap_or_default()
}
