//! Issue 44, rules: mutants that each break one rule the way a stranger's runtime would, where
//! the ledger's older killer broke it only one way. The pack files' load (contract row 1) and
//! schemas ("The three files and their schemas"): a default for a missing field, a coercion, an
//! unknown member ignored, a file read the wrong way. The audit's attribution tuple (row 8) on
//! one land or Binding mode only. The pack.connect check under one Binding mode only.

use super::super::mutant::Mutant;
use super::super::AuditRecord;
use crate::suites::hcp::pack::{BindingMode, Issue, Land, Pack, PackFiles};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The surface.json members of HCP/1.x (surface.schema.json); unknown-member-ignored drops the rest.
const SURFACE_MEMBERS: [&str; 9] = [
    "hcp", "pack_id", "name", "version", "public", "binding", "commands", "wrap", "sense",
];

/// Loosen a pack's files before the reference's own load, as the mutant's loader would.
pub fn loosen(m: Option<Mutant>, mut files: PackFiles) -> PackFiles {
    let Some(m) = m else { return files };
    let dir_name = std::path::Path::new(&files.label)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    edit(&mut files.surface, |s| match m {
        // The pack_id a stranger takes from where the pack lies, not from surface.json.
        Mutant::PackIdFromDirectory => {
            s.insert("pack_id".into(), Value::String(dir_name.clone()));
        }
        Mutant::PackIdOptional if !s.contains_key("pack_id") => {
            s.insert("pack_id".into(), Value::String(dir_name.clone()));
        }
        Mutant::HcpOptional if !s.contains_key("hcp") => {
            s.insert("hcp".into(), "1.0".into());
        }
        Mutant::CommandsOptional if !s.contains_key("commands") => {
            s.insert("commands".into(), Value::Array(Vec::new()));
        }
        Mutant::UnknownSurfaceMemberIgnored => {
            s.retain(|k, _| SURFACE_MEMBERS.contains(&k.as_str()));
        }
        Mutant::BindingModeUnchecked => {
            if let Some(Value::Object(b)) = s.get_mut("binding") {
                let known = ["user", "local", "mothership"];
                if !b
                    .get("mode")
                    .and_then(Value::as_str)
                    .is_some_and(|m| known.contains(&m))
                {
                    b.insert("mode".into(), "user".into());
                }
            }
        }
        _ => {}
    });
    edit(&mut files.policy, |p| {
        let Some(Value::Object(verbs)) = p.get_mut("verbs") else {
            return;
        };
        for row in verbs.values_mut() {
            if let Value::Object(row) = row {
                loosen_row(m, row);
            }
        }
    });
    files
}

/// One Policy row, as the mutant's loader reads it.
fn loosen_row(m: Mutant, row: &mut Map<String, Value>) {
    let op = row.get("operation").and_then(Value::as_str);
    match m {
        Mutant::OperationUnchecked if op.is_some_and(|o| o != "read" && o != "write") => {
            row.insert("operation".into(), "read".into());
        }
        Mutant::OperationDefaultsToRead if !row.contains_key("operation") => {
            row.insert("operation".into(), "read".into());
        }
        Mutant::ConfirmCoerced => {
            if let Some(c) = row.get("confirm").filter(|c| !c.is_boolean()) {
                let truthy = match c {
                    Value::Null => false,
                    Value::String(s) => !s.is_empty() && s != "false",
                    Value::Number(n) => n.as_f64() != Some(0.0),
                    _ => true,
                };
                row.insert("confirm".into(), Value::Bool(truthy));
            }
        }
        Mutant::LandUnchecked | Mutant::PrivacyDefaultsToLocal => {
            let privacy = row
                .entry("privacy")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(p) = privacy {
                let land = p.get("land").and_then(Value::as_str);
                let fill = match m {
                    Mutant::LandUnchecked => land.is_some_and(|l| l != "local" && l != "brain"),
                    _ => land.is_none(),
                };
                if fill {
                    p.insert("land".into(), "local".into());
                }
            }
        }
        _ => {}
    }
}

/// Apply `f` to a pack file that is one JSON object; leave any other bytes as they are.
fn edit(bytes: &mut Option<Vec<u8>>, f: impl FnOnce(&mut Map<String, Value>)) {
    let Some(b) = bytes else { return };
    if let Ok(Value::Object(mut o)) = serde_json::from_slice::<Value>(b) {
        let before = o.clone();
        f(&mut o);
        if o != before {
            *b = serde_json::to_vec(&o).unwrap_or_default();
        }
    }
}

/// harness-md-json-parsed: HARNESS.md read with the JSON parser of the other two files.
pub fn skill_parse_issue(m: Option<Mutant>, files: &PackFiles) -> Option<Issue> {
    let skill = files.skill.as_deref()?;
    (m == Some(Mutant::HarnessMdJsonParsed) && serde_json::from_slice::<Value>(skill).is_err())
        .then(|| Issue::new("HARNESS.md", "", "parse", "HARNESS.md is not JSON"))
}

/// After install: the Policy or Skill the mutant keeps is not the one its files hold.
pub fn after_install(m: Option<Mutant>, packs: &mut BTreeMap<String, Pack>) {
    for p in packs.values_mut() {
        match m {
            // Policy linted from the file, but a Policy of defaults enforced.
            Some(Mutant::PolicyJsonIgnored) => {
                for row in p.policy.verbs.values_mut() {
                    row.operation = crate::suites::hcp::pack::Operation::Read;
                    row.confirm = false;
                    row.privacy.land = Land::Local;
                }
            }
            // HARNESS.md linted (it exists, not blank) but never read: no Skill to show.
            Some(Mutant::HarnessMdUnread) => p.skill = Some(String::new()),
            Some(Mutant::HarnessMdFirstLine) => {
                if let Some(s) = &mut p.skill {
                    *s = s.lines().next().unwrap_or_default().to_string();
                }
            }
            _ => {}
        }
    }
}

/// The audit record of a write, as the mutant attributes it on one land or Binding mode.
pub fn trim_audit(m: Option<Mutant>, rec: &mut AuditRecord, pack: Option<&Pack>) {
    let Some(m) = m else { return };
    let land = pack
        .and_then(|p| p.policy.verbs.get(&rec.verb_key))
        .map(|r| r.privacy.land);
    let mode = pack.and_then(|p| {
        p.needs_binding()
            .then(|| p.surface.binding.as_ref().map(|b| b.mode))
            .flatten()
    });
    let inproc = pack.is_some_and(|p| p.surface.wrap.inproc.is_some());
    let public = pack.is_some_and(|p| !p.needs_binding());
    let scope_dropped = match m {
        Mutant::AuditWithoutTenant => {
            rec.tenant_id = None;
            false
        }
        Mutant::AuditWithoutProject => {
            rec.project_id = None;
            false
        }
        Mutant::AuditWithoutVerbKey => {
            rec.verb_key.clear();
            false
        }
        Mutant::AuditBrainScopeDropped => land == Some(Land::Brain),
        Mutant::AuditInprocScopeDropped => inproc,
        Mutant::AuditPublicScopeDropped => public,
        Mutant::AuditMothershipAsService => {
            if mode == Some(BindingMode::Mothership) {
                rec.principal = None;
            }
            mode == Some(BindingMode::Mothership)
        }
        _ => false,
    };
    if scope_dropped {
        rec.tenant_id = None;
        rec.project_id = None;
    }
}

/// Does the mutant skip the pack.connect check for a pack of this Binding mode?
pub fn connect_grant_skipped(m: Option<Mutant>, mode: BindingMode, elevated: bool) -> bool {
    match m {
        Some(Mutant::ConnectGrantUncheckedLocal) => mode == BindingMode::Local,
        Some(Mutant::ElevationAllowsConnect) => mode == BindingMode::Mothership && elevated,
        _ => false,
    }
}

/// Does the mutant take a trigger as declared that the pack does not declare (contract row 10,
/// "or deliver undeclared triggers"): one with a Policy row only, or one another pack declares?
pub fn trigger_loosely_declared(
    m: Option<Mutant>,
    packs: &BTreeMap<String, Pack>,
    pack: &Pack,
    trigger: &str,
) -> bool {
    let in_surface = |p: &Pack| {
        p.surface
            .sense
            .as_ref()
            .is_some_and(|s| s.triggers.iter().any(|t| t == trigger))
    };
    match m {
        Some(Mutant::PolicyOnlyTriggerDelivered) => pack.policy.triggers.contains_key(trigger),
        Some(Mutant::AnyPacksTriggerDelivered) => packs.values().any(in_surface),
        _ => false,
    }
}

/// How many Sense events a poller has recorded since `since`: polling-on-a-timer ticks every
/// 5 ms; polling-on-activate polls at once, then every 5 s (`poll(); setInterval(poll, 5000)`).
pub fn poll_ticks(m: Option<Mutant>, since: std::time::Instant) -> u128 {
    let ms = since.elapsed().as_millis();
    match m {
        Some(Mutant::PollingOnActivate) => 1 + ms / 5000,
        _ => ms / 5,
    }
}

/// Does the mutant leave this write unaudited (contract row 8, "Audit writes"), on one land or
/// Binding mode only?
pub fn audit_skipped(m: Option<Mutant>, pack: Option<&Pack>, verb_key: &str) -> bool {
    let Some(pack) = pack else { return false };
    match m {
        // The sketch's record names `cred.identity`: no Binding, no record.
        Some(Mutant::UnboundWriteUnaudited) => !pack.needs_binding(),
        Some(Mutant::BrainWriteUnaudited) => pack
            .policy
            .verbs
            .get(verb_key)
            .is_some_and(|r| r.privacy.land == Land::Brain),
        _ => false,
    }
}
