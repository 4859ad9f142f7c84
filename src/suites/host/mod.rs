//! The host suite (spec 003): certifies an adapter binding Host's department seams to a harness
//! rig. A case is a list of calls on the adapter's host shim (docs/host-protocol.md), which links
//! the adapter with recording fakes; hcpspec matches each answer, then checks what the fakes
//! recorded against the always-checks.

pub mod core;
pub mod fakes;
pub mod fuzz;
pub mod reference;
pub mod seams;
pub mod shim;
pub mod step;
mod suite;
pub use step::{Method, Step};
pub use suite::Host;

use crate::adapter::{Adapter, CallError};
use crate::case::matcher::{self, Claims};
use crate::case::{template, Case};
use crate::run::{CaseResult, Failure, Observation, Verdict};
use serde_json::{json, Map, Value};
use std::time::Instant;

/// What `drives` says in the suite.json of the host suite.
pub const DRIVES: &str = "host";
/// The newest version of the host shim protocol: what the embedded adapters state.
pub const PROTOCOL: &str = "hcpspec-host/2";
/// Every version hcpspec speaks, oldest first (docs/CHANGELOG.md).
pub const PROTOCOLS: &[&str] = &["hcpspec-host/1", "hcpspec-host/2"];

/// The members of the fake session (docs/host-protocol.md § 3.2) added within `hcpspec-host/2`,
/// each optional: a shim builds it only if `host.describe`'s `fakes` lists it, and a case whose
/// `host.bind` gives one its shim does not list is unimplemented, never played without it.
pub const FAKES: &[&str] = &[
    "forwardsByName",
    "idleAfterMs",
    "waitIdleFails",
    "doneClosed",
    "closeAttemptFails",
];

/// How its shim describes itself, and the protocol hcpspec speaks with it.
pub const DESCRIBE: crate::suites::Describe = crate::suites::Describe {
    method: "host.describe",
    what: "adapter",
    protocols: PROTOCOLS,
};

pub type Connector = crate::adapter::Connector;

/// `inproc:reference` (`mutant:NAME`, `variant:NAME`), `stdio:CMD` (a shim process per case), or
/// a shim serving over HTTP or WebSocket.
pub fn connector(
    spec: &crate::spec::Spec,
    opts: &crate::adapter::Options,
) -> Result<Connector, crate::error::BadInput> {
    crate::adapter::process::connector(spec, opts, "host adapter", embedded)
}

/// The embedded host adapter `inproc:NAME` names (the reference, a mutant or a variant), if any.
pub fn embedded(name: &str) -> Option<Box<dyn Adapter>> {
    shim::ReferenceHost::named(name).map(|h| Box::new(h) as Box<dyn Adapter>)
}

/// A check every case makes on what the fakes recorded: its name, the sentence, what fails it.
pub type Always = (&'static str, &'static str, fn(&Value) -> Option<String>);

/// The checks every case makes.
pub const ALWAYS: &[Always] = &[
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
    // What the shim said (a -32601 reason, an error's text, a failure's evidence), as reports
    // keep it: secrets redacted, texts capped.
    let mut verdict = verdict;
    crate::run::contain_verdict(&mut verdict);
    CaseResult::of(case, verdict, observations, vec![], started)
}

/// hcpspec's encoding of an abstract body (docs/host-protocol.md § 2, `host.encode`) for a shim
/// that does not implement `host.encode`: the reference Core's, so that such a shim is judged as
/// before. Written apart from the reference's Core (`core.rs`), which a test holds equal to it.
pub fn default_encoding(body: &Value) -> Result<Value, core::Undecodable> {
    let has = |k: &str| body.get(k).filter(|v| !v.is_null()).cloned();
    let mut o = Map::new();
    match body["type"].as_str().unwrap_or_default() {
        "input" => {
            o.insert("blocks".into(), has("blocks").unwrap_or(json!([])));
            for k in ["principal", "metadata"] {
                if let Some(v) = has(k) {
                    o.insert(k.into(), v);
                }
            }
        }
        "create" => {
            if let Some(v) = has("blocks") {
                o.insert("blocks".into(), v);
            }
            if let Some(v) = has("createOnly") {
                o.insert("title".into(), v);
            }
        }
        "gate_response" => {
            o.insert("interactionId".into(), body["interactionId"].clone());
            o.insert("answer".into(), body["answer"].clone());
        }
        "undecodable" => return Ok(json!({ "payloadText": "not json" })),
        other => {
            return Err(format!(
                "body: no type {other:?} (input, create, gate_response, undecodable)"
            )
            .into())
        }
    }
    Ok(json!({ "payload": o }))
}

/// The bytes member `host.encode` answered: exactly one of `payload` (not null) and
/// `payloadText` (a string).
fn encoded(answer: &Value) -> Result<(&'static str, Value), String> {
    let payload = answer.get("payload").filter(|v| !v.is_null());
    let text = answer.get("payloadText");
    match (payload, text) {
        (Some(p), None) => Ok(("payload", p.clone())),
        (None, Some(t @ Value::String(_))) => Ok(("payloadText", t.clone())),
        _ => Err(format!(
            "the answer is not {{payload}} or {{payloadText: string}}: {}",
            crate::adapter::excerpt(answer.to_string().as_bytes())
        )),
    }
}

/// One call a case made: the method, its params after templates and defaults, the answer.
pub struct Call {
    pub method: Method,
    pub params: Value,
    pub answer: Value,
}

/// Plays a case's calls on one shim, keeping what each step saved.
pub struct Player<'a> {
    shim: &'a mut dyn Adapter,
    vars: Map<String, Value>,
    /// Whether the shim encodes bodies itself (until it answers `host.encode` with -32601).
    encodes: bool,
    /// The optional fake members the shim builds (`host.describe`'s `fakes`), once asked.
    fakes: Option<Vec<String>>,
}

impl<'a> Player<'a> {
    /// Start afresh (a shim serving many cases over HTTP or WebSocket needs `host.reset`; a stdio
    /// shim may not know it) and build the case's target.
    pub fn start(
        shim: &'a mut dyn Adapter,
        target: Option<&Value>,
    ) -> Result<Player<'a>, Box<Verdict>> {
        let _ = shim.call("host.reset", json!({}));
        let target = merge(&target_defaults(), target.unwrap_or(&json!({})));
        let answer = shim
            .call("host.target", target)
            .map_err(|e| Box::new(broken("host.target", e)))?;
        let mut vars = Map::new();
        vars.insert("target".into(), answer);
        Ok(Player {
            shim,
            vars,
            encodes: true,
            fakes: None,
        })
    }

    /// One step's call, with `${…}` filled and `host.bind`'s defaults merged in. An error
    /// names the method that failed.
    pub fn call(&mut self, step: &Step) -> Result<Call, (&'static str, CallError)> {
        let method = step.call;
        let params = template::fill(&self.vars, &step.params)
            .map_err(|e| (method.name(), CallError::Transport(String::from(e))))?;
        let mut params = match method {
            Method::Bind => merge(&bind_defaults(), &params),
            _ => params,
        };
        if method == Method::Bind {
            self.builds(&params["session"])
                .map_err(|e| (method.name(), e))?;
        }
        // A command's abstract `body` crosses as the bytes the adapter's Core encodes it in.
        if method == Method::Apply {
            let body = params["command"]
                .as_object_mut()
                .and_then(|c| c.remove("body"));
            if let Some(body) = body {
                let (member, bytes) = self.encode(&body).map_err(|e| ("host.encode", e))?;
                params["command"][member] = bytes;
            }
        }
        let answer = match self.shim.call(method.name(), params.clone()) {
            Ok(a) => a,
            Err(e) => return Err((method.name(), e)),
        };
        if let Some(name) = &step.save {
            template::save(&mut self.vars, name, answer.clone())
                .map_err(|e| (method.name(), CallError::Transport(String::from(e))))?;
        }
        Ok(Call {
            method,
            params,
            answer,
        })
    }

    /// `body` in the shim's Core's bytes (`host.encode`), or hcpspec's default encoding for a
    /// shim that does not implement it.
    fn encode(&mut self, body: &Value) -> Result<(&'static str, Value), CallError> {
        if self.encodes {
            match self.shim.call("host.encode", body.clone()) {
                Ok(a) => return encoded(&a).map_err(CallError::Transport),
                Err(e) if e.not_implemented() => self.encodes = false,
                Err(e) => return Err(e),
            }
        }
        default_encoding(body)
            .map_err(String::from)
            .and_then(|a| encoded(&a))
            .map_err(CallError::Transport)
    }

    /// Unimplemented (-32601) if `session` gives an optional fake member (`FAKES`) the shim's
    /// `host.describe` does not list in `fakes`.
    fn builds(&mut self, session: &Value) -> Result<(), CallError> {
        let asked: Vec<&str> = FAKES
            .iter()
            .copied()
            .filter(|m| session.get(*m).is_some())
            .collect();
        if asked.is_empty() {
            return Ok(());
        }
        if self.fakes.is_none() {
            let d = self.shim.call("host.describe", json!({}))?;
            let listed = d["fakes"].as_array().into_iter().flatten();
            self.fakes = Some(listed.filter_map(Value::as_str).map(String::from).collect());
        }
        let listed = self.fakes.as_deref().unwrap_or_default();
        match asked.iter().find(|m| !listed.iter().any(|l| l == *m)) {
            None => Ok(()),
            Some(m) => Err(CallError::Rpc(crate::shim::RpcError::new(
                crate::shim::METHOD_NOT_FOUND,
                format!("the shim's host.describe does not list the fake session member {m:?} in `fakes`"),
            ))),
        }
    }

    /// Everything the fakes recorded.
    pub fn records(&mut self) -> Result<Value, Box<Verdict>> {
        self.shim
            .call("host.records", json!({}))
            .map_err(|e| Box::new(broken("host.records", e)))
    }

    fn fill(&self, v: &Value) -> Result<Value, String> {
        template::fill(&self.vars, v).map_err(String::from)
    }
}

/// Play a case's calls; `obs` gets each answer. The verdict, after the always-checks (and, for
/// a case the fuzzer wrote, its invariants).
pub fn execute(case: &Case, shim: &mut dyn Adapter, obs: &mut Vec<Observation>) -> Verdict {
    let body = case.member("host").cloned().unwrap_or(json!({}));
    let parsed;
    let steps = match case.parsed.get::<Vec<Step>>() {
        Some(steps) => steps,
        // A case built in memory, not loaded: its steps parsed now.
        None => match step::parse_steps(&body) {
            Ok(steps) => {
                parsed = steps;
                &parsed
            }
            Err((at, why)) => {
                return Verdict::Error {
                    message: format!("/host{at}: {why}"),
                }
            }
        },
    };
    let mut p = match Player::start(shim, body.get("target")) {
        Ok(p) => p,
        Err(v) => return *v,
    };
    let mut calls = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let call = match p.call(step) {
            Ok(c) => c,
            Err((method, e)) => return broken(method, e),
        };
        let shown = crate::snapshot::contain(&call.answer);
        obs.push(Observation {
            step: i,
            action: call.method.name().to_string(),
            value: shown.clone(),
        });
        if let Some(expect) = &step.expect {
            let expect = match p.fill(expect) {
                Ok(e) => e,
                Err(message) => return Verdict::Error { message },
            };
            if let Err(m) = matcher::check(&expect, &call.answer, &Claims::default()) {
                return Verdict::Fail(Failure {
                    step: i,
                    action: call.method.name().to_string(),
                    path: m.path,
                    message: m.message,
                    expected: m.expected,
                    actual: shown,
                });
            }
        }
        calls.push(call);
    }
    let records = match p.records() {
        Ok(r) => r,
        Err(v) => return *v,
    };
    let mut broken = ALWAYS.iter().find_map(|(name, spec, check)| {
        check(&records).map(|m| (format!("always-check {name}"), format!("{m} ({spec})")))
    });
    if broken.is_none() && body["invariants"] == true {
        broken = fuzz::broken(&calls, &records).map(|m| ("invariant".to_string(), m));
    }
    match broken {
        Some((action, message)) => Verdict::Fail(Failure {
            step: steps.len(),
            action,
            path: String::new(),
            message,
            expected: Value::Null,
            actual: crate::snapshot::contain(&records),
        }),
        None => Verdict::Pass,
    }
}

/// A call that did not answer: unimplemented (`-32601`) or broken (anything else).
fn broken(method: &str, e: CallError) -> Verdict {
    let unimplemented = e.not_implemented();
    // A transport error names its method already (`host.target: the shim answered …`).
    let e = e.to_string();
    let text = crate::snapshot::contain_text(&if e.starts_with(&format!("{method}: ")) {
        e
    } else {
        format!("{method}: {e}")
    });
    if unimplemented {
        return Verdict::Unimplemented { reason: text };
    }
    Verdict::Error { message: text }
}
