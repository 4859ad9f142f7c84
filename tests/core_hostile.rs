//! Bad input from a core: a control shim that exits, answers garbage or nothing, a core that
//! never opens its listener or hangs an upgrade. Each is an error verdict with evidence within
//! its deadline, never a hang of hcpspec and never a pass.

mod common;

use hcpspec::case::parse_case;
use hcpspec::run::Verdict;
use hcpspec::suites::core_api::{connector, run_case};
use std::path::Path;
use std::time::{Duration, Instant};

fn verdict(mode: &str) -> (Verdict, Duration) {
    let text = r#"{"id": "hostile", "title": "t", "section": "1", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"x\")",
        "script": { "steps": [ { "connect": {}, "expect": { "status": 101 } } ] } }"#;
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let denials = hcpspec::case::load_denials(&vectors).unwrap();
    let mut case = parse_case(Path::new("hostile.json"), text, "core-api", &denials).unwrap();
    case.group = "hostile".into();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_core.py");
    let opts = hcpspec::adapter::Options {
        timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let connect = connector(&format!("stdio:python3 {} {mode}", script.display()), &opts).unwrap();
    let t = Instant::now();
    let r = run_case(&case, &connect);
    (r.verdict, t.elapsed())
}

fn errors_with(mode: &str, evidence: &str) {
    common::errors_with(verdict(mode), mode, evidence);
}

#[test]
fn a_control_shim_that_exits_is_an_error() {
    errors_with("exits", "core.start");
}

#[test]
fn a_control_shim_that_answers_garbage_is_an_error() {
    errors_with("garbage", "not JSON");
}

#[test]
fn a_control_shim_that_never_answers_is_an_error_at_its_deadline() {
    errors_with("silent", "no answer");
}

#[test]
fn a_core_that_never_opens_its_listener_is_an_error() {
    errors_with("no-listener", "cannot connect");
}

#[test]
fn a_core_that_hangs_the_upgrade_is_an_error() {
    errors_with("hangs-upgrade", "hung");
}
