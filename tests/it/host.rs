//! The host suite's own tests: bad input from a host shim (it exits, crashes, answers garbage or
//! nothing, lacks a method) is a verdict with evidence within its deadline, never a hang and
//! never a pass; the fuzzer finds nothing in the reference adapter, finds a mutant's broken rule,
//! and writes findings that replay.

use crate::common;

use hcpspec::case::Case;
use hcpspec::run::Verdict;
use hcpspec::suites::host::{connector, fuzz, run_case};
use hcpspec::suites::load_suite;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

fn case(text: &str) -> Case {
    let denials = hcpspec::case::load_denials(&vectors()).unwrap();
    let mut c =
        hcpspec::suites::parse_case(Path::new("hostile.json"), text, "host", "host", &denials)
            .unwrap();
    c.group = "hostile".into();
    c
}

const BIND: &str = r#"{"id": "hostile", "title": "t", "section": "0", "level": "MUST",
    "spec": "003_43d43b314353d2bc.txt § Overview (\"x\")",
    "host": { "steps": [ { "call": "host.bind", "expect": { "session": { "$type": "string" } } } ] } }"#;

fn verdict(mode: &str) -> (Verdict, Duration) {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fauxmplementations/hostile_host.py");
    let opts = hcpspec::adapter::Options {
        timeout: common::DEADLINE,
        ..Default::default()
    };
    let connect = connector(
        &format!("stdio:python3 {} {mode}", script.display())
            .parse()
            .unwrap(),
        &opts,
    )
    .unwrap();
    let t = Instant::now();
    let r = run_case(&case(BIND), &connect);
    (r.verdict, t.elapsed())
}

fn errors_with(mode: &str, evidence: &str) {
    common::errors_with(verdict(mode), mode, evidence);
}

#[test]
fn a_host_shim_that_exits_is_an_error() {
    errors_with("exits", "host.target");
}

#[test]
fn a_host_shim_that_answers_garbage_is_an_error() {
    errors_with("garbage", "not JSON");
}

#[test]
fn a_host_shim_that_never_answers_is_an_error_at_its_deadline() {
    errors_with("silent", "no answer");
}

#[test]
fn a_host_shim_that_crashes_mid_case_is_an_error() {
    errors_with("crashes-on-bind", "host.bind");
}

#[test]
fn a_host_shim_without_records_is_unimplemented_not_a_pass() {
    let (v, _) = verdict("no-records");
    assert!(matches!(v, Verdict::Unimplemented { .. }), "{v:?}");
}

fn fuzz_on(spec: &str, cases: Option<u64>, out: Option<&Path>) -> fuzz::Report {
    let all = load_suite(&vectors(), "host").unwrap();
    let connect = connector(&spec.parse().unwrap(), &Default::default()).unwrap();
    let budget = fuzz::Budget {
        seed: 7,
        seconds: 60.0,
        trials: cases,
        findings: None,
    };
    fuzz::run(&connect, &all, budget, out, &AtomicBool::new(false))
}

#[test]
fn the_fuzzer_finds_nothing_in_the_reference_adapter() {
    let r = fuzz_on("inproc:reference", Some(3000), None);
    assert_eq!(r.cases, 3000);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
}

#[test]
fn a_fuzz_finding_replays_on_the_mutant_and_passes_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let r = fuzz_on(
        "inproc:mutant:payload-ref-ignored",
        Some(400),
        Some(dir.path()),
    );
    let (why, _, path) = r.findings.first().expect("the mutant is found");
    let path = path.as_ref().expect("written");
    let text = std::fs::read_to_string(path).unwrap();
    let found = case(&text.replace(
        &format!(
            "\"id\": \"{}\"",
            path.file_stem().unwrap().to_string_lossy()
        ),
        "\"id\": \"hostile\"",
    ));
    let mutant = connector(
        &"inproc:mutant:payload-ref-ignored".parse().unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert!(
        matches!(run_case(&found, &mutant).verdict, Verdict::Fail(_)),
        "{why}: does not replay"
    );
    let reference = connector(&"inproc:reference".parse().unwrap(), &Default::default()).unwrap();
    assert_eq!(run_case(&found, &reference).verdict, Verdict::Pass);
}

/// `vectors/host/COVERAGE.md` against the spec and the suite: every quote in it is really in spec
/// 003, and every MUST case of the host suite is named in it (`a-{b,c}` names `a-b` and `a-c`).
#[test]
fn coverage_quotes_the_spec_and_names_every_must_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let coverage = std::fs::read_to_string(vectors().join("host/COVERAGE.md")).unwrap();
    let plain = |t: &str| {
        t.replace(['`', '*'], "")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let spec = plain(&std::fs::read_to_string(root.join("spec/003_43d43b314353d2bc.txt")).unwrap());
    let mut problems = Vec::new();
    // The quotes of a row are in its sentence cell (after `#`), from its first `"` to its last.
    for line in coverage.lines().filter(|l| l.starts_with("| ")) {
        let cell = line[2..].split(" | ").nth(1).unwrap_or_default();
        let (Some(a), Some(b)) = (cell.find('"'), cell.rfind('"')) else {
            continue;
        };
        for piece in plain(&cell[a..=b]).split(['"', '…']) {
            let piece = piece.trim_matches(|c: char| " .,;:".contains(c));
            if piece.chars().count() >= 12 && !spec.contains(piece) {
                problems.push(format!("quoted, not in spec 003: `{piece}`"));
            }
        }
    }
    let brace = regex::Regex::new(r"([a-z0-9-]*)\{([a-z0-9,-]+)\}").unwrap();
    let named: String = brace
        .replace_all(&coverage, |c: &regex::Captures| {
            c[2].split(',')
                .map(|x| format!("{}{x}", &c[1]))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .into_owned();
    for c in load_suite(&vectors(), "host").unwrap() {
        if c.level == hcpspec::case::Level::MUST && !named.contains(&c.id) {
            problems.push(format!(
                "MUST case {} is not named in COVERAGE.md",
                c.name()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The reference adapter of a knob, with `host.encode` answered as `encode` says (None: the
/// method is not found, as in a shim written before it existed).
struct Encoding {
    inner: Box<dyn hcpspec::adapter::Adapter>,
    encode: Option<serde_json::Value>,
}

impl hcpspec::adapter::Adapter for Encoding {
    fn call(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, hcpspec::adapter::CallError> {
        match (method, &self.encode) {
            ("host.encode", None) => Err(hcpspec::adapter::CallError::Rpc(
                hcpspec::shim::RpcError::new(hcpspec::shim::METHOD_NOT_FOUND, "not found"),
            )),
            ("host.encode", Some(a)) => Ok(a.clone()),
            _ => self.inner.call(method, params),
        }
    }
}

fn encoding(
    spec: &'static str,
    encode: Option<serde_json::Value>,
) -> hcpspec::suites::host::Connector {
    Box::new(move || {
        let inner =
            connector(&spec.parse().unwrap(), &Default::default()).map_err(|e| e.to_string())?()?;
        Ok(Box::new(Encoding {
            inner,
            encode: encode.clone(),
        }) as Box<dyn hcpspec::adapter::Adapter>)
    })
}

/// The verdicts of every MUST case on `connect`, failing ones first.
fn must_failures(connect: &hcpspec::suites::host::Connector) -> Vec<String> {
    load_suite(&vectors(), "host")
        .unwrap()
        .iter()
        .filter(|c| c.level == hcpspec::case::Level::MUST)
        .filter_map(|c| {
            let v = run_case(c, connect).verdict;
            (v != Verdict::Pass).then(|| format!("{}: {v:?}", c.name()))
        })
        .collect()
}

/// A shim without `host.encode` (the Go example) is sent hcpspec's default encoding, which is
/// the reference Core's: the reference passes every MUST case through it. The adapter whose Core
/// encodes otherwise fails the encoding cases through it, and passes once its shim encodes: the
/// cases judge what the adapter's Core says, not one Core's format.
#[test]
fn a_shim_without_host_encode_is_sent_the_default_encoding() {
    assert_eq!(
        must_failures(&encoding("inproc:reference", None)),
        Vec::<String>::new()
    );
    let other = must_failures(&encoding("inproc:variant:other-body-encoding", None));
    for named in [
        "00-overview::principal-crosses-on-all-five-kinds",
        "h6-five-kinds::all-five-kinds-cross",
        "h6-five-kinds::gate-response-from-stored-body",
        "h7-input-blocks::default-decoder-reads-input-request",
    ] {
        assert!(
            other
                .iter()
                .any(|f| f.starts_with(&format!("host::{named}:"))),
            "{named} passes the other Core without its encoding: {other:#?}"
        );
    }
    let with = connector(
        &"inproc:variant:other-body-encoding".parse().unwrap(),
        &Default::default(),
    )
    .unwrap();
    assert_eq!(must_failures(&with), Vec::<String>::new());
}

/// The default encoding is the reference Core's, body by body.
#[test]
fn the_default_encoding_is_the_reference_cores() {
    use hcpspec::suites::host::{core::Dialect, default_encoding};
    use serde_json::json;
    let text = json!({ "type": "text", "text": "hi" });
    for body in [
        json!({ "type": "input", "blocks": [text] }),
        json!({ "type": "input", "blocks": [text], "principal": { "id": "u" }, "metadata": { "a": "b" } }),
        json!({ "type": "create" }),
        json!({ "type": "create", "blocks": [text], "createOnly": "t" }),
        json!({ "type": "gate_response", "interactionId": "e-1", "answer": { "approve": true } }),
        json!({ "type": "undecodable" }),
    ] {
        assert_eq!(
            default_encoding(&body),
            Dialect::Reference.encode(&body),
            "{body}"
        );
    }
    assert!(default_encoding(&json!({ "type": "resume" })).is_err());
}

/// A `host.encode` answer that gives no bytes is an error naming the method, never a pass.
#[test]
fn a_host_encode_answer_without_bytes_is_an_error() {
    let all = load_suite(&vectors(), "host").unwrap();
    let gate = all
        .iter()
        .find(|c| c.id == "gate-response-from-stored-body")
        .unwrap();
    for bad in [
        serde_json::json!({}),
        serde_json::json!({ "payloadText": 7 }),
        serde_json::json!({ "payload": {}, "payloadText": "x" }),
    ] {
        match run_case(gate, &encoding("inproc:reference", Some(bad.clone()))).verdict {
            Verdict::Error { message } => {
                assert!(message.starts_with("host.encode: "), "{message}")
            }
            v => panic!("{bad}: {v:?}"),
        }
    }
}

/// Bytes beside a payload reference are an open point (vectors/host/ASSUMPTIONS.md A20): the
/// fuzzer finds nothing in the variant that admits them, nor in the Core that encodes its bodies
/// otherwise, and still finds the mutant that admits a reference without bytes.
#[test]
fn the_fuzzer_finds_nothing_in_the_variants_of_open_points() {
    for v in ["payload-ref-with-bytes-admitted", "other-body-encoding"] {
        let r = fuzz_on(&format!("inproc:variant:{v}"), Some(1500), None);
        assert!(r.findings.is_empty(), "{v}: {:?}", r.findings);
    }
    for m in [
        "principal-dropped-other-encoding",
        "gate-source-agent-other-encoding",
    ] {
        let r = fuzz_on(&format!("inproc:mutant:{m}"), Some(1500), None);
        assert!(!r.findings.is_empty(), "{m}: not found");
    }
}

/// Over stdio too, the Core of another encoding passes the cases the issue named through its
/// shim's `host.encode` (its gate body crosses as `payloadText`, not JSON).
#[test]
fn the_other_core_passes_the_encoding_cases_over_stdio() {
    let spec = format!(
        "stdio:{} shim --runtime host:variant:other-body-encoding",
        env!("CARGO_BIN_EXE_hcpspec")
    );
    let connect = connector(&spec.parse().unwrap(), &Default::default()).unwrap();
    let all = load_suite(&vectors(), "host").unwrap();
    for id in [
        "principal-crosses-on-all-five-kinds",
        "all-five-kinds-cross",
        "gate-response-from-stored-body",
        "default-decoder-reads-input-request",
    ] {
        let c = all.iter().find(|c| c.id == id).unwrap();
        assert_eq!(run_case(c, &connect).verdict, Verdict::Pass, "{id}");
    }
}
