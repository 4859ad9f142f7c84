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
