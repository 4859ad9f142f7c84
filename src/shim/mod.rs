//! The shim protocol, `hcpspec-shim/1`: JSON-RPC 2.0 methods over the runtime surface. This
//! module is its wire (codes, errors, schemas) and the serving side's transports (stdio, HTTP,
//! WebSocket), which put bytes around the calls of a [`Dispatch`] (`Service::handle`, one
//! JSON-RPC message in, at most one out); what answers them is a suite's (the contract's
//! embedded runtimes, `suites::hcp::shim::Session`). docs/shim-protocol.md is the protocol for
//! shim authors; vectors/schemas/shim/ holds its schemas.

pub mod http;
pub mod schema;
pub mod stdio;
pub mod ws;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;

/// The newest version of the shim protocol: what the embedded runtimes state.
pub const PROTOCOL: &str = "hcpspec-shim/2";
/// Every version hcpspec speaks, oldest first: a shim states the one it is written to, and is
/// judged by that version's requirement set (docs/CHANGELOG.md).
pub const PROTOCOLS: &[&str] = &["hcpspec-shim/1", "hcpspec-shim/2"];

/// What hcpspec sends in `initialize`: byte for byte what it sent under `hcpspec-shim/1`, so a
/// shim written to it (which may refuse any other `protocol`) sees no change; a shim answers the
/// version it is written to (docs/shim-protocol.md).
pub fn greeting() -> Value {
    json!({ "protocol": PROTOCOLS[0] })
}

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

/// What a server serves: JSON-RPC calls answered one at a time, from any connection.
pub trait Dispatch: Send + Sync {
    /// One call: its result, or the JSON-RPC error it is answered with.
    fn dispatch(&self, method: &str, params: Value) -> Result<Value, RpcError>;
    /// A connection closed: dispose the runtimes it created and did not dispose.
    fn close(&self, runtime_ids: Vec<String>);
}

/// What one connection of a server did: the runtimes it created (disposed when it closes)
/// and whether it asked to shut down.
#[derive(Debug, Default)]
pub struct Conn {
    created: Vec<String>,
    pub shutdown: bool,
}

/// What a server serves: the protocol over a [`Dispatch`], or (for `hcpspec bench --transports`)
/// a bare echo of every message, the floor a transport costs.
#[derive(Clone)]
pub enum Service {
    Rpc(Arc<dyn Dispatch>),
    Echo,
}

/// A JSON-RPC 2.0 error response.
pub fn error_frame(id: Value, code: i64, message: impl Into<String>) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message.into() } })
        .to_string()
}

impl Service {
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
            session.close(conn.created);
        }
    }
}

/// Run an axum app on an already bound listener, on a runtime of one worker, until the process
/// ends (the HTTP and WebSocket servers). Multi-thread, so that a call can run where its request
/// was read ([`tokio::task::block_in_place`]: the worker's other connections move to another
/// thread meanwhile) rather than hop to the blocking pool and back.
pub(crate) fn serve_router(
    listener: std::net::TcpListener,
    app: axum::Router,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, app).await
    })
}
