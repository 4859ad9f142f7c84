//! JSON-RPC 2.0 over any link: ids, encoding, and the strict reading of an answer. A link moves
//! one frame out and one frame back within a deadline; everything a shim can get wrong about
//! the frame (not JSON, not JSON-RPC, another id, a malformed error) is a `CallError::Transport`
//! naming the method and quoting what came back.

use super::{CallError, Options};
use crate::shim::{schema, RpcError};
use serde_json::{json, Value};
use std::time::Duration;

/// One duplex channel to a shim: a request frame out, the next frame back.
pub(crate) trait Link: Send {
    /// Send `frame` and return the next frame that comes back, within `deadline`; a frame over
    /// `cap` bytes is an error. The error says what happened, without the method.
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String>;
    /// What the link knows about a failure beyond the error itself (a shim's last stderr
    /// lines); empty by default.
    fn diagnose(&mut self) -> String {
        String::new()
    }
    /// The processes serving the link (`sched::Whose`); none by default.
    fn whose(&self) -> super::sched::Whose {
        super::sched::Whose::default()
    }
}

/// A JSON-RPC client over a link. After a transport failure the link is out of step with the
/// shim (an answer may still be on its way), so it is `broken` and every later call fails fast.
pub(crate) struct Client<L> {
    pub link: L,
    pub opts: Options,
    next_id: u64,
    pub broken: Option<String>,
}

impl<L: Link> Client<L> {
    pub fn new(link: L, opts: Options) -> Self {
        Client {
            link,
            opts,
            next_id: 1,
            broken: None,
        }
    }

    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        if let Some(why) = &self.broken {
            return Err(CallError::Transport(format!(
                "{method}: not sent, the connection broke earlier ({why})"
            )));
        }
        let id = self.next_id;
        self.next_id += 1;
        let frame = frame(id, method, params);
        crate::trace::sent(method, frame.as_bytes());
        let answer = self
            .link
            .exchange(&frame, self.opts.timeout, self.opts.max_message)
            .map_err(|e| {
                // No frame came back whole: what did, in the link's words, stands for it.
                crate::trace::note(method, &e);
                format!("{method}: {e}")
            })
            .and_then(|bytes| {
                crate::trace::received(method, &bytes);
                decode(&bytes, id, method)
            });
        match answer {
            Ok(result) => result.map_err(CallError::Rpc),
            Err(e) => {
                let diag = self.link.diagnose();
                self.broken = Some(e.clone());
                Err(CallError::Transport(if diag.is_empty() {
                    e
                } else {
                    format!("{e}; {diag}")
                }))
            }
        }
    }
}

/// The request frame of call `id`: what every adapter sends, and the bench's bare client too.
pub(crate) fn frame(id: u64, method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }).to_string()
}

/// Read one answer to request `id`: the result, the shim's JSON-RPC error, or (outer `Err`) what
/// is wrong with the frame.
pub(crate) fn decode(
    bytes: &[u8],
    id: u64,
    method: &str,
) -> Result<Result<Value, RpcError>, String> {
    let frame: Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("{method}: the answer is not JSON ({e}): {}", excerpt(bytes)))?;
    if let Some((pointer, message)) = schema::check_response(&frame) {
        return Err(format!(
            "{method}: the answer is not a JSON-RPC 2.0 response: at {pointer}: {message}: {}",
            excerpt(bytes)
        ));
    }
    if frame["id"] != json!(id) {
        return Err(format!(
            "{method}: the answer carries id {}, the request had id {id}: {}",
            frame["id"],
            excerpt(bytes)
        ));
    }
    if let Some(e) = frame.get("error") {
        let code = e["code"].as_i64().unwrap_or_default();
        return Ok(Err(RpcError::new(
            code,
            e["message"].as_str().unwrap_or_default(),
        )));
    }
    Ok(Ok(frame.get("result").cloned().unwrap_or(Value::Null)))
}

/// The first 160 bytes of a frame, quoted, with its length when cut. Redacted before it is cut
/// or quoted (a secret holding `"` or `\\` is found as it was sent, and one straddling byte 160
/// leaves nothing behind).
pub fn excerpt(bytes: &[u8]) -> String {
    const N: usize = 160;
    let text = crate::snapshot::excerpt_text(&String::from_utf8_lossy(bytes), N);
    let quoted = serde_json::to_string(&text).unwrap_or_default();
    if bytes.len() > N {
        format!("{quoted}… ({} bytes)", bytes.len())
    } else {
        quoted
    }
}

/// A byte count for messages: `8 MiB`, `512 KiB`, `17 bytes`.
pub fn size(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

/// `5 s`, `250 ms`.
pub fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

impl<L: Link> super::Adapter for Client<L> {
    fn whose(&self) -> super::sched::Whose {
        self.link.whose()
    }

    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        Client::call(self, method, params)
    }
}
