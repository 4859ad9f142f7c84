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
//! | `{"$count": [n, e]}` | the actual is an array in which exactly n elements match e |
//! | `{"$len": n}` | the array, object or string has n elements |
//! | `{"$noText": "s"}` or a list | no string anywhere inside the actual contains s |
//! | `{"$hasText": "s"}` or a list | for each s, some string (or key) inside the actual contains it |
//! | `{"$within": "/dir"}` | the actual is a path equal to `/dir` or below it (lexically) |
//! | `{"$deep": e}` | the actual, or some value nested anywhere inside it, matches e |
//! | `{"$denial": "class"}` | a non-empty denial text; of that class by the runtime's own denial map |
//! | `{"$rule": "name"}` | a non-empty lint rule name; that rule by the runtime's own rule map |
//!
//! Which class a denial text is, and which rule a lint issue names, are the runtime's words: a
//! runtime declares in `initialize` how its texts map onto hcpspec's classes and rules ([`Claims`]).
//! Without a map (or without the class in it) such a check asks only for a non-empty text and
//! is recorded as *unclassified*, never failed; with one, a text must fit its class, and a text
//! that fits no class of the map fails (the map is not total over what the runtime said).

// A mismatch carries the expected and actual values; it is the rare path, so no boxing.
#![allow(clippy::result_large_err)]

use regex::Regex;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};

/// Every operator the matcher accepts, in the order of the docs' table: the one list the
/// fuzzer draws from, the docs' tables (`vectors/README.md` § Matchers and this module's) name
/// exactly, and [`validate`] accepts (tests below).
pub const OPERATORS: &[&str] = &[
    "$regex",
    "$type",
    "$absent",
    "$present",
    "$anyOf",
    "$all",
    "$not",
    "$exact",
    "$contains",
    "$each",
    "$count",
    "$len",
    "$noText",
    "$hasText",
    "$within",
    "$deep",
    "$denial",
    "$rule",
];

/// hcpspec's denial classes and lint rule names (`vectors/denials.json`): name → meaning.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Denials {
    pub classes: BTreeMap<String, String>,
    pub rules: BTreeMap<String, String>,
}

/// What the runtime under test declared in `initialize` about its own words: its denial map
/// (hcpspec class → a regex over its denial texts) and rule map (hcpspec rule → a regex over
/// its rule names), and the optional features it claims.
#[derive(Debug, Clone, Default)]
pub struct Claims {
    pub denials: Option<WordMap>,
    pub rules: Option<WordMap>,
    pub features: Vec<String>,
    /// `"connect": false` in initialize: a driver without `connect` (issue 44).
    pub no_connect: bool,
}

/// A runtime's map from hcpspec's names to regexes over its own words, compiled once per
/// runtime, not once per check. A regex that does not compile fits no text.
#[derive(Debug, Clone, Default)]
pub struct WordMap(BTreeMap<String, (String, Option<Regex>)>);

impl WordMap {
    pub fn new(map: &BTreeMap<String, String>) -> WordMap {
        WordMap(
            map.iter()
                .map(|(k, re)| (k.clone(), (re.clone(), Regex::new(re).ok())))
                .collect(),
        )
    }

    fn fits(entry: &(String, Option<Regex>), text: &str) -> bool {
        entry.1.as_ref().is_some_and(|r| r.is_match(text))
    }
}

impl Claims {
    /// Does a denial text fit this runtime's own regex for `class`? None when it cannot be told
    /// (no denial map, or none for that class): unclassified, never a failure, in `run` and
    /// `fuzz` alike.
    pub fn denial_fits(&self, class: &str, text: &str) -> Option<bool> {
        let entry = self.denials.as_ref()?.0.get(class)?;
        Some(WordMap::fits(entry, text))
    }

    /// Does a lint rule name fit this runtime's own regex for hcpspec's `rule`? None when it
    /// cannot be told (no rule map, or none for that rule), as [`Self::denial_fits`].
    pub fn rule_fits(&self, rule: &str, name: &str) -> Option<bool> {
        let entry = self.rules.as_ref()?.0.get(rule)?;
        Some(WordMap::fits(entry, name))
    }

    /// From an `initialize` result: `{denials?: {class: regex}, rules?: {rule: regex}, features}`.
    /// A map member that is not a string is left out (the schema check reports it).
    pub fn from_initialize(info: &Value) -> Claims {
        let map = |key: &str| {
            info.get(key).and_then(Value::as_object).map(|m| {
                WordMap::new(
                    &m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect(),
                )
            })
        };
        Claims {
            denials: map("denials"),
            rules: map("rules"),
            features: info
                .get("features")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|f| f.as_str().map(String::from))
                .collect(),
            no_connect: info.get("connect") == Some(&Value::Bool(false)),
        }
    }
}

/// One class or rule check against the runtime's own map.
fn classify(
    map: Option<&WordMap>,
    what: &str,
    name: &str,
    text: &str,
    notes: &RefCell<Vec<String>>,
) -> Result<(), String> {
    if text.trim().is_empty() {
        return Err(format!("an empty {what}: a {what} must say why"));
    }
    if name == "any" {
        return Ok(());
    }
    let Some(map) = map else {
        notes.borrow_mut().push(format!(
            "{what} `{text}` unclassified as `{name}`: the runtime declares no {what} map"
        ));
        return Ok(());
    };
    if !map.0.values().any(|e| WordMap::fits(e, text)) {
        return Err(format!(
            "{what} `{text}` fits no class of the runtime's own {what} map (the map must cover every {what} the runtime gives)"
        ));
    }
    match map.0.get(name) {
        None => {
            notes.borrow_mut().push(format!(
                "{what} `{text}` unclassified as `{name}`: the runtime's {what} map has no `{name}`"
            ));
            Ok(())
        }
        Some(e) if WordMap::fits(e, text) => Ok(()),
        Some((re, _)) => Err(format!(
            "not a `{name}` {what} by the runtime's own map (/{re}/)"
        )),
    }
}

/// Is `path` the directory `root` or below it? Lexical: `.` and `..` are resolved as text.
pub fn within(path: &str, root: &str) -> bool {
    fn norm(p: &str) -> Option<Vec<&str>> {
        if !p.starts_with('/') {
            return None;
        }
        let mut out = Vec::new();
        for c in p.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    out.pop()?;
                }
                c => out.push(c),
            }
        }
        Some(out)
    }
    match (norm(path), norm(root)) {
        (Some(p), Some(r)) => p.starts_with(&r),
        _ => false,
    }
}

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

/// The most a case's `$regex` may compile to (regex's NFA and lazy DFA sizes): a pattern is a
/// line, and `\w{150}` repeated a thousand times took minutes to load at the default limits.
pub const REGEX_BYTES: usize = 1 << 20;

/// A case's `$regex`, compiled within [`REGEX_BYTES`] once per process: matching visits many
/// values (`$deep`, `$anyOf`), and each compiled it again.
fn case_regex(pattern: &str) -> Result<std::sync::Arc<Regex>, String> {
    use std::sync::{Arc, Mutex};
    static SEEN: Mutex<Option<HashMap<String, Arc<Regex>>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    let seen = seen.get_or_insert_with(HashMap::new);
    if let Some(re) = seen.get(pattern) {
        return Ok(re.clone());
    }
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(REGEX_BYTES)
        .dfa_size_limit(REGEX_BYTES)
        .build()
        .map_err(|e| {
            e.to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })?;
    // Bounded: past it, what was compiled is compiled again.
    if seen.len() >= 4096 {
        seen.clear();
    }
    let re = Arc::new(re);
    seen.insert(pattern.to_string(), re.clone());
    Ok(re)
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
                    case_regex(re).map_err(|err| (here.clone(), format!("bad regex: {err}")))?;
                }
                "$denial" | "$rule" => {
                    let name = arg
                        .as_str()
                        .ok_or((here.clone(), format!("{op} takes a name")))?;
                    let known = if op == "$denial" {
                        &d.classes
                    } else {
                        &d.rules
                    };
                    if !known.contains_key(name) {
                        return Err((
                            here,
                            format!("unknown {} `{name}` (see vectors/denials.json)", &op[1..]),
                        ));
                    }
                }
                "$within" if !arg.is_string() => return Err((here, "$within takes a path".into())),
                "$anyOf" | "$all" | "$contains" => {
                    let items = arg
                        .as_array()
                        .ok_or((here.clone(), format!("{op} takes an array")))?;
                    for (i, x) in items.iter().enumerate() {
                        walk(x, d, &format!("{here}/{i}"))?;
                    }
                }
                "$not" | "$each" | "$deep" => walk(arg, d, &here)?,
                "$count" => match arg.as_array().map(Vec::as_slice) {
                    Some([n, x]) if n.is_u64() => walk(x, d, &format!("{here}/1"))?,
                    _ => return Err((here, "$count takes [count, expectation]".into())),
                },
                "$len" if !arg.is_u64() => return Err((here, "$len takes a count".into())),
                "$absent" | "$present" if arg != &Value::Bool(true) => {
                    return Err((here, format!("{op} takes true")))
                }
                "$type" | "$exact" | "$noText" | "$hasText" | "$within" | "$len" | "$absent"
                | "$present" => {}
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

/// The most steps (an expectation matched against one value) one check takes. Expectations
/// are untrusted (a case's, a core's declared `failure`) and so are the values they judge:
/// past this the check is a mismatch saying so, whatever the operators would have said.
pub const MAX_STEPS: u64 = 1 << 24;

/// The judge of one check: the runtime's claims, and the unclassified notes gathered.
struct Judge<'a> {
    claims: &'a Claims,
    notes: RefCell<Vec<String>>,
    /// Steps taken, against `max_steps` ([`MAX_STEPS`]; less in tests).
    steps: Cell<u64>,
    max_steps: u64,
    /// [`deep_at`]'s answers by (`$deep` expectation, value): the notes of a match, or None.
    deep: RefCell<HashMap<(usize, usize), Known>>,
    /// How many `$deep` the step is inside.
    nesting: Cell<u32>,
}

/// The most `$deep` answers one check remembers (about 50 bytes each).
pub const DEEP_MEMO: usize = 1 << 20;

/// A remembered `$deep` answer: the notes of a match, or None.
type Known = Option<Vec<String>>;

/// Does `actual` satisfy `expected`? The first mismatch, in document order, when not. On a
/// match, the class and rule checks that could not be classified (see [`Claims`]).
pub fn check(expected: &Value, actual: &Value, claims: &Claims) -> Result<Vec<String>, Mismatch> {
    check_counted(expected, actual, claims).0
}

/// [`check`], and the steps it took.
pub fn check_counted(
    expected: &Value,
    actual: &Value,
    claims: &Claims,
) -> (Result<Vec<String>, Mismatch>, u64) {
    check_within(expected, actual, claims, MAX_STEPS)
}

fn check_within(
    expected: &Value,
    actual: &Value,
    claims: &Claims,
    max_steps: u64,
) -> (Result<Vec<String>, Mismatch>, u64) {
    let j = Judge {
        claims,
        notes: RefCell::new(Vec::new()),
        steps: Cell::new(0),
        max_steps,
        deep: RefCell::new(HashMap::new()),
        nesting: Cell::new(0),
    };
    let r = at(expected, Some(actual), &j, "");
    let steps = j.steps.get();
    // Past the bound every step fails at once, so `$not` may have turned one into a match:
    // the check's answer is the bound, sticky.
    if steps > max_steps {
        let m = format!("matching took more than {MAX_STEPS} steps (case::matcher::MAX_STEPS)");
        return (Err(miss("", expected, Some(actual), m)), steps);
    }
    (r.map(|()| j.notes.into_inner()), steps)
}

/// Run `f`; keep the notes it gathered only when it matched.
fn trial(j: &Judge, f: impl FnOnce() -> Result<(), Mismatch>) -> Result<(), Mismatch> {
    let before = j.notes.borrow().len();
    let r = f();
    if r.is_err() {
        j.notes.borrow_mut().truncate(before);
    }
    r
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

fn at(e: &Value, a: Option<&Value>, d: &Judge, path: &str) -> Result<(), Mismatch> {
    d.steps.set(d.steps.get() + 1);
    if d.steps.get() > d.max_steps {
        return Err(miss(path, e, a, "past case::matcher::MAX_STEPS"));
    }
    match operator(e) {
        Some((op, arg)) => matcher(op, arg, e, a, d, path),
        None => literal(e, a, d, path),
    }
}

/// An operator on what is there or not (`$absent`, `$present`), one combining expectations
/// (`$anyOf`, `$deep`, `$all`, `$not`), else one on the value found.
fn matcher(
    op: &str,
    arg: &Value,
    e: &Value,
    a: Option<&Value>,
    d: &Judge,
    path: &str,
) -> Result<(), Mismatch> {
    let present = a.filter(|v| !v.is_null());
    match op {
        "$absent" => match present {
            None => Ok(()),
            Some(_) => Err(miss(path, e, a, "expected absent")),
        },
        "$present" => present
            .map(|_| ())
            .ok_or_else(|| miss(path, e, a, "expected present")),
        "$anyOf" => {
            let options = arg.as_array().map(Vec::as_slice).unwrap_or_default();
            if options
                .iter()
                .any(|o| trial(d, || at(o, a, d, path)).is_ok())
            {
                Ok(())
            } else {
                Err(miss(path, e, a, "matched none of $anyOf"))
            }
        }
        "$deep" => deep(arg, e, a, d, path),
        "$all" => {
            for want in arg.as_array().map(Vec::as_slice).unwrap_or_default() {
                at(want, a, d, path)?;
            }
            Ok(())
        }
        "$not" => not(arg, e, a, d, path),
        _ => match a {
            None => Err(miss(path, e, a, "missing")),
            Some(v) => on_value(op, arg, e, v, d, path),
        },
    }
}

/// `$deep`: the expectation matches the value found or anything inside it.
fn deep(arg: &Value, e: &Value, a: Option<&Value>, d: &Judge, path: &str) -> Result<(), Mismatch> {
    d.nesting.set(d.nesting.get() + 1);
    let found = a.is_some_and(|v| deep_at(arg, e, v, d, path));
    d.nesting.set(d.nesting.get() - 1);
    if found {
        Ok(())
    } else {
        Err(miss(
            path,
            e,
            a,
            "nothing inside matches the $deep expectation",
        ))
    }
}

/// Does `arg` match `v` or a value inside it (in document order, `v` first)? Inside another
/// `$deep`, remembered per (`$deep` expectation, value), with the notes a match gathered: the
/// inner one asks the same of each value once, not once per path of outer values leading to
/// it (exponential in the nesting: 14 deep ran for hours). Only there can the same question
/// come twice; at most [`DEEP_MEMO`] answers are kept ([`MAX_STEPS`] bounds the rest).
fn deep_at(arg: &Value, e: &Value, v: &Value, d: &Judge, path: &str) -> bool {
    let key = (e as *const Value as usize, v as *const Value as usize);
    let nested = d.nesting.get() > 1;
    let known = match nested {
        true => d.deep.borrow().get(&key).cloned(),
        false => None,
    };
    if let Some(known) = known {
        if let Some(notes) = &known {
            d.notes.borrow_mut().extend(notes.iter().cloned());
        }
        return known.is_some();
    }
    let before = d.notes.borrow().len();
    let found = trial(d, || at(arg, Some(v), d, path)).is_ok()
        || match v {
            Value::Array(x) => x.iter().any(|c| deep_at(arg, e, c, d, path)),
            Value::Object(m) => m.values().any(|c| deep_at(arg, e, c, d, path)),
            _ => false,
        };
    if nested && d.deep.borrow().len() < DEEP_MEMO {
        let notes = found.then(|| d.notes.borrow()[before..].to_vec());
        d.deep.borrow_mut().insert(key, notes);
    }
    found
}

/// `$not`: the expectation does not match.
fn not(arg: &Value, e: &Value, a: Option<&Value>, d: &Judge, path: &str) -> Result<(), Mismatch> {
    let before = d.notes.borrow().len();
    let r = at(arg, a, d, path);
    let unclassified: Vec<String> = d.notes.borrow_mut().split_off(before);
    match r {
        // It matched only as far as the runtime's maps could tell: the negation cannot be
        // told either, so it is unclassified too, never failed.
        Ok(()) if !unclassified.is_empty() => {
            d.notes
                .borrow_mut()
                .extend(unclassified.into_iter().map(|n| format!("under $not: {n}")));
            Ok(())
        }
        Ok(()) => Err(miss(path, e, a, "matched the $not expectation")),
        Err(_) => Ok(()),
    }
}

/// An operator on the value found, `v`.
fn on_value(
    op: &str,
    arg: &Value,
    e: &Value,
    v: &Value,
    d: &Judge,
    path: &str,
) -> Result<(), Mismatch> {
    let a = Some(v);
    match op {
        "$regex" => {
            let re =
                case_regex(arg.as_str().unwrap_or_default()).map_err(|x| miss(path, e, a, x))?;
            match v.as_str() {
                Some(s) if re.is_match(s) => Ok(()),
                _ => Err(miss(path, e, a, "does not match regex")),
            }
        }
        "$denial" | "$rule" => {
            let (map, what) = if op == "$denial" {
                (d.claims.denials.as_ref(), "denial")
            } else {
                (d.claims.rules.as_ref(), "rule")
            };
            let Some(text) = v.as_str() else {
                return Err(miss(path, e, a, format!("a {what} must be a string")));
            };
            classify(map, what, arg.as_str().unwrap_or_default(), text, &d.notes)
                .map_err(|m| miss(path, e, a, m))
        }
        "$within" => match v.as_str() {
            Some(p) if within(p, arg.as_str().unwrap_or_default()) => Ok(()),
            _ => Err(miss(path, e, a, "not a path within the directory")),
        },
        "$type" => {
            let ok = match arg {
                Value::String(t) => has_type(v, t),
                Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| has_type(v, t)),
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
        "$len" => length(arg, e, v, path),
        "$count" | "$contains" | "$each" => elements(op, arg, e, v, d, path),
        "$noText" | "$hasText" => text(op, arg, e, v, path),
        other => Err(miss(path, e, a, format!("unknown matcher {other}"))),
    }
}

/// `$len`: the length of an array, object or string.
fn length(arg: &Value, e: &Value, v: &Value, path: &str) -> Result<(), Mismatch> {
    let a = Some(v);
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

/// `$count`, `$contains`, `$each`: the elements of an array.
fn elements(
    op: &str,
    arg: &Value,
    e: &Value,
    v: &Value,
    d: &Judge,
    path: &str,
) -> Result<(), Mismatch> {
    let a = Some(v);
    let Some(items) = v.as_array() else {
        return Err(miss(path, e, a, "not an array"));
    };
    match op {
        "$count" => {
            let (want, x) = (arg[0].as_u64(), &arg[1]);
            let n = items
                .iter()
                .filter(|i| trial(d, || at(x, Some(i), d, path)).is_ok())
                .count();
            if Some(n as u64) == want {
                Ok(())
            } else {
                Err(miss(path, e, a, format!("{n} elements match")))
            }
        }
        "$each" => {
            for (i, x) in items.iter().enumerate() {
                at(arg, Some(x), d, &format!("{path}/{i}"))?;
            }
            Ok(())
        }
        _ => {
            for want in arg.as_array().map(Vec::as_slice).unwrap_or_default() {
                if !items
                    .iter()
                    .any(|x| trial(d, || at(want, Some(x), d, path)).is_ok())
                {
                    return Err(miss(path, want, a, "no element matches"));
                }
            }
            Ok(())
        }
    }
}

/// `$noText`, `$hasText`: texts anywhere in the value found.
fn text(op: &str, arg: &Value, e: &Value, v: &Value, path: &str) -> Result<(), Mismatch> {
    let a = Some(v);
    let needles: Vec<&str> = match arg {
        Value::String(s) => vec![s.as_str()],
        Value::Array(x) => x.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let mut hay = Vec::new();
    strings(v, &mut hay);
    let found = |n: &&&str| hay.iter().any(|h| h.contains(**n));
    if op == "$noText" {
        match needles.iter().find(found) {
            Some(n) => Err(miss(path, e, a, format!("contains the text `{n}`"))),
            None => Ok(()),
        }
    } else {
        match needles.iter().find(|n| !found(n)) {
            Some(n) => Err(miss(path, e, a, format!("nowhere contains the text `{n}`"))),
            None => Ok(()),
        }
    }
}

/// A literal: an object's members and an array's elements each matched, a number by value,
/// anything else equal.
fn literal(e: &Value, a: Option<&Value>, d: &Judge, path: &str) -> Result<(), Mismatch> {
    match e {
        Value::Object(want) => {
            let Some(Value::Object(got)) = a else {
                return Err(miss(path, e, a, "expected an object"));
            };
            for (k, sub) in want {
                at(sub, got.get(k), d, &crate::pointer::push(path, k))?;
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
        Denials {
            classes: BTreeMap::from([("confirm".to_string(), "needs confirm".to_string())]),
            rules: BTreeMap::from([("skill-present".to_string(), "HARNESS.md".to_string())]),
        }
    }
    /// A well-formed argument of each operator, for the test that `validate` accepts them all.
    fn sample(op: &str) -> Value {
        match op {
            "$regex" => json!("^a"),
            "$type" => json!("string"),
            "$absent" | "$present" => json!(true),
            "$anyOf" | "$all" | "$contains" => json!([{ "ok": true }]),
            "$not" | "$each" | "$deep" => json!({ "ok": true }),
            "$exact" => json!([1]),
            "$count" => json!([1, { "ok": true }]),
            "$len" => json!(2),
            "$noText" | "$hasText" => json!("tok"),
            "$within" => json!("/w"),
            "$denial" => json!("confirm"),
            "$rule" => json!("skill-present"),
            other => panic!("no sample argument for {other}: add one here"),
        }
    }

    /// The operators a Markdown table names: the first `$name` of each row's first cell.
    fn table_operators(text: &str, prefix: &str) -> std::collections::BTreeSet<String> {
        let op = Regex::new(r#"^`\{"(\$[A-Za-z]+)""#).unwrap();
        text.lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| op.captures(l).map(|c| c[1].to_string()))
            .collect()
    }

    #[test]
    fn operators_are_the_one_list_of_docs_validator_and_source() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let ours: std::collections::BTreeSet<String> =
            OPERATORS.iter().map(|o| o.to_string()).collect();
        assert_eq!(ours.len(), OPERATORS.len(), "an operator is listed twice");
        let readme = std::fs::read_to_string(root.join("vectors/README.md")).unwrap();
        let matchers = &readme[readme
            .find("## Matchers")
            .expect("vectors/README.md § Matchers")..];
        let matchers = &matchers[..matchers[3..]
            .find("\n## ")
            .map_or(matchers.len(), |i| i + 3)];
        assert_eq!(
            table_operators(matchers, ""),
            ours,
            "vectors/README.md § Matchers"
        );
        let source = std::fs::read_to_string(root.join("src/case/matcher.rs")).unwrap();
        assert_eq!(
            table_operators(&source, "//! "),
            ours,
            "src/case/matcher.rs's doc table"
        );
        // Every operator the code above the tests spells is in the list.
        let code = &source[..source.find("#[cfg(test)]").unwrap()];
        let spelt = Regex::new(r#""(\$[A-Za-z]+)""#).unwrap();
        for c in spelt.captures_iter(code) {
            assert!(
                ours.contains(&c[1]),
                "{} is matched on but not in OPERATORS",
                &c[1]
            );
        }
        for op in OPERATORS {
            let e = json!({ "a": { *op: sample(op) } });
            assert_eq!(validate(&e, &d()), Ok(()), "validate refuses {op}");
        }
        assert!(validate(&json!({ "$regexp": "a" }), &d()).is_err());
    }

    fn mapped() -> Claims {
        Claims {
            denials: Some(WordMap::new(&BTreeMap::from([
                ("confirm".to_string(), "^confirm required$".to_string()),
                ("no-grant".to_string(), "^denied".to_string()),
            ]))),
            ..Claims::default()
        }
    }
    fn ok(e: Value, a: Value) -> bool {
        check(&e, &a, &mapped()).is_ok()
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
        let events = json!([{"type": "a", "n": 1}, {"type": "b"}, {"type": "a", "n": 2}]);
        assert!(ok(json!({"$count": [2, {"type": "a"}]}), events.clone()));
        assert!(!ok(json!({"$count": [1, {"type": "a"}]}), events.clone()));
        assert!(ok(json!({"$count": [0, {"type": "c"}]}), events));
        assert!(!ok(json!({"$count": [0, {"type": "c"}]}), json!({})));
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
        assert!(ok(json!({"$denial": "confirm"}), json!("confirm required")));
        assert!(!ok(json!({"$denial": "confirm"}), json!("denied")));
        assert!(
            !ok(json!({"$denial": "confirm"}), json!("nope")),
            "fits no class"
        );
        assert!(ok(
            json!({"$hasText": ["a-c", "b"]}),
            json!({"x": ["a-c", {"b": 1}]})
        ));
        assert!(!ok(json!({"$hasText": "zz"}), json!({"x": "a"})));
        assert!(ok(json!({"$within": "/a/b"}), json!("/a/b/c")));
        assert!(ok(json!({"$within": "/a/b"}), json!("/a/b")));
        assert!(!ok(json!({"$within": "/a/b"}), json!("/a/bc")));
        assert!(!ok(json!({"$within": "/a/b"}), json!("/a/b/../c")));
        assert!(!ok(json!({"$within": "/a/b"}), json!("a/b")));
        assert!(ok(
            json!({"$deep": {"argv": ["x"]}}),
            json!({"output": {"argv": ["x"], "n": 1}})
        ));
        assert!(ok(
            json!({"$deep": {"argv": ["x"]}}),
            json!({"argv": ["x"]})
        ));
        assert!(!ok(
            json!({"$deep": {"argv": ["y"]}}),
            json!({"output": {"argv": ["x"]}})
        ));
    }

    #[test]
    fn deep_inside_deep_is_polynomial() {
        // `$deep` nested 14 deep (a core's declared `failure` can be) against a value nested as
        // deep: every node of the value tried for every level, not every path through them.
        let nest = |leaf: Value, key: &str| (0..14).fold(leaf, |v, _| json!({ key: v }));
        let actual = nest(json!({ "leaf": true }), "a");
        for (leaf, matches) in [(json!("nope"), false), (json!(true), true)] {
            let mut e = json!({ "leaf": leaf });
            for _ in 0..14 {
                e = json!({ "$deep": e });
            }
            let (r, steps) = check_counted(&e, &actual, &Claims::default());
            assert!(steps < 10_000, "{steps} steps");
            match r {
                Ok(_) => assert!(matches),
                Err(m) => {
                    assert!(!matches, "{}", m.message);
                    assert_eq!(m.message, "nothing inside matches the $deep expectation");
                }
            }
        }
    }

    #[test]
    fn a_check_past_its_steps_is_a_mismatch_even_under_not() {
        // Each `$count` fails (so each `$not` of it matches): 64 × 66 steps, past a bound of
        // 1000; the answer is the bound, never a `$not` of a step refused.
        let actual = Value::Array(vec![json!(1); 64]);
        let one = json!({ "$not": { "$count": [1, { "$exact": 2 }] } });
        let e = json!({ "$not": { "$all": vec![one; 64] } });
        let (r, _) = check_within(&e, &actual, &Claims::default(), 100_000);
        assert_eq!(r.unwrap_err().message, "matched the $not expectation");
        let (r, steps) = check_within(&e, &actual, &Claims::default(), 1000);
        // Past the bound each step is refused at once: the loops around it only unwind.
        assert!((1001..1100).contains(&steps), "{steps}");
        let m = r.unwrap_err();
        assert!(m.message.contains("MAX_STEPS"), "{}", m.message);
    }

    #[test]
    fn unmapped_classes_are_unclassified_never_failed() {
        let none = Claims::default();
        let e = json!({"$denial": "confirm"});
        assert_eq!(
            check(&e, &json!("Bitte bestätigen"), &none).unwrap().len(),
            1
        );
        assert!(
            check(&e, &json!("  "), &none).is_err(),
            "a reason is never empty"
        );
        assert_eq!(
            check(&json!({"$denial": "any"}), &json!("x"), &none)
                .unwrap()
                .len(),
            0
        );
        assert_eq!(
            check(
                &json!({"$denial": "elevation"}),
                &json!("denied: x"),
                &mapped()
            )
            .unwrap()
            .len(),
            1
        );
        // Notes of a branch that did not match are dropped.
        // A negated check that could not be classified is unclassified too, never failed.
        let not = json!({"$not": {"$denial": "confirm"}});
        assert_eq!(check(&not, &json!("denied"), &none).unwrap().len(), 1);
        assert!(check(&not, &json!("confirm required"), &mapped()).is_err());
        assert!(check(&not, &json!("denied"), &mapped()).unwrap().is_empty());
        let any = json!({"$anyOf": [{"$all": [{"$denial": "confirm"}, {"$regex": "^z"}]}, {"$regex": "."}]});
        assert!(check(&any, &json!("a"), &none).unwrap().is_empty());
    }

    #[test]
    fn mismatch_names_the_path() {
        let m = check(
            &json!({"verbs": [{"executable": true}]}),
            &json!({"verbs": [{"executable": false}]}),
            &Claims::default(),
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
        assert!(validate(&json!({"a": {"$rule": "skill-present"}}), &d()).is_ok());
        assert!(validate(&json!({"a": {"$rule": "confirm"}}), &d()).is_err());
        assert!(validate(&json!({"a": {"$within": 3}}), &d()).is_err());
    }
}
