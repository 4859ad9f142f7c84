//! The differential oracle of `hcpspec fuzz`: agreement with the reference runtime on the same
//! case, step by step. A difference is `PROFILE` (the spec leaves the point to the runtime)
//! unless the case leaves the runtime no choice: then it is a finding (docs/fuzzing.md).

use super::oracle::{Ctx, Violation, FIXED};
use crate::suites::hcp::mutate::case::{FStep, FuzzCase, Slot};
use crate::suites::hcp::pack::{self, Land, Operation};
use crate::suites::hcp::runtime::adapter::render_argv;
use crate::suites::hcp::runtime::reference::authz::{CONNECT, ELEVATE, EXEC_READ, EXEC_WRITE};
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Differential agreement with the reference's run of the same case, step by step.
pub fn differential(
    ctx: &Ctx,
    obs: &[Option<&Value>],
    reference: &[Option<&Value>],
) -> Vec<Violation> {
    let mut out = Vec::new();
    // Disagreeing with the reference is no fault where the spec leaves the point open: a
    // differential finding is PROFILE unless fired as `fixed:RULE`, where the case arranged every
    // open point the permissive way (the runtime refused what the spec lets run) or has one
    // fault (whose denial class the spec fixes, judged in the runtime's words).
    let mut fire = |rule: &'static str, slot: usize, expect: Value, message: String| {
        let (rule, profile) = match rule.strip_prefix(FIXED) {
            Some(r) => (super::oracle::rule(r).name, false),
            None => (rule, true),
        };
        out.push(Violation {
            rule,
            slot,
            expect,
            message,
            differential: true,
            profile,
        })
    };
    let mut seen = Seen::default();
    for (k, slot) in ctx.layout.iter().enumerate() {
        let (Some(a), Some(b)) = (
            obs.get(k).copied().flatten(),
            reference.get(k).copied().flatten(),
        ) else {
            break;
        };
        let step = match slot {
            Slot::Install => {
                if a["ok"] != b["ok"] {
                    // A pack that loads and lints clean must install (rows 1 and 2 reject on
                    // an issue, and only then).
                    fire(
                        if b["ok"] == true {
                            "fixed:differential-install"
                        } else {
                            "differential-install"
                        },
                        k,
                        json!({ "ok": b["ok"] }),
                        format!("install ok is {}, the reference says {}", a["ok"], b["ok"]),
                    );
                    break; // the rest runs on one side only
                }
                continue;
            }
            Slot::Probe(_) => continue,
            Slot::Step(i) => &ctx.case.steps[*i],
        };
        differ(ctx, k, step, a, b, &seen, &mut fire);
        seen.note(step, a);
    }
    out
}

/// What the runtime under test said so far of a case: the packs it activated and connected.
#[derive(Default)]
struct Seen {
    activated: BTreeSet<String>,
    connected: BTreeSet<String>,
}

impl Seen {
    fn note(&mut self, step: &FStep, a: &Value) {
        match step {
            FStep::Activate(ids) => {
                for (j, r) in a.as_array().into_iter().flatten().enumerate() {
                    if r["ok"] == true {
                        let pid = r["pack_id"].as_str().or(ids.get(j).map(String::as_str));
                        self.activated.extend(pid.map(String::from));
                    }
                }
            }
            FStep::Connect(p) if a["ok"] == true => {
                self.connected.insert(p.clone());
            }
            _ => {}
        }
    }
}

/// The faults an exec has by the spec's pipeline (rows 3 to 6): all of them, those of the first
/// row that has one (the rows' order is fixed, the order within a row is not), and whether an open
/// point could deny it (vectors/contract/ASSUMPTIONS.md): the runtime never activated the pack
/// (where activation sits, what activates), an arg of another type or undeclared (typed-args,
/// declared-args-only), a hub script with a failed mint (minted in exec instead of at connect),
/// a bin given as a path the allow-list names (bin-path-allowed), an allow-list under
/// native-local that leaves the bin out, the default one too (native-local-allow-list), a Binding pack never connected (mint-in-exec).
fn exec_faults(
    ctx: &Ctx,
    seen: &Seen,
    pack_id: &str,
    verb: &str,
    args: &Map<String, Value>,
) -> (usize, usize, bool) {
    let Some(pack) = ctx.model.packs.get(pack_id) else {
        return (1, 1, false);
    };
    let Some(row) = pack.runnable(verb) else {
        return (1, 1, false);
    };
    let c = ctx.case;
    let bin = pack.surface.wrap.bin.as_deref();
    let open = !seen.activated.contains(pack_id)
        || crate::suites::hcp::runtime::variant::mistyped_arg(pack, verb, args).is_some()
        || crate::suites::hcp::runtime::variant::undeclared_arg(pack, verb, args).is_some()
        || bin.is_some_and(|b| b.contains('/') && c.allow_bins.iter().any(|a| a == b))
        || (!ctx.sandboxed()
            && (c.allow_bins != FuzzCase::plain(0).allow_bins
                || bin.is_some_and(|b| !c.allow_bins.iter().any(|a| a == b))));
    // Row 5's open points: never connected, a runtime minting inside exec asks the hub then,
    // with its own checks. Row 5 comes after rows 3 and 4, so they leave those rows' class fixed.
    let binding_open = c.hub.get(pack_id).is_some_and(|h| h.iter().any(|o| !o.ok))
        || (pack.needs_binding() && !seen.connected.contains(pack_id));
    let cap = if row.operation == Operation::Write {
        EXEC_WRITE
    } else {
        EXEC_READ
    };
    let confirmed = |k: &str| args.get(k) == Some(&Value::Bool(true));
    // By step: row 3's grant, then its land ("The five capability axes and evaluation order":
    // grant before land), 4 (confirm), 6 (the adapter); row 5's Binding is open above.
    let rows = [
        vec![!ctx.granted(cap, pack_id, Some(verb))],
        vec![row.privacy.land == Land::Brain && c.project_id.is_none()],
        vec![row.confirm && !confirmed("confirm") && !confirmed("apply")],
        vec![
            ctx.adapter_known(pack).is_err(),
            render_argv(pack, verb, args).is_err(),
        ],
    ];
    let count = |r: &Vec<bool>| r.iter().filter(|f| **f).count();
    let at = rows.iter().position(|r| count(r) > 0);
    let first = at.map_or(0, |i| count(&rows[i]));
    // The first fault before row 5 (grant, land, confirm) decides whatever row 5 does.
    let open = open || (binding_open && at.is_none_or(|i| i > 2));
    (rows.iter().map(count).sum(), first, open)
}

/// What a finding expects of an answer the reference (`b`) gave: its `ok`, and its denial's
/// class where it denied.
fn class_expect(ctx: &Ctx, b: &Value) -> Value {
    let mut e = json!({ "ok": b["ok"] });
    if let Some(class) = b["error"].as_str().and_then(|t| ctx.classes.of(t)) {
        e["error"] = json!({ "$denial": class });
    }
    e
}

/// One step as the runtime (`a`) and the reference (`b`) observed it: a violation for each
/// difference that matters.
fn differ(
    ctx: &Ctx,
    k: usize,
    step: &FStep,
    a: &Value,
    b: &Value,
    seen: &Seen,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    match step {
        FStep::Activate(_) => {
            let (xs, ys) = (
                a.as_array().cloned().unwrap_or_default(),
                b.as_array().cloned().unwrap_or_default(),
            );
            for (x, y) in xs.iter().zip(&ys) {
                if x["ok"] != y["ok"] {
                    fire(
                        "differential-activate",
                        k,
                        json!({ "$contains": [{ "pack_id": y["pack_id"], "ok": y["ok"] }] }),
                        format!(
                            "activation of {} is {}, the reference says {}",
                            y["pack_id"], x["ok"], y["ok"]
                        ),
                    );
                    break;
                }
            }
        }
        FStep::Connect(p) => {
            if a["ok"] != b["ok"] {
                // Refused though activated, granted and minted by a hub whose script fails no
                // mint (a mint in exec may have used another outcome): over-strict.
                let fixed = b["ok"] == true
                    && !ctx.claims.no_connect
                    && seen.activated.contains(p)
                    && ctx.granted(CONNECT, p, None)
                    && ctx.model.packs.get(p).is_some_and(|pk| {
                        pk.surface.binding.as_ref().map(|b| b.mode)
                            != Some(pack::BindingMode::Mothership)
                            || ctx.granted(ELEVATE, p, None)
                    })
                    && !ctx.case.hub.get(p).is_some_and(|h| h.iter().any(|o| !o.ok));
                fire(
                    if fixed {
                        "fixed:differential-connect"
                    } else {
                        "differential-connect"
                    },
                    k,
                    class_expect(ctx, b),
                    format!(
                        "connect {p} ok is {}, the reference says {}",
                        a["ok"], b["ok"]
                    ),
                );
            }
        }
        FStep::Exec {
            pack_id,
            verb_key,
            args,
            report,
        } => {
            let full = FuzzCase::exec_args(args, report);
            differ_exec(ctx, k, (pack_id, verb_key, &full), a, b, seen, fire);
        }
        FStep::Sense {
            pack_id, trigger, ..
        } => {
            if a["accepted"] != b["accepted"] {
                // Dropped though switched on, activated and (a Binding pack) connected: the
                // arrangement every open point allows (ASSUMPTIONS.md, Sense rows).
                let fixed =
                    b["accepted"] == true
                        && ctx.case.sense_enable
                        && seen.activated.contains(pack_id)
                        && ctx.model.packs.get(pack_id).is_some_and(|p| {
                            !p.needs_binding() || seen.connected.contains(pack_id)
                        });
                fire(
                    if fixed {
                        "fixed:differential-sense"
                    } else {
                        "differential-sense"
                    },
                    k,
                    json!({ "accepted": b["accepted"] }),
                    format!(
                        "Sense {pack_id}/{trigger} accepted is {}, the reference says {}",
                        a["accepted"], b["accepted"]
                    ),
                );
            }
        }
        FStep::Availability(p) => {
            if a["installed"] != b["installed"] {
                fire(
                    "differential-availability",
                    k,
                    json!({ "installed": b["installed"] }),
                    format!("availability of {p}: installed differs"),
                );
                return;
            }
            'verbs: for y in b["verbs"].as_array().into_iter().flatten() {
                let Some(x) = a["verbs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|x| x["verb_key"] == y["verb_key"])
                else {
                    continue;
                };
                for flag in ["installed", "activated", "connected", "executable"] {
                    if x[flag] != y[flag] {
                        fire(
                            "differential-availability",
                            k,
                            json!({ "verbs": { "$contains": [{ "verb_key": y["verb_key"], flag: y[flag] }] } }),
                            format!(
                                "availability of {p}.{}: {flag} is {}, the reference says {}",
                                y["verb_key"], x[flag], y[flag]
                            ),
                        );
                        break 'verbs;
                    }
                }
            }
        }
        // The grants held are judged by what the spec fixes (fuzz/grants.rs), not by the reference.
        FStep::Audit | FStep::Grants => {}
    }
}

/// An exec as the runtime (`a`) and the reference (`b`) answered it.
#[allow(clippy::too_many_arguments)]
fn differ_exec(
    ctx: &Ctx,
    k: usize,
    (pack_id, verb_key, full): (&str, &str, &Map<String, Value>),
    a: &Value,
    b: &Value,
    seen: &Seen,
    fire: &mut impl FnMut(&'static str, usize, Value, String),
) {
    let (faults, first, open) = exec_faults(ctx, seen, pack_id, verb_key, full);
    if a["ok"] != b["ok"] {
        // The reference ran it, and nothing the runtime may decide could deny it.
        let fixed = b["ok"] == true && faults == 0 && !open;
        fire(
            if fixed {
                "fixed:differential-exec"
            } else {
                "differential-exec"
            },
            k,
            class_expect(ctx, b),
            format!(
                "exec {pack_id}.{verb_key} ok is {} ({}), the reference says {} ({})",
                a["ok"], a["error"], b["ok"], b["error"]
            ),
        );
    } else if a["ok"] == false {
        let (ta, tb) = (
            a["error"].as_str().unwrap_or_default(),
            b["error"].as_str().unwrap_or_default(),
        );
        // The runtime's text is judged by its own denial map, as `run` judges it:
        // without a map for the class it is unclassified, never a finding.
        if let Some(class) = ctx.classes.of(tb) {
            if ctx.claims.denial_fits(class, ta) == Some(false) {
                // One fault in the first row that has one: its class is the spec's
                // (ASSUMPTIONS.md: "only cases with one fault check a class, or rows
                // 3 → 4 → 5 → 6"); with more in that row, which denies first is open.
                fire(
                        if first == 1 && !open {
                            "fixed:differential-denial-class"
                        } else {
                            "differential-denial-class"
                        },
                        k,
                        class_expect(ctx, b),
                        format!("exec {pack_id}.{verb_key} denied with {ta:?}; the reference's denial is a `{class}` ({tb:?})"),
                    );
            }
        }
    }
}
