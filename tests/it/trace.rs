//! The wire trace (issue 46): every message of a case that did not pass, in order, redacted,
//! bounded, in result.json, on the terminal with `--trace`, in `explain --result` and the HTML.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HCPSPEC: &str = env!("CARGO_BIN_EXE_hcpspec");
const CASE: &str = "contract::01-load::harness-md-is-free-text";
const CANARY: &str = "canary-trace-5e6f7a8b9c0d";

fn shim() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/nothing_shim.py");
    format!("stdio:{}", p.display())
}

/// `hcpspec run --trace` of [`CASE`] on `runtime` into `out`, with the canary planted.
fn run(runtime: &str, out: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(HCPSPEC)
        .args([
            "run",
            "--suite",
            "contract",
            "--filter",
            CASE,
            "--trace",
            "--runtime",
            runtime,
        ])
        .arg("--out")
        .arg(out)
        .env("HCPSPEC_TRACE_CANARY", CANARY)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

/// The result of [`CASE`] in `out`'s result.json, which matches its schema.
fn case(out: &Path) -> Value {
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let errors = hcpspec::schema::violations(hcpspec::schema::run_result(), &r);
    assert!(
        errors.is_empty(),
        "result.json breaks its schema: {errors:?}"
    );
    r["suites"][0]["runtimes"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == CASE)
        .unwrap()
        .clone()
}

fn texts(out: &Path, o: &Output) -> Vec<(PathBuf, String)> {
    let mut all = super::redaction::files(out);
    all.push((
        "terminal".into(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    ));
    all
}

#[test]
fn a_failing_case_keeps_its_messages_in_order_redacted_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = run(&shim(), &out, &[]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let c = case(&out);
    assert_eq!(c["verdict"], "error");
    let m = c["trace"]["messages"].as_array().expect("a trace");
    let seen: Vec<(&str, &str)> = m
        .iter()
        .map(|m| (m["dir"].as_str().unwrap(), m["method"].as_str().unwrap()))
        .collect();
    // The process's handshake (it started for this case), then the call the case failed on.
    let create = seen
        .iter()
        .position(|s| *s == ("sent", "runtime.create"))
        .unwrap();
    assert_eq!(seen[create + 1], ("received", "runtime.create"), "{seen:?}");
    let answer = m[create + 1]["text"].as_str().unwrap();
    assert!(answer.contains("-32601"), "{answer}");
    assert!(
        answer.contains("[redacted: $HCPSPEC_TRACE_CANARY]"),
        "{answer}"
    );
    // No output holds the canary; the terminal and the HTML show the trace.
    for (p, text) in texts(&out, &o) {
        assert!(!text.contains(CANARY), "{} holds the canary", p.display());
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("  trace (") && err.contains("→ runtime.create"),
        "{err}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("<details class=trace><summary>wire trace"),
        "no trace in the HTML"
    );
    // explain --result shows the verdict and the same trace.
    let e = Command::new(HCPSPEC)
        .args(["explain", CASE, "--result"])
        .arg(out.join("result.json"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&e.stdout);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    assert!(
        text.contains(": error") && text.contains("← runtime.create"),
        "{text}"
    );
    assert!(!text.contains(CANARY));
}

#[test]
fn a_flooding_shim_is_bounded_in_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = run(&shim(), &out, &[("TRACE_FLOOD", "1")]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let c = case(&out);
    let m = c["trace"]["messages"].as_array().expect("a trace");
    let bytes: usize = m.iter().map(|m| m["text"].as_str().unwrap().len()).sum();
    assert!(
        bytes <= hcpspec::trace::MAX_BYTES + 512,
        "{bytes} bytes of trace"
    );
    let answer = m
        .iter()
        .find(|m| m["dir"] == "received" && m["method"] == "runtime.create")
        .unwrap()["text"]
        .as_str()
        .unwrap();
    assert!(
        answer.len() < hcpspec::trace::MAX_MESSAGE + 64,
        "{}",
        answer.len()
    );
    assert!(
        answer.ends_with(" bytes in all]"),
        "{}",
        &answer[answer.len() - 80..]
    );
    assert!(!answer.contains(CANARY));
}

/// Of one case run on two runtimes with snapshots (so a pass is recorded until its snapshot is
/// judged), the one that fails keeps its trace and the one that passes has none.
#[test]
fn only_a_case_that_did_not_pass_keeps_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let (out, snaps) = (dir.path().join("out"), dir.path().join("snaps"));
    let reference = format!("stdio:{HCPSPEC} shim --transport stdio --runtime reference");
    let run = |extra: &[&str]| {
        Command::new(HCPSPEC)
            .args(["run", "--suite", "contract", "--filter", CASE])
            .args(["--runtime", &shim(), "--runtime", &reference, "--snapshots"])
            .arg(&snaps)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = run(&["--accept"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&["--ci"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let runs = r["suites"][0]["runtimes"].as_array().unwrap();
    let verdicts: Vec<(&str, bool)> = runs
        .iter()
        .map(|run| {
            let c = &run["cases"][0];
            (c["verdict"].as_str().unwrap(), c.get("trace").is_some())
        })
        .collect();
    assert_eq!(verdicts, [("error", true), ("pass", false)]);
}

/// The one case `case_name` of `suite` run on `runtime`, which fails it: its trace as
/// "direction method" lines, and its messages.
fn failing_trace(suite: &str, runtime: &str, case_name: &str) -> (Vec<String>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = Command::new(HCPSPEC)
        .args(["run", "--suite", suite, "--filter", case_name])
        .args(["--runtime", runtime, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let c = &r["suites"][0]["runtimes"][0]["cases"][0];
    assert_eq!(c["name"], case_name);
    let messages = c["trace"]["messages"].clone();
    let seen = messages
        .as_array()
        .expect("a trace")
        .iter()
        .map(|m| {
            format!(
                "{} {}",
                m["dir"].as_str().unwrap(),
                m["method"].as_str().unwrap()
            )
        })
        .collect();
    (seen, messages)
}

/// core-api, where hcpspec plays the harness: the upgrade and the WebSocket frames both ways.
#[test]
fn a_failing_core_api_case_keeps_its_websocket_frames() {
    let (seen, messages) = failing_trace(
        "core-api",
        "inproc:mutant:outcome-not-recorded",
        "core-api::04-record::http-tool-row-names-the-url-host",
    );
    assert_eq!(
        seen[..4],
        [
            "sent ws upgrade",
            "received ws upgrade",
            "sent ws",
            "received ws res"
        ],
        "{seen:?}"
    );
    let hello = messages[2]["text"].as_str().unwrap();
    assert!(hello.contains(r#""m":"hello""#), "{hello}");
}

/// harness-api, where hcpspec plays core: the upgrade, the frames both ways and the gate calls,
/// from the scenario's log.
#[test]
fn a_failing_harness_api_case_keeps_its_frames() {
    let (seen, _) = failing_trace(
        "harness-api",
        "inproc:mutant:silent-while-waiting",
        "harness-api::01-transport::busy-harness-is-not-dropped",
    );
    assert_eq!(
        seen[..3],
        ["received ws upgrade", "received ws hello", "sent ws res"],
        "{seen:?}"
    );
    assert!(seen.iter().any(|s| s == "received gate"), "{seen:?}");
}
