//! `inproc:variant:freedom:SEED[:CLASS+…]`: the reference with every point spec 000 leaves free
//! decided by a seed (`crate::knob::Freedom`). Most of it is done here, on the JSON answers the
//! shim sends (`dress`), so the reference's pipeline stays the reference's; what only the
//! pipeline can decide (the allowed variants' choices, what activation and a public connect
//! demand) it asks through [`chooses`] and [`activation`].
//!
//! By class:
//! - order: `listPacks`, availability `verbs`, the sink, the audit log, install issues;
//! - words: every denial and refusal text (declared through the denial map it gives
//!   `initialize`), lint rule names (through its rule map) and issue messages, the Binding
//!   identities and tokens its hub mints where the case's hub script gives none (`hub.rs`),
//!   the `runtime_id`s its shim mints;
//! - extra: an `x-freedom-…` member on every object it answers that no schema closes (never
//!   inside what is not its own: a Sense payload, an adapter's output, the surface as loaded);
//! - shapes: every allowed variant's choice by a coin, an exec result wrapped or holding the
//!   adapter's stdout as raw text, a bin's non-zero exit answered `ok: true` with the code in
//!   the result, sink and audit records with more fields;
//! - preconditions: activation with no grant at all, with any grant (the reference's), or only
//!   with `pack.activate` or an exec grant; `pack.connect` demanded before a public pack's
//!   shortcut; declared arg types, declared args only, Sense only once connected or activated;
//! - time: every answer delayed by up to a few milliseconds.

use super::variant::Variant;
use crate::knob::{Class, Freedom, Knob as _};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The class a variant's choice belongs to, for the freedom's coin; none for `dialect`, whose
/// words and shapes the freedom decides on its own.
fn class_of(v: Variant) -> Option<Class> {
    use Variant::*;
    Some(match v {
        MintInExec | JailPerExec | PassThroughPairs | SpecLintRules | PublicConnectFlag
        | DenialsUnaudited | CredentialFile | BinPathAllowed | HubUsedUpMints => Class::Shapes,
        SenseOnAfterActivation
        | NativeLocalAllowList
        | SenseAfterConnect
        | TypedArgs
        | DeclaredArgsOnly => Class::Preconditions,
        ActivationLast => Class::Order,
        // narrow-activation is one of the three readings of `activation`.
        NarrowActivation | Dialect => return None,
        // A driver without connect skips every case that connects: never a coin of the freedom.
        NoConnect => return None,
    })
}

/// Does the freedom take variant `v`'s choice? A coin per variant and seed.
pub fn chooses(f: Option<Freedom>, v: Variant) -> bool {
    let Some(f) = f else { return false };
    if v == Variant::NarrowActivation {
        return activation(Some(f)) == Activation::Narrow;
    }
    class_of(v).is_some_and(|c| f.coin(c, &format!("variant:{}", v.name())))
}

/// What activating a pack demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activation {
    /// Any known capability on the pack (the reference).
    AnyGrant,
    /// `pack.activate` or an exec grant (narrow-activation).
    Narrow,
    /// Nothing: any installed pack activates; the grants decide what runs (spec 000 names no
    /// activation capability, and authorises execs).
    Open,
}

pub fn activation(f: Option<Freedom>) -> Activation {
    match f.map_or(0, |f| f.below(Class::Preconditions, "activation", 3)) {
        1 => Activation::Narrow,
        2 => Activation::Open,
        _ => Activation::AnyGrant,
    }
}

/// Does connect demand `pack.connect` of a public pack too, before its shortcut (as the
/// spec's `connect` checks the grant first)?
pub fn public_connect_needs_grant(f: Option<Freedom>) -> bool {
    f.is_some_and(|f| f.coin(Class::Preconditions, "public-connect-grant"))
}

/// The denial classes, the most specific first (`missing-write` before `no-grant`).
const CLASSES: &[&str] = super::variant::DIALECT_ORDER;

/// A class's mark in the freedom's texts: what its denial map looks for.
fn mark(f: Freedom, class: &str) -> String {
    format!("[{}]", f.word("class", class))
}

/// `text`, a reference text, in the freedom's words: other words, with the mark of its class
/// when it has one.
pub fn text(f: Freedom, text: &str) -> String {
    if !f.takes(Class::Words) {
        return text.to_string();
    }
    static MAP: std::sync::OnceLock<Vec<(&str, regex::Regex)>> = std::sync::OnceLock::new();
    let map = MAP.get_or_init(|| {
        let m = super::denial_map();
        CLASSES
            .iter()
            .filter_map(|c| Some((*c, regex::Regex::new(m.get(*c)?).ok()?)))
            .collect()
    });
    let said = f.word("text", text);
    match map.iter().find(|(_, re)| re.is_match(text)) {
        Some((class, _)) => format!("{said} {}", mark(f, class)),
        None => said,
    }
}

/// Its denial map, over the texts [`text`] gives.
pub fn denial_map(f: Freedom) -> BTreeMap<String, String> {
    let tail = |classes: &[&str]| {
        let marks: Vec<String> = classes.iter().map(|c| regex::escape(&mark(f, c))).collect();
        format!(" (?:{})$", marks.join("|"))
    };
    let mut map: BTreeMap<String, String> = CLASSES
        .iter()
        .map(|c| (c.to_string(), tail(&[c])))
        .collect();
    map.insert(
        "no-grant".into(),
        tail(&[
            "no-grant",
            "missing-read",
            "missing-write",
            "missing-connect",
        ]),
    );
    map
}

/// A lint rule's name in its words.
pub fn rule(f: Freedom, rule: &str) -> String {
    f.word("rule", rule)
}

/// Its rule map, over the names [`rule`] gives.
pub fn rule_map(f: Freedom) -> BTreeMap<String, String> {
    crate::suites::hcp::pack::RULES
        .iter()
        .map(|r| (r.to_string(), format!("^{}$", regex::escape(&rule(f, r)))))
        .collect()
}

/// The answer to `method` as the freedom gives it: reordered, reworded, with members added and
/// open shapes taken another way; then delayed.
pub fn dress(f: Freedom, method: &str, v: &mut Value) {
    match method {
        "initialize" => f.extra("initialize", v),
        "runtime.create" | "pack.check" => {
            if let Some(issues) = v.get_mut("issues").and_then(Value::as_array_mut) {
                f.permute(method, issues);
                for i in issues.iter_mut() {
                    reword(f, i, &["message"]);
                    if let Some(r) = i.get("rule").and_then(Value::as_str) {
                        let r = rule(f, r);
                        i["rule"] = json!(r);
                    }
                    f.extra("issue", i);
                }
            }
            f.extra(method, v);
        }
        "runtime.activate" => {
            // One result per pack, in order (docs/shim-protocol.md): never permuted.
            for r in v.as_array_mut().into_iter().flatten() {
                pack_result(f, r);
            }
        }
        "runtime.connect" => pack_result(f, v),
        "runtime.exec" | "runtime.cli" => envelope(f, v),
        "runtime.listPacks" => {
            if let Some(packs) = v.as_array_mut() {
                f.permute("listPacks", packs);
                packs.iter_mut().for_each(|p| listed(f, p));
            }
        }
        "runtime.getPack" => listed(f, v),
        "runtime.availability" => {
            reasons(f, v);
            if let Some(verbs) = v.get_mut("verbs").and_then(Value::as_array_mut) {
                f.permute("availability", verbs);
                for verb in verbs.iter_mut() {
                    reasons(f, verb);
                    f.extra("availability-verb", verb);
                }
            }
            f.extra("availability", v);
        }
        "runtime.sense" => {
            reword(f, v, &["reason"]);
            f.extra("sense", v);
        }
        "runtime.senseSink" => records(f, "sink", v),
        // issue 44: the grants held, in an order of their own, each with an extra member.
        "runtime.grants" => {
            if let Some(grants) = v.as_array_mut() {
                f.permute("grants", grants);
                grants.iter_mut().for_each(|g| f.extra("grant", g));
            }
        }
        "runtime.audit" => {
            for r in v.as_array_mut().into_iter().flatten() {
                reword(f, r, &["error"]);
            }
            records(f, "audit", v);
        }
        _ => f.extra(method, v),
    }
    let ms = f.delay_ms(method, 3);
    if ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

fn reword(f: Freedom, v: &mut Value, members: &[&str]) {
    for m in members {
        if let Some(t) = v.get(*m).and_then(Value::as_str) {
            let t = text(f, t);
            v[*m] = json!(t);
        }
    }
}

fn pack_result(f: Freedom, r: &mut Value) {
    reword(f, r, &["error"]);
    if let Some(b) = r.get_mut("binding").filter(|b| b.is_object()) {
        f.extra("binding", b);
    }
    f.extra("pack-result", r);
}

fn envelope(f: Freedom, e: &mut Value) {
    // A bin that exited non-zero: a failure as ok: false, or a result that carries its code.
    let exited = e
        .get("error")
        .and_then(Value::as_str)
        .and_then(|t| t.strip_prefix("adapter exited with ")?.parse::<i64>().ok());
    if let Some(code) = exited.filter(|_| f.coin(Class::Shapes, "exit-in-result")) {
        if let Some(o) = e.as_object_mut() {
            o.remove("error");
            o.insert("ok".into(), json!(true));
            o.insert(
                "result".into(),
                json!({ "exit_code": code, "stdout": null }),
            );
        }
    }
    reword(f, e, &["error"]);
    if let Some(r) = e.get_mut("result") {
        // The spec shows `result: {…}`: what the runtime makes of the adapter's output is its.
        if let Some(out) = r
            .get_mut("stdout")
            .filter(|s| !s.is_string() && !s.is_null())
        {
            if f.coin(Class::Shapes, "stdout-raw") {
                *out = json!(out.to_string());
            }
        }
        if f.coin(Class::Shapes, "result-wrapped") {
            *r = json!({ "output": r.take() });
        }
        if r.get("exit_code").is_some() || r.get("output").is_some() {
            f.extra("result", r);
        }
    }
    f.extra("envelope", e);
}

/// A listed pack: the surface as loaded, with members of the runtime's own beside it.
fn listed(f: Freedom, p: &mut Value) {
    if let Some(id) = p.get("pack_id").and_then(Value::as_str) {
        let site = format!("pack:{id}");
        f.extra(&site, p);
    }
}

fn reasons(f: Freedom, v: &mut Value) {
    if let Some(rs) = v.get_mut("reasons").and_then(Value::as_object_mut) {
        for r in rs.values_mut() {
            if let Some(t) = r.as_str() {
                *r = json!(text(f, t));
            }
        }
    }
}

/// The sink or the audit log: in an order of its own, each record with more fields.
fn records(f: Freedom, site: &str, v: &mut Value) {
    let Some(rs) = v.as_array_mut() else { return };
    let more = f.coin(Class::Shapes, &format!("{site}-fields"));
    for (n, r) in rs.iter_mut().enumerate() {
        if more {
            if let Some(o) = r.as_object_mut() {
                o.insert("seq".into(), json!(n + 1));
                o.insert("received_at".into(), json!("2026-01-01T00:00:00Z"));
            }
        }
        f.extra(site, r);
    }
    f.permute(site, rs);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_words_keep_their_class_and_its_map_says_which() {
        let f = Freedom::all(3);
        let map = denial_map(f);
        let said = text(f, "denied: missing verb.exec.write for ledger.transfer");
        assert!(!said.contains("verb.exec"), "{said}");
        let matches = |c: &str| regex::Regex::new(&map[c]).unwrap().is_match(&said);
        assert!(matches("missing-write") && matches("no-grant") && !matches("confirm"));
        let rules = rule_map(f);
        let r = rule(f, "skill-present");
        assert!(regex::Regex::new(&rules["skill-present"])
            .unwrap()
            .is_match(&r));
        assert_eq!(text(Freedom::only(3, &[Class::Order]), "x y"), "x y");
    }

    #[test]
    fn a_sense_payload_and_an_adapters_output_keep_their_members() {
        let f = Freedom::only(1, &[Class::Extra]);
        let mut sink = json!([{"pack_id": "p", "trigger": "t", "payload": {"a": 1}}]);
        dress(f, "runtime.senseSink", &mut sink);
        assert_eq!(sink[0]["payload"], json!({"a": 1}));
        assert_eq!(sink[0].as_object().unwrap().len(), 4);
        let mut e = json!({"ok": true, "pack_id": "p", "verb_key": "v",
                           "result": {"exit_code": 0, "stdout": {"argv": []}}});
        dress(f, "runtime.exec", &mut e);
        assert_eq!(e["result"]["stdout"], json!({"argv": []}));
    }
}
