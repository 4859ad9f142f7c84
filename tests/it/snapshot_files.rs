//! Committed snapshots are untrusted files (issue 45): a symlink under `--snapshots` is never
//! followed, for reading or writing, and a huge `.snap` is refused before it is read, its diff
//! bounded.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `hcpspec run` of the confirm cases against the reference, into `out`, snapshots in `snaps`.
fn run(out: &Path, snaps: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args([
            "run",
            "--runtime",
            "inproc:reference",
            "--filter",
            "04-confirm",
        ])
        .args(["--out", s(out), "--snapshots", s(snaps)])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CI")
        .env_remove("TF_BUILD")
        .output()
        .expect("hcpspec runs")
}

use crate::cli::text;

/// Accepted snapshots in `snaps`; the first `.snap` of the contract suite.
fn accepted(out: &Path, snaps: &Path) -> PathBuf {
    let o = run(out, snaps, &["--accept"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let mut all: Vec<PathBuf> = std::fs::read_dir(snaps.join("reference/contract"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "snap"))
        .collect();
    all.sort();
    all.remove(0)
}

fn result(out: &Path) -> String {
    std::fs::read_to_string(out.join("result.json")).expect("result.json is written")
}

/// The verdict of the case whose snapshot is `snap`.
fn verdict_of(out: &Path, snap: &Path) -> Value {
    let r: Value = serde_json::from_str(&result(out)).unwrap();
    let id = snap.file_stem().unwrap().to_str().unwrap();
    r["suites"][0]["runtimes"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"].as_str().unwrap().ends_with(&format!("::{id}")))
        .unwrap_or_else(|| panic!("no case {id}"))
        .clone()
}

#[test]
fn a_linked_snap_is_an_error_verdict_and_its_target_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let (out, snaps) = (dir.path().join("out"), dir.path().join("snaps"));
    let snap = accepted(&out, &snaps);
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "---\nsource: x\n---\nCANARY-OUTSIDE-TEXT\n").unwrap();
    std::fs::remove_file(&snap).unwrap();
    std::os::unix::fs::symlink(&outside, &snap).unwrap();
    for ci in [&[][..], &["--ci"][..]] {
        let o = run(&out, &snaps, ci);
        assert_eq!(o.status.code(), Some(1), "{ci:?}: {}", text(&o));
        assert!(!result(&out).contains("CANARY-OUTSIDE"), "{}", result(&out));
        let v = verdict_of(&out, &snap);
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("is a symlink") && message.contains(".snap"),
            "{v}"
        );
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "---\nsource: x\n---\nCANARY-OUTSIDE-TEXT\n"
        );
    }
}

#[test]
fn nothing_is_written_through_a_link_out_of_the_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let (out, snaps) = (dir.path().join("out"), dir.path().join("snaps"));
    let snap = accepted(&out, &snaps);
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // A dangling link where a new snapshot goes (outside CI it is written), and a `.snap.new`
    // linked to an existing file (under CI a new body is left there).
    std::fs::remove_file(&snap).unwrap();
    std::os::unix::fs::symlink(outside.join("created"), &snap).unwrap();
    let o = run(&out, &snaps, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!outside.join("created").exists(), "written through a link");
    std::fs::remove_file(&snap).unwrap();
    std::fs::write(outside.join("kept"), "KEPT").unwrap();
    std::os::unix::fs::symlink(outside.join("kept"), snap.with_extension("snap.new")).unwrap();
    let o = run(&out, &snaps, &["--ci"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(outside.join("kept")).unwrap(),
        "KEPT"
    );
    assert!(verdict_of(&out, &snap)["message"]
        .as_str()
        .unwrap_or_default()
        .contains("is a symlink"));
    // A linked folder on the way: nothing is created in what it points to.
    std::fs::remove_dir_all(&snaps).unwrap();
    std::fs::create_dir_all(snaps.join("reference")).unwrap();
    std::os::unix::fs::symlink(&outside, snaps.join("reference/contract")).unwrap();
    for ci in [&[][..], &["--ci"][..], &["--accept"][..]] {
        let o = run(&out, &snaps, ci);
        assert_ne!(o.status.code(), Some(0), "{ci:?}: {}", text(&o));
        assert!(text(&o).contains("is a symlink"), "{}", text(&o));
        let mut names: Vec<_> = std::fs::read_dir(&outside)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["kept"],
            "{ci:?}: files created through a linked folder"
        );
    }
}

#[test]
fn a_huge_snap_is_refused_unread_and_a_long_one_diffs_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let (out, snaps) = (dir.path().join("out"), dir.path().join("snaps"));
    let snap = accepted(&out, &snaps);
    // Over the size limit: an error verdict naming the file and the limit, outputs written.
    let huge = format!("---\nsource: x\n---\n{}\n", "x".repeat(5 << 20));
    std::fs::write(&snap, huge).unwrap();
    let o = run(&out, &snaps, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let message = verdict_of(&out, &snap)["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains(".snap") && message.contains("4 MiB"),
        "{message}"
    );
    // 80 000 lines, under the limit: drift, its diff bounded, result.json written.
    let long: String = (0..80_000).map(|i| format!("{i}\n")).collect();
    std::fs::write(&snap, format!("---\nsource: x\n---\n{long}")).unwrap();
    let o = run(&out, &snaps, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r: Value = serde_json::from_str(&result(&out)).unwrap();
    let case = r["suites"][0]["runtimes"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["drift"]["drift"] == "changed")
        .expect("a changed snapshot")
        .clone();
    let diff = case["drift"]["diff"].as_str().unwrap();
    assert!(
        diff.len() <= hcpspec::snapshot::MAX_VALUE + 64,
        "{}",
        diff.len()
    );
    assert!(std::fs::metadata(snap.with_extension("snap.new")).is_ok());
}

#[test]
fn review_into_a_snap_that_is_a_folder_names_that_folder() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("rt/contract");
    std::fs::create_dir_all(case.join("c.snap")).unwrap();
    std::fs::write(case.join("c.snap.new"), "---\nsource: x\n---\n{}\n").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["review", "--snapshots", s(dir.path()), "--accept-all"])
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    let line = t.lines().find(|l| l.contains("c.snap")).unwrap_or_default();
    assert!(
        t.contains(&format!("{}:", case.join("c.snap").display())) && !line.contains(".snap.new:"),
        "{t}"
    );
    assert!(
        case.join("c.snap.new").is_file(),
        "the pending snapshot stays"
    );
}

#[test]
fn a_hard_linked_pending_snapshot_is_replaced_not_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let (out, snaps) = (dir.path().join("out"), dir.path().join("snaps"));
    let snap = accepted(&out, &snaps);
    let outside = dir.path().join("kept");
    std::fs::write(&outside, "KEPT").unwrap();
    std::fs::remove_file(&snap).unwrap();
    std::fs::hard_link(&outside, snap.with_extension("snap.new")).unwrap();
    let o = run(&out, &snaps, &["--ci"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "KEPT");
    assert!(std::fs::read_to_string(snap.with_extension("snap.new"))
        .unwrap()
        .starts_with("---\nsource: "));
}
