//! hcpspec's gates (section 5): the Model and Tool Gates a harness calls at `NYLORUN_GATES_URL`.
//! They check the run token, the `Idempotency-Key` and the journal, answer from the scenario's
//! fixture model and tools, and log every call for the judge.

use super::model::{lock, Shared, World};
use crate::suites::core_api::knobs::{Mutant, Variant};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// A gate body's cap: the spec's default modelCallBytes (32 MiB) and more; past it, 413 and a
/// cap hit. Read in chunks as it comes, never past the cap.
pub const BODY_BYTES: usize = 64 << 20;
/// A gate body is sent whole within this of its head, or it is a cap hit (408): a harness
/// sending one byte a second holds nothing.
pub const BODY_DEADLINE: Duration = Duration::from_secs(2);

pub fn router(w: Shared) -> Router {
    let call = |route: &'static str| {
        move |State(w): State<Shared>, h: HeaderMap, b: axum::body::Body| async move {
            let hold = lock(&w).hold.clone();
            match body(&h, b, &hold).await {
                Ok(b) => call(w, route, h, b).await,
                Err(None) => answer(
                    400,
                    json!({ "error": { "code": "invalid", "message": "the body was not read" } }),
                ),
                Err(Some((status, reason))) => {
                    lock(&w).record(json!({ "via": "cap", "what": "gate-body", "route": route, "reason": reason }));
                    answer(
                        status,
                        json!({ "error": { "code": "limit_exceeded", "message": reason } }),
                    )
                }
            }
        }
    };
    let cancel = |route: &'static str| {
        move |State(w): State<Shared>, Path(key): Path<String>, h: HeaderMap| {
            cancel(w, route, key, h)
        }
    };
    Router::new()
        .route("/nylorun/v1/model-calls", post(call("model-calls")))
        .route("/nylorun/v1/tool-calls", post(call("tool-calls")))
        .route("/nylorun/v1/http-calls", post(call("http-calls")))
        .route("/nylorun/v1/mcp/connect", post(call("mcp/connect")))
        .route("/nylorun/v1/mcp/list", post(call("mcp/list")))
        .route("/nylorun/v1/mcp/close", post(call("mcp/close")))
        .route(
            "/nylorun/v1/model-calls/{key}/cancel",
            post(cancel("model-calls")),
        )
        .route(
            "/nylorun/v1/tool-calls/{key}/cancel",
            post(cancel("tool-calls")),
        )
        .fallback(|| async {
            answer(
                404,
                json!({ "error": { "code": "not_found", "message": "no such gate route" } }),
            )
        })
        .with_state(w)
}

fn answer(status: u16, body: Value) -> Response {
    (
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// A lost hop: a 200 head announcing a body that breaks off, so the client learns nothing of
/// the call's fate (the connection is cut).
fn lost_hop() -> Response {
    // The head and a first byte go out before the break, so the client knows it was heard.
    let broken = futures_util::stream::unfold(0, |n| async move {
        match n {
            0 => Some((Ok(Bytes::from_static(b"{")), 1)),
            1 => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Some((Err(std::io::Error::other("the hop is lost")), 2))
            }
            _ => None,
        }
    });
    let mut r = axum::body::Body::from_stream(broken).into_response();
    r.headers_mut()
        .insert("content-length", axum::http::HeaderValue::from_static("64"));
    r
}

fn gate_error(status: u16, code: &str, message: &str) -> (u16, Value) {
    (
        status,
        json!({ "error": { "code": code, "message": message } }),
    )
}

/// Whose token: `current` (the run's token now), `old` (one a switch replaced), `harness` (a
/// harness's connection token, no run's), `unknown`, `missing`; and the run's index.
fn token_of(w: &World, h: &HeaderMap) -> (&'static str, Option<usize>) {
    let Some(auth) = h.get("authorization").and_then(|v| v.to_str().ok()) else {
        return ("missing", None);
    };
    let Some(token) = auth.strip_prefix("Bearer ") else {
        return ("unknown", None);
    };
    for (i, r) in w.runs.iter().enumerate() {
        if r.token == token {
            return ("current", Some(i));
        }
        if r.old_tokens.iter().any(|t| t == token) {
            return ("old", Some(i));
        }
    }
    if w.credentials().contains_key(token) {
        return ("harness", None);
    }
    ("unknown", None)
}

/// Whether a mutant takes this Bearer, no run's token, as the live run's: any Bearer at all, or
/// the harness's connection token.
fn bearer_of(g: &World, auth: &str) -> bool {
    auth == "unknown" && g.breaks(Mutant::GateTokenUnverified)
        || auth == "harness" && g.breaks(Mutant::HarnessTokenAtGates)
}

/// Which switch replaced an old token: 1 for the run's first token, 2 for the one the first
/// switch gave … (the judge finds that switch's answer).
fn replaced_by(w: &World, h: &HeaderMap, run: usize) -> Value {
    let token = h
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|a| a.strip_prefix("Bearer "));
    let at = w.runs[run]
        .old_tokens
        .iter()
        .position(|t| Some(t.as_str()) == token);
    at.map_or(Value::Null, |k| json!(k + 1))
}

fn header(h: &HeaderMap, name: &str) -> Value {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map_or(Value::Null, |s| json!(s))
}

/// A gate call's body, read in chunks up to [`BODY_BYTES`] and within [`BODY_DEADLINE`]; a cap
/// hit is its status and reason, a body the client gave up on none.
async fn body(
    h: &HeaderMap,
    b: axum::body::Body,
    hold: &std::sync::Arc<super::budget::Hold>,
) -> Result<Bytes, Option<(u16, String)>> {
    use futures_util::StreamExt;
    let announced = h
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if let Some(n) = announced.filter(|n| *n > BODY_BYTES as u64) {
        return Err(Some((
            413,
            format!("a gate body of {n} bytes announced, past {BODY_BYTES} (refused, not read)"),
        )));
    }
    let mut until = tokio::time::Instant::now() + BODY_DEADLINE;
    let mut stream = b.into_data_stream();
    let mut buf = Vec::new();
    loop {
        match tokio::time::timeout_at(until, stream.next()).await {
            Err(_) => {
                return Err(Some((
                    408,
                    format!(
                        "a gate body not sent whole within {} ms of its head ({} of {} bytes came)",
                        BODY_DEADLINE.as_millis(),
                        buf.len(),
                        announced.map_or("?".to_string(), |n| n.to_string())
                    ),
                )))
            }
            Ok(None) => return Ok(buf.into()),
            Ok(Some(Err(_))) => return Err(None),
            Ok(Some(Ok(chunk))) => {
                if buf.len() + chunk.len() > BODY_BYTES {
                    return Err(Some((
                        413,
                        format!(
                            "a gate body past {BODY_BYTES} bytes ({} came; read no further)",
                            buf.len() + chunk.len()
                        ),
                    )));
                }
                // Held (the log keeps the body); a wait for the process's budget is not
                // charged to the body's deadline.
                let waited = tokio::time::Instant::now();
                hold.until_room().await;
                until += waited.elapsed();
                hold.take(chunk.len() as u64);
                buf.extend_from_slice(&chunk);
            }
        }
    }
}

/// A tool call at its tool, under its key, until its answer is kept (or the call is dropped).
struct AtTool {
    w: Shared,
    key: String,
}

impl AtTool {
    fn new(w: &Shared, key: &str) -> Self {
        lock(w).forwarding.insert(key.to_string());
        AtTool {
            w: w.clone(),
            key: key.to_string(),
        }
    }
}

impl Drop for AtTool {
    fn drop(&mut self) {
        lock(&self.w).forwarding.remove(&self.key);
    }
}

/// A re-send of a tool call still at its tool joins it: the first call's answer, once kept (at
/// most 10 s). None when no call of the key is at its tool, or it ended without an answer kept.
async fn join(w: &Shared, key: &str) -> Option<(u16, Value)> {
    {
        let g = lock(w);
        if key.is_empty()
            || !g.forwarding.contains(key)
            || g.breaks(Mutant::ResendInFlightRunsAgain)
        {
            return None;
        }
    }
    for _ in 0..500 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let g = lock(w);
        if let Some(kept) = g.gate_cache.get(key) {
            return Some(kept.clone());
        }
        if !g.forwarding.contains(key) {
            return None;
        }
    }
    None
}

/// Decrements the in-flight count however the call ends (a client that hangs up drops it).
struct InFlight {
    w: Shared,
    entry: usize,
    done: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut g = lock(&self.w);
        g.inflight -= 1;
        if !self.done {
            let at = g.now();
            g.log[self.entry]["abandonedAt"] = json!(at);
        }
    }
}

async fn call(w: Shared, route: &'static str, h: HeaderMap, body: Bytes) -> Response {
    // A gate takes its time to answer (the freedom variant), within what a case waits.
    let late = crate::suites::core_api::freedom::delay_ms(&lock(&w).knobs(), route, 150);
    let key = header(&h, "idempotency-key");
    // In flight from its arrival: a cancel that comes while the call waits aborts it too.
    let notify = Arc::new(Notify::new());
    {
        let mut g = lock(&w);
        let unheard = route == "http-calls" && g.breaks(Mutant::HttpCancelIgnored);
        if let Some(k) = key.as_str().filter(|_| !unheard) {
            g.cancels.insert(k.to_string(), notify.clone());
        }
    }
    tokio::time::sleep(Duration::from_millis(late)).await;
    let size = body.len() as u64;
    let body: Value = serde_json::from_slice(&body).unwrap_or_else(
        |_| json!({ "$text": crate::snapshot::excerpt_text(&String::from_utf8_lossy(&body), 256) }),
    );
    let (entry, decided, hold) = {
        let mut g = lock(&w);
        // A core of other wire names reads the http-calls body in its own names.
        let mut refused = None;
        let body = match g.role().read_names(route, &body) {
            None => body,
            Some(Ok(read)) => read,
            Some(Err(why)) => {
                refused = Some(gate_error(400, "invalid_request", &why.to_string()));
                body
            }
        };
        let (auth, run) = token_of(&g, &h);
        let run_id = run.map(|i| g.runs[i].id.clone());
        let entry = g.record(json!({
            "via": "gate", "route": route, "auth": auth,
            "run": run_id,
            "key": key, "traceparent": header(&h, "traceparent"), "body": body
        }));
        if let (true, Some(i)) = (auth == "old", run) {
            let switch = replaced_by(&g, &h, i);
            g.log[entry]["replacedBy"] = switch;
        }
        g.inflight += 1;
        g.trigger(Some(route), None);
        let mut decided = match refused {
            Some((status, b)) => (status, b, 0),
            None => decide(&mut g, route, auth, run, key.as_str(), &body, size),
        };
        worded(&g, decided.0, &mut decided.1);
        // A scripted fault replaces the answer (raw text travels as a JSON string marker).
        let nth = g.gate_counts.get(route).copied().unwrap_or(0);
        let fault =
            g.sc.gate_faults
                .iter()
                .find(|f| f.route == route && f.nth == nth)
                .cloned();
        if fault.as_ref().is_some_and(|f| f.lose) {
            g.log[entry]["lost"] = json!(true);
            g.inflight -= 1;
            return lost_hop();
        }
        if let Some(f) = fault {
            let body = match (&f.body, &f.text) {
                (_, Some(t)) => json!({ "$raw": t }),
                (Some(b), None) => b.clone(),
                (None, None) => Value::Null,
            };
            decided = (f.status, body, 0);
        }
        (entry, (decided.0, decided.1), decided.2)
    };
    let mut guard = InFlight {
        w: w.clone(),
        entry,
        done: false,
    };
    let (mut status, mut out) = decided;
    if let Some(u) = out
        .get("$follow")
        .and_then(Value::as_str)
        .map(str::to_string)
    {
        (status, out) = follow(&w, &u).await;
    }
    let k = key.as_str().unwrap_or_default().to_string();
    let joined = match out.get("$forward") {
        Some(_) => join(&w, &k).await,
        None => None,
    };
    // Held until the answer is kept: a re-send waits for the first call's answer.
    let mut _at_tool = None;
    if let Some(j) = joined {
        (status, out) = j;
    } else if let Some(f) = out.get("$forward").cloned() {
        _at_tool = Some(AtTool::new(&w, &k));
        // A call in flight at its tool; its cancel route aborts it.
        tokio::select! {
            r = forward(&w, &f) => (status, out) = r,
            _ = notify.notified() => {
                closed_on_cancel(&w);
                (status, out) = (200, json!({ "ok": false, "error": { "code": "cancelled", "message": "the call was cancelled" } }));
            }
        }
    }
    if hold > 0 && status == 200 {
        // On scenario time: the harness's time to cancel is not what the machine leaves it.
        let time = lock(&w).time().clone();
        tokio::select! {
            _ = time.sleep(hold) => {}
            _ = notify.notified() => {
                closed_on_cancel(&w);
                (status, out) = (200, json!({ "outcome": { "kind": "failed", "code": "cancelled", "message": "the call was cancelled", "retryable": false } }));
                if route != "model-calls" {
                    out = json!({ "ok": false, "error": { "code": "cancelled", "message": "the call was cancelled" } });
                }
            }
        }
    }
    {
        let mut g = lock(&w);
        misshaped(&g, route, status, &mut out);
        let at = g.now();
        // Where in the log the answer falls (milliseconds are too coarse to order it).
        let seq = g.log.len();
        let e = &mut g.log[entry];
        e["status"] = json!(status);
        e["answer"] = out.clone();
        e["answeredAt"] = json!(at);
        e["answeredSeq"] = json!(seq);
        if status == 200 {
            if let Some(k) = key.as_str() {
                g.gate_cache.insert(k.to_string(), (status, out.clone()));
            }
        }
    }
    guard.done = true;
    if let Some(raw) = out.get("$raw").and_then(Value::as_str) {
        return (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            raw.to_string(),
        )
            .into_response();
    }
    answer(status, out)
}

/// The answer as the mutants that break its shape send it.
fn misshaped(g: &World, route: &str, status: u16, out: &mut Value) {
    let model_misshapen = route == "model-calls" && g.breaks(Mutant::ModelGateErrorMisshapen);
    if status != 200 && (g.breaks(Mutant::GateErrorMisshapen) || model_misshapen) {
        if let Some(e) = out.get("error").cloned().filter(Value::is_object) {
            *out = e;
        }
    }
    if status == 200
        && route != "model-calls"
        && out["ok"] == true
        && g.breaks(Mutant::ToolAnswerMisshapen)
    {
        if let Some(o) = out.as_object_mut() {
            let result = o.remove("result").unwrap_or(Value::Null);
            o.insert("value".into(), result);
        }
    }
}

/// An error's message as the core words it: its own way (the freedom variant), or, for the
/// mutant, naming where the tools are and their credentials.
fn worded(g: &World, status: u16, out: &mut Value) {
    if let Some(e) = out.get_mut("error").filter(|e| e["message"].is_string()) {
        let code = e["code"].as_str().unwrap_or_default().to_string();
        let text = e["message"].as_str().unwrap_or_default().to_string();
        let mut text = crate::suites::core_api::freedom::message(&g.knobs(), &code, &text);
        if status != 200 && g.breaks(Mutant::CredentialInGateError) {
            let endpoints = Value::Object(g.sc.endpoints.clone()).to_string();
            text = format!("{text} (endpoints: {endpoints})");
        }
        e["message"] = json!(text);
    }
}

/// The gate's answer before any hold: (status, body, hold ms). `size` is the body's bytes.
// Each `&& !` names one mutant that keeps the old behaviour: clearer than De Morgan's form.
#[allow(clippy::nonminimal_bool)]
fn decide(
    g: &mut World,
    route: &str,
    auth: &str,
    run: Option<usize>,
    key: Option<&str>,
    body: &Value,
    size: u64,
) -> (u16, Value, u64) {
    let deny = |(s, b): (u16, Value)| (s, b, 0);
    // A Bearer that is no run's token: a forged one, or the harness's connection token.
    let bearer = bearer_of(g, auth);
    let run = run.or_else(|| {
        (g.breaks(Mutant::AnyGateToken) || bearer)
            .then(|| g.runs.len().checked_sub(1))
            .flatten()
    });
    let Some(i) = run else {
        return deny(gate_error(401, "unauthorized", "no run token"));
    };
    let lost = g.runs[i]
        .ended
        .as_ref()
        .is_some_and(|e| e.1 == "connection.lost");
    let tool_route = matches!(route, "tool-calls" | "http-calls");
    if g.runs[i].ended.is_some()
        && !g.breaks(Mutant::NoRunStale)
        && !(tool_route && g.breaks(Mutant::ToolGateNoRunStale))
        && !(lost && g.breaks(Mutant::LostRunStillRunning))
    {
        return deny(gate_error(409, "run_stale", "the run is over"));
    }
    // Playing core for a harness, the gates take a token a renewal replaced: a call made before
    // the harness read the switch crosses it, and refusing it would fail the turn of a harness
    // that did nothing wrong. The always-check `run-token` judges whether it had read the switch.
    let crossing = auth == "old" && !g.role().strict();
    if auth != "current" && !crossing && !g.breaks(Mutant::AnyGateToken) && !bearer {
        return deny(gate_error(
            401,
            "unauthorized",
            "a token a renewal replaced",
        ));
    }
    if route.starts_with("mcp/") {
        return (200, mcp(g, route, body), 0);
    }
    let mcp_unkeyed = route == "tool-calls" && g.breaks(Mutant::McpKeyNotRequired);
    let key = match key {
        None if g.breaks(Mutant::KeyNotRequired) || mcp_unkeyed => {
            body.get("effectId").and_then(Value::as_str).unwrap_or("")
        }
        None => {
            return deny(gate_error(
                400,
                "key_required",
                "Idempotency-Key is required",
            ))
        }
        Some(k) => k,
    };
    let runs_again = route != "model-calls" && g.breaks(Mutant::ToolResendRunsAgain)
        || route == "http-calls" && g.breaks(Mutant::HttpResendRunsAgain);
    if let Some((s, b)) = g.gate_cache.get(key).filter(|_| !runs_again) {
        if !g.breaks(Mutant::ResendOtherBytes) {
            return (*s, b.clone(), 0);
        }
        let mut again = b.clone();
        again["resent"] = json!(true);
        return (*s, again, 0);
    }
    // § 5 fixes the refusal of an un-journaled *tool* call; the variant's Model Gate runs a
    // model call whether or not its intent was asked.
    let model_unchecked = route == "model-calls" && g.decides(Variant::ModelGateUnjournaled);
    let mcp_unjournaled = route == "tool-calls" && g.breaks(Mutant::UnjournaledMcpCallRun);
    // The mutants ask only that the key was journaled, whatever its intent was answered.
    let refused_runs = g.breaks(Mutant::RefusedCallRunsAtTheGate) && g.journal.contains_key(key);
    let any_intent = g.breaks(Mutant::GateRunsAnyIntent) && g.journal.contains_key(key);
    if !g.runs[i].executed.contains(key)
        && !refused_runs
        && !any_intent
        && !g.breaks(Mutant::UnjournaledCallRun)
        && !mcp_unjournaled
        && !model_unchecked
    {
        if g.breaks(Mutant::UnjournaledRefused403) {
            return deny(gate_error(
                403,
                "forbidden",
                "no intent of this run answered execute for this key",
            ));
        }
        return deny(gate_error(
            409,
            "effect_not_journaled",
            "no intent of this run answered execute for this key",
        ));
    }
    if let Some(refused) = past_limits(g, i, route, size) {
        return deny(refused);
    }
    match route {
        "model-calls" if g.breaks(Mutant::ModelGateFails) => {
            deny(gate_error(500, "internal", "the gate fell over"))
        }
        // ModelCallBodySchema, {effectId, invocationId, call: ModelCall}: the Runtime validates
        // with the same schemas (§ 0), so a body outside it runs nothing.
        "model-calls"
            if g.role().strict()
                && !g.breaks(Mutant::ModelCallBodyUnchecked)
                && !((body["effectId"].is_string()
                    || g.breaks(Mutant::ModelCallWithoutEffectIdRuns))
                    && (body["invocationId"].is_string()
                        || g.breaks(Mutant::ModelCallWithoutInvocationIdRuns))
                    && body["call"].is_object()) =>
        {
            let why = "the body is not ModelCallBodySchema {effectId, invocationId, call}";
            deny(gate_error(400, "invalid_request", why))
        }
        "model-calls" if media_refusal(g, i, body).is_some() => {
            let (code, why) = media_refusal(g, i, body).unwrap_or_default();
            // The variant answers the refusal as the call's failure, not a gate error.
            if g.decides(Variant::MediaRefusalAsFailure) {
                let f =
                    json!({ "kind": "failed", "code": code, "message": why, "retryable": false });
                return (200, json!({ "outcome": f }), 0);
            }
            deny(gate_error(400, &code, &why))
        }
        "model-calls" => {
            let (status, answer, hold) = model(g, key, body);
            (status, misshapen(g, answer), hold)
        }
        _ if g.role().decides_effects() => routed(g, route, key, body),
        _ => tool(g, route, body),
    }
}

/// A body past the limit its route is held to (the core role only): the refusal.
fn past_limits(g: &World, i: usize, route: &str, size: u64) -> Option<(u16, Value)> {
    // The core role holds a model call's body to modelCallBytes (past it, 400).
    let model_limit = g.runs[i].limit("modelCallBytes");
    if route == "model-calls"
        && g.role().strict()
        && size > model_limit
        && !g.breaks(Mutant::ModelCallBytesUnchecked)
    {
        let message = format!("the body is {size} bytes, past modelCallBytes {model_limit}");
        return Some(gate_error(400, "invalid_request", &message));
    }
    // ... and a tool call's body to toolAnswerBytes ("and the tool bodies it reads"): the tool
    // is not called.
    let tool_limit = g.runs[i].limit("toolAnswerBytes");
    if matches!(route, "tool-calls" | "http-calls")
        && g.role().strict()
        && size > tool_limit
        && !g.breaks(Mutant::ToolBodySizeUnchecked)
    {
        let message = format!("the body is {size} bytes, past toolAnswerBytes {tool_limit}");
        return Some(gate_error(413, "invalid_request", &message));
    }
    None
}

/// Whether a name is an address (what § 5's "never a URL" keeps out of a server's or tool's name).
fn is_url(name: &str) -> bool {
    name.starts_with("http://") || name.starts_with("https://")
}

/// Follow a URL named as an MCP server (the mutant `mcp-server-url-followed`): list its tools.
async fn follow(w: &Shared, url: &str) -> (u16, Value) {
    if crate::adapter::loopback::loopback_origin(url).is_err() {
        return gate_error(502, "unavailable", "the server is not on this machine");
    }
    let client = lock(w).http.clone();
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {} });
    let req = client
        .post(url)
        .header("content-type", "application/json")
        .body(list.to_string());
    match tokio::time::timeout(Duration::from_secs(3), req.send()).await {
        Ok(Ok(r)) => {
            let answer: Value = r.json().await.unwrap_or(Value::Null);
            (200, json!({ "ok": true, "result": answer["result"] }))
        }
        _ => gate_error(502, "unavailable", "the server did not answer"),
    }
}

fn mcp(g: &World, route: &str, body: &Value) -> Value {
    let server = body
        .pointer("/server/serverName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // The core role: a server the agent declares, never a URL.
    let declared = g.sc.agent["mcpServers"]
        .as_array()
        .is_some_and(|a| a.iter().any(|s| s == server));
    let close_unchecked = route == "mcp/close" && g.breaks(Mutant::McpCloseTakesAUrl);
    if is_url(server) && g.breaks(Mutant::McpServerUrlFollowed) {
        return json!({ "$follow": server });
    }
    if g.role().decides_effects()
        && !declared
        && !g.breaks(Mutant::UndeclaredMcpServerConnected)
        && !close_unchecked
    {
        return json!({ "ok": false, "error": { "code": "mcp.unknown-server", "message": "the agent declares no such server" } });
    }
    if g.breaks(Mutant::UndeclaredMcpServerConnected) {
        return json!({ "ok": true, "result": { "tools": [] } });
    }
    if close_unchecked {
        return json!({ "ok": true, "result": {} });
    }
    // The mutant tells the harness where the server is, and with what credential.
    let endpoint = g.sc.endpoints.get(&format!("mcp:{server}")).cloned();
    let endpoint = endpoint.filter(|_| g.breaks(Mutant::CredentialInMcpAnswer));
    match (route, g.sc.discover.get(server)) {
        ("mcp/list", Some(tools)) if endpoint.is_some() => {
            json!({ "ok": true, "result": { "tools": tools, "endpoint": endpoint } })
        }
        ("mcp/list", Some(tools)) => json!({ "ok": true, "result": { "tools": tools } }),
        (_, Some(_)) if endpoint.is_some() => {
            json!({ "ok": true, "result": { "endpoint": endpoint } })
        }
        (_, Some(_)) => json!({ "ok": true, "result": {} }),
        _ => {
            json!({ "ok": false, "error": { "code": "mcp.unknown-server", "message": "the agent declares no such server" } })
        }
    }
}

/// Why the Model Gate refuses a call's media parts, before anything is sent (§ 5): a text file
/// (unsupported_input), or a reference it cannot fetch under the session's read rule: not the
/// session's, missing, a folder, past modelFileBytes (invalid_request).
fn media_refusal(g: &World, run: usize, body: &Value) -> Option<(String, String)> {
    use crate::suites::core_api::media::parts;
    let limit = g.runs[run].limit("modelFileBytes");
    let unfetchable = |why: String| {
        let code = match g.breaks(Mutant::UnfetchableMediaUnsupported) {
            true => "unsupported_input",
            false => "invalid_request",
        };
        Some((code.to_string(), why))
    };
    for (id, version) in parts(body.pointer("/call/prompt").unwrap_or(&Value::Null)) {
        if g.breaks(Mutant::MediaPartRefused) {
            return Some(("unsupported_input".into(), "no media parts".into()));
        }
        // The session's read rule (§ 4b): its own artifacts and the Tenant's it named.
        let readable = |a: &&Value| match a["scope"].as_str() {
            None | Some("session") => true,
            Some("tenant-named") => !g.breaks(Mutant::TenantNamedMediaRefused),
            Some("other-session") => g.breaks(Mutant::OtherSessionMediaFetched),
            Some(_) => false,
        };
        let Some(a) = g.artifacts.get(&id).filter(readable) else {
            // The mutant drops a part it finds nowhere and sends the rest.
            if !g.artifacts.contains_key(&id) && g.breaks(Mutant::MissingMediaDropped) {
                continue;
            }
            return unfetchable(format!("no artifact {id} of this session"));
        };
        let older = a["older"].as_array().into_iter().flatten();
        let has =
            |v: u64| a["meta"]["version"] == v || older.clone().any(|x| x["meta"]["version"] == v);
        if version.is_some_and(|v| !has(v)) && !g.breaks(Mutant::MissingVersionMediaSent) {
            return unfetchable(format!(
                "artifact {id} has no version {}",
                version.unwrap_or(0)
            ));
        }
        if a["meta"]["kind"] == "folder" && !g.breaks(Mutant::FolderMediaSent) {
            return unfetchable(format!("artifact {id} is a folder"));
        }
        let size = a["meta"]["size"].as_u64().unwrap_or(0);
        if size > limit && !g.breaks(Mutant::MediaFileSizeUnchecked) {
            return unfetchable(format!(
                "artifact {id} is {size} bytes, past modelFileBytes {limit}"
            ));
        }
        let text = a["meta"]["contentType"]
            .as_str()
            .is_some_and(|t| t.starts_with("text/"));
        if text && !g.breaks(Mutant::TextFileAsMedia) {
            let code = match g.breaks(Mutant::TextFileInvalidRequest) {
                true => "invalid_request",
                false => "unsupported_input",
            };
            return Some((
                code.into(),
                format!("artifact {id} is a text file: inline its text"),
            ));
        }
    }
    None
}

/// The fixture model: the nth distinct model effect gets the nth reply.
fn model(g: &mut World, key: &str, body: &Value) -> (u16, Value, u64) {
    let n = g.model_keys.len();
    let idx = *g.model_keys.entry(key.to_string()).or_insert(n);
    let Some(reply) = (match g.sc.model.len() {
        // The mutant's Model Gate answers on its own, not as the Tenant's fixture model says.
        _ if g.breaks(Mutant::FixtureModelIgnored) => None,
        0 => None,
        len => Some(g.sc.model[idx.min(len - 1)].clone()),
    }) else {
        return (
            200,
            candidate(vec![json!({ "type": "text", "text": "done" })], "stop"),
            0,
        );
    };
    // The fixture model answers a failure: {kind: "failed", code, message, retryable}.
    if let Some(f) = &reply.failure {
        let mut failure = json!({
            "kind": "failed",
            "code": f.get("code").cloned().unwrap_or(json!("provider_error")),
            "message": f.get("message").cloned().unwrap_or(json!("the model failed")),
            "retryable": f.get("retryable").cloned().unwrap_or(json!(false)),
        });
        if g.breaks(Mutant::FailureWithoutRetryable) {
            failure.as_object_mut().map(|o| o.remove("retryable"));
        }
        if g.breaks(Mutant::FailureWithoutCode) {
            failure.as_object_mut().map(|o| o.remove("code"));
        }
        return (200, json!({ "outcome": failure }), reply.hold_ms);
    }
    let offered = body
        .pointer("/call/tools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut blocks = Vec::new();
    for (j, call) in reply.tool_calls.iter().enumerate() {
        let (raw, description, schema) = describe(g, call);
        // The tool offered for it: by the description hcpspec listed, the raw name, or else
        // the one offered tool whose input schema is the listed one (names and descriptions
        // are the harness's).
        let same_schema: Vec<&Value> = offered
            .iter()
            .filter(|t| !schema.is_null() && t.get("inputSchema") == Some(&schema))
            .collect();
        let found = offered
            .iter()
            .find(|t| {
                let d = t
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                !description.is_empty() && d.contains(&description)
            })
            .or_else(|| {
                offered.iter().find(|t| {
                    t.get("name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| !raw.is_empty() && n.contains(&raw))
                })
            })
            .or(match same_schema[..] {
                [one] => Some(one),
                _ => None,
            });
        match found.and_then(|t| t.get("name")).and_then(Value::as_str) {
            Some(name) => blocks.push(json!({
                "type": "tool-call", "callId": format!("call-{idx}-{j}"), "name": name,
                "input": call.input.clone().unwrap_or(json!({}))
            })),
            None if call.if_offered => {}
            None => {
                g.skip.get_or_insert(format!(
                    "the harness offered the model no tool for {} (which tools a model is offered is the harness's choice)",
                    call.target_key()
                ));
            }
        }
    }
    if let Some(t) = &reply.text {
        // It repairs no JSON; the mutant closes what the model left open.
        let mut t = t.clone();
        if g.breaks(Mutant::ModelJsonRepaired)
            && t.starts_with('{')
            && serde_json::from_str::<Value>(&t).is_err()
        {
            t.push_str("]}");
        }
        blocks.push(json!({ "type": "text", "text": t }));
    }
    let finish = if blocks.iter().any(|b| b["type"] == "tool-call") {
        "tool-calls"
    } else {
        "stop"
    };
    if blocks.is_empty() {
        blocks.push(json!({ "type": "text", "text": "done" }));
    }
    (200, candidate(blocks, finish), reply.hold_ms)
}

fn candidate(output: Vec<Value>, finish: &str) -> Value {
    json!({ "outcome": {
        "kind": "candidate", "output": output, "finishReason": finish,
        "usage": { "inputTokens": 10, "outputTokens": 5 }
    } })
}

/// The mutants of the candidate's members (§ 5: output blocks, finishReason, usage).
fn misshapen(g: &World, mut answer: Value) -> Value {
    if let Some(outcome) = answer.get_mut("outcome") {
        g.drop_broken(
            outcome,
            &[
                (Mutant::CandidateWithoutOutput, "output"),
                (Mutant::CandidateWithoutFinishReason, "finishReason"),
                (Mutant::CandidateWithoutUsage, "usage"),
            ],
        );
    }
    answer
}

/// A tool call's raw name, and the description and input schema hcpspec gave the harness for it.
fn describe(g: &World, call: &super::scenario::ToolCall) -> (String, String, Value) {
    let start = g
        .runs
        .last()
        .map(|r| r.start.clone())
        .unwrap_or(Value::Null);
    let find = |list: Option<&Value>, name: &str| {
        let tool = list
            .and_then(Value::as_array)
            .and_then(|l| l.iter().find(|t| t["name"] == name));
        let d = tool
            .and_then(|t| t.get("description"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        (d, tool.map_or(Value::Null, |t| t["inputSchema"].clone()))
    };
    if let Some(m) = &call.mcp {
        let server = start
            .pointer("/mcp/servers")
            .and_then(Value::as_array)
            .and_then(|s| s.iter().find(|s| s["name"] == m.server.as_str()).cloned());
        let (d, schema) = find(server.as_ref().and_then(|s| s.get("tools")), &m.tool);
        return (m.tool.clone(), d, schema);
    }
    if let Some(h) = &call.http {
        let (d, schema) = find(start.pointer("/manifest/tools"), h);
        return (h.clone(), d, schema);
    }
    if let Some(t) = call.runtime.as_ref().or(call.sandbox.as_ref()) {
        return (t.clone(), String::new(), Value::Null);
    }
    (String::new(), String::new(), Value::Null)
}

fn tool(g: &mut World, route: &str, body: &Value) -> (u16, Value, u64) {
    let s = |p: &str| {
        body.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let target = if route == "tool-calls" {
        format!("mcp:{}/{}", s("/server/serverName"), s("/name"))
    } else {
        let t = s("/tool");
        format!("http:{}", if t.is_empty() { s("/name") } else { t })
    };
    let script = g.sc.tools.get(&target).cloned().unwrap_or(json!({}));
    let hold = script.get("holdMs").and_then(Value::as_u64).unwrap_or(0);
    let out = if let Some(e) = script.get("error") {
        json!({ "ok": false, "error": e })
    } else if let Some(n) = script.get("bytes").and_then(Value::as_u64) {
        json!({ "ok": true, "result": { "content": [{ "type": "text", "text": "x".repeat(n as usize) }] } })
    } else {
        json!({ "ok": true, "result": script.get("result").cloned().unwrap_or(json!({ "content": [{ "type": "text", "text": "ok" }] })) })
    };
    (200, out, hold)
}

/// The core role: a tool call runs only on the target its intent was journaled with, and goes to
/// that tool's endpoint when it has one (`$forward`, done outside the lock by `forward`).
#[allow(clippy::nonminimal_bool)] // as in `decide`
fn routed(g: &mut World, route: &str, key: &str, body: &Value) -> (u16, Value, u64) {
    let s = |p: &str| body.pointer(p).and_then(Value::as_str).unwrap_or_default();
    let journaled = g
        .tool_effects
        .get(key)
        .map(|e| e["target"].clone())
        .unwrap_or(Value::Null);
    let t = |k: &str| journaled[k].as_str().unwrap_or_default();
    // The mutants that take a URL for a server's or a tool's address call it.
    let named = match route {
        "tool-calls" => s("/server/serverName"),
        _ => s("/tool"),
    };
    let follows = match route {
        "tool-calls" => g.breaks(Mutant::McpServerUrlFollowed),
        _ => g.breaks(Mutant::HttpToolUrlFollowed),
    };
    if is_url(named) && follows {
        return (
            200,
            json!({ "$forward": { "mcp": route == "tool-calls", "url": named, "credential": "", "key": key, "body": body, "passKey": true } }),
            0,
        );
    }
    // The journaled row's agent is the session's: a server named under another agent is not it.
    let agent = s("/server/agentId");
    let same_agent = agent.is_empty()
        || g.sc.agent["id"].as_str() == Some(agent)
        || g.breaks(Mutant::TargetAgentUnchecked);
    let same_server =
        t("server") == s("/server/serverName") || g.breaks(Mutant::TargetServerUnchecked);
    let (same, endpoint) = if route == "tool-calls" {
        (
            t("kind") == "mcp" && same_server && same_agent && t("tool") == s("/name"),
            format!("mcp:{}", s("/server/serverName")),
        )
    } else {
        let tool = if s("/tool").is_empty() || g.breaks(Mutant::HttpCallToolMisread) {
            s("/name")
        } else {
            s("/tool")
        };
        (
            t("kind") == "http" && (t("tool") == tool || g.breaks(Mutant::HttpTargetUnchecked)),
            format!("http:{tool}"),
        )
    };
    // The mutant that runs un-journaled calls runs them whatever they name: no row, no target.
    let unjournaled = journaled.is_null()
        && (g.breaks(Mutant::UnjournaledCallRun)
            || route == "tool-calls" && g.breaks(Mutant::UnjournaledMcpCallRun));
    if !same && !unjournaled && !g.breaks(Mutant::TargetMismatchRuns) {
        let (st, b) = gate_error(
            409,
            "effect_not_journaled",
            "the intent journaled under this key names another target",
        );
        return (st, b, 0);
    }
    let Some(e) = g.sc.endpoints.get(&endpoint).cloned() else {
        return tool(g, route, body);
    };
    let mut body = body.clone();
    if route == "tool-calls" && g.breaks(Mutant::ToolCallArgumentsDropped) {
        body["arguments"] = json!({});
    }
    // The mutants call the tool by another name than its raw one on the server.
    let model_name = g.tool_effects.get(key).map(|e| e["toolName"].clone());
    if let (true, Some(n)) = (
        route == "tool-calls" && g.breaks(Mutant::ToolCallSendsModelsName),
        model_name,
    ) {
        body["name"] = n;
    }
    if route == "tool-calls" && g.breaks(Mutant::ToolCallNameJoined) {
        body["name"] = json!(format!("{}__{}", s("/server/serverName"), s("/name")));
    }
    let body = &body;
    if g.breaks(Mutant::EndpointIgnored) {
        return tool(g, route, body);
    }
    let limit = g
        .runs
        .last()
        .map(|r| r.limit("toolAnswerBytes"))
        .unwrap_or(u64::MAX);
    (
        200,
        json!({ "$forward": {
            "mcp": route == "tool-calls", "url": e["url"], "credential": e["credential"],
            "key": key, "body": body,
            "limit": if g.breaks(Mutant::ToolAnswerSizeUnchecked)
                || route == "http-calls" && g.breaks(Mutant::HttpAnswerSizeUnchecked) { u64::MAX } else { limit },
            "passKey": !g.breaks(Mutant::KeyNotPassedToTool),
            "keyAsHeader": g.breaks(Mutant::McpKeyAsHeader),
            "ownKey": g.breaks(Mutant::ToolKeyOfItsOwn),
            "httpFailureIsError": g.breaks(Mutant::HttpFailureAsGateError),
            "redact": !g.breaks(Mutant::CredentialEchoPassed),
            "redactFailures": !g.breaks(Mutant::FailureEchoNotRedacted),
            "failureIsError": g.breaks(Mutant::ToolFailureAsGateError),
            "shape": g.breaks(Mutant::ToolResultShaped)
                || route == "http-calls" && g.breaks(Mutant::HttpResultShaped),
            "traceparent": g.call_traces.get(key).cloned().filter(|_| {
                !g.breaks(Mutant::TraceparentNotSentOn)
                    && !(route == "tool-calls" && g.breaks(Mutant::McpTraceparentDropped))
            }),
            "dropBinary": g.breaks(Mutant::BinaryPartsDropped),
            "dropAudio": g.breaks(Mutant::AudioPartsDropped),
            "dropBlobs": g.breaks(Mutant::BlobPartsDropped),
        } }),
        0,
    )
}

/// Call the tool at its endpoint as the gate does: the credential as a Bearer token, the effect
/// id as `Idempotency-Key` (HTTP) or `_meta["nylorun/idempotency-key"]` (MCP `tools/call`);
/// its answer `{ok, result}` or `{ok: false, error}`, refused past `toolAnswerBytes`, with the
/// credential replaced by `[redacted]` wherever it is echoed.
async fn forward(w: &Shared, f: &Value) -> (u16, Value) {
    let mcp = f["mcp"] == true;
    let key = f["key"].as_str().unwrap_or_default();
    let credential = f["credential"].as_str().unwrap_or_default();
    let b = &f["body"];
    // The mutant's key is one of its own, made from the effect id.
    let own = format!("gate-{key}");
    let key = match f["ownKey"] == true {
        true => own.as_str(),
        false => key,
    };
    let (url, payload) = if mcp {
        let mut params = json!({ "name": b["name"], "arguments": b["arguments"] });
        if f["passKey"] == true && f["keyAsHeader"] != true {
            params["_meta"] = json!({ "nylorun/idempotency-key": key });
        }
        (
            f["url"].as_str().unwrap_or_default().to_string(),
            json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params }),
        )
    } else {
        (
            f["url"].as_str().unwrap_or_default().to_string(),
            b.get("arguments")
                .or_else(|| b.get("input"))
                .cloned()
                .unwrap_or(json!({})),
        )
    };
    // The reference core's Tool Gate calls tools on this machine only: a case names hcpspec's
    // fake tools, never another address (docs/security.md).
    if let Err(e) = crate::adapter::loopback::loopback_origin(&url) {
        return gate_error(502, "unavailable", &format!("the tool's endpoint: {e}"));
    }
    // The gate's own client (the world's), on this runtime: see adapter/client.rs.
    let client = lock(w).http.clone();
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {credential}"));
    if (!mcp || f["keyAsHeader"] == true) && f["passKey"] == true {
        req = req.header("idempotency-key", key);
    }
    if let Some(tp) = f["traceparent"].as_str() {
        req = req.header("traceparent", tp);
    }
    let Ok(req) = req.body(payload.to_string()).build() else {
        return gate_error(502, "unavailable", "the tool's URL is not valid");
    };
    let resp = match tokio::time::timeout(Duration::from_secs(3), client.execute(req)).await {
        Ok(Ok(r)) => r,
        _ => return gate_error(502, "unavailable", "the tool did not answer"),
    };
    let status = resp.status();
    let bytes = resp.bytes().await.unwrap_or_default();
    if bytes.len() as u64 > f["limit"].as_u64().unwrap_or(u64::MAX) {
        let code = if mcp {
            "mcp.too-large"
        } else {
            "http.too-large"
        };
        let message = format!(
            "the tool's answer is {} bytes, past toolAnswerBytes",
            bytes.len()
        );
        return (
            200,
            json!({ "ok": false, "error": { "code": code, "message": message } }),
        );
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    // The mutant redacts a success's echo only (an MCP isError result, an HTTP status not 2xx).
    let failed = if mcp {
        text.contains("\"isError\":true")
    } else {
        !status.is_success()
    };
    let redact = f["redact"] == true && (f["redactFailures"] != false || !failed);
    if redact && !credential.is_empty() {
        text = text.replace(credential, "[redacted]");
    }
    let mut answer: Value = serde_json::from_str(&text).unwrap_or(json!(text));
    // Mutants: a gate that shapes results (cuts long text), or drops binary parts.
    if f["shape"] == true {
        answer = cut_texts(&answer, 65_536);
    }
    if f["dropBinary"] == true {
        if let Some(c) = answer
            .pointer_mut("/result/content")
            .and_then(Value::as_array_mut)
        {
            c.retain(|p| p["type"] == "text");
        }
    }
    if let Some(c) = answer
        .pointer_mut("/result/content")
        .and_then(Value::as_array_mut)
    {
        c.retain(|p| !(f["dropAudio"] == true && p["type"] == "audio"));
        c.retain(|p| !(f["dropBlobs"] == true && p.pointer("/resource/blob").is_some()));
    }
    let (ok, result) = if mcp {
        let r = &answer["result"];
        (
            r.is_object() && r["isError"] != true,
            if r.is_object() {
                r.clone()
            } else {
                answer["error"].clone()
            },
        )
    } else {
        (status.is_success(), answer)
    };
    let as_error = f["failureIsError"] == true || !mcp && f["httpFailureIsError"] == true;
    match (ok, as_error) {
        (true, _) => (200, json!({ "ok": true, "result": result })),
        (false, true) => gate_error(502, "internal", "the tool failed"),
        (false, false) => (
            200,
            json!({ "ok": false, "error": { "code": "tool.failed", "message": "the tool failed", "detail": result } }),
        ),
    }
}

/// Every string longer than `most` characters, cut to it (a mutant's shaping).
fn cut_texts(v: &Value, most: usize) -> Value {
    match v {
        Value::String(s) if s.chars().count() > most => {
            json!(s.chars().take(most).collect::<String>())
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| cut_texts(x, most)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), cut_texts(x, most)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The variant aborts a cancelled call by ending its connection with no answer (§ 5 says a
/// cancel aborts a call, not how the aborted call ends). An axum handler cannot drop its
/// connection, so this one unwinds the task that owns it: `resume_unwind` runs no panic hook
/// (nothing is printed: no error of hcpspec's), and tokio ends the task, dropping the socket.
fn closed_on_cancel(w: &Shared) {
    let closes = lock(w).decides(Variant::CancelEndsTheConnection);
    if closes {
        std::panic::resume_unwind(Box::new("a cancelled call's connection ended"));
    }
}

async fn cancel(w: Shared, route: &'static str, key: String, h: HeaderMap) -> Response {
    let mut g = lock(&w);
    let (auth, run) = token_of(&g, &h);
    let run_id = run.map(|i| g.runs[i].id.clone());
    g.record(json!({
        "via": "gate-cancel", "route": route, "key": key, "auth": auth, "run": run_id,
        "traceparent": header(&h, "traceparent")
    }));
    if let Some(n) = g
        .cancels
        .get(&key)
        .filter(|_| !g.breaks(Mutant::CancelRouteIgnored))
    {
        n.notify_one();
    }
    // The mutant aborts the other calls in flight too.
    if g.breaks(Mutant::CancelAbortsEveryCall) {
        g.cancels.values().for_each(|n| n.notify_one());
    }
    answer(200, json!({}))
}
