//! TurnStart as core writes it: the checkpoint, limits and model, and (the reference core) the
//! Agent's facts: its tools, skills, memories, files and MCP discovery (§ 3, § 4's rows).

use super::*;

impl World {
    pub(super) fn turn_start(&self, turn_id: &str, segment: u64) -> Value {
        let prefix = format!("{turn_id}:{segment}:");
        let outcomes: Vec<Value> = self
            .journal
            .iter()
            // A journal kept per turn (the mutant) replays the turn's earlier segments too.
            .filter(|(id, _)| {
                id.starts_with(&prefix)
                    || self.breaks(Mutant::OtherSegmentReplayed)
                    || (self.breaks(Mutant::JournalPerTurn)
                        && id.starts_with(&format!("{turn_id}:")))
            })
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
        // "the completed outcomes of this segment": in no order the spec fixes.
        let mut outcomes = outcomes;
        crate::suites::core_api::freedom::permute(&self.knobs(), "outcomes", &mut outcomes);
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
        if self.breaks(Mutant::ModelProviderDropped) {
            start["model"].as_object_mut().map(|o| o.remove("provider"));
        }
        if self.breaks(Mutant::FixtureProviderMisnamed) {
            start["model"]["provider"] = json!("anthropic");
        }
        if self.breaks(Mutant::ModelDescriptorWithoutWindow) {
            start["model"]
                .as_object_mut()
                .map(|o| o.remove("contextWindow"));
        }
        if !self.breaks(Mutant::TenantLimitsNotSent) {
            merge(&mut start["limits"], &Value::Object(self.sc.limits.clone()));
        }
        if self.role.states_facts() {
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
        if self.breaks(Mutant::CheckpointWithoutSegment) {
            start["checkpoint"]
                .as_object_mut()
                .map(|o| o.remove("segment"));
        }
        if self.breaks(Mutant::CheckpointWithoutManifestHash) {
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
        } else if self.breaks(Mutant::McpFactsBeforeDiscovery) {
            start["mcp"] = json!({ "servers": [] });
        }
        if self.role.states_facts() {
            self.agent_facts(&mut start);
        }
        start
    }

    /// The MCP discovery as a turn sees it (core role): each tool as the server listed it, plus
    /// `enabled`, false when the turn's manifest (the Agent's `disabled`) disables it, and
    /// `deferred` as the manifest sets it (§ 3).
    pub(super) fn mcp_facts_for_turn(&self, facts: &Value) -> Value {
        let mut facts = facts.clone();
        if !self.role.states_facts() {
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
        // "each server of the agent tree that connected": in no order the spec fixes.
        if let Some(servers) = facts["servers"].as_array_mut() {
            crate::suites::core_api::freedom::permute(&self.knobs(), "mcp.servers", servers);
        }
        for server in facts["servers"].as_array_mut().into_iter().flatten() {
            let name = server["name"].as_str().unwrap_or_default().to_string();
            if let (Some(i), true) = (
                server["instructions"].as_str(),
                self.breaks(Mutant::ServerInstructionsCut),
            ) {
                server["instructions"] = json!(i.chars().take(4096).collect::<String>());
            }
            // The mutant tells the harness where each server is, and with what credential.
            if let (Some(e), true) = (
                self.sc.endpoints.get(&format!("mcp:{name}")),
                self.breaks(Mutant::CredentialInMcpAnswer),
            ) {
                server["endpoint"] = e.clone();
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
                    } else if self.breaks(Mutant::DeferredAlwaysSaid) {
                        tool["deferred"] = json!(false);
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
    pub(super) fn turn_facts(&mut self, start: &mut Value, kind: Offer, offered: usize) {
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
                    // A message's metadata is an open map: a core may add its own to it.
                    if let Some(meta) = m.get_mut("metadata") {
                        crate::suites::core_api::freedom::extra(&self.knobs(), "metadata", meta);
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
    pub(super) fn skill_files(&self) -> Vec<(String, String)> {
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
        start["agent"] = self.turn_agent(a, sandbox);
        self.manifest_facts(a, start);
        self.sandbox_facts(a, sandbox, start);
        self.memory_facts(a, start);
    }

    /// TurnStart's agent: its id, its kind, and its sandbox's workspace.
    fn turn_agent(&self, a: &Value, sandbox: bool) -> Value {
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
        if (a["selfWake"] == true || self.breaks(Mutant::SelfWakeAlwaysTrue))
            && !self.breaks(Mutant::SelfWakeNotInTurnStart)
        {
            agent["selfWake"] = json!(true);
        }
        agent
    }

    /// The manifest the session runs: its version, its own tools and MCP servers, its skills
    /// and its instructions.
    fn manifest_facts(&self, a: &Value, start: &mut Value) {
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
    }

    /// The session's sandbox, when the Agent has one.
    fn sandbox_facts(&self, a: &Value, sandbox: bool, start: &mut Value) {
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
    }

    /// The Agent's memory: its access, its instructions and the index of its memories.
    fn memory_facts(&self, a: &Value, start: &mut Value) {
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
}
