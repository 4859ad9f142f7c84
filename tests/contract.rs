//! The contract suite as a libtest-mimic harness: every case × every embedded runtime is one
//! named test (`contract::03-authorize::write-without-grant::reference`), and every mutant is
//! one test (`mutants::no-confirm-gate`) that passes only when the suite kills it.

use hcpspec::adapter::{Checked, Inproc};
use hcpspec::case::{load_suite, Case};
use hcpspec::run::mutants::KillMatrix;
use hcpspec::run::{run_case, RunEnv, Verdict};
use hcpspec::runtime::{mutant::Mutant, EMBEDDED};
use hcpspec::snapshot;
use libtest_mimic::{Arguments, Trial};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// Conformance is the case's matchers; drift is the snapshot. Both must hold here: a change of
/// a denial text fails `cargo test` until the snapshot is accepted (HCPSPEC_ACCEPT=1, or
/// `cargo insta review` on the `.snap.new` this writes).
fn check_snapshot(
    rt: &str,
    case: &Case,
    result: &hcpspec::run::CaseResult,
) -> Result<(), libtest_mimic::Failed> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let accept = std::env::var("HCPSPEC_ACCEPT").is_ok_and(|v| v == "1")
        || std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always");
    match snapshot::check(&root, rt, case, &result.observations, accept)? {
        None => Ok(()),
        Some(_) if accept => Ok(()),
        Some((drift, written)) => {
            let what = match drift {
                snapshot::Drift::New => "no snapshot yet".to_string(),
                snapshot::Drift::Changed { diff } => diff,
            };
            Err(format!(
                "{} drifted from its snapshot (conformant, but the observations changed):\n{what}\nreview {} with `cargo insta review`, or accept all with HCPSPEC_ACCEPT=1 cargo test",
                result.name,
                written.display()
            )
            .into())
        }
    }
}

fn main() {
    let args = Arguments::from_args();
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let cases = match load_suite(&vectors, "contract") {
        Ok(c) => Arc::new(c),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let env = match RunEnv::new(&vectors, Path::new(env!("CARGO_BIN_EXE_hcpspec-probe"))) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let mut trials = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        for &rt in EMBEDDED {
            let (cases, env) = (cases.clone(), env.clone());
            trials.push(Trial::test(format!("{}::{rt}", case.name()), move || {
                let case = &cases[i];
                let mut adapter = Checked(Inproc::new(rt).expect("embedded runtime"));
                let claims = hcpspec::adapter::embedded_claims(rt).expect("embedded runtime");
                let result = run_case(case, &mut adapter, &env, &claims);
                if result.verdict != Verdict::Pass {
                    return Err(result.explain(case).into());
                }
                check_snapshot(rt, case, &result)
            }));
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
            let claims = hcpspec::adapter::embedded_claims(&name).expect("embedded variant");
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
