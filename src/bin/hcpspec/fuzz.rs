//! `hcpspec fuzz`: wiring only; the fuzzer is the suite's (`Suite::fuzz`), the contract's by
//! default.

use hcpspec::error::{BadInput, Unreachable};
use hcpspec::exit;
use hcpspec::suites::hcp::Contract;
use hcpspec::suites::{FuzzFinding, FuzzNews, FuzzProgress, FuzzRun, Stopped, Suite as _};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

#[path = "fuzz_corpus.rs"]
mod corpus;

#[derive(clap::Args, Clone)]
pub struct FuzzArgs {
    /// The runtime under test: inproc:reference, inproc:stub, inproc:mutant:NAME, or any spec
    /// `run --runtime` takes.
    #[arg(long)]
    pub runtime: String,
    /// The suite whose protocol is fuzzed: the HCP contract (default), or `harness-api`, whose
    /// fuzzer mutates what core and the gates send the harness named by --runtime.
    #[arg(long)]
    pub suite: Option<String>,
    /// Stop after this many seconds.
    #[arg(long, default_value_t = 60.0, value_parser = |s: &str| crate::cli::seconds(s, true, hcpspec::suites::hcp::fuzz::MAX_SECONDS))]
    pub seconds: f64,
    /// The seed: the same seed generates the same cases.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Cases run at once (findings are reproducible from the seed with --jobs 1).
    #[arg(long, default_value_t = 1, value_parser = crate::cli::jobs)]
    pub jobs: usize,
    /// Stop after this many cases.
    #[arg(long, value_parser = |s: &str| crate::cli::bounded(s, 1, 1_000_000_000))]
    pub cases: Option<u64>,
    /// Play only shard k of n (1-based, e.g. 2/4) of the case numbers, for a CI matrix: the
    /// numbers i with i % n = k - 1, so that n shards of a run by --cases play the whole run.
    #[arg(long, allow_hyphen_values = true)]
    pub partition: Option<String>,
    /// Stop after this many findings.
    #[arg(long, value_parser = |s: &str| crate::cli::bounded(s, 1, 100_000).map(|n| n as usize))]
    pub max_findings: Option<usize>,
    /// Where findings are written as case files [default: DIR/found with --vectors DIR, else
    /// ./found].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// A corpus kept between runs: its case files (earlier findings) are replayed on the runtime
    /// before any new case, and this run's findings are added to it [default for --out].
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Runs of a case the shrinker may spend per finding (0: write findings unshrunk).
    #[arg(long, default_value_t = 400, value_parser = |s: &str| crate::cli::bounded(s, 0, 1_000_000).map(|n| n as usize))]
    pub shrink_budget: usize,
    /// The vectors folder to read (cases, fixture packs, denial classes) instead of the vectors
    /// embedded in this binary.
    #[arg(long, env = "HCPSPEC_VECTORS", value_name = "DIR")]
    pub vectors: Option<PathBuf>,
}

static STOP: AtomicBool = AtomicBool::new(false);

pub fn fuzz(a: &FuzzArgs) -> Result<i32, exit::Error> {
    let partition = a
        .partition
        .as_deref()
        .map(hcpspec::run::plan::parse_partition)
        .transpose()?
        .map(|(k, n)| (k as u64, n as u64));
    // A harness is launched, not called: only the harness-api fuzzer plays on one.
    if a.runtime.starts_with("exec:") && a.suite.as_deref() != Some("harness-api") {
        return Err(BadInput(format!(
            "--runtime {}: exec: names a harness, fuzzed with --suite harness-api; the contract's fuzzer (and core-api's and host's) takes inproc:NAME, stdio:'CMD ARGS', http://HOST:PORT or ws://HOST:PORT/PATH",
            a.runtime
        ))
        .into());
    }
    if let Some(out) = &a.out {
        crate::cli::out_dir_probed("--out", out, false)?;
    }
    let vectors = crate::cli::vectors(&a.vectors)?;
    // Findings are kept: beside a folder given, else here (never in the materialised tree).
    let found = a
        .out
        .clone()
        .or(a.corpus.clone())
        .unwrap_or_else(|| match &vectors.given {
            Some(d) => d.join("found"),
            None => PathBuf::from("found"),
        });
    if let Some(name) = &a.suite {
        let l = hcpspec::suites::load(&vectors.root, name).map_err(|e| BadInput(e.to_string()))?;
        if let (Some(p), false) = (&a.partition, l.suite.drives() == Contract.drives()) {
            return Err(BadInput(format!(
                "--partition {p}: --suite {name}'s fuzzer plays one stream of trials, not numbered cases; only the contract's fuzzer (the default suite) is partitioned"
            ))
            .into());
        }
        if let (Some(c), false) = (&a.corpus, l.suite.drives() == Contract.drives()) {
            return Err(BadInput(format!(
                "--corpus {}: only the contract's fuzzer (the default suite) keeps a corpus",
                c.display()
            ))
            .into());
        }
        let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
        eprintln!(
            "fuzz: {} against mutated {name} cases from seed {} for {} s; findings go to {}",
            a.runtime,
            a.seed,
            a.seconds,
            found.join(name).display()
        );
        if l.suite.drives() != Contract.drives() {
            let run = fuzz_run(a, None, &l.cases, &found, &vectors.root, &|_| {});
            return match l.suite.fuzz(&run) {
                Some(report) => print_report(&report?, &found),
                None => Err(BadInput(format!("--suite {name}: this suite has no fuzzer")).into()),
            };
        }
    }
    let out = found;
    let tty = std::io::stderr().is_terminal();
    let progress = |p: FuzzProgress| {
        let secs = p.elapsed.as_secs_f64();
        let line = format!(
            "fuzz: {} cases, {:.0} cases/s, {} findings, {} errors, {:.0} s",
            p.cases,
            p.cases as f64 / secs.max(1e-9),
            p.findings,
            p.errors,
            secs
        );
        if tty {
            eprint!("\r{line}   ");
        } else if p.elapsed.as_secs().is_multiple_of(10) {
            eprintln!("{line}");
        }
    };
    // Differences on points the spec leaves open: reported, never failing the run.
    let profiled = std::sync::atomic::AtomicUsize::new(0);
    let found = |f: &FuzzFinding| {
        if f.profile {
            profiled.fetch_add(1, Ordering::Relaxed);
        }
        print_finding(f, tty)
    };
    // Told once the runtime answered and the fuzzer is ready, as before any case plays.
    let started = || {
        // Ctrl-C stops generating; findings already written stay, one being shrunk is written
        // as far as it got.
        let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
        eprintln!(
            "fuzz: {} from seed {}{} for {} s on {} job(s); findings go to {}",
            a.runtime,
            a.seed,
            partition.map_or(String::new(), |(k, n)| format!(
                ", the case numbers i with i % {n} = {} (partition {k}/{n})",
                k - 1
            )),
            a.seconds,
            a.jobs.max(1),
            out.display()
        );
    };
    let tell = |news: FuzzNews| match news {
        FuzzNews::Started => started(),
        FuzzNews::Progress(p) => progress(p),
        FuzzNews::Found(f) => found(f),
    };
    if let (Some((k, n)), None) = (partition, a.cases) {
        // Its shards play what each machine manages in the time: no union of them is a run.
        eprintln!("warning: --partition {k}/{n} without --cases: a run bounded by time cannot be merged with its other shards into one run's findings (docs/fuzzing.md, \"Scale out\")");
    }
    // The corpus first: a regression check of earlier findings before any new case.
    let reproduced = match &a.corpus {
        Some(dir) => corpus::replay(dir, &a.runtime, &vectors.root)?,
        None => 0,
    };
    let run = fuzz_run(a, partition, &[], &out, &vectors.root, &tell);
    let report = Contract.fuzz(&run).expect("the contract suite fuzzes")?;
    if let Some(dir) = &a.corpus {
        corpus::keep(dir, &report.findings);
    }
    if tty {
        eprintln!();
    }
    let secs = report.elapsed.as_secs_f64();
    let profiled = profiled.load(Ordering::Relaxed);
    println!(
        "fuzz: {} cases in {:.1} s ({:.0} cases/s), {} findings{}, {} cases ended in an error{}",
        report.cases,
        secs,
        report.cases as f64 / secs.max(1e-9),
        report.findings.len(),
        profile_note(profiled),
        report.unplayable,
        if report.stopped.is_some() {
            " (interrupted)"
        } else {
            ""
        }
    );
    print_errors(&report.unplayable_named, report.unplayable);
    if report.findings.iter().any(|(_, _, path)| path.is_none()) {
        return Err(why_unwritten(&out));
    }
    Ok(exit::of_findings(report.findings.len() + reproduced))
}

/// One finding as it is written: its rule, when, the case, and where its file is.
fn print_finding(f: &FuzzFinding, tty: bool) {
    if tty {
        eprint!("\r");
    }
    println!(
        "{}: {} after {:.2} s (case {}): {}\n  {} ({} → {} steps){}",
        if f.profile { "profile" } else { "finding" },
        f.rule,
        f.after.as_secs_f64(),
        f.case_index,
        f.message.lines().next().unwrap_or_default(),
        f.path
            .as_ref()
            .map_or("(not written)".into(), |p| p.display().to_string()),
        f.steps.0,
        f.steps.1,
        if f.reproduces {
            ""
        } else {
            "; WARNING: the written case does not reproduce it"
        }
    );
}

/// The summary's word on `PROFILE` differences, when there are some.
fn profile_note(n: usize) -> String {
    match n {
        0 => String::new(),
        n => format!(" and {n} PROFILE differences (they fail nothing)"),
    }
}

/// The cases that ended in an error, one line per distinct first line of an error, with every
/// case that ended so: `error: cases 3, 8: step 1 (activate): …`.
fn print_errors(named: &[(String, String)], errors: u64) {
    // Grouped by a map, in the order each error was first seen: an implementation that makes
    // every error unique must not make the summary quadratic in the cases named.
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut by_error: Vec<(&str, Vec<&str>)> = Vec::new();
    for (why, case) in named {
        let n = case.strip_prefix("case ").unwrap_or(case);
        let i = *at.entry(why.as_str()).or_insert_with(|| {
            by_error.push((why, Vec::new()));
            by_error.len() - 1
        });
        by_error[i].1.push(n);
    }
    for (why, cases) in by_error {
        let s = if cases.len() == 1 { "" } else { "s" };
        println!("error: case{s} {}: {why}", cases.join(", "));
    }
    if errors > named.len() as u64 {
        println!(
            "fuzz: {} more cases ended in an error, not named (a run names the first {})",
            errors - named.len() as u64,
            hcpspec::suites::hcp::fuzz::ERRORS_NAMED
        );
    }
}

/// Findings not written, with the reason: the writers keep only that a write failed, so the
/// folder is made, and a file made in it, again to find out why (the outputs' exit 4).
fn why_unwritten(dir: &std::path::Path) -> exit::Error {
    let io = |path: &std::path::Path, source| hcpspec::report::WriteError::Io {
        path: path.to_path_buf(),
        source,
    };
    let probe = dir.join(".hcpspec-write-probe");
    let source = match std::fs::create_dir_all(dir) {
        Err(e) => io(dir, e),
        Ok(()) => match std::fs::write(&probe, b"") {
            Err(e) => io(&probe, e),
            Ok(()) => {
                let _ = std::fs::remove_file(&probe);
                io(
                    dir,
                    std::io::Error::other("a finding's file could not be written"),
                )
            }
        },
    };
    exit::Error::Unwritten {
        what: "fuzz findings",
        source,
    }
}

/// What the fuzzer of a suite is asked to do: the arguments, its seed cases, where findings go.
fn fuzz_run<'a>(
    a: &'a FuzzArgs,
    partition: Option<(u64, u64)>,
    cases: &'a [hcpspec::case::Case],
    out: &'a std::path::Path,
    vectors: &'a std::path::Path,
    tell: &'a (dyn Fn(FuzzNews) + Sync),
) -> FuzzRun<'a> {
    FuzzRun {
        spec: &a.runtime,
        cases,
        seed: a.seed,
        seconds: a.seconds,
        trials: a.cases,
        findings: a.max_findings,
        out,
        stop: &STOP,
        jobs: a.jobs.max(1),
        partition,
        shrink_budget: a.shrink_budget,
        vectors,
        tell,
    }
}

/// A suite fuzzer's findings and totals; exit 1 on any finding, 4 when one was not written.
fn print_report(
    report: &hcpspec::suites::FuzzReport,
    found: &std::path::Path,
) -> Result<i32, exit::Error> {
    for (i, (why, seed, path)) in report.findings.iter().enumerate() {
        let after = report
            .found_after
            .get(i)
            .map(|t| format!(" after {:.1} s", t.as_secs_f64()))
            .unwrap_or_default();
        println!(
            "finding: {why} (from {seed}){after}: {}",
            path.as_ref()
                .map_or("(not written)".into(), |p| p.display().to_string())
        );
    }
    println!(
        "fuzz: {} cases in {:.1} s, {} findings{}",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.findings.len(),
        if report.unplayable > 0 {
            format!(", {} could not be played", report.unplayable)
        } else {
            String::new()
        }
    );
    for (why, seed) in &report.unplayable_named {
        println!("unplayable: {why} (from {seed})");
    }
    match &report.stopped {
        Some(Stopped::Unreachable(e)) => return Err(e.clone().into()),
        Some(why) => eprintln!("hcpspec: {why}"),
        None => {}
    }
    if report.findings.is_empty() && report.cases > 0 && report.unplayable == report.cases {
        return Err(Unreachable(format!(
            "none of the {} fuzz cases could be played (the target could not be started or answered nothing usable)",
            report.cases
        ))
        .into());
    }
    if report.findings.iter().any(|(_, _, path)| path.is_none()) {
        return Err(why_unwritten(found));
    }
    // A trial the fuzzer named unplayable (the target answered garbage, a step ended in an
    // error) judged nothing: never green.
    if !report.unplayable_named.is_empty() {
        return Ok(exit::FAILURES);
    }
    Ok(exit::of_findings(report.findings.len()))
}
