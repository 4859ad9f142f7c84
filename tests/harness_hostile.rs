//! Bad input from a harness: one that never connects, knocks on the wrong path, sends binary,
//! non-JSON, floods, crashes or hangs (ignoring SIGTERM, with a child of its own) is a failing
//! verdict with evidence within the scenario's deadline, never a hang of hcpspec, and its
//! processes are always reaped.

mod common;

use hcpspec::adapter::reap::KILL_WAIT;
use hcpspec::case::Case;
use hcpspec::run::Verdict;
use hcpspec::suites::harness_api::launch::GRACE;
use hcpspec::suites::harness_api::{run_case, Harness, CONNECT_ALLOWANCE_MS, SETTLE_MS};
use hcpspec::suites::world::time::LEAST_SHARE;
use std::path::Path;
use std::time::{Duration, Instant};

fn scenario(deadline_ms: u64) -> Case {
    let text = format!(
        r#"{{"id": "hostile", "title": "t", "section": "2", "level": "MUST",
            "spec": "004_0d5b24e47247e871.txt § 2 Work: hello, lease, renew, release (\"x\")",
            "scenario": {{ "deadlineMs": {deadline_ms}, "model": [{{ "text": "done" }}],
                           "checks": [{{ "check": "ends", "with": "turn.completed" }}] }} }}"#
    );
    let denials =
        hcpspec::case::load_denials(&Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors"))
            .unwrap();
    let mut c = hcpspec::suites::parse_case(
        Path::new("hostile.json"),
        &text,
        "harness-api",
        "harness",
        &denials,
    )
    .unwrap();
    c.group = "hostile".into();
    c
}

/// A case of `offers` offers, read as `hcpspec run` reads one: its verdict at load.
fn offers_case(offers: usize) -> Result<Case, String> {
    let text = serde_json::json!({ "id": "hostile", "title": "t", "section": "2", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 2 Work: hello, lease, renew, release (\"x\")",
        "scenario": { "offers": vec!["turn"; offers] } })
    .to_string();
    let denials =
        hcpspec::case::load_denials(&Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors"))
            .unwrap();
    hcpspec::suites::parse_case(
        Path::new("hostile.json"),
        &text,
        "harness-api",
        "harness",
        &denials,
    )
    .map_err(|e| e.to_string())
}

/// `offers` is bounded at load (docs/security.md), at the 1000 that play and judge in time.
#[test]
fn more_than_1000_offers_are_refused_at_load() {
    offers_case(1000).expect("1000 offers load");
    let e = offers_case(1001).expect_err("1001 offers");
    assert!(e.contains("/scenario/offers"), "not named: {e}");
}

fn hostile(mode: &str) -> Harness {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_harness.py");
    Harness::parse(&format!("exec:python3 {} {mode}", script.display())).unwrap()
}

/// Play the scenario: a failure (never a pass, never an error of hcpspec), within the deadline
/// and the stop's grace, with this text somewhere in its evidence.
fn fails_with(mode: &str, evidence: &str) {
    fails_within(mode, 1500, evidence, None);
}

/// Play a scenario of `deadline_ms` on a thread of its own; past the most it may take (its
/// allowance to connect and its deadline, at the least share of wall time scenario time runs
/// at, then the stop's grace and kill, and slack), the test fails then and there instead of
/// waiting for hcpspec (it
/// kills the processes named in `pidfile`, if any, so that a failing test leaves none behind).
fn fails_within(
    mode: &str,
    deadline_ms: u64,
    evidence: &str,
    pidfile: Option<&Path>,
) -> hcpspec::run::CaseResult {
    // Beside each other, the floods (3 GB through a pipe or a socket) too: deadlines are
    // scenario time, which does not charge the machine's load, and what the scenarios hold
    // shares the process's budget, as at `--jobs` (this process peaked at 329 MiB so, 274 MiB
    // with the floods alone; the whole binary 62 s -> 40 s on 2 cores).
    let _read = ALONE.read().unwrap_or_else(|p| p.into_inner());
    play_within(mode, deadline_ms, evidence, pidfile)
}

/// [`fails_within`] without taking [`ALONE`] (for a test that holds it itself).
fn play_within(
    mode: &str,
    deadline_ms: u64,
    evidence: &str,
    pidfile: Option<&Path>,
) -> hcpspec::run::CaseResult {
    let t = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    let h = hostile(mode);
    std::thread::spawn(move || {
        let _ = tx.send(run_case(&scenario(deadline_ms), &h));
    });
    // The most a scenario may take, however loaded the machine: its allowance to connect and its
    // deadline are scenario time, which runs at least at its least share of wall time
    // (docs/harness-api.md § 1), then the stop's grace and kill; and 5 s of slack.
    let scenario = CONNECT_ALLOWANCE_MS + deadline_ms + SETTLE_MS;
    let bound = Duration::from_millis(scenario * LEAST_SHARE + 5000) + GRACE + KILL_WAIT;
    let Ok(r) = rx.recv_timeout(bound) else {
        for pid in pidfile.map(pids).unwrap_or_default() {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        panic!("{mode}: the scenario of {deadline_ms} ms was not over after {bound:?}");
    };
    let took = t.elapsed();
    let Verdict::Fail(f) = &r.verdict else {
        panic!("{mode}: expected a failure, got {:?}", r.verdict)
    };
    let all = format!("{} {}", f.message, f.actual);
    assert!(all.contains(evidence), "{mode}: `{evidence}` not in {all}");
    eprintln!("{mode}: over in {took:?}");
    r
}

/// Held for writing by the tests whose timing is their point (a harness starved of a CPU by
/// threads of the test's own, scenarios stopped while a long one runs), for reading by the rest.
static ALONE: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn pids(pidfile: &Path) -> Vec<i32> {
    std::fs::read_to_string(pidfile)
        .unwrap_or_default()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Running, not a zombie (an orphan's zombie waits on an init that may never reap it).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|r| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Past its allowance to connect (not its scenario's deadline, which runs once it connects).
/// Without [`ALONE`]: a harness that never connects gets the same verdict beside a flood, and
/// its 30 s would hold up every test that runs alone.
#[test]
fn a_harness_that_never_connects_fails_past_its_allowance_to_connect() {
    let t = std::time::Instant::now();
    play_within("never-connects", 1500, "never connected", None);
    let allowance = Duration::from_millis(hcpspec::suites::harness_api::CONNECT_ALLOWANCE_MS);
    assert!(t.elapsed() >= allowance, "over in {:?}", t.elapsed());
}

/// A harness that exits before it connects is not waited for.
#[test]
fn a_harness_that_exits_before_connecting_fails_at_once() {
    let _read = ALONE.read().unwrap_or_else(|p| p.into_inner());
    let t = std::time::Instant::now();
    play_within("exits-at-once", 1500, "never connected", None);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "over in {:?}",
        t.elapsed()
    );
}

#[test]
fn a_wrong_path_is_refused_404_and_shown() {
    fails_with("wrong-path", "404");
}

#[test]
fn a_binary_frame_fails_with_its_reason() {
    fails_with("binary", "binary frame");
}

/// A harness the machine keeps from a CPU is judged on its own time: a deadline is scenario
/// time, which does not count its waits for a CPU (docs/harness-api.md § 1). Five busy threads
/// share its one CPU: it needs 0.4 s on it before its binary frame, 2.4 s of wall time at its
/// fair share, past the deadline of 1.5 s on a wall clock.
#[cfg(target_os = "linux")]
#[test]
fn a_harness_kept_from_a_cpu_by_the_machine_is_judged_on_its_own_time() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let _alone = ALONE.write().unwrap_or_else(|p| p.into_inner());
    // SAFETY: a zeroed cpu_set_t is an empty set; the calls fill or read it within its size.
    let cpu = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        (0..libc::CPU_SETSIZE as usize)
            .find(|c| libc::CPU_ISSET(*c, &set))
            .unwrap_or(0)
    };
    /// The busy threads stop when the test ends, however it ends.
    struct Stop(Arc<AtomicBool>);
    impl Drop for Stop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = Stop(Arc::new(AtomicBool::new(false)));
    for _ in 0..5 {
        let stop = stop.0.clone();
        std::thread::spawn(move || {
            // SAFETY: as above; 0 is the calling thread.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
    }
    play_within(&format!("starved {cpu}"), 1500, "binary frame", None);
}

#[test]
fn a_frame_that_is_not_json_fails_with_its_reason() {
    fails_with("not-json", "not one JSON message");
}

#[test]
fn a_flood_is_cut_off() {
    fails_with("floods", "flood");
}

#[test]
fn a_crash_keeps_the_last_stderr_lines() {
    fails_with("crashes", "the harness fell over");
}

#[test]
fn a_hang_ignoring_sigterm_is_killed_with_its_children() {
    let pidfile = tempfile::NamedTempFile::new().unwrap();
    // An argument, not a variable: a launched harness gets no variable of hcpspec's but the
    // minimal set (docs/harness-api.md § 1).
    fails_with(
        &format!("hangs-ignoring-sigterm {}", pidfile.path().display()),
        "still held",
    );
    let pids: Vec<i32> = std::fs::read_to_string(pidfile.path())
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    for pid in pids {
        assert!(!alive(pid), "process {pid} outlived its scenario");
    }
}

#[test]
fn a_harness_in_hcpspecs_group_ignoring_sigterm_is_killed_within_the_grace() {
    let pidfile = tempfile::NamedTempFile::new().unwrap();
    fails_within(
        &format!("joins-hcpspec-group {}", pidfile.path().display()),
        1500,
        "still held",
        Some(pidfile.path()),
    );
    let pids = pids(pidfile.path());
    assert_eq!(pids.len(), 1, "the harness wrote its pid");
    std::thread::sleep(Duration::from_millis(100));
    assert!(!alive(pids[0]), "process {} outlived its scenario", pids[0]);
}

#[test]
fn a_setsid_child_and_a_double_forked_daemon_die_with_their_scenario() {
    let pidfile = tempfile::NamedTempFile::new().unwrap();
    fails_within(
        &format!("setsid-grandchild {}", pidfile.path().display()),
        1500,
        "still held",
        Some(pidfile.path()),
    );
    let pids = pids(pidfile.path());
    assert_eq!(
        pids.len(),
        3,
        "the harness, its setsid child and its daemon"
    );
    // No wait: the stop itself kills and reaps them.
    let left: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for pid in &left {
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    assert!(
        left.is_empty(),
        "processes {left:?} outlived their scenario"
    );
    // Not zombies either: hcpspec reaped what was re-parented to it.
    for pid in &pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "process {pid} is left unreaped"
        );
    }
}

#[test]
fn a_stderr_line_of_3_gb_without_newline_is_cut_not_held() {
    let r = fails_within("stderr-without-newline", 2500, "[cut: ", None);
    let Verdict::Fail(f) = &r.verdict else {
        unreachable!()
    };
    let stderr = f.actual["stderr"].as_array().unwrap();
    assert!(stderr.len() <= 40, "{} stderr lines kept", stderr.len());
    assert!(
        stderr.iter().all(|l| l.as_str().unwrap().len() < 600),
        "a stderr line past its cap"
    );
    rss_bounded("a 3 GB stderr line");
}

/// Its deadline is not its subject: the cut comes at about 0.4 s of scenario time (which the
/// machine's load does not run down), 3 s leaves it 7 times that.
#[test]
fn a_flood_of_big_frames_is_cut_by_its_bytes() {
    fails_within("big-frame-flood", 3000, "past", None);
    rss_bounded("a flood of 16 MiB frames");
}

/// Its deadline is not its subject: the queue's cap is passed at about 0.7 s of scenario time
/// (which the machine's load does not run down; 0.7 s at load 10 and at 42), 4 s leaves it 5
/// times that (it was 8 s, which a scenario then waited out, up to 8 times over when loaded).
#[test]
fn a_harness_that_never_reads_has_a_bounded_queue() {
    fails_within("never-reads", 4000, "does not read core's frames", None);
    rss_bounded("a harness that never reads its answers");
}

#[test]
fn a_gate_body_one_byte_a_second_is_cut_at_its_deadline() {
    fails_within("slow-gate-body", 3500, "gate body", None);
}

#[test]
fn a_gate_body_of_3_gb_is_refused_not_buffered() {
    fails_within("huge-gate-body", 2500, "gate body", None);
    rss_bounded("a 3 GB gate body");
}

#[test]
fn a_chatty_harness_records_bounded_observations() {
    let r = fails_within("chatty", 2000, "", None);
    let n = r.observations.len();
    let bytes: usize = r
        .observations
        .iter()
        .map(|o| o.value.to_string().len())
        .sum();
    eprintln!("chatty: {n} observations, {bytes} bytes");
    assert!(n <= 300, "{n} observations recorded");
    assert!(bytes <= 1 << 20, "{bytes} bytes of observations recorded");
    let dropped = r
        .observations
        .iter()
        .find(|o| o.action == "dropped")
        .expect("the drop is counted");
    assert!(dropped.value["observations"].as_u64().unwrap() > 4000);
    rss_bounded("a chatty harness");
}

/// hcpspec's peak RSS (this test process's VmHWM) within the bound, printed for the record.
fn rss_bounded(what: &str) {
    let peak = common::peak_rss(std::process::id()).unwrap_or(0);
    eprintln!("{what}: peak RSS {} MiB", peak >> 20);
    common::assert_rss_bounded(what);
}

#[test]
fn a_stop_kills_its_own_harness_only_never_another_scenarios() {
    // A long scenario whose harness has a setsid child and a daemon, and short ones stopped
    // meanwhile: their reapers must leave the long one's processes alone.
    // Alone: its timing is its point (the short scenarios run while the long one does).
    let _alone = ALONE.write().unwrap_or_else(|p| p.into_inner());
    let pidfile = tempfile::NamedTempFile::new().unwrap();
    let path = pidfile.path().to_path_buf();
    let spawned = Instant::now();
    let long = std::thread::spawn(move || {
        play_within(
            &format!("setsid-grandchild {}", path.display()),
            8000,
            // Held, or dropped for its silence: a failure either way.
            "",
            Some(&path),
        )
    });
    while pids(pidfile.path()).len() < 3 && !long.is_finished() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let long_pids = pids(pidfile.path());
    assert_eq!(long_pids.len(), 3, "the long scenario's harness started");
    // Six, two at a time (they used to share a token with each other and the long one often
    // enough: each stop then took, and reaped, the other's harness, and waited for it in vain).
    let short = || {
        let r = play_within("crashes", 800, "", None);
        let Verdict::Fail(f) = &r.verdict else {
            unreachable!()
        };
        assert!(
            !f.actual["stderr"].to_string().contains("after SIGKILL"),
            "a stop waited for a process not its own: {}",
            f.actual["stderr"]
        );
    };
    for _ in 0..3 {
        let other = std::thread::spawn(short);
        short();
        other.join().unwrap();
    }
    // Its processes are alive as long as it runs: at least its 8 s deadline, since scenario time
    // never runs ahead of wall time. On a machine so slow that the short ones took longer,
    // there is nothing to see.
    let dead: Vec<i32> = long_pids.iter().copied().filter(|p| !alive(*p)).collect();
    let running = spawned.elapsed() < Duration::from_millis(8000);
    assert!(
        !running || dead.is_empty(),
        "another scenario's stop killed {dead:?} of the long scenario's {long_pids:?}"
    );
    long.join().unwrap();
    let left: Vec<i32> = long_pids.iter().copied().filter(|p| alive(*p)).collect();
    assert!(
        left.is_empty(),
        "processes {left:?} outlived their scenario"
    );
}

/// A harness asking for 8 MiB answers it never reads, in an hcpspec process of its own: once
/// its queue passed the cap core dropped it and reads no more of it, so its scenario holds its
/// queue and what it read before (it went on reading, logging each request and its answer:
/// 630 MiB in a release build, the most any scenario held, and what made 8 or 16 of them at once
/// pass the 1 GiB bound).
#[test]
fn a_harness_dropped_for_not_reading_is_read_no_more() {
    let _beside = ALONE.read().unwrap_or_else(|p| p.into_inner());
    let dir = suite_of(1, "never-reads", 4000);
    let (out, o, peak) = run_in_a_process(&dir, "never-reads", 1);
    eprintln!(
        "a harness that never reads, alone: peak RSS {} MiB",
        peak >> 20
    );
    let result = std::fs::read_to_string(out.join("result.json")).expect("result.json");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        result.contains("does not read core's frames"),
        "not dropped for its queue: {text}"
    );
    assert!(
        peak < 400 << 20,
        "a harness that never reads: hcpspec's peak RSS was {} MiB (bound 400 MiB)",
        peak >> 20
    );
}

/// `hcpspec run` of the suite in `dir` against the hostile harness in `mode`, `jobs` scenarios
/// at once, in a process of its own: its out folder, its output and its peak RSS.
fn run_in_a_process(
    dir: &tempfile::TempDir,
    mode: &str,
    jobs: usize,
) -> (std::path::PathBuf, std::process::Output, u64) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_harness.py");
    let out = dir.path().join("out");
    let (o, peak) = common::output_and_peak_rss(
        std::process::Command::new(env!("CARGO_BIN_EXE_hcpspec"))
            .args([
                "run",
                "--suite",
                "harness-api",
                "--jobs",
                &jobs.to_string(),
                "--vectors",
            ])
            .arg(dir.path())
            .arg("--runtime")
            .arg(format!("exec:python3 {} {mode}", script.display()))
            .arg("--out")
            .arg(&out),
    );
    (out, o, peak)
}

/// A harness-api suite of `n` cases `NAME-i`, each a scenario of `deadline_ms` that ends when
/// the harness completes its turn, in a folder of its own (the suite's meta without its
/// ledgers and requirements).
fn suite_of(n: usize, name: &str, deadline_ms: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let suite = dir.path().join("harness-api");
    std::fs::create_dir_all(suite.join("01-transport")).unwrap();
    std::fs::copy(
        vectors.join("denials.json"),
        dir.path().join("denials.json"),
    )
    .unwrap();
    let mut meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(vectors.join("harness-api/suite.json")).unwrap(),
    )
    .unwrap();
    let meta = meta.as_object_mut().unwrap();
    meta.remove("requirements");
    meta.remove("ledgers");
    std::fs::write(
        suite.join("suite.json"),
        serde_json::to_string(meta).unwrap(),
    )
    .unwrap();
    for i in 0..n {
        let case = serde_json::json!({ "id": format!("{name}-{i}"), "title": "t", "section": "1",
            "level": "MUST",
            "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"One JSON text message per frame, at most 64 MiB (HARNESS_MAX_PAYLOAD).\")",
            "scenario": { "deadlineMs": deadline_ms, "model": [{ "text": "done" }],
                          "checks": [{ "check": "ends", "with": "turn.completed" }] } });
        std::fs::write(
            suite.join(format!("01-transport/{name}-{i}.json")),
            case.to_string(),
        )
        .unwrap();
    }
    dir
}

/// Eight floods of 16 MiB frames at once (`--jobs 8`, in an hcpspec process of its own): its
/// peak RSS stays under the bound, the process's budget of bytes holding what its scenarios
/// buffer together (it was 1.5 to 2.1 GB: 256 MiB kept per scenario), each still a failure.
/// Beside every other test, [`ALONE`] not taken: its peak is that process's, which this one's
/// tests do not add to (nor it to theirs), and its load is what the timing tests are proven
/// under (CI's loaded step: ten busy loops).
#[test]
fn eight_floods_of_big_frames_at_once_stay_within_the_memory_bound() {
    // 3 s, not 6: each scenario waits out its deadline, one after another within the budget,
    // and a flood is cut at about 0.4 s of scenario time.
    let dir = suite_of(8, "flood", 3000);
    let (out, o, peak) = run_in_a_process(&dir, "big-frame-flood", 8);
    let text = String::from_utf8_lossy(&o.stdout);
    eprintln!(
        "eight floods of 16 MiB frames at --jobs 8: peak RSS {} MiB",
        peak >> 20
    );
    let result = std::fs::read_to_string(out.join("result.json")).expect("result.json");
    assert!(text.contains("8 cases"), "{text}");
    // Each a failure, never a pass nor an error of hcpspec's (the flood's `within-caps`, or on a
    // machine too loaded to read 256 MiB within the deadline, `ends`: the wait for the budget
    // itself is not charged to a scenario's clock).
    assert_eq!(
        result.matches("\"verdict\": \"fail\"").count(),
        8,
        "each flood fails: {text}"
    );
    let caps = result.matches("[within-caps;").count();
    eprintln!("{caps} of 8 floods failed within-caps");
    assert!(
        peak < common::RSS_BOUND,
        "eight floods at --jobs 8: hcpspec's peak RSS was {} MiB (bound {} MiB)",
        peak >> 20,
        common::RSS_BOUND >> 20
    );
}
