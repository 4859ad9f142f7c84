//! `inproc:reference`, the spec's `reference-local`: file-backed, in-process, sandboxed by
//! default, meeting all ten points and every must-not. One file per contract concern; this
//! file is the exec pipeline that strings them together in the contract's order.

mod additions;
pub mod authz;
mod hub;
mod install;
mod misorder;
mod review;
mod rules;

use super::adapter;
use super::freedom::{self, Activation};
use super::mutant::Mutant;
use super::variant::{self, Variant};
use super::*;
use crate::knob::Knob as _;
use crate::suites::hcp::pack::{self, BindingMode, Operation, Pack, PackFiles};
use authz::Subject;
use hub::{Hub, Minted};
pub use install::install_all;
use install::*;
use misorder::unmapped;
use std::collections::{BTreeMap, BTreeSet};

/// The reference's mutant or allowed variants (open points decided the other way, `variant.rs`).
pub type Knobs = crate::knob::Knobs<Mutant, Variant>;

#[derive(Debug, Default, Clone)]
pub struct ReferenceFactory {
    pub knobs: Knobs,
}

impl Factory for ReferenceFactory {
    fn info(&self) -> RuntimeInfo {
        let k = &self.knobs;
        let name = match (k.mutant, k.variant) {
            (Some(m), _) => format!("mutant:{}", m.name()),
            _ if k.is_every_variant() => "variant:all".to_string(),
            (None, Some(v)) => format!("variant:{}", v.name()),
            (None, None) => match k.freedom {
                Some(f) => format!("variant:{}", f.name()),
                None => "reference".to_string(),
            },
        };
        let dialect = k.decides(Variant::Dialect);
        let words = k.freedom.filter(|f| f.takes(crate::knob::Class::Words));
        RuntimeInfo {
            name,
            version: env!("CARGO_PKG_VERSION").into(),
            features: FEATURES
                .iter()
                .chain(REFERENCE_FEATURES)
                .map(|f| f.to_string())
                .collect(),
            denials: (!k.mutant.is_some_and(unmapped)).then(|| match words {
                Some(f) => freedom::denial_map(f),
                None if dialect => variant::dialect_denial_map(),
                None => denial_map(),
            }),
            rules: Some(match words {
                Some(f) => freedom::rule_map(f),
                None if dialect => variant::dialect_rule_map(),
                None => rule_map(),
            }),
            connect: additions::connectless(k).then_some(false),
        }
    }

    fn dress(&self, method: &str, answer: &mut Value) {
        if let Some(f) = self.knobs.freedom {
            freedom::dress(f, method, answer);
        }
    }

    fn runtime_id(&self, n: u64) -> String {
        let id = format!("rt-{n}");
        match self.knobs.freedom {
            Some(f) => f.word("runtime_id", &id),
            None => id,
        }
    }

    fn create(&self, mut config: RuntimeConfig) -> Result<Box<dyn Runtime>, Vec<Issue>> {
        let m = self.knobs.mutant;
        if m == Some(Mutant::SandboxOffByDefault) && config.sandbox.is_none() {
            config.sandbox = Some(false);
        }
        let vs = &self.knobs;
        let dirs: Vec<std::path::PathBuf> = if m == Some(Mutant::BadPackDropped) {
            // Keep only the packs that would install on their own, and say nothing of the rest.
            config
                .pack_dirs
                .iter()
                .filter(|d| pack::install(&PackFiles::read(d)).is_ok())
                .cloned()
                .collect()
        } else if m == Some(Mutant::DuplicatePackIdAccepted) {
            // Install the first pack of each pack_id and silently skip the later ones.
            let mut seen = BTreeSet::new();
            config
                .pack_dirs
                .iter()
                .filter(|d| match pack::install(&PackFiles::read(d)) {
                    Ok(p) => seen.insert(p.pack_id().to_string()),
                    Err(_) => true,
                })
                .cloned()
                .collect()
        } else {
            config.pack_dirs.clone()
        };
        let installed = install_all(&dirs, |files| install_one(m, vs, files));
        let packs = match installed {
            Err(mut issues) if vs.decides(Variant::Dialect) => {
                issues.reverse();
                for i in &mut issues {
                    i.rule = variant::dialect_rule(&i.rule);
                }
                return Err(issues);
            }
            other => other?,
        };
        let mut packs = packs;
        rules::after_install(m, &mut packs);
        review::cache_in_packs(m, &config.pack_dirs);
        if m == Some(Mutant::OnePolicyRowForAll) {
            for p in packs.values_mut() {
                if let Some(first) = p.policy.verbs.values().next().cloned() {
                    for row in p.policy.verbs.values_mut() {
                        *row = first.clone();
                    }
                }
            }
        }
        let env_grants = (m == Some(Mutant::GrantsFromEnv))
            .then(|| config.environment.get("HCP_GRANTS"))
            .flatten()
            .and_then(|g| serde_json::from_str(g).ok());
        // absent-grants-allow: no grants at all reads as a demo holding every capability.
        let env_grants = if m == Some(Mutant::AbsentGrantsAllow) && config.grants.is_none() {
            Some(
                packs
                    .keys()
                    .flat_map(|p| {
                        authz::CAPABILITIES.iter().map(|c| Grant {
                            capability: c.to_string(),
                            pack_id: p.clone(),
                            verb_keys: None,
                            tenant_id: None,
                        })
                    })
                    .collect(),
            )
        } else {
            env_grants
        };
        additions::hold_grants(m, &mut config, packs.keys());
        let mut hub = Hub::new(&config.hub);
        hub.used_up_mints = chooses(vs, Variant::HubUsedUpMints);
        hub.freedom = vs.freedom;
        Ok(Box::new(Reference {
            hub,
            config,
            packs,
            activated: BTreeSet::new(),
            bindings: BTreeMap::new(),
            audit: Vec::new(),
            sink: Vec::new(),
            knobs: self.knobs,
            public_connected: BTreeSet::new(),
            env_grants,
            polling_since: None,
        }))
    }
}

/// Does this runtime take variant `v`'s choice: as that variant, as `variant:all`, or by the
/// freedom variant's coin?
fn chooses(k: &Knobs, v: Variant) -> bool {
    k.decides(v) || freedom::chooses(k.freedom, v)
}

/// The optional features the reference claims beyond [`FEATURES`]: its CLI face.
const REFERENCE_FEATURES: &[&str] = &["cli"];

pub struct Reference {
    config: RuntimeConfig,
    packs: BTreeMap<String, Pack>,
    activated: BTreeSet<String>,
    bindings: BTreeMap<String, Minted>,
    hub: Hub,
    audit: Vec<AuditRecord>,
    sink: Vec<SenseEvent>,
    knobs: Knobs,
    /// public-connect-flag: the public packs connect was called for.
    public_connected: BTreeSet<String>,
    /// grants-from-env: grants read from the runtime's environment.
    env_grants: Option<Vec<Grant>>,
    /// polling-on-a-timer: when its poller started (the first activation).
    polling_since: Option<std::time::Instant>,
}

impl Reference {
    fn broken(&self, m: Mutant) -> bool {
        self.knobs.breaks(m)
    }

    fn chose(&self, v: Variant) -> bool {
        // sense-while-disabled-after-connect is the allowed choice sense-after-connect with one
        // rule broken: the shape of the runtime issue 22 found, whose bug no case caught while
        // the Sense cases never connected.
        chooses(&self.knobs, v)
            || (v == Variant::MintInExec
                && additions::connectless(&self.knobs)
                && !self.broken(Mutant::ConnectlessRunsUnbound))
            || (v == Variant::SenseAfterConnect
                && self.broken(Mutant::SenseWhileDisabledAfterConnect))
    }

    /// dialect: every reason in its own words.
    fn words(&self, text: String) -> String {
        if self.chose(Variant::Dialect) {
            variant::dialect_text(&text)
        } else {
            text
        }
    }

    /// Why a mint of this pack's Binding must be refused for want of the elevation grant: a
    /// `mothership` Binding needs `binding.elevate` (at connect, and inside exec alike).
    fn elevation_denial(&self, pack: &Pack) -> Option<String> {
        let mothership = pack.needs_binding()
            && pack
                .surface
                .binding
                .as_ref()
                .is_some_and(|b| b.mode == BindingMode::Mothership);
        (mothership
            && !authz::holds(
                self.subject(),
                authz::ELEVATE,
                pack.pack_id(),
                None,
                self.knobs.mutant,
            ))
        .then(|| {
            format!(
                "denied: mothership Binding requires binding.elevate for {}",
                pack.pack_id()
            )
        })
    }

    /// Activation: any known capability on the pack (the reference), or only pack.activate and
    /// the exec axes (narrow-activation).
    fn may_activate(&self, pack_id: &str) -> bool {
        if freedom::activation(self.knobs.freedom) == Activation::Open {
            return true;
        }
        if self.chose(Variant::NarrowActivation) {
            return [authz::ACTIVATE, authz::EXEC_READ, authz::EXEC_WRITE]
                .iter()
                .any(|c| authz::holds(self.subject(), c, pack_id, None, self.knobs.mutant));
        }
        authz::may_activate(self.subject(), pack_id, self.knobs.mutant)
    }

    fn subject(&self) -> Subject<'_> {
        Subject {
            grants: match &self.env_grants {
                Some(g)
                    if self.config.grants().is_empty()
                        && !(self.broken(Mutant::AbsentGrantsAllow)
                            && self.config.grants.is_some()) =>
                {
                    g
                }
                _ => self.config.grants(),
            },
            tenant_id: self.config.tenant_id.as_deref(),
            project_id: self.config.project_id.as_deref(),
        }
    }

    /// The Binding an exec of this pack runs under: `Ok(None)` for a public pack.
    fn binding_for(&self, pack: &Pack) -> Result<Option<Minted>, String> {
        if !pack.needs_binding() {
            return Ok(None);
        }
        match self.bindings.get(pack.pack_id()) {
            Some(b) => Ok(Some(b.clone())),
            None if self.broken(Mutant::ExecWithoutBinding)
                || self.broken(Mutant::ConnectlessRunsUnbound) =>
            {
                Ok(None)
            }
            None => Err(format!("denied: pack {} is not connected", pack.pack_id())),
        }
    }

    /// Point 6 and 7: the adapter, as far as it can be checked without running it.
    fn plan_adapter(
        &self,
        pack: &Pack,
        req: &ExecRequest,
    ) -> Result<(Option<std::path::PathBuf>, Vec<String>), String> {
        let program = match &pack.surface.wrap.bin {
            Some(bin) if bin.contains('/') && self.broken(Mutant::BinPathResolved) => {
                let path = match self.config.path.first() {
                    Some(dir) if !bin.starts_with('/') => dir.join(bin),
                    _ => std::path::PathBuf::from(bin),
                };
                Some(
                    path.canonicalize()
                        .map_err(|_| format!("denied: unknown bin {bin}"))?,
                )
            }
            Some(bin)
                if bin.contains('/')
                    && self.broken(Mutant::AllowListBasename)
                    && self.config.allow_bins.iter().any(|a| {
                        std::path::Path::new(bin)
                            .file_name()
                            .and_then(|n| n.to_str())
                            == Some(a.as_str())
                    }) =>
            {
                Some(std::path::PathBuf::from(bin))
            }
            Some(bin)
                if bin.contains('/')
                    && self.chose(Variant::BinPathAllowed)
                    && self.config.allow_bins.contains(bin) =>
            {
                let path = std::path::PathBuf::from(bin);
                if !path.is_absolute() || !path.is_file() {
                    return Err(format!("denied: unknown bin {bin}"));
                }
                Some(path)
            }
            Some(bin) => {
                let listed = self.config.sandboxed()
                    || (self.chose(Variant::NativeLocalAllowList)
                        && !self.config.allow_bins.is_empty());
                if listed
                    && !self.config.allow_bins.contains(bin)
                    && !review::prefix_listed(self.knobs.mutant, &self.config.allow_bins, bin)
                    && !self.broken(Mutant::UnknownBinAllowed)
                {
                    return Err(format!("denied: bin {bin} is not on the allow-list"));
                }
                Some(adapter::resolve_bin(bin, &self.config.path)?)
            }
            None if self.broken(Mutant::InprocUnknownAccepted) => None,
            None => {
                adapter::inproc_known(pack.surface.wrap.inproc.as_deref().unwrap_or_default())?;
                None
            }
        };
        let mut argv = if self.broken(Mutant::RequiredArgUnchecked) {
            adapter::render_argv(
                pack,
                &req.verb_key,
                &with_blank_args(pack, &req.verb_key, &req.args),
            )?
        } else if self.broken(Mutant::VerbRunsFirstCommand) {
            // Every verb_key addressed as the pack's first command (by verb_key order).
            let first = pack.surface.wrap.commands.keys().next().cloned();
            adapter::render_argv(pack, first.as_deref().unwrap_or(&req.verb_key), &req.args)?
        } else {
            adapter::render_argv(pack, &req.verb_key, &req.args)?
        };
        if self.chose(Variant::PassThroughPairs)
            && pack.surface.wrap.pass_through
            && !pack.surface.wrap.commands.contains_key(&req.verb_key)
        {
            argv = variant::render_pairs(&req.verb_key, &req.args);
        }
        review::rescan(self.knobs.mutant, &mut argv, &req.args);
        if self.broken(Mutant::ShellArgv) {
            argv = argv
                .join(" ")
                .split_whitespace()
                .map(String::from)
                .collect();
        }
        Ok((program, argv))
    }

    fn run_adapter(
        &self,
        pack: &Pack,
        req: &ExecRequest,
        binding: Option<&Minted>,
    ) -> Result<Value, String> {
        let (program, argv) = self.plan_adapter(pack, req)?;
        let token = binding.map(|b| review::token_of(self.knobs.mutant, b));
        if program.is_some()
            && (self.chose(Variant::JailPerExec) || self.chose(Variant::CredentialFile))
        {
            return self.run_in_own_jail(program.as_deref(), &argv, req, token);
        }
        if self.broken(Mutant::ExitCodeIgnored) {
            if let Some(p) = &program {
                let env =
                    adapter::sandbox_env(&self.config.path, &req.pack_id, &req.verb_key, token);
                return adapter::spawn(p, &argv, &self.config.workdir, &env).or_else(|e| {
                    if e.0.starts_with("adapter exited") {
                        Ok(Value::Null)
                    } else {
                        Err(e.0)
                    }
                });
            }
        }
        let token = token.filter(|_| !self.broken(Mutant::BindingNotPassed));
        let token = self.leak_or_keep(pack, token);
        let Some(program) = program else {
            // plan_adapter checked the handler is known.
            if self.broken(Mutant::InprocArgvDropped) {
                return Ok(adapter::call_inproc(&[], token.is_some()));
            }
            return Ok(adapter::call_inproc(&argv, token.is_some()));
        };
        let mut env = adapter::sandbox_env(&self.config.path, &req.pack_id, &req.verb_key, token);
        if !self.config.sandboxed() || self.broken(Mutant::InheritedEnv) {
            // native-local (explicit opt-in): the runtime's own environment is inherited.
            for (k, v) in &self.config.environment {
                env.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        review::denylist_env(self.knobs.mutant, &self.config.environment, &mut env);
        let cwd = if self.broken(Mutant::NoCwdJail) {
            std::env::current_dir().map_err(|e| e.to_string())?
        } else if self.broken(Mutant::JailFollowsLink) {
            additions::pack_jail(&self.config.workdir, &req.pack_id)?
        } else if let Some(dir) = review::pack_dir_cwd(self.knobs.mutant, &self.config.pack_dirs) {
            dir
        } else {
            self.config.workdir.clone()
        };
        Ok(adapter::spawn(&program, &argv, &cwd, &env)?)
    }

    /// jail-per-exec and credential-file: a spawn of their own. The jail is a fresh directory
    /// under workdir (or workdir itself), the token a file in it; both gone when the exec ends.
    fn run_in_own_jail(
        &self,
        program: Option<&std::path::Path>,
        argv: &[String],
        req: &ExecRequest,
        token: Option<&str>,
    ) -> Result<Value, String> {
        let program = program.ok_or("no program")?;
        let fresh = self.chose(Variant::JailPerExec);
        let jail = if fresh {
            variant::fresh_jail(&self.config.workdir)?
        } else {
            self.config.workdir.clone()
        };
        let mut env = adapter::sandbox_env(&self.config.path, &req.pack_id, &req.verb_key, None);
        let mut handed = None;
        if let Some(token) = token {
            if self.chose(Variant::CredentialFile) {
                let file = variant::credential_file(&jail, token)?;
                env.insert("HCP_CREDENTIAL_FILE".into(), file.display().to_string());
                handed = Some(file);
            } else {
                env.insert("HCP_BINDING".into(), token.into());
            }
        }
        if !self.config.sandboxed() {
            for (k, v) in &self.config.environment {
                env.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        let result = adapter::spawn(program, argv, &jail, &env);
        if let Some(f) = handed {
            let _ = std::fs::remove_file(f);
        }
        if fresh {
            let _ = std::fs::remove_dir_all(&jail);
        }
        Ok(result?)
    }

    /// The capability axes of an exec (`authz::authorize_exec`) as this runtime checks them:
    /// its Policy row, or the denial.
    fn authorize<'p>(
        &self,
        pack: &'p Pack,
        req: &ExecRequest,
        activated: bool,
        early_confirm: bool,
    ) -> Result<&'p pack::VerbPolicy, Denied> {
        let mut s = self.subject();
        // activation-authorises-exec: an activated pack's verbs need no exec grant.
        let widened: Vec<Grant>;
        if self.broken(Mutant::ActivationAuthorisesExec) && activated {
            widened = s
                .grants
                .iter()
                .cloned()
                .chain([authz::EXEC_READ, authz::EXEC_WRITE].map(|c| Grant {
                    capability: c.into(),
                    pack_id: req.pack_id.clone(),
                    verb_keys: None,
                    tenant_id: None,
                }))
                .collect();
            s.grants = &widened;
        }
        if early_confirm {
            s.project_id = Some("");
        }
        authz::authorize_exec(s, pack, req, self.knobs.mutant)
    }

    /// The pipeline up to the adapter, in the contract's order; any step may deny.
    fn exec_inner(
        &mut self,
        req: &ExecRequest,
    ) -> (Option<Operation>, Option<String>, Result<Value, String>) {
        let Some(pack) = self.packs.get(&req.pack_id) else {
            return (None, None, Err(format!("unknown pack {}", req.pack_id)));
        };
        let operation = pack.policy.verbs.get(&req.verb_key).map(|p| p.operation);
        let deny = |e: String| (operation, None, Err(e));
        // The documented order: the verb and its Policy row, then activation, then the axes.
        if self.broken(Mutant::UndeclaredVerbPassedThrough)
            && pack.command(&req.verb_key).is_none()
            && pack.surface.wrap.pass_through
        {
            let result = self.run_adapter(pack, req, None);
            return (operation, None, result);
        }
        if pack.command(&req.verb_key).is_none() {
            return deny(format!("unknown verb {}.{}", req.pack_id, req.verb_key));
        }
        if operation.is_none() {
            return deny(format!("no policy for {}", req.verb_key));
        }
        if self.chose(Variant::TypedArgs) {
            if let Some(e) = variant::mistyped_arg(pack, &req.verb_key, &req.args) {
                return deny(e);
            }
        }
        if self.chose(Variant::DeclaredArgsOnly) {
            if let Some(e) = variant::undeclared_arg(pack, &req.verb_key, &req.args) {
                return deny(e);
            }
        }
        if let Err(e) = self.mint_early(Mutant::MintBeforeGrants, req) {
            return (operation, None, Err(e));
        }
        let pack = &self.packs[&req.pack_id];
        let activated =
            self.activated.contains(&req.pack_id) || self.broken(Mutant::ActivationSkipped);
        if self.misorders(Mutant::ConfirmBeforeGrants) {
            if let Some(row) = pack.policy.verbs.get(&req.verb_key) {
                if let Err(e) = authz::confirm_gate(row, &req.args, None) {
                    return deny(e.0);
                }
            }
        }
        if !activated && !self.chose(Variant::ActivationLast) {
            return deny(format!("denied: pack {} is not activated", req.pack_id));
        }
        let brain_denial = "denied: privacy.land brain requires project_id";
        let needs_project = pack
            .policy
            .verbs
            .get(&req.verb_key)
            .is_some_and(|row| row.privacy.land == pack::Land::Brain)
            && self.config.project_id.is_none();
        if self.misorders(Mutant::ProjectBeforeCapability) && needs_project {
            return deny(brain_denial.into());
        }
        let early_confirm = self.misorders(Mutant::ConfirmBeforeBrain);
        let policy = match self.authorize(pack, req, activated, early_confirm) {
            Ok(p) => p,
            Err(e) => return deny(e.0),
        };
        if early_confirm {
            if let Err(e) = authz::confirm_gate(policy, &req.args, self.knobs.mutant) {
                return deny(e.0);
            }
            if needs_project {
                return deny(brain_denial.into());
            }
        }
        if let Err(e) = self.mint_early(Mutant::MintBeforeConfirm, req) {
            return (operation, None, Err(e));
        }
        let pack = &self.packs[&req.pack_id];
        let Some(policy) = pack.policy.verbs.get(&req.verb_key) else {
            return deny(format!("no policy for {}", req.verb_key));
        };
        if self.misorders(Mutant::BindingBeforeConfirm) {
            if let Err(e) = self.binding_for(pack) {
                return deny(e);
            }
        }
        if self.broken(Mutant::PublicPackMinted) && !pack.needs_binding() {
            let hub = format!("{}-hub", req.pack_id);
            if let Err(e) = self.hub.mint(&req.pack_id, &hub, &self.config.principal.id) {
                return deny(format!("denied: mint failed: {e}"));
            }
        }
        if (self.broken(Mutant::PublicNeedsConnect)
            || self.broken(Mutant::ConnectlessRefusesPublic))
            && !pack.needs_binding()
            && !self.public_connected.contains(&req.pack_id)
        {
            return deny(format!("denied: pack {} is not connected", req.pack_id));
        }
        let late_confirm = self.broken(Mutant::ConfirmAfterAdapter);
        if !late_confirm {
            let row = self.row_for(req, policy);
            if let Err(e) = authz::confirm_gate(row, &req.args, self.gate_mutant(pack, req)) {
                return deny(e.0);
            }
        }
        if !activated {
            return deny(format!("denied: pack {} is not activated", req.pack_id));
        }
        // mint-in-exec: a Binding for this exec, as the spec's createAcmeRuntime mints it
        // (`const cred = await deps.hub.mint(pack, authz) // fail closed inside`).
        if self.misorders(Mutant::AdapterBeforeBinding) {
            if let Err(e) = self.plan_adapter(pack, req) {
                return deny(e);
            }
        }
        let binding = if self.chose(Variant::MintInExec) {
            let elevation = self.elevation_denial(pack);
            mint_in_exec(
                &mut self.hub,
                elevation,
                pack,
                req,
                &self.config.principal.id,
            )
        } else {
            self.binding_for(pack)
        };
        let binding = match binding {
            Ok(b) => b,
            Err(e) => return deny(e),
        };
        let identity = binding.as_ref().map(|b| {
            if self.broken(Mutant::AuditTokenAsBinding) {
                b.token.clone()
            } else {
                b.identity.clone()
            }
        });
        let result =
            self.failure_as_denial(pack, req, self.run_adapter(pack, req, binding.as_ref()));
        if late_confirm {
            if let Err(e) = authz::confirm_gate(policy, &req.args, self.knobs.mutant) {
                return deny(e.0);
            }
        }
        (operation, identity, result)
    }

    fn record(
        &mut self,
        req: &ExecRequest,
        binding: Option<String>,
        result: &Result<Value, String>,
    ) {
        if self.broken(Mutant::NoAuditOnWrite)
            || rules::audit_skipped(
                self.knobs.mutant,
                self.packs.get(&req.pack_id),
                &req.verb_key,
            )
            || self.audit_skipped(req)
        {
            return;
        }
        let (outcome, error) = match result {
            Ok(_) => ("ok", None),
            Err(e) if is_denial(e) => ("denied", Some(e.clone())),
            Err(e) => ("error", Some(e.clone())),
        };
        if outcome == "denied" && self.chose(Variant::DenialsUnaudited) {
            return;
        }
        let error = error.map(|e| self.words(e));
        let mut rec = AuditRecord {
            tenant_id: self.config.tenant_id.clone(),
            project_id: self.config.project_id.clone(),
            principal: (!self.broken(Mutant::AuditWithoutPrincipal)).then(|| {
                let mut p = self.config.principal.clone();
                if self.broken(Mutant::PrincipalKindDropped) {
                    p.kind = String::new();
                }
                p
            }),
            pack_id: req.pack_id.clone(),
            verb_key: req.verb_key.clone(),
            binding: binding.filter(|_| !self.broken(Mutant::AuditWithoutBinding)),
            outcome: outcome.into(),
            error,
        };
        rules::trim_audit(self.knobs.mutant, &mut rec, self.packs.get(&req.pack_id));
        self.audit.push(rec);
    }

    fn verb_availability(&self, pack: &Pack, verb_key: &str) -> Option<VerbAvailability> {
        let policy = pack.policy.verbs.get(verb_key)?;
        let activated = self.activated.contains(pack.pack_id());
        let connected = !pack.needs_binding() || self.bindings.contains_key(pack.pack_id());
        // public-connect-flag: a public pack is connected once connect was called; it needs no
        // Binding, so an exec does not wait for it.
        let public_unconnected = self.chose(Variant::PublicConnectFlag)
            && !pack.needs_binding()
            && !self.public_connected.contains(pack.pack_id());
        let mut reasons: BTreeMap<String, String> = BTreeMap::new();
        if !activated {
            reasons.insert(
                "activated".into(),
                format!("pack {} is not activated", pack.pack_id()),
            );
        }
        if !connected {
            reasons.insert(
                "connected".into(),
                format!("pack {} is not connected", pack.pack_id()),
            );
        }
        // Executable: would an exec pass every check that does not depend on its args?
        let req = ExecRequest {
            pack_id: pack.pack_id().into(),
            verb_key: verb_key.into(),
            args: Map::new(),
        };
        let mint_in_exec = self.chose(Variant::MintInExec);
        let mut blocking = reasons
            .iter()
            .find(|(flag, _)| !(mint_in_exec && flag.as_str() == "connected"))
            .map(|(_, r)| r.clone());
        if mint_in_exec && blocking.is_none() && !connected {
            // The exec would mint: a mothership Binding needs the elevation grant first.
            blocking = self.elevation_denial(pack);
        }
        if public_unconnected {
            reasons.insert(
                "connected".into(),
                format!("public pack {} has not been connected", pack.pack_id()),
            );
        }
        let blocked = if let Some(r) = blocking {
            Some(r)
        } else if let Err(e) = authz::authorize_exec(
            self.subject(),
            pack,
            &req,
            review::availability_mutant(self.knobs.mutant),
        ) {
            Some(e.0)
        } else {
            match self.plan_adapter(pack, &req) {
                Err(e)
                    if !e.starts_with("invalid args")
                        && !self.broken(Mutant::AvailabilityIgnoresAllowList) =>
                {
                    Some(e)
                }
                _ => None,
            }
        };
        if let Some(why) = &blocked {
            reasons.insert("executable".into(), why.clone());
        }
        let mut reasons: BTreeMap<String, String> = reasons
            .into_iter()
            .map(|(k, v)| (k, self.words(v)))
            .collect();
        let optimistic = self.broken(Mutant::AvailabilityOptimistic);
        if self.broken(Mutant::AvailabilityWithoutReason) || optimistic {
            reasons.clear();
        }
        let stale_activated = self.broken(Mutant::ActivatedFlagStale);
        if stale_activated {
            reasons.insert("activated".into(), "not activated".into());
        }
        let stale_connected = self.broken(Mutant::ConnectedFlagStale) && pack.needs_binding();
        if stale_connected {
            reasons.insert("connected".into(), "not connected".into());
        }
        let shape_wrong = self.broken(Mutant::AvailabilityShapeWrong);
        Some(VerbAvailability {
            verb_key: verb_key.into(),
            operation: if shape_wrong {
                Operation::Read
            } else {
                policy.operation
            },
            land: if shape_wrong {
                pack::Land::Local
            } else {
                policy.privacy.land
            },
            installed: true,
            activated: (activated || optimistic) && !stale_activated,
            connected: ((connected && !public_unconnected) || optimistic) && !stale_connected,
            executable: blocked.is_none() || optimistic,
            reasons,
        })
    }
}

/// mint-in-exec: a Binding for this exec, minted through the hub unless elevation is denied;
/// none for a pack that needs none.
fn mint_in_exec(
    hub: &mut Hub,
    elevation: Option<String>,
    pack: &Pack,
    req: &ExecRequest,
    principal_id: &str,
) -> Result<Option<Minted>, String> {
    let decl = pack
        .surface
        .binding
        .as_ref()
        .filter(|_| pack.needs_binding());
    match (elevation, decl) {
        (Some(e), _) => Err(e),
        (None, None) => Ok(None),
        (None, Some(decl)) => hub
            .mint(&req.pack_id, &decl.hub, principal_id)
            .map(Some)
            .map_err(|e| format!("denied: mint failed: {e}")),
    }
}

/// The required-arg-unchecked mutant: every declared or templated arg that is missing is "".
fn with_blank_args(pack: &Pack, verb_key: &str, args: &Map<String, Value>) -> Map<String, Value> {
    let mut out = args.clone();
    let declared = pack
        .command(verb_key)
        .into_iter()
        .flat_map(|c| c.args.keys().cloned());
    let templated = pack
        .surface
        .wrap
        .commands
        .get(verb_key)
        .into_iter()
        .flat_map(|w| w.argv.iter())
        .flat_map(|t| {
            t.split('{')
                .skip(1)
                .filter_map(|x| x.split_once('}').map(|(name, _)| name.to_string()))
                .collect::<Vec<_>>()
        });
    for name in declared.chain(templated) {
        out.entry(name).or_insert(Value::String(String::new()));
    }
    out
}

/// Denials start with the words the contract's examples use; anything else is an error.
fn is_denial(e: &str) -> bool {
    e.starts_with("denied")
        || e.starts_with("confirm required")
        || e.starts_with("unknown")
        || e.starts_with("invalid args")
}

/// The pipeline in the reference's own words; `Runtime` below puts them in a variant's.
impl Reference {
    fn list_packs_inner(&self) -> Vec<Value> {
        self.packs
            .values()
            .map(|p| {
                let mut v = serde_json::to_value(&p.surface).unwrap_or_default();
                v["activated"] = Value::Bool(self.activated.contains(p.pack_id()));
                v
            })
            .collect()
    }

    fn activate_inner(&mut self, pack_ids: &[String]) -> Vec<PackResult> {
        pack_ids
            .iter()
            .map(|id| {
                if !self.packs.contains_key(id) {
                    PackResult::deny(id, format!("unknown pack {id}"))
                } else if !self.may_activate(id) {
                    PackResult::deny(id, format!("denied: no grant for pack {id}"))
                } else if self.broken(Mutant::LintAtActivate) && review::has_issues(&self.packs[id])
                {
                    PackResult::deny(id, format!("denied: pack {id} has lint issues"))
                } else {
                    self.activated.insert(id.clone());
                    if self.broken(Mutant::ActivationSpreads) {
                        self.activated.extend(self.packs.keys().cloned());
                    }
                    PackResult::ok(id)
                }
            })
            .collect()
    }

    fn connect_inner(&mut self, pack_id: &str) -> PackResult {
        let Some(pack) = self.packs.get(pack_id) else {
            return PackResult::deny(pack_id, format!("unknown pack {pack_id}"));
        };
        if !self.activated.contains(pack_id) {
            return PackResult::deny(pack_id, format!("denied: pack {pack_id} is not activated"));
        }
        let s = self.subject();
        if !pack.needs_binding()
            && freedom::public_connect_needs_grant(self.knobs.freedom)
            && !authz::holds(s, authz::CONNECT, pack_id, None, self.knobs.mutant)
        {
            return PackResult::deny(
                pack_id,
                format!("denied: missing pack.connect for {pack_id}"),
            );
        }
        let Some(decl) = pack
            .surface
            .binding
            .clone()
            .filter(|_| pack.needs_binding())
        else {
            if self.chose(Variant::PublicConnectFlag) || self.broken(Mutant::PublicNeedsConnect) {
                self.public_connected.insert(pack_id.to_string());
            }
            return PackResult::ok(pack_id); // public packs skip the mint
        };
        let s = self.subject();
        let exec_grant_connects = self.broken(Mutant::ExecGrantAllowsConnect)
            && [authz::EXEC_READ, authz::EXEC_WRITE]
                .iter()
                .any(|c| authz::holds(s, c, pack_id, None, self.knobs.mutant));
        let elevated = authz::holds(s, authz::ELEVATE, pack_id, None, self.knobs.mutant);
        if !authz::holds(s, authz::CONNECT, pack_id, None, self.knobs.mutant)
            && !self.broken(Mutant::ConnectWithoutGrant)
            && !exec_grant_connects
            && !rules::connect_grant_skipped(self.knobs.mutant, decl.mode, elevated)
        {
            return PackResult::deny(
                pack_id,
                format!("denied: missing pack.connect for {pack_id}"),
            );
        }
        if let Some(e) = self
            .elevation_denial(pack)
            .filter(|_| !self.broken(Mutant::MothershipWithoutElevation))
        {
            return PackResult::deny(pack_id, e);
        }
        if self.broken(Mutant::LocalBindingUnminted) && decl.mode == BindingMode::Local {
            return PackResult::ok(pack_id);
        }
        let mut decl = decl;
        if self.broken(Mutant::BindingHubRenamed) {
            decl.hub = "runtime-hub".into();
        }
        let minted = match self.hub.mint(pack_id, &decl.hub, &self.config.principal.id) {
            Ok(m) => m,
            Err(_) if self.broken(Mutant::MintFailOpen) => Minted {
                token: String::new(),
                identity: String::new(),
            },
            Err(e) => match self
                .config
                .environment
                .iter()
                .find(|(k, _)| review::fallback_var(self.knobs.mutant, k))
            {
                Some((k, v))
                    if self.broken(Mutant::EnvTokenFallback)
                        || self.broken(Mutant::EnvKeyFallback) =>
                {
                    Minted {
                        token: v.clone(),
                        identity: format!("env:{k}"),
                    }
                }
                _ => return PackResult::deny(pack_id, format!("denied: mint failed: {e}")),
            },
        };
        let info = BindingInfo {
            mode: decl.mode,
            hub: decl.hub.clone(),
            identity: if self.broken(Mutant::TokenInConnect) {
                minted.token.clone()
            } else {
                minted.identity.clone()
            },
        };
        self.bindings.insert(pack_id.to_string(), minted);
        PackResult {
            binding: Some(info),
            ..PackResult::ok(pack_id)
        }
    }

    fn exec_envelope(&mut self, req: &ExecRequest) -> Envelope {
        let (operation, binding, result) = self.exec_inner(req);
        if operation == Some(Operation::Write) {
            self.record(req, binding, &result);
        }
        Envelope::of(req, result)
    }

    fn availability_inner(&self, pack_id: &str) -> PackAvailability {
        let Some(pack) = self.packs.get(pack_id) else {
            let mut report = PackAvailability::not_installed(pack_id);
            if self.broken(Mutant::AvailabilityWithoutReason) {
                report.reasons.clear();
            }
            return report;
        };
        let verbs = pack
            .surface
            .commands
            .iter()
            .filter_map(|c| self.verb_availability(pack, &c.verb_key))
            .collect();
        PackAvailability {
            pack_id: pack_id.into(),
            installed: true,
            reasons: BTreeMap::new(),
            verbs,
        }
    }

    fn sense_inner(&mut self, event: &SenseEvent) -> SenseReceipt {
        let refuse = |r: String| SenseReceipt {
            accepted: false,
            reason: Some(r),
        };
        // sense-after-connect: a Binding pack's events wait for its Binding, before any other
        // check, so that a case must connect for every other rule to be what drops an event.
        if self.chose(Variant::SenseAfterConnect)
            && self
                .packs
                .get(&event.pack_id)
                .is_some_and(|p| p.needs_binding() && !self.bindings.contains_key(p.pack_id()))
        {
            return refuse(format!("dropped: pack {} is not connected", event.pack_id));
        }
        let enabled = if self.chose(Variant::SenseOnAfterActivation) {
            self.config.sense.enable != Some(false)
        } else {
            self.config.sense.enable == Some(true)
        };
        // sense-while-disabled-after-connect: an explicit `false` is read as on.
        let enabled = enabled
            || (self.broken(Mutant::SenseWhileDisabledAfterConnect)
                && self.config.sense.enable == Some(false));
        if !enabled && !self.broken(Mutant::SenseWhileDisabled) {
            return refuse("dropped: sense.enable is off".into());
        }
        if self.chose(Variant::SenseOnAfterActivation) && !self.activated.contains(&event.pack_id) {
            return refuse(format!("dropped: pack {} is not activated", event.pack_id));
        }
        let Some(pack) = self.packs.get(&event.pack_id) else {
            return refuse(format!("dropped: unknown pack {}", event.pack_id));
        };
        let declared = pack
            .surface
            .sense
            .as_ref()
            .is_some_and(|s| s.triggers.contains(&event.trigger))
            && pack.policy.triggers.contains_key(&event.trigger);
        let declared = declared
            || rules::trigger_loosely_declared(
                self.knobs.mutant,
                &self.packs,
                pack,
                &event.trigger,
            );
        if (!declared && !self.broken(Mutant::UndeclaredTriggerDelivered))
            || self.broken(Mutant::DeclaredTriggerDropped)
        {
            return refuse(format!("dropped: undeclared trigger {}", event.trigger));
        }
        if !self.broken(Mutant::SenseSinkUnrecorded) {
            self.sink.push(event.clone());
        }
        SenseReceipt {
            accepted: true,
            reason: None,
        }
    }
}

impl Runtime for Reference {
    fn list_packs(&self) -> Vec<Value> {
        if self.broken(Mutant::ListPacksEmpty) {
            return vec![];
        }
        let mut packs = self.list_packs_inner();
        self.dress_list(&mut packs);
        packs
    }

    fn get_pack(&self, pack_id: &str) -> Option<Value> {
        let packs = self.list_packs();
        if self.broken(Mutant::GetPackFirstInstalled) && self.packs.contains_key(pack_id) {
            return packs.into_iter().next();
        }
        packs
            .into_iter()
            .find(|p| p.get("pack_id").and_then(Value::as_str) == Some(pack_id))
            .or_else(|| review::empty_pack(self.knobs.mutant))
    }

    fn skill(&self, pack_id: &str) -> Option<String> {
        let pack = self.skill_source(self.packs.get(pack_id)?);
        if self.broken(Mutant::SkillNotExposed) {
            // Loaded (and linted), but the harness is shown a Skill of the runtime's own making.
            let name = pack.surface.name.as_deref().unwrap_or(pack_id);
            return Some(format!("# {name}\n"));
        }
        Some(pack.skill.clone().unwrap_or_default())
    }

    fn cli(&mut self, req: &CliRequest) -> Option<Envelope> {
        if self.broken(Mutant::CliFaceUnimplemented) {
            return Some(Envelope {
                ok: false,
                pack_id: String::new(),
                verb_key: String::new(),
                result: None,
                error: Some("the CLI face is not implemented".into()),
            });
        }
        let found = self.packs.values().find_map(|p| {
            let cmds = &p.surface.commands;
            let i = cmds
                .iter()
                .position(|c| c.command.as_deref() == Some(req.command.as_str()))?;
            let i = if self.broken(Mutant::CliRunsAnotherCommand) {
                (i + 1) % cmds.len()
            } else {
                i
            };
            Some((p.pack_id().to_string(), cmds[i].verb_key.clone()))
        });
        let envelope = match found {
            Some((pack_id, verb_key)) if self.broken(Mutant::CliSkipsPipeline) => {
                self.adapter_only(pack_id, verb_key, req)
            }
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
                error: Some(self.words(format!("unknown command {}", req.command))),
            },
        };
        Some(review::bare(self.knobs.mutant, envelope))
    }

    fn activate(&mut self, pack_ids: &[String]) -> Vec<PackResult> {
        let results = self.activate_inner(pack_ids);
        for r in results.iter().filter(|r| r.ok) {
            additions::on_activated(self.knobs.mutant, &mut self.config, &r.pack_id);
        }
        let polls = self.broken(Mutant::PollingOnATimer) || self.broken(Mutant::PollingOnActivate);
        if polls && results.iter().any(|r| r.ok) {
            self.polling_since
                .get_or_insert_with(std::time::Instant::now);
        }
        if self.broken(Mutant::PackRewritten) {
            for dir in &self.config.pack_dirs {
                let _ = std::fs::write(dir.join(".hcp-state"), "activated\n");
            }
        }
        results
            .into_iter()
            .map(|r| PackResult {
                error: r.error.map(|e| self.words(e)),
                ..r
            })
            .map(|r| review::reasonless(self.knobs.mutant, Mutant::ActivationDenialReasonless, r))
            .collect()
    }

    fn connect(&mut self, pack_id: &str) -> PackResult {
        let r = self.connect_inner(pack_id);
        let r = PackResult {
            error: r.error.map(|e| self.words(e)),
            ..r
        };
        review::reasonless(self.knobs.mutant, Mutant::ConnectDenialReasonless, r)
            .with_mode(self.knobs.mutant)
    }

    fn exec_or_throw(&mut self, req: &ExecRequest) -> Result<Envelope, String> {
        let envelope = self.exec(req);
        if (self.broken(Mutant::DenialThrown) || self.unknown_thrown(req)) && !envelope.ok {
            return Err(envelope.error.unwrap_or_default());
        }
        Ok(envelope)
    }

    fn exec(&mut self, req: &ExecRequest) -> Envelope {
        if self.broken(Mutant::ExecUnimplemented) {
            return Envelope::deny(req, "exec is not implemented");
        }
        let mut envelope = self.exec_envelope(req);
        if self.broken(Mutant::EnvelopeWithoutIds)
            || (self.broken(Mutant::UnknownPackBareDenial)
                && !self.packs.contains_key(&req.pack_id))
        {
            envelope.pack_id = String::new();
            envelope.verb_key = String::new();
        }
        let installed = self.packs.contains_key(&req.pack_id);
        review::dress_envelope(self.knobs.mutant, installed, &mut envelope);
        if self.broken(Mutant::DenialFlaggedOk) && !envelope.ok {
            envelope.ok = true;
        }
        if self.broken(Mutant::ReasonlessDenial) && !envelope.ok {
            envelope.error = None;
        }
        if self.broken(Mutant::PollingAsSense) {
            let triggers = self
                .packs
                .get(&req.pack_id)
                .and_then(|p| p.surface.sense.as_ref())
                .and_then(|s| s.triggers.first().cloned());
            if let Some(trigger) = triggers {
                self.sink.push(SenseEvent {
                    pack_id: req.pack_id.clone(),
                    trigger,
                    payload: serde_json::json!({ "polled": true }),
                });
            }
        }
        if self.chose(Variant::Dialect) {
            envelope.error = envelope.error.map(|e| self.words(e));
            envelope.result = envelope
                .result
                .map(|r| serde_json::json!({ "output": r, "runtime": "dialect" }));
        }
        envelope
    }

    fn set_sense(&mut self, sense: &SenseConfig) -> Option<()> {
        if !self.broken(Mutant::SenseEnableCached) {
            self.config.sense = sense.clone();
        }
        Some(())
    }

    fn grants(&self) -> Option<Vec<Grant>> {
        // What it enforces, so a mutant that takes grants from elsewhere shows them too.
        Some(self.subject().grants.to_vec())
    }

    fn availability(&self, pack_id: &str) -> PackAvailability {
        let mut report = self.availability_inner(pack_id);
        review::drop_reasons(self.knobs.mutant, &mut report);
        report.reasons = std::mem::take(&mut report.reasons)
            .into_iter()
            .map(|(k, v)| (k, self.words(v)))
            .collect();
        report
    }

    fn sense(&mut self, event: &SenseEvent) -> SenseReceipt {
        let r = self.sense_inner(event);
        if r.accepted && self.broken(Mutant::SenseAudited) {
            self.audit.push(AuditRecord {
                tenant_id: self.config.tenant_id.clone(),
                project_id: self.config.project_id.clone(),
                principal: Some(self.config.principal.clone()),
                pack_id: event.pack_id.clone(),
                verb_key: event.trigger.clone(),
                binding: None,
                outcome: "ok".into(),
                error: None,
            });
        }
        SenseReceipt {
            reason: r.reason.map(|e| self.words(e)),
            ..r
        }
    }

    fn sense_sink(&self) -> Vec<SenseEvent> {
        let mut sink = self.sink.clone();
        // polling-on-a-timer: one event per 5 ms tick since the poller started, for every
        // activated pack that declares triggers, as if a background poller had recorded them.
        if let Some(since) = self.polling_since {
            let ticks = rules::poll_ticks(self.knobs.mutant, since);
            for id in &self.activated {
                let trigger = self
                    .packs
                    .get(id)
                    .and_then(|p| p.surface.sense.as_ref())
                    .and_then(|s| s.triggers.first().cloned());
                if let Some(trigger) = trigger.filter(|_| self.config.sense.enable == Some(true)) {
                    for tick in 0..ticks.min(100) {
                        sink.push(SenseEvent {
                            pack_id: id.clone(),
                            trigger: trigger.clone(),
                            payload: serde_json::json!({ "polled": true, "tick": tick as u64 }),
                        });
                    }
                }
            }
        }
        sink
    }

    fn audit(&self) -> Vec<AuditRecord> {
        self.audit.clone()
    }
}
