//! Bad input from a core: a control shim that exits, answers garbage or nothing or refuses every
//! method, a core that never opens its listener, hangs an upgrade, answers frames with garbage
//! or closes mid-frame. Each is a verdict with evidence within its deadline (an error, a failure
//! showing what came, or unimplemented), never a hang of hcpspec and never a pass.

use crate::common;

use hcpspec::run::Verdict;
use hcpspec::suites::core_api::run_case;
use std::time::{Duration, Instant};

fn verdict(mode: &str) -> (Verdict, Duration) {
    verdict_of(
        mode,
        r#"[ { "connect": {}, "expect": { "status": 101 } } ]"#,
    )
}

/// The verdict of a case of these steps on the hostile shim `mode`, and how long it took.
fn verdict_of(mode: &str, steps: &str) -> (Verdict, Duration) {
    let (case, connect) = common::hostile_core_case(mode, steps, common::DEADLINE);
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

#[test]
fn a_control_shim_that_refuses_every_method_is_unimplemented() {
    let (v, took) = verdict("refuses");
    assert!(took < common::BOUND, "took {took:?}");
    assert!(
        matches!(&v, Verdict::Unimplemented { reason } if reason.contains("core.start")),
        "{v:?}"
    );
}

const HELLO: &str = r#"[ { "hello": {}, "expect": { "ok": true } } ]"#;

/// A failure of the hello step whose observed value holds `evidence`, within the deadline.
fn fails_showing(mode: &str, evidence: &str) {
    let (v, took) = verdict_of(mode, HELLO);
    assert!(took < common::BOUND, "{mode}: took {took:?}");
    match v {
        Verdict::Fail(f) => assert!(
            f.actual.to_string().contains(evidence),
            "{mode}: `{evidence}` not in {}",
            f.actual
        ),
        other => panic!("{mode}: expected a failure, got {other:?}"),
    }
}

#[test]
fn a_core_that_answers_frames_with_garbage_fails_showing_them() {
    fails_showing("ws-garbage", "this is no res");
}

#[test]
fn a_core_that_closes_mid_frame_fails_showing_the_close() {
    fails_showing("closes-mid-frame", "closed");
}

/// A case of `steps` in a vectors folder of its own (the real denials and core-api suite.json).
fn write_case(v: &std::path::Path, id: &str, steps: &str) {
    let group = v.join("core-api/99-hostile");
    std::fs::create_dir_all(&group).unwrap();
    let text = format!(
        r#"{{"id": "{id}", "title": "t", "section": "1", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"x\")",
        "script": {{ "steps": {steps} }} }}"#
    );
    std::fs::write(group.join(format!("{id}.json")), text).unwrap();
}

/// A core answering a JSON pointer of 5000 tokens (`purposeAt`, and a member a case pads at):
/// each case is an error verdict naming the member, the run writes its outputs; never a stack
/// overflow aborting the run. Run as a child process: an overflow would abort this test too.
#[test]
fn pointers_from_a_core_nested_past_the_bound_are_error_verdicts_not_a_crash() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let v = tempfile::tempdir().unwrap();
    std::fs::copy(
        root.join("vectors/denials.json"),
        v.path().join("denials.json"),
    )
    .unwrap();
    std::fs::create_dir_all(v.path().join("core-api")).unwrap();
    std::fs::copy(
        root.join("vectors/core-api/suite.json"),
        v.path().join("core-api/suite.json"),
    )
    .unwrap();
    let connect = r#"{ "connect": {}, "expect": { "status": 101 } }"#;
    write_case(
        v.path(),
        "deep-purpose-at",
        &format!(
            r#"[ {connect}, {{ "request": {{ "m": "effect.intent", "p": {{}}, "purpose": "x" }}, "expect": {{ "ok": true }} }} ]"#
        ),
    );
    write_case(
        v.path(),
        "deep-pad-at",
        &format!(
            r#"[ {connect}, {{ "request": {{ "m": "x", "p": {{}}, "padTo": 100, "padAt": "/p${{core.deepPad}}" }}, "expect": {{ "ok": true }} }} ]"#
        ),
    );
    let out = tempfile::tempdir().unwrap();
    let shim = root.join("tests/fauxmplementations/hostile_core.py");
    let runtime = format!("stdio:python3 {} deep-pointers", shim.display());
    let (o, _) = common::hcpspec_within(
        &[
            "run",
            "--suite",
            "core-api",
            "--vectors",
            v.path().to_str().unwrap(),
            "--runtime",
            &runtime,
            "--out",
            out.path().to_str().unwrap(),
            "--color",
            "never",
        ],
        common::BOUND * 4,
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(1), "a verdict, not an abort: {text}");
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("result.json")).expect("result.json"),
    )
    .unwrap();
    let cases = result["suites"][0]["runtimes"][0]["cases"]
        .as_array()
        .unwrap();
    for (case, member) in [("deep-purpose-at", "purposeAt"), ("deep-pad-at", "padAt")] {
        let c = cases
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.ends_with(case)))
            .unwrap_or_else(|| panic!("{case} in result.json"));
        let message = c["message"].as_str().unwrap_or_default();
        assert!(
            c["verdict"] == "error" && message.contains(member) && message.contains("at most 64"),
            "{case}: an error naming {member} and its bound: {c}"
        );
    }
}

/// A core declaring its failure form as `$deep` nested 14 deep, judged against an outcome
/// nested as deep that it does not match: a failure of the step, within the deadline (the
/// matcher's steps are counted and bounded: case::matcher's tests), never the 300 s watchdog.
#[test]
fn a_failure_form_of_deep_inside_deep_is_judged_within_the_deadline() {
    let mut outcome = serde_json::json!({ "leaf": "yes" });
    for _ in 0..14 {
        outcome = serde_json::json!({ "a": outcome });
    }
    let steps = format!(
        r#"[ {{ "control": "session.open", "params": {outcome}, "expect": "${{core.failure}}" }} ]"#
    );
    let (v, took) = verdict_of("deep-failure", &steps);
    assert!(took < common::BOUND, "took {took:?}");
    match v {
        Verdict::Fail(f) => assert!(f.message.contains("$deep"), "{}", f.message),
        other => panic!("expected a failure, got {other:?}"),
    }
}
