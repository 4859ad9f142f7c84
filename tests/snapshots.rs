//! What `hcpspec run --snapshots` writes is what insta reads: the same body passes insta's
//! assertion as written and after a CRLF checkout, and a changed body fails it.

use std::path::Path;

fn insta_reads(dir: &Path, id: &str, body: &str) -> bool {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    let (id, body) = (id.to_string(), body.to_string());
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        settings.bind(|| insta::assert_snapshot!(id, body, "observations"));
    }))
    .is_ok()
}

#[test]
fn insta_reads_what_hcpspec_writes_crlf_included() {
    // Never let insta write or accept here: a mismatch must fail.
    std::env::set_var("INSTA_UPDATE", "no");
    std::env::set_var("INSTA_FORCE_PASS", "0");
    let dir = tempfile::tempdir().unwrap();
    let observations =
        serde_json::json!([{ "step": 0, "action": "install", "value": { "ok": true } }]);
    let key = hcpspec::snapshot::Key {
        suite: "suite-a",
        id: "c1",
        name: "contract::01-load::c1",
        source: Path::new("vectors/contract/01-load/c1.json"),
    };
    let root = dir.path();
    hcpspec::snapshot::check(
        root,
        "reference",
        &key,
        &observations,
        hcpspec::snapshot::Policy::Accept,
    )
    .unwrap();
    let folder = root.join("reference").join("suite-a");
    let body = hcpspec::snapshot::body(key.name, &observations);
    assert!(
        insta_reads(&folder, "c1", &body),
        "insta rejects hcpspec's own file"
    );

    let file = folder.join("c1.snap");
    let crlf = std::fs::read_to_string(&file)
        .unwrap()
        .replace('\n', "\r\n");
    std::fs::write(&file, crlf).unwrap();
    assert!(
        insta_reads(&folder, "c1", &body),
        "a CRLF checkout is not read alike"
    );

    let other = hcpspec::snapshot::body(key.name, &serde_json::json!([]));
    assert!(
        !insta_reads(&folder, "c1", &other),
        "insta accepts a changed body"
    );
}

fn hcpspec(args: &[&str], ci: Option<&str>) -> std::process::Output {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_hcpspec"));
    c.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CI")
        .env_remove("TF_BUILD");
    if let Some(v) = ci {
        c.env("CI", v);
    }
    c.output().expect("hcpspec runs")
}

fn text(o: &std::process::Output) -> String {
    let t = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    t.chars()
        .rev()
        .take(6000)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect()
}

/// result.json's summary of its one suite's one runtime.
fn summary(out: &Path) -> serde_json::Value {
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    result["suites"][0]["runtimes"][0]["summary"].clone()
}

const OTHER: &str = "stdio:python3 examples/python-shim/shim.py --reading other";

/// The example shim's other reading makes a fresh jail per exec and a credential file in it
/// (random names) and mints random tokens; it declares them in `initialize` (`redactions`), so
/// rerun unchanged it drifts on nothing. The first run writes every snapshot as `new`, which
/// fails no run outside CI.
#[test]
fn the_python_shim_reruns_without_drift_and_its_first_run_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let (snaps, out) = (dir.path().join("snaps"), dir.path().join("out"));
    let args = [
        "run",
        "--runtime",
        OTHER,
        "--snapshots",
        snaps.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = hcpspec(&args, None);
    assert_eq!(o.status.code(), Some(0), "first run: {}", text(&o));
    let first = summary(&out);
    // Every case that ran (all but the skipped) has a new snapshot.
    let ran: u64 = [
        "pass",
        "fail",
        "expected_fail",
        "stale",
        "unimplemented",
        "error",
        "profile",
    ]
    .iter()
    .map(|k| first[k].as_u64().unwrap())
    .sum();
    assert!(ran > 100, "{first}");
    assert_eq!(
        first["new"].as_u64(),
        Some(ran),
        "every case ran is new: {first}"
    );
    assert_eq!(first["drift"], 0, "{first}");
    assert!(text(&o).contains("new snapshot(s) written"), "{}", text(&o));
    let snap = std::fs::read_to_string(
        std::fs::read_dir(snaps.join("minihcp-other/contract"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("[jail]")))
            .expect("a snapshot with a redacted jail"),
    )
    .unwrap();
    assert!(!snap.contains("/jail-"), "{snap}");

    let o = hcpspec(&args, None);
    assert_eq!(o.status.code(), Some(0), "second run: {}", text(&o));
    let second = summary(&out);
    assert_eq!(
        (second["drift"].as_u64(), second["new"].as_u64()),
        (Some(0), Some(0)),
        "rerun unchanged, nothing drifts: {second}\n{}",
        text(&o)
    );
    let pending: Vec<_> = hcpspec::snapshot::pending(&snaps).unwrap();
    assert!(pending.is_empty(), "{pending:?}");

    // Under CI the same first run fails, leaving every snapshot pending.
    let fresh = dir.path().join("fresh");
    let o = hcpspec(
        &[
            "run",
            "--runtime",
            OTHER,
            "--filter",
            "04-confirm",
            "--snapshots",
            fresh.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        Some("true"),
    );
    assert_eq!(o.status.code(), Some(1), "under CI: {}", text(&o));
    assert!(!hcpspec::snapshot::pending(&fresh).unwrap().is_empty());
}

/// A bad redaction is bad input (exit 2), named by runtime and member, before any case runs.
#[test]
fn a_bad_declared_redaction_names_the_runtime_and_member() {
    let dir = tempfile::tempdir().unwrap();
    let shim = dir.path().join("bad.py");
    std::fs::write(
        &shim,
        r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    r = {"protocol": "hcpspec-shim/1", "runtime": {"name": "badredact", "version": "1"},
         "features": [], "redactions": [{"pattern": "ok-[0-9]+", "placeholder": "[ok]"},
                                        {"pattern": "jail-(", "placeholder": "[jail]"}]}
    print(json.dumps({"jsonrpc": "2.0", "id": m.get("id"), "result": r}), flush=True)
"#,
    )
    .unwrap();
    let spec = format!("stdio:python3 {}", shim.display());
    let o = hcpspec(
        &[
            "run",
            "--runtime",
            &spec,
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        None,
    );
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("runtime badredact (")
            && t.contains("redactions[1].pattern")
            && t.contains("\"jail-(\" is not a regex"),
        "{t}"
    );
}
