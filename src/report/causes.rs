//! A runtime's problems grouped by cause: the same missing method, the same gap in its denial
//! map, the same step failing the same way. The terminal prints each cause once, with its count
//! and its cases, instead of one block per case (issue 46).
//!
//! A cause is structured where the verdict's words say what it is (a method the shim answers
//! -32601 to, no denial map, a denial map that leaves out classes the cases ask for), and
//! otherwise the verdict's message made case-free: without its `step N (label): ` and with the
//! texts it quotes in backticks (a denial text, a value) left out.

use super::{fails_run, state, Rules, RuntimeRun, State};
use crate::run::{CaseResult, Verdict};
use crate::snapshot::Drift;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// One cause and the cases it explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// What went wrong, in one sentence (no case name in it).
    pub what: String,
    /// The cases it explains: indices into the run's cases, in run order.
    pub cases: Vec<usize>,
    /// How many of them fail the run (the rest are PROFILE deviations, or below MUST).
    pub failing: usize,
}

/// The cases of `run` that deviate (fail, error, unimplemented, a PROFILE deviation) or fail the
/// run for another reason (drift, a stale expectation under `--strict-expectations`), grouped
/// by cause: the causes with the most cases failing the run first, then the most cases, then
/// in run order.
pub fn causes(run: &RuntimeRun, rules: Rules) -> Vec<Cause> {
    let map = run.info.get("denials").and_then(Value::as_object);
    let declared: BTreeSet<String> = map.map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let mut order: Vec<(String, Cause)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    // The classes the cases of a denial-map gap ask for, in the order first asked.
    let mut asked: Vec<String> = Vec::new();
    for (i, r) in run.cases.iter().enumerate() {
        let deviates = matches!(
            state(r),
            State::Fail | State::Error | State::Unimplemented | State::Profile
        );
        let failing = fails_run(r, rules);
        if !deviates && !failing {
            continue;
        }
        let (key, what) = match deviates {
            true => of_verdict(r, map.map(|_| &declared), &mut asked),
            false => of_annotation(r),
        };
        let slot = *at.entry(key.clone()).or_insert_with(|| {
            order.push((
                key,
                Cause {
                    what,
                    cases: vec![],
                    failing: 0,
                },
            ));
            order.len() - 1
        });
        let cause = &mut order[slot].1;
        cause.cases.push(i);
        cause.failing += usize::from(failing);
    }
    let mut out: Vec<Cause> = order
        .into_iter()
        .map(|(key, mut c)| {
            if key == MAP_GAP {
                c.what = map_gap(&asked, &declared);
            }
            c
        })
        .collect();
    out.sort_by(|a, b| {
        (b.failing, b.cases.len(), a.cases[0]).cmp(&(a.failing, a.cases.len(), b.cases[0]))
    });
    out
}

/// The key of the cause "the denial map does not cover the runtime's denials".
const MAP_GAP: &str = "denial-map-gap";

/// What a deviating case's verdict says, as a key and a sentence; `declared`, the classes of
/// the runtime's denial map, if it declares one.
fn of_verdict(
    r: &CaseResult,
    declared: Option<&BTreeSet<String>>,
    asked: &mut Vec<String>,
) -> (String, String) {
    match &r.verdict {
        Verdict::Fail(f) => {
            if f.message
                .contains("fits no class of the runtime's own denial map")
                || unmapped_alternatives(f, declared)
            {
                for class in denial_classes(&f.expected) {
                    if !asked.contains(&class) {
                        asked.push(class);
                    }
                }
                return (MAP_GAP.into(), String::new());
            }
            let path = if f.path.is_empty() { "/" } else { &f.path };
            let mut what = format!("{} at {path}: {}", f.action, case_free(&f.message));
            // A short scalar expectation says what was wanted (`connect at /ok: not equal,
            // expected true`); a structure is the failure block's to show.
            if let Some(e) = short_scalar(&f.expected).filter(|e| !what.contains(e.as_str())) {
                what += &format!(", expected {e}");
            }
            (format!("fail {what}"), what)
        }
        Verdict::Error { message } => {
            if let Some(method) = required_not_implemented(message) {
                return (
                    format!("required {method}"),
                    format!(
                        "{method} is not implemented: the shim answers -32601 \"method not \
                         found\", but every shim must implement {method}{}",
                        documented(method)
                    ),
                );
            }
            let what = format!("error: {}", case_free(message));
            (what.clone(), what)
        }
        Verdict::Unimplemented { reason } => {
            if reason.starts_with("the case tells which step denied by its denial class") {
                return (
                    "no denial map".into(),
                    "no denial map in initialize: these cases tell which step denied only by \
                     its denial class (docs/shim-protocol.md#initialize)"
                        .into(),
                );
            }
            if let Some(method) = reason
                .strip_prefix("runtime does not implement ")
                .and_then(|rest| rest.split(':').next())
            {
                return (
                    format!("unimplemented {method}"),
                    format!(
                        "{method} is not implemented: the shim answers -32601 \"method not found\"{}",
                        documented(method)
                    ),
                );
            }
            let what = format!("unimplemented: {}", case_free(reason));
            (what.clone(), what)
        }
        // A pass or skip deviates only as a PROFILE case never does; kept for completeness.
        v => (v.label().into(), v.label().into()),
    }
}

/// Why a case that does not deviate fails the run: its snapshot, or a stale expectation.
fn of_annotation(r: &CaseResult) -> (String, String) {
    let what = match &r.annotations.drift {
        Some(Drift::Changed { .. }) => "its observations drifted from the snapshot",
        Some(Drift::New) => "no snapshot yet, which fails the run under CI",
        None => "expected to fail, but passes (a stale expectation, under --strict-expectations)",
    };
    (what.into(), what.into())
}

/// A `$anyOf` of denial classes all left out of the runtime's map failed: each alternative
/// failed because the text fits no class the map declares (a class left out with a text that
/// fits one is unclassified, never failed), the same gap as a single class's.
fn unmapped_alternatives(f: &crate::run::Failure, declared: Option<&BTreeSet<String>>) -> bool {
    let Some(declared) = declared else {
        return false;
    };
    let Some(alternatives) = f.expected.get("$anyOf").and_then(Value::as_array) else {
        return false;
    };
    f.message.starts_with("matched none of $anyOf")
        && !alternatives.is_empty()
        && alternatives.iter().all(|a| {
            a.as_object().is_some_and(|o| o.len() == 1)
                && a.get("$denial")
                    .and_then(Value::as_str)
                    .is_some_and(|c| !declared.contains(c))
        })
}

/// The method of an error that a required method answered -32601 (`adapter::check_call`).
fn required_not_implemented(message: &str) -> Option<&str> {
    let at =
        message.find(": the shim answered \"method not found\", but every shim must implement ")?;
    let head = &message[..at];
    Some(head.rsplit(": ").next().unwrap_or(head))
}

/// Every `$denial` class an expectation asks for, anywhere in it.
fn denial_classes(expected: &Value) -> Vec<String> {
    match expected {
        Value::Object(m) => {
            let mut out: Vec<String> = m
                .get("$denial")
                .and_then(Value::as_str)
                .map(String::from)
                .into_iter()
                .collect();
            for (k, v) in m {
                if k != "$denial" {
                    out.extend(denial_classes(v));
                }
            }
            out
        }
        Value::Array(a) => a.iter().flat_map(denial_classes).collect(),
        _ => vec![],
    }
}

/// The sentence of a denial map that does not cover the runtime's denials: the classes the
/// cases asked for that the map leaves out, where there are any.
fn map_gap(asked: &[String], declared: &BTreeSet<String>) -> String {
    let left_out: Vec<&str> = asked
        .iter()
        .filter(|c| !declared.contains(*c))
        .map(String::as_str)
        .collect();
    if left_out.is_empty() {
        return "denial texts fit no class of the runtime's own denial map (the map must cover \
                every denial the runtime gives: docs/shim-protocol.md#initialize)"
            .into();
    }
    format!(
        "denials that fit no class of the runtime's denial map, which leaves out {}: {} (declare \
         them in initialize's `denials`, docs/shim-protocol.md#initialize)",
        if left_out.len() == 1 {
            "a class the cases ask for"
        } else {
            "classes the cases ask for"
        },
        left_out.join(", ")
    )
}

/// A message without what is particular to its case: the `step N (label): ` it opens with, and
/// the texts it quotes in backticks (a denial text, a value).
pub fn case_free(message: &str) -> String {
    let mut m = message;
    if let Some(rest) = m.strip_prefix("step ") {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            if let Some(end) = rest[digits..]
                .strip_prefix(" (")
                .and_then(|r| r.find("): ").map(|e| (r, e)))
            {
                m = &end.0[end.1 + 3..];
            }
        }
    }
    // A quoted text (it has a space: a denial, a value) is the case's; a quoted word (a class,
    // a rule, a pointer) names the kind of problem and stays.
    let mut out = String::with_capacity(m.len());
    let mut parts = m.split('`');
    out.push_str(parts.next().unwrap_or(""));
    let mut quoted = true;
    for p in parts {
        out.push('`');
        match quoted && p.contains(char::is_whitespace) {
            true => out.push('…'),
            false => out.push_str(p),
        }
        quoted = !quoted;
    }
    out
}

/// A scalar expectation's JSON text, when it is short enough for a cause's line.
fn short_scalar(v: &Value) -> Option<String> {
    match v {
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        Value::String(t) if t.chars().count() <= 40 => {
            Some(super::printable(&v.to_string(), false))
        }
        _ => None,
    }
}

/// Where a shim method is documented, for a cause that names it: the contract's methods each
/// have a section of docs/shim-protocol.md (its anchor is the method without its dot).
fn documented(method: &str) -> String {
    if method.starts_with("runtime.") || method.starts_with("pack.") {
        format!(
            " (docs/shim-protocol.md#{})",
            method.replace('.', "").to_lowercase()
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Level;
    use crate::run::expectations::Outcome;
    use crate::run::result::Summary;
    use crate::run::{Annotations, Failure};
    use serde_json::json;

    fn result(name: &str, level: Level, verdict: Verdict) -> CaseResult {
        let mut r = CaseResult {
            name: name.into(),
            section: "1".into(),
            level,
            spec: "s".into(),
            title: String::new(),
            assumption: None,
            verdict,
            observations: vec![],
            unclassified: vec![],
            micros: 0,
            annotations: Annotations::default(),
        };
        r.annotations.outcome = Some(Outcome::of(&r, None));
        r
    }

    fn run(info: Value, cases: Vec<CaseResult>) -> RuntimeRun {
        RuntimeRun {
            runtime: "stdio:toy".into(),
            label: None,
            stopped: None,
            info,
            version: None,
            implementation: None,
            summary: Summary::of(&cases, Rules::default()),
            cases,
        }
    }

    fn error(message: &str) -> Verdict {
        Verdict::Error {
            message: message.into(),
        }
    }

    const CREATE: &str = "step 0 (install): runtime.create: the shim answered \"method not found\", but every shim must implement runtime.create (method not found (code -32601))";

    #[test]
    fn a_shim_that_implements_nothing_has_one_cause() {
        let mut cases: Vec<CaseResult> = (0..185)
            .map(|i| result(&format!("c::g::case-{i}"), Level::MUST, error(CREATE)))
            .collect();
        cases.push(result("c::g::profile", Level::PROFILE, error(CREATE)));
        cases.push(result("c::g::may", Level::MAY, error(CREATE)));
        cases.push(result("c::g::passes", Level::MUST, Verdict::Pass));
        let got = causes(&run(json!({}), cases), Rules::default());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].cases.len(), 187);
        assert_eq!(got[0].failing, 185);
        assert_eq!(got[0].cases[0], 0);
        assert!(
            got[0].what.starts_with("runtime.create is not implemented"),
            "{}",
            got[0].what
        );
    }

    #[test]
    fn unimplemented_methods_and_no_denial_map_are_causes_of_their_own() {
        let unimplemented = |m: &str| Verdict::Unimplemented {
            reason: format!("runtime does not implement {m}: method not found (code -32601)"),
        };
        let no_map = Verdict::Unimplemented {
            reason: "the case tells which step denied by its denial class, and the runtime declares no denial map in initialize".into(),
        };
        let cases = vec![
            result("c::a", Level::MUST, unimplemented("runtime.sense")),
            result("c::b", Level::MUST, no_map.clone()),
            result("c::c", Level::MUST, no_map),
            result("c::d", Level::MUST, unimplemented("runtime.audit")),
            result("c::e", Level::MUST, unimplemented("runtime.sense")),
        ];
        let got = causes(&run(json!({}), cases), Rules::default());
        let whats: Vec<(&str, usize)> = got
            .iter()
            .map(|c| (c.what.as_str(), c.cases.len()))
            .collect();
        assert_eq!(whats.len(), 3, "{whats:?}");
        // Two and two: the first met first; then the one.
        assert!(whats[0].0.starts_with("runtime.sense is not implemented"));
        assert_eq!(got[0].cases, vec![0, 4]);
        assert!(whats[1].0.starts_with("no denial map in initialize"));
        assert!(whats[2].0.starts_with("runtime.audit is not implemented"));
    }

    #[test]
    fn a_partial_denial_map_is_one_cause_naming_the_classes_it_leaves_out() {
        let gap = |text: &str, expected: Value| {
            Verdict::Fail(Failure {
                step: 4,
                action: "exec".into(),
                path: "/error".into(),
                message: format!("denial `{text}` fits no class of the runtime's own denial map (the map must cover every denial the runtime gives)"),
                expected,
                actual: json!({}),
            })
        };
        let cases = vec![
            result(
                "c::a",
                Level::MUST,
                gap("denied: missing write", json!({"$denial": "missing-write"})),
            ),
            result(
                "c::b",
                Level::MUST,
                gap(
                    "denied: not activated",
                    json!({"$anyOf": [{"$denial": "not-activated"}, {"$denial": "confirm"}]}),
                ),
            ),
            result(
                "c::c",
                Level::MUST,
                gap(
                    "denied: missing write on x",
                    json!({"$denial": "missing-write"}),
                ),
            ),
            result(
                "c::d",
                Level::MUST,
                Verdict::Fail(Failure {
                    step: 1,
                    action: "exec".into(),
                    path: "/error".into(),
                    message: "matched none of $anyOf".into(),
                    expected: json!({"$anyOf": [{"$denial": "no-grant"}, {"$denial": "not-activated"}]}),
                    actual: json!("denied: no grant"),
                }),
            ),
        ];
        let info = json!({"denials": {"confirm": "^needs confirmation"}});
        let got = causes(&run(info, cases), Rules::default());
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].failing, 4);
        assert!(
            got[0].what.contains(
                "leaves out classes the cases ask for: missing-write, not-activated, no-grant ("
            ),
            "{}",
            got[0].what
        );
    }

    #[test]
    fn other_messages_group_without_their_step_and_quoted_values() {
        let fail = |message: &str| {
            Verdict::Fail(Failure {
                step: 2,
                action: "exec".into(),
                path: "/error".into(),
                message: message.into(),
                expected: json!(null),
                actual: json!(null),
            })
        };
        let cases = vec![
            result(
                "c::a",
                Level::MUST,
                error("step 1 (exec): exec: timed out after 5 s"),
            ),
            result(
                "c::b",
                Level::MUST,
                error("step 3 (connect): exec: timed out after 5 s"),
            ),
            result(
                "c::c",
                Level::MUST,
                fail("not a `confirm` denial by the runtime's own map (/^x$/)"),
            ),
            result(
                "c::d",
                Level::MUST,
                fail("not a `no-grant` denial by the runtime's own map (/^y$/)"),
            ),
            result("c::e", Level::MUST, fail("not equal")),
        ];
        let got = causes(&run(json!({}), cases), Rules::default());
        let whats: Vec<&str> = got.iter().map(|c| c.what.as_str()).collect();
        assert_eq!(
            whats,
            [
                "error: exec: timed out after 5 s",
                "exec at /error: not a `confirm` denial by the runtime's own map (/^x$/)",
                "exec at /error: not a `no-grant` denial by the runtime's own map (/^y$/)",
                "exec at /error: not equal",
            ]
        );
        assert_eq!(got[0].cases, vec![0, 1]);
    }

    #[test]
    fn a_short_scalar_expectation_says_what_was_wanted() {
        let fail = |expected: Value| {
            Verdict::Fail(Failure {
                step: 2,
                action: "connect".into(),
                path: "/ok".into(),
                message: "not equal".into(),
                expected,
                actual: json!(false),
            })
        };
        let cases = vec![
            result("c::a", Level::MUST, fail(json!(true))),
            result("c::b", Level::MUST, fail(json!(true))),
            result("c::c", Level::MUST, fail(json!({"$present": true}))),
        ];
        let got = causes(&run(json!({}), cases), Rules::default());
        let whats: Vec<&str> = got.iter().map(|c| c.what.as_str()).collect();
        assert_eq!(
            whats,
            [
                "connect at /ok: not equal, expected true",
                "connect at /ok: not equal"
            ]
        );
    }

    #[test]
    fn case_free_keeps_what_it_does_not_know() {
        assert_eq!(case_free("step 12 (exec): a `b c` `d` e"), "a `…` `d` e");
        assert_eq!(case_free("step x (exec): a"), "step x (exec): a");
        assert_eq!(case_free("a `un closed"), "a `…");
        assert_eq!(case_free(""), "");
    }
}
