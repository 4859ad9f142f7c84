//! The WebSocket server: one JSON-RPC message per text frame, at any path (hcpspec prints
//! `/ws`). One session serves every connection; a connection that closes disposes the
//! runtimes it created and did not dispose.

use super::{error_frame, Conn, Service, INVALID_REQUEST, MAX_MESSAGE};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use axum::Router;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// Serve on `listener` (already bound, normally to 127.0.0.1) until the process ends.
pub fn serve(listener: std::net::TcpListener, service: Service) -> std::io::Result<()> {
    super::serve_router(
        listener,
        Router::new().fallback(upgrade).with_state(service),
    )
}

async fn upgrade(State(service): State<Service>, ws: WebSocketUpgrade) -> Response {
    ws.max_message_size(MAX_MESSAGE)
        .max_frame_size(MAX_MESSAGE)
        .on_upgrade(move |socket| connection(socket, service))
}

async fn connection(mut socket: WebSocket, service: Service) {
    let conn = Arc::new(Mutex::new(Conn::default()));
    let shut = |c: &Mutex<Conn>| -> bool { c.lock().map(|c| c.shutdown).unwrap_or(true) };
    while let Some(Ok(msg)) = socket.recv().await {
        let reply = match msg {
            Message::Text(text) if matches!(service, Service::Echo) => Some(text.to_string()),
            Message::Text(text) => {
                // On this thread, outside the event loop (as the HTTP server's calls); `handle`
                // never panics.
                tokio::task::block_in_place(|| {
                    let mut c = conn.lock().unwrap_or_else(|p| p.into_inner());
                    service.handle(text.as_str(), &mut c)
                })
            }
            Message::Binary(_) => Some(error_frame(
                Value::Null,
                INVALID_REQUEST,
                "the protocol uses text frames",
            )),
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) => None,
        };
        if let Some(reply) = reply {
            if socket.send(Message::Text(reply.into())).await.is_err() {
                break;
            }
        }
        if shut(&conn) {
            let _ = socket.send(Message::Close(None)).await;
            break;
        }
    }
    let _ = tokio::task::spawn_blocking(move || {
        let conn = std::mem::take(&mut *conn.lock().unwrap_or_else(|p| p.into_inner()));
        service.close(conn)
    })
    .await;
}
