//! The session's transcript as the outputs' edits fold it (§ 6), and what core reads of it:
//! its cursor, the events core writes of its own, and the tool-call rows.

use super::*;

impl World {
    /// The transcript's cursor: it names the transcript as the outputs' edits left it (in the
    /// harness role, as it was: the entries' count).
    pub fn cursor(&self) -> String {
        if self.role.keeps_transcript() {
            format!("c{}", self.folds)
        } else {
            format!("c{}", self.transcript.len())
        }
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
        // The mutants take a summary call of any turn, or one not completed.
        let any_turn = self.breaks(Mutant::CompactionOfAnyTurn);
        let unfinished = self.breaks(Mutant::CompactionTakesAnUnfinishedCall);
        let bad = ids.iter().find(|id| {
            !((any_turn || id.starts_with(&turn))
                && self.summaries.contains(**id)
                && (unfinished || matches!(self.journal.get(**id), Some(Row::Completed { .. }))))
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
    pub(super) fn fold_transcript(&mut self, run: usize, p: &Value) -> Result<(), (Reply, bool)> {
        let limit = self.runs[run].limit("recordEntryBytes");
        // TranscriptEntrySchema's five kinds (§ 6), and nothing else.
        if !self.breaks(Mutant::AnyEntryKind) {
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
}
