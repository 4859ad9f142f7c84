//! `hcpspec verify RESULT`: a result anyone can check. Every summary is recounted from the
//! result's cases, every case's outcome from its verdict and expectation, and (when the result
//! names this hcpspec's version and ran its embedded vectors) the case set's hashes and every
//! case's name, section and level are checked against the vectors this hcpspec holds. Each
//! disagreement is one [`Finding`]: where (a JSON pointer into the file) and what was expected.
//! Pure: the caller reads the file ([`super::read`]) and says what this hcpspec holds
//! ([`Known`]).

use super::{Report, Summary};
use crate::case::Level;
use crate::run::expectations::Outcome;
use crate::run::result::{state, State};
use std::collections::HashMap;

/// What this hcpspec holds, to check a result against.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// This hcpspec's version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The embedded case set's hash (`vectors::embedded_sha256`).
    pub tree_sha256: String,
    /// Every embedded suite, by name.
    pub suites: HashMap<String, KnownSuite>,
}

/// One embedded suite: its cases in load order, and its ledger's sentences.
#[derive(Debug, Clone, Default)]
pub struct KnownSuite {
    pub cases: Vec<KnownCase>,
    pub sentences: Vec<Sentence>,
}

/// One embedded case: its name, section, level and file text (what `cases_hash` is over).
#[derive(Debug, Clone)]
pub struct KnownCase {
    pub name: String,
    pub section: String,
    pub level: Level,
    pub source: Vec<u8>,
}

/// One ledger row proven by its killers: the mutants breaking exactly its sentence, each proven
/// (by the self-check's kill matrix) to fail one of its MUST cases.
#[derive(Debug, Clone)]
pub struct Sentence {
    /// `LEDGER row N`.
    pub at: String,
    pub cases: Vec<String>,
    /// Its MUST cases (those a killer fails).
    pub must: Vec<String>,
    pub killers: Vec<String>,
}

/// One edit found: where in the file, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub pointer: String,
    pub what: String,
}

/// What `verify` found.
#[derive(Debug, Clone, Default)]
pub struct Verified {
    /// Edits found (each makes `verify` exit 1).
    pub findings: Vec<Finding>,
    /// What could not be checked, and why (another hcpspec version, vectors from a folder).
    pub unchecked: Vec<String>,
    /// What was checked, one line each.
    pub checked: Vec<String>,
    /// Beyond every anchor: `sentence …: passed; could have failed: mutant X fails case Y`.
    pub proven: Vec<String>,
}

/// The summary fields recounted, by name (all but `micros`: a time, never judged).
fn fields(s: &Summary) -> [(&'static str, usize); 13] {
    [
        ("pass", s.pass),
        ("fail", s.fail),
        ("expected_fail", s.expected_fail),
        ("stale", s.stale),
        ("skip", s.skip),
        ("unimplemented", s.unimplemented),
        ("error", s.error),
        ("profile", s.profile),
        ("not_scored", s.not_scored),
        ("unclassified", s.unclassified),
        ("must_fail", s.must_fail),
        ("drift", s.drift),
        ("new", s.new),
    ]
}

fn word(o: Outcome) -> String {
    serde_json::to_value(o)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// Check `report` against itself and, where it can, against what this hcpspec holds.
pub fn verify(report: &Report, known: &Known) -> Verified {
    let mut v = Verified::default();
    let mut recounted = 0;
    for (i, r) in report.suites.iter().enumerate() {
        for (j, run) in r.runtimes.iter().enumerate() {
            let at = format!("/suites/{i}/runtimes/{j}");
            for (k, c) in run.cases.iter().enumerate() {
                let made = Outcome::of(c, c.annotations.expectation.as_ref());
                if let Some(said) = c.annotations.outcome.filter(|o| *o != made) {
                    v.findings.push(Finding {
                        pointer: format!("{at}/cases/{k}/outcome"),
                        what: format!(
                            "says {}; case {}'s verdict and expectation make it {}",
                            word(said),
                            c.name,
                            word(made)
                        ),
                    });
                }
            }
            let again = Summary::of(&run.cases, r.rules());
            for ((name, said), (_, counted)) in fields(&run.summary).into_iter().zip(fields(&again))
            {
                if said != counted {
                    v.findings.push(Finding {
                        pointer: format!("{at}/summary/{name}"),
                        what: format!("says {said}; its cases count {counted}"),
                    });
                }
            }
            recounted += 1;
        }
    }
    v.checked
        .push(format!("{recounted} summaries recounted from their cases"));
    case_set(report, known, &mut v);
    v
}

/// The case set: the vectors' hash, each suite's `cases_hash`, each case's name, section and
/// level, against this hcpspec's embedded vectors, when the result says it ran them.
fn case_set(report: &Report, known: &Known, v: &mut Verified) {
    let versions = std::iter::once(&report.hcpspec_version)
        .chain(report.suites.iter().map(|r| &r.hcpspec_version));
    if let Some(other) = versions.into_iter().find(|x| **x != known.version) {
        v.unchecked.push(format!(
            "the result names hcpspec {other}, this is hcpspec {}: its case set can be checked only by hcpspec {other}'s verify",
            known.version
        ));
        return;
    }
    if report.vectors.is_empty() {
        v.unchecked.push(
            "the result does not say which vectors it ran (no `vectors`): its case set is not checked"
                .into(),
        );
        return;
    }
    let mut embedded = false;
    for (n, o) in report.vectors.iter().enumerate() {
        if o.origin != "embedded" {
            v.unchecked.push(format!(
                "the result ran the vectors in {}, not those embedded: its case set is not checked",
                o.origin
            ));
            continue;
        }
        embedded = true;
        if o.sha256 != known.tree_sha256 {
            v.findings.push(Finding {
                pointer: format!("/vectors/{n}/sha256"),
                what: format!(
                    "says {}; hcpspec {}'s embedded vectors hash to {}",
                    o.sha256, known.version, known.tree_sha256
                ),
            });
        }
    }
    if !embedded {
        return;
    }
    for (i, r) in report.suites.iter().enumerate() {
        let Some(suite) = known.suites.get(&r.suite) else {
            v.findings.push(Finding {
                pointer: format!("/suites/{i}/suite"),
                what: format!(
                    "no suite {} in hcpspec {}'s vectors",
                    r.suite, known.version
                ),
            });
            continue;
        };
        let by_name: HashMap<&str, (usize, &KnownCase)> = suite
            .cases
            .iter()
            .enumerate()
            .map(|(n, c)| (c.name.as_str(), (n, c)))
            .collect();
        let mut ran = vec![false; suite.cases.len()];
        for (j, run) in r.runtimes.iter().enumerate() {
            for (k, c) in run.cases.iter().enumerate() {
                let at = format!("/suites/{i}/runtimes/{j}/cases/{k}");
                let Some((n, kc)) = by_name.get(c.name.as_str()) else {
                    v.findings.push(Finding {
                        pointer: format!("{at}/name"),
                        what: format!(
                            "no case {} in hcpspec {}'s {} vectors",
                            c.name, known.version, r.suite
                        ),
                    });
                    continue;
                };
                ran[*n] = true;
                if kc.section != c.section {
                    v.findings.push(Finding {
                        pointer: format!("{at}/section"),
                        what: format!(
                            "says {}; case {} is of section {}",
                            c.section, c.name, kc.section
                        ),
                    });
                }
                if kc.level != c.level {
                    v.findings.push(Finding {
                        pointer: format!("{at}/level"),
                        what: format!("says {:?}; case {} is {:?}", c.level, c.name, kc.level),
                    });
                }
            }
        }
        // The run hashes the cases it ran, in load order.
        let ran: Vec<&KnownCase> = suite
            .cases
            .iter()
            .zip(&ran)
            .filter(|(_, r)| **r)
            .map(|(c, _)| c)
            .collect();
        let parts: Vec<&str> = r.cases_hash.split('+').collect();
        if parts.len() == 1 {
            let hash = crate::run::result::fnv1a(ran.iter().map(|c| c.source.as_slice()));
            if hash != r.cases_hash {
                v.findings.push(Finding {
                    pointer: format!("/suites/{i}/cases_hash"),
                    what: format!(
                        "says {}; the {} cases it holds hash to {hash}",
                        r.cases_hash, r.suite
                    ),
                });
            }
        } else if !sharded(&ran, &parts) {
            v.unchecked.push(format!(
                "suite {}'s cases_hash joins {} hashes that are not the shards of one --partition of its cases (a merge of several runs): each case checked by name, section and level",
                r.suite,
                parts.len()
            ));
        }
    }
    v.checked.push(format!(
        "case set: the vectors' hash, each suite's cases_hash and every case's name, section and level, against hcpspec {}'s embedded vectors",
        known.version
    ));
    proven(report, known, v);
}

/// Are `parts` (a merge's joined `cases_hash`) the hashes of the shards of one `--partition
/// K/N` of `ran` (those of the shards holding any), for some N from their count to [`MAX_SHARDS`]?
fn sharded(ran: &[&KnownCase], parts: &[&str]) -> bool {
    let mut want: Vec<&str> = parts.to_vec();
    want.sort_unstable();
    want.dedup();
    // More parts than MAX_SHARDS are never checked: a hand-made result's million parts cost
    // nothing.
    (parts.len()..=MAX_SHARDS).any(|n| {
        let mut of: Vec<Vec<&[u8]>> = vec![vec![]; n];
        for c in ran {
            of[crate::run::plan::shard(&c.name, n) - 1].push(c.source.as_slice());
        }
        // Only the shards it holds cases of: a merge of some of the shards is one too.
        let mut got: Vec<String> = of
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(crate::run::result::fnv1a)
            .collect();
        got.sort_unstable();
        got.dedup();
        got == want
    })
}

/// The most shards `verify` tries when it checks a merge's joined `cases_hash`.
pub const MAX_SHARDS: usize = 64;

/// Beyond every anchor: for each ledger sentence whose cases all passed, the mutant proven to
/// fail its cases, so a reader sees the checks could have failed.
fn proven(report: &Report, known: &Known, v: &mut Verified) {
    for r in &report.suites {
        let Some(suite) = known.suites.get(&r.suite) else {
            continue;
        };
        for run in &r.runtimes {
            let passed: HashMap<&str, bool> = run
                .cases
                .iter()
                .map(|c| (c.name.as_str(), state(c) == State::Pass))
                .collect();
            let who = if r.runtimes.len() > 1 {
                format!(" ({})", run.shown())
            } else {
                String::new()
            };
            for s in &suite.sentences {
                let all = !s.cases.is_empty()
                    && s.cases
                        .iter()
                        .all(|c| passed.get(c.as_str()).copied().unwrap_or(false));
                if !all || s.killers.is_empty() || s.must.is_empty() {
                    continue;
                }
                let cases = match s.must.as_slice() {
                    [one] => format!("case {one}"),
                    many => format!("one of cases {}", many.join(", ")),
                };
                for k in &s.killers {
                    v.proven.push(format!(
                        "{} sentence {}{who}: passed; could have failed: mutant {k} fails {cases}",
                        r.suite, s.at
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(verdict: &str, pass: usize, fail: usize, must_fail: usize) -> Report {
        let v = serde_json::json!({"hcpspec_version": "9", "suites": [{"hcpspec_version": "9",
            "suite": "contract", "cases_hash": "h", "runtimes": [{"runtime": "inproc:reference",
            "info": null, "summary": {"pass": pass, "fail": fail, "expected_fail": 0, "stale": 0,
            "skip": 0, "unimplemented": 0, "error": 0, "must_fail": must_fail, "drift": 0,
            "micros": 0},
            "cases": [{"name": "contract::04-x::a", "section": "4", "level": "MUST", "spec": "",
                "verdict": verdict, "observations": [], "micros": 1, "outcome": "pass"}]}]}]});
        serde_json::from_value(v).expect("a report")
    }

    #[test]
    fn a_verdict_or_a_count_edited_is_found_and_the_true_result_verifies() {
        let known = Known {
            version: "9".into(),
            ..Known::default()
        };
        assert!(verify(&report("pass", 1, 0, 0), &known).findings.is_empty());
        let f = verify(&report("pass", 2, 0, 0), &known).findings;
        assert_eq!(f[0].pointer, "/suites/0/runtimes/0/summary/pass");
    }
}
