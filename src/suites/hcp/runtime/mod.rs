//! The embedded runtimes: `reference` (the spec's `reference-local`), `stub` (the
//! `proprietary-stub` shape) and the mutants, each one rule of the reference broken.
//!
//! The types here are the values of the shim protocol (`runtime.create` params, the exec
//! envelope, availability, audit, Sense): every adapter and every embedded runtime uses them.

pub mod adapter;
pub mod freedom;
pub mod mutant;
pub mod reference;
pub mod stub;
pub mod variant;

use crate::suites::hcp::pack::{Issue, Land, Operation};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// A refusal of the runtime, in its words: what an envelope's `error` says (a denial, an
/// adapter that would not run, a mint that failed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Denied(pub String);

impl From<String> for Denied {
    fn from(s: String) -> Denied {
        Denied(s)
    }
}

impl From<&str> for Denied {
    fn from(s: &str) -> Denied {
        Denied(s.to_string())
    }
}

impl From<Denied> for String {
    fn from(d: Denied) -> String {
        d.0
    }
}

/// `runtime.create` params: everything a runtime gets, with nothing else implicit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RuntimeConfig {
    #[serde(rename = "packDirs")]
    pub pack_dirs: Vec<PathBuf>,
    pub principal: Principal,
    #[serde(default)]
    pub tenant_id: Option<String>,
    #[serde(default)]
    pub project_id: Option<String>,
    /// `null` (or absent) means no grants at all: the runtime must still deny, never default-allow.
    #[serde(default)]
    pub grants: Option<Vec<Grant>>,
    /// Absent means the default posture, sandboxed. Only `false` opts in to `native-local`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<bool>,
    #[serde(rename = "allowBins", default)]
    pub allow_bins: Vec<String>,
    /// The per-runtime directory adapters are jailed to.
    pub workdir: PathBuf,
    /// Where wrap bins are looked up (the runtime's own bin search path; assumption).
    #[serde(default)]
    pub path: Vec<PathBuf>,
    /// Scripted hub outcomes per pack_id, consumed one per mint; absent = mint succeeds.
    #[serde(default)]
    pub hub: BTreeMap<String, Vec<MintOutcome>>,
    #[serde(default)]
    pub sense: SenseConfig,
    /// The environment the runtime itself runs in (planted canaries live here).
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
}

impl RuntimeConfig {
    pub fn sandboxed(&self) -> bool {
        self.sandbox != Some(false)
    }
    pub fn grants(&self) -> &[Grant] {
        self.grants.as_deref().unwrap_or(&[])
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Principal {
    pub id: String,
    pub kind: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub capability: String,
    pub pack_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb_keys: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MintOutcome {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SenseConfig {
    /// `sense.enable`; absent is the runtime's default (the reference's is off: Sense is
    /// opt-in, like every other capability; an assumption, and a runtime may decide otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecRequest {
    pub pack_id: String,
    pub verb_key: String,
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// A command line for the CLI face: the command's `command` string (`"ledger balance"`) and
/// the same args the JSON face takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CliRequest {
    pub command: String,
    #[serde(default)]
    pub args: Map<String, Value>,
}

/// The exec envelope the contract fixes: `{ ok, pack_id, verb_key, result?, error? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub ok: bool,
    pub pack_id: String,
    pub verb_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Envelope {
    /// The envelope of an exec's outcome: its result, or a denial carrying the error.
    pub fn of(req: &ExecRequest, outcome: Result<Value, String>) -> Self {
        match outcome {
            Ok(result) => Envelope {
                ok: true,
                pack_id: req.pack_id.clone(),
                verb_key: req.verb_key.clone(),
                result: Some(result),
                error: None,
            },
            Err(e) => Envelope::deny(req, e),
        }
    }

    pub fn deny(req: &ExecRequest, error: impl Into<String>) -> Self {
        Envelope {
            ok: false,
            pack_id: req.pack_id.clone(),
            verb_key: req.verb_key.clone(),
            result: None,
            error: Some(error.into()),
        }
    }
}

/// The answer to `activate` and `connect`, per pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackResult {
    pub ok: bool,
    pub pack_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PackResult {
    pub fn ok(pack_id: &str) -> Self {
        PackResult {
            ok: true,
            pack_id: pack_id.into(),
            binding: None,
            error: None,
        }
    }
    pub fn deny(pack_id: &str, error: impl Into<String>) -> Self {
        PackResult {
            ok: false,
            pack_id: pack_id.into(),
            binding: None,
            error: Some(error.into()),
        }
    }
}

/// What a minted Binding shows outside the runtime: never the token itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BindingInfo {
    pub mode: crate::suites::hcp::pack::BindingMode,
    pub hub: String,
    pub identity: String,
}

/// Availability of one pack, per command (contract point 9). Every false flag has a reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PackAvailability {
    pub pack_id: String,
    pub installed: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reasons: BTreeMap<String, String>,
    pub verbs: Vec<VerbAvailability>,
}

impl PackAvailability {
    pub fn not_installed(pack_id: &str) -> Self {
        PackAvailability {
            pack_id: pack_id.into(),
            installed: false,
            reasons: BTreeMap::from([(
                "installed".to_string(),
                format!("pack {pack_id} is not installed"),
            )]),
            verbs: vec![],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerbAvailability {
    pub verb_key: String,
    pub operation: Operation,
    pub land: Land,
    pub installed: bool,
    pub activated: bool,
    pub connected: bool,
    pub executable: bool,
    /// One entry per false flag, keyed by the flag's name (assumption: the spec says "every
    /// false carries a reason"; a map keeps several false flags apart).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reasons: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SenseEvent {
    pub pack_id: String,
    pub trigger: String,
    #[serde(default)]
    pub payload: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SenseReceipt {
    pub accepted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One audit record: the full attribution tuple of a write (contract point 8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub tenant_id: Option<String>,
    pub project_id: Option<String>,
    pub principal: Option<Principal>,
    pub pack_id: String,
    pub verb_key: String,
    /// The identity of the Binding the write ran under; null for a public pack or a denial.
    pub binding: Option<String>,
    /// `ok`, `denied` or `error`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The optional features both embedded runtimes claim in `initialize`.
pub const FEATURES: &[&str] = &[
    "sense",
    "sandbox",
    "binding:user",
    "binding:local",
    "binding:mothership",
];

/// What an embedded runtime tells `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    pub name: String,
    pub version: String,
    pub features: Vec<String>,
    /// The runtime's denial map: hcpspec class → a regex over its own denial texts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denials: Option<BTreeMap<String, String>>,
    /// The runtime's rule map: hcpspec rule name → a regex over its own lint rule names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<BTreeMap<String, String>>,
    /// `false`: a driver without `connect` (spec 000 § Drivers, "an optional `connect`"; issue 44).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<bool>,
}

/// The denial map of the reference and the stub, which give the same texts.
pub fn denial_map() -> BTreeMap<String, String> {
    [
        ("unknown-pack", r"^(dropped: )?unknown pack \S+$"),
        ("unknown-verb", r"^unknown verb \S+$"),
        ("no-policy", r"^no policy for \S+$"),
        ("not-activated", r"^denied: pack \S+ is not activated$"),
        (
            "no-grant",
            r"^denied: (no grant for pack|missing (verb\.exec\.(read|write)|pack\.connect) for) ",
        ),
        ("missing-read", r"^denied: missing verb\.exec\.read for "),
        ("missing-write", r"^denied: missing verb\.exec\.write for "),
        ("missing-connect", r"^denied: missing pack\.connect for "),
        (
            "elevation",
            r"^denied: mothership Binding requires binding\.elevate for ",
        ),
        (
            "brain-needs-project",
            r"^denied: privacy\.land brain requires project_id$",
        ),
        ("confirm", r"^confirm required$"),
        ("not-connected", r"^denied: pack \S+ is not connected$"),
        ("mint-failed", r"^denied: mint failed: "),
        (
            "bin-not-allowed",
            r"^denied: bin \S+ is not on the allow-list$",
        ),
        ("unknown-bin", r"^denied: unknown (bin|in-process adapter) "),
        ("invalid-args", r"^invalid args: "),
        ("sense-disabled", r"^dropped: sense\.enable is off$"),
        ("undeclared-trigger", r"^dropped: undeclared trigger\b"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// The rule map of the runtimes whose lint is `pack::lint`: hcpspec's names are theirs.
pub fn rule_map() -> BTreeMap<String, String> {
    crate::suites::hcp::pack::RULES
        .iter()
        .map(|r| (r.to_string(), format!("^{r}$")))
        .collect()
}

/// One live runtime instance: the surface harnesses see (activate, connect, exec, Sense) plus
/// the read-outs a conformance suite needs (availability, audit, sink).
pub trait Runtime: Send {
    fn list_packs(&self) -> Vec<Value>;
    /// The driver's `getPack`: the installed pack `pack_id` as `list_packs` lists it, or None
    /// when no such pack is installed (the spec's `if (!pack)`).
    fn get_pack(&self, pack_id: &str) -> Option<Value> {
        self.list_packs()
            .into_iter()
            .find(|p| p.get("pack_id").and_then(Value::as_str) == Some(pack_id))
    }
    /// The Skill a harness sees for `pack_id`: its `HARNESS.md` as loaded; None when no such
    /// pack is installed.
    fn skill(&self, pack_id: &str) -> Option<String>;
    /// The CLI face: run the command whose `command` (its CLI twin) is `req.command`, as the JSON
    /// face runs its `verb_key`. None when the runtime exposes no CLI face.
    fn cli(&mut self, _req: &CliRequest) -> Option<Envelope> {
        None
    }
    fn activate(&mut self, pack_ids: &[String]) -> Vec<PackResult>;
    fn connect(&mut self, pack_id: &str) -> PackResult;
    fn exec(&mut self, req: &ExecRequest) -> Envelope;
    /// `exec` as the driver answers it: the envelope, or an exception thrown instead (its
    /// message), which a shim answers as a JSON-RPC error. A conforming runtime never throws.
    fn exec_or_throw(&mut self, req: &ExecRequest) -> Result<Envelope, String> {
        Ok(self.exec(req))
    }
    fn availability(&self, pack_id: &str) -> PackAvailability;
    /// `runtime.setSense` (issue 44): `sense.enable` switched after create. None: the runtime
    /// cannot (its shim answers -32601).
    fn set_sense(&mut self, _sense: &SenseConfig) -> Option<()> {
        None
    }
    /// `runtime.grants` (issue 44): the grants the runtime holds. None: it cannot tell (-32601).
    fn grants(&self) -> Option<Vec<Grant>> {
        None
    }
    fn sense(&mut self, event: &SenseEvent) -> SenseReceipt;
    fn sense_sink(&self) -> Vec<SenseEvent>;
    fn audit(&self) -> Vec<AuditRecord>;
}

/// Makes runtime instances; an install that fails returns every lint issue.
pub trait Factory: Send + Sync {
    fn info(&self) -> RuntimeInfo;
    fn create(&self, config: RuntimeConfig) -> Result<Box<dyn Runtime>, Vec<Issue>>;
    /// The answer to `method` as this runtime's shim sends it (the freedom variant decides what
    /// the spec leaves free here: order, words, extra members, open shapes, time).
    fn dress(&self, _method: &str, _answer: &mut Value) {}
    /// The `runtime_id` of the `n`th runtime its shim creates.
    fn runtime_id(&self, n: u64) -> String {
        format!("rt-{n}")
    }
}

/// The embedded runtimes by name: `reference`, `stub`, `mutant:NAME`, `variant:NAME` and
/// `variant:all` (every variant's choice at once).
pub fn embedded(name: &str) -> Option<Arc<dyn Factory>> {
    match name {
        "stub" => Some(Arc::new(stub::StubFactory)),
        "variant:all" => Some(Arc::new(reference::ReferenceFactory {
            knobs: reference::Knobs::every_variant(),
        })),
        _ => Some(Arc::new(reference::ReferenceFactory {
            knobs: reference::Knobs::named(name)?,
        })),
    }
}
