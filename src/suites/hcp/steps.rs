//! The HCP suite's step vocabulary: what a case's `setup` and `steps` say
//! (vectors/README.md, `vectors/schemas/case.schema.json`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A contract case's body: the packs and Principal it sets up, and its steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Body {
    #[serde(default)]
    pub setup: Setup,
    #[serde(default)]
    pub steps: Vec<Step>,
}

impl Body {
    /// The body of `case` (validated when the case was loaded).
    pub fn of(case: &crate::case::Case) -> Result<Body, crate::error::BadInput> {
        serde_json::from_value(Value::Object(case.body.clone()))
            .map_err(|e| crate::error::BadInput(format!("{}: {e}", case.file.display())))
    }

    /// As a case's body members.
    pub fn into_members(self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    #[serde(default)]
    pub packs: Vec<PackRef>,
    /// Symlinks hcpspec makes before `runtime.create`, path → target (each under `${workdir}/`
    /// or `${tmp}/`): a jail whose contents lead outside (issue 44). Never sent to the runtime.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub links: Map<String, Value>,
    /// Everything else goes to `runtime.create` as it is (principal, grants, sandbox …).
    #[serde(flatten)]
    pub params: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PackRef {
    Fixture(String),
    Inline(InlinePack),
}

/// Written without its empty fields: the case schema wants them absent, not null.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InlinePack {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub files: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub patch: Map<String, Value>,
}

/// One step: an action on the runtime, and what it must observe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    #[serde(flatten)]
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    Install(Map<String, Value>),
    Activate(OneOrMany),
    Connect(String),
    Exec(Value),
    Availability(String),
    ListPacks(Map<String, Value>),
    /// The driver's `getPack` for one pack_id.
    GetPack(String),
    /// The Skill a harness sees for one pack_id.
    Skill(String),
    /// A command through the CLI face: `{command, args}`.
    Cli(Value),
    Sense(Value),
    Sink(Map<String, Value>),
    Audit(Map<String, Value>),
    Probe(String),
    /// hcpspec's own check that the runtime rewrote none of the case's pack files.
    PacksUnchanged(Map<String, Value>),
    /// hcpspec waits this many milliseconds and calls nothing: time passes with no action,
    /// so that what a runtime does on its own (a timer) shows in the next step.
    Wait(u64),
    /// Issue 44: `sense.enable` switched after create, `{enable}` (`runtime.setSense`).
    SetSense(Value),
    /// Issue 44: the grants the runtime holds (`runtime.grants`).
    Grants(Map<String, Value>),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Install(_) => "install",
            Action::Activate(_) => "activate",
            Action::Connect(_) => "connect",
            Action::Exec(_) => "exec",
            Action::Availability(_) => "availability",
            Action::ListPacks(_) => "listPacks",
            Action::GetPack(_) => "getPack",
            Action::Skill(_) => "skill",
            Action::Cli(_) => "cli",
            Action::Sense(_) => "sense",
            Action::Sink(_) => "sink",
            Action::Audit(_) => "audit",
            Action::Probe(_) => "probe",
            Action::PacksUnchanged(_) => "packsUnchanged",
            Action::Wait(_) => "wait",
            Action::SetSense(_) => "setSense",
            Action::Grants(_) => "grants",
        }
    }
}
