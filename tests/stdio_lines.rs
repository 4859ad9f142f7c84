//! The stdio adapter of the suites whose shim holds a whole case (core-api, host): a call's
//! deadline is absolute from the request (nothing the shim sends renews it), a line is capped at
//! `max_message` and read in bounded chunks, and invalid UTF-8 or another request's id is an
//! error that says so.

use hcpspec::adapter::{process, CallError, Options};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Call `core.describe` on `hostile_line.py MODE` with a 1 s deadline and a 1 MiB cap.
fn call(mode: &str) -> (Result<serde_json::Value, CallError>, Duration) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_line.py");
    let opts = Options {
        timeout: Duration::from_secs(1),
        max_message: 1 << 20,
    };
    let connect = process::connector(
        &format!("stdio:python3 {} {mode}", script.display()),
        &opts,
        "core",
        |_| None,
    )
    .unwrap();
    let mut a = connect().unwrap();
    let t = Instant::now();
    let r = a.call("core.describe", json!({}));
    (r, t.elapsed())
}

fn fails_with(mode: &str, evidence: &str) {
    let (r, took) = call(mode);
    assert!(took < Duration::from_secs(3), "{mode}: took {took:?}");
    match r {
        Err(CallError::Transport(m)) => {
            assert!(m.contains(evidence), "{mode}: `{evidence}` not in {m}")
        }
        other => panic!("{mode}: expected a transport error, got {other:?}"),
    }
}

#[test]
fn notifications_do_not_renew_the_deadline() {
    fails_with("notifies", "no answer within 1 s");
}

#[test]
fn a_line_past_the_cap_is_an_error_naming_the_cap() {
    fails_with("endless-line", "1 MiB");
}

#[test]
fn invalid_utf8_is_an_error_saying_so() {
    fails_with("bad-utf8", "UTF-8");
}

#[test]
fn an_answer_to_another_id_is_an_error_saying_so() {
    fails_with("wrong-id", "id 101");
}

#[test]
fn notifications_before_the_answer_are_skipped() {
    let (r, _) = call("notifies-then-answers");
    assert_eq!(r.unwrap(), json!({}));
}
