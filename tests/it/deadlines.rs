//! A call's deadline judges the implementation, not the machine (docs/security.md, "Deadlines
//! judge the implementation, not the machine"): the time the machine kept a stdio shim ready
//! to run but off every CPU is not charged to it.

use hcpspec::adapter::process::Process;
use hcpspec::adapter::sched::LEAST_SHARE;
use hcpspec::adapter::{Adapter, Options};
use serde_json::json;
use std::time::{Duration, Instant};

/// Calls a starved shim (tests/fauxmplementations/starved_shim.py, 20 ms of CPU per answer while
/// a busy loop of higher priority shares its CPU: it gets about 1.5% of it, less on a loaded
/// machine) makes with a deadline of a third of the wall time its first answer took: it did
/// 20 ms of work, and the rest was the machine's, so it is answered. Calibrated in the same run,
/// so the machine's load does not decide it; charged time runs at least at 1/8 of wall time, so
/// an answer more than 2.6 times slower than the first times out on that floor: such a run
/// proves nothing and is calibrated again. `call` makes one call with the deadline given.
fn starved_shim_is_answered(
    transport: &str,
    call: &mut dyn FnMut(Duration) -> Result<serde_json::Value, String>,
) {
    // A timeout after LEAST_SHARE times the deadline of wall time is the floor's (the machine
    // gave the shim less than 1/LEAST_SHARE of the time): the run says nothing, calibrate again.
    // A timeout before it means waits were charged, and fails.
    for _ in 0..5 {
        let first = call(Duration::from_secs(120));
        let wall = first.expect("an answer within 120 s")["wallSeconds"]
            .as_f64()
            .expect("wallSeconds");
        let deadline = Duration::from_secs_f64(wall / 3.0).max(Duration::from_millis(1));
        let began = Instant::now();
        let answer = call(deadline);
        let took = began.elapsed();
        if answer.is_err() && took >= deadline * LEAST_SHARE * 9 / 10 {
            continue;
        }
        assert!(
            answer.as_ref().is_ok_and(|a| a["worked"] == json!(0.02)),
            "{transport}: the first answer took {wall:.2} s of wall time; with a deadline of \
             {deadline:?}, after {took:?}: {answer:?}"
        );
        return;
    }
    panic!(
        "{transport}: five runs in a row ended on the floor of charged time: the machine never \
         let the shim run"
    );
}

fn starved_shim() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fauxmplementations/starved_shim.py")
        .display()
        .to_string()
}

/// Over stdio, the shim's process is hcpspec's child. Before the machine's waits were taken
/// off, it timed out well before the floor.
#[test]
fn a_shim_the_machine_starves_is_not_timed_out() {
    let argv = ["python3".to_string(), starved_shim(), "0.02".to_string()];
    starved_shim_is_answered("stdio", &mut |timeout| {
        let opts = Options {
            timeout,
            ..Options::default()
        };
        let mut p = Process::start(&argv, &opts).expect("starts");
        p.call("starved", json!({})).map_err(|e| e.to_string())
    });
}

/// Over HTTP and WebSocket, the shim is a server hcpspec did not start: its waits are found
/// through the process holding the port it listens on. Before, their deadlines ran in wall
/// time, and the call timed out well before the floor.
#[test]
fn a_served_shim_the_machine_starves_is_not_timed_out() {
    use std::io::BufRead;
    for (mode, url) in [
        ("http", "http://127.0.0.1:{port}"),
        ("ws", "ws://127.0.0.1:{port}/"),
    ] {
        let mut server = std::process::Command::new("python3")
            .args([starved_shim(), "0.02".into(), mode.into()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 starts");
        let mut line = String::new();
        std::io::BufReader::new(server.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("its port");
        let spec = url.replace("{port}", line.trim());
        starved_shim_is_answered(mode, &mut |timeout| {
            let opts = Options {
                timeout,
                ..Options::default()
            };
            let connect = hcpspec::adapter::shim_connector(&spec.parse().unwrap(), &opts).unwrap();
            connect()?
                .call("starved", json!({}))
                .map_err(|e| e.to_string())
        });
        // Its stdin's end ends it, whatever wraps python3 (pyenv's shim is a script).
        drop(server.stdin.take());
        let _ = server.kill();
        let _ = server.wait();
    }
}

/// A core-api case against `starved_core.py 0.02` that asks its core one request, waiting
/// `wait_ms` for the answer: the request step's observation, and how long the case took.
fn starved_core_request(wait_ms: u64) -> (serde_json::Value, Duration) {
    use std::path::Path;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = format!(
        r#"{{"id": "starved", "title": "t", "section": "1", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"x\")",
        "script": {{ "steps": [ {{ "connect": {{}}, "expect": {{ "status": 101 }} }},
            {{ "request": {{ "m": "work", "waitMs": {wait_ms} }} }} ] }} }}"#
    );
    let denials = hcpspec::case::load_denials(&root.join("vectors")).unwrap();
    let case = hcpspec::suites::parse_case(
        Path::new("starved.json"),
        &text,
        "core-api",
        "core",
        &denials,
    )
    .expect("the case loads");
    let shim = root.join("tests/fauxmplementations/starved_core.py");
    let spec = format!("stdio:python3 {} 0.02", shim.display());
    let opts = Options {
        timeout: Duration::from_secs(120),
        ..Options::default()
    };
    let connect = hcpspec::suites::core_api::connector(&spec.parse().unwrap(), &opts).unwrap();
    let began = Instant::now();
    let r = hcpspec::suites::core_api::run_case(&case, &connect);
    let took = began.elapsed();
    let step = r
        .observations
        .iter()
        .find(|o| o.step == 1)
        .unwrap_or_else(|| panic!("no request observed: {:?}", r.verdict));
    (step.value.clone(), took)
}

/// A core-api wait judges the core, not the machine: a core (a child of its control shim) that
/// needs 20 ms of CPU per answer while a busy loop of higher priority shares its CPU meets a
/// `waitMs` of a third of the wall time its first answer took, calibrated in the same run as
/// above. A run that ends on the floor of charged time (1/8 of wall time) proves nothing and is
/// calibrated again. Before core-api's waits were charged time, it had no answer.
#[test]
fn a_core_the_machine_starves_is_answered_within_its_wait() {
    for _ in 0..5 {
        let (first, _) = starved_core_request(10_000);
        let Some(wall) = first["r"]["wallSeconds"].as_f64() else {
            // Even 10 s was not enough (the floor, or wall time before the fix): again.
            continue;
        };
        let wait_ms = ((wall / 3.0) * 1000.0).max(1.0) as u64;
        let (answer, took) = starved_core_request(wait_ms);
        if answer.get("noAnswer").is_some()
            && took >= Duration::from_millis(wait_ms) * LEAST_SHARE * 9 / 10
        {
            continue;
        }
        assert_eq!(
            answer["r"]["worked"],
            json!(0.02),
            "the first answer took {wall:.2} s of wall time; with a waitMs of {wait_ms}, after \
             {took:?}: {answer}"
        );
        return;
    }
    panic!("five runs in a row ended on the floor of charged time or had no first answer");
}

/// A shim slow to start (2 s before it reads anything, as an interpreter importing its modules
/// on a loaded machine) is reachable with a `--timeout` of 1 s: a shim's first call has the
/// start-up allowance besides (`adapter::stdio::START_ALLOWANCE`), every later call its
/// `--timeout` only. Before, it was unreachable: "no answer within 1 s".
#[test]
fn a_shim_slow_to_start_is_given_its_start_up() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let slow = root.join("tests/fauxmplementations/slow_start.py");
    let hcpspec = env!("CARGO_BIN_EXE_hcpspec");
    // A process per case (core-api, host): its first call, then another.
    let argv: Vec<String> = ["python3", &slow.display().to_string(), "2", hcpspec, "shim"]
        .into_iter()
        .chain(["--runtime", "core:reference"])
        .map(String::from)
        .collect();
    let mut p = Process::start(
        &argv,
        &Options {
            timeout: Duration::from_secs(1),
            ..Options::default()
        },
    )
    .expect("starts");
    let first = p.call("core.describe", json!({}));
    assert!(first.is_ok(), "the first call: {first:?}");
    let again = p.call("core.describe", json!({}));
    assert!(again.is_ok(), "a later call: {again:?}");
    // A pool of processes sent `initialize` once each (contract), through the command line.
    let out = tempfile::tempdir().unwrap();
    let runtime = format!("stdio:python3 {} 2 {hcpspec} shim", slow.display());
    let o = std::process::Command::new(hcpspec)
        .args(["run", "--suite", "contract", "--runtime", &runtime])
        .args([
            "--section",
            "1",
            "--timeout",
            "1",
            "--jobs",
            "2",
            "--color",
            "never",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
