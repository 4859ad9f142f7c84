//! hcpspec's core as state: the runs it offers, its journal, the connections, and the log of
//! everything the harness and hcpspec said. The WebSocket listener (`core.rs`) and the gates
//! (`gates.rs`) share one `World` behind a lock; every decision of the fake core is here.

use super::knobs::{Mutant, Variant};
use super::scenario::{Offer, Renew, Scenario};
use crate::knob::Knobs;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, Notify};
use tokio_tungstenite::tungstenite::Message;

/// What core queues to a connection that does not read: past it, a cap hit, and it is dropped.
pub const QUEUE_BYTES: usize = 64 << 20;

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
    pub heard: Instant,
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
    pub t0: Instant,
    pub sc: Arc<Scenario>,
    pub token: String,
    pub log: Vec<Value>,
    pub runs: Vec<Run>,
    pub journal: BTreeMap<String, Row>,
    pub conns: BTreeMap<usize, Conn>,
    next_offer: usize,
    waiting: Vec<(usize, Value)>,
    turns: usize,
    last_state: Value,
    renews: usize,
    rule_uses: Vec<usize>,
    /// Effect id → the fixture model reply it got.
    pub model_keys: BTreeMap<String, usize>,
    /// Key → (status, body): a re-send under the same key gets the same bytes.
    pub gate_cache: BTreeMap<String, (u16, Value)>,
    pub gate_counts: BTreeMap<String, usize>,
    frame_counts: BTreeMap<String, usize>,
    pub inflight: usize,
    pub cancels: BTreeMap<String, Arc<Notify>>,
    /// Why the scenario cannot be judged for this harness (it offered no tool the model needs).
    pub skip: Option<String>,
    pub acts: mpsc::UnboundedSender<Act>,
    /// Artifacts by id, and uploads in progress.
    pub artifacts: BTreeMap<String, Value>,
    pub uploads: BTreeMap<String, Upload>,
    pub keys_written: BTreeMap<String, String>,
    pub mcp_facts: Option<Value>,
    seq: u64,
    /// The runs to offer, in order: the scenario's, and those a control shim's `session.open` adds.
    pub offers: Vec<Offer>,
    /// A Tenant closed by the control protocol: upgrades are refused 503.
    pub tenant_closed: bool,
    /// Which mutant (the one rule it breaks, core role) or allowed variant (an open point
    /// decided otherwise) of the reference core this is, if any.
    pub knobs: Knobs<Mutant, Variant>,
    /// The core role (the reference core of the core-api suite): core decides tool intents by
    /// its target table and policy (`tools.rs`), counts re-sends, and offers a run whose
    /// connection was lost again at the next advance. The harness role's scenarios script these.
    pub core_role: bool,
    /// The gates' own HTTP client, for the tool calls the Tool Gate forwards: one per world, its
    /// connections on the world's runtime (adapter/client.rs).
    pub http: reqwest::Client,
    /// The session's memories (core role), by path.
    pub memories: BTreeMap<String, String>,
    /// The paths of the memories in the order they were last written (core role).
    memory_order: Vec<String>,
    /// How many times each tool effect was asked while invoking (core role).
    attempts: BTreeMap<String, u64>,
    /// Each tool effect as its intent journaled it (core role): the gate runs only its target.
    pub tool_effects: BTreeMap<String, Value>,
    /// The harness the session pinned at its first `session.open` (core role).
    /// The turn whose output last edited the transcript.
    pub transcript_turn: String,
    pub pinned: Option<String>,
    /// The session's transcript, the outputs' edits folded (core role).
    pub transcript: Vec<Value>,
    /// Model effects whose fate the harness could not learn (core role): uncertain.
    uncertain: BTreeSet<String>,
    /// Tool effects the policy held for a person, by effect id (core role).
    held: BTreeMap<String, Value>,
    /// Completed-or-not model effects whose intent said `purpose: "summary"` (core role).
    summaries: BTreeSet<String>,
    /// The events core wrote of its own (core role): `context.compacted`.
    pub events: Vec<Value>,
    /// The approval interactions of paused turns (core role): `{id, server?, tool, toolName,
    /// answer}`, the id the effect id.
    pub approvals: Vec<Value>,
    /// The scenario is over: runs keep the state they had, whatever the harness does next.
    pub frozen: bool,
    /// The bytes of every message the harness sent, in all its connections (`core::FLOOD_BYTES`).
    pub received: u64,
    /// The messages of the turns not offered yet, by offer (core role): a message sent while a
    /// turn runs waits in the session's queue and joins the next turn's.
    pub inbox: Vec<(usize, Value)>,
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
    pub call_traces: BTreeMap<String, String>,
    /// The host tokens core gave in joins (core role, § 9), and the pod each is for.
    pub host_tokens: BTreeMap<String, usize>,
    /// How many times each pod's host joined (its epoch), by pod.
    pub joins: BTreeMap<usize, u64>,
    /// The pod the session runs in, when its Agent is a pod Agent (core role).
    pub session_pod: Option<usize>,
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
}

impl World {
    pub fn new(sc: Arc<Scenario>, token: String, acts: mpsc::UnboundedSender<Act>) -> World {
        let rules = sc.intents.len();
        let sc_offers = sc.offers.clone();
        World {
            t0: Instant::now(),
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
            offers: sc_offers,
            tenant_closed: false,
            knobs: Knobs::default(),
            core_role: false,
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
            joins: BTreeMap::new(),
            session_pod: None,
        }
    }

    /// Is this the mutant core that breaks `m`'s rule?
    pub fn breaks(&self, m: Mutant) -> bool {
        self.knobs.breaks(m)
    }

    /// Is this the allowed variant of the reference core that decides `v`'s point otherwise?
    /// Remove from an object each member whose mutant is on (the mutants that drop one member
    /// of an answer or a frame).
    pub fn drop_broken(&self, v: &mut Value, members: &[(Mutant, &str)]) {
        for &(m, member) in members {
            if let (true, Some(o)) = (self.breaks(m), v.as_object_mut()) {
                o.remove(member);
            }
        }
    }

    pub fn decides(&self, v: Variant) -> bool {
        self.knobs.decides(v)
    }

    pub fn now(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
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
        if queued > QUEUE_BYTES {
            let _ = c.tx.send(Message::Close(None));
            let cap = QUEUE_BYTES;
            self.record(json!({ "via": "cap", "conn": conn, "what": "queue",
                "reason": format!("the harness does not read core's frames: {queued} bytes queued to it, past {cap}") }));
            self.lost(conn);
            return;
        }
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
        format!("core-{}", self.seq)
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
            if self.core_role {
                self.end_uploads_of(&id);
            }
            self.record(
                json!({ "via": "core", "event": "run-ended", "run": id, "why": why, "conn": conn }),
            );
            self.offer();
        }
    }

    /// A connection is gone: its runs end as connection.lost, its leases are dropped.
    pub fn lost(&mut self, conn: usize) {
        if let Some(c) = self.conns.get_mut(&conn) {
            c.closed = true;
        }
        self.waiting.retain(|(c, _)| *c != conn);
        for i in 0..self.runs.len() {
            if self.runs[i].conn == conn && self.runs[i].ended.is_none() {
                if self.core_role && !self.breaks(Mutant::LostRunNotOfferedAgain) {
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
                    && (!self.core_role
                        || self.breaks(Mutant::RunsOfferedToAnyHarness)
                        || host
                        || (c.pod.is_none() && of_pinned && !custom))
                    && (c.workspace || !self.breaks(Mutant::NoTurnsWithoutWorkspace))
            };
            let Some(pos) = self
                .waiting
                .iter()
                .position(|(c, _)| self.conns.get(c).is_some_and(takes))
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
                    (format!("turn-{}", self.turns), segment)
                }
            };
            let n = self.runs.len() + 1;
            let id = format!("run-{n}");
            let token = format!("nylorun-rt-{n}-{:x}", fresh());
            let mut start = self.turn_start(&turn_id, segment);
            if let Some(o) = self.sc.turn_by_offer.get(offered) {
                merge(&mut start, &Value::Object(o.clone()));
            }
            if self.core_role {
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

    fn turn_start(&self, turn_id: &str, segment: u64) -> Value {
        let prefix = format!("{turn_id}:{segment}:");
        let outcomes: Vec<Value> = self
            .journal
            .iter()
            .filter(|(id, _)| id.starts_with(&prefix) || self.breaks(Mutant::OtherSegmentReplayed))
            .filter(|_| !self.breaks(Mutant::NoReplayedOutcomes))
            .filter_map(|(id, row)| match row {
                // "the completed outcomes of this segment, with their request hashes": the
                // members are not printed, and the variant names no effect id.
                Row::Completed { hash, outcome } if self.decides(Variant::OutcomesByHash) => {
                    Some(json!({ "requestHash": hash, "outcome": outcome }))
                }
                Row::Completed { hash, outcome } => {
                    Some(json!({ "effectId": id, "requestHash": hash, "outcome": outcome }))
                }
                _ => None,
            })
            .collect();
        let mut start = json!({
            "type": "turn.start",
            "engine": if self.breaks(Mutant::EngineMisnamed) { "loop" } else { "agent" },
            "manifest": {
                "id": "scenario-agent",
                "instructions": "You are the agent of an hcpspec scenario.",
                "tools": [], "skills": [], "mcpServers": []
            },
            "definition": { "name": "scenario-agent", "version": 1 },
            "checkpoint": {
                "sessionId": SESSION, "turnId": turn_id, "segment": segment,
                "manifestHash": "sha256:0000", "input": "Hello", "state": self.last_state
            },
            "outcomes": outcomes,
            "transcript": { "cursor": "c0" },
            "routing": { "rootManifest": "scenario-agent" },
            "options": { "fixtureModel": true },
            "limits": {
                "recordEntryBytes": 983040, "modelCallBytes": 33554432,
                "modelFileBytes": 8388608, "toolAnswerBytes": 8388608,
                "harnessStateBytes": 262144, "chunkBytes": 16777216, "folderEntries": 10000
            },
            "model": {
                "provider": "fixture", "id": "fixture",
                "inputs": ["text", "image", "pdf", "office", "audio", "video"],
                "contextWindow": 200000, "maxOutputTokens": 8192
            }
        });
        merge(&mut start, &Value::Object(self.sc.turn.clone()));
        if self.core_role && self.breaks(Mutant::ModelProviderDropped) {
            start["model"].as_object_mut().map(|o| o.remove("provider"));
        }
        if self.core_role && self.breaks(Mutant::FixtureProviderMisnamed) {
            start["model"]["provider"] = json!("anthropic");
        }
        if self.core_role && self.breaks(Mutant::ModelDescriptorWithoutWindow) {
            start["model"]
                .as_object_mut()
                .map(|o| o.remove("contextWindow"));
        }
        if !(self.core_role && self.breaks(Mutant::TenantLimitsNotSent)) {
            merge(&mut start["limits"], &Value::Object(self.sc.limits.clone()));
        }
        if self.core_role {
            // Each mutant sends one default otherwise (a Tenant that sets the limit is unchanged).
            for (m, name, wrong) in [
                (Mutant::LimitDefaultsWrong, "chunkBytes", 8_388_608u64),
                (Mutant::ModelCallDefaultWrong, "modelCallBytes", 16_777_216),
                (Mutant::ModelFileDefaultWrong, "modelFileBytes", 4_194_304),
                (Mutant::ToolAnswerDefaultWrong, "toolAnswerBytes", 4_194_304),
                (
                    Mutant::HarnessStateDefaultWrong,
                    "harnessStateBytes",
                    131_072,
                ),
                (Mutant::FolderEntriesDefaultWrong, "folderEntries", 1_000),
                (Mutant::RecordEntryDefaultWrong, "recordEntryBytes", 524_288),
            ] {
                if self.breaks(m) && !self.sc.limits.contains_key(name) {
                    start["limits"][name] = json!(wrong);
                }
            }
            // recordEntryBytes' default is its ceiling: a Tenant's larger limit is held to it.
            let ceiling = 983_040;
            if start["limits"]["recordEntryBytes"]
                .as_u64()
                .is_some_and(|n| n > ceiling)
                && !self.breaks(Mutant::RecordEntryCeilingUnchecked)
            {
                start["limits"]["recordEntryBytes"] = json!(ceiling);
            }
        }
        // The scenario's turn may not reset what names this segment.
        start["checkpoint"]["turnId"] = json!(turn_id);
        start["checkpoint"]["segment"] = json!(segment);
        if self.core_role && self.breaks(Mutant::CheckpointWithoutSegment) {
            start["checkpoint"]
                .as_object_mut()
                .map(|o| o.remove("segment"));
        }
        if self.core_role && self.breaks(Mutant::CheckpointWithoutManifestHash) {
            start["checkpoint"]
                .as_object_mut()
                .map(|o| o.remove("manifestHash"));
        }
        // The state the harness's last output left, once there was one (else the scenario's).
        if !self.runs.is_empty() {
            start["checkpoint"]["state"] = self.last_state.clone();
        }
        if let Some(m) = &self.mcp_facts {
            if !self.breaks(Mutant::McpFactsNeverSent) {
                start["mcp"] = self.mcp_facts_for_turn(m);
            }
        } else if self.core_role && self.breaks(Mutant::McpFactsBeforeDiscovery) {
            start["mcp"] = json!({ "servers": [] });
        }
        if self.core_role {
            self.agent_facts(&mut start);
        }
        start
    }

    /// The transcript's cursor: it names the transcript as the outputs' edits left it (in the
    /// harness role, as it was: the entries' count).
    pub fn cursor(&self) -> String {
        if self.core_role {
            format!("c{}", self.folds)
        } else {
            format!("c{}", self.transcript.len())
        }
    }

    /// The MCP discovery as a turn sees it (core role): each tool as the server listed it, plus
    /// `enabled`, false when the turn's manifest (the Agent's `disabled`) disables it, and
    /// `deferred` as the manifest sets it (§ 3).
    fn mcp_facts_for_turn(&self, facts: &Value) -> Value {
        let mut facts = facts.clone();
        if !self.core_role {
            return facts;
        }
        let list = |key: &str| -> Vec<&str> {
            self.sc.agent[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect()
        };
        let (disabled, deferred) = (list("disabled"), list("deferred"));
        for server in facts["servers"].as_array_mut().into_iter().flatten() {
            let name = server["name"].as_str().unwrap_or_default().to_string();
            if let (Some(i), true) = (
                server["instructions"].as_str(),
                self.breaks(Mutant::ServerInstructionsCut),
            ) {
                server["instructions"] = json!(i.chars().take(4096).collect::<String>());
            }
            if self.breaks(Mutant::FactsServerWithoutTools) {
                server.as_object_mut().map(|o| o.remove("tools"));
            }
            for tool in server["tools"].as_array_mut().into_iter().flatten() {
                if self.breaks(Mutant::FactsToolMembersDropped) {
                    if let Some(o) = tool.as_object_mut() {
                        o.retain(|k, _| k == "name" || k == "inputSchema");
                    }
                }
                let off = format!("{name}/{}", tool["name"].as_str().unwrap_or_default());
                let enabled =
                    !disabled.contains(&off.as_str()) || self.breaks(Mutant::DisabledToolInFacts);
                let deferred =
                    deferred.contains(&off.as_str()) && !self.breaks(Mutant::DeferredDropped);
                if tool.is_object() {
                    tool["enabled"] = json!(enabled);
                    if deferred {
                        tool["deferred"] = json!(true);
                    }
                }
            }
        }
        facts
    }

    /// The core role: what a TurnStart says of the turn and its offer (§ 3): `type`
    /// (`approval.answer` for the segment after a person answered), the checkpoint's `input`
    /// (the turn's message, or `{kind: "messages"}` for messages that waited in the queue), the
    /// harness section's `loop` passed on unread, and never the Agent's runtime section.
    fn turn_facts(&mut self, start: &mut Value, kind: Offer, offered: usize) {
        if self.breaks(Mutant::RoutingDropped) {
            start.as_object_mut().map(|o| o.remove("routing"));
            return;
        }
        // The gates hold every credential: the mutant hands the harness its tools' endpoints.
        if self.breaks(Mutant::CredentialInTurnStart) {
            start["routing"]["endpoints"] = json!(self.sc.endpoints);
        }
        if kind == Offer::Segment && !self.breaks(Mutant::ApprovalSegmentTypedTurnStart) {
            start["type"] = json!("approval.answer");
        }
        let turn = start["checkpoint"]["turnId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if kind == Offer::Turn {
            let mut messages: Vec<Value> = Vec::new();
            self.inbox.retain(|(at, m)| {
                let mine = *at == offered;
                if mine {
                    messages.push(m.clone());
                }
                !mine
            });
            let input = match messages.len() {
                0 => None,
                1 => messages.pop().map(|mut m| {
                    if self.breaks(Mutant::InputMetadataDropped) {
                        m.as_object_mut().map(|o| o.remove("metadata"));
                    }
                    m
                }),
                _ => Some(json!({ "kind": "messages", "messages": messages })),
            };
            if let Some(input) = input.filter(|_| !self.breaks(Mutant::InputNotTheMessage)) {
                self.turn_inputs.insert(turn.clone(), input);
            }
            if let Some(o) = self.turn_opts.remove(&offered) {
                self.turn_meta.insert(turn.clone(), o);
            }
        }
        // A flow's turn (session.open's flow): engine flow, no agent and no model (§ 3).
        let meta = self.turn_meta.get(&turn).cloned().unwrap_or(Value::Null);
        if meta["flow"] == true {
            start["engine"] = json!("flow");
            let o = start.as_object_mut().expect("object");
            if !self.breaks(Mutant::FlowTurnWithAgent) {
                o.remove("agent");
            }
            if !self.breaks(Mutant::FlowTurnWithModel) {
                o.remove("model");
            }
        }
        if self.sc.no_model && !self.breaks(Mutant::ModelWithoutTenantModel) {
            start.as_object_mut().expect("object").remove("model");
        }
        // The turn's W3C trace context, when it has one.
        if let Some(tp) = meta.get("traceparent") {
            start["trace"] = json!({ "traceparent": tp });
            if let Some(ts) = meta.get("tracestate") {
                start["trace"]["tracestate"] = ts.clone();
            }
            // § 3 never ties TurnStart's trace to the message's: a core may start its own.
            if self.decides(Variant::TraceOfItsOwn) {
                let h = crate::hash::fnv1a64(turn.as_bytes());
                start["trace"] =
                    json!({ "traceparent": format!("00-{h:016x}{:016x}-{h:016x}-01", !h) });
            }
            if self.breaks(Mutant::TraceNotW3c) {
                start["trace"] = json!({ "traceparent": format!("trace-{turn}") });
            }
        }
        start["transcript"]["cursor"] = json!(self.cursor());
        if self.breaks(Mutant::RootManifestDropped) {
            start["routing"]
                .as_object_mut()
                .map(|o| o.remove("rootManifest"));
        }
        if let Some(input) = self.turn_inputs.get(&turn) {
            start["checkpoint"]["input"] = input.clone();
        }
        if self.breaks(Mutant::CheckpointOtherSession) {
            start["checkpoint"]["sessionId"] = json!("sess-other");
        }
        let a = &self.sc.agent;
        if let Some(l) = a.get("loop").filter(|_| !self.breaks(Mutant::LoopDropped)) {
            start["loop"] = l.clone();
        }
        if let (Some(r), true) = (a.get("runtime"), self.breaks(Mutant::RuntimeSectionSent)) {
            start["agent"]["runtime"] = r.clone();
        }
        if self.breaks(Mutant::FixtureModelTextOnly) {
            start["model"]["inputs"] = json!(["text"]);
        }
    }

    /// A memory's `description` from its frontmatter (`---` lines at its head), if any.
    fn memory_description(&self, path: &str) -> Option<String> {
        let text = self.memories.get(path)?;
        let mut lines = text.lines();
        if lines.next()?.trim() != "---" {
            return None;
        }
        lines
            .take_while(|l| l.trim() != "---")
            .find_map(|l| l.strip_prefix("description:"))
            .map(|d| d.trim().to_string())
    }

    /// A skill file's hash as the manifest lists it: `sha256:<hex>` of its bytes.
    fn file_hash(&self, bytes: &[u8]) -> String {
        if self.breaks(Mutant::SkillFileHashWrong) {
            return format!("sha256:{:016x}", crate::hash::fnv1a64(bytes));
        }
        format!("sha256:{}", crate::hash::sha256_hex(bytes))
    }

    /// The Agent's skill files (core role): their hash as the manifest lists it, and their text.
    fn skill_files(&self) -> Vec<(String, String)> {
        self.sc.agent["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|k| k["files"].as_object().into_iter().flatten())
            .map(|(_, t)| {
                let t = t.as_str().unwrap_or_default().to_string();
                (self.file_hash(t.as_bytes()), t)
            })
            .collect()
    }

    /// The core role: TurnStart's `agent` and `memory` as the Agent the core started with sets
    /// them (§ 3).
    fn agent_facts(&self, start: &mut Value) {
        let a = &self.sc.agent;
        if !a.is_object() {
            return;
        }
        let sandbox = a["sandbox"] == true && !self.breaks(Mutant::SandboxNotInTurnStart);
        let mut agent = json!({
            "id": a.get("id").cloned().unwrap_or(json!("scenario-agent")),
            "kind": a.get("kind").cloned().unwrap_or(json!(if sandbox { "virtual" } else { "model" })),
        });
        if sandbox || self.breaks(Mutant::AgentSandboxAlways) {
            let workspace = match self.breaks(Mutant::WorkspaceElsewhere) {
                true => "/home/agent",
                false => "/workspace",
            };
            agent["sandbox"] = json!({ "workspace": workspace });
        }
        if self.breaks(Mutant::TurnAgentWithoutKind) {
            agent.as_object_mut().map(|o| o.remove("kind"));
        }
        if a["selfWake"] == true && !self.breaks(Mutant::SelfWakeNotInTurnStart) {
            agent["selfWake"] = json!(true);
        }
        start["agent"] = agent;
        // The manifest version the session runs: its name is the manifest's id.
        if let Some(name) = a.get("name") {
            if !self.breaks(Mutant::ManifestIdNotItsName) {
                start["manifest"]["id"] = name.clone();
            }
            let version = match self.breaks(Mutant::DefinitionVersionWrong) {
                true => json!(0),
                false => a.get("version").cloned().unwrap_or(json!(1)),
            };
            start["definition"] = json!({ "name": name, "version": version });
        }
        // Its own tools (the HTTP tools it declares) and MCP servers, each server carrying the
        // Agent Plugin that brought it (§ 3: "It is flat").
        if !self.breaks(Mutant::ManifestWithoutTools) {
            start["manifest"]["tools"] =
                a["httpTools"].as_array().cloned().map_or(json!([]), |t| {
                    json!(t.iter().map(|n| json!({ "name": n })).collect::<Vec<_>>())
                });
        }
        if !self.breaks(Mutant::ManifestWithoutServers) {
            let servers: Vec<Value> = a["mcpServers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| {
                    let mut server = json!({ "name": s });
                    let plugin = s.as_str().and_then(|n| a["pluginServers"].get(n));
                    if let Some(p) =
                        plugin.filter(|_| !self.breaks(Mutant::PluginDroppedFromServers))
                    {
                        server["plugin"] = p.clone();
                    }
                    server
                })
                .collect();
            start["manifest"]["mcpServers"] = json!(servers);
        }
        // Each skill's name, description and files, a path to `sha256:<hex>` of its bytes.
        if let Some(skills) = a["skills"].as_array() {
            let listed: Vec<Value> = skills
                .iter()
                .map(|k| {
                    let files: serde_json::Map<String, Value> = k["files"]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(path, text)| {
                            let bytes = text.as_str().unwrap_or_default().as_bytes();
                            (path.clone(), json!(self.file_hash(bytes)))
                        })
                        .collect();
                    let description = match self.breaks(Mutant::SkillDescriptionDropped) {
                        true => Value::Null,
                        false => k["description"].clone(),
                    };
                    let mut skill =
                        json!({ "name": k["name"], "description": description, "files": files });
                    if let Some(p) = k
                        .get("plugin")
                        .filter(|_| !self.breaks(Mutant::PluginDroppedFromSkills))
                    {
                        skill["plugin"] = p.clone();
                    }
                    skill
                })
                .collect();
            start["manifest"]["skills"] = json!(listed);
        }
        // The Agent's manifest: its own instructions (the harness section of its version).
        if let Some(i) = a.get("instructions") {
            start["manifest"]["instructions"] = if self.breaks(Mutant::ManifestInstructionsDropped)
            {
                json!("")
            } else {
                i.clone()
            };
        }
        if !sandbox && self.breaks(Mutant::SandboxSpecWithoutSandbox) {
            start["routing"]["sandbox"] =
                json!({ "spec": a.get("sandboxSpec").cloned().unwrap_or(json!({})) });
        }
        // The session's sandbox: every command's variables, each secret a placeholder.
        if sandbox {
            let env: serde_json::Map<String, Value> = a["environment"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| {
                    let value = match v.get("secret") {
                        Some(secret) if self.breaks(Mutant::SecretInTurnStart) => secret.clone(),
                        Some(_) => json!("nylorun_managed"),
                        None => v.get("value").cloned().unwrap_or(Value::Null),
                    };
                    (k.clone(), value)
                })
                .collect();
            let id = a.get("id").cloned().unwrap_or(json!("scenario-agent"));
            start["routing"]["sandbox"] =
                json!({ "ownerId": id, "environmentId": id, "environment": env });
            if self.breaks(Mutant::EnvironmentIdWrong) {
                start["routing"]["sandbox"]["environmentId"] = json!("env-of-the-runtime");
            }
            if self.breaks(Mutant::SandboxEnvironmentDropped) {
                start["routing"]["sandbox"]
                    .as_object_mut()
                    .map(|o| o.remove("environment"));
            }
            if self.breaks(Mutant::SandboxOwnerDropped) {
                start["routing"]["sandbox"]
                    .as_object_mut()
                    .map(|o| o.remove("ownerId"));
            }
            if let Some(spec) = a
                .get("sandboxSpec")
                .filter(|_| !self.breaks(Mutant::SandboxSpecDropped))
            {
                start["routing"]["sandbox"]["spec"] = spec.clone();
            }
        }
        if a.get("memory").is_none() && self.breaks(Mutant::MemoryAlwaysInTurnStart) {
            start["memory"] = json!({ "access": "read_write", "instructions": "", "index": "" });
        }
        let access = a
            .pointer("/memory/access")
            .filter(|_| !self.breaks(Mutant::MemoryLeftOut));
        if let Some(access) = access {
            // One line per memory, newest first.
            let mut order: Vec<&String> = self
                .memory_order
                .iter()
                .filter(|p| self.memories.contains_key(*p))
                .collect();
            if !self.breaks(Mutant::MemoryIndexOldestFirst) {
                order.reverse();
            }
            // Within the Runtime limit memoryIndexLines: the newest kept, truncated when some
            // were left out.
            let most = self
                .sc
                .limits
                .get("memoryIndexLines")
                .and_then(Value::as_u64);
            let truncated = most.is_some_and(|n| order.len() as u64 > n)
                && !self.breaks(Mutant::MemoryIndexUnlimited);
            if let (Some(n), true) = (most, truncated) {
                order.truncate(n as usize);
            }
            let mut index: Vec<String> = order
                .iter()
                .map(|p| match self.memory_description(p) {
                    Some(d) if !self.breaks(Mutant::MemoryIndexWithoutDescription) => {
                        format!("- {p} — {d}")
                    }
                    _ => format!("- {p}"),
                })
                .collect();
            // ... and within memoryIndexBytes: the oldest lines go first.
            let bytes = self
                .sc
                .limits
                .get("memoryIndexBytes")
                .and_then(Value::as_u64);
            if let (Some(b), false) = (bytes, self.breaks(Mutant::MemoryIndexBytesUnlimited)) {
                while index.join("\n").len() as u64 > b && !index.is_empty() {
                    index.pop();
                }
            }
            start["memory"] = json!({
                "access": match (self.breaks(Mutant::MemoryAccessNotPassed), self.breaks(Mutant::MemoryAccessFlips) && self.turns > 1) {
                    (true, _) => json!("read_write"),
                    (_, true) if access == "read_only" => json!("read_write"),
                    (_, true) => json!("read_only"),
                    _ => access.clone(),
                },
                "instructions": if self.breaks(Mutant::MemoryInstructionsDropped) { json!("") } else { a.pointer("/memory/instructions").cloned().unwrap_or(json!("")) },
                "index": index.join("\n"),
            });
            if truncated {
                start["memory"]["truncated"] = json!(true);
            }
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
            }
        }
    }

    /// The core's answer to one harness request.
    pub fn request(&mut self, conn: usize, id: &Value, m: &str, p: &Value) -> Reply {
        let hello = self.conns.get(&conn).is_some_and(|c| c.hello);
        if m != "hello" && !hello {
            return Reply::Err("invalid", "hello must be the first request".into());
        }
        if self.core_role {
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
        let renamed = self.core_role && self.decides(Variant::OtherWireNames);
        let read;
        let p = match renamed.then(|| super::wire_names::read(m, p)) {
            None => p,
            Some(Ok(q)) => {
                read = q;
                &read
            }
            Some(Err(why)) => return Reply::Err("invalid", why),
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
                    if self.core_role && !self.breaks(Mutant::ReleasedRunNotReplayed) {
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
        // A core of MCP-shaped failures answers a tool call's failure as an MCP error result.
        let reply = match reply {
            Reply::Ok(r) if self.core_role && self.decides(Variant::McpShapedFailures) => {
                Reply::Ok(super::tools::mcp_shaped(r))
            }
            reply => reply,
        };
        match reply {
            Reply::Ok(r) if renamed => Reply::Ok(super::wire_names::answer(m, r)),
            reply => reply,
        }
    }

    fn hello(&mut self, conn: usize, p: &Value) -> Reply {
        if p.get("api") != Some(&json!(5)) && !self.breaks(Mutant::Api4Accepted) {
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
        if name != bound
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

    /// The index of the run a request names, if it is held.
    fn held(&self, p: &Value) -> Result<usize, Reply> {
        let id = p.get("runId").and_then(Value::as_str).unwrap_or_default();
        match self.runs.iter().position(|r| r.id == id) {
            Some(i) if self.runs[i].ended.is_none() => Ok(i),
            Some(_) => Err(Reply::Err("run_not_held", format!("run {id} is over"))),
            None => Err(Reply::Err("run_not_held", format!("no run {id}"))),
        }
    }

    fn renew(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(_) if self.breaks(Mutant::RenewOverOk) => return Reply::Ok(json!({ "ok": true })),
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

    fn intent(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let effect_at = match self.breaks(Mutant::IntentParamsMisread) {
            true => "intent",
            false => "effect",
        };
        let effect = p.get(effect_at).cloned().unwrap_or(Value::Null);
        let Some(eid) = effect_id(&effect) else {
            return Reply::Err("invalid", "the effect names no effectId".into());
        };
        // § 6 says "on its intent" and names no member: the reference reads it beside runId and
        // effect, its variant on the effect object (each core says where: purposeAt).
        let purpose = match self.decides(Variant::PurposeOnTheEffect) {
            true => &effect["purpose"],
            false => &p["purpose"],
        };
        if self.core_role && effect["kind"] == "model" && purpose == "summary" {
            self.summaries.insert(eid.clone());
        }
        if self.core_role && effect["kind"] == "model" && !self.model_calls.contains_key(&eid) {
            let step = effect
                .pointer("/context/invocationId")
                .cloned()
                .unwrap_or(Value::Null);
            self.model_calls.insert(
                eid.clone(),
                json!({ "step": step, "startedAt": self.now() }),
            );
        }
        let hash = p
            .get("requestHash")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(reply) = self.held_id_answered(i, &eid, &hash) {
            return reply;
        }
        if let Some(row) = self.journal.get(&eid) {
            let tool_unchecked =
                effect["kind"] == "tool" && self.breaks(Mutant::ToolReplayDriftUnchecked);
            if row.hash() != hash && !self.breaks(Mutant::NoEffectDrift) && !tool_unchecked {
                return Reply::Err(
                    "effect_drift",
                    format!("effect {eid} was asked with another request hash"),
                );
            }
            return match row.clone() {
                Row::Completed { outcome, .. } => {
                    Reply::Ok(json!({ "status": "completed", "outcome": outcome }))
                }
                Row::Waiting { .. } if self.uncertain.contains(&eid) => {
                    Reply::Ok(json!({ "status": "uncertain" }))
                }
                Row::Waiting { .. } if self.breaks(Mutant::PendingStatusRenamed) => {
                    Reply::Ok(json!({ "status": "waiting" }))
                }
                Row::Waiting { .. } => Reply::Ok(json!({ "status": "pending" })),
                Row::Executing { .. }
                    if self.crashed(i, &eid) || self.interrupted(&eid, &effect) =>
                {
                    let outcome = super::tools::failure(
                        "tool.interrupted",
                        "the call was interrupted: its run ended, or it was re-sent past toolAttempts",
                    );
                    self.journal.insert(
                        eid,
                        Row::Completed {
                            hash,
                            outcome: outcome.clone(),
                        },
                    );
                    Reply::Ok(json!({ "status": "completed", "outcome": outcome }))
                }
                // A re-send of a row still invoking; the mutant takes it for another call.
                Row::Executing { .. } if self.breaks(Mutant::ResendAnsweredPending) => {
                    Reply::Ok(json!({ "status": "pending" }))
                }
                Row::Executing { .. } => {
                    // A previous owner left this call running at a gate: the new owner rejoins.
                    let rejoin = self.core_role
                        && !self.runs[i].executed.contains(&eid)
                        && self.log.iter().any(|e| {
                            e["via"] == "gate"
                                && e["key"] == eid.as_str()
                                && e.get("status").is_none()
                        });
                    self.runs[i].executed.insert(eid);
                    if rejoin {
                        return Reply::Ok(json!({ "status": "execute", "rejoin": true }));
                    }
                    Reply::Ok(json!({ "status": "execute" }))
                }
            };
        }
        let answer = if self.breaks(Mutant::IntentNeverExecute) {
            json!("pending")
        } else if self.core_role
            && effect["kind"] == "model"
            && self.breaks(Mutant::ModelEffectRefused)
        {
            json!({ "completed": super::tools::failure("model.refused", "model calls are refused") })
        } else if self.core_role && effect["kind"] == "tool" {
            self.attempts.insert(eid.clone(), 1);
            self.tool_effects.insert(eid.clone(), effect.clone());
            let before = self.memories.clone();
            let mut memories = std::mem::take(&mut self.memories);
            let d = super::tools::decide(
                &self.sc.agent,
                &self.sc.policy,
                &self.sc.discover,
                &effect,
                &mut memories,
                &self.knobs,
            );
            for (path, _) in memories.iter().filter(|(p, v)| before.get(*p) != Some(*v)) {
                self.memory_order.retain(|q| q != path);
                self.memory_order.push(path.clone());
            }
            self.memories = memories;
            match (self.approved(&eid), d) {
                (Some(true), _) => json!("execute"),
                (Some(false), _) => {
                    let code = if self.breaks(Mutant::ApprovalDenialNotToolDenied) {
                        "tool.rejected"
                    } else {
                        "tool.denied"
                    };
                    json!({ "completed": super::tools::failure(code, "a person denied this call") })
                }
                (None, super::tools::Decision::Execute) => json!("execute"),
                (None, super::tools::Decision::Pending) => {
                    self.held.insert(eid.clone(), effect.clone());
                    json!("pending")
                }
                (None, super::tools::Decision::Completed(o)) => json!({ "completed": o }),
            }
        } else {
            self.rule_for(&effect)
        };
        let (row, reply) = match answer.as_str() {
            Some("pending") if self.breaks(Mutant::PendingStatusRenamed) => {
                (Row::Waiting { hash }, json!({ "status": "waiting" }))
            }
            Some("pending") | Some("uncertain") => {
                (Row::Waiting { hash }, json!({ "status": answer }))
            }
            Some("denied") => {
                let outcome = json!({ "kind": "failed", "code": "tool.denied", "message": "the tool policy denies this call" });
                (
                    Row::Completed {
                        hash,
                        outcome: outcome.clone(),
                    },
                    json!({ "status": "completed", "outcome": outcome }),
                )
            }
            Some("rejoin") => (
                Row::Executing { hash },
                json!({ "status": "execute", "rejoin": true }),
            ),
            Some(_) | None if answer.get("completed").is_some() => {
                let outcome = answer["completed"].clone();
                (
                    Row::Completed {
                        hash,
                        outcome: outcome.clone(),
                    },
                    json!({ "status": "completed", "outcome": outcome }),
                )
            }
            _ => (Row::Executing { hash }, json!({ "status": "execute" })),
        };
        if matches!(row, Row::Executing { .. }) {
            self.runs[i].executed.insert(eid.clone());
        }
        // A tool call of a traced turn: its span context, which the Tool Gate sends on too.
        let mut reply = reply;
        let kind = effect.pointer("/target/kind").and_then(Value::as_str);
        if let (Row::Executing { .. }, true, Some(tp)) = (
            &row,
            self.core_role && matches!(kind, Some("mcp") | Some("http")),
            self.turn_meta
                .get(&self.runs[i].turn_id)
                .and_then(|m| m["traceparent"].as_str()),
        ) {
            // The turn's trace id, a span id of the call's own.
            let trace = tp.split('-').nth(1).unwrap_or("0").to_string();
            let span = format!("{:016x}", crate::hash::fnv1a64(eid.as_bytes()));
            let child = format!("00-{trace}-{span}-01");
            reply["traceparent"] = json!(child);
            self.call_traces.insert(eid.clone(), child);
        }
        self.journal.insert(eid, row);
        Reply::Ok(reply)
    }

    /// A sandbox or harness call still invoking that another run asks for again (core role): the
    /// run that executed it ended (a crash), so it gets tool.interrupted at once (§ 4).
    fn crashed(&self, run: usize, eid: &str) -> bool {
        let kind = self.tool_effects.get(eid).map(|e| &e["target"]["kind"]);
        self.core_role
            && kind.is_some_and(|k| {
                k == "sandbox" || k == "harness" && !self.breaks(Mutant::CrashedHarnessCallExecutes)
            })
            && !self.runs[run].executed.contains(eid)
            && !self.breaks(Mutant::CrashedCallExecutesAgain)
    }

    /// A re-send of a tool call still invoking, past the Runtime limit toolAttempts (the core
    /// role; 3 by default): the call ends as tool.interrupted.
    fn interrupted(&mut self, eid: &str, effect: &Value) -> bool {
        if !self.core_role || effect["kind"] != "tool" || self.breaks(Mutant::NoToolAttemptsCap) {
            return false;
        }
        let limit = self
            .sc
            .limits
            .get("toolAttempts")
            .and_then(Value::as_u64)
            .unwrap_or(if self.breaks(Mutant::ToolAttemptsDefault5) {
                5
            } else {
                3
            });
        let n = self.attempts.entry(eid.to_string()).or_insert(1);
        *n += 1;
        *n > limit
    }

    /// What a harness reports, as core records it: every token core signed (run tokens, the
    /// harness token) replaced by `[nylorun token redacted]`, other values unchanged (the core
    /// role; "What the log records").
    pub fn redacted(&self, v: &Value) -> Value {
        if !self.core_role || self.breaks(Mutant::TokensNotRedacted) {
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

    /// The variant that reads § 7's new segment as asking the held call's own id: once its
    /// approval is answered, that id answers execute (approved) or completed with tool.denied.
    fn held_id_answered(&mut self, run: usize, eid: &str, hash: &str) -> Option<Reply> {
        if !self.core_role || !self.decides(Variant::ApprovalAsksTheHeldId) {
            return None;
        }
        let waiting = matches!(self.journal.get(eid), Some(Row::Waiting { hash: h }) if h == hash);
        let approve = self
            .approvals
            .iter()
            .find(|a| a["id"] == eid)
            .and_then(|a| a["answer"].as_bool())
            .filter(|_| waiting)?;
        let hash = hash.to_string();
        if approve {
            self.journal
                .insert(eid.to_string(), Row::Executing { hash });
            self.runs[run].executed.insert(eid.to_string());
            return Some(Reply::Ok(json!({ "status": "execute" })));
        }
        let code = if self.breaks(Mutant::ApprovalDenialNotToolDenied) {
            "tool.rejected"
        } else {
            "tool.denied"
        };
        let outcome = super::tools::failure(code, "a person denied this call");
        self.journal.insert(
            eid.to_string(),
            Row::Completed {
                hash,
                outcome: outcome.clone(),
            },
        );
        Some(Reply::Ok(
            json!({ "status": "completed", "outcome": outcome }),
        ))
    }

    /// A person's answer to the approval of this call, asked in an earlier segment of its turn
    /// (the same identity: `<turnId>:<any segment>:<kind>:<identity>`). The variant that asks
    /// the held id again takes no answer for another id.
    fn approved(&self, eid: &str) -> Option<bool> {
        if self.decides(Variant::ApprovalAsksTheHeldId) {
            return None;
        }
        let mut parts = eid.splitn(3, ':');
        let (turn, _, rest) = (parts.next()?, parts.next()?, parts.next()?);
        self.approvals.iter().find_map(|a| {
            let id = a["id"].as_str()?;
            let mut q = id.splitn(3, ':');
            let same = q.next() == Some(turn) && q.nth(1) == Some(rest) && id != eid;
            same.then(|| a["answer"].as_bool()).flatten()
        })
    }

    /// The core role: a waiting output's `effectIds` that the policy held become one approval
    /// interaction each, whose id is the effect id.
    fn pause_for_approvals(&mut self, p: &Value) {
        let ids_at = match self.breaks(Mutant::EffectIdsMisread) {
            true => "effects",
            false => "effectIds",
        };
        for id in p[ids_at]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let Some(effect) = self.held.get(id).cloned() else {
                continue;
            };
            if self.breaks(Mutant::ApprovalsNotCreated) {
                continue;
            }
            let t = &effect["target"];
            let mut a = json!({
                "id": if self.breaks(Mutant::ApprovalIdNotEffectId) { json!(format!("approval-{}", self.approvals.len() + 1)) } else { json!(id) },
                "tool": if self.breaks(Mutant::InteractionNamesModelName) { effect["toolName"].clone() } else { t["tool"].clone() },
                "toolName": effect["toolName"], "answer": null,
            });
            if t["kind"] == "mcp" {
                a["server"] = t["server"].clone();
            }
            self.approvals.push(a);
        }
    }

    /// A person answers an approval; once every one is answered, a new segment replays.
    pub fn answer_approval(&mut self, id: &str, approve: bool) -> bool {
        let ignored = self.breaks(Mutant::ApprovalAnswerIgnored);
        let Some(a) = self.approvals.iter_mut().find(|a| a["id"] == id) else {
            return false;
        };
        a["answer"] = json!(approve && !ignored);
        if self.approvals.iter().all(|a| !a["answer"].is_null()) {
            self.offers.push(Offer::Segment);
            self.offer();
        }
        true
    }

    /// A compaction's facts: every `summaryEffectIds` a completed summary call of this turn (else
    /// invalid, and the turn fails); then one `context.compacted` with the facts.
    fn check_compaction(&mut self, run: usize, facts: &Value) -> Result<(), Reply> {
        let turn = format!("{}:", self.runs[run].turn_id);
        let ids: Vec<&str> = facts["summaryEffectIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let bad = ids.iter().find(|id| {
            !(id.starts_with(&turn)
                && self.summaries.contains(**id)
                && matches!(self.journal.get(**id), Some(Row::Completed { .. })))
        });
        if let (Some(id), false) = (bad, self.breaks(Mutant::CompactionUnchecked)) {
            return Err(Reply::Err(
                "invalid",
                format!("{id} is no completed summary call of this turn"),
            ));
        }
        if !self.breaks(Mutant::ContextCompactedNotWritten) {
            let last = ids.last().map(|s| s.to_string());
            let call = last
                .as_ref()
                .and_then(|id| self.model_calls.get(id))
                .filter(|_| !self.breaks(Mutant::CompactionWithoutStep))
                .cloned()
                .unwrap_or(Value::Null);
            self.events.push(json!({
                "type": "context.compacted", "source": "harness", "evidence": "checked",
                "facts": facts, "effectId": last,
                "step": call["step"], "timing": { "startedAt": call["startedAt"], "endedAt": call["endedAt"] },
            }));
        }
        Ok(())
    }

    /// The core role: the session's events as the log records them, each with its `source` and
    /// `evidence`: core's own (`context.compacted`), one `tool.completed` per tool call that
    /// ended, one `artifact.created` per artifact a run wrote (with its call's `callId`).
    pub fn event_log(&self) -> Vec<Value> {
        let mut out = self.events.clone();
        for r in self.tool_rows() {
            let context = self
                .tool_effects
                .get(r["effectId"].as_str().unwrap_or_default())
                .map(|e| e["context"].clone())
                .unwrap_or(Value::Null);
            // A tool effect needs callId and invocationId, or no tool.completed is written.
            let ids = context["callId"].is_string() && context["invocationId"].is_string();
            if !ids && !self.breaks(Mutant::ToolCompletedWithoutCallId) {
                continue;
            }
            let call = context["callId"].clone();
            let eid = r["effectId"].as_str().unwrap_or_default();
            let times = match self.breaks(Mutant::ToolCompletedPerAttempt) {
                true => self.attempts.get(eid).copied().unwrap_or(1),
                false => 1,
            };
            for _ in 1..times {
                out.push(
                    json!({ "type": "tool.completed", "source": "core", "evidence": "journaled",
                             "effectId": r["effectId"], "callId": call }),
                );
            }
            out.push(
                json!({ "type": "tool.completed", "source": "core", "evidence": "journaled",
                             "effectId": r["effectId"], "callId": call }),
            );
        }
        for a in self.artifacts.values().filter(|a| a.get("scope").is_none()) {
            let eid = a["effectId"].as_str().unwrap_or_default();
            let call = if self.breaks(Mutant::ArtifactEventWithoutCallId) {
                Value::Null
            } else {
                self.tool_effects
                    .get(eid)
                    .and_then(|e| e.pointer("/context/callId").cloned())
                    .unwrap_or(Value::Null)
            };
            out.push(
                json!({ "type": "artifact.created", "source": "harness", "evidence": "recorded",
                             "artifactId": a["meta"]["artifactId"], "callId": call }),
            );
        }
        for (m, member) in [
            (Mutant::EventWithoutSource, "source"),
            (Mutant::EventWithoutEvidence, "evidence"),
        ] {
            if self.breaks(m) {
                for e in &mut out {
                    e.as_object_mut().map(|o| o.remove(member));
                }
            }
        }
        out
    }

    /// The core role: one row per tool call that ended (`GET /v1/sessions/{id}/calls/tool`):
    /// the target's kind, its server (an MCP server, or an HTTP tool's URL host) and its
    /// identity (an MCP tool's raw name, an HTTP tool's declared name), and the model's name.
    pub fn tool_rows(&self) -> Vec<Value> {
        self.journal
            .iter()
            .filter(|(_, row)| matches!(row, Row::Completed { .. }))
            .filter(|_| !self.breaks(Mutant::ToolRowDropped))
            .filter_map(|(eid, _)| {
                let e = self.tool_effects.get(eid)?;
                let t = &e["target"];
                let name = |k: &str| t[k].as_str().unwrap_or_default().to_string();
                let server = match t["kind"].as_str() {
                    Some("mcp") if self.breaks(Mutant::ToolRowMcpServerIsTool) => json!(name("tool")),
                    Some("mcp") => json!(name("server")),
                    Some("http") => {
                        let url = self.sc.endpoints.get(&format!("http:{}", name("tool")));
                        let host = url
                            .and_then(|u| u["url"].as_str())
                            .and_then(|u| u.parse::<http::Uri>().ok())
                            .and_then(|u| u.host().map(str::to_string));
                        if self.breaks(Mutant::ToolRowHttpServerIsTool) {
                            json!(name("tool"))
                        } else {
                            json!(host)
                        }
                    }
                    _ => Value::Null,
                };
                let tool = if self.breaks(Mutant::ToolRowNamesModelName) {
                    e["toolName"].clone()
                } else {
                    t["tool"].clone()
                };
                let kind = if self.breaks(Mutant::ToolRowKindIsTheEffects) {
                    e["kind"].clone()
                } else {
                    t["kind"].clone()
                };
                Some(json!({
                    "effectId": eid, "kind": kind, "server": server, "tool": tool,
                    "toolName": e["toolName"], "skill": self.row_skill(e), "plugin": self.row_plugin(e),
                }))
            })
            .collect()
    }

    /// A row's plugin: the Agent Plugin that brought its MCP server or its skill.
    fn row_plugin(&self, effect: &Value) -> Value {
        if self.breaks(Mutant::RowPluginDropped) {
            return Value::Null;
        }
        let a = &self.sc.agent;
        let server = effect.pointer("/target/server").and_then(Value::as_str);
        let by_server = server.and_then(|s| a["pluginServers"].get(s)).cloned();
        let skill = effect.get("skill").and_then(Value::as_str);
        let by_skill = a["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|k| skill.is_some() && k["name"].as_str() == skill)
            .and_then(|k| k.get("plugin").cloned());
        by_server.or(by_skill).unwrap_or(Value::Null)
    }

    /// A row's skill: the skill the intent named, when the agent has it.
    fn row_skill(&self, effect: &Value) -> Value {
        let Some(skill) = effect.get("skill").and_then(Value::as_str) else {
            return Value::Null;
        };
        let has = self.sc.agent["skills"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|k| k["name"] == skill);
        if has || self.breaks(Mutant::RowSkillUnchecked) {
            json!(skill)
        } else {
            Value::Null
        }
    }

    /// The core role: fold an output's TranscriptUpdates (`{keep, entries, length}`, section 6)
    /// into the session's transcript, each within `recordEntryBytes`, tokens redacted. An update
    /// past the limit is refused and nothing of the output is kept.
    fn fold_transcript(&mut self, run: usize, p: &Value) -> Result<(), (Reply, bool)> {
        let limit = self.runs[run].limit("recordEntryBytes");
        // TranscriptEntrySchema's five kinds (§ 6), and nothing else.
        if self.core_role && !self.breaks(Mutant::AnyEntryKind) {
            const KINDS: [&str; 5] = ["input", "candidate", "tool-results", "final", "compaction"];
            let odd = p["transcript"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|u| u["entries"].as_array().into_iter().flatten())
                .find(|e| !e["kind"].as_str().is_some_and(|k| KINDS.contains(&k)));
            if let Some(e) = odd {
                let why = format!(
                    "a transcript entry of kind {} is none of the five",
                    e["kind"]
                );
                return Err((Reply::Err("invalid", why), false));
            }
        }
        let updates = match self.breaks(Mutant::OutputTranscriptIgnored) {
            true => vec![],
            false => p["transcript"].as_array().cloned().unwrap_or_default(),
        };
        let mut t = self.transcript.clone();
        for u in &updates {
            let size = u.to_string().len() as u64;
            if size > limit && !self.breaks(Mutant::TranscriptEntryLimitUnchecked) {
                // § 6 prints no end of the turn for this refusal (unlike § 7's state, "or the
                // turn fails"): the reference ends it, its variant keeps the run held.
                let fails = !self.decides(Variant::OversizedEntryKeepsTheRun);
                let refused = self.over_limit(
                    "recordEntryBytes",
                    limit,
                    &format!(": a transcript update is {size} bytes"),
                );
                return Err((refused, fails));
            }
            let facts_at = match self.breaks(Mutant::CompactionMarkMisread) {
                true => "facts",
                false => "compaction",
            };
            if let Some(facts) = u.get(facts_at).filter(|_| u["kind"] == "compaction") {
                // "a call that is not one is invalid, and the turn fails"
                self.check_compaction(run, facts).map_err(|e| (e, true))?;
            } else if self.breaks(Mutant::CompactionParsedFromEntries)
                && u["entries"]
                    .as_array()
                    .is_some_and(|e| e.iter().any(|x| x["kind"] == "compaction"))
            {
                self.events.push(json!({ "type": "context.compacted", "source": "harness", "evidence": "checked" }));
            }
            let keep = u["keep"].as_u64().unwrap_or(t.len() as u64) as usize;
            if !self.breaks(Mutant::TranscriptNotFolded) {
                t.truncate(keep.min(t.len()));
            }
            let entries_at = match self.breaks(Mutant::TranscriptUpdateMisread) {
                true => "items",
                false => "entries",
            };
            let entries = self.redacted(&u[entries_at]);
            t.extend(entries.as_array().cloned().unwrap_or_default());
        }
        self.transcript = t;
        self.transcript_turn = self.runs[run].turn_id.clone();
        self.folds += 1;
        Ok(())
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
            if self.core_role {
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

    fn rule_for(&mut self, effect: &Value) -> Value {
        let kind = effect
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let target = target_key(effect);
        for (i, rule) in self.sc.intents.iter().enumerate() {
            let m = &rule.matches;
            let ok = m.get("kind").is_none_or(|k| k == kind)
                && m.get("target")
                    .is_none_or(|t| t.as_str() == Some(target.as_str()));
            if ok && rule.times.is_none_or(|n| self.rule_uses[i] < n) {
                self.rule_uses[i] += 1;
                return rule.answer.clone();
            }
        }
        // A runtime tool is core's: "answered completed, never execute" (§ 4).
        if effect.pointer("/target/kind") == Some(&json!("runtime")) {
            let op = effect
                .pointer("/target/operation")
                .cloned()
                .unwrap_or(Value::Null);
            return json!({ "completed": { "ok": true, "result": { "content": [
                { "type": "text", "text": format!("hcpspec's core ran {op}") }
            ] } } });
        }
        json!("execute")
    }

    fn outcome(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let eid = p
            .get("effectId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if self.core_role
            && p.get("value").is_none()
            && self.breaks(Mutant::OutcomeErrorFormRefused)
        {
            return Reply::Err("invalid", "effect.outcome needs a value".into());
        }
        let value_at = match self.breaks(Mutant::OutcomeValueMisread) {
            true => "result",
            false => "value",
        };
        let value = p
            .get(value_at)
            .or_else(|| p.get("error"))
            .cloned()
            .unwrap_or(Value::Null);
        let limit = self.runs[i].limit("recordEntryBytes");
        let size = value.to_string().len() as u64;
        if size > limit && !self.breaks(Mutant::RecordLimitUnchecked) {
            // Shaping the refused value to fit, and recording that, is what § 4 forbids.
            if self.breaks(Mutant::RefusedOutcomeShaped) {
                if let Some(hash) = self.journal.get(eid).map(|r| r.hash().to_string()) {
                    let outcome = json!({ "text": "[shaped to fit]" });
                    self.journal
                        .insert(eid.to_string(), Row::Completed { hash, outcome });
                }
            }
            if self.breaks(Mutant::RefusedOutcomeRecorded) {
                if let Some(hash) = self.journal.get(eid).map(|r| r.hash().to_string()) {
                    let outcome = value.clone();
                    self.journal
                        .insert(eid.to_string(), Row::Completed { hash, outcome });
                }
            }
            return self.over_limit(
                "recordEntryBytes",
                limit,
                &format!(": the value is {size} bytes"),
            );
        }
        let Some(row) = self.journal.get(eid).cloned() else {
            return Reply::Err("invalid", format!("effect {eid} was not journaled"));
        };
        let value = self.redacted(&value);
        // The core role: `{error}` when the harness could not learn what happened. A tool call
        // whose fate is unknown fails to the model; a model call becomes uncertain.
        let unknown = self.core_role && p.get("value").is_none() && p.get("error").is_some();
        if unknown && !self.breaks(Mutant::UnknownFateRecordedAsValue) {
            let hash = row.hash().to_string();
            if eid.split(':').nth(2) == Some("model") {
                self.journal.insert(eid.to_string(), Row::Waiting { hash });
                self.uncertain.insert(eid.to_string());
                return Reply::Ok(json!({ "status": "uncertain" }));
            }
            let outcome = if self.breaks(Mutant::UnknownFateSucceeds) {
                json!({ "kind": "ok", "value": null })
            } else {
                super::tools::failure("tool.unknown-outcome", "the call's fate is unknown")
            };
            self.journal.insert(
                eid.to_string(),
                Row::Completed {
                    hash,
                    outcome: outcome.clone(),
                },
            );
            return Reply::Ok(json!({ "status": "completed", "outcome": outcome }));
        }
        match row {
            Row::Completed { outcome, .. } => {
                Reply::Ok(json!({ "status": "completed", "outcome": outcome }))
            }
            Row::Executing { .. } | Row::Waiting { .. }
                if self.breaks(Mutant::OutcomeNotRecorded) =>
            {
                Reply::Ok(json!({ "status": "completed", "outcome": value }))
            }
            Row::Executing { hash } | Row::Waiting { hash } => {
                self.journal.insert(
                    eid.to_string(),
                    Row::Completed {
                        hash,
                        outcome: value.clone(),
                    },
                );
                let at = self.now();
                if let Some(c) = self.model_calls.get_mut(eid) {
                    c["endedAt"] = json!(at);
                }
                if self.summaries.contains(eid) && self.breaks(Mutant::SummaryMessageRecorded) {
                    self.events.push(json!({ "type": "message.assistant", "source": "harness", "evidence": "claimed", "effectId": eid }));
                }
                if self.breaks(Mutant::OutcomeAnswerEmpty) {
                    return Reply::Ok(json!({ "status": "completed" }));
                }
                Reply::Ok(json!({ "status": "completed", "outcome": value }))
            }
        }
    }

    fn session_mcp(&mut self, p: &Value) -> Reply {
        if let Err(e) = self.held(p) {
            return e;
        }
        // A snapshot another owner recorded first (the harness role's scenario) wins.
        if self.mcp_facts.is_none() {
            if let Some(first) = self.sc.mcp_recorded.as_ref().filter(|_| !self.core_role) {
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
        if self.core_role {
            if let Err((e, fails)) = self.fold_transcript(i, p) {
                if fails {
                    self.end_run(i, "output");
                }
                return e;
            }
        }
        if self.core_role {
            self.pause_for_approvals(p);
        }
        if let Some(s) = p
            .get("state")
            .filter(|_| !self.breaks(Mutant::StateNotReturned))
        {
            self.last_state = s.clone();
        }
        if self.breaks(Mutant::OutputsExported) && p["type"] == "turn.completed" {
            self.events.push(json!({ "type": "artifact.created", "source": "core", "evidence": "recorded", "name": "outputs" }));
        }
        self.end_run(i, "output");
        if self.breaks(Mutant::OutputWithoutCursor) {
            return Reply::Ok(json!({}));
        }
        if self.core_role {
            return Reply::Ok(json!({ "cursor": self.cursor() }));
        }
        Reply::Ok(json!({ "cursor": format!("c{}", i + 1) }))
    }
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
pub(super) fn fresh() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

pub type Shared = Arc<std::sync::Mutex<World>>;

pub fn lock(w: &Shared) -> std::sync::MutexGuard<'_, World> {
    w.lock().unwrap_or_else(|p| p.into_inner())
}
