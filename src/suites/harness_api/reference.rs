//! hcpspec's reference harness: a harness written from spec 004 alone, in Rust, speaking to
//! the core over a real loopback WebSocket and to the gates over real HTTP, exactly as a
//! harness in any language would under the launch contract. `Knobs` break one rule (a mutant,
//! which a MUST scenario of its own section must fail) or decide an open point otherwise (a
//! variant, which every MUST scenario must pass).

use super::env::LaunchEnv;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

crate::mutants! {
    /// Mutants of the reference harness: name, the section whose MUST scenarios must catch it,
    /// and the rule it breaks.
    pub enum Mutant {
        SilentWhileWaiting = "silent-while-waiting", ["1"],
            "sends nothing, not even its renewals, while a gate call is in flight";
        TwoMessagesPerFrame = "two-messages-per-frame", ["1"],
            "sends its first lease and a ping in one text frame";
        BinaryFrames = "binary-frames", ["1"],
            "sends its frames as binary WebSocket messages";
        NoApiHeader = "no-api-header", ["1"],
            "upgrades without Nylorun-Harness-Api: 1";
        Api4 = "api-4", ["11"],
            "says hello with api 4";
        HelloNotFirst = "hello-not-first", ["2"],
            "asks for a lease before it says hello";
        WrongName = "wrong-name", ["2"],
            "says hello as `nylorun`, not the credential's harness id";
        RenewRefusalIgnored = "renew-refusal-ignored", ["2"],
            "keeps running a run after lease.renew answered {ok: false}";
        OldTokenKept = "old-token-kept", ["2"],
            "keeps the first run token after a renewal switched it";
        NoLeaseAfterRun = "no-lease-after-run", ["2"],
            "takes one run and never asks for another";
        OutcomesAskedAgain = "outcomes-asked-again", ["3"],
            "asks core again for outcomes TurnStart already carries";
        InputStringOnly = "input-string-only", ["3"],
            "fails a turn whose input is not a string";
        InputObjectOnly = "input-object-only", ["3"],
            "fails a turn whose input is a string";
        MessagesMerged = "messages-merged", ["3"],
            "writes a messages input as one input entry";
        UnknownLimitRefused = "unknown-limit-refused", ["3"],
            "fails a turn whose limits carry one it does not know";
        ModelCallUnbounded = "model-call-unbounded", ["3"],
            "pads every model call past modelCallBytes";
        FixtureModelBypassed = "fixture-model-bypassed", ["3"],
            "answers model calls itself when the fixture model is on";
        HttpToolsRunLocally = "http-tools-run-locally", ["3"],
            "runs HTTP tools itself instead of through the Tool Gate";
        NoTraceparent = "no-traceparent", ["3"],
            "sends no traceparent on gate calls when TurnStart has a trace";
        LongToolNames = "long-tool-names", ["3"],
            "names MCP tools server__tool with no 64-character ceiling";
        DisabledToolsOffered = "disabled-tools-offered", ["3"],
            "offers the model MCP tools the turn disabled";
        NoMcpDiscovery = "no-mcp-discovery", ["3"],
            "never discovers the session's MCP servers nor records session.mcp";
        GateBeforeIntent = "gate-before-intent", ["4"],
            "calls the gate before its intent is answered";
        IdsByCallOrder = "ids-by-call-order", ["4"],
            "names effects by a counter of calls, so a run that starts over asks other ids";
        HashChangesOnReplay = "hash-changes-on-replay", ["4"],
            "puts the run id in the request hash";
        RefetchCompleted = "refetch-completed", ["4"],
            "calls the gate for an effect whose intent was answered completed";
        NoWaitingOnPending = "no-waiting-on-pending", ["4"],
            "takes a pending intent as done and completes the turn";
        ModelIntentWithInput = "model-intent-with-input", ["4"],
            "sends a model intent with its input";
        ChunkTooLarge = "chunk-too-large", ["4b"],
            "uploads a spilled result in one chunk past limits.chunkBytes";
        NoIdempotencyKey = "no-idempotency-key", ["5"],
            "sends gate calls without Idempotency-Key";
        CommitAfterWholeBegin = "commit-after-whole-begin", ["4b"],
            "commits again an upload that a begin with base64 already committed";
        NoSpill = "no-spill", ["5b"],
            "reports a tool result past recordEntryBytes whole, never spilling it";
        SpillWithoutEffectId = "spill-without-effect-id", ["5b"],
            "spills a result without the call's effectId";
        BadTranscriptKind = "bad-transcript-kind", ["6"],
            "writes transcript entries of a kind the spec does not list";
        NoState = "no-state", ["7"],
            "ends a segment with no state";
        StateTooLarge = "state-too-large", ["7"],
            "returns state past limits.harnessStateBytes";
        NoGateCancel = "no-gate-cancel", ["8"],
            "on cancel, leaves its gate calls running";
        NoCancelledOutput = "no-cancelled-output", ["8"],
            "on cancel, releases the run instead of reporting turn.failed";
        StepResultsUnshaped = "step-results-unshaped", ["5b"],
            "writes a step's results whole, however large their one entry";
        CancelAnyRun = "cancel-any-run", ["8"],
            "stops its run on a cancel that names another run";
        NoReleaseOnShutdown = "no-release-on-shutdown", ["8"],
            "on shutdown, reports turn.failed instead of lease.release";
        HelloDeclaresTools = "hello-declares-tools", ["2"],
            "declares its tools in hello";
        ContinueRefused = "continue-refused", ["3"],
            "fails a turn whose input is {kind: \"continue\"}";
        OfferedNameCalled = "offered-name-called", ["3"],
            "calls an MCP tool by the name it offered the model, not its raw name on the server";
        NoInvocationId = "no-invocation-id", ["4"],
            "sends a model intent without invocationId";
        NoCallId = "no-call-id", ["4"],
            "sends a tool intent without the model's callId";
        EffectIdWithoutSegment = "effect-id-without-segment", ["4"],
            "names effects <turnId>:<kind>:<identity>, without the segment";
        ExecutionIdIsRun = "execution-id-is-run", ["5"],
            "sends the run id as the ModelCall's executionId, not the session id";
        WaitingWithoutIds = "waiting-without-ids", ["7"],
            "ends a waiting segment with no effectIds";
        HttpCancelRoute = "http-cancel-route", ["8"],
            "cancels an HTTP call on http-calls/{key}/cancel, not tool-calls/{key}/cancel";
        NeverConnects = "never-connects", ["1"],
            "never opens its WebSocket to core's harness listener";
        ReusedRequestId = "reused-request-id", ["1"],
            "before its first output, sends a lease twice under one id (both waiting: core has no run to offer)";
        FrameOfAnotherShape = "frame-of-another-shape", ["1"],
            "sends its first lease as a frame of no FrameSchema kind ({t: \"request\"})";
        ReleaseWithoutReason = "release-without-reason", ["2"],
            "sends lease.release without its reason";
        OutcomeWithoutRunId = "outcome-without-run-id", ["4"],
            "sends effect.outcome without runId";
        RejoinNotSent = "rejoin-not-sent", ["4"],
            "records a call answered {execute, rejoin: true} as an error instead of sending it again";
        ToolFailureAsGateError = "tool-failure-as-gate-error", ["4"],
            "takes a tool's {ok: false, error} answer as a gate error, recording no outcome";
        ToolIntentUntargeted = "tool-intent-untargeted", ["4"],
            "sends tool intents without toolName and target";
        ChunksReversed = "chunks-reversed", ["4b"],
            "uploads a spilled result's chunks last to first";
        SpillNamesAnotherEffect = "spill-names-another-effect", ["4b"],
            "spills a result with an effectId the run never journaled";
        McpServerByUrl = "mcp-server-by-url", ["5"],
            "names MCP servers by a URL, not {serverName}";
        ModelCallWithoutInvocationId = "model-call-without-invocation-id", ["5"],
            "sends model-calls bodies without invocationId";
        UpdatesWithoutLength = "updates-without-length", ["6"],
            "reports TranscriptUpdates without length";
        OutputWithoutTranscript = "output-without-transcript", ["7"],
            "ends a segment with an output that carries no transcript";
        CompletedLeftHeld = "completed-left-held", ["7"],
            "never sends the output of a completed segment, and holds its run";
        // Issue 24: every harness-bound sentence, one mutant each.
        GateBodyPast64Mib = "gate-body-past-64-mib", ["1"],
            "sends its first model call with a body past 64 MiB";
        LeaseInputIgnored = "lease-input-ignored", ["2"],
            "takes the run of lease's answer but not its input (TurnStart), and fails the turn for want of one";
        ReleaseAfterOutput = "release-after-output", ["2"],
            "on shutdown, reports turn.failed and then gives the run back with lease.release";
        RenewsAtAThird = "renews-at-a-third", ["2"],
            "renews a held run every three renewEveryMs";
        DisabledToolsRedescribed = "disabled-tools-redescribed", ["3"],
            "offers the model MCP tools the turn disabled, under a description of its own";
        OwnListingKept = "own-listing-kept", ["3"],
            "runs with the tools its own discovery listed, not the facts session.mcp answered";
        CompletedOutcomeDropped = "completed-outcome-dropped", ["4"],
            "on a completed answer, goes on with an empty result, not the journal's outcome";
        DenialFailsTurn = "denial-fails-turn", ["4"],
            "fails the turn when a tool call is answered completed with a tool.denied failure";
        HashOfIdOnly = "hash-of-id-only", ["4"],
            "hashes the effect id alone, not the whole request";
        ModelHashWithoutCall = "model-hash-without-call", ["4"],
            "hashes a model intent without its ModelCall as input";
        UnknownFateAsValue = "unknown-fate-as-value", ["4"],
            "records a tool call whose gate answer it could not read as a value, not {error}";
        SpillNamesTheModelEffect = "spill-names-the-model-effect", ["4b"],
            "spills a result with its step's model effect id, not the call's";
        ResultsSplit = "results-split", ["5b"],
            "writes each of a step's tool results as a tool-results entry of its own";
        UpdatesUnpacked = "updates-unpacked", ["6"],
            "reports a segment's edits as one TranscriptUpdate, however large";
        TranscriptReadPerStep = "transcript-read-per-step", ["6"],
            "reads the transcript again before every model step";
        OutputTwice = "output-twice", ["7"],
            "sends a completed segment's output twice";
        ReplayRefused = "replay-refused", ["8"],
            "fails a segment another owner started (a TurnStart carrying outcomes)";
        WrongBearer = "wrong-bearer", ["9"],
            "connects with its harness name, not the token it was given, as the WebSocket bearer";
        OtherPath = "other-path", ["11"],
            "upgrades on /nylorun/harness/v2, not /nylorun/harness/v1";
        LostHopNotAskedAgain = "lost-hop-not-asked-again", ["4"],
            "records a tool call whose gate hop was lost as {error}, never asking its intent again";
        SandboxToolsAlways = "sandbox-tools-always", ["3"],
            "offers the model bash, a sandbox tool, when TurnStart's agent has no sandbox";
        ScheduleWakeAlways = "schedule-wake-always", ["3"],
            "offers the model schedule_wake when TurnStart's agent has no selfWake";
        MemoryWritesReadOnly = "memory-writes-read-only", ["3"],
            "offers the memory tool's write commands when memory.access is read_only";
        SummaryWithoutPurpose = "summary-without-purpose", ["6"],
            "compacts as `compacts` does, but sends its summary call's intent without purpose: \"summary\"";
        BinaryPartsUnstored = "binary-parts-unstored", ["5b"],
            "passes an MCP image, audio or blob part on in the result, never storing it";
        ImageToABlindModel = "image-to-a-blind-model", ["5b"],
            "sends a stored image to the model as a file though turn.start.model does not read images";
        CompactionUnmarked = "compaction-unmarked", ["6"],
            "compacts as `compacts` does, but leaves the edit that replaced the history unmarked (no kind: \"compaction\")";
    }
}

crate::variants! {
    /// Allowed variants: open points decided otherwise.
    pub enum Variant {
        OtherHash = "other-hash",
            "another effectRequestHash algorithm (the spec does not print one)";
        OtherPrompt = "other-prompt",
            "another ModelCall prompt shape (the spec does not print one)";
        OtherTranscript = "other-transcript",
            "other transcript entry fields (TranscriptEntrySchema is not printed)";
        OtherIdentity = "other-identity",
            "another effect identity scheme (stable, never by call order)";
        OtherPing = "other-ping",
            "answers core's ping with a WebSocket pong control frame, not a ping frame";
        CallsReversed = "calls-reversed",
            "runs a step's tool calls last to first on every other run, so a segment that starts over asks its effects in another order (the spec fixes their ids, not their order)";
        NoPingAnswer = "no-ping-answer",
            "never answers core's ping: the spec does not say a harness answers one";
        OtherToolNames = "other-tool-names",
            "names tools by a hash of server and tool (tool naming is the harness's)";
        Compacts = "compacts",
            "compacts once the history passes half of model.contextWindow (≈4 bytes a token): a summary call marked purpose: \"summary\", the history replaced by a compaction entry (whether and when to compact is the harness's)";
    }
}

/// Which mutant or variant of the reference harness this is, if any.
pub type Knobs = crate::knob::Knobs<Mutant, Variant>;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, Value>>>>>;

/// A task that ends with its owner: a harness killed mid-run leaves nothing running.
struct Owned(tokio::task::JoinHandle<()>);

impl Drop for Owned {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The harness's side of the WebSocket.
struct Chan {
    tx: mpsc::UnboundedSender<Message>,
    pending: Pending,
    next: AtomicU64,
    k: Knobs,
    sent_lease: AtomicBool,
    /// Gate calls in flight, and what a harness blocked by them holds back (a mutant's).
    gating: AtomicU64,
    held: Mutex<Vec<Message>>,
}

impl Chan {
    fn send(&self, frame: Value) {
        let mut frame = frame;
        if self.k.breaks(Mutant::FrameOfAnotherShape)
            && frame["m"] == "lease"
            && !self.sent_lease.swap(true, Ordering::Relaxed)
        {
            frame["t"] = json!("request");
        }
        let text = frame.to_string();
        let msg = if self.k.breaks(Mutant::BinaryFrames) {
            Message::binary(text.into_bytes())
        } else if self.k.breaks(Mutant::TwoMessagesPerFrame)
            && frame["m"] == "lease"
            && !self.sent_lease.swap(true, Ordering::Relaxed)
        {
            Message::text(format!("{text}{}", json!({ "t": "ping" })))
        } else {
            Message::text(text)
        };
        if self.k.breaks(Mutant::SilentWhileWaiting) && self.gating.load(Ordering::SeqCst) > 0 {
            self.held
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(msg);
            return;
        }
        let _ = self.tx.send(msg);
    }

    /// A gate call ends: a harness blocked by it sends what it held back.
    fn gated(&self) {
        if self.gating.fetch_sub(1, Ordering::SeqCst) == 1 {
            for m in std::mem::take(&mut *self.held.lock().unwrap_or_else(|p| p.into_inner())) {
                let _ = self.tx.send(m);
            }
        }
    }

    async fn req(&self, m: &str, p: Value) -> Result<Value, Value> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        self.send(json!({ "t": "req", "id": id, "m": m, "p": p }));
        rx.await.unwrap_or_else(|_| {
            Err(json!({ "code": "unavailable", "message": "connection closed" }))
        })
    }
}

/// Where core's cancel messages go: the run held now.
type Cancels = Arc<Mutex<Option<(String, mpsc::UnboundedSender<String>)>>>;

/// The harness: connect, hello, then take runs one at a time until the connection closes.
pub async fn run(env: LaunchEnv, k: Knobs) {
    let _ = harness(env, k).await;
}

async fn harness(env: LaunchEnv, k: Knobs) -> Result<(), String> {
    if k.breaks(Mutant::NeverConnects) {
        return Ok(());
    }
    let url = if k.breaks(Mutant::OtherPath) {
        env.core_url
            .replace("/nylorun/harness/v1", "/nylorun/harness/v2")
    } else {
        env.core_url.clone()
    };
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| e.to_string())?;
    let h = request.headers_mut();
    h.insert(
        "authorization",
        format!(
            "Bearer {}",
            if k.breaks(Mutant::WrongBearer) {
                &env.name
            } else {
                &env.token
            }
        )
        .parse()
        .map_err(|_| "bad token")?,
    );
    if !k.breaks(Mutant::NoApiHeader) {
        h.insert("nylorun-harness-api", "1".parse().expect("static"));
    }
    let (ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| e.to_string())?;
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
    let _writer = Owned(tokio::spawn(async move {
        while let Some(m) = rx.recv().await {
            if sink.send(m).await.is_err() {
                break;
            }
        }
    }));
    let chan = Arc::new(Chan {
        tx: tx.clone(),
        pending: Arc::default(),
        next: AtomicU64::new(1),
        k,
        sent_lease: AtomicBool::new(false),
        gating: AtomicU64::new(0),
        held: Mutex::default(),
    });
    let cancels: Cancels = Arc::default();
    let _reader = {
        let chan = chan.clone();
        let cancels = cancels.clone();
        Owned(tokio::spawn(async move {
            while let Some(Ok(m)) = source.next().await {
                let Message::Text(t) = m else { continue };
                let Ok(f) = serde_json::from_str::<Value>(t.as_str()) else {
                    continue;
                };
                match f["t"].as_str() {
                    Some("res") => {
                        let id = f["id"].as_u64().unwrap_or(0);
                        let waiter = chan.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                        if let Some(w) = waiter {
                            let _ = w.send(if f["ok"] == true { Ok(f["r"].clone()) } else { Err(f["e"].clone()) });
                        }
                    }
                    Some("ping") if k.decides(Variant::NoPingAnswer) => {}
                    Some("ping") if k.decides(Variant::OtherPing) => {
                        let _ = chan.tx.send(Message::Pong(Default::default()));
                    }
                    Some("ping") => chan.send(json!({ "t": "ping" })),
                    Some("msg") if f["m"] == "cancel" => {
                        let c = cancels.lock().unwrap_or_else(|p| p.into_inner());
                        if let Some((run, tx)) = c.as_ref() {
                            if f["p"]["runId"] == run.as_str() || k.breaks(Mutant::CancelAnyRun) {
                                let _ = tx.send(f["p"]["reason"].as_str().unwrap_or("cancel").to_string());
                            }
                        }
                    }
                    // A request of core's this harness does not serve (workspace.*: optional).
                    Some("req") => chan.send(json!({
                        "t": "res", "id": f["id"], "ok": false,
                        "e": { "code": "invalid", "message": "this harness serves no core requests" }
                    })),
                    _ => {}
                }
            }
            // The connection is gone: every request waiting fails.
            chan.pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clear();
        }))
    };
    if k.breaks(Mutant::HelloNotFirst) {
        // Sent before hello, in order; its answer has no waiter.
        let id = chan.next.fetch_add(1, Ordering::Relaxed);
        chan.send(json!({ "t": "req", "id": id, "m": "lease", "p": {} }));
    }
    let mut said = json!({
        "api": if k.breaks(Mutant::Api4) { 4 } else { 5 },
        "name": if k.breaks(Mutant::WrongName) { "nylorun".to_string() } else { env.name.clone() },
        "version": env!("CARGO_PKG_VERSION"),
        "features": {}
    });
    if k.breaks(Mutant::HelloDeclaresTools) {
        said["tools"] = json!([{ "name": "search" }]);
    }
    let hello = chan.req("hello", said).await.map_err(|e| e.to_string())?;
    let renew_every = hello["renewEveryMs"].as_u64().unwrap_or(1000).max(1);
    // The reference harness's own client, its connections on this runtime (adapter/client.rs).
    let http = crate::adapter::client::new_client();
    let counter = Arc::new(AtomicU64::new(0));
    let mut taken = 0u64;
    loop {
        let lease = chan
            .req("lease", json!({}))
            .await
            .map_err(|e| e.to_string())?;
        let mut run = Run::new(&env, &lease, chan.clone(), http.clone(), k, counter.clone());
        run.taken = taken;
        taken += 1;
        run.hold(renew_every, &cancels).await;
        if k.breaks(Mutant::NoLeaseAfterRun) {
            std::future::pending::<()>().await;
        }
    }
}

/// One run the harness holds.
#[derive(Clone)]
struct Run {
    id: String,
    token: Arc<Mutex<String>>,
    turn: String,
    segment: u64,
    session: String,
    start: Value,
    gates: String,
    chan: Arc<Chan>,
    http: reqwest::Client,
    k: Knobs,
    /// Gate calls in flight: key → the route family of its cancel route.
    inflight: Arc<Mutex<BTreeMap<String, &'static str>>>,
    counter: Arc<AtomicU64>,
    /// How many runs this connection took before this one.
    taken: u64,
    /// The transcript's length as this segment read it: what its edits keep.
    kept: Arc<AtomicU64>,
    /// The compaction facts of the edit that replaced the history, once this segment compacted.
    compacted: Arc<Mutex<Option<Value>>>,
}

enum End {
    Completed {
        text: String,
        entries: Vec<Value>,
        steps: u64,
    },
    Waiting {
        ids: Vec<String>,
        entries: Vec<Value>,
        steps: u64,
    },
    Failed(Value),
}

enum Effected {
    Done(Value),
    Waiting,
}

impl Run {
    fn new(
        env: &LaunchEnv,
        lease: &Value,
        chan: Arc<Chan>,
        http: reqwest::Client,
        k: Knobs,
        counter: Arc<AtomicU64>,
    ) -> Run {
        let g = &lease["run"];
        let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let start = if k.breaks(Mutant::LeaseInputIgnored) {
            json!({})
        } else {
            lease["input"].clone()
        };
        Run {
            id: s(&g["runId"]),
            token: Arc::new(Mutex::new(s(&g["token"]))),
            turn: s(&start["checkpoint"]["turnId"]),
            segment: start["checkpoint"]["segment"].as_u64().unwrap_or(0),
            session: s(&start["checkpoint"]["sessionId"]),
            start,
            gates: env.gates_url.trim_end_matches('/').to_string(),
            chan,
            http,
            k,
            inflight: Arc::default(),
            counter,
            taken: 0,
            kept: Arc::default(),
            compacted: Arc::default(),
        }
    }

    fn limit(&self, name: &str) -> u64 {
        self.start["limits"][name].as_u64().unwrap_or(u64::MAX)
    }

    /// Hold the run: renew it, run its segment, and end it with one output or a release.
    async fn hold(self, renew_every: u64, cancels: &Cancels) {
        let (ctx, mut crx) = mpsc::unbounded_channel();
        *cancels.lock().unwrap_or_else(|p| p.into_inner()) = Some((self.id.clone(), ctx));
        let (refused_tx, mut refused) = oneshot::channel::<()>();
        let _renewer = {
            let r = self.clone();
            Owned(tokio::spawn(async move {
                let mut refused_tx = Some(refused_tx);
                loop {
                    let every = if r.k.breaks(Mutant::RenewsAtAThird) {
                        3 * renew_every
                    } else {
                        renew_every
                    };
                    tokio::time::sleep(Duration::from_millis(every)).await;
                    match r.chan.req("lease.renew", json!({ "runId": r.id })).await {
                        Ok(a) if a["ok"] == false => {
                            if !r.k.breaks(Mutant::RenewRefusalIgnored) {
                                if let Some(t) = refused_tx.take() {
                                    let _ = t.send(());
                                }
                                return;
                            }
                        }
                        Ok(a) => {
                            if let Some(t) = a["token"].as_str() {
                                if !r.k.breaks(Mutant::OldTokenKept) {
                                    *r.token.lock().unwrap_or_else(|p| p.into_inner()) =
                                        t.to_string();
                                }
                            }
                        }
                        Err(_) => {}
                    }
                }
            }))
        };
        let work = self.segment();
        tokio::pin!(work);
        tokio::select! {
            end = &mut work => {
                if self.k.breaks(Mutant::CompletedLeftHeld) && matches!(end, End::Completed { .. }) {
                    std::future::pending::<()>().await;
                }
                let twice = self.k.breaks(Mutant::OutputTwice) && matches!(end, End::Completed { .. });
                let p = self.output(end).await;
                if twice {
                    let _ = self.chan.req("output", p).await;
                }
            }
            reason = crx.recv() => {
                let reason = reason.unwrap_or_else(|| "cancel".into());
                let release = matches!(reason.as_str(), "shutdown" | "ownership.lost");
                if release && self.k.breaks(Mutant::ReleaseAfterOutput) {
                    self.output(End::Failed(json!({ "status": "cancelled", "reason": reason }))).await;
                    let _ = self.chan.req("lease.release", json!({ "runId": self.id, "reason": reason })).await;
                } else if release && !self.k.breaks(Mutant::NoReleaseOnShutdown) || !release && self.k.breaks(Mutant::NoCancelledOutput) {
                    let mut p = json!({ "runId": self.id, "reason": reason });
                    if self.k.breaks(Mutant::ReleaseWithoutReason) {
                        p.as_object_mut().expect("object").remove("reason");
                    }
                    let _ = self.chan.req("lease.release", p).await;
                } else {
                    if !release && !self.k.breaks(Mutant::NoGateCancel) {
                        self.cancel_gate_calls().await;
                    }
                    self.output(End::Failed(json!({ "status": "cancelled", "reason": reason }))).await;
                }
            }
            _ = &mut refused => {}
        }
        *cancels.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Send the segment's one output; its params are returned.
    async fn output(&self, end: End) -> Value {
        let state_bytes = self.limit("harnessStateBytes");
        let (kind, mut p) = match end {
            End::Completed {
                text,
                mut entries,
                steps,
            } => {
                entries.push(self.entry("final", json!({ "text": text })));
                (
                    "turn.completed",
                    json!({ "transcript": self.updates(entries), "state": { "steps": steps } }),
                )
            }
            End::Waiting {
                ids,
                entries,
                steps,
            } => (
                "turn.waiting",
                json!({
                    "transcript": self.updates(entries),
                    "effectIds": if self.k.breaks(Mutant::WaitingWithoutIds) { vec![] } else { ids },
                    "state": { "steps": steps }
                }),
            ),
            End::Failed(why) => {
                let mut p = json!({ "transcript": [], "state": { "steps": 0 } });
                if let Some(o) = why.as_object() {
                    p.as_object_mut().expect("object").extend(o.clone());
                }
                ("turn.failed", p)
            }
        };
        p["runId"] = json!(self.id);
        p["type"] = json!(kind);
        if self.k.breaks(Mutant::NoState) {
            p.as_object_mut().expect("object").remove("state");
        }
        if self.k.breaks(Mutant::StateTooLarge) {
            p["state"] = json!("s".repeat(state_bytes.min(1 << 24) as usize + 1));
        }
        if self.k.breaks(Mutant::OutputWithoutTranscript) {
            p.as_object_mut().expect("object").remove("transcript");
        }
        if self.k.breaks(Mutant::ReusedRequestId) && self.taken == 0 {
            // Core has no run to offer while this one is held, so both wait: one id, two requests.
            let id = self.chan.next.fetch_add(1, Ordering::Relaxed);
            for _ in 0..2 {
                self.chan
                    .send(json!({ "t": "req", "id": id, "m": "lease", "p": {} }));
            }
        }
        let _ = self.chan.req("output", p.clone()).await;
        p
    }

    fn entry(&self, kind: &str, body: Value) -> Value {
        let kind = if self.k.breaks(Mutant::BadTranscriptKind) && kind == "candidate" {
            "assistant"
        } else {
            kind
        };
        if self.k.decides(Variant::OtherTranscript) {
            return json!({ "kind": kind, "payload": body, "turnId": self.turn });
        }
        let mut e = json!({ "kind": kind });
        if let Some(o) = body.as_object() {
            e.as_object_mut().expect("object").extend(o.clone());
        }
        e
    }

    /// The segment's edits as TranscriptUpdates after the entries it read: each update (one
    /// entry of the record) filled up to recordEntryBytes, an entry larger than it one of its own.
    fn updates(&self, entries: Vec<Value>) -> Value {
        let keep = self.kept.load(Ordering::Relaxed) as usize;
        if self.k.breaks(Mutant::UpdatesWithoutLength) {
            return json!([{ "keep": keep, "entries": entries }]);
        }
        let n = entries.len();
        if self.k.breaks(Mutant::UpdatesUnpacked) {
            return json!([{ "keep": keep, "entries": entries, "length": keep + n }]);
        }
        let limit = self.limit("recordEntryBytes") as usize;
        let update = |base: usize, e: &[Value]| json!({ "keep": base, "entries": e, "length": base + e.len() });
        // A compaction replaced the whole history: the edit keeps nothing, and its first event
        // carries the facts (§ 6).
        let facts = self
            .compacted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let keep = if facts.is_some() { 0 } else { keep };
        let (mut out, mut base, mut cur) = (Vec::new(), keep, Vec::new());
        for e in entries {
            cur.push(e);
            if cur.len() > 1 && update(base, &cur).to_string().len() > limit {
                let e = cur.pop().expect("pushed");
                out.push(update(base, &cur));
                base += cur.len();
                cur = vec![e];
            }
        }
        if !cur.is_empty() || out.is_empty() {
            out.push(update(base, &cur));
        }
        if let Some(f) = facts.filter(|_| !self.k.breaks(Mutant::CompactionUnmarked)) {
            out[0]["kind"] = json!("compaction");
            out[0]["compaction"] = f;
        }
        json!(out)
    }

    /// The segment's loop: model, tools, model … until a final answer or a wait.
    async fn segment(&self) -> End {
        if self.start.get("checkpoint").is_none() {
            return End::Failed(json!({ "status": "failed", "error": "no TurnStart" }));
        }
        let replayed = self.start["outcomes"]
            .as_array()
            .is_some_and(|o| !o.is_empty());
        if self.k.breaks(Mutant::ReplayRefused) && replayed {
            return End::Failed(json!({ "status": "failed", "error": "another owner's segment" }));
        }
        if let Ok(read) = self
            .chan
            .req("transcript.read", json!({ "runId": self.id }))
            .await
        {
            let n = read["entries"].as_array().map_or(0, Vec::len);
            self.kept.store(n as u64, Ordering::Relaxed);
        }
        let mcp = match self.start.get("mcp").filter(|m| m.is_object()) {
            Some(m) => m.clone(),
            None => self.discover().await,
        };
        let (tools, targets) = self.tools(&mcp);
        let outcomes: BTreeMap<String, Value> = if self.k.breaks(Mutant::OutcomesAskedAgain) {
            BTreeMap::new()
        } else {
            self.start["outcomes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| Some((o["effectId"].as_str()?.to_string(), o["outcome"].clone())))
                .collect()
        };
        // A messages input is one input entry per message, in order.
        let input = self.start["checkpoint"]["input"].clone();
        let known = [
            "recordEntryBytes",
            "modelCallBytes",
            "modelFileBytes",
            "toolAnswerBytes",
            "harnessStateBytes",
            "chunkBytes",
            "folderEntries",
        ];
        let unknown_limit = self.start["limits"]
            .as_object()
            .is_some_and(|l| l.keys().any(|k| !known.contains(&k.as_str())));
        if (self.k.breaks(Mutant::InputStringOnly) && !input.is_string())
            || (self.k.breaks(Mutant::InputObjectOnly) && input.is_string())
            || (self.k.breaks(Mutant::UnknownLimitRefused) && unknown_limit)
            || (self.k.breaks(Mutant::ContinueRefused) && input["kind"] == "continue")
        {
            return End::Failed(json!({ "status": "failed", "error": "unreadable input" }));
        }
        let messages = match input["kind"].as_str() {
            Some("messages") if !self.k.breaks(Mutant::MessagesMerged) => {
                input["messages"].as_array().cloned().unwrap_or_default()
            }
            _ => vec![input],
        };
        let mut entries: Vec<Value> = messages
            .iter()
            .map(|m| self.entry("input", json!({ "input": m })))
            .collect();
        let mut history: Vec<Value> = messages
            .iter()
            .map(|m| json!({ "role": "user", "content": m }))
            .collect();
        for step in 0..12u64 {
            if step > 0 && self.k.breaks(Mutant::TranscriptReadPerStep) {
                let _ = self
                    .chan
                    .req("transcript.read", json!({ "runId": self.id }))
                    .await;
            }
            if step > 0 {
                match self
                    .compact(&mut history, &mut entries, step, &outcomes)
                    .await
                {
                    Ok(()) => {}
                    Err(e) => return End::Failed(json!({ "status": "failed", "error": e })),
                }
            }
            let ident = self.ident(&format!("{step}"));
            let eid = self.effect_id("model", &ident);
            let call = self.model_call(&history, &tools);
            let mut effect = json!({ "effectId": eid, "kind": "model", "context": { "invocationId": format!("step-{step}") } });
            if self.k.breaks(Mutant::NoInvocationId) {
                effect["context"] = json!({});
            }
            let mut body =
                json!({ "effectId": eid, "invocationId": format!("step-{step}"), "call": call });
            if self.k.breaks(Mutant::ModelCallWithoutInvocationId) {
                body.as_object_mut().expect("object").remove("invocationId");
            }
            let candidate = match self
                .effect(effect, Some(call), &outcomes, "model-calls", body)
                .await
            {
                Ok(Effected::Done(v)) => v,
                Ok(Effected::Waiting) => {
                    return End::Waiting {
                        ids: vec![eid],
                        entries,
                        steps: step,
                    }
                }
                Err(e) => return End::Failed(json!({ "status": "failed", "error": e })),
            };
            let blocks = candidate["output"].as_array().cloned().unwrap_or_default();
            entries.push(self.entry(
                "candidate",
                json!({ "stepId": format!("step-{step}"), "output": blocks }),
            ));
            history.push(json!({ "role": "assistant", "content": blocks }));
            let mut calls: Vec<&Value> =
                blocks.iter().filter(|b| b["type"] == "tool-call").collect();
            if self.k.decides(Variant::CallsReversed) && self.taken % 2 == 1 {
                calls.reverse();
            }
            if calls.is_empty() {
                let text = blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("");
                return End::Completed {
                    text,
                    entries,
                    steps: step + 1,
                };
            }
            let mut waiting = Vec::new();
            let mut results = Vec::new();
            for c in calls {
                let call_id = c["callId"].as_str().unwrap_or_default().to_string();
                let name = c["name"].as_str().unwrap_or_default().to_string();
                let Some(target) = targets.get(&name).cloned() else {
                    results.push(json!({ "callId": call_id, "error": "no such tool" }));
                    continue;
                };
                let tid = self.effect_id("tool", &self.ident(&call_id));
                let input = c["input"].clone();
                let mut effect = json!({
                    "effectId": tid, "kind": "tool", "toolName": name, "target": target, "input": input,
                    "context": { "callId": call_id, "invocationId": format!("step-{step}") }
                });
                if self.k.breaks(Mutant::ToolIntentUntargeted) {
                    let o = effect.as_object_mut().expect("object");
                    o.remove("toolName");
                    o.remove("target");
                }
                if self.k.breaks(Mutant::NoCallId) {
                    effect["context"] = json!({ "invocationId": format!("step-{step}") });
                }
                let (route, body) = match target["kind"].as_str() {
                    // Core's own tools and the sandbox's never reach a gate.
                    Some(k @ ("runtime" | "sandbox")) => (
                        if k == "runtime" { "runtime" } else { "sandbox" },
                        Value::Null,
                    ),
                    Some("mcp") => (
                        "tool-calls",
                        json!({
                            "server": self.server(&target["server"]), "effectId": tid,
                            "name": if self.k.breaks(Mutant::OfferedNameCalled) { json!(name) } else { target["tool"].clone() },
                            "arguments": input
                        }),
                    ),
                    _ => (
                        "http-calls",
                        json!({ "effectId": tid, "tool": target["tool"], "arguments": input }),
                    ),
                };
                match self.effect(effect, None, &outcomes, route, body).await {
                    Ok(Effected::Done(v))
                        if self.k.breaks(Mutant::DenialFailsTurn)
                            && v.to_string().contains("tool.denied") =>
                    {
                        return End::Failed(json!({ "status": "failed", "error": v }));
                    }
                    Ok(Effected::Done(v)) => {
                        results.push(json!({ "callId": call_id, "result": v }))
                    }
                    Ok(Effected::Waiting) if self.k.breaks(Mutant::NoWaitingOnPending) => {
                        results.push(json!({ "callId": call_id, "result": "pending" }))
                    }
                    Ok(Effected::Waiting) => waiting.push(tid),
                    Err(e) => results.push(json!({ "callId": call_id, "error": e })),
                }
            }
            if !waiting.is_empty() {
                return End::Waiting {
                    ids: waiting,
                    entries,
                    steps: step + 1,
                };
            }
            // A step's results are one entry, within recordEntryBytes: previews when they do not fit.
            let budget = self.limit("recordEntryBytes").saturating_sub(1024) as usize;
            let mut entry = self.entry(
                "tool-results",
                json!({ "stepId": format!("step-{step}"), "results": results }),
            );
            if entry.to_string().len() > budget && !self.k.breaks(Mutant::StepResultsUnshaped) {
                let each = budget / (results.len() + 1);
                let shrunk: Vec<Value> = results
                    .iter()
                    .map(|r| json!({ "callId": r["callId"], "preview": r.to_string().chars().take(each.saturating_sub(64)).collect::<String>() }))
                    .collect();
                entry = self.entry(
                    "tool-results",
                    json!({ "stepId": format!("step-{step}"), "results": shrunk }),
                );
            }
            if self.k.breaks(Mutant::ResultsSplit) {
                for r in &results {
                    entries.push(self.entry(
                        "tool-results",
                        json!({ "stepId": format!("step-{step}"), "results": [r] }),
                    ));
                }
            } else {
                entries.push(entry);
            }
            history.push(json!({ "role": "tool", "content": results }));
        }
        End::Failed(json!({ "status": "failed", "error": "too many steps" }))
    }

    /// The variant's compaction: once the history passes half the model's window, one summary
    /// call (marked purpose: "summary") replaces it, and the transcript with one compaction
    /// entry. Once per segment.
    async fn compact(
        &self,
        history: &mut Vec<Value>,
        entries: &mut Vec<Value>,
        step: u64,
        outcomes: &BTreeMap<String, Value>,
    ) -> Result<(), Value> {
        let on = self.k.decides(Variant::Compacts)
            || self.k.breaks(Mutant::SummaryWithoutPurpose)
            || self.k.breaks(Mutant::CompactionUnmarked);
        let window = self.start["model"]["contextWindow"]
            .as_u64()
            .unwrap_or(u64::MAX);
        let before = json!(history).to_string().len() as u64 / 4;
        let done = self
            .compacted
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        if !on || done || before <= window / 2 {
            return Ok(());
        }
        let ident = self.ident(&format!("summary-{step}"));
        let eid = self.effect_id("model", &ident);
        let mut asked = history.clone();
        asked.push(json!({ "role": "user", "content": "Summarize the conversation so far." }));
        let call = self.model_call(&asked, &[]);
        let mut effect = json!({ "effectId": eid, "kind": "model", "context": { "invocationId": format!("summary-{step}") } });
        if !self.k.breaks(Mutant::SummaryWithoutPurpose) {
            effect["purpose"] = json!("summary");
        }
        let body =
            json!({ "effectId": eid, "invocationId": format!("summary-{step}"), "call": call });
        let summary = match self
            .effect(effect, Some(call), outcomes, "model-calls", body)
            .await?
        {
            Effected::Done(v) => v["output"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            Effected::Waiting => return Err(json!("a summary call left waiting")),
        };
        *history = vec![
            json!({ "role": "user", "content": format!("Summary of the conversation so far: {summary}") }),
        ];
        *entries = vec![self.entry("compaction", json!({ "summary": summary }))];
        let after = json!(history).to_string().len() as u64 / 4;
        *self.compacted.lock().unwrap_or_else(|p| p.into_inner()) = Some(json!({
            "trigger": "auto", "tokensBefore": before, "tokensAfter": after, "summaryEffectIds": [eid]
        }));
        Ok(())
    }

    /// `<turnId>:<segment>:<kind>:<identity>` (without the segment: the mutant's).
    fn effect_id(&self, kind: &str, ident: &str) -> String {
        if self.k.breaks(Mutant::EffectIdWithoutSegment) {
            return format!("{}:{kind}:{ident}", self.turn);
        }
        format!("{}:{}:{kind}:{ident}", self.turn, self.segment)
    }

    /// The identity of an effect within its segment: stable, never by call order (unless the
    /// mutant counts calls).
    fn ident(&self, natural: &str) -> String {
        if self.k.breaks(Mutant::IdsByCallOrder) {
            return self.counter.fetch_add(1, Ordering::Relaxed).to_string();
        }
        if self.k.decides(Variant::OtherIdentity) {
            return format!("i{:x}", crate::hash::fnv1a64(natural.as_bytes()));
        }
        natural.to_string()
    }

    fn model_call(&self, history: &[Value], tools: &[Value]) -> Value {
        let instructions = self.start["manifest"]["instructions"].clone();
        let prompt = if self.k.decides(Variant::OtherPrompt) {
            json!({ "system": instructions, "turns": history })
        } else {
            let mut p = vec![json!({ "role": "system", "content": instructions })];
            p.extend(history.iter().cloned());
            json!(p)
        };
        let execution = if self.k.breaks(Mutant::ExecutionIdIsRun) {
            &self.id
        } else {
            &self.session
        };
        let mut call = json!({ "prompt": prompt, "tools": tools, "executionId": execution });
        if self.k.breaks(Mutant::ModelCallUnbounded) {
            call["padding"] = json!("p".repeat(40_000));
        }
        call
    }

    /// The tools offered the model and, by the name given, what runs each.
    fn tools(&self, mcp: &Value) -> (Vec<Value>, HashMap<String, Value>) {
        let mut tools = Vec::new();
        let mut targets = HashMap::new();
        for s in mcp["servers"].as_array().into_iter().flatten() {
            let server = s["name"].as_str().unwrap_or_default();
            for t in s["tools"].as_array().into_iter().flatten() {
                let redescribed = self.k.breaks(Mutant::DisabledToolsRedescribed);
                if t["enabled"] == false
                    && !self.k.breaks(Mutant::DisabledToolsOffered)
                    && !redescribed
                {
                    continue;
                }
                let raw = t["name"].as_str().unwrap_or_default();
                let name = self.tool_name(server, raw);
                let description = if t["enabled"] == false && redescribed {
                    json!(format!("a tool of {server}"))
                } else {
                    t["description"].clone()
                };
                tools.push(json!({ "name": name, "description": description, "inputSchema": t["inputSchema"] }));
                targets.insert(
                    name,
                    json!({ "kind": "mcp", "server": server, "tool": raw }),
                );
            }
        }
        for t in self.start["manifest"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if t["kind"] == "http" {
                let name = t["name"].as_str().unwrap_or_default().to_string();
                tools.push(json!({ "name": name, "description": t["description"], "inputSchema": t["inputSchema"] }));
                targets.insert(name.clone(), json!({ "kind": "http", "tool": name }));
            }
        }
        // Core's own tools, when the turn has them (§ 3, § 4): memory (view only for
        // read_only) and schedule_wake; sandbox tools only with a sandbox, which hcpspec never
        // gives (this harness has none to offer, unless the mutant's).
        let mut runtime = |name: &str, description: &str, schema: Value, target: Value| {
            tools.push(json!({ "name": name, "description": description, "inputSchema": schema }));
            targets.insert(name.to_string(), target);
        };
        if self.start["memory"].is_object() {
            let read_only = self.start["memory"]["access"] == "read_only"
                && !self.k.breaks(Mutant::MemoryWritesReadOnly);
            let commands = if read_only {
                json!(["view"])
            } else {
                json!([
                    "view",
                    "create",
                    "str_replace",
                    "insert",
                    "delete",
                    "rename"
                ])
            };
            runtime(
                "memory",
                "Your memory directory /memories: view it, or keep notes in it.",
                json!({ "type": "object", "properties": { "command": { "type": "string", "enum": commands }, "path": { "type": "string" } }, "required": ["command"] }),
                json!({ "kind": "runtime", "operation": "memory" }),
            );
        }
        if self.start["agent"]["selfWake"] == true || self.k.breaks(Mutant::ScheduleWakeAlways) {
            runtime(
                "schedule_wake",
                "Wake this session later: {in} or {at} with a note, or {cancel: true}.",
                json!({ "type": "object", "properties": { "in": { "type": "string" }, "at": { "type": "string" }, "note": { "type": "string" }, "cancel": { "type": "boolean" } } }),
                json!({ "kind": "runtime", "operation": "schedule_wake" }),
            );
        }
        if self.k.breaks(Mutant::SandboxToolsAlways) {
            runtime(
                "bash",
                "Run a command in the session's sandbox.",
                json!({ "type": "object", "properties": { "command": { "type": "string" } } }),
                json!({ "kind": "sandbox" }),
            );
        }
        (tools, targets)
    }

    /// How a gate call names an MCP server: `{serverName}` (by a URL: the mutant's).
    fn server(&self, name: &Value) -> Value {
        if self.k.breaks(Mutant::McpServerByUrl) {
            return json!({ "url": format!("{}/mcp/{}", self.gates, name.as_str().unwrap_or_default()) });
        }
        json!({ "serverName": name })
    }

    fn tool_name(&self, server: &str, tool: &str) -> String {
        if self.k.decides(Variant::OtherToolNames) {
            return format!("t_{:x}_{tool}", crate::hash::fnv1a64(server.as_bytes()))
                .chars()
                .take(64)
                .collect();
        }
        let full = format!("{server}__{tool}");
        if full.len() <= 64 || self.k.breaks(Mutant::LongToolNames) {
            return full;
        }
        let suffix = format!("_{:08x}", crate::hash::fnv1a64(full.as_bytes()) as u32);
        let head: String = full.chars().take(64 - suffix.len()).collect();
        format!("{head}{suffix}")
    }

    /// Discover the manifest's MCP servers through the Tool Gate and record what they listed.
    async fn discover(&self) -> Value {
        let servers = self.start["manifest"]["mcpServers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if servers.is_empty() || self.k.breaks(Mutant::NoMcpDiscovery) {
            return json!({ "servers": [] });
        }
        let mut listed = Vec::new();
        for s in servers {
            let name = s["name"].clone();
            let server = json!({ "server": self.server(&name) });
            let _ = self.gate("mcp/connect", None, &server).await;
            if let Ok(a) = self.gate("mcp/list", None, &server).await {
                listed.push(json!({ "name": name, "tools": a["result"]["tools"] }));
            }
        }
        let snapshot = json!({ "snapshotSchemaVersion": 2, "servers": listed });
        match self
            .chan
            .req(
                "session.mcp",
                json!({ "runId": self.id, "snapshot": snapshot, "diagnostics": [] }),
            )
            .await
        {
            Ok(a) if a["mcp"].is_object() && !self.k.breaks(Mutant::OwnListingKept) => {
                a["mcp"].clone()
            }
            _ => json!({ "servers": listed }),
        }
    }

    fn hash(&self, intent: &Value) -> String {
        let mut intent = intent.clone();
        if self.k.breaks(Mutant::HashChangesOnReplay) {
            intent["runId"] = json!(self.id);
        }
        if self.k.breaks(Mutant::HashOfIdOnly) {
            let id = intent["effect"]["effectId"].as_str().unwrap_or_default();
            return format!("fnv1a:{:016x}", crate::hash::fnv1a64(id.as_bytes()));
        }
        if self.k.decides(Variant::OtherHash) {
            return format!(
                "v2:{:x}",
                crate::hash::fnv1a64(intent.to_string().as_bytes()).rotate_left(17)
            );
        }
        format!(
            "fnv1a:{:016x}",
            crate::hash::fnv1a64(canonical(&intent).as_bytes())
        )
    }

    /// Journal one effect and run it: replayed, answered, or through its gate.
    async fn effect(
        &self,
        mut effect: Value,
        model_input: Option<Value>,
        outcomes: &BTreeMap<String, Value>,
        route: &'static str,
        body: Value,
    ) -> Result<Effected, Value> {
        let eid = effect["effectId"].as_str().unwrap_or_default().to_string();
        if let Some(o) = outcomes.get(&eid) {
            return Ok(Effected::Done(o.clone()));
        }
        // A model effect is hashed with its ModelCall as input, and sent without it.
        let mut hashed = effect.clone();
        if let Some(call) = &model_input {
            if !self.k.breaks(Mutant::ModelHashWithoutCall) {
                hashed["input"] = call.clone();
            }
            if self.k.breaks(Mutant::ModelIntentWithInput) {
                effect["input"] = call.clone();
            }
        }
        let hash = self.hash(&json!({ "effect": hashed }));
        if self.k.breaks(Mutant::GateBeforeIntent) {
            let _ = self.gate(route, Some(&eid), &body).await;
        }
        let intent = json!({ "runId": self.id, "effect": effect, "requestHash": hash });
        let answer = self.chan.req("effect.intent", intent.clone()).await?;
        match answer["status"].as_str() {
            Some("execute") if answer["rejoin"] == true && self.k.breaks(Mutant::RejoinNotSent) => {
                let error =
                    json!({ "code": "rejoin", "message": "left running by a previous owner" });
                self.unknown_fate(&eid, error.clone()).await?;
                Ok(Effected::Done(json!({ "ok": false, "error": error })))
            }
            Some("execute") => {
                // A runtime tool is core's (never execute); a sandbox this harness does not have.
                if matches!(route, "runtime" | "sandbox") {
                    let error =
                        json!({ "code": "tool.unavailable", "message": "nothing here runs it" });
                    return self.unknown_fate(&eid, error).await.map(Effected::Done);
                }
                let bypass = (route == "model-calls"
                    && self.k.breaks(Mutant::FixtureModelBypassed)
                    && self.start["options"]["fixtureModel"] == true)
                    || (route == "http-calls" && self.k.breaks(Mutant::HttpToolsRunLocally));
                let got = if bypass {
                    json!({ "ok": true, "result": "local", "outcome": { "kind": "candidate", "output": [{ "type": "text", "text": "done" }], "finishReason": "stop" } })
                } else {
                    let mut got = self.gate(route, Some(&eid), &body).await;
                    // § 4 "When a gate hop is lost, ask the same intent again."
                    let mut attempts = 1;
                    while route != "model-calls"
                        && attempts < LOST_HOP_ATTEMPTS
                        && got.as_ref().is_err_and(|e| e["code"] == LOST)
                        && !self.k.breaks(Mutant::LostHopNotAskedAgain)
                    {
                        attempts += 1;
                        // The same intent: the same effect and hash.
                        let again = self.chan.req("effect.intent", intent.clone()).await?;
                        match again["status"].as_str() {
                            Some("execute") => got = self.gate(route, Some(&eid), &body).await,
                            Some("completed") => {
                                return Ok(Effected::Done(again["outcome"].clone()))
                            }
                            _ => return Ok(Effected::Waiting),
                        }
                    }
                    match got {
                        Ok(got) => got,
                        // A tool call's fate it could not learn is recorded as {error} (a model
                        // call's fails the segment); a run that is over takes nothing more.
                        Err(e) if route != "model-calls" && e["code"] != "run_stale" => {
                            return self.unknown_fate(&eid, e).await.map(Effected::Done);
                        }
                        Err(e) => return Err(e),
                    }
                };
                if route != "model-calls"
                    && got["ok"] == false
                    && self.k.breaks(Mutant::ToolFailureAsGateError)
                {
                    return Err(got["error"].clone());
                }
                let mut value = if route == "model-calls" {
                    got["outcome"].clone()
                } else {
                    got
                };
                if route != "model-calls" {
                    value = self.store_parts(&eid, value).await;
                    value = self.fit(&eid, value).await;
                }
                let mut outcome = json!({ "runId": self.id, "effectId": eid, "value": value });
                if self.k.breaks(Mutant::OutcomeWithoutRunId) {
                    outcome.as_object_mut().expect("object").remove("runId");
                }
                let recorded = self.chan.req("effect.outcome", outcome).await?;
                Ok(Effected::Done(
                    recorded.get("outcome").cloned().unwrap_or(value),
                ))
            }
            Some("completed") => {
                if self.k.breaks(Mutant::RefetchCompleted) {
                    let _ = self.gate(route, Some(&eid), &body).await;
                }
                if self.k.breaks(Mutant::CompletedOutcomeDropped) {
                    return Ok(Effected::Done(json!({})));
                }
                Ok(Effected::Done(answer["outcome"].clone()))
            }
            _ => Ok(Effected::Waiting),
        }
    }

    /// Record a call whose fate this harness could not learn, `{runId, effectId, error}` (as a
    /// value: the mutant's): what core answers is what the model is told.
    async fn unknown_fate(&self, eid: &str, error: Value) -> Result<Value, Value> {
        let mut outcome = json!({ "runId": self.id, "effectId": eid });
        let key = if self.k.breaks(Mutant::UnknownFateAsValue) {
            "value"
        } else {
            "error"
        };
        outcome[key] = error.clone();
        let recorded = self.chan.req("effect.outcome", outcome).await?;
        Ok(recorded
            .get("outcome")
            .cloned()
            .unwrap_or(json!({ "ok": false, "error": error })))
    }

    /// Section 5b: a result past recordEntryBytes is stored as a file artifact with the call's
    /// effect id, and a preview is reported.
    async fn fit(&self, eid: &str, value: Value) -> Value {
        let text = value.to_string();
        let limit = self.limit("recordEntryBytes");
        if (text.len() as u64) <= limit.saturating_sub(1024) || self.k.breaks(Mutant::NoSpill) {
            return value;
        }
        let name = format!("{}.json", eid.replace(':', "_"));
        let artifact = self
            .upload(eid, &name, "application/json", text.as_bytes(), eid)
            .await["artifactId"]
            .clone();
        let preview: String = text.chars().take(512).collect();
        json!({ "truncated": true, "artifactId": artifact, "size": text.len(), "preview": preview })
    }

    /// Section 5b: an MCP image, audio or blob resource part is stored, keyed by the call and
    /// the bytes' hash; an image goes to the model as a file only when the model reads images,
    /// any other part as a note naming its artifact.
    async fn store_parts(&self, eid: &str, mut value: Value) -> Value {
        if self.k.breaks(Mutant::BinaryPartsUnstored) {
            return value;
        }
        let sees = |kind: &str| {
            self.start["model"]["inputs"]
                .as_array()
                .is_some_and(|i| i.iter().any(|x| x == kind))
        };
        let Some(parts) = value
            .pointer_mut("/result/content")
            .and_then(Value::as_array_mut)
        else {
            return value;
        };
        for (i, part) in parts.iter_mut().enumerate() {
            let (data, mime) = match part["type"].as_str() {
                Some("image" | "audio") => (part["data"].clone(), part["mimeType"].clone()),
                Some("resource") if part["resource"]["blob"].is_string() => (
                    part["resource"]["blob"].clone(),
                    part["resource"]["mimeType"].clone(),
                ),
                _ => continue,
            };
            let Some(bytes) = data.as_str().and_then(crate::suites::world::unb64) else {
                continue;
            };
            let mime = mime
                .as_str()
                .unwrap_or("application/octet-stream")
                .to_string();
            let key = format!("{eid}:{i}:{:016x}", crate::hash::fnv1a64(&bytes));
            let name = format!("{}-{i}", eid.replace(':', "_"));
            let meta = self.upload(eid, &name, &mime, &bytes, &key).await;
            let reference = json!({ "artifactId": meta["artifactId"], "version": meta["version"] });
            let image = part["type"] == "image";
            *part = if image && (sees("image") || self.k.breaks(Mutant::ImageToABlindModel)) {
                json!({ "type": "image", "mimeType": mime, "reference": reference })
            } else {
                json!({ "type": "text", "text": format!(
                    "[{mime}, {} bytes, stored as artifact {} version {}{}]",
                    bytes.len(), meta["artifactId"].as_str().unwrap_or("?"), meta["version"],
                    if image { "; this model does not read images" } else { "" }
                ) })
            };
        }
        value
    }

    /// Store bytes as a file artifact with the call's effect id: one begin when they fit
    /// chunkBytes, else chunks at increasing offsets and a commit. Its meta, or null.
    async fn upload(
        &self,
        eid: &str,
        name: &str,
        content_type: &str,
        bytes: &[u8],
        key: &str,
    ) -> Value {
        let chunk = self.limit("chunkBytes").max(1) as usize;
        let mut begin = json!({
            "runId": self.id, "op": "begin", "name": name,
            "contentType": content_type, "size": bytes.len(), "key": key, "effectId": eid
        });
        if self.k.breaks(Mutant::SpillNamesTheModelEffect) {
            begin["effectId"] = json!(self.effect_id("model", &self.ident("0")));
        }
        if self.k.breaks(Mutant::SpillNamesAnotherEffect) {
            begin["effectId"] = json!(format!("{eid}-unjournaled"));
        }
        if self.k.breaks(Mutant::SpillWithoutEffectId) {
            begin.as_object_mut().expect("object").remove("effectId");
        }
        let b64 = |b: &[u8]| crate::suites::world::artifacts::b64(b);
        let one = bytes.len() <= chunk || self.k.breaks(Mutant::ChunkTooLarge);
        if one {
            begin["base64"] = json!(b64(bytes));
        }
        let Ok(a) = self.chan.req("artifact.write", begin).await else {
            return Value::Null;
        };
        if one || a["status"] == "written" {
            if self.k.breaks(Mutant::CommitAfterWholeBegin) {
                let _ = self
                    .chan
                    .req(
                        "artifact.write",
                        json!({ "runId": self.id, "op": "commit", "uploadId": "upload-0" }),
                    )
                    .await;
            }
            return a["artifact"].clone();
        }
        let Some(upload) = a["uploadId"].as_str() else {
            return Value::Null;
        };
        let mut parts: Vec<(usize, &[u8])> = bytes.chunks(chunk).enumerate().collect();
        if self.k.breaks(Mutant::ChunksReversed) {
            parts.reverse();
        }
        for (i, part) in parts {
            let c = json!({ "runId": self.id, "op": "chunk", "uploadId": upload, "offset": i * chunk, "base64": b64(part) });
            if self.chan.req("artifact.write", c).await.is_err() {
                return Value::Null;
            }
        }
        self.chan
            .req(
                "artifact.write",
                json!({ "runId": self.id, "op": "commit", "uploadId": upload }),
            )
            .await
            .map_or(Value::Null, |a| a["artifact"].clone())
    }

    /// One gate call with the run token, the effect id as Idempotency-Key, and traceparent.
    async fn gate(
        &self,
        route: &'static str,
        key: Option<&str>,
        body: &Value,
    ) -> Result<Value, Value> {
        let token = self.token.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut req = self
            .http
            .post(format!("{}/nylorun/v1/{route}", self.gates))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json");
        if let Some(k) = key {
            if !self.k.breaks(Mutant::NoIdempotencyKey) {
                req = req.header("idempotency-key", k);
            }
            self.inflight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(
                    k.to_string(),
                    if route == "model-calls" {
                        "model-calls"
                    } else if route == "http-calls" && self.k.breaks(Mutant::HttpCancelRoute) {
                        "http-calls"
                    } else {
                        "tool-calls"
                    },
                );
        }
        if let Some(tp) = self.start["trace"]["traceparent"].as_str() {
            if !self.k.breaks(Mutant::NoTraceparent) {
                req = req.header("traceparent", tp);
            }
        }
        let mut text = body.to_string();
        if self.k.breaks(Mutant::GateBodyPast64Mib) && route == "model-calls" {
            // Trailing spaces are still one JSON value, and cheap to make even in a debug
            // build on a loaded machine (a padded string member took seconds to serialise).
            text.push_str(&" ".repeat(64 << 20));
        }
        let req = req
            .body(text)
            .build()
            .map_err(|e| json!({ "code": "internal", "message": e.to_string() }))?;
        self.chan.gating.fetch_add(1, Ordering::SeqCst);
        let resp = self.http.execute(req).await;
        self.chan.gated();
        // No answer, or one that broke off: the hop is lost, and the call's fate unknown.
        let lost = |e: reqwest::Error| json!({ "code": LOST, "message": e.to_string() });
        let resp = resp.map_err(lost)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(lost)?;
        if let Some(k) = key {
            self.inflight
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(k);
        }
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if status.is_success() {
            Ok(v)
        } else {
            Err(v.get("error").filter(|e| e.is_object()).cloned().unwrap_or_else(|| {
                json!({ "code": "unavailable", "message": format!("the gate answered {status}") })
            }))
        }
    }

    /// Section 8: cancel every gate call this run started and has not seen answered.
    async fn cancel_gate_calls(&self) {
        let calls: Vec<(String, &str)> = self
            .inflight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, r)| (k.clone(), *r))
            .collect();
        for (key, family) in calls {
            let token = self.token.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let mut req = self
                .http
                .post(format!("{}/nylorun/v1/{family}/{key}/cancel", self.gates))
                .header("authorization", format!("Bearer {token}"))
                .header("idempotency-key", key.as_str());
            if let Some(tp) = self.start["trace"]["traceparent"].as_str() {
                req = req.header("traceparent", tp);
            }
            let _ = req.send().await;
        }
    }
}

/// The error of a gate call whose hop was lost (the reference's own code).
const LOST: &str = "hop.lost";

/// How often a lost hop's intent is asked again before its fate is recorded as unknown.
const LOST_HOP_ATTEMPTS: usize = 3;

/// JSON with object keys sorted, the reference's input to its request hash.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            let parts: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{}", json!(k), canonical(v)))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}
