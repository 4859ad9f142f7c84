//! Requirement sets per protocol version (docs/vectors.md, "Requirement sets"; docs/CHANGELOG.md):
//! a suite's `suite.json` member `requirements` freezes, for each older version of the protocol
//! a suite speaks, the cases that version required. A target that states an older version is judged by
//! its set: a case outside it still runs and is reported, but is *not scored* (never fails the
//! run, counted apart). A case added from now on is in no older set, so it belongs to the newest
//! version only; a suite without the member scores every case.

use crate::case::SuiteInfo;
use crate::error::BadInput;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Requirements {
    protocol: String,
    current: String,
    versions: Vec<Older>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Older {
    version: String,
    #[allow(dead_code)]
    published: String,
    #[allow(dead_code)]
    #[serde(default)]
    about: String,
    #[allow(dead_code)]
    #[serde(default)]
    computed: String,
    cases: BTreeSet<String>,
}

/// A suite's versions: the newest, and each older one with its frozen case set, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Versions {
    /// The protocol's name without its version (`hcpspec-core`).
    protocol: String,
    current: String,
    older: Vec<Older>,
}

impl Versions {
    /// A suite's versions, from its `suite.json` (`file`, for errors): none (every case scored)
    /// when it has no `requirements`. A bad member is one line naming the file and the member.
    pub fn of(info: &SuiteInfo, file: &Path) -> Result<Versions, BadInput> {
        let Some(value) = &info.requirements else {
            return Ok(Versions::default());
        };
        let at = |m: String| BadInput(format!("{}: /requirements{m}", file.display()));
        let f = Requirements::deserialize(value).map_err(|e| at(format!(": {e}")))?;
        let named = |v: &str| {
            v.strip_prefix(f.protocol.as_str())
                .is_some_and(|r| r.len() > 1 && r.starts_with('/'))
        };
        if !named(&f.current) {
            return Err(at(format!(
                "/current: `{}` is not a version of {}",
                f.current, f.protocol
            )));
        }
        // The suite's `protocol` names the newest version where it is one of these (the
        // harness suite's is the Harness API its harnesses speak, not its launch contract).
        if named(&info.protocol) && info.protocol != f.current {
            return Err(BadInput(format!(
                "{}: /protocol: `{}` is not the newest version, /requirements/current `{}`",
                file.display(),
                info.protocol,
                f.current
            )));
        }
        for (i, o) in f.versions.iter().enumerate() {
            if !named(&o.version) || o.version == f.current {
                return Err(at(format!(
                    "/versions/{i}/version: `{}` is not an older version of {}",
                    o.version, f.protocol
                )));
            }
        }
        Ok(Versions {
            protocol: f.protocol,
            current: f.current,
            older: f.versions,
        })
    }

    /// The newest version, if the suite has versions.
    pub fn current(&self) -> Option<&str> {
        (!self.current.is_empty()).then_some(self.current.as_str())
    }

    /// Every version, oldest first.
    pub fn all(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.older.iter().map(|o| o.version.as_str()).collect();
        v.extend(self.current());
        v
    }

    /// Is `version` one of this protocol's (any of them)?
    pub fn knows(&self, version: &str) -> bool {
        self.all().contains(&version)
    }

    /// Is `version` a version of this protocol at all (known or not): `hcpspec-core/…`?
    pub fn of_protocol(&self, version: &str) -> bool {
        !self.protocol.is_empty()
            && version
                .strip_prefix(&self.protocol)
                .is_some_and(|r| r.starts_with('/'))
    }

    /// The cases of an older version's set, if `version` is an older one.
    pub fn set(&self, version: &str) -> Option<&BTreeSet<String>> {
        self.older
            .iter()
            .find(|o| o.version == version)
            .map(|o| &o.cases)
    }

    /// The version that first requires `case` when a target states `stated`, if that is a later
    /// one (the case is then not scored): None when the case is in `stated`'s set, or `stated`
    /// is the newest or no older version.
    pub fn since(&self, stated: &str, case: &str) -> Option<&str> {
        let from = self.older.iter().position(|o| o.version == stated)?;
        if self.older[from].cases.contains(case) {
            return None;
        }
        let later = self.older[from + 1..]
            .iter()
            .find(|o| o.cases.contains(case))
            .map(|o| o.version.as_str());
        Some(later.unwrap_or(&self.current))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(requirements: &str) -> Result<Versions, BadInput> {
        let info: SuiteInfo = serde_json::from_value(serde_json::json!({
            "name": "s", "title": "S", "drives": "d", "protocol": "p/3", "spec": "x.txt",
            "sections": [{"id": "1", "title": "One"}],
            "requirements": serde_json::from_str::<serde_json::Value>(requirements).unwrap(),
        }))
        .unwrap();
        Versions::of(&info, Path::new("s/suite.json"))
    }

    fn versions() -> Versions {
        of(r#"{"protocol": "p", "current": "p/3", "versions": [
                {"version": "p/1", "published": "2026-01-01", "cases": ["a"]},
                {"version": "p/2", "published": "2026-02-01", "cases": ["a", "b"]}]}"#)
        .unwrap()
    }

    #[test]
    fn a_case_is_of_the_first_version_whose_set_holds_it() {
        let v = versions();
        assert_eq!(v.since("p/1", "a"), None);
        assert_eq!(v.since("p/1", "b"), Some("p/2"));
        assert_eq!(v.since("p/1", "c"), Some("p/3"));
        assert_eq!(v.since("p/2", "c"), Some("p/3"));
        assert_eq!(v.since("p/3", "c"), None);
        assert_eq!(v.all(), vec!["p/1", "p/2", "p/3"]);
        assert!(v.of_protocol("p/9") && !v.of_protocol("q/1") && !v.of_protocol("pp/1"));
    }

    #[test]
    fn a_version_of_another_protocol_is_refused_naming_the_member() {
        let e = of(r#"{"protocol": "p", "current": "p/3", "versions": [{"version": "q/1", "published": "x", "cases": []}]}"#)
            .unwrap_err()
            .0;
        assert!(
            e.contains("s/suite.json: /requirements/versions/0/version"),
            "{e}"
        );
        let e = of(r#"{"protocol": "p", "current": "p/4", "versions": []}"#)
            .unwrap_err()
            .0;
        assert!(e.contains("s/suite.json: /protocol: `p/3`"), "{e}");
    }
}
