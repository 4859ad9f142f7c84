//! What a core's stated version of the control protocol changes in how a case judges it
//! (docs/CHANGELOG.md, "Requirement sets"): `hcpspec-core/1` had no `failure`, and its cases did
//! not judge a tool call's failure by its form; a core stating it is judged so still.

use crate::case::matcher;
use crate::suites::core_api::Adapter;
use serde_json::{json, Value};

/// The first version whose cases judge a failure's form (`${core.failure}`).
pub const FAILURE_SINCE: &str = "hcpspec-core/2";

/// A version's place among those hcpspec speaks, oldest first (one it does not speak: last).
fn rank(version: &str) -> usize {
    let all = super::PROTOCOLS;
    all.iter().position(|p| *p == version).unwrap_or(all.len())
}

/// The first version whose cases hold every refusal to a listed code and a message
/// (`always::LISTED_REFUSAL`): a core stating an older one keeps its verdicts.
pub const LISTED_REFUSAL_SINCE: &str = "hcpspec-core/2";

/// The version the core states in `core.describe` (asked once per case, through `control`).
pub(super) fn stated(control: &mut dyn Adapter) -> Option<String> {
    let described = control.call("core.describe", json!({})).ok()?;
    described["protocol"].as_str().map(str::to_string)
}

/// Whether the stated version has the `listed-refusal` check (a core stating none: the newest).
pub(super) fn judges_refusals(stated: Option<&str>) -> bool {
    stated.is_none_or(|p| rank(p) >= rank(LISTED_REFUSAL_SINCE))
}

/// An expectation anything matches (present or absent): a failure's form, unjudged.
fn unjudged() -> Value {
    json!({ "$anyOf": [{ "$present": true }, { "$absent": true }] })
}

/// How the core shapes a tool call's failure in an outcome (`${core.failure}`): core.start's
/// `failure`, an expectation every failure matches and no success does. § 4 prints no tool
/// outcome's form, only that refusals are "a failure"; a shim that says nothing gets the one
/// failure form spec 004 prints, the Model Gate's `{kind: "failed", …}` (§ 5), unless its core
/// states a version before [`FAILURE_SINCE`] (asked through `control`): then the form is
/// unjudged, as that version's cases left it.
pub(super) fn failure_form(said: Option<&Value>, stated: Option<&str>) -> Result<Value, String> {
    let Some(said) = said.filter(|v| !v.is_null()) else {
        let before = stated.is_some_and(|p| rank(p) < rank(FAILURE_SINCE));
        return Ok(match before {
            true => unjudged(),
            false => json!({ "kind": "failed" }),
        });
    };
    if said.as_object().is_none_or(|m| m.is_empty()) {
        return Err(format!(
            "core.start's failure is `{said}`, not a non-empty object (an expectation such as {{\"kind\": \"failed\"}})"
        ));
    }
    matcher::validate(said, &Default::default())
        .map_err(|(at, why)| format!("core.start's failure{at}: {why}"))?;
    Ok(said.clone())
}

/// An expectation as a core whose failures' form is unjudged is held to it: `{"$not": F}` of
/// the unjudged form matches anything too (a success was not told from a failure by its form).
pub(super) fn judged_as(expect: Value, form: &Value) -> Value {
    if *form != unjudged() {
        return expect;
    }
    fn walk(v: Value, any: &Value) -> Value {
        match v {
            Value::Object(m) if m.len() == 1 && m.get("$not") == Some(any) => any.clone(),
            Value::Object(m) => {
                Value::Object(m.into_iter().map(|(k, v)| (k, walk(v, any))).collect())
            }
            Value::Array(a) => Value::Array(a.into_iter().map(|v| walk(v, any)).collect()),
            other => other,
        }
    }
    walk(expect, form)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unjudged_form_matches_a_failure_and_a_success_both_ways() {
        let any = unjudged();
        let expect = json!({ "a": any, "b": { "$not": any } });
        let judged = judged_as(expect, &any);
        for actual in [
            json!({ "a": { "ok": false }, "b": { "ok": true } }),
            json!({}),
        ] {
            assert!(
                matcher::check(&judged, &actual, &Default::default()).is_ok(),
                "{actual}"
            );
        }
        let failed = json!({ "kind": "failed" });
        let kept = judged_as(json!({ "b": { "$not": failed } }), &failed);
        assert_eq!(kept, json!({ "b": { "$not": { "kind": "failed" } } }));
    }
}
