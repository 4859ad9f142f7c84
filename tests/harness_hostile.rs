//! Bad input from a harness: one that never connects, knocks on the wrong path, sends binary,
//! non-JSON, floods, crashes or hangs (ignoring SIGTERM, with a child of its own) is a failing
//! verdict with evidence within the scenario's deadline, never a hang of hcpspec, and its
//! processes are always reaped.

use hcpspec::case::Case;
use hcpspec::run::Verdict;
use hcpspec::suites::harness_api::{run_case, Harness};
use std::path::Path;
use std::time::{Duration, Instant};

fn scenario(deadline_ms: u64) -> Case {
    let text = format!(
        r#"{{"id": "hostile", "title": "t", "section": "2", "level": "MUST",
            "spec": "004_0d5b24e47247e871.txt § 2 Work: hello, lease, renew, release (\"x\")",
            "scenario": {{ "deadlineMs": {deadline_ms}, "model": [{{ "text": "done" }}],
                           "checks": [{{ "check": "ends", "with": "turn.completed" }}] }} }}"#
    );
    let denials =
        hcpspec::case::load_denials(&Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors"))
            .unwrap();
    let mut c = hcpspec::suites::parse_case(
        Path::new("hostile.json"),
        &text,
        "harness-api",
        "harness",
        &denials,
    )
    .unwrap();
    c.group = "hostile".into();
    c
}

fn hostile(mode: &str) -> Harness {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_harness.py");
    Harness::parse(&format!("exec:python3 {} {mode}", script.display())).unwrap()
}

/// Play the scenario: a failure (never a pass, never an error of hcpspec), within the deadline
/// and the stop's grace, with this text somewhere in its evidence.
fn fails_with(mode: &str, evidence: &str) {
    let t = Instant::now();
    let r = run_case(&scenario(1500), &hostile(mode));
    let took = t.elapsed();
    assert!(
        took < Duration::from_millis(1500 + 2000),
        "{mode}: took {took:?}"
    );
    let Verdict::Fail(f) = &r.verdict else {
        panic!("{mode}: expected a failure, got {:?}", r.verdict)
    };
    let all = format!("{} {}", f.message, f.actual);
    assert!(all.contains(evidence), "{mode}: `{evidence}` not in {all}");
}

/// Running, not a zombie (an orphan's zombie waits on an init that may never reap it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|r| r.trim_start().chars().next() != Some('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn a_harness_that_never_connects_fails_at_its_deadline() {
    fails_with("never-connects", "never connected");
}

#[test]
fn a_wrong_path_is_refused_404_and_shown() {
    fails_with("wrong-path", "404");
}

#[test]
fn a_binary_frame_fails_with_its_reason() {
    fails_with("binary", "binary frame");
}

#[test]
fn a_frame_that_is_not_json_fails_with_its_reason() {
    fails_with("not-json", "not one JSON message");
}

#[test]
fn a_flood_is_cut_off() {
    fails_with("floods", "flood");
}

#[test]
fn a_crash_keeps_the_last_stderr_lines() {
    fails_with("crashes", "the harness fell over");
}

#[test]
fn a_hang_ignoring_sigterm_is_killed_with_its_children() {
    let pidfile = tempfile::NamedTempFile::new().unwrap();
    // An argument, not a variable: a launched harness gets no variable of hcpspec's but the
    // minimal set (docs/harness-api.md § 1).
    fails_with(
        &format!("hangs-ignoring-sigterm {}", pidfile.path().display()),
        "still held",
    );
    let pids: Vec<i32> = std::fs::read_to_string(pidfile.path())
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    for pid in pids {
        assert!(!alive(pid), "process {pid} outlived its scenario");
    }
}
