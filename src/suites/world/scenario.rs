//! A harness-api scenario: what hcpspec's core and gates play, and what is judged. The format
//! is documented in docs/harness-api.md § 5 and checked by
//! `vectors/schemas/harness-scenario.schema.json`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::num::NonZeroUsize;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// `HARNESS_NAME`, the harness id the token is bound to.
    #[serde(default = "default_harness")]
    pub harness: String,
    #[serde(default)]
    pub timers: Timers,
    #[serde(default = "default_deadline")]
    pub deadline_ms: u64,
    /// Overrides of TurnStart's `limits`.
    #[serde(default)]
    pub limits: Map<String, Value>,
    /// Fields merged into every TurnStart core offers.
    #[serde(default)]
    pub turn: Map<String, Value>,
    /// Fields merged into one offer's TurnStart, by the offer's place (after `turn`): a replay
    /// whose request changed, say.
    #[serde(default)]
    pub turn_by_offer: Vec<Map<String, Value>>,
    /// The MCP snapshot another owner recorded first: core answers the first `session.mcp`
    /// with its facts (the harness role; "The first snapshot recorded wins").
    #[serde(default)]
    pub mcp_recorded: Option<Value>,
    /// The runs core offers, in order.
    #[serde(default = "default_offers")]
    pub offers: Vec<Offer>,
    /// The fixture model's answers, one per distinct model effect, in order (the last repeats).
    #[serde(default)]
    pub model: Vec<ModelReply>,
    /// The Tool Gate's answers by target: `mcp:SERVER/TOOL`, `http:TOOL`.
    #[serde(default)]
    pub tools: Map<String, Value>,
    /// What `mcp/list` answers for each server the manifest declares: `{SERVER: [TOOL…]}`.
    #[serde(default)]
    pub discover: Map<String, Value>,
    /// The bytes of definition files by their `sha256:<hex>` name.
    #[serde(default)]
    pub files: Map<String, Value>,
    /// How core answers intents; the first rule that matches decides, else `execute`.
    #[serde(default)]
    pub intents: Vec<IntentRule>,
    /// Answers to `lease.renew`, in order, the last repeated.
    #[serde(default)]
    pub renew: Vec<Renew>,
    /// What core does when something happens.
    #[serde(default)]
    pub on: Vec<Trigger>,
    /// Gate answers replaced: the nth call on a route gets this status and body (the fuzzer's).
    #[serde(default)]
    pub gate_faults: Vec<GateFault>,
    /// What is judged, besides the checks of every scenario.
    #[serde(default)]
    pub checks: Vec<Written<Asked>>,
    /// The core role only: the Agent the session runs on, which core's target table reads
    /// (`core_api/tools.rs`, docs/core-protocol.md).
    #[serde(default)]
    pub agent: Value,
    /// The core role only: the Tenant's tool policy, `[{server?, tool, answer}]`.
    #[serde(default)]
    pub policy: Vec<Value>,
    /// The core role only: the artifact file limit in bytes (`maxBytes` of an upload).
    #[serde(default)]
    pub file_bytes: Option<u64>,
    /// The core role only: more harness ids core holds a token for (`core.start` answers each).
    #[serde(default)]
    pub other_harnesses: Vec<String>,
    /// The core role only: the Tenant's and the Agent's artifact totals, in bytes.
    #[serde(default)]
    pub tenant_bytes: Option<u64>,
    #[serde(default)]
    pub agent_bytes: Option<u64>,
    /// The core role only: the Tenant has no model (TurnStart carries no `model`).
    #[serde(default)]
    pub no_model: bool,
    /// The core role only: where the Tool Gate reaches each tool, by target (`mcp:SERVER`,
    /// `http:TOOL`): `{url, credential}`. A tool with none answers from `tools`.
    #[serde(default)]
    pub endpoints: Map<String, Value>,
    /// The harness role only: file artifacts of the session, which a turn's messages may name
    /// (`{artifactId, version: 1}`).
    #[serde(default)]
    pub artifacts: Vec<SeededFile>,
    /// The pod sandboxes core runs for pod Agents (§ 9), each joined by its host with the join
    /// parameters `core.start` answers for it (the core role); the harness role's pod-host
    /// mode: the harness is the first pod's host, launched with its join parameters.
    #[serde(default)]
    pub pods: Vec<Pod>,
}

/// A file artifact of the session a scenario seeds (the harness role): its id, name, content
/// type, and its bytes: `text`, or `bytes` of `x`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SeededFile {
    pub artifact_id: String,
    #[serde(default)]
    pub name: String,
    pub content_type: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub bytes: Option<u64>,
}

impl SeededFile {
    pub fn content(&self) -> Vec<u8> {
        match (&self.text, self.bytes) {
            (Some(t), _) => t.clone().into_bytes(),
            (None, Some(n)) => vec![b'x'; n as usize],
            (None, None) => Vec::new(),
        }
    }
}

/// A pod sandbox of a pod Agent (§ 9): the Agent's harness id, and its disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pod {
    /// The Agent's manifest's harness.id: the name its host says hello with.
    pub harness: String,
    /// The disk starts from a disk version: a join carries no setup. Else it is a new disk.
    #[serde(default)]
    pub seeded: bool,
    /// The Agent's setup, which a join on a new disk carries: `{inputFiles?: {PATH: TEXT},
    /// setupCommands?: [CMD…]}`.
    #[serde(default)]
    pub setup: Option<Value>,
    /// The harness role only: the nth host renewal (1-based) core refuses, its host token then
    /// no longer good ("Join again when a renewal is refused").
    #[serde(default)]
    pub refuse_renewal: Option<u64>,
}

/// Where `v` (a scenario, or a `core.start`'s params) cannot be read as a [`Scenario`], as
/// hcpspec's own core and the reference core read it: the pointer (below `at`) of the first
/// member that cannot, and serde's message. None when it reads. A case that fails here cannot
/// be played as it means: its suite refuses it at load (`Format::check` or `Format::parse`).
///
/// A member holding a string that is one `${…}` and nothing else is left to run time: such a
/// template takes its value's JSON type only when it is filled.
pub fn unreadable(v: &Map<String, Value>, at: &str) -> Option<(String, String)> {
    let known: Map<String, Value> = v
        .iter()
        .filter(|(_, x)| !holds_template(x))
        .map(|(k, x)| (k.clone(), x.clone()))
        .collect();
    let whole = serde_json::from_value::<Scenario>(Value::Object(known.clone())).err()?;
    let read = |k: &String, x: &Value| {
        serde_json::from_value::<Scenario>(Value::Object(Map::from_iter([(k.clone(), x.clone())])))
    };
    for (k, x) in &known {
        let Err(e) = read(k, x) else { continue };
        let at = crate::pointer::push(at, k);
        // In a list, the first item that cannot be read alone (a check, say).
        let item = x
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .find_map(|(i, y)| {
                read(k, &Value::Array(vec![y.clone()]))
                    .err()
                    .map(|e| (crate::pointer::push(&at, &i.to_string()), e.to_string()))
            });
        return Some(item.unwrap_or((at, e.to_string())));
    }
    Some((at.to_string(), whole.to_string()))
}

fn holds_template(v: &Value) -> bool {
    match v {
        Value::String(s) => {
            s.starts_with("${") && s.ends_with('}') && s[2..].find('}') == Some(s.len() - 3)
        }
        Value::Array(a) => a.iter().any(holds_template),
        Value::Object(m) => m.values().any(holds_template),
        _ => false,
    }
}

fn default_harness() -> String {
    "acme-harness".into()
}
fn default_deadline() -> u64 {
    5000
}
fn default_offers() -> Vec<Offer> {
    vec![Offer::Turn]
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Timers {
    #[serde(default = "ping")]
    pub ping_ms: u64,
    #[serde(default = "drop_ms")]
    pub drop_ms: u64,
    #[serde(default = "renew")]
    pub renew_every_ms: u64,
    /// The harness role's pod-host mode: a host's renewal cadence (§ 9's 5 minutes, scaled).
    #[serde(default = "host_renew")]
    pub host_renew_ms: u64,
}

fn host_renew() -> u64 {
    200
}

fn ping() -> u64 {
    200
}
fn drop_ms() -> u64 {
    1500
}
fn renew() -> u64 {
    100
}

impl Default for Timers {
    fn default() -> Self {
        Timers {
            ping_ms: ping(),
            drop_ms: drop_ms(),
            renew_every_ms: renew(),
            host_renew_ms: host_renew(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Offer {
    /// A new turn.
    Turn,
    /// The previous run's segment again, with its journal's outcomes.
    Replay,
    /// The next segment of the previous run's turn (after a person answered its approvals).
    Segment,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ModelReply {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
    /// Answer this late (unless the call is cancelled first).
    #[serde(default)]
    pub hold_ms: u64,
    /// Answer a failure instead: `{code?, message?, retryable?}` (the core role's fixture model).
    #[serde(default)]
    pub failure: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCall {
    #[serde(default)]
    pub mcp: Option<McpTool>,
    #[serde(default)]
    pub http: Option<String>,
    /// A runtime tool core runs: `memory` or `schedule_wake` (found by that name in the offered
    /// tool's, the spec fixing none).
    #[serde(default)]
    pub runtime: Option<String>,
    /// A sandbox tool: `bash`, `read`, `write`, `edit`, `grep` or `glob` (found likewise).
    #[serde(default)]
    pub sandbox: Option<String>,
    #[serde(default)]
    pub input: Option<Value>,
    /// Left out when the harness offered no such tool, instead of skipping the scenario (for
    /// a tool a harness must offer only sometimes).
    #[serde(default)]
    pub if_offered: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpTool {
    pub server: String,
    pub tool: String,
}

impl ToolCall {
    /// `mcp:SERVER/TOOL` or `http:TOOL`: the key of `tools`.
    pub fn target_key(&self) -> String {
        match (&self.mcp, &self.http, &self.runtime, &self.sandbox) {
            (Some(m), ..) => format!("mcp:{}/{}", m.server, m.tool),
            (None, Some(h), ..) => format!("http:{h}"),
            (None, None, Some(r), _) => format!("runtime:{r}"),
            (None, None, None, Some(t)) => format!("sandbox:{t}"),
            _ => String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntentRule {
    /// `{kind}` and optionally `{target: "mcp:SERVER/TOOL"}`; `{}` matches every intent.
    #[serde(rename = "match", default)]
    pub matches: Map<String, Value>,
    pub answer: Value,
    /// How many intents the rule answers before it is used up (default: all).
    #[serde(default)]
    pub times: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Renew {
    Ok,
    Switch,
    Refuse,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    pub when: When,
    #[serde(rename = "do")]
    pub act: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct When {
    /// The nth (default first) gate call on this route arrives.
    #[serde(default)]
    pub gate: Option<String>,
    /// The nth (default first) harness request of this method arrives (before it is answered).
    #[serde(default)]
    pub frame: Option<String>,
    #[serde(default)]
    pub nth: Option<usize>,
    /// This long after the harness connected.
    #[serde(default)]
    pub after_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateFault {
    pub route: String,
    #[serde(default = "first")]
    pub nth: usize,
    pub status: u16,
    /// The body as JSON …
    #[serde(default)]
    pub body: Option<Value>,
    /// … or as raw text (not JSON).
    #[serde(default)]
    pub text: Option<String>,
    /// Lose the hop instead: the answer's head goes, its body never completes (the status and
    /// body above are not sent).
    #[serde(default)]
    pub lose: bool,
}

fn first() -> usize {
    1
}

/// A value as the case wrote it, beside what it reads as: evidence quotes what was written, its
/// members in the case's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Written<T> {
    pub read: T,
    pub text: Value,
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Written<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = Value::deserialize(d)?;
        let read = T::deserialize(&text).map_err(serde::de::Error::custom)?;
        Ok(Written { read, text })
    }
}

impl<T> Serialize for Written<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.text.serialize(s)
    }
}

/// A check a scenario asks for (vectors/harness-api/CHECKS.md, "Checks a scenario asks for"),
/// with its parameters; judged by `harness_api::judge`. `offer` is the 1-based place of a run
/// (default every run), `nth` of a request or gate call (default the first).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "check", rename_all = "camelCase", deny_unknown_fields)]
pub enum Asked {
    Ends {
        with: Ending,
        #[serde(default)]
        offer: Option<NonZeroUsize>,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        status: Option<String>,
    },
    WaitsOn {
        #[serde(default)]
        offer: Option<NonZeroUsize>,
    },
    GateCancelled {},
    GateCalls {
        route: String,
        #[serde(default)]
        count: Option<u64>,
        #[serde(default)]
        min: Option<u64>,
        #[serde(default)]
        max: Option<u64>,
    },
    ReplaysSame {},
    Spilled {},
    Offered {
        #[serde(default)]
        tools: Vec<String>,
        #[serde(default)]
        not: Vec<String>,
    },
    Frame {
        m: String,
        #[serde(default = "first_nonzero")]
        nth: NonZeroUsize,
        expect: Value,
    },
    NoFrame {
        m: String,
    },
    NotDropped {},
    Count {
        m: String,
        #[serde(default)]
        offer: Option<NonZeroUsize>,
        #[serde(default)]
        min: Option<u64>,
        #[serde(default)]
        max: Option<u64>,
    },
    Gate {
        route: String,
        #[serde(default = "first_nonzero")]
        nth: NonZeroUsize,
        expect: Value,
    },
    AnsweredOk {
        m: String,
    },
    InputEntries {
        #[serde(default = "one")]
        count: u64,
    },
    Renewals {
        #[serde(default)]
        offer: Option<NonZeroUsize>,
    },
    ModelSaw {
        text: String,
    },
    Entries {
        #[serde(default)]
        offer: Option<NonZeroUsize>,
    },
    PartsStored {},
    NoImageFile {},
    // issue 43, harness:
    AskedAgain {},
    SameBody {
        route: String,
    },
    InputTexts {
        texts: Vec<String>,
    },
    PromptPinned {
        text: String,
    },
    UniqueNames {},
    NoReference {
        artifact: String,
    },
    ReadsPinned {},
    NoNewVersion {},
    StopsOnCancel {},
    InvocationsByStep {},
    CallsTarget {
        name: String,
        target: Map<String, Value>,
    },
    // issue 43, pod host (the pod-host launch mode, § 9):
    HostBearer {},
    HostRenews {},
    HostRejoins {},
}

/// How `ends` wants a run to end: an output holding the status, or a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Ending {
    #[serde(rename = "turn.completed")]
    Completed,
    #[serde(rename = "turn.failed")]
    Failed,
    #[serde(rename = "turn.waiting")]
    Waiting,
    #[serde(rename = "release")]
    Release,
}

impl Ending {
    /// The status an output names, as the spec writes it (None: a release).
    pub fn status(self) -> Option<&'static str> {
        match self {
            Ending::Completed => Some("turn.completed"),
            Ending::Failed => Some("turn.failed"),
            Ending::Waiting => Some("turn.waiting"),
            Ending::Release => None,
        }
    }
}

fn first_nonzero() -> NonZeroUsize {
    NonZeroUsize::MIN
}
fn one() -> u64 {
    1
}
