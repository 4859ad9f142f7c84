//! `stdio:CMD` for the suites whose shim holds a whole case's state (a core's control shim, a
//! host shim): one JSON-RPC 2.0 message per line, one process per case, so cases stay apart. A
//! shim that hangs past the deadline, closes, or answers garbage is an error naming what it did.

use crate::adapter::{Adapter, CallError};
use crate::shim::RpcError;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Process {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
    deadline: Duration,
}

impl Process {
    pub fn start(argv: &[String], deadline: Duration) -> Result<Process, String> {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", argv[0]))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Process {
            child,
            stdin,
            lines,
            next: 1,
            deadline,
        })
    }
}

impl Adapter for Process {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let id = self.next;
        self.next += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(self.stdin, "{msg}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| {
                CallError::Transport(format!("{method}: the shim closed its stdin: {e}"))
            })?;
        loop {
            let line = self.lines.recv_timeout(self.deadline).map_err(|_| {
                CallError::Transport(format!(
                    "{method}: no answer from the shim within {:?}",
                    self.deadline
                ))
            })?;
            let v: Value = serde_json::from_str(&line).map_err(|e| {
                CallError::Transport(format!(
                    "{method}: the shim answered a line that is not JSON ({e}): {}",
                    crate::adapter::excerpt(line.as_bytes())
                ))
            })?;
            if v["id"] != id {
                continue;
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

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A connector for a suite whose shim holds a case's state: `inproc:NAME` (an embedded target
/// `embedded` makes), `stdio:CMD` (a process per case), or any other spec `--runtime` takes for
/// a shim (http://, ws://), where one shim serves every case.
pub fn connector(
    spec: &str,
    opts: &crate::adapter::Options,
    what: &str,
    embedded: fn(&str) -> Option<Box<dyn Adapter>>,
) -> Result<super::Connector, String> {
    if let Some(name) = spec.strip_prefix("inproc:") {
        embedded(name).ok_or_else(|| {
            format!("--runtime {spec}: no embedded {what} `{name}` (reference, mutant:NAME, variant:NAME)")
        })?;
        let name = name.to_string();
        return Ok(Box::new(move || Ok(embedded(&name).expect("checked"))));
    }
    if let Some(cmd) = spec.strip_prefix("stdio:") {
        let argv = shell_words::split(cmd).map_err(|e| format!("--runtime {spec}: {e}"))?;
        if argv.is_empty() {
            return Err(format!("--runtime {spec}: no command after stdio:"));
        }
        let deadline = opts.timeout;
        return Ok(Box::new(move || {
            Process::start(&argv, deadline).map(|c| Box::new(c) as Box<dyn Adapter>)
        }));
    }
    crate::adapter::connector_with(spec, opts)
}
