//! The checks of every scenario, each the invariant of one cited sentence of spec 004 (their
//! names and cites: the table in `judge`).

use super::view::{effect_gate, entries, offered, summary_call, Req, View};
use super::{fail, Fail};
use crate::suites::world::model::effect_id;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// A cap hcpspec holds a harness to (docs/security.md): its messages' bytes in a scenario, what
/// core may queue to a connection that does not read, a gate body's size and deadline.
pub(super) fn within_caps(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    match v.p.log.iter().find(|e| e["via"] == "cap") {
        Some(e) => Err(fail(
            "within-caps",
            format!(
                "a cap hcpspec holds a harness to was hit: {}",
                e["reason"].as_str().unwrap_or("")
            ),
            json!("within hcpspec's caps (docs/security.md)"),
            e.clone(),
        )),
        None => Ok(()),
    }
}

pub(super) fn connects(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    if v.p
        .log
        .iter()
        .any(|e| e["via"] == "upgrade" && e["status"] == 101)
    {
        return Ok(());
    }
    let tried: Vec<&Value> = v.p.log.iter().filter(|e| e["via"] == "upgrade").collect();
    Err(fail(
        "connects",
        if tried.is_empty() {
            "the harness never connected to NYLORUN_CORE_URL"
        } else {
            "no upgrade of the harness was accepted"
        },
        json!({ "path": crate::suites::world::core::PATH, "status": 101 }),
        json!(tried),
    ))
}

pub(super) fn upgrade_headers(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for e in v.p.log.iter().filter(|e| e["via"] == "upgrade") {
        if e["path"] != crate::suites::world::core::PATH
            || e["auth"] != "ok"
            || e["apiHeader"] != "1"
        {
            return Err(fail(
                "upgrade-headers",
                format!("an upgrade was refused with {}", e["status"]),
                json!({ "path": crate::suites::world::core::PATH, "auth": "ok", "apiHeader": "1" }),
                e.clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn one_json(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    match v.p.log.iter().find(|e| e["via"] == "bad-frame") {
        Some(e) => Err(fail(
            "one-json-text-message",
            format!(
                "a frame that is not one JSON text message of FrameSchema: {}",
                e["reason"].as_str().unwrap_or("")
            ),
            json!("one JSON text message per frame: req, res, msg, abort or ping"),
            e.clone(),
        )),
        None => Ok(()),
    }
}

pub(super) fn ids_per_sender(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    // An id may not name two of the harness's requests in flight on one connection.
    let mut open: BTreeSet<(u64, String)> = BTreeSet::new();
    for e in &v.p.log {
        if e["via"] != "frame" {
            continue;
        }
        let key = (
            e["conn"].as_u64().unwrap_or(0),
            e["frame"]["id"].to_string(),
        );
        match (e["from"].as_str(), e["frame"]["t"].as_str()) {
            (Some("harness"), Some("req")) if !open.insert(key.clone()) => {
                return Err(fail(
                    "ids-per-sender",
                    format!("request id {} is already in flight", key.1),
                    json!("a fresh id per request in flight"),
                    e["frame"].clone(),
                ));
            }
            (Some("core"), Some("res")) => {
                open.remove(&key);
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn hello(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    let mut firsts: BTreeMap<u64, &Value> = BTreeMap::new();
    for r in v.reqs() {
        firsts.entry(r.conn).or_insert(r.f);
    }
    static NAME_RULE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let name_rule =
        NAME_RULE.get_or_init(|| regex::Regex::new("^[a-z][a-z0-9-]{1,62}$").expect("static"));
    for f in firsts.values() {
        if f["m"] != "hello" {
            return Err(fail(
                "hello-first",
                "the first request is not hello",
                json!({ "m": "hello" }),
                (*f).clone(),
            ));
        }
        if f["p"]["api"] != 5 {
            return Err(fail(
                "hello-api-5",
                "hello names another api",
                json!({ "api": 5 }),
                f["p"].clone(),
            ));
        }
        let name = f["p"]["name"].as_str().unwrap_or_default();
        if !name_rule.is_match(name) || name != v.p.harness {
            return Err(fail(
                "hello-name",
                "hello names another harness than the credential's (HARNESS_NAME)",
                json!({ "name": v.p.harness }),
                f["p"].clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn journaled_first(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    // The first intent answered `execute`, by run and effect id.
    let mut first: BTreeMap<(&str, String), usize> = BTreeMap::new();
    for (r, id, a) in v.intents() {
        if let (Some(run), Some(a)) = (r.f["p"]["runId"].as_str(), a) {
            if a["r"]["status"] == "execute" {
                first.entry((run, id)).or_insert(r.at);
            }
        }
    }
    for (i, g) in v.effect_gates() {
        let key = g["key"].as_str().unwrap_or_default();
        let run = g["run"].as_str().unwrap_or_default();
        let ok = first.get(&(run, key.to_string())).is_some_and(|at| *at < i);
        if !ok {
            return Err(fail(
                "journaled-first",
                format!(
                    "a {} call under key {key} that no intent of its run had answered execute",
                    g["route"].as_str().unwrap_or("")
                ),
                json!("effect.intent answered {status: \"execute\"} before the gate call"),
                g.clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn idempotency_key(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for (_, g) in v.effect_gates() {
        let key = g["key"].as_str();
        let eid = g["body"]["effectId"].as_str();
        if key.is_none() || (eid.is_some() && key != eid) {
            return Err(fail(
                "idempotency-key",
                "a gate call without Idempotency-Key equal to its effect id",
                json!({ "key": eid }),
                g.clone(),
            ));
        }
    }
    Ok(())
}

/// The log index of the nth renewal answer that switched `run`'s token, and its connection.
fn switch_answer(v: &View, run: &str, nth: u64) -> Option<(usize, u64)> {
    v.reqs_about(run)
        .filter(|r| r.f["m"] == "lease.renew")
        .filter_map(|r| {
            let (at, a) = v.answer_at(&r)?;
            a["r"]["token"].is_string().then_some((at, r.conn))
        })
        .nth(nth.checked_sub(1)? as usize)
}

pub(super) fn run_token(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for (at, g) in v.gates() {
        // A gate call travels on a connection of its own: one the harness began before it read
        // the switch can reach the gate after anything it sends on the socket later. An old
        // token is late only on a call the harness made in answer to core's `execute`, sent after
        // the switch's answer on the same socket (read in order, the switch came first).
        if g["auth"] == "old" {
            let late = g["run"].as_str().is_some_and(|run| {
                let switch = g["replacedBy"]
                    .as_u64()
                    .and_then(|nth| switch_answer(v, run, nth));
                let execute = executed_by(v, run, g["key"].as_str(), at);
                matches!((switch, execute), (Some((s, c)), Some((e, d))) if c == d && e > s)
            });
            if !late {
                continue;
            }
        }
        if g["auth"] != "current" {
            return Err(fail(
                "run-token",
                format!(
                    "a gate call with a {} run token",
                    g["auth"].as_str().unwrap_or("")
                ),
                json!({ "auth": "the run's current token" }),
                g.clone(),
            ));
        }
    }
    Ok(())
}

/// The log index and connection of core's last `execute` answer, before `before`, to `run`'s
/// intent for the effect `key`: what a gate call for that effect was made in answer to.
fn executed_by(v: &View, run: &str, key: Option<&str>, before: usize) -> Option<(usize, u64)> {
    let key = key?;
    v.reqs_about(run)
        .filter(|r| {
            r.f["m"] == "effect.intent" && effect_id(&r.f["p"]["effect"]).as_deref() == Some(key)
        })
        .filter_map(|r| {
            let (i, a) = v.answer_at(&r)?;
            (a["r"]["status"] == "execute" && i < before).then_some((i, r.conn))
        })
        .max()
}

pub(super) fn effect_id_shape(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for (r, id, _) in v.intents() {
        let Some(run) = v.run_of(&r) else { continue };
        let kind = r.f["p"]["effect"]["kind"].as_str().unwrap_or_default();
        let prefix = format!("{}:{}:{kind}:", run.turn_id, run.segment);
        if !id.starts_with(&prefix) || id.len() == prefix.len() {
            return Err(fail(
                "effect-id-shape",
                format!("effect id `{id}` is not {prefix}<identity>"),
                json!(format!("{prefix}<identity>")),
                r.f["p"]["effect"].clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn model_without_input(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for (r, _, _) in v.intents() {
        let e = &r.f["p"]["effect"];
        if e["kind"] == "model" && e.get("input").is_some() {
            return Err(fail(
                "model-intent-without-input",
                "a model intent sent with its input",
                json!({ "input": "absent" }),
                e.clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn replay_without_asking(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for (r, id, _) in v.intents() {
        let Some(run) = v.run_of(&r) else { continue };
        let replayed = run.start["outcomes"]
            .as_array()
            .is_some_and(|o| o.iter().any(|o| o["effectId"] == id.as_str()));
        if replayed {
            return Err(fail(
                "replay-without-asking",
                format!("an intent for {id}, whose outcome TurnStart.outcomes carries"),
                json!("no intent: the outcome is replayed"),
                r.f.clone(),
            ));
        }
    }
    Ok(())
}

/// What an intent asked for, as far as it can be seen: its effect, and for a model effect the
/// ModelCall its run sent the Model Gate under that key after it (`None` when it sent none).
fn request_of<'a>(v: &View<'a>, r: &Req<'a>, id: &str) -> (&'a Value, Option<&'a Value>) {
    let effect = &r.f["p"]["effect"];
    if effect["kind"] != "model" {
        return (effect, Some(effect));
    }
    let run = r.f["p"]["runId"].as_str().unwrap_or_default();
    let call = v
        .gates_about(run)
        .find(|(i, g)| *i > r.at && g["route"] == "model-calls" && g["key"] == id)
        .and_then(|(_, g)| g["body"].get("call"));
    (effect, call)
}

pub(super) fn request_hash(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    // Each effect id's earlier intents: (hash, params, effect, ModelCall if seen).
    type Asked<'a> = (String, &'a Value, &'a Value, Option<&'a Value>);
    let mut by_id: BTreeMap<String, Vec<Asked>> = BTreeMap::new();
    let mut by_hash: BTreeMap<String, String> = BTreeMap::new();
    for (r, id, _) in v.intents() {
        let hash = r.f["p"]["requestHash"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let (effect, call) = request_of(v, &r, &id);
        let model = effect["kind"] == "model";
        for (h, first, e0, c0) in by_id.get(&id).into_iter().flatten() {
            // The same request: the same effect, and for a model effect the same ModelCall
            // (unknown when one of them reached no gate: then it is not judged).
            let calls = match (c0, call) {
                (Some(a), Some(b)) => Some(a == &b),
                _ => None,
            };
            let same = *e0 == effect && (!model || calls == Some(true));
            let differs = *e0 != effect || calls == Some(false);
            if same && *h != hash {
                return Err(fail(
                    "request-hash",
                    format!(
                        "effect {id} asked again for the same request with another request hash"
                    ),
                    (*first).clone(),
                    r.f["p"].clone(),
                ));
            }
            if differs && *h == hash {
                return Err(fail(
                    "request-hash",
                    format!(
                        "effect {id} asked again for another request ({}) with the same request hash",
                        if *e0 != effect { "another effect" } else { "another ModelCall" }
                    ),
                    json!({ "first": first, "ModelCall": c0 }),
                    json!({ "again": r.f["p"], "ModelCall": call }),
                ));
            }
        }
        if let Some(other) = by_hash.get(&hash).filter(|o| **o != id) {
            return Err(fail(
                "request-hash",
                format!(
                    "effects {other} and {id} have one request hash, though their requests differ"
                ),
                json!("a hash over the whole request"),
                r.f["p"].clone(),
            ));
        }
        by_id
            .entry(id.clone())
            .or_default()
            .push((hash.clone(), &r.f["p"], effect, call));
        by_hash.insert(hash, id);
    }
    Ok(())
}

/// Where the harness shows it has read what core sent on `conn` after `from`: its answer to a
/// ping or request core sent after it (frames on a connection arrive in order).
fn read_past(v: &View, from: usize, conn: u64) -> Option<usize> {
    let mut pinged = false;
    let mut asked = BTreeSet::new();
    for (i, e) in v.p.log.iter().enumerate().skip(from + 1) {
        if e["conn"].as_u64() != Some(conn) {
            continue;
        }
        let f = &e["frame"];
        match (e["via"].as_str(), e["from"].as_str()) {
            (Some("frame"), Some("core")) if f["t"] == "ping" => pinged = true,
            (Some("frame"), Some("core")) if f["t"] == "req" => {
                asked.insert(f["id"].to_string());
            }
            (Some("frame"), Some("harness")) if f["t"] == "ping" && pinged => return Some(i),
            (Some("frame"), Some("harness"))
                if f["t"] == "res" && asked.contains(&f["id"].to_string()) =>
            {
                return Some(i)
            }
            (Some("pong"), _) if pinged => return Some(i),
            _ => {}
        }
    }
    None
}

pub(super) fn nothing_after_end(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for run in &v.p.runs {
        let Some(ended) = run.ended_at else { continue };
        // A harness learns of a refused renewal when it reads the answer: what it sent before
        // crosses it (the more so on a loaded machine). Its requests are late once it has shown
        // it read past the refusal; an output or release is its own doing, late at once.
        let refused = run.ended.as_ref().is_some_and(|e| e.1 == "renew-refused");
        let end = if refused {
            let conn = v.p.log[ended]["conn"].as_u64().unwrap_or(0);
            match read_past(v, ended, conn) {
                Some(i) => i,
                None => continue,
            }
        } else {
            ended
        };
        // A renewal that crosses the end is harmless; so is what crosses core closing the
        // connection (the harness learns of a lost connection only when it closes).
        let lost_conn = (run.ended.as_ref().map(|e| e.1.as_str()) == Some("connection.lost"))
            .then(|| v.p.log[end]["conn"].as_u64())
            .flatten();
        let late = v
            .reqs_about(&run.id)
            .find(|r| r.at > end && r.f["m"] != "lease.renew" && Some(r.conn) != lost_conn);
        if let Some(r) = late {
            return Err(fail(
                "nothing-after-the-end",
                format!(
                    "`{}` about {} after it ended ({})",
                    r.f["m"].as_str().unwrap_or(""),
                    run.id,
                    run.ended.as_ref().map_or("", |e| e.1.as_str())
                ),
                json!("nothing about a run after its output, release or refused renewal"),
                r.f.clone(),
            ));
        }
        // Only the harness's own ends hold its gate calls. One for a run whose connection core
        // dropped may cross the close (the gate answers it run_stale). After a refused renewal,
        // core answers no intent `execute`, so every gate call for the run answers one sent
        // before the refusal, and travels on a connection of its own: it may cross the refusal
        // however late it arrives.
        let late_gate = v
            .gates_about(&run.id)
            .find(|(i, g)| *i > end && effect_gate(g) && lost_conn.is_none() && !refused);
        if let Some((_, g)) = late_gate {
            return Err(fail(
                "nothing-after-the-end",
                format!("a gate call for {} after it ended", run.id),
                json!("no gate call for a run that is over"),
                g.clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn runs_end(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for run in &v.p.runs {
        if run.ended.is_none() {
            return Err(fail(
                "runs-end",
                format!(
                    "{} was still held when the scenario ended{}",
                    run.id,
                    if v.p.deadline_hit {
                        " at its deadline"
                    } else {
                        ""
                    }
                ),
                json!("one output (or a release) per run"),
                json!({ "run": run.id, "turnId": run.turn_id }),
            ));
        }
    }
    Ok(())
}

pub(super) fn state(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for r in v.reqs_of("output") {
        let limit = v
            .run_of(&r)
            .map_or(u64::MAX, |run| run.limit("harnessStateBytes"));
        match r.f["p"].get("state") {
            None => {
                return Err(fail(
                    "state-every-segment",
                    "an output with no state",
                    json!({ "state": "present" }),
                    r.f["p"].clone(),
                ))
            }
            Some(s) if s.to_string().len() as u64 > limit => {
                return Err(fail(
                    "state-every-segment",
                    format!(
                        "state of {} bytes past harnessStateBytes {limit}",
                        s.to_string().len()
                    ),
                    json!({ "harnessStateBytes": limit }),
                    json!({ "stateBytes": s.to_string().len() }),
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn record_entry(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for r in v.reqs() {
        let Some(run) = v.run_of(&r) else { continue };
        let limit = run.limit("recordEntryBytes");
        // "one entry of the record, as JSON: an effect.outcome value, a transcript update": a
        // transcript entry, and each TranscriptUpdate that carries entries (§ 3, § 6).
        let sized: Vec<(&str, &Value)> = match r.f["m"].as_str() {
            Some("effect.outcome") => r.f["p"]
                .get("value")
                .into_iter()
                .map(|x| ("effect.outcome value", x))
                .collect(),
            Some("output") => entries(&r.f["p"])
                .into_iter()
                .map(|x| ("transcript entry", x))
                .chain(
                    r.f["p"]["transcript"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|u| ("transcript update", u)),
                )
                .collect(),
            _ => vec![],
        };
        for (what, s) in sized {
            let n = s.to_string().len() as u64;
            if n > limit {
                return Err(fail(
                    "record-entry-bytes",
                    format!("a {what} of {n} bytes past recordEntryBytes {limit}"),
                    json!({ "recordEntryBytes": limit }),
                    json!({ "bytes": n }),
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn transcript_kinds(v: &View, w: &mut Vec<String>) -> Result<(), Fail> {
    const KINDS: [&str; 5] = ["input", "candidate", "tool-results", "final", "compaction"];
    for r in v.reqs_of("output") {
        if !r.f["p"]["transcript"].is_array() && r.f["p"].get("transcript").is_some() {
            w.push(
                "output.transcript is not a list of TranscriptUpdates {keep, entries, length}"
                    .into(),
            );
        }
        for e in entries(&r.f["p"]) {
            if !e["kind"].as_str().is_some_and(|k| KINDS.contains(&k)) {
                return Err(fail(
                    "transcript-kinds",
                    format!("a transcript entry of kind {}", e["kind"]),
                    json!(KINDS),
                    e.clone(),
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn tool_names(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for t in offered(v) {
        if t["name"].as_str().is_some_and(|n| n.chars().count() > 64) {
            return Err(fail(
                "tool-names-64",
                "a tool named past 64 characters",
                json!("at most 64 characters"),
                t.clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn disabled_tools(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    // A disabled tool is known by what the harness cannot rename without misleading the model:
    // its description, or its input schema where no enabled tool shares it (names are free).
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for run in &v.p.runs {
        for s in run.start["mcp"]["servers"].as_array().into_iter().flatten() {
            for t in s["tools"].as_array().into_iter().flatten() {
                if t["enabled"] == false {
                    off.push(t);
                } else {
                    on.push(t);
                }
            }
        }
    }
    let schema_of = |t: &Value| t.get("inputSchema").filter(|s| s.is_object()).cloned();
    for t in offered(v) {
        let d = t["description"].as_str().unwrap_or_default();
        let by_description = off.iter().any(|x| {
            x["description"]
                .as_str()
                .is_some_and(|x| !x.is_empty() && d.contains(x))
        });
        let schema = ["inputSchema", "input_schema", "parameters", "schema"]
            .iter()
            .find_map(|k| t.get(*k).filter(|s| s.is_object()));
        let by_schema = schema.is_some_and(|s| {
            off.iter().any(|x| schema_of(x).as_ref() == Some(s))
                && !on.iter().any(|x| schema_of(x).as_ref() == Some(s))
        });
        if by_description || by_schema {
            return Err(fail(
                "disabled-tools-skipped",
                format!(
                    "the model was offered a tool the turn disabled (known by its {})",
                    if by_description {
                        "description"
                    } else {
                        "input schema"
                    }
                ),
                json!("no disabled tool, under any name"),
                t.clone(),
            ));
        }
    }
    Ok(())
}

pub(super) fn model_call_bytes(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for (_, g) in v.gates().filter(|(_, g)| g["route"] == "model-calls") {
        let Some(run) = g["run"].as_str().and_then(|id| v.run(id)) else {
            continue;
        };
        let limit = run.limit("modelCallBytes");
        let n = g["body"].to_string().len() as u64;
        if n > limit {
            return Err(fail(
                "model-call-bytes",
                format!("a model call body of {n} bytes past modelCallBytes {limit}"),
                json!({ "modelCallBytes": limit }),
                json!({ "bytes": n }),
            ));
        }
    }
    Ok(())
}

pub(super) fn chunk_bytes(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    for r in v.reqs() {
        let Some(run) = v.run_of(&r) else { continue };
        let limit = run.limit("chunkBytes");
        let p = &r.f["p"];
        let asked = match r.f["m"].as_str() {
            Some("definition.file" | "artifact.read") => p["length"].as_u64().unwrap_or(0),
            Some("artifact.write") => p["base64"].as_str().map_or(0, |b| (b.len() as u64 / 4) * 3),
            _ => 0,
        };
        // base64 of n bytes is 4*ceil(n/3) long: allow its padding.
        if asked > limit + 2 {
            return Err(fail(
                "chunk-bytes",
                format!(
                    "`{}` of {asked} bytes past chunkBytes {limit}",
                    r.f["m"].as_str().unwrap_or("")
                ),
                json!({ "chunkBytes": limit }),
                json!({ "bytes": asked }),
            ));
        }
    }
    Ok(())
}

pub(super) fn traceparent(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    // Every gate call: discovery, effects and their cancel routes.
    let calls =
        v.p.log
            .iter()
            .filter(|e| e["via"] == "gate" || e["via"] == "gate-cancel");
    for g in calls {
        let Some(run) = g["run"].as_str().and_then(|id| v.run(id)) else {
            continue;
        };
        if let Some(tp) = run.start["trace"]["traceparent"].as_str() {
            if g["traceparent"] != tp {
                return Err(fail(
                    "traceparent",
                    "a gate call without the turn's traceparent",
                    json!({ "traceparent": tp }),
                    g.clone(),
                ));
            }
        }
    }
    Ok(())
}

/// The sandbox's tools, asked for only when the turn has them: a sandbox call (one of the six
/// tools) only with `agent.sandbox` (§ 3 "Offer sandbox tools … only then"). A schedule_wake or
/// memory call without selfWake or memory is not the harness's fault: § 3 says "only then" of
/// sandbox tools alone, and core answers such a call with a failure (§ 4).
pub(super) fn tool_targets(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    const SANDBOX: [&str; 6] = ["bash", "read", "write", "edit", "grep", "glob"];
    for (r, id, _) in v.intents() {
        let Some(run) = v.run_of(&r) else { continue };
        let effect = &r.f["p"]["effect"];
        let t = &effect["target"];
        let s = &run.start;
        let why = match (t["kind"].as_str(), t["operation"].as_str()) {
            (Some("sandbox"), _) if s["agent"].get("sandbox").is_none_or(Value::is_null) => {
                "a sandbox call, though TurnStart's agent has no sandbox"
            }
            (Some("sandbox"), _)
                if !effect["toolName"]
                    .as_str()
                    .is_some_and(|n| SANDBOX.contains(&n)) =>
            {
                "a sandbox call whose toolName is none of bash, read, write, edit, grep, glob"
            }
            _ => continue,
        };
        return Err(fail(
            "tool-targets",
            format!("{why} ({id})"),
            json!({ "agent": s.get("agent"), "memory": s.get("memory") }),
            r.f["p"].clone(),
        ));
    }
    Ok(())
}

/// With `memory.access` read_only, no tool offered the model holds the memory tool's write
/// commands: found by its input schema (a `command` whose enum holds `view` and a write), since
/// its name is the harness's.
pub(super) fn memory_view_only(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    const WRITES: [&str; 5] = ["create", "str_replace", "insert", "delete", "rename"];
    for (_, g) in v.gates().filter(|(_, g)| g["route"] == "model-calls") {
        let Some(run) = g["run"].as_str().and_then(|id| v.run(id)) else {
            continue;
        };
        if run.start["memory"]["access"] != "read_only" {
            continue;
        }
        for t in g["body"]["call"]["tools"].as_array().into_iter().flatten() {
            let commands = ["inputSchema", "input_schema", "parameters", "schema"]
                .iter()
                .find_map(|k| t[*k]["properties"]["command"]["enum"].as_array());
            let writes = commands.is_some_and(|c| {
                c.iter().any(|x| x == "view")
                    && c.iter()
                        .any(|x| x.as_str().is_some_and(|x| WRITES.contains(&x)))
            });
            if writes {
                return Err(fail(
                    "memory-view-only",
                    "a memory tool offering writes, though memory.access is read_only",
                    json!({ "command": ["view"] }),
                    t.clone(),
                ));
            }
        }
    }
    Ok(())
}

/// A harness that compacts (none must): its compaction entry only first, in the edit that
/// replaced the history (`keep: 0`), that edit marked `kind: "compaction"` with facts whose
/// `summaryEffectIds` are this turn's completed model calls marked `purpose: "summary"`, in
/// the order they were asked.
pub(super) fn compaction(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    let bad = |message: String, expected: Value, actual: Value| {
        Err(fail("compaction", message, expected, actual))
    };
    for r in v.reqs_of("output") {
        let Some(run) = v.run_of(&r) else { continue };
        let updates: Vec<&Value> = r.f["p"]["transcript"]
            .as_array()
            .into_iter()
            .flatten()
            .collect();
        for (i, u) in updates.iter().enumerate() {
            let es = u["entries"].as_array().cloned().unwrap_or_default();
            for (j, e) in es.iter().enumerate() {
                if e["kind"] == "compaction" && (i != 0 || j != 0 || u["keep"] != 0) {
                    return bad(
                        "a compaction entry that is not first in the transcript".into(),
                        json!("the first entry of the edit that replaced the history (keep: 0)"),
                        json!({ "update": i, "entry": j, "keep": u["keep"] }),
                    );
                }
            }
        }
        let Some(first) = updates.first() else {
            continue;
        };
        let holds = first["entries"][0]["kind"] == "compaction";
        let marked = first["kind"] == "compaction";
        if !holds && !marked {
            continue;
        }
        if holds != marked {
            return bad(
                if holds {
                    "the edit that replaced the history is not marked kind: \"compaction\"".into()
                } else {
                    "an edit marked kind: \"compaction\" that holds no compaction entry first"
                        .into()
                },
                json!({ "kind": "compaction", "entries": [{ "kind": "compaction" }] }),
                json!({ "kind": first["kind"], "keep": first["keep"], "first": first["entries"][0]["kind"] }),
            );
        }
        let ids: Vec<&str> = first["compaction"]["summaryEffectIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        // This turn's summary calls, as they were asked, and whether each completed.
        let turn = format!("{}:", run.turn_id);
        let summaries: Vec<(String, bool)> = v
            .intents()
            .into_iter()
            .filter(|(q, id, _)| {
                q.at < r.at
                    && id.starts_with(&turn)
                    && q.f["p"]["effect"]["kind"] == "model"
                    && summary_call(q)
            })
            .map(|(_, id, a)| {
                let done = a.is_some_and(|a| a["r"]["status"] == "completed")
                    || v.reqs_of("effect.outcome").any(|o| {
                        o.at < r.at
                            && o.f["p"]["effectId"] == id.as_str()
                            && v.answer(&o).is_some_and(|a| a["ok"] == true)
                    });
                (id, done)
            })
            .collect();
        let order: Vec<&str> = summaries
            .iter()
            .filter(|(_, d)| *d)
            .map(|(id, _)| id.as_str())
            .collect();
        let named_in_order = ids.iter().all(|id| order.contains(id))
            && ids.windows(2).all(|w| {
                order.iter().position(|x| x == &w[0]) < order.iter().position(|x| x == &w[1])
            });
        if ids.is_empty() || !named_in_order {
            return bad(
                "the compaction's summaryEffectIds are not this turn's completed summary calls (model intents marked purpose: \"summary\"), in order".into(),
                json!({ "summaryEffectIds": order }),
                first["compaction"].clone(),
            );
        }
        // § 6 "compaction: {trigger, tokensBefore, tokensAfter, summaryEffectIds}".
        let facts = &first["compaction"];
        if !facts["trigger"].is_string()
            || !facts["tokensBefore"].is_number()
            || !facts["tokensAfter"].is_number()
        {
            return bad(
                "the compaction facts lack trigger, tokensBefore or tokensAfter".into(),
                json!({ "trigger": "a string", "tokensBefore": "a number", "tokensAfter": "a number" }),
                facts.clone(),
            );
        }
    }
    Ok(())
}

/// Fields the text does not list: warnings only.
pub(super) fn field_warnings(v: &View, w: &mut Vec<String>) {
    let listed: &[(&str, &[&str])] = &[
        ("hello", &["api", "name", "version", "features"]),
        ("lease", &[]),
        ("lease.renew", &["runId"]),
        ("lease.release", &["runId", "reason"]),
        ("effect.intent", &["runId", "effect", "requestHash"]),
        ("effect.outcome", &["runId", "effectId", "value", "error"]),
        ("transcript.read", &["runId"]),
        ("definition.file", &["runId", "sha256", "offset", "length"]),
        ("session.mcp", &["runId", "snapshot", "diagnostics"]),
    ];
    for r in v.reqs() {
        let m = r.f["m"].as_str().unwrap_or_default();
        if let (Some((_, keys)), Some(p)) =
            (listed.iter().find(|(n, _)| *n == m), r.f["p"].as_object())
        {
            for k in p.keys().filter(|k| !keys.contains(&k.as_str())) {
                let note = format!("`{m}` carries `{k}`, a field spec 004 does not list");
                if !w.contains(&note) {
                    w.push(note);
                }
            }
        }
    }
}
