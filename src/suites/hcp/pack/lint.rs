//! Contract point 2: lint on install. Every issue is listed; any issue rejects the install.
//! Deterministic: issues come in a fixed rule order, then document order.

use super::load::{POLICY, SKILL, SURFACE};
use super::{Issue, Pack};
use crate::pointer::escape;
use std::collections::BTreeSet;

pub fn lint(pack: &Pack) -> Vec<Issue> {
    let s = &pack.surface;
    let p = &pack.policy;
    let mut issues = Vec::new();

    let mut seen = BTreeSet::new();
    for (i, c) in s.commands.iter().enumerate() {
        if !seen.insert(c.verb_key.as_str()) {
            issues.push(Issue::new(
                SURFACE,
                &format!("/commands/{i}/verb_key"),
                "verb-key-unique",
                format!("verb_key `{}` is declared twice", c.verb_key),
            ));
        }
    }
    for (i, c) in s.commands.iter().enumerate() {
        if !p.verbs.contains_key(&c.verb_key) {
            issues.push(Issue::new(
                POLICY,
                &format!("/verbs/{}", escape(&c.verb_key)),
                "policy-covers-command",
                format!(
                    "no Policy row for command `{}` (surface.json /commands/{i})",
                    c.verb_key
                ),
            ));
        }
    }
    for (i, t) in s.sense.iter().flat_map(|d| d.triggers.iter()).enumerate() {
        if !p.triggers.contains_key(t) {
            issues.push(Issue::new(
                POLICY,
                &format!("/triggers/{}", escape(t)),
                "policy-covers-trigger",
                format!("no Policy row for Sense trigger `{t}` (surface.json /sense/triggers/{i})"),
            ));
        }
    }
    match &pack.skill {
        None => issues.push(Issue::new(
            SKILL,
            "",
            "skill-present",
            "HARNESS.md (the Skill) is missing",
        )),
        Some(text) if text.trim().is_empty() => issues.push(Issue::new(
            SKILL,
            "",
            "skill-present",
            "HARNESS.md (the Skill) is empty",
        )),
        Some(_) => {}
    }
    if !s.wrap.pass_through && s.wrap.commands.is_empty() {
        issues.push(Issue::new(
            SURFACE,
            "/wrap",
            "wrap-named-or-pass-through",
            "wrap has neither named commands nor `pass_through: true`",
        ));
    } else if !s.wrap.pass_through {
        for (i, c) in s.commands.iter().enumerate() {
            if !s.wrap.commands.contains_key(&c.verb_key) {
                issues.push(Issue::new(
                    SURFACE,
                    &format!("/commands/{i}"),
                    "wrap-covers-command",
                    format!(
                        "command `{}` has no named wrap command and wrap is not pass_through",
                        c.verb_key
                    ),
                ));
            }
        }
    }
    if !s.public && s.binding.is_none() {
        issues.push(Issue::new(
            SURFACE,
            "/binding",
            "binding-declared",
            "a pack that is not public must declare its Binding mode and hub",
        ));
    }
    issues
}
