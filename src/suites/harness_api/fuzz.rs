//! `hcpspec fuzz --suite harness-api`: mutate what core and the gates send a harness (wrong
//! types, unknown methods, non-JSON and binary frames, oversize frames, answers for unknown or
//! used ids, out-of-order answers, drops) on top of the suite's scenarios, and check the
//! harness's invariants: never a gate call without `execute`, nothing about a run after its
//! end, only well-formed frames, hello first; and never a crash of hcpspec. A finding is shrunk
//! (injections removed while it still fails) and written as a scenario file.

use super::launch::Harness;
use crate::case::Case;
use crate::mutate::{Rng, Source};
use crate::suites::world::scenario::Scenario;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The invariants a harness keeps whatever core and the gates send.
pub const INVARIANTS: &[&str] = &[
    "one-json-text-message",
    "hello-first",
    "journaled-first",
    "idempotency-key",
    "nothing-after-the-end",
    "ids-per-sender",
];

pub struct Config {
    pub harness: Harness,
    pub seed: u64,
    pub seconds: f64,
    pub max_cases: Option<u64>,
    /// Stop once this many findings are in.
    pub max_findings: Option<usize>,
    pub out: Option<PathBuf>,
}

#[derive(Debug)]
pub struct Finding {
    pub check: String,
    pub message: String,
    pub seed_case: String,
    pub injections: usize,
    pub path: Option<PathBuf>,
}

pub struct Report {
    pub cases: u64,
    pub findings: Vec<Finding>,
    pub errors: u64,
    pub elapsed: Duration,
}

/// One disruption core or the gates may cause.
fn disruption(r: &mut Rng) -> Value {
    let id = r.below(8) as u64 + 1;
    match r.below(14) {
        0 => json!({ "sendText": "{not json" }),
        1 => json!({ "sendText": "{\"t\":\"ping\"}{\"t\":\"ping\"}" }),
        2 => json!({ "sendBinary": "{\"t\":\"ping\"}" }),
        3 => json!({ "send": { "t": "msg", "m": "x.unknown", "p": {} } }),
        4 => json!({ "send": { "t": "req", "id": id, "m": "x.unknown", "p": {} } }),
        5 => json!({ "send": { "t": 7 } }),
        6 => json!({ "send": { "t": "res", "id": 987_654, "ok": true, "r": {} } }),
        7 => {
            json!({ "send": { "t": "res", "id": id, "ok": false, "e": { "code": "internal", "message": "injected" } } })
        }
        8 => json!({ "send": { "t": "msg", "m": "cancel", "p": { "runId": 5, "reason": [] } } }),
        9 => json!({ "send": { "t": "abort", "id": id } }),
        10 => {
            json!({ "sendText": format!("{{\"t\":\"msg\",\"m\":\"hcpspec.big\",\"p\":{{\"x\":\"{}\"}}}}", "x".repeat(1 << 20)) })
        }
        11 => json!("drop"),
        12 => json!({ "send": { "t": "res", "id": id, "ok": true, "r": { "status": "execute" } } }),
        _ => json!({ "send": { "t": "ping", "extra": true } }),
    }
}

/// One fault of what the gates answer: a gate error, a body that is not JSON or of the wrong
/// shape, a stale run.
fn gate_fault(r: &mut Rng) -> Value {
    let route = ["model-calls", "tool-calls", "http-calls"][r.below(3)];
    let (status, body) = match r.below(6) {
        0 => (
            500,
            json!({ "body": { "error": { "code": "internal", "message": "injected" } } }),
        ),
        1 => (200, json!({ "text": "<html>not json</html>" })),
        2 => (200, json!({ "body": { "outcome": 7 } })),
        3 => (
            409,
            json!({ "body": { "error": { "code": "run_stale", "message": "injected" } } }),
        ),
        4 => (200, json!({ "body": [] })),
        _ => (502, json!({ "text": "" })),
    };
    let mut f = json!({ "route": route, "nth": 1 + r.below(2), "status": status });
    if let Some(o) = body.as_object() {
        f.as_object_mut().expect("object").extend(o.clone());
    }
    json!({ "gateFault": f })
}

fn when(r: &mut Rng) -> Value {
    match r.below(4) {
        0 => json!({ "gate": "model-calls" }),
        1 => {
            let m = [
                "lease",
                "effect.intent",
                "effect.outcome",
                "transcript.read",
                "output",
            ][r.below(5)];
            json!({ "frame": m })
        }
        2 => json!({ "afterMs": r.below(300) }),
        _ => json!({ "frame": "hello" }),
    }
}

/// The scenario with injections added, as a case file's `scenario`: triggers into `on`, gate
/// faults into `gateFaults`.
fn inject(base: &Value, injections: &[Value]) -> Value {
    let mut sc = base.clone();
    let (faults, triggers): (Vec<&Value>, Vec<&Value>) = injections
        .iter()
        .partition(|i| i.get("gateFault").is_some());
    let on = sc["on"].as_array().cloned().unwrap_or_default();
    sc["on"] = json!(on
        .into_iter()
        .chain(triggers.into_iter().cloned())
        .collect::<Vec<_>>());
    if !faults.is_empty() {
        sc["gateFaults"] = json!(faults
            .iter()
            .map(|f| f["gateFault"].clone())
            .collect::<Vec<_>>());
    }
    sc["deadlineMs"] = json!(sc["deadlineMs"].as_u64().unwrap_or(5000).min(3000));
    sc
}

/// Does the harness break an invariant under this scenario? (or hcpspec panic.)
fn trial(scenario: &Value, harness: &Harness) -> Result<Option<(String, String)>, String> {
    let sc: Scenario = serde_json::from_value(scenario.clone()).map_err(|e| e.to_string())?;
    let played = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        super::play(sc.into(), harness)
    }));
    match played {
        Err(_) => Ok(Some((
            "hcpspec-crash".into(),
            "hcpspec panicked playing the scenario".into(),
        ))),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok((p, _, _))) => {
            Ok(super::judge::judge_only(&p, INVARIANTS).map(|f| (f.check, f.message)))
        }
    }
}

pub fn run(cfg: &Config, cases: &[Case], stop: &std::sync::atomic::AtomicBool) -> Report {
    let start = Instant::now();
    let mut rng = Rng::new(cfg.seed);
    let mut report = Report {
        cases: 0,
        findings: vec![],
        errors: 0,
        elapsed: Duration::ZERO,
    };
    let seeds: Vec<&Case> = cases
        .iter()
        .filter(|c| c.member("scenario").is_some())
        .collect();
    if seeds.is_empty() {
        return report;
    }
    while start.elapsed().as_secs_f64() < cfg.seconds
        && cfg.max_cases.is_none_or(|m| report.cases < m)
        && cfg.max_findings.is_none_or(|m| report.findings.len() < m)
        && !stop.load(std::sync::atomic::Ordering::Relaxed)
    {
        let seed = seeds[rng.below(seeds.len())];
        let base = seed.member("scenario").cloned().unwrap_or(json!({}));
        let injections: Vec<Value> = (0..1 + rng.below(3))
            .map(|_| match rng.below(4) {
                0 => gate_fault(&mut rng),
                _ => json!({ "when": when(&mut rng), "do": disruption(&mut rng) }),
            })
            .collect();
        report.cases += 1;
        match trial(&inject(&base, &injections), &cfg.harness) {
            Err(_) => report.errors += 1,
            Ok(None) => {}
            Ok(Some((check, message))) => {
                let kept = shrink(&base, injections, &cfg.harness, &check);
                let path = cfg
                    .out
                    .as_ref()
                    .and_then(|dir| write(dir, seed, &base, &kept, &check, &message).ok());
                report.findings.push(Finding {
                    check,
                    message,
                    seed_case: seed.name(),
                    injections: kept.len(),
                    path,
                });
            }
        }
    }
    report.elapsed = start.elapsed();
    report
}

/// Drop injections one at a time while the same invariant still fails.
fn shrink(base: &Value, mut injections: Vec<Value>, h: &Harness, check: &str) -> Vec<Value> {
    let mut i = 0;
    while i < injections.len() && injections.len() > 1 {
        let mut fewer = injections.clone();
        fewer.remove(i);
        match trial(&inject(base, &fewer), h) {
            Ok(Some((c, _))) if c == check => injections = fewer,
            _ => i += 1,
        }
    }
    injections
}

fn write(
    dir: &Path,
    seed: &Case,
    base: &Value,
    injections: &[Value],
    check: &str,
    message: &str,
) -> std::io::Result<PathBuf> {
    let dir = dir.join("harness-api");
    std::fs::create_dir_all(&dir)?;
    let body = json!({ "seed": seed.name(), "check": check, "message": message, "injections": injections });
    let id = format!(
        "{check}-{:08x}",
        crate::hash::fnv1a64(body.to_string().as_bytes()) as u32
    );
    // The seed's own checks may fail under the injections; the finding is the invariant.
    let mut scenario = inject(base, injections);
    scenario["checks"] = json!([]);
    let case = json!({
        "id": id,
        "title": format!("fuzz finding: {message}"),
        "section": seed.section,
        "level": "MUST",
        "spec": seed.spec,
        "assumption": format!("found by hcpspec fuzz --suite harness-api from {}; the harness broke `{check}`", seed.name()),
        "scenario": scenario,
    });
    let path = dir.join(format!("{id}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&case)? + "\n")?;
    Ok(path)
}
