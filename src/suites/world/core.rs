//! hcpspec's core listener (section 1): the WebSocket upgrade checks, one JSON text message per
//! frame, pings and the silence drop. Requests go to the `World`; every frame is logged.

use super::budget::{Hold, Metered};
use super::model::{lock, Conn, Reply, Shared, World};
use crate::knob::Class;
use crate::suites::core_api::knobs::{Mutant, Variant};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::StatusCode;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

pub const PATH: &str = "/nylorun/harness/v1";
/// HARNESS_MAX_PAYLOAD.
pub const MAX_PAYLOAD: usize = 64 << 20;
/// A harness that sends more frames than this in one scenario floods: it is dropped.
pub const FLOOD: usize = 20_000;
/// ... or more bytes than this, in all its messages and connections of one scenario: a cap hit.
pub const FLOOD_BYTES: u64 = 256 << 20;
/// What core queues to a connection that does not read (the model keeps the count).
pub use super::model::QUEUE_BYTES;

pub async fn serve(listener: TcpListener, w: Shared) {
    let mut n = 0;
    while let Ok((stream, _)) = listener.accept().await {
        n += 1;
        let w = w.clone();
        tokio::spawn(async move { connection(stream, n, w).await });
    }
}

/// One harness connection, the `n`th: its upgrade, its frames, and its end.
pub async fn connection(stream: TcpStream, n: usize, w: Shared) {
    // Read within the process's budget of bytes (`budget`).
    let hold = lock(&w).hold.clone();
    let stream = Metered::new(stream, hold.clone());
    let read = stream.read.clone();
    let Some((ws, credential, pod)) = upgrade(stream, n, &w).await else {
        return;
    };
    let (sink, mut source) = ws.split();
    let (tx, rx) = mpsc::unbounded_channel::<Message>();
    let queued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (ping_ms, drop_ms) = {
        let mut g = lock(&w);
        let heard = g.now();
        g.conns.insert(
            n,
            Conn {
                tx: tx.clone(),
                queued: queued.clone(),
                hello: false,
                heard,
                closed: false,
                harness: credential.clone(),
                workspace: false,
                pod,
            },
        );
        // The operator's Host tuning (core.start's timers) sets both; the mutant keeps its own.
        match g.breaks(Mutant::TimersIgnored) {
            true => (30_000, 60_000),
            false if g.breaks(Mutant::PingsAtTheDropPeriod) => {
                (g.sc.timers.drop_ms, g.sc.timers.drop_ms)
            }
            false => (g.sc.timers.ping_ms, g.sc.timers.drop_ms),
        }
    };
    let knobs = lock(&w).knobs();
    let writer = write(sink, rx, queued.clone(), knobs, hold.clone());
    let pinger = ping(w.clone(), n, ping_ms, drop_ms);
    let mut frames = 0usize;
    while let Some(m) = source.next().await {
        frames += 1;
        // What was read for this message is held as the message the log keeps, if it does.
        let text = match &m {
            Ok(Message::Text(t)) => t.len() as u64,
            _ => 0,
        };
        // Core's answer may echo what it read (an unknown method's name): held twice, logged
        // and queued, it is reserved before the message is handled (`Hold::reserve`).
        let answer = match &m {
            Ok(m @ (Message::Text(_) | Message::Binary(_))) => 2 * m.len() as u64,
            _ => 0,
        };
        if answer > 0 {
            hold.reserve(answer).await;
        }
        let goes_on = heard(&mut lock(&w), n, frames, m, &tx);
        hold.give(answer + read.swap(0, std::sync::atomic::Ordering::Relaxed));
        // Past its queue's cap core dropped the connection (`World::send`): it reads no more
        // of it. It went on reading, logging each request and its answer: a harness asking
        // for 8 MiB answers it never reads made its scenario hold 630 MiB, not 250.
        let dropped = super::model::past_queue(queued.load(std::sync::atomic::Ordering::Relaxed));
        if !goes_on || dropped {
            break;
        }
        hold.take(text);
    }
    pinger.abort();
    // A core that ends a closed connection's runs only when its silence drop comes (§ 1 ends
    // them on silence; the freedom variant's time): the connection takes no more runs now.
    let late = {
        let mut g = lock(&w);
        g.record(json!({ "via": "core", "event": "closed", "conn": n }));
        let knobs = g.knobs();
        match crate::suites::core_api::freedom::coin(&knobs, Class::Time, "lost-at-drop") {
            true => {
                g.closed(n);
                drop_ms
            }
            false => {
                g.lost(n);
                0
            }
        }
    };
    if late > 0 {
        tokio::time::sleep(Duration::from_millis(late)).await;
        lock(&w).lost(n);
    }
    drop(tx);
    let _ = writer.await;
}

/// The upgrade, checked (§ 1) and logged: the socket, the harness id its token is bound to,
/// and the pod whose host it is.
async fn upgrade(
    stream: Metered<TcpStream>,
    n: usize,
    w: &Shared,
) -> Option<(
    WebSocketStream<Metered<TcpStream>>,
    Option<String>,
    Option<usize>,
)> {
    // Every harness token core knows, and the harness id each is bound to; the host tokens of
    // pods' hosts, and the pod each is for (§ 9).
    let (tokens, hosts, closed, knobs) = {
        let g = lock(w);
        (g.credentials(), g.hosts(), g.tenant_closed, g.knobs())
    };
    let mut credential: Option<String> = None;
    let mut pod: Option<usize> = None;
    // The bearer as sent: a pod's host's is logged by what it is (§ 9, never the token).
    let mut sent: Option<String> = None;
    let breaks = |m: Mutant| knobs.breaks(m);
    let mut upgrade = json!({ "via": "upgrade", "conn": n });
    // tungstenite's handshake callback: its error is the refusal's whole response.
    #[allow(clippy::result_large_err)]
    let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let auth = req
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok());
        let api = req
            .headers()
            .get("nylorun-harness-api")
            .and_then(|v| v.to_str().ok());
        upgrade["path"] = json!(req.uri().path());
        let bearer = auth.and_then(|a| match breaks(Mutant::BearerSchemeRefused) {
            true => Some(a),
            false => a.strip_prefix("Bearer "),
        });
        let host = bearer
            .and_then(|t| hosts.get(t))
            .filter(|_| !breaks(Mutant::HostTokenRefused));
        pod = host.map(|(p, _)| *p);
        sent = bearer.map(str::to_string);
        let bound = bearer.and_then(|t| tokens.get(t)).or(host.map(|(_, h)| h));
        credential = bound.cloned();
        upgrade["auth"] = json!(match (auth, bound) {
            (None, _) => "missing",
            (Some(_), Some(_)) => "ok",
            (Some(_), None) => "unknown",
        });
        upgrade["apiHeader"] = json!(api);
        let refuse = |status: StatusCode| {
            let mut r = ErrorResponse::new(Some(status.canonical_reason().unwrap_or("").into()));
            *r.status_mut() = status;
            r
        };
        if breaks(Mutant::EveryUpgradeRefused) {
            return Err(refuse(StatusCode::FORBIDDEN));
        }
        let path = match breaks(Mutant::ListenerOnV2Path) {
            true => "/nylorun/harness/v2",
            false => PATH,
        };
        if req.uri().path() != path && !breaks(Mutant::AnyPathAccepted) {
            return Err(refuse(StatusCode::NOT_FOUND));
        }
        if upgrade["auth"] != "ok" && !breaks(Mutant::AnyTokenAccepted) {
            return Err(refuse(StatusCode::UNAUTHORIZED));
        }
        let version = if breaks(Mutant::HeaderVersion2) {
            "2"
        } else {
            "1"
        };
        let present = breaks(Mutant::AnyApiHeaderAccepted) && api.is_some();
        if api != Some(version) && !present && !breaks(Mutant::No426) {
            return Err(refuse(StatusCode::UPGRADE_REQUIRED));
        }
        if closed && !breaks(Mutant::ClosedTenantAccepted) {
            return Err(refuse(StatusCode::SERVICE_UNAVAILABLE));
        }
        Ok(resp)
    };
    // One message of up to HARNESS_MAX_PAYLOAD (a mutant's: 16 MiB).
    let max = if breaks(Mutant::SmallFrameLimit) {
        16 << 20
    } else if breaks(Mutant::FrameLimitUnchecked) {
        2 * MAX_PAYLOAD
    } else {
        MAX_PAYLOAD
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max));
    let ws = tokio_tungstenite::accept_hdr_async_with_config(stream, check, Some(config)).await;
    let ok = ws.is_ok();
    upgrade["status"] = json!(if ok { 101 } else { upgrade_status(&upgrade) });
    let mut g = lock(w);
    if !g.scenario().pods.is_empty() {
        upgrade["bearer"] = g.bearer_kind(sent.as_deref());
    }
    g.record(upgrade);
    drop(g);
    Some((ws.ok()?, credential, pod))
}

/// The connection's writer: it sends what core queued, and counts it off the queue.
fn write(
    mut sink: SplitSink<WebSocketStream<Metered<TcpStream>>, Message>,
    mut rx: mpsc::UnboundedReceiver<Message>,
    queued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    knobs: crate::knob::Knobs<Mutant, Variant>,
    hold: std::sync::Arc<Hold>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut sent = 0u64;
        while let Some(m) = rx.recv().await {
            // Core takes its time to answer (the freedom variant), within what a case waits.
            sent += 1;
            let late =
                crate::suites::core_api::freedom::delay_ms(&knobs, &format!("frame:{sent}"), 60);
            if late > 0 && matches!(&m, Message::Text(_)) {
                tokio::time::sleep(Duration::from_millis(late)).await;
            }
            let close = matches!(m, Message::Close(_));
            let n = match &m {
                Message::Text(t) => t.len(),
                _ => 0,
            };
            let sent = sink.send(m).await;
            queued.fetch_sub(n, std::sync::atomic::Ordering::Relaxed);
            hold.give(n as u64);
            if sent.is_err() || close {
                break;
            }
        }
    })
}

/// Core pings every `pingMs` and drops a harness it has not heard from for `dropMs`.
fn ping(w: Shared, n: usize, ping_ms: u64, drop_ms: u64) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(ping_ms.max(1)));
        tick.tick().await;
        let mut pinged = false;
        loop {
            tick.tick().await;
            let mut g = lock(&w);
            // On the scenario's time: a harness the machine kept from answering is not silent,
            // nor while hcpspec waits for its budget to read it.
            let now = g.now();
            let silent = g
                .conns
                .get(&n)
                .map_or(0, |c| now.saturating_sub(c.heard))
                .min(g.hold.since_waiting().as_millis() as u64);
            if silent > drop_ms && !g.breaks(Mutant::NoSilenceDrop) {
                let ms = silent;
                g.record(json!({ "via": "core", "event": "drop", "conn": n, "silentMs": ms }));
                if let Some(c) = g.conns.get(&n) {
                    let _ = c.tx.send(Message::Close(None));
                }
                g.lost(n);
                return;
            }
            if pinged && g.breaks(Mutant::PingsOnce) {
                continue;
            }
            pinged = true;
            if g.breaks(Mutant::PingFrameMisshapen) {
                g.send(n, json!({ "t": "msg", "m": "ping", "p": {} }));
            } else if !g.breaks(Mutant::NoPings) {
                g.send(n, json!({ "t": "ping" }));
            }
        }
    })
}

/// A message the harness sent, read: false when the connection is to close.
fn heard(
    g: &mut World,
    n: usize,
    frames: usize,
    m: Result<Message, tokio_tungstenite::tungstenite::Error>,
    tx: &mpsc::UnboundedSender<Message>,
) -> bool {
    let now = g.now();
    if let Some(c) = g.conns.get_mut(&n) {
        c.heard = now;
    }
    if frames > FLOOD {
        g.record(json!({ "via": "bad-frame", "conn": n, "reason": format!("flood: more than {FLOOD} frames") }));
        let _ = tx.send(Message::Close(None));
        return false;
    }
    if let Ok(Message::Text(_) | Message::Binary(_)) = &m {
        g.received += m.as_ref().map_or(0, |m| m.len() as u64);
        if g.received > FLOOD_BYTES {
            let got = g.received;
            g.record(json!({ "via": "cap", "conn": n, "what": "frames",
                "reason": format!("flood: {got} bytes of messages, past {FLOOD_BYTES} in one scenario") }));
            let _ = tx.send(Message::Close(None));
            return false;
        }
    }
    match m {
        Ok(Message::Text(t)) => frame(g, n, t.as_str()),
        // A mutant reads a binary frame as a message.
        Ok(Message::Binary(b)) if g.breaks(Mutant::BinaryFramesRead) => {
            frame(g, n, &String::from_utf8_lossy(&b))
        }
        Ok(Message::Binary(_)) if g.decides(Variant::BinaryFramesClose) => {
            let _ = tx.send(Message::Close(None));
            return false;
        }
        Ok(Message::Binary(b)) => {
            g.record(json!({ "via": "bad-frame", "conn": n, "reason": "a binary frame", "bytes": b.len() }));
        }
        // A pong is an answer to core's ping (a harness may answer so): the judge reads it
        // as proof the harness read what core sent before.
        Ok(Message::Pong(_)) => {
            g.record(json!({ "via": "pong", "conn": n }));
        }
        Ok(Message::Ping(_)) | Ok(Message::Frame(_)) => {}
        Ok(Message::Close(_)) => return false,
        // Past 64 MiB is the harness's fault; a reset (a killed harness) is not a frame.
        Err(e @ tokio_tungstenite::tungstenite::Error::Capacity(_)) => {
            g.record(json!({ "via": "bad-frame", "conn": n, "reason": format!("past HARNESS_MAX_PAYLOAD: {e}") }));
            // Closed (1009), not left open unread: the sender learns now, not at its deadline.
            use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame};
            let why = CloseFrame {
                code: CloseCode::Size,
                reason: "past HARNESS_MAX_PAYLOAD".into(),
            };
            let _ = tx.send(Message::Close(Some(why)));
            return false;
        }
        Err(e) => {
            g.record(json!({ "via": "core", "event": "transport-error", "conn": n, "message": e.to_string() }));
            return false;
        }
    }
    true
}

fn upgrade_status(u: &Value) -> u16 {
    if u["status"].is_u64() {
        return u["status"].as_u64().unwrap_or(400) as u16;
    }
    if u["path"] != PATH {
        404
    } else if u["auth"] != "ok" {
        401
    } else if u["apiHeader"] != "1" {
        426
    } else {
        400
    }
}

/// The shape problem of a frame (FrameSchema), if any.
pub fn shape(f: &Value) -> Option<String> {
    let Some(o) = f.as_object() else {
        return Some("a frame is a JSON object".into());
    };
    let id = || matches!(o.get("id"), Some(Value::String(_)) | Some(Value::Number(_)));
    let has = |k: &str| o.contains_key(k);
    match o.get("t").and_then(Value::as_str) {
        Some("req") if id() && o.get("m").is_some_and(Value::is_string) && has("p") => None,
        Some("res") if id() && o.get("ok") == Some(&json!(true)) && has("r") => None,
        Some("res")
            if id()
                && o.get("ok") == Some(&json!(false))
                && o.get("e")
                    .and_then(|e| e.get("code"))
                    .is_some_and(Value::is_string) =>
        {
            None
        }
        Some("msg") if o.get("m").is_some_and(Value::is_string) && has("p") => None,
        Some("abort") if id() => None,
        Some("ping") => None,
        Some(t) => Some(format!("not a valid `{t}` frame (FrameSchema)")),
        None => Some("no `t`: not one of the six frame kinds".into()),
    }
}

fn frame(g: &mut super::model::World, n: usize, text: &str) {
    // One JSON text message per frame: the mutants read a frame's lines, or its first JSON
    // value, as messages.
    if text.contains('\n') && g.breaks(Mutant::FrameLinesAreMessages) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            frame(g, n, line);
        }
        return;
    }
    let parsed = match g.breaks(Mutant::FrameTrailingTextIgnored) {
        true => serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .next()
            .unwrap_or_else(|| serde_json::from_str(text)),
        false => serde_json::from_str(text),
    };
    let f: Value = match parsed {
        Ok(f) => f,
        Err(e) => {
            let head: String = text.chars().take(200).collect();
            g.record(json!({ "via": "bad-frame", "conn": n, "reason": format!("not one JSON message: {e}"), "text": head }));
            return;
        }
    };
    if let Some(problem) = shape(&f) {
        g.record(json!({ "via": "bad-frame", "conn": n, "reason": problem, "frame": f }));
        return;
    }
    // The frame is logged as it came, moved, never copied (`json!` would copy a frame of
    // 60 MiB): what is read of it below is its small members, and its params are lent to the
    // request and put back.
    let (t, id, m) = (f["t"].clone(), f["id"].clone(), f["m"].clone());
    let request_id = f["requestId"].clone();
    let mut entry = json!({ "via": "frame", "conn": n, "from": "harness" });
    entry["frame"] = f;
    let logged = g.record(entry);
    if t == "abort" {
        let id = match g.breaks(Mutant::AbortFrameMisread) {
            true => request_id,
            false => id,
        };
        g.abort(n, &id);
        return;
    }
    if t != "req" {
        return;
    }
    // Ids are per sender; the mutant takes a request whose id is one of its own requests' for
    // that request's answer.
    let own = |e: &Value| {
        e["via"] == "frame"
            && e["from"] == "core"
            && e["frame"]["t"] == "req"
            && e["frame"]["id"] == id
    };
    if g.breaks(Mutant::IdsShared) && g.log.iter().any(own) {
        return;
    }
    let m = m.as_str().unwrap_or_default();
    g.trigger(None, Some(m));
    let at = match g.breaks(Mutant::RequestFrameMisread) {
        true => "params",
        false => "p",
    };
    let lent = g.log[logged]["frame"].get_mut(at).map(std::mem::take);
    let p = lent.as_ref().unwrap_or(&Value::Null);
    let reply = g.request(n, &id, m, p);
    if let (Some(p), Some(slot)) = (lent, g.log[logged]["frame"].get_mut(at)) {
        *slot = p;
    }
    match reply {
        Reply::Ok(r) if g.breaks(Mutant::OkFrameMisshapen) => g.send(
            n,
            json!({ "t": "res", "id": id, "ok": true, "result": r }),
        ),
        Reply::Ok(r) => g.send(n, json!({ "t": "res", "id": id, "ok": true, "r": r })),
        Reply::Err(code, message) if g.breaks(Mutant::ErrorFrameMisshapen) => g.send(
            n,
            json!({ "t": "res", "id": id, "ok": false, "error": { "code": code, "message": message } }),
        ),
        // The mutant drops the message of some refusals only: those of runs not held.
        Reply::Err(code @ "run_not_held", _) if g.breaks(Mutant::NotHeldWithoutMessage) => g.send(
            n,
            json!({ "t": "res", "id": id, "ok": false, "e": { "code": code } }),
        ),
        Reply::Err(code, _) if g.breaks(Mutant::ErrorWithoutMessage) => g.send(
            n,
            json!({ "t": "res", "id": id, "ok": false, "e": { "code": code } }),
        ),
        Reply::Err(code, message) => {
            let message = crate::suites::core_api::freedom::message(&g.knobs(), code, &message);
            g.send(
                n,
                json!({ "t": "res", "id": id, "ok": false, "e": { "code": code, "message": message } }),
            )
        }
        Reply::Later => {}
    }
}
