//! The Harness API v5 suite, harness role (spec 004): hcpspec plays the Runtime's core and
//! gates, starts the harness under test per the launch contract, plays the scenario, and judges
//! every frame and gate call. docs/harness-api.md is the whole contract.

pub mod env;
pub mod fuzz;
pub mod judge;
pub mod launch;
pub mod reference;
pub mod selfcheck;
mod suite;
pub use suite::HarnessApi;

use crate::case::Case;
use crate::run::{CaseResult, Failure, Observation, Verdict};
use crate::suites::world::model::{self as world, lock, Act, World};
use crate::suites::world::role::Scripted;
pub use crate::suites::world::scenario::Asked;
use crate::suites::world::scenario::Scenario;
use crate::suites::world::{core, gates, time};
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

/// The scenario of a case, as the loader read it (`HarnessApi`'s `Format::parse`).
pub fn scenario_of(case: &Case) -> Option<&Arc<Scenario>> {
    case.parsed.get()
}

/// Play one scenario against a harness and judge it.
pub fn run_case(case: &Case, harness: &Harness) -> CaseResult {
    let started = Instant::now();
    let (verdict, observations, warnings) = match scenario_of(case) {
        None => {
            let message = format!("{}: not read as a harness-api case", case.file.display());
            (Verdict::Error { message }, vec![], vec![])
        }
        Some(sc) => match play(sc.clone(), harness) {
            Err(e) => {
                let message = e.to_string();
                (Verdict::Error { message }, vec![], vec![])
            }
            Ok((played, stderr, skip)) => {
                let observations = observe(&played);
                let (fail, warnings) = judge::judge(&played, &sc.checks);
                let verdict = match (skip, fail) {
                    _ if !sc.pods.is_empty() && !joined(&played) => Verdict::Unimplemented {
                        reason: NO_JOIN.into(),
                    },
                    (Some(reason), _) => Verdict::Skip { reason },
                    (None, None) => Verdict::Pass,
                    (None, Some(f)) => Verdict::Fail(failure(case, f, &played, &stderr)),
                };
                if !matches!(verdict, Verdict::Pass | Verdict::Skip { .. }) {
                    trace(&played.log);
                }
                (verdict, observations, warnings)
            }
        },
    };
    // What the harness said, as reports keep it (as every suite does): secrets redacted, texts
    // capped, values bounded, before anything is stored.
    let mut verdict = verdict;
    crate::run::contain_verdict(&mut verdict);
    // A chatty harness's frames and gate calls are kept within a budget, the drop counted (cut
    // by count before they are contained, which is the costly part).
    let (observations, dropped) = bounded(observations, crate::snapshot::contain);
    if let (Verdict::Fail(f), Some(d)) = (&mut verdict, &dropped) {
        f.actual["observationsDropped"] = d.clone();
    }
    let warnings = warnings
        .iter()
        .map(|w| crate::snapshot::contain_text(w))
        .collect();
    CaseResult::of(case, verdict, observations, warnings, started)
}

/// The case's wire trace, from the scenario's log (core's side, played by hcpspec, logs every
/// frame both ways, the upgrades and the gate calls, with their scenario time): what hcpspec
/// sent as core is `sent`, what the harness sent `received`. Parsed frames, as the log holds
/// them.
fn trace(log: &[Value]) {
    for e in log {
        let ms = e["at"].as_u64();
        let (dir, what, body) = match e["via"].as_str() {
            Some("frame") if e["from"] == "core" => (crate::trace::Dir::Sent, "ws", &e["frame"]),
            Some("frame") => (crate::trace::Dir::Received, "ws", &e["frame"]),
            Some("upgrade") => (crate::trace::Dir::Received, "ws upgrade", e),
            Some("gate") => (crate::trace::Dir::Received, "gate", e),
            _ => continue,
        };
        let method = match body["m"].as_str().or(body["t"].as_str()) {
            Some(m) if what == "ws" => format!("ws {m}"),
            _ => what.to_string(),
        };
        crate::trace::record_value(dir, &method, body, ms);
    }
}

/// A pod-host scenario whose harness never asked to join: it does not have the launch
/// contract's optional pod-host mode (docs/harness-api.md § 1), so the scenario never passes.
const NO_JOIN: &str = "the harness never POSTed /nylorun/harness/v1/host/join: launched as a pod's host (NYLORUN_JOIN_TOKEN …), it does not implement the launch contract's pod-host mode (docs/harness-api.md § 1)";

fn joined(p: &judge::Played) -> bool {
    p.log
        .iter()
        .any(|e| e["via"] == "host" && e["route"] == crate::suites::core_api::pods::JOIN)
}

/// What a scenario records of the traffic: its first [`OBSERVE_FIRST`] and last
/// [`OBSERVE_LAST`] observations, within [`OBSERVE_BYTES`] in all (a quarter of it for the
/// last); what is left out is one `dropped` observation between them, counted.
pub const OBSERVE_FIRST: usize = 200;
pub const OBSERVE_LAST: usize = 50;
pub const OBSERVE_BYTES: usize = 1 << 20;

fn bounded(
    obs: Vec<Observation>,
    contain: impl Fn(&Value) -> Value,
) -> (Vec<Observation>, Option<Value>) {
    let n = obs.len();
    let size = |o: &Observation| o.value.to_string().len() + o.action.len();
    // By count first: what is dropped is not contained, but its bytes are counted.
    let mut uncounted = 0;
    let obs: Vec<Observation> = obs
        .into_iter()
        .enumerate()
        .filter_map(|(i, o)| {
            if i < OBSERVE_FIRST || i >= n.saturating_sub(OBSERVE_LAST) {
                Some(Observation {
                    value: contain(&o.value),
                    ..o
                })
            } else {
                uncounted += size(&o);
                None
            }
        })
        .collect();
    let sizes: Vec<usize> = obs.iter().map(size).collect();
    let total: usize = sizes.iter().sum::<usize>() + uncounted;
    if obs.len() == n && total <= OBSERVE_BYTES {
        return (obs, None);
    }
    let kept_n = obs.len();
    // The last ones first, within their count and a quarter of the budget ...
    let (mut last, mut last_bytes) = (0, 0);
    for s in sizes.iter().rev().take(OBSERVE_LAST) {
        if last_bytes + s > OBSERVE_BYTES / 4 {
            break;
        }
        last += 1;
        last_bytes += s;
    }
    // ... then the first ones, within theirs and the rest of it.
    let (mut first, mut first_bytes) = (0, 0);
    for s in sizes[..kept_n - last].iter().take(OBSERVE_FIRST) {
        if first_bytes + s > OBSERVE_BYTES - last_bytes {
            break;
        }
        first += 1;
        first_bytes += s;
    }
    let dropped = json!({
        "observations": n - first - last,
        "bytes": total - first_bytes - last_bytes,
        "kept": format!("the first {first} and the last {last} of {n} ({OBSERVE_FIRST} and {OBSERVE_LAST} at most, {OBSERVE_BYTES} bytes in all)"),
    });
    let mut out = Vec::with_capacity(first + last + 1);
    let mut it = obs.into_iter();
    out.extend(it.by_ref().take(first));
    let step = out.last().map_or(0, |o| o.step + 1);
    out.push(Observation {
        step,
        action: "dropped".into(),
        value: dropped.clone(),
    });
    out.extend(it.skip(kept_n - first - last));
    (out, Some(dropped))
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
        // A pod host's renewals: their number depends on timing, as lease.renew's does.
        if e["via"] == "host" && e["route"] == crate::suites::core_api::pods::RENEW {
            continue;
        }
        // Ids are per connection: a harness started again numbers its requests from 1, and a
        // renewal's id on the first connection is another request's on the next.
        let conn = e["conn"].clone();
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
            let key = (
                (conn.to_string(), f.get("id").map(Value::to_string)),
                f.get("t").cloned(),
            );
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

/// Why a scenario could not be played: its verdict is an error, never a failure.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error("cannot start a runtime: {0}")]
    Runtime(std::io::Error),
    /// Core's or the gates' loopback port.
    #[error("{0}")]
    Port(std::io::Error),
    /// The harness would not start under the launch contract.
    #[error(transparent)]
    Start(#[from] launch::CannotStart),
}

/// Play the scenario: core and gates on fresh loopback ports, the harness started, triggers
/// fired, until every offered run is over (and a short settle) or the deadline.
pub(crate) fn play(
    sc: Arc<Scenario>,
    harness: &Harness,
) -> Result<(judge::Played, Vec<String>, Option<String>), PlayError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PlayError::Runtime)?;
    rt.block_on(async move {
        let core = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(PlayError::Port)?;
        let gates = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(PlayError::Port)?;
        let mut env = launch::LaunchEnv {
            core_url: format!(
                "ws://{}{}",
                core.local_addr().map_err(PlayError::Port)?,
                core::PATH
            ),
            token: harness_token(),
            gates_url: format!("http://{}", gates.local_addr().map_err(PlayError::Port)?),
            name: sc.harness.clone(),
            pod: None,
        };
        let (acts, mut acts_rx) = tokio::sync::mpsc::unbounded_channel();
        let w = Arc::new(std::sync::Mutex::new(World::new(
            sc.clone(),
            env.token.clone(),
            acts.clone(),
            Box::new(Scripted),
        )));
        // Its share of the process's budget of bytes, held until it is judged.
        let hold = crate::suites::world::budget::Hold::new();
        lock(&w).hold = hold.clone();
        seed_artifacts(&w, &sc);
        env.pod = pod_host(&w, &sc);
        let (core_task, gates_task, reached) = serve(core, gates, &w);
        // `afterMs` triggers, in the order they fire on the scenario's clock.
        let mut timed: Vec<(u64, Value)> = sc
            .on
            .iter()
            .filter_map(|t| Some((t.when.after_ms?, t.act.clone())))
            .collect();
        timed.sort_by_key(|(ms, _)| *ms);
        let mut timed = timed.into_iter().peekable();
        let mut running = Some(harness.start(&env).map_err(PlayError::Start)?);
        // Scenario time: what the machine made the scenario wait is not charged.
        let time = lock(&w).time().clone();
        let mut meter = time::Meter::start(&time);
        let mut clock = Clock::started(reached.load(std::sync::atomic::Ordering::SeqCst), time.now_ms());
        let mut stderr = Vec::new();
        let mut settled_since: Option<u64> = None;
        let mut deadline_hit = false;
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        loop {
            tokio::select! {
                Some(Act::Do(a)) = acts_rx.recv() => {
                    if a == "kill" {
                        lock(&w).record(json!({ "via": "core", "event": "kill" }));
                        if let Some(r) = running.take() {
                            stderr.extend(r.stop(true));
                        }
                        running = Some(harness.start(&env).map_err(PlayError::Start)?);
                        clock.restart(reached.load(std::sync::atomic::Ordering::SeqCst), time.now_ms());
                    } else {
                        act(&w, &a);
                    }
                }
                _ = tick.tick() => {
                    let reach = reached.load(std::sync::atomic::Ordering::SeqCst);
                    let gone = running.as_mut().is_some_and(|r| r.exited());
                    let pids = running.as_mut().map(|r| r.pids()).unwrap_or_default();
                    let now = clock.look(&mut meter, &pids, (reach, gone), sc.deadline_ms);
                    match clock.at(reach, gone, now) {
                        Now::Connecting => continue,
                        Now::NeverConnected => {
                            lock(&w).record(json!({ "via": "core", "event": "not-connected",
                                "allowanceMs": CONNECT_ALLOWANCE_MS, "exited": gone }));
                            deadline_hit = true;
                            break;
                        }
                        Now::At(ms) => {
                            // A wait for the budget is not the harness's time (`budget`).
                            let ms = ms.saturating_sub(hold.waited().as_millis() as u64);
                            while let Some((_, a)) = timed.next_if(|(at, _)| *at <= ms) {
                                let _ = acts.send(Act::Do(a));
                            }
                            if ms >= sc.deadline_ms {
                                deadline_hit = true;
                                break;
                            }
                        }
                    }
                    let done = lock(&w).finished();
                    match (done, settled_since) {
                        (true, None) => settled_since = Some(now),
                        (true, Some(t)) if now.saturating_sub(t) >= SETTLE_MS => break,
                        (false, _) => settled_since = None,
                        _ => {}
                    }
                }
            }
        }
        let end = close(&w, deadline_hit);
        if let Some(r) = running.take() {
            let lines = tokio::task::spawn_blocking(move || r.stop(false))
                .await
                .unwrap_or_default();
            stderr.extend(lines);
        }
        core_task.abort();
        gates_task.abort();
        let mut g = lock(&w);
        // What happened until the end, taken (not copied: it may hold 256 MiB of frames); the
        // closing itself is not the harness's doing.
        let mut log = g.take_log();
        log.truncate(end + 1);
        let ended_at = |id: &str| {
            log.iter()
                .position(|e| e["event"] == "run-ended" && e["run"] == id)
        };
        let runs = g
            .runs()
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
        let played = judge::Played {
            log,
            runs,
            harness: sc.harness.clone(),
            deadline_hit,
            hold: Some(hold),
        };
        Ok((played, stderr, g.skip().map(String::from)))
    })
}

/// The scenario's end: recorded (its place in the log returned), the world frozen, every
/// connection closed.
fn close(w: &world::Shared, deadline_hit: bool) -> usize {
    let mut g = lock(w);
    let end = g.record(json!({ "via": "core", "event": "end", "deadlineHit": deadline_hit }));
    g.freeze();
    for c in g.conns().values() {
        let _ =
            c.tx.send(tokio_tungstenite::tungstenite::Message::Close(None));
    }
    end
}

/// The session's file artifacts the scenario's `artifacts` lists, which its messages may name.
fn seed_artifacts(w: &world::Shared, sc: &Scenario) {
    for f in &sc.artifacts {
        let name = if f.name.is_empty() {
            &f.artifact_id
        } else {
            &f.name
        };
        crate::suites::world::artifacts::seed_file(
            &mut lock(w),
            &f.artifact_id,
            name,
            &f.content_type,
            &f.content(),
        );
    }
}

/// The pod-host mode (a scenario with `pods`): the harness is the first pod's host, launched
/// with its join parameters; the cadence it is told is logged for `hostRenews`.
fn pod_host(w: &world::Shared, sc: &Scenario) -> Option<launch::PodEnv> {
    let mut g = lock(w);
    let p = crate::suites::core_api::pods::environments(&g)
        .into_iter()
        .next()?;
    let text = |k: &str| p[k].as_str().unwrap_or_default().to_string();
    let renew_ms = sc.timers.host_renew_ms;
    g.record(json!({ "via": "core", "event": "pod-host", "renewMs": renew_ms }));
    Some(launch::PodEnv {
        sandbox_id: text("sandboxId"),
        pod_uid: text("podUid"),
        join_token: text("joinToken"),
        renew_ms,
    })
}

/// core's listener and the gates, on the scenario's runtime, counting the harness's contacts
/// (connections to core, gate calls): the scenario's clock runs only once a harness it started
/// has made one.
fn serve(
    core: tokio::net::TcpListener,
    gates: tokio::net::TcpListener,
    w: &world::Shared,
) -> (
    tokio::task::JoinHandle<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    let reached = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let core_task = tokio::spawn({
        let (w, reached) = (w.clone(), reached.clone());
        async move {
            let mut n = 0;
            while let Ok((stream, _)) = core.accept().await {
                n += 1;
                reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                // A pod's host joins and renews on the same port (§ 9).
                if lock(&w).scenario().pods.is_empty() {
                    tokio::spawn(core::connection(stream, n, w.clone()));
                } else {
                    tokio::spawn(crate::suites::core_api::pods::accept(stream, n, w.clone()));
                }
            }
        }
    });
    let gates_task = tokio::spawn({
        // A gate call is a harness's contact too: the clock runs from it as well.
        let reached = reached.clone();
        let router = gates::router(w.clone()).layer(axum::middleware::map_request(
            move |req: axum::extract::Request| {
                reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move { req }
            },
        ));
        async move { axum::serve(gates, router).await }
    });
    (core_task, gates_task, reached)
}

/// A harness token of its own for every scenario: 128 random bits and a count. (It was the pid
/// and a clock's few nanoseconds, so concurrent scenarios could share one, and their processes,
/// found by their token, be taken for each other's.)
fn harness_token() -> String {
    crate::adapter::reap::token("nylorun-ht-")
}

/// How long a finished scenario stays open for late frames (a harness that ignores the end), in
/// scenario time.
pub const SETTLE_MS: u64 = 150;

/// How long a harness may take to connect to core after each start (the first, and each
/// restart a scenario's `kill` makes), outside the scenario's clock: spec 004 says nothing of
/// start-up time, so a scenario judges only what a harness does once connected
/// (docs/harness-api.md § 1). A harness whose processes have all exited is not waited for.
/// In scenario time, as the deadline: a harness slow to start on a loaded machine is not judged
/// for the load.
pub const CONNECT_ALLOWANCE_MS: u64 = 30_000;

/// A scenario's clock, read on scenario time (ms, `world::time`): it runs from the harness's
/// first connection, and stands still from each restart until the restarted harness connects
/// (`deadlineMs` and `afterMs` are read on it).
struct Clock {
    /// Scenario time run before the pause, and when the clock last started.
    run_ms: u64,
    since: u64,
    /// Waiting for a connection past this count of connections, since this time.
    connecting: Option<(usize, u64)>,
}

#[derive(Debug, PartialEq)]
enum Now {
    Connecting,
    NeverConnected,
    At(u64),
}

impl Clock {
    fn started(reached: usize, now: u64) -> Clock {
        Clock {
            run_ms: 0,
            since: now,
            connecting: Some((reached, now)),
        }
    }

    /// A restart: the clock stands still until the harness connects again.
    fn restart(&mut self, reached: usize, now: u64) {
        if self.connecting.is_none() {
            self.run_ms += now.saturating_sub(self.since);
        }
        self.connecting = Some((reached, now));
    }

    /// Scenario time now (ms), from `meter`: a deadline is declared on the harness's waits read
    /// afresh.
    fn look(
        &mut self,
        meter: &mut time::Meter,
        pids: &[i32],
        (reached, exited): (usize, bool),
        deadline: u64,
    ) -> u64 {
        let now = meter.look(pids);
        match self.at(reached, exited, now) {
            Now::At(ms) if ms >= deadline => meter.look_closely(pids),
            _ => now,
        }
    }

    /// The scenario's time, given how many connections reached core, whether the harness
    /// has exited, and the scenario time now.
    fn at(&mut self, reached: usize, exited: bool, now: u64) -> Now {
        if let Some((before, waiting)) = self.connecting {
            if reached > before {
                self.connecting = None;
                self.since = now;
            } else if exited || now.saturating_sub(waiting) >= CONNECT_ALLOWANCE_MS {
                return Now::NeverConnected;
            } else {
                return Now::Connecting;
            }
        }
        Now::At(self.run_ms + now.saturating_sub(self.since))
    }
}

/// A trigger's act: cancel the run held now, drop its connection, or send a frame.
fn act(w: &world::Shared, a: &Value) {
    let mut g = lock(w);
    let held = g.active_run().map(|r| (r.id.clone(), r.conn));
    let conn = held
        .as_ref()
        .map(|h| h.1)
        .or_else(|| g.conns().keys().last().copied());
    let Some(conn) = conn else { return };
    if let Some(reason) = a.get("cancel").and_then(Value::as_str) {
        if let Some((run, _)) = held {
            g.send(conn, json!({ "t": "msg", "m": "cancel", "p": { "runId": run, "reason": reason, "message": "hcpspec scenario" } }));
        }
    } else if a == "drop" {
        g.record(json!({ "via": "core", "event": "drop", "conn": conn, "scripted": true }));
        if let Some(c) = g.conns().get(&conn) {
            let _ =
                c.tx.send(tokio_tungstenite::tungstenite::Message::Close(None));
        }
        g.lost(conn);
    } else if let Some(f) = a.get("send") {
        g.send(conn, f.clone());
    } else if let Some(t) = a.get("sendBinary").and_then(Value::as_str) {
        g.record(json!({ "via": "core-raw", "conn": conn, "binary": t }));
        if let Some(c) = g.conns().get(&conn) {
            let _ = c.tx.send(tokio_tungstenite::tungstenite::Message::binary(
                t.as_bytes().to_vec(),
            ));
        }
    } else if let Some(t) = a.get("sendText").and_then(Value::as_str) {
        g.record(json!({ "via": "core-raw", "conn": conn, "text": t }));
        if let Some(c) = g.conns().get(&conn) {
            // Counted as queued like every text core sends: the writer takes it off when sent.
            c.queued
                .fetch_add(t.len(), std::sync::atomic::Ordering::Relaxed);
            g.hold.take(t.len() as u64);
            let _ =
                c.tx.send(tokio_tungstenite::tungstenite::Message::text(t.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Clock, Now, CONNECT_ALLOWANCE_MS};

    /// A renewal's answer is left out of the observations (how many there are is timing), by
    /// its connection and id: a harness started again numbers its requests from 1, and another
    /// request's answer with a renewal's id of the first connection was left out with it, as
    /// many times as the renewals before the crash went (a snapshot that drifted in CI).
    #[test]
    fn a_renewals_id_on_one_connection_hides_no_answer_on_another() {
        use serde_json::json;
        let frame = |conn: u64, from: &str, f: serde_json::Value| json!({ "via": "frame", "conn": conn, "from": from, "frame": f });
        let played = crate::suites::harness_api::judge::Played {
            log: vec![
                frame(
                    1,
                    "harness",
                    json!({ "t": "req", "id": 7, "m": "lease.renew", "p": {} }),
                ),
                frame(
                    1,
                    "core",
                    json!({ "t": "res", "id": 7, "ok": true, "r": {} }),
                ),
                frame(
                    2,
                    "harness",
                    json!({ "t": "req", "id": 7, "m": "effect.outcome", "p": {} }),
                ),
                frame(
                    2,
                    "core",
                    json!({ "t": "res", "id": 7, "ok": true, "r": { "status": "completed" } }),
                ),
            ],
            runs: vec![],
            harness: String::new(),
            deadline_hit: false,
            hold: None,
        };
        let observed = super::observe(&played);
        let methods: Vec<String> = observed
            .iter()
            .map(|o| o.value["frame"]["m"].as_str().unwrap_or("res").to_string())
            .collect();
        assert_eq!(methods, ["effect.outcome", "res"], "{observed:?}");
    }

    #[test]
    fn the_clock_runs_on_scenario_time_from_the_first_connection() {
        let mut c = Clock::started(0, 100);
        assert_eq!(c.at(0, false, 5_000), Now::Connecting);
        assert_eq!(c.at(1, false, 6_000), Now::At(0));
        assert_eq!(c.at(1, false, 7_500), Now::At(1_500));
        // A restart stands the clock still until the harness connects again.
        c.restart(1, 8_000);
        assert_eq!(c.at(1, false, 20_000), Now::Connecting);
        assert_eq!(c.at(2, false, 21_000), Now::At(2_000));
        assert_eq!(c.at(2, false, 21_500), Now::At(2_500));
    }

    #[test]
    fn the_allowance_to_connect_is_scenario_time_too() {
        let mut c = Clock::started(0, 0);
        assert_eq!(c.at(0, false, CONNECT_ALLOWANCE_MS - 1), Now::Connecting);
        assert_eq!(c.at(0, false, CONNECT_ALLOWANCE_MS), Now::NeverConnected);
        let mut c = Clock::started(0, 0);
        assert_eq!(c.at(0, true, 1), Now::NeverConnected);
    }
}
