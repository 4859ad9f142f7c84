//! Rust renderings of what spec 003's adapter binds: harness's rig, session and command applier
//! on one side, Host's department request and command on the other. Go's type assertion on a
//! session's dynamic type becomes an accessor that answers `None` for a capability the value does
//! not implement (a wrapper that does not forward one answers `None` too: H0's hazard).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// A Go context, as far as an adapter can tell: whether it is already cancelled.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ctx {
    pub cancelled: bool,
}

/// `department.RigCreateRequest` and `RigRestoreRequest`: the same six fields (H1, H2).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Request {
    pub tenant_id: String,
    pub session_id: String,
    pub agent_id: String,
    pub placement: String,
    pub workspace_root: String,
    pub storage_namespace: String,
}

/// `department.RuntimeCommand`: the payload travels as opaque bytes (H7), or as an unresolved
/// reference (H8).
#[derive(Clone, Debug, Default)]
pub struct RuntimeCommand {
    pub kind: String,
    pub principal: Value,
    pub metadata: Value,
    pub payload: Option<Vec<u8>>,
    pub payload_ref: Option<String>,
    pub attempt: String,
}

/// `runtimecommand.Admitted`: what crosses to harness.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Admitted {
    pub kind: String,
    pub blocks: Vec<Value>,
    pub lease_epoch: u64,
    pub gate_response: Option<Value>,
    pub principal: Value,
    pub metadata: Value,
    pub attempt: String,
}

/// `event.Delivery`, and whether it is a committed publication (H4).
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    #[serde(default)]
    pub event_id: Value,
    #[serde(default)]
    pub journal_seq: Value,
    #[serde(default)]
    pub public_body: Value,
    #[serde(default)]
    pub covered_through: Value,
    #[serde(default = "yes")]
    pub committed: bool,
}

fn yes() -> bool {
    true
}

pub type Fallible = Result<(), String>;

pub trait IdleWaiter {
    fn wait_idle(&self, ctx: Ctx) -> Fallible;
}
pub trait Liveness {
    fn done(&self) -> bool;
}
pub trait Releaser {
    fn release_residency(&self, ctx: Ctx) -> Fallible;
}
pub trait CommittedPublicEventProvider {
    /// What the source delivers until its channel closes.
    fn subscribe(&self) -> Vec<Delivery>;
}
pub trait Applier {
    fn apply_runtime_command(&self, ctx: Ctx, admitted: Admitted) -> Fallible;
}
pub trait AttemptCloser {
    fn close_attempt(&self, ctx: Ctx, attempt: &str) -> Fallible;
}
pub trait LeaseEpochReporter {
    /// The epoch of the single-writer lease the session holds; `None`: no held grant.
    fn lease_epoch(&self) -> Option<u64>;
}
pub trait PersistenceFaultReporter {
    /// `false`: the fault channel is nil.
    fn has_fault_channel(&self) -> bool;
}
pub trait ResidencyAbandoner {
    fn abandon_residency(&self, ctx: Ctx) -> Fallible;
}
pub trait LiveOptions {
    /// Emit the session's preview frames to `relay`.
    fn subscribe_live(&self, relay: &mut dyn FnMut(Value));
}

/// A harness session as the rig returns it. Each capability is discovered on its own published
/// interface.
pub trait Session: Send + Sync {
    fn session_id(&self) -> String;
    fn idle_waiter(&self) -> Option<&dyn IdleWaiter>;
    fn liveness(&self) -> Option<&dyn Liveness>;
    fn releaser(&self) -> Option<&dyn Releaser>;
    fn events(&self) -> Option<&dyn CommittedPublicEventProvider>;
    fn applier(&self) -> Option<&dyn Applier>;
    fn attempt_closer(&self) -> Option<&dyn AttemptCloser>;
    fn lease_epoch_reporter(&self) -> Option<&dyn LeaseEpochReporter>;
    fn persistence_fault_reporter(&self) -> Option<&dyn PersistenceFaultReporter>;
    fn residency_abandoner(&self) -> Option<&dyn ResidencyAbandoner>;
    fn live_options(&self) -> Option<&dyn LiveOptions>;
    /// A wrapper's wrapped value (Go `Unwrap() any`): no adapter may bind through it.
    fn unwrap(&self) -> Option<Arc<dyn Session>> {
        None
    }
    /// The value a by-name forwarder (a Python `__getattr__`, a JS Proxy) answers `cap`'s
    /// methods from, when the value itself does not declare `cap` (docs/host-protocol.md § 3.2,
    /// `forwardsByName`): reachable by a method's name, never by harness's interface.
    fn by_name(&self, _cap: &str) -> Option<Arc<dyn Session>> {
        None
    }
}

/// `rig.Rig`: `NewSession` takes only options (the session id is one), `RestoreSession` only the
/// UUID (H1, H2).
pub trait Rig: Send + Sync {
    fn new_session(&self, ctx: Ctx, session_id: Option<&str>) -> Result<Arc<dyn Session>, String>;
    fn restore_session(&self, ctx: Ctx, uuid: &str) -> Result<Arc<dyn Session>, String>;
}

/// Create or restore.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    Create,
    Restore,
}

/// A product's rig function (Go `RigsFunc`).
pub type RigsFn = Arc<dyn Fn(&Request, Mode) -> Result<Arc<dyn Rig>, String> + Send + Sync>;

/// A product's block decoder (Go `WithBlockDecoder`).
pub type BlockDecoder = Arc<dyn Fn(&[u8]) -> Result<Vec<Value>, String> + Send + Sync>;

/// What a process could reach that no adapter may touch: stores and objects.
pub trait Environment: Send + Sync {
    fn open_store(&self, what: &str, name: &str);
    fn read_object(&self, reference: &str) -> Vec<u8>;
}
