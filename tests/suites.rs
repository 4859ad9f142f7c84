//! Every suite as a libtest-mimic harness: every case × every embedded runtime of its suite is one
//! named test (`contract::03-authorize::write-without-grant::reference`), and every mutant is
//! one test (`mutants::no-confirm-gate`) that passes only when the suite kills it.

use hcpspec::adapter::{Checked, Inproc};
use hcpspec::case::{load_suite, load_suite_info, suite_names, Case, Suite};
use hcpspec::run::expectations::Expectations;
use hcpspec::run::mutants::KillMatrix;
use hcpspec::run::runner::{Quiet, Runner, Snapshots, Target};
use hcpspec::run::{run_case, RunEnv, Verdict};
use hcpspec::runtime::mutant::Mutant;
use libtest_mimic::{Arguments, Trial};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The checked-in snapshots, `snapshots/<runtime>/<suite>/<case-id>.snap`.
fn snapshot_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// One case on one embedded runtime, judged by the same runner as `hcpspec run`; its
/// observations are then read against the checked-in snapshot by insta itself (settings bound
/// to the case file), so `cargo insta review` and `cargo insta test --unreferenced=reject` work
/// on what `hcpspec run --snapshots` writes. HCPSPEC_ACCEPT=1 (or INSTA_UPDATE=always) accepts.
fn judge(
    suite: &Suite,
    case: &Case,
    env: &RunEnv,
    spec: &str,
) -> Result<(), libtest_mimic::Failed> {
    let expectations = Expectations::default();
    let runner = Runner {
        suite,
        cases: std::slice::from_ref(case),
        env,
        expectations: &expectations,
        snapshots: Snapshots::Off,
        jobs: 1,
    };
    let target = Target::for_suite(suite, spec, &Default::default())?;
    let result = runner.run(&[target], &mut Quiet)?;
    let run = &result.runtimes[0];
    let r = &run.cases[0];
    if r.verdict != Verdict::Pass {
        return Err(r.explain(case).into());
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(
        snapshot_root()
            .join(hcpspec::snapshot::runtime_dir(&run.name()))
            .join(&case.suite),
    );
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(&case.file);
    let body = hcpspec::snapshot::body(&r.name, &r.observations);
    let id = case.id.clone();
    // insta reports a mismatch by panicking; keep it this trial's failure, with its diff.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        settings.bind(|| insta::assert_snapshot!(id, body, "observations"));
    }))
    .map_err(|e| {
        let why = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        format!(
            "{} drifted from its snapshot (conformant, but the observations changed): {why}\nreview with `cargo insta review`, or accept all with HCPSPEC_ACCEPT=1 cargo test",
            r.name
        )
        .into()
    })
}

/// Snapshots of no case (a case deleted or renamed, a runtime gone) are reported, so that the
/// snapshot folder never carries what no test reads.
fn no_orphan_snapshots(suites: &[(Suite, Vec<Case>)]) -> Result<(), libtest_mimic::Failed> {
    let root = snapshot_root();
    let mut orphans = Vec::new();
    for rt in std::fs::read_dir(&root)?.flatten() {
        for suite_dir in std::fs::read_dir(rt.path())?.flatten() {
            let name = suite_dir.file_name().to_string_lossy().into_owned();
            let suite = suites.iter().find(|(s, _)| s.name == name);
            let runtimes: Vec<String> = suite
                .map(|(s, _)| {
                    s.embedded
                        .iter()
                        .map(|e| {
                            hcpspec::snapshot::runtime_dir(e.strip_prefix("inproc:").unwrap_or(e))
                        })
                        .collect()
                })
                .unwrap_or_default();
            for f in std::fs::read_dir(suite_dir.path())?.flatten() {
                let p = f.path();
                let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                let known = suite
                    .is_some_and(|(_, cases)| cases.iter().any(|c| Some(&c.id) == stem.as_ref()))
                    && runtimes.contains(&rt.file_name().to_string_lossy().into_owned());
                if p.extension().is_some_and(|x| x == "snap") && !known {
                    orphans.push(p.display().to_string());
                }
            }
        }
    }
    if orphans.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} snapshot(s) of no case on no embedded runtime (delete them):\n  {}",
            orphans.len(),
            orphans.join("\n  ")
        )
        .into())
    }
}

fn main() {
    let args = Arguments::from_args();
    if std::env::var("HCPSPEC_ACCEPT").is_ok_and(|v| v == "1") {
        // Before any thread starts: insta accepts every snapshot it reads.
        std::env::set_var("INSTA_UPDATE", "always");
    }
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
    let all = suites.clone();
    trials.push(Trial::test("snapshots::no-orphans", move || {
        no_orphan_snapshots(&all)
    }));
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
    // The harness and core suites' self-checks: each mutant fails a MUST case of its own
    // section, every MUST case falls to one, each allowed variant passes every MUST case.
    for (suite, suite_cases) in suites.iter() {
        let Some(sc) = hcpspec::suites::SelfCheck::of(&suite.drives) else {
            continue;
        };
        let sc = Arc::new(sc);
        let cases = Arc::new(suite_cases.clone());
        let noun = sc.noun;
        type Kills = std::collections::BTreeMap<&'static str, Vec<String>>;
        let kills: Arc<OnceLock<Kills>> = Arc::new(OnceLock::new());
        let compute = |sc: &hcpspec::suites::SelfCheck, cases: &[Case]| -> Kills {
            sc.mutants
                .iter()
                .map(|m| (m.name, sc.kills(m.name, cases)))
                .collect()
        };
        for m in sc.mutants.iter().map(|m| m.name) {
            let (sc, cases, kills) = (sc.clone(), cases.clone(), kills.clone());
            trials.push(Trial::test(format!("{noun}-mutants::{m}"), move || {
                if kills.get_or_init(|| compute(&sc, &cases))[m].is_empty() {
                    return Err(
                        format!("mutant {noun} {m} passes every MUST case of its section").into(),
                    );
                }
                Ok(())
            }));
        }
        let (sc2, cases2, kills2) = (sc.clone(), cases.clone(), kills.clone());
        trials.push(Trial::test(
            format!("{noun}-mutants::every-must-case-is-killed"),
            move || {
                let kills = kills2.get_or_init(|| compute(&sc2, &cases2));
                let unkilled =
                    hcpspec::suites::SelfCheck::unkilled(&cases2, kills.values().flatten());
                if unkilled.is_empty() {
                    return Ok(());
                }
                Err(format!(
                    "MUST cases no mutant of their section fails:\n  {}",
                    unkilled.join("\n  ")
                )
                .into())
            },
        ));
        for v in sc.variants.iter().map(|v| v.name) {
            let (sc, cases) = (sc.clone(), cases.clone());
            trials.push(Trial::test(format!("{noun}-variants::{v}"), move || {
                let failed = sc.variant_failures(v, &cases);
                if failed.is_empty() {
                    return Ok(());
                }
                Err(format!(
                    "the allowed variant {noun} {v} fails {} MUST case(s): each asserts a choice the spec leaves open\n{}",
                    failed.len(),
                    failed.join("\n")
                )
                .into())
            }));
        }
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
