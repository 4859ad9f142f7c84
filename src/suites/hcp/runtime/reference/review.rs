//! Issue 44, review: mutants that break a covered sentence a second way (the way another runtime
//! would), applied to what the reference answers, so the pipeline in `mod.rs` stays as it is.

use super::super::mutant::Mutant;
use super::super::{
    CliRequest, Envelope, ExecRequest, PackAvailability, PackResult, VerbAvailability,
};
use super::hub::Minted;
use super::{any_hcp_version, lint_without, Reference};
use crate::suites::hcp::pack::{self, BindingMode, Issue, Pack, PackFiles};
use serde_json::Value;
use std::collections::BTreeMap;

/// denial-envelope-without-ids, result-dropped: the exec envelope as such a runtime shapes it.
/// `installed`: whether the exec's pack is installed (an unknown pack is another mutant's).
pub fn dress_envelope(m: Option<Mutant>, installed: bool, e: &mut Envelope) {
    match m {
        Some(Mutant::DenialEnvelopeWithoutIds) if !e.ok && installed => {
            e.pack_id = String::new();
            e.verb_key = String::new();
        }
        Some(Mutant::ResultDropped) if e.ok => e.result = None,
        _ => {}
    }
}

/// activated-, connected-, executable-false-reasonless, not-installed-reasonless: the false flag
/// keeps its value and loses its reason; the other flags keep theirs.
pub fn drop_reasons(m: Option<Mutant>, report: &mut PackAvailability) {
    let flag = match m {
        Some(Mutant::ActivatedFalseReasonless) => "activated",
        Some(Mutant::ConnectedFalseReasonless) => "connected",
        Some(Mutant::ExecutableFalseReasonless) => "executable",
        Some(Mutant::NotInstalledReasonless) => {
            report.reasons.clear();
            return;
        }
        Some(
            Mutant::ActivatedFlagEager
            | Mutant::ConnectedFlagEager
            | Mutant::AvailabilityLandLocal
            | Mutant::AvailabilityOperationRead,
        ) => {
            for v in &mut report.verbs {
                misreport(m, v);
            }
            return;
        }
        Some(Mutant::AvailabilityPerPack) => {
            let Some(first) = report.verbs.first().cloned() else {
                return;
            };
            for v in &mut report.verbs {
                v.executable = first.executable;
                v.reasons.remove("executable");
                if let Some(r) = first.reasons.get("executable") {
                    v.reasons.insert("executable".into(), r.clone());
                }
            }
            return;
        }
        _ => return,
    };
    for v in &mut report.verbs {
        v.reasons.remove(flag);
    }
}

/// The mutant availability's own check of the grants stands for: the scope or the land left out
/// of the report while exec keeps them.
pub fn availability_mutant(m: Option<Mutant>) -> Option<Mutant> {
    match m {
        Some(Mutant::AvailabilityIgnoresGrantScope) => Some(Mutant::GrantScopeIgnored),
        Some(Mutant::AvailabilityIgnoresLand) => Some(Mutant::BrainWithoutProject),
        other => other,
    }
}

/// activation-denial-reasonless, connect-denial-reasonless: the denial keeps ok: false, no text.
pub fn reasonless(m: Option<Mutant>, which: Mutant, mut r: PackResult) -> PackResult {
    if m == Some(which) && !r.ok {
        r.error = None;
    }
    r
}

impl Reference {
    /// skill-of-first-pack: whose HARNESS.md the harness is shown for `pack`.
    pub(super) fn skill_source<'a>(&'a self, pack: &'a Pack) -> &'a Pack {
        match self.knobs.mutant {
            Some(Mutant::SkillOfFirstPack) => self.packs.values().next().unwrap_or(pack),
            _ => pack,
        }
    }

    /// cli-skips-pipeline: the CLI face straight to the adapter, as a CLI twin written apart from
    /// the JSON face would run it (the Binding is passed when there is one).
    pub(super) fn adapter_only(
        &self,
        pack_id: String,
        verb_key: String,
        cli: &CliRequest,
    ) -> Envelope {
        let req = ExecRequest {
            pack_id,
            verb_key,
            args: cli.args.clone(),
        };
        let pack = &self.packs[&req.pack_id];
        let outcome = self.run_adapter(pack, &req, self.bindings.get(&req.pack_id));
        Envelope::of(&req, outcome)
    }
}

/// env-denylist-scrub: the runtime's environment minus the names that look like credentials, as a
/// deny-list sandbox passes it (a credential under another name, a URL with a password, gets out).
pub fn denylist_env(
    m: Option<Mutant>,
    environment: &BTreeMap<String, String>,
    env: &mut BTreeMap<String, String>,
) {
    if m != Some(Mutant::EnvDenylistScrub) {
        return;
    }
    const LOOKS_SECRET: [&str; 6] = ["TOKEN", "SECRET", "KEY", "PASSWORD", "CREDENTIAL", "AUTH"];
    for (k, v) in environment {
        if !LOOKS_SECRET.iter().any(|s| k.to_uppercase().contains(s)) {
            env.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// The variable env-token-fallback (a *_TOKEN) or env-key-fallback (a *_KEY or *_SECRET) would
/// mint from when the hub fails.
pub fn fallback_var(m: Option<Mutant>, name: &str) -> bool {
    if m == Some(Mutant::EnvKeyFallback) {
        name.ends_with("_KEY") || name.ends_with("_SECRET")
    } else {
        name.ends_with("_TOKEN")
    }
}

/// cli-envelope-bare: the CLI face's answer without the ids.
pub fn bare(m: Option<Mutant>, mut e: Envelope) -> Envelope {
    if m == Some(Mutant::CliEnvelopeBare) {
        e.pack_id = String::new();
        e.verb_key = String::new();
    }
    e
}

/// The lint mutants of this block whose way applies to these files.
pub fn lints_its_own_way(m: Mutant, files: &PackFiles) -> bool {
    match m {
        Mutant::TriggerCoverageUnlinted
        | Mutant::CommandCoverageUnlinted
        | Mutant::SkillBlankAccepted
        | Mutant::SkillMissingAccepted
        | Mutant::LintAtActivate => true,
        // pass-through-member-enough: `pass_through: false` is a member all the same.
        Mutant::PassThroughMemberEnough => files
            .surface
            .as_deref()
            .and_then(|b| serde_json::from_slice::<Value>(b).ok())
            .is_some_and(|v| v["wrap"].get("pass_through").is_some()),
        _ => false,
    }
}

/// Install as that lint mutant does: the lint without the rule it misses.
pub fn install(m: Mutant, files: &PackFiles) -> Result<Pack, Vec<Issue>> {
    let lint: fn(&Pack) -> Vec<Issue> = match m {
        Mutant::TriggerCoverageUnlinted => |p| lint_without(p, &["policy-covers-trigger"]),
        Mutant::CommandCoverageUnlinted => |p| lint_without(p, &["policy-covers-command"]),
        Mutant::PassThroughMemberEnough => |p| lint_without(p, &["wrap-named-or-pass-through"]),
        // skill-blank-accepted: a Skill counts as present when the file is there.
        Mutant::SkillBlankAccepted => |p| {
            let blank_ok: &[&str] = if p.skill.is_some() {
                &["skill-present"]
            } else {
                &[]
            };
            lint_without(p, blank_ok)
        },
        // skill-missing-accepted: the text is linted only when there is a file.
        Mutant::SkillMissingAccepted => |p| {
            let missing_ok: &[&str] = if p.skill.is_none() {
                &["skill-present"]
            } else {
                &[]
            };
            lint_without(p, missing_ok)
        },
        _ => return pack::load_files(files),
    };
    pack::install_with(files, lint)
}

/// lint-at-activate: what activation refuses when install did not lint.
pub fn has_issues(p: &Pack) -> bool {
    !pack::lint(p).is_empty()
}

/// pack-rewritten-on-install: a cache file written into every pack directory at create.
pub fn cache_in_packs(m: Option<Mutant>, dirs: &[std::path::PathBuf]) {
    if m == Some(Mutant::PackRewrittenOnInstall) {
        for dir in dirs {
            let _ = std::fs::write(dir.join(".hcp-cache.json"), "{\"installed\":true}\n");
        }
    }
}

/// identity-as-binding: what of the Binding reaches the adapter.
pub fn token_of(m: Option<Mutant>, b: &Minted) -> &str {
    if m == Some(Mutant::IdentityAsBinding) {
        &b.identity
    } else {
        &b.token
    }
}

/// get-pack-unknown-empty: getPack's answer for a pack that is not installed.
pub fn empty_pack(m: Option<Mutant>) -> Option<Value> {
    (m == Some(Mutant::GetPackUnknownEmpty)).then(|| serde_json::json!({}))
}

impl Reference {
    /// binding-leaks-across-packs: a pack without a Binding gets a connected pack's token.
    pub(super) fn leak_or_keep<'a>(
        &'a self,
        pack: &Pack,
        token: Option<&'a str>,
    ) -> Option<&'a str> {
        match self.knobs.mutant {
            Some(Mutant::BindingLeaksAcrossPacks) if token.is_none() && !pack.needs_binding() => {
                self.bindings.values().next().map(|b| b.token.as_str())
            }
            _ => token,
        }
    }

    /// unknown-pack-thrown: an exec of a pack that is not installed throws.
    /// unknown-verb-thrown: an exec of a verb its installed pack does not declare throws.
    pub(super) fn unknown_thrown(&self, req: &ExecRequest) -> bool {
        let pack = self.packs.get(&req.pack_id);
        match self.knobs.mutant {
            Some(Mutant::UnknownPackThrown) => pack.is_none(),
            Some(Mutant::UnknownVerbThrown) => {
                pack.is_some_and(|p| p.command(&req.verb_key).is_none())
            }
            _ => false,
        }
    }

    /// audit-confirmed-writes-only, audit-bound-writes-only: the writes such a runtime leaves
    /// out of its audit.
    pub(super) fn audit_skipped(&self, req: &ExecRequest) -> bool {
        let Some(pack) = self.packs.get(&req.pack_id) else {
            return false;
        };
        match self.knobs.mutant {
            Some(Mutant::AuditConfirmedWritesOnly) => !pack
                .policy
                .verbs
                .get(&req.verb_key)
                .is_some_and(|row| row.confirm),
            Some(Mutant::AuditBoundWritesOnly) => !pack.needs_binding(),
            _ => false,
        }
    }

    /// policy-by-verb-key: the row the confirm gate reads, from a catalog keyed by verb_key.
    pub(super) fn row_for<'a>(
        &'a self,
        req: &ExecRequest,
        own: &'a pack::VerbPolicy,
    ) -> &'a pack::VerbPolicy {
        if self.knobs.mutant != Some(Mutant::PolicyByVerbKey) {
            return own;
        }
        self.packs
            .values()
            .find_map(|p| p.policy.verbs.get(&req.verb_key))
            .unwrap_or(own)
    }

    /// agent-skips-confirm: the confirm gate as that runtime runs it for this Principal.
    /// confirm-gate-named-only: nor for a verb a pass_through bin runs.
    pub(super) fn gate_mutant(&self, pack: &Pack, req: &ExecRequest) -> Option<Mutant> {
        let passed_through = pack.surface.wrap.pass_through
            && !pack.surface.wrap.commands.contains_key(&req.verb_key);
        match self.knobs.mutant {
            Some(Mutant::AgentSkipsConfirm) if self.config.principal.kind == "agent" => {
                Some(Mutant::NoConfirmGate)
            }
            Some(Mutant::ConfirmGateNamedOnly) if passed_through => Some(Mutant::NoConfirmGate),
            m => m,
        }
    }

    /// list-packs-activated-only, token-in-list-packs: listPacks as those runtimes answer it.
    pub(super) fn dress_list(&self, packs: &mut Vec<Value>) {
        match self.knobs.mutant {
            Some(Mutant::ListPacksActivatedOnly) => packs.retain(|p| p["activated"] == true),
            Some(Mutant::TokenInListPacks) => {
                for p in packs.iter_mut() {
                    let id = p["pack_id"].as_str().unwrap_or_default().to_string();
                    if let Some(b) = self.bindings.get(&id) {
                        p["binding"]["token"] = Value::String(b.token.clone());
                    }
                }
            }
            _ => {}
        }
    }
}

/// template-rescanned: every placeholder replaced again over the rendered argv, one arg after
/// another (a naive `replace` loop), so an arg whose text is `{other}` becomes other's value.
pub fn rescan(m: Option<Mutant>, argv: &mut [String], args: &serde_json::Map<String, Value>) {
    if m != Some(Mutant::TemplateRescanned) {
        return;
    }
    for el in argv.iter_mut() {
        for (k, v) in args {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            *el = el.replace(&format!("{{{k}}}"), &text);
        }
    }
}

/// activated-flag-eager, connected-flag-eager, availability-land-local,
/// availability-operation-read: one member of a command's availability reported wrong.
fn misreport(m: Option<Mutant>, v: &mut VerbAvailability) {
    match m {
        Some(Mutant::ActivatedFlagEager) => {
            v.activated = true;
            v.reasons.remove("activated");
        }
        Some(Mutant::ConnectedFlagEager) => {
            v.connected = true;
            v.reasons.remove("connected");
        }
        Some(Mutant::AvailabilityLandLocal) => v.land = pack::Land::Local,
        Some(Mutant::AvailabilityOperationRead) => v.operation = pack::Operation::Read,
        _ => {}
    }
}

/// allow-list-prefix: a bin admitted when its name starts with an allow-listed name.
pub fn prefix_listed(m: Option<Mutant>, allow: &[String], bin: &str) -> bool {
    m == Some(Mutant::AllowListPrefix) && allow.iter().any(|a| bin.starts_with(a.as_str()))
}

/// cwd-in-pack-dir: the adapter's working directory is its pack's directory.
pub fn pack_dir_cwd(m: Option<Mutant>, dirs: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    dirs.first()
        .filter(|_| m == Some(Mutant::CwdInPackDir))
        .cloned()
}

impl PackResult {
    /// binding-mode-misreported: connect says user whatever mode it minted.
    pub(super) fn with_mode(mut self, m: Option<Mutant>) -> PackResult {
        if m == Some(Mutant::BindingModeMisreported) {
            if let Some(b) = &mut self.binding {
                b.mode = BindingMode::User;
            }
        }
        self
    }
}

/// json5-accepted, hcp-major-prefix: the pack files as those runtimes read them.
pub fn reread(m: Option<Mutant>, mut files: PackFiles) -> PackFiles {
    match m {
        Some(Mutant::Json5Accepted) => {
            files.surface = files.surface.map(|b| lenient(&b));
            files.policy = files.policy.map(|b| lenient(&b));
            files
        }
        Some(Mutant::HcpMajorPrefix) if hcp_of(&files).is_some_and(|v| v.starts_with('1')) => {
            any_hcp_version(files)
        }
        _ => files,
    }
}

/// hcp-minor-refused: a surface.json whose hcp is not exactly 1.0 is an issue.
pub fn overstrict(m: Option<Mutant>, files: &PackFiles) -> Option<Issue> {
    let v = hcp_of(files)?;
    (m == Some(Mutant::HcpMinorRefused) && v != "1.0").then(|| {
        Issue::new(
            "surface.json",
            "/hcp",
            "schema",
            format!("unsupported hcp {v}"),
        )
    })
}

fn hcp_of(files: &PackFiles) -> Option<String> {
    let v: Value = serde_json::from_slice(files.surface.as_deref()?).ok()?;
    v["hcp"].as_str().map(String::from)
}

/// JSON5-ish text made JSON: comments dropped, single-quoted strings double-quoted, trailing
/// commas dropped.
fn lenient(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            (Some(q), c) if c == q => {
                out.push('"');
                quote = None;
            }
            (Some('\''), '"') => out.push_str("\\\""),
            (Some(_), c) => out.push(c),
            (None, '"' | '\'') => {
                out.push('"');
                quote = Some(c);
            }
            (None, '/') if chars.peek() == Some(&'/') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            (None, c) => out.push(c),
        }
    }
    let trailing = regex::Regex::new(r",(\s*[}\]])").expect("static regex");
    trailing.replace_all(&out, "$1").into_owned().into_bytes()
}
