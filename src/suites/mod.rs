//! The suites whose vocabulary is code: each folder here is one suite's driver, beside its
//! folder of vectors.

pub mod core_api;
pub mod harness_api;
pub mod hcp;
pub mod host;
pub mod serve;
pub mod world;

use crate::case::{Case, Level};
use crate::run::{par_each, CaseResult, Verdict};

/// What a run of a script suite's fuzzer (core-api, host) found: cases played, findings (why,
/// the seed case, the file written), time taken.
pub struct FuzzReport {
    pub cases: u64,
    pub findings: Vec<(String, String, Option<std::path::PathBuf>)>,
    /// When each finding was in hand (found, shrunk and written), from the start.
    pub found_after: Vec<std::time::Duration>,
    pub elapsed: std::time::Duration,
}

/// One trial of a script suite's fuzzer: mutate, play and judge a seed case; a finding (why, the
/// file written), if any.
pub type Trial<'a> =
    dyn FnMut(&Case, &mut crate::mutate::Rng) -> Option<(String, Option<std::path::PathBuf>)> + 'a;

impl FuzzReport {
    /// The loop of a script suite's fuzzer: until `seconds`, `max` trials or `stop`, pick a seed
    /// case and let `trial` mutate, play and judge it; `trial` answers a finding (why, the file
    /// written), if any.
    pub fn run(
        seeds: &[&Case],
        seed: u64,
        seconds: f64,
        max: Option<u64>,
        stop: &std::sync::atomic::AtomicBool,
        trial: &mut Trial,
    ) -> FuzzReport {
        Self::run_until(seeds, seed, seconds, max, None, stop, trial)
    }

    /// [`Self::run`], stopping too once `max_findings` findings are in.
    pub fn run_until(
        seeds: &[&Case],
        seed: u64,
        seconds: f64,
        max: Option<u64>,
        max_findings: Option<usize>,
        stop: &std::sync::atomic::AtomicBool,
        trial: &mut Trial,
    ) -> FuzzReport {
        use crate::mutate::Source;
        let start = std::time::Instant::now();
        let mut rng = crate::mutate::Rng::new(seed);
        let mut report = FuzzReport {
            cases: 0,
            findings: vec![],
            found_after: vec![],
            elapsed: std::time::Duration::ZERO,
        };
        while !seeds.is_empty()
            && start.elapsed().as_secs_f64() < seconds
            && max.is_none_or(|m| report.cases < m)
            && max_findings.is_none_or(|m| report.findings.len() < m)
            && !stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            let case = seeds[rng.below(seeds.len())];
            report.cases += 1;
            if let Some((why, path)) = trial(case, &mut rng) {
                report.findings.push((why, case.name(), path));
                report.found_after.push(start.elapsed());
            }
        }
        report.elapsed = start.elapsed();
        report
    }
}

/// The self-check of a suite whose mutants and allowed variants are knobs of one embedded
/// reference (harness-api, core-api, host): every mutant fails a MUST case of its own section (or of a
/// case's `killed_by`), every MUST case falls to one, every variant passes every MUST case.
pub struct SelfCheck {
    /// What the targets are called in reports: "harness", "core".
    pub noun: &'static str,
    /// Each mutant: its name, sections, the rule it breaks.
    pub mutants: Vec<crate::knob::Info>,
    /// Each variant: its name, the open point it decides otherwise.
    pub variants: Vec<crate::knob::Info>,
    /// Run the embedded target `inproc:SPEC` (`mutant:NAME`, `variant:NAME`) on the cases.
    run: fn(&str, &[Case]) -> Vec<CaseResult>,
}

impl SelfCheck {
    /// The self-check of the suites that drive `drives`, if it has one.
    pub fn of(drives: &str) -> Option<SelfCheck> {
        match drives {
            harness_api::DRIVES => Some(SelfCheck {
                noun: "harness",
                mutants: crate::knob::infos::<harness_api::reference::Mutant>(),
                variants: crate::knob::infos::<harness_api::reference::Variant>(),
                run: |spec, cases| {
                    let Ok(h) = harness_api::Harness::parse(&format!("inproc:{spec}")) else {
                        return vec![];
                    };
                    par_each(
                        cases,
                        harness_api::selfcheck::JOBS,
                        &|c| harness_api::run_case(c, &h),
                        &|_| {},
                    )
                },
            }),
            core_api::DRIVES => Some(SelfCheck {
                noun: "core",
                mutants: crate::knob::infos::<core_api::reference::Mutant>(),
                variants: crate::knob::infos::<core_api::reference::Variant>(),
                run: |spec, cases| {
                    let Ok(connect) =
                        core_api::connector(&format!("inproc:{spec}"), &Default::default())
                    else {
                        return vec![];
                    };
                    par_each(cases, 2, &|c| core_api::run_case(c, &connect), &|_| {})
                },
            }),
            host::DRIVES => Some(SelfCheck {
                noun: "adapter",
                mutants: host::reference::MUTANTS
                    .iter()
                    .map(|(name, section, about)| crate::knob::Info {
                        name,
                        about,
                        sections: std::slice::from_ref(section),
                    })
                    .collect(),
                variants: host::reference::VARIANTS
                    .iter()
                    .map(|(name, about)| crate::knob::Info {
                        name,
                        about,
                        sections: &[],
                    })
                    .collect(),
                run: |spec, cases| {
                    let Ok(connect) =
                        host::connector(&format!("inproc:{spec}"), &Default::default())
                    else {
                        return vec![];
                    };
                    par_each(cases, 2, &|c| host::run_case(c, &connect), &|_| {})
                },
            }),
            _ => None,
        }
    }

    /// The MUST cases of the mutant's own section (or naming it in `killed_by`) that it fails.
    pub fn kills(&self, mutant: &str, cases: &[Case]) -> Vec<String> {
        let Some(m) = self.mutants.iter().find(|m| m.name == mutant) else {
            return vec![];
        };
        let own: Vec<Case> = cases
            .iter()
            .filter(|c| {
                c.level == Level::MUST
                    && (m.sections.iter().any(|s| c.section == *s)
                        || c.killed_by.iter().any(|k| k == mutant))
            })
            .cloned()
            .collect();
        (self.run)(&format!("mutant:{mutant}"), &own)
            .into_iter()
            .filter(|r| matches!(r.verdict, Verdict::Fail(_)))
            .map(|r| r.name)
            .collect()
    }

    /// The MUST cases the variant does not pass (a skip is no failure: the tool it needs was
    /// not offered), explained.
    pub fn variant_failures(&self, variant: &str, cases: &[Case]) -> Vec<String> {
        let must: Vec<Case> = cases
            .iter()
            .filter(|c| c.level == Level::MUST)
            .cloned()
            .collect();
        (self.run)(&format!("variant:{variant}"), &must)
            .into_iter()
            .zip(&must)
            .filter(|(r, _)| !matches!(r.verdict, Verdict::Pass | Verdict::Skip { .. }))
            .map(|(r, c)| r.explain(c))
            .collect()
    }

    /// The MUST cases no mutant of their own section fails, given each mutant's kills.
    pub fn unkilled<'a>(
        cases: &'a [Case],
        kills: impl IntoIterator<Item = &'a String>,
    ) -> Vec<String> {
        let killed: std::collections::BTreeSet<&String> = kills.into_iter().collect();
        cases
            .iter()
            .filter(|c| c.level == Level::MUST && !killed.contains(&c.name()))
            .map(Case::name)
            .collect()
    }
}
