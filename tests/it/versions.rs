//! A version means the same verdicts (docs/CHANGELOG.md, "Requirement sets"): a target written
//! to an older version of its protocol is judged by that version's frozen requirement set
//! (`vectors/SUITE/suite.json`'s `requirements`) and defaults, exit code included. For each protocol, a target
//! that states the older version and fails only cases added after it exits 0 with those cases
//! not scored; the same target stating the newer version exits 1.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

const HCPSPEC: &str = env!("CARGO_BIN_EXE_hcpspec");

fn hcpspec(args: &[&str]) -> Output {
    Command::new(HCPSPEC)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("hcpspec runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// An embedded shim (`hcpspec shim --runtime SERVED`) stating `version`, behind
/// `tests/fauxmplementations/older_version.py` with its `older` options (`--lacks METHOD` …).
fn older(version: &str, older: &str, served: &str) -> String {
    let proxy =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/older_version.py");
    format!(
        "stdio:python3 {} {version} {older} -- {HCPSPEC} shim --runtime {served}",
        proxy.display()
    )
}

/// `hcpspec run ARGS --out DIR`: the exit code and result.json's one suite.
fn run(args: &[&str]) -> (i32, Value, tempfile::TempDir, String) {
    let out = tempfile::tempdir().unwrap();
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend(["--out", out.path().to_str().unwrap()]);
    let o = hcpspec(&all);
    let said = text(&o);
    let result: Value = std::fs::read_to_string(out.path().join("result.json"))
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or_else(|e| panic!("no result.json ({e}): {said}"));
    let suite = result["suites"][0].clone();
    (o.status.code().unwrap_or(-1), suite, out, said)
}

/// A suite's `requirements`, as its suite.json holds them.
fn requirements(suite: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("vectors/{suite}/suite.json"));
    let info: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    info["requirements"].clone()
}

/// The cases of an older version's requirement set, as the suite's suite.json freezes them.
fn set(suite: &str, version: &str) -> BTreeSet<String> {
    let v = requirements(suite);
    let older = v["versions"].as_array().unwrap();
    let o = older.iter().find(|o| o["version"] == version).unwrap();
    o["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// A run's cases by name: (verdict, outcome, not_scored reason).
fn cases(suite: &Value) -> Vec<(String, String, String, Option<String>)> {
    suite["runtimes"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().map(String::from);
            (
                s("name").unwrap(),
                s("verdict").unwrap(),
                s("outcome").unwrap_or_default(),
                s("not_scored"),
            )
        })
        .collect()
}

/// What an older-version run must show: exit 0; every case outside `set` not scored (and saying
/// since which version), every case inside scored; with `red`, at least one not-scored case that
/// does not pass (so the exit code was kept by the set, not by luck); the counts agreeing in
/// result.json, JUnit and the Markdown summary.
fn judged_by_the_older_set(
    (code, suite, out, said): &(i32, Value, tempfile::TempDir, String),
    set: &BTreeSet<String>,
    (version, since): (&str, &str),
    red: bool,
) {
    assert_eq!(*code, 0, "{said}");
    assert_eq!(suite["runtimes"][0]["version"], version, "{said}");
    let all = cases(suite);
    let mut unscored = 0;
    let mut unscored_red = 0;
    for (name, verdict, outcome, why) in &all {
        if set.contains(name) {
            assert_eq!(why, &None, "{name} is of {version}'s set");
            assert_ne!(outcome, "not-scored", "{name}");
        } else {
            unscored += 1;
            unscored_red += usize::from(verdict != "pass");
            assert_eq!(outcome, "not-scored", "{name}");
            let why = why.as_deref().unwrap_or_default();
            assert!(why.starts_with(&format!("since {since};")), "{name}: {why}");
            assert!(why.ends_with(version), "{name}: {why}");
        }
    }
    assert!(unscored > 0, "every case is of {version}'s set: {said}");
    assert!(
        !red || unscored_red > 0,
        "no case outside the set failed: {said}"
    );
    let summary = &suite["runtimes"][0]["summary"];
    assert_eq!(summary["not_scored"], unscored, "{summary}");
    assert_eq!(summary["must_fail"], 0, "{summary}");
    let junit = std::fs::read_to_string(out.path().join("junit.xml")).unwrap();
    assert!(junit.contains("failures=\"0\""), "{junit}");
    assert_eq!(junit.matches("not-scored (").count(), unscored, "{junit}");
    let md = std::fs::read_to_string(out.path().join("summary.md")).unwrap();
    assert!(
        md.contains(&format!("### {unscored} case(s) not scored")),
        "{md}"
    );
    assert!(md.contains(&format!("{unscored} not-scored")), "{md}");
    assert!(
        said.contains(&format!("{unscored} case(s) not scored")),
        "{said}"
    );
}

/// The same target stating the newer version: exit 1, every case scored, some outside the older
/// set failing the run.
fn judged_by_the_newer_set(
    (code, suite, _, said): &(i32, Value, tempfile::TempDir, String),
    set: &BTreeSet<String>,
) {
    assert_eq!(*code, 1, "{said}");
    let all = cases(suite);
    assert!(all
        .iter()
        .all(|(_, _, o, why)| why.is_none() && o != "not-scored"));
    assert!(
        all.iter()
            .any(|(n, v, _, _)| !set.contains(n) && v != "pass"),
        "{said}"
    );
    assert_eq!(suite["runtimes"][0]["summary"]["not_scored"], 0);
}

/// A runtime's shim written to hcpspec-shim/1, which has no `runtime.getPack` nor
/// `runtime.skill` (added after it): exit 0 stating /1, exit 1 stating /2.
#[test]
fn a_shim_stating_hcpspec_shim_1_keeps_its_exit_code() {
    let set = set("contract", "hcpspec-shim/1");
    let lacks = "--lacks runtime.getPack --lacks runtime.skill";
    let args = |v: &str| {
        let target = older(v, lacks, "reference");
        run(&[
            "--suite",
            "contract",
            "--section",
            "1",
            "--runtime",
            &target,
        ])
    };
    let versions = ("hcpspec-shim/1", "hcpspec-shim/2");
    judged_by_the_older_set(&args(versions.0), &set, versions, true);
    judged_by_the_newer_set(&args("hcpspec-shim/2"), &set);
}

/// A core written to hcpspec-core/1 whose tool failures are MCP error results and which answers
/// no `failure` (that version had none): its failures' form is unjudged, as that version's cases
/// left it, so the refusal cases of /1's set pass; stating /2 it gets the default form
/// `{kind: "failed"}`, and they fail (issue 42: 13 refusal cases).
#[test]
fn a_core_stating_hcpspec_core_1_keeps_its_exit_code_and_failure_default() {
    let set = set("core-api", "hcpspec-core/1");
    let args = |v: &str| {
        let target = older(v, "--no-failure-member", "core:variant:mcp-shaped-failures");
        run(&[
            "--suite",
            "core-api",
            "--section",
            "4",
            "--runtime",
            &target,
        ])
    };
    let first = args("hcpspec-core/1");
    // Its failures' form is unjudged in every case it runs, of /1's set or not: none is red.
    judged_by_the_older_set(&first, &set, ("hcpspec-core/1", "hcpspec-core/2"), false);
    let second = args("hcpspec-core/2");
    judged_by_the_newer_set(&second, &set);
    // The default, not the set, keeps these: cases of /1's set that judge a failure's form.
    let red_in_set: Vec<String> = cases(&second.1)
        .into_iter()
        .filter(|(n, v, _, _)| set.contains(n) && v != "pass")
        .map(|(n, ..)| n)
        .collect();
    assert!(!red_in_set.is_empty(), "{}", second.3);
    for (name, verdict, ..) in cases(&first.1) {
        if red_in_set.contains(&name) {
            assert_eq!(verdict, "pass", "{name} under hcpspec-core/1");
        }
    }
}

/// A host adapter's shim written to hcpspec-host/1, which has none of `host.id`,
/// `host.leaseEpoch`, `host.registration`, `host.recovery` (added after it).
#[test]
fn a_host_shim_stating_hcpspec_host_1_keeps_its_exit_code() {
    let set = set("host", "hcpspec-host/1");
    let lacks =
        "--lacks host.id --lacks host.leaseEpoch --lacks host.registration --lacks host.recovery";
    let args = |v: &str| {
        let target = older(v, lacks, "host:reference");
        run(&["--suite", "host", "--section", "0", "--runtime", &target])
    };
    let versions = ("hcpspec-host/1", "hcpspec-host/2");
    judged_by_the_older_set(&args(versions.0), &set, versions, true);
    judged_by_the_newer_set(&args("hcpspec-host/2"), &set);
}

/// A harness states no version: `--launch-contract 1` names the one it is written to. A harness
/// that passes a tool's binary parts on unstored (judged only by scenarios added after launch
/// contract 1) keeps exit 0 under 1 and exits 1 under the default, the newest.
#[test]
fn a_harness_written_to_launch_contract_1_keeps_its_exit_code() {
    let set = set("harness-api", "hcpspec-launch/1");
    let args = |more: &[&str]| {
        let mut a = vec![
            "--suite",
            "harness-api",
            "--section",
            "5b",
            "--runtime",
            "inproc:mutant:binary-parts-unstored",
        ];
        a.extend_from_slice(more);
        run(&a)
    };
    let first = args(&["--launch-contract", "1"]);
    let versions = ("hcpspec-launch/1", "hcpspec-launch/2");
    judged_by_the_older_set(&first, &set, versions, true);
    judged_by_the_newer_set(&args(&[]), &set);
    let newest = args(&["--launch-contract", "hcpspec-launch/2"]);
    judged_by_the_newer_set(&newest, &set);
}

/// A launch contract hcpspec does not speak is bad input: exit 2, one line naming it.
#[test]
fn an_unknown_launch_contract_is_refused() {
    let o = hcpspec(&[
        "run",
        "--suite",
        "harness-api",
        "--runtime",
        "inproc:reference",
        "--launch-contract",
        "9",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let said = text(&o);
    assert!(
        said.contains("--launch-contract 9: hcpspec speaks the launch contract hcpspec-launch/1, hcpspec-launch/2"),
        "{said}"
    );
}

/// Every case an older version's set names is a case of its suite (a case renamed since would
/// silently drop out of the set), and a set is never empty.
#[test]
fn every_case_a_requirement_set_names_exists() {
    for suite in ["contract", "core-api", "host", "harness-api"] {
        let o = hcpspec(&["list", "--suite", suite]);
        let listed: BTreeSet<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(String::from)
            .collect();
        for older in requirements(suite)["versions"].as_array().unwrap() {
            let cases = older["cases"].as_array().unwrap();
            assert!(!cases.is_empty(), "{suite} {}", older["version"]);
            for c in cases {
                let c = c.as_str().unwrap();
                assert!(
                    listed.contains(c),
                    "{suite}/suite.json's requirements name {c}, no case of {suite}"
                );
            }
        }
    }
}

/// The versions hcpspec's code speaks are the versions each suite's requirements know, the
/// newest last: a version frozen in the data is one the handshake accepts, and the other way.
#[test]
fn the_versions_spoken_are_the_versions_frozen() {
    let launch = format!(
        "hcpspec-launch/{}",
        hcpspec::suites::harness_api::launch::VERSION
    );
    for (suite, speaks, newest) in [
        (
            "contract",
            hcpspec::shim::PROTOCOLS,
            hcpspec::shim::PROTOCOL,
        ),
        (
            "core-api",
            hcpspec::suites::core_api::PROTOCOLS,
            hcpspec::suites::core_api::PROTOCOL,
        ),
        (
            "host",
            hcpspec::suites::host::PROTOCOLS,
            hcpspec::suites::host::PROTOCOL,
        ),
        (
            "harness-api",
            &["hcpspec-launch/1", "hcpspec-launch/2"][..],
            launch.as_str(),
        ),
    ] {
        let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
        let info = hcpspec::case::load_suite_info(&vectors, suite).unwrap();
        let v =
            hcpspec::run::versions::Versions::of(&info, &vectors.join(suite).join("suite.json"))
                .unwrap();
        assert_eq!(v.all(), speaks, "{suite}");
        assert_eq!(v.current(), Some(newest), "{suite}");
    }
}
