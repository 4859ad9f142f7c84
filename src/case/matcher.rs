//! Expectations as JSON matchers. A plain value matches as a subset: every key of an expected
//! object must match in the actual object (other keys are free), arrays match element by
//! element with equal length, scalars by equality. An object with one `$`-key is an operator:
//!
//! | operator | matches when |
//! |---|---|
//! | `{"$regex": "re"}` | the actual is a string the regex finds a match in |
//! | `{"$type": "string"}` or a list | the actual has that JSON type (`integer` too) |
//! | `{"$absent": true}` | the key is missing or null |
//! | `{"$present": true}` | the key is there and not null |
//! | `{"$anyOf": [e…]}` | any of the expectations matches |
//! | `{"$all": [e…]}` | every one of the expectations matches |
//! | `{"$not": e}` | e does not match |
//! | `{"$exact": v}` | the actual equals v exactly (no subset) |
//! | `{"$contains": [e…]}` | the actual is an array and each e matches some element |
//! | `{"$each": e}` | the actual is an array and every element matches e |
//! | `{"$len": n}` | the array, object or string has n elements |
//! | `{"$noText": "s"}` or a list | no string anywhere inside the actual contains s |
//! | `{"$denial": "class"}` | the actual is a denial text of that class (`vectors/denials.json`) |

// A mismatch carries the expected and actual values; it is the rare path, so no boxing.
#![allow(clippy::result_large_err)]

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;

pub const OPERATORS: &[&str] = &[
    "$regex",
    "$type",
    "$absent",
    "$present",
    "$anyOf",
    "$not",
    "$exact",
    "$contains",
    "$each",
    "$len",
    "$noText",
    "$denial",
];

/// Denial classes: a name → the regex a runtime's denial text must match.
pub type Denials = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// JSON pointer into the actual value.
    pub path: String,
    pub expected: Value,
    pub actual: Value,
    pub message: String,
}

fn operator(e: &Value) -> Option<(&str, &Value)> {
    match e {
        Value::Object(m) if m.len() == 1 => m
            .iter()
            .next()
            .filter(|(k, _)| k.starts_with('$'))
            .map(|(k, v)| (k.as_str(), v)),
        _ => None,
    }
}

/// Check an expectation's own form: known operators, compilable regexes, known denial classes.
/// Returns the JSON pointer (inside the expectation) and the problem.
pub fn validate(expected: &Value, denials: &Denials) -> Result<(), (String, String)> {
    fn walk(e: &Value, d: &Denials, path: &str) -> Result<(), (String, String)> {
        if let Some((op, arg)) = operator(e) {
            let here = format!("{path}/{op}");
            match op {
                "$regex" => {
                    let re = arg
                        .as_str()
                        .ok_or((here.clone(), "$regex takes a string".into()))?;
                    Regex::new(re).map_err(|err| (here.clone(), format!("bad regex: {err}")))?;
                }
                "$denial" => {
                    let class = arg
                        .as_str()
                        .ok_or((here.clone(), "$denial takes a class name".into()))?;
                    if !d.contains_key(class) {
                        return Err((
                            here,
                            format!("unknown denial class `{class}` (see vectors/denials.json)"),
                        ));
                    }
                }
                "$anyOf" | "$all" | "$contains" => {
                    let items = arg
                        .as_array()
                        .ok_or((here.clone(), format!("{op} takes an array")))?;
                    for (i, x) in items.iter().enumerate() {
                        walk(x, d, &format!("{here}/{i}"))?;
                    }
                }
                "$not" | "$each" => walk(arg, d, &here)?,
                "$len" if !arg.is_u64() => return Err((here, "$len takes a count".into())),
                "$absent" | "$present" if arg != &Value::Bool(true) => {
                    return Err((here, format!("{op} takes true")))
                }
                "$type" | "$exact" | "$noText" | "$len" | "$absent" | "$present" => {}
                other => {
                    return Err((
                        here,
                        format!("unknown matcher `{other}`; known: {}", OPERATORS.join(", ")),
                    ))
                }
            }
            return Ok(());
        }
        match e {
            Value::Object(m) => m
                .iter()
                .try_for_each(|(k, v)| walk(v, d, &format!("{path}/{k}"))),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .try_for_each(|(i, v)| walk(v, d, &format!("{path}/{i}"))),
            _ => Ok(()),
        }
    }
    walk(expected, denials, "")
}

/// Does `actual` satisfy `expected`? The first mismatch, in document order, when not.
pub fn check(expected: &Value, actual: &Value, denials: &Denials) -> Result<(), Mismatch> {
    at(expected, Some(actual), denials, "")
}

fn miss(
    path: &str,
    expected: &Value,
    actual: Option<&Value>,
    message: impl Into<String>,
) -> Mismatch {
    Mismatch {
        path: path.into(),
        expected: expected.clone(),
        actual: actual.cloned().unwrap_or(Value::Null),
        message: message.into(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    let actual = type_name(v);
    actual == t || (t == "number" && actual == "integer")
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k);
            strings(x, out)
        }),
        _ => {}
    }
}

fn at(e: &Value, a: Option<&Value>, d: &Denials, path: &str) -> Result<(), Mismatch> {
    let present = a.filter(|v| !v.is_null());
    if let Some((op, arg)) = operator(e) {
        return match op {
            "$absent" => match present {
                None => Ok(()),
                Some(_) => Err(miss(path, e, a, "expected absent")),
            },
            "$present" => present
                .map(|_| ())
                .ok_or_else(|| miss(path, e, a, "expected present")),
            "$anyOf" => {
                let options = arg.as_array().map(Vec::as_slice).unwrap_or_default();
                if options.iter().any(|o| at(o, a, d, path).is_ok()) {
                    Ok(())
                } else {
                    Err(miss(path, e, a, "matched none of $anyOf"))
                }
            }
            "$all" => {
                for want in arg.as_array().map(Vec::as_slice).unwrap_or_default() {
                    at(want, a, d, path)?;
                }
                Ok(())
            }
            "$not" => match at(arg, a, d, path) {
                Ok(()) => Err(miss(path, e, a, "matched the $not expectation")),
                Err(_) => Ok(()),
            },
            _ => {
                let Some(v) = a else {
                    return Err(miss(path, e, a, "missing"));
                };
                match op {
                    "$regex" => {
                        let re = Regex::new(arg.as_str().unwrap_or_default())
                            .map_err(|x| miss(path, e, a, x.to_string()))?;
                        match v.as_str() {
                            Some(s) if re.is_match(s) => Ok(()),
                            _ => Err(miss(path, e, a, "does not match regex")),
                        }
                    }
                    "$denial" => {
                        let class = arg.as_str().unwrap_or_default();
                        let re =
                            d.get(class)
                                .and_then(|r| Regex::new(r).ok())
                                .ok_or_else(|| {
                                    miss(path, e, a, format!("unknown denial class {class}"))
                                })?;
                        match v.as_str() {
                            Some(s) if re.is_match(s) => Ok(()),
                            _ => Err(miss(
                                path,
                                e,
                                a,
                                format!("not a `{class}` denial (/{}/)", re.as_str()),
                            )),
                        }
                    }
                    "$type" => {
                        let ok = match arg {
                            Value::String(t) => has_type(v, t),
                            Value::Array(ts) => {
                                ts.iter().filter_map(Value::as_str).any(|t| has_type(v, t))
                            }
                            _ => false,
                        };
                        if ok {
                            Ok(())
                        } else {
                            Err(miss(path, e, a, format!("has type {}", type_name(v))))
                        }
                    }
                    "$exact" if v == arg => Ok(()),
                    "$exact" => Err(miss(path, e, a, "not exactly equal")),
                    "$len" => {
                        let n = match v {
                            Value::Array(x) => x.len(),
                            Value::Object(x) => x.len(),
                            Value::String(x) => x.chars().count(),
                            _ => return Err(miss(path, e, a, "has no length")),
                        };
                        if Some(n as u64) == arg.as_u64() {
                            Ok(())
                        } else {
                            Err(miss(path, e, a, format!("has length {n}")))
                        }
                    }
                    "$contains" | "$each" => {
                        let Some(items) = v.as_array() else {
                            return Err(miss(path, e, a, "not an array"));
                        };
                        if op == "$each" {
                            for (i, x) in items.iter().enumerate() {
                                at(arg, Some(x), d, &format!("{path}/{i}"))?;
                            }
                            return Ok(());
                        }
                        for want in arg.as_array().map(Vec::as_slice).unwrap_or_default() {
                            if !items.iter().any(|x| at(want, Some(x), d, path).is_ok()) {
                                return Err(miss(path, want, a, "no element matches"));
                            }
                        }
                        Ok(())
                    }
                    "$noText" => {
                        let needles: Vec<&str> = match arg {
                            Value::String(s) => vec![s.as_str()],
                            Value::Array(x) => x.iter().filter_map(Value::as_str).collect(),
                            _ => vec![],
                        };
                        let mut hay = Vec::new();
                        strings(v, &mut hay);
                        match needles.iter().find(|n| hay.iter().any(|h| h.contains(*n))) {
                            Some(n) => Err(miss(path, e, a, format!("contains the text `{n}`"))),
                            None => Ok(()),
                        }
                    }
                    other => Err(miss(path, e, a, format!("unknown matcher {other}"))),
                }
            }
        };
    }
    match e {
        Value::Object(want) => {
            let Some(Value::Object(got)) = a else {
                return Err(miss(path, e, a, "expected an object"));
            };
            for (k, sub) in want {
                at(
                    sub,
                    got.get(k),
                    d,
                    &format!("{path}/{}", k.replace('~', "~0").replace('/', "~1")),
                )?;
            }
            Ok(())
        }
        Value::Array(want) => {
            let Some(Value::Array(got)) = a else {
                return Err(miss(path, e, a, "expected an array"));
            };
            if want.len() != got.len() {
                return Err(miss(
                    path,
                    e,
                    a,
                    format!("expected {} elements, got {}", want.len(), got.len()),
                ));
            }
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                at(w, Some(g), d, &format!("{path}/{i}"))?;
            }
            Ok(())
        }
        Value::Number(n) => match a.and_then(Value::as_f64) {
            Some(x) if Some(x) == n.as_f64() => Ok(()),
            _ => Err(miss(path, e, a, "not equal")),
        },
        _ if a == Some(e) => Ok(()),
        _ => Err(miss(path, e, a, "not equal")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn d() -> Denials {
        Denials::from([("confirm".to_string(), "(?i)confirm".to_string())])
    }
    fn ok(e: Value, a: Value) -> bool {
        check(&e, &a, &d()).is_ok()
    }

    #[test]
    fn subset_objects_and_exact_arrays() {
        assert!(ok(json!({"ok": false}), json!({"ok": false, "error": "x"})));
        assert!(!ok(json!({"ok": true}), json!({"ok": false})));
        assert!(!ok(json!({"ok": true}), json!({})));
        assert!(ok(json!([{"a": 1}]), json!([{"a": 1, "b": 2}])));
        assert!(!ok(json!([{"a": 1}]), json!([{"a": 1}, {"a": 2}])));
        assert!(ok(json!(1), json!(1.0)));
        assert!(!ok(json!("true"), json!(true)));
    }

    #[test]
    fn operators() {
        assert!(ok(json!({"error": {"$absent": true}}), json!({"ok": true})));
        assert!(ok(
            json!({"error": {"$absent": true}}),
            json!({"error": null})
        ));
        assert!(!ok(
            json!({"error": {"$absent": true}}),
            json!({"error": "x"})
        ));
        assert!(ok(json!({"$regex": "^de"}), json!("denied")));
        assert!(!ok(json!({"$regex": "^de"}), json!(7)));
        assert!(ok(json!({"$type": "integer"}), json!(3)));
        assert!(ok(json!({"$type": ["string", "null"]}), json!(null)));
        assert!(!ok(json!({"$type": "string"}), json!(3)));
        assert!(ok(json!({"$anyOf": [1, 2]}), json!(2)));
        assert!(!ok(json!({"$anyOf": [1, 2]}), json!(3)));
        assert!(ok(
            json!({"$all": [{"$len": 2}, {"$contains": [1]}]}),
            json!([1, 2])
        ));
        assert!(!ok(
            json!({"$all": [{"$len": 3}, {"$contains": [1]}]}),
            json!([1, 2])
        ));
        assert!(ok(json!({"$not": {"$regex": "x"}}), json!("y")));
        assert!(!ok(json!({"$exact": {"a": 1}}), json!({"a": 1, "b": 1})));
        assert!(ok(
            json!({"$contains": [{"a": 2}]}),
            json!([{"a": 1}, {"a": 2}])
        ));
        assert!(!ok(json!({"$contains": [{"a": 3}]}), json!([{"a": 1}])));
        assert!(ok(json!({"$each": {"a": 1}}), json!([{"a": 1}, {"a": 1}])));
        assert!(!ok(json!({"$each": {"a": 1}}), json!([{"a": 1}, {"a": 2}])));
        assert!(ok(json!({"$len": 2}), json!([1, 2])));
        assert!(!ok(
            json!({"$noText": "canary"}),
            json!({"env": {"X": "a-canary-b"}})
        ));
        assert!(ok(
            json!({"$noText": ["canary"]}),
            json!({"env": {"X": "clean"}})
        ));
        assert!(ok(json!({"$denial": "confirm"}), json!("Confirm required")));
        assert!(!ok(json!({"$denial": "confirm"}), json!("denied")));
    }

    #[test]
    fn mismatch_names_the_path() {
        let m = check(
            &json!({"verbs": [{"executable": true}]}),
            &json!({"verbs": [{"executable": false}]}),
            &d(),
        )
        .unwrap_err();
        assert_eq!(m.path, "/verbs/0/executable");
    }

    #[test]
    fn validate_rejects_unknown_operators_and_classes() {
        assert!(validate(&json!({"a": {"$regexp": "x"}}), &d()).is_err());
        assert!(validate(&json!({"a": {"$denial": "nope"}}), &d()).is_err());
        assert_eq!(
            validate(&json!({"a": [{"$regex": "("}]}), &d())
                .unwrap_err()
                .0,
            "/a/0/$regex"
        );
        assert!(validate(&json!({"a": {"$denial": "confirm"}}), &d()).is_ok());
    }
}
