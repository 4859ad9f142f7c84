//! `stdio:CMD` for the suites whose shim holds a whole case's state (a core's control shim, a
//! host shim): one JSON-RPC 2.0 message per line, one process per case, so cases stay apart. A
//! shim that hangs past the deadline, closes, or answers garbage is an error naming what it did.
//!
//! The pipes are the contract suite's (`stdio::Proc`): a call's deadline runs from the request
//! and nothing the shim sends renews it; a line is read in bounded chunks and is an error once
//! past `max_message`; invalid UTF-8 and another request's id are errors that say so.
//! Notifications (a message with a method and no id) before the answer are skipped.

use crate::adapter::rpc::Link;
use crate::adapter::stdio::{end_of, Proc};
use crate::adapter::{Adapter, CallError, Options};
use crate::error::BadInput;
use crate::shim::RpcError;
use crate::spec::Spec;
use serde_json::{json, Value};
use std::time::Instant;

pub struct Process {
    proc: Proc,
    opts: Options,
    next: u64,
    /// Set once the shim broke the transport: the pipes are out of step (a late answer, the
    /// rest of an oversized line), so every later call fails fast.
    broken: Option<String>,
}

impl Process {
    pub fn start(argv: &[String], opts: &Options) -> Result<Process, BadInput> {
        Ok(Process {
            proc: Proc::spawn(argv)?,
            opts: opts.clone(),
            next: 1,
            broken: None,
        })
    }

    /// The answer to request `id`, skipping notifications, by `end`.
    fn answer(&mut self, method: &str, id: u64, end: Instant) -> Result<Value, CallError> {
        let (deadline, cap) = (self.opts.timeout, self.opts.max_message);
        loop {
            let line = self.proc.read_line(end, deadline, cap).map_err(|e| {
                crate::trace::note(method, &e);
                format!("{method}: {e}")
            })?;
            crate::trace::received(method, &line);
            if let Err(e) = std::str::from_utf8(&line) {
                return Err(format!(
                    "{method}: the shim answered a line that is not UTF-8 (invalid byte at offset {}): {}",
                    e.valid_up_to(),
                    crate::adapter::excerpt(&line)
                )
                .into());
            }
            let v: Value = serde_json::from_slice(&line).map_err(|e| {
                format!(
                    "{method}: the shim answered a line that is not JSON ({e}): {}",
                    crate::adapter::excerpt(&line)
                )
            })?;
            if v.get("id").is_none() && v.get("method").is_some() {
                continue; // a notification
            }
            if v["id"] != json!(id) {
                return Err(format!(
                    "{method}: the shim answered with id {}, the request had id {id}: {}",
                    v["id"],
                    crate::adapter::excerpt(&line)
                )
                .into());
            }
            if let Some(e) = v.get("error") {
                return Err(CallError::Rpc(RpcError::new(
                    e["code"].as_i64().unwrap_or(-32603),
                    e["message"].as_str().unwrap_or_default(),
                )));
            }
            return Ok(v.get("result").cloned().unwrap_or(Value::Null));
        }
    }
}

impl From<String> for CallError {
    fn from(e: String) -> Self {
        CallError::Transport(e)
    }
}

impl Adapter for Process {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        if let Some(why) = &self.broken {
            return Err(CallError::Transport(format!(
                "{method}: not sent, the shim broke the transport earlier ({why})"
            )));
        }
        let id = self.next;
        self.next += 1;
        // The deadline of the whole call, fixed now: writing, then every line read, count.
        let end = end_of(Instant::now(), self.opts.timeout);
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let mut bytes = msg.to_string().into_bytes();
        crate::trace::sent(method, &bytes);
        bytes.push(b'\n');
        let r = self
            .proc
            .write(bytes, self.opts.timeout)
            .map_err(|e| {
                crate::trace::note(method, &e);
                CallError::Transport(format!("{method}: {e}"))
            })
            .and_then(|()| self.answer(method, id, end));
        match r {
            Err(CallError::Transport(e)) => {
                self.broken = Some(e.clone());
                // The shim's last stderr lines, as the contract suite's transport errors carry
                // them (a crash's traceback): redacted with the message that holds them.
                let diag = self.proc.diagnose();
                Err(CallError::Transport(if diag.is_empty() {
                    e
                } else {
                    format!("{e}; {diag}")
                }))
            }
            r => r,
        }
    }

    fn whose(&self) -> crate::adapter::sched::Whose {
        self.proc.whose()
    }
}

/// A connector for a suite whose shim holds a case's state: `inproc:NAME` (an embedded target
/// `embedded` makes), `stdio:CMD` (a process per case), or any other spec `--runtime` takes for
/// a shim (http://, ws://), where one shim serves every case.
pub fn connector(
    spec: &Spec,
    opts: &crate::adapter::Options,
    what: &str,
    embedded: fn(&str) -> Option<Box<dyn Adapter>>,
) -> Result<super::Connector, BadInput> {
    match spec {
        Spec::Inproc(name) => {
            embedded(name).ok_or_else(|| {
                format!("--runtime {spec}: no embedded {what} `{name}` (reference, mutant:NAME, variant:NAME)")
            })?;
            let name = name.clone();
            Ok(Box::new(move || Ok(embedded(&name).expect("checked"))))
        }
        Spec::Stdio(cmd) => {
            let (argv, opts) = (cmd.argv.clone(), opts.clone());
            Ok(Box::new(move || {
                Process::start(&argv, &opts)
                    .map(|c| Box::new(c) as Box<dyn Adapter>)
                    .map_err(String::from)
            }))
        }
        _ => crate::adapter::shim_connector(spec, opts),
    }
}
