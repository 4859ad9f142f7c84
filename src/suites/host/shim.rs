//! The reference adapter linked with the recording fakes behind the host shim protocol
//! (docs/host-protocol.md): `inproc:reference` in process, `hcpspec shim --runtime
//! host:reference` over stdio. The same `call` serves both.

use super::fakes::{FakeEnv, FakeSession, Fakes};
use super::reference::{Bound, Knobs, Refusal, Rigs, Target};
use super::seams::{Ctx, Mode, Request, RuntimeCommand};
use crate::adapter::{Adapter, CallError};
use crate::knob::Class;
use crate::shim::RpcError;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub struct ReferenceHost {
    name: String,
    knob: Knobs,
    fakes: Arc<Fakes>,
    target: Option<Target>,
    sessions: BTreeMap<String, Handle>,
    /// Refusals answered so far (the freedom variant mints each an id) and calls made (the
    /// freedom variant's delays).
    refusals: u64,
    calls: u64,
}

struct Handle {
    bound: Bound,
    fake: Option<Arc<FakeSession>>,
    applied: usize,
}

fn bad(message: impl Into<String>) -> CallError {
    CallError::Rpc(RpcError::new(-32602, message.into()))
}

impl ReferenceHost {
    /// `reference`, `mutant:NAME`, `variant:NAME`.
    pub fn named(name: &str) -> Option<ReferenceHost> {
        Some(ReferenceHost {
            name: name.to_string(),
            knob: Knobs::named(name)?,
            fakes: Arc::default(),
            target: None,
            sessions: BTreeMap::new(),
            refusals: 0,
            calls: 0,
        })
    }

    /// A refusal as a value: its message the adapter's own text (another text, and an id it
    /// mints, under the freedom variant) with every joined error's text whole after it.
    fn refused(&mut self, r: Refusal) -> Value {
        self.refusals += 1;
        let own = match self.knob.free(Class::Words) {
            Some(f) => format!(
                "{} [refusal {}]",
                f.word("refusal", &r.message),
                f.word("refusal-id", &self.refusals.to_string())
            ),
            None => r.message,
        };
        let message = std::iter::once(own)
            .filter(|m| !m.is_empty())
            .chain(r.joined)
            .collect::<Vec<_>>()
            .join("\n");
        let mut body = json!({ "kind": r.kind, "message": message });
        if let Some(f) = self.knob.freedom {
            f.extra("refused", &mut body);
        }
        json!({ "refused": body })
    }

    /// The adapter's failure of a forwarded call: its own words, the error's text joined whole.
    fn done_or_refused(&mut self, r: Result<(), String>, ok: Value) -> Value {
        match r {
            Ok(()) => ok,
            Err(e) => self.refused(Refusal::new("invalid", "").join(e)),
        }
    }

    fn handle(&mut self, p: &Value) -> Result<&mut Handle, CallError> {
        let h = p["session"].as_str().unwrap_or_default();
        self.sessions
            .get_mut(h)
            .ok_or_else(|| bad(format!("session: no bound session {h:?}")))
    }

    fn target(&mut self, p: &Value) -> Result<Value, CallError> {
        let rigs = match p["rigs"]["shape"].as_str().unwrap_or("shared") {
            "shared" => Rigs::Shared(self.fakes.rig("shared")),
            "perTenant" => Rigs::PerTenant(
                p["rigs"]["tenants"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|t| (t.to_string(), self.fakes.rig(t)))
                    .collect(),
            ),
            "func" => Rigs::Func(self.fakes.rigs_fn()),
            other => return Err(bad(format!("rigs.shape: unknown {other:?}"))),
        };
        let decoder = match p["decoder"].as_str().unwrap_or("default") {
            "default" => None,
            "product" => Some(
                self.fakes
                    .product_decoder(super::reference::dialect(&self.knob)),
            ),
            other => return Err(bad(format!("decoder: unknown {other:?}"))),
        };
        let mut t = Target::new(
            rigs,
            p["compatibilityId"].as_str().unwrap_or_default(),
            decoder,
            Arc::new(FakeEnv(self.fakes.clone())),
            self.knob,
        );
        t.capabilities = p.get("capabilities").cloned().unwrap_or(Value::Null);
        // The recovery capabilities in the adapter's words, a set.
        let mut recovery: Vec<String> = t.recovery().into_iter().map(String::from).collect();
        if let Some(f) = self.knob.freedom {
            recovery = recovery.iter().map(|r| f.word("recovery", r)).collect();
            f.permute("recovery", &mut recovery);
        }
        let answer = json!({ "compatibilityId": t.compatibility_id(), "recovery": recovery });
        self.target = Some(t);
        Ok(answer)
    }

    fn bind(&mut self, p: &Value) -> Result<Value, CallError> {
        let t = self
            .target
            .as_ref()
            .ok_or_else(|| bad("host.bind before host.target"))?;
        let mode = match p["kind"].as_str().unwrap_or("create") {
            "create" => Mode::Create,
            "restore" => Mode::Restore,
            other => return Err(bad(format!("kind: unknown {other:?}"))),
        };
        let request: Request = serde_json::from_value(p["request"].clone())
            .map_err(|e| bad(format!("request: {e}")))?;
        self.fakes
            .set_next(p.get("session").cloned().unwrap_or(json!({})));
        let launch = Ctx {
            cancelled: p["launchCancelled"].as_bool().unwrap_or(false),
        };
        let (before, _) = self.fakes.made();
        match t.bind(
            launch,
            mode,
            request,
            p["rigSessionId"].as_str().unwrap_or_default(),
            p["residencyEpoch"].as_u64().unwrap_or(0),
        ) {
            Err(r) => Ok(self.refused(r)),
            Ok(bound) => {
                // The fake session this bind made, if the rig made one.
                let fake = match self.fakes.made() {
                    (n, last) if n > before => last,
                    _ => None,
                };
                let mut handle = format!("b{}", self.sessions.len() + 1);
                if let Some(f) = self.knob.free(Class::Words) {
                    handle = f.word("handle", &handle);
                }
                let caps = bound.capabilities();
                self.sessions.insert(
                    handle.clone(),
                    Handle {
                        bound,
                        fake,
                        applied: 0,
                    },
                );
                Ok(json!({ "session": handle, "capabilities": caps }))
            }
        }
    }

    fn apply(&mut self, p: &Value) -> Result<Value, CallError> {
        let c = &p["command"];
        let payload = match (c.get("payload"), c["payloadText"].as_str()) {
            (_, Some(t)) => Some(t.as_bytes().to_vec()),
            (Some(v), None) if !v.is_null() => Some(v.to_string().into_bytes()),
            _ => None,
        };
        let cmd = RuntimeCommand {
            kind: c["kind"].as_str().unwrap_or_default().to_string(),
            principal: c.get("principal").cloned().unwrap_or(Value::Null),
            metadata: c.get("metadata").cloned().unwrap_or(Value::Null),
            payload,
            payload_ref: c["payloadRef"].as_str().map(str::to_string),
            attempt: c["attempt"].as_str().unwrap_or_default().to_string(),
        };
        let h = self.handle(p)?;
        let n = h.applied;
        h.applied += 1;
        let out = match &h.fake {
            Some(f) => f.during_command(n, || h.bound.apply(cmd)),
            None => h.bound.apply(cmd),
        };
        Ok(match out {
            Ok(()) => json!({ "applied": true }),
            Err(r) => self.refused(r),
        })
    }
}

impl Adapter for ReferenceHost {
    fn call(&mut self, method: &str, p: Value) -> Result<Value, CallError> {
        let Some(f) = self.knob.freedom else {
            return self.dispatch(method, p);
        };
        self.calls += 1;
        // Time: an answer takes a while, far inside the protocol's deadline (5 s).
        let ms = f.delay_ms(&format!("{method}:{}", self.calls), 12);
        if ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        let mut answer = self.dispatch(method, p)?;
        // Extra members in the adapter's answers; the fakes' records are the protocol's own.
        if method != "host.records" {
            f.extra(&format!("answer:{method}"), &mut answer);
        }
        Ok(answer)
    }
}

impl ReferenceHost {
    fn dispatch(&mut self, method: &str, p: Value) -> Result<Value, CallError> {
        match method {
            "host.describe" => Ok(json!({
                "protocol": super::PROTOCOL,
                "adapter": { "name": self.name, "version": env!("CARGO_PKG_VERSION") },
                "fakes": super::FAKES,
            })),
            "host.reset" => {
                self.fakes = Arc::default();
                self.target = None;
                self.sessions.clear();
                Ok(json!({}))
            }
            // The reference's Core encodes the bodies a case means (its own, or a variant's).
            "host.encode" => {
                let mut encoded = super::reference::dialect(&self.knob)
                    .encode(&p)
                    .map_err(bad)?;
                // The same bytes as text: either form carries them (docs/host-protocol.md § 2).
                let as_text = self
                    .knob
                    .free(Class::Shapes)
                    .is_some_and(|f| f.coin(Class::Shapes, &format!("encode-text:{}", p["type"])));
                if let (true, Some(v)) = (as_text, encoded.get("payload")) {
                    encoded = json!({ "payloadText": v.to_string() });
                }
                Ok(encoded)
            }
            "host.target" => self.target(&p),
            "host.bind" => self.bind(&p),
            "host.apply" => self.apply(&p),
            "host.subscribe" => {
                let after = p["after"].as_str().unwrap_or_default().to_string();
                Ok(match self.handle(&p)?.bound.subscribe(&after) {
                    Ok(mut pubs) => {
                        if let Some(f) = self.knob.freedom {
                            for (i, p) in pubs.iter_mut().enumerate() {
                                f.extra(&format!("publication:{i}"), p);
                            }
                        }
                        json!({ "publications": pubs })
                    }
                    Err(r) => self.refused(r),
                })
            }
            "host.live" => {
                let accept = p["accept"].as_u64().unwrap_or(u64::MAX);
                let fakes = self.fakes.clone();
                let mut received = Vec::new();
                let mut take = |f: Value| {
                    if (received.len() as u64) < accept {
                        fakes.log().live.push(f.clone());
                        received.push(f);
                        true
                    } else {
                        false
                    }
                };
                let bound = &self.handle(&p)?.bound;
                let out = match p["relay"].as_str().unwrap_or("options") {
                    "options" => {
                        bound.live(&mut take);
                        Ok(())
                    }
                    kind @ ("text" | "reasoning") => bound.live_pair(kind, &mut take),
                    other => return Err(bad(format!("relay: unknown {other:?}"))),
                };
                Ok(self.done_or_refused(out, json!({ "received": received })))
            }
            "host.drops" => Ok(json!({ "drops": self.handle(&p)?.bound.ephemeral_drops() })),
            "host.waitIdle" => {
                let out = self.handle(&p)?.bound.wait_idle();
                Ok(self.done_or_refused(out, json!({ "ok": true })))
            }
            "host.done" => {
                let closed = self.handle(&p)?.bound.done();
                Ok(json!({ "ok": true, "closed": closed }))
            }
            "host.release" => {
                let out = self.handle(&p)?.bound.release();
                Ok(self.done_or_refused(out, json!({ "released": true })))
            }
            "host.closeAttempt" => {
                let attempt = p["attempt"].as_str().unwrap_or_default().to_string();
                let out = self.handle(&p)?.bound.close_attempt(&attempt);
                Ok(self.done_or_refused(out, json!({ "closed": true })))
            }
            "host.recovery" => {
                let t = self
                    .target
                    .as_ref()
                    .ok_or_else(|| bad("host.recovery before host.target"))?;
                // Each of the adapter's recovery values named by the § 3.6 capability bind holds
                // it true by (docs/host-protocol.md).
                let mut named: Vec<&str> = t
                    .recovery()
                    .into_iter()
                    .map(|r| match r {
                        "attempt-close" => "AttemptCloser",
                        "persistence-faults" => "PersistenceFaultReporter",
                        "residency-abandon" => "ResidencyAbandoner",
                        other => other,
                    })
                    .collect();
                if let Some(f) = self.knob.free(Class::Order) {
                    f.permute("recovery-named", &mut named);
                }
                Ok(json!({ "recovery": named }))
            }
            "host.registration" => {
                let t = self
                    .target
                    .as_ref()
                    .ok_or_else(|| bad("host.registration before host.target"))?;
                Ok(t.registration(p["agentId"].as_str().unwrap_or_default()))
            }
            "host.leaseEpoch" => Ok(json!({ "epoch": self.handle(&p)?.bound.lease_epoch() })),
            "host.id" => Ok(json!({ "id": self.handle(&p)?.bound.id() })),
            "host.capabilities" => {
                Ok(json!({ "capabilities": self.handle(&p)?.bound.capabilities() }))
            }
            "host.records" => Ok(self.fakes.log().to_json()),
            _ => Err(CallError::Rpc(RpcError::new(
                crate::shim::METHOD_NOT_FOUND,
                format!("method not found: {method}"),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bind(h: &mut ReferenceHost, session: Value) -> Value {
        h.call("host.target", json!({ "rigs": { "shape": "shared" } }))
            .unwrap();
        h.call(
            "host.bind",
            json!({ "kind": "create", "request": {}, "rigSessionId": "u-1", "session": session }),
        )
        .unwrap()
    }

    /// Over its eight seeds the freedom variant really takes each open point both ways, so its
    /// passing every MUST case means something.
    #[test]
    fn the_freedom_variant_varies_what_it_says() {
        let (mut orders, mut texts, mut encodings, mut extras) = (vec![], vec![], vec![], 0);
        for seed in 1..=8 {
            let mut h = ReferenceHost::named(&format!("variant:freedom:{seed}")).unwrap();
            let bound = bind(&mut h, json!({}));
            orders.push(bound["capabilities"].clone());
            extras += bound.as_object().unwrap().len() - 2;
            let refused = bind(&mut h, json!({ "lacks": ["AttemptCloser"] }));
            texts.push(refused["refused"]["message"].clone());
            let enc = h
                .call(
                    "host.encode",
                    json!({ "type": "gate_response", "interactionId": "e", "answer": 1 }),
                )
                .unwrap();
            encodings.push(enc.get("payloadText").is_some());
        }
        let plain = bind(&mut ReferenceHost::named("reference").unwrap(), json!({}));
        assert!(orders.iter().any(|o| *o != plain["capabilities"]), "order");
        let alone = bind(
            &mut ReferenceHost::named("reference").unwrap(),
            json!({ "lacks": ["AttemptCloser"] }),
        );
        assert!(
            texts.iter().all(|t| *t != alone["refused"]["message"]),
            "words"
        );
        assert!(
            encodings.contains(&true) && encodings.contains(&false),
            "shapes"
        );
        assert!(extras > 0, "extra");
    }
}
