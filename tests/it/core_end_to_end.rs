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
