//! hcpspec's reference harness: a harness written from spec 004 alone, in Rust, speaking to
//! the core over a real loopback WebSocket and to the gates over real HTTP, exactly as a
//! harness in any language would under the launch contract. `Knobs` break one rule (a mutant,
//! which a MUST scenario of its own section must fail) or decide an open point otherwise (a
//! variant, which every MUST scenario must pass).

mod effects;
mod pod;
mod run;

use super::env::LaunchEnv;
use crate::knob::{Class, Knob as _};
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
        // issue 43, harness:
        LostHopNewId = "lost-hop-new-id", ["4"],
            "asks a lost hop's intent again under a new effect id (a retry's), and calls the gate under it";
        LostHopOtherHash = "lost-hop-other-hash", ["4"],
            "asks a lost hop's intent again under its id, hashed with the attempt's number";
        RejoinOtherBody = "rejoin-other-body", ["4"],
            "sends a call answered {execute, rejoin: true} again under its key, with a body marking the attempt";
        MessagesReversed = "messages-reversed", ["3"],
            "writes a messages input's entries newest first";
        MessagesEachWhole = "messages-each-whole", ["3"],
            "writes one input entry per message of a messages input, each carrying the whole input";
        CompactionWithoutFacts = "compaction-without-facts", ["6"],
            "compacts as `compacts` does, but its compaction facts carry summaryEffectIds alone (no trigger, tokensBefore, tokensAfter)";
        MemoryOperationPerCommand = "memory-operation-per-command", ["3"],
            "targets a memory call at {kind: \"runtime\", operation: \"memory.<command>\"}, not operation memory";
        MemoryRunLocally = "memory-run-locally", ["3"],
            "answers the model's memory calls itself, journaling no intent";
        MemoryIndexUnpinned = "memory-index-unpinned", ["3"],
            "puts the memory index after the history, so its place in the prompt moves each step";
        MemoryIndexOnce = "memory-index-once", ["3"],
            "puts the memory index in the first model call's prompt only";
        SpillWithoutPreview = "spill-without-preview", ["5b"],
            "reports a spilled result as {truncated, artifactId, size}, with no preview";
        HelloFeaturesTools = "hello-features-tools", ["2"],
            "declares its tools in hello's features";
        OutcomeAsResult = "outcome-as-result", ["4"],
            "sends effect.outcome with the gate's answer as `result`, not `value`";
        McpSnapshotEmpty = "mcp-snapshot-empty", ["3"],
            "connects the manifest's MCP servers but records an empty snapshot, listing nothing";
        ReleaseReasonAlwaysShutdown = "release-reason-always-shutdown", ["8"],
            "gives a run back with reason shutdown, whatever core's cancel said";
        BigFileAsMedia = "big-file-as-media", ["3"],
            "sends a message's file to the model as a media part whatever its size, past limits.modelFileBytes too";
        TextFileAsMedia = "text-file-as-media", ["3"],
            "sends a message's text file to the model as a media part, never inlining it";
        LaterChunksUnversioned = "later-chunks-unversioned", ["4b"],
            "reads a file's later chunks without the version the first answer named (the latest, whichever)";
        ServerWithoutAgentId = "server-without-agent-id", ["5"],
            "names an agent-used-as-a-tool's MCP server by {serverName} alone, without its agentId";
        SpillKeyPerRun = "spill-key-per-run", ["5b"],
            "keys each store by the call and the run, so a crash's re-run stores a new version";
        SpillWithoutKey = "spill-without-key", ["5b"],
            "stores a spilled result with no key";
        StepsOnAfterCancel = "steps-on-after-cancel", ["8"],
            "on cancel, cancels its gate calls but lets the segment run on to its end, then reports turn.failed cancelled";
        OneInvocationId = "one-invocation-id", ["4"],
            "names every step of a turn by one invocationId, the turn id";
        ToolInvocationPerCall = "tool-invocation-per-call", ["4"],
            "gives each tool effect an invocationId of its own, not its step's";
        ScheduleWakeAsHarnessTool = "schedule-wake-as-harness-tool", ["3"],
            "journals the model's schedule_wake calls as its own tool ({kind: \"harness\"}), not {kind: \"runtime\", operation: \"schedule_wake\"}";
        // issue 43, pod host (the launch contract's pod-host mode):
        HostBearerJoinToken = "host-bearer-join-token", ["9"],
            "as a pod's host, connects with its pod's join token as the WebSocket bearer, not the join answer's host token";
        HostNeverRenews = "host-never-renews", ["9"],
            "as a pod's host, joins and never renews";
        HostRenewsTooOften = "host-renews-too-often", ["9"],
            "as a pod's host, renews twenty times as often as it was told";
        HostRenewsWithJoinToken = "host-renews-with-join-token", ["9"],
            "as a pod's host, renews with its pod's join token as bearer, not the host token";
        HostRenewRefusalIgnored = "host-renew-refusal-ignored", ["9"],
            "as a pod's host, keeps renewing with a host token whose renewal was refused, never joining again";
        HostRejoinKeepsOldToken = "host-rejoin-keeps-old-token", ["9"],
            "as a pod's host, joins again after a refused renewal but renews with the refused host token";
        JoinWithoutPodUid = "join-without-pod-uid", ["9"],
            "as a pod's host, joins with sandboxId and joinToken but no podUid";
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

/// Whether this harness takes a variant's choice: as that variant, or as the freedom variant
/// whose seed takes it (a shape left open by a coin of class shapes; the tools' names by one of
/// class words). The order of a step's calls, `calls-reversed`'s point, is the order class's.
pub(super) fn chooses(k: &Knobs, v: Variant) -> bool {
    if k.decides(v) {
        return true;
    }
    let class = match v {
        Variant::CallsReversed => return false,
        Variant::OtherToolNames => Class::Words,
        _ => Class::Shapes,
    };
    k.free(class).is_some_and(|f| f.coin(class, v.name()))
}

/// The freedom variant's delay before a request of `m` (class time): up to 25 ms, never before
/// a renewal or a ping, whose cadence core judges.
fn delay(k: &Knobs, m: &str) -> Duration {
    let ms = match (k.free(Class::Time), m) {
        (Some(f), m) if m != "lease.renew" => f.delay_ms(&format!("req:{m}"), 25),
        _ => 0,
    };
    Duration::from_millis(ms)
}

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
    /// The ids this harness minted as strings (the freedom's), to the number each stands for.
    ids: Mutex<HashMap<String, u64>>,
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

    /// A request's id as sent: a number, or (the freedom's open shape) a string the harness
    /// mints ("ids are per sender": their form is the sender's).
    fn id(&self, n: u64) -> Value {
        match self.k.free(Class::Shapes) {
            Some(f) if f.coin(Class::Shapes, "request-ids") => {
                let id = f.word("request-id", &n.to_string());
                let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
                ids.insert(id.clone(), n);
                json!(id)
            }
            _ => json!(n),
        }
    }

    /// The number a string id this harness minted stands for (0: none).
    fn minted(&self, id: &Value) -> u64 {
        let ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        id.as_str().and_then(|i| ids.get(i)).copied().unwrap_or(0)
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
        let pause = delay(&self.k, m);
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, tx);
        self.send(json!({ "t": "req", "id": self.id(id), "m": m, "p": p }));
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
    // The freedom's start-up: up to 1 s before connecting (each start, restarts too; real
    // harnesses 5 s late are tests/harness_startup.rs's, kept out of every seed's wall time).
    if let Some(f) = k.free(Class::Time) {
        tokio::time::sleep(Duration::from_millis(f.delay_ms("start", 1000))).await;
    }
    let url = if k.breaks(Mutant::OtherPath) {
        env.core_url
            .replace("/nylorun/harness/v1", "/nylorun/harness/v2")
    } else {
        env.core_url.clone()
    };
    // A pod's host joins first, and its bearer is the join answer's host token (§ 9).
    let host = match &env.pod {
        Some(p) => Some(pod::Host::join(&env, p, k).await?),
        None => None,
    };
    let bearer = match (&host, k.breaks(Mutant::WrongBearer)) {
        (Some(h), _) => h.bearer(k),
        (None, true) => env.name.clone(),
        (None, false) => env.token.clone(),
    };
    let mut request = url
        .as_str()
        .into_client_request()
        .map_err(|e| e.to_string())?;
    let h = request.headers_mut();
    h.insert(
        "authorization",
        format!("Bearer {bearer}")
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
        ids: Mutex::default(),
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
                        let id = match &f["id"] {
                            Value::Number(n) => n.as_u64().unwrap_or(0),
                            minted => chan.minted(minted),
                        };
                        let waiter = chan.pending.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
                        if let Some(w) = waiter {
                            let _ = w.send(if f["ok"] == true { Ok(f["r"].clone()) } else { Err(f["e"].clone()) });
                        }
                    }
                    Some("ping") if chooses(&k, Variant::NoPingAnswer) => {}
                    Some("ping") if chooses(&k, Variant::OtherPing) => {
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
    let said = hello_of(&env, k);
    let hello = chan.req("hello", said).await.map_err(|e| e.to_string())?;
    let renew_every = hello["renewEveryMs"].as_u64().unwrap_or(1000).max(1);
    // The reference harness's own client, its connections on this runtime (adapter/client.rs).
    let http = crate::adapter::client::new_client();
    let counter = Arc::new(AtomicU64::new(0));
    let mut taken = 0u64;
    loop {
        let mut ask = json!({});
        if let Some(f) = k.freedom {
            f.extra("lease", &mut ask);
        }
        let lease = chan.req("lease", ask).await.map_err(|e| e.to_string())?;
        let mut run = Run::new(&env, &lease, chan.clone(), http.clone(), k, counter.clone());
        run.taken = taken;
        taken += 1;
        run.hold(renew_every, &cancels).await;
        if k.breaks(Mutant::NoLeaseAfterRun) {
            std::future::pending::<()>().await;
        }
    }
}

/// What the harness says in `hello` (§ 2), as its mutants and the freedom's extras have it.
fn hello_of(env: &LaunchEnv, k: Knobs) -> Value {
    let mut said = json!({
        "api": if k.breaks(Mutant::Api4) { 4 } else { 5 },
        "name": if k.breaks(Mutant::WrongName) { "nylorun".to_string() } else { env.name.clone() },
        "version": env!("CARGO_PKG_VERSION"),
        "features": {}
    });
    if let Some(f) = k.freedom {
        f.extra("hello", &mut said);
        f.extra("hello.features", &mut said["features"]);
    }
    if k.breaks(Mutant::HelloDeclaresTools) {
        said["tools"] = json!([{ "name": "search" }]);
    }
    if k.breaks(Mutant::HelloFeaturesTools) {
        said["features"]["tools"] = json!([{ "name": "search" }]);
    }
    said
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
