//! A core-api case is untrusted input (docs/security.md): every address it names resolves to
//! loopback and a port hcpspec opened (its fake tools) or was given (the core's `coreUrl` and
//! `gatesUrl`), and every number and template expansion it controls is bounded. A case that
//! breaks this is a bad case at load (file and JSON pointer), or, built in memory as the
//! fuzzers' are, a step error; never a request sent elsewhere, never an abort.

use hcpspec::case::Case;
use hcpspec::run::Verdict;
use hcpspec::suites::core_api::{connector, run_case};
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn vectors() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors")
}

/// A case of this script, with the header of every core-api case.
fn case_json(script: Value) -> Value {
    json!({
        "id": "untrusted", "title": "t", "section": "5", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 5 Gates (\"x\")",
        "script": script
    })
}

/// Load it as `hcpspec run` does: Ok, or the (pointer, message) of the bad case.
fn load(script: Value) -> Result<Case, (String, String)> {
    let denials = hcpspec::case::load_denials(&vectors()).unwrap();
    hcpspec::suites::parse_case(
        Path::new("untrusted.json"),
        &case_json(script).to_string(),
        "core-api",
        "core",
        &denials,
    )
    .map_err(|e| (e.pointer, e.message))
}

fn bad_at(script: Value, pointer: &str) {
    match load(script) {
        Ok(_) => panic!("loaded; expected a bad case at {pointer}"),
        Err((p, m)) => assert!(
            p.starts_with(pointer),
            "bad at {p} ({m}), expected {pointer}"
        ),
    }
}

/// Built in memory, as the fuzzers' cases are: no load-time check.
fn in_memory(script: Value) -> Case {
    let mut c: Case = serde_json::from_value(case_json(script)).unwrap();
    c.suite = "core-api".into();
    c.group = "untrusted".into();
    c
}

fn reference() -> hcpspec::suites::core_api::Connector {
    connector(&"inproc:reference".parse().unwrap(), &Default::default()).unwrap()
}

/// A loopback listener hcpspec did not open (another service on the machine): counts the
/// connections it receives, answers none.
fn bystander() -> (String, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let n = Arc::new(AtomicUsize::new(0));
    let seen = n.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(s);
        }
    });
    (addr, n)
}

/// The http-calls script of `05-gates/http-tool-gets-the-idempotency-key`, with the weather
/// tool's endpoint at `url`.
fn http_tool_script(url: &str) -> Value {
    let text = std::fs::read_to_string(
        vectors().join("core-api/05-gates/http-tool-gets-the-idempotency-key.json"),
    )
    .unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["script"]["start"]["endpoints"]["http:weather"]["url"] = json!(url);
    v["script"].clone()
}

#[test]
fn an_endpoint_that_is_not_a_fake_tool_is_a_bad_case() {
    for url in [
        "http://example.com/steal",
        "http://127.0.0.1:9/x",
        "http://169.254.169.254/latest/meta-data/",
        "${fakes.http}@example.com/x",
    ] {
        bad_at(
            http_tool_script(url),
            "/script/start/endpoints/http:weather/url",
        );
    }
    // The fake tools' own URLs load.
    load(http_tool_script("${fakes.http}weather")).unwrap();
    load(http_tool_script("${fakes.mcp}")).unwrap();
}

#[test]
fn an_endpoint_that_is_not_a_fake_tool_is_never_called() {
    let (addr, seen) = bystander();
    let case = in_memory(http_tool_script(&format!("http://{addr}/steal")));
    let r = run_case(&case, &reference());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the core called {addr}");
    match r.verdict {
        Verdict::Error { message } => {
            assert!(message.contains("endpoint"), "unclear: {message}")
        }
        other => panic!("expected an error verdict, got {other:?}"),
    }
}

#[test]
fn a_connect_path_naming_another_host_is_a_bad_case() {
    for path in [
        "@127.0.0.1:9/x",
        "//example.com/x",
        "x",
        "/a@b",
        "/a\\b",
        "/a?b#c",
    ] {
        bad_at(
            json!({ "steps": [ { "connect": { "path": path }, "expect": { "status": 101 } } ] }),
            "/script/steps/0/connect/path",
        );
        bad_at(
            json!({ "steps": [ { "hello": { "path": path } } ] }),
            "/script/steps/0/hello/path",
        );
    }
    load(json!({ "steps": [ { "connect": { "path": "/nylorun/harness/v2" }, "expect": { "status": 404 } } ] }))
        .unwrap();
}

#[test]
fn a_connect_path_naming_another_host_sends_nothing_there() {
    let (addr, seen) = bystander();
    let case = in_memory(json!({ "steps": [
        { "connect": { "path": format!("@{addr}/x") }, "expect": { "status": 101 } }
    ] }));
    let r = run_case(&case, &reference());
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the upgrade went to {addr}");
    match r.verdict {
        Verdict::Error { message } => assert!(message.contains("core"), "unclear: {message}"),
        other => panic!("expected an error verdict, got {other:?}"),
    }
}

#[test]
fn a_huge_n_for_the_big_tool_is_a_bad_case() {
    let mut s = http_tool_script("${fakes.http}big");
    s["steps"][4]["gate"]["body"]["arguments"] = json!({ "n": 1e14 });
    bad_at(s.clone(), "/script/steps/4/gate/body/arguments/n");
    s["steps"][4]["gate"]["body"]["arguments"] = json!({ "n": 100000000000u64 });
    bad_at(s.clone(), "/script/steps/4/gate/body/arguments/n");
    s["steps"][4]["gate"]["body"]["arguments"] = json!({ "n": 200000 });
    load(s).unwrap();
}

#[test]
fn other_sizes_a_case_controls_are_bounded_at_load() {
    let steps = |step: Value| json!({ "steps": [step] });
    bad_at(
        steps(json!({ "request": { "m": "x", "padTo": 1e12 } })),
        "/script/steps/0/request/padTo",
    );
    bad_at(
        steps(json!({ "request": { "m": "x", "waitMs": 1e9 } })),
        "/script/steps/0/request/waitMs",
    );
    bad_at(
        steps(json!({ "await": { "m": "x", "waitMs": 1e9 } })),
        "/script/steps/0/await/waitMs",
    );
    bad_at(steps(json!({ "wait": 1e9 })), "/script/steps/0/wait");
    bad_at(
        steps(
            json!({ "gate": { "route": "tool-calls", "body": { "arguments": { "ms": 1e12 } } } }),
        ),
        "/script/steps/0/gate/body/arguments/ms",
    );
    let start = |start: Value| json!({ "start": start, "steps": [] });
    bad_at(
        start(json!({ "tools": { "mcp:docs/search": { "bytes": 1e12 } } })),
        "/script/start/tools",
    );
    bad_at(
        start(json!({ "model": [{ "text": "x", "holdMs": 1e12 }] })),
        "/script/start/model",
    );
    bad_at(
        start(json!({ "fileBytes": 1e19 })),
        "/script/start/fileBytes",
    );
    bad_at(
        start(json!({ "deadlineMs": 1e12 })),
        "/script/start/deadlineMs",
    );
}

#[test]
fn a_template_expansion_past_its_cap_is_a_step_error() {
    // The big tool answers 1 MB, saved; the next step names it 64 times: 64 MB if expanded.
    let mut s = http_tool_script("${fakes.http}big");
    s["start"]["limits"] = json!({ "toolAnswerBytes": 4000000 });
    s["steps"][4]["gate"]["body"]["arguments"] = json!({ "n": 1000000 });
    s["steps"][4]["save"] = json!("big");
    s["steps"][4]["expect"] = json!({ "status": 200 });
    let many: Vec<Value> = (0..64).map(|i| json!(format!("{i}: ${{big}}"))).collect();
    s["steps"][5] = json!({ "control": "core.describe", "params": { "many": many } });
    let r = run_case(&in_memory(s), &reference());
    match r.verdict {
        Verdict::Error { message } => {
            assert!(message.contains("template"), "unclear: {message}")
        }
        other => panic!("expected an error verdict, got {other:?}"),
    }
}

#[test]
fn a_pad_at_nested_past_the_pointer_bound_is_a_bad_case() {
    let pad = |at: String| {
        json!({ "steps": [
            { "hello": {} , "expect": { "ok": true } },
            { "request": { "m": "x", "p": {}, "padTo": 100, "padAt": at }, "expect": { "ok": true } }
        ] })
    };
    bad_at(pad("/a".repeat(5000)), "/script/steps/1/request/padAt");
    bad_at(pad("/a".repeat(65)), "/script/steps/1/request/padAt");
    load(pad("/a".repeat(64))).unwrap();
}
