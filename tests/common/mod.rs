//! Helpers shared by the tests of hostile shims.

use hcpspec::run::Verdict;
use std::time::Duration;

/// The deadline of one call to a hostile shim. Not 1 s: a Python shim starting beside a build on
/// 2 cores missed that (a false verdict), and a deadline is only shown to hold, not to be short.
#[allow(dead_code)]
pub const DEADLINE: Duration = Duration::from_secs(3);

/// What a hostile case may take at most in wall time (a hang never ends): a few deadlines in
/// charged time, which runs at least at 1/LEAST_SHARE of wall time on any load
/// (docs/security.md), so no load makes a correct case take longer. It was 12 s, a bound a
/// loaded machine could pass.
#[allow(dead_code)]
pub const BOUND: Duration =
    Duration::from_secs(4 * 3 * hcpspec::adapter::sched::LEAST_SHARE as u64);

/// A hostile shim's case ended in an error verdict naming `evidence`, well within its deadline.
#[allow(dead_code)] // not every test binary uses it
pub fn errors_with((v, took): (Verdict, Duration), mode: &str, evidence: &str) {
    assert!(took < BOUND, "{mode}: took {took:?}");
    match v {
        Verdict::Error { message } => assert!(
            message.contains(evidence),
            "{mode}: `{evidence}` not in {message}"
        ),
        other => panic!("{mode}: expected an error verdict, got {other:?}"),
    }
}
pub mod markdown;

/// The bound docs/security.md promises: no hcpspec process exceeds it under any hostile
/// implementation.
#[allow(dead_code)]
pub const RSS_BOUND: u64 = 1 << 30;

/// The peak resident set of process `pid` so far (`VmHWM`), in bytes; None once it is gone.
#[allow(dead_code)]
pub fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// This test process's peak resident set is under [`RSS_BOUND`] (hostile fakes run as child
/// processes, so what is counted is hcpspec's own memory).
#[allow(dead_code)]
pub fn assert_rss_bounded(what: &str) {
    let peak = peak_rss(std::process::id()).expect("/proc/self/status");
    assert!(
        peak < RSS_BOUND,
        "{what}: hcpspec's peak RSS was {} MiB (bound {} MiB)",
        peak >> 20,
        RSS_BOUND >> 20
    );
}

/// Run a command to its end, polling its peak resident set meanwhile: its output and the
/// largest `VmHWM` seen (the peak of the process itself, not of its children).
#[allow(dead_code)]
pub fn output_and_peak_rss(cmd: &mut std::process::Command) -> (std::process::Output, u64) {
    use std::process::Stdio;
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(p) = peak_rss(pid) {
                    peak = peak.max(p);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            peak
        })
    };
    let out = child.wait_with_output().expect("wait");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    (out, watch.join().expect("watcher"))
}

/// A core-api case of these `steps` (a JSON array), loaded as `hcpspec run` loads one, and a
/// connector to the hostile core `tests/fauxmplementations/hostile_core.py MODE` whose calls
/// have `timeout` each.
#[allow(dead_code)]
pub fn hostile_core_case(
    mode: &str,
    steps: &str,
    timeout: Duration,
) -> (hcpspec::case::Case, hcpspec::suites::core_api::Connector) {
    use std::path::Path;
    let text = format!(
        r#"{{"id": "hostile", "title": "t", "section": "1", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"x\")",
        "script": {{ "steps": {steps} }} }}"#
    );
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let denials = hcpspec::case::load_denials(&vectors).unwrap();
    let mut case = hcpspec::suites::parse_case(
        Path::new("hostile.json"),
        &text,
        "core-api",
        "core",
        &denials,
    )
    .unwrap();
    case.group = "hostile".into();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_core.py");
    let opts = hcpspec::adapter::Options {
        timeout,
        ..Default::default()
    };
    let spec = format!("stdio:python3 {} {mode}", script.display());
    let connect = hcpspec::suites::core_api::connector(&spec.parse().unwrap(), &opts).unwrap();
    (case, connect)
}

/// Run hcpspec with `args` in the crate's root, killed (and the test failed) past `limit`: its
/// output and how long it took.
#[allow(dead_code)]
pub fn hcpspec_within(args: &[&str], limit: Duration) -> (std::process::Output, Duration) {
    use std::process::{Command, Stdio};
    let start = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hcpspec runs");
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hcpspec {args:?} ran past {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    (child.wait_with_output().unwrap(), start.elapsed())
}

/// A copy of the folder `from` at `to`, whole.
#[allow(dead_code)]
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let t = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), t).unwrap();
        }
    }
}
