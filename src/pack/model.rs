use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A loaded pack: the three files, typed. `skill` is `HARNESS.md` (None when the file is absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pack {
    pub surface: Surface,
    pub policy: Policy,
    pub skill: Option<String>,
}

impl Pack {
    pub fn pack_id(&self) -> &str {
        &self.surface.pack_id
    }
    pub fn command(&self, verb_key: &str) -> Option<&Command> {
        self.surface
            .commands
            .iter()
            .find(|c| c.verb_key == verb_key)
    }
    /// A pack needs a Binding unless it is public.
    pub fn needs_binding(&self) -> bool {
        !self.surface.public
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    pub hcp: String,
    pub pack_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default)]
    pub public: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingDecl>,
    pub commands: Vec<Command>,
    pub wrap: Wrap,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sense: Option<SenseDecl>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BindingMode {
    User,
    Local,
    Mothership,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BindingDecl {
    pub mode: BindingMode,
    pub hub: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Command {
    pub verb_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, ArgSpec>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgSpec {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub ty: Option<String>,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Wrap {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inproc: Option<String>,
    #[serde(default)]
    pub pass_through: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub commands: BTreeMap<String, WrapCommand>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrapCommand {
    pub argv: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SenseDecl {
    #[serde(default)]
    pub triggers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub verbs: BTreeMap<String, VerbPolicy>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub triggers: BTreeMap<String, TriggerPolicy>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    Read,
    Write,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Land {
    Local,
    Brain,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Privacy {
    pub land: Land,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerbPolicy {
    pub operation: Operation,
    #[serde(default)]
    pub confirm: bool,
    pub privacy: Privacy,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TriggerPolicy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub privacy: Option<Privacy>,
}
