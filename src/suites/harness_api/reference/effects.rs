//! How the reference harness runs one effect: its request hash, the intent, the replay or gate
//! call, and what it stores of a large or binary result.

use super::*;

impl Run {
    pub(super) fn hash(&self, intent: &Value) -> String {
        let mut intent = intent.clone();
        if self.k.breaks(Mutant::HashChangesOnReplay) {
            intent["runId"] = json!(self.id);
        }
        if self.k.breaks(Mutant::HashOfIdOnly) {
            let id = intent["effect"]["effectId"].as_str().unwrap_or_default();
            return format!("fnv1a:{:016x}", crate::hash::fnv1a64(id.as_bytes()));
        }
        if chooses(&self.k, Variant::OtherHash) {
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
    pub(super) async fn effect(
        &self,
        mut effect: Value,
        model_input: Option<Value>,
        outcomes: &BTreeMap<String, Value>,
        route: &'static str,
        mut body: Value,
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
                if answer["rejoin"] == true && self.k.breaks(Mutant::RejoinOtherBody) {
                    body["attempt"] = json!(2);
                }
                // A runtime tool is core's (never execute); a sandbox this harness does not have.
                if matches!(route, "runtime" | "sandbox") {
                    let error = json!({ "code": "tool.unavailable", "message": self.say("nothing here runs it") });
                    return self.unknown_fate(&eid, error).await.map(Effected::Done);
                }
                let bypass = (route == "model-calls"
                    && self.k.breaks(Mutant::FixtureModelBypassed)
                    && self.start["options"]["fixtureModel"] == true)
                    || (route == "http-calls" && self.k.breaks(Mutant::HttpToolsRunLocally));
                let got = if bypass {
                    json!({ "ok": true, "result": "local", "outcome": { "kind": "candidate", "output": [{ "type": "text", "text": "done" }], "finishReason": "stop" } })
                } else {
                    let mut key = eid.clone();
                    let mut got = self.gate(route, Some(&key), &body).await;
                    // § 4 "When a gate hop is lost, ask the same intent again."
                    let mut attempts = 1;
                    while route != "model-calls"
                        && attempts < LOST_HOP_ATTEMPTS
                        && got.as_ref().is_err_and(|e| e["code"] == LOST)
                        && !self.k.breaks(Mutant::LostHopNotAskedAgain)
                    {
                        attempts += 1;
                        // The same intent: the same effect and hash (another: the mutants').
                        let again =
                            self.intent_again(&intent, &hashed, attempts, &mut key, &mut body);
                        let again = self.chan.req("effect.intent", again).await?;
                        match again["status"].as_str() {
                            Some("execute") => got = self.gate(route, Some(&key), &body).await,
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
                if self.k.breaks(Mutant::OutcomeAsResult) {
                    let o = outcome.as_object_mut().expect("object");
                    let v = o.remove("value").unwrap_or_default();
                    o.insert("result".into(), v);
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

    /// The intent a lost hop asks again: the first one (under a new id, or another hash: the
    /// mutants'), and the key and body its gate call is sent with.
    fn intent_again(
        &self,
        intent: &Value,
        hashed: &Value,
        attempt: usize,
        key: &mut String,
        body: &mut Value,
    ) -> Value {
        let mut again = intent.clone();
        if self.k.breaks(Mutant::LostHopNewId) {
            *key = format!(
                "{}-retry{attempt}",
                intent["effect"]["effectId"].as_str().unwrap_or_default()
            );
            let mut h = hashed.clone();
            h["effectId"] = json!(key);
            again["effect"]["effectId"] = json!(key);
            again["requestHash"] = json!(self.hash(&json!({ "effect": h })));
            body["effectId"] = json!(key);
        }
        if self.k.breaks(Mutant::LostHopOtherHash) {
            again["requestHash"] =
                json!(self.hash(&json!({ "effect": hashed, "attempt": attempt })));
        }
        again
    }

    /// How a message's files reach the model (§ 3 model, § 5 media parts): a text file inlined,
    /// read in chunks of the version the first answer named; a file past modelFileBytes told
    /// of in a note; any other left a media part naming its version.
    pub(super) async fn files_for_model(&self, m: &Value) -> Value {
        let mut m = m.clone();
        let Some(parts) = m.get_mut("content").and_then(Value::as_array_mut) else {
            return m;
        };
        for part in parts.iter_mut() {
            let Some(aid) = part["reference"]["artifactId"].as_str().map(str::to_string) else {
                continue;
            };
            let mut ask = json!({ "runId": self.id, "artifactId": aid, "length": 0 });
            if part["reference"]["version"].is_u64() {
                ask["version"] = part["reference"]["version"].clone();
            }
            let Ok(read) = self.chan.req("artifact.read", ask).await else {
                continue;
            };
            let meta = read["artifact"].clone();
            let size = meta["size"].as_u64().unwrap_or(0);
            let kind = meta["contentType"].as_str().unwrap_or_default().to_string();
            if kind.starts_with("text/") && !self.k.breaks(Mutant::TextFileAsMedia) {
                *part = json!({ "type": "text", "text": self.read_text(&aid, &meta).await });
            } else if size > self.limit("modelFileBytes") && !self.k.breaks(Mutant::BigFileAsMedia)
            {
                let note = self.say("a file too large to show you");
                *part = json!({ "type": "text", "text": format!("[{note}: {} ({kind}, {size} bytes)]", meta["name"].as_str().unwrap_or(&aid)) });
            }
        }
        m
    }

    /// A text artifact's bytes, chunk by chunk, every chunk of the version `meta` names.
    async fn read_text(&self, aid: &str, meta: &Value) -> String {
        let chunk = self.limit("chunkBytes").clamp(1, 1 << 20);
        let mut bytes = Vec::new();
        for _ in 0..256 {
            let mut ask = json!({ "runId": self.id, "artifactId": aid, "offset": bytes.len(), "length": chunk });
            if !self.k.breaks(Mutant::LaterChunksUnversioned) {
                ask["version"] = meta["version"].clone();
            }
            let Ok(read) = self.chan.req("artifact.read", ask).await else {
                break;
            };
            let got = read["base64"]
                .as_str()
                .and_then(crate::suites::world::unb64)
                .unwrap_or_default();
            bytes.extend(got);
            if read["eof"] != false {
                break;
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// A message of the harness's own (the freedom's words replace it).
    pub(super) fn say(&self, text: &str) -> String {
        match self.k.free(Class::Words) {
            Some(f) => f.word("message", text),
            None => text.to_string(),
        }
    }

    /// Record a call whose fate this harness could not learn, `{runId, effectId, error}` (as a
    /// value: the mutant's): what core answers is what the model is told.
    pub(super) async fn unknown_fate(&self, eid: &str, error: Value) -> Result<Value, Value> {
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
    pub(super) async fn fit(&self, eid: &str, value: Value) -> Value {
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
        if self.k.breaks(Mutant::SpillWithoutPreview) {
            return json!({ "truncated": true, "artifactId": artifact, "size": text.len() });
        }
        let preview: String = text.chars().take(512).collect();
        json!({ "truncated": true, "artifactId": artifact, "size": text.len(), "preview": preview })
    }

    /// Section 5b: an MCP image, audio or blob resource part is stored, keyed by the call and
    /// the bytes' hash; an image goes to the model as a file only when the model reads images,
    /// any other part as a note naming its artifact.
    pub(super) async fn store_parts(&self, eid: &str, mut value: Value) -> Value {
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
    pub(super) async fn upload(
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
        if self.k.breaks(Mutant::SpillKeyPerRun) {
            begin["key"] = json!(format!("{key}:{}", self.id));
        }
        if self.k.breaks(Mutant::SpillWithoutKey) {
            begin.as_object_mut().expect("object").remove("key");
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
    pub(super) async fn gate(
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
    pub(super) async fn cancel_gate_calls(&self) {
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
