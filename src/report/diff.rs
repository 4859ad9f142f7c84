//! `hcpspec diff BASE HEAD`: what changed between two results, case by case and by ledger
//! sentence, for a pull request's gate (docs/commands.md, docs/ci.md).
//!
//! A case's verdict is its [`State`](super::State) and whether it fails the run ([`fails_run`], under the
//! rules its own result was run by). Between BASE and HEAD a case, in the same suite and
//! runtime (runtimes matched as `hcpspec report` merges them: name and adapter spec), is
//! - **regressed**: it did not fail the run in BASE and fails it in HEAD: what makes HEAD's
//!   run exit 1 that BASE's did not, so the only kind that fails the gate (exit 1);
//! - **fixed**: it failed the run in BASE and does not in HEAD;
//! - **changed**: its state or its declared expectation changed, and whether it fails the run
//!   did not (pass → skip, pass → profile, fail → error): listed, never failing the gate, as it
//!   never fails the run either;
//! - **added** / **removed**: in one result only (a new case set, a new runtime): listed with
//!   its state; the base never judged an added case, so it is no regression.
//!
//! A case whose declared expectation (`--expectations`: `fail`, `skip`) differs is marked so,
//! whatever its kind. A case nothing of this changed in is not listed.

use super::{fails_run, state, Report, RunResult, RuntimeRun};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The `$schema` of `hcpspec diff --format json`: `vectors/schemas/diff.schema.json`.
pub const DIFF_SCHEMA: &str = "https://hcpspec.dev/schemas/diff.schema.json";

/// At most this many case rows in the Markdown rendering (a pull-request comment), and this many
/// ledger rows; the rest are counted. The JSON lists every one.
pub const MAX_MARKDOWN_CASES: usize = 100;
pub const MAX_MARKDOWN_SENTENCES: usize = 50;
/// Texts quoted in the Markdown and terminal renderings are cut to this many characters.
pub const MAX_QUOTED: usize = 200;

/// What happened to one case between BASE and HEAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Regressed,
    Fixed,
    Changed,
    Added,
    Removed,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Regressed,
        Kind::Fixed,
        Kind::Changed,
        Kind::Added,
        Kind::Removed,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::Regressed => "regressed",
            Kind::Fixed => "fixed",
            Kind::Changed => "changed",
            Kind::Added => "added",
            Kind::Removed => "removed",
        }
    }
}

/// One side's verdict of a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Its [`State`](super::State)'s label (`pass`, `fail`, `expected-fail`, `stale`, …).
    pub state: String,
    /// It fails its run ([`fails_run`]).
    pub fails_run: bool,
    /// The expectation declared for it (`fail`, `skip`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

/// One case that changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub case: String,
    pub kind: Kind,
    /// Its declared expectation differs between the two.
    pub expectation_changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<Verdict>,
}

/// One suite and runtime's changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuntimeDiff {
    pub suite: String,
    /// What the renderings head it with (`--name`, else its adapter spec).
    pub runtime: String,
    /// In BASE, in HEAD (a runtime in one only has every case added or removed).
    pub in_base: bool,
    pub in_head: bool,
    /// Its changed cases, by name.
    pub changes: Vec<Change>,
}

/// A ledger sentence whose cases changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SentenceDiff {
    pub suite: String,
    pub ledger: String,
    pub number: u32,
    pub sentence: String,
    /// How many of its cases changed, by kind (summed over runtimes).
    pub counts: BTreeMap<Kind, usize>,
    /// `RUNTIME: CASE` of each change.
    pub cases: Vec<String>,
}

/// A ledger row, as the diff needs it: its suite's ledger, number, sentence and cases (full
/// names). The command reads them from the suites' ledgers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    pub ledger: String,
    pub number: u32,
    pub sentence: String,
    pub cases: Vec<String>,
}

/// `hcpspec diff BASE HEAD`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    #[serde(rename = "$schema")]
    pub schema: String,
    /// How many changes of each kind, over every runtime.
    pub counts: BTreeMap<Kind, usize>,
    /// Cases whose declared expectation changed.
    pub expectations_changed: usize,
    /// Suites whose case sets differ between the two (`cases_hash`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub case_sets_differ: Vec<String>,
    pub runtimes: Vec<RuntimeDiff>,
    pub sentences: Vec<SentenceDiff>,
}

fn verdict(c: &crate::run::CaseResult, rules: super::Rules) -> Verdict {
    use crate::run::expectations::Expect;
    Verdict {
        state: state(c).label().into(),
        fails_run: fails_run(c, rules),
        expected: c.annotations.expectation.as_ref().map(|e| match e.expect {
            Expect::Fail => "fail".into(),
            Expect::Skip => "skip".into(),
        }),
    }
}

/// The changes of one runtime: each case by name (a name twice in one side is read once, as
/// the merge that normalised it left it).
fn changes(
    base: Option<(&RuntimeRun, super::Rules)>,
    head: Option<(&RuntimeRun, super::Rules)>,
) -> Vec<Change> {
    fn side(s: Option<(&RuntimeRun, super::Rules)>) -> BTreeMap<&str, Verdict> {
        s.map(|(run, rules)| {
            run.cases
                .iter()
                .map(|c| (c.name.as_str(), verdict(c, rules)))
                .collect()
        })
        .unwrap_or_default()
    }
    let (b, h) = (side(base), side(head));
    let names: std::collections::BTreeSet<&str> = b.keys().chain(h.keys()).copied().collect();
    let mut out = vec![];
    for name in names {
        let (bv, hv) = (b.get(name), h.get(name));
        let kind = match (bv, hv) {
            (None, Some(_)) => Kind::Added,
            (Some(_), None) => Kind::Removed,
            (Some(x), Some(y)) if !x.fails_run && y.fails_run => Kind::Regressed,
            (Some(x), Some(y)) if x.fails_run && !y.fails_run => Kind::Fixed,
            (Some(x), Some(y)) if x != y => Kind::Changed,
            _ => continue,
        };
        let expectation_changed =
            matches!((bv, hv), (Some(x), Some(y)) if x.expected != y.expected);
        out.push(Change {
            case: name.to_string(),
            kind,
            expectation_changed,
            base: bv.cloned(),
            head: hv.cloned(),
        });
    }
    out
}

/// HEAD's runtimes of a suite matched with BASE's: by name and adapter spec (as `hcpspec
/// report` merges), then, of those left, by name without version and spec where that pairs
/// exactly one with one (an implementation whose pull request bumps its version).
fn pair<'a>(
    base: &'a [RuntimeRun],
    head: &'a [RuntimeRun],
) -> Vec<(Option<&'a RuntimeRun>, Option<&'a RuntimeRun>)> {
    let mut used = HashSet::new();
    let at: HashMap<_, _> = base
        .iter()
        .enumerate()
        .map(|(i, r)| (super::record::identity(r), i))
        .collect();
    let mut pairs: Vec<(Option<usize>, usize)> = head
        .iter()
        .enumerate()
        .map(|(j, r)| {
            let i = at.get(&super::record::identity(r)).copied();
            if let Some(i) = i {
                used.insert(i);
            }
            (i, j)
        })
        .collect();
    let loose = |r: &RuntimeRun| (r.name(), r.runtime.clone());
    for p in pairs.iter_mut().filter(|p| p.0.is_none()) {
        let key = loose(&head[p.1]);
        let left: Vec<usize> = (0..base.len())
            .filter(|i| !used.contains(i) && loose(&base[*i]) == key)
            .collect();
        let rivals = head.iter().filter(|r| loose(r) == key).count();
        if left.len() == 1 && rivals == 1 {
            used.insert(left[0]);
            p.0 = Some(left[0]);
        }
    }
    let mut out: Vec<_> = pairs
        .into_iter()
        .map(|(i, j)| (i.map(|i| &base[i]), Some(&head[j])))
        .collect();
    out.extend(
        (0..base.len())
            .filter(|i| !used.contains(i))
            .map(|i| (Some(&base[i]), None)),
    );
    out
}

impl Diff {
    /// The changes from `base` to `head`, and the sentences of `ledgers` (suite → rows) whose
    /// cases changed. Both records as `hcpspec report` reads them (read, then merged alone).
    pub fn of(base: &Report, head: &Report, ledgers: &BTreeMap<String, Vec<Sentence>>) -> Diff {
        let suites: Vec<&str> = {
            let mut seen = HashSet::new();
            head.suites
                .iter()
                .chain(&base.suites)
                .map(|s| s.suite.as_str())
                .filter(|s| seen.insert(*s))
                .collect()
        };
        fn find<'a>(r: &'a Report, name: &str) -> Option<&'a RunResult> {
            r.suites.iter().find(|s| s.suite == name)
        }
        let mut runtimes = vec![];
        let mut case_sets_differ = vec![];
        for name in suites {
            let (b, h) = (find(base, name), find(head, name));
            if let (Some(b), Some(h)) = (b, h) {
                if b.cases_hash != h.cases_hash {
                    case_sets_differ.push(name.to_string());
                }
            }
            let none = vec![];
            let bruns = b.map(|s| &s.runtimes).unwrap_or(&none);
            let hruns = h.map(|s| &s.runtimes).unwrap_or(&none);
            for (br, hr) in pair(bruns, hruns) {
                let rules = |s: Option<&RunResult>| s.map(|s| s.rules()).unwrap_or_default();
                let changes = changes(br.map(|r| (r, rules(b))), hr.map(|r| (r, rules(h))));
                if changes.is_empty() {
                    continue;
                }
                runtimes.push(RuntimeDiff {
                    suite: name.to_string(),
                    runtime: hr.or(br).map(|r| r.shown().to_string()).unwrap_or_default(),
                    in_base: br.is_some(),
                    in_head: hr.is_some(),
                    changes,
                });
            }
        }
        let mut counts: BTreeMap<Kind, usize> = Kind::ALL.iter().map(|k| (*k, 0)).collect();
        let mut expectations_changed = 0;
        for c in runtimes.iter().flat_map(|r| &r.changes) {
            *counts.entry(c.kind).or_default() += 1;
            expectations_changed += usize::from(c.expectation_changed);
        }
        let sentences = sentences(&runtimes, ledgers);
        Diff {
            schema: DIFF_SCHEMA.into(),
            counts,
            expectations_changed,
            case_sets_differ,
            runtimes,
            sentences,
        }
    }

    pub fn count(&self, k: Kind) -> usize {
        self.counts.get(&k).copied().unwrap_or(0)
    }

    /// Something regressed: the gate fails (exit 1).
    pub fn regressed(&self) -> bool {
        self.count(Kind::Regressed) > 0
    }

    /// `2 regressed · 1 fixed · 0 changed · 0 added · 0 removed`.
    pub fn headline(&self) -> String {
        Kind::ALL
            .iter()
            .map(|k| format!("{} {}", self.count(*k), k.label()))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// `1 expectation changed`.
    pub fn expectations(&self) -> String {
        let n = self.expectations_changed;
        format!("{n} expectation{} changed", if n == 1 { "" } else { "s" })
    }
}

/// The ledger rows whose cases changed, in ledger order, suite by suite.
fn sentences(
    runtimes: &[RuntimeDiff],
    ledgers: &BTreeMap<String, Vec<Sentence>>,
) -> Vec<SentenceDiff> {
    let mut out = vec![];
    for (suite, rows) in ledgers {
        // Each changed case of the suite, by name: a row looks up its own cases.
        let mut changed: HashMap<&str, Vec<(&RuntimeDiff, &Change)>> = HashMap::new();
        for r in runtimes.iter().filter(|r| &r.suite == suite) {
            for c in &r.changes {
                changed.entry(c.case.as_str()).or_default().push((r, c));
            }
        }
        if changed.is_empty() {
            continue;
        }
        for row in rows {
            let mut counts = BTreeMap::new();
            let mut cases = vec![];
            for (r, c) in row
                .cases
                .iter()
                .filter_map(|n| changed.get(n.as_str()))
                .flatten()
            {
                *counts.entry(c.kind).or_insert(0) += 1;
                cases.push(format!("{}: {}", r.runtime, c.case));
            }
            if !cases.is_empty() {
                out.push(SentenceDiff {
                    suite: suite.clone(),
                    ledger: row.ledger.clone(),
                    number: row.number,
                    sentence: row.sentence.clone(),
                    counts,
                    cases,
                });
            }
        }
    }
    out
}

/// `s` cut to `n` characters, `…` marking the cut.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

fn side(v: &Option<Verdict>) -> String {
    match v {
        None => "–".into(),
        Some(v) => format!(
            "{}{}",
            v.state,
            if v.fails_run { " (fails run)" } else { "" }
        ),
    }
}

fn counted(counts: &BTreeMap<Kind, usize>) -> String {
    counts
        .iter()
        .map(|(k, n)| format!("{n} {}", k.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// For a terminal, each line at most 80 columns: the headline, each runtime's changes (a line a
/// case: kind, name, then `before → after` under it), then the ledger sentences that changed.
pub fn terminal(d: &Diff) -> String {
    let p = |s: &str| super::printable(s, false);
    let mut out = String::new();
    let head = d.headline();
    out += &format!("hcpspec diff: {}\n", cut(&head, 66));
    out += &format!("              {}\n", d.expectations());
    for s in &d.case_sets_differ {
        out += &cut(&format!("note: suite {} ran different case sets", p(s)), 80);
        out += "\n";
    }
    for r in &d.runtimes {
        let whole = match (r.in_base, r.in_head) {
            (false, _) => " (only in HEAD)",
            (_, false) => " (only in BASE)",
            _ => "",
        };
        out += &format!(
            "\n{}\n",
            cut(&format!("{} · {}{whole}", p(&r.suite), p(&r.runtime)), 80)
        );
        for c in &r.changes {
            out += &format!("  {:<10} {}\n", c.kind.label(), cut(&p(&c.case), 67));
            let exp = if c.expectation_changed {
                " (expectation changed)"
            } else {
                ""
            };
            out += &cut(
                &format!("             {} → {}{exp}", side(&c.base), side(&c.head)),
                80,
            );
            out += "\n";
        }
    }
    if !d.sentences.is_empty() {
        out += "\nledger sentences whose cases changed:\n";
        for s in &d.sentences {
            let at = format!("  {} {} row {}: ", p(&s.suite), p(&s.ledger), s.number);
            out += &cut(&format!("{at}{}", counted(&s.counts)), 80);
            out += "\n";
            out += &cut(&format!("    {}", p(&s.sentence)), 80);
            out += "\n";
        }
    }
    out
}

/// For a pull-request comment: the headline, a table of the changed cases (at most
/// [`MAX_MARKDOWN_CASES`] rows, regressions first), a table of the ledger sentences (at most
/// [`MAX_MARKDOWN_SENTENCES`]); every text escaped as summary.md's and cut to [`MAX_QUOTED`].
pub fn markdown(d: &Diff) -> String {
    let md = |s: &str| super::markdown::md(&cut(s, MAX_QUOTED));
    let mark = if d.regressed() { "❌" } else { "✅" };
    let mut out = format!(
        "## hcpspec diff\n\n{mark} {} · {}\n\n",
        d.headline(),
        d.expectations()
    );
    for s in &d.case_sets_differ {
        out += &format!(
            "> Suite {} ran different case sets in BASE and HEAD.\n\n",
            md(s)
        );
    }
    let mut rows: Vec<(&RuntimeDiff, &Change)> = d
        .runtimes
        .iter()
        .flat_map(|r| r.changes.iter().map(move |c| (r, c)))
        .collect();
    rows.sort_by_key(|(_, c)| c.kind);
    if !rows.is_empty() {
        out += "| | suite | runtime | case | base | head |\n|---|---|---|---|---|---|\n";
        for (r, c) in rows.iter().take(MAX_MARKDOWN_CASES) {
            let exp = if c.expectation_changed {
                " (expectation changed)"
            } else {
                ""
            };
            out += &format!(
                "| {}{exp} | {} | {} | {} | {} | {} |\n",
                c.kind.label(),
                md(&r.suite),
                md(&r.runtime),
                md(&c.case),
                md(&side(&c.base)),
                md(&side(&c.head))
            );
        }
        if rows.len() > MAX_MARKDOWN_CASES {
            out += &format!(
                "\n… and {} more changed cases (`hcpspec diff --format json` lists every one).\n",
                rows.len() - MAX_MARKDOWN_CASES
            );
        }
    } else {
        out += "No case changed.\n";
    }
    if !d.sentences.is_empty() {
        out += "\n### Ledger sentences whose cases changed\n\n| suite | row | sentence | changes |\n|---|---|---|---|\n";
        for s in d.sentences.iter().take(MAX_MARKDOWN_SENTENCES) {
            out += &format!(
                "| {} | {} row {} | {} | {} |\n",
                md(&s.suite),
                md(&s.ledger),
                s.number,
                md(&s.sentence),
                counted(&s.counts)
            );
        }
        if d.sentences.len() > MAX_MARKDOWN_SENTENCES {
            out += &format!(
                "\n… and {} more sentences.\n",
                d.sentences.len() - MAX_MARKDOWN_SENTENCES
            );
        }
    }
    out
}
