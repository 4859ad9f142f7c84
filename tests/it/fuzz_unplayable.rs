//! `hcpspec fuzz --suite S` never reports green when nothing could be played (an unreachable or
//! garbage-answering shim is exit 3 with one line saying so, not exit 0 or thousands of
//! findings), and every suite fuzzer honours `--max-findings`.

use std::path::Path;
use std::process::{Command, Output};

fn fuzz(args: &[&str]) -> Output {
    let out = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .arg("fuzz")
        .args(args)
        .args(["--seconds", "20", "--out"])
        .arg(out.path())
        .output()
        .unwrap()
}

fn hostile(script: &str, mode: &str) -> String {
    let s = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fauxmplementations")
        .join(script);
    format!("python3 {} {mode}", s.display())
}

fn unreachable(suite: &str, runtime: &str) {
    let o = fuzz(&["--suite", suite, "--runtime", runtime, "--cases", "5"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(
        o.status.code(),
        Some(hcpspec::exit::UNREACHABLE),
        "{suite} {runtime}:\n{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("finding:"), "{suite} {runtime}: {stdout}");
    assert!(
        stderr.contains("could be played") || stderr.contains("unreachable"),
        "{suite} {runtime}: {stderr}"
    );
}

#[test]
fn core_api_fuzz_on_an_unreachable_shim_is_exit_3() {
    unreachable("core-api", "stdio:/nonexistent/shim");
    unreachable(
        "core-api",
        &format!("stdio:{}", hostile("hostile_core.py", "garbage")),
    );
}

#[test]
fn host_fuzz_on_an_unreachable_shim_is_exit_3() {
    unreachable("host", "stdio:/nonexistent/shim");
    unreachable(
        "host",
        &format!("stdio:{}", hostile("hostile_host.py", "garbage")),
    );
}

#[test]
fn harness_api_fuzz_on_an_unreachable_harness_is_exit_3() {
    unreachable("harness-api", "exec:/nonexistent/harness");
}

#[test]
fn host_fuzz_stops_at_max_findings() {
    let o = fuzz(&[
        "--suite",
        "host",
        "--runtime",
        "inproc:mutant:payload-ref-ignored",
        "--cases",
        "400",
        "--max-findings",
        "1",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout.matches("finding:").count(), 1, "{stdout}");
}

/// `fuzz --suite SUITE --cases 6` on `SCRIPT garbage-but-describe` (a shim answering its
/// describe and garbage to everything else): its exit code, stdout and stderr.
fn garbage_but_describe(suite: &str, script: &str) -> (Option<i32>, String, String) {
    let runtime = format!("stdio:{}", hostile(script, "garbage-but-describe"));
    let o = fuzz(&["--suite", suite, "--runtime", &runtime, "--cases", "6"]);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A core whose shim answers its `core.describe` and garbage to everything else (no JSON, a
/// wrong id, no JSON-RPC) played nothing: never a green "0 findings".
#[test]
fn core_api_fuzz_on_a_shim_answering_garbage_after_describe_is_not_green() {
    let (code, stdout, stderr) = garbage_but_describe("core-api", "hostile_core.py");
    assert_eq!(code, Some(hcpspec::exit::UNREACHABLE), "{stdout}\n{stderr}");
    assert!(stdout.contains("6 could not be played"), "{stdout}");
    // Each unplayable trial is named with why (its seed case and the failing call).
    assert!(stdout.contains("unplayable: core.start"), "{stdout}");
}

/// The host twin: a host shim answering its `host.describe` and garbage to everything else can
/// play no trial, and is never a green "0 findings".
#[test]
fn host_fuzz_on_a_shim_answering_garbage_after_describe_is_not_green() {
    let (code, stdout, stderr) = garbage_but_describe("host", "hostile_host.py");
    assert_ne!(code, Some(0), "{stdout}\n{stderr}");
    assert!(!stdout.contains("0 findings"), "{stdout}\n{stderr}");
    // Why nothing was judged is said in words, naming the call that broke once.
    let said = format!("{stdout}{stderr}");
    assert!(said.contains("not JSON"), "{said}");
    assert!(!said.contains("Error {"), "a Rust debug form: {said}");
    assert!(!said.contains("host.target: host.target"), "{said}");
}
