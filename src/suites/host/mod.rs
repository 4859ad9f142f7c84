//! The host suite (spec 003): certifies an adapter binding Host's department seams to a harness
//! rig. A case is a list of calls on the adapter's host shim (docs/host-protocol.md), which links
//! the adapter with recording fakes; hcpspec matches each answer, then checks what the fakes
//! recorded against the always-checks.

pub mod fakes;
pub mod fuzz;
pub mod reference;
pub mod seams;
pub mod shim;

use crate::adapter::{Adapter, CallError};
use crate::case::matcher::{self, Claims};
use crate::case::{template, Case};
use crate::run::{CaseResult, Failure, Observation, Verdict};
use serde_json::{json, Map, Value};
use std::time::Instant;

/// What `drives` says in the suite.json of the host suite.
pub const DRIVES: &str = "host";
pub const PROTOCOL: &str = "hcpspec-host/1";

pub type Connector = crate::adapter::Connector;

/// `inproc:reference` (`mutant:NAME`, `variant:NAME`), `stdio:CMD` (a shim process per case), or
/// a shim serving over HTTP or WebSocket.
pub fn connector(spec: &str, opts: &crate::adapter::Options) -> Result<Connector, String> {
    crate::adapter::process::connector(spec, opts, "host adapter", |name| {
        shim::ReferenceHost::named(name).map(|h| Box::new(h) as Box<dyn Adapter>)
    })
}

/// Checks every case makes on what the fakes recorded: (name, the sentence, what fails it).
pub const ALWAYS: &[(&str, &str, fn(&Value) -> Option<String>)] = &[
    (
        "no-store",
        "003_43d43b314353d2bc.txt § Customisation points (\"The adapter never opens a store.\")",
        |r| nonempty(&r["stores"], "the adapter opened a store"),
    ),
    (
        "no-object",
        "003_43d43b314353d2bc.txt § H8 (\"Admitted has no reference member and the adapter never reads objects.\")",
        |r| nonempty(&r["objects"], "the adapter read an object"),
    ),
    (
        "epoch-held",
        "003_43d43b314353d2bc.txt § H5 (\"is refused with an UnsupportedCommandError rather than stamped with a plausible zero\")",
        |r| {
            r["admitted"].as_array().into_iter().flatten().find_map(|a| {
                (a["leaseEpoch"].as_u64().unwrap_or(0) == 0).then(|| {
                    format!("a command was admitted with lease epoch {}", a["leaseEpoch"])
                })
            })
        },
    ),
];

fn nonempty(v: &Value, what: &str) -> Option<String> {
    match v.as_array() {
        Some(a) if !a.is_empty() => Some(format!("{what}: {}", Value::Array(a.clone()))),
        _ => None,
    }
}

/// The defaults a case's `host.target` and `host.bind` params are merged over.
pub fn target_defaults() -> Value {
    json!({ "rigs": { "shape": "shared" }, "compatibilityId": "hcpspec-build-1", "decoder": "default",
            "capabilities": { "supportsPooled": true, "admissionWeight": 1, "captureSafety": "streaming" } })
}

pub fn bind_defaults() -> Value {
    json!({
        "kind": "create",
        "request": { "tenantId": "acme", "sessionId": "host-session-1", "agentId": "assistant",
                     "placement": "pooled", "workspaceRoot": "/work/acme/1", "storageNamespace": "acme/1" },
        "rigSessionId": "7f1c2a9e-0000-4000-8000-000000000001",
        "residencyEpoch": 9,
        "launchCancelled": false,
        "session": {}
    })
}

/// `over` merged into `base`, objects member by member.
pub fn merge(base: &Value, over: &Value) -> Value {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            let mut m = b.clone();
            for (k, v) in o {
                let merged = m.get(k).map_or(v.clone(), |bv| merge(bv, v));
                m.insert(k.clone(), merged);
            }
            Value::Object(m)
        }
        (_, o) => o.clone(),
    }
}

/// Run one case on the adapter behind a fresh shim.
pub fn run_case(case: &Case, connect: &Connector) -> CaseResult {
    let started = Instant::now();
    let mut observations = Vec::new();
    let verdict = match connect() {
        Err(e) => Verdict::Error {
            message: crate::snapshot::contain_text(&e),
        },
        Ok(mut shim) => execute(case, &mut *shim, &mut observations),
    };
    CaseResult::of(case, verdict, observations, vec![], started)
}

/// The call of a step, with the defaults of `host.bind` merged in.
fn call_of(step: &Value, vars: &Map<String, Value>) -> (String, Value) {
    let method = step["call"].as_str().unwrap_or_default().to_string();
    let params = template::fill(vars, step.get("params").unwrap_or(&json!({})));
    let params = if method == "host.bind" {
        merge(&bind_defaults(), &params)
    } else {
        params
    };
    (method, params)
}

/// Play a case's calls; `obs` gets each answer. The verdict, after the always-checks.
pub fn execute(case: &Case, shim: &mut dyn Adapter, obs: &mut Vec<Observation>) -> Verdict {
    let body = case.host.clone().unwrap_or(json!({}));
    // One shim may serve many cases (HTTP, WebSocket): start afresh; a stdio shim may not know it.
    let _ = shim.call("host.reset", json!({}));
    let target = merge(&target_defaults(), body.get("target").unwrap_or(&json!({})));
    let mut vars = Map::new();
    match shim.call("host.target", target) {
        Ok(v) => {
            vars.insert("target".into(), v);
        }
        Err(e) => return broken("host.target", e),
    }
    let steps = body["steps"].as_array().cloned().unwrap_or_default();
    for (i, step) in steps.iter().enumerate() {
        let (method, params) = call_of(step, &vars);
        let answer = match shim.call(&method, params) {
            Ok(v) => v,
            Err(e) => return broken(&method, e),
        };
        let shown = crate::snapshot::contain(&answer);
        obs.push(Observation {
            step: i,
            action: method.clone(),
            value: shown.clone(),
        });
        if let Some(name) = step["save"].as_str() {
            vars.insert(name.into(), answer.clone());
        }
        if let Some(expect) = step.get("expect") {
            let expect = template::fill(&vars, expect);
            if let Err(m) = matcher::check(&expect, &answer, &Claims::default()) {
                return Verdict::Fail(Failure {
                    step: i,
                    action: method,
                    path: m.path,
                    message: m.message,
                    expected: m.expected,
                    actual: shown,
                });
            }
        }
    }
    let records = match shim.call("host.records", json!({})) {
        Ok(r) => r,
        Err(e) => return broken("host.records", e),
    };
    for (name, spec, check) in ALWAYS {
        if let Some(message) = check(&records) {
            return Verdict::Fail(Failure {
                step: steps.len(),
                action: format!("always-check {name}"),
                path: String::new(),
                message: format!("{message} ({spec})"),
                expected: Value::Null,
                actual: crate::snapshot::contain(&records),
            });
        }
    }
    Verdict::Pass
}

/// A call that did not answer: unimplemented (`-32601`) or broken (anything else).
fn broken(method: &str, e: CallError) -> Verdict {
    if e.not_implemented() {
        return Verdict::Unimplemented {
            reason: format!("{method}: {e}"),
        };
    }
    Verdict::Error {
        message: crate::snapshot::contain_text(&format!("{method}: {e}")),
    }
}
