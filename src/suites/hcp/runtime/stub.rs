//! `inproc:stub`, the spec's `proprietary-stub` shape: an in-memory catalog, an RBAC table of
//! grants, an in-memory hub and audit log, with `exec` written the way the spec's
//! `createAcmeRuntime` example writes it. An independent second runtime, so the suite runs on
//! two from the first day; it shares only the pack loader and the process adapter.

use super::adapter;
use super::reference::install_all;
use super::*;
use crate::suites::hcp::pack::{self, BindingMode, Land, Operation, Pack};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub struct StubFactory;

impl Factory for StubFactory {
    fn info(&self) -> RuntimeInfo {
        RuntimeInfo {
            name: "stub".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            features: FEATURES
                .iter()
                .chain(&["cli"])
                .map(|f| f.to_string())
                .collect(),
            denials: Some(denial_map()),
            rules: Some(rule_map()),
            connect: None,
        }
    }

    fn create(&self, config: RuntimeConfig) -> Result<Box<dyn Runtime>, Vec<Issue>> {
        let catalog = install_all(&config.pack_dirs, |files| pack::install(&files))?;
        let hub = config
            .hub
            .iter()
            .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
            .collect();
        Ok(Box::new(Stub {
            config,
            catalog,
            hub,
            active: BTreeSet::new(),
            creds: BTreeMap::new(),
            log: Vec::new(),
            inbox: Vec::new(),
        }))
    }
}

struct Stub {
    config: RuntimeConfig,
    catalog: BTreeMap<String, Pack>,
    hub: BTreeMap<String, VecDeque<MintOutcome>>,
    active: BTreeSet<String>,
    /// pack_id → (token, identity)
    creds: BTreeMap<String, (String, String)>,
    log: Vec<AuditRecord>,
    inbox: Vec<SenseEvent>,
}

const KNOWN: [&str; 5] = [
    "pack.activate",
    "pack.connect",
    "verb.exec.read",
    "verb.exec.write",
    "binding.elevate",
];

impl Stub {
    /// The RBAC table: exact capability, exact pack, optional verb and tenant scope.
    fn rbac_has(&self, cap: &str, pack_id: &str, verb_key: Option<&str>) -> bool {
        self.config.grants().iter().any(|g| {
            g.capability == cap
                && g.pack_id == pack_id
                && g.tenant_id
                    .as_ref()
                    .is_none_or(|t| Some(t) == self.config.tenant_id.as_ref())
                && match (verb_key, &g.verb_keys) {
                    (Some(v), Some(keys)) => keys.iter().any(|k| k == v),
                    _ => true,
                }
        })
    }

    fn check(
        &self,
        pack_id: &str,
        verb_key: &str,
        args: &Map<String, Value>,
    ) -> Result<(Operation, bool), String> {
        let pack = self
            .catalog
            .get(pack_id)
            .ok_or_else(|| format!("unknown pack {pack_id}"))?;
        if pack.command(verb_key).is_none() {
            return Err(format!("unknown verb {pack_id}.{verb_key}"));
        }
        let policy = pack
            .policy
            .verbs
            .get(verb_key)
            .ok_or_else(|| format!("no policy for {verb_key}"))?;
        if !self.active.contains(pack_id) {
            return Err(format!("denied: pack {pack_id} is not activated"));
        }
        let cap = if policy.operation == Operation::Write {
            "verb.exec.write"
        } else {
            "verb.exec.read"
        };
        if !self.rbac_has(cap, pack_id, Some(verb_key)) {
            return Err(format!("denied: missing {cap} for {pack_id}.{verb_key}"));
        }
        if policy.privacy.land == Land::Brain && self.config.project_id.is_none() {
            return Err("denied: privacy.land brain requires project_id".into());
        }
        if policy.confirm
            && args.get("confirm") != Some(&Value::Bool(true))
            && args.get("apply") != Some(&Value::Bool(true))
        {
            return Err("confirm required".into());
        }
        if !pack.surface.public && !self.creds.contains_key(pack_id) {
            return Err(format!("denied: pack {pack_id} is not connected"));
        }
        if let Some(bin) = &pack.surface.wrap.bin {
            if self.config.sandboxed() && !self.config.allow_bins.contains(bin) {
                return Err(format!("denied: bin {bin} is not on the allow-list"));
            }
            adapter::resolve_bin(bin, &self.config.path)?;
        } else {
            adapter::inproc_known(pack.surface.wrap.inproc.as_deref().unwrap_or_default())?;
        }
        Ok((policy.operation, pack.surface.public))
    }

    fn run(&self, pack: &Pack, req: &ExecRequest) -> Result<Value, String> {
        let argv = adapter::render_argv(pack, &req.verb_key, &req.args)?;
        let token = self.creds.get(&req.pack_id).map(|(t, _)| t.as_str());
        match &pack.surface.wrap.bin {
            None => {
                adapter::inproc_known(pack.surface.wrap.inproc.as_deref().unwrap_or_default())?;
                Ok(adapter::call_inproc(&argv, token.is_some()))
            }
            Some(bin) => {
                let program = adapter::resolve_bin(bin, &self.config.path)?;
                let mut env =
                    adapter::sandbox_env(&self.config.path, &req.pack_id, &req.verb_key, token);
                if !self.config.sandboxed() {
                    env.extend(
                        self.config
                            .environment
                            .iter()
                            .map(|(k, v)| (k.clone(), v.clone())),
                    );
                }
                Ok(adapter::spawn(&program, &argv, &self.config.workdir, &env)?)
            }
        }
    }
}

impl Runtime for Stub {
    fn list_packs(&self) -> Vec<Value> {
        self.catalog
            .values()
            .map(|p| serde_json::to_value(&p.surface).unwrap_or_default())
            .collect()
    }

    fn get_pack(&self, pack_id: &str) -> Option<Value> {
        // The spec's `getPack: (id) => deps.catalog.get(id)`.
        self.catalog
            .get(pack_id)
            .map(|p| serde_json::to_value(&p.surface).unwrap_or_default())
    }

    fn skill(&self, pack_id: &str) -> Option<String> {
        self.catalog
            .get(pack_id)
            .map(|p| p.skill.clone().unwrap_or_default())
    }

    fn cli(&mut self, req: &CliRequest) -> Option<Envelope> {
        // The CLI twin: the catalog's command whose `command` is the line's, then `exec`.
        let found = self.catalog.values().find_map(|p| {
            p.surface
                .commands
                .iter()
                .find(|c| c.command.as_deref() == Some(req.command.as_str()))
                .map(|c| (p.pack_id().to_string(), c.verb_key.clone()))
        });
        Some(match found {
            Some((pack_id, verb_key)) => self.exec(&ExecRequest {
                pack_id,
                verb_key,
                args: req.args.clone(),
            }),
            None => Envelope {
                ok: false,
                pack_id: String::new(),
                verb_key: String::new(),
                result: None,
                error: Some(format!("unknown command {}", req.command)),
            },
        })
    }

    fn activate(&mut self, pack_ids: &[String]) -> Vec<PackResult> {
        let mut out = Vec::new();
        for id in pack_ids {
            if !self.catalog.contains_key(id) {
                out.push(PackResult::deny(id, format!("unknown pack {id}")));
            } else if KNOWN.iter().any(|c| self.rbac_has(c, id, None)) {
                self.active.insert(id.clone());
                out.push(PackResult::ok(id));
            } else {
                out.push(PackResult::deny(
                    id,
                    format!("denied: no grant for pack {id}"),
                ));
            }
        }
        out
    }

    fn connect(&mut self, pack_id: &str) -> PackResult {
        let Some(pack) = self.catalog.get(pack_id) else {
            return PackResult::deny(pack_id, format!("unknown pack {pack_id}"));
        };
        if !self.active.contains(pack_id) {
            return PackResult::deny(pack_id, format!("denied: pack {pack_id} is not activated"));
        }
        let (public, binding) = (pack.surface.public, pack.surface.binding.clone());
        let Some(decl) = binding.filter(|_| !public) else {
            return PackResult::ok(pack_id);
        };
        if !self.rbac_has("pack.connect", pack_id, None) {
            return PackResult::deny(
                pack_id,
                format!("denied: missing pack.connect for {pack_id}"),
            );
        }
        if decl.mode == BindingMode::Mothership && !self.rbac_has("binding.elevate", pack_id, None)
        {
            return PackResult::deny(
                pack_id,
                format!("denied: mothership Binding requires binding.elevate for {pack_id}"),
            );
        }
        let n = self.creds.len() + 1;
        let default_identity = format!("{}:{}", decl.hub, self.config.principal.id);
        // The script's outcomes in turn; its last one for every mint after that.
        let scripted = self.hub.get_mut(pack_id).and_then(|q| {
            if q.len() > 1 {
                q.pop_front()
            } else {
                q.front().cloned()
            }
        });
        let (token, identity) = match scripted {
            Some(o) if !o.ok => {
                return PackResult::deny(
                    pack_id,
                    format!(
                        "denied: mint failed: {}",
                        o.error.unwrap_or_else(|| "hub refused".into())
                    ),
                )
            }
            Some(o) => (
                o.token.unwrap_or_else(|| format!("stub-{pack_id}-{n}")),
                o.identity.unwrap_or(default_identity),
            ),
            None => (format!("stub-{pack_id}-{n}"), default_identity),
        };
        self.creds.insert(pack_id.into(), (token, identity.clone()));
        PackResult {
            binding: Some(BindingInfo {
                mode: decl.mode,
                hub: decl.hub,
                identity,
            }),
            ..PackResult::ok(pack_id)
        }
    }

    fn exec(&mut self, req: &ExecRequest) -> Envelope {
        let write = self
            .catalog
            .get(&req.pack_id)
            .and_then(|p| p.policy.verbs.get(&req.verb_key))
            .map(|v| v.operation)
            == Some(Operation::Write);
        let result = self
            .check(&req.pack_id, &req.verb_key, &req.args)
            .and_then(|_| self.run(&self.catalog[&req.pack_id], req));
        if write {
            let (outcome, error) = match &result {
                Ok(_) => ("ok", None),
                Err(e) if e.starts_with("adapter") => ("error", Some(e.clone())),
                Err(e) => ("denied", Some(e.clone())),
            };
            let binding = if outcome == "denied" {
                None
            } else {
                self.creds.get(&req.pack_id).map(|(_, id)| id.clone())
            };
            self.log.push(AuditRecord {
                tenant_id: self.config.tenant_id.clone(),
                project_id: self.config.project_id.clone(),
                principal: Some(self.config.principal.clone()),
                pack_id: req.pack_id.clone(),
                verb_key: req.verb_key.clone(),
                binding,
                outcome: outcome.into(),
                error,
            });
        }
        Envelope::of(req, result)
    }

    fn availability(&self, pack_id: &str) -> PackAvailability {
        let Some(pack) = self.catalog.get(pack_id) else {
            return PackAvailability::not_installed(pack_id);
        };
        let verbs = pack
            .surface
            .commands
            .iter()
            .filter_map(|c| {
                let policy = pack.policy.verbs.get(&c.verb_key)?;
                let activated = self.active.contains(pack_id);
                let connected = pack.surface.public || self.creds.contains_key(pack_id);
                let mut reasons = BTreeMap::new();
                if !activated {
                    reasons.insert("activated".to_string(), "not activated".to_string());
                }
                if !connected {
                    reasons.insert(
                        "connected".to_string(),
                        "no Binding yet: connect first".to_string(),
                    );
                }
                // The confirm gate depends on the args, not on the command: probe with it satisfied.
                let probe_args = Map::from_iter([("confirm".to_string(), Value::Bool(true))]);
                if let Err(e) = self.check(pack_id, &c.verb_key, &probe_args) {
                    reasons.insert("executable".to_string(), e);
                }
                Some(VerbAvailability {
                    verb_key: c.verb_key.clone(),
                    operation: policy.operation,
                    land: policy.privacy.land,
                    installed: true,
                    activated,
                    connected,
                    executable: !reasons.contains_key("executable"),
                    reasons,
                })
            })
            .collect();
        PackAvailability {
            pack_id: pack_id.into(),
            installed: true,
            reasons: BTreeMap::new(),
            verbs,
        }
    }

    fn set_sense(&mut self, sense: &SenseConfig) -> Option<()> {
        self.config.sense = sense.clone();
        Some(())
    }

    fn grants(&self) -> Option<Vec<Grant>> {
        Some(self.config.grants().to_vec())
    }

    fn sense(&mut self, event: &SenseEvent) -> SenseReceipt {
        let declared = self.catalog.get(&event.pack_id).is_some_and(|p| {
            p.surface
                .sense
                .as_ref()
                .is_some_and(|s| s.triggers.contains(&event.trigger))
                && p.policy.triggers.contains_key(&event.trigger)
        });
        let reason = if self.config.sense.enable != Some(true) {
            "dropped: sense.enable is off"
        } else if !declared {
            "dropped: undeclared trigger"
        } else {
            self.inbox.push(event.clone());
            return SenseReceipt {
                accepted: true,
                reason: None,
            };
        };
        SenseReceipt {
            accepted: false,
            reason: Some(reason.into()),
        }
    }

    fn sense_sink(&self) -> Vec<SenseEvent> {
        self.inbox.clone()
    }

    fn audit(&self) -> Vec<AuditRecord> {
        self.log.clone()
    }
}
