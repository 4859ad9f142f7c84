//! hcpspec's core as state: the runs it offers, its journal, the connections, and the log of
//! everything the harness and hcpspec said. The WebSocket listener (`core.rs`) and the gates
//! (`gates.rs`) share one `World` behind a lock; every decision of the fake core is here.

use super::role::Role;
use super::scenario::{Offer, Renew, Scenario};
use crate::knob::Knobs;
use crate::suites::core_api::knobs::{Mutant, Variant};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::Message;

mod effects;
mod facts;
mod transcript;

/// What core queues to a connection that does not read: past it, a cap hit, and it is dropped.
pub const QUEUE_BYTES: usize = 64 << 20;

/// Whether `queued` bytes not yet written pass [`QUEUE_BYTES`]: core then drops the connection
/// (`World::send`) and reads no more of it (`core::connection`; the bytes stay counted).
pub fn past_queue(queued: usize) -> bool {
    queued > QUEUE_BYTES
}

pub const SESSION: &str = "sess-1";

/// Our harness's id, the one a harness token is bound to (§ 1).
pub const NYLORUN: &str = "nylorun";

/// Something the scenario's driver must do outside the lock: a trigger's act, or the end.
#[derive(Debug, Clone)]
pub enum Act {
    Do(Value),
}

pub struct Conn {
    pub tx: mpsc::UnboundedSender<Message>,
    /// The bytes sent to `tx` not yet written to the socket ([`QUEUE_BYTES`]).
    pub queued: Arc<std::sync::atomic::AtomicUsize>,
    pub hello: bool,
    /// When core last heard from it, in scenario time (ms).
    pub heard: u64,
    pub closed: bool,
    /// The harness id the connection's token is bound to.
    pub harness: Option<String>,
    /// Its hello declared features.workspace (§ 10).
    pub workspace: bool,
    /// The pod whose host it is (its bearer was that pod's host token, § 9).
    pub pod: Option<usize>,
}

pub struct Run {
    pub id: String,
    pub token: String,
    /// Tokens of this run that a switch replaced (refused at the gates).
    pub old_tokens: Vec<String>,
    pub turn_id: String,
    pub segment: u64,
    pub start: Value,
    pub conn: usize,
    pub ended: Option<(u64, String)>,
    /// Effects whose intent this run had answered `execute`.
    pub executed: BTreeSet<String>,
}

impl Run {
    pub fn limit(&self, name: &str) -> u64 {
        self.start
            .pointer(&format!("/limits/{name}"))
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX)
    }
}

#[derive(Debug, Clone)]
pub enum Row {
    Executing { hash: String },
    Waiting { hash: String },
    Completed { hash: String, outcome: Value },
}

impl Row {
    fn hash(&self) -> &str {
        match self {
            Row::Executing { hash } | Row::Waiting { hash } | Row::Completed { hash, .. } => hash,
        }
    }
}

/// An answer to a harness request.
pub enum Reply {
    Ok(Value),
    Err(&'static str, String),
    /// Answered later (a lease waits for an offer).
    Later,
}

pub struct World {
    time: super::time::SceneTime,
    pub(super) sc: Arc<Scenario>,
    pub(super) token: String,
    pub(super) log: Vec<Value>,
    pub(super) runs: Vec<Run>,
    pub(super) journal: BTreeMap<String, Row>,
    pub(super) conns: BTreeMap<usize, Conn>,
    next_offer: usize,
    waiting: Vec<(usize, Value)>,
    turns: usize,
    last_state: Value,
    renews: usize,
    rule_uses: Vec<usize>,
    /// Effect id → the fixture model reply it got.
    pub(super) model_keys: BTreeMap<String, usize>,
    /// Key → (status, body): a re-send under the same key gets the same bytes.
    pub(super) gate_cache: BTreeMap<String, (u16, Value)>,
    /// The keys of tool calls at their tools now: a re-send of one joins it.
    pub(super) forwarding: BTreeSet<String>,
    pub(super) gate_counts: BTreeMap<String, usize>,
    frame_counts: BTreeMap<String, usize>,
    pub(super) inflight: usize,
    pub(super) cancels: BTreeMap<String, Arc<Notify>>,
    /// Why the scenario cannot be judged for this harness (it offered no tool the model needs).
    pub(super) skip: Option<String>,
    acts: mpsc::UnboundedSender<Act>,
    /// Artifacts by id, and uploads in progress.
    pub(super) artifacts: BTreeMap<String, Value>,
    pub(super) uploads: BTreeMap<String, Upload>,
    pub(super) keys_written: BTreeMap<String, String>,
    mcp_facts: Option<Value>,
    seq: u64,
    /// The runs to offer, in order: the scenario's, and those a control shim's `session.open` adds.
    offers: Vec<Offer>,
    /// A Tenant closed by the control protocol: upgrades are refused 503.
    pub(super) tenant_closed: bool,
    /// The core this world plays: scripted, or the reference with its knobs.
    role: Box<dyn Role>,
    /// The gates' own HTTP client, for the tool calls the Tool Gate forwards: one per world, its
    /// connections on the world's runtime (adapter/client.rs).
    pub(super) http: reqwest::Client,
    /// The session's memories (core role), by path.
    memories: BTreeMap<String, String>,
    /// The paths of the memories in the order they were last written (core role).
    memory_order: Vec<String>,
    /// How many times each tool effect was asked while invoking (core role).
    attempts: BTreeMap<String, u64>,
    /// Each tool effect as its intent journaled it (core role): the gate runs only its target.
    pub(super) tool_effects: BTreeMap<String, Value>,
    /// The harness the session pinned at its first `session.open` (core role).
    /// The turn whose output last edited the transcript.
    transcript_turn: String,
    pinned: Option<String>,
    /// The session's transcript, the outputs' edits folded (core role).
    transcript: Vec<Value>,
    /// Model effects whose fate the harness could not learn (core role): uncertain.
    uncertain: BTreeSet<String>,
    /// Tool effects the policy held for a person, by effect id (core role).
    held: BTreeMap<String, Value>,
    /// Completed-or-not model effects whose intent said `purpose: "summary"` (core role).
    summaries: BTreeSet<String>,
    /// The events core wrote of its own (core role): `context.compacted`.
    events: Vec<Value>,
    /// The approval interactions of paused turns (core role): `{id, server?, tool, toolName,
    /// answer}`, the id the effect id.
    approvals: Vec<Value>,
    /// The scenario is over: runs keep the state they had, whatever the harness does next.
    frozen: bool,
    /// The bytes of every message the harness sent, in all its connections (`core::FLOOD_BYTES`).
    pub(super) received: u64,
    /// The scenario's share of the process's budget of bytes (`budget`): the harness-api
    /// suite's; unmetered elsewhere.
    pub hold: Arc<super::budget::Hold>,
    /// The messages of the turns not offered yet, by offer (core role): a message sent while a
    /// turn runs waits in the session's queue and joins the next turn's.
    inbox: Vec<(usize, Value)>,
    /// Each turn's input, kept for the segments offered again (core role).
    turn_inputs: BTreeMap<String, Value>,
    /// Each model effect's step (its invocationId) and timing, by effect id (core role).
    model_calls: BTreeMap<String, Value>,
    /// What `session.open` said of the turn it opens, by offer, then by turn (core role):
    /// `{flow?, traceparent?, tracestate?}`.
    turn_opts: BTreeMap<usize, Value>,
    turn_meta: BTreeMap<String, Value>,
    /// How many outputs' edits the transcript has folded (core role): its cursor.
    folds: u64,
    /// The span context of each tool call of a traced turn, by effect id (core role).
    pub(super) call_traces: BTreeMap<String, String>,
    /// The host tokens core gave in joins (core role, § 9), and the pod each is for.
    pub(super) host_tokens: BTreeMap<String, usize>,
    /// Every host token a join gave, in the joins' order (a host's bearer is told by it).
    pub(super) host_order: Vec<String>,
    /// How many host renewals core answered (the harness role scripts the nth's refusal).
    pub(super) host_renewals: u64,
    /// How many times each pod's host joined (its epoch), by pod.
    pub(super) joins: BTreeMap<usize, u64>,
    /// The pod the session runs in, when its Agent is a pod Agent (core role).
    session_pod: Option<usize>,
    /// The connection whose request is being answered, and its method: a run is held by the
    /// connection it was offered to (§ 1: its runs end when that connection is lost).
    asking: (usize, String),
}

pub struct Upload {
    /// The run that opened it: an upload ends with its run.
    pub run: String,
    pub name: String,
    pub bytes: Vec<u8>,
    pub last: Option<(u64, usize)>,
    pub max: u64,
    pub key: Option<String>,
    pub effect: Option<String>,
    /// The content type the begin declared (`application/octet-stream` when it declared none).
    pub content_type: String,
    /// The session's own file artifact this upload writes a new version of.
    pub of: Option<String>,
    /// A folder upload's files and limits (a begin with `kind: "folder"`).
    pub folder: Option<FolderUpload>,
}

/// A folder upload's files so far, by path, and its limits (section 4b's "Folders").
#[derive(Debug, Clone, Default)]
pub struct FolderUpload {
    pub files: BTreeMap<String, Vec<u8>>,
    pub max_entries: u64,
    pub max_file: u64,
}

impl World {
    pub fn new(
        sc: Arc<Scenario>,
        token: String,
        acts: mpsc::UnboundedSender<Act>,
        role: Box<dyn Role>,
    ) -> World {
        let rules = sc.intents.len();
        let sc_offers = sc.offers.clone();
        World {
            time: super::time::SceneTime::new(),
            sc,
            token,
            log: Vec::new(),
            runs: Vec::new(),
            journal: BTreeMap::new(),
            conns: BTreeMap::new(),
            next_offer: 0,
            waiting: Vec::new(),
            turns: 0,
            last_state: Value::Null,
            renews: 0,
            rule_uses: vec![0; rules],
            model_keys: BTreeMap::new(),
            gate_cache: BTreeMap::new(),
            forwarding: BTreeSet::new(),
            gate_counts: BTreeMap::new(),
            frame_counts: BTreeMap::new(),
            inflight: 0,
            cancels: BTreeMap::new(),
            skip: None,
            acts,
            artifacts: BTreeMap::new(),
            uploads: BTreeMap::new(),
            keys_written: BTreeMap::new(),
            mcp_facts: None,
            seq: 0,
            frozen: false,
            received: 0,
            hold: super::budget::Hold::unmetered(),
            offers: sc_offers,
            tenant_closed: false,
            role,
            http: crate::adapter::client::new_client(),
            memories: BTreeMap::new(),
            memory_order: Vec::new(),
            attempts: BTreeMap::new(),
            tool_effects: BTreeMap::new(),
            pinned: None,
            transcript_turn: String::new(),
            transcript: Vec::new(),
            uncertain: BTreeSet::new(),
            held: BTreeMap::new(),
            approvals: Vec::new(),
            summaries: BTreeSet::new(),
            events: Vec::new(),
            inbox: Vec::new(),
            turn_inputs: BTreeMap::new(),
            model_calls: BTreeMap::new(),
            turn_opts: BTreeMap::new(),
            turn_meta: BTreeMap::new(),
            folds: 0,
            call_traces: BTreeMap::new(),
            host_tokens: BTreeMap::new(),
            host_order: Vec::new(),
            host_renewals: 0,
            joins: BTreeMap::new(),
            session_pod: None,
            asking: (0, String::new()),
        }
    }

    /// The scenario this core plays (`core.start`'s params, for the reference).
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }

    /// Everything the harness and core said, in order.
    pub fn log(&self) -> &[Value] {
        &self.log
    }

    /// The log, taken (not copied: it may hold 256 MiB of frames).
    pub fn take_log(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.log)
    }

    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    pub fn conns(&self) -> &BTreeMap<usize, Conn> {
        &self.conns
    }

    /// Why the scenario cannot be judged for this harness, if it cannot.
    pub fn skip(&self) -> Option<&str> {
        self.skip.as_deref()
    }

    /// The scenario is over: runs keep the state they had, whatever the harness does next.
    pub fn freeze(&mut self) {
        self.frozen = true;
    }

    /// The Tenant is closed by the control protocol: upgrades are refused 503.
    pub fn close_tenant(&mut self) {
        self.tenant_closed = true;
    }

    /// The approval interactions of paused turns.
    pub fn approvals(&self) -> &[Value] {
        &self.approvals
    }

    /// The MCP discovery core holds before any run reports one.
    pub fn discovered(&mut self, facts: Value) {
        self.mcp_facts = Some(facts);
    }

    /// The harness the session pinned, if it pinned one.
    pub fn pinned(&self) -> Option<&str> {
        self.pinned.as_deref()
    }

    pub fn pin(&mut self, harness: &str) {
        self.pinned = Some(harness.to_string());
    }

    /// The pod the session runs in, when its Agent is a pod Agent.
    pub fn session_pod(&self) -> Option<usize> {
        self.session_pod
    }

    /// The session runs in `pod` (the first pod it was opened in).
    pub fn run_in_pod(&mut self, pod: usize) {
        self.session_pod.get_or_insert(pod);
    }

    /// Offer the session's last segment again (`session.replay`).
    pub fn replay(&mut self) {
        self.offers.push(Offer::Replay);
        self.offer();
    }

    /// Every host token a join gave, the pod it is for and that pod Agent's harness id.
    /// Whether `token` is a host token a pod's join was answered with.
    pub fn is_host_token(&self, token: &str) -> bool {
        self.host_tokens.contains_key(token)
    }

    /// Store an artifact with a media type (`artifact.seed`'s `contentType`).
    pub fn set_content_type(&mut self, id: &str, t: Value) {
        if let Some(a) = self.artifacts.get_mut(id) {
            a["meta"]["contentType"] = t;
        }
    }

    /// The model effects an intent answered execute for, in any run (the mutant
    /// `usage-row-at-intent` meters them there).
    pub fn executed_model_effects(&self) -> Vec<String> {
        let all = self.runs.iter().flat_map(|r| r.executed.iter());
        all.filter(|e| e.contains(":model:")).cloned().collect()
    }

    pub fn hosts(&self) -> BTreeMap<String, (usize, String)> {
        let mut m: BTreeMap<String, (usize, String)> = self
            .host_tokens
            .iter()
            .filter_map(|(t, p)| Some((t.clone(), (*p, self.sc.pods.get(*p)?.harness.clone()))))
            .collect();
        // The mutant that takes a pod's join token where its host token is due.
        if self.breaks(Mutant::JoinTokenUpgrades) {
            for (p, pod) in self.sc.pods.iter().enumerate() {
                let t = self.join_token(p);
                m.insert(t, (p, pod.harness.clone()));
            }
        }
        m
    }

    /// A pod's join token, what its environment gives its host (§ 9).
    pub fn join_token(&self, pod: usize) -> String {
        let h = crate::hash::fnv1a64(format!("{}:join:{pod}", self.token).as_bytes());
        format!("nylorun-jt-{}-{h:x}", pod + 1)
    }

    /// What a host's bearer is, as the log says it (never the token itself): the host token of
    /// the nth join (`{join: n}`), a pod's join token, the harness token, another, or none.
    pub fn bearer_kind(&self, bearer: Option<&str>) -> Value {
        let Some(t) = bearer else {
            return json!("none");
        };
        if let Some(i) = self.host_order.iter().position(|h| h == t) {
            return json!({ "join": i + 1 });
        }
        if (0..self.sc.pods.len()).any(|p| self.join_token(p) == t) {
            json!("join-token")
        } else if self.token == t {
            json!("harness-token")
        } else {
            json!("unknown")
        }
    }

    /// Host tokens in the joins' order: the nth join's is the (n-1)th.
    pub fn host_order(&self) -> &[String] {
        &self.host_order
    }

    /// A host renewal: its count, one more than the last's.
    pub fn host_renewed(&mut self) -> u64 {
        self.host_renewals += 1;
        self.host_renewals
    }

    /// A host token no longer good (its renewal was refused): no upgrade nor renewal takes it.
    pub fn revoke_host(&mut self, token: &str) {
        self.host_tokens.remove(token);
    }

    /// The harness token core gave.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// A pod's host joined with `host_token`: its epoch, one more than its last join's.
    pub fn admit_host(&mut self, pod: usize, host_token: String) -> u64 {
        self.host_order.push(host_token.clone());
        self.host_tokens.insert(host_token, pod);
        let epoch = self.joins.entry(pod).or_insert(0);
        *epoch += 1;
        *epoch
    }

    /// The core this world plays.
    pub fn role(&self) -> &dyn Role {
        self.role.as_ref()
    }

    /// The mutant or variant of the reference core this is, if any.
    pub fn knobs(&self) -> Knobs<Mutant, Variant> {
        self.role.knobs()
    }

    /// Is this the mutant core that breaks `m`'s rule? Never in the scripted role.
    pub fn breaks(&self, m: Mutant) -> bool {
        self.role.knobs().breaks(m)
    }

    /// Remove from an object each member whose mutant is on (the mutants that drop one member
    /// of an answer or a frame).
    pub fn drop_broken(&self, v: &mut Value, members: &[(Mutant, &str)]) {
        for &(m, member) in members {
            if let (true, Some(o)) = (self.breaks(m), v.as_object_mut()) {
                o.remove(member);
            }
        }
    }

    /// Is this the allowed variant of the reference core that decides `v`'s point otherwise?
    pub fn decides(&self, v: Variant) -> bool {
        crate::suites::core_api::freedom::decides(&self.role.knobs(), v)
    }

    /// Scenario time, in ms: wall time less what the machine made the scenario wait
    /// (`time.rs`), where a player meters it.
    pub fn now(&self) -> u64 {
        self.time.now_ms()
    }

    pub fn time(&self) -> &super::time::SceneTime {
        &self.time
    }

    pub fn record(&mut self, mut entry: Value) -> usize {
        entry["at"] = json!(self.now());
        self.log.push(entry);
        self.log.len() - 1
    }

    /// Send a frame to a connection and log it. A harness that does not read what it is sent
    /// has it queued up to [`QUEUE_BYTES`]; past that it is a cap hit and it is dropped.
    pub fn send(&mut self, conn: usize, frame: Value) {
        use std::sync::atomic::Ordering;
        let mut frame = frame;
        if frame["t"] == "msg" && self.breaks(Mutant::MessageFrameMisshapen) {
            if let Some(o) = frame.as_object_mut() {
                let m = o.remove("m").unwrap_or(Value::Null);
                o.insert("method".into(), m);
            }
        }
        self.record(json!({ "via": "frame", "conn": conn, "from": "core", "frame": frame }));
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let text = frame.to_string();
        let queued = c.queued.fetch_add(text.len(), Ordering::Relaxed) + text.len();
        if past_queue(queued) {
            let _ = c.tx.send(Message::Close(None));
            let cap = QUEUE_BYTES;
            self.record(json!({ "via": "cap", "conn": conn, "what": "queue",
                "reason": format!("the harness does not read core's frames: {queued} bytes queued to it, past {cap}") }));
            self.lost(conn);
            return;
        }
        // Held twice: in the log (until the scenario is judged) and queued (until the
        // connection's writer has sent it).
        self.hold.take(2 * text.len() as u64);
        let _ = c.tx.send(Message::text(text));
    }

    /// limit_exceeded, its message naming the limit and its value (§ 1), then `detail`.
    pub fn over_limit(&self, name: &str, limit: u64, detail: &str) -> Reply {
        let message = if name == "limitBytes" && self.breaks(Mutant::LimitBytesMessageBare) {
            "the upload is too large".to_string()
        } else if self.breaks(Mutant::LimitMessageWithoutValue) {
            format!("{name}{detail}")
        } else if self.breaks(Mutant::LimitMessageUnnamed) {
            format!("{limit}{detail}")
        } else if self.decides(Variant::LimitMessagesReworded) {
            format!("Limit exceeded{detail}: the Tenant's {name} limit is {limit} bytes, and this is more.")
        } else {
            format!("{name} {limit}{detail}")
        };
        if self.breaks(Mutant::LimitExceededAsInvalid) {
            return Reply::Err("invalid", message);
        }
        Reply::Err("limit_exceeded", message)
    }

    pub fn next_id(&mut self) -> String {
        self.seq += 1;
        crate::suites::core_api::freedom::id(
            &self.knobs(),
            "requestId",
            &format!("core-{}", self.seq),
        )
    }

    /// Are all offers made and all runs over, with no gate call in flight?
    pub fn finished(&self) -> bool {
        self.next_offer >= self.offers.len()
            && self.runs.iter().all(|r| r.ended.is_some())
            && self.inflight == 0
    }

    pub fn active_run(&self) -> Option<&Run> {
        self.runs.iter().rev().find(|r| r.ended.is_none())
    }

    pub fn end_run(&mut self, idx: usize, why: &str) {
        if self.runs[idx].ended.is_none() && !self.frozen {
            let at = self.now();
            self.runs[idx].ended = Some((at, why.to_string()));
            let (id, conn) = (self.runs[idx].id.clone(), self.runs[idx].conn);
            if self.role.strict() {
                self.end_uploads_of(&id);
            }
            self.record(
                json!({ "via": "core", "event": "run-ended", "run": id, "why": why, "conn": conn }),
            );
            self.offer();
        }
    }

    /// A connection is closed: it takes no more runs, its leases are dropped.
    pub fn closed(&mut self, conn: usize) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.closed = true;
        }
        self.waiting.retain(|(c, _)| *c != conn);
    }

    /// A connection is gone: its runs end as connection.lost, its leases are dropped.
    pub fn lost(&mut self, conn: usize) {
        self.closed(conn);
        for i in 0..self.runs.len() {
            if self.runs[i].conn == conn && self.runs[i].ended.is_none() {
                if self.role.replays() && !self.breaks(Mutant::LostRunNotOfferedAgain) {
                    self.offers.push(Offer::Replay);
                }
                self.end_run(i, "connection.lost");
            }
        }
    }

    /// The core role: v5's schemas are strict, and a request lacks none of the members § 2–4b
    /// print without `?` (the requests whose members are all printed).
    fn params_problem(&self, m: &str, p: &Value) -> Option<String> {
        let (required, optional): (&[&str], &[&str]) = match m {
            "lease" => (&[], &[]),
            "lease.renew" | "transcript.read" => (&["runId"], &[]),
            "lease.release" => (&["runId", "reason"], &[]),
            // A core that reads purpose on the effect object knows no such member beside it.
            "effect.intent" if self.decides(Variant::PurposeOnTheEffect) => {
                (&["runId", "effect", "requestHash"], &[])
            }
            "effect.intent" => (&["runId", "effect", "requestHash"], &["purpose"]),
            "effect.outcome" => (&["runId", "effectId"], &["value", "error"]),
            "session.mcp" => (&["runId", "diagnostics"], &["snapshot"]),
            "definition.file" => (&["runId", "sha256"], &["offset", "length"]),
            "artifact.read" => (&["runId", "artifactId"], &["version", "offset", "length"]),
            _ => return None,
        };
        let Some(o) = p.as_object() else {
            return Some(format!("{m}: params must be an object"));
        };
        if let Some(k) = o
            .keys()
            .find(|k| !required.contains(&k.as_str()) && !optional.contains(&k.as_str()))
        {
            let two = ["transcript.read", "lease.renew"].contains(&m);
            if !self.breaks(Mutant::SchemasNotStrict)
                && (two || !self.breaks(Mutant::SchemasStrictForTwoOnly))
            {
                return Some(format!("{m}: unknown member {k}"));
            }
        }
        if let Some(k) = required.iter().find(|k| !o.contains_key(**k)) {
            let two = ["effect.intent", "transcript.read"].contains(&m);
            if !self.breaks(Mutant::RequiredMembersUnchecked)
                && (two || !self.breaks(Mutant::RequiredMembersCheckedForTwoOnly))
            {
                return Some(format!("{m}: missing member {k}"));
            }
        }
        // A member of the wrong type: a request hash is a string (EffectIntentSchema).
        if m == "effect.intent"
            && o.get("requestHash").is_some_and(|h| !h.is_string())
            && !self.breaks(Mutant::MemberTypesUnchecked)
        {
            return Some("effect.intent: requestHash is not a string".into());
        }
        // lease.release's reason is one of three (§ 2), and the schemas are strict (§ 11).
        if m == "lease.release" {
            let reason = o.get("reason").and_then(Value::as_str).unwrap_or_default();
            let listed = ["shutdown", "ownership.lost", "connection.lost"].contains(&reason);
            if reason == "connection.lost" && self.breaks(Mutant::ListedReleaseReasonRefused) {
                return Some("lease.release: reason connection.lost is not taken".into());
            }
            if !listed && !self.breaks(Mutant::ReleaseReasonUnchecked) {
                return Some(format!("lease.release: reason `{reason}` is not one of shutdown, ownership.lost, connection.lost"));
            }
        }
        None
    }

    /// A message to the session (core role): it opens a new turn, or, sent while a turn runs,
    /// waits in the session's queue with the others for the next turn (§ 3's `{kind:
    /// "messages"}`).
    pub fn open_turn(&mut self, message: Option<Value>, opts: Value) {
        let queued = self.active_run().is_some()
            && self.next_offer < self.offers.len()
            && self.offers.last() == Some(&Offer::Turn)
            && !self.breaks(Mutant::QueuedMessagesSplit);
        if !queued {
            self.offers.push(Offer::Turn);
        }
        if let Some(m) = message {
            let m = match m {
                Value::String(t) if self.decides(Variant::InputAsText) => json!({ "text": t }),
                m => m,
            };
            self.inbox.push((self.offers.len() - 1, m));
        }
        if opts.as_object().is_some_and(|o| !o.is_empty()) {
            self.turn_opts.insert(self.offers.len() - 1, opts);
        }
        self.offer();
    }

    /// Offer the next run to a waiting lease, when no run is held.
    pub fn offer(&mut self) {
        while self.next_offer < self.offers.len() && self.active_run().is_none() {
            // The core role: a session's runs go only to connections of the harness it pinned.
            let pinned = self.pinned_harness();
            // A token made for a custom harness id takes none of that harness's runs: they go to
            // the hosts of its Agents' pods (§ 1).
            let custom = pinned != NYLORUN && !self.breaks(Mutant::CustomTokenTakesItsRuns);
            let pod = self.session_pod;
            let flow = self
                .turn_opts
                .get(&self.next_offer)
                .is_some_and(|o| o["flow"] == true);
            let takes = |c: &Conn| {
                let of_pinned = c.harness.as_deref() == Some(pinned.as_str());
                let host = match (pod, c.pod) {
                    // A pod Agent's runs go only to its pod's host (§ 2).
                    (Some(p), Some(q)) => {
                        !self.breaks(Mutant::PodRunsNeverToHosts)
                            && (p == q || (of_pinned && self.breaks(Mutant::PodRunsToAnotherHost)))
                    }
                    // Flows run in our harness, never a pod's host (§ 3).
                    (None, Some(_)) => flow && self.breaks(Mutant::FlowsToPodHosts),
                    (_, None) => false,
                };
                !c.closed
                    && (!self.role.routes()
                        || self.breaks(Mutant::RunsOfferedToAnyHarness)
                        || host
                        || (c.pod.is_none() && of_pinned && !custom))
                    && (c.workspace || !self.breaks(Mutant::NoTurnsWithoutWorkspace))
            };
            // A core may give a released segment to another owner only (§ 8: "Another owner
            // replays the segment"), never back to the connection that released it.
            let releaser = self
                .runs
                .last()
                .filter(|r| r.ended.as_ref().is_some_and(|(_, why)| why == "release"))
                .filter(|_| self.offers[self.next_offer] == Offer::Replay)
                .filter(|_| {
                    let k = self.knobs();
                    crate::suites::core_api::freedom::coin(
                        &k,
                        crate::knob::Class::Preconditions,
                        "released-elsewhere",
                    )
                })
                .map(|r| r.conn);
            let Some(pos) = self
                .waiting
                .iter()
                .position(|(c, _)| Some(*c) != releaser && self.conns.get(c).is_some_and(takes))
            else {
                return;
            };
            let (conn, req) = self.waiting.remove(pos);
            let kind = self.offers[self.next_offer];
            let offered = self.next_offer;
            self.next_offer += 1;
            let (turn_id, segment) = match (kind, self.runs.last()) {
                (Offer::Replay, Some(prev)) => (prev.turn_id.clone(), prev.segment),
                (Offer::Segment, Some(prev)) => (prev.turn_id.clone(), prev.segment + 1),
                _ => {
                    self.turns += 1;
                    let segment = self
                        .sc
                        .turn
                        .get("checkpoint")
                        .and_then(|c| c.get("segment"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0);
                    let turn = format!("turn-{}", self.turns);
                    (
                        crate::suites::core_api::freedom::id(&self.knobs(), "turnId", &turn),
                        segment,
                    )
                }
            };
            let n = self.runs.len() + 1;
            let id =
                crate::suites::core_api::freedom::id(&self.knobs(), "runId", &format!("run-{n}"));
            let token = format!("nylorun-rt-{n}-{:x}", fresh());
            let mut start = self.turn_start(&turn_id, segment);
            if let Some(o) = self.sc.turn_by_offer.get(offered) {
                merge(&mut start, &Value::Object(o.clone()));
            }
            if self.role.states_facts() {
                self.turn_facts(&mut start, kind, offered);
            }
            let mut grant = json!({
                "runId": id, "sessionId": SESSION, "turnId": turn_id, "epoch": n,
                "token": token, "tokenExpiresAt": "2099-01-01T00:00:00Z"
            });
            if self.breaks(Mutant::GrantTokenNotTheGates) {
                grant["token"] = json!(format!("nylorun-rt-elsewhere-{n}"));
            }
            self.drop_broken(
                &mut grant,
                &[
                    (Mutant::GrantWithoutToken, "token"),
                    (Mutant::GrantWithoutEpoch, "epoch"),
                    (Mutant::GrantWithoutExpiry, "tokenExpiresAt"),
                ],
            );
            self.runs.push(Run {
                id: id.clone(),
                token,
                old_tokens: vec![],
                turn_id,
                segment,
                start: start.clone(),
                conn,
                ended: None,
                executed: BTreeSet::new(),
            });
            self.record(json!({ "via": "core", "event": "offer", "run": id }));
            let mut r = json!({ "run": grant, "input": start });
            if self.breaks(Mutant::LeaseWithoutInput) {
                r.as_object_mut().expect("object").remove("input");
            }
            self.send(conn, json!({ "t": "res", "id": req, "ok": true, "r": r }));
        }
    }

    /// Fire the triggers a harness frame or gate call sets off.
    pub fn trigger(&mut self, gate: Option<&str>, frame: Option<&str>) {
        let count = match (gate, frame) {
            (Some(g), _) => {
                let c = self.gate_counts.entry(g.to_string()).or_default();
                *c += 1;
                *c
            }
            (None, Some(m)) => {
                let c = self.frame_counts.entry(m.to_string()).or_default();
                *c += 1;
                *c
            }
            _ => return,
        };
        let sc = self.sc.clone();
        for t in &sc.on {
            let hit = (gate.is_some() && t.when.gate.as_deref() == gate)
                || (frame.is_some() && t.when.frame.as_deref() == frame);
            if hit && t.when.nth.unwrap_or(1) == count {
                let _ = self.acts.send(Act::Do(t.act.clone()));
                // Issue 43 (harness role): the frame that sets off a kill is lost with the
                // harness: its connection closed and its run over (connection.lost) before the
                // frame is answered, so the killed harness learns nothing more.
                if frame.is_some() && t.act == "kill" {
                    if let Some(conn) = self.active_run().map(|r| r.conn) {
                        if let Some(c) = self.conns.get(&conn) {
                            let _ = c.tx.send(Message::Close(None));
                        }
                        self.lost(conn);
                    }
                }
            }
        }
    }

    /// The core's answer to one harness request.
    pub fn request(&mut self, conn: usize, id: &Value, m: &str, p: &Value) -> Reply {
        self.asking = (conn, m.to_string());
        let hello = self.conns.get(&conn).is_some_and(|c| c.hello);
        if m != "hello" && !hello {
            return Reply::Err("invalid", "hello must be the first request".into());
        }
        if self.role.strict() {
            if let Some(why) = self.params_problem(m, p) {
                let code = if self.decides(Variant::RefusalsUnavailable) {
                    "unavailable"
                } else {
                    "invalid"
                };
                return Reply::Err(code, why);
            }
        }
        // A core of other wire names reads its own names where spec 004 prints none.
        let read;
        let p = match self.role.read_names(m, p) {
            None => p,
            Some(Ok(q)) => {
                read = q;
                &read
            }
            Some(Err(why)) => return Reply::Err("invalid", why.to_string()),
        };
        let reply = match m {
            "hello" => self.hello(conn, p),
            "lease"
                if self.breaks(Mutant::LeaseAnswersAtOnce)
                    && self.active_run().is_none()
                    && self.next_offer >= self.offers.len() =>
            {
                Reply::Err("unavailable", "no run to offer".into())
            }
            "lease" => {
                self.waiting.push((conn, id.clone()));
                self.offer();
                Reply::Later
            }
            "lease.renew" => self.renew(p),
            "lease.release" => match self.held(p) {
                Ok(_) if self.breaks(Mutant::ReleaseKeepsRun) => Reply::Ok(json!({})),
                Ok(i) => {
                    // The core role: another owner replays the segment from its journal.
                    if self.role.replays() && !self.breaks(Mutant::ReleasedRunNotReplayed) {
                        self.offers.push(Offer::Replay);
                    }
                    self.end_run(i, "release");
                    Reply::Ok(json!({}))
                }
                Err(e) => e,
            },
            "effect.intent" => self.intent(p),
            "effect.outcome" => self.outcome(p),
            "transcript.read" => match self.held(p) {
                Ok(_) if self.breaks(Mutant::TranscriptWithoutEntries) => {
                    Reply::Ok(json!({ "cursor": "c0" }))
                }
                // The mutant keeps a transcript per turn: a later turn reads none of it.
                Ok(i)
                    if self.breaks(Mutant::TranscriptPerTurn)
                        && self.runs[i].turn_id != self.transcript_turn =>
                {
                    Reply::Ok(json!({ "cursor": self.cursor(), "entries": [] }))
                }
                Ok(_) if self.breaks(Mutant::TranscriptReadWithoutCursor) => {
                    Reply::Ok(json!({ "entries": self.transcript }))
                }
                Ok(_) if self.breaks(Mutant::EntriesRenamed) => {
                    let entries: Vec<Value> = self
                        .transcript
                        .iter()
                        .map(|e| {
                            let mut e = e.clone();
                            if let Some(o) = e.as_object_mut() {
                                let kind = o.remove("kind").unwrap_or(Value::Null);
                                o.insert("type".into(), kind);
                            }
                            e
                        })
                        .collect();
                    Reply::Ok(json!({ "cursor": self.cursor(), "entries": entries }))
                }
                Ok(_) => Reply::Ok(json!({
                    "cursor": self.cursor(),
                    "entries": self.transcript,
                })),
                Err(e) => e,
            },
            "session.mcp" => self.session_mcp(p),
            "definition.file" => self.definition_file(p),
            "artifact.read" | "artifact.write" if self.breaks(Mutant::ArtifactRequestsUnknown) => {
                Reply::Err("invalid", format!("unknown method `{m}`"))
            }
            "artifact.read" => self.artifact_read(p),
            "artifact.write" => self.artifact_write(p),
            "output" => self.output(p),
            _ if self.breaks(Mutant::UnknownMethodOk) => Reply::Ok(json!({})),
            other if self.breaks(Mutant::UnlistedErrorCode) => {
                Reply::Err("method_not_found", format!("unknown method `{other}`"))
            }
            other if self.decides(Variant::UnknownMethodNotFound) => {
                Reply::Err("not_found", format!("unknown method `{other}`"))
            }
            other => Reply::Err("invalid", format!("unknown method `{other}`")),
        };
        match reply {
            Reply::Ok(r) => Reply::Ok(self.role.word(m, r)),
            reply => reply,
        }
    }

    fn hello(&mut self, conn: usize, p: &Value) -> Reply {
        // Mutants that read api loosely: any number from 5 up, or the string "5".
        let api = match p.get("api") {
            Some(Value::Number(n)) if self.breaks(Mutant::ApiAboveAccepted) => {
                json!(n.as_u64().filter(|n| *n >= 5).map_or(0, |_| 5))
            }
            Some(Value::String(s)) if self.breaks(Mutant::ApiStringAccepted) => {
                json!(s.parse::<u64>().unwrap_or(0))
            }
            // The mutant takes a hello that names no api as api 5.
            None if self.breaks(Mutant::MissingApiDefaulted) => json!(5),
            other => other.cloned().unwrap_or(Value::Null),
        };
        if api != json!(5) && !self.breaks(Mutant::Api4Accepted) {
            let code = if self.decides(Variant::RefusalsUnavailable) {
                "unavailable"
            } else {
                "invalid"
            };
            return Reply::Err(code, "core speaks api 5".into());
        }
        let name_at = match self.breaks(Mutant::HelloParamsMisread) {
            true => "harness",
            false => "name",
        };
        let name = p.get(name_at).and_then(Value::as_str).unwrap_or_default();
        let bound = self
            .conns
            .get(&conn)
            .and_then(|c| c.harness.clone())
            .unwrap_or_else(|| self.sc.harness.clone());
        let host = self.conns.get(&conn).is_some_and(|c| c.pod.is_some());
        let folded = self.breaks(Mutant::NameCaseFolded) && name.eq_ignore_ascii_case(&bound);
        // The mutant takes a hello that names no harness as the credential's.
        let defaulted = self.breaks(Mutant::MissingNameDefaulted) && p.get(name_at).is_none();
        // The mutant takes any harness id the operator made a token for.
        let known = self.breaks(Mutant::NameOfAnyKnownHarness)
            && self.credentials().values().any(|h| h == name);
        // The mutant reads the id pattern ^[a-z][a-z0-9-]{1,62}$ as three characters or more.
        let short = self.breaks(Mutant::ShortIdsRefused) && name.chars().count() < 3;
        if (name != bound || short)
            && !folded
            && !defaulted
            && !known
            && !self.breaks(Mutant::AnyNameAccepted)
            && !(host && self.breaks(Mutant::PodHelloAnyName))
        {
            return Reply::Err(
                if self.decides(Variant::RefusalsUnavailable) {
                    "unavailable"
                } else {
                    "invalid"
                },
                format!("the credential is for harness `{bound}`"),
            );
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.hello = true;
            c.workspace = p.pointer("/features/workspace") == Some(&json!(true));
        }
        let tenant = if self.decides(Variant::OtherIds) {
            "t_8f3a"
        } else {
            "tenant-1"
        };
        let mut answer = json!({
            "api": if self.breaks(Mutant::HelloAnswersApi4) { 4 } else { 5 }, "tenantId": tenant, "sandbox": { "backend": "none" },
            "renewEveryMs": self.sc.timers.renew_every_ms
        });
        self.drop_broken(
            &mut answer,
            &[
                (Mutant::HelloWithoutRenewEvery, "renewEveryMs"),
                (Mutant::HelloWithoutTenant, "tenantId"),
                (Mutant::HelloWithoutSandbox, "sandbox"),
            ],
        );
        Reply::Ok(answer)
    }

    /// The index of the run a request names, if the asking connection holds it: a run is over
    /// once released, output or refused a renewal, and another connection's run is not this
    /// one's (the core role; the harness role's scenarios hold runs on any connection).
    pub(super) fn held(&self, p: &Value) -> Result<usize, Reply> {
        self.held_run(p).map_err(|e| match e {
            Reply::Err("run_not_held", m) if self.breaks(Mutant::NotHeldCodedInvalid) => {
                Reply::Err("invalid", m)
            }
            e => e,
        })
    }

    fn held_run(&self, p: &Value) -> Result<usize, Reply> {
        let id = p.get("runId").and_then(Value::as_str).unwrap_or_default();
        let (conn, m) = (self.asking.0, self.asking.1.as_str());
        // Mutants that forget a run is over for some requests only.
        let over_taken = match m {
            "transcript.read" => self.breaks(Mutant::OverRunTranscript),
            "artifact.read" => self.breaks(Mutant::OverRunRead),
            "artifact.write" => self.breaks(Mutant::OverRunWritten),
            "output" => self.breaks(Mutant::OverRunOutput),
            _ => false,
        };
        // Mutants that check the holder for some requests only.
        let unchecked = match m {
            "artifact.read" | "artifact.write" => {
                self.breaks(Mutant::OtherConnectionsArtifactsTaken)
            }
            "output" => self.breaks(Mutant::OtherConnectionsOutputTaken),
            _ => false,
        };
        let ours = |i: usize| {
            !self.role.strict()
                || self.runs[i].conn == conn
                || unchecked
                || self.breaks(Mutant::OtherConnectionsRunTaken)
        };
        match self.runs.iter().position(|r| r.id == id) {
            Some(i) if !ours(i) => Err(Reply::Err(
                "run_not_held",
                format!("run {id} is not held here"),
            )),
            Some(i) if self.runs[i].ended.is_none() || over_taken => Ok(i),
            Some(_) if self.breaks(Mutant::RunOverCodeUnlisted) => {
                Err(Reply::Err("run_over", format!("run {id} is over")))
            }
            Some(_) => Err(Reply::Err("run_not_held", format!("run {id} is over"))),
            None => Err(Reply::Err("run_not_held", format!("no run {id}"))),
        }
    }

    /// The run a request names ended so (its `why`).
    fn ended_by(&self, p: &Value, why: &str) -> bool {
        let id = p.get("runId").and_then(Value::as_str);
        self.runs
            .iter()
            .find(|r| Some(r.id.as_str()) == id)
            .is_some_and(|r| r.ended.as_ref().is_some_and(|(_, w)| w == why))
    }

    fn renew(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(_) if self.breaks(Mutant::RenewOverOk) => return Reply::Ok(json!({ "ok": true })),
            // Mutants that forget a run is over for some of the ways it ends only.
            Err(_)
                if self.ended_by(p, "connection.lost") && self.breaks(Mutant::LostRunRenewable) =>
            {
                return Reply::Ok(json!({ "ok": true }))
            }
            Err(_) if self.ended_by(p, "output") && self.breaks(Mutant::OutputRunRenewable) => {
                return Reply::Ok(json!({ "ok": true }))
            }
            Err(_)
                if self.ended_by(p, "renew-refused")
                    && self.breaks(Mutant::RefusedRunRenewable) =>
            {
                return Reply::Ok(json!({ "ok": true }))
            }
            // The text answers a run that is over {ok: false}; run_not_held says it too.
            Err(_) if self.decides(Variant::RenewOverOkFalse) => {
                return Reply::Ok(json!({ "ok": false }))
            }
            Err(e) => return e,
        };
        let answer = match self.sc.renew.len() {
            _ if self.breaks(Mutant::RenewRefusesHeldRun) => Renew::Refuse,
            0 => Renew::Ok,
            n => match self.sc.renew[self.renews.min(n - 1)] {
                Renew::Switch if self.breaks(Mutant::NoTokenSwitch) => Renew::Ok,
                r => r,
            },
        };
        self.renews += 1;
        match answer {
            Renew::Ok => Reply::Ok(json!({ "ok": true })),
            Renew::Switch => {
                let token = format!("nylorun-rt-{}-s{}-{:x}", i + 1, self.renews, fresh());
                if !self.breaks(Mutant::SwitchedTokenRefusedAtGates) {
                    let old = std::mem::replace(&mut self.runs[i].token, token.clone());
                    self.runs[i].old_tokens.push(old);
                }
                Reply::Ok(
                    json!({ "ok": true, "token": token, "tokenExpiresAt": "2099-01-01T00:00:00Z" }),
                )
            }
            Renew::Refuse => {
                self.end_run(i, "renew-refused");
                Reply::Ok(json!({ "ok": false }))
            }
        }
    }

    /// What a harness reports, as core records it: every token core signed (run tokens, the
    /// harness token) replaced by `[nylorun token redacted]`, other values unchanged (the core
    /// role; "What the log records").
    pub fn redacted(&self, v: &Value) -> Value {
        if !self.role.redacts() || self.breaks(Mutant::TokensNotRedacted) {
            return v.clone();
        }
        if self.breaks(Mutant::OtherValuesRedacted) {
            fn all(v: &Value) -> Value {
                match v {
                    Value::String(_) => json!("[nylorun token redacted]"),
                    Value::Array(a) => Value::Array(a.iter().map(all).collect()),
                    Value::Object(o) => {
                        Value::Object(o.iter().map(|(k, x)| (k.clone(), all(x))).collect())
                    }
                    other => other.clone(),
                }
            }
            return all(v);
        }
        let tokens: Vec<&str> = self
            .runs
            .iter()
            .flat_map(|r| {
                std::iter::once(r.token.as_str()).chain(r.old_tokens.iter().map(String::as_str))
            })
            .chain(std::iter::once(self.token.as_str()))
            .filter(|t| !t.is_empty())
            .collect();
        fn walk(v: &Value, tokens: &[&str]) -> Value {
            match v {
                Value::String(s) => {
                    let mut s = s.clone();
                    for t in tokens {
                        s = s.replace(t, "[nylorun token redacted]");
                    }
                    Value::String(s)
                }
                Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, tokens)).collect()),
                Value::Object(o) => Value::Object(
                    o.iter()
                        .map(|(k, x)| (k.clone(), walk(x, tokens)))
                        .collect(),
                ),
                other => other.clone(),
            }
        }
        walk(v, &tokens)
    }

    /// Every harness token core knows, and the harness id it is bound to (the scenario's
    /// harness, and in the core role the `otherHarnesses` of `core.start`).
    pub fn credentials(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert(self.token.clone(), self.sc.harness.clone());
        for h in &self.sc.other_harnesses {
            m.insert(harness_token(&self.token, h), h.clone());
        }
        m
    }

    /// The harness the session pinned: its Agent's manifest's harness.id, else nylorun (the
    /// harness role: the scenario's harness).
    pub fn pinned_harness(&self) -> String {
        self.pinned.clone().unwrap_or_else(|| {
            if self.role.routes() {
                NYLORUN.to_string()
            } else {
                self.sc.harness.clone()
            }
        })
    }

    /// `{t: "abort", id}`: the harness cancels one request in flight (a waiting lease).
    pub fn abort(&mut self, conn: usize, id: &Value) {
        if self.breaks(Mutant::AbortIgnored) {
            return;
        }
        self.waiting.retain(|(c, req)| !(*c == conn && req == id));
    }

    fn session_mcp(&mut self, p: &Value) -> Reply {
        if let Err(e) = self.held(p) {
            return e;
        }
        // McpSnapshotSchema is snapshotSchemaVersion 2 (§ 3): another version is no snapshot.
        let version = p.pointer("/snapshot/snapshotSchemaVersion");
        if self.role.strict()
            && p.get("snapshot").is_some_and(Value::is_object)
            && version != Some(&json!(2))
            && !self.breaks(Mutant::SnapshotVersionUnchecked)
        {
            return Reply::Err(
                "invalid",
                format!("session.mcp: snapshotSchemaVersion {version:?} is not 2"),
            );
        }
        // A snapshot another owner recorded first (the harness role's scenario) wins.
        if self.mcp_facts.is_none() {
            if let Some(first) = self
                .sc
                .mcp_recorded
                .as_ref()
                .filter(|_| !self.role.states_facts())
            {
                self.mcp_facts = Some(first.clone());
            }
        }
        if self.mcp_facts.is_none() || self.breaks(Mutant::LastSnapshotWins) {
            let at = match self.breaks(Mutant::SessionMcpMisread) {
                true => "facts",
                false => "snapshot",
            };
            if let Some(s) = p.get(at).filter(|s| s.is_object()) {
                let servers = s.get("servers").cloned().unwrap_or(json!([]));
                self.mcp_facts = Some(json!({ "servers": servers }));
            }
        }
        Reply::Ok(match &self.mcp_facts {
            Some(m) => json!({ "mcp": self.mcp_facts_for_turn(m) }),
            None => json!({}),
        })
    }

    fn definition_file(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let sha = p.get("sha256").and_then(Value::as_str).unwrap_or_default();
        // The manifest lists `sha256:<hex>`; § 3 does not say which form definition.file
        // takes. The reference reads both, its variant bare hex only.
        let bare_only = self.decides(Variant::DefinitionFileBareHex);
        let named = match sha.strip_prefix("sha256:") {
            Some(_) if bare_only => String::new(),
            Some(_) => sha.to_string(),
            None => format!("sha256:{sha}"),
        };
        let skill_file = self
            .skill_files()
            .into_iter()
            .find(|(h, _)| !named.is_empty() && *h == named);
        let Some(text) = self
            .sc
            .files
            .get(&named)
            .and_then(Value::as_str)
            .map(str::to_string)
            .or(skill_file.map(|(_, t)| t))
        else {
            return Reply::Err("not_found", format!("no file {sha}"));
        };
        let chunk = self.runs[i].limit("chunkBytes");
        let offset = p.get("offset").and_then(Value::as_u64).unwrap_or(0);
        // The mutant answers every range from the file's start.
        let offset = if self.breaks(Mutant::DefinitionOffsetIgnored) {
            0
        } else {
            offset
        };
        let length = p.get("length").and_then(Value::as_u64).unwrap_or(chunk);
        if length > chunk && !self.breaks(Mutant::DefinitionRangeUnchecked) {
            return self.over_limit("chunkBytes", chunk, "");
        }
        let bytes = text.as_bytes();
        if offset > bytes.len() as u64 {
            return Reply::Err("invalid", "offset past the end".into());
        }
        let end = (offset + length).min(bytes.len() as u64);
        Reply::Ok(json!({
            "base64": super::b64(&bytes[offset as usize..end as usize]),
            "eof": end == bytes.len() as u64
        }))
    }

    fn output(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(e) => return e,
        };
        // A core that words the completed type its own way knows no other (its schema's enum).
        let done = crate::suites::core_api::freedom::turn_completed(&self.knobs());
        let known = [
            "turn.waiting",
            "turn.failed",
            done.unwrap_or("turn.completed"),
        ];
        if done.is_some() && !p["type"].as_str().is_some_and(|t| known.contains(&t)) {
            return Reply::Err(
                "invalid",
                format!("output: type {} is none of {known:?}", p["type"]),
            );
        }
        let limit = self.runs[i].limit("harnessStateBytes");
        let size = p.get("state").map_or(0, |s| s.to_string().len() as u64);
        if self.breaks(Mutant::OutputKeepsRun) {
            return Reply::Ok(json!({ "cursor": "c" }));
        }
        let custom = self
            .conns
            .get(&self.runs[i].conn)
            .is_some_and(|c| c.pod.is_some());
        if size > limit && !(custom && self.breaks(Mutant::CustomStateUnchecked)) {
            // The turn fails (limit_exceeded): the run is over.
            self.end_run(i, "output");
            return self.over_limit(
                "harnessStateBytes",
                limit,
                &format!(": the state is {size} bytes"),
            );
        }
        if self.role.keeps_transcript() {
            if let Err((e, fails)) = self.fold_transcript(i, p) {
                if fails {
                    self.end_run(i, "output");
                }
                return e;
            }
        }
        if self.role.decides_effects() {
            self.pause_for_approvals(p);
        }
        if let Some(s) = p
            .get("state")
            .filter(|_| !self.breaks(Mutant::StateNotReturned))
        {
            self.last_state = s.clone();
        }
        if self.breaks(Mutant::OutputsExported) && p["type"] == done.unwrap_or("turn.completed") {
            self.events.push(json!({ "type": "artifact.created", "source": "core", "evidence": "recorded", "name": "outputs" }));
        }
        self.end_run(i, "output");
        if self.breaks(Mutant::OutputWithoutCursor) {
            return Reply::Ok(json!({}));
        }
        if self.role.keeps_transcript() {
            return Reply::Ok(json!({ "cursor": self.cursor() }));
        }
        Reply::Ok(json!({ "cursor": format!("c{}", i + 1) }))
    }
}

/// A failed ToolOutcome (§ 4).
pub fn failure(code: &str, message: impl Into<String>) -> Value {
    json!({ "kind": "failed", "code": code, "message": message.into() })
}

/// The effect's id: `effectId`, or `id`.
pub fn effect_id(effect: &Value) -> Option<String> {
    effect
        .get("effectId")
        .or_else(|| effect.get("id"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// The token of another harness id, derived from the scenario's token.
pub fn harness_token(token: &str, harness: &str) -> String {
    format!("{token}-{harness}")
}

/// `mcp:SERVER/TOOL`, `http:TOOL`, or the target's kind.
pub fn target_key(effect: &Value) -> String {
    let t = &effect["target"];
    let s = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default();
    match s("kind") {
        "mcp" => format!("mcp:{}/{}", s("server"), s("tool")),
        "http" => format!("http:{}", s("tool")),
        k => k.to_string(),
    }
}

/// Merge `patch` into `base`: objects recursively, anything else replaced.
pub fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p.clone(),
    }
}

/// A value no harness can guess: tokens differ per run and per process.
pub fn fresh() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

pub type Shared = Arc<std::sync::Mutex<World>>;

pub fn lock(w: &Shared) -> std::sync::MutexGuard<'_, World> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}
