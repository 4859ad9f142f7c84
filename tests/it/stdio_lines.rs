//! The stdio adapter of the suites whose shim holds a whole case (core-api, host): a call's
//! deadline is absolute from the request (nothing the shim sends renews it), a line is capped at
//! `max_message` and read in bounded chunks, and invalid UTF-8 or another request's id is an
//! error that says so.

use hcpspec::adapter::{process, CallError, Options};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Call `core.describe` on `hostile_line.py MODE` with a 3 s deadline (a Python shim starting
/// under load missed 1 s) and a 1 MiB cap.
fn call(mode: &str) -> (Result<serde_json::Value, CallError>, Duration) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_line.py");
    let opts = Options {
        timeout: Duration::from_secs(3),
        max_message: 1 << 20,
    };
    let connect = process::connector(
        &format!("stdio:python3 {} {mode}", script.display())
            .parse()
            .unwrap(),
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
    // Never past its deadline in charged time: at most LEAST_SHARE times 3 s of wall time on a
    // machine that keeps the shim from a CPU (docs/security.md), then the kill.
    let most =
        Duration::from_secs(3) * hcpspec::adapter::sched::LEAST_SHARE + Duration::from_secs(6);
    assert!(took < most, "{mode}: took {took:?}");
    match r {
        Err(CallError::Transport(m)) => {
            assert!(m.contains(evidence), "{mode}: `{evidence}` not in {m}")
        }
        other => panic!("{mode}: expected a transport error, got {other:?}"),
    }
}

#[test]
fn notifications_do_not_renew_the_deadline() {
    fails_with("notifies", "no answer within 3 s");
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

/// What `hcpspec shim --runtime RUNTIME` (stdio) answers to `input`, one answer a line.
fn shim_answers(runtime: &str, input: Vec<u8>) -> Vec<serde_json::Value> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["shim", "--runtime", runtime])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A bad line to a whole-case shim, then a good request: a parse error answer, then the answer.
fn survives(runtime: &str, describe: &str, bad: &[u8]) {
    let mut input = bad.to_vec();
    input.extend_from_slice(
        format!(
            "\n{{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"{describe}\", \"params\": {{}}}}\n"
        )
        .as_bytes(),
    );
    let answers = shim_answers(runtime, input);
    assert_eq!(answers.len(), 2, "{runtime}: {answers:?}");
    assert_eq!(
        answers[0]["error"]["code"], -32700,
        "{runtime}: {answers:?}"
    );
    assert_eq!(answers[1]["id"], 7, "{runtime}: {answers:?}");
    assert!(answers[1].get("result").is_some(), "{runtime}: {answers:?}");
}

#[test]
fn the_embedded_case_shims_answer_invalid_utf8_with_a_parse_error_and_go_on() {
    let bad = b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"\xff\xfe\", \"params\": {}}";
    survives("core:reference", "core.describe", bad);
    survives("host:reference", "host.describe", bad);
}

#[test]
fn the_embedded_case_shims_refuse_a_line_past_the_cap_and_go_on() {
    // A good request padded past the cap: refused for its length, not for what it says.
    for (runtime, describe) in [
        ("core:reference", "core.describe"),
        ("host:reference", "host.describe"),
    ] {
        let mut bad = format!(
            "{{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"{describe}\", \"params\": {{}}}}"
        )
        .into_bytes();
        bad.resize(hcpspec::shim::MAX_MESSAGE + (1 << 20), b' ');
        survives(runtime, describe, &bad);
    }
}
