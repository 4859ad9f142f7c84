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
