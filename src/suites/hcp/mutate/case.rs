//! The fuzz input: a structured model of one case (packs as fixture + edits, a Principal,
//! grants, hub script, steps) that renders to an ordinary hcpspec [`Case`], so it runs through
//! `run::run_case` like any other case and a finding is written out as a case file.

use super::pack::{gen_edits, Fixture, PackEdit, PackState};
use crate::case::{Case, Level};
use crate::mutate::{any_json, name, weird_string, Source};
use crate::suites::hcp::runtime::reference::authz::{
    ACTIVATE, CONNECT, ELEVATE, EXEC_READ, EXEC_WRITE,
};
use crate::suites::hcp::runtime::{Grant, MintOutcome, Principal};
use crate::suites::hcp::steps::{Action, Body, OneOrMany, PackRef, Setup, Step};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The planted credential: a runtime whose adapters or answers show it leaked its environment.
pub const CANARY_KEY: &str = "HCPSPEC_CANARY_TOKEN";

/// Matches whatever a step observes: the step is run and observed, the oracles judge it.
pub fn observe_only() -> Value {
    json!({ "$type": ["object", "array", "string", "null"] })
}

#[cfg(test)]
mod pretty_tests {
    #[test]
    fn pretty_is_the_same_json() {
        let v = serde_json::json!({"a": [1, {"b": "x"}], "c": {}, "d": {"e": [true, null]}, "long": vec!["0123456789"; 12]});
        let text = super::pretty(&v);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
        assert!(text.contains("\"a\": [1, { \"b\": \"x\" }]"), "{text}");
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PackSpec {
    /// The fixture's directory name under `vectors/packs/`.
    pub fixture: String,
    pub edits: Vec<PackEdit>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FStep {
    Activate(Vec<String>),
    Connect(String),
    /// An exec; with `report`, its args carry `"report": "${report.NAME}"` and a probe step
    /// follows it.
    Exec {
        pack_id: String,
        verb_key: String,
        args: Map<String, Value>,
        report: Option<String>,
    },
    Availability(String),
    Sense {
        pack_id: String,
        trigger: String,
        payload: Value,
    },
    Audit,
    /// The grants the runtime holds (`runtime.grants`).
    Grants,
}

/// Where each step of the rendered case comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Install,
    Step(usize),
    /// The probe read after exec step `usize`.
    Probe(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct FuzzCase {
    /// The generator's seed for this case (for the finding's note).
    pub seed: u64,
    pub packs: Vec<PackSpec>,
    pub principal: Principal,
    pub tenant_id: Option<String>,
    pub project_id: Option<String>,
    pub grants: Option<Vec<Grant>>,
    pub sandbox: Option<bool>,
    pub allow_bins: Vec<String>,
    pub hub: BTreeMap<String, Vec<MintOutcome>>,
    pub sense_enable: bool,
    /// With Sense off, `sense: {enable: false}` is said rather than left out: only a switch
    /// turned off is one the spec fixes ("`sense.enable` off → drop"); off by default is the
    /// runtime's choice (vectors/contract/ASSUMPTIONS.md).
    pub sense_off_said: bool,
    /// The value of the planted `HCPSPEC_CANARY_TOKEN`.
    pub canary: String,
    pub steps: Vec<FStep>,
}

impl FuzzCase {
    /// The seed values every field is restored towards when a finding is shrunk.
    pub fn plain(seed: u64) -> FuzzCase {
        FuzzCase {
            seed,
            packs: vec![],
            principal: Principal {
                id: "user_42".into(),
                kind: "human".into(),
            },
            tenant_id: Some("acme".into()),
            project_id: None,
            grants: Some(vec![]),
            sandbox: None,
            allow_bins: vec!["hcpspec-probe".into()],
            hub: BTreeMap::new(),
            sense_enable: false,
            sense_off_said: false,
            canary: format!("hcpspec-canary-{seed:016x}"),
            steps: vec![],
        }
    }

    pub fn layout(&self) -> Vec<Slot> {
        let mut out = vec![Slot::Install];
        for (i, s) in self.steps.iter().enumerate() {
            out.push(Slot::Step(i));
            if matches!(
                s,
                FStep::Exec {
                    report: Some(_),
                    ..
                }
            ) {
                out.push(Slot::Probe(i));
            }
        }
        out
    }

    /// The pack states after their edits, with the fixture each starts from.
    pub fn states<'f>(&self, fixtures: &'f [Fixture]) -> Vec<(&'f Fixture, PackState)> {
        self.packs
            .iter()
            .filter_map(|p| {
                let f = fixtures.iter().find(|f| f.name == p.fixture)?;
                Some((f, PackState::with(f, &p.edits)))
            })
            .collect()
    }

    /// The exec's args as the runtime gets them (before `${…}` substitution).
    pub fn exec_args(args: &Map<String, Value>, report: &Option<String>) -> Map<String, Value> {
        let mut a = args.clone();
        if let Some(r) = report {
            a.insert("report".into(), json!(format!("${{report.{r}}}")));
        }
        a
    }

    /// Render as a case. Each rendered step's expectation is `expects[slot index]`, or
    /// [`observe_only`].
    pub fn to_case(
        &self,
        fixtures: &[Fixture],
        meta: CaseMeta,
        expects: &BTreeMap<usize, Value>,
    ) -> Case {
        let mut packs = Vec::new();
        for (i, p) in self.packs.iter().enumerate() {
            let Some(f) = fixtures.iter().find(|f| f.name == p.fixture) else {
                continue;
            };
            let twice = self.packs.iter().filter(|q| q.fixture == p.fixture).count() > 1;
            if p.edits.is_empty() && !twice {
                packs.push(PackRef::Fixture(f.name.clone()));
            } else {
                let state = PackState::with(f, &p.edits);
                let name = twice.then(|| format!("p{i}-{}", f.name));
                packs.push(PackRef::Inline(state.inline(f, &p.edits, name)));
            }
        }
        // The case runner's defaults are left out (vectors/README.md, Setup).
        let plain = FuzzCase::plain(self.seed);
        let mut params = Map::new();
        if self.principal != plain.principal {
            params.insert("principal".into(), json!(self.principal));
        }
        if self.tenant_id != plain.tenant_id {
            params.insert("tenant_id".into(), json!(self.tenant_id));
        }
        if self.project_id.is_some() {
            params.insert("project_id".into(), json!(self.project_id));
        }
        params.insert("grants".into(), json!(self.grants));
        if let Some(s) = self.sandbox {
            params.insert("sandbox".into(), json!(s));
        }
        if self.allow_bins != plain.allow_bins {
            params.insert("allowBins".into(), json!(self.allow_bins));
        }
        if !self.hub.is_empty() {
            params.insert("hub".into(), json!(self.hub));
        }
        if self.sense_enable || self.sense_off_said {
            params.insert("sense".into(), json!({ "enable": self.sense_enable }));
        }
        params.insert("environment".into(), json!({ CANARY_KEY: self.canary }));

        let mut steps = Vec::new();
        for (k, slot) in self.layout().into_iter().enumerate() {
            let action = match slot {
                Slot::Install => Action::Install(Map::new()),
                Slot::Probe(i) => match &self.steps[i] {
                    FStep::Exec {
                        report: Some(r), ..
                    } => Action::Probe(format!("${{report.{r}}}")),
                    _ => continue,
                },
                Slot::Step(i) => match &self.steps[i] {
                    FStep::Activate(ids) => Action::Activate(OneOrMany::Many(ids.clone())),
                    FStep::Connect(p) => Action::Connect(p.clone()),
                    FStep::Exec {
                        pack_id,
                        verb_key,
                        args,
                        report,
                    } => Action::Exec(json!({
                        "pack_id": pack_id,
                        "verb_key": verb_key,
                        "args": FuzzCase::exec_args(args, report),
                    })),
                    FStep::Availability(p) => Action::Availability(p.clone()),
                    FStep::Sense {
                        pack_id,
                        trigger,
                        payload,
                    } => Action::Sense(json!({
                        "pack_id": pack_id, "trigger": trigger, "payload": payload,
                    })),
                    FStep::Audit => Action::Audit(Map::new()),
                    FStep::Grants => Action::Grants(Map::new()),
                },
            };
            let (expect, note) = match expects.get(&k) {
                Some(e) => (e.clone(), None),
                None => (observe_only(), Some("observed, not judged".to_string())),
            };
            steps.push(Step {
                action,
                expect: Some(expect),
                note: note.filter(|_| meta.notes),
            });
        }
        Case {
            id: meta.id,
            title: meta.title,
            section: meta.section,
            level: Level::MUST,
            spec: meta.spec,
            assumption: meta.assumption,
            requires: vec![],
            killed_by: vec![],
            fixed: Default::default(),
            body: Body {
                setup: Setup {
                    packs,
                    params,
                    ..Setup::default()
                },
                steps,
            }
            .into_members(),
            suite: "found".into(),
            group: "found".into(),
            file: meta.file,
            parsed: Default::default(),
            source: Default::default(),
        }
    }
}

/// The parts of a rendered case that do not come from the fuzz input.
#[derive(Debug, Clone)]
pub struct CaseMeta {
    pub id: String,
    pub title: String,
    pub section: String,
    pub spec: String,
    pub assumption: Option<String>,
    pub file: PathBuf,
    /// Note the steps that are observed only.
    pub notes: bool,
}

impl CaseMeta {
    pub fn explore(index: u64) -> CaseMeta {
        CaseMeta {
            id: format!("fuzz-{index}"),
            title: "fuzz input".into(),
            section: "3".into(),
            spec: "000_15ba0494eb8a99bb.txt § The contract (\"any step may deny\")".into(),
            assumption: None,
            file: PathBuf::from(format!("fuzz-{index}.json")),
            notes: false,
        }
    }
}

/// A case as a file: the JSON of a [`Case`] without the fields a file does not carry. Its body
/// is written as it is (an inline pack's empty fields are left out when it is made,
/// [`InlinePack`](crate::suites::hcp::steps::InlinePack)): a loaded case written again loads as
/// the same case (dropping a loaded `"patch": {}` here broke that: `fuzz/regressions/case_load/`).
pub fn case_json(case: &Case) -> Value {
    serde_json::to_value(case).unwrap_or(Value::Null)
}

/// JSON text the way the hand-written cases are laid out: a value that fits on a line stays on
/// one line, anything larger is indented by two.
pub fn pretty(v: &Value) -> String {
    fn flat(v: &Value) -> String {
        match v {
            Value::Array(a) if !a.is_empty() => {
                format!("[{}]", a.iter().map(flat).collect::<Vec<_>>().join(", "))
            }
            Value::Object(m) if !m.is_empty() => {
                let items: Vec<String> = m
                    .iter()
                    .map(|(k, x)| format!("{}: {}", Value::String(k.clone()), flat(x)))
                    .collect();
                format!("{{ {} }}", items.join(", "))
            }
            other => other.to_string(),
        }
    }
    fn write(v: &Value, indent: usize, out: &mut String) {
        let one = flat(v);
        let pad = "  ".repeat(indent + 1);
        if indent > 0 && one.len() + indent * 2 <= 100 || one.len() <= 2 {
            out.push_str(&one);
            return;
        }
        match v {
            Value::Object(m) => {
                out.push_str("{\n");
                for (i, (k, x)) in m.iter().enumerate() {
                    out.push_str(&format!("{pad}{}: ", Value::String(k.clone())));
                    write(x, indent + 1, out);
                    out.push_str(if i + 1 < m.len() { ",\n" } else { "\n" });
                }
                out.push_str(&"  ".repeat(indent));
                out.push('}');
            }
            Value::Array(a) => {
                out.push_str("[\n");
                for (i, x) in a.iter().enumerate() {
                    out.push_str(&pad);
                    write(x, indent + 1, out);
                    out.push_str(if i + 1 < a.len() { ",\n" } else { "\n" });
                }
                out.push_str(&"  ".repeat(indent));
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, 0, &mut out);
    out.push('\n');
    out
}

const WEIRD_CAPS: &[&str] = &[
    "pack.admin",
    "verb.exec.*",
    "*",
    "verb.exec.Write",
    "admin",
    "binding.elevate.all",
    "pack.install",
];

/// Grants for a set of packs: none at all, empty, a complete set with a few perturbed, or a
/// random list (unknown capabilities, wildcards, empty and foreign scopes included).
pub fn gen_grants(src: &mut impl Source, packs: &[&Fixture]) -> Option<Vec<Grant>> {
    let ids: Vec<String> = packs.iter().map(|f| f.pack_id().to_string()).collect();
    let grant = |capability: &str, pack_id: &str| Grant {
        capability: capability.into(),
        pack_id: pack_id.into(),
        verb_keys: None,
        tenant_id: None,
    };
    let mut out = Vec::new();
    match src.weighted(&[6, 4, 50, 40]) {
        0 => return None,
        1 => return Some(out),
        2 => {
            for f in packs {
                let id = f.pack_id();
                out.push(grant(EXEC_READ, id));
                out.push(grant(EXEC_WRITE, id));
                if !f.public() {
                    out.push(grant(CONNECT, id));
                }
                if f.binding_mode() == Some("mothership") && src.chance(70) {
                    out.push(grant(ELEVATE, id));
                }
            }
            let mut kept = Vec::new();
            for mut g in out {
                if src.chance(15) {
                    continue;
                }
                perturb(src, &mut g, packs);
                kept.push(g);
            }
            out = kept;
        }
        _ => {
            for _ in 0..1 + src.below(6) {
                let pack_id = if ids.is_empty() || src.chance(12) {
                    name(src, &["*", "Ledger", "ledger ", "nope"])
                } else {
                    src.pick(&ids).clone()
                };
                let cap = match src.weighted(&[25, 25, 20, 10, 10, 10]) {
                    0 => EXEC_READ.to_string(),
                    1 => EXEC_WRITE.to_string(),
                    2 => CONNECT.to_string(),
                    3 => ELEVATE.to_string(),
                    4 => ACTIVATE.to_string(),
                    _ => src.pick(WEIRD_CAPS).to_string(),
                };
                let mut g = grant(&cap, &pack_id);
                perturb(src, &mut g, packs);
                out.push(g);
            }
        }
    }
    Some(out)
}

fn perturb(src: &mut impl Source, g: &mut Grant, packs: &[&Fixture]) {
    let verbs: Vec<String> = packs
        .iter()
        .filter(|f| f.pack_id() == g.pack_id)
        .flat_map(|f| f.verbs())
        .collect();
    match src.weighted(&[70, 5, 15, 4, 6]) {
        0 => {}
        1 => g.verb_keys = Some(vec![]),
        2 => {
            let mut keys: Vec<String> = verbs.iter().filter(|_| src.chance(50)).cloned().collect();
            if src.chance(20) {
                keys.push(weird_string(src));
            }
            g.verb_keys = Some(keys);
        }
        3 => g.verb_keys = Some(vec!["*".into()]),
        _ => g.capability = src.pick(WEIRD_CAPS).to_string(),
    }
    match src.weighted(&[82, 10, 8]) {
        0 => {}
        1 => g.tenant_id = Some("acme".into()),
        _ => g.tenant_id = Some(name(src, &["other", "ACME", ""])),
    }
}

const CONFIRMS: &[&str] = &[
    "false",
    "\"true\"",
    "1",
    "\"yes\"",
    "{\"confirm\": true}",
    "[true]",
    "null",
    "\"True\"",
    "1.0",
];

fn confirm_value(src: &mut impl Source) -> Value {
    if src.chance(40) {
        json!(true)
    } else {
        let text: &&str = src.pick(CONFIRMS);
        serde_json::from_str(text).unwrap_or(Value::Null)
    }
}

/// Exec args for a verb of a fixture: its declared args (now and then missing, retyped or
/// weird), the gate args (`confirm` as true, "true", 1, nested…; `apply`), and extras.
pub fn gen_args(src: &mut impl Source, f: Option<&Fixture>, verb: &str) -> Map<String, Value> {
    let mut args = Map::new();
    if let Some(f) = f {
        for (name, ty, required) in f.args(verb) {
            if (required && src.chance(7)) || (!required && src.chance(50)) {
                continue;
            }
            let v = match (ty.as_str(), src.chance(70)) {
                ("number" | "integer", true) => json!(10),
                ("string", true) => json!(src.pick(&["A", "hello", "B"]).to_string()),
                ("string", false) => json!(weird_string(src)),
                _ => any_json(src, 2),
            };
            args.insert(name, v);
        }
        if f.confirm(verb) {
            match src.weighted(&[45, 25, 30]) {
                0 => {
                    args.insert("confirm".into(), json!(true));
                }
                1 => {}
                _ => {
                    args.insert("confirm".into(), confirm_value(src));
                }
            }
        } else if src.chance(10) {
            args.insert("confirm".into(), confirm_value(src));
        }
    }
    if src.chance(8) {
        args.insert("apply".into(), confirm_value(src));
    }
    if src.chance(10) {
        let k = name(src, &["exit", "report2", "--", "confirm ", "text"]);
        args.insert(k, any_json(src, 1));
    }
    args
}

/// Fixture weights: the packs with more rules to break come up more often.
fn weight(name: &str) -> usize {
    match name {
        "ledger" => 30,
        "vault" | "notes" | "passthru" => 15,
        "transit" => 12,
        _ => 10,
    }
}

/// One fuzz case.
pub fn generate(src: &mut impl Source, fixtures: &[Fixture], seed: u64) -> FuzzCase {
    let mut c = FuzzCase::plain(seed);
    if fixtures.is_empty() {
        c.steps.push(FStep::Audit);
        return c;
    }
    let weights: Vec<usize> = fixtures.iter().map(|f| weight(&f.name)).collect();
    let n = 1 + src.weighted(&[60, 35, 5]);
    for _ in 0..n {
        let f = &fixtures[src.weighted(&weights)];
        let edits = if src.chance(25) {
            gen_edits(src, f, 3, fixtures)
        } else {
            vec![]
        };
        c.packs.push(PackSpec {
            fixture: f.name.clone(),
            edits,
        });
    }
    let used: Vec<&Fixture> = c
        .packs
        .iter()
        .filter_map(|p| fixtures.iter().find(|f| f.name == p.fixture))
        .collect();
    let mut ids: Vec<String> = used.iter().map(|f| f.pack_id().to_string()).collect();
    ids.dedup();

    gen_setup(src, &mut c, &used);
    gen_steps(src, &mut c, &used, &ids);
    // Drawn last, so every case keeps the steps it had before this step existed; read last, so
    // a runtime without `runtime.grants` (unimplemented) loses no other step of the case.
    if src.chance(GRANTS_READ) {
        c.steps.push(FStep::Grants);
    }
    c
}

/// The percentage of cases that end by reading back the grants the runtime holds.
const GRANTS_READ: usize = 30;

/// The runtime a fuzz case creates: its Principal, tenant, project, grants, sandbox, allow-list,
/// hub script and Sense switch.
fn gen_setup(src: &mut impl Source, c: &mut FuzzCase, used: &[&Fixture]) {
    if src.chance(15) {
        c.principal = Principal {
            id: name(src, &["user_42", "admin", "root"]),
            kind: name(src, &["human", "agent", "service"]),
        };
    }
    c.tenant_id = match src.weighted(&[80, 10, 10]) {
        0 => Some("acme".into()),
        1 => None,
        _ => Some(name(src, &["other"])),
    };
    c.project_id = match src.weighted(&[50, 40, 10]) {
        0 => None,
        1 => Some("proj_1".into()),
        _ => Some(weird_string(src)),
    };
    c.grants = gen_grants(src, used);
    c.sandbox = match src.weighted(&[90, 5, 5]) {
        0 => None,
        1 => Some(true),
        _ => Some(false),
    };
    c.allow_bins = match src.weighted(&[85, 5, 5, 5]) {
        0 => vec!["hcpspec-probe".into()],
        1 => vec![],
        2 => vec!["hcpspec-probe".into(), "other-probe".into()],
        _ => vec![name(src, &["../hcpspec-probe", "*", "HCPSPEC-PROBE"])],
    };
    let bound: Vec<&&Fixture> = used.iter().filter(|f| !f.public()).collect();
    if !bound.is_empty() && src.chance(15) {
        let id = src.pick(&bound).pack_id().to_string();
        let failed = MintOutcome {
            ok: false,
            token: None,
            identity: None,
            error: Some("expired".into()),
        };
        let odd = MintOutcome {
            ok: true,
            token: Some(weird_string(src)),
            identity: Some(weird_string(src)),
            error: None,
        };
        let script = match src.below(3) {
            0 => vec![odd],
            1 => vec![failed.clone(), failed],
            _ => vec![failed],
        };
        c.hub.insert(id, script);
    }
    c.sense_enable = src.chance(35);
    // From the case's seed, not a draw: every other field stays as it was generated.
    c.sense_off_said = !c.sense_enable && c.seed % 2 == 1;
}

/// The steps of a fuzz case: activation, then connects, then the actions, then the audit log.
fn gen_steps(src: &mut impl Source, c: &mut FuzzCase, used: &[&Fixture], ids: &[String]) {
    match src.weighted(&[80, 10, 10]) {
        0 => {
            let mut all = ids.to_vec();
            if src.chance(5) {
                all.push(name(src, &["nope"]));
            }
            c.steps.push(FStep::Activate(all));
        }
        1 => {
            let some: Vec<String> = ids.iter().filter(|_| src.chance(50)).cloned().collect();
            if !some.is_empty() {
                c.steps.push(FStep::Activate(some));
            }
        }
        _ => {}
    }
    for f in used {
        if (!f.public() && src.chance(75)) || src.chance(8) {
            c.steps.push(FStep::Connect(f.pack_id().to_string()));
        }
    }
    if src.chance(5) {
        c.steps.push(FStep::Connect(name(src, &["nope"])));
    }
    let mut execs = 0;
    for _ in 0..1 + src.below(4) {
        let f = (!src.chance(4)).then(|| *src.pick(used));
        match src.weighted(&[65, 15, 20]) {
            0 => {
                let pack_id = f.map_or_else(|| name(src, &["nope"]), |f| f.pack_id().to_string());
                let verbs = f.map(|f| f.verbs()).unwrap_or_default();
                let verb_key = if verbs.is_empty() || src.chance(5) {
                    name(src, &["nope", "transfer"])
                } else {
                    src.pick(&verbs).clone()
                };
                let args = gen_args(src, f, &verb_key);
                execs += 1;
                let report = (!src.chance(5)).then(|| format!("e{execs}"));
                c.steps.push(FStep::Exec {
                    pack_id,
                    verb_key,
                    args,
                    report,
                });
            }
            1 => c.steps.push(FStep::Availability(
                f.map_or_else(|| name(src, &["nope"]), |f| f.pack_id().to_string()),
            )),
            _ => {
                let declared = f.map(|f| f.triggers()).unwrap_or_default();
                let trigger = if !declared.is_empty() && src.chance(60) {
                    src.pick(&declared).clone()
                } else {
                    name(src, &["balance.high", "fuzz.event", "transfer.settled"])
                };
                c.steps.push(FStep::Sense {
                    pack_id: f.map_or_else(|| name(src, &["nope"]), |f| f.pack_id().to_string()),
                    trigger,
                    payload: any_json(src, 2),
                });
            }
        }
    }
    if src.chance(10) && c.steps.len() >= 2 {
        let i = src.below(c.steps.len() - 1);
        c.steps.swap(i, i + 1);
    }
    c.steps.push(FStep::Audit);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutate::Rng;
    use crate::suites::hcp::mutate::pack::embedded_fixtures;

    #[test]
    fn generated_cases_render_to_valid_case_files() {
        let fx = embedded_fixtures();
        let denials = crate::suites::hcp::fuzz::targets::denials();
        for i in 0..200 {
            let mut rng = Rng::for_case(9, i);
            let c = generate(&mut rng, &fx, i);
            let case = c.to_case(&fx, CaseMeta::explore(i), &BTreeMap::new());
            let body = Body::of(&case).unwrap();
            assert_eq!(body.steps.len(), c.layout().len());
            let v = case_json(&case);
            let violations = crate::schema::violations(crate::schema::case(), &v);
            assert!(violations.is_empty(), "{violations:?}\n{v:#}");
            for s in &body.steps {
                crate::case::matcher::validate(s.expect.as_ref().unwrap(), denials).unwrap();
            }
        }
    }

    #[test]
    fn generation_is_deterministic() {
        let fx = embedded_fixtures();
        let a = generate(&mut Rng::for_case(5, 17), &fx, 17);
        let b = generate(&mut Rng::for_case(5, 17), &fx, 17);
        assert_eq!(a, b);
    }
}
