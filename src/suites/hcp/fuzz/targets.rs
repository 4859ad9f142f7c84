//! The bodies of the cargo-fuzz targets. Each `fuzz/fuzz_targets/NAME.rs` is one line calling
//! [`run`] (or the function of the same name here), so `cargo test` replays the committed
//! corpora and past crash inputs on stable (`tests/fuzz_corpus.rs`) without libFuzzer.
//!
//! Every target takes bytes. An input that starts like JSON text (`{`, `[`, whitespace) or holds
//! the byte 0xFF (a file separator: it never occurs in UTF-8) is taken raw; any other input
//! drives the structure-aware generators of [`crate::mutate`] through `arbitrary`, which reach
//! the linter and the authoriser that raw bytes rarely get past the parser and the schema to.
//! A target panics only when an invariant breaks (or the code under test panics): that is the
//! crash libFuzzer reports.

use crate::case::matcher::{self, Denials};
use crate::case::patch::set;
use crate::mutate::{any_json, retype, weird_string, Bytes, Source};
use crate::suites::hcp::mutate::case::{case_json, gen_args, gen_grants, generate, CaseMeta};
use crate::suites::hcp::mutate::pack::{
    embedded_fixtures, gen_edit, pointers, FileState, Fixture, PackState,
};
use crate::suites::hcp::pack::{self, Issue, Operation, Pack, PackFiles};
use crate::suites::hcp::runtime::mutant::Mutant;
use crate::suites::hcp::runtime::reference::authz::{
    authorize_exec, confirm_gate, holds, may_activate, Subject, CAPABILITIES, CONNECT, ELEVATE,
    EXEC_READ, EXEC_WRITE,
};
use crate::suites::hcp::runtime::{ExecRequest, Grant};
use arbitrary::{Arbitrary, Unstructured};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub const TARGETS: &[&str] = &[
    "pack_load",
    "authorize",
    "case_load",
    "matcher",
    "shim_message",
];

/// Run target `name` on one input; `false` for an unknown target.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "pack_load" => pack_load(data),
        "authorize" => authorize(data),
        "case_load" => case_load(data),
        "matcher" => matcher(data),
        "shim_message" => shim_message(data),
        _ => return false,
    }
    true
}

/// Separates the files of a raw multi-file input.
pub const SPLIT: u8 = 0xFF;

fn is_raw(data: &[u8]) -> bool {
    matches!(
        data.first(),
        Some(b'{' | b'[' | b' ' | b'\n' | b'\t' | b'"')
    ) || data.contains(&SPLIT)
}

fn fixtures() -> &'static [Fixture] {
    static F: OnceLock<Vec<Fixture>> = OnceLock::new();
    F.get_or_init(embedded_fixtures)
}

fn typed_fixtures() -> &'static [Pack] {
    static P: OnceLock<Vec<Pack>> = OnceLock::new();
    P.get_or_init(|| {
        fixtures()
            .iter()
            .filter_map(|f| pack::load_files(&PackState::of(f).files(&f.name)).ok())
            .collect()
    })
}

/// The denial classes of `vectors/denials.json`, compiled in.
pub fn denials() -> &'static Denials {
    static D: OnceLock<Denials> = OnceLock::new();
    D.get_or_init(|| {
        let v: Value = serde_json::from_str(include_str!("../../../../vectors/denials.json"))
            .unwrap_or_default();
        let names = |key: &str| {
            v[key]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, c)| (k.clone(), c["meaning"].as_str().unwrap_or("").to_string()))
                .collect()
        };
        Denials {
            classes: names("classes"),
            rules: names("rules"),
        }
    })
}

// ---------------------------------------------------------------------------------------------
// pack_load

use crate::suites::hcp::pack::RULES;

/// Bytes of surface.json, policy.json and HARNESS.md (raw: separated by 0xFF; else a fixture
/// with generated edits): load and lint never panic, a rejection names its issues, lint is
/// deterministic, and a pack that lints clean, serialised again, still loads to the same pack
/// and lints clean.
pub fn pack_load(data: &[u8]) {
    let files = if is_raw(data) {
        let mut parts = data.splitn(3, |b| *b == SPLIT).map(<[u8]>::to_vec);
        PackFiles {
            label: String::new(),
            surface: parts.next(),
            policy: parts.next(),
            skill: parts.next(),
        }
    } else {
        let mut u = Unstructured::new(data);
        let mut src = Bytes(&mut u);
        let f = src.pick(fixtures());
        let mut state = PackState::of(f);
        for _ in 0..src.below(7) {
            let e = gen_edit(&mut src, &state, fixtures());
            state.apply(&e);
        }
        // Compact, not `PackState::files`' pretty print: the same JSON for the loader, in
        // fewer bytes to write and to parse (a file an edit left as text stays as it is).
        let compact = |f: &FileState| match f {
            FileState::Json(v) => serde_json::to_vec(v).ok(),
            other => other.bytes(),
        };
        PackFiles {
            label: String::new(),
            surface: compact(&state.surface),
            policy: compact(&state.policy),
            skill: state.skill.map(String::into_bytes),
        }
    };
    if let Err(e) = check_pack(&files) {
        panic!("pack_load: {e}");
    }
}

/// An invariant of the library a fuzz target found broken: the target panics with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Broken(pub String);

impl From<&str> for Broken {
    fn from(s: &str) -> Broken {
        Broken(s.to_string())
    }
}

/// The invariants of the loader and linter on one pack. (Install is load + lint by
/// construction, `pack::install`; checking it again would only halve the execs/s.)
pub fn check_pack(files: &PackFiles) -> Result<(), Broken> {
    let known = |issues: &[Issue]| match issues.iter().find(|i| !RULES.contains(&i.rule.as_str())) {
        Some(i) => Err(Broken(format!("issue with an unknown rule: {i}"))),
        None => Ok(()),
    };
    let loaded = pack::load_files(files);
    // The typed fast path of the loader answers as the schema-first loader does (checked in
    // debug builds: `cargo test` replays, not the throughput build of `cargo fuzz run -O`).
    #[cfg(debug_assertions)]
    {
        let slow = pack::load_files_schema_first(files);
        if loaded != slow {
            return Err(Broken(format!(
                "the typed loader and the schema-first loader differ: {loaded:?} against {slow:?}"
            )));
        }
    }
    let pack = match loaded {
        Err(issues) if issues.is_empty() => return Err("a rejected pack names no issue".into()),
        Err(issues) => return known(&issues),
        Ok(p) => p,
    };
    let issues = pack::lint(&pack);
    // Twice on the same pack: lint is a function of the pack's value (a clone adds nothing).
    if issues != pack::lint(&pack) {
        return Err("lint is not deterministic".into());
    }
    known(&issues)?;
    if issues.is_empty() {
        let again = PackFiles {
            label: String::new(),
            surface: serde_json::to_vec(&pack.surface).ok(),
            policy: serde_json::to_vec(&pack.policy).ok(),
            skill: pack.skill.clone().map(String::into_bytes),
        };
        let reloaded = pack::load_files(&again).map_err(|e| {
            Broken(format!(
                "a clean pack, serialised again, does not load: {e:?}"
            ))
        })?;
        if reloaded != pack {
            return Err("a clean pack, serialised again, loads as another pack".into());
        }
        let relinted = pack::lint(&reloaded);
        if !relinted.is_empty() {
            return Err(Broken(format!(
                "a clean pack, serialised again, has lint issues: {relinted:?}"
            )));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// authorize

/// Grants × Policy × Principal × exec request, for the reference's pure authoriser.
#[derive(Debug, Clone)]
pub struct AuthzInput {
    pub grants: Vec<Grant>,
    pub tenant_id: Option<String>,
    pub project_id: Option<String>,
    pub pack: Pack,
    pub req: ExecRequest,
}

impl AuthzInput {
    pub fn generate(src: &mut impl Source) -> AuthzInput {
        let fx = fixtures();
        let i = src.below(fx.len());
        let (f, mut pack) = (&fx[i], typed_fixtures()[i].clone());
        let other = src.pick(fx);
        let verbs: Vec<String> = pack.policy.verbs.keys().cloned().collect();
        for _ in 0..src.below(4) {
            let v = src.pick(&verbs).clone();
            match src.below(6) {
                0 => {
                    if let Some(row) = pack.policy.verbs.get_mut(&v) {
                        row.operation = match row.operation {
                            Operation::Read => Operation::Write,
                            Operation::Write => Operation::Read,
                        };
                    }
                }
                1 => {
                    if let Some(row) = pack.policy.verbs.get_mut(&v) {
                        row.confirm = !row.confirm;
                    }
                }
                2 => {
                    if let Some(row) = pack.policy.verbs.get_mut(&v) {
                        row.privacy.land = match row.privacy.land {
                            pack::Land::Local => pack::Land::Brain,
                            pack::Land::Brain => pack::Land::Local,
                        };
                    }
                }
                3 => {
                    pack.policy.verbs.remove(&v);
                }
                4 => pack.surface.commands.retain(|c| c.verb_key != v),
                _ => {
                    if let Some(c) = typed_fixtures()
                        .iter()
                        .find(|p| p.pack_id() == other.pack_id())
                        .and_then(|p| p.surface.commands.first())
                    {
                        pack.surface.commands.push(c.clone());
                    }
                }
            }
        }
        let grants = gen_grants(src, &[f, other]).unwrap_or_default();
        let tenant_id = match src.below(4) {
            0 => None,
            1 => Some("other".into()),
            _ => Some("acme".into()),
        };
        let project_id = src.chance(50).then(|| "proj_1".to_string());
        let pack_id = if src.chance(90) {
            pack.pack_id().to_string()
        } else {
            other.pack_id().to_string()
        };
        let all: Vec<String> = pack
            .surface
            .commands
            .iter()
            .map(|c| c.verb_key.clone())
            .collect();
        let verb_key = if all.is_empty() || src.chance(8) {
            weird_string(src)
        } else {
            src.pick(&all).clone()
        };
        let args = gen_args(src, Some(f), &verb_key);
        AuthzInput {
            grants,
            tenant_id,
            project_id,
            pack,
            req: ExecRequest {
                pack_id,
                verb_key,
                args,
            },
        }
    }
}

/// The authoriser's invariants, against their definitions in the contract and ASSUMPTIONS.md.
/// With a mutant, the first broken invariant (the tests show each authorisation mutant is
/// caught this way).
pub fn check_authz(i: &AuthzInput, m: Option<Mutant>) -> Result<(), Broken> {
    let s = Subject {
        grants: &i.grants,
        tenant_id: i.tenant_id.as_deref(),
        project_id: i.project_id.as_deref(),
    };
    // A grant allows exactly its capability on exactly its pack, within its scopes.
    let granted = |cap: &str, pack_id: &str, verb: Option<&str>| {
        crate::suites::hcp::fuzz::oracle::granted(
            &i.grants,
            i.tenant_id.as_deref(),
            cap,
            pack_id,
            verb,
        )
    };
    let packs = [i.pack.pack_id(), i.req.pack_id.as_str(), "*"];
    let verbs = [None, Some(i.req.verb_key.as_str()), Some("*")];
    for cap in CAPABILITIES.iter().chain(&["pack.admin", "*"]) {
        for p in packs {
            for v in verbs {
                let (got, want) = (holds(s, cap, p, v, m), granted(cap, p, v));
                if got != want {
                    return Err(Broken(format!(
                        "holds({cap}, {p}, {v:?}) is {got}; the grants say {want}"
                    )));
                }
            }
        }
    }
    for p in packs {
        let want = CAPABILITIES.iter().any(|c| granted(c, p, None));
        if may_activate(s, p, m) != want {
            return Err(Broken(format!(
                "activation of {p} is {}; the grants say {want}",
                !want
            )));
        }
    }

    let (p, v) = (i.req.pack_id.as_str(), i.req.verb_key.as_str());
    let row = i.pack.policy.verbs.get(v);
    let known = i.pack.command(v).is_some() && row.is_some();
    let cap = |row: &pack::VerbPolicy| match row.operation {
        Operation::Read => EXEC_READ,
        Operation::Write => EXEC_WRITE,
    };
    let brain_blocked =
        |row: &pack::VerbPolicy| row.privacy.land == pack::Land::Brain && i.project_id.is_none();
    let decided = authorize_exec(s, &i.pack, &i.req, m);
    match (&decided, row) {
        (Ok(_), _) if i.grants.is_empty() => {
            return Err("no grant, no allow: allowed with no grants".into())
        }
        (Ok(_), _) if !known => {
            return Err(Broken(format!(
                "allowed {p}.{v}, which has no command or no Policy row"
            )))
        }
        (Ok(got), Some(row)) => {
            if !std::ptr::eq(*got, row) {
                return Err("allowed under another Policy row".into());
            }
            if !granted(cap(row), p, Some(v)) {
                return Err(Broken(format!(
                    "allowed a {:?} of {p}.{v} without {}",
                    row.operation,
                    cap(row)
                )));
            }
            if brain_blocked(row) {
                return Err("allowed privacy.land brain without a project".into());
            }
        }
        (Err(e), Some(row)) if known && granted(cap(row), p, Some(v)) && !brain_blocked(row) => {
            return Err(Broken(format!("denied ({e}) although every axis allows")));
        }
        _ => {}
    }
    let bare = ExecRequest {
        args: Map::new(),
        ..i.req.clone()
    };
    if authorize_exec(s, &i.pack, &bare, m).is_ok() != decided.is_ok() {
        return Err("authorisation depends on the exec args".into());
    }

    if let Some(row) = row {
        let is_true = |k: &str| i.req.args.get(k) == Some(&Value::Bool(true));
        let want = !row.confirm || is_true("confirm") || is_true("apply");
        let gate = confirm_gate(row, &i.req.args, m);
        if gate.is_ok() != want {
            return Err(Broken(format!(
                "confirm gate says {:?} for confirm {:?}, apply {:?} (Policy confirm {})",
                gate.as_ref().map_err(|d| &d.0),
                i.req.args.get("confirm"),
                i.req.args.get("apply"),
                row.confirm
            )));
        }
        // The pipeline: authorise, then the gate; only then may an adapter run.
        let reaches_adapter = decided
            .as_ref()
            .is_ok_and(|r| confirm_gate(r, &i.req.args, m).is_ok());
        if reaches_adapter && !want {
            return Err("an unconfirmed confirm write reaches the adapter".into());
        }
    }

    if i.pack.surface.binding.as_ref().map(|b| b.mode) == Some(pack::BindingMode::Mothership) {
        let pid = i.pack.pack_id();
        let mints = holds(s, CONNECT, pid, None, m) && holds(s, ELEVATE, pid, None, m);
        if mints && !granted(ELEVATE, pid, None) {
            return Err("a mothership Binding without binding.elevate".into());
        }
    }
    Ok(())
}

/// Arbitrary grants × Policy × Principal × exec request → the authoriser's invariants hold.
pub fn authorize(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let input = AuthzInput::generate(&mut Bytes(&mut u));
    if let Err(e) = check_authz(&input, None) {
        panic!("authorize: {e}\n{input:#?}");
    }
}

// ---------------------------------------------------------------------------------------------
// case_load

/// Case files (raw text, or a generated fuzz case rendered and then mutated): loading never
/// panics, a refusal says why, and a case that loads, written out again, loads as itself.
pub fn case_load(data: &[u8]) {
    let text = if is_raw(data) {
        String::from_utf8_lossy(data).into_owned()
    } else {
        let mut u = Unstructured::new(data);
        let mut src = Bytes(&mut u);
        let fc = generate(&mut src, fixtures(), 0);
        let mut meta = CaseMeta::explore(0);
        meta.id = "fuzz".into();
        let mut v = case_json(&fc.to_case(fixtures(), meta, &BTreeMap::new()));
        for _ in 0..src.below(4) {
            let ps = pointers(&v);
            if ps.is_empty() {
                break;
            }
            let p = src.pick(&ps).clone();
            let value = match src.below(3) {
                0 => None,
                1 => Some(retype(&mut src, v.pointer(&p).unwrap_or(&Value::Null))),
                _ => Some(Value::String(weird_string(&mut src))),
            };
            let _ = set(&mut v, &p, value);
        }
        // Paths and sizes: a pack file, a patch or a probe named by a weird (traversing,
        // absolute, huge) path.
        if src.below(3) == 0 {
            let path = weird_string(&mut src);
            match src.below(3) {
                0 => {
                    let _ = set(
                        &mut v,
                        "/setup/packs/-",
                        Some(json!({ "name": "w", "from": "ledger", "files": { path: "x" } })),
                    );
                }
                1 => {
                    let _ = set(
                        &mut v,
                        "/setup/packs/-",
                        Some(json!({ "from": "ledger", "patch": { path: { "/x": 1 } } })),
                    );
                }
                _ => {
                    let _ = set(&mut v, "/steps/-", Some(json!({ "probe": path })));
                }
            }
        }
        v.to_string()
    };
    // The file is named after the case's id, so a case gets past the id check to the rest.
    let id = serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["id"].as_str().map(String::from))
        .filter(|id| !id.is_empty() && !id.contains(['/', '\\', '.']))
        .unwrap_or_else(|| "fuzz".into());
    let file = PathBuf::from(format!("vectors/found/{id}.json"));
    let file = file.as_path();
    match crate::case::parse_case(
        file,
        &text,
        "found",
        &crate::suites::hcp::Contract,
        denials(),
    ) {
        Err(e) => assert!(
            !e.message.is_empty(),
            "case_load: a refusal without a message"
        ),
        Ok(case) => {
            stays_in_its_case(&case);
            let again = case_json(&case).to_string();
            match crate::case::parse_case(
                file,
                &again,
                "found",
                &crate::suites::hcp::Contract,
                denials(),
            ) {
                Ok(c) if c == case => {}
                other => panic!(
                    "case_load: a loaded case, written again, loads as {other:?}\nfirst: {case:?}"
                ),
            }
        }
    }
}

/// A loaded case names no path outside its case (docs/security.md), by a check of its own: a
/// relative path whose `..` never climbs above where it starts.
fn stays_in_its_case(case: &crate::case::Case) {
    fn inside(rel: &str) -> bool {
        let mut depth = 0i64;
        !rel.is_empty()
            && !rel.starts_with('/')
            && rel.split('/').all(|seg| {
                depth += match seg {
                    ".." => -1,
                    "" | "." => 0,
                    _ => 1,
                };
                depth >= 0
            })
            && depth > 0
    }
    let body = crate::suites::hcp::steps::Body::of(case).expect("a loaded case has a body");
    for p in &body.setup.packs {
        match p {
            crate::suites::hcp::steps::PackRef::Fixture(n) => assert!(
                inside(n) && !n.contains('/'),
                "case_load: fixture `{n}` accepted"
            ),
            crate::suites::hcp::steps::PackRef::Inline(i) => {
                for n in i.name.iter().chain(&i.from) {
                    assert!(
                        inside(n) && !n.contains('/'),
                        "case_load: pack name `{n}` accepted"
                    );
                }
                for k in i.files.keys().chain(i.patch.keys()) {
                    assert!(inside(k), "case_load: pack file `{k}` accepted");
                }
            }
        }
    }
    for s in &body.steps {
        if let crate::suites::hcp::steps::Action::Probe(p) = &s.action {
            let rel = p
                .strip_prefix("${tmp}/")
                .or_else(|| p.strip_prefix("${workdir}/"))
                .unwrap_or(if p.starts_with("${report") && !p.contains('/') {
                    "report"
                } else {
                    p
                });
            assert!(inside(rel), "case_load: probe `{p}` accepted");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// matcher

fn has_operator(v: &Value) -> bool {
    match v {
        Value::Object(m) if m.len() == 1 && m.keys().all(|k| k.starts_with('$')) => true,
        Value::Object(m) => m.values().any(has_operator),
        Value::Array(a) => a.iter().any(has_operator),
        _ => false,
    }
}

fn gen_expect(src: &mut impl Source, depth: usize) -> Value {
    let d = depth.saturating_sub(1);
    match src.weighted(&[20, 15, 10, if depth == 0 { 0 } else { 55 }]) {
        0 => any_json(src, 0),
        1 => {
            let mut m = Map::new();
            for _ in 0..src.below(3) {
                m.insert(
                    src.pick(&["ok", "error", "a", "verbs"]).to_string(),
                    gen_expect(src, d),
                );
            }
            Value::Object(m)
        }
        2 => Value::Array((0..src.below(3)).map(|_| gen_expect(src, d)).collect()),
        _ => {
            let mut ops: Vec<&str> = matcher::OPERATORS.to_vec();
            ops.push("$regexp");
            let op = *src.pick(&ops);
            let arg = match op {
                "$regex" => json!(src
                    .pick(&["^de", "(", "(?i)confirm", "\\S", "[", "é+"])
                    .to_string()),
                "$type" => match src.below(3) {
                    0 => json!(src
                        .pick(&["string", "integer", "number", "object", "null", "x"])
                        .to_string()),
                    1 => json!(["string", "null"]),
                    _ => any_json(src, 1),
                },
                "$absent" | "$present" => {
                    if src.chance(80) {
                        json!(true)
                    } else {
                        any_json(src, 1)
                    }
                }
                "$anyOf" | "$all" | "$contains" => {
                    Value::Array((0..src.below(3)).map(|_| gen_expect(src, d)).collect())
                }
                "$not" | "$each" | "$deep" => gen_expect(src, d),
                "$count" if src.chance(80) => json!([src.below(3), gen_expect(src, d)]),
                "$len" => {
                    if src.chance(80) {
                        json!(src.below(4))
                    } else {
                        any_json(src, 1)
                    }
                }
                "$noText" | "$hasText" => json!(weird_string(src)),
                "$denial" => {
                    let mut classes: Vec<&String> = denials().classes.keys().collect();
                    let nope = "nope".to_string();
                    classes.push(&nope);
                    json!(src.pick(&classes).to_string())
                }
                _ if src.chance(50) => {
                    Value::Array((0..src.below(3)).map(|_| gen_expect(src, d)).collect())
                }
                _ => gen_expect(src, d),
            };
            json!({ op: arg })
        }
    }
}

/// Matcher expressions × actual values: validation and matching never panic, matching is
/// deterministic, `$not $not e` and `$anyOf [e]` match exactly when `e` does, a plain value
/// matches itself and `$exact` of a value matches it.
pub fn matcher(data: &[u8]) {
    let (e, a) = if is_raw(data) {
        match serde_json::from_slice::<Value>(data) {
            Ok(Value::Array(mut pair)) if pair.len() == 2 => {
                let a = pair.pop().unwrap_or_default();
                (pair.pop().unwrap_or_default(), a)
            }
            Ok(v) => (v.clone(), v),
            Err(_) => return,
        }
    } else {
        let mut u = Unstructured::new(data);
        let mut src = Bytes(&mut u);
        let e = gen_expect(&mut src, 3);
        let a = any_json(&mut src, 3);
        (e, a)
    };
    let _ = matcher::validate(&e, denials());
    // The reference's words, compiled once for every input.
    static CLAIMS: OnceLock<matcher::Claims> = OnceLock::new();
    let d = CLAIMS.get_or_init(|| matcher::Claims {
        denials: Some(matcher::WordMap::new(
            &crate::suites::hcp::runtime::denial_map(),
        )),
        ..Default::default()
    });
    let first = matcher::check(&e, &a, d);
    assert_eq!(
        first,
        matcher::check(&e, &a, d),
        "matcher: not deterministic"
    );
    let ok = first.is_ok();
    assert_eq!(
        matcher::check(&json!({"$not": {"$not": e}}), &a, d).is_ok(),
        ok,
        "matcher: $not $not e differs from e for {e} on {a}"
    );
    assert_eq!(
        matcher::check(&json!({"$anyOf": [e]}), &a, d).is_ok(),
        ok,
        "matcher: $anyOf [e] differs from e for {e} on {a}"
    );
    if !has_operator(&a) {
        assert!(
            matcher::check(&a, &a, d).is_ok(),
            "matcher: {a} does not match itself"
        );
    }
    assert!(
        matcher::check(&json!({"$exact": a}), &a, d).is_ok(),
        "matcher: $exact {a} does not match itself"
    );
}

// ---------------------------------------------------------------------------------------------
// shim_message

/// The shim's methods, for structure-aware message sequences.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Arbitrary)]
pub enum Method {
    Initialize,
    Create,
    Activate,
    Connect,
    Exec,
    Availability,
    Sense,
    ListPacks,
    SenseSink,
    Audit,
    Dispose,
    PackCheck,
    Shutdown,
    Unknown,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Create => "runtime.create",
            Method::Activate => "runtime.activate",
            Method::Connect => "runtime.connect",
            Method::Exec => "runtime.exec",
            Method::Availability => "runtime.availability",
            Method::Sense => "runtime.sense",
            Method::ListPacks => "runtime.listPacks",
            Method::SenseSink => "runtime.senseSink",
            Method::Audit => "runtime.audit",
            Method::Dispose => "runtime.dispose",
            Method::PackCheck => "pack.check",
            Method::Shutdown => "shutdown",
            Method::Unknown => "runtime.admin",
        }
    }
}

const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "runtime.create",
    "runtime.activate",
    "runtime.connect",
    "runtime.exec",
    "runtime.availability",
    "runtime.sense",
    "runtime.listPacks",
    "runtime.getPack",
    "runtime.skill",
    "runtime.cli",
    "runtime.senseSink",
    "runtime.audit",
    "runtime.setSense",
    "runtime.grants",
    "runtime.dispose",
    "pack.check",
    "shutdown",
];

/// The fixture packs as files: the embedded vectors' (no path of the build machine is in the
/// binary). Without them no pack directory resolves, and every such message names none.
fn packs_dir() -> PathBuf {
    crate::vectors::embedded_root()
        .map(|r| r.join("packs"))
        .unwrap_or_default()
}

/// Pack directories name fixture packs only, and no bin can be found: the target reads no
/// other file and spawns nothing, whatever the message says.
fn sanitize(method: &str, mut params: Value) -> Value {
    let fixture_dir = |v: &Value| -> Option<Value> {
        let name = Path::new(v.as_str()?).file_name()?.to_str()?.to_string();
        fixtures()
            .iter()
            .any(|f| f.name == name)
            .then(|| json!(packs_dir().join(name)))
    };
    match (method, &mut params) {
        ("runtime.create", Value::Object(m)) => {
            if let Some(Value::Array(dirs)) = m.get("packDirs") {
                let dirs: Vec<Value> = dirs.iter().filter_map(fixture_dir).collect();
                m.insert("packDirs".into(), Value::Array(dirs));
            }
            m.insert("path".into(), json!([]));
            m.insert("workdir".into(), json!(std::env::temp_dir()));
        }
        ("pack.check", Value::Object(m)) => {
            if let Some(d) = m.get("packDir") {
                let d = fixture_dir(d).unwrap_or_else(|| json!("/nonexistent/hcpspec-fuzz"));
                m.insert("packDir".into(), d);
            }
        }
        _ => {}
    }
    params
}

fn gen_params(src: &mut Bytes, method: Method, runtimes: u64) -> Value {
    let fx = fixtures();
    let f = src.pick(fx);
    let rt = json!(format!("rt-{}", src.below(runtimes as usize + 2)));
    let mut p = match method {
        Method::Initialize => json!({ "protocol": "hcpspec-shim/1" }),
        Method::Create => {
            let names: Vec<&str> = fx
                .iter()
                .filter(|_| src.chance(40))
                .map(|f| f.name.as_str())
                .collect();
            let used: Vec<&Fixture> = fx
                .iter()
                .filter(|f| names.contains(&f.name.as_str()))
                .collect();
            json!({
                "packDirs": names,
                "principal": { "id": "user_42", "kind": "human" },
                "tenant_id": "acme",
                "project_id": if src.chance(50) { json!("proj_1") } else { Value::Null },
                "grants": gen_grants(src, &used),
                "allowBins": ["hcpspec-probe"],
                "sense": { "enable": src.chance(50) },
                "environment": { "HCPSPEC_CANARY_TOKEN": "hcpspec-canary" },
            })
        }
        Method::Activate => json!({ "runtime_id": rt, "pack_ids": [f.pack_id()] }),
        Method::Connect | Method::Availability => {
            json!({ "runtime_id": rt, "pack_id": f.pack_id() })
        }
        Method::Exec => {
            let verbs = f.verbs();
            let verb = if verbs.is_empty() {
                "x".to_string()
            } else {
                src.pick(&verbs).clone()
            };
            let args = gen_args(src, Some(f), &verb);
            json!({ "runtime_id": rt, "pack_id": f.pack_id(), "verb_key": verb, "args": args })
        }
        Method::Sense => {
            let t = f
                .triggers()
                .first()
                .cloned()
                .unwrap_or_else(|| "fuzz.event".into());
            json!({ "runtime_id": rt, "pack_id": f.pack_id(), "trigger": t, "payload": any_json(src, 2) })
        }
        Method::PackCheck => json!({ "packDir": f.name }),
        Method::Shutdown => json!({}),
        _ => json!({ "runtime_id": rt }),
    };
    if src.chance(20) {
        let ps = pointers(&p);
        if !ps.is_empty() {
            let at = src.pick(&ps).clone();
            let value = match src.below(3) {
                0 => None,
                1 => Some(retype(src, p.pointer(&at).unwrap_or(&Value::Null))),
                _ => Some(Value::String(weird_string(src))),
            };
            let _ = set(&mut p, &at, value);
        }
    } else if src.chance(5) {
        p = any_json(src, 2);
    }
    p
}

/// JSON-RPC messages of the shim protocol, one JSON-RPC message or a batch (raw), or a
/// generated sequence of calls: `Session::dispatch` of the reference answers each with a
/// result or a JSON-RPC error, and never panics.
pub fn shim_message(data: &[u8]) {
    let messages: Vec<(String, Value)> = if is_raw(data) {
        let decode = |m: &Value| -> Option<(String, Value)> {
            let method = m.get("method")?.as_str()?.to_string();
            Some((method, m.get("params").cloned().unwrap_or(Value::Null)))
        };
        match serde_json::from_slice::<Value>(data) {
            Ok(Value::Array(batch)) => batch.iter().filter_map(decode).collect(),
            Ok(one) => decode(&one).into_iter().collect(),
            Err(_) => return, // not JSON: a transport refuses it before dispatch
        }
    } else {
        let mut u = Unstructured::new(data);
        let mut out = Vec::new();
        let mut creates = 0;
        let n = 1 + Bytes(&mut u).below(8);
        for i in 0..n {
            let method = if i == 0 && Bytes(&mut u).chance(70) {
                Method::Create
            } else {
                Method::arbitrary(&mut u).unwrap_or(Method::Exec)
            };
            if method == Method::Create {
                creates += 1;
            }
            let params = gen_params(&mut Bytes(&mut u), method, creates);
            out.push((method.name().to_string(), params));
        }
        out
    };
    let session =
        crate::suites::hcp::shim::session("reference").expect("the reference is embedded");
    for (method, params) in messages.into_iter().take(32) {
        let params = sanitize(&method, params);
        match session.dispatch(&method, params) {
            Ok(v) => {
                if method == "runtime.exec" {
                    let ok = v["ok"].as_bool();
                    assert!(
                        ok.is_some(),
                        "shim_message: an exec envelope without a boolean ok: {v}"
                    );
                    if ok == Some(false) {
                        assert!(
                            v["error"].as_str().is_some_and(|e| !e.trim().is_empty()),
                            "shim_message: a denial without a reason: {v}"
                        );
                    }
                }
            }
            Err(e) => {
                assert!(
                    (-32768..=-32000).contains(&e.code),
                    "shim_message: error code {} is not JSON-RPC's",
                    e.code
                );
                assert!(
                    !e.message.is_empty(),
                    "shim_message: an error without a message"
                );
                if !KNOWN_METHODS.contains(&method.as_str()) {
                    assert_eq!(
                        e.code,
                        crate::shim::METHOD_NOT_FOUND,
                        "shim_message: {method}: {e}"
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::Rng;

    #[test]
    fn every_target_runs_on_empty_and_short_inputs() {
        for t in TARGETS {
            for data in [
                &b""[..],
                b"\x01",
                b"{}",
                b"[]",
                b"\xff",
                b"\x07\x03\x09\x01\x02",
            ] {
                assert!(run(t, data));
            }
        }
    }

    #[test]
    fn generated_pack_inputs_hold_the_invariants() {
        let mut rng = Rng::new(11);
        for _ in 0..200 {
            let bytes: Vec<u8> = (0..64).map(|_| rng.next_u64() as u8 | 1).collect();
            let bytes: Vec<u8> = bytes
                .into_iter()
                .map(|b| if b == SPLIT { 1 } else { b })
                .collect();
            pack_load(&bytes);
            authorize(&bytes);
        }
    }

    /// The matcher target draws every operator of the one list, and its invariants hold on
    /// what it generates.
    #[test]
    fn generated_expectations_draw_every_operator() {
        fn ops(v: &Value, seen: &mut std::collections::BTreeSet<String>) {
            match v {
                Value::Object(m) => {
                    for (k, x) in m {
                        seen.insert(k.clone());
                        ops(x, seen);
                    }
                }
                Value::Array(a) => a.iter().for_each(|x| ops(x, seen)),
                _ => {}
            }
        }
        let mut rng = Rng::new(5);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..3000 {
            ops(&gen_expect(&mut rng, 3), &mut seen);
        }
        for op in matcher::OPERATORS {
            assert!(
                seen.contains(*op),
                "the matcher fuzz target never draws {op}"
            );
        }
        for _ in 0..300 {
            let bytes: Vec<u8> = (0..96).map(|_| rng.next_u64() as u8 | 1).collect();
            matcher(&bytes);
        }
    }

    /// Each authorisation mutant breaks an invariant of `check_authz` on some generated input.
    #[test]
    fn authz_invariants_catch_the_authz_mutants() {
        let mutants = [
            Mutant::DefaultAllow,
            Mutant::ReadWriteCollapsed,
            Mutant::GrantScopeIgnored,
            Mutant::UnknownCapabilityHonoured,
            Mutant::BrainWithoutProject,
            Mutant::NoConfirmGate,
            Mutant::ConfirmStringTrue,
        ];
        for m in mutants {
            let mut rng = Rng::new(1);
            let caught =
                (0..20_000).any(|_| check_authz(&AuthzInput::generate(&mut rng), Some(m)).is_err());
            assert!(caught, "{} is not caught", crate::knob::Knob::name(m));
        }
        let mut rng = Rng::new(2);
        for _ in 0..5_000 {
            let i = AuthzInput::generate(&mut rng);
            check_authz(&i, None).unwrap_or_else(|e| panic!("{e}: {i:#?}"));
        }
    }
}
