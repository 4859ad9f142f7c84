//! The host suite's own tests: bad input from a host shim (it exits, crashes, answers garbage or
//! nothing, lacks a method) is a verdict with evidence within its deadline, never a hang and
//! never a pass; the fuzzer finds nothing in the reference adapter, finds a mutant's broken rule,
//! and writes findings that replay.

use hcpspec::case::{load_suite, parse_case, Case};
use hcpspec::run::Verdict;
use hcpspec::suites::host::{connector, fuzz, run_case};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

fn case(text: &str) -> Case {
    let denials = hcpspec::case::load_denials(&vectors()).unwrap();
    let mut c = parse_case(Path::new("hostile.json"), text, "host", &denials).unwrap();
    c.group = "hostile".into();
    c
}

const BIND: &str = r#"{"id": "hostile", "title": "t", "section": "0", "level": "MUST",
    "spec": "003_43d43b314353d2bc.txt § Overview (\"x\")",
    "host": { "steps": [ { "call": "host.bind", "expect": { "session": { "$type": "string" } } } ] } }"#;

fn verdict(mode: &str) -> (Verdict, Duration) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_host.py");
    let opts = hcpspec::adapter::Options {
        timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let connect = connector(&format!("stdio:python3 {} {mode}", script.display()), &opts).unwrap();
    let t = Instant::now();
    let r = run_case(&case(BIND), &connect);
    (r.verdict, t.elapsed())
}

fn errors_with(mode: &str, evidence: &str) {
    let (v, took) = verdict(mode);
    assert!(took < Duration::from_secs(6), "{mode}: took {took:?}");
    match v {
        Verdict::Error { message } => assert!(
            message.contains(evidence),
            "{mode}: `{evidence}` not in {message}"
        ),
        other => panic!("{mode}: expected an error verdict, got {other:?}"),
    }
}

#[test]
fn a_host_shim_that_exits_is_an_error() {
    errors_with("exits", "host.target");
}

#[test]
fn a_host_shim_that_answers_garbage_is_an_error() {
    errors_with("garbage", "not JSON");
}

#[test]
fn a_host_shim_that_never_answers_is_an_error_at_its_deadline() {
    errors_with("silent", "no answer");
}

#[test]
fn a_host_shim_that_crashes_mid_case_is_an_error() {
    errors_with("crashes-on-bind", "host.bind");
}

#[test]
fn a_host_shim_without_records_is_unimplemented_not_a_pass() {
    let (v, _) = verdict("no-records");
    assert!(matches!(v, Verdict::Unimplemented { .. }), "{v:?}");
}

fn fuzz_on(spec: &str, cases: Option<u64>, out: Option<&Path>) -> fuzz::Report {
    let all = load_suite(&vectors(), "host").unwrap();
    let connect = connector(spec, &Default::default()).unwrap();
    fuzz::run(&connect, &all, 7, 60.0, cases, out, &AtomicBool::new(false))
}

#[test]
fn the_fuzzer_finds_nothing_in_the_reference_adapter() {
    let r = fuzz_on("inproc:reference", Some(3000), None);
    assert_eq!(r.cases, 3000);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn a_fuzz_finding_replays_on_the_mutant_and_passes_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let r = fuzz_on(
        "inproc:mutant:payload-ref-ignored",
        Some(400),
        Some(dir.path()),
    );
    let (why, _, path) = r.findings.first().expect("the mutant is found");
    let path = path.as_ref().expect("written");
    let text = std::fs::read_to_string(path).unwrap();
    let found = case(&text.replace(
        &format!(
            "\"id\": \"{}\"",
            path.file_stem().unwrap().to_string_lossy()
        ),
        "\"id\": \"hostile\"",
    ));
    let mutant = connector("inproc:mutant:payload-ref-ignored", &Default::default()).unwrap();
    assert!(
        matches!(run_case(&found, &mutant).verdict, Verdict::Fail(_)),
        "{why}: does not replay"
    );
    let reference = connector("inproc:reference", &Default::default()).unwrap();
    assert_eq!(run_case(&found, &reference).verdict, Verdict::Pass);
}
