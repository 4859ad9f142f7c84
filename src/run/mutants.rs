//! The self-check: run the suite on every mutant and see which cases turn red. Each mutant
//! must fail at least one MUST case of its own section; a MUST case no mutant fails is a case
//! that cannot be shown able to fail.

use super::{run_all, CaseResult, RunEnv, Verdict};
use crate::adapter::{Adapter, Inproc};
use crate::case::{Case, Level};
use crate::runtime::mutant::Mutant;

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
                let claims = crate::adapter::embedded_claims(&name).unwrap_or_default();
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

    /// MUST cases that no mutant fails.
    pub fn unkilled_must<'c>(&self, cases: &'c [Case]) -> Vec<&'c Case> {
        cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .filter(|c| {
                let name = c.name();
                !self.rows.iter().any(|(_, rs)| {
                    rs.iter()
                        .any(|r| r.name == name && matches!(r.verdict, Verdict::Fail(_)))
                })
            })
            .collect()
    }
}
