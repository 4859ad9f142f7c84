//! Effects: an intent answered (execute, pending, or completed from the journal), its outcome
//! recorded, and (the reference core) the policy's approvals and the tool attempts' cap (§ 4, § 7).

use super::*;
use crate::suites::world::role::Decision;

impl World {
    pub(super) fn intent(&mut self, p: &Value) -> Reply {
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
        self.note_model_call(&effect, &eid, purpose == "summary");
        let hash = p
            .get("requestHash")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if let Some(reply) = self.held_id_answered(i, &eid, &hash) {
            return reply;
        }
        if let Some(row) = self.journal.get(&eid).cloned() {
            return self.asked_again(i, eid, hash, &effect, row);
        }
        // A strict schema knows schedule_wake and memory only: its core refuses another runtime
        // operation as invalid (§ 4: it never runs either way).
        let operation = effect.pointer("/target/operation").and_then(Value::as_str);
        if self.decides(Variant::OtherRuntimeOperationInvalid)
            && effect.pointer("/target/kind").and_then(Value::as_str) == Some("runtime")
            && !matches!(operation, Some("schedule_wake" | "memory"))
        {
            return Reply::Err("invalid", "the target names no runtime operation".into());
        }
        let answer = if self.breaks(Mutant::IntentNeverExecute) {
            json!("pending")
        } else if effect["kind"] == "model" && self.breaks(Mutant::ModelEffectRefused) {
            json!({ "completed": failure("model.refused", "model calls are refused") })
        } else if let Some(answer) = self.decide_tool(&eid, &effect) {
            answer
        } else {
            self.rule_for(&effect)
        };
        let (row, reply) = journaled(answer, hash, self.breaks(Mutant::PendingStatusRenamed));
        if matches!(row, Row::Executing { .. }) {
            self.runs[i].executed.insert(eid.clone());
        }
        let reply = self.traced(i, &eid, &effect, &row, reply);
        self.journal.insert(eid, row);
        Reply::Ok(reply)
    }

    /// A model effect's intent, as the transcript's events need it: whether it asks a summary,
    /// and its step and start.
    fn note_model_call(&mut self, effect: &Value, eid: &str, summary: bool) {
        if self.role.keeps_transcript() && effect["kind"] == "model" && summary {
            self.summaries.insert(eid.to_string());
        }
        if self.role.keeps_transcript()
            && effect["kind"] == "model"
            && !self.model_calls.contains_key(eid)
        {
            let step = effect
                .pointer("/context/invocationId")
                .cloned()
                .unwrap_or(Value::Null);
            self.model_calls.insert(
                eid.to_string(),
                json!({ "step": step, "startedAt": self.now() }),
            );
        }
    }

    /// An intent asked again: its journal row answers it (a drift refused, a completed outcome
    /// replayed, a call still invoking interrupted or executed again).
    fn asked_again(
        &mut self,
        i: usize,
        eid: String,
        hash: String,
        effect: &Value,
        row: Row,
    ) -> Reply {
        let tool_unchecked =
            effect["kind"] == "tool" && self.breaks(Mutant::ToolReplayDriftUnchecked);
        if row.hash() != hash && !self.breaks(Mutant::NoEffectDrift) && !tool_unchecked {
            return Reply::Err(
                "effect_drift",
                format!("effect {eid} was asked with another request hash"),
            );
        }
        match row {
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
            Row::Executing { .. } if self.crashed(i, &eid) || self.interrupted(&eid, effect) => {
                let outcome = failure(
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
                let rejoin = (self.role.replays() || self.scripts_rejoin(effect))
                    && !self.runs[i].executed.contains(&eid)
                    && self.log.iter().any(|e| {
                        e["via"] == "gate" && e["key"] == eid.as_str() && e.get("status").is_none()
                    });
                self.runs[i].executed.insert(eid);
                if rejoin {
                    return Reply::Ok(json!({ "status": "execute", "rejoin": true }));
                }
                Reply::Ok(json!({ "status": "execute" }))
            }
        }
    }

    /// Core's own decision on a tool intent (the reference core's: by the Agent's targets and
    /// policy, or by the person who answered its approval); none when the scenario's rules
    /// decide.
    fn decide_tool(&mut self, eid: &str, effect: &Value) -> Option<Value> {
        if effect["kind"] != "tool" {
            return None;
        }
        let before = self.memories.clone();
        let mut memories = std::mem::take(&mut self.memories);
        let d = self.role.decide(&self.sc, effect, &mut memories);
        self.memories = memories;
        let d = d?;
        self.attempts.insert(eid.to_string(), 1);
        self.tool_effects.insert(eid.to_string(), effect.clone());
        for (path, _) in self
            .memories
            .iter()
            .filter(|(p, v)| before.get(*p) != Some(*v))
        {
            self.memory_order.retain(|q| q != path);
            self.memory_order.push(path.clone());
        }
        Some(match (self.approved(eid), d) {
            (Some(true), _) => json!("execute"),
            (Some(false), _) => {
                let code = if self.breaks(Mutant::ApprovalDenialNotToolDenied) {
                    "tool.rejected"
                } else {
                    "tool.denied"
                };
                json!({ "completed": failure(code, "a person denied this call") })
            }
            (None, Decision::Execute) => json!("execute"),
            (None, Decision::Pending) => {
                self.held.insert(eid.to_string(), effect.clone());
                json!("pending")
            }
            (None, Decision::Completed(o)) => json!({ "completed": o }),
        })
    }

    /// A tool call of a traced turn: its span context, which the Tool Gate sends on too.
    fn traced(&mut self, i: usize, eid: &str, effect: &Value, row: &Row, reply: Value) -> Value {
        let mut reply = reply;
        let kind = effect.pointer("/target/kind").and_then(Value::as_str);
        if let (Row::Executing { .. }, true, Some(tp)) = (
            row,
            self.role.decides_effects() && matches!(kind, Some("mcp") | Some("http")),
            self.turn_meta
                .get(&self.runs[i].turn_id)
                .and_then(|m| m["traceparent"].as_str()),
        ) {
            // The turn's trace id, a span id of the call's own.
            let trace = tp.split('-').nth(1).unwrap_or("0").to_string();
            let span = format!("{:016x}", crate::hash::fnv1a64(eid.as_bytes()));
            let child = format!("00-{trace}-{span}-01");
            reply["traceparent"] = json!(child);
            self.call_traces.insert(eid.to_string(), child);
        }
        reply
    }

    /// A sandbox or harness call still invoking that another run asks for again (core role): the
    /// run that executed it ended (a crash), so it gets tool.interrupted at once (§ 4).
    fn crashed(&self, run: usize, eid: &str) -> bool {
        let kind = self.tool_effects.get(eid).map(|e| &e["target"]["kind"]);
        self.role.decides_effects()
            && kind.is_some_and(|k| {
                k == "sandbox" || k == "harness" && !self.breaks(Mutant::CrashedHarnessCallExecutes)
            })
            && !self.runs[run].executed.contains(eid)
            && !self.breaks(Mutant::CrashedCallExecutesAgain)
    }

    /// A re-send of a tool call still invoking, past the Runtime limit toolAttempts (3 by
    /// default): the call ends as tool.interrupted. Both roles: hcpspec's core caps a
    /// harness's re-sends as spec 004 § 4 says core does.
    fn interrupted(&mut self, eid: &str, effect: &Value) -> bool {
        if effect["kind"] != "tool" || self.breaks(Mutant::NoToolAttemptsCap) {
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

    /// The variant that reads § 7's new segment as asking the held call's own id: once its
    /// approval is answered, that id answers execute (approved) or completed with tool.denied.
    fn held_id_answered(&mut self, run: usize, eid: &str, hash: &str) -> Option<Reply> {
        if !self.decides(Variant::ApprovalAsksTheHeldId) {
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
        let outcome = failure(code, "a person denied this call");
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
    pub(super) fn pause_for_approvals(&mut self, p: &Value) {
        let ids_at = match self.breaks(Mutant::EffectIdsMisread) {
            true => "effects",
            false => "effectIds",
        };
        let mut tools = Vec::new();
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
            // The mutants: one interaction for the segment, or one per tool, not per call.
            let first = tools.is_empty();
            let again = tools.contains(&t["tool"]);
            tools.push(t["tool"].clone());
            if (!first && self.breaks(Mutant::OneApprovalPerSegment))
                || (again && self.breaks(Mutant::OneApprovalPerTool))
            {
                continue;
            }
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

    /// Issue 43 (harness role): a scenario rule answering `rejoin` for this effect (however
    /// often used) says a later owner rejoins the call a previous one left running.
    fn scripts_rejoin(&self, effect: &Value) -> bool {
        let kind = effect
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let target = target_key(effect);
        self.sc.intents.iter().any(|rule| {
            let m = &rule.matches;
            rule.answer == "rejoin"
                && m.get("kind").is_none_or(|k| k == kind)
                && m.get("target")
                    .is_none_or(|t| t.as_str() == Some(target.as_str()))
        })
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

    pub(super) fn outcome(&mut self, p: &Value) -> Reply {
        let i = match self.held(p) {
            Ok(i) => i,
            Err(e) => return e,
        };
        let eid = p
            .get("effectId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if p.get("value").is_none() && self.breaks(Mutant::OutcomeErrorFormRefused) {
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
        // A core may hold a model effect's value to ModelCandidateSchema (§ 5: "a ModelCandidate
        // (output blocks, finishReason, usage) or a failure"), before it weighs it: the freedom's
        // preconditions.
        let model = eid.split(':').nth(2) == Some("model");
        let candidate = value.get("finishReason").is_some() || value["kind"] == "failed";
        if model
            && p.get("value").is_some()
            && !candidate
            && crate::suites::core_api::freedom::coin(
                &self.knobs(),
                crate::knob::Class::Preconditions,
                "model-outcome-schema",
            )
        {
            return Reply::Err(
                "invalid",
                "a model effect's value is a ModelCandidate or a failure".into(),
            );
        }
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
            return self.unjournaled_outcome(eid, &value);
        };
        let value = self.redacted(&value);
        // The core role: `{error}` when the harness could not learn what happened. A tool call
        // whose fate is unknown fails to the model; a model call becomes uncertain.
        let unknown =
            self.role.decides_effects() && p.get("value").is_none() && p.get("error").is_some();
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
                failure("tool.unknown-outcome", "the call's fate is unknown")
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
            // A second outcome: the first stays, and is the answer.
            Row::Completed { hash, .. } if self.breaks(Mutant::SecondOutcomeOverwrites) => {
                let outcome = value.clone();
                self.journal
                    .insert(eid.to_string(), Row::Completed { hash, outcome });
                Reply::Ok(json!({ "status": "completed", "outcome": value }))
            }
            Row::Completed { .. } if self.breaks(Mutant::SecondOutcomeAnsweredWithItsValue) => {
                Reply::Ok(json!({ "status": "completed", "outcome": value }))
            }
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
}

impl World {
    /// An outcome for an effect no intent journaled: refused, and nothing recorded ("Every
    /// effect is journaled before it runs"); the mutants take it.
    fn unjournaled_outcome(&mut self, eid: &str, value: &Value) -> Reply {
        let value = self.redacted(value);
        if self.breaks(Mutant::OutcomeWithoutIntentRecorded) {
            let (hash, outcome) = (String::new(), value.clone());
            self.journal
                .insert(eid.to_string(), Row::Completed { hash, outcome });
        }
        if self.breaks(Mutant::OutcomeWithoutIntentRecorded)
            || self.breaks(Mutant::OutcomeWithoutIntentAnswered)
        {
            return Reply::Ok(json!({ "status": "completed", "outcome": value }));
        }
        Reply::Err("invalid", format!("effect {eid} was not journaled"))
    }
}

/// A new intent's answer as its journal row and the reply: pending (waiting, for the mutant
/// that renames it), completed, or executing.
fn journaled(answer: Value, hash: String, pending_renamed: bool) -> (Row, Value) {
    match answer.as_str() {
        Some("pending") if pending_renamed => {
            (Row::Waiting { hash }, json!({ "status": "waiting" }))
        }
        Some("pending") | Some("uncertain") => (Row::Waiting { hash }, json!({ "status": answer })),
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
    }
}
