//! Transport parity: one runtime reached over several transports must be observed the same.
//! Observations are already normalised by the runner (the case's temp dir, report paths and
//! runtime ids as variables), so what is left to differ is the transport's doing.

use super::result::RuntimeRun;
use crate::run::{CaseResult, Verdict};
use serde_json::{json, Value};

pub use super::result::Difference;

/// What parity compares of a result: the verdict's kind, a failure's step, path and actual
/// value, and every observation. Error texts and timings are the transport's own.
fn comparable(r: &CaseResult) -> Value {
    let failure = match &r.verdict {
        Verdict::Fail(f) => {
            json!({ "step": f.step, "action": f.action, "path": f.path, "actual": f.actual })
        }
        _ => Value::Null,
    };
    json!({ "verdict": r.verdict.label(), "failure": failure, "observations": r.observations })
}

/// The first place two values differ, as a JSON pointer with both sides.
pub fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = crate::pointer::push(at, k);
                match (x.get(k), y.get(k)) {
                    (Some(l), Some(r)) => {
                        if let Some(d) = first_difference(l, r, &p) {
                            return Some(d);
                        }
                    }
                    (l, r) => return Some(format!("{p}: {} ≠ {}", shown(l), shown(r))),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (l, r))| first_difference(l, r, &format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(format!(
            "{}: {} ≠ {}",
            if at.is_empty() { "/" } else { at },
            shown(Some(a)),
            shown(Some(b))
        )),
    }
}

fn shown(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 120 {
                format!("{}…", s.chars().take(120).collect::<String>())
            } else {
                s
            }
        }
    }
}

/// A runtime as it named itself to `initialize`: `name version`.
fn runtime_key(info: &Value) -> String {
    let field = |p: &str| {
        info.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    format!("{} {}", field("/runtime/name"), field("/runtime/version"))
}

/// Compare every run against the first run of the same runtime (by the name and version it
/// gave `initialize`). `runs` are (spec, initialize answer, results in case order).
pub fn compare(runs: &[(&str, &Value, &[CaseResult])]) -> Vec<Difference> {
    let mut out = Vec::new();
    for (i, (spec, info, results)) in runs.iter().enumerate() {
        let key = runtime_key(info);
        let Some((first, _, base)) = runs[..i]
            .iter()
            .find(|(_, other, _)| runtime_key(other) == key)
        else {
            continue;
        };
        for (l, r) in base
            .iter()
            .zip(results.iter())
            .filter(|(l, r)| l.name == r.name)
        {
            if let Some(what) = first_difference(&comparable(l), &comparable(r), "") {
                out.push(Difference {
                    case: r.name.clone(),
                    runtime: key.clone(),
                    left: first.to_string(),
                    right: spec.to_string(),
                    what,
                });
            }
        }
    }
    out
}

/// The runtimes run over more than one spec: (runtime, its specs in order).
pub fn groups(runs: &[(&str, &Value)]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (spec, info) in runs {
        let key = runtime_key(info);
        match out.iter_mut().find(|(g, _)| *g == key) {
            Some((_, specs)) => specs.push(spec.to_string()),
            None => out.push((key, vec![spec.to_string()])),
        }
    }
    out.retain(|(_, specs)| specs.len() > 1);
    out
}

/// The cases each runtime reached over several transports was observed differently over.
pub fn parity(runs: &[RuntimeRun]) -> Vec<Difference> {
    let all: Vec<(&str, &Value, &[CaseResult])> = runs
        .iter()
        .map(|r| (r.runtime.as_str(), &r.info, r.cases.as_slice()))
        .collect();
    if groups(&all.iter().map(|(s, i, _)| (*s, *i)).collect::<Vec<_>>()).is_empty() {
        return Vec::new();
    }
    compare(&all)
}

/// Per case name, a hash of its observations before the runtime's declared redactions (only
/// the cases of a runtime that declares some).
pub type RawObservations = std::collections::BTreeMap<String, u64>;

/// The hash [`RawObservations`] keeps of one case's observations.
pub fn raw_hash(observations: &[crate::run::Observation]) -> u64 {
    crate::hash::fnv1a64(
        serde_json::to_string(observations)
            .unwrap_or_default()
            .as_bytes(),
    )
}

/// Cases one runtime's declared redactions made equal across two of its transports.
#[derive(Debug, Clone, PartialEq)]
pub struct Hidden {
    pub runtime: String,
    pub left: String,
    pub right: String,
    /// How many cases, and the first of them.
    pub cases: usize,
    pub first: String,
}

impl std::fmt::Display for Hidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} and {} observed {} case(s) differently (first {}) until its declared \
             redactions made them equal: transport parity does not see what a redaction hides \
             (fine if it is only what is random; else a pattern is too wide: \
             docs/shim-protocol.md#redactions)",
            self.runtime, self.left, self.right, self.cases, self.first
        )
    }
}

/// What declared redactions hid from [`parity`]: per pair of specs of one runtime, the cases
/// with no difference after the redactions whose observations differed before them.
pub fn hidden(
    runs: &[RuntimeRun],
    raw: &[RawObservations],
    differences: &[Difference],
) -> Vec<Hidden> {
    let mut out = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let key = runtime_key(&run.info);
        let Some(j) = (0..i).find(|&j| runtime_key(&runs[j].info) == key) else {
            continue;
        };
        let (left, right) = (&runs[j], run);
        let differs = |case: &str| {
            differences
                .iter()
                .any(|d| d.case == case && d.left == left.runtime && d.right == right.runtime)
        };
        let names: Vec<&str> = right
            .cases
            .iter()
            .map(|c| c.name.as_str())
            .filter(|n| !differs(n))
            .filter(|n| match (raw[j].get(*n), raw[i].get(*n)) {
                (Some(a), Some(b)) => a != b,
                _ => false,
            })
            .collect();
        if let Some(first) = names.first() {
            out.push(Hidden {
                runtime: key,
                left: left.runtime.clone(),
                right: right.runtime.clone(),
                cases: names.len(),
                first: first.to_string(),
            });
        }
    }
    out
}
