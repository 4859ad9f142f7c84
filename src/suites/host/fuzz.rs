//! `hcpspec fuzz --suite host`: mutate the suite's cases (command kinds, payloads, abstract
//! bodies the adapter's Core encodes, payload references, lease epochs, capability sets, fault
//! channels, resume points, committed flags, cancelled launches, failing releases) and judge the
//! adapter by its fail-closed invariants ([`broken`]), never by the reference. A mutation is a
//! patch of one value of one step, so a finding shrinks by dropping patches while it still
//! fails, and is written as a case that replays the invariants (`"invariants": true`).

use super::{Call, Connector, Method, Player, Step, ALWAYS};
use crate::case::Case;
use crate::mutate::{Rng, Source};
use crate::run::Verdict;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

pub use crate::suites::FuzzReport as Report;

/// The harness capabilities bind requires (spec 003 § Overview, docs/host-protocol.md § 3.6),
/// written here again so that the oracle shares no code with the reference it judges.
const REQUIRED: [&str; 9] = [
    "IdleWaiter",
    "Liveness",
    "Releaser",
    "CommittedPublicEventProvider",
    "Applier",
    "LeaseEpochReporter",
    "PersistenceFaultReporter",
    "ResidencyAbandoner",
    "AttemptCloser",
];

/// One patch: set (or, with `None`, remove) the value at `pointer` inside step `step`.
#[derive(Clone, Debug)]
pub struct Patch {
    step: usize,
    pointer: Vec<String>,
    value: Option<Value>,
    what: String,
}

fn apply(steps: &mut [Value], p: &Patch) {
    let Some(mut v) = steps.get_mut(p.step) else {
        return;
    };
    let (last, path) = match p.pointer.split_last() {
        Some(x) => x,
        None => return,
    };
    for k in path {
        if !v.get(k).is_some_and(Value::is_object) {
            v[k.as_str()] = json!({});
        }
        v = &mut v[k.as_str()];
    }
    match (&p.value, v.as_object_mut()) {
        (Some(x), Some(o)) => {
            // A command gives its bytes or the abstract body they encode, never both.
            let drop: &[&str] = match last.as_str() {
                "payload" | "payloadText" => &["body"],
                "body" => &["payload", "payloadText"],
                _ => &[],
            };
            for k in drop {
                o.remove(*k);
            }
            o.insert(last.clone(), x.clone());
        }
        (None, Some(o)) => {
            o.remove(last);
        }
        _ => {}
    }
}

fn patch(step: usize, pointer: &[&str], value: Option<Value>, what: String) -> Patch {
    Patch {
        step,
        pointer: pointer.iter().map(|s| s.to_string()).collect(),
        value,
        what,
    }
}

fn pick<T: Clone>(r: &mut Rng, xs: &[T]) -> T {
    xs[r.below(xs.len())].clone()
}

/// One mutation of a case's steps.
fn mutation(steps: &[Value], r: &mut Rng) -> Option<Patch> {
    let of = |m: &str| -> Vec<usize> {
        (0..steps.len())
            .filter(|i| steps[*i]["call"] == m)
            .collect()
    };
    let (binds, applies, subs) = (of("host.bind"), of("host.apply"), of("host.subscribe"));
    match r.below(10) {
        0 if !applies.is_empty() => kind(pick(r, &applies), r),
        1 if !applies.is_empty() && r.below(2) == 0 => body(pick(r, &applies), r),
        1 | 2 if !applies.is_empty() => payload(pick(r, &applies), r),
        3 if !applies.is_empty() => bytes(pick(r, &applies), r),
        4 if !binds.is_empty() => epochs(pick(r, &binds), r),
        5 if !binds.is_empty() => capability(pick(r, &binds), r),
        6 if !binds.is_empty() => session(pick(r, &binds), r),
        7 if !subs.is_empty() => after(pick(r, &subs), r),
        8 if !binds.is_empty() => deliveries(pick(r, &binds), r),
        _ if !applies.is_empty() => principal(pick(r, &applies), r),
        _ => None,
    }
}

fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

/// Step `i`: another kind of command.
fn kind(i: usize, r: &mut Rng) -> Option<Patch> {
    let k = pick(
        r,
        &[
            "create",
            "restore",
            "input",
            "interrupt",
            "gate_response",
            "",
            "Input",
            "resume",
        ],
    );
    Some(patch(
        i,
        &["params", "command", "kind"],
        Some(json!(k)),
        format!("step {i}: kind {k:?}"),
    ))
}

/// Step `i`: an abstract body, in whatever the adapter's Core encodes it (host.encode).
fn body(i: usize, r: &mut Rng) -> Option<Patch> {
    let bodies = [
        json!({ "type": "input", "blocks": [] }),
        json!({ "type": "input", "blocks": [text("fuzz")], "principal": { "kind": "user", "id": "u-fuzz" } }),
        json!({ "type": "create" }),
        json!({ "type": "create", "blocks": [text("fuzz")], "createOnly": "fuzz" }),
        json!({ "type": "gate_response", "interactionId": "e-1", "answer": null }),
        json!({ "type": "undecodable" }),
    ];
    let b = pick(r, &bodies);
    Some(patch(
        i,
        &["params", "command", "body"],
        Some(b.clone()),
        format!("step {i}: body {b}"),
    ))
}

/// Step `i`: another payload, or none.
fn payload(i: usize, r: &mut Rng) -> Option<Patch> {
    let payloads = [
        None,
        Some(json!({})),
        Some(json!({ "blocks": [] })),
        Some(json!({ "blocks": "x" })),
        Some(json!({ "blocks": [text("fuzz")] })),
        Some(json!({ "blocks": [text(&"x".repeat(70_000))] })),
        Some(json!({ "say": "fuzz" })),
        Some(json!({ "interactionId": "e-1", "answer": true })),
        Some(json!({ "interactionId": 7 })),
        Some(json!([1, 2])),
        Some(json!("a string")),
    ];
    let p = pick(r, &payloads);
    Some(patch(
        i,
        &["params", "command", "payload"],
        p.clone(),
        format!(
            "step {i}: payload {}",
            p.map_or("absent".into(), |v| crate::adapter::excerpt(
                v.to_string().as_bytes()
            ))
        ),
    ))
}

/// Step `i`: a payload reference, or payload bytes.
fn bytes(i: usize, r: &mut Rng) -> Option<Patch> {
    if r.below(2) == 0 {
        Some(patch(
            i,
            &["params", "command", "payloadRef"],
            Some(json!("obj://fuzz/1")),
            format!("step {i}: a payload reference"),
        ))
    } else {
        Some(patch(
            i,
            &["params", "command", "payloadText"],
            Some(json!(pick(
                r,
                &[
                    "",
                    "{",
                    "\u{0}",
                    "null",
                    "{\"blocks\":[{\"type\":\"text\",\"text\":\"t\"}]}"
                ]
            ))),
            format!("step {i}: payload bytes"),
        ))
    }
}

/// Step `i`: the session reports other lease epochs.
fn epochs(i: usize, r: &mut Rng) -> Option<Patch> {
    let e = pick(
        r,
        &[
            json!([null]),
            json!([3, null]),
            json!([null, 4]),
            json!([u64::MAX >> 1]),
            json!([2, 2, 9]),
        ],
    );
    Some(patch(
        i,
        &["params", "session", "epochs"],
        Some(e.clone()),
        format!("step {i}: epochs {e}"),
    ))
}

/// Step `i`: the session lacks or hides a capability bind requires.
fn capability(i: usize, r: &mut Rng) -> Option<Patch> {
    let cap = pick(r, &REQUIRED);
    let key = pick(r, &["lacks", "hides"]);
    Some(patch(
        i,
        &["params", "session", key],
        Some(json!([cap])),
        format!("step {i}: {key} {cap}"),
    ))
}

/// Step `i`: a nil fault channel, a cancelled launch, a failing release, or a restore.
fn session(i: usize, r: &mut Rng) -> Option<Patch> {
    match r.below(4) {
        0 => Some(patch(
            i,
            &["params", "session", "faultChannel"],
            Some(json!(false)),
            format!("step {i}: a nil fault channel"),
        )),
        1 => Some(patch(
            i,
            &["params", "launchCancelled"],
            Some(json!(true)),
            format!("step {i}: a cancelled launch"),
        )),
        2 => Some(patch(
            i,
            &["params", "session", "releaseFails"],
            Some(json!("fuzz-release-failed")),
            format!("step {i}: release fails"),
        )),
        _ => Some(patch(
            i,
            &["params", "kind"],
            Some(json!("restore")),
            format!("step {i}: a restore"),
        )),
    }
}

/// Step `i`: a subscription after an event.
fn after(i: usize, r: &mut Rng) -> Option<Patch> {
    let a = pick(r, &["", "ev-1", " ", "0"]);
    Some(patch(
        i,
        &["params", "after"],
        Some(json!(a)),
        format!("step {i}: after {a:?}"),
    ))
}

/// Step `i`: the session delivers events, committed or not.
fn deliveries(i: usize, r: &mut Rng) -> Option<Patch> {
    let d = json!([
        { "eventId": "f-1", "journalSeq": 1, "publicBody": {}, "coveredThrough": 1, "committed": r.below(2) == 0 },
        { "eventId": "f-2", "journalSeq": 2, "publicBody": null, "coveredThrough": 2, "committed": r.below(2) == 0 }
    ]);
    Some(patch(
        i,
        &["params", "session", "deliveries"],
        Some(d),
        format!("step {i}: deliveries"),
    ))
}

/// Step `i`: another principal.
fn principal(i: usize, r: &mut Rng) -> Option<Patch> {
    let p = pick(
        r,
        &[
            json!(null),
            json!({}),
            json!("user"),
            json!({ "kind": "user", "id": "u-fuzz" }),
        ],
    );
    Some(patch(
        i,
        &["params", "command", "principal"],
        Some(p.clone()),
        format!("step {i}: principal {p}"),
    ))
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The fail-closed invariant an adapter broke in one played case, if any. Each follows from the
/// spec and the fakes' configuration alone (docs/host-protocol.md § 4).
pub fn broken(calls: &[Call], records: &Value) -> Option<String> {
    if let Some(m) = ALWAYS.iter().find_map(|(_, _, check)| check(records)) {
        return Some(m);
    }
    let admitted = records["admitted"].as_array().cloned().unwrap_or_default();
    let mut next = admitted.iter();
    // Per bound session handle: its fake's config, the request it was bound with, and how many
    // commands it was given.
    let mut bound: std::collections::BTreeMap<String, (Value, Value, usize)> = Default::default();
    for (i, c) in calls.iter().enumerate() {
        let (p, a) = (&c.params, &c.answer);
        let refused = a.get("refused").is_some();
        match c.method {
            Method::Bind => {
                let s = &p["session"];
                let lacking = names(&s["lacks"])
                    .into_iter()
                    .chain(names(&s["hides"]))
                    .find(|c| REQUIRED.contains(c));
                if !refused && (lacking.is_some() || s["faultChannel"] == false) {
                    return Some(format!(
                        "call {i}: bound a session that is no {} or has a nil fault channel",
                        lacking.unwrap_or("PersistenceFaultReporter with a channel")
                    ));
                }
                if let Some(h) = a["session"].as_str() {
                    bound.insert(h.to_string(), (s.clone(), p["request"].clone(), 0));
                }
            }
            Method::Apply => {
                let h = p["session"].as_str().unwrap_or_default();
                let Some((cfg, _, n)) = bound.get_mut(h) else {
                    continue;
                };
                let epochs = cfg["epochs"].as_array().cloned().unwrap_or_default();
                let expected = match epochs.len() {
                    0 => json!(1),
                    l => epochs[(*n).min(l - 1)].clone(),
                };
                *n += 1;
                if a["applied"] != true {
                    // Refused with harness's applier's failure (`applyFails`): harness was handed
                    // this command, and its record is the next one.
                    let fails = cfg["applyFails"].as_str().filter(|t| !t.is_empty());
                    let message = a["refused"]["message"].as_str().unwrap_or_default();
                    if fails.is_some_and(|t| message.contains(t)) {
                        next.next();
                    }
                    continue;
                }
                let cmd = &p["command"];
                let Some(adm) = next.next() else {
                    return Some(format!("call {i}: applied, but nothing reached harness"));
                };
                if expected.is_null() {
                    return Some(format!(
                        "call {i}: applied although the session held no lease grant"
                    ));
                }
                if adm["leaseEpoch"] != expected {
                    return Some(format!(
                        "call {i}: admitted with epoch {} where the session reported {expected}",
                        adm["leaseEpoch"]
                    ));
                }
                // A reference with no bytes beside it is unresolved (H8). Bytes beside one may be
                // its resolved body: spec 003 leaves that open (ASSUMPTIONS A20), so either
                // answer passes.
                let bytes = cmd.get("payload").is_some_and(|p| !p.is_null())
                    || cmd["payloadText"].as_str().is_some_and(|t| !t.is_empty());
                if cmd.get("payloadRef").is_some_and(|r| !r.is_null()) && !bytes {
                    return Some(format!(
                        "call {i}: a command with an unresolved payload reference was applied"
                    ));
                }
                let kind = adm["kind"].as_str().unwrap_or_default();
                if !["create", "restore", "input", "interrupt", "gate_response"].contains(&kind) {
                    return Some(format!("call {i}: a command of kind {kind:?} was admitted"));
                }
                let blocks = adm["blocks"].as_array().map_or(0, Vec::len);
                if kind == "input" && blocks == 0 {
                    return Some(format!("call {i}: an input was admitted with no blocks"));
                }
                if kind == "restore" && blocks > 0 {
                    return Some(format!("call {i}: a restore was admitted carrying blocks"));
                }
                if kind == "gate_response" && adm["gateResponse"]["source"] != "user" {
                    return Some(format!(
                        "call {i}: a gate_response was admitted whose source is not the user"
                    ));
                }
                if adm["principal"] != cmd.get("principal").cloned().unwrap_or(Value::Null) {
                    return Some(format!("call {i}: the Principal did not cross unchanged"));
                }
            }
            Method::Subscribe => {
                let after = p["after"].as_str().unwrap_or_default();
                if !after.is_empty() && !refused {
                    return Some(format!(
                        "call {i}: a subscription after {after:?} was served"
                    ));
                }
                let Some((cfg, req, _)) = bound.get(p["session"].as_str().unwrap_or_default())
                else {
                    continue;
                };
                let uncommitted: Vec<&Value> = cfg["deliveries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|d| d["committed"] == false)
                    .map(|d| &d["eventId"])
                    .collect();
                for pb in a["publications"].as_array().into_iter().flatten() {
                    if uncommitted.contains(&&pb["eventId"]) {
                        return Some(format!(
                            "call {i}: an uncommitted delivery {} was published",
                            pb["eventId"]
                        ));
                    }
                    if pb["tenantId"] != req["tenantId"] || pb["sessionId"] != req["sessionId"] {
                        return Some(format!("call {i}: a publication does not carry the launch's tenant and session"));
                    }
                }
            }
            _ => {}
        }
    }
    if next.next().is_some() {
        return Some("harness was handed a command no apply answered `applied`".into());
    }
    None
}

/// Play `steps` of `seed` (expectations dropped) and judge the invariants: the broken one, if
/// any. `Err`: the shim broke (it did not start, crashed, answered garbage, passed a deadline),
/// what it said cut to a report's size.
fn play(seed: &Case, steps: &[Value], connect: &Connector) -> Result<Option<String>, String> {
    let cut = |s: String| crate::snapshot::contain_text(&s);
    let mut shim = connect().map_err(|e| cut(format!("the shim did not start: {e}")))?;
    let body = seed.member("host").cloned().unwrap_or(json!({}));
    let mut p = Player::start(&mut *shim, body.get("target")).map_err(|v| cut(said(&v)))?;
    let mut calls = Vec::new();
    for s in steps {
        let s = Step::parse(s).map_err(|(at, why)| cut(format!("a patched step{at}: {why}")))?;
        match p.call(&s) {
            Ok(c) => calls.push(c),
            // A handle a refused bind left unbound is the case's error, not the adapter's.
            Err((_, crate::adapter::CallError::Rpc(e))) if e.code == -32602 => {}
            // An optional piece the shim lacks (a method, a fake member of host.describe's
            // `fakes`): the seed is played as far as the shim goes, never counted as breaking.
            Err((_, e)) if e.not_implemented() => break,
            Err((m, e)) => return Err(cut(format!("{m}: the shim broke: {e}"))),
        }
    }
    match p.records() {
        Ok(r) => Ok(broken(&calls, &r)),
        Err(v) => Err(cut(format!("the shim broke: {}", said(&v)))),
    }
}

/// What a verdict that stopped a trial says, in words (never its Rust debug form).
fn said(v: &Verdict) -> String {
    match v {
        Verdict::Error { message } => message.clone(),
        Verdict::Unimplemented { reason } => format!("unimplemented: {reason}"),
        Verdict::Skip { reason } => format!("skipped: {reason}"),
        Verdict::Fail(f) => f.message.clone(),
        Verdict::Pass => "passed".into(),
    }
}

fn steps_of(seed: &Case) -> Vec<Value> {
    let mut steps = seed.member("host").map_or(vec![], |h| {
        h["steps"].as_array().cloned().unwrap_or_default()
    });
    for s in &mut steps {
        s.as_object_mut().map(|o| o.remove("expect"));
    }
    steps
}

fn patched(base: &[Value], patches: &[Patch]) -> Vec<Value> {
    let mut steps = base.to_vec();
    for p in patches {
        apply(&mut steps, p);
    }
    steps
}

/// Drop patches one at a time while the case still fails: the patches left, why they fail, and
/// whether that is the shim breaking.
fn shrink(
    seed: &Case,
    base: &[Value],
    mut patches: Vec<Patch>,
    connect: &Connector,
) -> (Vec<Patch>, String, bool) {
    let judge = |patches: &[Patch]| match play(seed, &patched(base, patches), connect) {
        Ok(w) => w.map(|w| (w, false)),
        Err(w) => Some((w, true)),
    };
    let (mut why, mut broke) = judge(&patches).unwrap_or_default();
    let mut i = 0;
    while i < patches.len() {
        let mut fewer = patches.clone();
        fewer.remove(i);
        match judge(&fewer) {
            Some((w, b)) => {
                patches = fewer;
                (why, broke) = (w, b);
            }
            None => i += 1,
        }
    }
    (patches, why, broke)
}

/// When a fuzz run stops: after `seconds`, `trials` cases played or `findings` findings.
pub struct Budget {
    pub seed: u64,
    pub seconds: f64,
    pub trials: Option<u64>,
    pub findings: Option<usize>,
}

pub fn run(
    connect: &Connector,
    cases: &[Case],
    budget: Budget,
    out: Option<&Path>,
    stop: &std::sync::atomic::AtomicBool,
) -> Report {
    let Budget {
        seed,
        seconds,
        trials: max,
        findings: max_findings,
    } = budget;
    let seeds: Vec<&Case> = cases
        .iter()
        .filter(|c| c.member("host").is_some())
        .collect();
    let mut stopped = None;
    let mut cases = 0u64;
    let mut report = Report::run_until(
        &seeds,
        seed,
        seconds,
        max,
        max_findings,
        stop,
        &mut |seed, rng| {
            cases += 1;
            let base = steps_of(seed);
            let patches: Vec<Patch> = (0..1 + rng.below(3))
                .filter_map(|_| mutation(&base, rng))
                .collect();
            let broke = match play(seed, &patched(&base, &patches), connect) {
                Ok(None) => return None,
                Ok(Some(_)) => None,
                Err(broke) => Some(broke),
            };
            // The shim broke: by this mutation (a finding, shrunk), or whatever it is sent? Then
            // it has died (unreachable: stop, exit 3) or breaks on its unmutated seed too (one
            // finding, and stop): never one finding per case.
            // Whether the shim has died for good (its describe fails on a fresh start): then the
            // run stops, unreachable.
            let died = |broke: &str, stopped: &mut Option<crate::suites::Stopped>| {
                let describe = connect().and_then(|mut s| {
                    s.call("host.describe", json!({}))
                        .map_err(|e| e.to_string())
                });
                let e = describe.err()?;
                stop.store(true, std::sync::atomic::Ordering::SeqCst);
                *stopped = Some(crate::suites::Stopped::Unreachable(crate::error::Unreachable(format!(
                    "the host shim stopped answering after {cases} fuzz cases: host.describe: {}; the last case: {}",
                    crate::snapshot::contain_text(&e),
                    crate::snapshot::contain_text(broke)
                ))));
                Some(())
            };
            if let Some(broke) = broke {
                if let Err(again) = play(seed, &base, connect) {
                    if died(&broke, &mut stopped).is_some() {
                        return None;
                    }
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    stopped = Some(crate::suites::Stopped::Unjudgeable(format!(
                        "stopped after {cases} fuzz cases: the host shim breaks on an unmutated seed case, so no mutation can be judged"
                    )));
                    let why = format!("the shim breaks on the unmutated seed: {again}");
                    let path = out.and_then(|d| write(d, seed, &base, &why, &[]).ok());
                    return Some((why, path));
                }
            }
            let (patches, why, broke) = shrink(seed, &base, patches, connect);
            // A shim that died while the finding was shrunk: no finding, the run is over.
            if broke && died(&why, &mut stopped).is_some() {
                return None;
            }
            let path =
                out.and_then(|d| write(d, seed, &patched(&base, &patches), &why, &patches).ok());
            Some((why, path))
        },
    );
    report.stopped = stopped;
    report
}

fn write(
    dir: &Path,
    seed: &Case,
    steps: &[Value],
    why: &str,
    patches: &[Patch],
) -> std::io::Result<PathBuf> {
    let why = &crate::snapshot::contain_text(why);
    let dir = dir.join("host");
    std::fs::create_dir_all(&dir)?;
    let done: Vec<&str> = patches.iter().map(|p| p.what.as_str()).collect();
    let id = format!(
        "host-{:08x}",
        crate::hash::fnv1a64(format!("{why}{done:?}{}", seed.name()).as_bytes()) as u32
    );
    let mut host = json!({ "steps": steps, "invariants": true });
    if let Some(t) = seed.member("host").and_then(|h| h.get("target")) {
        host["target"] = t.clone();
    }
    let body = json!({
        "id": id, "title": format!("fuzz finding: {why}"), "section": seed.section, "level": "MUST",
        "spec": seed.spec,
        "assumption": format!("found by hcpspec fuzz --suite host from {} ({})", seed.name(), done.join("; ")),
        "host": host,
    });
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&body)? + "\n")?;
    Ok(path)
}
