//! The shim protocol, `hcpspec-shim/1`: JSON-RPC 2.0 methods over the runtime surface. This
//! module is the serving side for the embedded runtimes; the in-process adapter calls it
//! directly, the transports (stdio, HTTP, WebSocket) put bytes around the same calls
//! (`Service::handle`, one JSON-RPC message in, at most one out). docs/shim-protocol.md is the
//! protocol for shim authors; vectors/schemas/shim/ holds its schemas.

pub mod http;
pub mod schema;
pub mod stdio;
pub mod ws;

use crate::pack::{self, PackFiles};
use crate::runtime::{CliRequest, ExecRequest, Factory, Runtime, RuntimeConfig, SenseEvent};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub const PROTOCOL: &str = "hcpspec-shim/1";

/// JSON-RPC error codes. "Method not found" is also how a shim says an optional method is not
/// implemented: hcpspec reports that as a skip with the reason, never as a pass.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const UNKNOWN_RUNTIME: i64 = -32001;

/// The largest message either side accepts (8 MiB); a longer one is a transport error.
pub const MAX_MESSAGE: usize = 8 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
        }
    }
}

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
struct CheckParams {
    #[serde(rename = "packDir")]
    pack_dir: std::path::PathBuf,
}

fn params<T: DeserializeOwned>(v: Value) -> Result<T, RpcError> {
    serde_json::from_value(v)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("invalid params: {e}")))
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
                Ok(answer)
            }
            "runtime.create" => {
                let config: RuntimeConfig = params(p)?;
                match self.factory.create(config) {
                    Ok(rt) => {
                        let id = format!("rt-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
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
            "runtime.connect" => {
                let a: WithPack = params(p)?;
                self.with(&a.runtime_id, |rt| rt.connect(&a.pack_id))
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

/// What one connection of a server did: the runtimes it created (disposed when it closes)
/// and whether it asked to shut down.
#[derive(Debug, Default)]
pub struct Conn {
    created: Vec<String>,
    pub shutdown: bool,
}

/// What a server serves: the protocol over a session, or (for `hcpspec bench --transports`)
/// a bare echo of every message, the floor a transport costs.
#[derive(Clone)]
pub enum Service {
    Rpc(Arc<Session>),
    Echo,
}

/// A JSON-RPC 2.0 error response.
pub fn error_frame(id: Value, code: i64, message: impl Into<String>) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
        .to_string()
}

impl Service {
    /// The embedded runtime `name` (`reference`, `stub`, `mutant:NAME`) behind a fresh session.
    pub fn embedded(name: &str) -> Option<Service> {
        Some(Service::Rpc(Arc::new(Session::new(
            crate::runtime::embedded(name)?,
        ))))
    }

    /// One message in, at most one out: a response for a request, nothing for a notification.
    /// Never panics: a runtime that panics answers -32603.
    pub fn handle(&self, text: &str, conn: &mut Conn) -> Option<String> {
        let session = match self {
            Service::Echo => return Some(text.to_string()),
            Service::Rpc(s) => s,
        };
        let msg: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                return Some(error_frame(
                    Value::Null,
                    PARSE_ERROR,
                    format!("parse error: {e}"),
                ))
            }
        };
        let Some(obj) = msg.as_object() else {
            return Some(error_frame(
                Value::Null,
                INVALID_REQUEST,
                "a request is one JSON object (batches are not supported)",
            ));
        };
        let id = obj.get("id").cloned();
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error_frame(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "jsonrpc must be \"2.0\"",
            ));
        }
        let Some(method) = obj.get("method").and_then(Value::as_str) else {
            return Some(error_frame(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "method must be a string",
            ));
        };
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            session.dispatch(method, params.clone())
        }))
        .unwrap_or_else(|_| {
            Err(RpcError::new(
                INTERNAL_ERROR,
                format!("the runtime panicked in {method}"),
            ))
        });
        match (method, &outcome) {
            ("runtime.create", Ok(v)) => conn.created.extend(
                v.get("runtime_id")
                    .and_then(Value::as_str)
                    .map(String::from),
            ),
            ("runtime.dispose", _) => conn
                .created
                .retain(|c| params.get("runtime_id").and_then(Value::as_str) != Some(c.as_str())),
            ("shutdown", _) => {
                conn.created.clear();
                conn.shutdown = true;
            }
            _ => {}
        }
        let id = id?;
        Some(match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }).to_string(),
            Err(e) => error_frame(id, e.code, e.message),
        })
    }

    /// A connection closed: dispose every runtime it created and did not dispose.
    pub fn close(&self, conn: Conn) {
        if let Service::Rpc(session) = self {
            let mut table = session.table();
            for id in conn.created {
                table.remove(&id);
            }
        }
    }
}

/// Run an axum app on an already bound listener, on a current-thread runtime, until the
/// process ends (the HTTP and WebSocket servers).
pub(crate) fn serve_router(
    listener: std::net::TcpListener,
    app: axum::Router,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, app).await
    })
}
