//! The shim protocol, `hcpspec-shim/1`: JSON-RPC 2.0 methods over the runtime surface. This
//! module is the serving side for the embedded runtimes; the in-process adapter calls it
//! directly, the transports (stdio, HTTP, WebSocket) put bytes around the same calls.

use crate::pack::{self, PackFiles};
use crate::runtime::{ExecRequest, Factory, Runtime, RuntimeConfig, SenseEvent};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const PROTOCOL: &str = "hcpspec-shim/1";

/// JSON-RPC error codes. "Method not found" is also how a shim says an optional method is not
/// implemented: hcpspec reports that as a skip with the reason, never as a pass.
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const UNKNOWN_RUNTIME: i64 = -32001;

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

/// One shim's state: the factory it serves and its live runtimes by `runtime_id`.
pub struct Session {
    factory: Arc<dyn Factory>,
    runtimes: BTreeMap<String, Box<dyn Runtime>>,
    next_id: u64,
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
            runtimes: BTreeMap::new(),
            next_id: 1,
        }
    }

    fn runtime(&mut self, id: &str) -> Result<&mut Box<dyn Runtime>, RpcError> {
        self.runtimes
            .get_mut(id)
            .ok_or_else(|| RpcError::new(UNKNOWN_RUNTIME, format!("unknown runtime_id {id}")))
    }

    pub fn dispatch(&mut self, method: &str, p: Value) -> Result<Value, RpcError> {
        match method {
            "initialize" => {
                let info = self.factory.info();
                Ok(
                    json!({ "protocol": PROTOCOL, "runtime": { "name": info.name, "version": info.version }, "features": info.features }),
                )
            }
            "runtime.create" => {
                let config: RuntimeConfig = params(p)?;
                match self.factory.create(config) {
                    Ok(rt) => {
                        let id = format!("rt-{}", self.next_id);
                        self.next_id += 1;
                        self.runtimes.insert(id.clone(), rt);
                        Ok(json!({ "ok": true, "runtime_id": id }))
                    }
                    Err(issues) => Ok(json!({ "ok": false, "issues": issues })),
                }
            }
            "runtime.activate" => {
                let a: ActivateParams = params(p)?;
                to_value(self.runtime(&a.runtime_id)?.activate(&a.pack_ids))
            }
            "runtime.connect" => {
                let a: WithPack = params(p)?;
                to_value(self.runtime(&a.runtime_id)?.connect(&a.pack_id))
            }
            "runtime.exec" => {
                let a: ExecParams = params(p)?;
                to_value(self.runtime(&a.runtime_id)?.exec(&a.req))
            }
            "runtime.availability" => {
                let a: WithPack = params(p)?;
                to_value(self.runtime(&a.runtime_id)?.availability(&a.pack_id))
            }
            "runtime.sense" => {
                let a: SenseParams = params(p)?;
                to_value(self.runtime(&a.runtime_id)?.sense(&a.event))
            }
            "runtime.listPacks" | "runtime.senseSink" | "runtime.audit" | "runtime.dispose" => {
                let a: RuntimeRef = params(p)?;
                match method {
                    "runtime.listPacks" => to_value(self.runtime(&a.runtime_id)?.list_packs()),
                    "runtime.senseSink" => to_value(self.runtime(&a.runtime_id)?.sense_sink()),
                    "runtime.audit" => to_value(self.runtime(&a.runtime_id)?.audit()),
                    _ => {
                        self.runtimes.remove(&a.runtime_id);
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
                self.runtimes.clear();
                Ok(json!({ "ok": true }))
            }
            other => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        }
    }
}
