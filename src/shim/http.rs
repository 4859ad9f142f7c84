//! The HTTP server: `POST /rpc`, one JSON-RPC message per body, the response in the response
//! body (`204 No Content` for a notification). One session serves every connection; a call
//! runs on the thread that read it, outside the event loop (`block_in_place`: the loop moves to
//! another thread meanwhile), so cases on different runtimes run in parallel, with no hop to
//! another thread and back per call (two wake-ups, each a wait for a CPU on a loaded machine).

use super::{Conn, Service, MAX_MESSAGE};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;

/// Serve on `listener` (already bound, normally to 127.0.0.1) until the process ends.
pub fn serve(listener: std::net::TcpListener, service: Service) -> std::io::Result<()> {
    let app = Router::new()
        .route("/rpc", post(rpc))
        .layer(DefaultBodyLimit::max(MAX_MESSAGE))
        .with_state(service);
    super::serve_router(listener, app)
}

async fn rpc(State(service): State<Service>, body: String) -> Response {
    if let Service::Echo = service {
        // The floor: no hop to the blocking pool, nothing parsed.
        return ([(header::CONTENT_TYPE, "application/json")], body).into_response();
    }
    // `handle` never panics (a runtime that panics answers -32603).
    let reply = tokio::task::block_in_place(|| service.handle(&body, &mut Conn::default()));
    match reply {
        Some(text) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    }
}
