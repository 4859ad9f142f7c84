//! `ws://HOST:PORT/PATH`: one JSON-RPC message per text frame. One connection per case (the
//! shim disposes what a closed connection left), a small tokio runtime per adapter.

use super::rpc::{excerpt, secs, size, Link};
use super::sched::{Deadline, Waits, Whose};
use crate::error::BadInput;
use futures_util::{SinkExt, StreamExt};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(crate) struct WsLink {
    rt: tokio::runtime::Runtime,
    url: String,
    socket: Option<Socket>,
    /// Set once the socket was lost: a case never silently reconnects (its runtimes went with
    /// the connection).
    lost: bool,
    port: u16,
    /// The processes serving it (`loopback::listeners`), found at the first call, and the waits
    /// for a CPU as last read (as the HTTP adapter keeps them): what the machine made them or
    /// this thread wait is not charged to a call's deadline.
    whose: std::sync::OnceLock<Whose>,
    waits: Option<(std::time::Instant, std::thread::ThreadId, Waits)>,
}

impl WsLink {
    /// Check the spec; nothing is connected until the first call.
    pub fn new(spec: &str) -> Result<WsLink, BadInput> {
        let uri: http::Uri = spec
            .parse()
            .map_err(|e| format!("--runtime {spec}: not a URL ({e})"))?;
        if uri.scheme_str() != Some("ws") || uri.host().is_none() {
            return Err(BadInput(format!(
                "--runtime {spec}: expected ws://HOST:PORT/PATH (plain ws only)"
            )));
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        Ok(WsLink {
            rt,
            url: spec.to_string(),
            socket: None,
            lost: false,
            port: uri.port_u16().unwrap_or(80),
            whose: std::sync::OnceLock::new(),
            waits: None,
        })
    }
}

impl WsLink {
    /// The processes serving it, found at the first need.
    fn served_by(&self) -> &Whose {
        self.whose.get_or_init(|| Whose {
            pids: super::loopback::listeners(self.port),
            ..Whose::default()
        })
    }
}

fn describe(e: WsError, cap: usize) -> String {
    match e {
        WsError::Capacity(CapacityError::MessageTooLong { size: n, .. }) => format!(
            "the answer is over the size cap of {} ({n} bytes)",
            size(cap)
        ),
        WsError::Capacity(c) => format!("the answer is over the size cap of {} ({c})", size(cap)),
        WsError::ConnectionClosed | WsError::AlreadyClosed => {
            "the shim closed the WebSocket mid-call".into()
        }
        other => format!("the WebSocket broke mid-call ({other})"),
    }
}

impl Link for WsLink {
    fn exchange(&mut self, frame: &str, deadline: Duration, cap: usize) -> Result<Vec<u8>, String> {
        if self.lost {
            return Err("the WebSocket was lost earlier".into());
        }
        let whose = self.served_by().clone();
        // Read on the calling thread, which drives the link's runtime (block_on).
        let (now, me) = (std::time::Instant::now(), std::thread::current().id());
        if self
            .waits
            .as_ref()
            .is_none_or(|(at, on, _)| now - *at > super::stdio::WAITS_EVERY || *on != me)
        {
            self.waits = Some((now, me, Waits::of(&whose)));
        }
        let waits = self.waits.as_ref().map(|w| w.2.clone()).unwrap_or_default();
        let mut until = Deadline::since(deadline, now, waits);
        let (url, slot) = (&self.url, &mut self.socket);
        let work = async {
            if slot.is_none() {
                let config = WebSocketConfig::default()
                    .max_message_size(Some(cap))
                    .max_frame_size(Some(cap));
                let (s, _) =
                    tokio_tungstenite::connect_async_with_config(url.as_str(), Some(config), true)
                        .await
                        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
                *slot = Some(s);
            }
            let socket = slot.as_mut().expect("connected above");
            socket
                .send(Message::Text(frame.into()))
                .await
                .map_err(|e| describe(e, cap))?;
            loop {
                match socket.next().await {
                    None => return Err("the shim closed the WebSocket mid-call".to_string()),
                    Some(Err(e)) => return Err(describe(e, cap)),
                    Some(Ok(Message::Text(t))) => return Ok(t.as_bytes().to_vec()),
                    Some(Ok(Message::Binary(b))) => {
                        return Err(format!(
                            "the answer came in a binary frame (the protocol uses text frames): {}",
                            excerpt(&b)
                        ))
                    }
                    Some(Ok(Message::Close(c))) => {
                        return Err(format!(
                            "the shim closed the WebSocket mid-call ({})",
                            c.map(|c| format!("{} {}", c.code, c.reason))
                                .unwrap_or_else(|| "no close frame".into())
                        ))
                    }
                    Some(Ok(_)) => continue,
                }
            }
        };
        let outcome = self.rt.block_on(async { until.within(&whose, work).await });
        let result = match outcome {
            Ok(r) => r,
            Err(_) => Err(format!(
                "no answer within {} (no complete text frame came back)",
                secs(deadline)
            )),
        };
        if result.is_err() {
            self.lost = true;
            self.socket = None;
        }
        result
    }

    fn whose(&self) -> Whose {
        self.served_by().clone()
    }
}

impl Drop for WsLink {
    fn drop(&mut self) {
        if let Some(mut s) = self.socket.take() {
            let _ = self.rt.block_on(async {
                tokio::time::timeout(Duration::from_millis(200), s.close(None)).await
            });
        }
    }
}
