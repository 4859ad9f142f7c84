//! The fake tools hcpspec runs for a core's Tool Gate (docs/core-protocol.md § Fake tools): one
//! MCP server (JSON-RPC over HTTP POST) and HTTP tools, on loopback, recording every call they
//! receive. What a tool answers depends on its name: `echo` answers the credential it was sent,
//! `big` answers `arguments.n` bytes, `fail` fails, `slow` answers after `arguments.ms`
//! milliseconds, `counter` answers how many calls of it the fakes have had, `echofail` fails with
//! the credential it was sent in its error, `slowcount` answers as `counter` does after
//! `arguments.ms`, any other answers `ok`.
//! Under `url` (`${fakes.url}`) is no tool a case declares: an address a case names where a
//! server's or a tool's name belongs, which records `{via: "url", path, method}` for any call and
//! answers as an MCP server (or `{text: "ok"}`), so a gate that follows it is seen and not failed.

use crate::adapter::sched::{self, Whose};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the fakes received, and the tools whose held calls the case released.
#[derive(Default)]
pub struct Record {
    calls: Mutex<Vec<Value>>,
    released: Mutex<Vec<String>>,
    /// Told of every call received and every release.
    changed: tokio::sync::Notify,
}

pub type Calls = Arc<Record>;

impl Record {
    fn push(&self, call: Value) {
        self.calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(call);
        self.changed.notify_waiters();
    }

    /// What the fakes received so far.
    pub fn calls(&self) -> Vec<Value> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn received(&self, name: &str) -> bool {
        counted(self, name) > 0
    }

    fn released(&self, name: &str) -> bool {
        let released = self.released.lock().unwrap_or_else(|e| e.into_inner());
        released.iter().any(|r| r == name)
    }

    /// Wait until `done` holds (it is read again at every call received and every release).
    async fn until(&self, done: impl Fn(&Record) -> bool) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if done(self) {
                return;
            }
            changed.await;
        }
    }

    /// A `slow` or `slowcount` call's wait: `arguments.ms` (at most 10 s), or, `held`, until
    /// the case releases the tool, `arguments.ms` at most.
    async fn hold(&self, name: &str, args: &Value) {
        let ms = args["ms"].as_u64().unwrap_or(0).min(10_000);
        let sleep = tokio::time::sleep(std::time::Duration::from_millis(ms));
        if args["held"] != true {
            return sleep.await;
        }
        tokio::select! {
            _ = sleep => {}
            _ = self.until(|r| r.released(name)) => {}
        }
    }
}

/// `{"fakes": {}}`: `{calls}`, what the fakes received; `{"fakes": {"await": NAME}}`: wait (at
/// most `wait`, in charged time) until they received a call of the tool NAME: `{received: NAME}`,
/// else `{unreceived: NAME}`; `{"fakes": {"release": NAME}}`: the held calls of NAME answer, and
/// later ones are not held: `{released: NAME}`. The step's (action, observation).
pub async fn play(fakes: &Calls, step: &Value, wait: Duration, whose: &Whose) -> (String, Value) {
    ("fakes".into(), seen(fakes, step, wait, whose).await)
}

async fn seen(fakes: &Calls, step: &Value, wait: Duration, whose: &Whose) -> Value {
    if let Some(name) = step["await"].as_str() {
        let received = fakes.until(|r| r.received(name));
        return match sched::Deadline::start(wait, whose)
            .within(whose, received)
            .await
        {
            Ok(()) => json!({ "received": name }),
            Err(_) => json!({ "unreceived": name }),
        };
    }
    if let Some(name) = step["release"].as_str() {
        let mut released = fakes.released.lock().unwrap_or_else(|e| e.into_inner());
        released.push(name.to_string());
        drop(released);
        fakes.changed.notify_waiters();
        return json!({ "released": name });
    }
    json!({ "calls": fakes.calls() })
}

/// The largest answer the `big` tool gives: 8 MiB (the script schema's bound on `n`).
pub const BIG_MAX: u64 = 8 << 20;

/// The base URLs: `{mcp: "http://127.0.0.1:P/mcp", http: "http://127.0.0.1:P/tools/"}`.
pub async fn start(calls: Calls) -> std::io::Result<Value> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(mcp))
        .route("/tools/{name}", axum::routing::post(http))
        .route("/url/{*rest}", axum::routing::any(url))
        .with_state(calls);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(json!({
        "mcp": format!("http://{addr}/mcp"), "http": format!("http://{addr}/tools/"),
        "url": format!("http://{addr}/url/"),
    }))
}

/// An address named where a declared name belongs: recorded, and answered as an MCP server
/// would (or `{text: "ok"}` to a call that is not JSON-RPC), so following it succeeds.
async fn url(
    State(calls): State<Calls>,
    Path(rest): Path<String>,
    body: axum::body::Bytes,
) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = req["method"].as_str().unwrap_or_default();
    calls.push(json!({
        "via": "url", "path": rest, "method": method, "name": req["params"]["name"],
    }));
    let result = match method {
        "" => return reply(StatusCode::OK, json!({ "text": "ok" })),
        "initialize" => {
            json!({ "protocolVersion": "2025-06-18", "capabilities": { "tools": {} }, "serverInfo": { "name": "hcpspec-url", "version": "1" } })
        }
        "tools/list" => {
            json!({ "tools": [{ "name": "search", "inputSchema": { "type": "object" } }] })
        }
        _ => json!({ "content": [{ "type": "text", "text": "ok" }] }),
    };
    reply(
        StatusCode::OK,
        json!({ "jsonrpc": "2.0", "id": req["id"], "result": result }),
    )
}

fn header(h: &HeaderMap, name: &str) -> Value {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map_or(Value::Null, |s| json!(s))
}

/// The `image` tool's picture: a 1×1 PNG, base64.
pub const IMAGE_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// How many calls of a tool (`counter`, `slowcount`) the fakes have had, this one included.
fn counted(record: &Record, name: &str) -> usize {
    let calls = record.calls.lock().unwrap_or_else(|e| e.into_inner());
    calls
        .iter()
        .filter(|c| c["name"] == name && c["method"] != "tools/list")
        .count()
}

/// The `media` tool's parts: an empty WAV file and ten bytes 0 to 9, base64.
pub const AUDIO_WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";
pub const BLOB: &str = "AAECAwQFBgcICQ==";

/// What a tool named `name` answers, given the credential it was sent (and, for `counter`, how
/// many calls of it there have been).
fn body_of(name: &str, args: &Value, credential: &Value, n: usize) -> Result<Value, String> {
    match name {
        // Each call answers otherwise: a re-send answered with the same bytes was not re-run.
        "counter" => Ok(json!({ "text": format!("counter call {n}") })),
        "slowcount" => Ok(json!({ "text": format!("slowcount call {n}") })),
        "echo" => Ok(
            json!({ "text": format!("you sent me {}", credential.as_str().unwrap_or("nothing")) }),
        ),
        // At most BIG_MAX bytes, whatever a case built in memory asks (a file is held at load).
        "big" => {
            Ok(json!({ "text": "B".repeat(args["n"].as_u64().unwrap_or(0).min(BIG_MAX) as usize) }))
        }
        "fail" => Err("the tool failed on purpose".into()),
        // A failure that echoes the credential: a gate that redacts only successes shows.
        "echofail" => Err(format!(
            "the tool refused what you sent: {}",
            credential.as_str().unwrap_or("nothing")
        )),
        "slow" => Ok(json!({ "text": "slow-tool-answer-9b2e" })),
        _ => Ok(json!({ "text": "ok" })),
    }
}

/// A JSON answer (axum is built without its `json` feature).
fn reply(status: StatusCode, body: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn mcp(State(calls): State<Calls>, h: HeaderMap, body: axum::body::Bytes) -> Response {
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let p = &req["params"];
    let method = req["method"].as_str().unwrap_or_default();
    calls.push(json!({
        "via": "mcp", "method": method, "name": p["name"], "arguments": p["arguments"],
        "meta": p["_meta"], "authorization": header(&h, "authorization"), "traceparent": header(&h, "traceparent"),
    }));
    let result = match method {
        "initialize" => {
            json!({ "protocolVersion": "2025-06-18", "capabilities": { "tools": {} }, "serverInfo": { "name": "hcpspec-fake", "version": "1" } })
        }
        "tools/list" => {
            let tools: Vec<Value> = [
                "echo",
                "big",
                "fail",
                "slow",
                "search",
                "image",
                "counter",
                "media",
                "echofail",
                "slowcount",
            ]
            .iter()
            .map(|n| json!({ "name": n, "inputSchema": { "type": "object" } }))
            .collect();
            json!({ "tools": tools })
        }
        "tools/call" => {
            let name = p["name"].as_str().unwrap_or_default();
            // Counted as it arrives: a second call while the first sleeps answers otherwise.
            let n = counted(&calls, name);
            if name == "slow" || name == "slowcount" {
                calls.hold(name, &p["arguments"]).await;
            }
            match body_of(name, &p["arguments"], &header(&h, "authorization"), n) {
                // An image part: its bytes as base64, as MCP sends them.
                Ok(_) if name == "image" => json!({ "content": [
                    { "type": "text", "text": "a picture" },
                    { "type": "image", "data": IMAGE_PNG, "mimeType": "image/png" }
                ] }),
                // An audio part and a blob resource part, as MCP sends them.
                Ok(_) if name == "media" => json!({ "content": [
                    { "type": "text", "text": "a sound and a file" },
                    { "type": "audio", "data": AUDIO_WAV, "mimeType": "audio/wav" },
                    { "type": "resource", "resource": { "uri": "file:///data.bin", "mimeType": "application/octet-stream", "blob": BLOB } }
                ] }),
                Ok(b) => json!({ "content": [{ "type": "text", "text": b["text"] }] }),
                Err(e) => json!({ "isError": true, "content": [{ "type": "text", "text": e }] }),
            }
        }
        _ => {
            return reply(
                StatusCode::OK,
                json!({ "jsonrpc": "2.0", "id": req["id"], "error": { "code": -32601, "message": "method not found" } }),
            )
        }
    };
    reply(
        StatusCode::OK,
        json!({ "jsonrpc": "2.0", "id": req["id"], "result": result }),
    )
}

async fn http(
    State(calls): State<Calls>,
    Path(name): Path<String>,
    h: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let args: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    calls.push(json!({
        "via": "http", "name": name, "arguments": args,
        "idempotencyKey": header(&h, "idempotency-key"), "authorization": header(&h, "authorization"), "traceparent": header(&h, "traceparent"),
    }));
    let n = counted(&calls, &name);
    if name == "slow" || name == "slowcount" {
        calls.hold(&name, &args).await;
    }
    match body_of(&name, &args, &header(&h, "authorization"), n) {
        Ok(b) => reply(StatusCode::OK, b),
        Err(e) => reply(StatusCode::INTERNAL_SERVER_ERROR, json!({ "error": e })),
    }
}
