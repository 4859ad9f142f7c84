//! The client side of the shim protocol: one trait, one implementation per transport.
//! The runner only ever talks to a runtime through an `Adapter`.

use crate::shim::{RpcError, Session};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// The shim answered with a JSON-RPC error.
    #[error("{0}")]
    Rpc(RpcError),
    /// The runtime could not be reached or broke the transport (crash, garbage, timeout …).
    #[error("{0}")]
    Transport(String),
}

impl CallError {
    /// "Method not found": an optional method the runtime does not implement.
    pub fn not_implemented(&self) -> bool {
        matches!(self, CallError::Rpc(e) if e.code == crate::shim::METHOD_NOT_FOUND)
    }
}

pub trait Adapter: Send {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError>;
}

/// `inproc:NAME`: the embedded runtime in this process, same messages, no bytes.
pub struct Inproc {
    session: Session,
}

impl Inproc {
    pub fn new(name: &str) -> Option<Inproc> {
        Some(Inproc {
            session: Session::new(crate::runtime::embedded(name)?),
        })
    }
}

impl Adapter for Inproc {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        self.session
            .dispatch(method, params)
            .map_err(CallError::Rpc)
    }
}

/// Makes a fresh adapter per case for a runtime spec (`inproc:reference`, …).
pub type Connector = Box<dyn Fn() -> Result<Box<dyn Adapter>, String> + Sync + Send>;

/// Parse a runtime spec into a connector. An unknown spec is a usage error (the message says
/// which specs exist).
pub fn connector(spec: &str) -> Result<Connector, String> {
    if let Some(name) = spec.strip_prefix("inproc:") {
        crate::runtime::embedded(name).ok_or_else(|| {
            format!("--runtime {spec}: no embedded runtime `{name}` (reference, stub, mutant:NAME)")
        })?;
        let name = name.to_string();
        return Ok(Box::new(move || {
            Ok(Box::new(Inproc::new(&name).expect("checked above")) as Box<dyn Adapter>)
        }));
    }
    Err(format!(
        "--runtime {spec}: unknown runtime spec (expected inproc:NAME)"
    ))
}
