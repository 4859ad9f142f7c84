//! `hcpspec fuzz`: wiring only; the fuzzer is `hcpspec::fuzz`.

use hcpspec::exit;
use hcpspec::fuzz::{Config, Finding, Fuzzer, Progress};
use hcpspec::suites::hcp::RunEnv;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

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
    #[arg(long, default_value_t = 60.0, value_parser = |s: &str| crate::cli::seconds(s, true, hcpspec::fuzz::MAX_SECONDS))]
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
    /// Stop after this many findings.
    #[arg(long, value_parser = |s: &str| crate::cli::bounded(s, 1, 100_000).map(|n| n as usize))]
    pub max_findings: Option<usize>,
    /// Where findings are written as case files [default: VECTORS/found].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Runs of a case the shrinker may spend per finding (0: write findings unshrunk).
    #[arg(long, default_value_t = 400, value_parser = |s: &str| crate::cli::bounded(s, 0, 1_000_000).map(|n| n as usize))]
    pub shrink_budget: usize,
    /// The vectors directory (fixture packs and denial classes).
    #[arg(long, default_value_os_t = crate::cli::default_vectors())]
    pub vectors: PathBuf,
}

static STOP: AtomicBool = AtomicBool::new(false);

pub fn fuzz(a: &FuzzArgs) -> Result<i32, String> {
    if let Some(name) = &a.suite {
        let suite = hcpspec::case::load_suite_info(&a.vectors, name).map_err(|e| e.to_string())?;
        if suite.drives == hcpspec::suites::harness_api::DRIVES {
            return fuzz_harness(a, name);
        }
        if suite.drives == hcpspec::suites::core_api::DRIVES {
            let connect = hcpspec::suites::core_api::connector(&a.runtime, &Default::default())?;
            return fuzz_script(a, name, "scripts", &|cases, out| {
                hcpspec::suites::core_api::fuzz::run(
                    &connect,
                    cases,
                    hcpspec::suites::core_api::fuzz::Budget {
                        seed: a.seed,
                        seconds: a.seconds,
                        trials: a.cases,
                        findings: a.max_findings,
                    },
                    Some(out),
                    &STOP,
                )
            });
        }
        if suite.drives == hcpspec::suites::host::DRIVES {
            let connect = hcpspec::suites::host::connector(&a.runtime, &Default::default())?;
            return fuzz_script(a, name, "cases", &|cases, out| {
                hcpspec::suites::host::fuzz::run(
                    &connect,
                    cases,
                    a.seed,
                    a.seconds,
                    a.cases,
                    Some(out),
                    &STOP,
                )
            });
        }
    }
    let mut env = RunEnv::new(&a.vectors, &RunEnv::self_probe())?;
    env.uncapped = true; // the oracles judge whole observations; findings cap nothing they need
    let out = a.out.clone().unwrap_or_else(|| a.vectors.join("found"));
    let cfg = Config {
        runtime: a.runtime.clone(),
        seed: a.seed,
        seconds: a.seconds,
        max_cases: a.cases,
        jobs: a.jobs.max(1),
        max_findings: a.max_findings,
        out: Some(out.clone()),
        shrink_budget: a.shrink_budget,
    };
    let fuzzer = Fuzzer::new(cfg, &env)?;
    // Ctrl-C stops generating; findings already written stay, one being shrunk is written as
    // far as it got.
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
    let tty = std::io::stderr().is_terminal();
    eprintln!(
        "fuzz: {} from seed {} for {} s on {} job(s); findings go to {}",
        a.runtime,
        a.seed,
        a.seconds,
        a.jobs.max(1),
        out.display()
    );
    let progress = |p: Progress| {
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
    let found = |f: &Finding| {
        if tty {
            eprint!("\r");
        }
        println!(
            "finding: {} after {:.2} s (case {}): {}\n  {} ({} → {} steps){}",
            f.rule,
            f.after.as_secs_f64(),
            f.case_index,
            f.message,
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
    };
    let report = match fuzzer.run(&STOP, &progress, &found) {
        Ok(r) => r,
        Err(e) if e.contains("unreachable") => {
            eprintln!("hcpspec: {e}");
            return Ok(exit::UNREACHABLE);
        }
        Err(e) => return Err(e),
    };
    if tty {
        eprintln!();
    }
    let secs = report.elapsed.as_secs_f64();
    println!(
        "fuzz: {} cases in {:.1} s ({:.0} cases/s), {} findings, {} cases ended in an error{}",
        report.cases,
        secs,
        report.cases as f64 / secs.max(1e-9),
        report.findings.len(),
        report.errors,
        if report.interrupted {
            " (interrupted)"
        } else {
            ""
        }
    );
    Ok(if report.findings.is_empty() {
        exit::OK
    } else {
        exit::FAILURES
    })
}

/// `hcpspec fuzz --suite harness-api`: frames and gate answers mutated against a harness.
fn fuzz_harness(a: &FuzzArgs, suite: &str) -> Result<i32, String> {
    use hcpspec::suites::harness_api::{fuzz as hfuzz, Harness};
    let cases = hcpspec::suites::load_suite(&a.vectors, suite).map_err(|e| e.to_string())?;
    let out = a.out.clone().unwrap_or_else(|| a.vectors.join("found"));
    let cfg = hfuzz::Config {
        harness: Harness::parse(&a.runtime)?,
        seed: a.seed,
        seconds: a.seconds,
        max_cases: a.cases,
        out: Some(out.clone()),
    };
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
    eprintln!(
        "fuzz: {} against {suite} scenarios from seed {} for {} s; findings go to {}",
        a.runtime,
        a.seed,
        a.seconds,
        out.join(suite).display()
    );
    let report = hfuzz::run(&cfg, &cases, &STOP);
    for f in &report.findings {
        println!(
            "finding: {} ({}) from {} with {} injection(s): {}",
            f.check,
            f.message,
            f.seed_case,
            f.injections,
            f.path
                .as_ref()
                .map_or("(not written)".into(), |p| p.display().to_string())
        );
    }
    println!(
        "fuzz: {} scenarios in {:.1} s, {} findings, {} could not be played",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.findings.len(),
        report.errors
    );
    Ok(if report.findings.is_empty() {
        exit::OK
    } else {
        exit::FAILURES
    })
}

/// `hcpspec fuzz --suite core-api` and `--suite host`: mutated cases against a core or an
/// adapter behind its shim, judged by its invariants; findings are written as cases.
fn fuzz_script(
    a: &FuzzArgs,
    suite: &str,
    what: &str,
    run: &dyn Fn(&[hcpspec::case::Case], &std::path::Path) -> hcpspec::suites::FuzzReport,
) -> Result<i32, String> {
    let cases = hcpspec::suites::load_suite(&a.vectors, suite).map_err(|e| e.to_string())?;
    let out = a.out.clone().unwrap_or_else(|| a.vectors.join("found"));
    let _ = ctrlc::set_handler(|| STOP.store(true, Ordering::SeqCst));
    eprintln!(
        "fuzz: {} against mutated {suite} {what} from seed {} for {} s; findings go to {}",
        a.runtime,
        a.seed,
        a.seconds,
        out.join(suite).display()
    );
    let report = run(&cases, &out);
    for ((why, seed, path), after) in report.findings.iter().zip(&report.found_after) {
        println!(
            "finding: {why} (from {seed}) after {:.1} s: {}",
            after.as_secs_f64(),
            path.as_ref()
                .map_or("(not written)".into(), |p| p.display().to_string())
        );
    }
    println!(
        "fuzz: {} {what} in {:.1} s, {} findings",
        report.cases,
        report.elapsed.as_secs_f64(),
        report.findings.len()
    );
    Ok(if report.findings.is_empty() {
        exit::OK
    } else {
        exit::FAILURES
    })
}
