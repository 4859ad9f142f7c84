//! The Harness API v5 suite, harness role (spec 004): hcpspec plays the Runtime's core and
//! gates, starts the harness under test per the launch contract, plays the scenario, and judges
//! every frame and gate call. docs/harness-api.md is the whole contract.

pub mod env;
pub mod fuzz;
pub mod judge;
pub mod launch;
pub mod reap;
pub mod reference;
pub mod selfcheck;
mod suite;
pub use suite::HarnessApi;

use crate::case::Case;
use crate::run::{CaseResult, Failure, Observation, Verdict};
use crate::suites::world::model::{self as world, lock, Act, World};
use crate::suites::world::scenario::Scenario;
use crate::suites::world::{core, gates};
pub use launch::Harness;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `drives` says in the suite.json of a suite of harnesses.
pub const DRIVES: &str = "harness";

/// What a run reports of a harness target (it has no `initialize`).
pub fn info(spec: &str) -> Value {
    json!({ "runtime": { "name": spec.strip_prefix("inproc:").unwrap_or(spec) }, "protocol": "harness-api/5" })
}

/// The scenario of a case, parsed (the loader checked it against its schema).
pub fn scenario_of(case: &Case) -> Result<Scenario, String> {
    serde_json::from_value(case.member("scenario").cloned().unwrap_or(json!({})))
        .map_err(|e| format!("{}: /scenario: {e}", case.file.display()))
}

/// Play one scenario against a harness and judge it.
pub fn run_case(case: &Case, harness: &Harness) -> CaseResult {
    let started = Instant::now();
    let (verdict, observations, warnings) = match scenario_of(case) {
        Err(message) => (Verdict::Error { message }, vec![], vec![]),
        Ok(sc) => match play(sc, harness) {
            Err(message) => (Verdict::Error { message }, vec![], vec![]),
            Ok((played, stderr, skip)) => {
                let observations = observe(&played);
                let (fail, warnings) = judge::judge(&played, &case_checks(case));
                let verdict = match (skip, fail) {
                    (Some(reason), _) => Verdict::Skip { reason },
                    (None, None) => Verdict::Pass,
                    (None, Some(f)) => Verdict::Fail(failure(case, f, &played, &stderr)),
                };
                (verdict, observations, warnings)
            }
        },
    };
    // What the harness said, as reports keep it (as every suite does): secrets redacted, texts
    // capped, values bounded, before anything is stored.
    let mut verdict = verdict;
    crate::run::contain_verdict(&mut verdict);
    let observations = observations
        .into_iter()
        .map(|o| Observation {
            value: crate::snapshot::contain(&o.value),
            ..o
        })
        .collect();
    let warnings = warnings
        .iter()
        .map(|w| crate::snapshot::contain_text(w))
        .collect();
    CaseResult::of(case, verdict, observations, warnings, started)
}

fn case_checks(case: &Case) -> Vec<Value> {
    case.member("scenario")
        .and_then(|s| s.get("checks"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn failure(case: &Case, f: judge::Fail, played: &judge::Played, stderr: &[String]) -> Failure {
    let cite = if f.cite.is_empty() {
        case.spec.clone()
    } else {
        format!("{} {}", judge::spec_file(), f.cite)
    };
    // Evidence: the harness's last frames and its stderr.
    let mut last: Vec<Value> = played
        .log
        .iter()
        .rev()
        .filter(|e| e["via"] != "frame" || e["frame"]["t"] != "ping")
        .take(8)
        .map(|e| crate::snapshot::contain(&trim(e)))
        .collect();
    last.reverse();
    Failure {
        step: 0,
        action: f.check.clone(),
        path: String::new(),
        message: format!("{} [{}; cites {cite}]", f.message, f.check),
        expected: crate::snapshot::contain(&f.expected),
        actual: json!({
            "saw": crate::snapshot::contain(&trim(&f.actual)),
            "lastEvents": last,
            "stderr": stderr,
            "deadlineHit": played.deadline_hit,
        }),
    }
}

/// Long strings shortened, so that evidence and snapshots stay readable.
fn trim(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > 200 => json!(format!("<{} bytes>", s.len())),
        Value::Array(a) => Value::Array(a.iter().map(trim).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), trim(v))).collect()),
        other => other.clone(),
    }
}

/// The frames and gate calls, normalised for snapshots: no times, no request ids, no tokens,
/// no pings or renewals (their number depends on timing).
fn observe(p: &judge::Played) -> Vec<Observation> {
    let mut renew_ids = std::collections::BTreeSet::new();
    // A cancelled call may be answered or abandoned first, as the race goes: keep neither.
    let cancelled: std::collections::BTreeSet<String> = p
        .log
        .iter()
        .filter(|e| e["via"] == "gate-cancel")
        .filter_map(|e| e["key"].as_str().map(str::to_string))
        .collect();
    let mut out = Vec::new();
    for e in &p.log {
        let mut e = trim(e);
        let Some(o) = e.as_object_mut() else { continue };
        for k in [
            "at",
            "answeredAt",
            "answeredSeq",
            "abandonedAt",
            "conn",
            "silentMs",
        ] {
            o.remove(k);
        }
        if o.get("key")
            .and_then(Value::as_str)
            .is_some_and(|k| cancelled.contains(k))
        {
            o.remove("status");
            o.remove("answer");
        }
        if let Some(f) = o.get_mut("frame").and_then(Value::as_object_mut) {
            let key = (f.get("id").map(Value::to_string), f.get("t").cloned());
            if f.get("t") == Some(&json!("ping")) {
                continue;
            }
            if f.get("m") == Some(&json!("lease.renew")) {
                renew_ids.insert(key.0.clone());
                continue;
            }
            if f.get("t") == Some(&json!("res")) && renew_ids.contains(&key.0) {
                continue;
            }
            f.remove("id");
            if let Some(token) = f
                .get_mut("r")
                .and_then(|r| r.get_mut("run"))
                .and_then(|r| r.get_mut("token"))
            {
                *token = json!("[token]");
            }
            if let Some(token) = f.get_mut("r").and_then(|r| r.get_mut("token")) {
                *token = json!("[token]");
            }
        }
        if o.get("via") == Some(&json!("core"))
            && matches!(
                o.get("event").and_then(Value::as_str),
                Some("closed" | "end" | "transport-error")
            )
        {
            continue;
        }
        let action = o
            .remove("via")
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        out.push(Observation {
            step: out.len(),
            action,
            value: e,
        });
    }
    out
}

/// Play the scenario: core and gates on fresh loopback ports, the harness started, triggers
/// fired, until every offered run is over (and a short settle) or the deadline.
pub(crate) fn play(
    sc: Scenario,
    harness: &Harness,
) -> Result<(judge::Played, Vec<String>, Option<String>), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start a runtime: {e}"))?;
    rt.block_on(async move {
        let sc = Arc::new(sc);
        let core = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let gates = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| e.to_string())?;
        let env = launch::LaunchEnv {
            core_url: format!(
                "ws://{}{}",
                core.local_addr().map_err(|e| e.to_string())?,
                core::PATH
            ),
            token: format!(
                "nylorun-ht-{:x}",
                std::process::id() as u64
                    ^ Instant::now().elapsed().as_nanos() as u64
                    ^ 0x9e37_79b9_7f4a_7c15
            ),
            gates_url: format!("http://{}", gates.local_addr().map_err(|e| e.to_string())?),
            name: sc.harness.clone(),
        };
        let (acts, mut acts_rx) = tokio::sync::mpsc::unbounded_channel();
        let w = Arc::new(std::sync::Mutex::new(World::new(
            sc.clone(),
            env.token.clone(),
            acts.clone(),
        )));
        let core_task = tokio::spawn(core::serve(core, w.clone()));
        let gates_task = tokio::spawn({
            let router = gates::router(w.clone());
            async move { axum::serve(gates, router).await }
        });
        for t in sc.on.iter().filter(|t| t.when.after_ms.is_some()) {
            let acts = acts.clone();
            let (ms, act) = (t.when.after_ms.unwrap_or(0), t.act.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                let _ = acts.send(Act::Do(act));
            });
        }
        let mut running = Some(harness.start(&env)?);
        let mut stderr = Vec::new();
        let deadline = tokio::time::sleep(Duration::from_millis(sc.deadline_ms));
        tokio::pin!(deadline);
        let mut settled_since: Option<Instant> = None;
        let mut deadline_hit = false;
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        loop {
            tokio::select! {
                _ = &mut deadline => { deadline_hit = true; break }
                Some(Act::Do(a)) = acts_rx.recv() => {
                    if a == "kill" {
                        lock(&w).record(json!({ "via": "core", "event": "kill" }));
                        if let Some(r) = running.take() {
                            stderr.extend(r.stop(true));
                        }
                        running = Some(harness.start(&env)?);
                    } else {
                        act(&w, &a);
                    }
                }
                _ = tick.tick() => {
                    let done = lock(&w).finished();
                    match (done, settled_since) {
                        (true, None) => settled_since = Some(Instant::now()),
                        (true, Some(t)) if t.elapsed() >= Duration::from_millis(SETTLE_MS) => break,
                        (false, _) => settled_since = None,
                        _ => {}
                    }
                }
            }
        }
        let end = {
            let mut g = lock(&w);
            let end =
                g.record(json!({ "via": "core", "event": "end", "deadlineHit": deadline_hit }));
            g.frozen = true;
            for c in g.conns.values() {
                let _ =
                    c.tx.send(tokio_tungstenite::tungstenite::Message::Close(None));
            }
            end
        };
        if let Some(r) = running.take() {
            let lines = tokio::task::spawn_blocking(move || r.stop(false))
                .await
                .unwrap_or_default();
            stderr.extend(lines);
        }
        core_task.abort();
        gates_task.abort();
        let g = lock(&w);
        let ended_at = |id: &str| {
            g.log
                .iter()
                .position(|e| e["event"] == "run-ended" && e["run"] == id)
        };
        let runs = g
            .runs
            .iter()
            .map(|r| judge::RunInfo {
                id: r.id.clone(),
                turn_id: r.turn_id.clone(),
                segment: r.segment,
                start: r.start.clone(),
                ended: r.ended.clone(),
                ended_at: ended_at(&r.id),
            })
            .collect();
        // What happened until the end; the closing itself is not the harness's doing.
        let played = judge::Played {
            log: g.log[..=end].to_vec(),
            runs,
            harness: sc.harness.clone(),
            deadline_hit,
        };
        Ok((played, stderr, g.skip.clone()))
    })
}

/// How long a finished scenario stays open for late frames (a harness that ignores the end).
pub const SETTLE_MS: u64 = 150;

/// A trigger's act: cancel the run held now, drop its connection, or send a frame.
fn act(w: &world::Shared, a: &Value) {
    let mut g = lock(w);
    let held = g.active_run().map(|r| (r.id.clone(), r.conn));
    let conn = held
        .as_ref()
        .map(|h| h.1)
        .or_else(|| g.conns.keys().last().copied());
    let Some(conn) = conn else { return };
    if let Some(reason) = a.get("cancel").and_then(Value::as_str) {
        if let Some((run, _)) = held {
            g.send(conn, json!({ "t": "msg", "m": "cancel", "p": { "runId": run, "reason": reason, "message": "hcpspec scenario" } }));
        }
    } else if a == "drop" {
        g.record(json!({ "via": "core", "event": "drop", "conn": conn, "scripted": true }));
        if let Some(c) = g.conns.get(&conn) {
            let _ =
                c.tx.send(tokio_tungstenite::tungstenite::Message::Close(None));
        }
        g.lost(conn);
    } else if let Some(f) = a.get("send") {
        g.send(conn, f.clone());
    } else if let Some(t) = a.get("sendBinary").and_then(Value::as_str) {
        g.record(json!({ "via": "core-raw", "conn": conn, "binary": t }));
        if let Some(c) = g.conns.get(&conn) {
            let _ = c.tx.send(tokio_tungstenite::tungstenite::Message::binary(
                t.as_bytes().to_vec(),
            ));
        }
    } else if let Some(t) = a.get("sendText").and_then(Value::as_str) {
        g.record(json!({ "via": "core-raw", "conn": conn, "text": t }));
        if let Some(c) = g.conns.get(&conn) {
            let _ =
                c.tx.send(tokio_tungstenite::tungstenite::Message::text(t.to_string()));
        }
    }
}
