//! The run the reference harness holds: its renewals, its segment's loop (model, tools, model
//! …), its transcript, and the tools it offers the model.

use super::*;

impl Run {
    pub(super) fn new(
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

    pub(super) fn limit(&self, name: &str) -> u64 {
        self.start["limits"][name].as_u64().unwrap_or(u64::MAX)
    }

    /// Hold the run: renew it, run its segment, and end it with one output or a release.
    pub(super) async fn hold(self, renew_every: u64, cancels: &Cancels) {
        let (ctx, mut crx) = mpsc::unbounded_channel();
        *cancels.lock().unwrap_or_else(|p| p.into_inner()) = Some((self.id.clone(), ctx));
        let (refused_tx, mut refused) = oneshot::channel::<()>();
        // Set once a renewal was refused: the run is over, and nothing more is sent for it,
        // whichever of the refusal and the segment's end this task sees first.
        let over = Arc::new(AtomicBool::new(false));
        let _renewer = {
            let r = self.clone();
            let over = over.clone();
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
                                over.store(true, Ordering::SeqCst);
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
                let stale = matches!(&end, End::Failed(why) if why["error"]["code"] == "run_stale");
                if over.load(Ordering::SeqCst) || stale && !self.k.breaks(Mutant::RenewRefusalIgnored) {
                    *cancels.lock().unwrap_or_else(|p| p.into_inner()) = None;
                    return;
                }
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
                    if self.k.breaks(Mutant::ReleaseReasonAlwaysShutdown) {
                        p["reason"] = json!("shutdown");
                    }
                    if self.k.breaks(Mutant::ReleaseWithoutReason) {
                        p.as_object_mut().expect("object").remove("reason");
                    }
                    let _ = self.chan.req("lease.release", p).await;
                } else {
                    if !release && !self.k.breaks(Mutant::NoGateCancel) {
                        self.cancel_gate_calls().await;
                    }
                    if !release && self.k.breaks(Mutant::StepsOnAfterCancel) {
                        let _ = (&mut work).await;
                    }
                    self.output(End::Failed(json!({ "status": "cancelled", "reason": reason }))).await;
                }
            }
            _ = &mut refused => {}
        }
        *cancels.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Send the segment's one output; its params are returned.
    pub(super) async fn output(&self, end: End) -> Value {
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
        if let Some(f) = self.k.freedom {
            // Its state is its own; the output's members are open.
            f.extra("state", &mut p["state"]);
            f.extra(&format!("output:{kind}"), &mut p);
        }
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

    pub(super) fn entry(&self, kind: &str, body: Value) -> Value {
        let kind = if self.k.breaks(Mutant::BadTranscriptKind) && kind == "candidate" {
            "assistant"
        } else {
            kind
        };
        if chooses(&self.k, Variant::OtherTranscript) {
            return json!({ "kind": kind, "payload": body, "turnId": self.turn });
        }
        let mut e = json!({ "kind": kind });
        if let Some(o) = body.as_object() {
            e.as_object_mut().expect("object").extend(o.clone());
        }
        if let Some(f) = self.k.freedom {
            f.extra(&format!("entry:{kind}"), &mut e);
        }
        e
    }

    /// The segment's edits as TranscriptUpdates after the entries it read: each update (one
    /// entry of the record) filled up to recordEntryBytes, an entry larger than it one of its own.
    pub(super) fn updates(&self, entries: Vec<Value>) -> Value {
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
    pub(super) async fn segment(&self) -> End {
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
        let messages = match self.messages() {
            Ok(m) => m,
            Err(end) => return end,
        };
        let mut entries: Vec<Value> = messages
            .iter()
            .map(|m| self.entry("input", json!({ "input": m })))
            .collect();
        let mut history: Vec<Value> = Vec::new();
        for m in &messages {
            history.push(json!({ "role": "user", "content": self.files_for_model(m).await }));
        }
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
            let mut effect = json!({ "effectId": eid, "kind": "model", "context": { "invocationId": self.mint("step", &format!("step-{step}")) } });
            if self.k.breaks(Mutant::OneInvocationId) {
                effect["context"]["invocationId"] = json!(self.turn);
            }
            if self.k.breaks(Mutant::NoInvocationId) {
                effect["context"] = json!({});
            }
            let mut body = json!({ "effectId": eid, "invocationId": self.mint("step", &format!("step-{step}")), "call": call });
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
                json!({ "stepId": self.mint("step", &format!("step-{step}")), "output": blocks }),
            ));
            history.push(json!({ "role": "assistant", "content": blocks }));
            let mut calls: Vec<&Value> =
                blocks.iter().filter(|b| b["type"] == "tool-call").collect();
            if self.k.decides(Variant::CallsReversed) && self.taken % 2 == 1 {
                calls.reverse();
            }
            if let Some(f) = self.k.freedom {
                f.permute(&format!("calls:{}:{step}", self.taken), &mut calls);
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
            let (results, waiting) = match self.call_tools(step, calls, &targets, &outcomes).await {
                Ok(done) => done,
                Err(end) => return end,
            };
            if !waiting.is_empty() {
                return End::Waiting {
                    ids: waiting,
                    entries,
                    steps: step + 1,
                };
            }
            self.results_entries(step, &results, &mut entries);
            history.push(json!({ "role": "tool", "content": results }));
        }
        End::Failed(json!({ "status": "failed", "error": "too many steps" }))
    }

    /// The turn's input messages: a messages input is one input entry per message, in order.
    /// A turn it cannot read (as a mutant) ends failed.
    fn messages(&self) -> Result<Vec<Value>, End> {
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
            return Err(End::Failed(
                json!({ "status": "failed", "error": "unreadable input" }),
            ));
        }
        Ok(match input["kind"].as_str() {
            Some("messages") if !self.k.breaks(Mutant::MessagesMerged) => {
                let mut each = input["messages"].as_array().cloned().unwrap_or_default();
                if self.k.breaks(Mutant::MessagesReversed) {
                    each.reverse();
                }
                if self.k.breaks(Mutant::MessagesEachWhole) {
                    each = vec![input.clone(); each.len()];
                }
                each
            }
            _ => vec![input],
        })
    }

    /// Run a step's tool calls: their results, and the effects left waiting. A denial that fails
    /// the turn (as a mutant) ends it.
    async fn call_tools(
        &self,
        step: u64,
        calls: Vec<&Value>,
        targets: &HashMap<String, Value>,
        outcomes: &BTreeMap<String, Value>,
    ) -> Result<(Vec<Value>, Vec<String>), End> {
        let mut waiting = Vec::new();
        let mut results = Vec::new();
        for c in calls {
            let call_id = c["callId"].as_str().unwrap_or_default().to_string();
            let name = c["name"].as_str().unwrap_or_default().to_string();
            let Some(target) = targets.get(&name).cloned() else {
                results.push(json!({ "callId": call_id, "error": self.say("no such tool") }));
                continue;
            };
            let tid = self.effect_id("tool", &self.ident(&call_id));
            let input = c["input"].clone();
            let mut effect = json!({
                "effectId": tid, "kind": "tool", "toolName": name, "target": target, "input": input,
                "context": { "callId": call_id, "invocationId": self.mint("step", &format!("step-{step}")) }
            });
            if self.k.breaks(Mutant::OneInvocationId) {
                effect["context"]["invocationId"] = json!(self.turn);
            }
            if self.k.breaks(Mutant::ToolInvocationPerCall) {
                effect["context"]["invocationId"] = json!(format!("{call_id}-invocation"));
            }
            if self.k.breaks(Mutant::ToolIntentUntargeted) {
                let o = effect.as_object_mut().expect("object");
                o.remove("toolName");
                o.remove("target");
            }
            if self.k.breaks(Mutant::NoCallId) {
                effect["context"] =
                    json!({ "invocationId": self.mint("step", &format!("step-{step}")) });
            }
            let memory = target["operation"] == "memory";
            if memory && self.k.breaks(Mutant::MemoryRunLocally) {
                results.push(json!({ "callId": call_id, "result": "(no memories)" }));
                continue;
            }
            if target["operation"] == "schedule_wake"
                && self.k.breaks(Mutant::ScheduleWakeAsHarnessTool)
            {
                effect["target"] = json!({ "kind": "harness" });
            }
            if memory && self.k.breaks(Mutant::MemoryOperationPerCommand) {
                let command = input["command"].as_str().unwrap_or("view");
                effect["target"]["operation"] = json!(format!("memory.{command}"));
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
                        "server": self.server(&target["server"], &target["agentId"]), "effectId": tid,
                        "name": if self.k.breaks(Mutant::OfferedNameCalled) { json!(name) } else { target["tool"].clone() },
                        "arguments": input
                    }),
                ),
                _ => (
                    "http-calls",
                    json!({ "effectId": tid, "tool": target["tool"], "arguments": input }),
                ),
            };
            match self.effect(effect, None, outcomes, route, body).await {
                Ok(Effected::Done(v)) => results.push(json!({ "callId": call_id, "result": v })),
                Ok(Effected::Waiting) if self.k.breaks(Mutant::NoWaitingOnPending) => {
                    results.push(json!({ "callId": call_id, "result": "pending" }))
                }
                Ok(Effected::Waiting) => waiting.push(tid),
                Err(e) => results.push(json!({ "callId": call_id, "error": e })),
            }
        }
        Ok((results, waiting))
    }

    /// A step's results are one entry, within recordEntryBytes: previews when they do not fit.
    fn results_entries(&self, step: u64, results: &[Value], entries: &mut Vec<Value>) {
        let budget = self.limit("recordEntryBytes").saturating_sub(1024) as usize;
        let mut entry = self.entry(
            "tool-results",
            json!({ "stepId": self.mint("step", &format!("step-{step}")), "results": results }),
        );
        if entry.to_string().len() > budget && !self.k.breaks(Mutant::StepResultsUnshaped) {
            let each = budget / (results.len() + 1);
            let shrunk: Vec<Value> = results
                .iter()
                .map(|r| json!({ "callId": r["callId"], "preview": r.to_string().chars().take(each.saturating_sub(64)).collect::<String>() }))
                .collect();
            entry = self.entry(
                "tool-results",
                json!({ "stepId": self.mint("step", &format!("step-{step}")), "results": shrunk }),
            );
        }
        if self.k.breaks(Mutant::ResultsSplit) {
            for r in results {
                entries.push(self.entry(
                    "tool-results",
                    json!({ "stepId": self.mint("step", &format!("step-{step}")), "results": [r] }),
                ));
            }
        } else {
            entries.push(entry);
        }
    }

    /// The variant's compaction: once the history passes half the model's window, one summary
    /// call (marked purpose: "summary") replaces it, and the transcript with one compaction
    /// entry. Once per segment.
    pub(super) async fn compact(
        &self,
        history: &mut Vec<Value>,
        entries: &mut Vec<Value>,
        step: u64,
        outcomes: &BTreeMap<String, Value>,
    ) -> Result<(), Value> {
        let on = chooses(&self.k, Variant::Compacts)
            || self.k.breaks(Mutant::CompactionWithoutFacts)
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
        let ident = self.ident(&self.mint("step", &format!("summary-{step}")));
        let eid = self.effect_id("model", &ident);
        let mut asked = history.clone();
        asked.push(json!({ "role": "user", "content": "Summarize the conversation so far." }));
        let call = self.model_call(&asked, &[]);
        let mut effect = json!({ "effectId": eid, "kind": "model", "context": { "invocationId": self.mint("step", &format!("summary-{step}")) } });
        if !self.k.breaks(Mutant::SummaryWithoutPurpose) {
            effect["purpose"] = json!("summary");
        }
        let body = json!({ "effectId": eid, "invocationId": self.mint("step", &format!("summary-{step}")), "call": call });
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
        let facts = if self.k.breaks(Mutant::CompactionWithoutFacts) {
            json!({ "summaryEffectIds": [eid] })
        } else {
            json!({ "trigger": "auto", "tokensBefore": before, "tokensAfter": after, "summaryEffectIds": [eid] })
        };
        *self.compacted.lock().unwrap_or_else(|p| p.into_inner()) = Some(facts);
        Ok(())
    }

    /// `<turnId>:<segment>:<kind>:<identity>` (without the segment: the mutant's).
    pub(super) fn effect_id(&self, kind: &str, ident: &str) -> String {
        if self.k.breaks(Mutant::EffectIdWithoutSegment) {
            return format!("{}:{kind}:{ident}", self.turn);
        }
        format!("{}:{}:{kind}:{ident}", self.turn, self.segment)
    }

    /// The identity of an effect within its segment: stable, never by call order (unless the
    /// mutant counts calls).
    pub(super) fn ident(&self, natural: &str) -> String {
        if self.k.breaks(Mutant::IdsByCallOrder) {
            return self.counter.fetch_add(1, Ordering::Relaxed).to_string();
        }
        if chooses(&self.k, Variant::OtherIdentity) {
            return format!("i{:x}", crate::hash::fnv1a64(natural.as_bytes()));
        }
        self.mint("identity", natural)
    }

    /// An id this harness mints (a step's, an effect's identity): as the reference writes it,
    /// or (the freedom's words) another, the same for the same text, in visible ASCII since it
    /// travels in an Idempotency-Key.
    pub(super) fn mint(&self, site: &str, text: &str) -> String {
        match self.k.free(Class::Words) {
            Some(f) => f
                .word(site, text)
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect(),
            None => text.to_string(),
        }
    }

    pub(super) fn model_call(&self, history: &[Value], tools: &[Value]) -> Value {
        let instructions = self.start["manifest"]["instructions"].clone();
        let history = self.pin_memory_index(history);
        let prompt = if chooses(&self.k, Variant::OtherPrompt) {
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

    /// § 3 "Pin the index where the prompt prefix stays cacheable": the memory index as the
    /// history's head, in every call (after the history, or in the first call only: the
    /// mutants').
    fn pin_memory_index(&self, history: &[Value]) -> Vec<Value> {
        let Some(index) = self.start["memory"]["index"].as_str() else {
            return history.to_vec();
        };
        let entry = json!({ "role": "user", "content": format!("{}\n{index}", self.say("Your memory index:")) });
        let mut h = history.to_vec();
        if self.k.breaks(Mutant::MemoryIndexUnpinned) {
            h.push(entry);
        } else if !(self.k.breaks(Mutant::MemoryIndexOnce)
            && h.iter().any(|m| m["role"] == "assistant"))
        {
            h.insert(0, entry);
        }
        h
    }

    /// The tools offered the model and, by the name given, what runs each.
    pub(super) fn tools(&self, mcp: &Value) -> (Vec<Value>, HashMap<String, Value>) {
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
                let mut name = self.tool_name(server, raw);
                // Two tools whose joined names collide are offered under unique names.
                while targets.contains_key(&name) {
                    let tag = format!("_{:08x}", crate::hash::fnv1a64(name.as_bytes()) as u32);
                    name = name.chars().take(64 - tag.len()).collect::<String>() + &tag;
                }
                let description = if t["enabled"] == false && redescribed {
                    json!(format!("a tool of {server}"))
                } else {
                    self.describe(&format!("mcp:{server}/{raw}"), &t["description"])
                };
                tools.push(json!({ "name": name, "description": description, "inputSchema": t["inputSchema"] }));
                let mut target = json!({ "kind": "mcp", "server": server, "tool": raw });
                if s["agentId"].is_string() {
                    target["agentId"] = s["agentId"].clone();
                }
                targets.insert(name, target);
            }
        }
        for t in self.start["manifest"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if t["kind"] == "http" {
                let name = t["name"].as_str().unwrap_or_default().to_string();
                let description = self.describe(&format!("http:{name}"), &t["description"]);
                tools.push(json!({ "name": name, "description": description, "inputSchema": t["inputSchema"] }));
                targets.insert(name.clone(), json!({ "kind": "http", "tool": name }));
            }
        }
        // Core's own tools, when the turn has them (§ 3, § 4): memory (view only for
        // read_only) and schedule_wake; sandbox tools only with a sandbox, which hcpspec never
        // gives (this harness has none to offer, unless the mutant's).
        let describe = |site: &str, d: &str| self.describe(site, &json!(d));
        let mut runtime = |name: &str, description: &str, schema: Value, target: Value| {
            let description = describe(name, description);
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
        if self.start["agent"]["selfWake"] == true {
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
        if let Some(f) = self.k.freedom {
            f.permute("tools", &mut tools);
        }
        (tools, targets)
    }

    /// A tool's description for the model: the one it came with, or (the freedom's words)
    /// the harness's own. Describing tools is the harness's.
    pub(super) fn describe(&self, site: &str, given: &Value) -> Value {
        match self.k.free(Class::Words) {
            Some(f) => json!(f.word(&format!("description:{site}"), given.as_str().unwrap_or(""))),
            None => given.clone(),
        }
    }

    /// How a gate call names an MCP server: `{serverName}` (by a URL: the mutant's).
    /// The agent used as a tool that declares it, when not the root (`agentId`, § 3).
    pub(super) fn server(&self, name: &Value, agent: &Value) -> Value {
        if self.k.breaks(Mutant::McpServerByUrl) {
            return json!({ "url": format!("{}/mcp/{}", self.gates, name.as_str().unwrap_or_default()) });
        }
        if agent.is_string() && !self.k.breaks(Mutant::ServerWithoutAgentId) {
            return json!({ "agentId": agent, "serverName": name });
        }
        json!({ "serverName": name })
    }

    pub(super) fn tool_name(&self, server: &str, tool: &str) -> String {
        if let Some(f) = self
            .k
            .free(Class::Words)
            .filter(|f| f.coin(Class::Words, "tool-names"))
        {
            let word: String = f
                .word("tool-name", &format!("{server}/{tool}"))
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let name = format!("{word}_{tool}");
            return name
                .chars()
                .rev()
                .take(64)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
        }
        if chooses(&self.k, Variant::OtherToolNames) {
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
    pub(super) async fn discover(&self) -> Value {
        let mut servers = self.start["manifest"]["mcpServers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if let Some(f) = self.k.freedom {
            f.permute("discover", &mut servers);
        }
        if servers.is_empty() || self.k.breaks(Mutant::NoMcpDiscovery) {
            return json!({ "servers": [] });
        }
        let mut listed = Vec::new();
        for s in servers {
            let name = s["name"].clone();
            let server = json!({ "server": self.server(&name, &Value::Null) });
            let _ = self.gate("mcp/connect", None, &server).await;
            if let Ok(a) = self.gate("mcp/list", None, &server).await {
                listed.push(json!({ "name": name, "tools": a["result"]["tools"] }));
            }
        }
        if self.k.breaks(Mutant::McpSnapshotEmpty) {
            listed.clear();
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
}
