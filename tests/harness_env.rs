//! What a launched (`exec:`) harness gets in its environment (docs/harness-api.md § 1,
//! docs/security.md): the launch contract's variables and a minimal environment, never the rest
//! of hcpspec's (a CI job's secrets). Its own test binary: it plants a variable in the process's
//! environment.

use hcpspec::suites::harness_api::{run_case, Harness};
use std::collections::BTreeMap;
use std::path::Path;

#[test]
fn a_launched_harness_gets_the_contract_and_a_minimal_environment_only() {
    std::env::set_var("HCPSPEC_CANARY_SECRET", "canary-7f3a9e1c-do-not-leak");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "canary-aws-0b5d");
    let out = std::env::temp_dir().join(format!("hcpspec-env-{}.json", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/env_harness.py");
    let harness = Harness::parse(&format!(
        "exec:python3 {} {}",
        script.display(),
        out.display()
    ))
    .unwrap();
    // A deadline no loaded machine reaches before python3 has started.
    let text = r#"{"id": "env", "title": "t", "section": "2", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 2 Work: hello, lease, renew, release (\"x\")",
        "scenario": { "deadlineMs": 30000, "model": [{ "text": "done" }] } }"#;
    let denials =
        hcpspec::case::load_denials(&Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors"))
            .unwrap();
    let mut case = hcpspec::suites::parse_case(
        Path::new("env.json"),
        text,
        "harness-api",
        "harness",
        &denials,
    )
    .unwrap();
    case.group = "env".into();
    // The harness reports as it starts (write, then rename) and exits; the scenario it never
    // plays goes on to its deadline on a thread of its own, which ends with the test.
    std::thread::spawn(move || run_case(&case, &harness));
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let text = loop {
        if let Ok(text) = std::fs::read_to_string(&out) {
            break text;
        }
        assert!(
            std::time::Instant::now() < until,
            "the harness did not report within 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let env: BTreeMap<String, String> = serde_json::from_str(&text).unwrap();
    let _ = std::fs::remove_file(&out);
    for planted in ["HCPSPEC_CANARY_SECRET", "AWS_SECRET_ACCESS_KEY"] {
        assert!(
            !env.contains_key(planted),
            "{planted} reached the harness: {env:?}"
        );
    }
    assert!(
        !env.values().any(|v| v.contains("canary-")),
        "a planted value reached the harness: {env:?}"
    );
    for contract in [
        "NYLORUN_CORE_URL",
        "NYLORUN_HARNESS_TOKEN",
        "NYLORUN_GATES_URL",
        "HARNESS_NAME",
    ] {
        assert!(env.contains_key(contract), "{contract} missing: {env:?}");
    }
    assert!(env["NYLORUN_CORE_URL"].starts_with("ws://127.0.0.1:"));
    // PATH kept (a pyenv shim may put its own directories in front).
    assert!(
        env["PATH"].ends_with(&std::env::var("PATH").unwrap()),
        "PATH: {env:?}"
    );
    // Nothing beyond the contract and the documented minimal set.
    let allowed = hcpspec::suites::harness_api::launch::MINIMAL_ENV;
    for k in env.keys() {
        let ok = k.starts_with("NYLORUN_")
            || k == "HARNESS_NAME"
            || allowed.iter().any(|a| a == k || (a.ends_with('*') && k.starts_with(&a[..a.len() - 1])))
            // What a pyenv shim (a bash script) in front of python3 sets itself.
            || ["PWD", "OLDPWD", "SHLVL", "_"].contains(&k.as_str())
            || k.starts_with("PYENV")
            || k.starts_with("_PYENV");
        assert!(ok, "{k} is not in the documented environment");
    }
}
