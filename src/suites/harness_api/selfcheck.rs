//! The suite's self-check: every mutant of the reference harness fails a MUST scenario of its
//! own section, and every allowed variant passes every MUST scenario.

use super::launch::Harness;
use super::reference::{Knobs, MUTANTS, VARIANTS};
use crate::case::{Case, Level};
use crate::run::{par_each, Verdict};

/// Scenarios run at once: they mostly wait on (scaled) timers, not on the CPU.
pub const JOBS: usize = 8;

/// The MUST scenarios of `section` that the mutant fails (empty: it survives).
pub fn kills(mutant: &str, cases: &[Case]) -> Vec<String> {
    let Some((_, section, _)) = MUTANTS.iter().find(|m| m.0 == mutant) else {
        return vec![];
    };
    let own: Vec<Case> = cases
        .iter()
        .filter(|c| c.level == Level::MUST && (c.section == *section || c.killed_by.iter().any(|k| k == mutant)))
        .cloned()
        .collect();
    let h = Harness::Embedded(Knobs::named(&format!("mutant:{mutant}")).expect("listed"));
    par_each(&own, JOBS, &|c| super::run_case(c, &h), &|_| {})
        .into_iter()
        .filter(|r| matches!(r.verdict, Verdict::Fail(_)))
        .map(|r| r.name)
        .collect()
}

/// The MUST scenarios the variant does not pass, explained.
pub fn variant_failures(variant: &str, cases: &[Case]) -> Vec<String> {
    let must: Vec<Case> = cases.iter().filter(|c| c.level == Level::MUST).cloned().collect();
    let h = Harness::Embedded(Knobs::named(&format!("variant:{variant}")).expect("listed"));
    par_each(&must, JOBS, &|c| super::run_case(c, &h), &|_| {})
        .into_iter()
        .zip(&must)
        .filter(|(r, _)| !matches!(r.verdict, Verdict::Pass | Verdict::Skip { .. }))
        .map(|(r, c)| r.explain(c))
        .collect()
}

pub fn mutant_names() -> impl Iterator<Item = &'static str> {
    MUTANTS.iter().map(|m| m.0)
}

pub fn variant_names() -> impl Iterator<Item = &'static str> {
    VARIANTS.iter().map(|v| v.0)
}
