//! The subcommands, wired from the library. Errors are one line for the user; exit codes are
//! the named constants of `hcpspec::exit`.

use hcpspec::adapter;
use hcpspec::case::{self, Case, Level, SuiteInfo};
use hcpspec::exit;
use hcpspec::report::{Rules, RunResult, RuntimeRun, Summary};
use hcpspec::run::expectations::{Expectations, Outcome};
use hcpspec::run::plan::Selection;
use hcpspec::run::runner::{Event, Reporter, RunError, Runner, Snapshots, Target};
use hcpspec::run::{CaseResult, Verdict};
use hcpspec::snapshot::{self, Drift};
use hcpspec::suites::hcp::RunEnv;
use hcpspec::suites::selfcheck::SelfCheck;
use hcpspec::suites::{Context, Loaded, Suite as _};
use hcpspec::vectors::Vectors;
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::Filters;

/// The vectors a command reads: the folder given (`--vectors`, `HCPSPEC_VECTORS`), else the
/// tree embedded in this binary.
pub fn vectors(given: &Option<PathBuf>) -> Result<Vectors, String> {
    Vectors::resolve(given.as_deref())
}

/// The most jobs any command runs at once.
pub const MAX_JOBS: usize = 256;

/// A whole number from `lo` to `hi`, or one clear line saying the bound (clap exits 2).
pub fn bounded(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a whole number from {lo} to {hi}"))?;
    if n < lo || n > hi {
        return Err(format!("{n} is out of bounds: expected {lo} to {hi}"));
    }
    Ok(n)
}

/// A number of seconds, finite, above 0 (or 0 when `zero` is allowed) and at most `hi`.
pub fn seconds(s: &str, zero: bool, hi: f64) -> Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, at most {hi}"))?;
    let low_ok = if zero { x >= 0.0 } else { x > 0.0 };
    if !x.is_finite() || !low_ok || x > hi {
        return Err(format!(
            "{s} is out of bounds: expected {} seconds up to {hi}",
            if zero { "0 or more" } else { "more than 0" }
        ));
    }
    Ok(x)
}

/// Under CI, as insta decides it: `CI` set to anything but empty, `0` or `false`, or Azure's
/// `TF_BUILD` set.
pub fn is_ci() -> bool {
    match std::env::var("CI").ok().as_deref() {
        Some("false") | Some("0") | Some("") => false,
        None => std::env::var_os("TF_BUILD").is_some(),
        Some(_) => true,
    }
}

pub fn jobs(s: &str) -> Result<usize, String> {
    bounded(s, 1, MAX_JOBS as u64).map(|n| n as usize)
}

pub fn timeout_secs(s: &str) -> Result<f64, String> {
    seconds(s, false, adapter::MAX_TIMEOUT_SECS)
}

pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

/// The selected suites (`--suite`, else every suite under the vectors folder) and, for each, its
/// selected cases. A selection that leaves a suite no case drops that suite, unless it was named.
fn select(filters: &Filters, vectors: &Path) -> Result<Vec<Loaded>, String> {
    let all = case::suite_names(vectors).map_err(|e| e.to_string())?;
    for s in &filters.suite {
        if !all.contains(s) {
            return Err(format!(
                "--suite {s}: no such suite under {} (suites: {})",
                hcpspec::vectors::shown(vectors).display(),
                all.join(", ")
            ));
        }
    }
    let names = if filters.suite.is_empty() {
        all
    } else {
        filters.suite.clone()
    };
    if names.is_empty() {
        return Err(format!(
            "{}: no suite (a folder with a suite.json)",
            vectors.display()
        ));
    }
    let levels = filters
        .level
        .iter()
        .map(|l| match l.to_ascii_uppercase().as_str() {
            "MUST" => Ok(Level::MUST),
            "SHOULD" => Ok(Level::SHOULD),
            "MAY" => Ok(Level::MAY),
            "PROFILE" => Ok(Level::PROFILE),
            _ => Err(format!(
                "--level {l}: expected MUST, SHOULD, MAY or PROFILE"
            )),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let partition = filters
        .partition
        .as_deref()
        .map(hcpspec::run::plan::parse_partition)
        .transpose()?;
    let selection = Selection {
        filters: filters.filter.clone(),
        sections: filters.section.clone(),
        levels,
        partition,
    };
    let mut out = Vec::new();
    for name in &names {
        out.push(hcpspec::suites::load(vectors, name).map_err(|e| e.to_string())?);
    }
    // Filters and sections must match somewhere, not in every suite.
    let cases: Vec<Case> = out.iter().flat_map(|l| l.cases.clone()).collect();
    let kept: std::collections::BTreeSet<String> =
        selection.apply(&cases)?.iter().map(|c| c.name()).collect();
    Ok(out
        .into_iter()
        .map(|mut l| {
            l.cases.retain(|c| kept.contains(&c.name()));
            l
        })
        .filter(|l| !l.cases.is_empty() || filters.suite.contains(&l.info.name))
        .collect())
}

/// What building a target needs: the vectors, this executable as the probe, the adapters'
/// options.
fn context(vectors: &Path, options: adapter::Options) -> Context {
    Context {
        vectors: vectors.to_path_buf(),
        probe: RunEnv::self_probe(),
        options,
    }
}

fn env(vectors: &Path) -> Result<RunEnv, String> {
    RunEnv::new(vectors, &RunEnv::self_probe()).map_err(|e| e.0)
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// What to certify (default: each suite's embedded targets). Embedded: inproc:reference,
    /// inproc:stub, inproc:mutant:NAME, inproc:variant:NAME (`hcpspec list --mutants`). A shim
    /// (an HCP runtime's; a core's or a host's with --suite core-api|host): stdio:'CMD ARGS',
    /// http://HOST:PORT, ws://HOST:PORT/PATH; `hcpspec shim --runtime core:reference` or
    /// host:reference serves the embedded ones. A harness (--suite harness-api):
    /// exec:'CMD ARGS'. Repeatable (one runtime over several transports is checked for parity).
    #[arg(long = "runtime")]
    pub runtime: Vec<String>,
    /// Stop once N cases failed the run (in a suite): no case starts after it, and those not run
    /// are skips saying so.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_fail: Option<u64>,
    /// What every output calls the runtime of the same position (its report column, JUnit
    /// testsuite, badge and snapshot folder), instead of its spec and `initialize` name;
    /// repeatable, one per --runtime in order.
    #[arg(long = "name", value_name = "LABEL", value_parser = label)]
    pub name: Vec<String>,
    #[command(flatten)]
    pub filters: Filters,
    /// Cases run at once (1 to 256), each suite in turn. Default: each suite's own (the core
    /// count; more for the embedded targets of a suite whose cases mostly wait on scripted
    /// clocks: 16 for core-api, 64 for harness-api), every selected suite side by side.
    #[arg(long, value_parser = jobs)]
    pub jobs: Option<usize>,
    /// Run every mutant and print the kill matrix instead.
    #[arg(long)]
    pub mutants: bool,
    /// Where result.json and its renderings go.
    #[arg(long, default_value = "reports/latest")]
    pub out: PathBuf,
    /// Compare each case's observations with the snapshots under DIR/<runtime>/<suite>/.
    #[arg(long, value_name = "DIR")]
    pub snapshots: Option<PathBuf>,
    /// Write new and changed snapshots instead of failing on drift.
    #[arg(long, requires = "snapshots")]
    pub accept: bool,
    /// Run as CI does (also when the environment's CI is set, as insta reads it): a missing
    /// snapshot fails the run and is left as a .snap.new instead of being written.
    #[arg(long)]
    pub ci: bool,
    /// A runtime's declared known divergences (JSON: case glob → fail or skip, with a reason).
    #[arg(long, value_name = "FILE")]
    pub expectations: Option<PathBuf>,
    /// Fail the run when an expected failure now passes.
    #[arg(long, requires = "expectations")]
    pub strict_expectations: bool,
    /// The deadline of one call to the runtime, in seconds; past it the case is an error.
    #[arg(long, default_value_t = 5.0, value_name = "SECS", value_parser = timeout_secs)]
    pub timeout: f64,
}

/// A `--name`: a plain label, at most 64 characters, no control characters.
fn label(s: &str) -> Result<String, String> {
    if s.is_empty() || s.chars().count() > 64 || s.chars().any(char::is_control) {
        return Err("a label is 1 to 64 characters, none of them control characters".into());
    }
    Ok(s.to_string())
}

pub fn run(a: &RunArgs) -> Result<i32, String> {
    if a.name.len() > a.runtime.len() {
        return Err(format!(
            "--name: {} label(s) for {} --runtime(s); a label names the --runtime of its position",
            a.name.len(),
            a.runtime.len()
        ));
    }
    let vectors = vectors(&a.filters.vectors)?;
    let suites = select(&a.filters, &vectors.root)?;
    let origin = vectors.origin()?;
    println!("vectors: {origin}");
    if a.mutants {
        // Each selected suite's self-check; the run fails when any fails.
        let ctx = context(&vectors.root, Default::default());
        let mut code = exit::OK;
        let mut record = Vec::new();
        for l in &suites {
            let memo = hcpspec::suites::selfcheck::Memo::new(
                l.suite.self_check_jobs().max(a.jobs.unwrap_or(0)),
            );
            let sc = SelfCheck {
                suite: l.suite,
                info: &l.info,
                cases: &l.cases,
                ctx: &ctx,
                memo: &memo,
            };
            let (c, r) = print_self_check(&sc, &vectors.root)?;
            code = code.max(c);
            record.push(r);
            println!();
        }
        // The self-check's record: what a published report shows ("N of M sentences proven").
        let out = a.out.join("selfcheck.json");
        let body = serde_json::json!({ "code": code, "suites": record });
        if let Err(e) = std::fs::create_dir_all(&a.out).and_then(|_| {
            std::fs::write(
                &out,
                serde_json::to_string_pretty(&body).unwrap_or_default() + "\n",
            )
        }) {
            eprintln!("error: {}: {e}", out.display());
            return Ok(exit::OUTPUT);
        }
        println!("wrote {}", out.display());
        return Ok(code);
    }
    let expectations = match &a.expectations {
        Some(p) => Expectations::load(p)?,
        None => Expectations::default(),
    };
    let names: Vec<String> = suites
        .iter()
        .flat_map(|l| l.cases.iter().map(Case::name))
        .collect();
    for e in expectations.unused(&names) {
        eprintln!("warning: expectation `{}` matches no selected case", e.case);
    }
    if !(a.timeout > 0.0 && a.timeout <= adapter::MAX_TIMEOUT_SECS) {
        return Err(format!(
            "--timeout {}: expected a positive number of seconds",
            a.timeout
        ));
    }
    let opts = adapter::Options {
        timeout: std::time::Duration::try_from_secs_f64(a.timeout).map_err(|e| e.to_string())?,
        ..Default::default()
    };
    out_dir("--out", &a.out)?;
    if let Some(d) = &a.snapshots {
        out_dir("--snapshots", d)?;
    }
    let ci = a.ci || is_ci();
    let snapshots = match (&a.snapshots, a.accept) {
        (None, _) => Snapshots::Off,
        (Some(d), false) => Snapshots::Check(d.clone()),
        (Some(d), true) => Snapshots::Accept(d.clone()),
    };
    // Each suite's targets. `--runtime` without `--suite` runs the suites that drive what it
    // names: a harness (`exec:`) is no HCP runtime, and a shim no harness.
    let ctx = context(&vectors.root, opts);
    let mut planned = Vec::new();
    let mut first_error = None;
    for l in &suites {
        let (suite, cases) = (&l.info, &l.cases);
        let specs = if a.runtime.is_empty() {
            suite.embedded.clone()
        } else {
            a.runtime.clone()
        };
        // A shim over stdio, HTTP or WebSocket is read as an HCP runtime's unless --suite names
        // the core or host suite: their shims speak the same transports.
        let implicit = a.filters.suite.is_empty() && !a.runtime.is_empty();
        if implicit && !l.suite.runs_unnamed() && specs.iter().any(|s| !s.starts_with("inproc:")) {
            continue;
        }
        match specs
            .iter()
            .map(|s| l.suite.target(s, &ctx))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(targets) => {
                // An implementation under test is held to the caps per case times the cases at
                // once (docs/security.md): only the embedded ones, trusted, run more at once.
                let embedded = specs.iter().all(|s| s.starts_with("inproc:"));
                let jobs = if embedded {
                    l.suite.jobs(cores())
                } else {
                    cores()
                };
                planned.push((suite, cases, targets, jobs))
            }
            Err(e) if a.filters.suite.is_empty() && !a.runtime.is_empty() => {
                first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    if planned.is_empty() {
        return Err(first_error.unwrap_or_else(|| "no suite selected".into()));
    }
    let runners: Vec<Runner> = planned
        .iter()
        .map(|(suite, cases, _, jobs)| {
            let mut runner = Runner::new(suite, cases, &expectations);
            runner.snapshots = snapshots.clone();
            runner.jobs = a.jobs.unwrap_or(*jobs);
            runner.strict = a.strict_expectations;
            runner.labels = a
                .runtime
                .iter()
                .cloned()
                .zip(a.name.iter().cloned())
                .collect();
            runner.max_fail = a.max_fail.map(|n| n as usize);
            runner.interrupt = Some(&crate::INTERRUPTED);
            runner.ci = ci;
            runner
        })
        .collect();
    let terminal = |suite: &SuiteInfo, runner: &Runner, live: bool| {
        Terminal::new(suite, runner.rules(), a.snapshots.as_deref(), live)
    };
    // Without --jobs the suites run side by side: their cases mostly wait (scripted clocks, other
    // processes), and each suite's own jobs already fit its kind of work. The first suite tells
    // the terminal as it goes; each other one records, and is told in the run's order once it
    // is over, so the terminal reads as one suite after another. `--jobs N` runs them one
    // after another, N cases at a time.
    let side_by_side = a.jobs.is_none();
    // Each suite's terminal is finished as it is told; a run that could not finish stops the
    // telling (the suites still running beside it end with the scope, untold).
    let outcomes: Vec<Result<RunResult, RunError>> = std::thread::scope(|s| {
        let mut rest = std::collections::VecDeque::new();
        if side_by_side {
            for (runner, (_, _, targets, _)) in runners.iter().zip(&planned).skip(1) {
                rest.push_back(s.spawn(move || {
                    let mut recorder = hcpspec::run::runner::Recorder::default();
                    let r = runner.run(targets, &mut recorder);
                    (r, recorder)
                }));
            }
        }
        let mut out = Vec::new();
        for (i, (runner, (suite, cases, targets, _))) in runners.iter().zip(&planned).enumerate() {
            // Every suite after the first was spawned above, unless under --jobs.
            let spawned = if i > 0 { rest.pop_front() } else { None };
            let (r, t) = match spawned {
                Some(h) => {
                    let (r, recorder) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                    let mut t = terminal(suite, runner, false);
                    recorder.replay(&mut t, cases);
                    (r, t)
                }
                None => {
                    let mut t = terminal(suite, runner, true);
                    (runner.run(targets, &mut t), t)
                }
            };
            if let Ok(result) = &r {
                t.finish(result);
            }
            let stop = r.is_err();
            out.push(r);
            if stop {
                break;
            }
        }
        out
    });
    let mut code = exit::OK;
    let mut results = Vec::new();
    for result in outcomes {
        let result = match result {
            Ok(r) => r,
            Err(RunError::Unreachable { spec, message }) => {
                eprintln!(
                    "hcpspec: runtime {spec} unreachable: {}",
                    hcpspec::report::printable(&message, true)
                );
                return Ok(exit::UNREACHABLE);
            }
            Err(e @ RunError::Snapshot(_)) => {
                eprintln!("hcpspec: snapshots could not be written: {e}");
                return Ok(exit::OUTPUT);
            }
            Err(e @ RunError::Declared { .. }) => {
                eprintln!(
                    "hcpspec: {}",
                    hcpspec::report::printable(&e.to_string(), false)
                );
                return Ok(exit::USAGE);
            }
        };
        if result.fails() {
            code = exit::FAILURES;
        }
        results.push(result);
    }
    roll_up(&results);
    // One record and one set of renderings for the whole run, every suite in it.
    let report = hcpspec::report::Report {
        vectors: vec![origin],
        ..hcpspec::report::Report::of(results)
    };
    let files = match hcpspec::report::write_all(&report, &a.out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("hcpspec: the run's outputs were not written: {e}");
            return Ok(exit::OUTPUT);
        }
    };
    println!(
        "\nwrote {} ({} files)",
        a.out.join("result.json").display(),
        files.len()
    );
    if crate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("hcpspec: interrupted: the outputs hold the cases that ran, the rest are skips saying so");
        return Ok(exit::INTERRUPTED);
    }
    Ok(code)
}

/// A red run's last words: where its failing cases stop (the step's action and the pointer of a
/// failure, an error's or unimplemented method's first words), most first.
fn roll_up(results: &[hcpspec::report::RunResult]) {
    let mut at: std::collections::BTreeMap<String, usize> = Default::default();
    for result in results {
        for run in &result.runtimes {
            for r in &run.cases {
                if !hcpspec::report::fails_run(r, result.rules()) {
                    continue;
                }
                let key = match &r.verdict {
                    Verdict::Fail(f) => format!("{} at {}", f.action, f.path),
                    Verdict::Error { message } => {
                        format!("error: {}", message.chars().take(60).collect::<String>())
                    }
                    Verdict::Unimplemented { reason } => {
                        format!(
                            "unimplemented: {}",
                            reason.chars().take(60).collect::<String>()
                        )
                    }
                    _ => "snapshot drift".into(),
                };
                *at.entry(format!(
                    "{} {}",
                    result.suite,
                    hcpspec::report::printable(&key, false)
                ))
                .or_default() += 1;
            }
        }
    }
    if at.is_empty() {
        return;
    }
    let mut rows: Vec<(String, usize)> = at.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let total: usize = rows.iter().map(|r| r.1).sum();
    eprintln!(
        "\n{}",
        crate::style::red_err(&format!("{total} case(s) failed the run, stopping at:"))
    );
    for (key, n) in rows.iter().take(10) {
        eprintln!("  {n:>4} × {key}");
    }
    if rows.len() > 10 {
        eprintln!("  … and {} more places (see summary.md)", rows.len() - 10);
    }
}

/// The terminal: a progress bar (or a line per problem without a terminal), then per runtime a
/// table per section and an explanation of every failure; drift and parity as they come.
struct Terminal {
    suite: SuiteInfo,
    tty: bool,
    live: bool,
    bar: Option<indicatif::ProgressBar>,
    /// Cases whose snapshot changed, and cases that had none.
    changed: usize,
    new: usize,
    rules: Rules,
    snapshots: Option<PathBuf>,
}

impl Terminal {
    /// `live`: told as the run goes (a progress bar on a terminal), not replayed after it.
    fn new(suite: &SuiteInfo, rules: Rules, snapshots: Option<&Path>, live: bool) -> Terminal {
        Terminal {
            suite: suite.clone(),
            tty: std::io::stderr().is_terminal(),
            live,
            bar: None,
            changed: 0,
            new: 0,
            rules,
            snapshots: snapshots.map(Path::to_path_buf),
        }
    }

    /// A line above the progress bar, or on stderr.
    fn say(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self, result: &hcpspec::report::RunResult) {
        let groups = hcpspec::run::parity::groups(
            &result
                .runtimes
                .iter()
                .map(|r| (r.runtime.as_str(), &r.info))
                .collect::<Vec<_>>(),
        );
        for (runtime, specs) in &groups {
            let n = result
                .parity
                .iter()
                .filter(|d| &d.runtime == runtime)
                .count();
            if n == 0 {
                println!(
                    "\ntransport parity: {runtime} observed the same over {}",
                    specs.join(", ")
                );
            } else {
                eprintln!(
                    "\ntransport parity: {runtime}: {n} case(s) observed differently over {}",
                    specs.join(", ")
                );
            }
        }
        let review = self.snapshots.as_ref().map_or_else(String::new, |d| {
            format!("hcpspec review --snapshots {}", d.display())
        });
        if self.new > 0 && self.rules.ci {
            eprintln!("\n{} new snapshot(s), which fail the run under CI: left as .snap.new; review them ({review}) or run with --accept, then commit them", self.new);
        } else if self.new > 0 {
            eprintln!(
                "\n{} new snapshot(s) written (not a failure): commit them",
                self.new
            );
        }
        if self.changed > 0 {
            eprintln!("\n{} case(s) drifted from their snapshots: review the .snap.new files ({review}, or cargo insta review) or rerun with --accept", self.changed);
        }
    }
}

impl Reporter for Terminal {
    fn event(&mut self, e: &Event<'_>) {
        match e {
            Event::RuntimeStarted { spec, cases, .. } => {
                self.bar = (self.tty && self.live).then(|| {
                    let b = indicatif::ProgressBar::new(*cases as u64);
                    if let Ok(style) = indicatif::ProgressStyle::with_template(
                        "{prefix} [{bar:30}] {pos}/{len} {msg}",
                    ) {
                        b.set_style(style.progress_chars("=> "));
                    }
                    b.set_prefix(spec.to_string());
                    b
                });
            }
            Event::CaseFinished { spec, result: r } => {
                let name = hcpspec::report::printable(&r.name, false);
                match &self.bar {
                    Some(b) => {
                        b.inc(1);
                        if !matches!(r.verdict, Verdict::Pass) {
                            b.set_message(format!("last problem: {name}"));
                        }
                    }
                    None if !matches!(r.verdict, Verdict::Pass) => {
                        let label = if r.level == Level::PROFILE {
                            "profile"
                        } else {
                            r.verdict.label()
                        };
                        eprintln!("hcpspec: {spec} {label} {name}");
                    }
                    None => {}
                }
            }
            Event::CaseSlow {
                spec,
                name,
                elapsed,
            } => {
                let line = format!(
                    "SLOW {spec} {} (running for {:.0} s)",
                    hcpspec::report::printable(name, false),
                    elapsed.as_secs_f64()
                );
                match &self.bar {
                    Some(b) => b.println(line),
                    None => eprintln!("hcpspec: {line}"),
                }
            }
            Event::CaseStarted { .. } => {}
            Event::Drifted {
                spec,
                result: r,
                drift,
                written,
            } => match drift {
                Drift::New => {
                    self.new += 1;
                    let what = if self.rules.ci {
                        "no snapshot yet, which fails under CI; pending"
                    } else {
                        "no snapshot yet; written"
                    };
                    self.say(&format!(
                        "NEW {} on {spec}: {what} {}",
                        hcpspec::report::printable(&r.name, false),
                        written.display()
                    ));
                }
                Drift::Changed { diff } => {
                    self.changed += 1;
                    let diff = if self.tty {
                        snapshot::colour(diff)
                    } else {
                        diff.clone()
                    };
                    eprintln!(
                        "\nDRIFT {} on {spec} (verdict {}):\n{diff}",
                        r.name,
                        r.verdict.label()
                    );
                }
            },
            Event::RuntimeFinished { spec, run, cases } => {
                if let Some(b) = self.bar.take() {
                    b.finish_and_clear();
                }
                print_table(&self.suite, spec, run, self.rules);
                explain_problems(cases, run);
            }
            Event::ParityDiffered { difference } => eprintln!("PARITY {difference}"),
        }
    }
}

/// Every unexpected failure explained; PROFILE deviations and stale expectations in a line.
fn explain_problems(cases: &[Case], run: &hcpspec::report::RuntimeRun) {
    for c in cases {
        let Some(r) = run.cases.iter().find(|r| r.name == c.name()) else {
            continue;
        };
        let o = r.annotations.outcome.unwrap_or(Outcome::Pass);
        let deviates = matches!(o, Outcome::Fail | Outcome::Error | Outcome::Unimplemented);
        if deviates && c.level == Level::PROFILE {
            eprintln!(
                "\nPROFILE {} decides otherwise than hcpspec's profile (not a failure): {}",
                r.name,
                c.assumption.as_deref().unwrap_or("")
            );
        } else if deviates {
            eprintln!(
                "\n{} {}",
                r.verdict.label().to_uppercase(),
                hcpspec::report::printable(r.explain(c).trim_end(), true)
            );
        } else if o == Outcome::Stale {
            eprintln!(
                "\nSTALE {}: expected to fail ({}), but passes",
                r.name,
                r.annotations
                    .expectation
                    .as_ref()
                    .map(|e| e.reason.as_str())
                    .unwrap_or("")
            );
        }
    }
}

/// A folder hcpspec will write into is one, or can be made: it, or its nearest existing
/// ancestor, is a directory. Checked before anything runs, so `--out /dev/null/x` is one line
/// and exit 2, not a whole run and then "not written".
pub fn out_dir(flag: &str, dir: &Path) -> Result<(), String> {
    let shown = || hcpspec::report::printable(&dir.display().to_string(), false);
    let mut at = Some(dir);
    while let Some(p) = at {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if p == dir => return Err(format!("{flag} {}: not a directory", shown())),
            Ok(_) => {
                return Err(format!(
                    "{flag} {}: {} is not a directory",
                    shown(),
                    p.display()
                ))
            }
            Err(_) => at = p.parent().filter(|q| !q.as_os_str().is_empty()),
        }
    }
    Ok(())
}

pub fn report(results: &[PathBuf], out: &Path) -> Result<i32, String> {
    out_dir("--out", out)?;
    let read = results
        .iter()
        .map(|p| hcpspec::report::read(p).map(|r| (p.clone(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = hcpspec::report::merge(read)?;
    let files = match hcpspec::report::write_all(&merged, out) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("hcpspec: the outputs were not written: {e}");
            return Ok(exit::OUTPUT);
        }
    };
    for f in files {
        println!("wrote {}", f.display());
    }
    // The merged record's verdict, as its run's exit code would be.
    Ok(if merged.fails() {
        exit::FAILURES
    } else {
        exit::OK
    })
}

fn print_table(suite: &SuiteInfo, spec: &str, run: &hcpspec::report::RuntimeRun, rules: Rules) {
    let head = match &run.label {
        Some(l) => format!("{} = {spec}", hcpspec::report::printable(l, false)),
        None => spec.to_string(),
    };
    // What the implementation said of itself, as far as it said it (a harness says nothing).
    let said: Vec<String> = ["/runtime/name", "/runtime/version"]
        .iter()
        .filter_map(|p| run.info.pointer(p).and_then(Value::as_str))
        .filter(|t| *t != spec)
        .map(|t| hcpspec::report::printable(t, false))
        .collect();
    match said.is_empty() {
        true => println!("\n{head}"),
        false => println!("\n{head}  ({})", said.join(" ")),
    }
    print!(
        "{}",
        hcpspec::report::table_marked(&suite.sections, run, rules, &crate::style::marks())
    );
    let summary = &run.summary;
    if let Some(why) = &run.stopped {
        println!("  stopped early: {why}; the cases not run are skips");
    }
    if summary.unclassified > 0 {
        println!(
            "  {} denial-class or rule check(s) unclassified: the runtime declares no map for them in initialize (docs/shim-protocol.md#initialize); counted, never failed",
            summary.unclassified
        );
    }
}

/// A suite's self-check, printed: each mutant against the MUST cases it answers for (its own
/// sections', and those whose `killed_by` names it), each variant against every MUST case, then
/// the sentence matrix (each ledger row's killer against the row's cases). Its exit code, and
/// its record for `selfcheck.json`.
fn print_self_check(sc: &SelfCheck, vectors: &Path) -> Result<(i32, serde_json::Value), String> {
    use hcpspec::suites::ledger;
    use serde_json::json;
    let noun = sc.suite.noun();
    println!("{} ({})", sc.info.title, sc.info.name);
    println!(
        "{:<32} {:>9} {:>9}   rule broken",
        format!("mutant {noun}"),
        "sections",
        "killed by"
    );
    let mutants = sc.suite.mutants();
    let mut kills = hcpspec::suites::selfcheck::Kills::new();
    let mut survivors = 0;
    for m in &mutants {
        let k = sc.kills(m)?;
        survivors += usize::from(k.is_empty());
        println!(
            "{:<32} {:>9} {:>9}   {}{}",
            m.name,
            m.sections.join(","),
            k.len(),
            m.about,
            if k.is_empty() { "  <- SURVIVES" } else { "" }
        );
        kills.insert(m.name, k);
    }
    let unkilled = sc.unkilled(&kills);
    for c in &unkilled {
        println!("warning: no mutant of its own section (or killed_by) fails MUST case {c}");
    }
    let claims = sc.false_claims(&kills);
    for c in &claims {
        println!("error: {c}");
    }
    println!(
        "\n{:<32} {:>10}",
        format!("allowed variant {noun}"),
        "MUST fails"
    );
    let mut unfair = 0;
    let mut variants = Vec::new();
    for v in sc.suite.variants() {
        let failed = sc.variant_failures(&v)?;
        unfair += failed.len();
        println!("{:<32} {:>10}", v.name, failed.len());
        for f in &failed {
            println!("  {}", f.lines().next().unwrap_or_default());
        }
        variants.push(json!({ "name": v.name, "mustFailed": failed.len() }));
    }
    println!(
        "{} mutants, {} killed; {} MUST cases, {} not failed by any mutant",
        mutants.len(),
        mutants.len() - survivors,
        sc.cases.iter().filter(|c| c.level == Level::MUST).count(),
        unkilled.len()
    );
    // The sentence matrix: every ledger row, its killer proven or not.
    let rows = sc.ledger(vectors)?;
    let names: Vec<&str> = mutants.iter().map(|m| m.name).collect();
    let problems = ledger::problems(&rows, sc.cases, &names);
    for p in &problems {
        println!("error: {p}");
    }
    let mut unproven = 0;
    let mut sentences = Vec::new();
    if !rows.is_empty() {
        println!(
            "\n{:<22} {:<14} {:<34} killed by",
            "sentence", "state", "killer"
        );
    }
    for r in &rows {
        let Some(state) = r.state else { continue };
        // One line per killer (a row of several clauses names one per clause).
        let proofs: Vec<(Option<String>, Option<hcpspec::suites::selfcheck::Proof>)> =
            match r.killers.is_empty() {
                true => vec![(None, None)],
                false => sc
                    .prove(r)?
                    .into_iter()
                    .map(|(k, p)| (Some(k), Some(p)))
                    .collect(),
            };
        for (killer, proof) in proofs {
            let killed_by = proof
                .as_ref()
                .map(|p| p.killed_by.clone())
                .unwrap_or_default();
            let survives = proof.is_some() && killed_by.is_empty();
            unproven += usize::from(survives);
            println!(
                "{:<22} {:<14} {:<34} {}",
                format!("{} {}", r.ledger.trim_start_matches("../"), r.number),
                state.label(),
                killer.as_deref().unwrap_or("-"),
                match (&proof, survives) {
                    (None, _) => String::new(),
                    (Some(p), true) => format!(
                        "SURVIVES{}",
                        if p.elsewhere.is_empty() {
                            String::new()
                        } else {
                            format!(" (fails only elsewhere: {})", p.elsewhere.join(", "))
                        }
                    ),
                    (Some(_), false) => killed_by.join(", "),
                }
            );
            sentences.push(json!({
                "ledger": r.ledger, "row": r.number, "state": state.label(), "killer": killer,
                "killedBy": killed_by, "elsewhere": proof.map(|p| p.elsewhere).unwrap_or_default(),
            }));
        }
    }
    let counts = ledger::counts(&rows);
    let total: usize = counts.values().sum();
    if total > 0 {
        println!(
            "{} of {total} sentences proven ({})",
            counts[&ledger::State::Covered],
            ledger::State::ALL
                .iter()
                .map(|s| format!("{} {}", counts[s], s.label()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // README: exit 1 if a mutant survives, a MUST case falls to no mutant of its own section,
    // a killed_by claim is false, a variant fails a MUST case, or a ledger row's killer survives.
    let failed = survivors > 0
        || !unkilled.is_empty()
        || !claims.is_empty()
        || unfair > 0
        || unproven > 0
        || !problems.is_empty();
    let record = json!({
        "suite": sc.info.name,
        "mutants": mutants.iter().map(|m| json!({ "name": m.name, "sections": m.sections, "kills": kills[m.name] })).collect::<Vec<_>>(),
        "unkilled": unkilled,
        "variants": variants,
        "sentences": sentences,
        "counts": ledger::State::ALL.iter().map(|s| (s.label().to_string(), json!(counts[s]))).collect::<serde_json::Map<_, _>>(),
        "passed": !failed,
    });
    Ok((if failed { exit::FAILURES } else { exit::OK }, record))
}

/// Every registered suite's mutants and allowed variants (`hcpspec list --mutants`), with the
/// rule each breaks or the point each decides: `suite  mutant|variant  NAME  SECTIONS  WHAT`.
/// How `hcpspec list` prints.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

/// One JSON document on stdout; a closed pipe ends it quietly.
fn print_json(v: &serde_json::Value) -> Result<i32, String> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    Ok(exit::OK)
}

pub fn list_mutants(filters: &Filters, format: ListFormat) -> Result<i32, String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let mut all = Vec::new();
    for l in select(filters, &vectors(&filters.vectors)?.root)? {
        for (kind, knobs) in [
            ("mutant", l.suite.mutants()),
            ("variant", l.suite.variants()),
        ] {
            for k in knobs {
                if format == ListFormat::Json {
                    all.push(json!({
                        "suite": l.info.name, "kind": kind, "name": k.name,
                        "sections": k.sections, "about": k.about,
                    }));
                    continue;
                }
                let sections = if k.sections.is_empty() {
                    "-".to_string()
                } else {
                    k.sections.join(",")
                };
                if writeln!(
                    out,
                    "{}\t{kind}\t{}\t{sections}\t{}",
                    l.info.name, k.name, k.about
                )
                .is_err()
                {
                    return Ok(exit::OK);
                }
            }
        }
    }
    drop(out);
    if format == ListFormat::Json {
        return print_json(&Value::Array(all));
    }
    Ok(exit::OK)
}

pub fn lint(dirs: &[PathBuf]) -> Result<i32, String> {
    let mut issues = 0;
    for dir in dirs {
        if !dir.is_dir() {
            return Err(format!("{}: not a pack directory", dir.display()));
        }
        let files = hcpspec::suites::hcp::pack::PackFiles::read(dir);
        match hcpspec::suites::hcp::pack::install(&files) {
            Ok(p) => println!(
                "{}: ok ({}, {} commands)",
                dir.display(),
                p.pack_id(),
                p.surface.commands.len()
            ),
            Err(found) => {
                for i in &found {
                    // Loader issues name the path already; lint issues name the file in the pack.
                    let shown = if i.file.contains('/') {
                        i.to_string()
                    } else {
                        format!("{}/{i}", dir.display())
                    };
                    println!("{shown}");
                }
                issues += found.len();
            }
        }
    }
    if issues > 0 {
        eprintln!("{issues} issue(s)");
        Ok(exit::FAILURES)
    } else {
        Ok(exit::OK)
    }
}

pub fn list(filters: &Filters, format: ListFormat) -> Result<i32, String> {
    use std::io::Write;
    let suites = select(filters, &vectors(&filters.vectors)?.root)?;
    if format == ListFormat::Json {
        let cases: Vec<Value> = suites
            .iter()
            .flat_map(|l| &l.cases)
            .map(|c| {
                json!({
                    "case": c.name(), "suite": c.suite, "section": c.section,
                    "level": c.level, "title": c.title, "spec": c.spec,
                    "requires": c.requires, "assumption": c.assumption,
                    "file": hcpspec::vectors::shown(&c.file),
                })
            })
            .collect();
        return print_json(&Value::Array(cases));
    }
    let mut out = std::io::stdout().lock();
    for l in suites {
        for c in l.cases {
            // A closed pipe (`hcpspec list | head`) ends the listing, quietly.
            if writeln!(out, "{}", c.name()).is_err() {
                return Ok(exit::OK);
            }
        }
    }
    Ok(exit::OK)
}

pub fn explain(name: &str, vectors: &Path) -> Result<i32, String> {
    let mut cases = Vec::new();
    for s in case::suite_names(vectors).map_err(|e| e.to_string())? {
        let l = hcpspec::suites::load(vectors, &s).map_err(|e| e.to_string())?;
        cases.extend(l.cases.into_iter().map(|c| (l.suite, c)));
    }
    let (suite, case) = cases
        .iter()
        .find(|(_, c)| c.name() == name || c.id == name || name.starts_with(&(c.name() + "::")))
        .ok_or_else(|| format!("no case named {name} (see `hcpspec list`)"))?;
    println!(
        "{}\n  {}\n  level:   {:?}, section {}\n  spec:    {}\n  file:    {}",
        case.name(),
        case.title,
        case.level,
        case.section,
        case.spec,
        hcpspec::vectors::shown(&case.file).display()
    );
    if let Some(a) = &case.assumption {
        println!("  assumption: {a}");
    }
    if !case.requires.is_empty() {
        println!(
            "  requires: {} (skipped where the runtime does not claim it)",
            case.requires.join(", ")
        );
    }
    if !case.killed_by.is_empty() {
        println!("  killed by: {}", case.killed_by.join(", "));
    }
    // The suite-owned body: steps and setup, a harness scenario, a core script, host calls.
    // Steps (`steps`, `script.steps`, `host.steps`) are numbered as failures number them.
    let first = suite.first_step(case);
    let pretty = |v: &Value, indent: &str| {
        serde_json::to_string_pretty(v)
            .unwrap_or_default()
            .replace('\n', &format!("\n{indent}"))
    };
    let print_steps = |steps: &[Value], indent: &str| {
        if first == 1 {
            println!("{indent}step 0: install (implicit)");
        }
        for (i, step) in steps.iter().enumerate() {
            let inner = format!("{indent}  ");
            println!(
                "{indent}step {}:\n{inner}{}",
                i + first,
                pretty(step, &inner)
            );
        }
    };
    for (key, body) in &case.body {
        match (key.as_str(), body) {
            ("steps", Value::Array(steps)) => {
                println!("  steps:");
                print_steps(steps, "    ");
            }
            (_, Value::Object(m)) if m.get("steps").is_some_and(Value::is_array) => {
                println!("  {key}:");
                for (k, v) in m {
                    match v {
                        Value::Array(steps) if k == "steps" => {
                            println!("    steps:");
                            print_steps(steps, "      ");
                        }
                        _ => println!("    {k}: {}", pretty(v, "      ")),
                    }
                }
            }
            _ => println!("  {key}:\n    {}", pretty(body, "    ")),
        }
    }
    Ok(exit::OK)
}

/// `cases` on the target `spec` of their suite, through the runner, `jobs` at a time: the
/// results, and the seconds it took.
fn timed(
    l: &Loaded,
    ctx: &Context,
    spec: &str,
    jobs: usize,
) -> Result<(Vec<CaseResult>, f64), String> {
    let target: Arc<dyn Target> = l.suite.target(spec, ctx)?;
    let expectations = Expectations::default();
    let mut runner = Runner::new(&l.info, &l.cases, &expectations);
    runner.jobs = jobs;
    let t = Instant::now();
    let result = runner
        .run(&[target], &mut hcpspec::run::runner::Quiet)
        .map_err(|e| e.to_string())?;
    let secs = t.elapsed().as_secs_f64();
    let results: Vec<CaseResult> = result.runtimes.into_iter().flat_map(|r| r.cases).collect();
    if results.iter().any(|r| !matches!(r.verdict, Verdict::Pass)) {
        return Err(format!(
            "the reference fails its own {} suite over {spec}; run `hcpspec run --suite {}` first",
            l.info.name, l.info.name
        ));
    }
    Ok((results, secs))
}

pub fn bench(iterations: usize, vectors: &Path) -> Result<i32, String> {
    let contract = hcpspec::suites::load_driving(vectors, hcpspec::suites::hcp::Contract.drives())
        .map_err(|e| e.to_string())?;
    let ctx = context(vectors, Default::default());
    let env = env(vectors)?;
    // Spawn cost of the probe alone, measured in the same run.
    let probe = env.bin_dir.join("hcpspec-probe");
    let spawn_n = 50;
    let t = Instant::now();
    for _ in 0..spawn_n {
        std::process::Command::new(&probe)
            .output()
            .map_err(|e| e.to_string())?;
    }
    let spawn_us = t.elapsed().as_micros() as f64 / spawn_n as f64;
    let n = contract.cases.len();
    let mut best = f64::MAX;
    for _ in 0..iterations.max(1) {
        let before = hcpspec::suites::hcp::runtime::adapter::spawns();
        let (_, secs) = timed(&contract, &ctx, "inproc:reference", 1)?;
        let spawned = hcpspec::suites::hcp::runtime::adapter::spawns() - before;
        best = best.min(secs);
        println!(
            "suite: {n} cases in {secs:.3} s = {:.0} cases/s (1 job); {} probe spawns ≈ {:.3} s of it; the rest {:.3} s",
            n as f64 / secs,
            spawned,
            spawned as f64 * spawn_us / 1e6,
            (secs - spawned as f64 * spawn_us / 1e6).max(0.0)
        );
    }
    let (results, par) = timed(&contract, &ctx, "inproc:reference", cores())?;
    println!("probe spawn alone: {spawn_us:.0} µs each (mean of {spawn_n})");
    println!(
        "best of {iterations}: {best:.3} s on 1 job; {:.3} s on {} jobs ({:.0} cases/s)",
        par,
        cores(),
        results.len() as f64 / par
    );
    bench_reports(&contract.info, &contract.cases, results, par)?;
    bench_suites(vectors, &ctx)?;
    bench_harness(vectors, &ctx)?;
    bench_shim_suites(vectors, &ctx)?;
    Ok(exit::OK)
}

/// CPU seconds of this process and of its children reaped so far (a shim, a harness, a probe).
fn cpu_secs() -> f64 {
    let secs = |who| {
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut u) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        tv(u.ru_utime) + tv(u.ru_stime)
    };
    secs(libc::RUSAGE_SELF) + secs(libc::RUSAGE_CHILDREN)
}

/// Every suite as the main command runs it (its embedded targets, its default jobs), one
/// alone at a time: wall time, CPU time, and the share of the cores' time that was waiting
/// rather than work. The last row sums them: `hcpspec run` without --jobs runs the suites side
/// by side, so its own wall time is less.
fn bench_suites(vectors: &Path, ctx: &Context) -> Result<(), String> {
    let names = hcpspec::case::suite_names(vectors).map_err(|e| e.to_string())?;
    println!(
        "\nevery suite as `hcpspec run` runs it, one at a time ({} cores):\n  {:<12} {:>6} {:>5} {:>8} {:>8} {:>7}",
        cores(),
        "suite",
        "cases",
        "jobs",
        "wall s",
        "CPU s",
        "waiting"
    );
    let (mut wall, mut cpu) = (0.0, 0.0);
    for name in names {
        let l = hcpspec::suites::load(vectors, &name).map_err(|e| e.to_string())?;
        let jobs = l.suite.jobs(cores());
        for spec in &l.info.embedded {
            let c0 = cpu_secs();
            let (results, secs) = timed(&l, ctx, spec, jobs)?;
            let used = cpu_secs() - c0;
            wall += secs;
            cpu += used;
            println!(
                "  {:<12} {:>6} {:>5} {:>8.2} {:>8.2} {:>6.0}%  ({spec})",
                name,
                results.len(),
                jobs,
                secs,
                used,
                100.0 * (1.0 - used / (secs * cores() as f64).max(1e-9)).max(0.0)
            );
        }
    }
    println!(
        "  {:<12} {:>6} {:>5} {:>8.2} {:>8.2} {:>6.0}%  (summed; `hcpspec run` runs them side by side)",
        "all",
        "",
        "",
        wall,
        cpu,
        100.0 * (1.0 - cpu / (wall * cores() as f64).max(1e-9)).max(0.0)
    );
    Ok(())
}

/// The core-api and host suites against their references, in-process and over their stdio shims
/// (one shim process per case), on 1 job: cases/s and the ratio of the two.
fn bench_shim_suites(vectors: &Path, ctx: &Context) -> Result<(), String> {
    use hcpspec::suites::{core_api::CoreApi, host::Host, Suite};
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let suites: [(&dyn Suite, &str, &str); 2] = [
        (&CoreApi, "core", "control shim"),
        (&Host, "host", "host shim"),
    ];
    for (suite, prefix, shim) in suites {
        let Ok(l) = hcpspec::suites::load_driving(vectors, suite.drives()) else {
            continue;
        };
        let name = &l.info.name;
        let stdio = format!("stdio:{} shim --runtime {prefix}:reference", exe.display());
        let mut secs = Vec::new();
        for spec in ["inproc:reference", stdio.as_str()] {
            let (_, took) = timed(&l, ctx, spec, 1)?;
            println!(
                "{name}: {} cases in {took:.2} s = {:.1} cases/s on 1 job ({})",
                l.cases.len(),
                l.cases.len() as f64 / took,
                if spec.starts_with("inproc:") {
                    "in-process".to_string()
                } else {
                    format!("stdio {shim}, a process per case")
                }
            );
            secs.push(took);
        }
        println!(
            "{name}: stdio / in-process = {:.2}",
            secs[1] / secs[0].max(1e-9)
        );
    }
    Ok(())
}

/// The harness-api suite against the reference harness, scenarios in parallel, each on its own
/// ports: scenarios/s, and the share of the time that is scripted waiting (held gate answers,
/// the settle after a scenario's last run) rather than work.
fn bench_harness(vectors: &Path, ctx: &Context) -> Result<(), String> {
    use hcpspec::suites::harness_api as h;
    use hcpspec::suites::world::scenario::Scenario;
    use hcpspec::suites::Suite;
    let Ok(l) = hcpspec::suites::load_driving(vectors, h::HarnessApi.drives()) else {
        return Ok(());
    };
    for jobs in [1, h::HarnessApi.self_check_jobs()] {
        let (results, secs) = timed(&l, ctx, "inproc:reference", jobs)?;
        let busy: f64 = results.iter().map(|r| r.micros as f64 / 1e6).sum();
        let waits: f64 = l
            .cases
            .iter()
            .filter_map(|c| h::scenario_of(c).ok())
            .map(|sc: Scenario| {
                let holds = sc.model.iter().map(|m| m.hold_ms).max().unwrap_or(0);
                (h::SETTLE_MS + holds) as f64 / 1e3
            })
            .sum();
        println!(
            "harness-api: {} scenarios in {secs:.2} s on {jobs} job(s) = {:.1} scenarios/s; scripted waits (holds, settle) {:.0}% of the scenarios' time",
            l.cases.len(),
            l.cases.len() as f64 / secs,
            100.0 * waits / busy.max(1e-9)
        );
    }
    Ok(())
}

/// Rendering every output for 10 runtimes × the suite, and the cost of snapshot comparison
/// against the in-process run it annotates (`suite_secs`, measured in the same process).
fn bench_reports(
    suite: &SuiteInfo,
    cases: &[Case],
    results: Vec<CaseResult>,
    suite_secs: f64,
) -> Result<(), String> {
    let info = json!({ "runtime": { "name": "reference", "version": env!("CARGO_PKG_VERSION") } });
    let runs = (0..10)
        .map(|i| RuntimeRun {
            runtime: format!("inproc:copy-{i}"),
            label: None,
            stopped: None,
            info: info.clone(),
            summary: Summary::of(&results, Rules::default()),
            cases: results.clone(),
        })
        .collect();
    let result = RunResult {
        schema: hcpspec::report::SCHEMA.into(),
        hcpspec_version: env!("CARGO_PKG_VERSION").into(),
        suite: suite.name.clone(),
        sections: suite.sections.clone(),
        cases_hash: String::new(),
        runtimes: runs,
        parity: Vec::new(),
        strict_expectations: false,
        ci: false,
    };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let files = hcpspec::report::write_all(&hcpspec::report::Report::of(vec![result]), dir.path())
        .map_err(|e| e.to_string())?;
    let render = t.elapsed().as_secs_f64();
    let bytes: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    println!(
        "reports: 10 runtimes × {} cases rendered to {} files ({} KiB) in {:.3} s",
        cases.len(),
        files.len(),
        bytes / 1024,
        render
    );
    // Snapshots: accept once, then time a full comparison (body + read + compare) per case.
    for (c, r) in cases.iter().zip(&results) {
        let p = snapshot::path(dir.path(), "reference", &c.suite, &c.id);
        snapshot::write(&p, "bench", &snapshot::body(&r.name, &r.observations), true)
            .map_err(|e| e.to_string())?;
    }
    let t = Instant::now();
    let drifted = cases
        .iter()
        .zip(&results)
        .filter(|(c, r)| {
            snapshot::compare(
                &snapshot::path(dir.path(), "reference", &c.suite, &c.id),
                &snapshot::body(&r.name, &r.observations),
            )
            .is_some()
        })
        .count();
    let compare = t.elapsed().as_secs_f64();
    println!(
        "snapshots: {} compared in {:.4} s ({} drifted) = {:.1}% of the in-process run ({:.3} s)",
        cases.len(),
        compare,
        drifted,
        100.0 * compare / suite_secs,
        suite_secs
    );
    Ok(())
}
