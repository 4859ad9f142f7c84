//! The `hcpspec` command as users and CI call it: exit codes, snapshots and drift,
//! expectations, partitions, reports, and one clear line for bad input.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn hcpspec(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("hcpspec runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn run_writes_a_result_that_matches_its_schema_and_every_rendering() {
    let out = tmp();
    let o = hcpspec(&["run", "--filter", "04-confirm", "--out", s(out.path())]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    let errors = hcpspec::schema::violations(hcpspec::schema::run_result(), &result);
    assert!(
        errors.is_empty(),
        "result.json breaks its schema: {errors:?}"
    );
    assert_eq!(result["suites"][0]["runtimes"].as_array().unwrap().len(), 2);
    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("<testsuite name=\"contract inproc:reference\"")
            && junit.contains("contract::04-confirm::"),
        "{junit}"
    );
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(md.contains("| 4 Confirm gate |"), "{md}");
    let badge: Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("badges/contract/reference.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(badge["schemaVersion"], 1);
    assert_eq!(badge["color"], "brightgreen");
}

#[test]
fn a_mutant_fails_the_run_and_expectations_turn_it_green_until_stale() {
    let dir = tmp();
    let o = hcpspec(&[
        "run",
        "--runtime",
        "inproc:mutant:no-confirm-gate",
        "--section",
        "4",
        "--out",
        s(dir.path()),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("result.json")).unwrap())
            .unwrap();
    let failing: Vec<String> = result["suites"][0]["runtimes"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "fail")
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!failing.is_empty());
    let entries: Vec<Value> = failing
        .iter()
        .map(|n| serde_json::json!({ "case": n, "expect": "fail", "reason": "known: no gate yet" }))
        .collect();
    let file = dir.path().join("expect.json");
    std::fs::write(
        &file,
        serde_json::json!({ "expectations": entries }).to_string(),
    )
    .unwrap();
    let o = hcpspec(&[
        "run",
        "--runtime",
        "inproc:mutant:no-confirm-gate",
        "--section",
        "4",
        "--expectations",
        s(&file),
        "--out",
        s(dir.path()),
    ]);
    assert_eq!(
        code(&o),
        0,
        "declared failures do not fail the run: {}",
        text(&o)
    );
    // The same declarations are stale on the reference: reported, and fatal only when strict.
    let o = hcpspec(&[
        "run",
        "--runtime",
        "inproc:reference",
        "--section",
        "4",
        "--expectations",
        s(&file),
        "--out",
        s(dir.path()),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("STALE"), "{}", text(&o));
    let o = hcpspec(&[
        "run",
        "--runtime",
        "inproc:reference",
        "--section",
        "4",
        "--expectations",
        s(&file),
        "--strict-expectations",
        "--out",
        s(dir.path()),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
}

/// `hcpspec ARGS` with `CI` set to `ci` (None: unset, as on a laptop) and `TF_BUILD` unset.
fn hcpspec_ci(args: &[&str], ci: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hcpspec"));
    c.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CI")
        .env_remove("TF_BUILD");
    if let Some(v) = ci {
        c.env("CI", v);
    }
    c.output().expect("hcpspec runs")
}

/// The files under `dir` whose name ends with `suffix`.
fn ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn summary(out: &Path) -> Value {
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    result["suites"][0]["runtimes"][0]["summary"].clone()
}

#[test]
fn snapshots_catch_drift_and_accept_writes_them() {
    let dir = tmp();
    let snaps = dir.path().join("snaps");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--runtime",
            "inproc:reference",
            "--filter",
            "04-confirm",
            "--out",
            s(dir.path()),
            "--snapshots",
            s(&snaps),
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let a = args(extra);
        hcpspec_ci(&a.iter().map(String::as_str).collect::<Vec<_>>(), None)
    };
    // Outside CI a missing snapshot is new: written as the snapshot, reported, never failing.
    let o = run(&[]);
    assert_eq!(code(&o), 0, "a new snapshot is not drift: {}", text(&o));
    assert!(
        text(&o).contains("new snapshot(s) written under"),
        "{}",
        text(&o)
    );
    let written = ending(&snaps, ".snap");
    assert!(!written.is_empty());
    assert!(ending(&snaps, ".snap.new").is_empty());
    let s1 = summary(dir.path());
    assert_eq!(s1["new"], written.len(), "{s1}");
    assert_eq!(
        (s1["drift"].as_u64(), s1["must_fail"].as_u64()),
        (Some(0), Some(0))
    );
    let o = run(&[]);
    assert_eq!(code(&o), 0, "no drift on the second run: {}", text(&o));
    assert!(!text(&o).contains("new snapshot") && !text(&o).contains("DRIFT"));
    assert_eq!(summary(dir.path())["new"], 0);
    let o = run(&["--accept"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    // Change one accepted snapshot as if the runtime's denial text had changed.
    let snap: PathBuf = std::fs::read_dir(snaps.join("reference/contract"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "snap"))
        .unwrap();
    let old = std::fs::read_to_string(&snap).unwrap();
    std::fs::write(
        &snap,
        old.replacen("\"ok\": true", "\"ok\": \"changed\"", 1),
    )
    .unwrap();
    let o = run(&[]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(
        text(&o).contains("DRIFT") && text(&o).contains("verdict pass"),
        "conformant and drifted are separate verdicts: {}",
        text(&o)
    );
    assert!(
        snap.with_extension("snap.new").exists(),
        "a pending snapshot for hcpspec review or cargo insta review"
    );
    let s2 = summary(dir.path());
    assert_eq!(
        (s2["drift"].as_u64(), s2["new"].as_u64()),
        (Some(1), Some(0)),
        "{s2}"
    );
}

#[test]
fn under_ci_a_missing_snapshot_fails_the_run_and_is_left_pending() {
    for (flag, ci) in [(true, None), (false, Some("true")), (false, Some("1"))] {
        let dir = tmp();
        let snaps = dir.path().join("snaps");
        let mut a = vec![
            "run",
            "--runtime",
            "inproc:reference",
            "--filter",
            "04-confirm",
            "--out",
            s(dir.path()),
            "--snapshots",
            s(&snaps),
        ];
        if flag {
            a.push("--ci");
        }
        let o = hcpspec_ci(&a, ci);
        let t = text(&o);
        assert_eq!(code(&o), 1, "--ci {flag}, CI={ci:?}: {t}");
        assert!(t.contains("which fail the run under CI"), "{t}");
        assert!(
            ending(&snaps, ".snap").is_empty(),
            "no snapshot is written under CI"
        );
        let pending = ending(&snaps, ".snap.new");
        assert!(!pending.is_empty());
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("result.json")).unwrap())
                .unwrap();
        assert_eq!(result["suites"][0]["ci"], true);
        let sum = &result["suites"][0]["runtimes"][0]["summary"];
        assert_eq!(sum["new"], pending.len());
        assert_eq!(sum["must_fail"], pending.len());
        assert!(hcpspec::schema::violations(hcpspec::schema::run_result(), &result).is_empty());
        let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
        assert!(junit.contains("no snapshot yet: under CI"), "{junit}");
    }
    // CI=false is no CI (as insta reads it): the snapshots are written, the run passes.
    let dir = tmp();
    let snaps = dir.path().join("snaps");
    let o = hcpspec_ci(
        &[
            "run",
            "--runtime",
            "inproc:reference",
            "--filter",
            "04-confirm",
            "--out",
            s(dir.path()),
            "--snapshots",
            s(&snaps),
        ],
        Some("false"),
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let junit = std::fs::read_to_string(dir.path().join("junit.xml")).unwrap();
    assert!(
        !junit.contains("<failure") && !junit.contains("<error"),
        "a new snapshot outside CI is no JUnit failure: {junit}"
    );
}

#[test]
fn partitions_cover_the_listing() {
    let all = text(&hcpspec(&["list"]));
    let mut shards: Vec<String> = (1..=3)
        .flat_map(|k| {
            text(&hcpspec(&["list", "--partition", &format!("{k}/3")]))
                .lines()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect();
    shards.sort();
    let mut want: Vec<String> = all.lines().map(String::from).collect();
    want.sort();
    assert!(want.len() > 100);
    assert_eq!(shards, want);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let o = hcpspec(&["run", "--partition", "3/2"]);
    assert_eq!(code(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--partition 3/2"));
    let o = hcpspec(&["run", "--filter", "no-such-case-anywhere"]);
    assert_eq!(code(&o), 2);
    let o = hcpspec(&["run", "--runtime", "gopher://x"]);
    assert_eq!(code(&o), 2);

    // A malformed case names its file and field.
    let vectors = tmp();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    std::fs::copy(
        root.join("denials.json"),
        vectors.path().join("denials.json"),
    )
    .unwrap();
    std::fs::create_dir_all(vectors.path().join("contract/04-confirm")).unwrap();
    std::fs::copy(
        root.join("contract/suite.json"),
        vectors.path().join("contract/suite.json"),
    )
    .unwrap();
    let bad = vectors.path().join("contract/04-confirm/bad-case.json");
    std::fs::write(&bad, r#"{"id":"bad-case","title":"t","section":"4","level":"MUST","spec":"000_15ba0494eb8a99bb.txt § x","steps":[{"exec":{"pack_id":"p"}}]}"#).unwrap();
    let o = hcpspec(&["run", "--vectors", s(vectors.path())]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad-case.json:/steps/0"), "{err}");
    std::fs::write(&bad, "{ nope").unwrap();
    let o = hcpspec(&["list", "--vectors", s(vectors.path())]);
    assert_eq!(code(&o), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("bad-case.json:: line 1 column 3"),
        "{}",
        text(&o)
    );
}

#[test]
fn lint_prints_compiler_style_issues() {
    let dir = tmp();
    let pack = dir.path().join("bad");
    std::fs::create_dir_all(&pack).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/packs/ledger");
    std::fs::copy(root.join("surface.json"), pack.join("surface.json")).unwrap();
    std::fs::write(
        pack.join("policy.json"),
        r#"{"verbs":{"balance":{"operation":"read","privacy":{"land":"local"}}}}"#,
    )
    .unwrap();
    let o = hcpspec(&["lint", s(&pack)]);
    assert_eq!(code(&o), 1);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        out.contains(&format!(
            "{}/policy.json:/verbs/transfer: policy-covers-command:",
            pack.display()
        )),
        "{out}"
    );
    assert!(out.contains("HARNESS.md:: skill-present:"), "{out}");
    assert!(out.contains("policy-covers-trigger"), "{out}");
    let o = hcpspec(&["lint", s(&root)]);
    assert_eq!(code(&o), 0, "{}", text(&o));
}

#[test]
fn report_merges_results_into_one_matrix() {
    let dir = tmp();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    assert_eq!(
        code(&hcpspec(&[
            "run",
            "--suite",
            "contract",
            "--runtime",
            "inproc:reference",
            "--section",
            "4",
            "--out",
            s(&a)
        ])),
        0
    );
    assert_eq!(
        code(&hcpspec(&[
            "run",
            "--suite",
            "contract",
            "--runtime",
            "inproc:mutant:confirm-string-true",
            "--section",
            "4",
            "--out",
            s(&b)
        ])),
        1
    );
    let out = dir.path().join("pub");
    let o = hcpspec(&[
        "report",
        s(&a.join("result.json")),
        s(&b.join("result.json")),
        "--out",
        s(&out),
    ]);
    // The merged record fails as the mutant's run did: report's exit code is its verdict.
    assert_eq!(code(&o), 1, "{}", text(&o));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("data-runtime=\"inproc:reference\"")
            && html.contains("data-runtime=\"inproc:mutant:confirm-string-true\"")
    );
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained"
    );
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(merged["suites"][0]["runtimes"].as_array().unwrap().len(), 2);
}

fn summaries(path: &Path) -> Vec<(String, String, Value)> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out = vec![];
    for s in v["suites"].as_array().unwrap() {
        for r in s["runtimes"].as_array().unwrap() {
            let mut summary = r["summary"].clone();
            summary.as_object_mut().unwrap().remove("micros");
            out.push((
                s["suite"].as_str().unwrap().to_string(),
                r["runtime"].as_str().unwrap().to_string(),
                summary,
            ));
        }
    }
    out
}

/// Shards merged are the whole run, case for case; the same file twice, or two results of one
/// case that disagree, are refused (exit 2); results of two suites make one report.
#[test]
fn shards_merge_into_exactly_the_whole_run() {
    let dir = tmp();
    let run = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "run",
            "--suite",
            "contract",
            "--runtime",
            "inproc:mutant:no-confirm-gate",
            "--section",
            "4",
            "--section",
            "5",
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        code(&hcpspec(&args))
    };
    let (whole, s1, s2) = (
        dir.path().join("whole"),
        dir.path().join("s1"),
        dir.path().join("s2"),
    );
    assert_eq!(run(&[], &whole), 1);
    assert_eq!(run(&["--partition", "1/2"], &s1), 1);
    run(&["--partition", "2/2"], &s2);
    for order in [[&s1, &s2], [&s2, &s1]] {
        let m = dir.path().join("m");
        let o = hcpspec(&[
            "report",
            s(&order[0].join("result.json")),
            s(&order[1].join("result.json")),
            "--out",
            s(&m),
        ]);
        assert_eq!(
            code(&o),
            1,
            "the merge fails as the whole run does: {}",
            text(&o)
        );
        assert_eq!(
            summaries(&m.join("result.json")),
            summaries(&whole.join("result.json"))
        );
        let junit = std::fs::read_to_string(m.join("junit.xml")).unwrap();
        let whole_junit = std::fs::read_to_string(whole.join("junit.xml")).unwrap();
        let head = |j: &str| j.lines().nth(1).unwrap().to_string();
        assert_eq!(head(&junit), head(&whole_junit));
    }
    // The same file twice.
    let o = hcpspec(&[
        "report",
        s(&s1.join("result.json")),
        s(&s1.join("result.json")),
        "--out",
        s(&dir.path().join("twice")),
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("given twice"), "{}", text(&o));
    // Overlapping results that disagree: the whole run, and a shard of it with one case's
    // verdict changed by hand.
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(s1.join("result.json")).unwrap()).unwrap();
    let case = &mut v["suites"][0]["runtimes"][0]["cases"][0];
    let name = case["name"].as_str().unwrap().to_string();
    case["verdict"] = "pass".into();
    case.as_object_mut().unwrap().remove("failure");
    case.as_object_mut().unwrap().remove("outcome");
    let edited = dir.path().join("edited.json");
    std::fs::write(&edited, v.to_string()).unwrap();
    let o = hcpspec(&[
        "report",
        s(&whole.join("result.json")),
        s(&edited),
        "--out",
        s(&dir.path().join("clash")),
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains(&name), "the case is named: {}", text(&o));
    // Two suites: one record, a part per suite.
    let host = dir.path().join("host");
    assert_eq!(
        code(&hcpspec(&[
            "run",
            "--suite",
            "host",
            "--section",
            "H1",
            "--out",
            s(&host)
        ])),
        0
    );
    let both = dir.path().join("both");
    let o = hcpspec(&[
        "report",
        s(&whole.join("result.json")),
        s(&host.join("result.json")),
        "--out",
        s(&both),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let suites: Vec<String> = summaries(&both.join("result.json"))
        .into_iter()
        .map(|(s, _, _)| s)
        .collect();
    assert_eq!(suites, ["contract", "host"]);
    assert!(both.join("badges/host/reference.json").is_file());
}

/// One run of several suites writes one result.json with every suite in it.
#[test]
fn a_run_of_several_suites_writes_one_record() {
    let out = tmp();
    let o = hcpspec(&[
        "run",
        "--suite",
        "contract",
        "--suite",
        "host",
        "--section",
        "4",
        "--section",
        "H1",
        "--out",
        s(out.path()),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    assert!(hcpspec::schema::violations(hcpspec::schema::run_result(), &v).is_empty());
    let names: Vec<&str> = v["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["suite"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["contract", "host"]);
    assert!(!out.path().join("contract").exists());
}

/// `explain` numbers a case's steps as its failures do (the contract's implicit install is
/// step 0).
#[test]
fn explain_numbers_steps_as_failures_do() {
    let name = "contract::04-confirm::apply-string-true-refused";
    let o = hcpspec(&[
        "run",
        "--runtime",
        "inproc:mutant:confirm-string-true",
        "--filter",
        name,
        "--out",
        s(tmp().path()),
    ]);
    let failure = text(&o);
    let at = failure.find("  step ").expect("a failing step");
    let n: String = failure[at + 7..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    assert!(
        failure[at..].starts_with(&format!("  step {n} (exec)")),
        "{failure}"
    );
    let explained = text(&hcpspec(&["explain", name]));
    let at = explained
        .find(&format!("step {n}:"))
        .unwrap_or_else(|| panic!("no step {n} in {explained}"));
    let rest = &explained[at + 5..];
    let next = rest.find("\"exec\"").unwrap();
    assert!(
        !rest[..next].contains("step "),
        "step {n} is not the exec: {explained}"
    );
}

/// `hcpspec run | head -1`: a closed stdout and stderr are no panic; the run writes its outputs
/// and exits with its verdict.
#[test]
fn a_closed_pipe_is_a_clean_exit() {
    let out = tmp();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["run", "--suite", "host", "--out", s(out.path())])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read ends at once: every line hcpspec prints meets a closed pipe.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(out.path().join("result.json").is_file());
}

/// `--name LABEL` names its runtime in every output: the JUnit testsuite, the badge, result.json.
#[test]
fn a_label_names_its_runtime_in_every_output() {
    let out = tmp();
    let o = hcpspec(&[
        "run",
        "--suite",
        "host",
        "--runtime",
        "inproc:reference",
        "--name",
        "acme-host",
        "--out",
        s(out.path()),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("acme-host = inproc:reference"),
        "{}",
        text(&o)
    );
    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap();
    assert!(
        junit.contains("<testsuite name=\"host acme-host\""),
        "{junit}"
    );
    assert!(out.path().join("badges/host/acme-host.json").is_file());
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    assert_eq!(v["suites"][0]["runtimes"][0]["label"], "acme-host");
    assert!(hcpspec::schema::violations(hcpspec::schema::run_result(), &v).is_empty());
    let more = hcpspec(&[
        "run",
        "--name",
        "a",
        "--name",
        "b",
        "--runtime",
        "inproc:reference",
    ]);
    assert_eq!(code(&more), 2, "{}", text(&more));
}

/// `--max-fail N` stops after N failing cases; Ctrl-C stops the run, which writes what ran
/// (the rest skips saying why) and exits 130.
#[test]
fn a_stopped_run_writes_what_ran_and_says_why() {
    let out = tmp();
    let o = hcpspec(&[
        "run",
        "--suite",
        "contract",
        "--runtime",
        "inproc:mutant:no-confirm-gate",
        "--max-fail",
        "2",
        "--jobs",
        "1",
        "--out",
        s(out.path()),
    ]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    let run = &v["suites"][0]["runtimes"][0];
    assert_eq!(run["stopped"], "--max-fail 2 reached");
    assert!(
        text(&o)
            .contains("2 of 265 case(s) fail the run; 1 cause(s):\n  2 × exec at /ok: not equal"),
        "the causes: {}",
        text(&o)
    );
    assert_eq!(run["summary"]["must_fail"], 2);
    assert!(
        run["summary"]["skip"].as_u64().unwrap() > 100,
        "{}",
        run["summary"]
    );
    assert!(hcpspec::schema::violations(hcpspec::schema::run_result(), &v).is_empty());

    // Ctrl-C while the harness-api suite runs (its scenarios take seconds).
    let out = tmp();
    let child = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args([
            "run",
            "--suite",
            "harness-api",
            "--jobs",
            "1",
            "--out",
            s(out.path()),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(code(&o), 130, "{}", text(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    let run = &v["suites"][0]["runtimes"][0];
    assert_eq!(run["stopped"], "the run was interrupted (Ctrl-C)");
    let not_run = run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("not run"))
        })
        .count();
    assert!(not_run > 0, "{}", run["summary"]);
}

/// `hcpspec review ARGS` with `input` piped to its stdin.
fn review(args: &[&str], input: Option<&str>) -> Output {
    use std::io::Write;
    let mut c = Command::new(env!("CARGO_BIN_EXE_hcpspec"));
    c.arg("review")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    match input {
        Some(_) => c.stdin(std::process::Stdio::piped()),
        None => c.stdin(std::process::Stdio::null()),
    };
    let mut child = c.spawn().expect("hcpspec runs");
    if let Some(text) = input {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

#[test]
fn review_accepts_rejects_and_skips_pending_snapshots_without_cargo() {
    let dir = tmp();
    let snaps = dir.path().join("snaps");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--runtime",
            "inproc:reference",
            "--filter",
            "04-confirm",
            "--out",
            s(dir.path()),
            "--snapshots",
            s(&snaps),
        ];
        a.extend_from_slice(extra);
        hcpspec_ci(&a, None)
    };
    assert_eq!(code(&run(&["--accept"])), 0);
    let all = ending(&snaps, ".snap");
    assert!(all.len() >= 5, "{all:?}");
    // Three changed snapshots and one missing, under CI: four pending.
    let changed = "\"ok\": \"edited\"";
    for p in &all[..3] {
        let old = std::fs::read_to_string(p).unwrap();
        assert!(old.contains("\"ok\": "), "{old}");
        let edited = old.replacen("\"ok\": true", changed, 1);
        let edited = edited.replacen("\"ok\": false", changed, 1);
        std::fs::write(p, edited).unwrap();
    }
    std::fs::remove_file(&all[3]).unwrap();
    assert_eq!(code(&run(&["--ci"])), 1);
    let pending = ending(&snaps, ".snap.new");
    assert_eq!(
        pending,
        all[..4]
            .iter()
            .map(|p| p.with_extension("snap.new"))
            .collect::<Vec<_>>()
    );
    let observed: Vec<String> = pending
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();

    // No terminal: a list, exit 1, nothing touched, never waiting.
    let o = review(&["--snapshots", s(&snaps)], None);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let listed = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(listed.lines().count(), 4, "{listed}");
    assert!(
        listed.contains("changed ") && listed.contains("new "),
        "{listed}"
    );
    assert_eq!(ending(&snaps, ".snap.new"), pending);

    // Answers piped in: accept, reject, a word that is no answer (asked again), skip; the
    // input ends, so the last stays pending too.
    let o = review(
        &["--snapshots", s(&snaps), "--stdin"],
        Some("a\nr\nmaybe\ns\n"),
    );
    let t = text(&o);
    assert_eq!(code(&o), 1, "two still pending: {t}");
    assert!(
        t.contains("[1/4]") && t.contains("[4/4]") && t.contains("(new)"),
        "{t}"
    );
    assert!(
        t.lines().any(|l| l.starts_with('-') && l.contains(changed))
            && t.lines()
                .any(|l| l.starts_with('+') && l.contains("\"ok\": ")),
        "each diff, snapshot → observed: {t}"
    );
    assert!(t.contains("answer a, r or s"), "{t}");
    assert!(t.contains("1 accepted, 1 rejected, 2 skipped"), "{t}");
    assert_eq!(
        std::fs::read_to_string(&all[0]).unwrap(),
        observed[0],
        "accepted: the .snap.new became the snapshot"
    );
    assert!(
        std::fs::read_to_string(&all[1]).unwrap().contains(changed),
        "rejected: the snapshot stays as it was"
    );
    assert_eq!(ending(&snaps, ".snap.new"), pending[2..].to_vec());
    assert!(!all[3].exists());

    // The rest in one go; then nothing is pending.
    let o = review(&["--snapshots", s(&snaps), "--accept-all"], None);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(ending(&snaps, ".snap.new").is_empty());
    assert_eq!(std::fs::read_to_string(&all[3]).unwrap(), observed[3]);
    let o = review(&["--snapshots", s(&snaps)], None);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(text(&o).contains("no pending snapshots"), "{}", text(&o));
    // Accepted files are snapshots a run agrees with; the rejected one still drifts.
    let o = run(&[]);
    assert_eq!(code(&o), 1, "{}", text(&o));
    let sum = summary(dir.path());
    assert_eq!(
        (sum["drift"].as_u64(), sum["new"].as_u64()),
        (Some(1), Some(0)),
        "{sum}"
    );
    assert_eq!(ending(&snaps, ".snap.new"), vec![pending[1].clone()]);
    let o = review(&["--snapshots", s(&snaps), "--reject-all"], None);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(ending(&snaps, ".snap.new").is_empty());
    let o = review(&["--snapshots", s(&dir.path().join("nowhere"))], None);
    assert_eq!(code(&o), 2, "{}", text(&o));
}

/// A shim stating a protocol hcpspec does not speak is unreachable (exit 3) with one line naming
/// what it said: its messages would mean something else (docs/CHANGELOG.md), so nothing is played.
#[test]
fn a_shim_stating_another_protocol_version_is_refused() {
    let shim =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_host.py");
    let out = tmp();
    let target = format!("stdio:python3 {} other-protocol", shim.display());
    let o = hcpspec(&[
        "run",
        "--suite",
        "host",
        "--runtime",
        &target,
        "--out",
        s(out.path()),
    ]);
    assert_eq!(code(&o), 3, "{}", text(&o));
    assert!(
        text(&o).contains(
            "states protocol \"hcpspec-host/9\"; hcpspec speaks hcpspec-host/1, hcpspec-host/2"
        ),
        "{}",
        text(&o)
    );
}

/// Every protocol version hcpspec speaks has its section in docs/CHANGELOG.md, and the doc of
/// each names the version the code speaks.
#[test]
fn every_protocol_hcpspec_speaks_has_a_changelog_section() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = std::fs::read_to_string(root.join("docs/CHANGELOG.md")).unwrap();
    for (version, doc) in [
        (hcpspec::shim::PROTOCOL, "docs/shim-protocol.md"),
        (hcpspec::suites::core_api::PROTOCOL, "docs/core-protocol.md"),
        (hcpspec::suites::host::PROTOCOL, "docs/host-protocol.md"),
    ] {
        assert!(
            log.contains(&format!("\n## `{version}`\n")),
            "docs/CHANGELOG.md has no section for {version}"
        );
        let first = std::fs::read_to_string(root.join(doc)).unwrap();
        let title = first.lines().next().unwrap_or_default();
        assert!(
            title.contains(&format!("`{version}`")),
            "{doc}'s title names not {version}: {title}"
        );
    }
}

/// The sentence matrix can fail: a ledger row whose killer does not break its sentence makes
/// `run --mutants` exit 1, name the row as surviving, and record it in `selfcheck.json`; the
/// row's real killer proves it.
#[test]
fn a_ledger_rows_surviving_killer_fails_the_self_check() {
    let row_with = |killer: &str| {
        let v = tmp();
        let copy = Command::new("cp")
            .args(["-r", "vectors/.", s(v.path())])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .unwrap();
        assert!(copy.success());
        let ledger = v.path().join("host/COVERAGE.md");
        let text = std::fs::read_to_string(&ledger).unwrap();
        let mut number = String::new();
        let text: Vec<String> = text
            .lines()
            .map(|l| {
                if !l.contains("`principal-crosses-on-all-five-kinds`") || !number.is_empty() {
                    return l.to_string();
                }
                let cells: Vec<&str> = l.trim_matches('|').split(" | ").collect();
                number = cells[0].trim().to_string();
                let n = cells.len();
                let mut cells: Vec<String> = cells.iter().map(|c| c.trim().to_string()).collect();
                cells[n - 2] = "covered".into();
                cells[n - 1] = format!("`{killer}`");
                format!("| {} |", cells.join(" | "))
            })
            .collect();
        std::fs::write(&ledger, text.join("\n")).unwrap();
        let out = tmp();
        let o = hcpspec(&[
            "run",
            "--suite",
            "host",
            "--mutants",
            "--vectors",
            s(v.path()),
            "--out",
            s(out.path()),
        ]);
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join("selfcheck.json")).unwrap(),
        )
        .unwrap();
        let row = record["suites"][0]["sentences"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["row"].as_u64().map(|n| n.to_string()).as_ref() == Some(&number))
            .cloned()
            .unwrap();
        (o, row)
    };
    let (o, row) = row_with("restore-request-dropped");
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(text(&o).contains("SURVIVES"), "{}", text(&o));
    assert_eq!(row["killedBy"], serde_json::json!([]), "{row}");
    let (_, row) = row_with("principal-dropped-on-interrupt");
    assert_eq!(
        row["killedBy"],
        serde_json::json!(["host::00-overview::principal-crosses-on-all-five-kinds"]),
        "{row}"
    );
}

/// A command run from a folder with no checkout in it (the embedded vectors), in a clean
/// environment: what an installed hcpspec does.
fn hcpspec_elsewhere(args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = tmp();
    Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(args)
        .current_dir("/")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .envs(env.iter().copied())
        .output()
        .expect("hcpspec runs")
}

#[test]
fn embedded_vectors_run_from_anywhere_and_name_their_origin() {
    let out = tmp();
    let o = hcpspec_elsewhere(&["run", "--suite", "host", "--out", s(out.path())], &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let first = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let sha = first
        .strip_prefix("vectors: embedded (sha256 ")
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("first line: {first}"));
    assert!(
        sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()),
        "{sha}"
    );
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    assert_eq!(record["vectors"][0]["origin"], "embedded");
    assert_eq!(record["vectors"][0]["sha256"], sha);
    assert!(std::fs::read_to_string(out.path().join("summary.md"))
        .unwrap()
        .contains(sha));
    // The checkout's folder hashes alike, named as given, from the flag or the environment.
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let o = hcpspec_elsewhere(
        &["list", "--suite", "host"],
        &[("HCPSPEC_VECTORS", s(&vectors))],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = hcpspec_elsewhere(
        &[
            "run",
            "--suite",
            "host",
            "--vectors",
            s(&vectors),
            "--out",
            s(out.path()),
        ],
        &[],
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).starts_with(&format!("vectors: {} (sha256 {sha})", vectors.display())),
        "{}",
        text(&o)
    );
    // --version names the crate, each protocol and the same case set.
    let v = text(&hcpspec_elsewhere(&["--version"], &[]));
    for part in [
        env!("CARGO_PKG_VERSION"),
        "hcpspec-shim/2",
        "hcpspec-core/2",
        "hcpspec-host/2",
        "launch contract 2",
        sha,
    ] {
        assert!(v.contains(part), "--version lacks {part}: {v}");
    }
}

#[test]
fn list_as_json_is_every_listed_case() {
    let lines = String::from_utf8(hcpspec_elsewhere(&["list"], &[]).stdout).unwrap();
    let o = hcpspec_elsewhere(&["list", "--format", "json"], &[]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let cases: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["case"].as_str().unwrap()).collect();
    assert_eq!(names, lines.lines().collect::<Vec<_>>());
    for c in &cases {
        for k in ["suite", "section", "level", "title", "spec", "file"] {
            assert!(c[k].is_string(), "{k} of {c}");
        }
        assert!(c["requires"].is_array() && c["file"].as_str().unwrap().starts_with("vectors/"));
    }
}

#[test]
fn colour_completions_and_the_man_page() {
    let colored = |args: &[&str], env: &[(&str, &str)]| {
        let o = hcpspec_elsewhere(args, env);
        assert_eq!(code(&o), 0, "{}", text(&o));
        String::from_utf8_lossy(&o.stdout).contains("\x1b[")
    };
    let run = ["run", "--suite", "host", "--out"];
    let out = tmp();
    let with = |flag: &'static str| [&run[..], &[s(out.path()), "--color", flag]].concat();
    assert!(colored(&with("always"), &[]));
    assert!(!colored(&with("never"), &[]));
    // auto: a pipe is no terminal.
    assert!(!colored(&with("auto"), &[]));
    let o = hcpspec_elsewhere(&with("sometimes"), &[]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let bash = hcpspec_elsewhere(&["completions", "bash"], &[]);
    assert!(String::from_utf8_lossy(&bash.stdout).contains("complete -F _hcpspec"));
    let man = String::from_utf8(hcpspec_elsewhere(&["man"], &[]).stdout).unwrap();
    assert!(
        man.contains(".TH hcpspec 1") && man.contains("completions"),
        "{man}"
    );
}

/// Findings that cannot be written are the outputs' failure (exit 4), with the reason (issue 45).
#[test]
fn fuzz_findings_not_written_say_why_and_exit_4() {
    // Nothing can be made under /proc, even by root.
    let o = hcpspec(&[
        "fuzz",
        "--runtime",
        "inproc:mutant:default-allow",
        "--cases",
        "200",
        "--max-findings",
        "1",
        "--shrink-budget",
        "0",
        "--out",
        "/proc/hcpspec-found",
    ]);
    assert_eq!(code(&o), 4, "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    let line = e
        .lines()
        .find(|l| l.contains("not written"))
        .unwrap_or_default();
    assert!(
        line.contains("/proc/hcpspec-found") && line.contains("os error"),
        "{e}"
    );
}

/// docs/security.md gives an output over its budget the exit code the command gives it (issue 45).
#[test]
fn security_doc_names_the_exit_of_an_output_over_budget() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/security.md"))
            .unwrap();
    let para = doc
        .split("\n\n")
        .find(|p| p.contains("`hcpspec::report::budget`"))
        .expect("the paragraph on the outputs' budget");
    let said = format!("exit {}", hcpspec::exit::OUTPUT);
    assert!(para.contains(&said) && !para.contains("exit 2"), "{para}");
}

/// A timeout that rounds to nothing is refused: one line naming the flag and its range, exit 2
/// (issue 45).
#[test]
fn a_vanishing_timeout_is_a_usage_error() {
    for t in ["1e-300", "1e-10", "0.0000001", "0.0009"] {
        let o = hcpspec(&["run", "--filter", "04-confirm", "--timeout", t]);
        assert_eq!(code(&o), 2, "--timeout {t}: {}", text(&o));
        let e = String::from_utf8_lossy(&o.stderr);
        let line = e.lines().next().unwrap_or_default();
        assert!(
            line.contains("--timeout") && line.contains("0.001") && line.contains("3600"),
            "{e}"
        );
    }
}

/// A harness command that cannot be found is unreachable (exit 3, one line), as a shim of any
/// other suite that cannot start is, not 135 error verdicts (issue 45).
#[test]
fn a_harness_that_cannot_start_is_unreachable() {
    let out = tmp();
    let o = hcpspec(&[
        "run",
        "--suite",
        "harness-api",
        "--runtime",
        "exec:/nonexistent/harness",
        "--out",
        s(out.path()),
    ]);
    assert_eq!(code(&o), 3, "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    let said: Vec<_> = e.lines().filter(|l| l.contains("unreachable")).collect();
    assert!(
        said.len() == 1 && said[0].contains("/nonexistent/harness"),
        "{e}"
    );
}

/// A temporary folder that cannot be used is said as such: one line naming TMPDIR and its path
/// (issue 45), not a bare OS error.
#[test]
fn an_unusable_tmpdir_is_named() {
    let out = tmp();
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["run", "--filter", "04-confirm", "--out", s(out.path())])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TMPDIR", "/nonexistent/tmp")
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    let said: Vec<_> = e.lines().filter(|l| l.starts_with("hcpspec:")).collect();
    assert!(
        said.len() == 1
            && ["TMPDIR", "/nonexistent/tmp", "temporary folder"]
                .iter()
                .all(|w| said[0].contains(w)),
        "{e}"
    );
}

/// An output folder that cannot be written is found before any case runs: one line naming
/// it, exit 2, not a whole run and then exit 4 (issue 46).
#[test]
fn an_out_folder_that_cannot_be_written_is_found_before_running() {
    let dir = tmp();
    // A folder whose result.json is a folder: its outputs cannot be written.
    std::fs::create_dir_all(dir.path().join("out/result.json")).unwrap();
    let run = |out: &str| {
        hcpspec(&[
            "run",
            "--suite",
            "contract",
            "--filter",
            "04-confirm",
            "--out",
            out,
        ])
    };
    for out in [s(&dir.path().join("out")), "/proc/hcpspec-out"] {
        let o = run(out);
        assert_eq!(code(&o), 2, "{out}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{out}: {err}");
        assert!(err.contains("--out") && err.contains(out), "{err}");
        // Nothing ran.
        assert!(!text(&o).contains("04-confirm"), "{out}: {}", text(&o));
    }
    // --snapshots too, before anything runs.
    let o = hcpspec(&[
        "run",
        "--filter",
        "04-confirm",
        "--out",
        s(&dir.path().join("fine")),
        "--snapshots",
        "/proc/hcpspec-snaps",
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("--snapshots"), "{}", text(&o));
}

/// `report` writes where it is told: without `--out` it is a usage error naming `--out`, and
/// no folder of the user's repository is made (it once wrote reports/published).
#[test]
fn report_needs_an_out_folder() {
    let dir = tmp();
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["report", "result.json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("--out"), "{}", text(&o));
    assert!(!dir.path().join("reports").exists());
}

/// Every page the man page names (`hcpspec-run(1)` …) can be generated: `hcpspec man run`.
#[test]
fn every_man_page_named_can_be_generated() {
    let main = String::from_utf8(hcpspec(&["man"]).stdout).unwrap();
    let named: Vec<String> = main
        .split("hcpspec\\-")
        .skip(1)
        .filter_map(|t| t.split_once("(1)").map(|(n, _)| n.replace("\\-", "-")))
        .filter(|n| !n.contains(char::is_whitespace))
        .collect();
    assert!(named.len() >= 10, "{named:?}\n{main}");
    for page in named {
        let o = hcpspec(&["man", &page]);
        assert_eq!(code(&o), 0, "{page}: {}", text(&o));
        let roff = String::from_utf8_lossy(&o.stdout);
        assert!(
            roff.contains(&format!(".TH hcpspec-{page} 1")),
            "{page}: {roff}"
        );
    }
    let o = hcpspec(&["man", "nonesuch"]);
    assert_eq!(code(&o), 2, "{}", text(&o));
}

/// An expectations file names the runtime it is written for (`runtime`): applied to another,
/// the run stops before its cases, one line naming the file and the field, exit 2.
#[test]
fn expectations_for_another_runtime_are_refused() {
    let dir = tmp();
    let file = dir.path().join("acme.json");
    let write = |runtime: &str| {
        std::fs::write(
            &file,
            format!(
                r#"{{"runtime": "{runtime}", "expectations": [{{"case": "contract::04-confirm::*", "expect": "skip", "reason": "later"}}]}}"#
            ),
        )
        .unwrap();
    };
    let run = |name: Option<&str>| {
        let mut args = vec![
            "run",
            "--suite",
            "contract",
            "--filter",
            "04-confirm",
            "--runtime",
            "inproc:reference",
            "--expectations",
            s(&file),
            "--out",
        ];
        let out = dir.path().join("out");
        args.push(s(&out));
        if let Some(n) = name {
            args.extend(["--name", n]);
        }
        hcpspec(&args)
    };
    write("acme");
    let o = run(None);
    assert_eq!(code(&o), 2, "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{}:/runtime", file.display())) && err.contains("acme"),
        "{err}"
    );
    // The runtime's --name, or what initialize says, is the runtime's.
    assert_eq!(code(&run(Some("acme"))), 0);
    write("reference");
    let o = run(None);
    assert_eq!(code(&o), 0, "{}", text(&o));
}

/// Two implementations run as the same command, told apart by `--name`, are two runtimes of
/// one merged report (they once merged as one, by their command).
#[test]
fn report_merges_two_names_of_one_command_as_two_runtimes() {
    let dir = tmp();
    for name in ["toy", "toy-next"] {
        let out = dir.path().join(name);
        let o = hcpspec(&[
            "run",
            "--suite",
            "contract",
            "--filter",
            "04-confirm",
            "--runtime",
            "inproc:reference",
            "--name",
            name,
            "--out",
            s(&out),
        ]);
        assert_eq!(code(&o), 0, "{}", text(&o));
    }
    let merged = dir.path().join("merged");
    let o = hcpspec(&[
        "report",
        s(&dir.path().join("toy/result.json")),
        s(&dir.path().join("toy-next/result.json")),
        "--out",
        s(&merged),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let summary = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert!(summary.contains("2 runtime(s)"), "{summary}");
    assert!(
        summary.contains("| section | toy | toy-next |"),
        "{summary}"
    );
}
