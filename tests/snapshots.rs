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
