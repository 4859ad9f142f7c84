//! Expectations: a runtime's declared known divergences (cf. rustls' BoGo config, WPT
//! metadata). A run fails only on unexpected results; an expected failure that now passes is
//! stale. One JSON file:
//!
//! ```json
//! { "runtime": "acme",
//!   "expectations": [
//!     { "case": "contract::07-sandbox::*", "expect": "skip", "reason": "no sandbox yet", "issue": "https://…" },
//!     { "case": "contract::04-confirm::confirm-string-true-refused", "expect": "fail", "reason": "…" } ] }
//! ```
//! `case` is a case name or a glob over names; the first matching entry applies. `runtime`,
//! when given, must name the runtime the file is applied to (docs/expectations.md).

use super::{CaseResult, Verdict};
use crate::case::Level;
use crate::error::BadInput;
use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expect {
    Fail,
    Skip,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub case: String,
    pub expect: Expect,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    runtime: Option<String>,
    expectations: Vec<Entry>,
}

/// The most globs an expectations file may hold: each is compiled to a matcher of some 36 KiB
/// (40 000 took 1.4 GB). A case named whole is compared as it is, and any number may be.
pub const MAX_GLOBS: usize = 1024;

/// An entry's `case`: a name, or a glob over names.
#[derive(Debug)]
enum Pattern {
    Name(String),
    Glob(GlobMatcher),
}

impl Pattern {
    fn is_match(&self, name: &str) -> bool {
        match self {
            Pattern::Name(n) => n == name,
            Pattern::Glob(g) => g.is_match(name),
        }
    }
}

#[derive(Debug, Default)]
pub struct Expectations {
    entries: Vec<(Entry, Pattern)>,
    /// The runtime the file says it is written for (`runtime`), and the file, as shown.
    runtime: Option<String>,
    file: String,
}

impl Expectations {
    /// Load and check a file; every problem is one line naming the file and the JSON pointer.
    pub fn load(path: &Path) -> Result<Expectations, BadInput> {
        let at = |p: &str, m: String| {
            if p.is_empty() {
                format!("{}: {m}", path.display())
            } else {
                format!("{}:{p}: {m}", path.display())
            }
        };
        let text = crate::input::read_capped(path, crate::input::MAX_CASE)
            .map_err(|e| at("", String::from(e)))?;
        let file: File = serde_json::from_str(&text)
            .map_err(|e| at("", format!("line {} column {}: {e}", e.line(), e.column())))?;
        let (mut entries, mut globs) = (Vec::new(), 0);
        for (i, e) in file.expectations.into_iter().enumerate() {
            if e.reason.trim().is_empty() {
                return Err(BadInput(at(
                    &format!("/expectations/{i}/reason"),
                    "every expectation needs a reason".into(),
                )));
            }
            let pattern = match e.case.contains(['*', '?', '[', '{']) {
                false => Pattern::Name(e.case.clone()),
                true if globs == MAX_GLOBS => {
                    return Err(BadInput(at(
                        &format!("/expectations/{i}/case"),
                        format!("more than {MAX_GLOBS} globs: name cases, or glob fewer wider"),
                    )))
                }
                true => {
                    globs += 1;
                    Pattern::Glob(
                        Glob::new(&e.case)
                            .map_err(|x| at(&format!("/expectations/{i}/case"), x.to_string()))?
                            .compile_matcher(),
                    )
                }
            };
            entries.push((e, pattern));
        }
        if file.runtime.as_deref().is_some_and(|r| r.trim().is_empty()) {
            return Err(BadInput(at("/runtime", "an empty runtime names none: give its --name or initialize name, or leave the field out".into())));
        }
        Ok(Expectations {
            entries,
            runtime: file.runtime,
            file: path.display().to_string(),
        })
    }

    /// Are these expectations for this runtime? When the file names one (`runtime`), it must
    /// be what the runtime is called: its `--name`, its `initialize` name (alone or with its
    /// version: `minihcp`, `minihcp 0.1.0`) or its adapter spec. Else one line naming the file
    /// and the field: bad input, as declarations for another runtime would excuse failures
    /// that are not its own.
    pub fn check_runtime(
        &self,
        spec: &str,
        label: Option<&str>,
        info: &serde_json::Value,
    ) -> Result<(), BadInput> {
        let Some(want) = &self.runtime else {
            return Ok(());
        };
        let said = |p: &str| info.pointer(p).and_then(serde_json::Value::as_str);
        let name = said("/runtime/name");
        let versioned = name
            .zip(said("/runtime/version"))
            .map(|(n, v)| format!("{n} {v}"));
        let names: Vec<&str> = [label, name, versioned.as_deref(), Some(spec)]
            .into_iter()
            .flatten()
            .collect();
        if names.contains(&want.as_str()) {
            return Ok(());
        }
        let quiet = |s: &str| crate::snapshot::contain_text(s).escape_debug().to_string();
        Err(BadInput(format!(
            "{}:/runtime: these expectations are `{}`'s, applied to `{}`, which is called {}: run them against their runtime, or name it with --name",
            self.file,
            quiet(want),
            quiet(spec),
            names.iter().map(|n| format!("`{}`", quiet(n))).collect::<Vec<_>>().join(" or ")
        )))
    }

    pub fn lookup(&self, name: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|(_, g)| g.is_match(name))
            .map(|(e, _)| e)
    }

    /// Entries that match none of the given names (likely typos or removed cases).
    pub fn unused<'a>(&'a self, names: &[String]) -> Vec<&'a Entry> {
        self.entries
            .iter()
            .filter(|(_, g)| !names.iter().any(|n| g.is_match(n)))
            .map(|(e, _)| e)
            .collect()
    }
}

/// What a result means once expectations are taken into account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Pass,
    /// A failure nobody declared.
    Fail,
    /// A declared failure that still fails.
    ExpectedFail,
    /// A declared failure that now passes: the declaration is out of date.
    Stale,
    /// Declared as skipped: not run.
    Skip,
    /// The runtime answered "not implemented" (never counts as a pass).
    Unimplemented,
    Error,
    /// A case of a later protocol version than the target states (`run::versions`): it ran and
    /// its verdict is reported, but it is not scored (never fails the run).
    NotScored,
}

impl Outcome {
    pub fn of(result: &CaseResult, entry: Option<&Entry>) -> Outcome {
        let ran = !matches!(result.verdict, Verdict::Skip { .. })
            && entry.is_none_or(|e| e.expect != Expect::Skip);
        if ran && result.annotations.not_scored.is_some() {
            return Outcome::NotScored;
        }
        match (&result.verdict, entry.map(|e| e.expect)) {
            (_, Some(Expect::Skip)) => Outcome::Skip,
            (Verdict::Pass, Some(Expect::Fail)) => Outcome::Stale,
            (Verdict::Pass, None) => Outcome::Pass,
            (Verdict::Fail(_), Some(Expect::Fail))
            | (Verdict::Error { .. }, Some(Expect::Fail)) => Outcome::ExpectedFail,
            (Verdict::Fail(_), None) => Outcome::Fail,
            (Verdict::Skip { .. }, _) => Outcome::Skip,
            (Verdict::Unimplemented { .. }, Some(Expect::Fail)) => Outcome::ExpectedFail,
            (Verdict::Unimplemented { .. }, None) => Outcome::Unimplemented,
            (Verdict::Error { .. }, None) => Outcome::Error,
        }
    }

    /// Does this outcome fail the run? Unexpected MUST failures, errors and unimplemented
    /// methods always do (an expectation with a reason excuses them); stale expectations only
    /// under `--strict-expectations`. SHOULD, MAY and PROFILE cases never fail a run.
    pub fn fails_run(self, level: Level, strict: bool) -> bool {
        match self {
            Outcome::Fail | Outcome::Error | Outcome::Unimplemented => level == Level::MUST,
            Outcome::Stale => strict,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Failure;
    use serde_json::Value;

    fn result(verdict: Verdict) -> CaseResult {
        CaseResult {
            name: "contract::04-confirm::x".into(),
            section: "4".into(),
            level: Level::MUST,
            spec: String::new(),
            title: String::new(),
            assumption: None,
            verdict,
            observations: vec![],
            unclassified: vec![],
            micros: 0,
            annotations: Default::default(),
        }
    }

    #[test]
    fn classify() {
        let fail = Verdict::Fail(Failure {
            step: 1,
            action: "exec".into(),
            path: String::new(),
            message: String::new(),
            expected: Value::Null,
            actual: Value::Null,
        });
        let xf = Entry {
            case: "*".into(),
            expect: Expect::Fail,
            reason: "r".into(),
            issue: None,
        };
        let xs = Entry {
            expect: Expect::Skip,
            ..xf.clone()
        };
        assert_eq!(Outcome::of(&result(Verdict::Pass), None), Outcome::Pass);
        assert_eq!(Outcome::of(&result(fail.clone()), None), Outcome::Fail);
        assert_eq!(Outcome::of(&result(fail), Some(&xf)), Outcome::ExpectedFail);
        assert_eq!(
            Outcome::of(&result(Verdict::Pass), Some(&xf)),
            Outcome::Stale
        );
        let unimplemented = Verdict::Unimplemented { reason: "x".into() };
        assert_eq!(
            Outcome::of(&result(unimplemented.clone()), None),
            Outcome::Unimplemented
        );
        assert_eq!(
            Outcome::of(&result(unimplemented.clone()), Some(&xf)),
            Outcome::ExpectedFail
        );
        assert_eq!(
            Outcome::of(&result(unimplemented), Some(&xs)),
            Outcome::Skip
        );
        assert!(Outcome::Fail.fails_run(Level::MUST, false));
        assert!(!Outcome::Fail.fails_run(Level::SHOULD, false));
        assert!(!Outcome::Stale.fails_run(Level::MUST, false));
        assert!(Outcome::Stale.fails_run(Level::MUST, true));
        assert!(Outcome::Unimplemented.fails_run(Level::MUST, false));
        assert!(!Outcome::Unimplemented.fails_run(Level::MAY, false));
        assert!(!Outcome::Fail.fails_run(Level::PROFILE, true));
    }

    #[test]
    fn load_names_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(
            &p,
            r#"{"expectations":[{"case":"a","expect":"fail","reason":" "}]}"#,
        )
        .unwrap();
        assert!(Expectations::load(&p)
            .unwrap_err()
            .0
            .ends_with(":/expectations/0/reason: every expectation needs a reason"));
        std::fs::write(&p, r#"{"expectations":[{"case":"contract::0[4-confirm::*","expect":"fail","reason":"r"}]}"#).unwrap();
        assert!(Expectations::load(&p)
            .unwrap_err()
            .0
            .contains("/expectations/0/case"));
        std::fs::write(
            &p,
            r#"{"expectations":[{"case":"contract::04-*","expect":"skip","reason":"r"}]}"#,
        )
        .unwrap();
        let e = Expectations::load(&p).unwrap();
        assert_eq!(
            e.lookup("contract::04-confirm::x").map(|e| e.expect),
            Some(Expect::Skip)
        );
        assert!(e.lookup("contract::05-binding::x").is_none());
    }
}
