//! The shim protocol's transports against real child processes and loopback sockets: the
//! contract suite over stdio, HTTP and WebSocket with parity against in-process, mutants killed
//! over stdio, and deliberately broken shims (tests/fauxmplementations/faux_shim.py) whose every
//! misbehaviour must end as a clear verdict, never as a hang or a crash of hcpspec.

use hcpspec::adapter::Options;
use hcpspec::case::{Case, Level};
use hcpspec::knob::Knob;
use hcpspec::run::parity;
use hcpspec::run::{CaseResult, Verdict};
use hcpspec::suites::hcp::runtime::mutant::Mutant;
use hcpspec::suites::hcp::{run_all, RunEnv};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const HCPSPEC: &str = env!("CARGO_BIN_EXE_hcpspec");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn claims() -> hcpspec::case::matcher::Claims {
    hcpspec::suites::hcp::embedded_claims("reference").unwrap()
}

fn env() -> &'static RunEnv {
    static E: OnceLock<RunEnv> = OnceLock::new();
    E.get_or_init(|| {
        RunEnv::new(
            &root().join("vectors"),
            Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")),
        )
        .expect("run env")
    })
}

fn suite() -> &'static [Case] {
    static S: OnceLock<Vec<Case>> = OnceLock::new();
    S.get_or_init(|| {
        hcpspec::suites::load_driving(&root().join("vectors"), "hcp-runtime")
            .map(|l| (l.info, l.cases))
            .expect("the HCP runtime suite loads")
            .1
    })
}

fn faux() -> String {
    root()
        .join("tests/fauxmplementations/faux_shim.py")
        .display()
        .to_string()
}

/// A child that serves on loopback and says where on its first stdout line; killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(program: &str, args: &[&str]) -> Server {
        let mut child = Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().expect("piped"))
            .read_line(&mut line)
            .expect("first line");
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("{program} {args:?} printed {line:?}"))
            .to_string();
        Server { child, url }
    }

    fn shim(transport: &str, runtime: &str) -> Server {
        Server::start(
            HCPSPEC,
            &[
                "shim",
                "--transport",
                transport,
                "--runtime",
                runtime,
                "--listen",
                "127.0.0.1:0",
            ],
        )
    }

    fn faux(transport: &str) -> Server {
        Server::start("python3", &[&faux(), "--transport", transport])
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stdio_shim(runtime: &str) -> String {
    format!(
        "stdio:{} shim --transport stdio --runtime {runtime}",
        shell_words::quote(HCPSPEC)
    )
}

/// A one-exec case whose verb_key tells the faux shim how to misbehave.
fn faux_case(verb: &str, more: Vec<Value>) -> Case {
    let mut steps = vec![json!({ "exec": { "pack_id": "faux", "verb_key": verb, "args": {} } })];
    steps.extend(more);
    let mut c: Case = serde_json::from_value(json!({
        "id": verb, "title": format!("faux shim: {verb}"), "section": "6", "level": "MUST",
        "spec": "000_0000000000000000.txt § transports", "steps": steps
    }))
    .expect("a case");
    c.suite = "transports".into();
    c.group = "faux".into();
    c
}

/// The deadline of one call where a hang is what the test is about: short, so that each broken
/// call costs little, yet long enough that a Python shim starting on a loaded 2-core machine
/// answers its handshake (1 s was missed in CI, when these tests ran eight at once; with 3 s
/// they run beside each other and the rest of `tests/it`). Tests about anything else keep the
/// default.
fn quick() -> Options {
    Options {
        timeout: Duration::from_secs(3),
        ..Default::default()
    }
}

/// What a broken call made of the case: an error verdict's message, or, for an exec the shim
/// answered with an error (the runtime threw where a value is due), the failure and what it saw.
fn error_of(r: &CaseResult) -> String {
    match &r.verdict {
        Verdict::Error { message } => message.clone(),
        Verdict::Fail(f) if f.actual.get("thrown").is_some() => {
            format!("{} {}", f.message, f.actual)
        }
        other => panic!("{}: expected an error verdict, got {other:?}", r.name),
    }
}

fn pid_of(r: &CaseResult) -> u64 {
    assert_eq!(r.verdict, Verdict::Pass, "{}", r.name);
    r.observations
        .iter()
        .find(|o| o.action == "exec")
        .and_then(|o| o.value.pointer("/result/pid"))
        .and_then(Value::as_u64)
        .expect("the faux shim's pid")
}

/// What each misbehaviour must turn into, over any transport: (verb_key, texts the error
/// names). `None`: the case passes.
const BROKEN: &[(&str, Option<&[&str]>)] = &[
    ("ok", None),
    ("split", None),
    (
        "hang",
        Some(&["step 1 (exec)", "runtime.exec", "no answer within 3 s"]),
    ),
    ("drip", Some(&["runtime.exec", "no answer within 3 s"])),
    (
        "garbage",
        Some(&["runtime.exec", "not JSON", "this is not json"]),
    ),
    ("wrong-id", Some(&["runtime.exec", "carries id"])),
    (
        "missing-field",
        Some(&[
            "runtime.exec",
            "runtime.exec.schema.json at /:",
            "\"verb_key\" is a required property",
        ]),
    ),
    (
        "bad-type",
        Some(&[
            "runtime.exec",
            "at /ok:",
            "\"yes\" is not of type \"boolean\"",
        ]),
    ),
    ("oversize", Some(&["runtime.exec", "size cap of 8 MiB"])),
    ("rpc-error", Some(&["faux refuses", "-32000"])),
];

/// Run every misbehaviour (and an `ok` after each, on the same connector) and check verdicts.
fn misbehaviours(spec: &str, extra: &[(&str, &[&str])]) {
    let mut cases = Vec::new();
    let mut expect: Vec<Option<Vec<&str>>> = Vec::new();
    for (verb, texts) in BROKEN
        .iter()
        .map(|(v, t)| (*v, t.map(|t| t.to_vec())))
        .chain(extra.iter().map(|(v, t)| (*v, Some(t.to_vec()))))
    {
        cases.push(faux_case(verb, vec![]));
        expect.push(texts);
        cases.push(faux_case("ok", vec![]));
        expect.push(None);
    }
    let connect = hcpspec::suites::hcp::shim::connector(spec, &quick()).expect("spec");
    // Each broken call costs one deadline (3 s of charged time: no timed assertion here, as the
    // machine's waits are not charged, docs/security.md); a hang says so below.
    let results = run_all(&cases, env(), &claims(), 2, &connect, &|_| {});
    assert_eq!(results.len(), cases.len());
    for (r, texts) in results.iter().zip(&expect) {
        match texts {
            None => assert_eq!(
                r.verdict,
                Verdict::Pass,
                "{spec}: {}: {:?}",
                r.name,
                r.verdict
            ),
            Some(texts) => {
                let m = error_of(r);
                for t in texts {
                    assert!(
                        m.contains(t),
                        "{spec}: {}: the error should name {t:?}:\n{m}",
                        r.name
                    );
                }
            }
        }
    }
}

#[test]
fn stdio_misbehaviours_are_verdicts() {
    let spec = format!("stdio:python3 {}", shell_words::quote(&faux()));
    misbehaviours(
        &spec,
        &[
            (
                "crash",
                &[
                    "runtime.exec",
                    "the shim closed its stdout mid-call",
                    "exited with status 3",
                    "faux: crashing on purpose during runtime.exec",
                ],
            ),
            (
                "close",
                &[
                    "runtime.exec",
                    "the shim closed its stdout mid-call",
                    "faux: closing without an answer",
                ],
            ),
        ],
    );
}

#[test]
fn http_misbehaviours_are_verdicts() {
    let faux = Server::faux("http");
    misbehaviours(
        &faux.url,
        &[("close", &["runtime.exec", "closed mid-call"])],
    );
}

#[test]
fn ws_misbehaviours_are_verdicts() {
    let faux = Server::faux("ws");
    misbehaviours(&faux.url, &[("close", &["runtime.exec", "mid-call"])]);
}

#[test]
fn a_crashed_stdio_shim_is_restarted_and_a_healthy_one_reused() {
    let spec = format!("stdio:python3 {}", shell_words::quote(&faux()));
    let cases: Vec<Case> = ["ok", "ok", "crash", "ok", "ok"]
        .iter()
        .map(|v| faux_case(v, vec![]))
        .collect();
    let connect = hcpspec::suites::hcp::shim::connector(&spec, &Default::default()).expect("spec");
    let r = run_all(&cases, env(), &claims(), 1, &connect, &|_| {});
    let (a, b) = (pid_of(&r[0]), pid_of(&r[1]));
    assert_eq!(a, b, "one process serves case after case");
    assert!(error_of(&r[2]).contains("exited with status 3"));
    let (c, d) = (pid_of(&r[3]), pid_of(&r[4]));
    assert_ne!(a, c, "the case after a crash gets a new process");
    assert_eq!(c, d);
}

#[test]
fn an_unimplemented_method_is_unimplemented_never_a_pass() {
    let spec = format!("stdio:python3 {}", shell_words::quote(&faux()));
    let connect = hcpspec::suites::hcp::shim::connector(&spec, &Default::default()).expect("spec");
    let r = run_all(
        &[faux_case("ok", vec![json!({ "audit": {} })])],
        env(),
        &claims(),
        1,
        &connect,
        &|_| {},
    );
    match &r[0].verdict {
        Verdict::Unimplemented { reason } => assert!(
            reason.contains("runtime.audit") && reason.contains("-32601"),
            "{reason}"
        ),
        other => panic!("expected unimplemented, got {other:?}"),
    }
    // It fails a MUST case unless an expectation gives a reason.
    use hcpspec::run::expectations::Outcome;
    let outcome = Outcome::of(&r[0], None);
    assert_eq!(outcome, Outcome::Unimplemented);
    assert!(outcome.fails_run(hcpspec::case::Level::MUST, false));
    // A method every shim must implement is never unimplemented: "method not found" there is an error.
    let r = run_all(
        &[faux_case("ok", vec![json!({ "activate": "faux" })])],
        env(),
        &claims(),
        1,
        &connect,
        &|_| {},
    );
    let m = error_of(&r[0]);
    assert!(
        m.contains("every shim must implement runtime.activate"),
        "{m}"
    );
}

#[test]
fn unreachable_and_unstartable_shims_are_errors() {
    let die = format!(
        "stdio:python3 {} --die-at-start",
        shell_words::quote(&faux())
    );
    let e = hcpspec::suites::hcp::shim::connector(&die, &Default::default()).expect("spec")()
        .err()
        .expect("the handshake fails");
    assert!(
        e.contains("failed the handshake")
            && e.contains("exited with status 4")
            && e.contains("cannot start: no runtime configured"),
        "{e}"
    );
    let e =
        hcpspec::suites::hcp::shim::connector("stdio:/nonexistent/shim --x", &Default::default())
            .expect("spec")()
        .err()
        .expect("cannot start");
    assert!(e.contains("cannot start `/nonexistent/shim --x`"), "{e}");
    for spec in ["http://127.0.0.1:9", "ws://127.0.0.1:9/ws"] {
        let mut a =
            hcpspec::suites::hcp::shim::connector(spec, &Default::default()).expect("spec")()
                .expect("lazy");
        let e = a
            .call("initialize", json!({ "protocol": "hcpspec-shim/1" }))
            .expect_err("nothing listens")
            .to_string();
        assert!(
            e.contains("initialize") && e.contains("cannot connect"),
            "{spec}: {e}"
        );
    }
    for bad in ["stdio:", "stdio:'unclosed", "http://", "ftp://x", "ws//x"] {
        assert!(
            hcpspec::suites::hcp::shim::connector(bad, &Default::default()).is_err(),
            "{bad} should be refused"
        );
    }
}

#[test]
fn invalid_params_are_never_sent() {
    let mut a = hcpspec::suites::hcp::shim::connector("inproc:reference", &Default::default())
        .expect("spec")()
    .expect("adapter");
    let e = a
        .call(
            "runtime.exec",
            json!({ "runtime_id": "rt-1", "pack_id": 7 }),
        )
        .expect_err("invalid")
        .to_string();
    assert!(
        e.contains("hcpspec would send invalid params") && e.contains("runtime.exec"),
        "{e}"
    );
}

/// The contract suite passes against the reference over every transport, and each case is
/// observed exactly as in-process.
#[test]
fn the_suite_passes_over_every_transport_with_parity() {
    let http = Server::shim("http", "reference");
    let ws = Server::shim("ws", "reference");
    let specs = [
        "inproc:reference".to_string(),
        stdio_shim("reference"),
        http.url.clone(),
        ws.url.clone(),
    ];
    let mut runs = Vec::new();
    for spec in &specs {
        let connect =
            hcpspec::suites::hcp::shim::connector(spec, &Default::default()).expect("spec");
        let info = connect()
            .expect("adapter")
            .call("initialize", json!({ "protocol": "hcpspec-shim/1" }))
            .expect("initialize");
        let results = run_all(suite(), env(), &claims(), 2, &connect, &|_| {});
        let bad: Vec<String> = results
            .iter()
            .filter(|r| r.verdict != Verdict::Pass)
            .map(|r| format!("{}: {:?}", r.name, r.verdict))
            .collect();
        assert!(
            bad.is_empty(),
            "{spec}: {} of {} cases do not pass:\n{}",
            bad.len(),
            results.len(),
            bad.join("\n")
        );
        runs.push((spec.clone(), info, results));
    }
    let view: Vec<(&str, &Value, &[CaseResult])> = runs
        .iter()
        .map(|(s, i, r)| (s.as_str(), i, r.as_slice()))
        .collect();
    let diffs = parity::compare(&view);
    assert!(
        diffs.is_empty(),
        "{}",
        diffs
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Mutants served by `hcpspec shim` over stdio are killed as in-process, verdict for verdict.
#[test]
fn mutants_are_killed_over_stdio() {
    for m in [
        Mutant::NoConfirmGate,
        Mutant::DefaultAllow,
        Mutant::ShellArgv,
        Mutant::NoAuditOnWrite,
    ] {
        let cases: Vec<Case> = suite()
            .iter()
            .filter(|c| c.level == Level::MUST && m.sections().contains(&c.section.as_str()))
            .cloned()
            .collect();
        let name = format!("mutant:{}", m.name());
        let over_stdio = run_all(
            &cases,
            env(),
            &claims(),
            2,
            hcpspec::suites::hcp::shim::connector(&stdio_shim(&name), &Default::default())
                .expect("spec"),
            &|_| {},
        );
        let inproc = run_all(
            &cases,
            env(),
            &claims(),
            2,
            hcpspec::suites::hcp::shim::connector(&format!("inproc:{name}"), &Default::default())
                .expect("spec"),
            &|_| {},
        );
        let killed = over_stdio
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::Fail(_)))
            .count();
        assert!(killed > 0, "{name} survives its own sections over stdio");
        for (s, i) in over_stdio.iter().zip(&inproc) {
            assert_eq!(s.verdict.label(), i.verdict.label(), "{name}: {}", s.name);
            assert_eq!(s.observations, i.observations, "{name}: {}", s.name);
        }
    }
}

#[test]
fn parity_flags_a_differing_observation_within_one_runtime() {
    let http = Server::shim("http", "reference");
    let case = suite()
        .iter()
        .find(|c| {
            hcpspec::suites::hcp::steps::Body::of(c)
                .is_ok_and(|b| b.steps.iter().any(|s| s.action.name() == "exec"))
        })
        .expect("a case with an exec")
        .clone();
    let a = run_all(
        std::slice::from_ref(&case),
        env(),
        &claims(),
        1,
        hcpspec::suites::hcp::shim::connector("inproc:reference", &Default::default())
            .expect("spec"),
        &|_| {},
    );
    let b = run_all(
        std::slice::from_ref(&case),
        env(),
        &claims(),
        1,
        hcpspec::suites::hcp::shim::connector(&http.url, &Default::default()).expect("spec"),
        &|_| {},
    );
    let info = json!({ "runtime": { "name": "reference", "version": "1" } });
    assert!(
        parity::compare(&[("inproc:reference", &info, &a), (&http.url, &info, &b)]).is_empty(),
        "same runtime, same observations"
    );
    let mut c = b.clone();
    let last = c[0].observations.len() - 1;
    c[0].observations[last].value = json!({ "tampered": true });
    let d = parity::compare(&[("inproc:reference", &info, &a), (&http.url, &info, &c)]);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].what
            .starts_with(&format!("/observations/{last}/value")),
        "{}",
        d[0]
    );
    let other = json!({ "runtime": { "name": "stub", "version": "1" } });
    assert!(
        parity::compare(&[("inproc:reference", &info, &a), ("x", &other, &c)]).is_empty(),
        "different runtimes are not compared"
    );
}

#[test]
fn hcpspec_run_over_two_transports_reports_parity() {
    let out = tempfile::tempdir().expect("tmp");
    let o = Command::new(HCPSPEC)
        .args([
            "run",
            "--runtime",
            "inproc:reference",
            "--runtime",
            &stdio_shim("reference"),
            "--section",
            "4",
            "--timeout",
            "3",
            "--out",
        ])
        .arg(out.path())
        .current_dir(root())
        .output()
        .expect("hcpspec run");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("transport parity: reference") && stdout.contains("observed the same"),
        "{stdout}"
    );
    let bad = Command::new(HCPSPEC)
        .args(["run", "--timeout", "0"])
        .current_dir(root())
        .output()
        .expect("hcpspec run");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn the_shim_binds_loopback_only() {
    for listen in ["0.0.0.0:0", "192.168.1.1:8080", "[::]:0"] {
        let o = Command::new(HCPSPEC)
            .args(["shim", "--transport", "http", "--listen", listen])
            .output()
            .expect("hcpspec shim");
        assert_eq!(o.status.code(), Some(2), "--listen {listen}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("only ever binds 127.0.0.1"));
    }
    let s = Server::shim("ws", "stub");
    assert!(
        s.url.starts_with("ws://127.0.0.1:") && s.url.ends_with("/ws"),
        "{}",
        s.url
    );
}

/// The stdio server answers broken requests with JSON-RPC errors and keeps serving; it ends
/// after `shutdown`.
#[test]
fn the_stdio_server_survives_bad_requests() {
    let mut child = Command::new(HCPSPEC)
        .args(["shim", "--transport", "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("shim");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    let mut ask = |line: &str| -> Value {
        writeln!(stdin, "{line}").expect("write");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        serde_json::from_str(&answer).expect("JSON")
    };
    assert_eq!(ask("not json")["error"]["code"], -32700);
    assert_eq!(ask("[1,2]")["error"]["code"], -32600);
    assert_eq!(
        ask(r#"{"jsonrpc":"1.0","id":1,"method":"initialize"}"#)["error"]["code"],
        -32600
    );
    assert_eq!(
        ask(r#"{"jsonrpc":"2.0","id":2,"method":"no.such"}"#)["error"]["code"],
        -32601
    );
    assert_eq!(
        ask(r#"{"jsonrpc":"2.0","id":3,"method":"runtime.exec","params":{}}"#)["error"]["code"],
        -32602
    );
    assert_eq!(
        ask(r#"{"jsonrpc":"2.0","id":4,"method":"runtime.audit","params":{"runtime_id":"rt-9"}}"#)
            ["error"]["code"],
        -32001
    );
    let init = ask(r#"{"jsonrpc":"2.0","id":"five","method":"initialize"}"#);
    assert_eq!(
        (init["id"].as_str(), init["result"]["protocol"].as_str()),
        (Some("five"), Some(hcpspec::shim::PROTOCOL))
    );
    assert_eq!(
        ask(r#"{"jsonrpc":"2.0","id":6,"method":"shutdown"}"#)["result"]["ok"],
        true
    );
    let until = Instant::now() + Duration::from_secs(5);
    while child.try_wait().expect("wait").is_none() {
        assert!(
            Instant::now() < until,
            "the shim did not exit after shutdown"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A WebSocket connection that closes takes its runtimes with it.
#[test]
fn a_closed_websocket_disposes_its_runtimes() {
    let session =
        std::sync::Arc::new(hcpspec::suites::hcp::shim::session("reference").expect("reference"));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("ws://{}/ws", listener.local_addr().expect("addr"));
    let service = hcpspec::shim::Service::Rpc(session.clone());
    std::thread::spawn(move || hcpspec::shim::ws::serve(listener, service));
    let work = tempfile::tempdir().expect("tmp");
    let create = json!({ "packDirs": [], "principal": { "id": "u", "kind": "human" }, "workdir": work.path() });
    {
        let mut a =
            hcpspec::suites::hcp::shim::connector(&url, &Default::default()).expect("spec")()
                .expect("adapter");
        for _ in 0..3 {
            assert_eq!(
                a.call("runtime.create", create.clone()).expect("create")["ok"],
                true
            );
        }
        assert_eq!(session.live(), 3);
    }
    let until = Instant::now() + Duration::from_secs(5);
    while session.live() > 0 {
        assert!(
            Instant::now() < until,
            "{} runtimes outlived their connection",
            session.live()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn every_shim_schema_compiles_and_names_its_method() {
    hcpspec::shim::schema::warm();
    for (name, text) in hcpspec::shim::schema::FILES {
        let v: Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(v["$id"], format!("https://hcpspec.dev/schemas/shim/{name}"));
        let file = root().join("vectors/schemas/shim").join(name);
        assert!(
            PathBuf::from(&file).is_file(),
            "{name} is embedded and on disk"
        );
    }
    for m in hcpspec::shim::schema::METHODS {
        assert!(
            hcpspec::shim::schema::FILES
                .iter()
                .any(|(f, _)| *f == format!("{m}.schema.json")),
            "{m} has a schema"
        );
    }
}

/// The suites whose shim holds a whole case (core-api, host): the reference served by `hcpspec
/// shim` over stdio, HTTP and WebSocket passes every case, observing the same as in-process.
#[test]
fn the_case_state_suites_pass_over_every_transport_with_parity() {
    use hcpspec::run::expectations::Expectations;
    use hcpspec::run::runner::{Quiet, Runner};
    use hcpspec::suites::Context;
    let vectors = root().join("vectors");
    for (drives, prefix) in [("core", "core"), ("host", "host")] {
        let l = hcpspec::suites::load_driving(&vectors, drives).expect("suite loads");
        let (suite, cases) = (&l.info, &l.cases);
        let runtime = format!("{prefix}:reference");
        let (http, ws) = (Server::shim("http", &runtime), Server::shim("ws", &runtime));
        let specs = [
            "inproc:reference".to_string(),
            stdio_shim(&runtime),
            http.url.clone(),
            ws.url.clone(),
        ];
        let ctx = Context::new(&vectors, Path::new(env!("CARGO_BIN_EXE_hcpspec-probe")));
        let targets: Vec<_> = specs
            .iter()
            .map(|s| l.suite.target(s, &ctx).expect("target"))
            .collect();
        let expectations = Expectations::default();
        let mut runner = Runner::new(suite, cases, &expectations);
        // core-api's cases mostly wait (a negative wait is 3 s): 8 at once, as its own runs
        // take 16; at 2 this test alone was 24 s of the binary's wall time.
        runner.jobs = 8;
        let result = runner.run(&targets, &mut Quiet).expect("runs");
        for run in &result.runtimes {
            let failed: Vec<&str> = run
                .cases
                .iter()
                .filter(|c| c.verdict != Verdict::Pass)
                .map(|c| c.name.as_str())
                .collect();
            assert!(
                failed.is_empty(),
                "{} over {}: {failed:?}",
                suite.name,
                run.runtime
            );
        }
        assert!(
            result.parity.is_empty(),
            "{}: {:?}",
            suite.name,
            result.parity
        );
    }
}
