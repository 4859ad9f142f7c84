//! Start-up time is not the scenario's (docs/harness-api.md § 1, "The start-up allowance"): a
//! harness that takes 5 s to start, and to restart, passes every scenario the same harness
//! passes when it starts at once. The harness is this test binary itself, started by hcpspec as
//! a real child process under the launch contract (`--harness SLEEP_MS`): it sleeps, then runs
//! hcpspec's reference harness.
//!
//! `HCPSPEC_STARTUP_ALL=1 cargo test --release --test harness_startup` plays every MUST scenario
//! (the numbers in the notes of issue 42); by default the restart scenarios and a few others.

use hcpspec::case::Case;
use hcpspec::run::Verdict;
use hcpspec::suites::harness_api::env::LaunchEnv;
use hcpspec::suites::harness_api::{run_case, Harness};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;

/// The scenarios that start the harness twice, and a few that start it once.
const SCENARIOS: [&str; 8] = [
    "ids-stable-after-a-restart",
    "ids-stable-when-the-segment-starts-over",
    "replays-outcomes-without-asking",
    "another-owner-replays-the-segment",
    "hello-is-the-first-request",
    "takes-three-runs-in-turn",
    "large-result-spilled",
    "cancel-cancels-the-tool-call",
];

const SLEEP_MS: u64 = 5000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--harness") {
        return harness(args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0));
    }
    let trial = Trial::test(
        "a_harness_that_sleeps_5s_before_connecting_passes_what_it_passes_at_once",
        sleep_changes_no_verdict,
    );
    libtest_mimic::run(&Arguments::from_args(), vec![trial]).exit();
}

/// The launched harness: sleep, then hcpspec's reference harness on the contract's variables.
fn harness(sleep_ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(sleep_ms));
    let Some(env) = LaunchEnv::of_process() else {
        eprintln!("not launched: NYLORUN_CORE_URL and the rest are not set");
        std::process::exit(2);
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(hcpspec::suites::harness_api::reference::run(
        env,
        Default::default(),
    ));
}

fn cases() -> Vec<Case> {
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let all = std::env::var("HCPSPEC_STARTUP_ALL").is_ok_and(|v| v == "1");
    hcpspec::suites::load_suite(&vectors, "harness-api")
        .expect("cases load")
        .into_iter()
        .filter(|c| {
            c.level == hcpspec::case::Level::MUST && (all || SCENARIOS.contains(&c.id.as_str()))
        })
        .collect()
}

fn launched(sleep_ms: u64) -> Harness {
    let me = std::env::current_exe().expect("this test's binary");
    Harness::parse(&format!("exec:{} --harness {sleep_ms}", me.display())).expect("a command")
}

/// Every scenario played at once and after 5 s, all in parallel: the same verdict, a pass for
/// the named ones (the test asserts the allowance, not hcpspec's cases).
fn sleep_changes_no_verdict() -> Result<(), Failed> {
    let cases = cases();
    let all = std::env::var("HCPSPEC_STARTUP_ALL").is_ok_and(|v| v == "1");
    if !all && cases.len() != SCENARIOS.len() {
        return Err(format!("{} of the {} scenarios found", cases.len(), SCENARIOS.len()).into());
    }
    let t = std::time::Instant::now();
    // At most 16 scenarios at once (32 harnesses), so that the machine's load stays what a
    // run's `--jobs` makes it.
    let verdicts: Vec<(String, [bool; 2], String)> = cases
        .chunks(16)
        .flat_map(|chunk| {
            std::thread::scope(|s| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|c| {
                        s.spawn(move || {
                            let [now, late] = [0, SLEEP_MS].map(|ms| {
                                let h = launched(ms);
                                std::thread::scope(|s| s.spawn(|| run_case(c, &h)).join())
                            });
                            let v = |r: &std::thread::Result<hcpspec::run::CaseResult>| {
                                r.as_ref().is_ok_and(|r| r.verdict == Verdict::Pass)
                            };
                            let why = match &late {
                                Ok(r) => format!("{:?}", r.verdict).chars().take(300).collect(),
                                Err(_) => "panicked".into(),
                            };
                            (c.id.clone(), [v(&now), v(&late)], why)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("joined"))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let (at_once, late) = (
        verdicts.iter().filter(|v| v.1[0]).count(),
        verdicts.iter().filter(|v| v.1[1]).count(),
    );
    eprintln!(
        "{} scenarios in {:.0?}: {at_once} pass at once, {late} after {SLEEP_MS} ms",
        verdicts.len(),
        t.elapsed()
    );
    for v in verdicts.iter().filter(|v| v.1[0] != v.1[1] || !v.1[0]) {
        eprintln!(
            "  {}: at once {}, after 5 s {} ({})",
            v.0, v.1[0], v.1[1], v.2
        );
    }
    let differ: Vec<String> = verdicts
        .iter()
        .filter(|v| v.1[0] && !v.1[1] || !all && !v.1[0])
        .map(|v| format!("{} (at once: {}; after 5 s: {})", v.0, v.1[0], v.2))
        .collect();
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!("verdicts the sleep changed: {}", differ.join("; ")).into())
    }
}
