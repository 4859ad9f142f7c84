//! The two oracles of `hcpspec fuzz`.
//!
//! (a) **Fail-closed invariants**, judged from what a runtime showed: an exec that ran its
//! adapter (a probe report exists, or the envelope says ok) had a matching exec grant, the pack
//! activated, `confirm: true` (the JSON boolean) when the Policy says confirm, a Binding for a
//! non-public pack, a project for brain land and an allow-listed bin; its adapter saw exactly the
//! rendered argv, the jail as cwd and nothing of the runtime's environment (no planted canary);
//! a write left an audit record with the Principal; availability gives every false a reason and
//! never claims more than is true; Sense is accepted only when enabled and declared; install is
//! accepted only for packs the reference's loader and linter accept.
//!
//! (b) **Differential agreement** with the reference runtime (`inproc:reference`) on the same
//! case: allow or deny at every step, and the denial's class (`vectors/denials.json`).
//!
//! Each violation carries the expectation that, put on its step of the rendered case, makes the
//! case pass on the reference and fail on the runtime: that is the regression case written out.

use crate::suites::hcp::mutate::case::{FStep, FuzzCase, Slot};
use crate::suites::hcp::mutate::pack::Fixture;
use crate::suites::hcp::pack::{self, Issue, Land, Operation, Pack};
use crate::suites::hcp::runtime::adapter::{render_argv, INPROC};
use crate::suites::hcp::runtime::reference::authz::{
    CAPABILITIES, CONNECT, ELEVATE, EXEC_READ, EXEC_WRITE,
};
use crate::suites::hcp::runtime::MintOutcome;
use crate::suites::hcp::Vars;
use regex::Regex;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;

/// The bins a case's runtime can find: `RunEnv` links exactly these two.
const BINS: [&str; 2] = ["hcpspec-probe", "other-probe"];
/// What a sandboxed adapter's environment may hold (ASSUMPTIONS.md, Binding and adapters).
const SANDBOX_ENV: [&str; 4] = ["PATH", "HCP_PACK_ID", "HCP_VERB_KEY", "HCP_BINDING"];
/// Denial classes from the most to the least specific: a text's class is the first that fits.
const CLASS_ORDER: &[&str] = &[
    "confirm",
    "brain-needs-project",
    "elevation",
    "mint-failed",
    "missing-write",
    "missing-read",
    "missing-connect",
    "not-connected",
    "bin-not-allowed",
    "unknown-bin",
    "invalid-args",
    "unknown-verb",
    "unknown-pack",
    "not-activated",
    "sense-disabled",
    "undeclared-trigger",
    "no-grant",
    "any",
];

/// A differential rule fired with this prefix is a finding: the point it judges is fixed.
pub(super) const FIXED: &str = "fixed:";
/// A rule name with this prefix fires as `PROFILE`: the same rule, on a point the spec leaves
/// to the runtime.
const OPEN: &str = "open:";
/// Invariants that judge a point the spec leaves open wherever they fire: "no case requires
/// `activate` to be denied" (vectors/contract/ASSUMPTIONS.md, what activation needs).
const PROFILE_RULES: &[&str] = &["activate-without-grant"];
/// hcpspec's lint rules beyond the spec's row 2 (ASSUMPTIONS.md, "lint rules beyond row 2":
/// `PROFILE`): a runtime that lints only row 2 installs such a pack.
const PROFILE_LINT_RULES: &[&str] = &["verb-key-unique", "wrap-covers-command", "binding-declared"];

/// One broken rule, with where and what the regression case must expect.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub rule: &'static str,
    /// The index of the rendered case's step that gets `expect`.
    pub slot: usize,
    pub expect: Value,
    pub message: String,
    pub differential: bool,
    /// A point the spec leaves open (vectors/contract/ASSUMPTIONS.md): reported and written as
    /// a `PROFILE` case, never a finding that fails the run.
    pub profile: bool,
}

impl Violation {
    /// An invariant's violation: `PROFILE` for a rule of [`PROFILE_RULES`], or one fired as
    /// `open:RULE` because what broke is the runtime's choice.
    fn invariant(rule: &'static str, slot: usize, expect: Value, message: String) -> Violation {
        let (rule, profile) = match rule.strip_prefix(OPEN) {
            Some(r) => (self::rule(r).name, true),
            None => (rule, PROFILE_RULES.contains(&rule)),
        };
        Violation {
            rule,
            slot,
            expect,
            message,
            differential: false,
            profile,
        }
    }
}

/// What every rule is: its contract section, the sentence it enforces, and a title.
pub struct Rule {
    pub name: &'static str,
    pub section: &'static str,
    pub spec: &'static str,
    pub title: &'static str,
}

const ROW1: &str = "000_15ba0494eb8a99bb.txt § The contract, row 1 (\"Load surface.json, policy.json and HARNESS.md from a pack directory\" / \"Reject on parse error\")";
const ROW2: &str = "000_15ba0494eb8a99bb.txt § The contract, row 2 (\"Lint on install: Policy covers every command and trigger, Skill present, wrap has named commands or pass_through\" / \"Reject on any issue\")";
const ROW3: &str = "000_15ba0494eb8a99bb.txt § The contract, row 3 (\"Authorise each exec against five capability axes for a Principal\" / \"Deny with a reason; never default-allow\")";
const ROW4: &str = "000_15ba0494eb8a99bb.txt § The contract, row 4 (\"Gate `confirm: true` writes\" / \"Refuse before any adapter runs\")";
const ROW5: &str = "000_15ba0494eb8a99bb.txt § The contract, row 5 (\"Mint Binding through a hub for `user`, `local` and `mothership`\" / \"No ambient env fallback\")";
const ROW6: &str = "000_15ba0494eb8a99bb.txt § The contract, row 6 (\"Execute the Adapter: spawn the wrap bin with a rendered argv, or call in-process\" / \"Unknown bin denied\")";
const ROW7: &str = "000_15ba0494eb8a99bb.txt § The contract, row 7 (\"Sandbox by default: bin allow-list, cwd jail, no inherited credentials\")";
const ROW8: &str = "000_15ba0494eb8a99bb.txt § The contract, row 8 (\"Audit writes\" / \"Full attribution tuple\")";
const ROW9: &str = "000_15ba0494eb8a99bb.txt § The contract, row 9 (\"Report availability per command: installed, activated, connected, executable\" / \"Every false carries a reason\")";
const ROW10: &str = "000_15ba0494eb8a99bb.txt § The contract, row 10 (\"Route Sense (optional): accept declared triggers and record them in a sink\" / \"`sense.enable` off → drop\")";
const CONFIRM_GATE: &str = "000_15ba0494eb8a99bb.txt § Proprietary runtimes, `HcpRuntimeDriver` (\"if (policy.confirm && args.confirm !== true && args.apply !== true) return { ok: false, pack_id, verb_key, error: 'confirm required' }\")";
const GRANTS: &str = "000_15ba0494eb8a99bb.txt § Start with the reference SDK (\"takes pack directories, a Principal and grants with nothing else implicit\")";
const ROW5_FIRST: &str = "000_15ba0494eb8a99bb.txt § The contract (\"Every exec passes them in the order of the pipeline, and any step may deny.\"); § The contract, row 5 (\"Mint Binding through a hub for `user`, `local` and `mothership`\")";
const PIPELINE: &str = "000_15ba0494eb8a99bb.txt § The contract (\"Every exec passes them in the order of the pipeline, and any step may deny\")";

pub const RULES: &[Rule] = &[
    Rule { name: "install-accepted-bad-pack", section: "2", spec: ROW2, title: "install accepts a pack the reference loader or linter rejects" },
    Rule { name: "install-issues-incomplete", section: "2", spec: ROW2, title: "a rejected install does not list every issue the reference finds" },
    Rule { name: "install-accepted-unparsable-pack", section: "1", spec: ROW1, title: "install accepts a pack file that does not parse or fit its schema" },
    Rule { name: "activate-unknown-pack", section: "3", spec: ROW3, title: "activation of a pack that is not installed succeeds" },
    Rule { name: "activate-without-grant", section: "3", spec: ROW3, title: "activation succeeds without any grant on the pack" },
    Rule { name: "connect-unknown-pack", section: "5", spec: ROW5, title: "connect succeeds for a pack that is not installed" },
    Rule { name: "connect-not-activated", section: "3", spec: ROW3, title: "connect succeeds for a pack that is not activated" },
    Rule { name: "connect-without-grant", section: "3", spec: ROW3, title: "connect mints a Binding without pack.connect" },
    Rule { name: "mothership-without-elevation", section: "must-not", spec: "000_15ba0494eb8a99bb.txt § The contract, must-not list (\"Let an end-user Principal reach a `mothership` Binding without an explicit elevation grant.\")", title: "a mothership Binding is minted without binding.elevate" },
    Rule { name: "connect-despite-failed-mint", section: "5", spec: ROW5, title: "connect succeeds although the hub's mint failed (an ambient fallback)" },
    Rule { name: "exec-unknown-pack-ran", section: "3", spec: ROW3, title: "an exec of a pack that is not installed runs" },
    Rule { name: "exec-unknown-verb-ran", section: "3", spec: ROW3, title: "an exec of a verb without a command or Policy row runs" },
    Rule { name: "exec-not-activated-ran", section: "3", spec: ROW3, title: "an exec of a pack that is not activated runs" },
    Rule { name: "exec-without-grant", section: "3", spec: ROW3, title: "an exec runs without a matching exec grant" },
    Rule { name: "capability-collapsed", section: "must-not", spec: "000_15ba0494eb8a99bb.txt § The contract, must-not list (\"Collapse read, write and connect into one boolean in a multi-tenant product.\")", title: "an exec runs on a grant of another capability of the same pack" },
    Rule { name: "brain-without-project", section: "3", spec: "000_15ba0494eb8a99bb.txt § Start with the reference SDK, Create a runtime over pack directories (\"project_id: null, // required only for land: brain\")", title: "a privacy.land brain verb runs without a project" },
    Rule { name: "write-without-confirm", section: "4", spec: ROW4, title: "a confirm write reaches its adapter without confirm: true" },
    Rule { name: "exec-without-binding", section: "5", spec: "000_15ba0494eb8a99bb.txt § Start with the reference SDK, Activate, connect, exec (\"await hcp.connect('ledger') // Binding mint; skipped for public packs\")", title: "an exec of a non-public pack runs without a Binding" },
    Rule { name: "bin-not-allow-listed", section: "7", spec: ROW7, title: "a wrap bin off the allow-list is spawned" },
    Rule { name: "unknown-bin-ran", section: "6", spec: ROW6, title: "an unknown bin or in-process adapter runs" },
    Rule { name: "invalid-args-ran", section: "6", spec: ROW6, title: "an exec whose args do not render runs" },
    Rule { name: "binding-not-as-minted", section: "5", spec: ROW5, title: "an adapter runs without the token the hub minted for its Binding" },
    Rule { name: "adapter-denied-before-binding", section: "5", spec: ROW5_FIRST, title: "an exec no Binding can be minted for is denied for its adapter (row 6), not its Binding (row 5)" },
    Rule { name: "grant-added", section: "3", spec: GRANTS, title: "the runtime holds a grant runtime.create did not give, or a given grant widened" },
    Rule { name: "grant-dropped", section: "3", spec: GRANTS, title: "the runtime does not hold a grant runtime.create gave" },
    Rule { name: "exec-thrown", section: "3", spec: PIPELINE, title: "an exec is answered with a JSON-RPC error, not an envelope (denials come back as values, never as thrown exceptions)" },
    Rule { name: "confirm-given-denied", section: "4", spec: CONFIRM_GATE, title: "an exec given confirm: true or apply: true is denied by the confirm gate (a denial of the runtime's own confirm class)" },
    Rule { name: "nonzero-exit-ok", section: "6", spec: ROW6, title: "an adapter that exited non-zero is answered ok without its exit code" },
    Rule { name: "argv-not-as-rendered", section: "6", spec: ROW6, title: "the adapter's argv is not the rendered template, one element per argument" },
    Rule { name: "cwd-not-jailed", section: "7", spec: ROW7, title: "the adapter runs outside the runtime's workdir" },
    Rule { name: "env-not-sandboxed", section: "7", spec: ROW7, title: "a sandboxed adapter inherits environment variables" },
    Rule { name: "canary-leaked", section: "7", spec: ROW7, title: "a credential planted in the runtime's environment shows up" },
    Rule { name: "write-not-audited", section: "8", spec: ROW8, title: "a write leaves no audit record" },
    Rule { name: "audit-without-principal", section: "8", spec: ROW8, title: "an audit record lacks the Principal" },
    Rule { name: "audit-attribution-incomplete", section: "8", spec: ROW8, title: "an audit record has another tenant or project" },
    Rule { name: "availability-false-without-reason", section: "9", spec: ROW9, title: "an availability flag is false without a reason" },
    Rule { name: "availability-optimistic", section: "9", spec: ROW9, title: "availability claims a flag that is not true" },
    Rule { name: "availability-stale", section: "9", spec: ROW9, title: "availability denies activated or connected of a pack the runtime itself answered activated or connected" },
    Rule { name: "sense-accepted-while-disabled", section: "10", spec: ROW10, title: "a Sense event is accepted while sense.enable is off" },
    Rule { name: "sense-accepted-undeclared", section: "10", spec: ROW10, title: "a Sense trigger the pack does not declare is accepted" },
    Rule { name: "differential-install", section: "2", spec: ROW2, title: "install disagrees with the reference runtime" },
    Rule { name: "differential-activate", section: "3", spec: ROW3, title: "activation disagrees with the reference runtime" },
    Rule { name: "differential-connect", section: "5", spec: ROW5, title: "connect disagrees with the reference runtime" },
    Rule { name: "differential-exec", section: "3", spec: PIPELINE, title: "an exec's allow or deny disagrees with the reference runtime" },
    Rule { name: "differential-denial-class", section: "3", spec: PIPELINE, title: "a denial's class disagrees with the reference runtime" },
    Rule { name: "differential-sense", section: "10", spec: ROW10, title: "Sense acceptance disagrees with the reference runtime" },
    Rule { name: "differential-availability", section: "9", spec: ROW9, title: "availability disagrees with the reference runtime" },
    Rule { name: "runtime-error", section: "3", spec: PIPELINE, title: "the runtime breaks the protocol on an input the reference answers" },
];

pub fn rule(name: &str) -> &'static Rule {
    RULES
        .iter()
        .find(|r| r.name == name)
        .unwrap_or(&RULES[RULES.len() - 1])
}

/// What the reference's loader and linter make of a case's packs.
#[derive(Debug, Clone)]
pub struct Model {
    pub install_ok: bool,
    pub issues: Vec<Issue>,
    pub packs: BTreeMap<String, Pack>,
}

impl Model {
    pub fn of(case: &FuzzCase, fixtures: &[Fixture]) -> Model {
        let mut packs = BTreeMap::new();
        let mut issues = Vec::new();
        for (f, state) in case.states(fixtures) {
            match pack::install(&state.files(&f.name)) {
                Ok(p) if packs.contains_key(p.pack_id()) => issues.push(Issue::new(
                    "surface.json",
                    "/pack_id",
                    "pack-id-unique",
                    format!("pack_id `{}` is installed twice", p.pack_id()),
                )),
                Ok(p) => {
                    packs.insert(p.pack_id().to_string(), p);
                }
                Err(mut e) => issues.append(&mut e),
            }
        }
        Model {
            install_ok: issues.is_empty(),
            issues,
            packs,
        }
    }
}

/// The denial classes, compiled, in [`CLASS_ORDER`].
pub struct Classes(Vec<(String, Regex)>);

impl Classes {
    /// From a runtime's denial map (class → regex over its texts).
    pub fn new(denials: &std::collections::BTreeMap<String, String>) -> Classes {
        let mut out: Vec<(String, Regex)> = CLASS_ORDER
            .iter()
            .filter_map(|c| Some((c.to_string(), Regex::new(denials.get(*c)?).ok()?)))
            .collect();
        for (c, re) in denials {
            if !CLASS_ORDER.contains(&c.as_str()) {
                if let Ok(re) = Regex::new(re) {
                    out.insert(out.len().saturating_sub(2), (c.clone(), re));
                }
            }
        }
        Classes(out)
    }

    /// The most specific class a denial text fits.
    pub fn of(&self, text: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(_, re)| re.is_match(text))
            .map(|(c, _)| c.as_str())
    }

    pub fn fits(&self, class: &str, text: &str) -> bool {
        self.0.iter().any(|(c, re)| c == class && re.is_match(text))
    }
}

/// The grant rule as the oracles read it from the contract and ASSUMPTIONS.md, written once and
/// apart from the runtimes it judges: a grant of exactly `cap` on exactly `pack_id`, within its
/// verb and tenant scopes, and nothing else.
pub fn granted(
    grants: &[crate::suites::hcp::runtime::Grant],
    tenant: Option<&str>,
    cap: &str,
    pack_id: &str,
    verb: Option<&str>,
) -> bool {
    grants.iter().any(|g| {
        g.capability == cap
            && g.pack_id == pack_id
            && g.tenant_id.as_deref().is_none_or(|t| Some(t) == tenant)
            && match (&g.verb_keys, verb) {
                (Some(keys), Some(v)) => keys.iter().any(|k| k == v),
                _ => true,
            }
    })
}

/// Everything the oracles judge a run of one fuzz case by.
pub struct Ctx<'a> {
    pub case: &'a FuzzCase,
    pub model: &'a Model,
    pub layout: Vec<Slot>,
    /// hcpspec's denial classes (the reference's map): which class the reference's text is.
    pub classes: &'a Classes,
    /// The runtime's own claims: whether its text fits that class, as `run` judges it.
    pub claims: &'a crate::case::matcher::Claims,
}

fn contains_text(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s.contains(needle),
        Value::Array(a) => a.iter().any(|x| contains_text(x, needle)),
        Value::Object(m) => m
            .iter()
            .any(|(k, x)| k.contains(needle) || contains_text(x, needle)),
        _ => false,
    }
}

fn reason(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.trim().is_empty())
}

impl Ctx<'_> {
    fn grants(&self) -> &[crate::suites::hcp::runtime::Grant] {
        self.case.grants.as_deref().unwrap_or(&[])
    }

    pub(super) fn granted(&self, cap: &str, pack_id: &str, verb: Option<&str>) -> bool {
        granted(
            self.grants(),
            self.case.tenant_id.as_deref(),
            cap,
            pack_id,
            verb,
        )
    }

    pub(super) fn sandboxed(&self) -> bool {
        self.case.sandbox != Some(false)
    }

    /// `{"ok": false}`, with the reference's denial class when it denied on this step.
    fn deny_expect(&self, slot: usize, reference: Option<&[Option<&Value>]>) -> Value {
        let mut e = json!({ "ok": false });
        let text = reference
            .and_then(|r| r.get(slot).copied().flatten())
            .filter(|v| v["ok"] == false)
            .and_then(|v| v["error"].as_str());
        if let Some(class) = text.and_then(|t| self.classes.of(t)) {
            e["error"] = json!({ "$denial": class });
        }
        e
    }

    /// Could an exec of `verb` on `pack` pass every check that does not depend on its args?
    fn executable(&self, pack: &Pack, verb: &str, activated: &BTreeSet<String>) -> bool {
        let id = pack.pack_id();
        let Some(row) = pack.policy.verbs.get(verb) else {
            return false;
        };
        let cap = if row.operation == Operation::Write {
            EXEC_WRITE
        } else {
            EXEC_READ
        };
        activated.contains(id)
            && pack.command(verb).is_some()
            && self.granted(cap, id, Some(verb))
            && !(row.privacy.land == Land::Brain && self.case.project_id.is_none())
            && self.adapter_known(pack).is_ok()
    }

    /// The wrap bin (allow-listed when sandboxed, and one the runtime can find) or in-process
    /// adapter is one a conforming runtime may run.
    pub(super) fn adapter_known(&self, pack: &Pack) -> Result<(), &'static str> {
        match &pack.surface.wrap.bin {
            Some(bin) if self.sandboxed() && !self.case.allow_bins.contains(bin) => {
                Err("bin-not-allow-listed")
            }
            Some(bin) if !BINS.contains(&bin.as_str()) => Err("unknown-bin-ran"),
            Some(_) => Ok(()),
            None => match pack.surface.wrap.inproc.as_deref() {
                Some(h) if INPROC.contains(&h) => Ok(()),
                _ => Err("unknown-bin-ran"),
            },
        }
    }
}

/// The fail-closed invariants over one run's observations (`obs[slot]`; `None` for a step that
/// did not run). `reference` is the reference's run of the same case, when there is one, for
/// the denial class of an expectation.
pub fn invariants(
    ctx: &Ctx,
    obs: &[Option<&Value>],
    reference: Option<&[Option<&Value>]>,
) -> Vec<Violation> {
    let c = ctx.case;
    let model = ctx.model;
    let mut out: Vec<Violation> = Vec::new();
    let mut fire = |rule: &'static str, slot: usize, expect: Value, message: String| {
        out.push(Violation::invariant(rule, slot, expect, message))
    };
    let mut activated: BTreeSet<String> = BTreeSet::new();
    let mut connected: BTreeSet<String> = BTreeSet::new();
    let mut hub: BTreeMap<String, VecDeque<MintOutcome>> = c
        .hub
        .iter()
        .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
        .collect();
    let mut writes: Vec<(String, String)> = Vec::new();
    let mut exec_seen: BTreeMap<usize, (usize, &Value)> = BTreeMap::new();

    for (k, slot) in ctx.layout.iter().enumerate() {
        let Some(v) = obs.get(k).copied().flatten() else {
            break;
        };
        if ctx.sandboxed() && contains_text(v, &c.canary) {
            fire(
                "canary-leaked",
                k,
                json!({ "$noText": c.canary }),
                format!(
                    "the planted {} shows up in what step {k} observed",
                    crate::suites::hcp::mutate::case::CANARY_KEY
                ),
            );
        }
        let step = match *slot {
            Slot::Install => {
                install_checks(ctx, k, v, &mut fire);
                if !model.install_ok {
                    break; // what follows rests on packs the reference never installed
                }
                continue;
            }
            Slot::Probe(i) => {
                if let Some(&(ek, ev)) = exec_seen.get(&i) {
                    exec_ran(
                        ctx,
                        i,
                        ek,
                        ev,
                        Some((k, v)),
                        &activated,
                        &connected,
                        reference,
                        &mut fire,
                    );
                }
                continue;
            }
            Slot::Step(i) => i,
        };
        match &c.steps[step] {
            FStep::Activate(ids) => {
                activate_checks(ctx, k, ids, v, &mut activated, &mut fire);
            }
            FStep::Connect(p) => {
                connect_checks(
                    ctx,
                    k,
                    p,
                    v,
                    reference,
                    &activated,
                    &mut connected,
                    &mut hub,
                    &mut fire,
                );
            }
            FStep::Exec {
                pack_id,
                verb_key,
                args,
                report,
            } => {
                let write = model
                    .packs
                    .get(pack_id)
                    .and_then(|p| p.policy.verbs.get(verb_key))
                    .is_some_and(|r| r.operation == Operation::Write);
                // A write that ran (its envelope ok) must be audited; whether a denied attempt
                // is audited is the runtime's choice (variant denials-unaudited).
                if write && v["ok"] == true {
                    writes.push((pack_id.clone(), verb_key.clone()));
                }
                envelope_checks(ctx, k, (pack_id, verb_key, args), v, &mut fire);
                let full = FuzzCase::exec_args(args, report);
                binding_row_first(ctx, k, (pack_id, verb_key, &full), v, &activated, &mut fire);
                exec_seen.insert(step, (k, v));
                if !ctx.layout.contains(&Slot::Probe(step)) {
                    exec_ran(
                        ctx, step, k, v, None, &activated, &connected, reference, &mut fire,
                    );
                }
            }
            FStep::Availability(p) => {
                availability(ctx, k, p, v, &activated, &connected, &mut fire);
            }
            FStep::Sense {
                pack_id, trigger, ..
            } => {
                if v["accepted"] != true {
                    continue;
                }
                let declared = model.packs.get(pack_id).is_some_and(|p| {
                    p.surface
                        .sense
                        .as_ref()
                        .is_some_and(|s| s.triggers.contains(trigger))
                        && p.policy.triggers.contains_key(trigger)
                });
                if !c.sense_enable {
                    // Off by default is the runtime's choice; only `enable: false` is fixed.
                    fire(
                        if c.sense_off_said {
                            "sense-accepted-while-disabled"
                        } else {
                            "open:sense-accepted-while-disabled"
                        },
                        k,
                        json!({ "accepted": false }),
                        format!("accepted {pack_id}/{trigger} with sense.enable off"),
                    );
                } else if !declared {
                    fire("sense-accepted-undeclared", k, json!({ "accepted": false }), format!("accepted {pack_id}/{trigger}, which the pack does not declare in both files"));
                }
            }
            FStep::Audit => {
                audit_checks(c, k, v, &writes, &mut fire);
            }
            FStep::Grants => super::grants::grants_checks(c.grants.as_deref(), k, v, &mut fire),
        }
    }
    out
}

/// The install's observation: a pack the reference rejects for a rule the spec fixes is not
/// installed, and a rejection names the rule of a lone issue, in the runtime's words (its
/// `initialize` `rules` map, as `hcpspec run` judges `$rule`). A pack rejected only by
/// hcpspec's profile lint rules, and a rejection of several issues that leaves some out, are
/// the runtime's choice (ASSUMPTIONS.md: "every issue listed" is `PROFILE`): `PROFILE`.
fn install_checks(
    ctx: &Ctx,
    k: usize,
    v: &Value,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let model = ctx.model;
    if model.install_ok {
        return;
    }
    let spec_issues: Vec<&Issue> = model
        .issues
        .iter()
        .filter(|i| !PROFILE_LINT_RULES.contains(&i.rule.as_str()))
        .collect();
    if v["ok"] == true {
        let first = spec_issues
            .first()
            .or(model.issues.first().as_ref())
            .map(|i| i.to_string())
            .unwrap_or_default();
        let load = spec_issues
            .iter()
            .any(|i| ["parse", "schema", "missing-file"].contains(&i.rule.as_str()));
        let rule = match (load, spec_issues.is_empty()) {
            (_, true) => "open:install-accepted-bad-pack",
            (true, false) => "install-accepted-unparsable-pack",
            (false, false) => "install-accepted-bad-pack",
        };
        fire(
            rule,
            k,
            json!({ "ok": false }),
            format!("install accepted a pack the reference rejects ({first})"),
        );
    }
    if v["ok"] != false {
        return;
    }
    let named: Vec<&str> = v["issues"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["rule"].as_str())
        .filter(|r| !r.trim().is_empty())
        .collect();
    // Named in the runtime's words; a rule its map leaves out (or no map) is unclassified,
    // so any named rule does.
    let names = |rule: &str| {
        named
            .iter()
            .any(|n| ctx.claims.rule_fits(rule, n).unwrap_or(true))
    };
    let mut rules: Vec<&str> = model.issues.iter().map(|i| i.rule.as_str()).collect();
    rules.sort_unstable();
    rules.dedup();
    let missing: Vec<&str> = rules.iter().copied().filter(|r| !names(r)).collect();
    if missing.is_empty() {
        return;
    }
    // One rule the spec fixes, and the runtime must name it, as a MUST case with one issue
    // asks; more than one, and which it names is its own.
    let lone = rules.len() == 1 && !PROFILE_LINT_RULES.contains(&rules[0]);
    let want: Vec<Value> = if lone {
        missing
            .iter()
            .map(|r| json!({ "rule": { "$rule": r } }))
            .collect()
    } else if named.is_empty() {
        vec![json!({ "rule": { "$regex": "\\S" } })]
    } else {
        missing
            .iter()
            .map(|r| json!({ "rule": { "$rule": r } }))
            .collect()
    };
    fire(
        if lone || named.is_empty() {
            "install-issues-incomplete"
        } else {
            "open:install-issues-incomplete"
        },
        k,
        json!({ "ok": false, "issues": { "$contains": want } }),
        format!(
            "the rejected install does not list the rule(s) {} that the reference finds",
            missing.join(", ")
        ),
    );
}

/// An exec's envelope: a value, never a JSON-RPC error, and no confirm-gate denial of a
/// confirmed exec.
fn envelope_checks(
    ctx: &Ctx,
    k: usize,
    (pack_id, verb_key, args): (&str, &str, &Map<String, Value>),
    v: &Value,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    if v.get("thrown").is_some() {
        fire(
            "exec-thrown",
            k,
            json!({ "thrown": { "$absent": true } }),
            format!(
                "exec {pack_id}.{verb_key} was answered with a JSON-RPC error: {}",
                v["thrown"]
            ),
        );
    }
    confirm_gate_checks(ctx, k, args, v, fire);
}

/// The confirm gate passes an exec given `confirm: true` or `apply: true` (either one): a
/// denial in the runtime's own words for the confirm class is then the gate wrongly shut. The
/// order of the checks is open; which gate denied is told by the runtime's `denials` map alone.
fn confirm_gate_checks(
    ctx: &Ctx,
    k: usize,
    args: &Map<String, Value>,
    v: &Value,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let given = ["confirm", "apply"]
        .into_iter()
        .find(|g| args.get(*g) == Some(&Value::Bool(true)));
    let text = v["error"].as_str().unwrap_or_default();
    if let (Some(g), false) = (given, v["ok"] == true) {
        if ctx.claims.denial_fits("confirm", text) == Some(true) {
            fire(
                "confirm-given-denied",
                k,
                json!({ "error": { "$not": { "$denial": "confirm" } } }),
                format!("an exec given {g}: true was denied by the confirm gate: {text:?}"),
            );
        }
    }
}

/// An activation's answer: only installed packs with a grant on them activate.
fn activate_checks(
    ctx: &Ctx,
    k: usize,
    ids: &[String],
    v: &Value,
    activated: &mut BTreeSet<String>,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    for (j, r) in v.as_array().into_iter().flatten().enumerate() {
        if r["ok"] != true {
            continue;
        }
        let pid = r["pack_id"]
            .as_str()
            .or(ids.get(j).map(String::as_str))
            .unwrap_or_default()
            .to_string();
        let expect = json!({ "$contains": [{ "pack_id": pid, "ok": false }] });
        if !ctx.model.packs.contains_key(&pid) {
            fire(
                "activate-unknown-pack",
                k,
                expect,
                format!("activated {pid}, which is not installed"),
            );
        } else if !CAPABILITIES.iter().any(|cap| ctx.granted(cap, &pid, None)) {
            fire(
                "activate-without-grant",
                k,
                expect,
                format!("activated {pid} without any grant on it"),
            );
        }
        activated.insert(pid);
    }
}

/// A connect's answer: it mints only for an activated pack with pack.connect (and
/// binding.elevate for a mothership Binding) whose hub's mint succeeds.
#[allow(clippy::too_many_arguments)]
fn connect_checks(
    ctx: &Ctx,
    k: usize,
    p: &String,
    v: &Value,
    reference: Option<&[Option<&Value>]>,
    activated: &BTreeSet<String>,
    connected: &mut BTreeSet<String>,
    hub: &mut BTreeMap<String, VecDeque<MintOutcome>>,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let model = ctx.model;
    let ok = v["ok"] == true;
    let Some(pack) = model.packs.get(p) else {
        if ok {
            fire(
                "connect-unknown-pack",
                k,
                json!({ "ok": false }),
                format!("connected {p}, which is not installed"),
            );
        }
        return;
    };
    if !pack.needs_binding() {
        if ok && !activated.contains(p) {
            fire(
                "connect-not-activated",
                k,
                json!({ "ok": false }),
                format!("connected {p} before activating it"),
            );
        }
        return;
    }
    let mothership =
        pack.surface.binding.as_ref().map(|b| b.mode) == Some(pack::BindingMode::Mothership);
    let allowed = activated.contains(p)
        && ctx.granted(CONNECT, p, None)
        && (!mothership || ctx.granted(ELEVATE, p, None));
    // A mint is attempted when connect gets that far (and always when it succeeds).
    let minted = if ok || allowed {
        hub.get_mut(p).and_then(VecDeque::pop_front)
    } else {
        None
    };
    if !ok {
        return;
    }
    let deny = ctx.deny_expect(k, reference);
    if !activated.contains(p) {
        fire(
            "connect-not-activated",
            k,
            deny,
            format!("connected {p} before activating it"),
        );
    } else if !ctx.granted(CONNECT, p, None) {
        fire(
            "connect-without-grant",
            k,
            deny,
            format!("minted a Binding for {p} without pack.connect"),
        );
    } else if mothership && !ctx.granted(ELEVATE, p, None) {
        fire(
            "mothership-without-elevation",
            k,
            deny,
            format!("minted the mothership Binding of {p} without binding.elevate"),
        );
    } else if minted.is_some_and(|o| !o.ok) {
        fire(
            "connect-despite-failed-mint",
            k,
            deny,
            format!("connect of {p} succeeded although the hub's mint failed"),
        );
    }
    connected.insert(p.clone());
}

/// The audit log: every write that ran has a record, and every record names the case's
/// Principal, tenant and project.
fn audit_checks(
    c: &FuzzCase,
    k: usize,
    v: &Value,
    writes: &[(String, String)],
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let records = v.as_array().cloned().unwrap_or_default();
    let mut seen = BTreeSet::new();
    for (p, verb) in writes {
        if !seen.insert((p, verb)) {
            continue;
        }
        if !records
            .iter()
            .any(|r| r["pack_id"] == p.as_str() && r["verb_key"] == verb.as_str())
        {
            fire(
                "write-not-audited",
                k,
                json!({ "$contains": [{ "pack_id": p, "verb_key": verb }] }),
                format!("the write exec of {p}.{verb} left no audit record"),
            );
            break;
        }
    }
    let principal = json!({ "id": c.principal.id, "kind": c.principal.kind });
    if let Some(r) = records.iter().find(|r| r["principal"] != principal) {
        fire(
            "audit-without-principal",
            k,
            json!({ "$each": { "principal": principal } }),
            format!(
                "an audit record names principal {} instead of {principal}",
                r["principal"]
            ),
        );
    }
    let id = |x: &Option<String>| x.as_ref().map_or(json!({ "$absent": true }), |s| json!(s));
    let wrong = |r: &Value, key: &str, want: &Option<String>| match want {
        Some(s) => r[key] != s.as_str(),
        None => !r[key].is_null(),
    };
    if records
        .iter()
        .any(|r| wrong(r, "tenant_id", &c.tenant_id) || wrong(r, "project_id", &c.project_id))
    {
        fire(
            "audit-attribution-incomplete",
            k,
            json!({ "$each": { "tenant_id": id(&c.tenant_id), "project_id": id(&c.project_id) } }),
            "an audit record names another tenant or project".into(),
        );
    }
}

/// An exec ran its adapter (the envelope says ok, or a probe report exists): every check of
/// the pipeline must have passed, and the adapter must have seen what the sandbox allows.
#[allow(clippy::too_many_arguments)]
fn exec_ran(
    ctx: &Ctx,
    step: usize,
    ek: usize,
    ev: &Value,
    probe: Option<(usize, &Value)>,
    activated: &BTreeSet<String>,
    connected: &BTreeSet<String>,
    reference: Option<&[Option<&Value>]>,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let FStep::Exec {
        pack_id,
        verb_key,
        args,
        report,
    } = &ctx.case.steps[step]
    else {
        return;
    };
    let ok = ev["ok"] == true;
    let report_seen = probe.filter(|(_, pv)| pv.is_object());
    if !ok && report_seen.is_none() {
        return;
    }
    // On the envelope when it said ok; on the probe when it denied after running the adapter.
    let (slot, expect) = match (ok, report_seen) {
        (true, _) | (false, None) => (ek, ctx.deny_expect(ek, reference)),
        (false, Some((pk, _))) => (pk, json!({ "$absent": true })),
    };
    let at = format!("{pack_id}.{verb_key}");
    let mut deny = |rule: &'static str, why: String| {
        fire(rule, slot, expect.clone(), format!("exec {at} ran: {why}"))
    };
    let Some(pack) = ctx.model.packs.get(pack_id) else {
        return deny("exec-unknown-pack-ran", "the pack is not installed".into());
    };
    let Some(row) = pack.runnable(verb_key) else {
        return deny(
            "exec-unknown-verb-ran",
            "the verb has no command or no Policy row".into(),
        );
    };
    if !activated.contains(pack_id) {
        return deny("exec-not-activated-ran", "the pack is not activated".into());
    }
    let cap = if row.operation == Operation::Write {
        EXEC_WRITE
    } else {
        EXEC_READ
    };
    if !ctx.granted(cap, pack_id, Some(verb_key)) {
        let other = [EXEC_READ, EXEC_WRITE, CONNECT]
            .iter()
            .any(|c| ctx.granted(c, pack_id, Some(verb_key)));
        return if other {
            deny(
                "capability-collapsed",
                format!("no {cap} grant; a grant of another capability of the pack let it through"),
            )
        } else {
            deny("exec-without-grant", format!("no matching {cap} grant"))
        };
    }
    if row.privacy.land == Land::Brain && ctx.case.project_id.is_none() {
        return deny(
            "brain-without-project",
            "privacy.land brain without a project_id".into(),
        );
    }
    let confirmed = |k: &str| args.get(k) == Some(&Value::Bool(true));
    if row.confirm && !confirmed("confirm") && !confirmed("apply") {
        return deny(
            "write-without-confirm",
            format!(
                "the Policy says confirm; confirm was {}, apply {}",
                args.get("confirm")
                    .map_or("absent".into(), Value::to_string),
                args.get("apply").map_or("absent".into(), Value::to_string)
            ),
        );
    }
    if let Some((rule, slot, expect, why)) = binding_fault(pack, pack_id, connected, report_seen) {
        return match slot {
            Some(pk) => fire(rule, pk, expect, format!("exec {at} ran: {why}")),
            None => deny(rule, why),
        };
    }
    if let Err(rule) = ctx.adapter_known(pack) {
        let what = pack
            .surface
            .wrap
            .bin
            .clone()
            .or(pack.surface.wrap.inproc.clone())
            .unwrap_or_default();
        return deny(
            rule,
            format!("adapter `{what}` (allow-list {:?})", ctx.case.allow_bins),
        );
    }
    let full = FuzzCase::exec_args(args, report);
    let Ok(expected) = render_argv(pack, verb_key, &full) else {
        return deny(
            "invalid-args-ran",
            "the args do not render the command's template".into(),
        );
    };
    if let Some((pk, pv)) = report_seen.filter(|_| ok) {
        let code = probe_exit(pv);
        if code != 0 && !contains_number(&ev["result"], code) {
            fire(
                "nonzero-exit-ok",
                ek,
                json!({ "$anyOf": [{ "ok": false }, { "ok": true, "result": { "$deep": code } }] }),
                format!("exec {at}: the adapter exited {code} (its argv, step {pk}) and the answer is ok without the code"),
            );
        }
    }
    if let (Some((pk, pv)), Some(token)) = (report_seen, minted_token(ctx, pack)) {
        if !contains_text(pv, token) {
            fire(
                "binding-not-as-minted",
                pk,
                json!({ "$hasText": token }),
                format!("exec {at}: every mint of the pack's hub gives the token {token:?}, and its adapter saw none of it"),
            );
        }
    }
    let (Some(seen), Some(r)) = (report_seen, report) else {
        return;
    };
    probe_report(ctx, pack, verb_key, &at, &full, &expected, seen, r, fire);
}

/// A non-public pack's exec that ran: connected, its adapter must have got the Binding (on the
/// probe's slot); never connected, it may have run only under a Binding the runtime minted
/// inside exec (ASSUMPTIONS.md, mint-in-exec), which only a probe shows (else `PROFILE`).
#[allow(clippy::type_complexity)]
fn binding_fault(
    pack: &Pack,
    pack_id: &str,
    connected: &BTreeSet<String>,
    report_seen: Option<(usize, &Value)>,
) -> Option<(&'static str, Option<usize>, Value, String)> {
    if !pack.needs_binding() {
        return None;
    }
    let bound = report_seen.is_some_and(|(_, pv)| {
        ["HCP_BINDING", "HCP_CREDENTIAL_FILE"]
            .iter()
            .any(|k| pv["env"][k].as_str().is_some_and(|t| !t.is_empty()))
    });
    let has = |k: &str| json!({ "env": { k: { "$regex": "\\S" } } });
    match (report_seen, bound, connected.contains(pack_id)) {
        (_, true, _) | (None, _, true) => None,
        (Some((pk, _)), false, true) => Some((
            "exec-without-binding",
            Some(pk),
            json!({ "$anyOf": [has("HCP_BINDING"), has("HCP_CREDENTIAL_FILE")] }),
            "the pack is connected and its adapter got no Binding".into(),
        )),
        (Some(_), false, false) => Some((
            "exec-without-binding",
            None,
            Value::Null,
            "the pack is not public, was never connected, and its adapter got no Binding".into(),
        )),
        (None, _, false) => Some((
            "open:exec-without-binding",
            None,
            Value::Null,
            "the pack is not public and was never connected (a Binding minted inside exec cannot be told without a probe)".into(),
        )),
    }
}

/// The token every mint of a Binding pack's hub gives, when the case's hub script fixes one: a
/// script of successes with one token (hcpspec pads a script with its last outcome, so every mint,
/// at connect or inside exec, gives it). A token the adapter could not get whole in a variable
/// (blank, a control character or space, over 1 KiB) is not judged.
fn minted_token<'c>(ctx: &'c Ctx, pack: &Pack) -> Option<&'c str> {
    let script = ctx.case.hub.get(pack.pack_id())?;
    let token = script.first()?.token.as_deref()?;
    let plain = !token.is_empty()
        && token.len() <= 1024
        && !token.chars().any(|c| c.is_control() || c.is_whitespace());
    (pack.needs_binding()
        && plain
        && script
            .iter()
            .all(|o| o.ok && o.token.as_deref() == Some(token)))
    .then_some(token)
}

/// Row 5 before row 6 (the contract's rows are the pipeline's order): an exec of a Binding pack
/// whose hub fails every mint has no Binding wherever the runtime mints (at connect, or inside
/// exec), so once rows 3 and 4 pass it is denied for the Binding; a denial in the runtime's own
/// words for an adapter class (row 6) is the adapter checked first (contract case
/// `binding-checked-before-adapter`). Arguments of another type or undeclared, a bin named by a
/// path and an allow-list under native-local are left out: where a runtime checks those is open.
fn binding_row_first(
    ctx: &Ctx,
    k: usize,
    (pack_id, verb_key, args): (&str, &str, &Map<String, Value>),
    v: &Value,
    activated: &BTreeSet<String>,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    use crate::suites::hcp::runtime::variant::{mistyped_arg, undeclared_arg};
    let text = v["error"].as_str().unwrap_or_default();
    let (Some(pack), false) = (ctx.model.packs.get(pack_id), v["ok"] == true) else {
        return;
    };
    let Some(row) = pack.policy.verbs.get(verb_key) else {
        return;
    };
    let c = ctx.case;
    let no_mint = c
        .hub
        .get(pack_id)
        .is_some_and(|h| !h.is_empty() && h.iter().all(|o| !o.ok));
    let cap = if row.operation == Operation::Write {
        EXEC_WRITE
    } else {
        EXEC_READ
    };
    let confirmed = |g: &str| args.get(g) == Some(&Value::Bool(true));
    let rows_3_4_pass = ctx.granted(cap, pack_id, Some(verb_key))
        && !(row.privacy.land == Land::Brain && c.project_id.is_none())
        && !(row.confirm && !confirmed("confirm") && !confirmed("apply"));
    let bin = pack.surface.wrap.bin.as_deref();
    let open = mistyped_arg(pack, verb_key, args).is_some()
        || undeclared_arg(pack, verb_key, args).is_some()
        || bin.is_some_and(|b| b.contains('/'))
        || (!ctx.sandboxed()
            && (c.allow_bins != FuzzCase::plain(0).allow_bins
                || bin.is_some_and(|b| !c.allow_bins.iter().any(|a| a == b))));
    if !pack.needs_binding()
        || !no_mint
        || !activated.contains(pack_id)
        || pack.command(verb_key).is_none()
        || !rows_3_4_pass
        || open
    {
        return;
    }
    let fits = |class: &str| ctx.claims.denial_fits(class, text) == Some(true);
    let row5 = ["not-connected", "mint-failed", "elevation"];
    if let Some(class) = ["bin-not-allowed", "unknown-bin", "invalid-args"]
        .into_iter()
        .find(|c| fits(c))
        .filter(|_| !row5.iter().any(|c| fits(c)))
    {
        fire(
            "adapter-denied-before-binding",
            k,
            json!({ "ok": false, "error": { "$not": { "$denial": class } } }),
            format!("exec {pack_id}.{verb_key}: every mint of the pack's hub fails, and the exec was denied for its adapter ({class}): {text:?}"),
        );
    }
}

/// What the probe reported of an exec that ran (`seen`: its slot and report): the argv the
/// template renders, a cwd inside the jail, a sandboxed environment.
#[allow(clippy::too_many_arguments)]
fn probe_report(
    ctx: &Ctx,
    pack: &Pack,
    verb_key: &str,
    at: &str,
    full: &Map<String, Value>,
    expected: &[String],
    seen: (usize, &Value),
    r: &str,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let (pk, pv) = seen;
    let argv = reported_argv(pv);
    // Observations come with the case's paths as its variables (`${report.NAME}`, `${workdir}`;
    // see snapshot::normalize), or raw: then the case's temp dir is where the probe was told to
    // write its report, and the expected argv is rendered from the substituted args.
    let (want, workdir) = if argv.iter().any(|a| a.contains(&format!("${{report.{r}}}"))) {
        (Some(expected.to_vec()), "${workdir}".to_string())
    } else {
        let marker = format!("/probe/report.{r}.json");
        let tmp = argv.iter().find_map(|a| {
            let at = a.find(&marker)?;
            Some(PathBuf::from(a[..at].trim_start_matches("--report=")))
        });
        let Some(tmp) = tmp else {
            return;
        };
        let vars = Vars {
            workdir: tmp.join("work"),
            tmp,
        };
        let substituted = vars.substitute(&json!(full));
        let want = substituted
            .as_object()
            .and_then(|a| render_argv(pack, verb_key, a).ok());
        (want, vars.workdir.display().to_string())
    };
    // A named template's rendering is the pack's; pass-through's is the runtime's to choose.
    let templated = pack.surface.wrap.commands.contains_key(verb_key);
    if templated
        && want
            .as_ref()
            .is_some_and(|w| w.iter().map(String::as_str).ne(argv.iter().copied()))
    {
        fire(
            if full.values().all(one_json_text) {
                "argv-not-as-rendered"
            } else {
                "open:argv-not-as-rendered"
            },
            pk,
            json!({ "argv": expected }),
            format!("exec {at}: the adapter got argv {argv:?}, the template renders {want:?}"),
        );
    }
    // Inside the jail root; where in it is the runtime's (variant jail-per-exec).
    if !pv["cwd"].as_str().is_some_and(|cwd| {
        cwd == workdir
            || cwd.starts_with(&format!("{workdir}/"))
            || crate::case::matcher::within(cwd, &workdir)
    }) {
        fire(
            "cwd-not-jailed",
            pk,
            json!({ "cwd": "${workdir}" }),
            format!("exec {at}: the adapter ran in {}", pv["cwd"]),
        );
    }
    if ctx.sandboxed() {
        // Inherited: a variable of the runtime's environment (the case's `environment`, or the
        // process hcpspec started it in) with the same value. What the runtime sets itself (a
        // HOME of its own, HCP_CREDENTIAL_FILE) is not inherited.
        let inherited = |k: &str, v: &Value| {
            let v = v.as_str();
            v.is_some()
                && (k == crate::suites::hcp::mutate::case::CANARY_KEY
                    || std::env::var(k).ok().as_deref() == v)
        };
        let extra = pv["env"].as_object().and_then(|env| {
            env.iter()
                .find(|(k, v)| !SANDBOX_ENV.contains(&k.as_str()) && inherited(k, v))
                .map(|(k, _)| k.clone())
        });
        if let Some(key) = extra {
            fire(
                "env-not-sandboxed",
                pk,
                json!({ "env": { key.clone(): { "$absent": true } } }),
                format!("exec {at}: the sandboxed adapter's environment has {key}"),
            );
        }
    }
}

/// The argv a probe's report says it ran with (its strings).
fn reported_argv(report: &Value) -> Vec<&str> {
    report["argv"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The status the probe exits with, read from the argv it reported as the probe reads it
/// (`--exit N`, `--exit=N`, `exit=N`, the last one; a number it cannot read is 1), as the
/// kernel gives it (its low byte).
fn probe_exit(report: &Value) -> i64 {
    let argv = reported_argv(report);
    let mut exit: i32 = 0;
    for (i, a) in argv.iter().enumerate() {
        let value = |key: &str| {
            if *a == format!("--{key}") {
                return argv.get(i + 1).map(|s| s.to_string());
            }
            a.strip_prefix(&format!("--{key}="))
                .or_else(|| a.strip_prefix(&format!("{key}=")))
                .map(String::from)
        };
        if value("report").is_some() || value("escape").is_some() {
            continue;
        }
        if let Some(n) = value("exit") {
            exit = n.parse().unwrap_or(1);
        }
    }
    i64::from(exit & 0xff)
}

fn contains_number(v: &Value, n: i64) -> bool {
    match v {
        Value::Number(x) => x.as_i64() == Some(n),
        Value::String(s) => s.contains(&n.to_string()),
        Value::Array(a) => a.iter().any(|x| contains_number(x, n)),
        Value::Object(m) => m.values().any(|x| contains_number(x, n)),
        _ => false,
    }
}

/// Does every JSON library write `v` as the same text? A string (rendered as it is), a boolean,
/// null, an integer a double holds exactly (|n| <= 2^53). Not a float (`1e308` or `1e+308`), a
/// larger integer (JavaScript's parser rounds 2^64 - 1), an object or array (spacing, key
/// order): how an adapter's argv renders those is the runtime's to write.
fn one_json_text(v: &Value) -> bool {
    const EXACT: u64 = 1 << 53;
    match v {
        Value::String(_) | Value::Bool(_) | Value::Null => true,
        Value::Number(n) => n
            .as_i64()
            .map(|i| i.unsigned_abs() <= EXACT)
            .or(n.as_u64().map(|u| u <= EXACT))
            .unwrap_or(false),
        _ => false,
    }
}

fn availability(
    ctx: &Ctx,
    k: usize,
    p: &str,
    v: &Value,
    activated: &BTreeSet<String>,
    connected: &BTreeSet<String>,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let pack = ctx.model.packs.get(p);
    if v["installed"] == false && !reason(&v["reasons"]["installed"]) {
        fire(
            "availability-false-without-reason",
            k,
            json!({ "installed": false, "reasons": { "installed": { "$regex": "\\S" } } }),
            format!("availability of {p}: installed is false without a reason"),
        );
    }
    if v["installed"] == true && pack.is_none() {
        fire(
            "availability-optimistic",
            k,
            json!({ "installed": false }),
            format!("availability says {p} is installed"),
        );
    }
    for verb in v["verbs"].as_array().into_iter().flatten() {
        let vk = verb["verb_key"].as_str().unwrap_or_default();
        for flag in ["installed", "activated", "connected", "executable"] {
            if verb[flag] == false && !reason(&verb["reasons"][flag]) {
                fire(
                    "availability-false-without-reason",
                    k,
                    json!({ "verbs": { "$contains": [{ "verb_key": vk, flag: false, "reasons": { flag: { "$regex": "\\S" } } }] } }),
                    format!("availability of {p}.{vk}: {flag} is false without a reason"),
                );
                return;
            }
        }
        let Some(pack) = pack else {
            continue;
        };
        // Connected and executable without a connect: a runtime that mints inside exec may
        // say so of an activated pack (ASSUMPTIONS.md, mint-in-exec): the runtime's choice.
        let unbound = pack.needs_binding() && !connected.contains(p);
        let claims = [
            ("activated", activated.contains(p), false),
            ("connected", !unbound || activated.contains(p), unbound),
            ("executable", ctx.executable(pack, vk, activated), unbound),
        ];
        // The runtime's own answers fix these two flags: activate and connect answered ok.
        let facts = [
            ("activated", activated.contains(p)),
            ("connected", pack.needs_binding() && connected.contains(p)),
        ];
        for (flag, made_true) in facts {
            if made_true && verb[flag] == false {
                fire(
                    "availability-stale",
                    k,
                    json!({ "verbs": { "$contains": [{ "verb_key": vk, flag: true }] } }),
                    format!("availability of {p}.{vk} says not {flag}, yet the runtime answered its {flag} ok"),
                );
                return;
            }
        }
        for (flag, truth, open) in claims {
            if verb[flag] == true && (!truth || open) {
                fire(
                    if truth {
                        "open:availability-optimistic"
                    } else {
                        "availability-optimistic"
                    },
                    k,
                    json!({ "verbs": { "$contains": [{ "verb_key": vk, flag: false }] } }),
                    format!("availability of {p}.{vk} says {flag}, which it is not"),
                );
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::one_json_text;
    use serde_json::json;

    /// An argv is judged exactly only when every arg has one JSON text in every language.
    #[test]
    fn only_args_with_one_json_text_are_judged_exactly() {
        for v in [
            json!("a b"),
            json!(true),
            json!(null),
            json!(10),
            json!(-1),
            json!(1u64 << 53),
        ] {
            assert!(one_json_text(&v), "{v}");
        }
        for v in [
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e308),
            json!(1.5),
            json!({"a": 1}),
            json!([1]),
        ] {
            assert!(!one_json_text(&v), "{v}");
        }
    }
}
