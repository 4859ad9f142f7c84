//! The contract's shim server: the embedded runtimes behind `hcpspec-shim/1`, one [`Session`]
//! of live runtimes per shim. The in-process adapter is handed a session (`inproc:NAME`); the
//! transports of `crate::shim` (stdio, HTTP, WebSocket) serve the same session as bytes.

use super::pack::{self, PackFiles};
use super::runtime::{
    CliRequest, ExecRequest, Factory, Runtime, RuntimeConfig, SenseConfig, SenseEvent,
};
use crate::adapter::{self, Adapter, Connector, Inproc, Options};
use crate::error::BadInput;
use crate::shim::{
    Dispatch, RpcError, Service, INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, PROTOCOL,
    UNKNOWN_RUNTIME,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Shared = Arc<Mutex<Box<dyn Runtime>>>;

/// One shim's state: the factory it serves and its live runtimes by `runtime_id`. Calls on
/// different runtimes run in parallel (a server shares one session between its connections);
/// calls on one runtime are serialised.
pub struct Session {
    factory: Arc<dyn Factory>,
    runtimes: Mutex<BTreeMap<String, Shared>>,
    next_id: AtomicU64,
}

#[derive(Deserialize)]
struct RuntimeRef {
    runtime_id: String,
}

#[derive(Deserialize)]
struct WithPack {
    runtime_id: String,
    pack_id: String,
}

#[derive(Deserialize)]
struct ActivateParams {
    runtime_id: String,
    pack_ids: Vec<String>,
}

#[derive(Deserialize)]
struct ExecParams {
    runtime_id: String,
    #[serde(flatten)]
    req: ExecRequest,
}

#[derive(Deserialize)]
struct SenseParams {
    runtime_id: String,
    #[serde(flatten)]
    event: SenseEvent,
}

#[derive(Deserialize)]
struct CliParams {
    runtime_id: String,
    #[serde(flatten)]
    req: CliRequest,
}

#[derive(Deserialize)]
struct SetSenseParams {
    runtime_id: String,
    sense: SenseConfig,
}

#[derive(Deserialize)]
struct CheckParams {
    #[serde(rename = "packDir")]
    pack_dir: std::path::PathBuf,
}

fn params<T: DeserializeOwned>(v: Value) -> Result<T, RpcError> {
    serde_json::from_value(v)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("invalid params: {e}")))
}

fn not_found(method: &str) -> RpcError {
    RpcError::new(
        METHOD_NOT_FOUND,
        format!("method not found: {method} (this runtime does not implement it)"),
    )
}

fn to_value<T: Serialize>(t: T) -> Result<Value, RpcError> {
    serde_json::to_value(t).map_err(|e| RpcError::new(-32603, e.to_string()))
}

impl Session {
    pub fn new(factory: Arc<dyn Factory>) -> Self {
        Session {
            factory,
            runtimes: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Shared>> {
        self.runtimes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn runtime(&self, id: &str) -> Result<Shared, RpcError> {
        self.table()
            .get(id)
            .cloned()
            .ok_or_else(|| RpcError::new(UNKNOWN_RUNTIME, format!("unknown runtime_id {id}")))
    }

    /// Run `f` on the runtime `id`, alone.
    fn with<T: Serialize>(
        &self,
        id: &str,
        f: impl FnOnce(&mut dyn Runtime) -> T,
    ) -> Result<Value, RpcError> {
        let rt = self.runtime(id)?;
        let mut guard = rt
            .lock()
            .map_err(|_| RpcError::new(INTERNAL_ERROR, format!("runtime {id} panicked earlier")))?;
        to_value(f(guard.as_mut()))
    }

    /// The live runtimes (the servers' tests check that closed connections leave none).
    pub fn live(&self) -> usize {
        self.table().len()
    }

    pub fn dispatch(&self, method: &str, p: Value) -> Result<Value, RpcError> {
        let mut answer = self.answer(method, p)?;
        self.factory.dress(method, &mut answer);
        Ok(answer)
    }

    fn answer(&self, method: &str, p: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let info = self.factory.info();
                let mut answer = json!({ "protocol": PROTOCOL, "runtime": { "name": info.name, "version": info.version }, "features": info.features });
                if let Some(d) = info.denials {
                    answer["denials"] = json!(d);
                }
                if let Some(r) = info.rules {
                    answer["rules"] = json!(r);
                }
                if let Some(c) = info.connect {
                    answer["connect"] = json!(c);
                }
                Ok(answer)
            }
            "runtime.create" => {
                let config: RuntimeConfig = params(p)?;
                match self.factory.create(config) {
                    Ok(rt) => {
                        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
                        let id = self.factory.runtime_id(n);
                        self.table().insert(id.clone(), Arc::new(Mutex::new(rt)));
                        Ok(json!({ "ok": true, "runtime_id": id }))
                    }
                    Err(issues) => Ok(json!({ "ok": false, "issues": issues })),
                }
            }
            "runtime.activate" => {
                let a: ActivateParams = params(p)?;
                self.with(&a.runtime_id, |rt| rt.activate(&a.pack_ids))
            }
            "runtime.connect" if self.factory.info().connect == Some(false) => Err(RpcError::new(
                METHOD_NOT_FOUND,
                "method not found: runtime.connect (this driver has no connect)",
            )),
            "runtime.connect" => {
                let a: WithPack = params(p)?;
                self.with(&a.runtime_id, |rt| rt.connect(&a.pack_id))
            }
            // Issue 44, additions within hcpspec-shim/2: a runtime that cannot answers -32601.
            "runtime.setSense" => {
                let a: SetSenseParams = params(p)?;
                match self.with(&a.runtime_id, |rt| rt.set_sense(&a.sense).is_some())? {
                    Value::Bool(true) => Ok(json!({ "ok": true })),
                    _ => Err(not_found(method)),
                }
            }
            "runtime.grants" => {
                let a: RuntimeRef = params(p)?;
                match self.with(&a.runtime_id, |rt| rt.grants())? {
                    Value::Null => Err(not_found(method)),
                    v => Ok(v),
                }
            }
            "runtime.exec" => {
                let a: ExecParams = params(p)?;
                // A runtime that throws is answered as a shim answers an exception: -32603.
                let mut thrown = None;
                let v = self.with(&a.runtime_id, |rt| {
                    rt.exec_or_throw(&a.req).map_err(|t| thrown = Some(t)).ok()
                })?;
                match thrown {
                    Some(t) => Err(RpcError::new(
                        INTERNAL_ERROR,
                        format!("the runtime threw: {t}"),
                    )),
                    None => Ok(v),
                }
            }
            "runtime.availability" => {
                let a: WithPack = params(p)?;
                self.with(&a.runtime_id, |rt| rt.availability(&a.pack_id))
            }
            "runtime.getPack" => {
                let a: WithPack = params(p)?;
                self.with(&a.runtime_id, |rt| rt.get_pack(&a.pack_id))
            }
            "runtime.skill" => {
                let a: WithPack = params(p)?;
                self.with(&a.runtime_id, |rt| {
                    rt.skill(&a.pack_id)
                        .map(|skill| json!({ "pack_id": a.pack_id, "skill": skill }))
                })
            }
            "runtime.cli" => {
                let a: CliParams = params(p)?;
                match self.with(&a.runtime_id, |rt| rt.cli(&a.req))? {
                    Value::Null => Err(RpcError::new(
                        METHOD_NOT_FOUND,
                        "method not found: runtime.cli (this runtime exposes no CLI face)",
                    )),
                    v => Ok(v),
                }
            }
            "runtime.sense" => {
                let a: SenseParams = params(p)?;
                self.with(&a.runtime_id, |rt| rt.sense(&a.event))
            }
            "runtime.listPacks" | "runtime.senseSink" | "runtime.audit" | "runtime.dispose" => {
                let a: RuntimeRef = params(p)?;
                match method {
                    "runtime.listPacks" => self.with(&a.runtime_id, |rt| rt.list_packs()),
                    "runtime.senseSink" => self.with(&a.runtime_id, |rt| rt.sense_sink()),
                    "runtime.audit" => self.with(&a.runtime_id, |rt| rt.audit()),
                    _ => {
                        self.table().remove(&a.runtime_id);
                        Ok(json!({ "ok": true }))
                    }
                }
            }
            "pack.check" => {
                let a: CheckParams = params(p)?;
                match pack::install(&PackFiles::read(&a.pack_dir)) {
                    Ok(_) => Ok(json!({ "ok": true, "issues": [] })),
                    Err(issues) => Ok(json!({ "ok": false, "issues": issues })),
                }
            }
            "shutdown" => {
                self.table().clear();
                Ok(json!({ "ok": true }))
            }
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }
}

impl Dispatch for Session {
    fn dispatch(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        Session::dispatch(self, method, params)
    }

    fn close(&self, runtime_ids: Vec<String>) {
        let mut table = self.table();
        for id in runtime_ids {
            table.remove(&id);
        }
    }
}

/// The embedded runtime `name` (`reference`, `stub`, `mutant:NAME`, `variant:NAME`) behind a
/// fresh session.
pub fn session(name: &str) -> Option<Session> {
    Some(Session::new(super::runtime::embedded(name)?))
}

/// `inproc:NAME`'s adapter: the embedded runtime `name` in this process, same messages, no bytes.
pub fn inproc(name: &str) -> Option<Inproc> {
    Some(Inproc::new(session(name)?))
}

/// What `hcpspec shim --runtime NAME` serves: the embedded runtime `name` behind a fresh session.
pub fn service(name: &str) -> Option<Service> {
    Some(Service::Rpc(Arc::new(session(name)?)))
}

/// A runtime spec as a connector: `inproc:NAME` an embedded runtime, any other spec the
/// adapter's (`stdio:`, `http://`, `ws://`). An unknown spec is a usage error naming the specs
/// that exist; nothing is reached yet: the first call does that.
pub fn connector(spec: &str, opts: &Options) -> Result<Connector, BadInput> {
    let parsed = crate::spec::Spec::of_shim(spec)?;
    let crate::spec::Spec::Inproc(name) = &parsed else {
        return adapter::shim_connector(&parsed, opts);
    };
    super::runtime::embedded(name).ok_or_else(|| {
        BadInput(format!(
            "--runtime {spec}: no embedded runtime `{name}` (reference, stub, mutant:NAME)"
        ))
    })?;
    crate::shim::schema::warm();
    let name = name.clone();
    Ok(Box::new(move || {
        let a = inproc(&name).expect("checked above");
        Ok(Box::new(adapter::Checked(a)) as Box<dyn Adapter>)
    }))
}
