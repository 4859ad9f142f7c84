//! `http://HOST:PORT[/PREFIX]`: one JSON-RPC message per `POST {base}/rpc` body, the answer in
//! the response body. Plain HTTP/1.1 through hcpspec's client of the calling thread
//! (`client.rs`, reqwest, on that thread's own runtime: no thread hop per call): its pool keeps
//! connections alive across the cases the thread runs, and retries a request on a connection the
//! server closed before it was sent.

use super::client;
use super::rpc::{excerpt, secs, size, Link};
use crate::error::BadInput;
use reqwest::{header, StatusCode};
use std::sync::Arc;
use std::time::Duration;

/// What every adapter of one `http://` runtime spec shares.
pub(crate) struct HttpShared {
    url: reqwest::Url,
    /// `host:port`, as errors name it.
    authority: String,
}

impl HttpShared {
    /// Parse the spec; nothing is connected until the first call.
    pub fn new(spec: &str) -> Result<Arc<HttpShared>, BadInput> {
        let base: http::Uri = spec
            .parse()
            .map_err(|e| format!("--runtime {spec}: not a URL ({e})"))?;
        if base.scheme_str() != Some("http") {
            return Err(format!("--runtime {spec}: only plain http:// is supported").into());
        }
        let host = base
            .host()
            .ok_or_else(|| format!("--runtime {spec}: no host"))?;
        let authority = format!("{host}:{}", base.port_u16().unwrap_or(80));
        let url = format!(
            "http://{authority}{}/rpc",
            base.path().trim_end_matches('/')
        )
        .parse()
        .map_err(|e| format!("--runtime {spec}: {e}"))?;
        Ok(Arc::new(HttpShared { url, authority }))
    }
}

pub(crate) struct HttpLink(pub Arc<HttpShared>);

impl Link for HttpLink {
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String> {
        let shared = &self.0;
        let mut got: Vec<u8> = Vec::new();
        let got_so_far = &mut got;
        let work = move |client: &reqwest::Client| {
            let got = got_so_far;
            let request = client
                .post(shared.url.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .body(frame.to_string());
            async move {
                let mut response = request.send().await.map_err(|e| {
                    let why = client::why(&e);
                    if e.is_connect() {
                        format!("cannot connect to {}: {why}", shared.authority)
                    } else {
                        format!("the connection closed mid-call ({why})")
                    }
                })?;
                let status = response.status();
                // The body in chunks, to the cap: a flood is cut where it passes it.
                while let Some(d) = response.chunk().await.map_err(|e| {
                    format!("the connection closed mid-answer ({})", client::why(&e))
                })? {
                    got.extend_from_slice(&d);
                    if got.len() > cap {
                        return Err(format!(
                            "the answer is over the size cap of {} ({} bytes so far)",
                            size(cap),
                            got.len()
                        ));
                    }
                }
                match status {
                    StatusCode::OK => Ok(()),
                    StatusCode::NO_CONTENT => {
                        Err("HTTP 204: the shim took the request for a notification".to_string())
                    }
                    s => Err(format!("HTTP {s}: {}", excerpt(got))),
                }
            }
        };
        let outcome = client::block_on_here(|c| tokio::time::timeout(deadline, work(c)));
        match outcome {
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
