//! `hcpspec fuzz --suite core-api`: mutate what a harness sends a core on top of the suite's
//! scripts, and judge what the core answered by one oracle, [`broken`]. The mutations (pure
//! functions of the steps and the random source):
//!
//! - `frame`: unknown methods, parameters of another type or missing, requests repeated or
//!   out of order, non-JSON and binary frames, stray answers and aborts, a malformed intent;
//! - `upgrade`: a `connect` / `hello` on a wrong path, with no, an unknown, a run's or another
//!   harness's token, without `Nylorun-Harness-Api` or with another value, hello's api or name;
//! - `artifact`: `artifact.read` / `artifact.write` parameters with wrong values, and reads and
//!   new versions of the artifacts no run may read ([`SECRETS`], seeded before every script);
//! - `gate`: a gate call's route, body fields, `Idempotency-Key` and token.
//!
//! A finding is shrunk (steps past the one that broke the invariant dropped, then steps removed
//! while the same invariant still breaks) and written as a case file whose breaking step
//! `expect`s the invariant, so that `hcpspec run` fails it on the core it was found on.

use super::{Connector, Script};
use crate::case::Case;
use crate::mutate::{Rng, Source};
use crate::run::Observation;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub const CODES: &[&str] = &[
    "run_not_held",
    "turn_cancelled",
    "ownership_lost",
    "effect_drift",
    "invalid",
    "unavailable",
    "internal",
    "not_found",
    "limit_exceeded",
];

pub use crate::suites::FuzzReport as Report;

/// The harness listener's path (spec 004 § 1).
const PATH: &str = "/nylorun/harness/v1";

/// The artifacts no run may read (spec 004 § 4b), seeded before every trial's script: the name
/// its `artifact.seed` is saved as, its scope, its bytes (a canary no answer may carry).
pub const SECRETS: &[(&str, &str, &str)] = &[
    (
        "secret",
        "other-session",
        "hcpspec-canary-other-session-5d1e",
    ),
    (
        "unnamedSecret",
        "tenant-unnamed",
        "hcpspec-canary-unnamed-tenant-93b0",
    ),
    ("diskSecret", "agent-disk", "hcpspec-canary-agent-disk-c47a"),
];

/// The other harness whose token a mutated upgrade may bring: `core.start` gets it in
/// `otherHarnesses` when a step names it (it sorts after `nylorun`, the scripts' first harness).
const OTHER: &str = "other-harness";

/// The invariants' grounds: the section and the sentence of spec 004 each holds by.
type Rule = (&'static str, &'static str);
const ANSWERED: Rule = ("1", "§ 1 Transport (\"Error codes (HARNESS_ERROR_CODES): run_not_held, turn_cancelled, ownership_lost, effect_drift, invalid, unavailable, internal, not_found\")");
const UPGRADE: Rule = ("1", "§ 1 Transport (\"A wrong path is 404, a missing or unknown token 401, a missing header 426, a closed Tenant 503\")");
const LISTENING: Rule = ("1", "§ 1 Transport (\"A WebSocket to core's harness listener (port 4200 by default), path /nylorun/harness/v1\")");
const HELLO: Rule = ("2", "§ 2 Work: hello, lease, renew, release (\"Core refuses another api and a name that is not the credential's harness\")");
const SCOPE: Rule = ("4b", "§ 4b Artifacts (\"Another session's, a Tenant-wide one never named, an Agent's disk versions and a missing one are all the same not_found, so nothing tells you which exist\")");
const OWN: Rule = ("4b", "§ 4b Artifacts (\"You may write a new file artifact of the session, or a new version of one of its own file artifacts\")");
const JOURNALED: Rule = ("5", "§ 5 Gates (\"A tool call must be journaled first (effect.intent answered execute), or the gate refuses it: 400 key_required or 409 effect_not_journaled\")");
const RUN_TOKEN: Rule = ("5", "§ 5 Gates (\"Send Authorization: Bearer <run token> and Idempotency-Key: <effect id> on every call\")");

/// An invariant a played script broke: the step whose observation broke it (none: the core was
/// down after the script), why, the rule, and what that observation must match instead (the
/// expectation of the step in the case file).
#[derive(Debug, Clone, PartialEq)]
pub struct Broken {
    pub step: Option<usize>,
    pub why: String,
    pub rule: Rule,
    pub expect: Value,
}

/// When a fuzz run stops: after `seconds`, `trials` scripts played or `findings` findings.
pub struct Budget {
    pub seed: u64,
    pub seconds: f64,
    pub trials: Option<u64>,
    pub findings: Option<usize>,
}

/// The steps with `key` (for `request`, of a method `m` passes).
fn steps_with(steps: &[Value], key: &str, m: &dyn Fn(&str) -> bool) -> Vec<usize> {
    (0..steps.len())
        .filter(|i| match steps[*i].get(key) {
            None => false,
            Some(r) if key == "request" => m(r["m"].as_str().unwrap_or_default()),
            Some(_) => true,
        })
        .collect()
}

/// One of `items`, if there is any.
fn any<'a, T>(r: &mut Rng, items: &'a [T]) -> Option<&'a T> {
    (!items.is_empty()).then(|| r.pick(items))
}

/// A value as a mutation's description shows it: its JSON, cut at 40 bytes.
fn short(v: &Value) -> String {
    let s = v.to_string();
    let mut end = s.len().min(40);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// What the oracle calls an artifact of a scope no run may read.
fn words(scope: &str) -> &str {
    match scope {
        "other-session" => "another session's artifact",
        "tenant-unnamed" => "a Tenant-wide artifact the session never named",
        _ => "a version on the Agent's disk",
    }
}

/// The steps that take a lease and the name each saves it as.
fn leases(steps: &[Value]) -> Vec<(usize, String)> {
    steps_with(steps, "request", &|m| m == "lease")
        .into_iter()
        .filter_map(|i| Some((i, steps[i]["save"].as_str()?.to_string())))
        .collect()
}

/// One mutation of a script's steps, in place: what it did, or None when it found nothing to
/// mutate.
fn mutate(steps: &mut Vec<Value>, r: &mut Rng) -> Option<String> {
    type Kind = fn(&mut Vec<Value>, &mut Rng) -> Option<String>;
    let kinds: [Kind; 4] = [frame, upgrade, artifact, gate];
    // A kind with nothing to mutate in these steps (no gate call, no lease) gives way to another.
    (0..4).find_map(|_| r.pick(&kinds)(steps, r))
}

/// What a harness sends on its connection: methods, parameters, order, raw frames.
fn frame(steps: &mut Vec<Value>, r: &mut Rng) -> Option<String> {
    let reqs = steps_with(steps, "request", &|_| true);
    let on = json!("h");
    match r.below(8) {
        0 if !reqs.is_empty() => {
            let i = *r.pick(&reqs);
            let m = *r.pick(&[
                "x.unknown",
                "lease.renew",
                "effect.outcome",
                "artifact.write",
                "output",
                "hello",
            ]);
            steps[i]["request"]["m"] = json!(m);
            Some(format!("step {i}: another method ({m})"))
        }
        1 | 2 if !reqs.is_empty() => {
            // A parameter of a request: of another type, or missing.
            let i = *r.pick(&reqs);
            let p = steps[i]["request"]["p"].as_object_mut()?;
            let keys: Vec<String> = p.keys().cloned().collect();
            let k = any(r, &keys)?.clone();
            if r.chance(50) {
                p.remove(&k);
                return Some(format!("step {i}: `{k}` missing"));
            }
            let other = [
                json!(7),
                json!([]),
                json!(null),
                json!({}),
                json!("x".repeat(70_000)),
                json!(-1),
            ];
            p.insert(k.clone(), r.pick(&other).clone());
            Some(format!("step {i}: `{k}` of another type"))
        }
        3 if !reqs.is_empty() => {
            let i = *r.pick(&reqs);
            let again = steps[i].clone();
            steps.insert(i + 1, again);
            Some(format!("step {i} repeated"))
        }
        4 if steps.len() > 2 => {
            let i = 1 + r.below(steps.len() - 1);
            steps.swap(i - 1, i);
            Some(format!("steps {} and {i} swapped", i - 1))
        }
        5 => {
            let at = r.below(steps.len() + 1);
            let text = *r.pick(&[
                "{not json",
                "{\"t\":\"ping\"}{\"t\":\"ping\"}",
                "{\"t\":7}",
                "{\"t\":\"res\",\"id\":987654,\"ok\":true,\"r\":{}}",
                "{\"t\":\"abort\",\"id\":1}",
                "[]",
            ]);
            steps.insert(at, json!({ "send": { "on": on, "text": text } }));
            Some(format!("raw frame `{text}` at {at}"))
        }
        6 => {
            let at = r.below(steps.len() + 1);
            steps.insert(
                at,
                json!({ "send": { "on": on, "binary": "{\"t\":\"ping\"}" } }),
            );
            Some(format!("binary frame at {at}"))
        }
        _ => {
            let at = r.below(steps.len() + 1);
            steps.insert(at, json!({ "request": { "m": "effect.intent", "p": { "runId": "${lease.r.run.runId}", "effect": { "effectId": "nope", "kind": "tool" }, "requestHash": 5 } } }));
            Some(format!("a malformed intent at {at}"))
        }
    }
}

/// An upgrade (and hello) with one thing wrong: a script's own `connect` / `hello`, or a `hello`
/// on a new connection `u` inserted anywhere.
fn upgrade(steps: &mut Vec<Value>, r: &mut Rng) -> Option<String> {
    let run_token = leases(steps)
        .first()
        .map_or(json!(null), |(_, l)| json!(format!("${{{l}.r.run.token}}")));
    let faults = [
        (
            "path",
            json!("/nylorun/harness/v2"),
            "on /nylorun/harness/v2",
        ),
        ("path", json!("/nylorun/harness"), "on /nylorun/harness"),
        ("path", json!("/"), "on /"),
        ("token", json!(null), "with no token"),
        (
            "token",
            json!("nylorun-unknown-0000000000"),
            "with an unknown token",
        ),
        ("token", run_token, "with a run token"),
        (
            "token",
            json!(format!("${{core.harnesses.{OTHER}}}")),
            "with another harness's token",
        ),
        ("api", json!(null), "without Nylorun-Harness-Api"),
        ("api", json!("2"), "with Nylorun-Harness-Api: 2"),
        ("api", json!(4), "saying hello with api 4"),
        ("name", json!(OTHER), "saying hello as another harness"),
    ];
    let (k, v, what) = r.pick(&faults).clone();
    let ups: Vec<usize> = (0..steps.len())
        .filter(|i| {
            steps[*i]
                .get("connect")
                .or(steps[*i].get("hello"))
                .is_some()
        })
        .collect();
    if !ups.is_empty() && r.chance(50) {
        let i = *r.pick(&ups);
        let kind = if steps[i].get("hello").is_some() {
            "hello"
        } else {
            "connect"
        };
        steps[i][kind][k] = v;
        return Some(format!("step {i}: {kind} {what}"));
    }
    let at = r.below(steps.len() + 1);
    let mut hello = json!({ "as": "u" });
    hello[k] = v;
    steps.insert(at, json!({ "hello": hello }));
    Some(format!("a hello {what} inserted at {at}"))
}

/// An artifact request with a meaningful wrong value, or a read (a new version) of a secret
/// inserted after a lease.
fn artifact(steps: &mut Vec<Value>, r: &mut Rng) -> Option<String> {
    let secret = json!(format!("${{{}.artifactId}}", r.pick(SECRETS).0));
    let leases = leases(steps);
    let (li, l) = any(r, &leases)?.clone();
    let turn = |rest: &str| json!(format!("${{{l}.r.run.turnId}}{rest}"));
    if r.chance(40) {
        let at = li + 1 + r.below(steps.len() - li);
        let run = format!("${{{l}.r.run.runId}}");
        let (what, p) = if r.chance(60) {
            ("a read", json!({ "runId": run, "artifactId": secret }))
        } else {
            let p = json!({ "runId": run, "op": "begin", "name": "fuzz.txt", "artifactId": secret, "base64": "eA==" });
            ("a new version", p)
        };
        let m = if what == "a read" {
            "artifact.read"
        } else {
            "artifact.write"
        };
        steps.insert(at, json!({ "request": { "m": m, "p": p } }));
        return Some(format!("{what} of {secret} inserted at {at}"));
    }
    let ids = steps_with(steps, "request", &|m| m.starts_with("artifact."));
    let i = *any(r, &ids)?;
    let (k, v) = if steps[i]["request"]["m"] == "artifact.read" {
        r.pick(&[
            ("artifactId", secret),
            ("artifactId", json!("art-0")),
            ("artifactId", json!("")),
            ("version", json!(0)),
            ("version", json!(2)),
            ("version", json!(99)),
            ("offset", json!(1)),
            ("offset", json!(1u64 << 40)),
            ("offset", json!(-1)),
            ("length", json!(0)),
            ("length", json!(-1)),
            ("length", json!(1u64 << 40)),
        ])
        .clone()
    } else {
        r.pick(&[
            ("op", json!("begin")),
            ("op", json!("chunk")),
            ("op", json!("commit")),
            ("op", json!("abort")),
            ("op", json!("finish")),
            ("offset", json!(0)),
            ("offset", json!(1)),
            ("offset", json!(1u64 << 40)),
            ("offset", json!(-1)),
            ("base64", json!("not base64!")),
            ("base64", json!("")),
            ("base64", json!("QUFB".repeat(2000))),
            ("size", json!(1u64 << 62)),
            ("size", json!(0)),
            ("size", json!(-1)),
            ("key", json!("")),
            ("key", turn(":0:tool:0")),
            ("effectId", turn(":0:model:0")),
            ("effectId", turn(":0:tool:97")),
            ("effectId", json!("another-turn:0:tool:0")),
            ("artifactId", secret),
            ("artifactId", json!("art-0")),
            ("uploadId", json!("upload-0")),
        ])
        .clone()
    };
    let what = format!("step {i}: {} `{k}` {}", steps[i]["request"]["m"], short(&v));
    steps[i]["request"]["p"][k] = v;
    Some(what)
}

/// A gate call with one thing changed: its route, a body field, its key, its token. A script
/// with no gate call gets a journaled model call (an intent, then its call) after a lease.
fn gate(steps: &mut Vec<Value>, r: &mut Rng) -> Option<String> {
    let leases = leases(steps);
    let gates = steps_with(steps, "gate", &|_| true);
    let (i, pre) = match any(r, &gates) {
        Some(i) => (*i, String::new()),
        None => {
            let (li, l) = any(r, &leases)?.clone();
            let at = li + 1 + r.below(steps.len() - li);
            let effect = format!("${{{l}.r.run.turnId}}:0:model:7");
            let run = |f: &str| format!("${{{l}.r.run.{f}}}");
            let intent = json!({ "runId": run("runId"), "effect": { "effectId": effect, "kind": "model", "context": { "invocationId": "fuzz" } }, "requestHash": "fuzz" });
            let body = json!({ "effectId": effect, "invocationId": "fuzz", "call": { "prompt": [], "tools": [], "executionId": run("sessionId") } });
            steps.insert(
                at,
                json!({ "request": { "m": "effect.intent", "p": intent } }),
            );
            let call = json!({ "route": "model-calls", "token": run("token"), "key": effect, "body": body });
            steps.insert(at + 1, json!({ "gate": call }));
            (at + 1, format!("a journaled model call inserted at {at}; "))
        }
    };
    let l = leases.first().map_or("lease", |(_, l)| l.as_str());
    let unjournaled = json!(format!("${{{l}.r.run.turnId}}:0:tool:99"));
    let token = steps[i]["gate"]["token"].clone();
    let other_run: Vec<Value> = leases
        .iter()
        .map(|(_, l)| json!(format!("${{{l}.r.run.token}}")))
        .filter(|t| *t != token)
        .collect();
    let (at, choices): (&str, Vec<Value>) = match r.below(4) {
        0 => (
            "route",
            [
                "model-calls",
                "tool-calls",
                "http-calls",
                "mcp/list",
                "mcp/call",
                "tool-calls/x/cancel",
                "no-such-route",
            ]
            .map(|s| json!(s))
            .to_vec(),
        ),
        1 => ("key", vec![json!(null), unjournaled.clone(), json!("")]),
        2 => {
            let mut t = vec![
                json!(null),
                json!("${core.harnesses.nylorun}"),
                json!("nylorun-run-unknown-0000"),
            ];
            t.extend(other_run);
            ("token", t)
        }
        _ => {
            let (field, values) = r
                .pick(&[
                    ("effectId", vec![unjournaled, json!(7), json!(null)]),
                    ("name", vec![json!(""), json!("no-such-tool"), json!(7)]),
                    ("tool", vec![json!(""), json!("no-such-tool")]),
                    (
                        "server",
                        vec![
                            json!({ "serverName": "undeclared" }),
                            json!({ "serverName": "${fakes.mcp}" }),
                            json!("x"),
                            json!(null),
                        ],
                    ),
                    (
                        "arguments",
                        vec![
                            json!(null),
                            json!([]),
                            json!("text"),
                            json!({ "n": 100_000_000 }),
                        ],
                    ),
                ])
                .clone();
            let v = r.pick(&values).clone();
            let what = format!("{pre}step {i}: gate body `{field}` {}", short(&v));
            let body = &mut steps[i]["gate"]["body"];
            if v.is_null() {
                body.as_object_mut().map(|b| b.remove(field));
            } else {
                body[field] = v;
            }
            return Some(what);
        }
    };
    let v = r.pick(&choices).clone();
    let what = format!("{pre}step {i}: gate `{at}` {}", short(&v));
    let g = steps[i]["gate"].as_object_mut()?;
    match v.is_null() {
        true => g.remove(at),
        false => g.insert(at.to_string(), v),
    };
    Some(what)
}

/// The invariant a core broke in one played script, if any (observations annotated by
/// `play_for_fuzz`: `$sent`, `$upgrade`, `$key`, `$token`).
pub fn broken(obs: &[Observation], up_after: bool) -> Option<Broken> {
    let mut seen = Seen::default();
    for o in obs {
        if let Some((why, rule, expect)) = seen.judge(o) {
            return Some(Broken {
                step: Some(o.step),
                why: format!("step {}: {why}", o.step),
                rule,
                expect,
            });
        }
    }
    (!up_after).then(|| Broken {
        step: None,
        why: "the core was down after the script (its control shim or its listener did not answer)"
            .into(),
        rule: LISTENING,
        expect: Value::Null,
    })
}

/// An invariant one observation broke: why, the rule, what it must match instead.
type Found = Option<(String, Rule, Value)>;

/// What the observations so far showed: the intents core answered `execute`, and the secrets
/// seeded (artifactId, scope, base64 of the bytes, the bytes).
#[derive(Default)]
struct Seen {
    executed: std::collections::BTreeSet<String>,
    secrets: Vec<(Value, String, String, String)>,
}

impl Seen {
    /// The next observation, judged in the light of the ones before it.
    fn judge(&mut self, o: &Observation) -> Found {
        if let Some(found) = upgrade_broken(o)
            .or_else(|| hello_broken(o))
            .or_else(|| answer_broken(o))
        {
            return Some(found);
        }
        self.note(o);
        self.secret_broken(o).or_else(|| self.gate_broken(o))
    }

    /// An intent answered `execute`, a secret seeded.
    fn note(&mut self, o: &Observation) {
        let v = &o.value;
        if o.action == "request effect.intent" && v["ok"] == true && v["r"]["status"] == "execute" {
            if let Some(id) = v["$sent"]["effect"]["effectId"].as_str() {
                self.executed.insert(id.to_string());
            }
        }
        // The artifacts no run may read: seeded (by the fuzzer or the script) with these scopes.
        if o.action == "control artifact.seed" {
            let scope = v["$sent"]["scope"].as_str().unwrap_or_default();
            if ["other-session", "tenant-unnamed", "agent-disk"].contains(&scope) {
                let b64 = v["$sent"]["base64"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let bytes = crate::suites::world::unb64(&b64).unwrap_or_default();
                let text = String::from_utf8_lossy(&bytes).to_string();
                self.secrets
                    .push((v["artifactId"].clone(), scope.to_string(), b64, text));
            }
        }
    }

    /// A secret's bytes in an answer, a read of one answered, a new version of one written.
    fn secret_broken(&self, o: &Observation) -> Found {
        let v = &o.value;
        if o.action.starts_with("control") || o.action == "fakes" {
            return None;
        }
        let mut seen = v.clone();
        seen.as_object_mut().map(|s| s.remove("$sent"));
        let seen = seen.to_string();
        for (id, scope, b64, text) in &self.secrets {
            let leaked: Vec<&str> = [b64.as_str(), text.as_str()]
                .into_iter()
                .filter(|t| t.len() >= 8 && seen.contains(*t))
                .collect();
            if !leaked.is_empty() {
                let why = format!("`{}` answered the bytes of {}", o.action, words(scope));
                return Some((why, SCOPE, json!({ "$noText": leaked })));
            }
            let refused = json!({ "ok": false });
            if o.action == "request artifact.read"
                && v["ok"] == true
                && v["$sent"]["artifactId"] == *id
            {
                let why = format!("an artifact.read of {} was answered ok", words(scope));
                return Some((why, SCOPE, refused));
            }
            if o.action == "request artifact.write"
                && v["ok"] == true
                && v["r"]["artifact"]["artifactId"] == *id
            {
                let why = format!("a new version of {} was written", words(scope));
                return Some((why, OWN, refused));
            }
        }
        None
    }

    /// A gate call that ran without a run token, or a tool call that ran un-journaled.
    fn gate_broken(&self, o: &Observation) -> Found {
        let v = &o.value;
        // A cancel route runs no call (it names its call's key in its path); MCP discovery needs
        // no Idempotency-Key.
        if !(o.action.starts_with("gate ") && v["status"] == 200 && !o.action.ends_with("/cancel"))
        {
            return None;
        }
        let not_run = json!({ "status": { "$not": 200 } });
        if v["$token"] == "none" || v["$token"] == "host" || v["$token"].get("harness").is_some() {
            let why = "a gate call without a run token ran";
            return Some((why.into(), RUN_TOKEN, not_run));
        }
        let key = v.get("$key").and_then(Value::as_str).unwrap_or_default();
        // The rule binds a tool call ("A tool call must be journaled first"): a Model Gate
        // that runs an un-journaled model call breaks no sentence, and MCP discovery needs
        // no Idempotency-Key.
        let tool_call = o.action == "gate tool-calls" || o.action == "gate http-calls";
        if tool_call && key.is_empty() {
            let why = "a gate call with no (or an empty) Idempotency-Key ran";
            return Some((why.into(), JOURNALED, not_run));
        }
        if tool_call && !self.executed.contains(key) {
            let why = format!("a gate call under {key} ran, though no intent had answered execute");
            return Some((why, JOURNALED, not_run));
        }
        None
    }
}

/// An upgrade the core left unanswered, or answered 101 though it was faulty.
fn upgrade_broken(o: &Observation) -> Found {
    let v = &o.value;
    let u = v.get("$upgrade")?;
    let got = json!({ "status": { "$type": "integer" } });
    if v.get("noUpgrade").is_some() {
        return Some(("an upgrade got no answer".into(), LISTENING, got));
    }
    let faults: Vec<&str> = [
        (u["path"] != PATH, "a wrong path"),
        (u["token"] == "none", "no token"),
        (u["token"] == "unknown", "an unknown token"),
        (u["api"].is_null(), "no Nylorun-Harness-Api"),
    ]
    .into_iter()
    .filter_map(|(f, what)| f.then_some(what))
    .collect();
    if u["status"] == 101 && !faults.is_empty() {
        let refused = json!({ "status": { "$all": [{ "$type": "integer" }, { "$not": 101 }] } });
        let why = format!("an upgrade with {} was answered 101", faults.join(" and "));
        return Some((why, UPGRADE, refused));
    }
    None
}

/// A hello answered ok though its api or its name was wrong.
fn hello_broken(o: &Observation) -> Found {
    let v = &o.value;
    if o.action != "hello" || v["ok"] != true {
        return None;
    }
    let sent = &v["$sent"];
    let whose = &v["$upgrade"]["token"]["harness"];
    let refused = json!({ "ok": { "$not": true } });
    if sent["api"] != 5 {
        let why = format!("a hello with api {} was answered ok", sent["api"]);
        return Some((why, HELLO, refused));
    }
    if whose.is_string() && sent["name"] != *whose {
        let why = "a hello naming a harness that is not its token's was answered ok";
        return Some((why.into(), HELLO, refused));
    }
    None
}

/// A request never answered, or refused with a code not in the list.
fn answer_broken(o: &Observation) -> Found {
    let v = &o.value;
    if !o.action.starts_with("request") {
        return None;
    }
    let answered = json!({ "$anyOf": [{ "ok": true }, { "ok": false, "e": { "code": { "$anyOf": CODES } } }] });
    let what = o.action.split_once(' ').map_or("", |(_, m)| m);
    // A lease may wait; a request sent in a frame that is no JSON text message (§ 1: "One JSON
    // text message per frame, at most 64 MiB") is no message, so core may leave it unanswered.
    if v.get("noAnswer").is_some() && o.action != "request lease" && v["$noMessage"] != true {
        return Some((format!("`{what}` was never answered"), ANSWERED, answered));
    }
    if v["ok"] == false && !v["e"]["code"].as_str().is_some_and(|c| CODES.contains(&c)) {
        let why = format!(
            "`{what}` refused with a code not in the list: {}",
            crate::snapshot::contain(&v["e"])
        );
        return Some((why, ANSWERED, answered));
    }
    None
}

pub fn run(
    connect: &Connector,
    cases: &[Case],
    budget: Budget,
    out: Option<&Path>,
    stop: &std::sync::atomic::AtomicBool,
) -> Report {
    let seeds: Vec<&Case> = cases
        .iter()
        .filter(|c| c.member("script").is_some())
        .collect();
    let Budget {
        seed: from,
        seconds,
        trials,
        findings,
    } = budget;
    // Trials that could not be played: counted, the first few named (a garbage-answering core
    // is never a green "0 findings").
    let (mut unplayable, mut named) = (0u64, Vec::new());
    let mut report = Report::run_until(
        &seeds,
        from,
        seconds,
        trials,
        findings,
        stop,
        &mut |seed, rng| {
            let (start, steps, done) = trial(seed, rng);
            let with = |steps: &[Value]| {
                let mut case = seed.clone();
                case.body
                    .insert("script".into(), json!({ "start": start, "steps": steps }));
                // Its script is the one written here, not the seed's it was parsed with.
                case.parsed = Default::default();
                case
            };
            let play = |steps: &[Value]| {
                let script = json!({ "start": start, "steps": steps });
                let script =
                    Script::parse(&script).map_err(|(at, e)| format!("the script at {at}: {e}"))?;
                super::play_for_fuzz(&script, connect)
                    .map(|(obs, up)| broken(&obs, up))
                    .map_err(|e| e.0)
            };
            let found = match play(&steps) {
                Ok(found) => found?,
                Err(why) => {
                    unplayable += 1;
                    if named.len() < super::super::UNPLAYABLE_NAMED {
                        named.push((crate::snapshot::contain_text(&why), seed.name()));
                    }
                    return None;
                }
            };
            let judge = |steps: &[Value]| play(steps).ok().flatten();
            let (steps, found) = shrink(steps, found, &judge);
            let path = out.and_then(|d| write(d, &with(&steps), &found, &done).ok());
            Some((found.why, path))
        },
    );
    report.unplayable = unplayable;
    report.unplayable_named = named;
    report
}

/// One trial's script: `core.start`'s params, the steps (expectations dropped, the secrets
/// seeded first, one to three mutations), and what the mutations did.
pub fn trial(seed: &Case, rng: &mut Rng) -> (Value, Vec<Value>, Vec<String>) {
    let script = seed.member("script").cloned().unwrap_or(json!({}));
    let mut steps: Vec<Value> = SECRETS
        .iter()
        .map(|(name, scope, bytes)| {
            let base64 = crate::suites::world::artifacts::b64(bytes.as_bytes());
            json!({ "control": "artifact.seed", "params": { "name": name, "base64": base64, "scope": scope }, "save": name })
        })
        .collect();
    steps.extend(script["steps"].as_array().cloned().unwrap_or_default());
    for s in &mut steps {
        s.as_object_mut().map(|o| o.remove("expect"));
    }
    let mut done = vec![];
    for _ in 0..1 + rng.below(3) {
        done.extend(mutate(&mut steps, rng));
    }
    let mut start = script.get("start").cloned().unwrap_or(json!({}));
    if Value::Array(steps.clone()).to_string().contains(OTHER) {
        match start["otherHarnesses"].as_array_mut() {
            Some(a) => a.push(json!(OTHER)),
            None => start["otherHarnesses"] = json!([OTHER]),
        }
    }
    (start, steps, done)
}

/// What a finding says, without the step it names (removing steps renumbers them).
fn kind_of(why: &str) -> &str {
    match why.split_once(": ") {
        Some((at, rest)) if at.starts_with("step ") => rest,
        _ => why,
    }
}

/// Drop the steps past the one that broke the invariant (they come after its observation), then
/// remove steps one at a time while the script still breaks the same invariant.
fn shrink(
    mut steps: Vec<Value>,
    mut found: Broken,
    judge: &dyn Fn(&[Value]) -> Option<Broken>,
) -> (Vec<Value>, Broken) {
    if let Some(s) = found.step {
        steps.truncate(s + 1);
    }
    let mut i = 0;
    while i < steps.len() {
        let mut fewer = steps.clone();
        fewer.remove(i);
        match judge(&fewer) {
            Some(w) if kind_of(&w.why) == kind_of(&found.why) => {
                steps = fewer;
                found = w;
            }
            _ => i += 1,
        }
    }
    (steps, found)
}

/// The finding as a case: the breaking step expects the invariant (a core found down gets two
/// probes after the steps, which a down core cannot answer).
fn write(dir: &Path, case: &Case, found: &Broken, done: &[String]) -> std::io::Result<PathBuf> {
    let dir = dir.join("core-api");
    std::fs::create_dir_all(&dir)?;
    let id = format!(
        "core-{:08x}",
        crate::hash::fnv1a64(format!("{}{done:?}{}", found.why, case.name()).as_bytes()) as u32
    );
    let mut script = case.member("script").cloned().unwrap_or_default();
    let steps = script["steps"].as_array_mut().expect("steps");
    match found.step {
        Some(s) => {
            steps[s]["expect"] = found.expect.clone();
            steps[s]["note"] = json!(format!("the invariant: {}", kind_of(&found.why)));
        }
        None => {
            steps.push(
                json!({ "control": "core.describe", "expect": { "error": { "$absent": true } } }),
            );
            steps.push(json!({ "connect": { "as": "probe" }, "expect": { "status": { "$type": "integer" } } }));
        }
    }
    let (section, quote) = found.rule;
    let body = json!({
        "id": id, "title": format!("fuzz finding: {}", found.why), "section": section, "level": "MUST",
        "spec": format!("{} {quote}", case.spec.split(' ').next().unwrap_or("004_0d5b24e47247e871.txt")),
        "assumption": format!("found by hcpspec fuzz --suite core-api from {} ({})", case.name(), done.join("; ")),
        "script": script,
    });
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&body)? + "\n")?;
    Ok(path)
}
