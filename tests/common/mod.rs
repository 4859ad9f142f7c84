//! Helpers shared by the tests of hostile shims.

use hcpspec::run::Verdict;
use std::time::Duration;

/// A hostile shim's case ended in an error verdict naming `evidence`, well within its deadline.
#[allow(dead_code)] // not every test binary uses it
pub fn errors_with((v, took): (Verdict, Duration), mode: &str, evidence: &str) {
    assert!(took < Duration::from_secs(6), "{mode}: took {took:?}");
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
