//! The judge of a played scenario: the checks of every scenario (each the invariant of one
//! cited sentence of spec 004), then the checks the scenario asks for. Only what the text fixes
//! is asserted; a field the text does not list is a warning, never a failure.

use crate::suites::world::model::effect_id;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// What a played scenario left: the log, the runs core offered, how it ended.
pub struct Played {
    pub log: Vec<Value>,
    pub runs: Vec<RunInfo>,
    pub harness: String,
    pub deadline_hit: bool,
}

#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    pub turn_id: String,
    pub segment: u64,
    pub start: Value,
    pub ended: Option<(u64, String)>,
    /// The log index of its run-ended entry.
    pub ended_at: Option<usize>,
}

impl RunInfo {
    fn limit(&self, name: &str) -> u64 {
        self.start["limits"][name].as_u64().unwrap_or(u64::MAX)
    }
}

/// A failed check: which, the sentence it enforces, what was expected and seen.
#[derive(Debug, Clone)]
pub struct Fail {
    pub check: String,
    pub cite: &'static str,
    pub message: String,
    pub expected: Value,
    pub actual: Value,
}

const SPEC: &str = "004_0d5b24e47247e871.txt";

/// Every check a scenario gets, with the sentence each enforces.
pub const ALWAYS: &[(&str, &str)] = &[
    ("within-caps", "§ 1 Transport: \"One JSON text message per frame, at most 64 MiB (HARNESS_MAX_PAYLOAD).\" (and hcpspec's caps on what a harness sends in a scenario, docs/security.md)"),
    ("connects", "§ 1 Transport: \"A WebSocket to core's harness listener (port 4200 by default), path /nylorun/harness/v1.\""),
    ("upgrade-headers", "§ 1 Transport: \"Upgrade headers: Authorization: Bearer <token> and Nylorun-Harness-Api: 1.\""),
    ("one-json-text-message", "§ 1 Transport: \"One JSON text message per frame, at most 64 MiB (HARNESS_MAX_PAYLOAD).\""),
    ("ids-per-sender", "§ 1 Transport: \"Either end may send requests; ids are per sender.\""),
    ("hello-first", "§ 2 Work: \"hello {api: 5, name, version, features} is the first request.\""),
    ("hello-api-5", "§ 11 Versioning: \"Core speaks one version: a harness that says api: 4 is refused.\""),
    ("hello-name", "§ 2 Work: \"name is the harness id: ^[a-z][a-z0-9-]{1,62}$, and the one the credential is for.\""),
    ("journaled-first", "§ 5 Gates: \"A tool call must be journaled first (effect.intent answered execute), or the gate refuses it\"; § 4: \"Every effect is journaled before it runs.\""),
    ("idempotency-key", "§ 5 Gates: \"Send Authorization: Bearer <run token> and Idempotency-Key: <effect id> on every call.\""),
    ("run-token", "§ 2 Work: \"lease.renew {runId} every renewEveryMs. It answers {ok: true, token?, tokenExpiresAt?} (switch to a new token when one comes)\""),
    ("effect-id-shape", "§ 4 Record: \"The effect id is <turnId>:<segment>:<kind>:<identity> (effectIdOf).\""),
    ("model-intent-without-input", "§ 4 Record: \"For a model effect, hash the intent with input set to its ModelCall, and send the intent without input.\""),
    ("replay-without-asking", "§ 3 Input: \"outcomes: the completed outcomes of this segment, with their request hashes. Replay them without asking core again.\""),
    ("request-hash", "§ 4 Record: \"The request hash is effectRequestHash(intent) over the whole request. [...] A replay that asks for the same id with another hash is effect_drift.\""),
    ("nothing-after-the-end", "§ 2 Work: \"{ok: false} (the run is over: stop it)\"; § 2: \"lease.release {runId, reason} gives a run back without an output.\""),
    ("runs-end", "§ 7 Output: \"End each segment with one output request (TurnOutputSchema)\""),
    ("state-every-segment", "§ 7 Output: \"Return some state on every segment.\"; \"A custom harness's state is at most limits.harnessStateBytes\""),
    ("record-entry-bytes", "§ 5b Tool results: \"Each effect.outcome value, and each transcript entry (section 6), is at most limits.recordEntryBytes as JSON.\""),
    ("transcript-kinds", "§ 6 Transcript: \"Entries are one of five kinds (TranscriptEntrySchema)\"; \"write these kinds only.\""),
    ("tool-names-64", "§ 3 Input: \"Name each tool within 64 characters, the ceiling every provider accepts.\""),
    ("disabled-tools-skipped", "§ 3 Input: \"enabled (false when the turn's manifest disables it: skip it, since core refuses its calls as tool.disabled)\""),
    ("model-call-bytes", "§ 3 Input: \"modelCallBytes: a Model Gate call's body (default 32 MiB; past it, 400).\"; \"Keep within them, or core refuses what passes one\""),
    ("chunk-bytes", "§ 3 Input: \"chunkBytes: one definition.file range, artifact.read answer or artifact.write chunk (section 4b): ask for and send at most this many bytes\""),
    ("traceparent", "§ 3 Input: \"Send it as traceparent on your gate calls, and as TRACEPARENT to processes you start.\""),
    ("tool-targets", "§ 3 Input: \"Offer sandbox tools, and write a note on the sandbox, only then.\"; § 4 Record: a sandbox call runs when \"The session has a sandbox and toolName is one of bash, read, write, edit, grep, glob\", schedule_wake when \"The session's version sets runtime.selfWake\", memory when \"The session's version sets harness.memory\""),
    ("memory-view-only", "§ 3 Input: \"offer only view for read_only and to agents used as tools\""),
    ("compaction", "§ 6 Transcript: \"compaction: a summary that replaced the older part. It is always first.\"; \"send each model call that writes a summary with purpose: \"summary\" on its intent\"; \"mark the edit that replaced the history kind: \"compaction\", with compaction: {trigger, tokensBefore, tokensAfter, summaryEffectIds}\"; \"summaryEffectIds are the completed summary calls of this turn that wrote it, in order\""),
];

pub fn cite(check: &str) -> &'static str {
    ALWAYS
        .iter()
        .find(|(n, _)| *n == check)
        .map_or("", |(_, c)| c)
}

struct View<'a> {
    p: &'a Played,
}

/// A harness request: log index, connection, the frame.
#[derive(Clone, Copy)]
struct Req<'a> {
    at: usize,
    conn: u64,
    f: &'a Value,
}

impl<'a> View<'a> {
    fn reqs(&self) -> impl Iterator<Item = Req<'a>> + 'a {
        self.p.log.iter().enumerate().filter_map(|(i, e)| {
            (e["via"] == "frame" && e["from"] == "harness" && e["frame"]["t"] == "req").then(|| {
                Req {
                    at: i,
                    conn: e["conn"].as_u64().unwrap_or(0),
                    f: &e["frame"],
                }
            })
        })
    }
    fn reqs_of(&self, m: &'a str) -> impl Iterator<Item = Req<'a>> + 'a {
        self.reqs().filter(move |r| r.f["m"] == m)
    }
    /// Core's answer to a harness request.
    fn answer(&self, r: &Req) -> Option<&'a Value> {
        self.answer_at(r).map(|(_, a)| a)
    }
    /// Core's answer to a harness request, with its log index.
    fn answer_at(&self, r: &Req) -> Option<(usize, &'a Value)> {
        self.p.log.iter().enumerate().skip(r.at).find_map(|(i, e)| {
            (e["via"] == "frame"
                && e["from"] == "core"
                && e["conn"].as_u64() == Some(r.conn)
                && e["frame"]["t"] == "res"
                && e["frame"]["id"] == r.f["id"])
                .then_some((i, &e["frame"]))
        })
    }
    fn run(&self, id: &str) -> Option<&'a RunInfo> {
        self.p.runs.iter().find(|r| r.id == id)
    }
    fn run_of(&self, r: &Req) -> Option<&'a RunInfo> {
        r.f["p"]["runId"].as_str().and_then(|id| self.run(id))
    }
    fn gates(&self) -> impl Iterator<Item = (usize, &'a Value)> + 'a {
        self.p
            .log
            .iter()
            .enumerate()
            .filter(|(_, e)| e["via"] == "gate")
    }
    fn effect_gates(&self) -> impl Iterator<Item = (usize, &'a Value)> + 'a {
        self.gates().filter(|(_, e)| {
            matches!(
                e["route"].as_str(),
                Some("model-calls" | "tool-calls" | "http-calls")
            )
        })
    }
    /// Intents with their effect id and core's answer.
    fn intents(&self) -> Vec<(Req<'a>, String, Option<&'a Value>)> {
        self.reqs_of("effect.intent")
            .map(|r| {
                let id = effect_id(&r.f["p"]["effect"]).unwrap_or_default();
                let a = self.answer(&r);
                (r, id, a)
            })
            .collect()
    }
}

fn fail(check: &str, message: impl Into<String>, expected: Value, actual: Value) -> Fail {
    Fail {
        check: check.into(),
        cite: cite(check),
        message: message.into(),
        expected,
        actual,
    }
}

type CheckFn = fn(&View, &mut Vec<String>) -> Result<(), Fail>;

/// The checks of every scenario, in the order they are judged.
const EVERY: [(&str, CheckFn); 27] = [
    ("within-caps", within_caps),
    // A refused upgrade is named by its headers first: `connects` is for a harness that never
    // got through for another reason.
    ("upgrade-headers", upgrade_headers),
    ("connects", connects),
    ("one-json-text-message", one_json),
    ("ids-per-sender", ids_per_sender),
    ("hello-first", hello),
    // A call without its key is named by the key first: `journaled-first` is for a keyed call
    // no intent had answered execute.
    ("idempotency-key", idempotency_key),
    ("journaled-first", journaled_first),
    ("run-token", run_token),
    ("effect-id-shape", effect_id_shape),
    ("model-intent-without-input", model_without_input),
    ("replay-without-asking", replay_without_asking),
    ("request-hash", request_hash),
    ("nothing-after-the-end", nothing_after_end),
    ("runs-end", runs_end),
    ("state-every-segment", state),
    ("record-entry-bytes", record_entry),
    ("transcript-kinds", transcript_kinds),
    ("tool-names-64", tool_names),
    ("disabled-tools-skipped", disabled_tools),
    ("model-call-bytes", model_call_bytes),
    ("chunk-bytes", chunk_bytes),
    ("traceparent", traceparent),
    ("tool-targets", tool_targets),
    ("memory-view-only", memory_view_only),
    ("compaction", compaction),
    ("field-warnings", field_warnings),
];

/// Judge a played scenario: the first failure, and the warnings.
pub fn judge(p: &Played, checks: &[Value]) -> (Option<Fail>, Vec<String>) {
    let v = View { p };
    let mut warnings = Vec::new();
    for (_, c) in EVERY {
        if let Err(f) = c(&v, &mut warnings) {
            return (Some(f), warnings);
        }
    }
    for c in checks {
        if let Err(f) = asked(&v, c) {
            return (Some(f), warnings);
        }
    }
    (None, warnings)
}

/// Only the named checks of every scenario (the fuzzer's invariants).
pub fn judge_only(p: &Played, names: &[&str]) -> Option<Fail> {
    let v = View { p };
    let mut warnings = Vec::new();
    EVERY
        .iter()
        .filter(|(n, _)| names.contains(n))
        .find_map(|(_, c)| c(&v, &mut warnings).err())
}

/// A cap hcpspec holds a harness to (docs/security.md): its messages' bytes in a scenario, what
/// core may queue to a connection that does not read, a gate body's size and deadline.
#[allow(clippy::result_large_err)] // a CheckFn, as every check is (they share its warning)
fn within_caps(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn connects(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn upgrade_headers(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn one_json(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn ids_per_sender(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
            (Some("harness"), Some("req")) => {
                if !open.insert(key.clone()) {
                    return Err(fail(
                        "ids-per-sender",
                        format!("request id {} is already in flight", key.1),
                        json!("a fresh id per request in flight"),
                        e["frame"].clone(),
                    ));
                }
            }
            (Some("core"), Some("res")) => {
                open.remove(&key);
            }
            _ => {}
        }
    }
    Ok(())
}

fn hello(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn journaled_first(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
    let intents = v.intents();
    for (i, g) in v.effect_gates() {
        let key = g["key"].as_str().unwrap_or_default();
        let run = g["run"].as_str().unwrap_or_default();
        let ok = intents.iter().any(|(r, id, a)| {
            r.at < i
                && id == key
                && r.f["p"]["runId"] == run
                && a.is_some_and(|a| a["r"]["status"] == "execute")
        });
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

fn idempotency_key(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
    v.reqs_of("lease.renew")
        .filter(|r| r.f["p"]["runId"] == run)
        .filter_map(|r| {
            let (at, a) = v.answer_at(&r)?;
            a["r"]["token"].is_string().then_some((at, r.conn))
        })
        .nth(nth.checked_sub(1)? as usize)
}

fn run_token(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
    v.reqs_of("effect.intent")
        .filter(|r| {
            r.f["p"]["runId"] == run && effect_id(&r.f["p"]["effect"]).as_deref() == Some(key)
        })
        .filter_map(|r| {
            let (i, a) = v.answer_at(&r)?;
            (a["r"]["status"] == "execute" && i < before).then_some((i, r.conn))
        })
        .max()
}

fn effect_id_shape(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn model_without_input(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn replay_without_asking(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
    let call = v
        .gates()
        .find(|(i, g)| {
            *i > r.at
                && g["route"] == "model-calls"
                && g["key"] == id
                && g["run"] == r.f["p"]["runId"]
        })
        .and_then(|(_, g)| g["body"].get("call"));
    (effect, call)
}

fn request_hash(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn nothing_after_end(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
        let late = v.reqs().find(|r| {
            r.at > end
                && r.f["p"]["runId"] == run.id.as_str()
                && r.f["m"] != "lease.renew"
                && Some(r.conn) != lost_conn
        });
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
        let late_gate = v.effect_gates().find(|(i, g)| {
            *i > end && g["run"] == run.id.as_str() && lost_conn.is_none() && !refused
        });
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

fn runs_end(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn state(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn entries(output: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for u in output["transcript"].as_array().into_iter().flatten() {
        out.extend(u["entries"].as_array().into_iter().flatten());
    }
    out
}

fn record_entry(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn transcript_kinds(v: &View, w: &mut Vec<String>) -> Result<(), Fail> {
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

fn offered<'a>(v: &View<'a>) -> Vec<&'a Value> {
    v.gates()
        .filter(|(_, g)| g["route"] == "model-calls")
        .flat_map(|(_, g)| g["body"]["call"]["tools"].as_array().into_iter().flatten())
        .collect()
}

fn tool_names(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn disabled_tools(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn model_call_bytes(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn chunk_bytes(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

fn traceparent(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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

/// The sandbox's and core's own tools, asked for only when the turn has them: a sandbox call
/// (one of the six tools) only with `agent.sandbox`, `schedule_wake` only with
/// `agent.selfWake`, memory only with `memory`.
fn tool_targets(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
            (Some("runtime"), Some("schedule_wake")) if s["agent"]["selfWake"] != true => {
                "a schedule_wake call, though TurnStart's agent has no selfWake"
            }
            (Some("runtime"), Some("memory")) if !s["memory"].is_object() => {
                "a memory call, though TurnStart has no memory"
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
fn memory_view_only(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
fn compaction(v: &View, _: &mut Vec<String>) -> Result<(), Fail> {
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
    }
    Ok(())
}

/// A summary call's intent: `purpose: "summary"` beside the effect or on it (§ 6 says "on its
/// intent" and names no member).
fn summary_call(q: &Req) -> bool {
    q.f["p"]["purpose"] == "summary" || q.f["p"]["effect"]["purpose"] == "summary"
}

/// Fields the text does not list: warnings only.
fn field_warnings(v: &View, w: &mut Vec<String>) -> Result<(), Fail> {
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
    Ok(())
}

/// The bytes the harness stored, by the effectId it named: a begin with its base64, or an
/// upload's chunks in offset order.
fn stored_bytes(v: &View) -> Vec<(String, Vec<u8>)> {
    let unb64 = |x: &Value| {
        x.as_str()
            .and_then(crate::suites::world::unb64)
            .unwrap_or_default()
    };
    let writes: Vec<Req> = v.reqs_of("artifact.write").collect();
    let mut out = Vec::new();
    for w in writes.iter().filter(|w| w.f["p"]["op"] == "begin") {
        let eid = w.f["p"]["effectId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if w.f["p"].get("base64").is_some() {
            out.push((eid, unb64(&w.f["p"]["base64"])));
            continue;
        }
        let Some(upload) = v
            .answer(w)
            .map(|a| a["r"]["uploadId"].clone())
            .filter(|u| u.is_string())
        else {
            continue;
        };
        let mut chunks: Vec<(u64, Vec<u8>)> = writes
            .iter()
            .filter(|c| c.f["p"]["op"] == "chunk" && c.f["p"]["uploadId"] == upload)
            .map(|c| {
                (
                    c.f["p"]["offset"].as_u64().unwrap_or(0),
                    unb64(&c.f["p"]["base64"]),
                )
            })
            .collect();
        chunks.sort_by_key(|c| c.0);
        out.push((eid, chunks.into_iter().flat_map(|c| c.1).collect()));
    }
    out
}

/// A media part anywhere in `v` whose reference names the artifact `id` (§ 5 "A media part's
/// reference names an artifact version ({artifactId, version})"); a note naming it is free.
fn names_artifact(v: &Value, id: &str) -> bool {
    match v {
        Value::Object(o) => {
            o.get("reference").is_some_and(|r| r["artifactId"] == id)
                || o.values().any(|x| names_artifact(x, id))
        }
        Value::Array(a) => a.iter().any(|x| names_artifact(x, id)),
        _ => false,
    }
}

/// Find `s` within a string anywhere in `v` (or in a string that holds JSON).
fn contains_text(v: &Value, s: &str) -> bool {
    match v {
        Value::String(x) => x.contains(s),
        Value::Array(a) => a.iter().any(|x| contains_text(x, s)),
        Value::Object(o) => o.values().any(|x| contains_text(x, s)),
        _ => false,
    }
}

/// Find a string value equal to `s` anywhere in `v`.
fn has_text(v: &Value, s: &str) -> bool {
    match v {
        Value::String(x) => x == s,
        Value::Array(a) => a.iter().any(|x| has_text(x, s)),
        Value::Object(o) => o.values().any(|x| has_text(x, s)),
        _ => false,
    }
}

fn asked(v: &View, c: &Value) -> Result<(), Fail> {
    let name = c["check"].as_str().unwrap_or_default();
    let miss = |message: String, expected: Value, actual: Value| Fail {
        check: name.to_string(),
        cite: "",
        message,
        expected,
        actual,
    };
    let nth_run = |c: &Value| -> Vec<&RunInfo> {
        match c["offer"].as_u64() {
            Some(n) => v.p.runs.get(n as usize - 1).into_iter().collect(),
            None => v.p.runs.iter().collect(),
        }
    };
    match name {
        "ends" => {
            let with = c["with"].as_str().unwrap_or_default();
            let runs = nth_run(c);
            if runs.is_empty() {
                return Err(miss(
                    "core offered no run: the harness never took one".into(),
                    c.clone(),
                    json!(null),
                ));
            }
            for run in runs {
                let how = run.ended.as_ref().map(|e| e.1.as_str());
                let output = v.reqs_of("output").find(|r| {
                    r.f["p"]["runId"] == run.id.as_str() && run.ended_at.is_some_and(|e| r.at < e)
                });
                let release = v.reqs_of("lease.release").find(|r| {
                    r.f["p"]["runId"] == run.id.as_str() && run.ended_at.is_some_and(|e| r.at < e)
                });
                let ok = match with {
                    "release" => {
                        how == Some("release")
                            && release.is_some_and(|r| {
                                c.get("reason").is_none_or(|x| r.f["p"]["reason"] == *x)
                            })
                            && !v
                                .reqs_of("output")
                                .any(|r| r.f["p"]["runId"] == run.id.as_str())
                    }
                    kind => {
                        how == Some("output")
                            && output.is_some_and(|o| {
                                has_text(&o.f["p"], kind)
                                    && c["status"].as_str().is_none_or(|s| has_text(&o.f["p"], s))
                            })
                    }
                };
                if !ok {
                    let seen = output.or(release).map(|r| r.f.clone());
                    return Err(miss(
                        format!(
                            "{} ended {} ({}), not as the scenario requires",
                            run.id,
                            how.unwrap_or("not at all"),
                            seen.as_ref()
                                .and_then(|f| f["m"].as_str())
                                .unwrap_or("no output")
                        ),
                        c.clone(),
                        seen.unwrap_or(Value::Null),
                    ));
                }
            }
            Ok(())
        }
        "waitsOn" => {
            for run in nth_run(c) {
                let waiting: BTreeSet<String> = v
                    .intents()
                    .into_iter()
                    .filter(|(r, _, a)| {
                        r.f["p"]["runId"] == run.id.as_str()
                            && a.is_some_and(|a| {
                                matches!(a["r"]["status"].as_str(), Some("pending" | "uncertain"))
                            })
                    })
                    .map(|(_, id, _)| id)
                    .collect();
                let out = v
                    .reqs_of("output")
                    .find(|r| r.f["p"]["runId"] == run.id.as_str());
                let named: BTreeSet<String> = out
                    .and_then(|o| o.f["p"]["effectIds"].as_array())
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect();
                if waiting.is_empty() || named != waiting {
                    return Err(miss(
                        "the waiting output's effectIds are not the effects answered pending or uncertain".into(),
                        json!({ "effectIds": waiting }),
                        out.map_or(Value::Null, |o| o.f["p"].clone()),
                    ));
                }
            }
            Ok(())
        }
        "gateCancelled" => {
            let Some(cancel) = v.p.log.iter().position(|e| {
                e["via"] == "frame" && e["from"] == "core" && e["frame"]["m"] == "cancel"
            }) else {
                return Err(miss("core sent no cancel: the harness never reached the gate call the scenario cancels".into(), c.clone(), Value::Null));
            };
            let end =
                v.p.runs
                    .iter()
                    .find_map(|r| r.ended_at.filter(|e| *e > cancel))
                    .unwrap_or(v.p.log.len());
            let inflight: Vec<&Value> = v
                .effect_gates()
                .filter(|(i, g)| {
                    *i < cancel
                        && g["answeredSeq"]
                            .as_u64()
                            .is_none_or(|a| a as usize > cancel)
                })
                .map(|(_, g)| g)
                .collect();
            if inflight.is_empty() {
                return Err(miss(
                    "no gate call was in flight at the cancel".into(),
                    c.clone(),
                    Value::Null,
                ));
            }
            for g in inflight {
                let done = v.p.log[cancel..end]
                    .iter()
                    .any(|e| e["via"] == "gate-cancel" && e["key"] == g["key"]);
                if !done {
                    return Err(miss(
                        format!("the {} call under {} was not cancelled through its cancel route before the run ended", g["route"].as_str().unwrap_or(""), g["key"]),
                        json!(format!("POST /nylorun/v1/{}/{{key}}/cancel", if g["route"] == "model-calls" { "model-calls" } else { "tool-calls" })),
                        g.clone(),
                    ));
                }
            }
            Ok(())
        }
        "gateCalls" => {
            let route = c["route"].as_str().unwrap_or_default();
            let n = v.gates().filter(|(_, g)| g["route"] == route).count() as u64;
            let ok = c["count"].as_u64().is_none_or(|x| x == n)
                && c["min"].as_u64().is_none_or(|x| n >= x)
                && c["max"].as_u64().is_none_or(|x| n <= x);
            if ok {
                Ok(())
            } else {
                Err(miss(format!("{n} calls to {route}"), c.clone(), json!(n)))
            }
        }
        "replaysSame" => {
            let (Some(first), Some(again)) = (v.p.runs.first(), v.p.runs.get(1)) else {
                return Err(miss(
                    "the segment was not offered again: the harness took no second run".into(),
                    c.clone(),
                    Value::Null,
                ));
            };
            let asked = |run: &RunInfo| -> Vec<String> {
                v.intents()
                    .into_iter()
                    .filter(|(r, _, _)| r.f["p"]["runId"] == run.id.as_str())
                    .map(|(_, id, _)| id)
                    .collect()
            };
            let replayed: BTreeSet<String> = again.start["outcomes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| o["effectId"].as_str().map(str::to_string))
                .collect();
            let expected: Vec<String> = asked(first)
                .into_iter()
                .filter(|id| !replayed.contains(id))
                .collect();
            // The same ids, in any order: a harness may ask concurrent effects in another order.
            let actual = asked(again);
            if expected.is_empty() || expected.iter().any(|id| !actual.contains(id)) {
                return Err(miss(
                    "the run that started the segment over did not ask for the same effect ids"
                        .into(),
                    json!(expected),
                    json!(actual),
                ));
            }
            Ok(())
        }
        "spilled" => {
            let mut big = 0;
            for r in v.reqs_of("effect.outcome") {
                let Some(run) = v.run_of(&r) else { continue };
                let limit = run.limit("recordEntryBytes");
                let eid = r.f["p"]["effectId"].as_str().unwrap_or_default();
                let answer = v
                    .effect_gates()
                    .find(|(_, g)| g["key"] == eid && g["route"] != "model-calls")
                    .map(|(_, g)| &g["answer"]);
                if answer.is_none_or(|a| (a.to_string().len() as u64) <= limit) {
                    continue;
                }
                big += 1;
                let stored = v
                    .reqs_of("artifact.write")
                    .any(|w| w.at < r.at && w.f["p"]["effectId"] == eid);
                if !stored {
                    return Err(miss(
                        format!("the result of {eid} passes recordEntryBytes {limit} and was not stored with artifact.write carrying its effectId"),
                        json!({ "artifact.write": { "effectId": eid } }),
                        r.f["p"].clone(),
                    ));
                }
            }
            let refused = v.reqs_of("effect.outcome").any(|r| {
                v.answer(&r)
                    .is_some_and(|a| a["e"]["code"] == "limit_exceeded")
            });
            if big == 0 {
                return Err(miss(
                    if refused {
                        "the large result was reported whole, and refused".into()
                    } else {
                        "no tool result passed recordEntryBytes: the harness never reported the large result".into()
                    },
                    c.clone(),
                    Value::Null,
                ));
            }
            Ok(())
        }
        "offered" => {
            let tools = offered(v);
            let descs: Vec<&str> = tools
                .iter()
                .filter_map(|t| t["description"].as_str())
                .collect();
            for want in c["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if !descs.iter().any(|d| d.contains(want)) {
                    return Err(miss(
                        format!("no tool offered for `{want}`"),
                        c.clone(),
                        json!(tools),
                    ));
                }
            }
            for not in c["not"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if descs.iter().any(|d| d.contains(not)) {
                    return Err(miss(
                        format!("a tool offered for `{not}`"),
                        c.clone(),
                        json!(tools),
                    ));
                }
            }
            Ok(())
        }
        "noFrame" => {
            let m = c["m"].as_str().unwrap_or_default();
            match v.reqs_of(m).next() {
                Some(r) => Err(miss(
                    format!("the harness sent `{m}`"),
                    c.clone(),
                    r.f.clone(),
                )),
                None => Ok(()),
            }
        }
        "notDropped" => match v.p.log.iter().find(|e| e["event"] == "drop") {
            Some(e) => Err(miss(
                "core dropped the harness for silence".into(),
                c.clone(),
                e.clone(),
            )),
            None => Ok(()),
        },
        "count" => {
            let m = c["m"].as_str().unwrap_or_default();
            let per_run = c["offer"]
                .as_u64()
                .and_then(|n| v.p.runs.get(n as usize - 1));
            let n = v
                .reqs_of(m)
                .filter(|r| per_run.is_none_or(|run| r.f["p"]["runId"] == run.id.as_str()))
                .count() as u64;
            let ok = c["min"].as_u64().is_none_or(|x| n >= x)
                && c["max"].as_u64().is_none_or(|x| n <= x);
            if ok {
                Ok(())
            } else {
                Err(miss(format!("{n} `{m}` requests"), c.clone(), json!(n)))
            }
        }
        // The nth harness request of a method, or the nth call on a gate route, matches.
        "frame" | "gate" => {
            let nth = c["nth"].as_u64().unwrap_or(1) as usize;
            let (what, seen) = if name == "frame" {
                let m = c["m"].as_str().unwrap_or_default();
                let r = v.reqs_of(m).nth(nth.saturating_sub(1));
                (format!("`{m}` request #{nth}"), r.map(|r| &r.f["p"]))
            } else {
                let route = c["route"].as_str().unwrap_or_default();
                let g = v
                    .gates()
                    .filter(|(_, g)| g["route"] == route)
                    .nth(nth.saturating_sub(1));
                (
                    format!("{route} gate call #{nth}"),
                    g.map(|(_, g)| &g["body"]),
                )
            };
            let Some(seen) = seen else {
                return Err(miss(format!("no {what}"), c.clone(), Value::Null));
            };
            crate::case::matcher::check(&c["expect"], seen, &Default::default())
                .map(|_| ())
                .map_err(|mm| {
                    miss(
                        format!("{what} at {}: {}", mm.path, mm.message),
                        mm.expected,
                        seen.clone(),
                    )
                })
        }
        "answeredOk" => {
            let m = c["m"].as_str().unwrap_or_default();
            let mut any = false;
            for r in v.reqs_of(m) {
                any = true;
                if let Some(a) = v.answer(&r).filter(|a| a["ok"] != true) {
                    return Err(miss(
                        format!(
                            "core refused a `{m}`: {}",
                            a["e"]["message"].as_str().unwrap_or("")
                        ),
                        json!({ "ok": true }),
                        json!({ "request": r.f["p"], "answer": a }),
                    ));
                }
            }
            if any {
                Ok(())
            } else {
                Err(miss(
                    format!("the harness sent no `{m}`"),
                    c.clone(),
                    Value::Null,
                ))
            }
        }
        "inputEntries" => {
            let want = c["count"].as_u64().unwrap_or(1);
            let Some(out) = v.reqs_of("output").next() else {
                return Err(miss("no output".into(), c.clone(), Value::Null));
            };
            let n = entries(&out.f["p"])
                .iter()
                .filter(|e| e["kind"] == "input")
                .count() as u64;
            if n == want {
                Ok(())
            } else {
                Err(miss(
                    format!("{n} input entries, not one per message"),
                    json!(want),
                    out.f["p"]["transcript"].clone(),
                ))
            }
        }
        // § 2 "lease.renew {runId} every renewEveryMs": a held run is renewed at least every
        // two periods on average (the slack is for load, never for a slower cadence).
        "renewals" => {
            let period =
                v.p.log
                    .iter()
                    .find_map(|e| {
                        (e["via"] == "frame" && e["from"] == "core")
                            .then(|| e["frame"]["r"]["renewEveryMs"].as_u64())
                            .flatten()
                    })
                    .unwrap_or(1000)
                    .max(1);
            for run in nth_run(c) {
                let at = |e: &Value| e["at"].as_u64().unwrap_or(0);
                let Some(from) =
                    v.p.log
                        .iter()
                        .find(|e| e["event"] == "offer" && e["run"] == run.id.as_str())
                else {
                    continue;
                };
                let until = run
                    .ended
                    .as_ref()
                    .map_or_else(|| v.p.log.last().map_or(0, at), |e| e.0);
                let held = until.saturating_sub(at(from));
                let want = (held / (2 * period)).saturating_sub(1);
                let n = v
                    .reqs_of("lease.renew")
                    .filter(|r| r.f["p"]["runId"] == run.id.as_str())
                    .count() as u64;
                if n < want {
                    return Err(miss(
                        format!(
                            "{} was held {held} ms and renewed {n} times: renewEveryMs is {period}",
                            run.id
                        ),
                        json!({ "renewals": format!("at least {want} (one every {period} ms, with twice the period's slack)") }),
                        json!({ "renewals": n, "heldMs": held }),
                    ));
                }
            }
            Ok(())
        }
        // The model was shown `text` (a tool's result, an outcome the journal answered): some
        // model call after the first carries it, in any member (the prompt's shape is open).
        "modelSaw" => {
            let want = c["text"].as_str().unwrap_or_default();
            let calls: Vec<&Value> = v
                .gates()
                .filter(|(_, g)| g["route"] == "model-calls")
                .map(|(_, g)| &g["body"])
                .collect();
            if calls.iter().skip(1).any(|b| contains_text(b, want)) {
                Ok(())
            } else {
                Err(miss(
                    format!("no model call after the first carries `{want}`"),
                    c.clone(),
                    json!({ "modelCalls": calls.len() }),
                ))
            }
        }
        // § 6: each model step writes its candidate, a step with tool calls one tool-results
        // entry, a completed turn its final (compaction entries aside). The steps are the run's
        // model calls, whose answers hcpspec's Model Gate wrote.
        "entries" => {
            for run in nth_run(c) {
                // A summary call (a compaction's) writes no candidate.
                let summaries: BTreeSet<String> = v
                    .intents()
                    .into_iter()
                    .filter(|(q, _, _)| summary_call(q))
                    .map(|(_, id, _)| id)
                    .collect();
                let mut calls: Vec<(&str, &Value)> = Vec::new();
                for (_, g) in v.gates().filter(|(_, g)| {
                    g["route"] == "model-calls"
                        && g["run"] == run.id.as_str()
                        && !g["key"].as_str().is_some_and(|k| summaries.contains(k))
                }) {
                    let key = g["key"].as_str().unwrap_or_default();
                    if !calls.iter().any(|(k, _)| *k == key) {
                        calls.push((key, &g["answer"]));
                    }
                }
                let with_tools = calls
                    .iter()
                    .filter(|(_, a)| {
                        a["outcome"]["output"]
                            .as_array()
                            .is_some_and(|o| o.iter().any(|b| b["type"] == "tool-call"))
                    })
                    .count();
                let Some(out) = v
                    .reqs_of("output")
                    .find(|r| r.f["p"]["runId"] == run.id.as_str())
                else {
                    return Err(miss(
                        format!("{} has no output", run.id),
                        c.clone(),
                        Value::Null,
                    ));
                };
                let kinds: Vec<&str> = entries(&out.f["p"])
                    .iter()
                    .filter_map(|e| e["kind"].as_str())
                    .collect();
                let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
                let completed = has_text(&out.f["p"], "turn.completed");
                let want = json!({
                    "candidate": calls.len(), "tool-results": with_tools,
                    "final": usize::from(completed)
                });
                let seen = json!({
                    "candidate": count("candidate"), "tool-results": count("tool-results"),
                    "final": count("final")
                });
                if want != seen {
                    return Err(miss(
                        format!(
                            "{}'s transcript has {seen} entries for {} model steps ({with_tools} with tool calls)",
                            run.id,
                            calls.len()
                        ),
                        want,
                        json!({ "counts": seen, "kinds": kinds }),
                    ));
                }
            }
            Ok(())
        }
        // § 5b "An MCP image, audio or blob resource part is base64 in the answer. Store it": each
        // such part of a tool's answer was written as an artifact with the call's effectId.
        "partsStored" => {
            let stored = stored_bytes(v);
            let mut seen = 0;
            for (_, g) in v
                .effect_gates()
                .filter(|(_, g)| g["route"] != "model-calls")
            {
                let eid = g["key"].as_str().unwrap_or_default();
                for part in g["answer"]["result"]["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let data = match part["type"].as_str() {
                        Some("image" | "audio") => &part["data"],
                        Some("resource") => &part["resource"]["blob"],
                        _ => continue,
                    };
                    let Some(bytes) = data.as_str().and_then(crate::suites::world::unb64) else {
                        continue;
                    };
                    seen += 1;
                    if !stored.iter().any(|(e, b)| e == eid && *b == bytes) {
                        return Err(miss(
                            format!("a {} part of {eid}'s answer ({} bytes) was not stored with artifact.write carrying its effectId", part["type"].as_str().unwrap_or(""), bytes.len()),
                            json!({ "artifact.write": { "effectId": eid, "bytes": bytes.len() } }),
                            json!({ "stored": stored.iter().map(|(e, b)| json!({ "effectId": e, "bytes": b.len() })).collect::<Vec<_>>() }),
                        ));
                    }
                }
            }
            if seen == 0 {
                return Err(miss(
                    "no tool answered a binary part: the harness never called the tool".into(),
                    c.clone(),
                    Value::Null,
                ));
            }
            Ok(())
        }
        // § 5b "send an image to the model as a file only when turn.start.model reads images":
        // no model call of a run whose model does not read images names a stored image's
        // artifact as a file (an object naming its artifactId; a note in text is free).
        "noImageFile" => {
            // Each image's artifact: its begin's answer, or its upload's commit's.
            let writes: Vec<Req> = v.reqs_of("artifact.write").collect();
            let id_of = |w: &Req| {
                v.answer(w).and_then(|a| {
                    a["r"]["artifact"]["artifactId"]
                        .as_str()
                        .map(str::to_string)
                })
            };
            let images: BTreeSet<String> = writes
                .iter()
                .filter(|w| {
                    w.f["p"]["op"] == "begin"
                        && w.f["p"]["contentType"]
                            .as_str()
                            .is_some_and(|t| t.starts_with("image/"))
                })
                .filter_map(|w| {
                    id_of(w).or_else(|| {
                        let upload = v.answer(w)?["r"]["uploadId"].clone();
                        writes
                            .iter()
                            .find(|c| c.f["p"]["op"] == "commit" && c.f["p"]["uploadId"] == upload)
                            .and_then(id_of)
                    })
                })
                .collect();
            for (_, g) in v.gates().filter(|(_, g)| g["route"] == "model-calls") {
                let Some(run) = g["run"].as_str().and_then(|id| v.run(id)) else {
                    continue;
                };
                let sees = run.start["model"]["inputs"]
                    .as_array()
                    .is_some_and(|i| i.iter().any(|x| x == "image"));
                if sees {
                    continue;
                }
                if let Some(id) = images.iter().find(|id| names_artifact(&g["body"], id)) {
                    return Err(miss(
                        format!("a model call sends the stored image {id} as a file, though turn.start.model does not read images"),
                        json!({ "inputs": run.start["model"]["inputs"] }),
                        g["body"]["call"].clone(),
                    ));
                }
            }
            Ok(())
        }
        other => Err(miss(
            format!("unknown check `{other}`"),
            c.clone(),
            Value::Null,
        )),
    }
}

pub fn spec_file() -> &'static str {
    SPEC
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(conn: u64, from: &str, f: Value) -> Value {
        json!({ "via": "frame", "conn": conn, "from": from, "frame": f })
    }

    /// A run whose token a renewal switched, and a model call with the old token that reached
    /// the gate after the harness answered a ping core sent after the switch. `execute_first`:
    /// core answered the call's intent `execute` before the switch (the harness began the call
    /// before it read the switch), or after it.
    fn played(execute_first: bool) -> Played {
        let intent = frame(
            1,
            "harness",
            json!({ "t": "req", "id": "3", "m": "effect.intent",
                    "p": { "runId": "run-1", "effect": { "effectId": "turn-1:0:model:0", "kind": "model" } } }),
        );
        let execute = frame(
            1,
            "core",
            json!({ "t": "res", "id": "3", "ok": true, "r": { "status": "execute" } }),
        );
        let renew = frame(
            1,
            "harness",
            json!({ "t": "req", "id": "4", "m": "lease.renew", "p": { "runId": "run-1" } }),
        );
        let switch = frame(
            1,
            "core",
            json!({ "t": "res", "id": "4", "ok": true, "r": { "ok": true, "token": "t2" } }),
        );
        let mut log = vec![intent];
        match execute_first {
            true => log.extend([execute, renew, switch]),
            false => log.extend([renew, switch, execute]),
        }
        log.push(frame(1, "core", json!({ "t": "ping" })));
        log.push(frame(1, "harness", json!({ "t": "ping" })));
        log.push(json!({ "via": "pong", "conn": 1 }));
        log.push(
            json!({ "via": "gate", "route": "model-calls", "auth": "old", "run": "run-1",
                         "key": "turn-1:0:model:0", "replacedBy": 1 }),
        );
        Played {
            log,
            runs: vec![],
            harness: String::new(),
            deadline_hit: false,
        }
    }

    #[test]
    fn an_old_token_is_late_only_on_a_call_made_after_the_switch_came() {
        let p = played(true);
        run_token(&View { p: &p }, &mut vec![]).expect("a call begun before the switch came");
        let p = played(false);
        let f = run_token(&View { p: &p }, &mut vec![]).expect_err("made after the switch came");
        assert_eq!(f.check, "run-token");
    }

    #[test]
    fn a_gate_call_begun_before_a_refused_renewal_crosses_it() {
        // The same log, the renewal refused: the run ended at the refusal.
        let mut p = played(true);
        let refusal = p
            .log
            .iter()
            .position(|e| e["frame"]["r"]["token"] == "t2")
            .unwrap();
        p.log[refusal]["frame"]["r"] = json!({ "ok": false });
        p.runs = vec![RunInfo {
            id: "run-1".into(),
            turn_id: "turn-1".into(),
            segment: 0,
            start: json!({}),
            ended: Some((1, "renew-refused".into())),
            ended_at: Some(refusal),
        }];
        nothing_after_end(&View { p: &p }, &mut vec![]).expect("a call begun before the refusal");
        // A request on the socket after the harness answered the ping is late.
        p.log.push(frame(
            1,
            "harness",
            json!({ "t": "req", "id": "5", "m": "effect.intent", "p": { "runId": "run-1" } }),
        ));
        let f = nothing_after_end(&View { p: &p }, &mut vec![]).expect_err("a request after it");
        assert_eq!(f.check, "nothing-after-the-end");
    }
}
