//! `hcpspec fuzz` finds contract mutants from a fixed seed within a small budget, finds nothing
//! on the reference, and its findings are valid case files that reproduce; the found cases
//! committed under `vectors/found/` load, validate and pass on the reference.

use hcpspec::case::{load_case, load_denials};
use hcpspec::run::Verdict;
use hcpspec::suites::hcp::fuzz::{Config, Fuzzer, Report};
use hcpspec::suites::hcp::shim::inproc;
use hcpspec::suites::hcp::{run_case, RunEnv};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::OnceLock;

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

fn claims(name: &str) -> hcpspec::case::matcher::Claims {
    hcpspec::suites::hcp::embedded_claims(name).unwrap()
}

fn env() -> &'static RunEnv {
    static ENV: OnceLock<RunEnv> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = RunEnv::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")))
            .expect("run env");
        env.uncapped = true; // as `hcpspec fuzz` runs
        env
    })
}

fn fuzz(runtime: &str, seconds: f64, out: Option<&Path>) -> Report {
    let mut cfg = Config::new(runtime);
    cfg.seed = 1;
    cfg.seconds = seconds;
    cfg.max_findings = Some(1);
    cfg.shrink_budget = 60;
    cfg.out = out.map(Path::to_path_buf);
    let fuzzer = Fuzzer::new(cfg, env()).expect("fuzzer");
    fuzzer
        .run(&AtomicBool::new(false), &|_| {}, &|_| {})
        .expect("fuzz run")
}

/// One mutant per kind of oracle: the authoriser (3), the confirm gate (4), the linter at
/// install (2), availability (9) and Sense (10).
#[test]
fn finds_mutants_and_writes_reproducing_cases() {
    let out = tempfile::tempdir().unwrap();
    let denials = load_denials(&vectors()).unwrap();
    for m in [
        "no-confirm-gate",
        "default-allow",
        "lint-skipped",
        "availability-without-reason",
        "undeclared-trigger-delivered",
    ] {
        let report = fuzz(&format!("inproc:mutant:{m}"), 8.0, Some(out.path()));
        let f = report
            .findings
            .first()
            .unwrap_or_else(|| panic!("no finding on mutant {m} in {} cases", report.cases));
        assert!(
            f.reproduces,
            "{m}: the finding {} does not reproduce",
            f.rule
        );
        let path = f.path.as_ref().expect("written");
        let case = load_case(path, "found", &hcpspec::suites::hcp::Contract, &denials)
            .unwrap_or_else(|e| panic!("{m}: {e}"));
        let on_ref = run_case(
            &case,
            &mut inproc("reference").unwrap(),
            env(),
            &claims("reference"),
        );
        assert_eq!(
            on_ref.verdict,
            Verdict::Pass,
            "{m}: {}",
            on_ref.explain(&case)
        );
        let on_mutant = run_case(
            &case,
            &mut inproc(&format!("mutant:{m}")).unwrap(),
            env(),
            &claims(&format!("mutant:{m}")),
        );
        assert!(
            !matches!(on_mutant.verdict, Verdict::Pass),
            "{m}: {} passes",
            path.display()
        );
    }
}

#[test]
fn finds_nothing_on_the_reference() {
    let report = fuzz("inproc:reference", 4.0, None);
    assert!(report.cases > 20, "only {} cases", report.cases);
    let found: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("{}: {}", f.rule, f.message))
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}

/// `fuzz` judges a denial's class as `run` does: a runtime that declares no denial map (the
/// README's example shim) has its denial texts unclassified, never a finding (its text for
/// `brain-needs-project` differs from the reference's, which was found at case 25 of seed 1).
#[test]
fn a_runtime_without_a_denial_map_has_no_denial_class_findings() {
    let shim = format!(
        "stdio:python3 {}/examples/python-shim/shim.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut cfg = Config::new(&shim);
    cfg.seed = 1;
    cfg.seconds = 120.0;
    cfg.max_cases = Some(60);
    cfg.shrink_budget = 0;
    let report = Fuzzer::new(cfg, env())
        .expect("fuzzer")
        .run(&AtomicBool::new(false), &|_| {}, &|_| {})
        .expect("fuzz run");
    assert_eq!(report.cases, 60);
    let rules: Vec<&str> = report.findings.iter().map(|f| f.rule).collect();
    assert!(
        !rules.contains(&"differential-denial-class"),
        "findings: {rules:?}"
    );
}

/// `fuzz` from seed 1 by count (no clock in the verdict): `cases` cases, unshrunk, every finding.
fn fuzz_cases(runtime: &str, cases: u64, max_findings: Option<usize>) -> Report {
    let mut cfg = Config::new(runtime);
    cfg.seed = 1;
    cfg.seconds = 3600.0; // only a cap on a hang: the count decides
    cfg.max_cases = Some(cases);
    cfg.max_findings = max_findings;
    cfg.shrink_budget = 0;
    Fuzzer::new(cfg, env())
        .expect("fuzzer")
        .run(&AtomicBool::new(false), &|_| {}, &|_| {})
        .expect("fuzz run")
}

fn named(report: &Report) -> Vec<String> {
    report
        .findings
        .iter()
        .map(|f| format!("{} (case {}): {}", f.rule, f.case_index, f.message))
        .collect()
}

/// A correct runtime that decides the spec's open points its own way
/// (tests/fauxmplementations/open_points_shim.py: its own lint rule names in its `rules` map,
/// only row 2's lint rules, the Binding in a file, minted inside exec, a HOME of its own, Sense
/// on by default, activation last) is no finding: each is a freedom
/// vectors/contract/ASSUMPTIONS.md grants, so the exit code can gate a pull request. Where it
/// differs from the reference, that is a `PROFILE` difference, reported apart.
#[test]
fn a_runtime_deciding_the_open_points_its_own_way_has_no_findings() {
    let shim = format!(
        "stdio:python3 {}/tests/fauxmplementations/open_points_shim.py rule-names spec-lint-rules credential-file mint-in-exec own-home sense-default-on activation-last",
        env!("CARGO_MANIFEST_DIR")
    );
    let report = fuzz_cases(&shim, 60, None);
    assert_eq!(report.cases, 60);
    let found = named(&report);
    assert!(found.is_empty(), "{found:#?}");
}

/// A runtime may refuse a blank Principal id or kind, tenant or project at `runtime.create`
/// (-32602): nothing in the spec gives such an id a meaning. Such a refusal is no runtime error
/// (case 63 of seed 1 has a blank one; it was a `runtime-error` finding).
#[test]
fn a_runtime_refusing_a_blank_id_at_create_has_no_findings() {
    let shim = format!(
        "stdio:python3 {}/tests/fauxmplementations/open_points_shim.py refuse-blank-ids own-json-text",
        env!("CARGO_MANIFEST_DIR")
    );
    let report = fuzz_cases(&shim, 70, None);
    assert_eq!(report.cases, 70);
    let found = named(&report);
    assert!(found.is_empty(), "{found:#?}");
    assert!(
        report.profile.iter().any(|f| f.rule == "runtime-error"),
        "the refusal is reported as a PROFILE difference"
    );
}

/// The allowed variants in-process, every open point at once and three freedom seeds (their own
/// words, orders, shapes and preconditions): no finding.
#[test]
fn the_allowed_variants_have_no_findings() {
    for v in ["all", "freedom:1", "freedom:2", "freedom:3"] {
        let report = fuzz_cases(&format!("inproc:variant:{v}"), 150, None);
        let found = named(&report);
        assert!(found.is_empty(), "variant {v}: {found:#?}");
    }
}

/// The oracles narrowed to what the spec fixes still find the mutants they were made for, by
/// count from seed 1 (scripts/fuzz-mutants.sh proves every mutant within 3000 cases).
#[test]
fn the_narrowed_oracles_still_find_their_mutants() {
    for (m, rule) in [
        ("exec-without-binding", "exec-without-binding"),
        ("sense-while-disabled", "sense-accepted-while-disabled"),
        ("lint-skipped", "install-accepted-bad-pack"),
        ("unknown-bin-allowed", "availability-optimistic"),
        ("inherited-env", "canary-leaked"),
        ("exit-code-ignored", "nonzero-exit-ok"),
        ("denial-thrown", "exec-thrown"),
        // Over-strict: refusing what the spec lets run, once every open point is arranged the
        // permissive way, and a one-fault denial of another class.
        ("read-grant-refused", "differential-denial-class"),
        ("every-write-gated", "differential-exec"),
        ("declared-trigger-dropped", "differential-sense"),
    ] {
        let report = fuzz_cases(&format!("inproc:mutant:{m}"), 600, Some(1));
        let rules: Vec<&str> = report.findings.iter().map(|f| f.rule).collect();
        assert_eq!(rules, [rule], "{m} in {} cases", report.cases);
    }
}

#[test]
fn generation_does_not_depend_on_time_or_threads() {
    let mut cfg = Config::new("inproc:reference");
    cfg.seed = 42;
    let a = Fuzzer::new(cfg.clone(), env()).unwrap();
    cfg.jobs = 2;
    let b = Fuzzer::new(cfg, env()).unwrap();
    for i in [0, 1, 7, 1000] {
        assert_eq!(a.case(i), b.case(i));
    }
}

/// `vectors/found/` holds findings kept as evidence; the contract suite never loads them, but
/// they must stay valid cases that pass on the reference.
#[test]
fn committed_found_cases_load_and_pass_on_the_reference() {
    let dir = vectors().join("found");
    let denials = load_denials(&vectors()).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    for f in files {
        let case = load_case(&f, "found", &hcpspec::suites::hcp::Contract, &denials)
            .unwrap_or_else(|e| panic!("{e}"));
        let r = run_case(
            &case,
            &mut inproc("reference").unwrap(),
            env(),
            &claims("reference"),
        );
        assert_eq!(r.verdict, Verdict::Pass, "{}", r.explain(&case));
    }
    let (_, contract) = hcpspec::suites::load_driving(&vectors(), "hcp-runtime")
        .map(|l| (l.info, l.cases))
        .unwrap();
    assert!(contract.iter().all(|c| c.group != "found"));
}

mod core_api {
    //! `hcpspec fuzz --suite core-api`: a mutant found within a few trials, its finding a case
    //! that fails on the mutant and passes on the reference; the oracle on hand-made observations.

    use super::vectors;
    use hcpspec::case::{load_case, load_denials};
    use hcpspec::run::{Observation, Verdict};
    use hcpspec::suites::core_api::fuzz::{self, broken, Budget};
    use hcpspec::suites::core_api::{connector, run_case};
    use hcpspec::suites::load_suite;
    use serde_json::{json, Value};
    use std::sync::atomic::AtomicBool;

    /// Fuzz from the scripts of these sections only (all with none), so that a test does not
    /// hang on where one seed's trials fall as the suite grows.
    fn fuzz_sections(
        spec: &str,
        trials: u64,
        out: &std::path::Path,
        sections: &[&str],
    ) -> fuzz::Report {
        let cases: Vec<_> = load_suite(&vectors(), "core-api")
            .unwrap()
            .into_iter()
            .filter(|c| sections.is_empty() || sections.contains(&c.section.as_str()))
            .collect();
        let connect = connector(&spec.parse().unwrap(), &Default::default()).unwrap();
        let budget = Budget {
            seed: 1,
            seconds: 60.0,
            trials: Some(trials),
            findings: Some(1),
        };
        fuzz::run(&connect, &cases, budget, Some(out), &AtomicBool::new(false))
    }

    /// Another session's artifact read: found from seed 1 within 60 trials of the artifact
    /// section's scripts, the case shrunk and failing on the mutant at the step the finding names.
    #[test]
    fn finds_another_sessions_artifact_read_and_writes_a_case_that_replays() {
        let dir = tempfile::tempdir().unwrap();
        let r = fuzz_sections(
            "inproc:mutant:other-session-readable",
            60,
            dir.path(),
            &["4b"],
        );
        let (why, _, path) = r.findings.first().expect("the mutant is found");
        assert!(why.contains("another session's artifact"), "{why}");
        let path = path.as_ref().expect("written");
        let denials = load_denials(&vectors()).unwrap();
        let case = load_case(
            path,
            "core-api",
            &hcpspec::suites::core_api::CoreApi,
            &denials,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let steps = case.member("script").unwrap()["steps"]
            .as_array()
            .unwrap()
            .len();
        assert!(steps <= 6, "{why}: not shrunk, {steps} steps");
        let mutant = connector(
            &"inproc:mutant:other-session-readable".parse().unwrap(),
            &Default::default(),
        )
        .unwrap();
        assert!(
            matches!(run_case(&case, &mutant).verdict, Verdict::Fail(_)),
            "{why}: {} does not replay",
            path.display()
        );
        let reference =
            connector(&"inproc:reference".parse().unwrap(), &Default::default()).unwrap();
        assert_eq!(run_case(&case, &reference).verdict, Verdict::Pass);
    }

    /// A core that accepts the TCP connection and never answers the upgrade: a finding of the
    /// upgrade's step (the executor's 3 s deadline), and the core counted down, not an error.
    #[test]
    fn a_hung_upgrade_is_a_finding() {
        let text = r#"{"id": "hung", "title": "t", "section": "1", "level": "MUST",
            "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"x\")",
            "script": { "steps": [ { "connect": {}, "expect": { "status": 101 } } ] } }"#;
        let denials = load_denials(&vectors()).unwrap();
        let case = hcpspec::suites::parse_case(
            std::path::Path::new("hung.json"),
            text,
            "core-api",
            "core",
            &denials,
        )
        .unwrap();
        let shim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fauxmplementations/hostile_core.py");
        let spec = format!("stdio:python3 {} hangs-upgrade", shim.display());
        let connect = connector(&spec.parse().unwrap(), &Default::default()).unwrap();
        let script = case.parsed.get().expect("parsed at load");
        let (observed, up) =
            hcpspec::suites::core_api::play_for_fuzz(script, &connect).expect("played");
        let b = broken(&observed, up).expect("a finding");
        assert_eq!(b.why, "step 0: an upgrade got no answer");
        assert_eq!(b.expect, json!({ "status": { "$type": "integer" } }));
    }

    fn obs(step: usize, action: &str, value: Value) -> Observation {
        Observation {
            step,
            action: action.into(),
            value,
        }
    }

    /// The seed of another session's artifact, its canary's base64 `aGNwc3BlYy1jYW5hcnk=`.
    fn seeded() -> Observation {
        obs(
            0,
            "control artifact.seed",
            json!({ "artifactId": "art-1", "version": 1,
                "$sent": { "name": "secret", "base64": "aGNwc3BlYy1jYW5hcnk=", "scope": "other-session" } }),
        )
    }

    #[test]
    fn the_oracle_flags_a_canary_in_a_gate_answer() {
        let leak = obs(
            1,
            "gate tool-calls",
            json!({ "status": 200, "body": { "ok": true, "result": { "text": "aGNwc3BlYy1jYW5hcnk=" } },
                "$key": "turn-1:0:tool:0", "$token": "unknown" }),
        );
        let b = broken(&[seeded(), leak], true).expect("a leak");
        assert_eq!(b.step, Some(1));
        assert!(b.why.contains("another session's artifact"), "{}", b.why);
        assert_eq!(b.rule.0, "4b");
        assert_eq!(b.expect, json!({ "$noText": ["aGNwc3BlYy1jYW5hcnk="] }));
        // The decoded bytes are the same leak.
        let plain = obs(
            1,
            "await cancel",
            json!({ "p": { "reason": "hcpspec-canary" } }),
        );
        assert!(broken(&[seeded(), plain], true).is_some());
    }

    #[test]
    fn the_oracle_flags_a_read_of_a_secret_answered_ok_and_not_its_not_found() {
        let read = |answer: Value| {
            let mut v = answer;
            v["$sent"] = json!({ "runId": "run-1", "artifactId": "art-1", "offset": 3 });
            obs(1, "request artifact.read", v)
        };
        let ok = read(json!({ "ok": true, "r": { "offset": 3, "base64": "", "eof": true } }));
        let b = broken(&[seeded(), ok], true).expect("a read answered ok");
        assert!(
            b.why
                .starts_with("step 1: an artifact.read of another session's"),
            "{}",
            b.why
        );
        let refused =
            read(json!({ "ok": false, "e": { "code": "not_found", "message": "art-1" } }));
        assert_eq!(broken(&[seeded(), refused], true), None);
    }

    #[test]
    fn the_oracle_flags_bad_upgrades_and_an_unanswered_one() {
        let up = |status: Value, path: &str, token: Value, api: Value| {
            obs(
                0,
                "connect",
                json!({ "status": status,
                "$upgrade": { "status": status, "path": path, "token": token, "api": api } }),
            )
        };
        let right = "/nylorun/harness/v1";
        let nylorun = json!({ "harness": "nylorun" });
        assert_eq!(
            broken(&[up(json!(101), right, nylorun.clone(), json!("1"))], true),
            None
        );
        for (o, fault) in [
            (
                up(json!(101), "/x", nylorun.clone(), json!("1")),
                "a wrong path",
            ),
            (up(json!(101), right, json!("none"), json!("1")), "no token"),
            (
                up(json!(101), right, json!("unknown"), json!("1")),
                "an unknown token",
            ),
            (
                up(json!(101), right, nylorun.clone(), json!(null)),
                "no Nylorun-Harness-Api",
            ),
        ] {
            let b = broken(&[o], true).expect(fault);
            assert_eq!(
                b.why,
                format!("step 0: an upgrade with {fault} was answered 101")
            );
        }
        assert_eq!(
            broken(&[up(json!(404), "/x", json!("none"), json!(null))], true),
            None
        );
        let hung = obs(
            0,
            "connect",
            json!({ "noUpgrade": "the upgrade hung past 3 s",
            "$upgrade": { "path": right, "token": nylorun, "api": "1" } }),
        );
        assert!(broken(&[hung], true).unwrap().why.contains("no answer"));
    }
}

/// The first finding on `mutant` from seed 1 within `cases` cases, unshrunk: its rule is `rule`
/// (a MUST finding, not `PROFILE`), and its case passes on the reference and fails on the mutant
/// (the reference gives no finding there).
fn first_finding_is(mutant: &str, cases: u64, rule: &str) {
    let mut cfg = Config::new(&format!("inproc:mutant:{mutant}"));
    cfg.seed = 1;
    cfg.seconds = 3600.0; // only a cap on a hang: the count decides
    cfg.max_cases = Some(cases);
    cfg.max_findings = Some(1);
    cfg.shrink_budget = 0;
    let report = Fuzzer::new(cfg, env())
        .expect("fuzzer")
        .run(&AtomicBool::new(false), &|_| {}, &|_| {})
        .expect("fuzz run");
    let f = report.findings.first().unwrap_or_else(|| {
        panic!(
            "{mutant}: no finding in {} cases (PROFILE: {:?})",
            report.cases,
            report.profile.iter().map(|f| f.rule).collect::<Vec<_>>()
        )
    });
    assert_eq!(
        f.rule, rule,
        "{mutant} (case {}): {}",
        f.case_index, f.message
    );
    assert!(!f.profile, "{mutant}: {rule} is a finding, not PROFILE");
    assert!(
        f.reproduces,
        "{mutant}: the case of {rule} does not pass on the reference and fail on the mutant"
    );
}

/// exec-thrown: an exec answered with a JSON-RPC error instead of a denial envelope (spec 000:
/// denials come back as values).
#[test]
fn exec_thrown_finds_a_thrown_denial() {
    first_finding_is("denial-thrown", 50, "exec-thrown");
    first_finding_is("unknown-pack-thrown", 50, "exec-thrown");
}

/// availability-stale: availability that denies a flag the runtime's own answers made true.
#[test]
fn availability_stale_finds_flags_the_runtime_itself_made_true() {
    first_finding_is("activated-flag-stale", 100, "availability-stale");
    first_finding_is("connected-flag-stale", 200, "availability-stale");
}

/// confirm-given-denied: an exec given `apply: true` or `confirm: true` denied in the runtime's
/// own words for the confirm class.
#[test]
fn confirm_given_denied_finds_a_gate_shut_on_a_given_confirm() {
    first_finding_is("apply-false-vetoes", 600, "confirm-given-denied");
}

/// The denial class on the first pipeline row with a fault (rows 3 → 4 → 6, grant before land
/// within row 3), in the runtime's own words: a runtime that checks a later row first denies in
/// that row's class.
#[test]
fn the_denial_class_follows_the_pipeline_rows() {
    for m in [
        "project-before-capability",
        "binding-before-confirm",
        "confirm-before-grants",
    ] {
        first_finding_is(m, 600, "differential-denial-class");
    }
}

/// exec-without-binding: a connected Binding pack whose adapter got no Binding.
#[test]
fn exec_without_binding_finds_an_adapter_run_without_its_binding() {
    first_finding_is("binding-not-passed", 200, "exec-without-binding");
}

mod faux_cases {
    //! The oracles on one hand-made fuzz case, run on a mutant and on the reference: the rule
    //! fires on the mutant, and nothing fires on the reference.

    use super::{claims, env, vectors};
    use hcpspec::suites::hcp::fuzz::oracle::{invariants, Classes, Ctx, Model};
    use hcpspec::suites::hcp::mutate::case::{CaseMeta, FStep, FuzzCase, PackSpec};
    use hcpspec::suites::hcp::mutate::pack::Fixture;
    use hcpspec::suites::hcp::run_case;
    use hcpspec::suites::hcp::runtime::{Grant, MintOutcome};
    use hcpspec::suites::hcp::shim::inproc;
    use serde_json::{Map, Value};
    use std::collections::BTreeMap;

    /// The rules the invariants fire on `runtime`'s run of `fc`.
    fn rules(runtime: &str, fc: &FuzzCase) -> Vec<&'static str> {
        judged(runtime, fc, false)
    }

    /// The invariants' rules (with `differential`, the differential oracle's against the
    /// reference's run) that fire as findings, not `PROFILE`, on `runtime`'s run of `fc`.
    fn judged(runtime: &str, fc: &FuzzCase, differential: bool) -> Vec<&'static str> {
        let fixtures = Fixture::load_all(&vectors().join("packs")).unwrap();
        let case = fc.to_case(&fixtures, CaseMeta::explore(0), &BTreeMap::new());
        let claims = claims(runtime);
        let result = run_case(&case, &mut inproc(runtime).unwrap(), env(), &claims);
        let layout = fc.layout();
        let mut obs: Vec<Option<&Value>> = vec![None; layout.len()];
        for o in &result.observations {
            if let Some(x) = obs.get_mut(o.step) {
                *x = Some(&o.value);
            }
        }
        let model = Model::of(fc, &fixtures);
        let classes = Classes::new(&hcpspec::suites::hcp::runtime::denial_map());
        let ctx = Ctx {
            case: fc,
            model: &model,
            layout,
            classes: &classes,
            claims: &claims,
        };
        let found = if differential {
            let reference = run_case(
                &case,
                &mut inproc("reference").unwrap(),
                env(),
                &super::claims("reference"),
            );
            let mut ro: Vec<Option<&Value>> = vec![None; ctx.layout.len()];
            for o in &reference.observations {
                if let Some(x) = ro.get_mut(o.step) {
                    *x = Some(&o.value);
                }
            }
            hcpspec::suites::hcp::fuzz::differential::differential(&ctx, &obs, &ro)
        } else {
            invariants(&ctx, &obs, None)
        };
        found
            .into_iter()
            .filter(|v| !v.profile)
            .map(|v| v.rule)
            .collect()
    }

    pub(super) fn judged_differential(runtime: &str, fc: &FuzzCase) -> Vec<&'static str> {
        judged(runtime, fc, true)
    }

    fn grant(capability: &str) -> Grant {
        Grant {
            capability: capability.into(),
            pack_id: "ledger".into(),
            verb_keys: None,
            tenant_id: None,
        }
    }

    /// The ledger pack, granted exec read and connect, activated.
    fn ledger(hub: Vec<MintOutcome>) -> FuzzCase {
        let mut c = FuzzCase::plain(1);
        c.packs = vec![PackSpec {
            fixture: "ledger".into(),
            edits: vec![],
        }];
        c.grants = Some(vec![grant("verb.exec.read"), grant("pack.connect")]);
        if !hub.is_empty() {
            c.hub.insert("ledger".into(), hub);
        }
        c.steps = vec![FStep::Activate(vec!["ledger".into()])];
        c
    }

    fn balance() -> FStep {
        FStep::Exec {
            pack_id: "ledger".into(),
            verb_key: "balance".into(),
            args: Map::new(),
            report: Some("e1".into()),
        }
    }

    fn assert_fires(mutant: &str, fc: &FuzzCase, rule: &str) {
        let on_mutant = rules(&format!("mutant:{mutant}"), fc);
        assert!(on_mutant.contains(&rule), "{mutant}: {on_mutant:?}");
        let on_reference = rules("reference", fc);
        assert!(on_reference.is_empty(), "reference: {on_reference:?}");
    }

    /// grant-added: a grant held that runtime.create did not give (read back with
    /// `runtime.grants` after activation).
    #[test]
    fn grant_added_finds_grants_the_runtime_added() {
        let mut fc = ledger(vec![]);
        fc.steps.push(FStep::Grants);
        assert_fires("grants-implicit-added", &fc, "grant-added");
        assert_fires("grants-grow-on-activate", &fc, "grant-added");
        assert_fires(
            "grants-scope-widened",
            &{
                let mut scoped = fc.clone();
                scoped.grants.as_mut().unwrap()[0].tenant_id = Some("acme".into());
                scoped
            },
            "grant-added",
        );
    }

    /// binding-not-as-minted: the hub mints one token whenever it is asked; the adapter of the
    /// connected pack must see it.
    #[test]
    fn binding_not_as_minted_finds_an_adapter_given_the_identity() {
        let minted = MintOutcome {
            ok: true,
            token: Some("tok-user-7f3a".into()),
            identity: Some("acct:alice@ledger".into()),
            error: None,
        };
        let mut fc = ledger(vec![minted]);
        fc.steps.push(FStep::Connect("ledger".into()));
        fc.steps.push(balance());
        assert_fires("identity-as-binding", &fc, "binding-not-as-minted");
    }

    /// adapter-denied-before-binding: every mint fails and the bin is off the allow-list; the
    /// Binding (row 5) decides, not the adapter (row 6).
    #[test]
    fn adapter_denied_before_binding_finds_the_adapter_checked_first() {
        let failed = MintOutcome {
            ok: false,
            token: None,
            identity: None,
            error: Some("hub down".into()),
        };
        let mut fc = ledger(vec![failed]);
        fc.allow_bins = vec![];
        fc.steps.push(balance());
        assert_fires(
            "adapter-before-binding",
            &fc,
            "adapter-denied-before-binding",
        );
    }
}

/// A runtime that keeps a given bin allow-list under native-local (`sandbox: false`; the variant
/// native-local-allow-list, ASSUMPTIONS.md) denies a bin the list leaves out, where the reference
/// runs it: `PROFILE`, also when the list is the default one (`--reading other` of the Python
/// example, case 758 of seed 1, was a `differential-exec` finding).
#[test]
fn a_native_local_allow_list_is_no_differential_finding() {
    use hcpspec::suites::hcp::mutate::case::{FStep, FuzzCase, PackSpec};
    let mut fc = FuzzCase::plain(1);
    fc.packs = vec![PackSpec {
        fixture: "forge".into(),
        edits: vec![],
    }];
    fc.grants = Some(vec![hcpspec::suites::hcp::runtime::Grant {
        capability: "verb.exec.read".into(),
        pack_id: "forge".into(),
        verb_keys: None,
        tenant_id: None,
    }]);
    fc.sandbox = Some(false);
    fc.steps = vec![
        FStep::Activate(vec!["forge".into()]),
        FStep::Exec {
            pack_id: "forge".into(),
            verb_key: "build".into(),
            args: Default::default(),
            report: Some("e1".into()),
        },
    ];
    let found = faux_cases::judged_differential("variant:native-local-allow-list", &fc);
    assert!(found.is_empty(), "{found:?}");
}
