//! Core's own decisions on a tool intent (spec 004 § 4), made by the reference core (its
//! `Role::decide`): the target table and its refusals, the Tenant's tool policy matched on the
//! target's identity, and the two tools core runs itself, `schedule_wake` and `memory`. A
//! harness-api scenario scripts core's answers with `intents` instead, so none of this runs there.
//!
//! The Agent and the policy come from `core.start` (docs/core-protocol.md): `agent` is
//! `{mcpServers: [SERVER…], disabled: ["SERVER/TOOL"…], httpTools: [NAME…], sandbox, selfWake,
//! memory: {access}}`, `policy` is `[{server?, tool, answer: "deny" | "hold"}]`, and what the
//! session discovered on each server is `discover` (`{SERVER: [TOOL…]}`).

use crate::suites::core_api::knobs::{Mutant, Variant};
use crate::suites::world::model::failure;
use crate::suites::world::role::Decision;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A failure as an MCP error result (the variant `mcp-shaped-failures`): an outcome of
/// `{kind: "failed", code, message}` anywhere in an answer becomes `{isError: true, content:
/// [{type: "text", text: "CODE: MESSAGE"}]}`.
pub fn mcp_shaped(answer: Value) -> Value {
    match answer {
        Value::Object(m) if m.get("kind").and_then(Value::as_str) == Some("failed") => {
            let text = format!(
                "{}: {}",
                m.get("code").and_then(Value::as_str).unwrap_or_default(),
                m.get("message").and_then(Value::as_str).unwrap_or_default()
            );
            json!({ "isError": true, "content": [{ "type": "text", "text": text }] })
        }
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, mcp_shaped(v))).collect()),
        Value::Array(a) => Value::Array(a.into_iter().map(mcp_shaped).collect()),
        v => v,
    }
}

fn ok(value: Value) -> Value {
    json!({ "kind": "ok", "value": value })
}

const SANDBOX_TOOLS: [&str; 6] = ["bash", "read", "write", "edit", "grep", "glob"];

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The knobs of the reference core (its mutants and variants); some bear on tool intents.
pub type Knobs = crate::knob::Knobs<Mutant, Variant>;

/// Decide a tool intent: the target table first, then the policy.
pub fn decide(
    agent: &Value,
    policy: &[Value],
    discover: &serde_json::Map<String, Value>,
    effect: &Value,
    memories: &mut BTreeMap<String, String>,
    k: &Knobs,
) -> Decision {
    let t = match k.breaks(Mutant::ToolTargetMisread) {
        true => &effect["routing"],
        false => &effect["target"],
    };
    by_target(agent, discover, effect, t, memories, k)
        .unwrap_or_else(|| by_policy(policy, effect, t, k))
}

/// A refusal: a failure of `code`, or for the mutant a success whose text names it.
fn refuse(k: &Knobs, code: &str, why: String) -> Decision {
    match k.breaks(Mutant::RefusalAnsweredAsSuccess) {
        // The refusal's code stays in the text; only its form says success.
        true => Decision::Completed(ok(json!(format!("{code}: {why}")))),
        false => Decision::Completed(failure(code, why)),
    }
}

/// The target table: a call core refuses, runs itself or leaves to the harness, or none (an
/// MCP, HTTP or sandbox tool the session has, which the policy decides).
fn by_target(
    agent: &Value,
    discover: &serde_json::Map<String, Value>,
    effect: &Value,
    t: &Value,
    memories: &mut BTreeMap<String, String>,
    k: &Knobs,
) -> Option<Decision> {
    let s = |key: &str| t.get(key).and_then(Value::as_str).unwrap_or_default();
    let tool_name = effect["toolName"].as_str().unwrap_or_default();
    match s("kind") {
        "mcp" => {
            // Routing by the model's name, not the target's identity, is what § 4 forbids.
            let tool = match k.breaks(Mutant::RoutesByName) {
                true => tool_name,
                false => s("tool"),
            };
            let server = s("server");
            let declared = strs(&agent["mcpServers"]).contains(&server);
            let discovered = discover
                .get(server)
                .is_some_and(|d| strs(d).contains(&tool));
            let refused = k.breaks(Mutant::DiscoveredMcpToolRefused);
            if (refused || !(declared && discovered)) && !k.breaks(Mutant::UnknownMcpToolExecutes) {
                return Some(refuse(
                    k,
                    "tool.unknown",
                    format!("the session discovered no tool {tool} on {server}"),
                ));
            }
            let off = format!("{server}/{tool}");
            if strs(&agent["disabled"]).contains(&off.as_str())
                && !k.breaks(Mutant::DisabledToolExecutes)
            {
                return Some(refuse(
                    k,
                    "tool.disabled",
                    format!("the turn's manifest disables {off}"),
                ));
            }
        }
        "http" => {
            if !strs(&agent["httpTools"]).contains(&s("tool"))
                && !k.breaks(Mutant::UndeclaredHttpToolExecutes)
            {
                return Some(refuse(
                    k,
                    "tool.unavailable",
                    format!("the agent declares no HTTP tool {}", s("tool")),
                ));
            }
        }
        "sandbox" => {
            let has = agent["sandbox"] == true || k.breaks(Mutant::SandboxWithoutSandboxExecutes);
            let known = match k.breaks(Mutant::SandboxBashOnly) {
                true => tool_name == "bash",
                false => SANDBOX_TOOLS.contains(&tool_name),
            };
            if !has || !(known || k.breaks(Mutant::SandboxAnyToolName)) {
                return Some(refuse(
                    k,
                    "tool.unavailable",
                    "the session has no sandbox for this call".into(),
                ));
            }
        }
        // No name is reserved: the mutant takes a harness call named like a runtime operation
        // for one the session lacks.
        "harness"
            if k.breaks(Mutant::ReservedNames)
                && ["memory", "schedule_wake"].contains(&tool_name) =>
        {
            return Some(refuse(
                k,
                "tool.unavailable",
                format!("{tool_name} is core's"),
            ));
        }
        "harness" if k.breaks(Mutant::HarnessCallRefused) => {
            return Some(refuse(
                k,
                "tool.unavailable",
                "harness calls are refused".into(),
            ));
        }
        "harness" => return Some(Decision::Execute),
        "runtime" if s("operation") == "schedule_wake" => {
            if k.breaks(Mutant::ScheduleWakeExecutes) {
                return Some(Decision::Execute);
            }
            if agent["selfWake"] != true && !k.breaks(Mutant::ScheduleWakeWithoutSelfWakeRuns) {
                return Some(refuse(
                    k,
                    "tool.unavailable",
                    "the session's version does not set runtime.selfWake".into(),
                ));
            }
            let mut input = effect["input"].clone();
            if k.breaks(Mutant::ScheduleWakeInputMisread) {
                input.as_object_mut().map(|o| o.remove("cancel"));
            }
            let answer = schedule_wake(&input);
            // The mutant schedules a wake for an input that names no time: at once.
            if answer["kind"] == "failed" && k.breaks(Mutant::ScheduleWakeMalformedScheduled) {
                return Some(Decision::Completed(ok(json!({ "scheduled": "now" }))));
            }
            return Some(Decision::Completed(answer));
        }
        "runtime" if s("operation") == "memory" => {
            let access = agent.pointer("/memory/access").and_then(Value::as_str);
            let access = match k.breaks(Mutant::MemoryWithoutHarnessMemoryRuns) {
                true => access.or(Some("read_write")),
                false => access,
            };
            let Some(access) = access.filter(|_| !k.breaks(Mutant::MemoryCallRefused)) else {
                return Some(refuse(
                    k,
                    "tool.unavailable",
                    "the session's version does not set harness.memory".into(),
                ));
            };
            let answer = memory(&effect["input"], access == "read_write", memories, k);
            if answer["kind"] == "failed" && k.breaks(Mutant::MemoryFailureAsSuccess) {
                return Some(Decision::Completed(ok(json!("done"))));
            }
            if answer["kind"] == "failed" && k.breaks(Mutant::MemoryFailureWithoutText) {
                return Some(Decision::Completed(json!({ "kind": "failed" })));
            }
            return Some(Decision::Completed(answer));
        }
        "runtime" if k.breaks(Mutant::OtherRuntimeOperationExecutes) => {
            return Some(Decision::Execute)
        }
        _ if !k.breaks(Mutant::NoTargetExecutes) => {
            return Some(refuse(
                k,
                "tool.unavailable",
                "the call names no target core can run".into(),
            ));
        }
        _ => return Some(Decision::Execute),
    }
    None
}

/// The Tenant's tool policy: the first rule that matches the call answers it.
fn by_policy(policy: &[Value], effect: &Value, t: &Value, k: &Knobs) -> Decision {
    let s = |key: &str| t.get(key).and_then(Value::as_str).unwrap_or_default();
    let tool_name = effect["toolName"].as_str().unwrap_or_default();
    // The Tenant's tool policy, on the target's identity (MCP and HTTP tools).
    let (server, tool) = match s("kind") {
        "mcp" => (Some(s("server")), s("tool")),
        _ => (None, s("tool")),
    };
    let name = if k.breaks(Mutant::PolicyOnModelName) {
        tool_name
    } else {
        tool
    };
    for rule in policy {
        let rs = rule["server"].as_str();
        let matches = rule["tool"].as_str() == Some(name)
            && (rs.is_none() || rs == server || k.breaks(Mutant::PolicyOnModelName));
        if !matches || k.breaks(Mutant::PolicyIgnored) {
            continue;
        }
        return match rule["answer"].as_str() {
            _ if rule["answer"] != "hold" && k.breaks(Mutant::PolicyDenialNotToolDenied) => refuse(
                k,
                "tool.forbidden",
                "the Tenant's tool policy denies this call".into(),
            ),
            Some("hold") if k.breaks(Mutant::HeldCallRefused) => refuse(
                k,
                "tool.held",
                "the Tenant's tool policy holds this call for a person".into(),
            ),
            Some("hold") => Decision::Pending,
            _ => refuse(
                k,
                "tool.denied",
                "the Tenant's tool policy denies this call".into(),
            ),
        };
    }
    Decision::Execute
}

/// `schedule_wake`: `{in | at, note}` or `{cancel: true}`.
fn schedule_wake(input: &Value) -> Value {
    if input["cancel"] == true {
        return ok(json!({ "cancelled": true }));
    }
    match (input.get("in"), input.get("at")) {
        (Some(v), _) | (None, Some(v)) if !v.is_null() => ok(json!({ "scheduled": v })),
        _ => failure("invalid", "schedule_wake needs in, at or cancel"),
    }
}

/// Anthropic's memory tool over `/memories`, versioned to the turn (here: kept in the core).
fn memory(input: &Value, writable: bool, store: &mut BTreeMap<String, String>, k: &Knobs) -> Value {
    let p = |key: &str| input.get(key).and_then(Value::as_str);
    let Some(command) = p("command") else {
        return failure("invalid", "the memory call names no command");
    };
    let inside = |path: &str| {
        k.breaks(Mutant::MemoryOutsideAllowed)
            || (path == "/memories" || path.starts_with("/memories/"))
                && (!path.contains("..") || k.breaks(Mutant::MemoryPathNotNormalised))
    };
    let path_of = |key: &str| -> Result<String, Value> {
        let Some(path) = p(key) else {
            return Err(failure(
                "invalid",
                format!("{command}: missing parameter {key}"),
            ));
        };
        if !inside(path) {
            return Err(failure("invalid", format!("{path} is outside /memories")));
        }
        Ok(path.to_string())
    };
    if command != "view" && !writable && !k.breaks(Mutant::MemoryReadOnlyWrites) {
        return failure("memory.forbidden", "this session's memory is read_only");
    }
    let result = (|| -> Result<Value, Value> {
        match command {
            "view" if k.breaks(Mutant::MemoryViewEmpty) => Ok(json!("")),
            "view" => {
                let path = path_of("path")?;
                if let Some(text) = store.get(&path) {
                    return Ok(json!(text));
                }
                let under: Vec<&String> = store
                    .keys()
                    .filter(|f| f.starts_with(&format!("{}/", path.trim_end_matches('/'))))
                    .collect();
                Ok(json!(under))
            }
            "create" => {
                let path = path_of("path")?;
                let text = p("file_text")
                    .or_else(|| {
                        k.breaks(Mutant::MemoryMissingParameterAccepted)
                            .then_some("")
                    })
                    .ok_or_else(|| failure("invalid", "create: missing parameter file_text"))?;
                store.insert(path, text.to_string());
                Ok(json!("created"))
            }
            "str_replace" => {
                let path = path_of("path")?;
                let (old, new) = match (p("old_str"), p("new_str")) {
                    (Some(o), Some(n)) => (o, n),
                    _ => {
                        return Err(failure(
                            "invalid",
                            "str_replace: missing old_str or new_str",
                        ))
                    }
                };
                let text = store
                    .get_mut(&path)
                    .ok_or_else(|| failure("invalid", format!("no memory {path}")))?;
                if !text.contains(old) {
                    return Err(failure("invalid", "old_str is not in the memory"));
                }
                if !k.breaks(Mutant::MemoryStrReplaceIgnored) {
                    *text = text.replacen(old, new, 1);
                }
                Ok(json!("replaced"))
            }
            "insert" => {
                let path = path_of("path")?;
                let (line, add) = match (input["insert_line"].as_u64(), p("insert_text")) {
                    (Some(l), Some(t)) => (l as usize, t),
                    _ => {
                        return Err(failure(
                            "invalid",
                            "insert: missing insert_line or insert_text",
                        ))
                    }
                };
                let text = store
                    .get_mut(&path)
                    .ok_or_else(|| failure("invalid", format!("no memory {path}")))?;
                let mut lines: Vec<&str> = text.lines().collect();
                if !k.breaks(Mutant::MemoryInsertIgnored) {
                    lines.insert(line.min(lines.len()), add);
                }
                *text = lines.join("\n");
                Ok(json!("inserted"))
            }
            "delete" => {
                let path = path_of("path")?;
                if !store.contains_key(&path) {
                    return Err(failure("invalid", format!("no memory {path}")));
                }
                if !k.breaks(Mutant::MemoryDeleteIgnored) {
                    store.remove(&path);
                }
                Ok(json!("deleted"))
            }
            "rename" => {
                let (from, to) = (path_of("old_path")?, path_of("new_path")?);
                let text = store
                    .remove(&from)
                    .ok_or_else(|| failure("invalid", format!("no memory {from}")))?;
                // The mutant copies: the old path stays.
                if k.breaks(Mutant::MemoryRenameCopies) {
                    store.insert(from, text.clone());
                }
                store.insert(to, text);
                Ok(json!("renamed"))
            }
            other => Err(failure(
                "invalid",
                format!("unknown memory command {other}"),
            )),
        }
    })();
    match result {
        Ok(v) => ok(v),
        Err(f) => f,
    }
}
