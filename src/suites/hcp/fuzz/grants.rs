//! The grants a runtime holds, read back (`runtime.grants`): exactly the grants `runtime.create`
//! gave (spec 000: it "takes pack directories, a Principal and grants with nothing else
//! implicit"), whatever was activated, connected or run since. The order of the list, extra
//! members of a grant and repeated grants are the runtime's (docs/shim-protocol.md).

use crate::suites::hcp::runtime::reference::authz::CAPABILITIES;
use crate::suites::hcp::runtime::Grant;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// A grant as the oracle compares it: capability, pack, the verb_keys scope as a set (absent or
/// null: no scope), the tenant scope.
type Held = (String, String, Option<BTreeSet<String>>, Option<String>);

fn given(g: &Grant) -> Held {
    (
        g.capability.clone(),
        g.pack_id.clone(),
        g.verb_keys.as_ref().map(|k| k.iter().cloned().collect()),
        g.tenant_id.clone(),
    )
}

/// A grant of the answer; `None` when it is no grant at all (a member of another type).
fn held(v: &Value) -> Option<Held> {
    let text = |k: &str| v[k].as_str().map(String::from);
    let verb_keys = match &v["verb_keys"] {
        Value::Null => None,
        Value::Array(keys) => Some(
            keys.iter()
                .map(|k| k.as_str().map(String::from))
                .collect::<Option<BTreeSet<String>>>()?,
        ),
        _ => return None,
    };
    let tenant = match &v["tenant_id"] {
        Value::Null => None,
        t => Some(t.as_str()?.to_string()),
    };
    Some((text("capability")?, text("pack_id")?, verb_keys, tenant))
}

/// What the regression case expects of the read-back, as the contract's `grants-held-…` cases
/// write it: every grant given, with its scope, and no other.
fn expect(grants: Option<&[Grant]>) -> Value {
    let grants = grants.unwrap_or_default();
    if grants.is_empty() {
        return json!({ "$len": 0 });
    }
    let absent = json!({ "$absent": true });
    let each: Vec<Value> = grants
        .iter()
        .map(|g| {
            json!({
                "capability": g.capability,
                "pack_id": g.pack_id,
                "verb_keys": g.verb_keys.as_ref().map_or(absent.clone(), |k| json!(k)),
                "tenant_id": g.tenant_id.as_ref().map_or(absent.clone(), |t| json!(t)),
            })
        })
        .collect();
    json!({ "$all": [{ "$len": grants.len() }, { "$contains": each }] })
}

/// The read-back at step `k` (`v`): a grant held that was not given (added, or one given
/// widened: without its `verb_keys` or `tenant_id` it is another grant) is `grant-added`; a grant
/// given that is not held is `grant-dropped`, `PROFILE` for a capability the spec does not name
/// (a runtime may well refuse to hold `pack.admin`).
pub(super) fn grants_checks(
    grants: Option<&[Grant]>,
    k: usize,
    v: &Value,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let Some(answer) = v.as_array() else {
        return;
    };
    let given_set: BTreeSet<Held> = grants.unwrap_or_default().iter().map(given).collect();
    let held_set: Vec<Option<Held>> = answer.iter().map(held).collect();
    if let Some(i) = held_set
        .iter()
        .position(|h| h.as_ref().is_none_or(|h| !given_set.contains(h)))
    {
        fire(
            "grant-added",
            k,
            expect(grants),
            format!(
                "the runtime holds {}, a grant runtime.create did not give",
                answer[i]
            ),
        );
        return;
    }
    let held_set: BTreeSet<Held> = held_set.into_iter().flatten().collect();
    if let Some(g) = given_set.iter().find(|g| !held_set.contains(*g)) {
        fire(
            if CAPABILITIES.contains(&g.0.as_str()) {
                "grant-dropped"
            } else {
                "open:grant-dropped"
            },
            k,
            expect(grants),
            format!(
                "runtime.create gave the grant {} on {} (verb_keys {:?}, tenant {:?}) and the runtime does not hold it",
                g.0, g.1, g.2, g.3
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(grants: Option<&[Grant]>, answer: Value) -> Vec<&'static str> {
        let mut out = Vec::new();
        grants_checks(grants, 3, &answer, &mut |rule, _, _, _| out.push(rule));
        out
    }

    fn grant(capability: &str, verb_keys: Option<&[&str]>) -> Grant {
        Grant {
            capability: capability.into(),
            pack_id: "ledger".into(),
            verb_keys: verb_keys.map(|k| k.iter().map(|s| s.to_string()).collect()),
            tenant_id: None,
        }
    }

    /// Exactly the grants given, in any order, null members for absent ones, a grant repeated,
    /// extra members: nothing fires. An added or widened grant, a dropped one: the rules fire.
    #[test]
    fn the_grants_held_are_the_grants_given() {
        let given = [
            grant("verb.exec.write", Some(&["transfer", "refund"])),
            grant("pack.connect", None),
        ];
        let g = Some(&given[..]);
        let ok = json!([
            { "capability": "pack.connect", "pack_id": "ledger", "verb_keys": null, "tenant_id": null, "since": 1 },
            { "capability": "verb.exec.write", "pack_id": "ledger", "verb_keys": ["refund", "transfer"] },
            { "capability": "pack.connect", "pack_id": "ledger" },
        ]);
        assert!(fired(g, ok).is_empty());
        assert!(fired(None, json!([])).is_empty());
        let widened = json!([
            { "capability": "verb.exec.write", "pack_id": "ledger" },
            { "capability": "pack.connect", "pack_id": "ledger" },
        ]);
        assert_eq!(fired(g, widened), ["grant-added"]);
        assert_eq!(
            fired(
                None,
                json!([{ "capability": "pack.activate", "pack_id": "ledger" }])
            ),
            ["grant-added"]
        );
        let dropped = json!([{ "capability": "pack.connect", "pack_id": "ledger" }]);
        assert_eq!(fired(g, dropped), ["grant-dropped"]);
        // A capability the spec does not name, not held: the runtime's choice (PROFILE).
        let odd = [grant("pack.admin", None)];
        assert_eq!(fired(Some(&odd[..]), json!([])), ["open:grant-dropped"]);
    }
}
