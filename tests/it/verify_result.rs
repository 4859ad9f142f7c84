//! `hcpspec verify RESULT` (docs/verify.md): it finds any single edit of a verdict, a count, a
//! case name or the case-set hash in a real result, naming where, and accepts every result
//! hcpspec writes (each suite's, merged shards, a failing run).

use serde_json::Value;
use std::path::Path;

use super::cli::{hcpspec, text};

/// `hcpspec run ARGS --out DIR`: its result.json.
fn run(dir: &Path, args: &[&str]) -> std::path::PathBuf {
    let out = dir.to_str().unwrap();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out]);
    let o = hcpspec(&all);
    assert!(o.status.code() != Some(2), "{}", text(&o));
    dir.join("result.json")
}

/// `verify` of `path`: its exit code and output.
fn verify(path: &Path) -> (i32, String) {
    let o = hcpspec(&["verify", path.to_str().unwrap()]);
    (o.status.code().unwrap_or(-1), text(&o))
}

#[test]
fn verify_finds_each_single_edit_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = run(
        &tmp.path().join("run"),
        &["--suite", "contract", "--runtime", "inproc:reference"],
    );
    let (code, out) = verify(&path);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("could have failed: mutant "), "{out}");
    let original: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let run0 = "/suites/0/runtimes/0";
    type Edit = (&'static str, fn(&mut Value), String);
    let edits: Vec<Edit> = vec![
        (
            "a verdict",
            |v| {
                let c = &mut v["suites"][0]["runtimes"][0]["cases"][0];
                c["verdict"] = "skip".into();
                c["reason"] = "edited".into();
            },
            format!("{run0}/cases/0/outcome: says pass"),
        ),
        (
            "a verdict and its outcome",
            |v| {
                let c = &mut v["suites"][0]["runtimes"][0]["cases"][0];
                c["verdict"] = "error".into();
                c["message"] = "edited".into();
                c["outcome"] = "error".into();
            },
            format!("{run0}/summary/pass: says 265; its cases count 264"),
        ),
        (
            "a count",
            |v| {
                let s = &mut v["suites"][0]["runtimes"][0]["summary"];
                s["pass"] = (s["pass"].as_u64().unwrap() - 1).into();
            },
            format!("{run0}/summary/pass: says 264; its cases count 265"),
        ),
        (
            "a case name",
            |v| {
                let c = &mut v["suites"][0]["runtimes"][0]["cases"][3];
                c["name"] = format!("{}-edited", c["name"].as_str().unwrap()).into();
            },
            format!("{run0}/cases/3/name: no case contract::"),
        ),
        (
            "a case's section",
            |v| v["suites"][0]["runtimes"][0]["cases"][3]["section"] = "9".into(),
            format!("{run0}/cases/3/section: says 9"),
        ),
        (
            "the case-set hash",
            |v| v["vectors"][0]["sha256"] = "0".repeat(64).into(),
            "/vectors/0/sha256: says 0000".to_string(),
        ),
        (
            "the suite's cases_hash",
            |v| v["suites"][0]["cases_hash"] = "0123456789abcdef".into(),
            "/suites/0/cases_hash: says 0123456789abcdef".to_string(),
        ),
    ];
    for (what, edit, named) in edits {
        let mut v = original.clone();
        edit(&mut v);
        let edited = tmp.path().join("edited.json");
        std::fs::write(&edited, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
        let (code, out) = verify(&edited);
        assert_eq!(code, 1, "{what}: {out}");
        assert!(
            out.contains(&format!("edited.json:{named}")),
            "{what}: {out}"
        );
        assert!(out.contains("EDITED"), "{what}: {out}");
    }
    // A result naming another hcpspec version: its case set cannot be checked here (exit 5).
    let mut v = original.clone();
    v["hcpspec_version"] = "0.0.1-other".into();
    let other = tmp.path().join("other.json");
    std::fs::write(&other, serde_json::to_vec(&v).unwrap()).unwrap();
    let (code, out) = verify(&other);
    assert_eq!(code, 5, "{out}");
    assert!(
        out.contains("not checked: the result names hcpspec 0.0.1-other"),
        "{out}"
    );
    // Not a result: bad input (exit 2).
    std::fs::write(&other, "{").unwrap();
    assert_eq!(verify(&other).0, 2);
}

#[test]
fn verify_accepts_every_result_hcpspec_writes() {
    let tmp = tempfile::tempdir().unwrap();
    // Every suite against its embedded targets, in one result.
    let all = run(&tmp.path().join("all"), &[]);
    // A failing run: a mutant.
    let failing = run(
        &tmp.path().join("failing"),
        &[
            "--suite",
            "contract",
            "--runtime",
            "inproc:mutant:schema-skipped",
        ],
    );
    // Merged shards (two of three: a merge of some shards is one too).
    let shard = |k: &str| {
        run(
            &tmp.path().join(format!("shard{k}")),
            &[
                "--suite",
                "contract",
                "--runtime",
                "inproc:reference",
                "--partition",
                k,
            ],
        )
    };
    let (s1, s3) = (shard("1/3"), shard("3/3"));
    let merged_dir = tmp.path().join("merged");
    let o = hcpspec(&[
        "report",
        s1.to_str().unwrap(),
        s3.to_str().unwrap(),
        "--out",
        merged_dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let merged = merged_dir.join("result.json");
    for p in [&all, &failing, &merged] {
        let (code, out) = verify(p);
        assert_eq!(code, 0, "{}: {out}", p.display());
        assert!(out.contains(": verified\n"), "{out}");
    }
    let v: Value = serde_json::from_slice(&std::fs::read(&merged).unwrap()).unwrap();
    let earliest = [&s1, &s3]
        .iter()
        .map(|p| {
            let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            v["started"].as_str().unwrap().to_string()
        })
        .min()
        .unwrap();
    assert_eq!(
        v["started"],
        earliest.as_str(),
        "a merge keeps the earliest start"
    );
    let suites = v["suites"].as_array().unwrap();
    let implementation = &suites[0]["runtimes"][0]["implementation"];
    assert_eq!(implementation["name"], "reference");
}
