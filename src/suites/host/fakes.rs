//! The recording fakes of docs/host-protocol.md § 3: rigs, the harness session and its applier,
//! the product decoder, the environment. They record what they receive and never judge it.

use super::core::Dialect;
use super::seams::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Everything the fakes recorded, as `host.records` answers it.
#[derive(Default)]
pub struct Records {
    pub rigs: Vec<Value>,
    pub sessions: Vec<Value>,
    pub admitted: Vec<Value>,
    pub decoded: Vec<Value>,
    pub live: Vec<Value>,
    pub stores: Vec<Value>,
    pub objects: Vec<Value>,
}

impl Records {
    pub fn to_json(&self) -> Value {
        json!({
            "rigs": self.rigs, "sessions": self.sessions, "admitted": self.admitted,
            "decoded": self.decoded, "live": self.live, "stores": self.stores, "objects": self.objects,
        })
    }
}

/// The fakes of one case, shared by every rig, session and decoder they make.
#[derive(Default)]
pub struct Fakes {
    records: Mutex<Records>,
    /// The session the next `NewSession` / `RestoreSession` answers (`host.bind`'s `session`).
    next: Mutex<Value>,
    /// The sessions the rigs made, last one last.
    made: Mutex<Vec<Arc<FakeSession>>>,
    generated: AtomicU64,
}

impl Fakes {
    pub fn log(&self) -> MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_next(&self, session: Value) {
        *self.next.lock().unwrap_or_else(|p| p.into_inner()) = session;
    }

    /// How many sessions the rigs made, and the last of them.
    pub fn made(&self) -> (usize, Option<Arc<FakeSession>>) {
        let m = self.made.lock().unwrap_or_else(|p| p.into_inner());
        (m.len(), m.last().cloned())
    }

    pub fn rig(self: &Arc<Self>, name: &str) -> Arc<dyn Rig> {
        Arc::new(FakeRig {
            name: name.to_string(),
            fakes: self.clone(),
        })
    }

    /// The product's rig function: records the request it was given, answers rig `func`.
    pub fn rigs_fn(self: &Arc<Self>) -> RigsFn {
        let fakes = self.clone();
        Arc::new(move |req: &Request, mode: Mode| {
            let call = match mode {
                Mode::Create => "forCreate",
                Mode::Restore => "forRestore",
            };
            fakes
                .log()
                .rigs
                .push(json!({ "rig": "func", "call": call, "request": req }));
            Ok(fakes.rig("func"))
        })
    }

    /// The product decoder of § 3.5: strictly the adapter's Core's InputRequest, or the
    /// product's own `{"say": TEXT}`.
    pub fn product_decoder(self: &Arc<Self>, core: Dialect) -> BlockDecoder {
        let fakes = self.clone();
        Arc::new(move |bytes: &[u8]| {
            let body = serde_json::from_slice::<Value>(bytes)
                .unwrap_or_else(|_| json!(String::from_utf8_lossy(bytes)));
            fakes
                .log()
                .decoded
                .push(json!({ "decoder": "product", "body": body }));
            if let Ok(b) = core.input_blocks(bytes, true) {
                return Ok(b);
            }
            match body.as_object().map(|o| (o.len(), o.get("say"))) {
                Some((1, Some(Value::String(t)))) => Ok(vec![json!({ "type": "text", "text": t })]),
                _ => Err("undecodable".into()),
            }
        })
    }

    fn session(self: &Arc<Self>, id: String) -> Arc<dyn Session> {
        let cfg = self.next.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let s = Arc::new(FakeSession {
            id,
            cfg,
            fakes: self.clone(),
            command: Mutex::new(None),
        });
        self.made
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(s.clone());
        let hides = names(&s.cfg["hides"]);
        if hides.is_empty() {
            s
        } else {
            let by_name = s.cfg["forwardsByName"] == json!(true);
            Arc::new(Wrapper {
                inner: s,
                hides,
                by_name,
            })
        }
    }
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

struct FakeRig {
    name: String,
    fakes: Arc<Fakes>,
}

impl Rig for FakeRig {
    fn new_session(&self, _: Ctx, session_id: Option<&str>) -> Result<Arc<dyn Session>, String> {
        self.fakes
            .log()
            .rigs
            .push(json!({ "rig": self.name, "call": "NewSession", "sessionId": session_id }));
        let id = match session_id {
            Some(id) => id.to_string(),
            None => format!(
                "rig-generated-{}",
                self.fakes.generated.fetch_add(1, Ordering::Relaxed) + 1
            ),
        };
        Ok(self.fakes.session(id))
    }

    fn restore_session(&self, _: Ctx, uuid: &str) -> Result<Arc<dyn Session>, String> {
        self.fakes
            .log()
            .rigs
            .push(json!({ "rig": self.name, "call": "RestoreSession", "uuid": uuid }));
        Ok(self.fakes.session(uuid.to_string()))
    }
}

/// The harness session of § 3.2.
pub struct FakeSession {
    id: String,
    cfg: Value,
    fakes: Arc<Fakes>,
    /// Which `host.apply` on this session is in flight (0-based), if one is.
    command: Mutex<Option<usize>>,
}

impl FakeSession {
    /// While `f` runs, the epoch reporter answers the n-th command's epoch.
    pub fn during_command<T>(&self, n: usize, f: impl FnOnce() -> T) -> T {
        *self.command.lock().unwrap_or_else(|p| p.into_inner()) = Some(n);
        let out = f();
        *self.command.lock().unwrap_or_else(|p| p.into_inner()) = None;
        out
    }

    fn lacks(&self, cap: &str) -> bool {
        names(&self.cfg["lacks"]).iter().any(|c| c == cap)
    }

    fn record(&self, mut entry: Value) {
        entry["session"] = json!(self.id);
        self.fakes.log().sessions.push(entry);
    }

    fn fails(&self, key: &str) -> Fallible {
        match self.cfg[key].as_str() {
            Some(t) => Err(t.to_string()),
            None => Ok(()),
        }
    }
}

/// Every harness capability: its accessor, its trait, its name in the protocol (§ 3.6), given to
/// `$m`, which writes the accessors.
macro_rules! capabilities {
    ($m:ident) => {
        $m! {
            idle_waiter: IdleWaiter = "IdleWaiter",
            liveness: Liveness = "Liveness",
            releaser: Releaser = "Releaser",
            events: CommittedPublicEventProvider = "CommittedPublicEventProvider",
            applier: Applier = "Applier",
            attempt_closer: AttemptCloser = "AttemptCloser",
            lease_epoch_reporter: LeaseEpochReporter = "LeaseEpochReporter",
            persistence_fault_reporter: PersistenceFaultReporter = "PersistenceFaultReporter",
            residency_abandoner: ResidencyAbandoner = "ResidencyAbandoner",
            live_options: LiveOptions = "LiveOptions",
        }
    };
}

/// Each accessor answers the session itself unless its type lacks that capability.
macro_rules! accessors {
    ($($name:ident: $tr:ident = $cap:literal),* $(,)?) => {
        $(fn $name(&self) -> Option<&dyn $tr> {
            (!self.lacks($cap)).then_some(self as &dyn $tr)
        })*
    };
}

impl Session for FakeSession {
    fn session_id(&self) -> String {
        self.id.clone()
    }
    capabilities!(accessors);
}

impl IdleWaiter for FakeSession {
    /// Idle at once; or busy until its work ends `idleAfterMs` later (recorded `Idle`, then it
    /// returns); or failing with `waitIdleFails`.
    fn wait_idle(&self, _: Ctx) -> Fallible {
        self.record(json!({ "call": "WaitIdle" }));
        if let Some(ms) = self.cfg["idleAfterMs"].as_u64() {
            std::thread::sleep(std::time::Duration::from_millis(ms.min(MAX_IDLE_AFTER_MS)));
            self.record(json!({ "call": "Idle" }));
        }
        self.fails("waitIdleFails")
    }
}

/// The longest a fake session stays busy (`idleAfterMs`), far inside a call's deadline.
pub const MAX_IDLE_AFTER_MS: u64 = 2000;

impl Liveness for FakeSession {
    /// Whether its `Done` channel is closed: only when the session has ended (`doneClosed`).
    fn done(&self) -> bool {
        self.record(json!({ "call": "Done" }));
        self.cfg["doneClosed"] == json!(true)
    }
}

impl Releaser for FakeSession {
    fn release_residency(&self, ctx: Ctx) -> Fallible {
        self.record(json!({ "call": "ReleaseResidency", "cancelled": ctx.cancelled }));
        self.fails("releaseFails")?;
        if ctx.cancelled {
            return Err("context canceled".into());
        }
        Ok(())
    }
}

impl CommittedPublicEventProvider for FakeSession {
    fn subscribe(&self) -> Vec<Delivery> {
        self.record(json!({ "call": "Subscribe" }));
        serde_json::from_value(self.cfg["deliveries"].clone()).unwrap_or_default()
    }
}

impl Applier for FakeSession {
    fn apply_runtime_command(&self, _: Ctx, a: Admitted) -> Fallible {
        let mut entry = serde_json::to_value(&a).unwrap_or_default();
        entry["session"] = json!(self.id);
        self.fakes.log().admitted.push(entry);
        self.fails("applyFails")
    }
}

impl AttemptCloser for FakeSession {
    fn close_attempt(&self, _: Ctx, attempt: &str) -> Fallible {
        self.record(json!({ "call": "CloseAttempt", "attempt": attempt }));
        self.fails("closeAttemptFails")
    }
}

impl LeaseEpochReporter for FakeSession {
    fn lease_epoch(&self) -> Option<u64> {
        let n = *self.command.lock().unwrap_or_else(|p| p.into_inner());
        let v = match n {
            None => self.cfg.get("epochAtBind").cloned().unwrap_or(json!(1)),
            Some(n) => match self.cfg.get("epochs").and_then(Value::as_array) {
                Some(e) if !e.is_empty() => e[n.min(e.len() - 1)].clone(),
                _ => json!(1),
            },
        };
        v.as_u64()
    }
}

impl PersistenceFaultReporter for FakeSession {
    fn has_fault_channel(&self) -> bool {
        self.cfg["faultChannel"].as_bool() != Some(false)
    }
}

impl ResidencyAbandoner for FakeSession {
    fn abandon_residency(&self, _: Ctx) -> Fallible {
        self.record(json!({ "call": "AbandonResidency" }));
        Ok(())
    }
}

impl LiveOptions for FakeSession {
    fn subscribe_live(&self, relay: &mut dyn FnMut(Value)) {
        self.record(json!({ "call": "SubscribeLive" }));
        for f in self.cfg["previews"].as_array().cloned().unwrap_or_default() {
            relay(f);
        }
    }
}

/// A wrapper that forwards every capability but those it `hides`; with `forwardsByName`, it
/// still answers the hidden ones' methods by name, declaring none of them.
struct Wrapper {
    inner: Arc<FakeSession>,
    hides: Vec<String>,
    by_name: bool,
}

macro_rules! forwards {
    ($($name:ident: $tr:ident = $cap:literal),* $(,)?) => {
        $(fn $name(&self) -> Option<&dyn $tr> {
            if self.hides.iter().any(|h| h == $cap) { None } else { self.inner.$name() }
        })*
    };
}

impl Session for Wrapper {
    fn session_id(&self) -> String {
        self.inner.session_id()
    }
    capabilities!(forwards);
    fn unwrap(&self) -> Option<Arc<dyn Session>> {
        Some(self.inner.clone())
    }
    fn by_name(&self, cap: &str) -> Option<Arc<dyn Session>> {
        let hidden = self.hides.iter().any(|h| h == cap);
        (self.by_name && hidden).then(|| self.inner.clone() as Arc<dyn Session>)
    }
}

/// The environment of § 3.4: every use recorded.
pub struct FakeEnv(pub Arc<Fakes>);

impl Environment for FakeEnv {
    fn open_store(&self, what: &str, name: &str) {
        self.0
            .log()
            .stores
            .push(json!({ "what": what, "name": name }));
    }

    fn read_object(&self, reference: &str) -> Vec<u8> {
        self.0
            .log()
            .objects
            .push(json!({ "what": "object", "name": reference }));
        br#"{"blocks":[{"type":"text","text":"from the object"}]}"#.to_vec()
    }
}
