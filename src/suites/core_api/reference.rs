//! The reference core behind the control protocol (docs/core-protocol.md): hcpspec's own core
//! and gates (the harness role's `World`, listener and gates), started by `core.start` on fresh
//! loopback ports, and its mutants (one rule broken each).

use crate::adapter::{Adapter, CallError};
use crate::shim::RpcError;
use crate::suites::harness_api::scenario::{Offer, Scenario};
use crate::suites::harness_api::world::{lock, Shared, World};
use crate::suites::harness_api::{core, gates};
use serde_json::{json, Value};
use std::sync::Arc;

/// Mutants of the reference core: name, the section whose MUST cases must catch it, the rule.
pub const MUTANTS: &[(&str, &str, &str)] = &[
    (
        "any-path-accepted",
        "1",
        "upgrades on any path instead of answering 404",
    ),
    (
        "any-token-accepted",
        "1",
        "upgrades without a known token instead of answering 401",
    ),
    ("no-426", "1", "upgrades without Nylorun-Harness-Api: 1"),
    (
        "closed-tenant-accepted",
        "1",
        "upgrades a harness of a closed Tenant instead of answering 503",
    ),
    (
        "every-upgrade-refused",
        "1",
        "refuses even a correct upgrade",
    ),
    (
        "unknown-method-ok",
        "1",
        "answers a request of an unknown method ok",
    ),
    (
        "hello-without-renew-every",
        "2",
        "answers hello without renewEveryMs",
    ),
    (
        "grant-without-token",
        "2",
        "offers a run without its run token",
    ),
    (
        "renew-refuses-held-run",
        "2",
        "answers a renewal of a held run {ok: false}",
    ),
    ("no-token-switch", "2", "never switches the run token"),
    ("release-keeps-run", "2", "keeps a released run held"),
    (
        "intent-never-execute",
        "4",
        "answers every new intent pending",
    ),
    (
        "outcome-not-recorded",
        "4",
        "answers an outcome but records nothing",
    ),
    (
        "no-replayed-outcomes",
        "4",
        "offers a segment again without its completed outcomes",
    ),
    (
        "key-ignored",
        "4b",
        "writes a new version for a key already written",
    ),
    (
        "provenance-unchecked",
        "4b",
        "takes any effectId as provenance",
    ),
    (
        "read-past-end-accepted",
        "4b",
        "answers a read past the end with no bytes",
    ),
    (
        "any-gate-token",
        "5",
        "runs gate calls without the run token",
    ),
    (
        "key-not-required",
        "5",
        "runs gate calls without Idempotency-Key",
    ),
    ("output-keeps-run", "7", "keeps a run held after its output"),
    (
        "lease-without-input",
        "2",
        "offers a run without its TurnStart",
    ),
    (
        "outcome-answer-empty",
        "4",
        "answers an outcome completed without the outcome",
    ),
    ("eof-never-set", "4b", "never says eof on a read"),
    (
        "provenance-always-refused",
        "4b",
        "refuses every effectId as provenance",
    ),
    (
        "begin-body-not-committed",
        "4b",
        "opens an upload for a begin that carries the whole body",
    ),
    (
        "missing-artifact-invalid",
        "4b",
        "answers a missing artifact invalid, not not_found",
    ),
    (
        "model-gate-fails",
        "5",
        "answers a journaled model call with a gate error",
    ),
    (
        "output-without-cursor",
        "7",
        "answers an output without the cursor",
    ),
    ("no-pings", "1", "never pings a harness"),
    (
        "no-silence-drop",
        "1",
        "never drops a harness it has not heard from",
    ),
    (
        "lost-run-not-offered-again",
        "1",
        "leaves a run whose connection was lost unoffered",
    ),
    (
        "last-snapshot-wins",
        "3",
        "lets a later session.mcp snapshot replace the first",
    ),
    (
        "definition-range-unchecked",
        "3",
        "answers a definition.file range past chunkBytes",
    ),
    (
        "upload-survives-run",
        "4b",
        "takes chunks of an upload its run left open, from another run",
    ),
    (
        "abort-of-gone-upload-refused",
        "4b",
        "refuses an abort of an upload already gone",
    ),
    (
        "metadata-read-sends-bytes",
        "4b",
        "answers a read of length 0 with bytes",
    ),
    (
        "transcript-without-entries",
        "6",
        "answers transcript.read without entries",
    ),
    (
        "cancel-without-reason",
        "8",
        "sends cancel without its reason",
    ),
    ("api-4-accepted", "2", "answers hello with api 4"),
    (
        "any-name-accepted",
        "2",
        "answers hello naming a harness that is not the credential's",
    ),
    (
        "no-effect-drift",
        "4",
        "answers an effect asked again with another hash as if it were the same",
    ),
    (
        "other-segment-replayed",
        "4",
        "replays outcomes of another segment in TurnStart",
    ),
    (
        "record-limit-unchecked",
        "4",
        "records an outcome past recordEntryBytes",
    ),
    (
        "chunk-limit-unchecked",
        "4b",
        "takes an artifact chunk past chunkBytes",
    ),
    (
        "repeat-chunk-taken-twice",
        "4b",
        "takes a repeat of the last chunk twice",
    ),
    (
        "unjournaled-call-run",
        "5",
        "runs a gate call whose intent was not answered execute",
    ),
    (
        "no-run-stale",
        "5",
        "runs a gate call of a run that is over",
    ),
    (
        "resend-other-bytes",
        "5",
        "answers a re-send under the same key anew",
    ),
    (
        "unknown-mcp-tool-executes",
        "4",
        "answers execute for an MCP tool the session did not discover",
    ),
    (
        "disabled-tool-executes",
        "4",
        "answers execute for a tool the turn's manifest disables",
    ),
    (
        "undeclared-http-tool-executes",
        "4",
        "answers execute for an HTTP tool the agent does not declare",
    ),
    (
        "sandbox-without-sandbox-executes",
        "4",
        "answers execute for a sandbox call of a session without one",
    ),
    (
        "no-target-executes",
        "4",
        "answers execute for a tool call that names no target",
    ),
    (
        "schedule-wake-executes",
        "4",
        "answers schedule_wake execute instead of running it",
    ),
    (
        "memory-outside-allowed",
        "4",
        "writes memories outside /memories",
    ),
    ("memory-read-only-writes", "4", "writes a read_only memory"),
    (
        "policy-on-model-name",
        "4",
        "matches the tool policy on the name the model called",
    ),
    (
        "policy-ignored",
        "4",
        "runs every call the tool policy denies or holds",
    ),
    (
        "no-tool-attempts-cap",
        "4",
        "answers every re-send execute, past toolAttempts",
    ),
    (
        "sandbox-not-in-turn-start",
        "3",
        "TurnStart's agent lacks the session's sandbox",
    ),
    (
        "self-wake-not-in-turn-start",
        "3",
        "TurnStart's agent lacks selfWake",
    ),
    (
        "memory-access-not-passed",
        "3",
        "TurnStart's memory says read_write whatever the version sets",
    ),
    (
        "abort-ignored",
        "8",
        "a request the harness aborted stays in flight",
    ),
    (
        "tokens-not-redacted",
        "log",
        "records the tokens it signed in what a harness reports",
    ),
    (
        "target-mismatch-runs",
        "5",
        "runs a tool call on another target than its intent's",
    ),
    (
        "key-not-passed-to-tool",
        "5",
        "hands a tool no idempotency key",
    ),
    (
        "credential-echo-passed",
        "5",
        "passes on a credential a tool's answer echoes",
    ),
    (
        "tool-answer-size-unchecked",
        "5",
        "passes on a tool answer past toolAnswerBytes",
    ),
    (
        "tool-failure-as-gate-error",
        "5",
        "answers a tool's failure with a gate error",
    ),
    (
        "endpoint-ignored",
        "5",
        "answers a journaled tool call without calling the tool",
    ),
    (
        "other-session-readable",
        "4b",
        "reads another session's artifact",
    ),
    (
        "named-tenant-not-found",
        "4b",
        "answers not_found for a Tenant-wide artifact the session named",
    ),
    (
        "unnamed-tenant-readable",
        "4b",
        "reads a Tenant-wide artifact the session's messages never named",
    ),
    ("agent-disk-readable", "4b", "reads an Agent's disk version"),
    (
        "declared-size-unchecked",
        "4b",
        "opens an upload whose declared size is past maxBytes",
    ),
    (
        "runs-offered-to-any-harness",
        "2",
        "offers a session's runs to connections of another harness",
    ),
    (
        "session-moves-harness",
        "2",
        "moves a session to the harness a later message names",
    ),
    (
        "session-read-no-harness",
        "2",
        "GET /v1/sessions/{id} does not name the session's harness",
    ),
    (
        "usage-row-per-call",
        "5",
        "meters a re-sent model call twice",
    ),
    (
        "cancel-route-ignored",
        "5",
        "a call's cancel route aborts nothing",
    ),
    (
        "transcript-not-folded",
        "6",
        "appends every edit, ignoring what it keeps",
    ),
    (
        "transcript-entry-limit-unchecked",
        "6",
        "records a transcript update past recordEntryBytes",
    ),
    ("state-not-returned", "7", "gives the next segment no state"),
    (
        "released-run-not-replayed",
        "8",
        "offers a released segment to no other owner",
    ),
    (
        "unknown-fate-recorded-as-value",
        "4",
        "records an outcome's error as the call's value",
    ),
    (
        "approvals-not-created",
        "7",
        "pauses a held call's turn with no approval interaction",
    ),
    (
        "approval-id-not-effect-id",
        "7",
        "names an approval interaction by its own id, not the effect id",
    ),
    (
        "interaction-names-model-name",
        "7",
        "names the model's tool name as the interaction's tool",
    ),
    (
        "approval-answer-ignored",
        "7",
        "treats every answer as a denial",
    ),
    (
        "tool-row-names-model-name",
        "4",
        "a tool call's row names the model's tool name, not the target's identity",
    ),
    (
        "tool-row-http-server-is-tool",
        "4",
        "an HTTP tool call's row names the tool as its server, not the URL host",
    ),
    (
        "compaction-unchecked",
        "6",
        "accepts compaction facts naming a call that is no summary of the turn",
    ),
    (
        "context-compacted-not-written",
        "6",
        "writes no context.compacted for a compaction",
    ),
    (
        "artifact-event-without-call-id",
        "4b",
        "artifact.created does not carry its call's callId",
    ),
    (
        "event-without-source",
        "log",
        "records events without their source",
    ),
    (
        "manifest-instructions-dropped",
        "3",
        "TurnStart's manifest lacks the agent's own instructions",
    ),
    (
        "secret-in-turn-start",
        "3",
        "sends an environment_secret's value in TurnStart",
    ),
    (
        "memory-index-oldest-first",
        "3",
        "lists the memory index oldest first",
    ),
    (
        "versions-any-artifact",
        "4b",
        "writes a new version of another session's artifact",
    ),
    (
        "undeclared-mcp-server-connected",
        "5",
        "connects an MCP server the agent does not declare (a URL)",
    ),
    (
        "tenant-limits-not-sent",
        "3",
        "sends default limits, not the Tenant's",
    ),
    (
        "memory-instructions-dropped",
        "3",
        "TurnStart's memory lacks the agent's memory instructions",
    ),
    (
        "upload-bytes-unchecked",
        "4b",
        "takes chunks past an upload's maxBytes",
    ),
    (
        "approval-segment-typed-turn-start",
        "3",
        "types the segment after a person answered turn.start, not approval.answer",
    ),
    (
        "input-not-the-message",
        "3",
        "TurnStart's checkpoint input is not the message the session was sent",
    ),
    (
        "queued-messages-split",
        "3",
        "offers each message that waited in the queue as a turn of its own",
    ),
    (
        "checkpoint-other-session",
        "3",
        "TurnStart's checkpoint names another session",
    ),
    ("loop-dropped", "3", "drops the harness section's loop"),
    (
        "runtime-section-sent",
        "3",
        "sends the Agent's runtime section in TurnStart",
    ),
    (
        "fixture-model-text-only",
        "3",
        "describes the fixture model as reading text only",
    ),
    (
        "disabled-tool-in-facts",
        "3",
        "marks a tool the turn's manifest disables enabled in the MCP facts",
    ),
    (
        "memory-index-unlimited",
        "3",
        "lists every memory in the index, past memoryIndexLines",
    ),
    (
        "crashed-call-executes-again",
        "4",
        "answers execute again for a sandbox call a crash interrupted",
    ),
    (
        "reserved-names",
        "4",
        "routes a call named memory or schedule_wake by its name, not its target",
    ),
    (
        "memory-missing-parameter-accepted",
        "4",
        "creates a memory whose create names no file_text",
    ),
    (
        "memory-str-replace-ignored",
        "4",
        "answers a memory str_replace without replacing",
    ),
    (
        "custom-token-takes-its-runs",
        "1",
        "offers a custom harness's runs to a container holding a token for its id",
    ),
    (
        "lease-answers-at-once",
        "2",
        "answers a lease at once when no run is offered",
    ),
    (
        "manifest-id-not-its-name",
        "3",
        "TurnStart's manifest id is not the manifest's name",
    ),
    (
        "skill-file-hash-wrong",
        "3",
        "lists a skill's files with a hash that is not their SHA-256",
    ),
    (
        "sandbox-spec-dropped",
        "3",
        "TurnStart's routing lacks the sandbox spec the session pinned",
    ),
    (
        "memory-always-in-turn-start",
        "3",
        "sends TurnStart memory when the version sets no harness.memory",
    ),
    (
        "mcp-facts-before-discovery",
        "3",
        "sends MCP facts before the session's servers were discovered",
    ),
    (
        "deferred-dropped",
        "3",
        "drops the manifest's deferred setting from the MCP facts",
    ),
    (
        "row-skill-unchecked",
        "4",
        "a tool call's row names a skill the agent does not have",
    ),
    (
        "flow-turn-with-agent",
        "3",
        "sends an agent in a flow's TurnStart",
    ),
    (
        "flow-turn-with-model",
        "3",
        "sends a model in a flow's TurnStart",
    ),
    (
        "model-without-tenant-model",
        "3",
        "sends a model in TurnStart when the Tenant has none",
    ),
    (
        "trace-dropped",
        "3",
        "drops the turn's trace context from TurnStart",
    ),
    (
        "root-manifest-dropped",
        "3",
        "TurnStart's routing lacks rootManifest",
    ),
    (
        "plugin-dropped-from-skills",
        "3",
        "lists a plugin's skill without its plugin",
    ),
    (
        "row-plugin-dropped",
        "4",
        "a tool call's row lacks the plugin that brought its server",
    ),
    (
        "workspace-without-feature-served",
        "10",
        "serves a session sandbox route through a harness that declared no features.workspace",
    ),
    (
        "artifact-sha256-not-its-bytes",
        "4b",
        "names an artifact's sha256 with another hash than its bytes' SHA-256",
    ),
    (
        "max-bytes-is-the-file-limit",
        "4b",
        "opens an upload with the file limit as maxBytes, whatever is left of the totals",
    ),
    (
        "totals-unchecked-at-commit",
        "4b",
        "commits an upload past what is left of the Tenant's total",
    ),
    (
        "open-upload-committed-at-run-end",
        "4b",
        "stores an upload its run left open when the run ends",
    ),
    (
        "abort-keeps-upload",
        "4b",
        "takes chunks of an upload after its abort",
    ),
    (
        "folder-begin-without-max-entries",
        "4b",
        "opens a folder upload without maxEntries",
    ),
    (
        "ids-shared",
        "1",
        "takes a harness request whose id is one of core's own requests' for its answer",
    ),
    (
        "binary-frames-read",
        "1",
        "reads a binary frame as a message",
    ),
    (
        "workspace-request-not-sent",
        "10",
        "answers a session sandbox route without sending the harness its workspace request",
    ),
    (
        "workspace-to-any-harness",
        "10",
        "sends a session's workspace requests to a custom harness that declared the feature",
    ),
    (
        "lost-run-still-running",
        "1",
        "keeps a run whose connection was lost running at the gates",
    ),
    (
        "schemas-not-strict",
        "11",
        "answers a request with a member its schema lacks",
    ),
    (
        "required-members-unchecked",
        "0",
        "answers a request that lacks a member its schema requires",
    ),
    (
        "outputs-exported",
        "3",
        "exports an outputs artifact at a completed turn's end",
    ),
    (
        "memory-access-flips",
        "3",
        "TurnStart's memory access changes from one turn to the next",
    ),
    (
        "memory-index-without-description",
        "3",
        "leaves a memory's frontmatter description out of its index line",
    ),
    (
        "server-instructions-cut",
        "3",
        "cuts an MCP server's instructions in the facts",
    ),
    (
        "limit-defaults-wrong",
        "3",
        "sends a chunkBytes default other than 16 MiB",
    ),
    (
        "record-entry-ceiling-unchecked",
        "3",
        "lets a Tenant's recordEntryBytes pass its 960 KiB ceiling",
    ),
    (
        "tool-attempts-default-5",
        "4",
        "counts re-sends up to 5 when the Tenant sets no toolAttempts",
    ),
    (
        "other-runtime-operation-executes",
        "4",
        "answers execute for a runtime operation other than schedule_wake and memory",
    ),
    (
        "tool-completed-per-attempt",
        "4",
        "writes a tool.completed for every intent of a re-sent call",
    ),
    (
        "model-json-repaired",
        "5",
        "closes the JSON a model's text left open",
    ),
    (
        "failure-without-retryable",
        "5",
        "answers a model failure without retryable",
    ),
    ("tool-result-shaped", "5", "cuts a tool result's long text"),
    (
        "binary-parts-dropped",
        "5",
        "drops an MCP answer's image part",
    ),
    (
        "compaction-parsed-from-entries",
        "6",
        "writes context.compacted for an unmarked edit whose entries hold a compaction",
    ),
    (
        "summary-message-recorded",
        "6",
        "records message.assistant for a summary call",
    ),
    (
        "compaction-without-step",
        "6",
        "writes context.compacted without the last summary call's step",
    ),
    (
        "tool-completed-without-call-id",
        "4",
        "writes tool.completed for a tool effect with no callId",
    ),
    (
        "folder-read-sends-bytes",
        "4b",
        "answers a read of a folder with its files' bytes",
    ),
    (
        "read-version-ignored",
        "4b",
        "answers a read of an older version with the latest",
    ),
    (
        "read-length-unbounded",
        "4b",
        "answers a read the length it asks for, past chunkBytes",
    ),
    (
        "read-length-default-unbounded",
        "4b",
        "answers a read without length the whole artifact, past chunkBytes",
    ),
    (
        "limit-message-without-value",
        "1",
        "names the limit in a limit_exceeded message, but not its value",
    ),
    (
        "model-call-bytes-unchecked",
        "3",
        "runs a model call whose body is past modelCallBytes",
    ),
    (
        "tool-body-size-unchecked",
        "3",
        "calls the tool with a tool call body past toolAnswerBytes",
    ),
    (
        "small-frame-limit",
        "1",
        "takes messages of at most 16 MiB, not 64 MiB",
    ),
];

/// The Agent's plugins (`core.start`'s `agent.plugins: [{name, version?, skills, mcpServers}]`)
/// folded into the Agent: their skills carry `plugin: {name, version?}`, their servers are
/// declared, and `pluginServers` maps each server to its plugin (§ 3, § 4's rows).
fn flatten_plugins(agent: &mut Value) {
    let Some(plugins) = agent.get("plugins").and_then(Value::as_array).cloned() else {
        return;
    };
    for p in plugins {
        let mut plugin = json!({ "name": p["name"] });
        if let Some(v) = p.get("version") {
            plugin["version"] = v.clone();
        }
        for mut skill in p["skills"].as_array().cloned().unwrap_or_default() {
            skill["plugin"] = plugin.clone();
            push(agent, "skills", skill);
        }
        for server in p["mcpServers"].as_array().cloned().unwrap_or_default() {
            if let Some(s) = server.as_str() {
                agent["pluginServers"][s] = plugin.clone();
            }
            push(agent, "mcpServers", server);
        }
    }
}

fn push(v: &mut Value, key: &str, item: Value) {
    if !v[key].is_array() {
        v[key] = json!([]);
    }
    v[key].as_array_mut().expect("array").push(item);
}

/// Our harness's id, the one a harness token is bound to (§ 1).
pub const NYLORUN: &str = "nylorun";

/// Allowed variants of the reference core: open points decided otherwise.
pub const VARIANTS: &[(&str, &str)] = &[
    (
        "renew-over-ok-false",
        "answers a renewal of a run that is over {ok: false}, not run_not_held",
    ),
    (
        "unknown-method-not-found",
        "answers an unknown method not_found, not invalid",
    ),
    (
        "refusals-unavailable",
        "refuses hello, and requests its schemas refuse, with unavailable, not invalid",
    ),
    ("other-ids", "names its Tenant otherwise"),
    (
        "input-as-text",
        "passes a message on as {text} and queued messages as [{text}…], not as strings",
    ),
    (
        "sha256-prefixed",
        "names an artifact's sha256 as sha256:<hex>, not bare hex",
    ),
    (
        "binary-frames-close",
        "closes the connection on a binary frame, rather than ignoring it",
    ),
    (
        "limit-messages-reworded",
        "words its limit_exceeded messages its own way, with the limit's name and value",
    ),
];

/// A core started by `core.start`: its runtime and its state.
struct Running {
    rt: tokio::runtime::Runtime,
    world: Shared,
}

pub struct ReferenceCore {
    mutant: Option<&'static str>,
    variant: Option<&'static str>,
    running: Option<Running>,
}

impl ReferenceCore {
    /// `reference`, `mutant:NAME` or `variant:NAME`.
    pub fn named(name: &str) -> Option<ReferenceCore> {
        let (mut mutant, mut variant) = (None, None);
        if let Some(m) = name.strip_prefix("mutant:") {
            mutant = Some(MUTANTS.iter().find(|x| x.0 == m)?.0);
        } else if let Some(v) = name.strip_prefix("variant:") {
            variant = Some(VARIANTS.iter().find(|x| x.0 == v)?.0);
        } else if name != "reference" {
            return None;
        }
        Some(ReferenceCore {
            mutant,
            variant,
            running: None,
        })
    }

    fn start(&mut self, params: Value) -> Result<Value, RpcError> {
        let mut params = params;
        if params.get("offers").is_none() {
            params["offers"] = json!([]);
        }
        if let Some(agent) = params.get_mut("agent") {
            flatten_plugins(agent);
        }
        // hcpspec plays our harness: the harness token is bound to nylorun (§ 1, "Which token").
        if params.get("harness").is_none() {
            params["harness"] = json!(NYLORUN);
        }
        let sc: Scenario = serde_json::from_value(params)
            .map_err(|e| RpcError::new(crate::shim::INVALID_PARAMS, format!("core.start: {e}")))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| RpcError::new(-32603, e.to_string()))?;
        let (core_l, gates_l) = rt
            .block_on(async {
                Ok::<_, std::io::Error>((
                    tokio::net::TcpListener::bind("127.0.0.1:0").await?,
                    tokio::net::TcpListener::bind("127.0.0.1:0").await?,
                ))
            })
            .map_err(|e| RpcError::new(-32603, e.to_string()))?;
        let core_url = format!(
            "ws://{}{}",
            core_l
                .local_addr()
                .map_err(|e| RpcError::new(-32603, e.to_string()))?,
            core::PATH
        );
        let gates_url = format!(
            "http://{}",
            gates_l
                .local_addr()
                .map_err(|e| RpcError::new(-32603, e.to_string()))?
        );
        let token = format!(
            "nylorun-ht-{:x}",
            crate::hash::fnv1a64(core_url.as_bytes()) ^ std::process::id() as u64
        );
        let (acts, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut world = World::new(Arc::new(sc), token.clone(), acts);
        world.mutant = self.mutant;
        world.variant = self.variant;
        world.core_role = true;
        // Each harness id core holds a token for, and that token.
        let harnesses: serde_json::Map<String, Value> = world
            .credentials()
            .into_iter()
            .map(|(token, harness)| (harness, json!(token)))
            .collect();
        let world = Arc::new(std::sync::Mutex::new(world));
        rt.spawn(core::serve(core_l, world.clone()));
        let router = gates::router(world.clone());
        rt.spawn(async move { axum::serve(gates_l, router).await });
        self.running = Some(Running { rt, world });
        Ok(json!({ "coreUrl": core_url, "gatesUrl": gates_url, "harnesses": harnesses }))
    }

    fn world(&self) -> Result<&Shared, RpcError> {
        self.running.as_ref().map(|r| &r.world).ok_or_else(|| {
            RpcError::new(
                crate::shim::INVALID_PARAMS,
                "no core started (core.start first)",
            )
        })
    }
}

impl Adapter for ReferenceCore {
    fn call(&mut self, method: &str, params: Value) -> Result<Value, CallError> {
        let r = match method {
            "core.describe" => Ok(json!({
                "protocol": super::PROTOCOL,
                "core": { "name": match (self.mutant, self.variant) { (Some(m), _) => format!("mutant:{m}"), (_, Some(v)) => format!("variant:{v}"), _ => "reference".to_string() }, "version": env!("CARGO_PKG_VERSION") }
            })),
            "core.start" => self.start(params),
            "session.open" | "session.replay" => self.world().map(|w| {
                let mut g = lock(w);
                // The session pins its harness when it first opens, and never moves.
                if let Some(h) = params.get("harness").and_then(Value::as_str) {
                    if g.pinned.is_none() || g.breaks("session-moves-harness") {
                        g.pinned = Some(h.to_string());
                    }
                }
                if method == "session.open" {
                    let mut opts = serde_json::Map::new();
                    for k in ["flow", "traceparent", "tracestate"] {
                        if let Some(v) = params.get(k) {
                            opts.insert(k.into(), v.clone());
                        }
                    }
                    g.open_turn(params.get("message").cloned(), Value::Object(opts));
                } else {
                    g.offers.push(Offer::Replay);
                    g.offer();
                }
                json!({ "sessionId": crate::suites::harness_api::world::SESSION })
            }),
            "session.read" => self.world().map(|w| {
                let g = lock(w);
                let harness = if g.breaks("session-read-no-harness") {
                    Value::Null
                } else {
                    json!(g.pinned_harness())
                };
                json!({ "sessionId": crate::suites::harness_api::world::SESSION, "harness": harness })
            }),
            "calls.model" => self.world().map(|w| {
                // The Model Gate's usage rows, one per effect id (GET /v1/sessions/{id}/calls/model).
                let g = lock(w);
                let mut seen = std::collections::BTreeSet::new();
                let rows: Vec<Value> = g
                    .log
                    .iter()
                    .filter(|e| e["via"] == "gate" && e["route"] == "model-calls" && e["status"] == 200)
                    .filter(|e| seen.insert(e["key"].to_string()) || g.breaks("usage-row-per-call"))
                    .map(|e| json!({ "effectId": e["key"], "usage": e.pointer("/answer/outcome/usage") }))
                    .collect();
                json!({ "rows": rows })
            }),
            "events.read" => self.world().map(|w| json!({ "events": lock(w).event_log() })),
            "calls.tool" => self.world().map(|w| json!({ "rows": lock(w).tool_rows() })),
            "approval.list" => self.world().map(|w| {
                let g = lock(w);
                json!({ "interactions": g.approvals })
            }),
            "approval.answer" => self.world().and_then(|w| {
                let id = params["id"].as_str().unwrap_or_default();
                if lock(w).answer_approval(id, params["approve"] == true) {
                    Ok(json!({}))
                } else {
                    Err(RpcError::new(crate::shim::INVALID_PARAMS, format!("approval.answer: no interaction {id}")))
                }
            }),
            "session.cancel" => self.world().map(|w| {
                let mut g = lock(w);
                let reason = params
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("cancel")
                    .to_string();
                if let Some((run, conn)) = g.active_run().map(|r| (r.id.clone(), r.conn)) {
                    let mut p = json!({ "runId": run, "reason": reason });
                    if g.breaks("cancel-without-reason") {
                        p.as_object_mut().expect("object").remove("reason");
                    }
                    g.send(conn, json!({ "t": "msg", "m": "cancel", "p": p }));
                }
                json!({})
            }),
            "artifact.seed" => self.world().map(|w| {
                use base64::Engine;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(params["base64"].as_str().unwrap_or_default())
                    .unwrap_or_default();
                crate::suites::harness_api::artifacts::seed(
                    &mut lock(w),
                    params["name"].as_str().unwrap_or("seeded"),
                    &bytes,
                    params["scope"].as_str().unwrap_or("session"),
                    params["kind"].as_str().unwrap_or("file"),
                )
            }),
            "workspace.route" => self.world().map(|w| {
                // A session sandbox route of the Runtime API: served by the session's harness
                // when it declared features.workspace, else 503 (§ 10).
                let mut g = lock(w);
                let op = params["op"].as_str().unwrap_or("read").to_string();
                let conn = g.active_run().map(|r| r.conn);
                let served = conn.and_then(|c| g.conns.get(&c)).is_some_and(|c| c.workspace)
                    || g.breaks("workspace-without-feature-served");
                match (conn, served) {
                    (Some(c), true) => {
                        // The mutant sends it to every connection that declared the feature.
                        let to: Vec<usize> = if g.breaks("workspace-to-any-harness") {
                            g.conns.iter().filter(|(_, x)| x.workspace).map(|(n, _)| *n).collect()
                        } else {
                            vec![c]
                        };
                        let sent = !g.breaks("workspace-request-not-sent");
                        for c in to.into_iter().filter(|_| sent) {
                            let id = g.next_id();
                            g.send(c, json!({ "t": "req", "id": id, "m": format!("workspace.{op}"), "p": params.get("p").cloned().unwrap_or(json!({})) }));
                        }
                        json!({ "status": 200 })
                    }
                    _ => json!({ "status": 503 }),
                }
            }),
            "tenant.close" => self.world().map(|w| {
                lock(w).tenant_closed = true;
                json!({})
            }),
            "core.stop" => {
                if let Some(r) = self.running.take() {
                    r.rt.shutdown_background();
                }
                Ok(json!({}))
            }
            other => Err(RpcError::new(
                crate::shim::METHOD_NOT_FOUND,
                format!("method not found: {other}"),
            )),
        };
        r.map_err(CallError::Rpc)
    }
}

impl Drop for ReferenceCore {
    fn drop(&mut self) {
        if let Some(r) = self.running.take() {
            r.rt.shutdown_background();
        }
    }
}
