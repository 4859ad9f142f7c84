//! Issue 44, review: mutants that break a covered sentence a second way (the way another runtime
//! would), applied to what the reference answers, so the pipeline in `mod.rs` stays as it is.

use super::super::mutant::Mutant;
use super::super::{CliRequest, Envelope, ExecRequest, PackAvailability, PackResult};
use super::{lint_without, Reference};
use crate::suites::hcp::pack::{self, Issue, Pack};
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
        match self.run_adapter(pack, &req, self.bindings.get(&req.pack_id)) {
            Ok(r) => Envelope {
                ok: true,
                pack_id: req.pack_id.clone(),
                verb_key: req.verb_key.clone(),
                result: Some(r),
                error: None,
            },
            Err(e) => Envelope::deny(&req, e),
        }
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

/// trigger-coverage-unlinted: the lint without the rule that Policy covers every trigger.
pub fn lint_1(p: &Pack) -> Vec<Issue> {
    lint_without(p, &["policy-covers-trigger"])
}

/// skill-blank-accepted: a Skill counts as present when the file is there, whatever it holds.
pub fn lint_2(p: &Pack) -> Vec<Issue> {
    let blank_ok: &[&str] = if p.skill.is_some() {
        &["skill-present"]
    } else {
        &[]
    };
    lint_without(p, blank_ok)
}

/// lint-at-activate: what activation refuses when install did not lint.
pub fn has_issues(p: &Pack) -> bool {
    !pack::lint(p).is_empty()
}
