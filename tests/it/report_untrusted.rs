//! `hcpspec report` trusts no result file it reads (docs/security.md): each input is a regular
//! file within `input::MAX_RESULT`, refused with one line naming it otherwise (exit 2), and what
//! it holds is contained again, as a live run contains what it keeps, before any output is
//! written. Every test is bounded in time.

use crate::common;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

use common::hcpspec_within;

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 2 and one line on stderr naming `file`, nothing on stdout.
fn refused_naming(o: &Output, file: &str, why: &str) {
    let err = stderr(o);
    assert_eq!(code(o), 2, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(file), "names {file}: {err}");
    assert!(err.contains(why), "says `{why}`: {err}");
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn report_refuses_dev_zero_at_once() {
    let out = tempfile::tempdir().unwrap();
    let (o, took) = hcpspec_within(
        &["report", "/dev/zero", "--out", out.path().to_str().unwrap()],
        Duration::from_secs(20),
    );
    refused_naming(&o, "/dev/zero", "not a regular file");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(!out.path().join("result.json").exists());
}

#[test]
fn report_refuses_a_fifo_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("result.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (o, _) = hcpspec_within(
        &[
            "report",
            fifo.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    refused_naming(&o, "result.json", "a FIFO");
}

#[test]
fn report_refuses_a_file_over_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    // Sparse: the size is past the cap without writing it.
    f.set_len(hcpspec::input::MAX_RESULT + 1).unwrap();
    let (o, took) = hcpspec_within(
        &[
            "report",
            big.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    refused_naming(&o, "big.json", "over the cap of 67108864 bytes");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn report_refuses_a_malformed_file_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    // A type error whose message would quote a secret-shaped token and a control character.
    let token = format!("ghp_{}", "A".repeat(36));
    std::fs::write(
        &bad,
        json!({"suite": "x", "runtimes": format!("{token}\u{1b}[2J")}).to_string(),
    )
    .unwrap();
    let (o, _) = hcpspec_within(
        &[
            "report",
            bad.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    refused_naming(&o, "bad.json", "line 1 column");
    assert!(!stderr(&o).contains(&token) && !stderr(&o).contains('\u{1b}'));
}

/// A real result.json of the host suite, edited by hand: a 7 MiB string and a GitHub token in
/// every kind of place a result holds text.
fn hostile_result(dir: &Path, token: &str) -> PathBuf {
    let run_out = dir.join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args([
            "run",
            "--suite",
            "host",
            "--filter",
            "attempt-close-forwarded",
            "--out",
            run_out.to_str().unwrap(),
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(run_out.join("result.json")).unwrap())
            .unwrap();
    // The suite's RunResult, hand-edited as a file of the earlier shape (still read).
    let mut r = record["suites"][0].clone();
    // 7 MiB in three places (the file stays under the cap), 6 KiB in the others.
    let flood = "E".repeat(7 << 20);
    let wave = "E".repeat(6 << 10);
    let planted = format!("see {token} here");
    r["suite"] = json!(format!("host {token}"));
    r["sections"][0]["title"] = json!(format!("{wave}{token}"));
    let run = &mut r["runtimes"][0];
    run["runtime"] = json!(planted);
    run["info"]["runtime"]["name"] = json!(format!("{token}/{wave}"));
    run["info"]["leak"] = json!(planted);
    let case = &mut run["cases"][0];
    case["name"] = json!(format!("host::00-overview::{token}"));
    case["spec"] = json!(wave);
    case["observations"][0]["value"] = json!({ "flood": flood, "token": planted });
    case["observations"][0]["action"] = json!(planted);
    case["unclassified"] = json!([planted]);
    // A second case: failed, its texts flooded and leaking.
    let mut failed = case.clone();
    failed["name"] = json!("host::00-overview::failed");
    failed["verdict"] = json!("fail");
    for (k, v) in [
        ("step", json!(0)),
        ("action", json!(planted)),
        ("path", json!(wave)),
        ("message", json!(planted)),
        ("expected", json!(wave)),
        ("actual", json!({ "x": planted, "y": flood })),
    ] {
        failed[k] = v;
    }
    failed["drift"] = json!({ "drift": "changed", "diff": format!("{token}{wave}{wave}{wave}") });
    let mut errored = case.clone();
    errored["name"] = json!("host::00-overview::errored");
    errored["verdict"] = json!("error");
    errored["message"] = json!(format!("{token} {flood}"));
    let cases = run["cases"].as_array_mut().unwrap();
    cases.push(failed);
    cases.push(errored);
    let file = dir.join("edited.json");
    std::fs::write(&file, serde_json::to_string(&r).unwrap()).unwrap();
    file
}

#[test]
fn report_contains_a_hand_edited_result_in_every_file_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let token = format!("ghp_{}", "x7".repeat(20));
    let edited = hostile_result(dir.path(), &token);
    let size = std::fs::metadata(&edited).unwrap().len();
    assert!(size > 7 << 20, "{size}");
    let out = dir.path().join("published");
    let (o, took) = hcpspec_within(
        &[
            "report",
            edited.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    // A failed and an errored case: report exits as the run would have.
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(took < Duration::from_secs(30), "{took:?}");
    let mut written = vec![
        out.join("result.json"),
        out.join("junit.xml"),
        out.join("summary.md"),
        out.join("index.html"),
    ];
    // badges/<suite>/<runtime>.json
    for suite in std::fs::read_dir(out.join("badges")).unwrap() {
        for e in std::fs::read_dir(suite.unwrap().path()).unwrap() {
            written.push(e.unwrap().path());
        }
    }
    assert!(written.len() >= 5);
    let mut total = 0;
    for f in &written {
        let text = std::fs::read_to_string(f).unwrap();
        total += text.len();
        assert!(!text.contains(&token), "{}: the token leaked", f.display());
        assert!(
            !text.contains(&"E".repeat(5 << 10)),
            "{}: a text past 4 KiB was kept",
            f.display()
        );
        assert!(
            text.len() < 1 << 20,
            "{}: {} bytes",
            f.display(),
            text.len()
        );
    }
    let result = std::fs::read_to_string(out.join("result.json")).unwrap();
    assert!(result.contains("[redacted: secret-shaped]"));
    assert!(
        result.contains("[cut: 7340032 bytes in all]"),
        "cut and marked"
    );
    // The outputs are within a few hundred KiB (the input was over 7 MiB per string).
    assert!(total < 1 << 20, "{total} bytes in all");
    // And what report wrote is a result report reads again to the same result.
    let again = dir.path().join("again");
    let (o, _) = hcpspec_within(
        &[
            "report",
            out.join("result.json").to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(again.join("result.json")).unwrap(),
        result,
        "containing twice is containing once"
    );
}

#[test]
fn report_of_a_live_result_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let run_out = dir.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["run", "--suite", "host", "--out", run_out.to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let out = dir.path().join("published");
    let (o, _) = hcpspec_within(
        &[
            "report",
            run_out.join("result.json").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    for f in ["result.json", "junit.xml", "summary.md", "index.html"] {
        assert_eq!(
            std::fs::read_to_string(run_out.join(f)).unwrap(),
            std::fs::read_to_string(out.join(f)).unwrap(),
            "{f}"
        );
    }
}

/// A result whose `info` is an array of `n` zeros: few bytes per value.
fn zeros(n: usize) -> String {
    let mut s = String::from(
        r#"{"hcpspec_version":"0","suite":"s","cases_hash":"0","runtimes":[{"runtime":"r","info":["#,
    );
    s.push_str(&"0,".repeat(n - 1));
    s.push_str(
        r#"0],"summary":{"pass":0,"fail":0,"expected_fail":0,"stale":0,"skip":0,"unimplemented":0,"error":0,"must_fail":0,"drift":0,"micros":0},"cases":[]}]}"#,
    );
    s
}

#[test]
fn report_refuses_a_file_of_too_many_values() {
    let dir = tempfile::tempdir().unwrap();
    let many = dir.path().join("many.json");
    // 6 MiB, far under the byte cap, but 3 Mi values parsed would be some 200 MiB.
    std::fs::write(&many, zeros(3 << 20)).unwrap();
    let (o, took) = hcpspec_within(
        &[
            "report",
            many.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    refused_naming(
        &o,
        "many.json",
        "JSON values is over the cap of 2097152 values",
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn report_at_the_caps_stays_within_the_memory_bound() {
    let dir = tempfile::tempdir().unwrap();
    let at_cap = dir.path().join("at-cap.json");
    std::fs::write(&at_cap, zeros(hcpspec::input::MAX_RESULT_VALUES - 100)).unwrap();
    let long = dir.path().join("long.json");
    let text = format!(
        r#"{{"hcpspec_version":"0","suite":"{}","cases_hash":"0","runtimes":[]}}"#,
        "E".repeat((hcpspec::input::MAX_RESULT - 100) as usize)
    );
    std::fs::write(&long, text).unwrap();
    for f in [&at_cap, &long] {
        let start = Instant::now();
        let (o, peak) = common::output_and_peak_rss(
            Command::new(env!("CARGO_BIN_EXE_hcpspec"))
                .arg("report")
                .arg(f)
                .arg("--out")
                .arg(dir.path().join("out")),
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{:?}",
            start.elapsed()
        );
        assert!(
            peak < common::RSS_BOUND,
            "{}: peak RSS {} MiB",
            f.display(),
            peak >> 20
        );
        let result = std::fs::read_to_string(dir.path().join("out/result.json")).unwrap();
        assert!(result.len() < 64 << 10, "{} bytes", result.len());
    }
}

/// Bidi controls, zero-width and tag characters in every text of a result: no file `report`
/// writes holds one raw, in text, attributes (`data-runtime`) or titles (section titles,
/// `<summary>`) alike; each is shown escaped (`\u{202e}`).
#[test]
fn bidi_and_invisible_characters_are_escaped_in_every_rendering() {
    let dir = tempfile::tempdir().unwrap();
    let odd = [
        "\u{202e}",
        "\u{2067}",
        "\u{200b}",
        "\u{2028}",
        "\u{feff}",
        "\u{e0041}",
    ];
    let all: String = odd.concat();
    let r = json!({
        "hcpspec_version": "0",
        "suite": format!("host{all}"),
        "sections": [{ "id": "0", "title": format!("Overview{all}") }],
        "cases_hash": "0",
        "runtimes": [{
            "runtime": format!("inproc:evil{all}"),
            "info": { "runtime": { "name": format!("evil{all}"), "version": format!("1{all}") },
                      "features": [format!("f{all}")] },
            "summary": { "pass": 0, "fail": 1, "expected_fail": 0, "stale": 0, "skip": 0,
                         "unimplemented": 0, "error": 1, "must_fail": 2, "drift": 0, "micros": 0 },
            "cases": [
                { "name": format!("host::0::a{all}"), "section": "0", "level": "MUST",
                  "spec": format!("003 § x{all}"), "verdict": "error",
                  "message": format!("boom{all}"), "observations": [], "micros": 0 },
                { "name": format!("host::0::b{all}"), "section": "0", "level": "MUST",
                  "spec": "003 § y", "verdict": "fail", "step": 0,
                  "action": format!("host.bind{all}"), "path": format!("/x{all}"),
                  "message": format!("differs{all}"), "expected": format!("e{all}"),
                  "actual": { format!("k{all}"): format!("v{all}") },
                  "observations": [], "micros": 0 }
            ]
        }]
    });
    let file = dir.path().join("odd.json");
    std::fs::write(&file, r.to_string()).unwrap();
    let out = dir.path().join("out");
    let (o, _) = hcpspec_within(
        &[
            "report",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    // Its cases fail: report exits as the run would have.
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    for f in ["index.html", "summary.md", "junit.xml"] {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        let raw: std::collections::BTreeSet<String> = text
            .chars()
            .filter(|&c| c != '\n' && c != '\t' && hcpspec::report::invisible(c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(raw.is_empty(), "{f}: raw {raw:?}");
        assert!(text.contains("\\u{202e}"), "{f}: shown escaped");
    }
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("data-runtime=\"inproc:evil\\u{202e}\\u{2067}\\u{200b}"));
    assert!(html.contains("0 Overview\\u{202e}"), "the section title");
}

/// A result of one passing case named `c{k}`, run over the case set `sha`.
fn shard_over(dir: &Path, name: &str, k: usize, sha: &str) -> PathBuf {
    let case = json!({"name": format!("contract::04-x::c{k}"), "section": "4", "level": "MUST",
        "spec": "", "verdict": "pass", "observations": [], "micros": 1});
    let v = json!({"hcpspec_version": "0", "vectors": [{"origin": "embedded", "sha256": sha}],
        "suites": [{"hcpspec_version": "0", "suite": "contract", "cases_hash": format!("h{k}"),
        "strict_expectations": false, "ci": false, "runtimes": [{"runtime": "inproc:reference",
        "info": null, "summary": {"pass": 1, "fail": 0, "expected_fail": 0, "stale": 0, "skip": 0,
        "unimplemented": 0, "error": 0, "profile": 0, "not_scored": 0, "unclassified": 0,
        "must_fail": 0, "drift": 0, "new": 0, "micros": 1}, "cases": [case]}]}]});
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

/// A copy or a hard link of a result is the same result given twice: one line naming both
/// files, exit 2. Results over two case sets merge, with one line naming both files and
/// both hashes; results over one case set merge without a word.
#[test]
fn report_refuses_a_copy_or_link_and_warns_of_two_case_sets() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = ("1".repeat(64), "2".repeat(64));
    let a = shard_over(dir.path(), "a.json", 0, &one);
    let b = shard_over(dir.path(), "b.json", 1, &one);
    let c = shard_over(dir.path(), "c.json", 1, &two);
    let copy = dir.path().join("copy.json");
    std::fs::copy(&a, &copy).unwrap();
    let link = dir.path().join("link.json");
    std::fs::hard_link(&a, &link).unwrap();
    let out = dir.path().join("out");
    let report = |x: &Path, y: &Path| {
        hcpspec_within(
            &[
                "report",
                x.to_str().unwrap(),
                y.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
            Duration::from_secs(60),
        )
        .0
    };
    for twin in [&copy, &link] {
        let o = report(&a, twin);
        refused_naming(&o, "a.json", "are the same result");
        assert!(
            stderr(&o).contains(twin.file_name().unwrap().to_str().unwrap()),
            "{}",
            stderr(&o)
        );
    }
    let o = report(&a, &b);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).is_empty(),
        "one case set, no word: {}",
        stderr(&o)
    );
    let o = report(&a, &c);
    let err = stderr(&o);
    assert_eq!(code(&o), 0, "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for said in [
        "a.json",
        "c.json",
        one.as_str(),
        two.as_str(),
        "different case sets",
    ] {
        assert!(err.contains(said), "says {said}: {err}");
    }
}
