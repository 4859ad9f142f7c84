//! A fifth suite, written here and nowhere else: it implements `hcpspec::suites::Suite`,
//! registers itself, and then loads, runs, self-checks and lists through the shared code, which
//! knows nothing of it. This is `docs/architecture.md`'s "Adding a suite", proven.

use hcpspec::case::matcher::{Claims, Denials};
use hcpspec::case::{Case, Format};
use hcpspec::knob::{infos, Info, Knobs};
use hcpspec::run::expectations::Expectations;
use hcpspec::run::runner::{Quiet, Runner, Target};
use hcpspec::run::{CaseResult, Failure, Observation, Verdict};
use hcpspec::suites::selfcheck::{Memo, SelfCheck};
use hcpspec::suites::{Context, Suite};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

hcpspec::mutants! {
    enum Mutant {
        Mute = "mute", ["1"], "says nothing back";
        Panics = "panics", ["1"], "panics instead of answering (hcpspec's runner must survive it)";
    }
}
hcpspec::variants! {
    enum Variant {
        Slow = "slow", "takes its time (20 ms) before it answers";
        Loud = "loud", "says a word in capitals (asked only where there is a word to say)";
    }
}

struct Echo;

fn schema() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        jsonschema::validator_for(&json!({
            "type": "object",
            "required": ["id", "title", "section", "level", "spec", "echo"],
            "properties": { "echo": {
                "type": "object", "required": ["say", "expect"],
                "properties": { "say": { "type": "string" } }
            } }
        }))
        .expect("schema")
    })
}

impl Format for Echo {
    fn body(&self) -> &'static str {
        "echo"
    }
    fn schema(&self) -> &'static jsonschema::Validator {
        schema()
    }
    fn check(&self, case: &Case, denials: &Denials) -> Result<(), (String, String)> {
        let e = &case.member("echo").expect("the loader checked")["expect"];
        hcpspec::case::matcher::validate(e, denials)
            .map_err(|(p, m)| (format!("/echo/expect{p}"), m))
    }
}

impl Suite for Echo {
    fn drives(&self) -> &'static str {
        "echo"
    }
    fn noun(&self) -> &'static str {
        "echoer"
    }
    fn judged(&self, _: &Case, _: &hcpspec::run::Failure) -> hcpspec::suites::Judged {
        hcpspec::suites::Judged::Written
    }
    fn target(&self, spec: &str, _: &Context) -> Result<Arc<dyn Target>, String> {
        let name = spec
            .strip_prefix("inproc:")
            .ok_or(format!("{spec}: only inproc: echoes"))?;
        let knobs = Knobs::named(name).ok_or(format!("{spec}: no such echoer"))?;
        Ok(Arc::new(Echoer {
            spec: spec.into(),
            knobs,
        }))
    }
    fn mutants(&self) -> Vec<Info> {
        infos::<Mutant>()
    }
    fn variants(&self) -> Vec<Info> {
        infos::<Variant>()
    }
}

/// The cases the `loud` echoer has played.
static LOUD_PLAYED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

struct Echoer {
    spec: String,
    knobs: Knobs<Mutant, Variant>,
}

impl Target for Echoer {
    fn spec(&self) -> &str {
        &self.spec
    }
    fn describe(&self) -> Result<Value, String> {
        Ok(json!({ "runtime": { "name": self.spec }, "protocol": "echo/1" }))
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        let started = Instant::now();
        let body = case.member("echo").cloned().unwrap_or_default();
        if self.knobs.breaks(Mutant::Panics) {
            panic!("the echoer fell over");
        }
        if self.knobs.decides(Variant::Slow) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let word = body["say"].as_str().unwrap_or("");
        let loud = !word.is_empty() && self.knobs.decides(Variant::Loud);
        // Read as the field, not asked: counting asks nothing of the reference.
        if self.knobs.variant == Some(Variant::Loud) {
            LOUD_PLAYED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        let said = if self.knobs.breaks(Mutant::Mute) {
            json!(null)
        } else if loud {
            json!(word.to_uppercase())
        } else if let Some(f) = self.knobs.free(hcpspec::knob::Class::Words) {
            // What an echoer says is its own word under the freedom variant.
            json!(f.word("say", body["say"].as_str().unwrap_or("")))
        } else {
            body["say"].clone()
        };
        let actual = json!({ "said": said });
        let verdict =
            match hcpspec::case::matcher::check(&body["expect"], &actual, &Claims::default()) {
                Ok(_) => Verdict::Pass,
                Err(m) => Verdict::Fail(Failure {
                    step: 0,
                    action: "say".into(),
                    path: m.path,
                    message: m.message,
                    expected: m.expected,
                    actual: m.actual,
                }),
            };
        let obs = vec![Observation {
            step: 0,
            action: "say".into(),
            value: actual,
        }];
        CaseResult::of(case, verdict, obs, vec![], started)
    }
}

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/echo/vectors")
}

/// The echo suite's self-check of `cases`.
fn self_check<'a>(
    l: &'a hcpspec::suites::Loaded,
    cases: &'a [Case],
    ctx: &'a Context,
    memo: &'a Memo,
) -> SelfCheck<'a> {
    SelfCheck {
        suite: l.suite,
        info: &l.info,
        cases,
        ctx,
        memo,
    }
}

fn registered() -> &'static dyn Suite {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| hcpspec::suites::register(&Echo).expect("echo registers"));
    hcpspec::suites::find("echo").expect("registered")
}

#[test]
fn a_fifth_suite_plugs_in_through_the_registry_alone() {
    let suite = registered();
    let l = hcpspec::suites::load(&vectors(), "echo").expect("the echo suite loads");
    assert_eq!(l.cases.len(), 2);
    assert_eq!(l.suite.drives(), suite.drives());
    // Registering the same kind twice is refused.
    assert!(hcpspec::suites::register(&Echo).is_err());
    // Its embedded target passes its cases through the one runner.
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let runner = Runner::new(&l.info, &l.cases, &expectations);
    let target = l.suite.target("inproc:reference", &ctx).unwrap();
    let result = runner.run(&[target], &mut Quiet).unwrap();
    assert!(result.runtimes[0]
        .cases
        .iter()
        .all(|r| r.verdict == Verdict::Pass));
    // And its self-check means what every suite's does.
    let memo = Memo::new(2);
    let sc = self_check(&l, &l.cases, &ctx, &memo);
    let kills = sc.all_kills().unwrap();
    assert_eq!(kills["mute"].len(), 2, "mute fails both cases");
    assert!(
        kills["panics"].is_empty(),
        "a panic is an error verdict, never a kill"
    );
    assert!(sc.unkilled(&kills).is_empty());
    assert!(sc.false_claims(&kills).is_empty());
    // Played pair by pair, the same answers.
    assert_eq!(
        sc.first_kill(&infos::<Mutant>()[0], &[]).unwrap().is_some(),
        !kills[infos::<Mutant>()[0].name].is_empty()
    );
    assert!(sc.unkilled_by_search(&[]).unwrap().is_empty());
    assert!(sc.false_claims_played().unwrap().is_empty());
    assert!(sc
        .variant_failures(&infos::<Variant>()[0])
        .unwrap()
        .is_empty());
    // A memo shared through a folder (nextest's processes, one per trial): a second memo on
    // the same folder takes the mutants' results the first kept, and plays none of them again
    // (a pair played is written anew, under a new inode).
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let inodes = || -> std::collections::BTreeMap<String, u64> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().ino(),
                )
            })
            .collect()
    };
    let memo = Memo::shared(2, dir.path().to_path_buf());
    let first = SelfCheck { memo: &memo, ..sc };
    assert_eq!(first.all_kills().unwrap(), kills);
    first.variant_failures(&infos::<Variant>()[0]).unwrap();
    let kept = inodes();
    let pairs = infos::<Mutant>().len() * l.cases.len();
    assert_eq!(
        kept.len(),
        pairs + l.cases.len(),
        "one file per mutant pair and one per case (the variants its reference run asks about), none for a variant's pair: {kept:?}"
    );
    let memo = Memo::shared(2, dir.path().to_path_buf());
    let second = SelfCheck { memo: &memo, ..sc };
    assert_eq!(second.all_kills().unwrap(), kills);
    assert!(second.unkilled_by_search(&[]).unwrap().is_empty());
    assert_eq!(
        inodes(),
        kept,
        "the second memo played a pair the first kept"
    );
}

/// A freedom seed's failure names the seed, the case and the class that fails it alone; a case
/// whose `fixed` names the class is played without it.
#[test]
fn a_freedom_failure_names_its_seed_and_class_and_fixed_classes_are_not_played() {
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").expect("the echo suite loads");
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let mut cases = l.cases.clone();
    cases[1]
        .fixed
        .insert("words".into(), "an echo says the words it is given".into());
    let memo = Memo::new(2);
    let sc = self_check(&l, &cases, &ctx, &memo);
    let seed3 = Info {
        name: "freedom:3",
        about: "",
        sections: &[],
    };
    let failed = sc.variant_failures(&seed3).unwrap();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(failed[0].contains(&cases[0].name()), "{}", failed[0]);
    assert!(
        failed[0].contains("[seed 3; fails with words]"),
        "{}",
        failed[0]
    );
    assert_eq!(hcpspec::knob::freedoms()[2].name, "freedom:3");
}

#[test]
fn a_panicking_case_is_an_error_verdict_and_the_run_goes_on() {
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").unwrap();
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let runner = Runner::new(&l.info, &l.cases, &expectations);
    let target = l.suite.target("inproc:mutant:panics", &ctx).unwrap();
    let result = runner.run(&[target], &mut Quiet).unwrap();
    let cases = &result.runtimes[0].cases;
    assert_eq!(cases.len(), 2, "every case has a result");
    for r in cases {
        match &r.verdict {
            Verdict::Error { message } => {
                assert!(message.contains("the echoer fell over"), "{message}")
            }
            v => panic!("{}: {v:?}", r.name),
        }
    }
    assert!(result.fails(), "an error fails the run");
    // The outputs are still written.
    let out = tempfile::tempdir().unwrap();
    hcpspec::report::write_all(&hcpspec::report::Report::of(vec![result]), out.path()).unwrap();
    assert!(out.path().join("result.json").is_file());
}

/// The run's guard does not count what hcpspec held back in the whole process
/// (`run::held_back`): the tests that judge the guard run one at a time.
static GUARD: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn a_case_past_the_deadline_is_an_error_and_slow_cases_are_reported() {
    let _one = GUARD.lock().unwrap_or_else(|p| p.into_inner());
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").unwrap();
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let mut runner = Runner::new(&l.info, &l.cases[..1], &expectations);
    runner.slow = std::time::Duration::from_millis(2);
    runner.deadline = std::time::Duration::from_millis(10);
    struct Slow(Vec<String>);
    impl hcpspec::run::runner::Reporter for Slow {
        fn event(&mut self, e: &hcpspec::run::runner::Event<'_>) {
            if let hcpspec::run::runner::EventKind::CaseSlow { name, .. } = e.kind {
                self.0.push(name.to_string());
            }
        }
    }
    let mut slow = Slow(vec![]);
    let target = l.suite.target("inproc:variant:slow", &ctx).unwrap();
    let result = runner.run(&[target], &mut slow).unwrap();
    match &result.runtimes[0].cases[0].verdict {
        Verdict::Error { message } => assert!(message.contains("no verdict within"), "{message}"),
        v => panic!("{v:?}"),
    }
    assert!(!slow.0.is_empty(), "the slow case was reported");
}

/// What a reporter is told, one line per event (names, verdicts and counts, not timings).
#[derive(Default)]
struct Told(Vec<String>);

impl hcpspec::run::runner::Reporter for Told {
    fn event(&mut self, e: &hcpspec::run::runner::Event<'_>) {
        use hcpspec::run::runner::EventKind;
        self.0.push(match &e.kind {
            EventKind::RunStarted { suites } => format!("run started {}", suites.len()),
            EventKind::RuntimeStarted { spec, cases, .. } => format!("started {spec} {cases}"),
            EventKind::CaseStarted { spec, name } => format!("case {spec} {name}"),
            EventKind::CaseSlow { spec, name, .. } => format!("slow {spec} {name}"),
            EventKind::CaseFinished { spec, result } => {
                format!("finished {spec} {} {}", result.name, result.verdict.label())
            }
            EventKind::Drifted { spec, result, .. } => format!("drifted {spec} {}", result.name),
            EventKind::RuntimeFinished { spec, run, cases } => format!(
                "runtime finished {spec} {} of {} cases",
                run.cases.len(),
                cases.len()
            ),
            EventKind::ParityDiffered { difference } => format!("parity {}", difference.case),
            EventKind::ParityHidden { hidden } => format!("parity hidden {}", hidden.first),
            EventKind::SuiteFinished { result } => format!("suite finished {}", result.suite),
            EventKind::RunFinished { stats } => format!("run finished {} failed", stats.failed),
        });
    }
}

/// Suites run side by side are told one after another: between `RunStarted` and `RunFinished`,
/// the reporter hears each suite's events as a run of that suite alone tells them, in plan order.
#[test]
fn suites_side_by_side_are_told_one_after_another() {
    use hcpspec::run::session::{self, Planned};
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").unwrap();
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let runner = || {
        let mut runner = Runner::new(&l.info, &l.cases, &expectations);
        runner.jobs = 1;
        runner
    };
    let target = || l.suite.target("inproc:mutant:mute", &ctx).unwrap();
    let mut watched = Told::default();
    runner().run(&[target()], &mut watched).unwrap();
    assert!(
        watched.0.iter().any(|l| l.ends_with(" fail")),
        "{:?}",
        watched.0
    );
    let planned = (0..2)
        .map(|_| Planned {
            runner: runner(),
            targets: vec![target()],
        })
        .collect();
    let mut told = Told::default();
    let finished = session::run(planned, true, &mut told).unwrap();
    let mut expected = vec!["run started 2".to_string()];
    for _ in 0..2 {
        expected.extend(watched.0.iter().cloned());
        expected.push("suite finished echo".into());
    }
    expected.push(format!("run finished {} failed", finished.stats.failed));
    assert_eq!(told.0, expected);
    assert!(finished.stats.fails() && finished.results.len() == 2);
}

/// A target whose case waits on hcpspec's own memory budget (`run::held_back`) before it
/// answers, as a harness-api scenario queued behind others does.
struct HeldBack(Arc<dyn Target>);

impl Target for HeldBack {
    fn spec(&self) -> &str {
        self.0.spec()
    }
    fn describe(&self) -> Result<Value, String> {
        self.0.describe()
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        let wait = hcpspec::run::held_back::begin();
        std::thread::sleep(std::time::Duration::from_millis(600));
        drop(wait);
        self.0.run_case(case)
    }
}

/// The run's guard on a case does not count the time hcpspec itself held the case back: a case
/// queued for the memory budget past the guard's length is judged, not an error (CI saw eight
/// floods queued for the budget on a loaded machine run past the 300 s guard).
#[test]
fn the_runs_guard_does_not_count_what_hcpspec_held_back() {
    let _one = GUARD.lock().unwrap_or_else(|p| p.into_inner());
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").expect("the echo suite loads");
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let mut runner = Runner::new(&l.info, &l.cases, &expectations);
    runner.deadline = std::time::Duration::from_millis(200);
    let target: Arc<dyn Target> =
        Arc::new(HeldBack(l.suite.target("inproc:reference", &ctx).unwrap()));
    let result = runner.run(&[target], &mut Quiet).unwrap();
    for r in &result.runtimes[0].cases {
        assert_eq!(r.verdict, Verdict::Pass, "{}", r.name);
    }
}

/// What [`Alone`]s saw: cases running now, whether the case alone is running, and each time a
/// case ran beside it.
#[derive(Default)]
struct Beside {
    running: std::sync::atomic::AtomicUsize,
    alone_in: std::sync::atomic::AtomicBool,
    overlaps: std::sync::atomic::AtomicUsize,
}

/// A target whose case named `alone` (if any) plays alone in the process (`Target::alone`); its
/// cases take their time, so that cases beside it would be seen.
struct Alone(Arc<dyn Target>, Option<String>, Arc<Beside>);

impl Target for Alone {
    fn spec(&self) -> &str {
        self.0.spec()
    }
    fn describe(&self) -> Result<Value, String> {
        self.0.describe()
    }
    fn alone(&self, case: &Case) -> bool {
        self.1.as_deref() == Some(&case.name())
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        use std::sync::atomic::Ordering::SeqCst;
        let b = &self.2;
        let alone = self.alone(case);
        let others = b.running.fetch_add(1, SeqCst);
        if (alone && others > 0) || b.alone_in.load(SeqCst) {
            b.overlaps.fetch_add(1, SeqCst);
        }
        if alone {
            b.alone_in.store(true, SeqCst);
        }
        std::thread::sleep(std::time::Duration::from_millis(40));
        if alone {
            if b.running.load(SeqCst) > 1 {
                b.overlaps.fetch_add(1, SeqCst);
            }
            b.alone_in.store(false, SeqCst);
        }
        b.running.fetch_sub(1, SeqCst);
        self.0.run_case(case)
    }
}

/// A case a target says plays alone (core-api's heavy frames, issue 49) runs with no other case
/// of any run beside it, its own run's or another suite's run side by side; the others share
/// the process as before.
#[test]
fn a_case_that_plays_alone_has_no_case_beside_it() {
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").expect("the echo suite loads");
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let beside = Arc::new(Beside::default());
    let heavy = l.cases[0].name();
    std::thread::scope(|s| {
        for run in 0..4 {
            let (l, ctx, expectations, beside) = (&l, &ctx, &expectations, beside.clone());
            let heavy = heavy.clone();
            s.spawn(move || {
                for _ in 0..3 {
                    let mut runner = Runner::new(&l.info, &l.cases, expectations);
                    runner.jobs = 2;
                    let inner = l.suite.target("inproc:reference", ctx).unwrap();
                    let alone = (run == 0).then(|| heavy.clone());
                    let target: Arc<dyn Target> = Arc::new(Alone(inner, alone, beside.clone()));
                    let result = runner.run(&[target], &mut Quiet).unwrap();
                    for r in &result.runtimes[0].cases {
                        assert_eq!(r.verdict, Verdict::Pass, "{}", r.name);
                    }
                }
            });
        }
    });
    let overlaps = beside.overlaps.load(std::sync::atomic::Ordering::SeqCst);
    assert_eq!(
        overlaps, 0,
        "cases ran beside the case alone {overlaps} time(s)"
    );
}

/// A target whose first case fails after a while and whose others play alone: each of them
/// asks for its turn only once the first plays (holding its shared turn), so it waits for it.
struct FailsThenAlone(Arc<dyn Target>, String, std::sync::atomic::AtomicBool);

impl Target for FailsThenAlone {
    fn spec(&self) -> &str {
        self.0.spec()
    }
    fn describe(&self) -> Result<Value, String> {
        self.0.describe()
    }
    fn alone(&self, case: &Case) -> bool {
        let first = case.name() == self.1;
        while !first && !self.2.load(std::sync::atomic::Ordering::SeqCst) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        !first
    }
    fn run_case(&self, case: &Case) -> CaseResult {
        if case.name() == self.1 {
            self.2.store(true, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(300));
            let mut r = self.0.run_case(case);
            r.verdict = Verdict::Error {
                message: "failed on purpose".into(),
            };
            return r;
        }
        self.0.run_case(case)
    }
}

/// `--max-fail 1`: a case that waited for its turn to play alone while the first failure
/// played is not run once that failure counts, as every case not started (before, it ran).
#[test]
fn a_case_waiting_for_its_turn_is_not_run_past_max_fail() {
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").expect("the echo suite loads");
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let expectations = Expectations::default();
    let mut runner = Runner::new(&l.info, &l.cases, &expectations);
    runner.jobs = 2;
    runner.max_fail = Some(1);
    let inner = l.suite.target("inproc:reference", &ctx).unwrap();
    let first = l.cases[0].name();
    let target: Arc<dyn Target> =
        Arc::new(FailsThenAlone(inner, first.clone(), Default::default()));
    let result = runner.run(&[target], &mut Quiet).unwrap();
    let cases = &result.runtimes[0].cases;
    assert!(
        matches!(cases[0].verdict, Verdict::Error { .. }),
        "{:?}",
        cases[0]
    );
    for r in &cases[1..] {
        assert!(
            matches!(&r.verdict, Verdict::Skip { reason } if reason.contains("--max-fail 1")),
            "{}: {:?}",
            r.name,
            r.verdict
        );
    }
}

/// A variant is played only on the cases whose reference run asks about it (`loud`, only where
/// there is a word to say): there its choice still fails the case that forbids it; elsewhere it
/// would play the reference's run, and is not played.
#[test]
fn a_variant_plays_only_the_cases_that_ask_about_it() {
    registered();
    let l = hcpspec::suites::load(&vectors(), "echo").expect("the echo suite loads");
    let ctx = Context::new(&vectors(), Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
    let memo = Memo::new(2);
    let sc = self_check(&l, &l.cases, &ctx, &memo);
    let loud = infos::<Variant>()[1].clone();
    assert_eq!(loud.name, "loud");
    let failed = sc.variant_failures(&loud).unwrap();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert!(failed[0].contains("says-it-back"), "{}", failed[0]);
    assert_eq!(
        LOUD_PLAYED.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "says-nothing-more asks nothing of `loud`: not played"
    );
}
