//! Asked checks of issue 43: sameness across a re-send (a lost hop asked again, a rejoin sent
//! again), the queued messages' texts entry by entry, the memory index's place in each prompt,
//! and tool names offered once each.

use super::view::{entries, View};
use super::Fail;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// § 4 "When a gate hop is lost, ask the same intent again": after each lost tool hop, the run
/// asks an intent for the same effect id with the same request hash as the intent answered
/// `execute` before it (a new id, or the same id under another hash, is another intent).
pub(super) fn asked_again(v: &View, c: &Value) -> Result<(), Fail> {
    let lost: Vec<(usize, &Value)> = v
        .effect_gates()
        .filter(|(_, g)| g["lost"] == true && g["route"] != "model-calls")
        .collect();
    if lost.is_empty() {
        return Err(super::miss(
            c,
            "no tool call's gate hop was lost: the harness made no call the scenario could lose"
                .into(),
            c.clone(),
            Value::Null,
        ));
    }
    let intents = v.intents();
    for (at, g) in lost {
        let key = g["key"].as_str().unwrap_or_default();
        let first = intents.iter().find(|(q, id, _)| q.at < at && id == key);
        let hash = first.map(|(q, _, _)| &q.f["p"]["requestHash"]);
        let after: Vec<(&str, &Value)> = intents
            .iter()
            .filter(|(q, _, _)| q.at > at && q.f["p"]["runId"] == g["run"])
            .map(|(q, id, _)| (id.as_str(), &q.f["p"]))
            .collect();
        let same = after
            .iter()
            .any(|(id, p)| *id == key && Some(&p["requestHash"]) == hash);
        if !same {
            return Err(super::miss(
                c,
                format!("the lost hop of `{key}` was not asked again as the same intent (its effect id and request hash)"),
                json!({ "effectId": key, "requestHash": hash }),
                json!(after.iter().map(|(_, p)| json!({ "effect": p["effect"], "requestHash": p["requestHash"] })).collect::<Vec<_>>()),
            ));
        }
    }
    Ok(())
}

/// § 4 "Send it again with the same key and body": the calls on `route` under one
/// Idempotency-Key carry one body (as JSON), and some key was sent more than once.
pub(super) fn same_body(v: &View, c: &Value, route: &str) -> Result<(), Fail> {
    let mut by_key: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (_, g) in v.gates().filter(|(_, g)| g["route"] == route) {
        if let Some(k) = g["key"].as_str() {
            by_key.entry(k).or_default().push(&g["body"]);
        }
    }
    if !by_key.values().any(|b| b.len() > 1) {
        return Err(super::miss(
            c,
            format!("no call on {route} was sent again under its key"),
            c.clone(),
            json!(by_key.keys().collect::<Vec<_>>()),
        ));
    }
    for (k, bodies) in by_key {
        if let Some(other) = bodies.iter().find(|b| **b != bodies[0]) {
            return Err(super::miss(
                c,
                format!("the call under `{k}` was sent again with another body"),
                bodies[0].clone(),
                (*other).clone(),
            ));
        }
    }
    Ok(())
}

/// Find `s` within a string anywhere in `v`.
fn holds(v: &Value, s: &str) -> bool {
    match v {
        Value::String(x) => x.contains(s),
        Value::Array(a) => a.iter().any(|x| holds(x, s)),
        Value::Object(o) => o.values().any(|x| holds(x, s)),
        _ => false,
    }
}

/// § 3 "each one of the shapes before, in order; write each as its own input transcript
/// entry": the first output's input entries, in order, hold the messages' texts, each its own.
pub(super) fn input_texts(v: &View, c: &Value, texts: &[String]) -> Result<(), Fail> {
    let Some(out) = v.reqs_of("output").next() else {
        return Err(super::miss(c, "no output".into(), c.clone(), Value::Null));
    };
    let inputs: Vec<&Value> = entries(&out.f["p"])
        .into_iter()
        .filter(|e| e["kind"] == "input")
        .collect();
    let right = inputs.len() == texts.len()
        && inputs.iter().enumerate().all(|(i, e)| {
            texts
                .iter()
                .enumerate()
                .all(|(j, t)| holds(e, t) == (i == j))
        });
    if right {
        Ok(())
    } else {
        Err(super::miss(
            c,
            "the input entries are not the messages, one each, in order".into(),
            json!(texts),
            json!(inputs),
        ))
    }
}

/// Where `s` sits in `v`: the pointers of the strings holding it, in document order.
fn places(v: &Value, s: &str, at: String, out: &mut Vec<String>) {
    match v {
        Value::String(x) if x.contains(s) => out.push(at),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| places(x, s, format!("{at}/{i}"), out)),
        Value::Object(o) => o
            .iter()
            .for_each(|(k, x)| places(x, s, crate::pointer::push(&at, k), out)),
        _ => {}
    }
}

/// § 3 "Pin the index where the prompt prefix stays cacheable": every model call's prompt
/// holds `text` (a line of the memory index), first at the same place in each.
pub(super) fn prompt_pinned(v: &View, c: &Value, text: &str) -> Result<(), Fail> {
    let mut seen: Vec<Option<String>> = Vec::new();
    for (_, g) in v.gates().filter(|(_, g)| g["route"] == "model-calls") {
        let mut at = Vec::new();
        places(&g["body"]["call"]["prompt"], text, String::new(), &mut at);
        seen.push(at.into_iter().next());
    }
    let pinned = seen.len() > 1 && seen.iter().all(|p| p.is_some() && *p == seen[0]);
    if pinned {
        Ok(())
    } else {
        Err(super::miss(
            c,
            format!("the model calls' prompts do not hold `{text}` at one place each time (null: not at all)"),
            json!({ "text": text, "samePlaceInEveryCall": true, "calls": "2 or more" }),
            json!(seen),
        ))
    }
}

/// § 3 "naming and describing tools is the harness's" (PROFILE: offered under unique names):
/// no model call offers two tools under one name.
pub(super) fn unique_names(v: &View, c: &Value) -> Result<(), Fail> {
    for (_, g) in v.gates().filter(|(_, g)| g["route"] == "model-calls") {
        let mut names: Vec<&str> = g["body"]["call"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(super::miss(
                c,
                format!("two tools offered under one name, `{}`", w[0]),
                json!("each tool under a name of its own"),
                json!(names),
            ));
        }
    }
    Ok(())
}

/// § 5 "It refuses … a text file as a media part … past limits.modelFileBytes"; § 3
/// "modelFileBytes: … the largest a harness should show it": no model call holds a media part
/// whose reference names the artifact.
pub(super) fn no_reference(v: &View, c: &Value, artifact: &str) -> Result<(), Fail> {
    let sent = v
        .gates()
        .filter(|(_, g)| g["route"] == "model-calls")
        .find(|(_, g)| super::names_artifact(&g["body"]["call"], artifact));
    match sent {
        None => Ok(()),
        Some((_, g)) => Err(super::miss(
            c,
            format!("a model call holds a media part naming `{artifact}`"),
            json!({ "mediaPartNaming": artifact, "in": "no model call" }),
            g["body"]["call"]["prompt"].clone(),
        )),
    }
}

/// § 4b "Ask for later chunks with the version the first answer named, since a new one may
/// land": every `artifact.read` of an artifact after the first answered one names that answer's
/// version; some artifact was read more than once.
pub(super) fn reads_pinned(v: &View, c: &Value) -> Result<(), Fail> {
    let mut first: BTreeMap<String, Value> = BTreeMap::new();
    let mut again = 0;
    for r in v.reqs_of("artifact.read") {
        let id = r.f["p"]["artifactId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if let Some(version) = first.get(&id) {
            again += 1;
            if &r.f["p"]["version"] != version {
                return Err(super::miss(
                    c,
                    format!(
                        "a later read of `{id}` does not name the version the first answer named"
                    ),
                    json!({ "version": version }),
                    r.f["p"].clone(),
                ));
            }
            continue;
        }
        let answered = v
            .answer(&r)
            .map(|a| a["r"]["artifact"]["version"].clone())
            .filter(|x| !x.is_null());
        if let Some(version) = answered {
            first.insert(id, version);
        }
    }
    if again == 0 {
        return Err(super::miss(
            c,
            "no artifact was read in more than one request".into(),
            c.clone(),
            json!(first),
        ));
    }
    Ok(())
}

/// § 5b "A crash can run a call again, and the gate answers it with the same bytes. A key made
/// from the effect id and the bytes' hash writes nothing new then": the same bytes stored again
/// for the same call start no new version (every begin after the first answered `created:
/// false`); some call's bytes were stored twice.
pub(super) fn no_new_version(v: &View, c: &Value) -> Result<(), Fail> {
    let mut begins: BTreeMap<(String, u64), Vec<&Value>> = BTreeMap::new();
    for r in v
        .reqs_of("artifact.write")
        .filter(|r| r.f["p"]["op"] == "begin")
    {
        let p = &r.f["p"];
        let size = p["base64"]
            .as_str()
            .and_then(crate::suites::world::unb64)
            .map(|b| b.len() as u64)
            .or_else(|| p["size"].as_u64())
            .unwrap_or(0);
        let eid = p["effectId"].as_str().unwrap_or_default().to_string();
        if let Some(a) = v.answer(&r).filter(|a| a["ok"] == true) {
            begins.entry((eid, size)).or_default().push(&a["r"]);
        }
    }
    if !begins.values().any(|b| b.len() > 1) {
        return Err(super::miss(
            c,
            "no call's result was stored again: the scenario's crash ran no call twice".into(),
            c.clone(),
            json!(begins.keys().map(|k| &k.0).collect::<Vec<_>>()),
        ));
    }
    for ((eid, _), answers) in begins {
        let new: Vec<&&Value> = answers.iter().filter(|a| a["created"] != false).collect();
        if new.len() > 1 {
            return Err(super::miss(
                c,
                format!("the result of `{eid}`, stored again after a crash, started a new version"),
                json!({ "afterTheFirst": { "status": "written", "created": false } }),
                json!(answers),
            ));
        }
    }
    Ok(())
}

/// § 8 "On cancel and deadline: stop": once core sent a run `cancel` (reason cancel or
/// deadline), the run asks no intent for a model effect: a step needs the one before it done,
/// so a model intent after the cancel is a step the harness began after it (what it sent before
/// crosses the cancel).
pub(super) fn stops_on_cancel(v: &View, c: &Value) -> Result<(), Fail> {
    let cancels: Vec<(usize, &Value)> =
        v.p.log
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e["via"] == "frame"
                    && e["from"] == "core"
                    && e["frame"]["t"] == "msg"
                    && e["frame"]["m"] == "cancel"
                    && matches!(
                        e["frame"]["p"]["reason"].as_str(),
                        Some("cancel" | "deadline")
                    )
            })
            .map(|(i, e)| (i, &e["frame"]["p"]["runId"]))
            .collect();
    if cancels.is_empty() {
        return Err(super::miss(
            c,
            "core sent no cancel".into(),
            c.clone(),
            Value::Null,
        ));
    }
    for (at, run) in cancels {
        let late = v.reqs_of("effect.intent").find(|q| {
            q.at > at && &q.f["p"]["runId"] == run && q.f["p"]["effect"]["kind"] == "model"
        });
        if let Some(q) = late {
            return Err(super::miss(
                c,
                format!("{run} began another step (a model intent) after core's cancel"),
                json!("no new step after the cancel: stop"),
                q.f.clone(),
            ));
        }
    }
    Ok(())
}

/// An intent's `context.invocationId` (on the effect, or beside it).
fn invocation(q: &Value) -> &Value {
    match &q["p"]["effect"]["context"]["invocationId"] {
        Value::Null => &q["p"]["context"]["invocationId"],
        x => x,
    }
}

/// § 4 "a model effect needs invocationId (the step); a tool effect needs callId … and
/// invocationId": each step's model intent names an invocationId no other step's does, and each
/// tool intent names the one of the step whose answer made its call (the model intent before
/// it, a summary call aside); two steps at least.
pub(super) fn invocations_by_step(v: &View, c: &Value) -> Result<(), Fail> {
    let mut steps: Vec<&Value> = Vec::new();
    for (q, id, _) in v.intents() {
        let kind = &q.f["p"]["effect"]["kind"];
        if kind == "model" && !super::view::summary_call(&q) {
            let inv = invocation(q.f);
            if inv.is_null() || steps.contains(&inv) {
                return Err(super::miss(
                    c,
                    format!("the model intent `{id}` names no invocationId of its own step"),
                    json!({ "otherSteps": steps }),
                    q.f["p"].clone(),
                ));
            }
            steps.push(inv);
        } else if kind == "tool" {
            let step = steps.last().copied().unwrap_or(&Value::Null);
            if invocation(q.f) != step {
                return Err(super::miss(
                    c,
                    format!("the tool intent `{id}` does not name its step's invocationId"),
                    json!({ "invocationId": step }),
                    q.f["p"].clone(),
                ));
            }
        }
    }
    if steps.len() < 2 {
        return Err(super::miss(
            c,
            "fewer than two steps".into(),
            c.clone(),
            json!(steps),
        ));
    }
    Ok(())
}

/// § 4's target table: every tool intent whose `toolName` (the name the model called it by)
/// holds `name` targets `target` (its members equal). A harness that offered no such tool made
/// no such call, and holds.
pub(super) fn calls_target(
    v: &View,
    c: &Value,
    name: &str,
    target: &serde_json::Map<String, Value>,
) -> Result<(), Fail> {
    for (q, id, _) in v.intents() {
        let e = &q.f["p"]["effect"];
        let called =
            e["kind"] == "tool" && e["toolName"].as_str().is_some_and(|n| n.contains(name));
        if called && target.iter().any(|(k, x)| &e["target"][k] != x) {
            return Err(super::miss(
                c,
                format!("the call `{id}` of the model's `{name}` tool targets another"),
                json!(target),
                e["target"].clone(),
            ));
        }
    }
    Ok(())
}
