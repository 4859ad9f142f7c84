//! The core-api suite's self-check: every mutant of the reference core fails a MUST case of its
//! own section (or of a case's `killed_by`), and every MUST case is failed by one.

use super::reference::MUTANTS;
use crate::case::{Case, Level};
use crate::run::{par_each, Verdict};

pub fn mutant_names() -> impl Iterator<Item = &'static str> {
    MUTANTS.iter().map(|m| m.0)
}

/// The MUST cases of the mutant's own section (or naming it in `killed_by`) that it fails.
pub fn kills(mutant: &str, cases: &[Case]) -> Vec<String> {
    let Some((_, section, _)) = MUTANTS.iter().find(|m| m.0 == mutant) else {
        return vec![];
    };
    let own: Vec<Case> = cases
        .iter()
        .filter(|c| c.level == Level::MUST && (c.section == *section || c.killed_by.iter().any(|k| k == mutant)))
        .cloned()
        .collect();
    let Ok(connect) = super::connector(&format!("inproc:mutant:{mutant}"), &Default::default()) else {
        return vec![];
    };
    par_each(&own, 2, &|c| super::run_case(c, &connect), &|_| {})
        .into_iter()
        .filter(|r| matches!(r.verdict, Verdict::Fail(_)))
        .map(|r| r.name)
        .collect()
}

pub fn variant_names() -> impl Iterator<Item = &'static str> {
    super::reference::VARIANTS.iter().map(|v| v.0)
}

/// The MUST cases the allowed variant does not pass, explained.
pub fn variant_failures(variant: &str, cases: &[Case]) -> Vec<String> {
    let must: Vec<Case> = cases.iter().filter(|c| c.level == Level::MUST).cloned().collect();
    let Ok(connect) = super::connector(&format!("inproc:variant:{variant}"), &Default::default()) else {
        return vec![format!("no variant {variant}")];
    };
    par_each(&must, 2, &|c| super::run_case(c, &connect), &|_| {})
        .into_iter()
        .zip(&must)
        .filter(|(r, _)| !matches!(r.verdict, Verdict::Pass))
        .map(|(r, c)| r.explain(c))
        .collect()
}
