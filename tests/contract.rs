//! The contract suite as a libtest-mimic harness: every case × every embedded runtime is one
//! named test (`contract::03-authorize::write-without-grant::reference`), and every mutant is
//! one test (`mutants::no-confirm-gate`) that passes only when the suite kills it.

use hcpspec::adapter::{Checked, Inproc};
use hcpspec::case::{load_suite, load_suite_info, suite_names, Case, Suite};
use hcpspec::run::expectations::Expectations;
use hcpspec::run::runner::{Quiet, Runner, Snapshots, Target};
use hcpspec::run::mutants::KillMatrix;
use hcpspec::run::{run_case, RunEnv, Verdict};
use hcpspec::runtime::mutant::Mutant;
use libtest_mimic::{Arguments, Trial};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Snapshots are checked along the runner's own path: a change of a denial text fails
/// `cargo test` until accepted (HCPSPEC_ACCEPT=1, or `cargo insta review` on the `.snap.new`).
fn snapshots() -> Snapshots {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let accept = std::env::var("HCPSPEC_ACCEPT").is_ok_and(|v| v == "1")
        || std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always");
    if accept {
        Snapshots::Accept(root)
    } else {
        Snapshots::Check(root)
    }
}

/// One case on one embedded runtime, judged by the same runner as `hcpspec run`.
fn judge(suite: &Suite, case: &Case, env: &RunEnv, spec: &str) -> Result<(), libtest_mimic::Failed> {
    let expectations = Expectations::default();
    let runner = Runner {
        suite,
        cases: std::slice::from_ref(case),
        env,
        expectations: &expectations,
        snapshots: snapshots(),
        jobs: 1,
    };
    let target = Target {
        spec: spec.to_string(),
        connect: hcpspec::adapter::connector(spec)?,
    };
    let result = runner.run(&[target], &mut Quiet)?;
    let r = &result.runtimes[0].cases[0];
    if r.verdict != Verdict::Pass {
        return Err(r.explain(case).into());
    }
    if let Some(d) = &r.annotations.drift {
        let what = match d {
            hcpspec::snapshot::Drift::New => "no snapshot yet".to_string(),
            hcpspec::snapshot::Drift::Changed { diff } => diff.clone(),
        };
        return Err(format!(
            "{} drifted from its snapshot (conformant, but the observations changed):\n{what}\nreview the .snap.new with `cargo insta review`, or accept all with HCPSPEC_ACCEPT=1 cargo test",
            r.name
        )
        .into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    // Every suite's cases on its embedded runtimes; the HCP suite's also on mutants and variants.
    let loaded = suite_names(&vectors).and_then(|names| {
        names
            .iter()
            .map(|n| Ok((load_suite_info(&vectors, n)?, load_suite(&vectors, n)?)))
            .collect::<Result<Vec<_>, _>>()
    });
    let suites = match loaded {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let cases: Arc<Vec<Case>> = Arc::new(
        suites
            .iter()
            .filter(|(s, _)| s.drives == "hcp-runtime")
            .flat_map(|(_, c)| c.clone())
            .collect(),
    );
    let env = match RunEnv::new(&vectors, Path::new(env!("CARGO_BIN_EXE_hcpspec-probe"))) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let mut trials = Vec::new();
    for (si, (suite, suite_cases)) in suites.iter().enumerate() {
        for (i, case) in suite_cases.iter().enumerate() {
            for spec in &suite.embedded {
                let rt = spec.strip_prefix("inproc:").unwrap_or(spec);
                let (suites, env, spec) = (suites.clone(), env.clone(), spec.clone());
                trials.push(Trial::test(format!("{}::{rt}", case.name()), move || {
                    let (suite, cases) = &suites[si];
                    judge(suite, &cases[i], &env, &spec)
                }));
            }
        }
    }
    let matrix: Arc<OnceLock<KillMatrix>> = Arc::new(OnceLock::new());
    for &m in Mutant::ALL {
        let (cases, env, matrix) = (cases.clone(), env.clone(), matrix.clone());
        trials.push(Trial::test(format!("mutants::{}", m.name()), move || {
            let matrix = matrix.get_or_init(|| KillMatrix::compute(&cases, &env, 2));
            if matrix.kills(m).is_empty() {
                return Err(format!(
                    "mutant {} ({}) passes every MUST case of sections {:?}",
                    m.name(),
                    m.what(),
                    m.sections()
                )
                .into());
            }
            Ok(())
        }));
    }
    let (cases3, env3, matrix3) = (cases.clone(), env.clone(), matrix.clone());
    trials.push(Trial::test("mutants::killed-by-claims-hold", move || {
        let matrix = matrix3.get_or_init(|| KillMatrix::compute(&cases3, &env3, 2));
        let claims = matrix.false_claims(&cases3);
        if claims.is_empty() {
            Ok(())
        } else {
            Err(claims.join("\n").into())
        }
    }));
    for v in hcpspec::runtime::variant::Variant::ALL
        .iter()
        .map(|v| v.name())
        .chain(["all"])
    {
        let (cases, env) = (cases.clone(), env.clone());
        trials.push(Trial::test(format!("variants::{v}"), move || {
            let name = format!("variant:{v}");
            let claims = hcpspec::run::embedded_claims(&name).expect("embedded variant");
            let failed: Vec<String> = cases
                .iter()
                .filter(|c| c.level == hcpspec::case::Level::MUST)
                .filter_map(|c| {
                    let mut a = Checked(Inproc::new(&name).expect("embedded variant"));
                    let r = run_case(c, &mut a, &env, &claims);
                    (r.verdict != Verdict::Pass).then(|| r.explain(c))
                })
                .collect();
            if failed.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "the allowed variant {v} fails {} MUST case(s): each asserts a choice the spec leaves open\n{}",
                    failed.len(),
                    failed.join("\n")
                )
                .into())
            }
        }));
    }
    let (cases2, env2, matrix2) = (cases.clone(), env.clone(), matrix.clone());
    trials.push(Trial::test(
        "mutants::every-must-case-is-killed",
        move || {
            let matrix = matrix2.get_or_init(|| KillMatrix::compute(&cases2, &env2, 2));
            let unkilled: Vec<String> = matrix
                .unkilled_must(&cases2)
                .iter()
                .map(|c: &&Case| c.name())
                .collect();
            if unkilled.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "MUST cases no mutant fails ({}):\n  {}",
                    unkilled.len(),
                    unkilled.join("\n  ")
                )
                .into())
            }
        },
    ));
    libtest_mimic::run(&args, trials).exit();
}
