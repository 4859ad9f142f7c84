//! `hcpspec diff BASE HEAD` gives exactly the changed verdicts: generated results (the
//! renderings' generator), some cases' verdicts mutated, some removed, some added, a runtime
//! sometimes dropped or new, by a seeded generator; the diff lists exactly those, each of the
//! kind the documented rule gives (docs/commands.md): regressed when it newly fails the run,
//! fixed when it no longer does, changed when its state or declared expectation changed
//! otherwise. The oracle is written here from that rule.

use crate::renderings::{case, generate, oracle_fails, Rng};
use hcpspec::case::Level;
use hcpspec::report::diff::{self, Diff, Kind};
use hcpspec::report::{Report, RuntimeRun, Summary};
use hcpspec::run::expectations::Outcome;
use hcpspec::run::CaseResult;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// What the documented rule calls a case's state and expectation: its outcome, a PROFILE
/// deviation apart, and what was declared.
fn oracle_state(c: &CaseResult) -> (Outcome, bool, Option<String>) {
    let o = c.annotations.outcome.unwrap();
    let deviates = c.level == Level::PROFILE
        && matches!(o, Outcome::Fail | Outcome::Error | Outcome::Unimplemented);
    let expected = c
        .annotations
        .expectation
        .as_ref()
        .map(|e| format!("{:?}", e.expect));
    (if deviates { Outcome::Fail } else { o }, deviates, expected)
}

type Want = BTreeSet<(String, String, Kind)>;

/// A head made from `base` by `seed`, and the changes the rule says it has.
fn mutate(base: &Report, seed: u64) -> (Report, Want) {
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    let mut head = base.clone();
    let mut want = Want::new();
    let r = &mut head.suites[0];
    let (strict, ci) = (r.strict_expectations, r.ci);
    let mut fresh = Rng(seed ^ 0xdead_beef | 1);
    for run in &mut r.runtimes {
        let mut kept = vec![];
        for c in std::mem::take(&mut run.cases) {
            let name = c.name.clone();
            match rng.below(8) {
                0 => {
                    want.insert((run.runtime.clone(), name, Kind::Removed));
                }
                1 | 2 => {
                    let mut m = case(&mut fresh, 0, &c.section);
                    m.name = name.clone();
                    if let Some(e) = &mut m.annotations.expectation {
                        e.case = name.clone();
                    }
                    let (bf, hf) = (oracle_fails(&c, strict, ci), oracle_fails(&m, strict, ci));
                    let kind = match (bf, hf) {
                        (false, true) => Some(Kind::Regressed),
                        (true, false) => Some(Kind::Fixed),
                        _ if oracle_state(&c) != oracle_state(&m) => Some(Kind::Changed),
                        _ => None,
                    };
                    if let Some(k) = kind {
                        want.insert((run.runtime.clone(), name, k));
                    }
                    kept.push(m);
                }
                _ => kept.push(c),
            }
        }
        for k in 0..rng.below(3) {
            let mut c = case(&mut fresh, 0, "9");
            c.name = format!("s::9::added-{k}");
            if let Some(e) = &mut c.annotations.expectation {
                e.case = c.name.clone();
            }
            want.insert((run.runtime.clone(), c.name.clone(), Kind::Added));
            kept.push(c);
        }
        run.cases = kept;
    }
    // Sometimes a runtime is gone from HEAD, or new in it: every case of it removed or added.
    if rng.below(6) == 0 && r.runtimes.len() > 1 {
        let gone = r.runtimes.pop().unwrap();
        want.retain(|w| w.0 != gone.runtime);
        let was = base.suites[0]
            .runtimes
            .iter()
            .find(|x| x.runtime == gone.runtime);
        for c in &was.unwrap().cases {
            want.insert((gone.runtime.clone(), c.name.clone(), Kind::Removed));
        }
    }
    if rng.below(6) == 0 {
        let cases: Vec<CaseResult> = (0..1 + rng.below(3))
            .map(|i| {
                let mut c = case(&mut fresh, 0, "0");
                c.name = format!("s::0::new-runtime-{i}");
                c.annotations.expectation = None;
                c
            })
            .collect();
        for c in &cases {
            want.insert(("inproc:new".into(), c.name.clone(), Kind::Added));
        }
        r.runtimes.push(RuntimeRun {
            runtime: "inproc:new".into(),
            label: None,
            stopped: None,
            info: json!({ "runtime": { "name": "new", "version": "1" } }),
            version: None,
            implementation: None,
            summary: Summary::default(),
            cases,
        });
    }
    (head, want)
}

/// vectors/schemas/diff.schema.json, which `--format json` follows.
fn schema() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/vectors/schemas/diff.schema.json"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

fn got(d: &Diff) -> Want {
    d.runtimes
        .iter()
        .flat_map(|r| {
            r.changes
                .iter()
                .map(move |c| (r.runtime.clone(), c.case.clone(), c.kind))
        })
        .collect()
}

#[test]
fn diff_gives_exactly_the_changed_verdicts_of_generated_pairs() {
    let mut kinds = BTreeMap::new();
    let schema = schema();
    for seed in 0..400 {
        let base = Report::of(vec![generate(seed)]);
        let (head, want) = mutate(&base, seed);
        let d = Diff::of(&base, &head, &BTreeMap::new());
        assert_eq!(got(&d), want, "seed {seed}");
        let regressed = want.iter().any(|w| w.2 == Kind::Regressed);
        assert_eq!(d.regressed(), regressed, "seed {seed}");
        for w in &want {
            *kinds.entry(w.2).or_insert(0) += 1;
        }
        // A result against itself: nothing changed.
        assert!(got(&Diff::of(&head, &head, &BTreeMap::new())).is_empty());
        // The terminal rendering fits 80 columns; the Markdown is bounded.
        for line in diff::terminal(&d).lines() {
            assert!(line.chars().count() <= 80, "seed {seed}: {line}");
        }
        let json = serde_json::to_value(&d).unwrap();
        let errors: Vec<String> = schema.iter_errors(&json).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "seed {seed}: {errors:?}");
        let md = diff::markdown(&d);
        let rows = md.lines().filter(|l| l.starts_with("| ")).count();
        assert!(rows <= 2 + diff::MAX_MARKDOWN_CASES, "seed {seed}");
    }
    // Every kind was generated, many times.
    for k in Kind::ALL {
        assert!(kinds.get(&k).copied().unwrap_or(0) > 20, "{k:?}: {kinds:?}");
    }
}

/// The ledger sentences whose cases changed are named, with how many of each kind.
#[test]
fn diff_names_the_ledger_sentences_of_changed_cases() {
    let base = Report::of(vec![generate(7)]);
    let (head, want) = mutate(&base, 7);
    let changed: Vec<&(String, String, Kind)> = want.iter().collect();
    assert!(!changed.is_empty());
    let one = changed[0].1.clone();
    let rows = vec![
        diff::Sentence {
            ledger: "COVERAGE.md".into(),
            number: 3,
            sentence: "The runtime MUST do the thing.".into(),
            cases: vec![one.clone()],
        },
        diff::Sentence {
            ledger: "COVERAGE.md".into(),
            number: 4,
            sentence: "Untouched.".into(),
            cases: vec!["s::nothing::here".into()],
        },
    ];
    let ledgers = BTreeMap::from([("suite-x".to_string(), rows)]);
    let d = Diff::of(&base, &head, &ledgers);
    assert_eq!(d.sentences.len(), 1, "{:?}", d.sentences);
    assert_eq!(d.sentences[0].number, 3);
    let n: usize = d.sentences[0].counts.values().sum();
    assert_eq!(n, want.iter().filter(|w| w.1 == one).count());
    assert!(diff::markdown(&d).contains("COVERAGE.md row 3"));
}

fn hcpspec(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The command: exit 1 on a regression, 0 otherwise (pre-existing failures included), 2 on
/// bad input with one line naming the file; a folder stands for its result.json.
#[test]
fn diff_exits_1_on_a_regression_only_and_2_on_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, r: &Report| {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, serde_json::to_string(r).unwrap()).unwrap();
        p.display().to_string()
    };
    let (mut regressed, mut clean) = (None, None);
    for seed in 0..400 {
        let base = Report::of(vec![generate(seed)]);
        let (head, want) = mutate(&base, seed);
        let r = want.iter().any(|w| w.2 == Kind::Regressed);
        let fails = head.fails();
        if r && regressed.is_none() {
            regressed = Some((base, head));
        } else if !r && fails && clean.is_none() {
            // HEAD fails its run, but no case newly: the gate passes.
            clean = Some((base, head));
        }
    }
    let (base, head) = regressed.unwrap();
    let b = write("r/base/result.json", &base);
    let h = write("r/head.json", &head);
    let folder = dir.path().join("r/base").display().to_string();
    let (code, out, _) = hcpspec(&["diff", &folder, &h]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("regressed"), "{out}");
    let (code, out, _) = hcpspec(&["diff", &b, &h, "--format", "json"]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["counts"]["regressed"].as_u64().unwrap() > 0, "{out}");
    let (base, head) = clean.unwrap();
    let b = write("c/base.json", &base);
    let h = write("c/head.json", &head);
    let (code, out, _) = hcpspec(&["diff", &b, &h, "--format", "markdown"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.starts_with("## hcpspec diff"), "{out}");

    std::fs::write(
        dir.path().join("bad.json"),
        r#"{"hcpspec_version": "0", "suites": 3}"#,
    )
    .unwrap();
    let bad = dir.path().join("bad.json").display().to_string();
    let (code, _, err) = hcpspec(&["diff", &bad, &h]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("bad.json") && err.contains("line 1"), "{err}");
    let (code, _, err) = hcpspec(&["diff", &b, dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(2), "a folder without result.json: {err}");
    assert!(err.contains("result.json"), "{err}");
}

/// A pull request that bumps the implementation's version: its runtime (named by what
/// `initialize` says, name and version) is still the base's, so only its changed case is
/// listed, not every case added and removed. Names from a result are escaped in the Markdown.
#[test]
fn a_version_bump_still_matches_its_runtime_and_markdown_escapes_names() {
    let mut base = generate(3);
    base.runtimes.truncate(1);
    let evil = "s::0::a|b<script>`x`[y](z)";
    base.runtimes[0].cases[0].name = evil.into();
    let base = Report::of(vec![base]);
    let mut head = base.clone();
    let run = &mut head.suites[0].runtimes[0];
    run.info = json!({ "runtime": { "name": "rt-0", "version": "2" } });
    let c = &mut run.cases[0];
    c.annotations.outcome = Some(if c.annotations.outcome == Some(Outcome::Pass) {
        Outcome::Skip
    } else {
        Outcome::Pass
    });
    let d = Diff::of(&base, &head, &BTreeMap::new());
    assert_eq!(d.runtimes.len(), 1, "{:?}", d.runtimes);
    assert_eq!(d.runtimes[0].changes.len(), 1);
    let md = diff::markdown(&d);
    assert!(md.contains("a\\|b&lt;script&gt;'x'\\[y](z)"), "{md}");
    assert!(!md.contains("<script>"), "{md}");
}
