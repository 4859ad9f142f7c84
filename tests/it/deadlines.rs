//! A call's deadline judges the implementation, not the machine (docs/security.md, "Deadlines
//! judge the implementation, not the machine"): the time the machine kept a stdio shim ready
//! to run but off every CPU is not charged to it.

use hcpspec::adapter::process::Process;
use hcpspec::adapter::sched::LEAST_SHARE;
use hcpspec::adapter::{Adapter, Options};
use serde_json::json;
use std::time::{Duration, Instant};

/// A shim that needs 20 ms of CPU per answer while a busy loop of higher priority shares its
/// CPU (it gets about 1.5% of it, less on a loaded machine) meets a deadline of a third of the
/// wall time its first answer took: it did 20 ms of work, and the rest was the machine's.
/// Calibrated in the same run, so the machine's load does not decide it; charged time runs at
/// least at 1/8 of wall time, so an answer more than 2.6 times slower than the first times out
/// on that floor: such a run proves nothing and is calibrated again. Before the machine's
/// waits were taken off, it timed out well before the floor.
#[test]
fn a_shim_the_machine_starves_is_not_timed_out() {
    let shim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fauxmplementations/starved_shim.py");
    let argv = [
        "python3".to_string(),
        shim.display().to_string(),
        "0.02".to_string(),
    ];
    let call = |timeout: Duration| {
        let mut p = Process::start(
            &argv,
            &Options {
                timeout,
                ..Options::default()
            },
        )
        .expect("starts");
        let began = Instant::now();
        (p.call("starved", json!({})), began.elapsed())
    };
    // A timeout after LEAST_SHARE times the deadline of wall time is the floor's (the machine
    // gave the shim less than 1/LEAST_SHARE of the time): the run says nothing, calibrate again.
    // A timeout before it means waits were charged, and fails.
    for _ in 0..5 {
        let (first, _) = call(Duration::from_secs(120));
        let wall = first.expect("an answer within 120 s")["wallSeconds"]
            .as_f64()
            .expect("wallSeconds");
        let deadline = Duration::from_secs_f64(wall / 3.0).max(Duration::from_millis(1));
        let (answer, took) = call(deadline);
        if answer.is_err() && took >= deadline * LEAST_SHARE * 9 / 10 {
            continue;
        }
        assert!(
            answer.as_ref().is_ok_and(|a| a["worked"] == json!(0.02)),
            "the first answer took {wall:.2} s of wall time; with a deadline of {deadline:?}, \
             after {took:?}: {answer:?}"
        );
        return;
    }
    panic!(
        "five runs in a row ended on the floor of charged time: the machine never let the shim run"
    );
}
