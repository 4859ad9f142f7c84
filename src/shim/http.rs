//! The HTTP server: `POST /rpc`, one JSON-RPC message per body, the response in the response
//! body (`204 No Content` for a notification). One session serves every connection; calls run
//! on tokio's blocking pool, so cases on different runtimes run in parallel.

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
    let reply = tokio::task::spawn_blocking(move || {
        let mut conn = Conn::default();
        service.handle(&body, &mut conn)
    })
    .await;
    match reply {
        Ok(Some(text)) => ([(header::CONTENT_TYPE, "application/json")], text).into_response(),
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}
