//! The two references meet: hcpspec's reference harness (the harness-api suite's) runs turns end
//! to end against hcpspec's reference core (the core-api suite's), over a real loopback
//! WebSocket and HTTP, arranged through the core's control protocol alone.

use hcpspec::adapter::Adapter;
use hcpspec::suites::core_api::reference::ReferenceCore;
use hcpspec::suites::harness_api::launch::LaunchEnv;
use hcpspec::suites::harness_api::Harness;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Poll the control shim until `done` holds of `method`'s answer, or 5 s pass.
fn until(core: &mut ReferenceCore, method: &str, done: impl Fn(&Value) -> bool) -> Value {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let v = core.call(method, json!({})).expect("control answers");
        if done(&v) || Instant::now() > until {
            return v;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_reference_harness_runs_turns_on_the_reference_core() {
    let mut core = ReferenceCore::named("reference").unwrap();
    let started = core
        .call("core.start", json!({ "model": [{ "text": "all done" }] }))
        .expect("core.start");
    let (name, token) = started["harnesses"]
        .as_object()
        .and_then(|h| h.iter().next())
        .map(|(n, t)| (n.clone(), t.as_str().unwrap().to_string()))
        .unwrap();
    let env = LaunchEnv {
        core_url: started["coreUrl"].as_str().unwrap().into(),
        token,
        gates_url: started["gatesUrl"].as_str().unwrap().into(),
        name,
        pod: None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let running = {
        let _g = rt.enter();
        Harness::parse("inproc:reference")
            .unwrap()
            .start(&env)
            .unwrap()
    };
    // Two turns: each is leased, its model call journaled and run through the Model Gate, and
    // ended with an output, so that the next is offered.
    for turn in 1..=2 {
        core.call("session.open", json!({})).unwrap();
        let rows = until(&mut core, "calls.model", |v| {
            v["rows"].as_array().is_some_and(|r| r.len() >= turn)
        });
        assert_eq!(
            rows["rows"].as_array().map(Vec::len),
            Some(turn),
            "turn {turn}: {rows}"
        );
    }
    running.stop(true);
    core.call("core.stop", json!({})).unwrap();
}

/// The pod-host launch mode (docs/harness-api.md § 1) meets core.start's `pods`
/// (docs/core-protocol.md): the reference harness, given only the join parameters the reference
/// core answered for its pod, joins, connects with the host token and runs the pod Agent's turn.
#[test]
fn the_reference_harness_hosts_a_pod_on_the_reference_core() {
    use hcpspec::suites::harness_api::launch::PodEnv;
    let mut core = ReferenceCore::named("reference").unwrap();
    let started = core
        .call(
            "core.start",
            json!({ "model": [{ "text": "all done" }], "pods": [{ "harness": "custom-x" }] }),
        )
        .expect("core.start");
    let pod = &started["pods"][0];
    let text = |k: &str| pod[k].as_str().expect("core.start's pods").to_string();
    let env = LaunchEnv {
        core_url: started["coreUrl"].as_str().unwrap().into(),
        token: String::new(),
        gates_url: started["gatesUrl"].as_str().unwrap().into(),
        name: "custom-x".into(),
        pod: Some(PodEnv {
            sandbox_id: text("sandboxId"),
            pod_uid: text("podUid"),
            join_token: text("joinToken"),
            renew_ms: 100,
        }),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let running = {
        let _g = rt.enter();
        Harness::parse("inproc:reference")
            .unwrap()
            .start(&env)
            .unwrap()
    };
    core.call("session.open", json!({ "pod": 0 })).unwrap();
    let rows = until(&mut core, "calls.model", |v| {
        v["rows"].as_array().is_some_and(|r| !r.is_empty())
    });
    assert_eq!(rows["rows"].as_array().map(Vec::len), Some(1), "{rows}");
    running.stop(true);
    core.call("core.stop", json!({})).unwrap();
}

/// The pod probe as a real process (`hcpspec-pod-probe`, what a shim runs as a pod Agent's
/// image for `pod.probe`): given what a pod's environment gives its host, it joins the
/// reference core and reports what it read of the system it runs on to `NYLORUN_PROBE_REPORT`.
#[test]
fn the_pod_probe_joins_the_reference_core_and_reports() {
    use std::io::{Read, Write};
    let mut core = ReferenceCore::named("reference").unwrap();
    let started = core
        .call("core.start", json!({ "pods": [{ "harness": "custom-x" }] }))
        .expect("core.start");
    let pod = &started["pods"][0];
    // The report's receiver: one HTTP request, answered 200, its body kept.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let report = format!("http://{}/pod-probe", listener.local_addr().unwrap());
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_hcpspec-pod-probe"))
        .env_clear()
        .env("NYLORUN_CORE_URL", started["coreUrl"].as_str().unwrap())
        .env("NYLORUN_SANDBOX_ID", pod["sandboxId"].as_str().unwrap())
        .env("NYLORUN_POD_UID", pod["podUid"].as_str().unwrap())
        .env("NYLORUN_JOIN_TOKEN", pod["joinToken"].as_str().unwrap())
        .env("NYLORUN_PROBE_REPORT", &report)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .unwrap();
    let (mut conn, _) = listener.accept().unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let body = loop {
        let n = conn.read(&mut buf).unwrap();
        assert!(
            n > 0,
            "the report ended early: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len: usize = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse().unwrap())
                })
                .unwrap_or(0);
            if body.len() >= len {
                break body.to_string();
            }
        }
    };
    conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .unwrap();
    drop(conn);
    let report: Value = serde_json::from_str(&body).unwrap();
    let mut status = status;
    assert!(status.wait().unwrap().success());
    assert_eq!(report["joined"], true, "{report}");
    assert_eq!(report["uid"], json!(unsafe { libc::geteuid() }), "{report}");
    assert!(report["writable"]["/tmp"].is_boolean(), "{report}");
    core.call("core.stop", json!({})).unwrap();
}
