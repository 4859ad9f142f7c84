//! The checks a scenario asks for ([`Asked`]), one function each, with its parameters.

use super::again;
use super::view::{entries, offered, summary_call, Req, View};
use super::{Fail, RunInfo};
use crate::suites::world::scenario::{Asked, Ending};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroUsize;

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

impl Asked {
    /// Judge the check on a played scenario. `c` is the check as the scenario wrote it: what a
    /// failure names (its `check`) and quotes.
    pub(super) fn judge(&self, v: &View, c: &Value) -> Result<(), Fail> {
        match self {
            Asked::Ends {
                with,
                offer,
                reason,
                status,
            } => ends(v, c, *with, *offer, reason.as_deref(), status.as_deref()),
            Asked::WaitsOn { offer } => waits_on(v, c, *offer),
            Asked::GateCancelled {} => gate_cancelled(v, c),
            Asked::GateCalls {
                route,
                count,
                min,
                max,
            } => gate_calls(v, c, route, *count, *min, *max),
            Asked::ReplaysSame {} => replays_same(v, c),
            Asked::Spilled {} => spilled(v, c),
            Asked::Offered { tools, not } => offered_tools(v, c, tools, not),
            Asked::Frame { m, nth, expect } => frame(v, c, m, *nth, expect),
            Asked::NoFrame { m } => no_frame(v, c, m),
            Asked::NotDropped {} => not_dropped(v, c),
            Asked::Count { m, offer, min, max } => count(v, c, m, *offer, *min, *max),
            Asked::Gate { route, nth, expect } => gate(v, c, route, *nth, expect),
            Asked::AnsweredOk { m } => answered_ok(v, c, m),
            Asked::InputEntries { count } => input_entries(v, c, *count),
            Asked::Renewals { offer } => renewals(v, c, *offer),
            Asked::ModelSaw { text } => model_saw(v, c, text),
            Asked::Entries { offer } => entries_per_step(v, c, *offer),
            Asked::PartsStored {} => parts_stored(v, c),
            Asked::NoImageFile {} => no_image_file(v, c),
            Asked::AskedAgain {} => again::asked_again(v, c),
            Asked::SameBody { route } => again::same_body(v, c, route),
            Asked::InputTexts { texts } => again::input_texts(v, c, texts),
            Asked::PromptPinned { text } => again::prompt_pinned(v, c, text),
            Asked::UniqueNames {} => again::unique_names(v, c),
            Asked::NoReference { artifact } => again::no_reference(v, c, artifact),
            Asked::ReadsPinned {} => again::reads_pinned(v, c),
            Asked::NoNewVersion {} => again::no_new_version(v, c),
            Asked::StopsOnCancel {} => again::stops_on_cancel(v, c),
            Asked::InvocationsByStep {} => again::invocations_by_step(v, c),
            Asked::CallsTarget { name, target } => again::calls_target(v, c, name, target),
            Asked::HostBearer {} => super::host::host_bearer(v, c),
            Asked::HostRenews {} => super::host::host_renews(v, c),
            Asked::HostRejoins {} => super::host::host_rejoins(v, c),
        }
    }
}

/// The runs an `offer` names: its one run (1-based), or every run.
fn runs<'a>(v: &View<'a>, offer: Option<NonZeroUsize>) -> Vec<&'a RunInfo> {
    match offer {
        Some(n) => v.p.runs.get(n.get() - 1).into_iter().collect(),
        None => v.p.runs.iter().collect(),
    }
}

fn ends(
    v: &View,
    c: &Value,
    with: Ending,
    offer: Option<NonZeroUsize>,
    reason: Option<&str>,
    status: Option<&str>,
) -> Result<(), Fail> {
    let runs = runs(v, offer);
    if runs.is_empty() {
        return Err(super::miss(
            c,
            "core offered no run: the harness never took one".into(),
            c.clone(),
            json!(null),
        ));
    }
    for run in runs {
        let how = run.ended.as_ref().map(|e| e.1.as_str());
        let output = v
            .reqs_about(&run.id)
            .find(|r| r.f["m"] == "output" && run.ended_at.is_some_and(|e| r.at < e));
        let release = v
            .reqs_about(&run.id)
            .find(|r| r.f["m"] == "lease.release" && run.ended_at.is_some_and(|e| r.at < e));
        let ok = match with.status() {
            None => {
                how == Some("release")
                    && release.is_some_and(|r| reason.is_none_or(|x| r.f["p"]["reason"] == x))
                    && !v.reqs_about(&run.id).any(|r| r.f["m"] == "output")
            }
            Some(kind) => {
                how == Some("output")
                    && output.is_some_and(|o| {
                        has_text(&o.f["p"], kind) && status.is_none_or(|s| has_text(&o.f["p"], s))
                    })
            }
        };
        if !ok {
            let seen = output.or(release).map(|r| r.f.clone());
            return Err(super::miss(
                c,
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

fn waits_on(v: &View, c: &Value, offer: Option<NonZeroUsize>) -> Result<(), Fail> {
    for run in runs(v, offer) {
        let waiting: BTreeSet<String> = v
            .intents_about(&run.id)
            .into_iter()
            .filter(|(_, _, a)| {
                a.is_some_and(|a| {
                    matches!(a["r"]["status"].as_str(), Some("pending" | "uncertain"))
                })
            })
            .map(|(_, id, _)| id)
            .collect();
        let out = v.reqs_about(&run.id).find(|r| r.f["m"] == "output");
        let named: BTreeSet<String> = out
            .and_then(|o| o.f["p"]["effectIds"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect();
        if waiting.is_empty() || named != waiting {
            return Err(super::miss(
                c,
                "the waiting output's effectIds are not the effects answered pending or uncertain"
                    .into(),
                json!({ "effectIds": waiting }),
                out.map_or(Value::Null, |o| o.f["p"].clone()),
            ));
        }
    }
    Ok(())
}

fn gate_cancelled(v: &View, c: &Value) -> Result<(), Fail> {
    let Some(cancel) =
        v.p.log.iter().position(|e| {
            e["via"] == "frame" && e["from"] == "core" && e["frame"]["m"] == "cancel"
        })
    else {
        return Err(super::miss(
            c,
            "core sent no cancel: the harness never reached the gate call the scenario cancels"
                .into(),
            c.clone(),
            Value::Null,
        ));
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
        return Err(super::miss(
            c,
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
            return Err(super::miss(
                c,
                format!("the {} call under {} was not cancelled through its cancel route before the run ended", g["route"].as_str().unwrap_or(""), g["key"]),
                json!(format!("POST /nylorun/v1/{}/{{key}}/cancel", if g["route"] == "model-calls" { "model-calls" } else { "tool-calls" })),
                g.clone(),
            ));
        }
    }
    Ok(())
}

fn gate_calls(
    v: &View,
    c: &Value,
    route: &str,
    count: Option<u64>,
    min: Option<u64>,
    max: Option<u64>,
) -> Result<(), Fail> {
    let n = v.gates().filter(|(_, g)| g["route"] == route).count() as u64;
    let ok =
        count.is_none_or(|x| x == n) && min.is_none_or(|x| n >= x) && max.is_none_or(|x| n <= x);
    if ok {
        Ok(())
    } else {
        Err(super::miss(
            c,
            format!("{n} calls to {route}"),
            c.clone(),
            json!(n),
        ))
    }
}

fn replays_same(v: &View, c: &Value) -> Result<(), Fail> {
    let (Some(first), Some(again)) = (v.p.runs.first(), v.p.runs.get(1)) else {
        return Err(super::miss(
            c,
            "the segment was not offered again: the harness took no second run".into(),
            c.clone(),
            Value::Null,
        ));
    };
    let asked = |run: &RunInfo| -> Vec<String> {
        v.intents_about(&run.id)
            .into_iter()
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
        return Err(super::miss(
            c,
            "the run that started the segment over did not ask for the same effect ids".into(),
            json!(expected),
            json!(actual),
        ));
    }
    Ok(())
}

fn spilled(v: &View, c: &Value) -> Result<(), Fail> {
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
            return Err(super::miss(
                c,
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
        return Err(super::miss(
            c,
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

fn offered_tools(v: &View, c: &Value, wanted: &[String], not: &[String]) -> Result<(), Fail> {
    let tools = offered(v);
    let descs: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["description"].as_str())
        .collect();
    for want in wanted {
        if !descs.iter().any(|d| d.contains(want)) {
            return Err(super::miss(
                c,
                format!("no tool offered for `{want}`"),
                c.clone(),
                json!(tools),
            ));
        }
    }
    for not in not {
        if descs.iter().any(|d| d.contains(not)) {
            return Err(super::miss(
                c,
                format!("a tool offered for `{not}`"),
                c.clone(),
                json!(tools),
            ));
        }
    }
    Ok(())
}

fn no_frame(v: &View, c: &Value, m: &str) -> Result<(), Fail> {
    match v.reqs_of(m).next() {
        Some(r) => Err(super::miss(
            c,
            format!("the harness sent `{m}`"),
            c.clone(),
            r.f.clone(),
        )),
        None => Ok(()),
    }
}

fn count(
    v: &View,
    c: &Value,
    m: &str,
    offer: Option<NonZeroUsize>,
    min: Option<u64>,
    max: Option<u64>,
) -> Result<(), Fail> {
    let per_run = offer.and_then(|n| v.p.runs.get(n.get() - 1));
    let n = match per_run {
        Some(run) => v.reqs_about(&run.id).filter(|r| r.f["m"] == m).count(),
        None => v.reqs_of(m).count(),
    } as u64;
    let ok = min.is_none_or(|x| n >= x) && max.is_none_or(|x| n <= x);
    if ok {
        Ok(())
    } else {
        Err(super::miss(
            c,
            format!("{n} `{m}` requests"),
            c.clone(),
            json!(n),
        ))
    }
}

fn answered_ok(v: &View, c: &Value, m: &str) -> Result<(), Fail> {
    let mut any = false;
    for r in v.reqs_of(m) {
        any = true;
        if let Some(a) = v.answer(&r).filter(|a| a["ok"] != true) {
            return Err(super::miss(
                c,
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
        Err(super::miss(
            c,
            format!("the harness sent no `{m}`"),
            c.clone(),
            Value::Null,
        ))
    }
}

fn input_entries(v: &View, c: &Value, want: u64) -> Result<(), Fail> {
    let Some(out) = v.reqs_of("output").next() else {
        return Err(super::miss(c, "no output".into(), c.clone(), Value::Null));
    };
    let n = entries(&out.f["p"])
        .iter()
        .filter(|e| e["kind"] == "input")
        .count() as u64;
    if n == want {
        Ok(())
    } else {
        Err(super::miss(
            c,
            format!("{n} input entries, not one per message"),
            json!(want),
            out.f["p"]["transcript"].clone(),
        ))
    }
}

/// § 2 "lease.renew {runId} every renewEveryMs": a held run is renewed at least every
/// two periods on average (the slack is for load, never for a slower cadence).
fn renewals(v: &View, c: &Value, offer: Option<NonZeroUsize>) -> Result<(), Fail> {
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
    // Each run's offer, by its id.
    let mut offers: BTreeMap<&str, &Value> = BTreeMap::new();
    for e in v.p.log.iter().filter(|e| e["event"] == "offer") {
        if let Some(run) = e["run"].as_str() {
            offers.entry(run).or_insert(e);
        }
    }
    for run in runs(v, offer) {
        let at = |e: &Value| e["at"].as_u64().unwrap_or(0);
        let Some(from) = offers.get(run.id.as_str()).copied() else {
            continue;
        };
        let until = run
            .ended
            .as_ref()
            .map_or_else(|| v.p.log.last().map_or(0, at), |e| e.0);
        let held = until.saturating_sub(at(from));
        let want = (held / (2 * period)).saturating_sub(1);
        let n = v
            .reqs_about(&run.id)
            .filter(|r| r.f["m"] == "lease.renew")
            .count() as u64;
        if n < want {
            return Err(super::miss(
                c,
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

/// The model was shown `text` (a tool's result, an outcome the journal answered): some
/// model call after the first carries it, in any member (the prompt's shape is open).
fn model_saw(v: &View, c: &Value, want: &str) -> Result<(), Fail> {
    let calls: Vec<&Value> = v
        .gates()
        .filter(|(_, g)| g["route"] == "model-calls")
        .map(|(_, g)| &g["body"])
        .collect();
    if calls.iter().skip(1).any(|b| contains_text(b, want)) {
        Ok(())
    } else {
        Err(super::miss(
            c,
            format!("no model call after the first carries `{want}`"),
            c.clone(),
            json!({ "modelCalls": calls.len() }),
        ))
    }
}

/// § 5b "A step's results are one tool-results entry": a step with tool calls writes one
/// tool-results entry. The steps are the run's model calls, whose answers hcpspec's Model Gate
/// wrote.
fn entries_per_step(v: &View, c: &Value, offer: Option<NonZeroUsize>) -> Result<(), Fail> {
    // A summary call (a compaction's) writes no candidate.
    let summaries: BTreeSet<String> = v
        .intents()
        .into_iter()
        .filter(|(q, _, _)| summary_call(q))
        .map(|(_, id, _)| id)
        .collect();
    for run in runs(v, offer) {
        let mut calls: Vec<(&str, &Value)> = Vec::new();
        for (_, g) in v.gates_about(&run.id).filter(|(_, g)| {
            g["route"] == "model-calls" && !g["key"].as_str().is_some_and(|k| summaries.contains(k))
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
        let Some(out) = v.reqs_about(&run.id).find(|r| r.f["m"] == "output") else {
            return Err(super::miss(
                c,
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
        // Only what § 5b fixes: one tool-results entry per step with tool calls. How many
        // candidate and final entries a harness writes (a model call retried, a step's answer
        // kept once) the spec does not count.
        let want = json!({ "tool-results": with_tools });
        let seen = json!({ "tool-results": count("tool-results") });
        if want != seen {
            return Err(super::miss(
                c,
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

/// § 5b "An MCP image, audio or blob resource part is base64 in the answer. Store it": each
/// such part of a tool's answer was written as an artifact (whatever effectId it names).
fn parts_stored(v: &View, c: &Value) -> Result<(), Fail> {
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
            // "Store it": with artifact.write, whatever it names (the call's effectId is asked
            // of a spilled result, "Spill the rest", not of a binary part).
            if !stored.iter().any(|(_, b)| *b == bytes) {
                return Err(super::miss(
                    c,
                    format!(
                        "a {} part of {eid}'s answer ({} bytes) was not stored with artifact.write",
                        part["type"].as_str().unwrap_or(""),
                        bytes.len()
                    ),
                    json!({ "artifact.write": { "bytes": bytes.len() } }),
                    json!({ "stored": stored.iter().map(|(e, b)| json!({ "effectId": e, "bytes": b.len() })).collect::<Vec<_>>() }),
                ));
            }
        }
    }
    if seen == 0 {
        return Err(super::miss(
            c,
            "no tool answered a binary part: the harness never called the tool".into(),
            c.clone(),
            Value::Null,
        ));
    }
    Ok(())
}

/// § 5b "send an image to the model as a file only when turn.start.model reads images":
/// no model call of a run whose model does not read images names a stored image's
/// artifact as a file (an object naming its artifactId; a note in text is free).
fn no_image_file(v: &View, c: &Value) -> Result<(), Fail> {
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
        if let Some(id) = images
            .iter()
            .find(|id| super::names_artifact(&g["body"], id))
        {
            return Err(super::miss(
                c,
                format!("a model call sends the stored image {id} as a file, though turn.start.model does not read images"),
                json!({ "inputs": run.start["model"]["inputs"] }),
                g["body"]["call"].clone(),
            ));
        }
    }
    Ok(())
}

fn not_dropped(v: &View, c: &Value) -> Result<(), Fail> {
    match v.p.log.iter().find(|e| e["event"] == "drop") {
        Some(e) => Err(super::miss(
            c,
            "core dropped the harness for silence".into(),
            c.clone(),
            e.clone(),
        )),
        None => Ok(()),
    }
}

/// The nth harness request of a method matches.
fn frame(v: &View, c: &Value, m: &str, nth: NonZeroUsize, expect: &Value) -> Result<(), Fail> {
    let r = v.reqs_of(m).nth(nth.get() - 1);
    let what = format!("`{m}` request #{nth}");
    matches(c, what, r.map(|r| &r.f["p"]), expect)
}

/// The nth call on a gate route matches.
fn gate(v: &View, c: &Value, route: &str, nth: NonZeroUsize, expect: &Value) -> Result<(), Fail> {
    let g = v
        .gates()
        .filter(|(_, g)| g["route"] == route)
        .nth(nth.get() - 1);
    let what = format!("{route} gate call #{nth}");
    matches(c, what, g.map(|(_, g)| &g["body"]), expect)
}

fn matches(c: &Value, what: String, seen: Option<&Value>, expect: &Value) -> Result<(), Fail> {
    let Some(seen) = seen else {
        return Err(super::miss(c, format!("no {what}"), c.clone(), Value::Null));
    };
    crate::case::matcher::check(expect, seen, &Default::default())
        .map(|_| ())
        .map_err(|mm| {
            super::miss(
                c,
                format!("{what} at {}: {}", mm.path, mm.message),
                mm.expected,
                seen.clone(),
            )
        })
}
