//! Issue 44, the shim protocol's additions as the reference (and its mutants) answer them: a
//! driver without `connect`, the grants it holds (`runtime.grants`).

use super::super::mutant::Mutant;
use super::super::variant::Variant;
use super::super::{Grant, RuntimeConfig};
use super::{authz, Knobs};

/// A driver without `connect` (spec 000 § Drivers, "an optional `connect`"): the variant
/// no-connect and the two mutants of such a driver.
pub(super) fn connectless(k: &Knobs) -> bool {
    k.is_variant(Variant::NoConnect)
        || matches!(
            k.mutant,
            Some(Mutant::ConnectlessRunsUnbound | Mutant::ConnectlessRefusesPublic)
        )
}

/// The grants a runtime holds from create: exactly the grants given (spec 000: "takes pack
/// directories, a Principal and grants with nothing else implicit"), or the mutants' widening.
pub(super) fn hold_grants<'a>(
    m: Option<Mutant>,
    config: &mut RuntimeConfig,
    packs: impl Iterator<Item = &'a String>,
) {
    match m {
        Some(Mutant::GrantsImplicitAdded) => {
            let extra: Vec<Grant> = packs.map(|p| activate_grant(p)).collect();
            config.grants.get_or_insert_with(Vec::new).extend(extra);
        }
        Some(Mutant::GrantsScopeWidened) => {
            for g in config.grants.iter_mut().flatten() {
                g.verb_keys = None;
                g.tenant_id = None;
            }
        }
        _ => {}
    }
}

/// grants-grow-on-activate: activating a pack records a grant for it.
pub(super) fn on_activated(m: Option<Mutant>, config: &mut RuntimeConfig, pack_id: &str) {
    if m == Some(Mutant::GrantsGrowOnActivate) {
        let held = config.grants.get_or_insert_with(Vec::new);
        if !held
            .iter()
            .any(|g| g.capability == authz::ACTIVATE && g.pack_id == pack_id)
        {
            held.push(activate_grant(pack_id));
        }
    }
}

fn activate_grant(pack_id: &str) -> Grant {
    Grant {
        capability: authz::ACTIVATE.into(),
        pack_id: pack_id.into(),
        verb_keys: None,
        tenant_id: None,
    }
}

/// jail-follows-link: a jail per pack under workdir, made the careless way (`create_dir_all`
/// takes a link to a directory for the directory, so a link planted there leads outside).
pub(super) fn pack_jail(
    workdir: &std::path::Path,
    pack_id: &str,
) -> Result<std::path::PathBuf, String> {
    let jail = workdir.join(pack_id);
    std::fs::create_dir_all(&jail).map_err(|e| format!("cannot make a jail: {e}"))?;
    Ok(jail)
}
