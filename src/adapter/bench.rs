//! What `hcpspec bench --transports` measures per transport: one call through an adapter
//! against a bare client making the same call over the same kind of pipe or socket, byte for
//! byte. Each client talks to a server of its own (a fresh session each, so the runtime ids
//! match), makes the same setup calls, then the measured call again and again: the same
//! requests (the bare client encodes them with the adapter's own [`rpc::frame`]) and so the
//! same answers. The bare client writes a request and reads its answer to the end, nothing
//! more; the adapter does what it does for every call of a case (the schema checks of params,
//! frame and result, the id, the deadline and the size cap, the trace). Against an echo server
//! (`hcpspec shim --echo`) the same bare client measures the floor of the transport itself.

use super::{rpc, Adapter};
use crate::error::BadInput;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// One round trip, repeatable.
pub type Call = Box<dyn FnMut() -> Result<(), String>>;

/// The measured call: the packs of a runtime that has none. Every client sends it for real
/// (`initialize` is not: over stdio it is sent once per process, and the adapter answers it
/// again from memory), and its answer is small, as most of a case's are.
pub const METHOD: &str = "runtime.listPacks";

/// The calls each client makes first, in order, unmeasured: the handshake and one runtime.
fn setup() -> [(&'static str, Value); 2] {
    let create = json!({
        "packDirs": [],
        "principal": { "id": "bench", "kind": "user" },
        "workdir": std::env::temp_dir(),
    });
    [
        ("initialize", crate::shim::greeting()),
        ("runtime.create", create),
    ]
}

/// The call of adapter `a` (a fresh one, as a case gets), after the setup calls.
pub fn adapter(mut a: Box<dyn Adapter>) -> Result<Call, BadInput> {
    let mut runtime_id = Value::Null;
    for (method, params) in setup() {
        let result = a
            .call(method, params)
            .map_err(|e| format!("bench setup: {e}"))?;
        if method == "runtime.create" {
            runtime_id = result["runtime_id"].clone();
        }
    }
    let params = json!({ "runtime_id": runtime_id });
    Ok(Box::new(move || {
        a.call(METHOD, params.clone())
            .map(drop)
            .map_err(|e| e.to_string())
    }))
}

/// A bare client's wire: a request out, the bytes of the next answer back, nothing checked.
trait Wire {
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String>;
}

/// A bare client on `wire`: the setup calls (an echo answers no runtime id: its frames then
/// name none), then the measured call.
fn bare(mut wire: impl Wire + 'static) -> Result<Call, BadInput> {
    let (mut id, mut answer) = (0, Vec::new());
    let mut runtime_id = Value::Null;
    for (method, params) in setup() {
        id += 1;
        wire.round_trip(&rpc::frame(id, method, params), &mut answer)
            .map_err(|e| format!("bench setup: {method}: {e}"))?;
        if method == "runtime.create" {
            let v: Value = serde_json::from_slice(&answer).unwrap_or_default();
            runtime_id = v["result"]["runtime_id"].clone();
        }
    }
    let params = json!({ "runtime_id": runtime_id });
    Ok(Box::new(move || {
        id += 1;
        wire.round_trip(&rpc::frame(id, METHOD, params.clone()), &mut answer)?;
        match answer.is_empty() {
            true => Err("an empty answer".into()),
            false => Ok(()),
        }
    }))
}

/// A child process, killed when dropped.
struct Stdio1 {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl Drop for Stdio1 {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Wire for Stdio1 {
    /// Write the line, read one line back, on this thread.
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String> {
        self.line.clear();
        self.line.extend_from_slice(frame.as_bytes());
        self.line.push(b'\n');
        self.stdin
            .write_all(&self.line)
            .and_then(|_| self.stdin.flush())
            .map_err(|e| e.to_string())?;
        answer.clear();
        self.stdout
            .read_until(b'\n', answer)
            .map_err(|e| e.to_string())?;
        answer.pop();
        Ok(())
    }
}

/// A bare stdio client of the shim `argv` starts.
pub fn bare_stdio(argv: &[String]) -> Result<Call, BadInput> {
    let (program, args) = argv.split_first().ok_or("stdio: empty command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let stdin = child.stdin.take().expect("piped");
    let stdout = BufReader::new(child.stdout.take().expect("piped"));
    bare(Stdio1 {
        child,
        stdin,
        stdout,
        line: Vec::new(),
    })
}

/// One keep-alive HTTP/1.1 connection, written and read by hand.
struct Http1 {
    authority: String,
    w: TcpStream,
    r: BufReader<TcpStream>,
    line: String,
}

impl Wire for Http1 {
    /// The request's bytes out, headers and a Content-Length body back.
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String> {
        let request = format!(
            "POST /rpc HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{frame}",
            self.authority,
            frame.len()
        );
        self.w
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut length = 0;
        loop {
            self.line.clear();
            self.r
                .read_line(&mut self.line)
                .map_err(|e| e.to_string())?;
            if self.line == "\r\n" || self.line.is_empty() {
                break;
            }
            if let Some((k, v)) = self.line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().map_err(|_| "bad content-length")?;
                }
            }
        }
        answer.resize(length, 0);
        self.r.read_exact(answer).map_err(|e| e.to_string())
    }
}

/// A bare HTTP/1.1 client of the shim at `url` (`http://HOST:PORT`).
pub fn bare_http(url: &str) -> Result<Call, BadInput> {
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let stream = TcpStream::connect(&authority).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let w = stream.try_clone().map_err(|e| e.to_string())?;
    bare(Http1 {
        authority,
        w,
        r: BufReader::new(stream),
        line: String::new(),
    })
}

type Ws1 = tokio_tungstenite::tungstenite::WebSocket<TcpStream>;

impl Wire for Ws1 {
    /// One text frame out, one back (blocking tungstenite).
    fn round_trip(&mut self, frame: &str, answer: &mut Vec<u8>) -> Result<(), String> {
        use tokio_tungstenite::tungstenite::Message;
        self.send(Message::text(frame)).map_err(|e| e.to_string())?;
        match self.read().map_err(|e| e.to_string())? {
            Message::Text(t) => {
                answer.clear();
                answer.extend_from_slice(t.as_bytes());
                Ok(())
            }
            other => Err(format!("not a text frame: {other:?}")),
        }
    }
}

/// A bare WebSocket client of the shim at `url` (`ws://HOST:PORT/PATH`).
pub fn bare_ws(url: &str) -> Result<Call, BadInput> {
    let authority = url
        .trim_start_matches("ws://")
        .split('/')
        .next()
        .unwrap_or_default();
    let stream = TcpStream::connect(authority).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (socket, _) = tokio_tungstenite::tungstenite::client(url, stream)
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    bare(socket)
}
