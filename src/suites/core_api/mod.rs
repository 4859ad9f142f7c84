//! The Harness API v5 suite, core role (spec 004): hcpspec plays the harness. A case is a
//! script: arrange the core under test through its control shim (docs/core-protocol.md), then
//! connect, send frames and call the gates as a harness would (and as one must not), judging
//! every answer with hcpspec's matchers.

pub mod always;
pub mod fakes;
pub mod freedom;
pub mod fuzz;
pub mod knobs;
pub mod media;
pub mod names;
mod padded;
pub mod pods;
pub mod probe;
pub mod reference;
pub mod role;
pub mod step;
mod suite;
pub mod tools;
pub mod versions;
pub mod wire_names;
pub use step::{Action, Script, Step};
pub use suite::CoreApi;

use crate::adapter::loopback::loopback_origin;
use crate::adapter::sched::{self, Whose};
use crate::adapter::{Adapter, CallError};
use crate::case::matcher::{self, Claims};
use crate::case::Case;
use crate::run::{CaseResult, Failure, Observation, Verdict};
use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

/// What `drives` says in the suite.json of a suite of cores.
pub const DRIVES: &str = "core";
/// The newest version of the control protocol: what the embedded cores state.
pub const PROTOCOL: &str = "hcpspec-core/2";
/// Every version hcpspec speaks, oldest first (docs/CHANGELOG.md).
pub const PROTOCOLS: &[&str] = &["hcpspec-core/1", "hcpspec-core/2"];

/// How its shim describes itself, and the protocol hcpspec speaks with it.
pub const DESCRIBE: crate::suites::Describe = crate::suites::Describe {
    method: "core.describe",
    what: "core",
    protocols: PROTOCOLS,
};

/// How long hcpspec waits for an answer, a message or an upgrade.
const WAIT: Duration = Duration::from_secs(3);

/// A case's whole budget: every wait of a case (an answer, a message, an upgrade, a gate call,
/// a `wait` step) is at most what is left of it, and a case past it is an error verdict naming
/// it (docs/security.md).
pub const CASE_BUDGET: Duration = Duration::from_secs(60);

/// The largest gate answer body hcpspec reads: twice the largest answer of a fake tool
/// (8 MiB), which a gate may relay. Past it the observation is `{status, error}`.
pub const GATE_BODY_CAP: usize = 2 * crate::shim::MAX_MESSAGE;

/// The largest WebSocket message (and frame) a core may send: past it the connection is
/// closed and observed `{closed, error}`.
pub const MAX_FRAME: usize = 2 * crate::shim::MAX_MESSAGE;

/// What a connection holds unread (frames core sent that no step has taken yet): at most this
/// many frames and this many bytes. Past either the connection is flooded: hcpspec stops
/// reading it, and the next request or await on it observes `{flood}`.
pub const UNREAD_FRAMES: usize = 10_000;
pub const UNREAD_BYTES: usize = 32 << 20;

/// What hcpspec's steps may have queued on a connection that the core has not read yet: one
/// request of the largest `padTo` (64 MiB) and more. Past it a step's frame is not sent, and the
/// step observes `{unsent}`.
pub const UNSENT_BYTES: usize = 96 << 20;

/// Answers to core's pings waiting to be sent: past them a ping goes unanswered.
const PING_REPLIES: usize = 4;

/// A connector to a core's control shim: a fresh one per case.
pub type Connector = crate::adapter::Connector;

/// `inproc:reference`, `inproc:mutant:NAME`, or any spec `--runtime` takes for a shim (stdio:,
/// http://, ws://): the control protocol is JSON-RPC over the same transports.
pub fn connector(
    spec: &crate::spec::Spec,
    opts: &crate::adapter::Options,
) -> Result<Connector, crate::error::BadInput> {
    crate::adapter::process::connector(spec, opts, "core", embedded)
}

/// The embedded core `inproc:NAME` names (the reference, a mutant or a variant), if any.
pub fn embedded(name: &str) -> Option<Box<dyn Adapter>> {
    reference::ReferenceCore::named(name).map(|c| Box::new(c) as Box<dyn Adapter>)
}

struct Conn {
    tx: mpsc::UnboundedSender<padded::Out>,
    /// Core's frames, with the size of their text.
    rx: mpsc::Receiver<(Value, usize)>,
    /// Frames read while waiting for something else: core's messages and requests.
    held: Vec<(Value, usize)>,
    unread: Arc<Unread>,
    next: u64,
}

/// What a connection holds unread (queued by its reader, or held), shared with the reader.
#[derive(Default)]
struct Unread {
    frames: AtomicUsize,
    bytes: AtomicUsize,
    /// Why the reader stopped: the connection was flooded.
    flood: Mutex<Option<String>>,
    /// A ping of core's is queued and not yet taken: further ones are not queued (one stands
    /// for many).
    ping_queued: AtomicBool,
    /// Bytes of hcpspec's frames queued and not yet written to the core.
    unsent: AtomicUsize,
}

impl Unread {
    /// Count a frame in; an error when that floods the connection.
    fn admit(&self, len: usize) -> Result<(), String> {
        let frames = self.frames.fetch_add(1, Ordering::SeqCst) + 1;
        let bytes = self.bytes.fetch_add(len, Ordering::SeqCst) + len;
        if frames > UNREAD_FRAMES || bytes > UNREAD_BYTES {
            return Err(format!(
                "core sent more than {UNREAD_FRAMES} frames / {} MiB unread: hcpspec stopped reading the connection",
                UNREAD_BYTES >> 20
            ));
        }
        Ok(())
    }

    /// A frame taken (answered, skipped, or taken from the held ones).
    fn release(&self, f: &Value, len: usize) {
        self.frames.fetch_sub(1, Ordering::SeqCst);
        self.bytes.fetch_sub(len, Ordering::SeqCst);
        if f["t"] == "ping" {
            self.ping_queued.store(false, Ordering::SeqCst);
        }
    }

    fn flooded(&self) -> Option<Value> {
        let f = self.flood.lock().unwrap_or_else(|e| e.into_inner());
        f.as_ref().map(|why| json!({ "flood": why }))
    }
}

struct Exec {
    rt: tokio::runtime::Runtime,
    control: Box<dyn Adapter>,
    conns: HashMap<String, Conn>,
    vars: Map<String, Value>,
    /// hcpspec's one HTTP client (its pool is the process's, its requests on its own runtime).
    http: reqwest::Client,
    /// Keep what was sent in each observation (the fuzzer's oracle reads it).
    annotate: bool,
    /// What the fake tools received.
    calls: fakes::Calls,
    /// Gate calls in flight (`"async": NAME`), awaited by `gateResult`.
    pending: HashMap<String, tokio::task::JoinHandle<Result<Value, String>>>,
    /// The case's budget, in charged time (`sched`: what the machine made the core or hcpspec
    /// wait for a CPU is not charged), and its length.
    deadline: sched::Deadline,
    budget: Duration,
    /// The thread of `rt`'s one worker, which carries the core's frames: its waits are not
    /// charged either.
    worker: Option<i32>,
    /// core.start's `harness` (default nylorun): whom a step that names no harness connects as.
    harness: String,
    /// core.start's `names`: what the core calls the members spec 004 does not print.
    names: names::Names,
}

impl Drop for Exec {
    /// The connections go first: their readers stop at their next frame, so the runtime's
    /// shutdown does not wait on a core that floods.
    fn drop(&mut self) {
        self.conns.clear();
    }
}

/// Run one case on the core behind `control`.
pub fn run_case(case: &Case, connect: &Connector) -> CaseResult {
    run_case_within(case, connect, CASE_BUDGET)
}

/// [`run_case`] with another budget than [`CASE_BUDGET`] (tests use a short one).
pub fn run_case_within(case: &Case, connect: &Connector, budget: Duration) -> CaseResult {
    let _turn = suite::heavy(case).then(suite::heavy_turn);
    let started = Instant::now();
    let mut observations = Vec::new();
    let verdict = match connect() {
        Err(e) => Verdict::Error {
            message: crate::snapshot::contain_text(&e),
        },
        Ok(control) => {
            let played = script_of(case)
                .and_then(|script| execute(&script, control, &mut observations, false, budget));
            match played {
                Ok((v, _)) => v,
                Err(message) => Verdict::Error { message },
            }
        }
    };
    // What the core said (a `core.start` error, a failure's evidence), as reports keep it:
    // secrets redacted, texts capped.
    let mut verdict = verdict;
    crate::run::contain_verdict(&mut verdict);
    CaseResult::of(case, verdict, observations, vec![], started)
}

/// A case's script: the one parsed at load, or (a case built in memory) parsed now.
fn script_of(case: &Case) -> Result<std::borrow::Cow<'_, Script>, String> {
    if let Some(script) = case.parsed.get::<Script>() {
        return Ok(std::borrow::Cow::Borrowed(script));
    }
    let script = case.member("script").cloned().unwrap_or(json!({}));
    Script::parse(&script)
        .map(std::borrow::Cow::Owned)
        .map_err(|(at, why)| format!("/script{at}: {why}"))
}

/// Play a script for the fuzzer: its observations, annotated with what was sent
/// (`$sent`, `$upgrade`, `$key`, `$token`), and whether the core was still up after it; None
/// when the script could not be played (no control shim, no `core.start`, no fake tools).
/// Why a script could not be played at all (the shim could not be started, `core.start` had no
/// usable answer) is the `Err`: the fuzzer counts and names it, never a pass. A step ending in an
/// error is not: a mutation ends scripts so (a refused upgrade leaves no connection `h`), and the
/// observations before it are judged.
pub fn play_for_fuzz(
    script: &Script,
    connect: &Connector,
) -> Result<(Vec<Observation>, bool), Unplayable> {
    let mut observations = Vec::new();
    let control = connect().map_err(Unplayable)?;
    let (_, up) =
        execute(script, control, &mut observations, true, CASE_BUDGET).map_err(Unplayable)?;
    Ok((observations, up))
}

/// Why a fuzz trial's script could not be played at all.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Unplayable(pub String);

fn execute(
    script: &Script,
    control: Box<dyn Adapter>,
    obs: &mut Vec<Observation>,
    fuzzing: bool,
    budget: Duration,
) -> Result<(Verdict, bool), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let http = crate::adapter::client::client();
    let worker = rt.block_on(async {
        tokio::spawn(async { sched::thread_id() })
            .await
            .ok()
            .flatten()
    });
    let mut x = Exec {
        rt,
        control,
        conns: HashMap::new(),
        vars: Map::new(),
        http,
        annotate: fuzzing,
        calls: Default::default(),
        pending: HashMap::new(),
        deadline: sched::Deadline::start(budget, &Whose::default()),
        budget,
        worker,
        harness: reference::NYLORUN.to_string(),
        names: names::Names::default(),
    };
    // The fake tools the core's Tool Gate may call: their URLs are `${fakes.mcp}`, `${fakes.http}`.
    let urls =
        x.rt.block_on(fakes::start(x.calls.clone()))
            .map_err(|e| format!("the fake tools did not start: {e}"))?;
    x.vars.insert("fakes".into(), urls.clone());
    let params = x.fill(&script.start)?;
    fake_endpoints_only(&params, &urls)?;
    if let Some(h) = params.get("harness").and_then(Value::as_str) {
        x.harness = h.to_string();
    }
    let start = x.control("core.start", params);
    let started = match start {
        Ok(v) => v,
        Err(e) if e.not_implemented() && !fuzzing => {
            return Ok((
                Verdict::Unimplemented {
                    reason: format!("core.start: {e}"),
                },
                false,
            ))
        }
        Err(e) => return Err(format!("core.start failed: {e}")),
    };
    for key in ["coreUrl", "gatesUrl"] {
        if let Some(url) = started.get(key).and_then(Value::as_str) {
            loopback_origin(url).map_err(|e| format!("core.start's {key}: {e}"))?;
        }
    }
    x.names = names::Names::from_start(started.get("names")).map_err(|e| e.to_string())?;
    let mut started = started;
    let stated = versions::stated(x.control.as_mut());
    started["failure"] = versions::failure_form(started.get("failure"), stated.as_deref())?;
    started["turnCompleted"] = turn_completed(started.get("turnCompleted"))?;
    let listed = !fuzzing && versions::judges_refusals(stated.as_deref());
    media::template(started.get("mediaPrompt"))?;
    x.vars.insert("core".into(), started);
    let mut verdict = Verdict::Pass;
    for (i, step) in script.steps.iter().enumerate() {
        if let Some(message) = x.past_budget(i, "before it began") {
            verdict = Verdict::Error { message };
            break;
        }
        let (action, observed) = match x.step(step) {
            Ok(o) => o,
            Err(StepError::Unimplemented(m)) => {
                verdict = Verdict::Unimplemented { reason: m };
                break;
            }
            Err(StepError::Broken(m)) => {
                verdict = Verdict::Error { message: m };
                break;
            }
        };
        // A wait the budget cut short observed nothing to judge: the budget is the verdict.
        if let Some(message) = x.past_budget(i, &format!("in `{action}`")) {
            verdict = Verdict::Error { message };
            break;
        }
        if let Some(name) = &step.save {
            if let Err(message) = crate::case::template::save(&mut x.vars, name, observed.clone()) {
                verdict = Verdict::Error {
                    message: message.into(),
                };
                break;
            }
        }
        // The fuzzer's oracle reads whole observations; reports read them bounded.
        let shown = match fuzzing {
            true => redact_tokens(&observed),
            false => crate::snapshot::contain(&redact_tokens(&observed)),
        };
        obs.push(Observation {
            step: i,
            action: action.clone(),
            value: shown.clone(),
        });
        if let Some(expect) = &step.expect {
            let expect = match x.fill(expect) {
                Ok(e) => versions::judged_as(e, &x.vars["core"]["failure"]),
                Err(message) => {
                    verdict = Verdict::Error { message };
                    break;
                }
            };
            if let Err(m) = matcher::check(&expect, &observed, &Claims::default()) {
                verdict = Verdict::Fail(Failure {
                    step: i,
                    action,
                    path: m.path,
                    message: m.message,
                    expected: m.expected,
                    actual: shown,
                });
                break;
            }
        }
        // The fuzzer judges answers by its own invariants, every step played.
        if let Some(f) = always::refusal(i, &action, &observed, &shown).filter(|_| listed) {
            verdict = Verdict::Fail(f);
            break;
        }
    }
    // The fuzzer asks whether the core is still up: its control shim answers, and its listener
    // answers an upgrade (with 101, or a refusal such as a closed Tenant's 503).
    let up = fuzzing
        && x.control.call("core.describe", json!({})).is_ok()
        && matches!(x.connect(&json!({ "as": "$probe" })), Ok((Ok(_), _)));
    let _ = x.control.call("core.stop", json!({}));
    Ok((verdict, up))
}

/// The value of an output's `type` that says the turn completed: spec 004 prints turn.waiting
/// (§ 4) and turn.failed (§ 8) but not this one, so a core says it (default `turn.completed`).
fn turn_completed(said: Option<&Value>) -> Result<Value, String> {
    match said.filter(|v| !v.is_null()) {
        None => Ok(json!("turn.completed")),
        Some(Value::String(s)) if !s.is_empty() => Ok(json!(s)),
        Some(v) => Err(format!(
            "core.start's turnCompleted is `{v}`, not a non-empty string (such as \"turn.completed\")"
        )),
    }
}
/// Every endpoint `core.start` is given is one of hcpspec's fake tools: the Tool Gate of the
/// core under test calls it, and its answer lands in the outputs (a case must not aim a core at
/// another URL). The load check (the script schema) holds files; this holds cases built in
/// memory.
fn fake_endpoints_only(start: &Value, fakes: &Value) -> Result<(), String> {
    let Some(endpoints) = start.get("endpoints") else {
        return Ok(());
    };
    let Some(endpoints) = endpoints.as_object() else {
        return Err("core.start: `endpoints` is not an object".into());
    };
    let bases: Vec<&str> = ["mcp", "http"]
        .iter()
        .filter_map(|k| fakes[*k].as_str())
        .collect();
    for (name, e) in endpoints {
        let url = e.get("url").and_then(Value::as_str).unwrap_or_default();
        let ok = bases.iter().any(|b| {
            url.strip_prefix(b).is_some_and(|rest| {
                rest.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._~-".contains(c))
            })
        });
        if !ok {
            return Err(format!(
                "core.start: endpoint `{}` names `{}`, not one of hcpspec's fake tools (${{fakes.mcp}}, ${{fakes.http}}NAME)",
                crate::snapshot::contain_text(name),
                crate::snapshot::contain_text(url)
            ));
        }
    }
    Ok(())
}

/// How a `request` step frames what it sends: padded to `pad_to` bytes at `pad_at`, as a
/// binary frame instead of a text one, and with `append`'s text after the request in its frame.
struct Framing<'a> {
    pad_to: Option<u64>,
    pad_at: &'a str,
    binary: bool,
    /// Text sent after the request's JSON in the same frame (which is then no one JSON message).
    append: Option<&'a str>,
    /// The request's id, when the case chooses it (else the connection's next number).
    id: Option<Value>,
}

impl Default for Framing<'_> {
    fn default() -> Self {
        Framing {
            pad_to: None,
            pad_at: "/pad",
            binary: false,
            append: None,
            id: None,
        }
    }
}

/// Whether a saved answer holds `token` as a `hostToken` (at any depth).
fn holds_host_token(v: &Value, token: &str) -> bool {
    match v {
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| (k == "hostToken" && x == token) || holds_host_token(x, token)),
        Value::Array(a) => a.iter().any(|x| holds_host_token(x, token)),
        _ => false,
    }
}

/// How long a `request` or `await` step waits: its `waitMs` (at most 10 s), else 3 s. A case
/// that expects nothing to come may wait less.
fn wait_of(wait_ms: Option<u64>) -> Duration {
    wait_ms.map_or(WAIT, |ms| Duration::from_millis(ms.min(10_000)))
}

/// Set the value at a JSON pointer, making the objects on its way; false when a step of the
/// way is not an object. Err past [`crate::pointer::MAX_TOKENS`] (the pointer is a core's or a
/// case's: the value built along it would nest as deep).
fn set_pointer(v: &mut Value, pointer: &str, x: Value) -> Result<bool, String> {
    if !pointer.starts_with('/') {
        return Ok(false);
    }
    let keys = crate::pointer::bounded_tokens(pointer)?;
    let mut at = v;
    for (i, k) in keys.iter().enumerate() {
        let Some(o) = at.as_object_mut() else {
            return Ok(false);
        };
        if i + 1 == keys.len() {
            o.insert(k.to_string(), x);
            return Ok(true);
        }
        at = o.entry(k.to_string()).or_insert_with(|| json!({}));
    }
    Ok(false)
}

/// The harness of `harnesses` (core.start's answer) a step connects as when it names none:
/// `wanted` (core.start's `harness`, default nylorun) when it is there, else the first member.
fn default_harness(harnesses: &Value, wanted: &str) -> Option<String> {
    let o = harnesses.as_object()?;
    if o.contains_key(wanted) {
        return Some(wanted.to_string());
    }
    o.keys().next().cloned()
}

/// Run and harness tokens are fresh per core: observations name them `[token]`; a clock's
/// reading (a number under a key ending in `At`, such as a timing's `startedAt`) differs from
/// run to run: `[time]`. (Steps read the saved values, which keep both.)
fn redact_tokens(v: &Value) -> Value {
    match v {
        Value::String(s) if s.starts_with("nylorun-") && s.len() > 12 => json!("[token]"),
        Value::Array(a) => Value::Array(a.iter().map(redact_tokens).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| match x {
                    Value::Number(_) if k.ends_with("At") => (k.clone(), json!("[time]")),
                    _ => (k.clone(), redact_tokens(x)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// How an upgrade went: its HTTP status, or why the core gave none (it hung past 3 s, or the
/// connection failed).
type Upgraded = Result<u16, String>;

enum StepError {
    Unimplemented(String),
    Broken(String),
}

/// A harness connection's socket.
type Ws = tokio_tungstenite::WebSocketStream<padded::Socket>;

/// The upgrade request of a `connect` or `hello` step.
type UpgradeRequest = tokio_tungstenite::tungstenite::handshake::client::Request;

/// A connection's reader: core's frames, counted, to the steps; core's pings answered (unless
/// the connection is silent).
struct Reader {
    fin: mpsc::Sender<(Value, usize)>,
    ping: mpsc::Sender<Message>,
    silent: bool,
    counted: Arc<Unread>,
    /// The case's wire trace: the reader runs on the runtime's worker, not the case's thread.
    trace: Option<crate::trace::Handle>,
}

impl Reader {
    async fn read(self, mut source: futures_util::stream::SplitStream<Ws>) {
        let Reader {
            fin,
            ping,
            silent,
            counted,
            trace,
        } = self;
        let mut n = 0u64;
        let end = loop {
            // A core that floods must not hold the runtime's one worker (the writer, gate
            // calls in flight) nor its shutdown: yield now and then, and stop once the
            // connection is gone (its receiver dropped).
            n += 1;
            if n.is_multiple_of(64) {
                tokio::task::yield_now().await;
            }
            if fin.is_closed() {
                return;
            }
            let t = match source.next().await {
                None => break json!({ "closed": true }),
                Some(Err(e)) => break json!({ "closed": true, "error": e.to_string() }),
                Some(Ok(Message::Text(t))) => t,
                Some(Ok(_)) => continue,
            };
            let f: Value =
                serde_json::from_str(t.as_str()).unwrap_or_else(|_| json!({ "text": t.as_str() }));
            if let Some(h) = &trace {
                let what = f["m"].as_str().or(f["t"].as_str()).unwrap_or("frame");
                h.received(&format!("ws {what}"), t.as_bytes());
            }
            if f["t"] == "ping" {
                if !silent {
                    let _ = ping.try_send(Message::text(r#"{"t":"ping"}"#));
                }
                if counted.ping_queued.swap(true, Ordering::SeqCst) {
                    continue;
                }
            }
            let flood = counted
                .admit(t.len())
                .and_then(|()| fin.try_send((f, t.len())).map_err(|e| e.to_string()));
            if let Err(why) = flood {
                *counted.flood.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                return;
            }
        };
        counted.frames.fetch_add(1, Ordering::SeqCst);
        let _ = fin.try_send((end, 0));
    }
}

impl Exec {
    /// `own`, or what is left of the case's budget when that is less.
    fn left(&self, own: Duration) -> Duration {
        self.deadline.remaining(own, &self.unwaited())
    }

    /// Whose waits for a CPU a wait does not charge, besides the waiting thread's: the core's
    /// processes (its control shim's tree) and the worker that carries its frames.
    fn unwaited(&self) -> Whose {
        self.control.whose().and(Whose {
            tids: self.worker.into_iter().collect(),
            ..Whose::default()
        })
    }

    /// An error message when the case has used its budget up (at step `i`, `when`).
    fn past_budget(&self, i: usize, when: &str) -> Option<String> {
        let budget = &self.deadline;
        budget.remaining(Duration::from_nanos(1), &self.unwaited()).is_zero().then(|| {
            format!(
                "the case passed its budget of {} s (core_api::CASE_BUDGET) at step {i}, {when}: its waits add up to more than a case may take",
                self.budget.as_secs_f64()
            )
        })
    }

    fn control(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        self.control.call(method, params)
    }

    fn fill(&self, v: &Value) -> Result<Value, String> {
        crate::case::template::fill(&self.vars, v).map_err(String::from)
    }

    fn lookup(&self, path: &str) -> Option<Value> {
        crate::case::template::lookup(&self.vars, path)
    }

    /// The harness a step that names none connects as: core.start's `harness` (default
    /// nylorun) when `harnesses` has it, else the first member. A shim's JSON library may order
    /// an object's members as it likes, so member order decides only as a last resort.
    fn default_harness(&self) -> Option<String> {
        default_harness(&self.lookup("core.harnesses")?, &self.harness)
    }

    /// Where the core reads an intent's `purpose`: core.start's `purposeAt`, a JSON pointer into
    /// `effect.intent`'s params (default `/purpose`, beside runId, effect and requestHash).
    fn purpose_at(&self) -> Result<String, String> {
        match self.lookup("core.purposeAt") {
            None | Some(Value::Null) => Ok("/purpose".into()),
            Some(Value::String(at)) if at.len() > 1 && at.starts_with('/') && !at.contains("//") => {
                crate::pointer::bounded_tokens(&at)
                    .map_err(|why| format!("core.start's purposeAt is {why}"))?;
                Ok(at)
            }
            Some(other) => Err(format!(
                "core.start's purposeAt is `{}`, not a JSON pointer such as /purpose or /effect/purpose",
                crate::snapshot::contain_text(&other.to_string())
            )),
        }
    }

    /// Play one step's action: what reports call it, and its observation.
    fn step(&mut self, step: &Step) -> Result<(String, Value), StepError> {
        match &step.action {
            Action::Control(m) => self.play_control(m, step.params.as_ref()),
            Action::Connect(c) => self.play_connect(c),
            Action::Hello(h) => self.play_hello(h),
            Action::Request(r) => self.play_request(r),
            Action::GateResult(name) => self.play_gate_result(name),
            Action::Gate(g) => self.play_gate(g),
            Action::Post(p) => self.play_post(p),
            Action::Await(a) => self.play_await(a),
            Action::Send(f) => self.play_send(f),
            Action::Close(c) => self.play_close(c),
            Action::Recall(v) => self.play_recall(v),
            Action::Fakes(f) => self.play_fakes(f),
            Action::Wait(ms) => self.play_wait(*ms),
        }
    }

    /// `{"connect": …}`: open a harness connection.
    fn play_connect(&mut self, c: &Value) -> Result<(String, Value), StepError> {
        let c = self.fill(c).map_err(StepError::Broken)?;
        let (got, sent) = self.connect(&c).map_err(StepError::Broken)?;
        Ok(("connect".into(), self.upgraded(got, sent)?))
    }

    /// `{"post": …}`: a POST to the core's harness listener.
    fn play_post(&mut self, p: &Value) -> Result<(String, Value), StepError> {
        let p = self.fill(p).map_err(StepError::Broken)?;
        let res = self.post(&p).map_err(StepError::Broken)?;
        Ok((format!("post {}", p["path"].as_str().unwrap_or("")), res))
    }

    /// `{"await": …}`: the next message `m` core sends on a connection.
    fn play_await(&mut self, a: &step::Await) -> Result<(String, Value), StepError> {
        let f = self
            .await_msg(&a.on, &a.m, self.left(wait_of(a.wait_ms)))
            .map_err(StepError::Broken)?;
        Ok((format!("await {}", a.m), f))
    }

    /// `{"close": …}`: a harness that crashes; its connection closes with no goodbye.
    fn play_close(&mut self, c: &step::Close) -> Result<(String, Value), StepError> {
        let conn = self
            .conns
            .remove(&c.on)
            .ok_or_else(|| StepError::Broken(format!("no connection `{}`", c.on)))?;
        let _ = conn.tx.send(padded::Out::Message(Message::Close(None)));
        Ok(("close".into(), json!({ "closed": true })))
    }

    /// `{"recall": …}`: earlier observations, judged together (one reading or another passes).
    fn play_recall(&mut self, v: &Value) -> Result<(String, Value), StepError> {
        Ok(("recall".into(), self.fill(v).map_err(StepError::Broken)?))
    }

    /// `{"fakes": {await? | release?}}`: what the fake tools received (or await, or release).
    fn play_fakes(&mut self, f: &Value) -> Result<(String, Value), StepError> {
        let (left, whose) = (self.left(WAIT), self.unwaited());
        Ok(self.rt.block_on(fakes::play(&self.calls, f, left, &whose)))
    }

    /// `{"wait": MS}`: sleep, within the case's budget.
    fn play_wait(&mut self, ms: u64) -> Result<(String, Value), StepError> {
        let sleep = self.left(Duration::from_millis(ms.min(10_000)));
        self.rt
            .block_on(async move { tokio::time::sleep(sleep).await });
        Ok(("wait".into(), json!(ms)))
    }

    /// `{"control": METHOD, "params": …}`: a call on the control shim.
    fn play_control(
        &mut self,
        m: &str,
        params: Option<&Value>,
    ) -> Result<(String, Value), StepError> {
        let params = self
            .fill(params.unwrap_or(&json!({})))
            .map_err(StepError::Broken)?;
        let sent = params.clone();
        match self.control(m, params) {
            Ok(mut v) => {
                if self.annotate && v.is_object() {
                    v["$sent"] = sent;
                }
                Ok((format!("control {m}"), v))
            }
            Err(e) if e.not_implemented() => Err(StepError::Unimplemented(format!("{m}: {e}"))),
            Err(e) => Ok((format!("control {m}"), json!({ "error": e.to_string() }))),
        }
    }

    /// `{"hello": …}`: connect, then say hello as a harness of core.start's.
    fn play_hello(&mut self, h: &Value) -> Result<(String, Value), StepError> {
        let broken = StepError::Broken;
        let h = self.fill(h).map_err(broken)?;
        let (got, sent) = self.connect(&h).map_err(broken)?;
        if got != Ok(101) {
            return Ok(("hello".into(), self.upgraded(got, sent)?));
        }
        let name = h
            .get("harness")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| self.default_harness());
        let p = json!({
            "api": h.get("api").cloned().unwrap_or(json!(5)),
            "name": h.get("name").cloned().unwrap_or(json!(name.unwrap_or_default())),
            "version": "hcpspec", "features": h.get("features").cloned().unwrap_or(json!({}))
        });
        let on = h
            .get("as")
            .and_then(Value::as_str)
            .unwrap_or("h")
            .to_string();
        let mut res = self.request(&on, "hello", p.clone()).map_err(broken)?;
        if self.annotate {
            res["$sent"] = p;
            res["$upgrade"] = sent;
        }
        Ok(("hello".into(), res))
    }

    /// `{"request": …}`: send a request, framed as it says, and await its answer.
    fn play_request(&mut self, r: &Value) -> Result<(String, Value), StepError> {
        let broken = StepError::Broken;
        let r = self.fill(r).map_err(broken)?;
        let on = r
            .get("on")
            .and_then(Value::as_str)
            .unwrap_or("h")
            .to_string();
        let m = r
            .get("m")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut p = r.get("p").cloned().unwrap_or(json!({}));
        // § 6 names no place for an intent's `purpose`: it goes where the core under test
        // reads it (core.start's `purposeAt`), so no case fixes the placement.
        if let Some(purpose) = r.get("purpose") {
            let at = self.purpose_at().map_err(broken)?;
            if !set_pointer(&mut p, &at, purpose.clone()).map_err(broken)? {
                return Err(StepError::Broken(format!(
                    "core.start's purposeAt `{at}` leads through a member of the request that is no object"
                )));
            }
        }
        let pad_to = r.get("padTo").and_then(Value::as_u64);
        let binary = r.get("binary") == Some(&json!(true));
        let framing = Framing {
            pad_to,
            pad_at: r.get("padAt").and_then(Value::as_str).unwrap_or("/pad"),
            binary,
            append: r.get("append").and_then(Value::as_str),
            id: r.get("id").cloned(),
        };
        let mut res = self
            .request_padded(
                &on,
                &m,
                p.clone(),
                framing,
                self.left(wait_of(r.get("waitMs").and_then(Value::as_u64))),
            )
            .map_err(broken)?;
        if self.annotate {
            res["$sent"] = p;
            // A frame that is no JSON text message (§ 1: binary, text after the message, past
            // HARNESS_MAX_PAYLOAD): core may leave it unanswered.
            let past = pad_to.is_some_and(|n| n > crate::suites::world::core::MAX_PAYLOAD as u64);
            if binary
                || past
                || r.get("append")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.is_empty())
            {
                res["$noMessage"] = json!(true);
            }
        }
        Ok((format!("request {m}"), res))
    }

    /// `{"gateResult": NAME}`: the answer of the gate call `NAME` in flight.
    fn play_gate_result(&mut self, name: &str) -> Result<(String, Value), StepError> {
        let Some(pending) = self.pending.remove(name) else {
            return Err(StepError::Broken(format!(
                "no gate call `{name}` in flight"
            )));
        };
        // The call has its own deadline (from when it started); the budget bounds the rest.
        let left = self.left(WAIT);
        let whose = self.unwaited();
        let res = match self.rt.block_on(async move {
            sched::Deadline::start(left, &whose)
                .within(&whose, pending)
                .await
        }) {
            Err(_) => {
                json!({ "error": format!("the gate call `{name}` did not end within the case's budget") })
            }
            Ok(r) => r
                .map_err(|e| StepError::Broken(e.to_string()))?
                .map_err(StepError::Broken)?,
        };
        Ok((format!("gateResult {name}"), res))
    }

    /// `{"gate": …}`: a gate call, awaited now or (`async`) left in flight.
    fn play_gate(&mut self, g: &Value) -> Result<(String, Value), StepError> {
        let broken = StepError::Broken;
        let mut g = self.fill(g).map_err(broken)?;
        // A media part is written in the core's own form (core.start's mediaPrompt).
        if media::wanted(&g["body"]) {
            let t = self.lookup("core.mediaPrompt").unwrap_or(Value::Null);
            if t.is_null() {
                let why = "core.start answered no mediaPrompt (how a ModelCall's prompt holds a media part)";
                return Err(StepError::Unimplemented(why.into()));
            }
            g["body"] = media::fill(&g["body"], &t);
        }
        if let Some(name) = g.get("async").and_then(Value::as_str) {
            let call = self.gate_call(&g).map_err(broken)?;
            let handle = self.rt.spawn(call);
            self.pending.insert(name.to_string(), handle);
            return Ok((
                format!("gate {} (in flight)", g["route"].as_str().unwrap_or("")),
                json!({ "started": name }),
            ));
        }
        let mut res = self.gate(&g).map_err(broken)?;
        if self.annotate {
            res["$key"] = g.get("key").cloned().unwrap_or(Value::Null);
            res["$token"] = self.whose(g.get("token").and_then(Value::as_str));
        }
        Ok((format!("gate {}", g["route"].as_str().unwrap_or("")), res))
    }

    /// `{"send": {on?, text | binary}}`: a raw frame.
    fn play_send(&mut self, f: &step::Send) -> Result<(String, Value), StepError> {
        let conn = self
            .conns
            .get(&f.on)
            .ok_or_else(|| StepError::Broken(format!("no connection `{}`", f.on)))?;
        let msg = match (&f.text, &f.binary) {
            (Some(t), _) => Message::text(t.clone()),
            (None, Some(b)) => Message::binary(b.as_bytes().to_vec()),
            _ => return Err(StepError::Broken("send: `text` or `binary`".into())),
        };
        Ok((
            "send".into(),
            match conn.send(padded::Out::Message(msg)) {
                Ok(()) => json!({ "sent": true }),
                Err(e) => json!({ "sent": false, "unsent": e }),
            },
        ))
    }

    /// An upgrade's observation, `{status}`. The fuzzer's has what was sent (`$upgrade`), and
    /// an upgrade the core left unanswered is `{noUpgrade}` there, not the end of the script.
    fn upgraded(&self, got: Upgraded, sent: Value) -> Result<Value, StepError> {
        let mut o = match got {
            Ok(status) => json!({ "status": status }),
            Err(e) if self.annotate => json!({ "noUpgrade": e }),
            Err(e) => return Err(StepError::Broken(e)),
        };
        if self.annotate {
            o["$upgrade"] = sent;
        }
        Ok(o)
    }

    /// Whose a token is: `"none"`, `{"harness": ID}` for a harness token of `core.start`'s
    /// answer, `"host"` for a `hostToken` a pod's join was answered with (a pod's harness
    /// connects with it), or `"unknown"` (a run token, or one core never gave).
    fn whose(&self, token: Option<&str>) -> Value {
        let Some(t) = token else {
            return json!("none");
        };
        let harnesses = self.lookup("core.harnesses").unwrap_or_default();
        let of = harnesses
            .as_object()
            .and_then(|m| m.iter().find(|(_, v)| *v == t));
        match of {
            Some((id, _)) => json!({ "harness": id }),
            None if self.vars.values().any(|v| holds_host_token(v, t)) => json!("host"),
            None => json!("unknown"),
        }
    }

    /// Open a harness connection: how the upgrade went (its status, 101 when accepted, or why the
    /// core gave none), and what was sent `{status?, path, api, token}` (`token` as [`Self::whose`]).
    /// An error is hcpspec's: it could not build the request.
    fn connect(&mut self, c: &Value) -> Result<(Upgraded, Value), String> {
        let (req, mut sent) = self.upgrade_request(c)?;
        // The wire trace: the upgrade as the step describes it (the token by whose it is), and
        // how it went.
        crate::trace::sent("ws upgrade", sent.to_string().as_bytes());
        let answered = |how: &str| crate::trace::received("ws upgrade", how.as_bytes());
        let name = c
            .get("as")
            .and_then(Value::as_str)
            .unwrap_or("h")
            .to_string();
        let wait = self.left(WAIT);
        let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
            .max_message_size(Some(MAX_FRAME))
            .max_frame_size(Some(MAX_FRAME));
        let whose = self.unwaited();
        let got = self.rt.block_on(async {
            sched::Deadline::start(wait, &whose)
                .within(&whose, padded::connect(req, config))
                .await
        });
        let ws = match got {
            Err(_) => {
                let why = format!("the upgrade hung past {} ms", wait.as_millis());
                answered(&why);
                return Ok((Err(why), sent));
            }
            Ok(Err(tokio_tungstenite::tungstenite::Error::Http(resp))) => {
                answered(&format!("HTTP {}", resp.status()));
                sent["status"] = json!(resp.status().as_u16());
                return Ok((Ok(resp.status().as_u16()), sent));
            }
            Ok(Err(e)) => {
                let why = format!("cannot connect: {e}");
                answered(&why);
                return Ok((Err(why), sent));
            }
            Ok(Ok(ws)) => ws,
        };
        answered("HTTP 101 Switching Protocols");
        sent["status"] = json!(101);
        let silent = c.get("silent") == Some(&json!(true));
        let conn = self.open(ws, silent);
        self.conns.insert(name, conn);
        Ok((Ok(101), sent))
    }

    /// The upgrade request a `connect` or `hello` step sends (its path on coreUrl's listener,
    /// its token, its `Nylorun-Harness-Api`), and what was sent `{path, api, token}`.
    fn upgrade_request(&self, c: &Value) -> Result<(UpgradeRequest, Value), String> {
        let url = self
            .lookup("core.coreUrl")
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or("core.start gave no coreUrl")?;
        let origin = loopback_origin(&url).map_err(|e| format!("core.start's coreUrl: {e}"))?;
        let url = match c.get("path").and_then(Value::as_str) {
            Some(p) => {
                let base = url.split("/nylorun/").next().unwrap_or(&url).to_string();
                format!("{base}{p}")
            }
            None => url,
        };
        // A path names a place on the core's listener, never another host (`@host:port/x`).
        if loopback_origin(&url).ok().as_ref() != Some(&origin) {
            return Err(format!(
                "connect: `{url}` is not on the core's listener ({origin}); a path is `/…` on coreUrl's host and port"
            ));
        }
        let token = match (c.get("token"), c.get("harness").and_then(Value::as_str)) {
            (Some(Value::String(t)), _) => Some(t.clone()),
            (Some(Value::Null), _) => None,
            (None, Some(h)) => self
                .lookup("core.harnesses")
                .and_then(|m| m.get(h).and_then(Value::as_str).map(str::to_string)),
            _ => self.default_harness().and_then(|h| {
                self.lookup("core.harnesses")
                    .and_then(|m| m.get(&h).and_then(Value::as_str).map(str::to_string))
            }),
        };
        let mut req = url
            .as_str()
            .into_client_request()
            .map_err(|e| e.to_string())?;
        let mut sent = json!({
            "path": req.uri().path(), "api": Value::Null, "token": self.whose(token.as_deref())
        });
        if let Some(t) = token {
            req.headers_mut().insert(
                "authorization",
                format!("Bearer {t}").parse().map_err(|_| "bad token")?,
            );
        }
        match c.get("api") {
            Some(Value::Null) => {}
            Some(v) => {
                req.headers_mut().insert(
                    "nylorun-harness-api",
                    v.as_str()
                        .unwrap_or("1")
                        .parse()
                        .map_err(|_| "bad header")?,
                );
            }
            None => {
                req.headers_mut()
                    .insert("nylorun-harness-api", "1".parse().expect("static"));
            }
        }
        if let Some(api) = req.headers().get("nylorun-harness-api") {
            sent["api"] = json!(api.to_str().unwrap_or_default());
        }
        Ok((req, sent))
    }

    /// A connection over an accepted upgrade: its writer and its reader run on the case's
    /// runtime. A `silent` one answers none of core's pings.
    fn open(&self, ws: Ws, silent: bool) -> Conn {
        let armed = padded::armed(&ws);
        let (sink, source) = ws.split();
        // What hcpspec sends (its steps' frames) and its answers to core's pings, of which at
        // most PING_REPLIES wait: a ping flood cannot queue replies without bound, nor hold a
        // request behind them.
        let (tx, out) = mpsc::unbounded_channel::<padded::Out>();
        let (ping, pings) = mpsc::channel::<Message>(PING_REPLIES);
        // Core's frames: bounded by UNREAD_FRAMES / UNREAD_BYTES (counted in `unread`, held
        // ones too), past which the reader stops.
        let (fin, rx) = mpsc::channel::<(Value, usize)>(UNREAD_FRAMES + 2);
        let unread = Arc::new(Unread::default());
        self.rt.spawn(padded::write_frames(
            sink,
            armed,
            out,
            pings,
            unread.clone(),
        ));
        let reader = Reader {
            fin,
            ping,
            silent,
            counted: unread.clone(),
            trace: crate::trace::current(),
        };
        self.rt.spawn(reader.read(source));
        Conn {
            tx,
            rx,
            held: vec![],
            unread,
            next: 1,
        }
    }

    /// Send a request; core's answer, `{ok, r}` or `{ok, e}`.
    fn request(&mut self, on: &str, m: &str, p: Value) -> Result<Value, String> {
        self.request_padded(on, m, p, Framing::default(), WAIT)
    }

    /// Send a request whose frame is `pad_to` bytes (a string of `x` at `pad_at`, a JSON pointer
    /// into `p`, default `/pad`, when the frame is shorter); core's answer.
    fn request_padded(
        &mut self,
        on: &str,
        m: &str,
        mut p: Value,
        Framing {
            pad_to,
            pad_at,
            binary,
            append,
            id: chosen,
        }: Framing,
        wait: Duration,
    ) -> Result<Value, String> {
        const MARK: &str = "@@hcpspec-pad@@";
        // The mark goes in first: `padAt` is written in hcpspec's names, as the case is.
        let padded = match pad_to {
            Some(_) => set_pointer(&mut p, pad_at, json!(MARK))
                .map_err(|why| format!("the request's padAt is {why}"))?,
            None => false,
        };
        self.names.sent(m, &mut p).map_err(|e| e.to_string())?;
        let whose = self.unwaited();
        let conn = self
            .conns
            .get_mut(on)
            .ok_or_else(|| format!("no connection `{on}`"))?;
        if let Some(flood) = conn.unread.flooded() {
            return Ok(flood);
        }
        let id = chosen.unwrap_or_else(|| json!(conn.next));
        conn.next += 1;
        let mut text = json!({ "t": "req", "id": id, "m": m, "p": p }).to_string();
        // The padding goes in at the mark as the frame is written, never held whole
        // (`padded`): a frame of many MiB is not built, escaped nor buffered.
        let frame = match (padded, text.find(MARK)) {
            (true, Some(at)) => {
                let pad = (pad_to.unwrap_or(0) as usize + MARK.len()).saturating_sub(text.len());
                let mut tail = text.as_bytes()[at + MARK.len()..].to_vec();
                tail.extend_from_slice(append.unwrap_or_default().as_bytes());
                text.truncate(at);
                let (head, binary) = (text.into_bytes(), binary);
                padded::Out::Padded(padded::Padded {
                    head,
                    pad,
                    tail,
                    binary,
                })
            }
            _ => {
                text.push_str(append.unwrap_or_default());
                padded::Out::Message(match binary {
                    true => Message::binary(text.into_bytes()),
                    false => Message::text(text),
                })
            }
        };
        let sent = conn.send(frame);
        if let Err(e) = sent {
            return Ok(json!({ "unsent": e }));
        }
        // The deadline is absolute: a flood of frames that are no answer does not renew it
        // (a timeout of nothing left still takes a frame that is ready, so it is checked first).
        let mut deadline = sched::Deadline::start(wait, &whose);
        loop {
            let left = deadline.left(&whose);
            let f = match conn.unread.flooded() {
                Some(flood) => return Ok(flood),
                None if left.is_zero() => Err(()),
                // Wall time ran out: the deadline, read in charged time, says whether it did.
                None => match self
                    .rt
                    .block_on(async { tokio::time::timeout(left, conn.rx.recv()).await })
                {
                    Err(_) => continue,
                    Ok(f) => Ok(f),
                },
            };
            match f {
                Err(()) => {
                    // What came instead is the evidence (a few frames, as they came).
                    let came: Vec<Value> = conn
                        .held
                        .iter()
                        .rev()
                        .take(3)
                        .rev()
                        .map(|(f, _)| f.clone())
                        .collect();
                    let mut r = json!({ "noAnswer": format!("no answer to `{m}` within {} ms", wait.as_millis()) });
                    if !came.is_empty() {
                        r["received"] = json!(came);
                    }
                    return Ok(r);
                }
                Ok(None) => {
                    return Ok(conn
                        .unread
                        .flooded()
                        .unwrap_or_else(|| json!({ "closed": true })))
                }
                Ok(Some((f, len))) => {
                    let answer = f["t"] == "res" && f["id"] == id;
                    if f.get("closed").is_some() || f["t"] == "ping" || answer {
                        conn.unread.release(&f, len);
                    }
                    match f {
                        f if f.get("closed").is_some() => return Ok(f),
                        f if f["t"] == "ping" => {}
                        Value::Object(mut r) if answer => {
                            r.remove("t");
                            r.remove("id");
                            if let Some(x) = r.get_mut("r") {
                                self.names.answered(m, x);
                            }
                            return Ok(Value::Object(r));
                        }
                        f => conn.held.push((f, len)),
                    }
                }
            }
        }
    }

    /// The next message `m` core sends on a connection.
    fn await_msg(&mut self, on: &str, m: &str, wait: Duration) -> Result<Value, String> {
        let whose = self.unwaited();
        let conn = self
            .conns
            .get_mut(on)
            .ok_or_else(|| format!("no connection `{on}`"))?;
        // `ping` waits for core's {t: "ping"}; anything else for a message of that method.
        let wanted = |f: &Value| {
            if m == "ping" {
                f["t"] == "ping"
            } else {
                f["m"] == m
            }
        };
        if let Some(pos) = conn.held.iter().position(|(f, _)| wanted(f)) {
            let (f, len) = conn.held.remove(pos);
            conn.unread.release(&f, len);
            return Ok(f);
        }
        // Absolute, as in `request_padded`.
        let mut deadline = sched::Deadline::start(wait, &whose);
        loop {
            let left = deadline.left(&whose);
            let got = match conn.unread.flooded() {
                Some(flood) => return Ok(flood),
                None if left.is_zero() => None,
                None => match self
                    .rt
                    .block_on(async { tokio::time::timeout(left, conn.rx.recv()).await })
                {
                    Err(_) => continue,
                    Ok(f) => f,
                },
            };
            let Some((f, len)) = got else {
                return Ok(conn.unread.flooded().unwrap_or_else(
                    || json!({ "noMessage": format!("no `{m}` within {} ms", wait.as_millis()) }),
                ));
            };
            if wanted(&f) || f.get("closed").is_some() || f["t"] == "ping" {
                conn.unread.release(&f, len);
            }
            match f {
                f if wanted(&f) || f.get("closed").is_some() => return Ok(f),
                f if f["t"] == "ping" => {}
                f => conn.held.push((f, len)),
            }
        }
    }

    /// A gate call: `{status, body}`.
    fn gate(&mut self, g: &Value) -> Result<Value, String> {
        let call = self.gate_call(g)?;
        self.rt.block_on(call)
    }

    /// A gate call, ready to run: its answer `{status, body, bytes}`.
    fn gate_call(
        &self,
        g: &Value,
    ) -> Result<impl std::future::Future<Output = Result<Value, String>> + Send + 'static, String>
    {
        let base = self
            .lookup("core.gatesUrl")
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or("core.start gave no gatesUrl")?;
        let route = g["route"].as_str().unwrap_or_default();
        let origin = loopback_origin(&base).map_err(|e| format!("core.start's gatesUrl: {e}"))?;
        let url = format!("{base}/nylorun/v1/{route}");
        if loopback_origin(&url).ok().as_ref() != Some(&origin) {
            return Err(format!(
                "gate: `{url}` is not on the core's gates ({origin}); a route is a path under /nylorun/v1/"
            ));
        }
        let mut body = g.get("body").cloned().unwrap_or(json!({}));
        self.names
            .sent(route, &mut body)
            .map_err(|e| e.to_string())?;
        self.post_call(&url, g, body, "gate")
    }

    /// `{"post": {path, token?, body?}}`: `POST` to the core's harness listener (coreUrl's host
    /// and port, over HTTP), where a pod's host joins and renews (§ 9): `{status, body}`.
    fn post(&mut self, p: &Value) -> Result<Value, String> {
        let core = self
            .lookup("core.coreUrl")
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or("core.start gave no coreUrl")?;
        let origin = loopback_origin(&core).map_err(|e| format!("core.start's coreUrl: {e}"))?;
        let path = p["path"].as_str().unwrap_or_default();
        let url = format!("http://{origin}{path}");
        if !path.starts_with('/') || loopback_origin(&url).ok().as_ref() != Some(&origin) {
            return Err(format!(
                "post: `{path}` is not a path on the core's listener ({origin}); a path is `/…`"
            ));
        }
        let body = p.get("body").cloned().unwrap_or(json!({}));
        let call = self.post_call(&url, p, body, "core")?;
        // No `bytes`: a join's answer holds fresh tokens, and no case compares re-sends.
        let mut res = self.rt.block_on(call)?;
        if let Some(o) = res.as_object_mut() {
            o.remove("bytes");
        }
        Ok(res)
    }

    /// A POST of `body` to `url`, with `Authorization: Bearer` `o.token` and `Idempotency-Key`
    /// `o.key` (a header left out when its field is), ready to run: `{status, body, bytes}`.
    fn post_call(
        &self,
        url: &str,
        o: &Value,
        body: Value,
        what: &'static str,
    ) -> Result<impl std::future::Future<Output = Result<Value, String>> + Send + 'static, String>
    {
        let mut req = self
            .http
            .post(url)
            .header("content-type", "application/json");
        if let Some(t) = o.get("token").and_then(Value::as_str) {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        if let Some(k) = o.get("key").and_then(Value::as_str) {
            req = req.header("idempotency-key", k);
        }
        let req = req
            .body(body.to_string())
            .build()
            .map_err(|e| e.to_string())?;
        let http = self.http.clone();
        // One absolute deadline for the whole exchange, the headers and the body.
        let wait = self.left(wait_of(o.get("waitMs").and_then(Value::as_u64)));
        let whose = self.unwaited();
        Ok(crate::adapter::client::on_client_runtime(async move {
            // Made on the client runtime's one worker, which waits for the answer.
            let mut deadline = sched::Deadline::start(wait, &whose);
            let mut resp = match deadline
                .within(&whose, http.execute(req))
                .await
                .map_err(|_| format!("the {what} did not answer within {} ms", wait.as_millis()))?
            {
                Ok(resp) => resp,
                // Connected, then the core ended the connection with no answer (as it may to
                // abort a call): an observation, as a request's `{closed: true}`.
                Err(e) if e.is_request() && !e.is_connect() && !e.is_timeout() => {
                    return Ok(json!({ "closed": true }))
                }
                Err(e) => return Err(format!("{what}: {}", crate::adapter::client::why(&e))),
            };
            let status = resp.status().as_u16();
            // The body in chunks, to GATE_BODY_CAP: a body past it, or not ended by the deadline,
            // is observed `{status, error}` (dropping it closes the connection).
            let mut bytes = Vec::new();
            let cut = loop {
                match deadline.within(&whose, resp.chunk()).await {
                    Err(_) => {
                        break Some(format!(
                            "the {what}'s body did not end within {} ms ({} bytes came)",
                            wait.as_millis(),
                            bytes.len()
                        ))
                    }
                    Ok(Ok(None)) => break None,
                    Ok(Err(e)) => {
                        break Some(format!(
                            "the {what}'s body broke after {} bytes: {}",
                            bytes.len(),
                            crate::adapter::client::why(&e)
                        ))
                    }
                    Ok(Ok(Some(data))) => {
                        if bytes.len() + data.len() > GATE_BODY_CAP {
                            break Some(format!(
                                "the {what}'s body passed {} MiB (core_api::GATE_BODY_CAP)",
                                GATE_BODY_CAP >> 20
                            ));
                        }
                        bytes.extend_from_slice(&data);
                    }
                }
            };
            if let Some(error) = cut {
                return Ok(json!({ "status": status, "error": error }));
            }
            let body: Value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| json!({ "text": String::from_utf8_lossy(&bytes) }));
            Ok(json!({ "status": status, "body": body, "bytes": crate::hash::fnv1a64(&bytes) }))
        }))
    }
}

/// A core-api case of `steps`, loaded as the file `vectors/core-api/1/ID.json` would be (for
/// unit tests).
#[cfg(test)]
pub(crate) fn script_case(id: &str, steps: &str) -> Result<Case, crate::case::CaseError> {
    use std::path::Path;
    let text = format!(
        r#"{{"id": "{id}", "title": "t", "section": "1", "level": "MUST",
        "spec": "004_0d5b24e47247e871.txt § 1 Transport (\"x\")",
        "script": {{ "steps": {steps} }} }}"#
    );
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let denials = crate::case::load_denials(&vectors).unwrap();
    let file = Path::new("vectors/core-api/1").join(format!("{id}.json"));
    crate::suites::parse_case(&file, &text, "core-api", "core", &denials)
}

#[cfg(test)]
mod tests;
