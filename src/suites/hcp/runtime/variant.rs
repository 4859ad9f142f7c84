//! Allowed variants, the dual of mutants: the reference with one point the spec leaves open
//! decided the other way. Every variant must pass every MUST case; a MUST case a variant fails
//! asserts a choice, not a rule. Mutants prove the suite can fail; variants prove it fails only
//! what the spec forbids.
//!
//! Each variant's decision is its own code here, never the reference's path with a flag on it.
//! `inproc:variant:NAME` runs one; `inproc:variant:all` makes every choice at once, the runtime
//! a stranger could write from the spec alone.

use super::Denied;
use crate::suites::hcp::pack::{Issue, Pack};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

crate::variants! {
    /// Each variant names, above it, the heading of `vectors/contract/ASSUMPTIONS.md` whose
    /// decision it reverses.
    pub enum Variant {
    /// ASSUMPTIONS.md: Authorisation: the five capability axes.
    MintInExec = "mint-in-exec", "mints a Binding through the hub inside every exec, as the spec's createAcmeRuntime does; connect is optional";
    /// ASSUMPTIONS.md: Binding and adapters.
    JailPerExec = "jail-per-exec", "runs each adapter in a fresh subdirectory of workdir, removed when the exec ends";
    /// ASSUMPTIONS.md: The pack format.
    PassThroughPairs = "pass-through-pairs", "renders pass-through as verb_key then `--key` `value` pairs, and forwards confirm and apply";
    /// ASSUMPTIONS.md: Audit, availability, Sense.
    SenseOnAfterActivation = "sense-on-after-activation", "Sense is on unless sense.enable is false, and drops events of packs not activated";
    /// ASSUMPTIONS.md: The pack format.
    SpecLintRules = "spec-lint-rules", "lints only the spec's row-2 rules: Policy covers commands and triggers, Skill present, wrap named or pass_through";
    /// ASSUMPTIONS.md: Audit, availability, Sense.
    PublicConnectFlag = "public-connect-flag", "reports a public pack connected: false, with a reason, until connect";
    /// ASSUMPTIONS.md: Audit, availability, Sense.
    DenialsUnaudited = "denials-unaudited", "audits the writes that ran, not the writes denied before their adapter";
    /// ASSUMPTIONS.md: Binding and adapters.
    CredentialFile = "credential-file", "hands the minted token to the adapter in a file named by HCP_CREDENTIAL_FILE, never in a variable";
    /// ASSUMPTIONS.md: The pack format.
    BinPathAllowed = "bin-path-allowed", "runs a wrap bin given as a path when the allow-list names that exact path";
    /// ASSUMPTIONS.md: Binding and adapters.
    NativeLocalAllowList = "native-local-allow-list", "keeps a given bin allow-list under native-local (sandbox: false)";
    /// ASSUMPTIONS.md: Authorisation: the five capability axes.
    ActivationLast = "activation-last", "checks activation after the capability axes and the confirm gate, just before the Binding";
    /// ASSUMPTIONS.md: Audit, availability, Sense.
    SenseAfterConnect = "sense-after-connect", "delivers Sense events of a Binding pack only once the pack is connected, and drops them before";
    /// ASSUMPTIONS.md: The pack format.
    TypedArgs = "typed-args", "refuses an exec whose args do not match the types surface.json declares for them, as soon as the verb is known (before activation, grants and the confirm gate)";
    /// ASSUMPTIONS.md: The pack format.
    DeclaredArgsOnly = "declared-args-only", "refuses an exec that sends an arg its command does not declare in surface.json (gate args aside) when the wrap names the command's argv, as soon as the verb is known; pass-through forwards what it is given";
    /// ASSUMPTIONS.md: Authorisation: the five capability axes.
    NarrowActivation = "narrow-activation", "activates a pack only with a pack.activate or verb.exec.* grant on it; pack.connect or binding.elevate alone does not imply activation";
    /// ASSUMPTIONS.md: The hub script (hcpspec's harness).
    HubUsedUpMints = "hub-used-up-mints", "its test hub lets every mint succeed once a pack's script is used up, as hcpspec-shim/1's first text said (docs/CHANGELOG.md)";
    /// ASSUMPTIONS.md: Denial texts.
    Dialect = "dialect", "its own words and shapes: other denial texts and lint rule names (declared in its maps), issues in reverse order, extra members in records, results wrapped";
    // issue 44, shim:
    /// ASSUMPTIONS.md: Binding and adapters.
    NoConnect = "no-connect", "a driver without connect (spec 000 § Drivers, \"an optional connect\"): says connect: false in initialize, answers runtime.connect -32601 and mints a Binding inside every exec";
    }
}

/// pass-through-pairs: `verb_key`, then `--key` and `value` as two elements for every arg,
/// gate args included, in the order the args came.
pub fn render_pairs(verb_key: &str, args: &Map<String, Value>) -> Vec<String> {
    let mut argv = vec![verb_key.to_string()];
    for (k, v) in args {
        argv.push(format!("--{k}"));
        argv.push(match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    argv
}

/// typed-args: the first arg of `verb_key` that surface.json declares with a type and that the
/// exec sends as another JSON type. Undeclared args and gate args are not judged (the surface
/// declares no type for them); an arg declared without a type takes any value.
pub fn mistyped_arg(pack: &Pack, verb_key: &str, args: &Map<String, Value>) -> Option<String> {
    let cmd = pack.command(verb_key)?;
    cmd.args.iter().find_map(|(name, spec)| {
        let (ty, value) = (spec.ty.as_deref()?, args.get(name)?);
        let fits = match ty {
            "string" => value.is_string(),
            "number" => value.is_number(),
            // JSON Schema's integer: a number with no fractional part (1.0 included).
            "integer" => {
                value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            "boolean" => value.is_boolean(),
            _ => true,
        };
        (!fits).then(|| format!("invalid args: {name} must be of type {ty}"))
    })
}

/// declared-args-only: the first arg a named wrap command does not declare (`confirm` and
/// `apply` drive the gate and need no declaration). Pass-through commands take any args.
pub fn undeclared_arg(pack: &Pack, verb_key: &str, args: &Map<String, Value>) -> Option<String> {
    let cmd = pack.command(verb_key)?;
    pack.surface.wrap.commands.get(verb_key)?;
    args.keys()
        .find(|k| {
            !cmd.args.contains_key(k.as_str())
                && !crate::suites::hcp::runtime::adapter::GATE_ARGS.contains(&k.as_str())
        })
        .map(|k| format!("invalid args: {k} is not an arg of {verb_key}"))
}

/// spec-lint-rules: the three rules row 2 names, in its own words; nothing else.
pub fn spec_lint(pack: &Pack) -> Vec<Issue> {
    let (s, p) = (&pack.surface, &pack.policy);
    let mut issues: Vec<Issue> = s
        .commands
        .iter()
        .filter(|c| !p.verbs.contains_key(&c.verb_key))
        .map(|c| {
            Issue::new(
                "policy.json",
                "/verbs",
                "policy-covers-command",
                format!("command {} lacks a policy row", c.verb_key),
            )
        })
        .collect();
    for t in s.sense.iter().flat_map(|d| &d.triggers) {
        if !p.triggers.contains_key(t) {
            issues.push(Issue::new(
                "policy.json",
                "/triggers",
                "policy-covers-trigger",
                format!("trigger {t} lacks a policy row"),
            ));
        }
    }
    if pack.skill.as_deref().is_none_or(|t| t.trim().is_empty()) {
        issues.push(Issue::new(
            "HARNESS.md",
            "",
            "skill-present",
            "no skill text",
        ));
    }
    if !s.wrap.pass_through && s.wrap.commands.is_empty() {
        issues.push(Issue::new(
            "surface.json",
            "/wrap",
            "wrap-named-or-pass-through",
            "wrap names no command and does not pass through",
        ));
    }
    issues
}

/// jail-per-exec: a fresh directory under the jail root for one exec.
pub fn fresh_jail(root: &Path) -> Result<PathBuf, Denied> {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = root.join(format!("jail-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Denied(format!("cannot make a jail: {e}")))?;
    Ok(dir)
}

/// credential-file: write the token to a file in the jail, readable by the adapter only.
pub fn credential_file(jail: &Path, token: &str) -> Result<PathBuf, Denied> {
    use std::os::unix::fs::OpenOptionsExt;
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = jail.join(format!(".credential-{n}"));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, token.as_bytes()))
        .map_err(|e| Denied(format!("cannot hand over the credential: {e}")))?;
    Ok(path)
}

/// dialect: the reference's denial texts in other words. A text of no known class is kept.
pub fn dialect_text(text: &str) -> String {
    // The most specific class first, so that `missing-write` wins over `no-grant`.
    static CLASSES: std::sync::OnceLock<Vec<(&str, regex::Regex)>> = std::sync::OnceLock::new();
    let classes = CLASSES.get_or_init(|| {
        let map = crate::suites::hcp::runtime::denial_map();
        DIALECT_ORDER
            .iter()
            .filter_map(|c| Some((*c, regex::Regex::new(map.get(*c)?).ok()?)))
            .collect()
    });
    match classes.iter().find(|(_, re)| re.is_match(text)) {
        Some((class, _)) => format!("E_{}: refused ({})", code(class), text.len()),
        None => text.to_string(),
    }
}

pub(super) const DIALECT_ORDER: &[&str] = &[
    "missing-read",
    "missing-write",
    "missing-connect",
    "unknown-pack",
    "unknown-verb",
    "no-policy",
    "not-activated",
    "no-grant",
    "elevation",
    "brain-needs-project",
    "confirm",
    "not-connected",
    "mint-failed",
    "bin-not-allowed",
    "unknown-bin",
    "invalid-args",
    "sense-disabled",
    "undeclared-trigger",
];

fn code(class: &str) -> String {
    class.to_uppercase().replace('-', "_")
}

/// dialect: its own denial map, over the texts `dialect_text` gives.
pub fn dialect_denial_map() -> BTreeMap<String, String> {
    let mut map: BTreeMap<String, String> = DIALECT_ORDER
        .iter()
        .map(|c| (c.to_string(), format!("^E_{}: ", code(c))))
        .collect();
    map.insert(
        "no-grant".into(),
        "^E_(NO_GRANT|MISSING_READ|MISSING_WRITE|MISSING_CONNECT): ".into(),
    );
    map
}

/// dialect: lint rule names of its own (`HCP201` …), and the map onto hcpspec's.
pub fn dialect_rule(rule: &str) -> String {
    match crate::suites::hcp::pack::RULES
        .iter()
        .position(|r| *r == rule)
    {
        Some(i) => format!("HCP{:03}", 100 + i),
        None => rule.to_string(),
    }
}

pub fn dialect_rule_map() -> BTreeMap<String, String> {
    crate::suites::hcp::pack::RULES
        .iter()
        .map(|r| (r.to_string(), format!("^{}$", dialect_rule(r))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> Pack {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("vectors/packs")
            .join(name);
        crate::suites::hcp::pack::install(&crate::suites::hcp::pack::PackFiles::read(&dir))
            .expect("fixture installs")
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn typed_args_refuses_only_a_declared_arg_of_another_type() {
        let ledger = fixture("ledger");
        let transfer = |v: Value| mistyped_arg(&ledger, "transfer", &args(v));
        // issue 22: the case that sent "10 EUR" for an arg declared "type": "number".
        assert!(transfer(json!({"amount": "10 EUR", "report": "r"})).is_some());
        assert!(transfer(json!({"amount": true, "report": "r"})).is_some());
        assert!(transfer(json!({"amount": 10, "report": 7})).is_some());
        assert_eq!(
            transfer(json!({"amount": 10, "report": "r", "confirm": "yes"})),
            None
        );
        assert_eq!(transfer(json!({"amount": 2.5, "extra": [1]})), None);
        assert_eq!(transfer(json!({})), None, "presence is not this check's");
        // JSON Schema's integer: 3 and 3.0, not 2.5.
        let mut counted = ledger.clone();
        for c in &mut counted.surface.commands {
            if let Some(a) = c.args.get_mut("amount") {
                a.ty = Some("integer".into());
            }
        }
        let count = |v: Value| mistyped_arg(&counted, "transfer", &args(v));
        assert_eq!(count(json!({"amount": 3})), None);
        assert_eq!(count(json!({"amount": 3.0})), None);
        assert!(count(json!({"amount": 2.5})).is_some());
    }

    #[test]
    fn declared_args_only_refuses_undeclared_args_of_named_commands_only() {
        let ledger = fixture("ledger");
        let balance = |v: Value| undeclared_arg(&ledger, "balance", &args(v));
        assert_eq!(
            balance(json!({"report": "r", "confirm": true, "apply": true})),
            None
        );
        assert!(balance(json!({"report": "r", "amount": 10})).is_some());
        // pass-through forwards whatever it is given.
        let passthru = fixture("passthru");
        assert_eq!(
            undeclared_arg(&passthru, "run", &args(json!({"msg": "a b"}))),
            None
        );
    }
}
