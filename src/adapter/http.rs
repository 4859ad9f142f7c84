//! `http://HOST:PORT[/PREFIX]`: one JSON-RPC message per `POST {base}/rpc` body, the answer in
//! the response body. Plain HTTP/1.1, one keep-alive connection per case, a small tokio
//! runtime of its own per adapter so that the `Adapter` stays synchronous.

use super::rpc::{excerpt, secs, size, Link};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper::{header, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use std::time::Duration;

pub(crate) struct HttpLink {
    rt: tokio::runtime::Runtime,
    /// `host:port`, for the TCP connection and the Host header.
    authority: String,
    path: String,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl HttpLink {
    /// Parse the spec; nothing is connected until the first call.
    pub fn new(spec: &str) -> Result<HttpLink, String> {
        let uri: Uri = spec
            .parse()
            .map_err(|e| format!("--runtime {spec}: not a URL ({e})"))?;
        if uri.scheme_str() != Some("http") {
            return Err(format!("--runtime {spec}: only plain http:// is supported"));
        }
        let host = uri
            .host()
            .ok_or_else(|| format!("--runtime {spec}: no host"))?;
        let authority = format!("{host}:{}", uri.port_u16().unwrap_or(80));
        let path = format!("{}/rpc", uri.path().trim_end_matches('/'));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        Ok(HttpLink {
            rt,
            authority,
            path,
            sender: None,
        })
    }
}

async fn connect(authority: &str) -> Result<SendRequest<Full<Bytes>>, String> {
    let tcp = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .map_err(|e| format!("HTTP handshake with {authority} failed: {e}"))?;
    tokio::spawn(conn);
    Ok(sender)
}

impl Link for HttpLink {
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String> {
        let mut got: Vec<u8> = Vec::new();
        let (authority, path, sender) = (&self.authority, &self.path, &mut self.sender);
        let body = Bytes::from(frame.to_string());
        let work = async {
            let request = || {
                Request::post(path.as_str())
                    .header(header::HOST, authority.as_str())
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Full::new(body.clone()))
                    .expect("a well-formed request")
            };
            // Reuse the connection when it is still open; a request that never left (the
            // server closed an idle connection) is sent again on a new one.
            let mut fresh = false;
            let response = loop {
                if sender.as_ref().is_none_or(|s| s.is_closed()) {
                    *sender = Some(connect(authority).await?);
                    fresh = true;
                }
                let s = sender.as_mut().expect("connected above");
                if s.ready().await.is_err() {
                    *sender = None;
                    if fresh {
                        return Err(format!(
                            "the connection to {authority} closed before the request was sent"
                        ));
                    }
                    continue;
                }
                match s.try_send_request(request()).await {
                    Ok(r) => break r,
                    Err(mut e) => {
                        *sender = None;
                        if e.take_message().is_some() && !fresh {
                            continue;
                        }
                        return Err(format!("the connection closed mid-call ({})", e.error()));
                    }
                }
            };
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
        let outcome = self
            .rt
            .block_on(async { tokio::time::timeout(deadline, work).await });
        match outcome {
            Ok(Ok(())) => Ok(got),
            Ok(Err(e)) => {
                self.sender = None;
                Err(e)
            }
            Err(_) => {
                self.sender = None;
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
