//! The subcommands, wired from the library. Errors are one line for the user; exit codes are
//! the named constants of `hcpspec::exit`.

use hcpspec::adapter;
use hcpspec::case::{self, Case, Level, SuiteInfo};
use hcpspec::error::BadInput;
use hcpspec::exit;
use hcpspec::report::{Look, Terminal};
use hcpspec::report::{Rules, RunResult, RunStats, RuntimeRun, Summary};
use hcpspec::run::expectations::Expectations;
use hcpspec::run::plan::Selection;
use hcpspec::run::runner::{Runner, Snapshots, Target};
use hcpspec::run::session::{self, Planned};
use hcpspec::run::versions::Versions;
use hcpspec::run::{CaseResult, Verdict};
use hcpspec::snapshot;
use hcpspec::suites::hcp::RunEnv;
use hcpspec::suites::selfcheck::{SelfCheck, SelfCheckReport};
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
pub fn vectors(given: &Option<PathBuf>) -> Result<Vectors, BadInput> {
    Vectors::resolve(given.as_deref())
}

/// The most jobs any command runs at once.
pub const MAX_JOBS: usize = 256;

/// A whole number from `lo` to `hi`, or one clear line saying the bound (clap exits 2).
pub fn bounded(s: &str, lo: u64, hi: u64) -> Result<u64, BadInput> {
    let n: u64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a whole number from {lo} to {hi}"))?;
    if n < lo || n > hi {
        return Err(BadInput(format!(
            "{n} is out of bounds: expected {lo} to {hi}"
        )));
    }
    Ok(n)
}

/// A number of seconds, finite, above 0 (or 0 when `zero` is allowed) and at most `hi`.
pub fn seconds(s: &str, zero: bool, hi: f64) -> Result<f64, BadInput> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, at most {hi}"))?;
    let low_ok = if zero { x >= 0.0 } else { x > 0.0 };
    if !x.is_finite() || !low_ok || x > hi {
        return Err(BadInput(format!(
            "{s} is out of bounds: expected {} seconds up to {hi}",
            if zero { "0 or more" } else { "more than 0" }
        )));
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

pub fn jobs(s: &str) -> Result<usize, BadInput> {
    bounded(s, 1, MAX_JOBS as u64).map(|n| n as usize)
}

pub fn timeout_secs(s: &str) -> Result<f64, BadInput> {
    let (lo, hi) = (adapter::MIN_TIMEOUT_SECS, adapter::MAX_TIMEOUT_SECS);
    match seconds(s, false, hi) {
        Ok(x) if x >= lo => Ok(x),
        _ => Err(BadInput(format!(
            "{s} is out of bounds: expected {lo} to {hi} seconds"
        ))),
    }
}

/// Whether the temporary folder (TMPDIR, else /tmp) can hold a folder: runtimes' work folders
/// and binaries are made there, and a bare OS error would not say where or why.
pub fn temp_dir() -> Result<(), BadInput> {
    let dir = std::env::temp_dir();
    // The OS's reason, without tempfile's random name.
    let why = match std::fs::metadata(&dir) {
        Err(e) => e.to_string(),
        Ok(m) if !m.is_dir() => "not a folder".into(),
        Ok(_) => match tempfile::Builder::new().prefix("hcpspec-check").tempdir() {
            Ok(_) => return Ok(()),
            Err(e) => std::io::Error::from(e.kind()).to_string(),
        },
    };
    Err(BadInput(format!(
        "the temporary folder {} (TMPDIR, else /tmp) cannot be used: {why}; set TMPDIR to a writable folder",
        hcpspec::report::printable(&dir.display().to_string(), false),
    )))
}

pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

/// The selected suites (`--suite`, else every suite under the vectors folder) and, for each, its
/// selected cases. A selection that leaves a suite no case drops that suite, unless it was named.
fn select(filters: &Filters, vectors: &Path) -> Result<Vec<Loaded>, BadInput> {
    let all = case::suite_names(vectors).map_err(|e| e.to_string())?;
    for s in &filters.suite {
        if !all.contains(s) {
            return Err(BadInput(format!(
                "--suite {s}: no such suite under {} (suites: {})",
                hcpspec::vectors::shown(vectors).display(),
                all.join(", ")
            )));
        }
    }
    let names = if filters.suite.is_empty() {
        all
    } else {
        filters.suite.clone()
    };
    if names.is_empty() {
        return Err(BadInput(format!(
            "{}: no suite (a folder with a suite.json)",
            vectors.display()
        )));
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

fn env(vectors: &Path) -> Result<RunEnv, BadInput> {
    RunEnv::new(vectors, &RunEnv::self_probe())
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
    /// The launch contract version a harness is written to (a harness states none): its
    /// scenarios outside that version's requirement set run and are reported, not scored
    /// (docs/CHANGELOG.md). Default: the newest.
    #[arg(long, value_name = "VERSION")]
    pub launch_contract: Option<String>,
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
    /// Print each failing case's wire trace (every message sent and received, redacted) under
    /// its failure block. result.json keeps it either way.
    #[arg(long)]
    pub trace: bool,
}

/// A `--name`: a plain label, at most 64 characters, no control characters.
fn label(s: &str) -> Result<String, BadInput> {
    if s.is_empty() || s.chars().count() > 64 || s.chars().any(char::is_control) {
        return Err("a label is 1 to 64 characters, none of them control characters".into());
    }
    Ok(s.to_string())
}

pub fn run(a: &RunArgs) -> Result<i32, exit::Error> {
    // When it started and how long it took, recorded in result.json (never judged).
    let started = (std::time::SystemTime::now(), Instant::now());
    if a.name.len() > a.runtime.len() {
        return Err(BadInput(format!(
            "--name: {} label(s) for {} --runtime(s); a label names the --runtime of its position",
            a.name.len(),
            a.runtime.len()
        ))
        .into());
    }
    let vectors = vectors(&a.filters.vectors)?;
    let suites = select(&a.filters, &vectors.root)?;
    out_dir("--out", &a.out)?;
    let origin = vectors.origin()?;
    println!("vectors: {origin}");
    if a.mutants {
        return self_check(a, &suites, &vectors.root);
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
    let opts = options(a.timeout)?;
    if let Some(d) = &a.snapshots {
        out_dir("--snapshots", d)?;
    }
    let ci = a.ci || is_ci();
    let planned = plan(a, &suites, &context(&vectors.root, opts), &expectations, ci)?;
    let look = Look {
        tty: std::io::stderr().is_terminal(),
        marks: crate::style::marks(),
        red: crate::style::colour(false),
    };
    let rules = Rules {
        strict: a.strict_expectations,
        ci,
    };
    let mut terminal = Terminal::stdio(look, rules, a.snapshots.as_deref()).rerunning(rerun(a, ci));
    terminal.trace = a.trace;
    // Without --jobs the suites run side by side: their cases mostly wait (scripted clocks, other
    // processes), and each suite's own jobs already fit its kind of work. `--jobs N` runs them
    // one after another, N cases at a time.
    let finished = session::run(planned, a.jobs.is_none(), &mut terminal)?;
    // One record and one set of renderings for the whole run, every suite in it.
    let report = hcpspec::report::Report {
        vectors: vec![origin],
        started: Some(hcpspec::run::result::rfc3339(started.0)),
        wall_ms: Some(started.1.elapsed().as_millis() as u64),
        ..hcpspec::report::Report::of(finished.results)
    };
    let written = hcpspec::report::write_all(&report, &a.out);
    // A Ctrl-C while the outputs were written counts too: the run still ends as interrupted.
    let stats = hcpspec::run::result::RunStats {
        interrupted: finished.stats.interrupted
            || crate::INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed),
        ..finished.stats
    };
    // The tables and the exit's reason come last, after the line that says where the outputs are.
    let wrote = written.as_ref().ok().map(|files| {
        format!(
            "wrote {} ({} files)",
            a.out.join("result.json").display(),
            files.len()
        )
    });
    terminal.finish(exit::of_run(&stats), &stats, wrote.as_deref());
    written.map_err(|source| exit::Error::Unwritten {
        what: "the run's outputs",
        source,
    })?;
    Ok(exit::of_run(&stats))
}

/// What a rerun of one case keeps of this run's options: those that decide its verdict.
fn rerun(a: &RunArgs, ci: bool) -> hcpspec::report::terminal::Rerun {
    let mut options: Vec<String> = Vec::new();
    let path = |flag: &str, p: &Path| [flag.to_string(), p.display().to_string()];
    if let Some(v) = &a.filters.vectors {
        options.extend(path("--vectors", v));
    }
    if let Some(e) = &a.expectations {
        options.extend(path("--expectations", e));
    }
    if a.strict_expectations {
        options.push("--strict-expectations".into());
    }
    if let Some(d) = &a.snapshots {
        options.extend(path("--snapshots", d));
    }
    if ci {
        options.push("--ci".into());
    }
    if a.timeout != 5.0 {
        options.extend(["--timeout".into(), a.timeout.to_string()]);
    }
    if let Some(l) = &a.launch_contract {
        options.extend(["--launch-contract".into(), l.clone()]);
    }
    hcpspec::report::terminal::Rerun {
        options,
        vectors: a.filters.vectors.clone(),
    }
}

/// The adapters' options: `--timeout`, a positive number of seconds.
fn options(timeout: f64) -> Result<adapter::Options, BadInput> {
    let (lo, hi) = (adapter::MIN_TIMEOUT_SECS, adapter::MAX_TIMEOUT_SECS);
    if !(lo..=hi).contains(&timeout) {
        return Err(BadInput(format!(
            "--timeout {timeout}: expected {lo} to {hi} seconds"
        )));
    }
    Ok(adapter::Options {
        timeout: std::time::Duration::try_from_secs_f64(timeout)
            .map_err(|e| BadInput(e.to_string()))?,
        ..Default::default()
    })
}

/// The version `--launch-contract` names (`1` or `hcpspec-launch/1`), for a suite whose
/// targets state none (harnesses, whose protocol is the launch contract); None elsewhere.
fn written_to(given: Option<&str>, versions: &Versions) -> Result<Option<String>, BadInput> {
    const LAUNCH: &str = "hcpspec-launch";
    let Some(given) = given else {
        return Ok(None);
    };
    let version = match given.contains('/') {
        true => given.to_string(),
        false => format!("{LAUNCH}/{given}"),
    };
    let refused = |speaks: String| {
        BadInput(format!(
            "--launch-contract {given}: hcpspec speaks the launch contract {speaks} (docs/CHANGELOG.md)"
        ))
    };
    if !version.starts_with(&format!("{LAUNCH}/")) {
        return Err(refused(format!("{LAUNCH}/N")));
    }
    if !versions.of_protocol(&version) {
        return Ok(None); // a suite whose targets state their version
    }
    if !versions.knows(&version) {
        return Err(refused(versions.all().join(", ")));
    }
    Ok(Some(version))
}

/// Each selected suite's targets and runner. `--runtime` without `--suite` runs the suites that
/// drive what it names: a harness (`exec:`) is no HCP runtime, and a shim no harness.
fn plan<'a>(
    a: &RunArgs,
    suites: &'a [Loaded],
    ctx: &Context,
    expectations: &'a Expectations,
    ci: bool,
) -> Result<Vec<Planned<'a>>, BadInput> {
    let mut planned = Vec::new();
    let mut first_error = None;
    for l in suites {
        let specs = if a.runtime.is_empty() {
            l.info.embedded.clone()
        } else {
            a.runtime.clone()
        };
        // A shim over stdio, HTTP or WebSocket is read as an HCP runtime's unless --suite names
        // the core or host suite: their shims speak the same transports.
        let implicit = a.filters.suite.is_empty() && !a.runtime.is_empty();
        if implicit && !l.suite.runs_unnamed() && specs.iter().any(|s| !s.starts_with("inproc:")) {
            continue;
        }
        let targets = match specs
            .iter()
            .map(|s| l.suite.target(s, ctx))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(targets) => targets,
            Err(e) if implicit => {
                first_error.get_or_insert(e);
                continue;
            }
            Err(e) => return Err(BadInput(e)),
        };
        // An implementation under test is held to the caps per case times the cases at once
        // (docs/security.md): only the embedded ones, trusted, run more at once.
        let embedded = specs.iter().all(|s| s.starts_with("inproc:"));
        let jobs = if embedded {
            l.suite.jobs(cores())
        } else {
            cores()
        };
        let mut runner = Runner::new(&l.info, &l.cases, expectations);
        runner.versions =
            Versions::of(&l.info, &ctx.vectors.join(&l.info.name).join("suite.json"))?;
        runner.written_to = written_to(a.launch_contract.as_deref(), &runner.versions)?;
        runner.noun = l.suite.noun().into();
        runner.snapshots = match (&a.snapshots, a.accept) {
            (None, _) => Snapshots::Off,
            (Some(d), false) => Snapshots::Check(d.clone()),
            (Some(d), true) => Snapshots::Accept(d.clone()),
        };
        runner.jobs = a.jobs.unwrap_or(jobs);
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
        planned.push(Planned { runner, targets });
    }
    if planned.is_empty() {
        return Err(BadInput(
            first_error.unwrap_or_else(|| "no suite selected".into()),
        ));
    }
    Ok(planned)
}

/// Each selected suite's self-check, printed; the run fails when any fails. Its record,
/// `selfcheck.json`, is what a published report shows ("N of M sentences proven").
fn self_check(a: &RunArgs, suites: &[Loaded], vectors: &Path) -> Result<i32, exit::Error> {
    let ctx = context(vectors, Default::default());
    let mut reports = Vec::new();
    for l in suites {
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
        println!("{} ({})", l.info.title, l.info.name);
        let report = sc.report(vectors)?;
        print_self_check(&report);
        reports.push(report);
        println!();
    }
    let code = exit::of_self_check(&reports);
    let out = a.out.join("selfcheck.json");
    let record: Vec<Value> = reports.iter().map(|r| r.record()).collect();
    let body = serde_json::json!({ "code": code, "suites": record });
    std::fs::create_dir_all(&a.out)
        .and_then(|_| {
            std::fs::write(
                &out,
                serde_json::to_string_pretty(&body).unwrap_or_default() + "\n",
            )
        })
        .map_err(|source| hcpspec::report::WriteError::Io {
            path: out.clone(),
            source,
        })?;
    println!("wrote {}", out.display());
    Ok(code)
}

/// A suite's self-check, printed: each mutant against the MUST cases it answers for (its own
/// sections', and those whose `killed_by` names it), each variant against every MUST case, then
/// the sentence matrix (each ledger row's killer against the row's cases).
fn print_self_check(r: &SelfCheckReport) {
    use hcpspec::suites::ledger::State;
    let noun = r.noun;
    println!(
        "{:<32} {:>9} {:>9}   rule broken",
        format!("mutant {noun}"),
        "sections",
        "killed by"
    );
    for (m, k) in &r.mutants {
        println!(
            "{:<32} {:>9} {:>9}   {}{}",
            m.name,
            m.sections.join(","),
            k.len(),
            m.about,
            if k.is_empty() { "  <- SURVIVES" } else { "" }
        );
    }
    for c in &r.unkilled {
        println!("warning: no mutant of its own section (or killed_by) fails MUST case {c}");
    }
    for c in &r.false_claims {
        println!("error: {c}");
    }
    println!(
        "\n{:<32} {:>10}",
        format!("allowed variant {noun}"),
        "MUST fails"
    );
    for (v, failed) in &r.variants {
        println!("{:<32} {:>10}", v.name, failed.len());
        for f in failed {
            println!("  {}", f.lines().next().unwrap_or_default());
        }
    }
    println!(
        "{} mutants, {} killed; {} MUST cases, {} not failed by any mutant",
        r.mutants.len(),
        r.mutants.len() - r.survivors(),
        r.must_cases,
        r.unkilled.len()
    );
    for p in &r.problems {
        println!("error: {p}");
    }
    if r.rows > 0 {
        println!(
            "\n{:<22} {:<14} {:<34} killed by",
            "sentence", "state", "killer"
        );
    }
    for s in &r.sentences {
        let killed_by = match &s.proof {
            None => String::new(),
            Some(p) if s.survives() && p.elsewhere.is_empty() => "SURVIVES".into(),
            Some(p) if s.survives() => format!(
                "SURVIVES (fails only elsewhere: {})",
                p.elsewhere.join(", ")
            ),
            Some(p) => p.killed_by.join(", "),
        };
        println!(
            "{:<22} {:<14} {:<34} {}",
            format!("{} {}", s.ledger.trim_start_matches("../"), s.number),
            s.state.label(),
            s.killer.as_deref().unwrap_or("-"),
            killed_by
        );
    }
    let total: usize = r.counts.values().sum();
    if total > 0 {
        println!(
            "{} of {total} sentences proven ({})",
            r.counts[&State::Covered],
            State::ALL
                .iter()
                .map(|s| format!("{} {}", r.counts[s], s.label()))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// A folder hcpspec will write into is one, or can be made, and can be written: it, or its
/// nearest existing ancestor, is a directory a file can be made in (a probe, removed at once),
/// and none of the outputs it already holds (`result.json` …, `badges/`) is of the wrong kind or
/// read-only. Checked before anything runs, so `--out /dev/null/x`, a read-only folder or an
/// `out/result.json` that is a folder is one line and exit 2, not a whole run and then exit 4.
pub fn out_dir(flag: &str, dir: &Path) -> Result<(), BadInput> {
    out_dir_probed(flag, dir, true)
}

/// [`out_dir`]; without `probe`, only the kinds of the folder and its ancestors are checked
/// (`fuzz`, whose findings folder's write errors are its own outputs' failure, exit 4).
pub fn out_dir_probed(flag: &str, dir: &Path, probe: bool) -> Result<(), BadInput> {
    let shown = || hcpspec::report::printable(&dir.display().to_string(), false);
    let bad = |why: String| BadInput(format!("{flag} {}: {why}", shown()));
    let mut at = Some(dir);
    while let Some(p) = at {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() && !probe => return Ok(()),
            Ok(m) if m.is_dir() => {
                tempfile::Builder::new()
                    .prefix(".hcpspec-probe")
                    .tempfile_in(p)
                    .map_err(|e| {
                        // The OS's reason, without the probe's random name.
                        let e = e.raw_os_error().map_or_else(
                            || std::io::Error::from(e.kind()),
                            std::io::Error::from_raw_os_error,
                        );
                        bad(format!("cannot be written ({}: {e})", p.display()))
                    })?;
                break;
            }
            Ok(_) if p == dir => return Err(bad("not a directory".into())),
            Ok(_) => return Err(bad(format!("{} is not a directory", p.display()))),
            Err(_) => at = p.parent().filter(|q| !q.as_os_str().is_empty()),
        }
    }
    for file in [
        "result.json",
        "junit.xml",
        "summary.md",
        "index.html",
        "selfcheck.json",
    ] {
        let p = dir.join(file);
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => return Err(bad(format!("{file} in it is a directory"))),
            Ok(m) if m.file_type().is_symlink() => {
                return Err(bad(format!(
                    "{file} in it is a symbolic link: hcpspec writes no output through one"
                )))
            }
            Ok(_) => {
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&p)
                    .map_err(|e| bad(format!("{file} in it cannot be written: {e}")))?;
            }
            Err(_) => {}
        }
    }
    match std::fs::symlink_metadata(dir.join("badges")) {
        Ok(m) if m.file_type().is_symlink() => Err(bad(
            "badges in it is a symbolic link: hcpspec writes no output through one".into(),
        )),
        Ok(m) if !m.is_dir() => Err(bad("badges in it is not a directory".into())),
        _ => Ok(()),
    }
}

pub fn report(results: &[PathBuf], out: &Path) -> Result<i32, exit::Error> {
    out_dir("--out", out)?;
    let read = results
        .iter()
        .map(|p| hcpspec::report::read(p).map(|r| (p.clone(), r)))
        .collect::<Result<Vec<_>, _>>()?;
    let (merged, warnings) = hcpspec::report::merge(read)?;
    for w in warnings {
        eprintln!("{w}");
    }
    let files =
        hcpspec::report::write_all(&merged, out).map_err(|source| exit::Error::Unwritten {
            what: "the outputs",
            source,
        })?;
    for f in files {
        println!("wrote {}", f.display());
    }
    // The merged record's verdict, as its run's exit code would be.
    Ok(exit::of_run(&RunStats::of(&merged.suites, false)))
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
fn print_json(v: &serde_json::Value) -> Result<i32, BadInput> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    let _ = writeln!(std::io::stdout().lock(), "{text}");
    Ok(exit::OK)
}

pub fn list_mutants(filters: &Filters, format: ListFormat) -> Result<i32, BadInput> {
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

pub fn lint(dirs: &[PathBuf]) -> Result<i32, BadInput> {
    let mut issues = 0;
    for dir in dirs {
        if !dir.is_dir() {
            return Err(BadInput(format!("{}: not a pack directory", dir.display())));
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
    }
    Ok(exit::of_findings(issues))
}

pub fn list(filters: &Filters, format: ListFormat) -> Result<i32, BadInput> {
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

pub fn explain(name: &str, vectors: &Path, result: Option<&Path>) -> Result<i32, BadInput> {
    let code = explain_case(name, vectors)?;
    if let Some(path) = result {
        explain_result(name, path)?;
    }
    Ok(code)
}

/// `explain CASE --result PATH`: the case's verdict on each runtime of a result file, and its
/// wire trace.
fn explain_result(name: &str, path: &Path) -> Result<(), BadInput> {
    let report = hcpspec::report::read(path)?;
    let mut found = false;
    for s in &report.suites {
        for run in &s.runtimes {
            for r in run.cases.iter().filter(|r| r.name == name) {
                found = true;
                let state = hcpspec::report::state(r).label();
                println!(
                    "\n{} on {}: {state}",
                    r.name,
                    hcpspec::report::printable(run.shown(), false)
                );
                let why = match &r.verdict {
                    Verdict::Fail(f) => format!(
                        "step {} ({}): {} at `{}`",
                        f.step, f.action, f.message, f.path
                    ),
                    Verdict::Error { message } => message.clone(),
                    Verdict::Skip { reason } | Verdict::Unimplemented { reason } => reason.clone(),
                    Verdict::Pass => String::new(),
                };
                if !why.is_empty() {
                    println!("  {}", hcpspec::report::printable(&why, true));
                }
                println!("{}", hcpspec::report::trace_text(r));
            }
        }
    }
    if !found {
        return Err(BadInput(format!(
            "{}: no result of {name}",
            hcpspec::report::printable(&path.display().to_string(), false)
        )));
    }
    Ok(())
}

fn explain_case(name: &str, vectors: &Path) -> Result<i32, BadInput> {
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
    // The denial map is declared, not claimed as a feature: without it, unimplemented.
    let map = hcpspec::suites::hcp::DENIAL_MAP;
    let (maps, features): (Vec<&String>, Vec<&String>) =
        case.requires.iter().partition(|r| r.as_str() == map);
    if !features.is_empty() {
        let names: Vec<&str> = features.iter().map(|f| f.as_str()).collect();
        println!(
            "  requires: {} (skipped where the runtime does not claim it)",
            names.join(", ")
        );
    }
    if !maps.is_empty() {
        println!("  requires: {map} (unimplemented where the runtime declares no denial map)");
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
) -> Result<(Vec<CaseResult>, f64), BadInput> {
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
        return Err(BadInput(format!(
            "the reference fails its own {} suite over {spec}; run `hcpspec run --suite {}` first",
            l.info.name, l.info.name
        )));
    }
    Ok((results, secs))
}

pub fn bench(iterations: usize, vectors: &Path) -> Result<i32, BadInput> {
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
fn bench_suites(vectors: &Path, ctx: &Context) -> Result<(), BadInput> {
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
fn bench_shim_suites(vectors: &Path, ctx: &Context) -> Result<(), BadInput> {
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
fn bench_harness(vectors: &Path, ctx: &Context) -> Result<(), BadInput> {
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
            .filter_map(h::scenario_of)
            .map(|sc: &std::sync::Arc<Scenario>| {
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
) -> Result<(), BadInput> {
    let info = json!({ "runtime": { "name": "reference", "version": env!("CARGO_PKG_VERSION") } });
    let runs = (0..10)
        .map(|i| RuntimeRun {
            runtime: format!("inproc:copy-{i}"),
            label: None,
            stopped: None,
            info: info.clone(),
            version: None,
            implementation: None,
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
