//! Contract point 3 (authorise on the five capability axes) and point 4 (the confirm gate),
//! as pure functions over grants, a pack and an exec request. The fuzzers reach them directly.
//!
//! The five capability axes (assumption: the spec names `verb.exec.read`, `verb.exec.write`,
//! `pack.connect` and "an elevation grant"; hcpspec adds `pack.activate` and names the
//! elevation `binding.elevate`), in evaluation order for an exec:
//!
//! 1. `pack.activate`: the pack is activated (activation needs `pack.activate`, or any other
//!    grant on the pack, which implies it: the spec's own example activates with only exec
//!    and connect grants);
//! 2. `verb.exec.read` / `verb.exec.write`, by the verb's Policy `operation`, scoped by the
//!    grant's optional `verb_keys` and `tenant_id`;
//! 3. `privacy.land: brain` needs a `project_id` (a Principal attribute, not a grant);
//! 4. the confirm gate (point 4), before any adapter;
//! 5. `pack.connect` / `binding.elevate`: the pack has a Binding (connect minted it; a
//!    `mothership` Binding needs `binding.elevate`).
//!
//! A grant of any other capability grants nothing (a runtime must not extend the types).

use crate::suites::hcp::pack::{Land, Operation, Pack, VerbPolicy};
use crate::suites::hcp::runtime::mutant::Mutant;
use crate::suites::hcp::runtime::{Denied, ExecRequest, Grant};
use serde_json::{Map, Value};

pub const ACTIVATE: &str = "pack.activate";
pub const CONNECT: &str = "pack.connect";
pub const EXEC_READ: &str = "verb.exec.read";
pub const EXEC_WRITE: &str = "verb.exec.write";
pub const ELEVATE: &str = "binding.elevate";
pub const CAPABILITIES: [&str; 5] = [ACTIVATE, CONNECT, EXEC_READ, EXEC_WRITE, ELEVATE];

/// Who asks: the grants and the Principal's tenancy.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    pub grants: &'a [Grant],
    pub tenant_id: Option<&'a str>,
    pub project_id: Option<&'a str>,
}

/// Does the subject hold `capability` on `pack_id` (for `verb_key`, when one is asked)?
pub fn holds(
    s: Subject,
    capability: &str,
    pack_id: &str,
    verb_key: Option<&str>,
    m: Option<Mutant>,
) -> bool {
    if m == Some(Mutant::DefaultAllow) && s.grants.is_empty() {
        return true;
    }
    s.grants.iter().any(|g| {
        if g.pack_id != pack_id && m != Some(Mutant::GrantPackIgnored) {
            return false;
        }
        if m == Some(Mutant::UnknownCapabilityHonoured)
            && !CAPABILITIES.contains(&g.capability.as_str())
        {
            return true;
        }
        let same_cap = g.capability == capability
            || (m == Some(Mutant::ReadWriteCollapsed)
                && [EXEC_READ, EXEC_WRITE].contains(&capability)
                && [EXEC_READ, EXEC_WRITE, CONNECT].contains(&g.capability.as_str()))
            || (m == Some(Mutant::ConnectImpliesExec)
                && [EXEC_READ, EXEC_WRITE].contains(&capability)
                && g.capability == CONNECT)
            || (m == Some(Mutant::WriteImpliesRead)
                && capability == EXEC_READ
                && g.capability == EXEC_WRITE);
        if !same_cap {
            return false;
        }
        if m == Some(Mutant::GrantScopeIgnored) {
            return true;
        }
        let tenant_ok = g.tenant_id.as_deref().is_none_or(|t| {
            Some(t) == s.tenant_id
                || m == Some(Mutant::GrantTenantIgnored)
                || (m == Some(Mutant::TenantlessPrincipalAllowed) && s.tenant_id.is_none())
                || (m == Some(Mutant::TenantScopeReadsOnly) && capability != EXEC_READ)
                || (m == Some(Mutant::ConnectTenantIgnored) && capability == CONNECT)
                || (m == Some(Mutant::ElevationTenantIgnored) && capability == ELEVATE)
        }) && !(m == Some(Mutant::TenantScopedGrantsIgnored)
            && g.tenant_id.is_some());
        let verb_ok = match (&g.verb_keys, verb_key) {
            (Some(keys), Some(v)) => {
                keys.iter().any(|k| k == v)
                    || m == Some(Mutant::GrantVerbKeysIgnored)
                    || (m == Some(Mutant::VerbKeysEmptyMeansAll) && keys.is_empty())
                    || (m == Some(Mutant::VerbKeysWritesOnly) && capability == EXEC_READ)
            }
            (None, Some(_)) => m != Some(Mutant::VerbKeysAbsentMeansNone),
            _ => true,
        };
        tenant_ok && verb_ok
    })
}

/// Activation: `pack.activate`, or any known capability on the pack (which implies it).
pub fn may_activate(s: Subject, pack_id: &str, m: Option<Mutant>) -> bool {
    CAPABILITIES.iter().any(|c| holds(s, c, pack_id, None, m))
}

/// Steps 2 and 3 of the exec order for a known, activated pack: the Policy row, the
/// operation's capability, the land. Returns the verb's Policy row when allowed.
pub fn authorize_exec<'p>(
    s: Subject,
    pack: &'p Pack,
    req: &ExecRequest,
    m: Option<Mutant>,
) -> Result<&'p VerbPolicy, Denied> {
    let (p, v) = (req.pack_id.as_str(), req.verb_key.as_str());
    if pack.command(v).is_none() {
        return Err(Denied(format!("unknown verb {p}.{v}")));
    }
    let policy = pack
        .policy
        .verbs
        .get(v)
        .ok_or_else(|| Denied(format!("no policy for {v}")))?;
    let cap = match policy.operation {
        Operation::Read => EXEC_READ,
        Operation::Write if m == Some(Mutant::WriteCheckedAsRead) => EXEC_READ,
        Operation::Write => EXEC_WRITE,
    };
    if !holds(s, cap, p, Some(v), m)
        || (m == Some(Mutant::ReadGrantRefused) && cap == EXEC_READ)
        || (m == Some(Mutant::WriteGrantRefused) && cap == EXEC_WRITE)
    {
        return Err(Denied(format!("denied: missing {cap} for {p}.{v}")));
    }
    if policy.privacy.land == Land::Brain
        && (s.project_id.is_none() || m == Some(Mutant::BrainAlwaysDenied))
        && m != Some(Mutant::BrainWithoutProject)
        && !(m == Some(Mutant::BrainReadsOnly) && policy.operation == Operation::Write)
        && !(m == Some(Mutant::BrainWritesOnly) && policy.operation == Operation::Read)
    {
        return Err("denied: privacy.land brain requires project_id".into());
    }
    Ok(policy)
}

/// Point 4: a write whose Policy says `confirm` needs `confirm: true` or `apply: true`, the JSON
/// boolean; the string "true", 1 or a nested value is not a confirmation.
pub fn confirm_gate(
    policy: &VerbPolicy,
    args: &Map<String, Value>,
    m: Option<Mutant>,
) -> Result<(), Denied> {
    let gated = policy.confirm
        || (m == Some(Mutant::EveryWriteGated) && policy.operation == Operation::Write);
    if !gated || m == Some(Mutant::NoConfirmGate) {
        return Ok(());
    }
    if m == Some(Mutant::ConfirmNeverEnough) {
        return Err("confirm required".into());
    }
    let confirmed = |key: &str| match args.get(key) {
        Some(_) if m == Some(Mutant::ConfirmPresentEnough) => true,
        Some(Value::Bool(b)) => *b,
        Some(other) if m == Some(Mutant::ConfirmStringTrue) => {
            matches!(other, Value::String(s) if s == "true" || s == "yes")
                || other.as_i64() == Some(1)
        }
        _ => false,
    };
    // confirm-shadows-apply, apply-false-vetoes: the first member given decides alone (`??`).
    let first_given = |a: &str, b: &str| match args.get(a) {
        Some(_) => confirmed(a),
        None => confirmed(b),
    };
    if m == Some(Mutant::ConfirmShadowsApply) {
        return first_given("confirm", "apply")
            .then_some(())
            .ok_or_else(|| "confirm required".into());
    }
    if m == Some(Mutant::ApplyFalseVetoes) {
        return first_given("apply", "confirm")
            .then_some(())
            .ok_or_else(|| "confirm required".into());
    }
    if confirmed("confirm") || (confirmed("apply") && m != Some(Mutant::ApplyIgnored)) {
        Ok(())
    } else {
        Err("confirm required".into())
    }
}
