//! Every suite as a libtest-mimic harness: every case × every embedded runtime of its suite is one
//! named test (`contract::03-authorize::write-without-grant::reference`), and every suite's
//! self-check is tests of its own: `mutants::SUITE::NAME` passes only when the suite kills that
//! mutant, `mutants::SUITE::every-must-case-is-killed`, `mutants::SUITE::killed-by-claims-hold`,
//! and `variants::SUITE::NAME` only when the variant passes every MUST case.

use hcpspec::case::{suite_names, Case};
use hcpspec::run::expectations::Expectations;
use hcpspec::run::runner::{Quiet, Runner};
use hcpspec::run::Verdict;
use hcpspec::suites::ledger;
use hcpspec::suites::selfcheck::{Memo, SelfCheck, TrialId};
use hcpspec::suites::{Context, Loaded};
use libtest_mimic::{Arguments, Trial};
use std::path::Path;
use std::sync::Arc;

/// The checked-in snapshots, `snapshots/<runtime>/<suite>/<case-id>.snap`.
fn snapshot_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots")
}

/// One case on one embedded runtime, judged by the same runner as `hcpspec run`; its
/// observations are then read against the checked-in snapshot by insta itself (settings bound
/// to the case file), so `cargo insta review` and `cargo insta test --unreferenced=reject` work
/// on what `hcpspec run --snapshots` writes. HCPSPEC_ACCEPT=1 (or INSTA_UPDATE=always) accepts.
fn judge(
    l: &Loaded,
    case: &Case,
    ctx: &Context,
    spec: &str,
    memo: &Memo,
) -> Result<(), libtest_mimic::Failed> {
    // One of the places of the suite's self-check: a wait-bound suite's cases and its
    // mutants' share them.
    let place = memo.place();
    let expectations = Expectations::default();
    let runner = Runner::new(&l.info, std::slice::from_ref(case), &expectations);
    let target = l.suite.target(spec, ctx)?;
    let result = runner.run(&[target], &mut Quiet)?;
    drop(place);
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
fn no_orphan_snapshots(suites: &[Loaded]) -> Result<(), libtest_mimic::Failed> {
    let root = snapshot_root();
    let mut orphans = Vec::new();
    for rt in std::fs::read_dir(&root)?.flatten() {
        for suite_dir in std::fs::read_dir(rt.path())?.flatten() {
            let name = suite_dir.file_name().to_string_lossy().into_owned();
            let suite = suites.iter().find(|l| l.info.name == name);
            let runtimes: Vec<String> = suite
                .map(|l| {
                    l.info
                        .embedded
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
                    .is_some_and(|l| l.cases.iter().any(|c| Some(&c.id) == stem.as_ref()))
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

/// The self-check of one loaded suite.
fn self_check<'a>(l: &'a Loaded, ctx: &'a Context, memo: &'a Memo) -> SelfCheck<'a> {
    SelfCheck {
        suite: l.suite,
        info: &l.info,
        cases: &l.cases,
        ctx,
        memo,
    }
}

/// The sentence-level kill matrix of one suite: `sentences::SUITE::ledger` (its ledgers read,
/// every row's state fits its cases and killer, the summaries and the README count the states
/// as the rows give them) and `sentences::SUITE::LEDGER::N` for each row naming a killer (the
/// killer fails one of the row's MUST cases on an expectation the case wrote). Every allowed
/// variant passes those cases: `variants::SUITE::*` runs every MUST case.
fn sentence_trials(
    trials: &mut Vec<Trial>,
    suites: &Arc<Vec<Loaded>>,
    si: usize,
    ctx: &Arc<Context>,
    memo: &Arc<Memo>,
    rows: Result<Vec<ledger::Row>, hcpspec::error::BadInput>,
    vectors: &Path,
) {
    let l = &suites[si];
    let name = l.info.name.clone();
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            let ledger = TrialId::Sentence {
                suite: name,
                row: None,
            };
            trials.push(Trial::test(ledger.to_string(), move || Err(e.into())));
            return;
        }
    };
    let (all, vectors2) = (suites.clone(), vectors.to_path_buf());
    let rows2 = rows.clone();
    let ledger = TrialId::Sentence {
        suite: name.clone(),
        row: None,
    };
    trials.push(Trial::test(ledger.to_string(), move || {
        let l = &all[si];
        let mutants: Vec<&str> = l.suite.mutants().iter().map(|m| m.name).collect();
        let mut problems = ledger::problems(&rows2, &l.cases, &mutants);
        problems.extend(summaries(&l.info, &rows2, &vectors2));
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    }));
    for row in rows.into_iter().filter(|r| !r.killers.is_empty()) {
        let (suites, ctx, memo) = (suites.clone(), ctx.clone(), memo.clone());
        let trial = TrialId::Sentence {
            suite: name.clone(),
            row: Some((row.ledger.trim_start_matches("../").into(), row.number)),
        };
        trials.push(Trial::test(trial.to_string(), move || {
            let proofs = self_check(&suites[si], &ctx, &memo).prove(&row)?;
            let survivors: Vec<String> = proofs
                .iter()
                .filter(|(_, p)| p.killed_by.is_empty())
                .map(|(killer, proof)| format!(
                    "{} (line {}): killer `{killer}` survives: it fails none of the row's MUST cases on an expectation the case wrote{}{}",
                    row.at(),
                    row.line,
                    if row.checks.is_empty() { String::new() } else { format!(" nor on the checks {:?}", row.checks) },
                    if proof.elsewhere.is_empty() { String::new() } else { format!("; it fails only elsewhere: {}", proof.elsewhere.join(", ")) },
                ))
                .collect();
            if survivors.is_empty() {
                return Ok(());
            }
            Err(format!("{}\n  sentence: {}", survivors.join("\n"), row.sentence).into())
        }));
    }
}

/// Each ledger's summary table (`| state | rows |`) and the README's row for the suite (`| suite |
/// sentences | covered | …`) against the counts the rows give.
fn summaries(info: &hcpspec::case::SuiteInfo, rows: &[ledger::Row], vectors: &Path) -> Vec<String> {
    use ledger::State;
    let mut problems = Vec::new();
    for file in &info.ledgers {
        let mine: Vec<ledger::Row> = rows.iter().filter(|r| &r.ledger == file).cloned().collect();
        let counts = ledger::counts(&mine);
        let text = std::fs::read_to_string(vectors.join(&info.name).join(file)).unwrap_or_default();
        let mut seen = std::collections::BTreeMap::new();
        let mut table = false;
        for line in text.lines() {
            let c = ledger::cells(line);
            if !line.trim_start().starts_with('|') {
                table = false;
                continue;
            }
            if c.len() == 2 && c[0] == "state" && c[1] == "rows" {
                table = true;
                continue;
            }
            if table {
                if let Some(s) = State::ALL.iter().find(|s| s.label() == c[0]) {
                    seen.insert(*s, c[1].parse::<usize>().unwrap_or(usize::MAX));
                } else if c[0] == "total" {
                    let total = c[1].parse::<usize>().unwrap_or(usize::MAX);
                    if total != mine.iter().filter(|r| r.state.is_some()).count() {
                        problems.push(format!(
                            "{file}: the summary's total is {total}, the rows give {}",
                            mine.iter().filter(|r| r.state.is_some()).count()
                        ));
                    }
                }
            }
        }
        for s in State::ALL {
            match seen.get(&s) {
                Some(n) if *n == counts[&s] => {}
                Some(n) => problems.push(format!(
                    "{file}: the summary says {n} `{}`, the rows give {}",
                    s.label(),
                    counts[&s]
                )),
                None => problems.push(format!(
                    "{file}: no summary row `| {} | {} |` under `| state | rows |`",
                    s.label(),
                    counts[&s]
                )),
            }
        }
    }
    // The README's table of sentences: one row per suite.
    let readme = std::fs::read_to_string(vectors.join("../README.md")).unwrap_or_default();
    let counts = ledger::counts(rows);
    let total: usize = counts.values().sum();
    let mut want = vec![total.to_string()];
    want.extend(State::ALL.iter().map(|s| counts[s].to_string()));
    let found = readme.lines().map(ledger::cells).find(|c| {
        c.first().map(|x| x.trim_matches('`')) == Some(info.name.as_str()) && c.len() == 7
    });
    match found {
        Some(c) if c[1..] == want[..] => {}
        Some(c) => problems.push(format!("README.md: the sentences row of `{}` says {:?}, the ledgers give {:?} (sentences, then {})", info.name, &c[1..], want, State::ALL.map(State::label).join(", "))),
        None if info.ledgers.is_empty() => {}
        None => problems.push(format!("README.md: no row `| {} | {} |` in its table of sentences", info.name, want.join(" | "))),
    }
    problems
}

fn main() {
    let scratch = scratch_on_tmpfs();
    let mut args = Arguments::from_args();
    // Most trials wait (on scripted clocks, on a core's answer, on a memo's place), and each
    // suite's memo bounds what plays at once: many threads unless --test-threads says (the
    // RUST_TEST_THREADS that .cargo/config.toml sets for the other test binaries is not read).
    // One trial (`--exact NAME`, a process per trial under nextest) runs on the main thread:
    // libtest-mimic would start all 64 for it.
    let one = args.exact && args.filter.is_some();
    args.test_threads = args.test_threads.or(Some(if one { 1 } else { 64 }));
    // insta finds the workspace with `cargo metadata` once per process unless told: under
    // nextest, a process per case trial.
    if std::env::var_os("INSTA_WORKSPACE_ROOT").is_none() {
        std::env::set_var("INSTA_WORKSPACE_ROOT", env!("CARGO_MANIFEST_DIR"));
    }
    if std::env::var("HCPSPEC_ACCEPT").is_ok_and(|v| v == "1") {
        // Before any thread starts: insta accepts every snapshot it reads.
        std::env::set_var("INSTA_UPDATE", "always");
    }
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let ctx = Arc::new(Context::new(
        &vectors,
        Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")),
    ));
    // nextest runs each trial in a process of its own (`--exact NAME`): such a process loads
    // only what that trial plays. Should that miss the trial, everything is loaded, so a trial
    // run alone is the trial of a whole run.
    let only: Option<String> = args.filter.clone().filter(|_| args.exact);
    let loaded = match only.as_deref().map(|t| load_for(&vectors, t)) {
        Some(Ok(Some(l))) => Ok(vec![l]),
        Some(Err(e)) => Err(e),
        _ => load_all(&vectors),
    };
    // Only a mutant's trial (its likeliest kills) and a ledger's read the ledgers.
    let ledgers = only.as_deref().is_none_or(|t| {
        matches!(
            t.parse(),
            Ok(TrialId::Mutant { .. } | TrialId::Sentence { .. })
        )
    });
    let mut trials = match loaded {
        Ok(suites) => all_trials(suites, &ctx, &vectors, ledgers),
        Err(e) => exit_on(e),
    };
    if let Some(t) = only.filter(|t| !trials.iter().any(|x| x.name() == t)) {
        let all = load_all(&vectors).unwrap_or_else(|e| exit_on(e));
        trials = all_trials(all, &ctx, &vectors, true);
        trials.retain(|x| x.name() == t);
    }
    let conclusion = libtest_mimic::run(&args, trials);
    drop(scratch);
    conclusion.exit();
}

/// Scratch on a tmpfs where there is one and TMPDIR names none, as `.ci/run` does: every
/// contract case makes a folder of packs, and on an ext4 without a journal each new inode is
/// searched for past the ones deleted in the last minutes, which was most of the system time of
/// the contract suite's self-check. Set before any thread starts; removed at the end.
fn scratch_on_tmpfs() -> Option<tempfile::TempDir> {
    if std::env::var_os("TMPDIR").is_some() {
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("hcpspec-suites.")
        .tempdir_in("/dev/shm")
        .ok()?;
    std::env::set_var("TMPDIR", dir.path());
    Some(dir)
}

fn exit_on(e: hcpspec::case::CaseError) -> ! {
    eprintln!("error: {e}");
    std::process::exit(2);
}

/// Under nextest, a folder for this run's self-check results, shared by its processes (one per
/// trial), as one memo is by the trials of `cargo test`: `target/tmp/selfcheck/RUN_ID/SUITE/`.
/// Folders of runs untouched for an hour are removed (a folder lost is only played again).
fn shared_folder() -> Option<std::path::PathBuf> {
    let id = std::env::var("NEXTEST_RUN_ID").ok()?;
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("selfcheck");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3_600);
    for e in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        if e.metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < old)
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let run = root.join(id);
    std::fs::create_dir_all(&run).ok()?;
    Some(run)
}

/// Every suite under `vectors`, whole.
fn load_all(vectors: &Path) -> Result<Vec<Loaded>, hcpspec::case::CaseError> {
    suite_names(vectors)?
        .iter()
        .map(|n| hcpspec::suites::load(vectors, n))
        .collect()
}

/// What the trial named `trial` plays, and no more: the suite its name says, with only the
/// cases it plays (a case's own trial: that case; a mutant's: the MUST cases it answers for; a
/// ledger row's: the row's cases, or every MUST case for a row claiming a check; a variant's:
/// every MUST case). `None` for a trial that needs every suite whole, or for a name of no trial.
fn load_for(vectors: &Path, trial: &str) -> Result<Option<Loaded>, hcpspec::case::CaseError> {
    use hcpspec::case::{Head, Keep, Level};
    let Ok(trial) = trial.parse::<TrialId>() else {
        return Ok(None);
    };
    let suite = trial.suite();
    if !suite_names(vectors)?.iter().any(|n| n == suite) {
        return Ok(None);
    }
    let info = hcpspec::case::load_suite_info(vectors, suite)?;
    let code = hcpspec::suites::of(vectors, &info)?;
    let must = |h: &Head| h.level == Level::MUST;
    let some = |keep: &Keep| hcpspec::suites::load_some(vectors, suite, keep).map(Some);
    match &trial {
        TrialId::Case { group, id, .. } => some(&Keep::Named(&|g, i| g == group && i == id)),
        TrialId::Mutant { name, .. } => match code.mutants().into_iter().find(|x| x.name == name) {
            Some(m) => some(&Keep::Head(&|h| {
                must(h)
                    && (m.sections.contains(&h.section.as_str())
                        || h.killed_by.iter().any(|k| k == m.name))
            })),
            None => hcpspec::suites::load(vectors, suite).map(Some),
        },
        TrialId::Variant { .. } => some(&Keep::Head(&must)),
        TrialId::Sentence {
            row: Some((file, number)),
            ..
        } => {
            let row = ledger::read(vectors, &info, &code.checks())
                .unwrap_or_default()
                .into_iter()
                .find(|r| r.ledger.trim_start_matches("../") == file && r.number == *number);
            match row {
                Some(r) if r.checks.is_empty() => some(&Keep::Named(&|g, i| {
                    r.cases.contains(&format!("{suite}::{g}::{i}"))
                })),
                Some(_) => some(&Keep::Head(&must)),
                None => hcpspec::suites::load(vectors, suite).map(Some),
            }
        }
        TrialId::Sentence { row: None, .. } => hcpspec::suites::load(vectors, suite).map(Some),
    }
}

/// Every trial of `suites` (without the ledger rows' unless `ledgers`).
fn all_trials(
    suites: Vec<Loaded>,
    ctx: &Arc<Context>,
    vectors: &Path,
    ledgers: bool,
) -> Vec<Trial> {
    let suites = Arc::new(suites);
    let vectors = vectors.to_path_buf();
    let mut trials = Vec::new();
    let all = suites.clone();
    trials.push(Trial::test("snapshots::no-orphans", move || {
        no_orphan_snapshots(&all)
    }));
    // One memo per suite: every (target, case) pair plays once, and at most the suite's
    // self-check jobs play at once, whichever trials ask.
    let run = shared_folder();
    let memos: Vec<Arc<Memo>> = suites
        .iter()
        .map(|l| {
            let jobs = l.suite.self_check_jobs();
            Arc::new(match &run {
                Some(run) => Memo::shared(jobs, run.join(&l.info.name)),
                None => Memo::new(jobs),
            })
        })
        .collect();
    for (si, l) in suites.iter().enumerate() {
        for (i, case) in l.cases.iter().enumerate() {
            for spec in &l.info.embedded {
                let rt = spec.strip_prefix("inproc:").unwrap_or(spec);
                let (suites, ctx, spec) = (suites.clone(), ctx.clone(), spec.clone());
                let memo = memos[si].clone();
                let trial = TrialId::Case {
                    suite: case.suite.clone(),
                    group: case.group.clone(),
                    id: case.id.clone(),
                    runtime: rt.into(),
                };
                trials.push(Trial::test(trial.to_string(), move || {
                    let l = &suites[si];
                    judge(l, &l.cases[i], &ctx, &spec, &memo)
                }));
            }
        }
    }
    // Every suite's self-check: each mutant fails a MUST case it answers for, every MUST case
    // falls to one, every killed_by claim holds, each allowed variant passes every MUST case.
    // Each trial plays only what it needs (a trial alone under nextest does not replay the
    // matrix); the ledger rows' killers are each mutant's likeliest kills, tried first.
    for (si, l) in suites.iter().enumerate() {
        let name = l.info.name.clone();
        let memo = &memos[si];
        let rows = if ledgers {
            self_check(l, ctx, memo).ledger(&vectors)
        } else {
            Ok(vec![])
        };
        let hints: Arc<Vec<(String, String)>> = Arc::new(
            rows.iter()
                .flatten()
                .flat_map(|r| r.killers.iter().map(move |k| (r, k)))
                .flat_map(|(r, k)| r.cases.iter().map(move |c| (c.clone(), k.clone())))
                .collect(),
        );
        for m in l.suite.mutants() {
            let (suites, ctx, memo) = (suites.clone(), ctx.clone(), memo.clone());
            let mine: Vec<String> = hints
                .iter()
                .filter(|(_, k)| k == m.name)
                .map(|(c, _)| c.clone())
                .collect();
            let trial = TrialId::Mutant {
                suite: name.clone(),
                name: m.name.into(),
            };
            trials.push(Trial::test(trial.to_string(), move || {
                if self_check(&suites[si], &ctx, &memo)
                    .first_kill(&m, &mine)?
                    .is_some()
                {
                    return Ok(());
                }
                Err(format!(
                    "mutant {} ({}) passes every MUST case of sections {:?} and every case naming it in killed_by",
                    m.name, m.about, m.sections
                )
                .into())
            }));
        }
        let (suites2, ctx2, memo2, hints2) =
            (suites.clone(), ctx.clone(), memo.clone(), hints.clone());
        let every = TrialId::Mutant {
            suite: name.clone(),
            name: "every-must-case-is-killed".into(),
        };
        trials.push(Trial::test(every.to_string(), move || {
            let unkilled = self_check(&suites2[si], &ctx2, &memo2).unkilled_by_search(&hints2)?;
            if unkilled.is_empty() {
                return Ok(());
            }
            Err(format!(
                "MUST cases no mutant of their own section (or killed_by) fails ({}):\n  {}",
                unkilled.len(),
                unkilled.join("\n  ")
            )
            .into())
        }));
        let (suites3, ctx3, memo3) = (suites.clone(), ctx.clone(), memo.clone());
        let claims = TrialId::Mutant {
            suite: name.clone(),
            name: "killed-by-claims-hold".into(),
        };
        trials.push(Trial::test(claims.to_string(), move || {
            let claims = self_check(&suites3[si], &ctx3, &memo3).false_claims_played()?;
            if claims.is_empty() {
                Ok(())
            } else {
                Err(claims.join("\n").into())
            }
        }));
        sentence_trials(&mut trials, &suites, si, ctx, memo, rows, &vectors);
        for v in l.suite.variants() {
            let (suites, ctx, memo) = (suites.clone(), ctx.clone(), memo.clone());
            let noun = l.suite.noun();
            let trial = TrialId::Variant {
                suite: name.clone(),
                name: v.name.into(),
            };
            trials.push(Trial::test(trial.to_string(), move || {
                let failed = self_check(&suites[si], &ctx, &memo).variant_failures(&v)?;
                if failed.is_empty() {
                    return Ok(());
                }
                Err(format!(
                    "the allowed variant {noun} {} fails {} MUST case(s): each asserts a choice the spec leaves open\n{}",
                    v.name,
                    failed.len(),
                    failed.join("\n")
                )
                .into())
            }));
        }
    }
    trials
}
