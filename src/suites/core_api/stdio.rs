//! `stdio:CMD` for a core's control shim: one JSON-RPC 2.0 message per line, one process per
//! case (a core holds listeners and state; a fresh one per case keeps cases apart). A shim that
//! hangs past the deadline, closes, or answers garbage is an error naming what it did.

use crate::adapter::{Adapter, CallError};
use crate::shim::RpcError;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct StdioCore {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
    deadline: Duration,
}

impl StdioCore {
    pub fn start(argv: &[String], deadline: Duration) -> Result<StdioCore, String> {
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
        Ok(StdioCore {
            child,
            stdin,
            lines,
            next: 1,
            deadline,
        })
    }
}

impl Adapter for StdioCore {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let id = self.next;
        self.next += 1;
        let msg = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(self.stdin, "{msg}")
            .and_then(|_| self.stdin.flush())
            .map_err(|e| {
                CallError::Transport(format!("{method}: the control shim closed its stdin: {e}"))
            })?;
        loop {
            let line = self.lines.recv_timeout(self.deadline).map_err(|_| {
                CallError::Transport(format!(
                    "{method}: no answer from the control shim within {:?}",
                    self.deadline
                ))
            })?;
            let v: Value = serde_json::from_str(&line).map_err(|e| {
                CallError::Transport(format!(
                    "{method}: the control shim answered a line that is not JSON ({e}): {}",
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

impl Drop for StdioCore {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serve an embedded core's control protocol on stdin/stdout (`hcpspec shim --runtime core:NAME`).
pub fn serve(core: &mut dyn Adapter) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let line = line?;
        let Ok(req) = serde_json::from_str::<Value>(&line) else {
            writeln!(
                out,
                "{}",
                json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "parse error" } })
            )?;
            out.flush()?;
            continue;
        };
        let method = req["method"].as_str().unwrap_or_default();
        let answer = match core.call(method, req.get("params").cloned().unwrap_or(json!({}))) {
            Ok(r) => json!({ "jsonrpc": "2.0", "id": req["id"], "result": r }),
            Err(CallError::Rpc(e)) => {
                json!({ "jsonrpc": "2.0", "id": req["id"], "error": { "code": e.code, "message": e.message } })
            }
            Err(e) => {
                json!({ "jsonrpc": "2.0", "id": req["id"], "error": { "code": -32603, "message": e.to_string() } })
            }
        };
        writeln!(out, "{answer}")?;
        out.flush()?;
    }
    Ok(())
}
