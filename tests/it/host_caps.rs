//! Caps of the host suite against a hostile host shim (issue 20): 7 MiB error texts reach a
//! verdict cut, saved values are capped in all (as in the core-api suite, the same template
//! mechanism), and a fuzz run whose shim dies part way through is exit 3 with one line, or one
//! finding, never a flood of findings.

use hcpspec::adapter::{Adapter, CallError};
use hcpspec::case::Case;
use hcpspec::run::Verdict;
use hcpspec::suites::host::{connector, execute, run_case};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

fn case(steps: &str) -> Case {
    let text = format!(
        r#"{{"id": "hostile", "title": "t", "section": "0", "level": "MUST",
        "spec": "003_43d43b314353d2bc.txt § Overview (\"x\")", "host": {{ "steps": {steps} }} }}"#
    );
    let denials = hcpspec::case::load_denials(&vectors()).unwrap();
    let mut c =
        hcpspec::suites::parse_case(Path::new("hostile.json"), &text, "host", "host", &denials)
            .unwrap();
    c.group = "hostile".into();
    c
}

fn hostile(args: &str) -> String {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_host.py");
    format!("stdio:python3 {} {args}", script.display())
}

#[test]
fn a_7_mib_method_not_found_reaches_the_verdict_cut() {
    let opts = hcpspec::adapter::Options {
        timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let connect = connector(&hostile("refuses-long").parse().unwrap(), &opts).unwrap();
    let r = run_case(
        &case(r#"[ { "call": "host.bind", "expect": {} } ]"#),
        &connect,
    );
    match &r.verdict {
        Verdict::Unimplemented { reason } => {
            assert!(reason.len() < 8 << 10, "{} bytes", reason.len());
            assert!(reason.contains("[cut: "), "{}", &reason[..200]);
        }
        other => panic!("expected unimplemented, got {:.300}", format!("{other:?}")),
    }
}

/// A shim that answers every call with its params.
struct Echo;

impl Adapter for Echo {
    fn call(&mut self, _method: &str, params: Value) -> Result<Value, CallError> {
        Ok(params)
    }
}

#[test]
fn saved_values_past_their_cap_are_an_error() {
    let mib = "s".repeat(1 << 20);
    let mut steps = vec![format!(
        r#"{{ "call": "host.live", "params": {{ "session": "b1", "a": "{mib}" }}, "save": "s0" }}"#
    )];
    for i in 1..=12 {
        steps.push(format!(
            r#"{{ "call": "host.live", "params": {{ "session": "b1", "a": "${{s0.a}}", "b": "${{s0.a}}", "c": "${{s0.a}}", "d": "${{s0.a}}" }}, "save": "s{i}" }}"#
        ));
    }
    // Something to check (a case of arrangement only is refused at load), never reached.
    steps.push(r#"{ "call": "host.drops", "params": { "session": "b1" }, "expect": {} }"#.into());
    let c = case(&format!("[{}]", steps.join(", ")));
    let v = execute(&c, &mut Echo, &mut vec![]);
    match v {
        Verdict::Error { message } => {
            assert!(message.contains("saved values past 32 MiB"), "{message}")
        }
        other => panic!(
            "expected an error verdict, got {:.300}",
            format!("{other:?}")
        ),
    }
    let small = r#"[ { "call": "host.live", "params": { "session": "b1", "a": "x" }, "save": "s", "expect": {} } ]"#;
    let v = execute(&case(small), &mut Echo, &mut vec![]);
    assert!(matches!(v, Verdict::Pass), "{v:?}");
}

fn fuzz(runtime: &str) -> (Option<i32>, String, String) {
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["fuzz", "--suite", "host", "--runtime", runtime])
        .args(["--seconds", "20", "--cases", "200", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

#[test]
fn a_fuzz_run_whose_shim_dies_for_good_is_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    let (code, stdout, stderr) = fuzz(&hostile(&format!("dies-after {} 40", count.display())));
    assert_eq!(code, Some(hcpspec::exit::UNREACHABLE), "{stdout}\n{stderr}");
    // Findings of the cases it answered are real; once it died, no case is a finding.
    assert!(
        !stdout
            .lines()
            .filter(|l| l.starts_with("finding:"))
            .any(|l| l.contains("closed its stdout") || l.contains("transport")),
        "{stdout}"
    );
    assert!(stderr.contains("stopped answering"), "{stderr}");
}

#[test]
fn a_fuzz_run_whose_shim_breaks_every_case_is_one_finding() {
    let (code, stdout, stderr) = fuzz(&hostile("exits-after 4"));
    assert_eq!(code, Some(hcpspec::exit::FAILURES), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches("finding:").count(), 1, "{stdout}");
    assert!(stdout.contains("unmutated"), "{stdout}");
}
