//! The self-check, one meaning for every suite: every mutant fails a MUST case of one of its own
//! sections (or one whose `killed_by` names it); every MUST case falls to such a mutant; every
//! `killed_by` names a mutant that fails the case; every allowed variant passes every MUST case.
//! Mutants and variants are targets like any other, run through the one [`Runner`].

use super::{Context, Suite};
use crate::case::{Case, Level, SuiteInfo};
use crate::knob::Info;
use crate::run::expectations::Expectations;
use crate::run::runner::{Quiet, Runner};
use crate::run::{CaseResult, Verdict};
use std::collections::BTreeMap;

pub struct SelfCheck<'a> {
    pub suite: &'a dyn Suite,
    pub info: &'a SuiteInfo,
    pub cases: &'a [Case],
    pub ctx: &'a Context,
    pub jobs: usize,
}

/// Each mutant's name and the names of the cases it fails among those it must answer for.
pub type Kills = BTreeMap<&'static str, Vec<String>>;

impl SelfCheck<'_> {
    /// `inproc:NAME` (`mutant:…`, `variant:…`) on `cases`, through the runner.
    fn run(&self, name: &str, cases: &[Case]) -> Result<Vec<CaseResult>, String> {
        if cases.is_empty() {
            return Ok(vec![]);
        }
        let target = self.suite.target(&format!("inproc:{name}"), self.ctx)?;
        let expectations = Expectations::default();
        let mut runner = Runner::new(self.info, cases, &expectations);
        runner.jobs = self.jobs;
        let result = runner
            .run(&[target], &mut Quiet)
            .map_err(|e| e.to_string())?;
        Ok(result.runtimes.into_iter().flat_map(|r| r.cases).collect())
    }

    /// The MUST cases a mutant must answer for: of its own sections, or naming it in `killed_by`.
    pub fn own<'c>(&self, m: &Info, cases: &'c [Case]) -> Vec<&'c Case> {
        cases
            .iter()
            .filter(|c| {
                c.level == Level::MUST
                    && (m.sections.contains(&c.section.as_str())
                        || c.killed_by.iter().any(|k| k == m.name))
            })
            .collect()
    }

    /// The cases of its own that the mutant fails (an error or a skip is no kill).
    pub fn kills(&self, m: &Info) -> Result<Vec<String>, String> {
        let own: Vec<Case> = self.own(m, self.cases).into_iter().cloned().collect();
        Ok(self
            .run(&format!("mutant:{}", m.name), &own)?
            .into_iter()
            .filter(|r| matches!(r.verdict, Verdict::Fail(_)))
            .map(|r| r.name)
            .collect())
    }

    /// Every mutant's kills.
    pub fn all_kills(&self) -> Result<Kills, String> {
        self.suite
            .mutants()
            .iter()
            .map(|m| Ok((m.name, self.kills(m)?)))
            .collect()
    }

    /// The MUST cases the variant does not pass (a skip is no failure: what it needs was not
    /// offered), each explained.
    pub fn variant_failures(&self, v: &Info) -> Result<Vec<String>, String> {
        let must: Vec<Case> = self
            .cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .cloned()
            .collect();
        Ok(self
            .run(&format!("variant:{}", v.name), &must)?
            .into_iter()
            .zip(&must)
            .filter(|(r, _)| !matches!(r.verdict, Verdict::Pass | Verdict::Skip { .. }))
            .map(|(r, c)| r.explain(c))
            .collect())
    }

    /// The MUST cases no mutant of their own (section or `killed_by`) fails.
    pub fn unkilled(&self, kills: &Kills) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .map(Case::name)
            .filter(|n| !kills.values().flatten().any(|k| k == n))
            .collect()
    }

    /// `killed_by` entries that name no mutant, or one that does not fail the case.
    pub fn false_claims(&self, kills: &Kills) -> Vec<String> {
        let mut out = Vec::new();
        for c in self.cases {
            for k in &c.killed_by {
                match kills.get(k.as_str()) {
                    None => out.push(format!("{}: killed_by names no mutant `{k}`", c.name())),
                    Some(failed) if !failed.contains(&c.name()) => out.push(format!(
                        "{}: killed_by names `{k}`, which does not fail it",
                        c.name()
                    )),
                    Some(_) => {}
                }
            }
        }
        out
    }
}

/// What a ledger row's killer did to the cases the row claims (see [`SelfCheck::prove`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Proof {
    /// The row's MUST cases it failed on an expectation the case wrote (or, for a check the row
    /// claims, the MUST cases it failed on that check: those of the first batch that had one).
    pub killed_by: Vec<String>,
    /// The row's MUST cases it failed elsewhere: on an arrangement, or another check.
    pub elsewhere: Vec<String>,
}

impl SelfCheck<'_> {
    /// Run a ledger row's killer on what the row claims: its MUST cases, and for each check it
    /// names, every MUST case of the suite (a check every case runs is claimed by all of them).
    pub fn prove(&self, row: &super::ledger::Row) -> Result<Proof, String> {
        let killer = row
            .killer
            .as_deref()
            .ok_or_else(|| format!("{}: names no killer", row.at()))?;
        // The row's own cases first; a check it claims is claimed by every MUST case, played in
        // batches until one proves it (a wait-bound suite has many).
        let mut cases: Vec<Case> = self
            .cases
            .iter()
            .filter(|c| c.level == Level::MUST && row.cases.contains(&c.name()))
            .cloned()
            .collect();
        if !row.checks.is_empty() {
            cases.extend(
                self.cases
                    .iter()
                    .filter(|c| c.level == Level::MUST && !row.cases.contains(&c.name()))
                    .cloned(),
            );
        }
        let batch = if row.checks.is_empty() {
            cases.len().max(1)
        } else {
            self.jobs.max(4) * 2
        };
        let mut proof = Proof::default();
        for batch in cases.chunks(batch) {
            for (r, case) in self
                .run(&format!("mutant:{killer}"), batch)?
                .iter()
                .zip(batch)
            {
                let Verdict::Fail(f) = &r.verdict else {
                    continue;
                };
                let claimed = row.cases.contains(&r.name);
                let on_it = match self.suite.judged(case, f) {
                    super::Judged::Written => claimed,
                    super::Judged::Check(k) => row.checks.contains(&k),
                    super::Judged::Arrangement => false,
                };
                if on_it {
                    proof.killed_by.push(r.name.clone());
                } else if claimed {
                    proof
                        .elsewhere
                        .push(format!("{} (step {}, {})", r.name, f.step, f.action));
                }
            }
            if !proof.killed_by.is_empty() {
                break;
            }
        }
        Ok(proof)
    }

    /// The suite's ledgers, read: every row of every file `suite.json` names.
    pub fn ledger(&self, vectors: &std::path::Path) -> Result<Vec<super::ledger::Row>, String> {
        let checks = self.suite.checks();
        let names = super::ledger::Names {
            suite: &self.info.name,
            cases: self.cases,
            checks: &checks,
        };
        let mut rows = Vec::new();
        for l in &self.info.ledgers {
            let path = vectors.join(&self.info.name).join(l);
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            rows.extend(super::ledger::parse(l, &text, &names)?);
        }
        Ok(rows)
    }
}
