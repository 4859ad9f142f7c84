//! `hcpspec fuzz` finds contract mutants from a fixed seed within a small budget, finds nothing
//! on the reference, and its findings are valid case files that reproduce; the found cases
//! committed under `vectors/found/` load, validate and pass on the reference.

use hcpspec::adapter::Inproc;
use hcpspec::case::{load_case, load_denials};
use hcpspec::fuzz::{Config, Fuzzer, Report};
use hcpspec::run::{run_case, RunEnv, Verdict};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

fn claims(name: &str) -> hcpspec::case::matcher::Claims {
    hcpspec::run::embedded_claims(name).unwrap()
}

fn env() -> &'static RunEnv {
    static ENV: OnceLock<RunEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = RunEnv::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")))
            .expect("run env");
        env.uncapped = true; // as `hcpspec fuzz` runs
        env
    })
}

fn fuzz(runtime: &str, seconds: f64, out: Option<&Path>) -> Report {
    let mut cfg = Config::new(runtime);
    cfg.seed = 1;
    cfg.seconds = seconds;
    cfg.max_findings = Some(1);
    cfg.shrink_budget = 60;
    cfg.out = out.map(Path::to_path_buf);
    let fuzzer = Fuzzer::new(cfg, env()).expect("fuzzer");
    fuzzer
        .run(&AtomicBool::new(false), &|_| {}, &|_| {})
        .expect("fuzz run")
}

/// One mutant per kind of oracle: the authoriser (3), the confirm gate (4), the linter at
/// install (2), availability (9) and Sense (10).
#[test]
fn finds_mutants_and_writes_reproducing_cases() {
    let out = tempfile::tempdir().unwrap();
    let denials = load_denials(&vectors()).unwrap();
    for m in [
        "no-confirm-gate",
        "default-allow",
        "lint-skipped",
        "availability-without-reason",
        "undeclared-trigger-delivered",
    ] {
        let report = fuzz(&format!("inproc:mutant:{m}"), 8.0, Some(out.path()));
        let f = report
            .findings
            .first()
            .unwrap_or_else(|| panic!("no finding on mutant {m} in {} cases", report.cases));
        assert!(
            f.reproduces,
            "{m}: the finding {} does not reproduce",
            f.rule
        );
        let path = f.path.as_ref().expect("written");
        let case = load_case(path, "found", &denials).unwrap_or_else(|e| panic!("{m}: {e}"));
        let on_ref = run_case(
            &case,
            &mut Inproc::new("reference").unwrap(),
            env(),
            &claims("reference"),
        );
        assert_eq!(
            on_ref.verdict,
            Verdict::Pass,
            "{m}: {}",
            on_ref.explain(&case)
        );
        let on_mutant = run_case(
            &case,
            &mut Inproc::new(&format!("mutant:{m}")).unwrap(),
            env(),
            &claims(&format!("mutant:{m}")),
        );
        assert!(
            !matches!(on_mutant.verdict, Verdict::Pass),
            "{m}: {} passes",
            path.display()
        );
    }
}

#[test]
fn finds_nothing_on_the_reference() {
    let report = fuzz("inproc:reference", 4.0, None);
    assert!(report.cases > 20, "only {} cases", report.cases);
    let found: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn generation_does_not_depend_on_time_or_threads() {
    let mut cfg = Config::new("inproc:reference");
    cfg.seed = 42;
    let a = Fuzzer::new(cfg.clone(), env()).unwrap();
    cfg.jobs = 2;
    let b = Fuzzer::new(cfg, env()).unwrap();
    for i in [0, 1, 7, 1000] {
        assert_eq!(a.case(i), b.case(i));
    }
}

/// `vectors/found/` holds findings kept as evidence; the contract suite never loads them, but
/// they must stay valid cases that pass on the reference.
#[test]
fn committed_found_cases_load_and_pass_on_the_reference() {
    let dir = vectors().join("found");
    let denials = load_denials(&vectors()).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for f in files {
        let case = load_case(&f, "found", &denials).unwrap_or_else(|e| panic!("{e}"));
        let r = run_case(
            &case,
            &mut Inproc::new("reference").unwrap(),
            env(),
            &claims("reference"),
        );
        assert_eq!(r.verdict, Verdict::Pass, "{}", r.explain(&case));
    }
    let (_, contract) = hcpspec::case::load_suite_driving(&vectors(), "hcp-runtime").unwrap();
    assert!(contract.iter().all(|c| c.group != "found"));
}
