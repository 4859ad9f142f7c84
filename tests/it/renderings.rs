//! Every rendering of a run tells the same truth (docs/reading-results.md): generated
//! RunResults of every state, level, expectation, drift (new and changed, under CI and not) and
//! parity, rendered as result.json, junit.xml, summary.md, index.html, badges and the terminal
//! table, agree on every count; JUnit has a failure or error exactly when the run exits 1; a
//! section where nothing ran is never green.
//!
//! The oracle is written here from the documented rule, not taken from the code it judges.

use hcpspec::case::{Level, Section};
use hcpspec::report::{self, RunResult, RuntimeRun, Summary};
use hcpspec::run::expectations::{Entry, Expect, Outcome};
use hcpspec::run::{Annotations, CaseResult, Failure, Verdict};
use hcpspec::snapshot::Drift;
use serde_json::json;

/// A tiny deterministic generator (xorshift): the same seeds, the same results, every run.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub(crate) fn case(rng: &mut Rng, i: usize, section: &str) -> CaseResult {
    let level = [Level::MUST, Level::SHOULD, Level::MAY, Level::PROFILE][rng.below(4) as usize];
    let verdict = match rng.below(5) {
        0 | 1 => Verdict::Pass,
        2 => Verdict::Fail(Failure {
            step: 1,
            action: "exec".into(),
            path: "/ok".into(),
            message: "differs".into(),
            expected: json!(true),
            actual: json!(false),
        }),
        3 => Verdict::Error {
            message: "broke".into(),
        },
        _ => Verdict::Unimplemented {
            reason: "-32601".into(),
        },
    };
    let name = format!("s::{section}::case-{i}");
    // An expectation on some cases: fail or skip, as `--expectations` declares.
    let entry = match rng.below(6) {
        0 => Some(Expect::Fail),
        1 => Some(Expect::Skip),
        _ => None,
    }
    .map(|expect| Entry {
        case: name.clone(),
        expect,
        reason: "declared".into(),
        issue: None,
    });
    let verdict = match entry.as_ref().map(|e| e.expect) {
        Some(Expect::Skip) => Verdict::Skip {
            reason: "declared".into(),
        },
        _ => verdict,
    };
    let mut r = CaseResult {
        name,
        section: section.into(),
        level,
        spec: "spec §".into(),
        title: String::new(),
        assumption: None,
        verdict,
        observations: vec![],
        unclassified: vec![],
        micros: 10,
        annotations: Annotations::default(),
    };
    // Some cases of a later protocol version than the runtime states: not scored.
    if rng.below(4) == 0 {
        r.annotations.not_scored = Some("since p/2; the runtime states p/1".into());
    }
    r.annotations.outcome = Some(Outcome::of(&r, entry.as_ref()));
    r.annotations.expectation = entry;
    r.annotations.drift = match rng.below(10) {
        0 => Some(Drift::New),
        1 => Some(Drift::Changed {
            diff: "-a\n+b".into(),
        }),
        _ => None,
    };
    r
}

pub(crate) fn generate(seed: u64) -> RunResult {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let sections: Vec<Section> = (0..1 + rng.below(4))
        .map(|i| Section {
            id: format!("{i}"),
            title: format!("Section {i}"),
        })
        .collect();
    let runtimes = (0..1 + rng.below(3))
        .map(|k| {
            let mut cases = vec![];
            for s in &sections {
                // Some sections only skipped, to check they are never shown green.
                let all_skipped = rng.below(5) == 0;
                for i in 0..rng.below(6) {
                    let mut c = case(&mut rng, cases.len() + i as usize, &s.id);
                    if all_skipped {
                        c.verdict = Verdict::Skip {
                            reason: "not selected".into(),
                        };
                        c.annotations = Annotations::default();
                        c.annotations.outcome = Some(Outcome::Skip);
                    }
                    cases.push(c);
                }
            }
            RuntimeRun {
                runtime: format!("inproc:rt-{k}"),
                label: None,
                stopped: None,
                info: json!({ "runtime": { "name": format!("rt-{k}"), "version": "1" } }),
                version: None,
                implementation: None,
                summary: Summary::default(),
                cases,
            }
        })
        .collect::<Vec<_>>();
    let strict = rng.below(2) == 0;
    let ci = rng.below(2) == 0;
    let mut result = RunResult {
        schema: report::SCHEMA.into(),
        hcpspec_version: "0".into(),
        suite: "suite-x".into(),
        sections,
        cases_hash: "0".into(),
        runtimes,
        parity: vec![],
        strict_expectations: strict,
        ci,
    };
    let rules = result.rules();
    for run in &mut result.runtimes {
        run.summary = Summary::of(&run.cases, rules);
    }
    if rng.below(8) == 0 {
        result.parity.push(hcpspec::run::result::Difference {
            case: "s::0::case-0".into(),
            runtime: "rt-0".into(),
            left: "inproc:rt-0".into(),
            right: "stdio:rt-0".into(),
            what: "/verdict".into(),
        });
    }
    result
}

/// The documented rule (docs/reading-results.md: what fails the run), written out here:
/// a changed snapshot always, a new one (no snapshot yet) only under CI.
pub(crate) fn oracle_fails(c: &CaseResult, strict: bool, ci: bool) -> bool {
    let o = c.annotations.outcome.unwrap();
    let drifted = match &c.annotations.drift {
        Some(Drift::Changed { .. }) => true,
        Some(Drift::New) => ci,
        None => false,
    };
    drifted
        || (c.level == Level::MUST
            && matches!(o, Outcome::Fail | Outcome::Error | Outcome::Unimplemented))
        || (strict && o == Outcome::Stale)
}

fn attr(tag: &str, name: &str) -> usize {
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"));
    let rest = &tag[at + name.len() + 3..];
    rest[..rest.find('"').unwrap()].parse().unwrap()
}

/// The counts a Markdown or table cell spells as `N label`.
fn spelled(s: &Summary) -> Vec<String> {
    let mut out = vec![];
    for (n, label) in [
        (s.fail, "fail"),
        (s.expected_fail, "expected-fail"),
        (s.stale, "stale"),
        (s.skip, "skip"),
        (s.unimplemented, "unimplemented"),
        (s.error, "error"),
        (s.profile, "profile"),
        (s.not_scored, "not-scored"),
        (s.drift, "drift"),
        (s.new, "new"),
    ] {
        if n > 0 {
            out.push(format!("{n} {label}"));
        }
    }
    out
}

fn check(seed: u64) {
    let result = generate(seed);
    let (strict, ci) = (result.strict_expectations, result.ci);
    let json: RunResult =
        serde_json::from_str(&serde_json::to_string(&result).unwrap()).expect("round trip");
    let fails = !result.parity.is_empty()
        || result
            .runtimes
            .iter()
            .flat_map(|r| &r.cases)
            .any(|c| oracle_fails(c, strict, ci));
    assert_eq!(json.fails(), fails, "seed {seed}: the exit code's rule");

    let record = report::Report::of(vec![result.clone()]);
    let junit = report::junit(&record);
    let html = report::html(&record);
    let md = report::markdown(&record);
    for run in &json.runtimes {
        let s = &run.summary;
        let total = run.cases.len();
        let failing = run
            .cases
            .iter()
            .filter(|c| oracle_fails(c, strict, ci))
            .count();
        assert_eq!(s.must_fail, failing, "seed {seed}: must_fail");
        let (changed, new) = (
            run.cases
                .iter()
                .filter(|c| matches!(c.annotations.drift, Some(Drift::Changed { .. })))
                .count(),
            run.cases
                .iter()
                .filter(|c| c.annotations.drift == Some(Drift::New))
                .count(),
        );
        assert_eq!(
            (s.drift, s.new),
            (changed, new),
            "seed {seed}: drift is changed, new is new"
        );
        assert_eq!(s.total(), total, "seed {seed}: one denominator");

        // JUnit: a failure or error exactly for what fails the run.
        let tag = junit
            .lines()
            .find(|l| l.contains(&format!("<testsuite name=\"suite-x {}\"", run.runtime)))
            .unwrap();
        assert_eq!(attr(tag, "tests"), total, "seed {seed}: {tag}");
        assert_eq!(
            attr(tag, "failures") + attr(tag, "errors"),
            failing,
            "seed {seed}: JUnit failures ⇔ exit code: {tag}"
        );
        let passing = run
            .cases
            .iter()
            .filter(|c| {
                !oracle_fails(c, strict, ci) && c.annotations.outcome == Some(Outcome::Pass)
            })
            .count();
        assert_eq!(
            attr(tag, "skipped"),
            total - failing - passing,
            "seed {seed}"
        );

        // The HTML matrix's total cell.
        let needle = format!("data-runtime=\"{}\" data-section=total", run.runtime);
        let cell = html.split("<td").find(|t| t.contains(&needle)).unwrap();
        let cell = &cell[..cell.find('>').unwrap()];
        for (label, n) in [
            ("pass", s.pass),
            ("fail", s.fail),
            ("expected-fail", s.expected_fail),
            ("stale", s.stale),
            ("skip", s.skip),
            ("unimplemented", s.unimplemented),
            ("error", s.error),
            ("profile", s.profile),
            ("not-scored", s.not_scored),
            ("drift", s.drift),
            ("new", s.new),
            ("total", total),
        ] {
            assert!(
                cell.contains(&format!(" data-{label}={n} "))
                    || cell.ends_with(&format!(" data-{label}={n}")),
                "seed {seed}: html {label}={n} not in {cell}"
            );
        }
        // Its section cells: as many as the sections that have cases, each `pass/total`.
        for sec in &json.sections {
            let cases: Vec<_> = run.cases.iter().filter(|c| c.section == sec.id).collect();
            let needle = format!(
                "data-runtime=\"{}\" data-section=\"{}\"",
                run.runtime, sec.id
            );
            let found = html.split("<td").find(|t| t.contains(&needle));
            if cases.is_empty() {
                continue;
            }
            let cell = found.unwrap();
            let pass = cases
                .iter()
                .filter(|c| c.annotations.outcome == Some(Outcome::Pass))
                .count();
            assert!(
                cell.contains(&format!("<b class=n>{pass}/{}</b>", cases.len())),
                "seed {seed}: html section {}: {cell}",
                sec.id
            );
            let ran = cases
                .iter()
                .any(|c| c.annotations.outcome != Some(Outcome::Skip));
            let failing = cases.iter().any(|c| oracle_fails(c, strict, ci));
            if !ran && !failing {
                assert!(
                    cell.starts_with(" class=none"),
                    "seed {seed}: nothing ran, yet {cell}"
                );
            }
        }

        // The badge.
        let badge: serde_json::Value = serde_json::from_str(&report::badge(&result, run)).unwrap();
        assert_eq!(
            badge["message"],
            format!("{}/{total} pass", s.pass),
            "seed {seed}"
        );
        assert_eq!(badge["color"] == "red", failing > 0, "seed {seed}: {badge}");

        // The terminal table: at most 80 columns; a column per state that some case is in
        // (pass always), each headed by its word or the abbreviation its legend spells out;
        // the total row's counts under their headers; the cases on a line of their own.
        let table = report::table(&json.sections, run, json.rules());
        check_table(&table, s, total, seed);
    }
    // The Markdown total row: a cell per runtime, `mark pass/total · N label …`.
    let row = md.lines().find(|l| l.starts_with("| **total** |")).unwrap();
    let cells: Vec<&str> = row.split(" | ").skip(1).collect();
    for (run, cell) in json.runtimes.iter().zip(cells) {
        let s = &run.summary;
        let cell = cell.trim_matches(|c| c == '*' || c == '|' || c == ' ');
        let want = format!("{}/{}", s.pass, s.total());
        assert!(cell.contains(&want), "seed {seed}: md {cell} lacks {want}");
        for part in spelled(s) {
            assert!(cell.contains(&part), "seed {seed}: md {cell} lacks {part}");
        }
    }
    // JUnit's totals: every runtime's, and the parity suite's failures.
    let top = junit.lines().find(|l| l.contains("<testsuites")).unwrap();
    let failing: usize = json.runtimes.iter().map(|r| r.summary.must_fail).sum();
    assert_eq!(
        attr(top, "failures") + attr(top, "errors"),
        failing + json.parity.len(),
        "seed {seed}: {top}"
    );
    assert_eq!(
        attr(top, "failures") + attr(top, "errors") > 0,
        json.fails()
    );
    // summary.md counts the same problems (what fails the run: its cases and parity
    // differences), and none when nothing fails it.
    let problems = failing + json.parity.len();
    let heading = md.lines().find(|l| l.contains("problem(s)"));
    if problems == 0 {
        assert_eq!(heading, None, "seed {seed}: {md}");
    } else {
        let heading = heading.unwrap_or_else(|| panic!("seed {seed}: no problems in {md}"));
        assert!(
            heading.starts_with(&format!("### {problems} problem(s)")),
            "seed {seed}: {heading}, JUnit {problems}"
        );
    }
}

#[test]
fn every_rendering_agrees_with_result_json_and_the_exit_code() {
    for seed in 1..=400 {
        check(seed);
    }
}

/// The terminal table of a runtime whose counts are `s`: no line over 80 columns; the header's
/// columns are the non-zero states (pass always), drift and new when any; the total row's
/// counts under them; "N cases in" on its own line; a row marked ✓ ran something.
fn check_table(table: &str, s: &Summary, total: usize, seed: u64) {
    for line in table.lines() {
        assert!(
            line.chars().count() <= 80,
            "seed {seed}: a table line of {} columns: {line}\n{table}",
            line.chars().count()
        );
    }
    let lines: Vec<&str> = table.lines().collect();
    // The count of cases, then what the legend spells out (the word itself when it does not).
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("{total} cases in ")))
        .unwrap_or_else(|| panic!("seed {seed}: no line of {total} cases\n{table}"));
    let legend: std::collections::HashMap<&str, &str> = lines[at + 1..]
        .iter()
        .flat_map(|l| l.trim().split(", "))
        .filter_map(|pair| pair.split_once(" = "))
        .collect();
    let word = |h: &str| legend.get(h).unwrap_or(&h).to_string();
    let header: Vec<String> = lines[0].split_whitespace().skip(1).map(word).collect();
    let all = [
        ("pass", s.pass),
        ("fail", s.fail),
        ("expected-fail", s.expected_fail),
        ("stale", s.stale),
        ("skip", s.skip),
        ("unimplemented", s.unimplemented),
        ("error", s.error),
        ("profile", s.profile),
        ("not-scored", s.not_scored),
        ("drift", s.drift),
        ("new", s.new),
    ];
    let want: Vec<String> = all
        .iter()
        .filter(|(l, n)| *n > 0 || *l == "pass")
        .map(|(l, _)| l.to_string())
        .collect();
    assert_eq!(header, want, "seed {seed}: the columns\n{table}");
    let row = lines
        .iter()
        .find(|l| l.trim_start().starts_with("total"))
        .unwrap();
    let numbers: Vec<usize> = row
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let counts: Vec<usize> = all
        .iter()
        .filter(|(l, n)| *n > 0 || *l == "pass")
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(numbers, counts, "seed {seed}: {row}\n{table}");
    let states = header
        .iter()
        .filter(|h| *h != "drift" && *h != "new")
        .count();
    let skip_at = header.iter().position(|h| h == "skip");
    for line in &lines[1..] {
        if line.starts_with('✓') {
            let n: Vec<usize> = line
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            // The row's counts are its last numbers (its label may hold digits).
            let n = &n[n.len() - header.len()..];
            let ran: usize = n[..states].iter().sum::<usize>() - skip_at.map_or(0, |i| n[i]);
            assert!(ran > 0, "seed {seed}: ✓ on a row where nothing ran: {line}");
        }
    }
}

/// The widest table there is: every state, drift and new, four-digit counts and a long
/// section title, still at most 80 columns, the title cut with an ellipsis.
#[test]
fn the_widest_table_fits_80_columns() {
    let mut result = generate(7);
    result.sections = vec![Section {
        id: "H3".into(),
        title: "The live subscription cannot be positioned, nor rewound, nor paused".into(),
    }];
    let template = result.runtimes[0].cases[0].clone();
    let mut cases = vec![];
    let fail = Verdict::Fail(Failure {
        step: 0,
        action: "exec".into(),
        path: "/ok".into(),
        message: "differs".into(),
        expected: json!(true),
        actual: json!(false),
    });
    for (i, (level, verdict, expect, not_scored, drift)) in [
        (Level::MUST, Verdict::Pass, None, false, None),
        (Level::MUST, fail.clone(), None, false, None),
        (Level::MUST, fail.clone(), Some(Expect::Fail), false, None),
        (Level::MUST, Verdict::Pass, Some(Expect::Fail), false, None),
        (
            Level::MUST,
            Verdict::Skip { reason: "x".into() },
            None,
            false,
            None,
        ),
        (
            Level::MUST,
            Verdict::Unimplemented { reason: "x".into() },
            None,
            false,
            None,
        ),
        (
            Level::MUST,
            Verdict::Error {
                message: "x".into(),
            },
            None,
            false,
            None,
        ),
        (Level::PROFILE, fail.clone(), None, false, None),
        (Level::MUST, Verdict::Pass, None, true, None),
        (
            Level::MUST,
            Verdict::Pass,
            None,
            false,
            Some(Drift::Changed {
                diff: "-a\n+b".into(),
            }),
        ),
        (Level::MUST, Verdict::Pass, None, false, Some(Drift::New)),
    ]
    .into_iter()
    .enumerate()
    {
        for k in 0..1000 {
            let mut c = template.clone();
            c.name = format!("s::H3::case-{i}-{k}");
            c.section = "H3".into();
            c.level = level;
            c.verdict = verdict.clone();
            let entry = expect.map(|expect| Entry {
                case: c.name.clone(),
                expect,
                reason: "declared".into(),
                issue: None,
            });
            c.annotations = Annotations::default();
            if not_scored {
                c.annotations.not_scored = Some("since p/2".into());
            }
            c.annotations.outcome = Some(Outcome::of(&c, entry.as_ref()));
            c.annotations.expectation = entry;
            c.annotations.drift = drift.clone();
            cases.push(c);
        }
    }
    let rules = result.rules();
    let run = &mut result.runtimes[0];
    run.summary = Summary::of(&cases, rules);
    run.cases = cases;
    let table = report::table(&result.sections, &result.runtimes[0], rules);
    let s = &result.runtimes[0].summary;
    assert!(
        s.stale > 0 && s.not_scored > 0 && s.drift > 0 && s.new > 0,
        "{s:?}"
    );
    check_table(&table, s, s.total(), 0);
    assert!(table.contains("H3 The"), "{table}");
    assert!(table.contains('…'), "the long title is cut: {table}");
}
