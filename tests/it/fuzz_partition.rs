//! `hcpspec fuzz --partition k/n`: shard k plays the case numbers `i % n == k - 1` of a by-count
//! run, so n shards play exactly the whole run's cases, and their findings (each a file named by
//! its rule and the hash of its shrunk case) are the whole run's; a bad value is one line, exit 2;
//! the cases that ended in an error are named.

use hcpspec::suites::hcp::fuzz::{Config, Fuzzer, Report};
use hcpspec::suites::hcp::RunEnv;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// A mutant the fuzzer finds under one rule twice (two shrunk cases) within a few cases from
/// seed 1: availability-optimistic claims every installed command executable.
const MUTANT: &str = "inproc:mutant:availability-optimistic";
const CASES: u64 = 12;

fn env() -> &'static RunEnv {
    static ENV: OnceLock<RunEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
        let mut env =
            RunEnv::new(&vectors, Path::new(env!("CARGO_BIN_EXE_hcpspec-probe"))).expect("run env");
        env.uncapped = true; // as `hcpspec fuzz` runs
        env
    })
}

/// A by-count run of [`MUTANT`] (shard `partition` of it), its findings written to `out`: the
/// report and the case numbers it played.
fn fuzz(partition: Option<(u64, u64)>, out: &Path) -> (Report, BTreeSet<u64>) {
    let mut cfg = Config::new(MUTANT);
    cfg.seed = 1;
    cfg.seconds = 600.0; // only a net: the run is by count
    cfg.max_cases = Some(CASES);
    cfg.shrink_budget = 40;
    cfg.partition = partition;
    cfg.out = Some(out.to_path_buf());
    let played = Mutex::new(BTreeSet::new());
    let report = Fuzzer::new(cfg, env())
        .expect("fuzzer")
        .run_observed(&AtomicBool::new(false), &|_| {}, &|_| {}, &|i| {
            assert!(played.lock().unwrap().insert(i), "case {i} played twice");
        })
        .expect("fuzz run");
    (report, played.into_inner().unwrap())
}

fn signatures(r: &Report) -> BTreeSet<String> {
    r.findings.iter().map(|f| f.signature.clone()).collect()
}

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn partitioned_runs_merge_into_the_whole_run() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, played) = fuzz(None, &dir.path().join("whole"));
    assert_eq!(
        played,
        (0..CASES).collect(),
        "the whole run plays 0..{CASES}"
    );
    assert_eq!(whole.cases, CASES);
    let want = signatures(&whole);
    // More than one finding of a rule is kept when their shrunk cases differ.
    let mut per_rule: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &whole.findings {
        *per_rule.entry(f.rule).or_default() += 1;
        assert_eq!(
            f.path.as_ref().and_then(|p| p.file_stem()).unwrap(),
            f.signature.as_str(),
            "a finding's file is named by its signature"
        );
    }
    assert!(
        per_rule.values().any(|&n| n > 1),
        "no rule with two findings: {per_rule:?}"
    );
    let mut union = BTreeSet::new();
    let mut all_played = BTreeSet::new();
    let mut merged = BTreeSet::new();
    for k in 1..=3 {
        let out = dir.path().join(format!("shard-{k}"));
        let (shard, played) = fuzz(Some((k, 3)), &out);
        assert_eq!(shard.cases, played.len() as u64);
        assert!(
            played.iter().all(|i| i % 3 == k - 1),
            "shard {k}/3 played {played:?}"
        );
        for i in &played {
            assert!(all_played.insert(*i), "case {i} played by two shards");
        }
        union.extend(signatures(&shard));
        merged.extend(files(&out));
    }
    assert_eq!(
        all_played,
        (0..CASES).collect(),
        "the shards cover 0..{CASES}"
    );
    assert_eq!(union, want, "the shards' findings are the whole run's");
    // The union of the shards' folders is the whole run's folder.
    assert_eq!(merged, files(&dir.path().join("whole")));
    assert!(!want.is_empty());
}

fn hcpspec(args: &[&str]) -> std::process::Output {
    crate::common::hcpspec_within(args, Duration::from_secs(120)).0
}

#[test]
fn a_bad_partition_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("found");
    for bad in ["0/3", "4/3", "x", "1/0", "3", "-1/3"] {
        for suite in [None, Some("core-api")] {
            let mut args = vec!["fuzz", "--runtime", "inproc:reference", "--cases", "3"];
            args.extend(suite.map(|s| ["--suite", s]).iter().flatten());
            args.extend(["--partition", bad, "--out", out.to_str().unwrap()]);
            let o = hcpspec(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(
                err.trim_end().lines().count(),
                1,
                "{args:?}: one line: {err}"
            );
            assert!(
                err.contains(&format!("--partition {bad}")),
                "{args:?}: {err}"
            );
            assert!(!out.exists(), "{args:?}: nothing ran");
        }
    }
    // Only the contract's fuzzer numbers its cases: the others' are one stream.
    let o = hcpspec(&[
        "fuzz",
        "--suite",
        "host",
        "--runtime",
        "inproc:reference",
        "--cases",
        "3",
        "--partition",
        "1/2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--partition"), "{err}");
}

#[test]
fn a_shard_plays_its_cases_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out: PathBuf = dir.path().join("found");
    let o = hcpspec(&[
        "fuzz",
        "--runtime",
        "inproc:reference",
        "--cases",
        "7",
        "--partition",
        "2/3",
        "--out",
        out.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    // Cases 1 and 4 of 0..7.
    assert!(stdout.contains("fuzz: 2 cases in"), "{stdout}");
    assert!(stderr.contains("partition 2/3"), "{stderr}");
    assert!(!stderr.contains("warning:"), "a run by count: {stderr}");
}

/// A runtime whose exec breaks the transport: every case that ended in an error is named on
/// the summary, by its number and its error's first line.
#[test]
fn cases_that_ended_in_an_error_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("found");
    let shim = format!(
        "stdio:python3 {}/tests/fauxmplementations/erring_shim.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = hcpspec(&[
        "fuzz",
        "--runtime",
        &shim,
        "--cases",
        "24",
        "--shrink-budget",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("fuzz: ") && l.contains("ended in an error"))
        .unwrap_or_else(|| panic!("no summary: {stdout}"));
    let errors: usize = summary
        .split(", ")
        .find_map(|p| p.strip_suffix(" cases ended in an error"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(errors > 0, "{stdout}");
    // One line per distinct first line of an error, naming every case that ended so.
    let named: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert!(!named.is_empty(), "{stdout}");
    let mut cases = 0;
    for l in &named {
        // `error: cases 2, 5: step 1 (activate): activate broke`
        let rest = l
            .strip_prefix("error: cases ")
            .or(l.strip_prefix("error: case "));
        let (list, why) = rest
            .and_then(|r| r.split_once(": "))
            .unwrap_or_else(|| panic!("{l}"));
        assert!(why.contains("activate broke"), "{l}");
        assert!(!l.contains("second line"), "only the first line: {l}");
        for n in list.split(", ") {
            n.parse::<u64>().unwrap_or_else(|_| panic!("{l}"));
            cases += 1;
        }
    }
    assert_eq!(cases, errors, "every erring case named: {stdout}");
}
