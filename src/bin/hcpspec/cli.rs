//! The subcommands, wired from the library. Errors are one line for the user; exit codes are
//! the named constants of `hcpspec::exit`.

use hcpspec::adapter;
use hcpspec::case::{self, Case, Level};
use hcpspec::exit;
use hcpspec::report::{fnv1a, RunResult, RuntimeRun, Summary};
use hcpspec::run::expectations::{Expect, Expectations, Outcome};
use hcpspec::run::mutants::KillMatrix;
use hcpspec::run::plan::{Selection, SECTIONS};
use hcpspec::case::matcher::Claims;
use hcpspec::run::{run_all, CaseResult, RunEnv, Verdict};
use hcpspec::runtime::mutant::Mutant;
use hcpspec::snapshot::{self, Drift};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::Filters;

pub fn default_vectors() -> PathBuf {
    let here = PathBuf::from("vectors");
    if here.join("contract").is_dir() {
        here
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors")
    }
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

fn select(filters: &Filters) -> Result<Vec<Case>, String> {
    let cases = case::load_suite(&filters.vectors, "contract").map_err(|e| e.to_string())?;
    let levels = filters
        .level
        .iter()
        .map(|l| match l.to_ascii_uppercase().as_str() {
            "MUST" => Ok(Level::MUST),
            "SHOULD" => Ok(Level::SHOULD),
            "MAY" => Ok(Level::MAY),
            _ => Err(format!("--level {l}: expected MUST, SHOULD or MAY")),
        })
        .collect::<Result<_, _>>()?;
    let partition = filters
        .partition
        .as_deref()
        .map(hcpspec::run::plan::parse_partition)
        .transpose()?;
    Selection {
        filters: filters.filter.clone(),
        sections: filters.section.clone(),
        levels,
        partition,
    }
    .apply(&cases)
}

fn env(vectors: &Path) -> Result<RunEnv, String> {
    RunEnv::new(vectors, &RunEnv::self_probe())
}

#[derive(clap::Args)]
pub struct RunArgs {
    /// Runtime spec: inproc:reference, inproc:stub, inproc:mutant:NAME, stdio:'CMD ARGS',
    /// http://HOST:PORT, ws://HOST:PORT/PATH; repeatable (one runtime over several transports
    /// is checked for parity).
    #[arg(long = "runtime")]
    pub runtime: Vec<String>,
    #[command(flatten)]
    pub filters: Filters,
    /// Cases run at once (1 to 256).
    #[arg(long, default_value_t = cores(), value_parser = jobs)]
    pub jobs: usize,
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

pub fn run(a: &RunArgs) -> Result<i32, String> {
    let cases = select(&a.filters)?;
    let env = env(&a.filters.vectors)?;
    if a.mutants {
        return Ok(print_kill_matrix(&cases, &env, a.jobs));
    }
    let expectations = match &a.expectations {
        Some(p) => Expectations::load(p)?,
        None => Expectations::default(),
    };
    let names: Vec<String> = cases.iter().map(Case::name).collect();
    for e in expectations.unused(&names) {
        eprintln!("warning: expectation `{}` matches no selected case", e.case);
    }
    let specs: Vec<String> = if a.runtime.is_empty() {
        vec!["inproc:reference".into(), "inproc:stub".into()]
    } else {
        a.runtime.clone()
    };
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
    let connectors = specs
        .iter()
        .map(|s| adapter::connector_with(s, &opts))
        .collect::<Result<Vec<_>, _>>()?;
    let tty = std::io::stderr().is_terminal();
    let mut runs = Vec::new();
    let mut code = exit::OK;
    for (spec, connect) in specs.iter().zip(&connectors) {
        let info = match connect().and_then(|mut a| {
            a.call("initialize", json!({ "protocol": hcpspec::shim::PROTOCOL }))
                .map_err(|e| e.to_string())
        }) {
            // The runtime's name, version and features, as reports keep them.
            Ok(info) => snapshot::contain(&info),
            Err(e) => {
                eprintln!(
                    "hcpspec: runtime {spec} unreachable: {}",
                    hcpspec::report::printable(&snapshot::contain_text(&e), true)
                );
                return Ok(exit::UNREACHABLE);
            }
        };
        let run_name = info
            .pointer("/runtime/name")
            .and_then(Value::as_str)
            .unwrap_or(spec)
            .to_string();
        let (skipped, to_run): (Vec<&Case>, Vec<&Case>) = cases.iter().partition(|c| {
            expectations
                .lookup(&c.name())
                .is_some_and(|e| e.expect == Expect::Skip)
        });
        let to_run: Vec<Case> = to_run.into_iter().cloned().collect();
        let start = Instant::now();
        let progress = Progress::new(spec, to_run.len(), tty);
        let claims = Claims::from_initialize(&info);
        let ran = run_all(&to_run, &env, &claims, a.jobs, connect, &|r| {
            progress.done(r)
        });
        progress.finish();
        let mut ran = ran.into_iter();
        let mut results = Vec::new();
        let mut drifted = 0;
        for c in &cases {
            let entry = expectations.lookup(&c.name()).cloned();
            let mut r = if skipped.iter().any(|s| s.name() == c.name()) {
                skipped_result(c, entry.as_ref())
            } else {
                ran.next().expect("one result per case run")
            };
            r.annotations.outcome = Some(Outcome::of(&r, entry.as_ref()));
            r.annotations.expectation = entry;
            let check = a
                .snapshots
                .as_ref()
                .filter(|_| !matches!(r.verdict, Verdict::Skip { .. }));
            if let Some(root) = check {
                if let Some((d, written)) =
                    snapshot::check(root, &run_name, c, &r.observations, a.accept)?
                {
                    if !a.accept {
                        drifted += 1;
                        match &d {
                            Drift::New => eprintln!(
                                "\nDRIFT {} on {spec}: no snapshot yet ({})",
                                r.name,
                                written.display()
                            ),
                            Drift::Changed { diff } => {
                                let diff = hcpspec::report::printable(diff, true);
                                let diff = if tty { snapshot::colour(&diff) } else { diff };
                                eprintln!(
                                    "\nDRIFT {} on {spec} (verdict {}):\n{diff}",
                                    r.name,
                                    r.verdict.label()
                                );
                            }
                        }
                        r.annotations.drift = Some(d);
                    }
                }
            }
            results.push(r);
        }
        let mut summary = Summary::of(&results);
        summary.micros = start.elapsed().as_micros() as u64;
        print_table(spec, &info, &cases, &results, &summary);
        for (c, r) in cases.iter().zip(&results) {
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
                        .map(|e| hcpspec::report::printable(&e.reason, false))
                        .unwrap_or_default()
                );
            }
        }
        let failing = results.iter().any(|r| {
            r.annotations
                .outcome
                .is_some_and(|o| o.fails_run(r.level, a.strict_expectations))
        });
        if failing || drifted > 0 {
            code = exit::FAILURES;
        }
        if drifted > 0 {
            eprintln!("\n{drifted} case(s) drifted from their snapshots on {spec}: review the .snap.new files (cargo insta review) or rerun with --accept");
        } else if a.accept {
            println!(
                "snapshots of {spec} accepted under {}",
                a.snapshots
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            );
        }
        runs.push(RuntimeRun {
            runtime: spec.clone(),
            info,
            summary,
            cases: results,
        });
    }
    let parity = crate::shim::parity(&runs);
    if !parity.is_empty() {
        code = exit::FAILURES;
    }
    let result = RunResult {
        schema: hcpspec::report::SCHEMA.into(),
        hcpspec_version: env!("CARGO_PKG_VERSION").into(),
        suite: "contract".into(),
        cases_hash: fnv1a(
            cases
                .iter()
                .map(|c| std::fs::read(&c.file).unwrap_or_default()),
        ),
        runtimes: runs,
        parity,
    };
    let files = hcpspec::report::write_all(&result, &a.out)?;
    println!(
        "\nwrote {} ({} files)",
        a.out.join("result.json").display(),
        files.len()
    );
    Ok(code)
}

fn skipped_result(c: &Case, entry: Option<&hcpspec::run::expectations::Entry>) -> CaseResult {
    CaseResult {
        name: c.name(),
        section: c.section.clone(),
        level: c.level,
        spec: c.spec.clone(),
        verdict: Verdict::Skip {
            reason: format!(
                "expected skip: {}",
                entry.map(|e| e.reason.as_str()).unwrap_or("")
            ),
        },
        observations: vec![],
        unclassified: vec![],
        micros: 0,
        annotations: Default::default(),
    }
}

/// A progress bar on a terminal; in CI, a plain line for each case that did not pass.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    spec: String,
}

impl Progress {
    fn new(spec: &str, len: usize, tty: bool) -> Progress {
        let bar = tty.then(|| {
            let b = indicatif::ProgressBar::new(len as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(spec.to_string());
            b
        });
        Progress {
            bar,
            spec: spec.to_string(),
        }
    }
    fn done(&self, r: &CaseResult) {
        match &self.bar {
            Some(b) => {
                b.inc(1);
                if !matches!(r.verdict, Verdict::Pass) {
                    b.set_message(format!(
                        "last problem: {}",
                        hcpspec::report::printable(&r.name, false)
                    ));
                }
            }
            None if !matches!(r.verdict, Verdict::Pass) => {
                eprintln!(
                    "hcpspec: {} {} {}",
                    self.spec,
                    if r.level == Level::PROFILE {
                        "profile"
                    } else {
                        r.verdict.label()
                    },
                    hcpspec::report::printable(&r.name, false)
                )
            }
            None => {}
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

pub fn report(results: &[PathBuf], out: &Path) -> Result<i32, String> {
    let read = results
        .iter()
        .map(|p| hcpspec::report::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = hcpspec::report::merge(read)?;
    for f in hcpspec::report::write_all(&merged, out)? {
        println!("wrote {}", f.display());
    }
    Ok(exit::OK)
}

fn print_table(
    spec: &str,
    info: &Value,
    cases: &[Case],
    results: &[hcpspec::run::CaseResult],
    summary: &Summary,
) {
    let name = info
        .pointer("/runtime/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let version = info
        .pointer("/runtime/version")
        .and_then(Value::as_str)
        .unwrap_or("?");
    let (name, version) = (
        hcpspec::report::printable(name, false),
        hcpspec::report::printable(version, false),
    );
    println!("\n{spec}  ({name} {version})");
    println!(
        "  {:<22} {:>5} {:>5} {:>5} {:>6} {:>6} {:>8}",
        "section", "pass", "fail", "skip", "unimpl", "error", "profile"
    );
    for (s, title) in SECTIONS {
        let rs: Vec<_> = cases
            .iter()
            .zip(results)
            .filter(|(c, _)| c.section == *s)
            .map(|(_, r)| r.clone())
            .collect();
        if rs.is_empty() {
            continue;
        }
        let t = Summary::of(&rs);
        let mark = if t.must_fail > 0 { "✗" } else { "✓" };
        let label = if s.len() <= 2 {
            format!("{s:>2} {title}")
        } else {
            title.to_string()
        };
        println!(
            "{mark} {:<22} {:>5} {:>5} {:>5} {:>6} {:>6} {:>8}",
            label, t.pass, t.fail, t.skip, t.unimplemented, t.error, t.profile
        );
    }
    println!(
        "  {:<22} {:>5} {:>5} {:>5} {:>6} {:>6} {:>8}   {} cases in {:.2} s",
        "total",
        summary.pass,
        summary.fail,
        summary.skip,
        summary.unimplemented,
        summary.error,
        summary.profile,
        results.len(),
        summary.micros as f64 / 1e6
    );
}

fn print_kill_matrix(cases: &[Case], env: &RunEnv, jobs: usize) -> i32 {
    let matrix = KillMatrix::compute(cases, env, jobs);
    let sections: Vec<&str> = SECTIONS.iter().map(|(s, _)| *s).collect();
    print!("{:<30}", "mutant \\ section");
    for s in &sections {
        print!("{:>5}", if *s == "must-not" { "mn" } else { s });
    }
    println!("   killed");
    let mut survivors = 0;
    for &m in Mutant::ALL {
        print!("{:<30}", m.name());
        for s in &sections {
            let n = matrix.failures(m, s);
            let own = m.sections().contains(s);
            let cell = match (n, own) {
                (0, true) => "·!".to_string(),
                (0, false) => "·".to_string(),
                (n, true) => format!("{n}*"),
                (n, false) => n.to_string(),
            };
            print!("{cell:>5}");
        }
        let killed = !matrix.kills(m).is_empty();
        survivors += usize::from(!killed);
        println!(
            "   {}",
            if killed {
                "yes"
            } else {
                "NO: survives its own sections"
            }
        );
    }
    println!(
        "\n(cell: failed cases; * = the mutant's own section, ·! = own section with no failure)"
    );
    let unkilled = matrix.unkilled_must(cases);
    for c in &unkilled {
        println!("warning: no mutant of its own section (or killed_by) fails MUST case {}", c.name());
    }
    let claims = matrix.false_claims(cases);
    for c in &claims {
        println!("error: {c}");
    }
    println!("\n{:<36} {:>10}", "allowed variant", "MUST fails");
    let mut unfair = 0;
    for (name, failed) in hcpspec::run::mutants::variant_failures(cases, env, jobs) {
        unfair += failed.len();
        println!("{name:<36} {:>10}", failed.len());
        for r in failed {
            println!("  {} {}", r.verdict.label().to_uppercase(), r.name);
        }
    }
    println!(
        "{} mutants, {} killed; {} MUST cases, {} not failed by any mutant",
        Mutant::ALL.len(),
        Mutant::ALL.len() - survivors,
        cases.iter().filter(|c| c.level == Level::MUST).count(),
        unkilled.len()
    );
    if survivors > 0 || !claims.is_empty() || unfair > 0 {
        exit::FAILURES
    } else {
        exit::OK
    }
}

pub fn lint(dirs: &[PathBuf]) -> Result<i32, String> {
    let mut issues = 0;
    for dir in dirs {
        if !dir.is_dir() {
            return Err(format!("{}: not a pack directory", dir.display()));
        }
        let files = hcpspec::pack::PackFiles::read(dir);
        match hcpspec::pack::install(&files) {
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

pub fn list(filters: &Filters) -> Result<i32, String> {
    for c in select(filters)? {
        println!("{}", c.name());
    }
    Ok(exit::OK)
}

pub fn explain(name: &str, vectors: &Path) -> Result<i32, String> {
    let cases = case::load_suite(vectors, "contract").map_err(|e| e.to_string())?;
    let case = cases
        .iter()
        .find(|c| c.name() == name || c.id == name || name.starts_with(&(c.name() + "::")))
        .ok_or_else(|| format!("no case named {name} (see `hcpspec list`)"))?;
    println!(
        "{}\n  {}\n  level:   {:?}, section {}\n  spec:    {}\n  file:    {}",
        case.name(),
        case.title,
        case.level,
        case.section,
        case.spec,
        case.file.display()
    );
    if let Some(a) = &case.assumption {
        println!("  assumption: {a}");
    }
    println!(
        "  setup:   {}",
        serde_json::to_string(&case.setup).unwrap_or_default()
    );
    for (i, s) in case.steps.iter().enumerate() {
        println!(
            "  step {i}: {}",
            serde_json::to_string(s).unwrap_or_default()
        );
    }
    Ok(exit::OK)
}

pub fn bench(iterations: usize, vectors: &Path) -> Result<i32, String> {
    let cases = case::load_suite(vectors, "contract").map_err(|e| e.to_string())?;
    let env = env(vectors)?;
    let connect = adapter::connector("inproc:reference")?;
    let claims = adapter::embedded_claims("reference").unwrap_or_default();
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
    let mut best = f64::MAX;
    for _ in 0..iterations.max(1) {
        let before = hcpspec::runtime::adapter::spawns();
        let t = Instant::now();
        let results = run_all(&cases, &env, &claims, 1, &connect, &|_| {});
        let secs = t.elapsed().as_secs_f64();
        let spawned = hcpspec::runtime::adapter::spawns() - before;
        if results.iter().any(|r| !matches!(r.verdict, Verdict::Pass)) {
            return Err("the reference fails its own suite; run `hcpspec run` first".into());
        }
        best = best.min(secs);
        println!(
            "suite: {} cases in {:.3} s = {:.0} cases/s (1 job); {} probe spawns ≈ {:.3} s of it; the rest {:.3} s",
            cases.len(),
            secs,
            cases.len() as f64 / secs,
            spawned,
            spawned as f64 * spawn_us / 1e6,
            (secs - spawned as f64 * spawn_us / 1e6).max(0.0)
        );
    }
    let t = Instant::now();
    let results = run_all(&cases, &env, &claims, cores(), &connect, &|_| {});
    let par = t.elapsed().as_secs_f64();
    println!("probe spawn alone: {spawn_us:.0} µs each (mean of {spawn_n})");
    println!(
        "best of {iterations}: {best:.3} s on 1 job; {:.3} s on {} jobs ({:.0} cases/s)",
        par,
        cores(),
        results.len() as f64 / par
    );
    bench_reports(&cases, results, par)?;
    Ok(exit::OK)
}

/// Rendering every output for 10 runtimes × the suite, and the cost of snapshot comparison
/// against the in-process run it annotates (`suite_secs`, measured in the same process).
fn bench_reports(cases: &[Case], results: Vec<CaseResult>, suite_secs: f64) -> Result<(), String> {
    let info = json!({ "runtime": { "name": "reference", "version": env!("CARGO_PKG_VERSION") } });
    let runs = (0..10)
        .map(|i| RuntimeRun {
            runtime: format!("inproc:copy-{i}"),
            info: info.clone(),
            summary: Summary::of(&results),
            cases: results.clone(),
        })
        .collect();
    let result = RunResult {
        schema: hcpspec::report::SCHEMA.into(),
        hcpspec_version: env!("CARGO_PKG_VERSION").into(),
        suite: "contract".into(),
        cases_hash: String::new(),
        runtimes: runs,
        parity: Vec::new(),
    };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let files = hcpspec::report::write_all(&result, dir.path())?;
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
