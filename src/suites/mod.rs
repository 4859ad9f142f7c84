//! The suites: each folder here is one suite's code, beside its folder of vectors, and
//! implements [`Suite`]; [`ALL`] is the registry. Everything else (the loader, the runner, the
//! self-check, the CLI) asks a suite through the trait and never by its name.

use crate::error::{BadInput, Unreachable};

pub mod core_api;
pub mod harness_api;
pub mod hcp;
pub mod host;
pub mod ledger;
pub mod selfcheck;
pub mod serve;
pub mod world;

use crate::case::{Case, CaseError, Format, SuiteInfo};
use crate::knob::Info;
use crate::run::runner::Target;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Cases a run takes at once for a suite whose cases mostly wait on scripted clocks, not on
/// the CPU (harness-api's scenarios, core-api's cases). Measured on 2 cores under a build: every
/// variant of both passes every MUST case at 16, three runs in three.
pub const WAITING_JOBS: usize = 16;

/// The suites hcpspec ships: one line each.
pub static ALL: &[&dyn Suite] = &[
    &hcp::Contract,
    &harness_api::HarnessApi,
    &core_api::CoreApi,
    &host::Host,
];

/// Suites registered at run time (a plug-in, or a test's own suite), after [`ALL`].
static PLUGINS: RwLock<Vec<&'static dyn Suite>> = RwLock::new(Vec::new());

/// One kind of implementation hcpspec certifies, with everything the shared code asks of it:
/// the case format (through [`Format`]), how a spec becomes a [`Target`], its typed mutants
/// and variants, and what its targets are called.
pub trait Suite: Format + Sync {
    /// The `drives` of a `suite.json` that this code drives: `hcp-runtime`, `harness` …
    fn drives(&self) -> &'static str;
    /// What its targets are called in reports: runtime, harness, core, adapter.
    fn noun(&self) -> &'static str;
    /// The target a spec names (`inproc:reference`, `inproc:mutant:NAME`, `stdio:CMD` …): parsed
    /// once into a [`crate::spec::Spec`] and matched on, a kind it does not drive refused in its
    /// own words; a bad spec is one line naming it.
    fn target(&self, spec: &str, ctx: &Context) -> Result<Arc<dyn Target>, String>;
    /// Its embedded reference's mutants, each with its rule and sections.
    fn mutants(&self) -> Vec<Info>;
    /// Its embedded reference's allowed variants, each with the point it decides.
    fn variants(&self) -> Vec<Info>;
    /// Whether `--runtime SPEC` without `--suite` runs this suite for a spec that is not
    /// in-process. A shim over stdio is read as an HCP runtime's: the core and host shims speak
    /// the same transports, so those suites run only when named.
    fn runs_unnamed(&self) -> bool {
        false
    }
    /// Its black-box fuzzer (`hcpspec fuzz --suite NAME`): mutated or generated cases played
    /// on `spec`, judged by the suite's invariants, findings written under `out` as cases. None
    /// when it has none.
    fn fuzz(&self, _run: &FuzzRun) -> Option<Result<FuzzReport, FuzzError>> {
        None
    }
    /// The number failures give a case's first written step (`steps[0]`): 0, or 1 where the
    /// suite plays an implicit first step (the contract's install). `hcpspec explain` numbers
    /// the steps it prints so.
    fn first_step(&self, _case: &Case) -> usize {
        0
    }
    /// What `hcpspec shim --runtime PREFIX:NAME` serves of this suite: its embedded targets
    /// whose shim holds a whole case (a core's control shim, a host shim).
    fn shim(&self) -> Option<Shim> {
        None
    }
    /// Cases a run takes at once when `--jobs` is not given: the cores for a suite whose cases
    /// compute; a suite whose cases mostly wait on scripted clocks takes [`WAITING_JOBS`].
    fn jobs(&self, cores: usize) -> usize {
        cores
    }
    /// Cases its self-check runs at once (a suite whose cases mostly wait takes more).
    fn self_check_jobs(&self) -> usize {
        2
    }
    /// What a failure of `case` was on: an expectation the case wrote, a check every case runs,
    /// or an arrangement (a step written without `expect`, the contract's implicit "must be
    /// ok", a fuzzer's invariant). Only the first two prove a ledger row's killer.
    fn judged(&self, case: &Case, failure: &crate::run::Failure) -> Judged;
    /// The checks every one of its cases runs, by name (host's always-checks, harness-api's
    /// checks of every scenario): a ledger row may claim one.
    fn checks(&self) -> Vec<&'static str> {
        vec![]
    }
}

/// What a failure was on (see [`Suite::judged`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged {
    /// An expectation the case wrote: a step's `expect`, a check its scenario lists.
    Written,
    /// A check every case of the suite runs, by name.
    Check(String),
    /// Arrangement: not what the case is there to check.
    Arrangement,
}

/// [`Suite::judged`] for a suite whose cases are steps in an array at `pointer` of the case
/// (`/steps`, `/script/steps`), the failure's step counted from `first`: a step with `expect`.
pub fn judged_by_step(
    case: &Case,
    failure: &crate::run::Failure,
    pointer: &str,
    first: usize,
) -> Judged {
    let body = serde_json::Value::Object(case.body.clone());
    let written = failure
        .step
        .checked_sub(first)
        .and_then(|i| body.pointer(&format!("{pointer}/{i}/expect")))
        .is_some();
    if written {
        Judged::Written
    } else {
        Judged::Arrangement
    }
}

/// One `hcpspec fuzz --suite NAME` run: the target, the seed cases, the budget, where findings go.
pub struct FuzzRun<'a> {
    pub spec: &'a str,
    pub cases: &'a [Case],
    pub seed: u64,
    pub seconds: f64,
    pub trials: Option<u64>,
    pub findings: Option<usize>,
    pub out: &'a Path,
    pub stop: &'a std::sync::atomic::AtomicBool,
    /// Cases played at once, where the fuzzer plays several (the contract's).
    pub jobs: usize,
    /// `(k, n)`: play shard k of n of the case numbers, where the fuzzer numbers its cases (the
    /// contract's).
    pub partition: Option<(u64, u64)>,
    /// Runs of a case the shrinker may spend on one finding, where the fuzzer shrinks (the
    /// contract's).
    pub shrink_budget: usize,
    /// The vectors folder: fixture packs, denial classes.
    pub vectors: &'a Path,
    /// Told as the fuzzer goes, where it tells (the contract's: its progress, each finding).
    pub tell: &'a (dyn Fn(FuzzNews) + Sync),
}

/// What a fuzzer tells while it runs.
pub enum FuzzNews<'a> {
    /// The target was reached: the first case is about to play.
    Started,
    Progress(FuzzProgress),
    Found(&'a FuzzFinding),
}

/// One rule a target broke, as a written regression case (the contract's fuzzer tells each).
#[derive(Debug, Clone)]
pub struct FuzzFinding {
    pub rule: &'static str,
    /// On a point the spec leaves to the runtime: a `PROFILE` case, reported, never failing.
    pub profile: bool,
    /// The rule and a hash of the shrunk case's input: what names its file, and what makes two
    /// findings of one rule two.
    pub signature: String,
    pub message: String,
    /// The number of the case that first broke the rule.
    pub case_index: u64,
    /// Time from the start of the run to the case that found it.
    pub after: std::time::Duration,
    /// The regression case (shrunk).
    pub case: Case,
    pub path: Option<PathBuf>,
    /// The written case passes on the reference and does not pass on the runtime.
    pub reproduces: bool,
    /// Steps of the case as found and as shrunk.
    pub steps: (usize, usize),
}

/// How far a fuzzer is (the contract's tells it every second).
#[derive(Debug, Clone, Copy)]
pub struct FuzzProgress {
    pub cases: u64,
    /// Cases whose run on the runtime ended in an error after a successful install.
    pub errors: u64,
    pub findings: usize,
    pub elapsed: std::time::Duration,
}

/// A suite's embedded shim: `PREFIX:NAME` (`core:reference`, `host:mutant:…`), the protocol it
/// speaks, and a maker of a fresh one named NAME (`reference`, `mutant:…`, `variant:…`).
pub struct Shim {
    pub prefix: &'static str,
    pub protocol: &'static str,
    pub make: fn(&str) -> Option<Box<dyn crate::adapter::Adapter>>,
}

/// What building a target may need besides its spec.
#[derive(Clone)]
pub struct Context {
    /// The vectors folder: fixture packs, denial classes.
    pub vectors: PathBuf,
    /// The `hcpspec-probe` executable the contract suite's fixture packs run.
    pub probe: PathBuf,
    /// Deadlines and caps of the adapters.
    pub options: crate::adapter::Options,
}

impl Context {
    pub fn new(vectors: &Path, probe: &Path) -> Context {
        Context {
            vectors: vectors.to_path_buf(),
            probe: probe.to_path_buf(),
            options: Default::default(),
        }
    }
}

/// Add a suite to the registry for the rest of the process; a `drives` already taken is refused.
pub fn register(suite: &'static dyn Suite) -> Result<(), BadInput> {
    let mut plugins = PLUGINS.write().unwrap_or_else(|p| p.into_inner());
    if ALL
        .iter()
        .chain(plugins.iter())
        .any(|s| s.drives() == suite.drives())
    {
        return Err(BadInput(format!(
            "a suite driving `{}` is already registered",
            suite.drives()
        )));
    }
    plugins.push(suite);
    Ok(())
}

/// The suite that drives `kind`, if any is registered.
pub fn find(kind: &str) -> Option<&'static dyn Suite> {
    let plugins = PLUGINS.read().unwrap_or_else(|p| p.into_inner());
    ALL.iter()
        .chain(plugins.iter())
        .copied()
        .find(|s| s.drives() == kind)
}

/// Every registered suite, shipped ones first.
pub fn registered() -> Vec<&'static dyn Suite> {
    let plugins = PLUGINS.read().unwrap_or_else(|p| p.into_inner());
    ALL.iter().chain(plugins.iter()).copied().collect()
}

/// A folder of vectors loaded: its `suite.json`, the code that drives it, its cases.
pub struct Loaded {
    pub info: SuiteInfo,
    pub suite: &'static dyn Suite,
    pub cases: Vec<Case>,
}

/// The code for a `suite.json`, or an error naming its `drives`.
pub fn of(vectors: &Path, info: &SuiteInfo) -> Result<&'static dyn Suite, CaseError> {
    find(&info.drives).ok_or_else(|| CaseError {
        file: vectors.join(&info.name).join("suite.json"),
        pointer: "/drives".into(),
        message: format!(
            "no suite drives `{}` (known: {})",
            info.drives,
            registered()
                .iter()
                .map(|s| s.drives())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })
}

/// Load `vectors/<name>/`: its `suite.json` and every case, each checked by its suite's code.
pub fn load(vectors: &Path, name: &str) -> Result<Loaded, CaseError> {
    load_some(vectors, name, &crate::case::Keep::All)
}

/// [`load`], with only the cases `keep` keeps (see [`crate::case::load_some`]).
pub fn load_some(
    vectors: &Path,
    name: &str,
    keep: &crate::case::Keep,
) -> Result<Loaded, CaseError> {
    let info = crate::case::load_suite_info(vectors, name)?;
    let suite = of(vectors, &info)?;
    let cases = crate::case::load_some(vectors, &info, suite, keep)?;
    Ok(Loaded { info, suite, cases })
}

/// The cases of `vectors/<name>/`.
pub fn load_suite(vectors: &Path, name: &str) -> Result<Vec<Case>, CaseError> {
    load(vectors, name).map(|l| l.cases)
}

/// The first suite (by name) under `vectors` that drives `kind`: for what is bound to one kind
/// of implementation (its benches, its spec coverage).
pub fn load_driving(vectors: &Path, kind: &str) -> Result<Loaded, CaseError> {
    for name in crate::case::suite_names(vectors)? {
        let info = crate::case::load_suite_info(vectors, &name)?;
        if info.drives == kind {
            return load(vectors, &name);
        }
    }
    Err(CaseError {
        file: vectors.to_path_buf(),
        pointer: String::new(),
        message: format!("no suite drives `{kind}`"),
    })
}

/// [`crate::case::parse_case`] for a case of the suite that drives `kind`.
pub fn parse_case(
    file: &Path,
    text: &str,
    suite: &str,
    kind: &str,
    denials: &crate::case::matcher::Denials,
) -> Result<Case, CaseError> {
    let format = find(kind).ok_or_else(|| CaseError {
        file: file.to_path_buf(),
        pointer: String::new(),
        message: format!("no suite drives `{kind}`"),
    })?;
    crate::case::parse_case(file, text, suite, format, denials)
}

/// What a run of a script suite's fuzzer (core-api, host) found: cases played, findings (why,
/// the seed case, the file written), time taken.
pub struct FuzzReport {
    pub cases: u64,
    pub findings: Vec<(String, String, Option<std::path::PathBuf>)>,
    /// When each finding was in hand (found, shrunk and written), from the start, where the
    /// fuzzer keeps it.
    pub found_after: Vec<std::time::Duration>,
    /// Trials that could not be played (neither a finding nor a pass).
    pub unplayable: u64,
    /// Why the first [`UNPLAYABLE_NAMED`] unplayable trials were (why, the seed case), where the
    /// fuzzer names them (core-api): any makes the run non-green. The contract's fuzzer names
    /// here the cases that ended in an error (the error's first line, `case N`), the first
    /// `hcp::fuzz::ERRORS_NAMED` of them.
    pub unplayable_named: Vec<(String, String)>,
    /// Why the fuzzer stopped before its budget, when it did ([`Stopped`]: the target stopped
    /// answering, the CLI's exit 3; nothing more could be judged; Ctrl-C).
    pub stopped: Option<Stopped>,
    pub elapsed: std::time::Duration,
}

/// How many unplayable trials a fuzz run names (the rest are counted): docs/security.md.
pub const UNPLAYABLE_NAMED: usize = 10;

/// One trial of a script suite's fuzzer: mutate, play and judge a seed case; a finding (why, the
/// file written), if any.
pub type Trial<'a> =
    dyn FnMut(&Case, &mut crate::mutate::Rng) -> Option<(String, Option<std::path::PathBuf>)> + 'a;

impl FuzzReport {
    /// The loop of a script suite's fuzzer: until `seconds`, `max` trials or `stop`, pick a seed
    /// case and let `trial` mutate, play and judge it; `trial` answers a finding (why, the file
    /// written), if any.
    pub fn run(
        seeds: &[&Case],
        seed: u64,
        seconds: f64,
        max: Option<u64>,
        stop: &std::sync::atomic::AtomicBool,
        trial: &mut Trial,
    ) -> FuzzReport {
        Self::run_until(seeds, seed, seconds, max, None, stop, trial)
    }

    /// [`Self::run`], stopping too once `max_findings` findings are in.
    pub fn run_until(
        seeds: &[&Case],
        seed: u64,
        seconds: f64,
        max: Option<u64>,
        max_findings: Option<usize>,
        stop: &std::sync::atomic::AtomicBool,
        trial: &mut Trial,
    ) -> FuzzReport {
        use crate::mutate::Source;
        let start = std::time::Instant::now();
        let mut rng = crate::mutate::Rng::new(seed);
        let mut report = FuzzReport {
            cases: 0,
            findings: vec![],
            found_after: vec![],
            unplayable: 0,
            unplayable_named: vec![],
            stopped: None,
            elapsed: std::time::Duration::ZERO,
        };
        while !seeds.is_empty()
            && start.elapsed().as_secs_f64() < seconds
            && max.is_none_or(|m| report.cases < m)
            && max_findings.is_none_or(|m| report.findings.len() < m)
            && !stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            let case = seeds[rng.below(seeds.len())];
            report.cases += 1;
            if let Some((why, path)) = trial(case, &mut rng) {
                // What a finding says quotes the target: cut as reports keep texts.
                let why = crate::snapshot::contain_text(&why);
                report.findings.push((why, case.name(), path));
                report.found_after.push(start.elapsed());
            }
        }
        report.elapsed = start.elapsed();
        report
    }
}

/// How a whole-case shim (core-api, host) describes itself: its `describe` method, the member
/// naming what it serves, and the versions of the protocol hcpspec speaks with it.
pub struct Describe {
    pub method: &'static str,
    pub what: &'static str,
    /// Oldest first; a shim states one, and is judged by its requirement set.
    pub protocols: &'static [&'static str],
}

/// Why a shim's `describe` cannot be used: no answer, or a protocol hcpspec does not speak.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotDescribed(String);

/// A shim's `describe` answer (`{protocol, WHAT: {name, version}, redactions?}`) as the runtime
/// info reports keep: for the suites whose shim holds a whole case (core-api, host).
pub fn describe(
    spec: &str,
    connect: &crate::adapter::Connector,
    how: &Describe,
) -> Result<serde_json::Value, NotDescribed> {
    use serde_json::json;
    let (method, what, speaks) = (how.method, how.what, how.protocols);
    let d = connect()
        .and_then(|mut a| {
            a.call(method, json!({})).map_err(|e| match e {
                // A shim of another suite answers its own first method, not this one.
                e if e.not_implemented() => {
                    let hint = crate::adapter::hints::other_suite(method, &mut |m, p| a.call(m, p))
                        .map_or(String::new(), |h| format!("; {h}"));
                    format!("{method}: {e}{hint}")
                }
                e => e.to_string(),
            })
        })
        .map_err(NotDescribed)?;
    // The protocol a shim states decides what hcpspec's messages mean (docs/CHANGELOG.md): one
    // hcpspec does not speak is refused, never driven on a guess.
    if !d["protocol"].as_str().is_some_and(|p| speaks.contains(&p)) {
        return Err(NotDescribed(format!(
            "{method} states protocol {}; hcpspec speaks {} (docs/CHANGELOG.md){}",
            crate::snapshot::contain_text(&d["protocol"].to_string()),
            speaks.join(", "),
            crate::adapter::hints::stated(d["protocol"].as_str().unwrap_or_default(), method)
        )));
    }
    let mut info = json!({
        "runtime": { "name": d[what].get("name").cloned().unwrap_or(json!(spec)), "version": d[what]["version"] },
        "protocol": d["protocol"],
    });
    // What it declares random in its observations (`snapshot::Declared`), as a runtime's
    // `initialize` does.
    if let Some(r) = d.get("redactions") {
        info["redactions"] = r.clone();
    }
    Ok(info)
}

/// Whether a whole-case shim answers its `describe` before a fuzzer plays anything on it:
/// [`Unreachable`] (the CLI's exit 3) when it does not, so a shim that cannot be started or
/// answers garbage is neither a green run nor a flood of findings.
pub fn reachable(
    spec: &str,
    connect: &crate::adapter::Connector,
    how: &Describe,
) -> Result<(), Unreachable> {
    describe(spec, connect, how).map(drop).map_err(|e| {
        // Redacted and cut: `e` may quote the shim's stderr.
        Unreachable(format!(
            "{spec}: {} failed, nothing could be played: {}",
            how.method,
            crate::snapshot::contain_text(&e.to_string())
        ))
    })
}

/// The connector a whole-case shim's fuzzer plays on: the spec parsed, and the shim answering
/// its `describe` ([`reachable`]) before anything is played.
pub fn fuzz_connector(
    run: &FuzzRun,
    connector: fn(
        &crate::spec::Spec,
        &crate::adapter::Options,
    ) -> Result<crate::adapter::Connector, BadInput>,
    how: &Describe,
) -> Result<crate::adapter::Connector, FuzzError> {
    let spec = crate::spec::Spec::of_shim(run.spec).map_err(BadInput::from)?;
    let connect = connector(&spec, &Default::default())?;
    reachable(run.spec, &connect, how)?;
    Ok(connect)
}

/// Why a fuzzer stopped before its budget.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Stopped {
    /// The target stopped answering (the CLI's exit 3).
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// Nothing more could be judged (the target breaks on an unmutated seed case).
    #[error("{0}")]
    Unjudgeable(String),
    /// Stopped by Ctrl-C: the findings so far are kept.
    #[error("interrupted")]
    Interrupted,
}

/// Why a suite's fuzzer could not run: bad input (a spec, a case), or a target it cannot reach.
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    #[error(transparent)]
    Input(#[from] BadInput),
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// The runtime under test stopped answering mid-run (`runtime SPEC unreachable: …`).
    #[error(transparent)]
    Runtime(#[from] crate::run::runner::RunError),
}

/// A target whose shim takes one whole case at a time (a core's control shim, a host shim),
/// a fresh one per case: `run` plays the case on it.
pub struct ShimTarget {
    spec: crate::spec::Spec,
    /// The spec as written (reports name the target so).
    written: String,
    connect: crate::adapter::Connector,
    /// How the shim describes itself.
    describe: &'static Describe,
    run: fn(&Case, &crate::adapter::Connector) -> crate::run::CaseResult,
    /// Which cases play alone in the process (`Target::alone`); none unless the suite says.
    alone: fn(&Case) -> bool,
}

impl ShimTarget {
    /// The target `written` names, through the suite's `connector` (nothing is reached yet).
    pub fn of(
        written: &str,
        options: &crate::adapter::Options,
        connector: fn(
            &crate::spec::Spec,
            &crate::adapter::Options,
        ) -> Result<crate::adapter::Connector, BadInput>,
        describe: &'static Describe,
        run: fn(&Case, &crate::adapter::Connector) -> crate::run::CaseResult,
    ) -> Result<ShimTarget, BadInput> {
        let spec = crate::spec::Spec::of_shim(written)?;
        Ok(ShimTarget {
            written: spec.to_string(),
            connect: connector(&spec, options)?,
            spec,
            describe,
            run,
            alone: |_| false,
        })
    }

    /// The same target, whose cases `alone` says play alone in the process.
    pub fn alone_when(self, alone: fn(&Case) -> bool) -> ShimTarget {
        ShimTarget { alone, ..self }
    }
}

impl Target for ShimTarget {
    fn spec(&self) -> &str {
        &self.written
    }
    fn describe(&self) -> Result<serde_json::Value, String> {
        describe(&self.written, &self.connect, self.describe).map_err(|e| e.to_string())
    }
    fn jobs(&self, asked: usize) -> usize {
        match self.spec {
            // One HTTP shim holds one case's state at a time.
            crate::spec::Spec::Http(_) => 1,
            _ => asked,
        }
    }
    fn run_case(&self, case: &Case) -> crate::run::CaseResult {
        (self.run)(case, &self.connect)
    }
    fn alone(&self, case: &Case) -> bool {
        (self.alone)(case)
    }
}
