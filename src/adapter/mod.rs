//! The client side of the shim protocol: one trait, one implementation per transport.
//! The runner only ever talks to a runtime through an `Adapter`.
//!
//! Runtime specs: `stdio:CMD ARGS` (a shim as a child process), `http://HOST:PORT` and
//! `ws://HOST:PORT/PATH` (a shim serving); `inproc:NAME` is a suite's own (its embedded target
//! behind [`Inproc`], no bytes). Every adapter
//! made by `connector` checks every message both ways against `vectors/schemas/shim/`, and
//! every transport failure (a deadline, a crash, garbage, a wrong id, an oversized answer, a
//! closed socket) is a `CallError::Transport` that says what came back.

pub mod bench;
pub mod client;
pub mod hints;
mod http;
mod http1;
pub mod loopback;
pub mod process;
pub mod reap;
mod rpc;
pub mod sched;
mod stdio;
mod ws;

pub use rpc::excerpt;

use crate::error::BadInput;
use crate::shim::schema::{self, Part};
use crate::shim::{Dispatch, RpcError};
use crate::spec::{Spec, SpecError};
use serde_json::Value;
use std::time::Duration;

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

    /// The implementation's processes, where hcpspec started them (a `stdio:` shim and every
    /// process it started): their waits for a CPU are not charged to a deadline (`sched`).
    fn whose(&self) -> sched::Whose {
        sched::Whose::default()
    }
}

/// `inproc:NAME`: a suite's embedded target in this process, handed over as its session: same
/// messages, no bytes.
pub struct Inproc {
    session: Box<dyn Dispatch>,
}

impl Inproc {
    pub fn new(session: impl Dispatch + 'static) -> Inproc {
        Inproc {
            session: Box::new(session),
        }
    }
}

impl Adapter for Inproc {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        self.session
            .dispatch(method, params)
            .map_err(CallError::Rpc)
    }
}

/// The limits every call runs under.
#[derive(Debug, Clone)]
pub struct Options {
    /// The deadline of one call, from sending the request to the end of the answer.
    pub timeout: Duration,
    /// The largest answer accepted, in bytes.
    pub max_message: usize,
}

/// The longest deadline of one call (`--timeout`), in seconds: an hour.
pub const MAX_TIMEOUT_SECS: f64 = 3600.0;
/// The shortest (`--timeout`), in seconds: a millisecond. Less rounds to a deadline that no
/// answer can meet (1e-300 s is 0 ns): refused, never a run of timed-out calls.
pub const MIN_TIMEOUT_SECS: f64 = 0.001;

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(5),
            max_message: crate::shim::MAX_MESSAGE,
        }
    }
}

/// Any adapter, with every message checked against the protocol's schemas: the params before
/// they leave (a case that breaks the protocol is hcpspec's problem, not the shim's) and the
/// result when it arrives (the shim is told the method, the JSON pointer and the rule).
pub struct Checked<A>(pub A);

/// One call with its params and result checked against the method's schemas.
pub(crate) fn check_call(
    method: &str,
    params: Value,
    call: impl FnOnce(Value) -> Result<Value, CallError>,
) -> Result<Value, CallError> {
    if let Some((pointer, message)) = schema::check(method, Part::Params, &params) {
        return Err(CallError::Transport(format!(
            "{method}: hcpspec would send invalid params (vectors/schemas/shim/{method}.schema.json) at {pointer}: {message}; nothing was sent"
        )));
    }
    let result = call(params).map_err(|e| match e {
        e if e.not_implemented() && schema::REQUIRED.contains(&method) => CallError::Transport(format!(
            "{method}: the shim answered \"method not found\", but every shim must implement {method} ({e})"
        )),
        e => e,
    })?;
    // A version hcpspec does not speak, said as such before its schema (which lists the same).
    if let Some(p) = result["protocol"]
        .as_str()
        .filter(|p| method == "initialize" && !crate::shim::PROTOCOLS.contains(p))
    {
        return Err(CallError::Transport(format!(
            "initialize states protocol {}; hcpspec speaks {} (docs/CHANGELOG.md){}",
            crate::snapshot::contain_text(&Value::from(p).to_string()),
            crate::shim::PROTOCOLS.join(", "),
            hints::stated(p, method)
        )));
    }
    if let Some((pointer, message)) = schema::check(method, Part::Result, &result) {
        return Err(CallError::Transport(format!(
            "{method}: the shim's result breaks vectors/schemas/shim/{method}.schema.json at {pointer}: {message}; result: {}",
            excerpt(result.to_string().as_bytes())
        )));
    }
    Ok(result)
}

impl<A: Adapter> Adapter for Checked<A> {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let inner = &mut self.0;
        let mut unanswered = false;
        let r = check_call(method, params, |p| {
            let r = inner.call(method, p);
            unanswered = r.as_ref().is_err_and(CallError::not_implemented);
            r
        });
        match r {
            // A shim of another suite answers its own first method, not `initialize`.
            Err(CallError::Transport(e)) if unanswered && method == "initialize" => {
                let hint = hints::other_suite(method, &mut |m, p| inner.call(m, p));
                Err(CallError::Transport(match hint {
                    Some(h) => format!("{e}; {h}"),
                    None => e,
                }))
            }
            r => r,
        }
    }

    fn whose(&self) -> sched::Whose {
        self.0.whose()
    }
}

/// Makes a fresh adapter per case for a runtime spec (`stdio:CMD`, …).
pub type Connector = Box<dyn Fn() -> Result<Box<dyn Adapter>, String> + Sync + Send>;

/// A connector to the runtime behind a shim a parsed spec names: over stdio (a pool of
/// processes), HTTP or WebSocket.
pub fn shim_connector(spec: &Spec, opts: &Options) -> Result<Connector, BadInput> {
    fn boxed<A: Adapter + 'static>(a: A) -> Box<dyn Adapter> {
        Box::new(Checked(a))
    }
    schema::warm();
    let opts = opts.clone();
    match spec {
        Spec::Stdio(cmd) => {
            let pool = stdio::Pool::new(cmd.argv.clone(), opts);
            Ok(Box::new(move || {
                pool.checkout().map(boxed).map_err(String::from)
            }))
        }
        Spec::Http(url) => {
            let shared = http::HttpShared::new(url)?;
            Ok(Box::new(move || {
                Ok(boxed(rpc::Client::new(
                    http::HttpLink::new(shared.clone()),
                    opts.clone(),
                )))
            }))
        }
        Spec::Ws(url) => {
            ws::WsLink::new(url)?;
            let url = url.clone();
            Ok(Box::new(move || {
                Ok(boxed(rpc::Client::new(
                    ws::WsLink::new(&url)?,
                    opts.clone(),
                )))
            }))
        }
        // `inproc:` is a suite's own (its session handed to `Inproc`); `exec:` starts a
        // harness, never a shim.
        Spec::Inproc(_) => Err(SpecError::Unknown(spec.to_string()).into()),
        Spec::Exec(_) => Err(SpecError::Harness(spec.to_string()).into()),
    }
}
