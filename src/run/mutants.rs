//! The self-check: run the suite on every mutant and see which cases turn red. Each mutant
//! must fail at least one MUST case of its own section; a MUST case no mutant fails is a case
//! that cannot be shown able to fail.

use super::{run_all, CaseResult, RunEnv, Verdict};
use crate::adapter::{Adapter, Inproc};
use crate::case::{Case, Level};
use crate::runtime::mutant::Mutant;
use crate::runtime::variant::Variant;

/// Run the suite on every allowed variant (and on all of them at once): the MUST cases each
/// fails, which must be none. Mutants prove the suite can fail; variants that it is fair.
pub fn variant_failures(
    cases: &[Case],
    env: &RunEnv,
    jobs: usize,
) -> Vec<(String, Vec<CaseResult>)> {
    Variant::ALL
        .iter()
        .map(|v| v.name())
        .chain(["all"])
        .map(|v| {
            let name = format!("variant:{v}");
            let connect = || {
                Inproc::new(&name)
                    .map(|a| Box::new(crate::adapter::Checked(a)) as Box<dyn Adapter>)
                    .ok_or_else(|| format!("no runtime {name}"))
            };
            let claims = crate::run::embedded_claims(&name).unwrap_or_default();
            let failed = run_all(cases, env, &claims, jobs, connect, &|_| {})
                .into_iter()
                .filter(|r| r.level == Level::MUST && r.verdict != Verdict::Pass)
                .collect();
            (name, failed)
        })
        .collect()
}

pub struct KillMatrix {
    pub rows: Vec<(Mutant, Vec<CaseResult>)>,
}

impl KillMatrix {
    pub fn compute(cases: &[Case], env: &RunEnv, jobs: usize) -> KillMatrix {
        let rows = Mutant::ALL
            .iter()
            .map(|&m| {
                let name = format!("mutant:{}", m.name());
                let connect = || {
                    Inproc::new(&name)
                        .map(|a| Box::new(a) as Box<dyn Adapter>)
                        .ok_or_else(|| format!("no runtime {name}"))
                };
                let claims = crate::run::embedded_claims(&name).unwrap_or_default();
                (m, run_all(cases, env, &claims, jobs, connect, &|_| {}))
            })
            .collect();
        KillMatrix { rows }
    }

    /// The MUST cases of the mutant's own sections that it fails.
    pub fn kills(&self, m: Mutant) -> Vec<&CaseResult> {
        self.rows
            .iter()
            .filter(|(x, _)| *x == m)
            .flat_map(|(_, rs)| rs)
            .filter(|r| {
                r.level == Level::MUST
                    && m.sections().contains(&r.section.as_str())
                    && matches!(r.verdict, Verdict::Fail(_))
            })
            .collect()
    }

    /// Failures per (mutant, section), for the printed matrix.
    pub fn failures(&self, m: Mutant, section: &str) -> usize {
        self.rows
            .iter()
            .filter(|(x, _)| *x == m)
            .flat_map(|(_, rs)| rs)
            .filter(|r| r.section == section && matches!(r.verdict, Verdict::Fail(_)))
            .count()
    }

    /// Does mutant `m` fail the case named `name`?
    pub fn fails(&self, m: Mutant, name: &str) -> bool {
        self.rows.iter().filter(|(x, _)| *x == m).any(|(_, rs)| {
            rs.iter()
                .any(|r| r.name == name && matches!(r.verdict, Verdict::Fail(_)))
        })
    }

    /// MUST cases that no mutant of their own rule fails: of the case's own section, or one the
    /// case names in `killed_by` (a case failed only by another section's mutant, through the
    /// probe's echo say, is not shown able to fail on its own rule).
    pub fn unkilled_must<'c>(&self, cases: &'c [Case]) -> Vec<&'c Case> {
        cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .filter(|c| {
                let name = c.name();
                !Mutant::ALL.iter().any(|&m| {
                    (m.sections().contains(&c.section.as_str())
                        || c.killed_by.iter().any(|k| k == m.name()))
                        && self.fails(m, &name)
                })
            })
            .collect()
    }

    /// `killed_by` entries that name no mutant, or a mutant that does not fail the case.
    pub fn false_claims(&self, cases: &[Case]) -> Vec<String> {
        let mut out = Vec::new();
        for c in cases {
            for k in &c.killed_by {
                match Mutant::by_name(k) {
                    None => out.push(format!("{}: killed_by names no mutant `{k}`", c.name())),
                    Some(m) if !self.fails(m, &c.name()) => out.push(format!(
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
