//! A pod's host (§ 9, the reference core): what each pod's environment gives its host, and the
//! join and renewal routes of core's harness listener (`POST /nylorun/harness/v1/host/join` and
//! `.../host/renew`), served beside the WebSocket upgrades on the same port.

use crate::suites::core_api::knobs::Mutant;
use crate::suites::world::core;
use crate::suites::world::model::{fresh, lock, Shared, World};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const JOIN: &str = "/nylorun/harness/v1/host/join";
pub const RENEW: &str = "/nylorun/harness/v1/host/renew";
/// A host token's expiry: past any case, as every token core gives (docs/core-protocol.md).
const EXPIRES_AT: &str = "2099-01-01T00:00:00Z";
/// The egress proxy's CA certificate (a placeholder: nothing here dials the proxy).
const CA_CERTIFICATE: &str =
    "-----BEGIN CERTIFICATE-----\nhcpspec-reference-egress-ca\n-----END CERTIFICATE-----\n";
/// A request head or body past these is refused: a host sends a few members.
const HEAD_CAP: usize = 16 << 10;
const BODY_CAP: usize = 1 << 20;

fn sandbox_id(pod: usize) -> String {
    format!("sb-pod-{}", pod + 1)
}

fn pod_uid(pod: usize) -> String {
    format!("pod-uid-{}", pod + 1)
}

fn join_token(w: &World, pod: usize) -> String {
    w.join_token(pod)
}

/// What each pod's environment gives its host, in `pods`' order: `{sandboxId, podUid,
/// joinToken}` (`core.start`'s answer).
pub fn environments(w: &World) -> Vec<Value> {
    (0..w.scenario().pods.len())
        .map(|i| {
            json!({ "sandboxId": sandbox_id(i), "podUid": pod_uid(i), "joinToken": join_token(w, i) })
        })
        .collect()
}

/// `POST .../host/join {sandboxId, podUid, joinToken, volumeId?}`: the status and body.
fn join(w: &mut World, body: &Value) -> (u16, Value) {
    let Some(o) = body.as_object() else {
        return refused(400, "a join is a JSON object");
    };
    // The reference core holds a join to its schema; hcpspec's core for a harness (the
    // scripted role) takes members of a host's own, as a schema the spec does not print may.
    let strict = w.role().strict();
    if let Some(k) = o
        .keys()
        .filter(|_| strict)
        .find(|k| !["sandboxId", "podUid", "joinToken", "volumeId"].contains(&k.as_str()))
    {
        return refused(400, &format!("unknown member {k}"));
    }
    if o.contains_key("volumeId") && w.breaks(Mutant::VolumeIdRefused) {
        return refused(400, "unknown member volumeId");
    }
    let text = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or_default();
    let Some(pod) = (0..w.scenario().pods.len())
        .find(|i| sandbox_id(*i) == text("sandboxId") && pod_uid(*i) == text("podUid"))
    else {
        return refused(401, "no such pod");
    };
    // A join with no join token at all is refused as well (a check skipped when it is absent).
    let unchecked = w.breaks(Mutant::JoinTokenUnchecked)
        || (!o.contains_key("joinToken") && w.breaks(Mutant::JoinWithoutTokenAccepted));
    if text("joinToken") != join_token(w, pod) && !unchecked {
        return refused(401, "not this pod's join token");
    }
    let host_token = format!("nylorun-host-{}-{:x}", pod + 1, fresh());
    let epoch = w.admit_host(pod, host_token.clone());
    let mut answer = json!({
        "hostToken": host_token,
        "egressToken": format!("nylorun-egress-{}-{:x}", pod + 1, fresh()),
        "sandboxId": match w.breaks(Mutant::JoinAnswersAnotherSandboxId) {
            true => format!("sb-{:x}", fresh()),
            false => sandbox_id(pod),
        },
        "epoch": epoch,
        "expiresAt": EXPIRES_AT,
        "caCertificate": CA_CERTIFICATE,
    });
    w.drop_broken(
        &mut answer,
        &[
            (Mutant::JoinWithoutHostToken, "hostToken"),
            (Mutant::JoinWithoutEgressToken, "egressToken"),
            (Mutant::JoinWithoutSandboxId, "sandboxId"),
            (Mutant::JoinWithoutEpoch, "epoch"),
            (Mutant::JoinWithoutExpiry, "expiresAt"),
            (Mutant::JoinWithoutCaCertificate, "caCertificate"),
        ],
    );
    // A new disk gets the Agent's setup; a seeded one starts from a disk version, with none.
    let p = &w.scenario().pods[pod];
    let setup = p.setup.clone().unwrap_or_else(|| json!({}));
    let carries = if p.seeded {
        if !w.breaks(Mutant::SeededNotSaid) {
            answer["seeded"] = json!(true);
        }
        w.breaks(Mutant::SetupOnSeededDisk)
    } else {
        if w.breaks(Mutant::SeededOnEveryJoin) {
            answer["seeded"] = json!(true);
        } else if super::freedom::coin(&w.knobs(), crate::knob::Class::Shapes, "seeded-false") {
            // A new disk's join may say so (seeded: false) or say nothing of it.
            answer["seeded"] = json!(false);
        }
        !w.breaks(Mutant::NoSetupOnNewDisk)
    };
    if carries {
        answer["setup"] = setup;
    }
    (200, answer)
}

/// `POST .../host/renew` with the host token as bearer. The harness role's scenario may refuse
/// the nth renewal (`refuseRenewal`): that host token is then no longer good.
fn host_renew(w: &mut World, bearer: Option<&str>) -> (u16, Value) {
    let known = bearer.is_some_and(|t| w.is_host_token(t));
    let harness = bearer.is_some_and(|t| w.credentials().contains_key(t));
    if harness && w.breaks(Mutant::HostRenewHarnessToken) {
        return (200, json!({ "expiresAt": EXPIRES_AT }));
    }
    if known {
        let n = w.host_renewed();
        let pod = bearer.and_then(|t| w.hosts().get(t).map(|(p, _)| *p));
        let refuse = pod.and_then(|p| w.scenario().pods.get(p)?.refuse_renewal);
        if refuse == Some(n) {
            w.revoke_host(bearer.unwrap_or_default());
            return refused(401, "this host token is no longer good: join again");
        }
    }
    if (known && !w.breaks(Mutant::HostRenewRefused))
        || (!known && w.breaks(Mutant::HostRenewAnyToken))
    {
        (200, json!({ "expiresAt": EXPIRES_AT }))
    } else {
        refused(401, "not a host token")
    }
}

/// One connection to the harness role's core, when its scenario has pods: a host's join or
/// renewal (an HTTP POST), else a WebSocket upgrade.
pub async fn accept(stream: TcpStream, n: usize, w: Shared) {
    if is_post(&stream).await {
        serve(stream, w).await
    } else {
        core::connection(stream, n, w).await
    }
}

fn refused(status: u16, message: &str) -> (u16, Value) {
    let code = if status == 401 {
        "unauthorized"
    } else {
        "invalid"
    };
    (
        status,
        json!({ "error": { "code": code, "message": message } }),
    )
}

/// The reference core's harness listener: a pod's host joins and renews by HTTP POST on it
/// (§ 9), beside the harnesses' WebSocket upgrades.
pub async fn listen(listener: TcpListener, w: Shared) {
    let mut n = 0;
    while let Ok((stream, _)) = listener.accept().await {
        n += 1;
        let w = w.clone();
        tokio::spawn(async move {
            if is_post(&stream).await {
                serve(stream, w).await
            } else {
                core::connection(stream, n, w).await
            }
        });
    }
}

/// Does the connection start an HTTP POST (rather than a WebSocket upgrade's GET)? Waits up to
/// 3 s for its first bytes; a client that sends none goes to the upgrade, which refuses it.
async fn is_post(stream: &TcpStream) -> bool {
    let mut head = [0u8; 5];
    let peek = async {
        loop {
            match stream.peek(&mut head).await {
                Ok(n) if n >= head.len() || n == 0 => return n,
                Ok(_) => tokio::time::sleep(Duration::from_millis(1)).await,
                Err(_) => return 0,
            }
        }
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(3), peek).await,
        Ok(5)
    ) && &head == b"POST "
}

/// One HTTP/1.1 request (the connection closes after its answer): the join or the renewal.
async fn serve(mut stream: TcpStream, w: Shared) {
    let answer = match tokio::time::timeout(Duration::from_secs(3), read(&mut stream)).await {
        Ok(Ok((path, bearer, body))) => {
            let mut g = lock(&w);
            let mut seen = json!({ "via": "host", "route": path });
            let (status, body) = match path.as_str() {
                JOIN => match serde_json::from_slice::<Value>(&body) {
                    Ok(b) => join(&mut g, &b),
                    Err(e) => refused(400, &format!("not JSON: {e}")),
                },
                RENEW => {
                    seen["bearer"] = g.bearer_kind(bearer.as_deref());
                    host_renew(&mut g, bearer.as_deref())
                }
                _ => refused(404, "no such route"),
            };
            seen["status"] = json!(status);
            if path == JOIN && status == 200 {
                seen["join"] = json!(g.host_order().len());
            }
            g.record(seen);
            (status, body)
        }
        Ok(Err(why)) => refused(400, &why),
        Err(_) => refused(408, "the request did not come whole within 3 s"),
    };
    let (status, body) = answer;
    let body = body.to_string();
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Request Timeout",
    };
    let text = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A request's path, its bearer token and its body (by content-length).
async fn read(stream: &mut TcpStream) -> Result<(String, Option<String>, Vec<u8>), String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(i) = buf.windows(4).position(|x| x == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > HEAD_CAP {
            return Err(format!("a request head past {HEAD_CAP} bytes"));
        }
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the request ended within its head".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .unwrap_or_default()
        .to_string();
    let (mut length, mut bearer) = (0usize, None);
    for line in lines {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        match k.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = v.trim().parse().map_err(|_| "a bad content-length")?,
            "authorization" => bearer = v.trim().strip_prefix("Bearer ").map(str::to_string),
            _ => {}
        }
    }
    if length > BODY_CAP {
        return Err(format!("a body past {BODY_CAP} bytes"));
    }
    let mut body = buf[end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the request ended within its body".into());
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Ok((path, bearer, body))
}
