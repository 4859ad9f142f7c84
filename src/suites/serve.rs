//! Serving an embedded target whose shim holds a whole case's state (a core's control shim, a
//! host shim) over the three transports, with the same JSON-RPC framing as `hcpspec shim`:
//! stdio (one message per line; hcpspec starts one process per case), WebSocket (one message
//! per text frame; each connection is one case and gets a fresh target), HTTP (`POST /rpc`; one
//! target serves every request in turn, so hcpspec runs such a target one case at a time).

use crate::adapter::{Adapter, CallError};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

/// Makes a fresh target.
pub type Make = Arc<dyn Fn() -> Box<dyn Adapter> + Send + Sync>;

/// One JSON-RPC message in, its answer out.
pub fn answer(target: &mut dyn Adapter, text: &str) -> String {
    let Ok(req) = serde_json::from_str::<Value>(text) else {
        return parse_error("parse error: the request is not JSON".into());
    };
    let method = req["method"].as_str().unwrap_or_default();
    let answer = match target.call(method, req.get("params").cloned().unwrap_or(json!({}))) {
        Ok(r) => json!({ "jsonrpc": "2.0", "id": req["id"], "result": r }),
        Err(CallError::Rpc(e)) => {
            json!({ "jsonrpc": "2.0", "id": req["id"], "error": { "code": e.code, "message": e.message } })
        }
        Err(e) => {
            json!({ "jsonrpc": "2.0", "id": req["id"], "error": { "code": -32603, "message": e.to_string() } })
        }
    };
    answer.to_string()
}

/// Serve one target on stdin/stdout until stdin closes.
pub fn stdio(target: &mut dyn Adapter) -> std::io::Result<()> {
    stdio_on(
        target,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
        crate::shim::MAX_MESSAGE,
    )
}

/// Serve one target on `input`/`output` until `input` ends. A line over `cap` bytes (read in
/// bounded chunks, never held whole) or not UTF-8 gets a parse error answer, and serving goes on.
pub fn stdio_on(
    target: &mut dyn Adapter,
    mut input: impl BufRead,
    mut out: impl Write,
    cap: usize,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    while let Some(fits) = crate::shim::stdio::next_line(&mut input, &mut line, cap)? {
        let reply = if !fits {
            parse_error(format!("parse error: a request over {cap} bytes"))
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => answer(target, text.trim()),
                Err(e) => parse_error(format!(
                    "parse error: the request is not UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                )),
            }
        };
        writeln!(out, "{reply}")?;
        out.flush()?;
    }
    Ok(())
}

fn parse_error(message: String) -> String {
    crate::shim::error_frame(Value::Null, crate::shim::PARSE_ERROR, message)
}

/// Serve `POST /rpc` on `listener` (bound to 127.0.0.1): one target for every request.
pub fn http(listener: std::net::TcpListener, make: Make) -> std::io::Result<()> {
    use axum::extract::State;
    let target = Arc::new(Mutex::new(make()));
    async fn rpc(State(t): State<Arc<Mutex<Box<dyn Adapter>>>>, body: String) -> String {
        tokio::task::spawn_blocking(move || {
            let mut t = t.lock().unwrap_or_else(|p| p.into_inner());
            answer(&mut **t, &body)
        })
        .await
        .unwrap_or_default()
    }
    let app = axum::Router::new()
        .route("/rpc", axum::routing::post(rpc))
        .layer(axum::extract::DefaultBodyLimit::max(
            crate::shim::MAX_MESSAGE,
        ))
        .with_state(target);
    crate::shim::serve_router(listener, app)
}

/// Serve WebSocket connections at any path on `listener`: a fresh target per connection.
pub fn ws(listener: std::net::TcpListener, make: Make) -> std::io::Result<()> {
    use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
    use axum::extract::State;
    async fn connection(mut socket: WebSocket, make: Make) {
        let target = Arc::new(Mutex::new(make()));
        while let Some(Ok(msg)) = socket.recv().await {
            let Message::Text(text) = msg else {
                if matches!(msg, Message::Close(_)) {
                    break;
                }
                continue;
            };
            let t = target.clone();
            let reply = tokio::task::spawn_blocking(move || {
                let mut t = t.lock().unwrap_or_else(|p| p.into_inner());
                answer(&mut **t, text.as_str())
            })
            .await
            .unwrap_or_default();
            if socket.send(Message::Text(reply.into())).await.is_err() {
                break;
            }
        }
    }
    async fn upgrade(State(make): State<Make>, ws: WebSocketUpgrade) -> axum::response::Response {
        ws.max_message_size(crate::shim::MAX_MESSAGE)
            .on_upgrade(move |socket| connection(socket, make))
    }
    crate::shim::serve_router(
        listener,
        axum::Router::new().fallback(upgrade).with_state(make),
    )
}
