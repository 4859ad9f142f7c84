//! `http://HOST:PORT[/PREFIX]`: one JSON-RPC message per `POST {base}/rpc` body, the answer in
//! the response body. Plain HTTP/1.1 through hyper-util's pooled client: one client and one
//! small runtime per runtime spec, shared by every case's adapter, so connections are kept
//! alive across cases and a request on a connection the server closed is retried by the pool.

use super::rpc::{excerpt, secs, size, Link};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{header, Request, StatusCode, Uri};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use std::sync::Arc;
use std::time::Duration;

/// What every adapter of one `http://` runtime spec shares.
pub(crate) struct HttpShared {
    rt: tokio::runtime::Runtime,
    client: Client<HttpConnector, Full<Bytes>>,
    uri: Uri,
}

impl HttpShared {
    /// Parse the spec and make the client; nothing is connected until the first call.
    pub fn new(spec: &str) -> Result<Arc<HttpShared>, String> {
        let base: Uri = spec
            .parse()
            .map_err(|e| format!("--runtime {spec}: not a URL ({e})"))?;
        if base.scheme_str() != Some("http") {
            return Err(format!("--runtime {spec}: only plain http:// is supported"));
        }
        let host = base
            .host()
            .ok_or_else(|| format!("--runtime {spec}: no host"))?;
        let uri: Uri = format!(
            "http://{host}:{}{}/rpc",
            base.port_u16().unwrap_or(80),
            base.path().trim_end_matches('/')
        )
        .parse()
        .map_err(|e| format!("--runtime {spec}: {e}"))?;
        // One worker: cases call in from several threads, each blocking on its own request.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let client = {
            let _guard = rt.enter();
            Client::builder(TokioExecutor::new()).build(connector)
        };
        Ok(Arc::new(HttpShared { rt, client, uri }))
    }
}

pub(crate) struct HttpLink(pub Arc<HttpShared>);

impl Link for HttpLink {
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String> {
        let shared = &self.0;
        let mut got: Vec<u8> = Vec::new();
        let request = Request::post(shared.uri.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(frame.to_string())))
            .map_err(|e| e.to_string())?;
        let work = async {
            let response = shared.client.request(request).await.map_err(|e| {
                // The innermost cause says what happened (refused, reset, closed early).
                let mut why = e.to_string();
                let mut cause = std::error::Error::source(&e);
                while let Some(c) = cause {
                    why = c.to_string();
                    cause = c.source();
                }
                let at = shared.uri.authority().map_or("", |a| a.as_str());
                if e.is_connect() {
                    format!("cannot connect to {at}: {why}")
                } else {
                    format!("the connection closed mid-call ({why})")
                }
            })?;
            let status = response.status();
            let mut body = response.into_body();
            while let Some(f) = body.frame().await {
                let f = f.map_err(|e| format!("the connection closed mid-answer ({e})"))?;
                if let Some(d) = f.data_ref() {
                    got.extend_from_slice(d);
                    if got.len() > cap {
                        return Err(format!(
                            "the answer is over the size cap of {} ({} bytes so far)",
                            size(cap),
                            got.len()
                        ));
                    }
                }
            }
            match status {
                StatusCode::OK => Ok(()),
                StatusCode::NO_CONTENT => {
                    Err("HTTP 204: the shim took the request for a notification".to_string())
                }
                s => Err(format!("HTTP {s}: {}", excerpt(&got))),
            }
        };
        match shared
            .rt
            .block_on(async { tokio::time::timeout(deadline, work).await })
        {
            Ok(Ok(())) => Ok(got),
            Ok(Err(e)) => Err(e),
            Err(_) => {
                let so_far = if got.is_empty() {
                    "nothing".to_string()
                } else {
                    format!("{} bytes: {}", got.len(), excerpt(&got))
                };
                Err(format!(
                    "no answer within {} (received {so_far})",
                    secs(deadline)
                ))
            }
        }
    }
}
