//! No process of a `stdio:` shim outlives hcpspec, whatever the suite (docs/security.md, "No
//! process outlives its scenario"): a shim that starts a child, a child in a session of its own
//! and a double-forked daemon (tests/fauxmplementations/forking_shim.py) leaves none of them
//! running, and no zombie, once hcpspec has exited. hcpspec runs under a child subreaper, so
//! whatever it leaves behind is re-parented there and counted.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn shim() -> String {
    root()
        .join("tests/fauxmplementations/forking_shim.py")
        .display()
        .to_string()
}

fn alive(pid: i32) -> bool {
    // A zombie is not running; whose zombie it is, the reaper's list says.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s.rsplit_once(')')?.1.split_whitespace().next()? != "Z"))
        .unwrap_or(false)
}

/// Run `hcpspec run --suite SUITE --filter FILTER` against the forking shim serving `served`:
/// the pids the shim's processes wrote, and what hcpspec left behind when it exited.
fn run(suite: &str, filter: &str, served: &str) -> (Vec<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (pidfile, leftfile) = (dir.path().join("pids"), dir.path().join("left"));
    let runtime = format!(
        "stdio:python3 {} fork {} {} shim --runtime {served}",
        shim(),
        pidfile.display(),
        env!("CARGO_BIN_EXE_hcpspec")
    );
    let out = dir.path().join("out");
    let o = Command::new("python3")
        .args([&shim(), "reaper", leftfile.to_str().unwrap()])
        .arg(env!("CARGO_BIN_EXE_hcpspec"))
        .args(["run", "--suite", suite, "--filter", filter, "--jobs", "2"])
        .args(["--runtime", &runtime, "--out", out.to_str().unwrap()])
        .current_dir(root())
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let left = std::fs::read_to_string(&leftfile).unwrap_or_else(|e| panic!("{e}: {said}"));
    (pids, left, said)
}

fn contained(suite: &str, filter: &str, served: &str) {
    let (pids, left, said) = run(suite, filter, served);
    assert!(
        pids.len() >= 4 && pids.len() % 4 == 0,
        "{suite}: the shim's processes did not all start ({pids:?}): {said}"
    );
    let running: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for p in &running {
        unsafe { libc::kill(*p, libc::SIGKILL) };
    }
    assert!(
        running.is_empty(),
        "{suite}: processes {running:?} of the shim outlived hcpspec"
    );
    assert!(
        left.trim().is_empty(),
        "{suite}: hcpspec left processes behind (pid, state; Z: an unreaped zombie):\n{left}"
    );
}

#[test]
fn a_forking_contract_shim_leaves_no_process_behind() {
    contained("contract", "04-confirm", "reference");
}

#[test]
fn a_forking_core_api_shim_leaves_no_process_behind() {
    contained("core-api", "00-contract", "core:reference");
}

#[test]
fn a_forking_host_shim_leaves_no_process_behind() {
    contained("host", "00-overview", "host:reference");
}

/// A shim that crashes at its start: the one "unreachable" line (exit 3) of `run`, and of
/// `fuzz` for the whole-case suites, carries its last stderr lines, redacted, as the contract
/// suite's always did.
#[test]
fn a_crashing_shim_is_unreachable_with_its_stderr_tail() {
    const CANARY: &str = "canary-crash-3e9a1b7c5d";
    let runtime = format!("stdio:python3 {} crash", shim());
    let runs: [&[&str]; 5] = [
        &["run", "--suite", "contract"],
        &["run", "--suite", "core-api"],
        &["run", "--suite", "host"],
        &["fuzz", "--suite", "core-api"],
        &["fuzz", "--suite", "host"],
    ];
    for args in runs {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
            .args(args)
            .args(["--runtime", &runtime, "--out", dir.path().to_str().unwrap()])
            .env("HCPSPEC_CRASH_CANARY", CANARY)
            .current_dir(root())
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {said}");
        assert!(said.contains("unreachable"), "{args:?}: {said}");
        assert!(
            said.contains("forking-shim-crash-line-7c1e"),
            "{args:?}: the shim's stderr tail is not in the unreachable line: {said}"
        );
        assert!(!said.contains(CANARY), "{args:?}: {said}");
        assert!(
            said.contains("[redacted: $HCPSPEC_CRASH_CANARY]"),
            "{args:?}: {said}"
        );
    }
}
