//! The reference core behind the control protocol (docs/core-protocol.md): hcpspec's own core
//! and gates (the harness role's `World`, listener and gates), started by `core.start` on fresh
//! loopback ports, and its mutants (one rule broken each) and variants, declared in
//! `core_api::knobs` and read by its role (`role.rs`). Its listener also serves pods' hosts
//! (`pods.rs`).

use super::role::Reference;
use crate::adapter::{Adapter, CallError};
use crate::knob::{Knob, Knobs};
use crate::shim::RpcError;
pub use crate::suites::core_api::knobs::{Mutant, Variant};
use crate::suites::world::model::{lock, Shared, World};
use crate::suites::world::scenario::Scenario;
use crate::suites::world::{core, gates};
use serde_json::{json, Value};
use std::sync::Arc;

/// The Agent's plugins (`core.start`'s `agent.plugins: [{name, version?, skills, mcpServers}]`)
/// folded into the Agent: their skills carry `plugin: {name, version?}`, their servers are
/// declared, and `pluginServers` maps each server to its plugin (§ 3, § 4's rows).
fn flatten_plugins(agent: &mut Value) {
    let Some(plugins) = agent.get("plugins").and_then(Value::as_array).cloned() else {
        return;
    };
    for p in plugins {
        let mut plugin = json!({ "name": p["name"] });
        if let Some(v) = p.get("version") {
            plugin["version"] = v.clone();
        }
        for mut skill in p["skills"].as_array().cloned().unwrap_or_default() {
            skill["plugin"] = plugin.clone();
            push(agent, "skills", skill);
        }
        for server in p["mcpServers"].as_array().cloned().unwrap_or_default() {
            if let Some(s) = server.as_str() {
                agent["pluginServers"][s] = plugin.clone();
            }
            push(agent, "mcpServers", server);
        }
    }
}

fn push(v: &mut Value, key: &str, item: Value) {
    if !v[key].is_array() {
        v[key] = json!([]);
    }
    v[key].as_array_mut().expect("array").push(item);
}

pub use crate::suites::world::model::NYLORUN;

/// A core started by `core.start`: its runtime and its state.
struct Running {
    rt: tokio::runtime::Runtime,
    world: Shared,
    /// Its harness listener's URL (`pod.probe` joins there).
    core_url: String,
}

pub struct ReferenceCore {
    knobs: Knobs<Mutant, Variant>,
    running: Option<Running>,
}

impl ReferenceCore {
    /// `reference`, `mutant:NAME` or `variant:NAME`.
    pub fn named(name: &str) -> Option<ReferenceCore> {
        Some(ReferenceCore {
            knobs: Knobs::named(name)?,
            running: None,
        })
    }

    fn start(&mut self, params: Value) -> Result<Value, RpcError> {
        let mut params = params;
        if params.get("offers").is_none() {
            params["offers"] = json!([]);
        }
        if let Some(agent) = params.get_mut("agent") {
            flatten_plugins(agent);
        }
        // hcpspec plays our harness: the harness token is bound to nylorun (§ 1, "Which token").
        if params.get("harness").is_none() {
            params["harness"] = json!(NYLORUN);
        }
        let sc: Scenario = serde_json::from_value(params)
            .map_err(|e| RpcError::new(crate::shim::INVALID_PARAMS, format!("core.start: {e}")))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| RpcError::new(-32603, e.to_string()))?;
        let (core_l, gates_l) = rt
            .block_on(async {
                Ok::<_, std::io::Error>((
                    tokio::net::TcpListener::bind("127.0.0.1:0").await?,
                    tokio::net::TcpListener::bind("127.0.0.1:0").await?,
                ))
            })
            .map_err(|e| RpcError::new(-32603, e.to_string()))?;
        let core_url = format!(
            "ws://{}{}",
            core_l
                .local_addr()
                .map_err(|e| RpcError::new(-32603, e.to_string()))?,
            core::PATH
        );
        let gates_url = format!(
            "http://{}",
            gates_l
                .local_addr()
                .map_err(|e| RpcError::new(-32603, e.to_string()))?
        );
        let token = format!(
            "nylorun-ht-{:x}",
            crate::hash::fnv1a64(core_url.as_bytes()) ^ std::process::id() as u64
        );
        let (acts, _rx) = tokio::sync::mpsc::unbounded_channel();
        // A core whose discovery is the recorded snapshot: `discover` is that snapshot, so
        // TurnStart's mcp is there from the first turn and a later session.mcp does not win.
        let snapshot = (super::freedom::decides(&self.knobs, Variant::DiscoveryIsTheSnapshot)
            && !sc.discover.is_empty())
        .then(|| {
            let servers: Vec<Value> = sc
                .discover
                .iter()
                .map(|(name, tools)| {
                    let tools: Vec<Value> = tools
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|t| json!({ "name": t, "inputSchema": { "type": "object" } }))
                        .collect();
                    json!({ "name": name, "tools": tools })
                })
                .collect();
            json!({ "servers": servers })
        });
        let role = Box::new(Reference::new(self.knobs));
        let mut world = World::new(Arc::new(sc), token.clone(), acts, role);
        if let Some(facts) = snapshot {
            world.discovered(facts);
        }
        // Each harness id core holds a token for, and that token.
        let harnesses: serde_json::Map<String, Value> = world
            .credentials()
            .into_iter()
            .map(|(token, harness)| (harness, json!(token)))
            .collect();
        // What each pod's environment gives its host, to join on this listener (§ 9).
        let pods = super::pods::environments(&world);
        let world = Arc::new(std::sync::Mutex::new(world));
        rt.spawn(super::pods::listen(core_l, world.clone()));
        let router = gates::router(world.clone());
        rt.spawn(async move { axum::serve(gates_l, router).await });
        self.running = Some(Running {
            rt,
            world,
            core_url: core_url.clone(),
        });
        let mut answer =
            json!({ "coreUrl": core_url, "gatesUrl": gates_url, "harnesses": harnesses });
        if !pods.is_empty() {
            answer["pods"] = json!(pods);
        }
        // Where this core reads an intent's purpose (the reference: the default, /purpose).
        if super::freedom::decides(&self.knobs, Variant::PurposeOnTheEffect) {
            answer["purposeAt"] = json!("/effect/purpose");
        }
        // What this core calls the members spec 004 does not print (the reference: hcpspec's).
        if super::freedom::decides(&self.knobs, Variant::OtherWireNames) {
            answer["names"] = super::wire_names::declared();
        }
        // What this core calls an output that completed its turn (the reference: the default).
        if let Some(done) = super::freedom::turn_completed(&self.knobs) {
            answer["turnCompleted"] = json!(done);
        }
        // How this core shapes a tool call's failure (the reference: the default, {kind: "failed"}).
        if super::freedom::decides(&self.knobs, Variant::McpShapedFailures) {
            answer["failure"] = json!({ "isError": true });
        }
        // How this core's ModelCall prompt holds a media part.
        answer["mediaPrompt"] = super::media::reference_template();
        Ok(answer)
    }

    fn world(&self) -> Result<&Shared, RpcError> {
        self.running.as_ref().map(|r| &r.world).ok_or_else(|| {
            RpcError::new(
                crate::shim::INVALID_PARAMS,
                "no core started (core.start first)",
            )
        })
    }
}

impl Adapter for ReferenceCore {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let r = match method {
            "core.describe" => Ok(self.describe()),
            "core.start" => self.start(params),
            "session.open" | "session.replay" => self
                .world()
                .and_then(|w| open_session(&mut lock(w), method, params)),
            "session.read" => self.world().map(|w| read_session(&lock(w))),
            "calls.model" => self.world().map(|w| {
                let rows = model_rows(&lock(w));
                json!({ "rows": self.listed("calls.model", rows) })
            }),
            "events.read" => self
                .world()
                .map(|w| json!({ "events": self.listed("events", lock(w).event_log()) })),
            "calls.tool" => self
                .world()
                .map(|w| json!({ "rows": self.listed("calls.tool", lock(w).tool_rows()) })),
            "approval.list" => self
                .world()
                .map(|w| json!({ "interactions": self.listed("approvals", lock(w).approvals().to_vec()) })),
            "approval.answer" => self.world().and_then(|w| {
                let id = params["id"].as_str().unwrap_or_default();
                if lock(w).answer_approval(id, params["approve"] == true) {
                    Ok(json!({}))
                } else {
                    Err(RpcError::new(
                        crate::shim::INVALID_PARAMS,
                        format!("approval.answer: no interaction {id}"),
                    ))
                }
            }),
            "session.cancel" => self.world().map(|w| cancel(&mut lock(w), &params)),
            "artifact.seed" => self.world().map(|w| seed(&mut lock(w), &params)),
            "workspace.route" => self.world().map(|w| workspace_route(&mut lock(w), &params)),
            "pod.probe" => match &self.running {
                Some(r) => super::probe::reference(&r.rt, &r.world, &r.core_url, &params)
                    .map_err(|e| RpcError::new(crate::shim::INVALID_PARAMS, e)),
                None => self.world().map(|_| json!({})),
            },
            "tenant.close" => self.world().map(|w| {
                lock(w).close_tenant();
                json!({})
            }),
            "core.stop" => {
                if let Some(r) = self.running.take() {
                    r.rt.shutdown_background();
                }
                Ok(json!({}))
            }
            other => Err(RpcError::new(
                crate::shim::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        };
        r.map_err(CallError::Rpc)
    }
}

impl ReferenceCore {
    /// A list the control protocol reads, in the order and with the members the freedom
    /// variant decides: none of these lists has an order the docs fix, or closed members.
    fn listed(&self, site: &str, list: Vec<Value>) -> Vec<Value> {
        let mut list = list;
        super::freedom::permute(&self.knobs, site, &mut list);
        super::freedom::extra_each(&self.knobs, site, &mut list);
        list
    }

    /// `core.describe`: the protocol, and which core this is.
    fn describe(&self) -> Value {
        let name = match (self.knobs.mutant, self.knobs.variant, self.knobs.freedom) {
            (Some(m), _, _) => format!("mutant:{}", m.name()),
            (_, Some(v), _) => format!("variant:{}", v.name()),
            (_, _, Some(f)) => format!("variant:{}", f.name()),
            _ => "reference".to_string(),
        };
        json!({
            "protocol": super::PROTOCOL,
            "core": { "name": name, "version": env!("CARGO_PKG_VERSION") }
        })
    }
}

/// `session.open` (a message, a new turn) or `session.replay` (the last segment again).
fn open_session(g: &mut World, method: &str, params: Value) -> Result<Value, RpcError> {
    // A pod Agent's session runs in its pod, and pins the pod Agent's harness id.
    let mut params = params;
    if let Some(p) = params.get("pod").filter(|p| !p.is_null()) {
        let pod = p
            .as_u64()
            .map(|i| i as usize)
            .filter(|i| *i < g.scenario().pods.len());
        let Some(pod) = pod else {
            return Err(RpcError::new(
                crate::shim::INVALID_PARAMS,
                format!("{method}: pod {p} is no index of core.start's pods"),
            ));
        };
        g.run_in_pod(pod);
        if params.get("harness").is_none() {
            params["harness"] = json!(g.scenario().pods[pod].harness);
        }
    }
    // The session pins its harness when it first opens, and never moves.
    let pins = params
        .get("harness")
        .and_then(Value::as_str)
        .filter(|_| !g.breaks(Mutant::ManifestHarnessIgnored));
    if let Some(h) = pins {
        if g.pinned().is_none() || g.breaks(Mutant::SessionMovesHarness) {
            g.pin(h);
        }
    }
    if method == "session.open" {
        let mut opts = serde_json::Map::new();
        for k in ["flow", "traceparent", "tracestate"] {
            if let Some(v) = params.get(k) {
                opts.insert(k.into(), v.clone());
            }
        }
        g.open_turn(params.get("message").cloned(), Value::Object(opts));
    } else {
        g.replay();
    }
    Ok(json!({ "sessionId": crate::suites::world::model::SESSION }))
}

/// `session.read`: the session and the harness it pinned.
fn read_session(g: &World) -> Value {
    let harness = if g.breaks(Mutant::SessionReadNoHarness) {
        Value::Null
    } else {
        json!(g.pinned_harness())
    };
    json!({ "sessionId": crate::suites::world::model::SESSION, "harness": harness })
}

/// The Model Gate's usage rows, one per effect id (GET /v1/sessions/{id}/calls/model).
fn model_rows(g: &World) -> Vec<Value> {
    let mut seen = std::collections::BTreeSet::new();
    let rows: Vec<Value> = g
        .log()
        .iter()
        .filter(|e| e["via"] == "gate" && e["route"] == "model-calls")
        // A call refused before anything was sent (a media part it would not send) used no
        // model; the variant meters it all the same ("meters every call").
        .filter(|e| match refused_unsent(e) {
            true => g.decides(Variant::UsageRowForRefusedCall),
            false => e["status"] == 200,
        })
        .filter(|e| seen.insert(e["key"].to_string()) || g.breaks(Mutant::UsageRowPerCall))
        .map(|e| json!({ "effectId": e["key"], "usage": e.pointer("/answer/outcome/usage") }))
        .collect();
    // The mutant meters a model call at its intent, sent to the gate or not.
    let mut rows = rows;
    if g.breaks(Mutant::UsageRowAtIntent) {
        for eid in g.executed_model_effects() {
            if seen.insert(json!(eid).to_string()) {
                rows.push(
                    json!({ "effectId": eid, "usage": { "inputTokens": 0, "outputTokens": 0 } }),
                );
            }
        }
    }
    if g.breaks(Mutant::UsageRowWithoutEffectId) {
        for r in rows.iter_mut().filter_map(Value::as_object_mut) {
            let id = r.remove("effectId").unwrap_or(Value::Null);
            r.insert("key".into(), id);
        }
    }
    rows
}

/// Whether the Model Gate refused a call before sending anything: a media part refused
/// (unsupported_input, invalid_request), as a gate error or as the call's failure.
fn refused_unsent(e: &Value) -> bool {
    let code = e
        .pointer("/answer/error/code")
        .or_else(|| e.pointer("/answer/outcome/code"))
        .and_then(Value::as_str);
    matches!(code, Some("unsupported_input" | "invalid_request"))
        && e.pointer("/answer/outcome/usage").is_none()
}

/// `session.cancel`: a cancel to the run held now, if one is.
fn cancel(g: &mut World, params: &Value) -> Value {
    let reason = params
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or("cancel")
        .to_string();
    if let Some((run, conn)) = g.active_run().map(|r| (r.id.clone(), r.conn)) {
        // The mutant spells ownership.lost as the error code's ownership_lost.
        let reason = match reason.as_str() {
            "ownership.lost" if g.breaks(Mutant::CancelReasonAsErrorCode) => {
                "ownership_lost".into()
            }
            _ => reason,
        };
        let mut p = json!({ "runId": run, "reason": reason });
        if g.breaks(Mutant::CancelWithoutReason) {
            p.as_object_mut().expect("object").remove("reason");
        }
        if g.breaks(Mutant::CancelWithoutRunId) {
            p.as_object_mut().expect("object").remove("runId");
        }
        match g.breaks(Mutant::CancelSentAsARequest) {
            true => g.send(
                conn,
                json!({ "t": "req", "id": "cancel-1", "m": "cancel", "p": p }),
            ),
            false => g.send(conn, json!({ "t": "msg", "m": "cancel", "p": p })),
        }
    }
    json!({})
}

/// `artifact.seed`: an artifact the session holds before any run wrote one.
fn seed(g: &mut World, params: &Value) -> Value {
    let bytes = crate::suites::world::unb64(params["base64"].as_str().unwrap_or_default())
        .unwrap_or_default();
    let seeded = crate::suites::world::artifacts::seed(
        g,
        params["name"].as_str().unwrap_or("seeded"),
        &bytes,
        params["scope"].as_str().unwrap_or("session"),
        params["kind"].as_str().unwrap_or("file"),
    );
    // The media type the artifact is stored with, when the case names one.
    if let Some(t) = params.get("contentType").filter(|t| t.is_string()) {
        let id = seeded["artifactId"].as_str().unwrap_or_default();
        g.set_content_type(id, t.clone());
    }
    seeded
}

/// A session sandbox route of the Runtime API: served by the session's harness when it
/// declared features.workspace, else 503 (§ 10).
fn workspace_route(g: &mut World, params: &Value) -> Value {
    let op = params["op"].as_str().unwrap_or("read").to_string();
    let conn = g.active_run().map(|r| r.conn);
    // A pod's host serves its own pod; off a pod, a harness that declared the feature.
    let served = conn
        .and_then(|c| g.conns().get(&c))
        .is_some_and(|c| c.workspace || c.pod.is_some())
        || g.breaks(Mutant::WorkspaceWithoutFeatureServed);
    let (Some(c), true) = (conn, served) else {
        return json!({ "status": 503 });
    };
    // The mutant sends it to every connection that declared the feature.
    // The other sends core's own sweeps and removes to every one too.
    let sweep = ["sweep", "remove"].contains(&op.as_str()) && g.breaks(Mutant::SweepsToAnyHarness);
    let to: Vec<usize> = if g.breaks(Mutant::WorkspaceToAnyHarness) || sweep {
        g.conns()
            .iter()
            .filter(|(_, x)| x.workspace)
            .map(|(n, _)| *n)
            .collect()
    } else if g.session_pod().is_some() && g.breaks(Mutant::PodWorkspaceToAnotherHost) {
        let own = g.conns().get(&c).and_then(|x| x.harness.clone());
        g.conns()
            .iter()
            .filter(|(_, x)| x.pod.is_some() && x.harness == own && !x.closed)
            .map(|(n, _)| *n)
            .collect()
    } else {
        vec![c]
    };
    let sent = !g.breaks(Mutant::WorkspaceRequestNotSent)
        && (op != "exec" || !g.breaks(Mutant::WorkspaceExecNotSent));
    for c in to.into_iter().filter(|_| sent) {
        let id = g.next_id();
        g.send(c, json!({ "t": "req", "id": id, "m": format!("workspace.{op}"), "p": params.get("p").cloned().unwrap_or(json!({})) }));
    }
    json!({ "status": 200 })
}

impl Drop for ReferenceCore {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            r.rt.shutdown_background();
        }
    }
}
