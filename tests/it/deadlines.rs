//! A call's deadline judges the implementation, not the machine (docs/security.md, "Deadlines
//! judge the implementation, not the machine"): the time the machine kept a stdio shim ready
//! to run but off every CPU is not charged to it.

use hcpspec::adapter::process::Process;
use hcpspec::adapter::{Adapter, Options};
use serde_json::json;
use std::time::Duration;

/// A shim that needs 0.1 s of CPU per answer while a busy loop of higher priority shares its
/// CPU (it gets about 1.5% of it: some 7 s of wall time per answer) meets a 3 s deadline: it
/// did 0.1 s of work, and the rest was the machine's. Charged time runs at least at 1/8 of wall
/// time, so it would time out only past 24 s of wall time.
#[test]
fn a_shim_the_machine_starves_is_not_timed_out() {
    let shim = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fauxmplementations/starved_shim.py");
    let argv = [
        "python3".to_string(),
        shim.display().to_string(),
        "0.1".to_string(),
    ];
    let opts = Options {
        timeout: Duration::from_secs(3),
        ..Options::default()
    };
    let mut p = Process::start(&argv, &opts).expect("starts");
    let started = std::time::Instant::now();
    let answer = p.call("starved", json!({}));
    assert_eq!(
        answer,
        Ok(json!({ "worked": 0.1 })),
        "after {:?}",
        started.elapsed()
    );
}
