//! `hcpspec fuzz --suite core-api`: mutate what a harness sends a core (unknown methods, wrong
//! types, missing fields, repeated and reordered requests, non-JSON and binary frames, stray
//! answers and aborts) on top of the suite's scripts, and check the core's invariants: every
//! request answered with a result or a code of HARNESS_ERROR_CODES (a `lease` may wait), no gate
//! call run for an effect no intent of its run had answered `execute`, and the core still up at
//! the end (its control shim answers, its listener answers). A finding is shrunk (steps removed
//! while the same invariant still fails) and written as a case file.

use super::Connector;
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

/// One mutation of a script's steps: (what it did, the new steps).
fn mutate(steps: &[Value], r: &mut Rng) -> Option<(String, Vec<Value>)> {
    let mut steps = steps.to_vec();
    let reqs: Vec<usize> = (0..steps.len())
        .filter(|i| steps[*i].get("request").is_some())
        .collect();
    let conn = || json!("h");
    match r.below(8) {
        0 if !reqs.is_empty() => {
            let i = reqs[r.below(reqs.len())];
            steps[i]["request"]["m"] = json!(
                [
                    "x.unknown",
                    "lease.renew",
                    "effect.outcome",
                    "artifact.write",
                    "output",
                    "hello"
                ][r.below(6)]
            );
            Some((format!("step {i}: another method"), steps))
        }
        1 | 2 if !reqs.is_empty() => {
            // A parameter of a request: of another type, or missing.
            let i = reqs[r.below(reqs.len())];
            let p = steps[i]["request"]["p"].as_object_mut()?;
            let keys: Vec<String> = p.keys().cloned().collect();
            if keys.is_empty() {
                return None;
            }
            let k = keys[r.below(keys.len())].clone();
            if r.below(2) == 0 {
                p.remove(&k);
                return Some((format!("step {i}: `{k}` missing"), steps));
            }
            let other = [
                json!(7),
                json!([]),
                json!(null),
                json!({}),
                json!("x".repeat(70_000)),
                json!(-1),
            ];
            p.insert(k.clone(), other[r.below(other.len())].clone());
            Some((format!("step {i}: `{k}` of another type"), steps))
        }
        3 if !reqs.is_empty() => {
            let i = reqs[r.below(reqs.len())];
            let again = steps[i].clone();
            steps.insert(i + 1, again);
            Some((format!("step {i} repeated"), steps))
        }
        4 if steps.len() > 2 => {
            let i = 1 + r.below(steps.len() - 1);
            steps.swap(i - 1, i);
            Some((format!("steps {} and {i} swapped", i - 1), steps))
        }
        5 => {
            let at = r.below(steps.len() + 1);
            let text = [
                "{not json",
                "{\"t\":\"ping\"}{\"t\":\"ping\"}",
                "{\"t\":7}",
                "{\"t\":\"res\",\"id\":987654,\"ok\":true,\"r\":{}}",
                "{\"t\":\"abort\",\"id\":1}",
                "[]",
            ][r.below(6)];
            steps.insert(at, json!({ "send": { "on": conn(), "text": text } }));
            Some((format!("raw frame `{text}` at {at}"), steps))
        }
        6 => {
            let at = r.below(steps.len() + 1);
            steps.insert(
                at,
                json!({ "send": { "on": conn(), "binary": "{\"t\":\"ping\"}" } }),
            );
            Some((format!("binary frame at {at}"), steps))
        }
        _ => {
            let at = r.below(steps.len() + 1);
            steps.insert(at, json!({ "request": { "m": "effect.intent", "p": { "runId": "${lease.r.run.runId}", "effect": { "effectId": "nope", "kind": "tool" }, "requestHash": 5 } } }));
            Some((format!("a malformed intent at {at}"), steps))
        }
    }
}

/// The invariant a core broke in one played script, if any.
pub fn broken(obs: &[Observation], up_after: bool) -> Option<String> {
    let mut executed = std::collections::BTreeSet::new();
    for o in obs {
        let v = &o.value;
        if o.action.starts_with("request") {
            if o.action == "request lease" && v.get("noAnswer").is_some() {
                continue;
            }
            if v.get("noAnswer").is_some() {
                return Some(format!(
                    "step {}: `{}` was never answered",
                    o.step,
                    &o.action[8..]
                ));
            }
            if v["ok"] == false && !v["e"]["code"].as_str().is_some_and(|c| CODES.contains(&c)) {
                return Some(format!(
                    "step {}: `{}` refused with a code not in the list: {}",
                    o.step,
                    &o.action[8..],
                    v["e"]
                ));
            }
        }
        if o.action == "request effect.intent" && v["ok"] == true && v["r"]["status"] == "execute" {
            if let Some(id) = v["$sent"]["effect"]["effectId"].as_str() {
                executed.insert(id.to_string());
            }
        }
        if o.action.starts_with("gate ") && v["status"] == 200 {
            let key = v.get("$key").and_then(Value::as_str).unwrap_or_default();
            if !key.is_empty() && !executed.contains(key) && !o.action.contains("mcp/") {
                return Some(format!(
                    "step {}: a gate call under {key} ran, though no intent had answered execute",
                    o.step
                ));
            }
        }
    }
    (!up_after).then(|| {
        "the core was down after the script (its control shim or its listener did not answer)"
            .to_string()
    })
}

pub fn run(
    connect: &Connector,
    cases: &[Case],
    seed: u64,
    seconds: f64,
    max: Option<u64>,
    out: Option<&Path>,
    stop: &std::sync::atomic::AtomicBool,
) -> Report {
    let seeds: Vec<&Case> = cases.iter().filter(|c| c.script.is_some()).collect();
    Report::run(&seeds, seed, seconds, max, stop, &mut |seed, rng| {
        let script = seed.script.clone().unwrap_or(json!({}));
        let mut steps = script["steps"].as_array().cloned().unwrap_or_default();
        for s in &mut steps {
            s.as_object_mut().map(|o| o.remove("expect"));
        }
        let mut done = vec![];
        for _ in 0..1 + rng.below(3) {
            if let Some((what, next)) = mutate(&steps, rng) {
                done.push(what);
                steps = next;
            }
        }
        let start = script.get("start").cloned().unwrap_or(json!({}));
        let with = |steps: &[Value]| {
            let mut case = seed.clone();
            case.script = Some(json!({ "start": start, "steps": steps }));
            case
        };
        let judge = |steps: &[Value]| {
            let (obs, up) = super::play_for_fuzz(&with(steps), connect);
            broken(&obs, up)
        };
        let why = judge(&steps)?;
        let (steps, why) = shrink(steps, why, &judge);
        let path = out.and_then(|d| write(d, &with(&steps), &why, &done).ok());
        Some((why, path))
    })
}

/// What a finding says, without the step it names (removing steps renumbers them).
fn kind_of(why: &str) -> &str {
    match why.split_once(": ") {
        Some((at, rest)) if at.starts_with("step ") => rest,
        _ => why,
    }
}

/// Remove steps one at a time while the script still breaks the same invariant.
fn shrink(
    mut steps: Vec<Value>,
    mut why: String,
    judge: &dyn Fn(&[Value]) -> Option<String>,
) -> (Vec<Value>, String) {
    let mut i = 0;
    while i < steps.len() {
        let mut fewer = steps.clone();
        fewer.remove(i);
        match judge(&fewer) {
            Some(w) if kind_of(&w) == kind_of(&why) => {
                steps = fewer;
                why = w;
            }
            _ => i += 1,
        }
    }
    (steps, why)
}

fn write(dir: &Path, case: &Case, why: &str, done: &[String]) -> std::io::Result<PathBuf> {
    let dir = dir.join("core-api");
    std::fs::create_dir_all(&dir)?;
    let id = format!(
        "core-{:08x}",
        crate::hash::fnv1a64(format!("{why}{done:?}{}", case.name()).as_bytes()) as u32
    );
    let body = json!({
        "id": id, "title": format!("fuzz finding: {why}"), "section": case.section, "level": "MUST",
        "spec": case.spec,
        "assumption": format!("found by hcpspec fuzz --suite core-api from {} ({})", case.name(), done.join("; ")),
        "script": case.script,
    });
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&body)? + "\n")?;
    Ok(path)
}
