//! Requirement sets per protocol version (docs/vectors.md, "Requirement sets"; docs/CHANGELOG.md):
//! `vectors/<suite>/versions.json` freezes, for each older version of the protocol a suite
//! speaks, the cases that version required. A target that states an older version is judged by
//! its set: a case outside it still runs and is reported, but is *not scored* (never fails the
//! run, counted apart). A case added from now on is in no older set, so it belongs to the newest
//! version only; a suite without the file scores every case.

use crate::error::BadInput;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::Path;

/// The file's name in a suite's folder.
pub const FILE: &str = "versions.json";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(rename = "$schema", default)]
    #[allow(dead_code)]
    schema: Option<String>,
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
    /// `vectors/<suite>/versions.json`, or no versions (every case scored) when there is none.
    /// A bad file is one line naming it and the member.
    pub fn load(suite_dir: &Path) -> Result<Versions, BadInput> {
        let path = suite_dir.join(FILE);
        if !path.is_file() {
            return Ok(Versions::default());
        }
        let at = |m: String| BadInput(format!("{}: {m}", path.display()));
        let text = crate::input::read_capped(&path, crate::input::MAX_CASE)
            .map_err(|e| at(String::from(e)))?;
        let f: File = serde_json::from_str(&text)
            .map_err(|e| at(format!("line {} column {}: {e}", e.line(), e.column())))?;
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

    fn versions() -> Versions {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            r#"{"protocol": "p", "current": "p/3", "versions": [
                {"version": "p/1", "published": "2026-01-01", "cases": ["a"]},
                {"version": "p/2", "published": "2026-02-01", "cases": ["a", "b"]}]}"#,
        )
        .unwrap();
        Versions::load(dir.path()).unwrap()
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
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE),
            r#"{"protocol": "p", "current": "p/2", "versions": [{"version": "q/1", "published": "x", "cases": []}]}"#,
        )
        .unwrap();
        let e = Versions::load(dir.path()).unwrap_err().0;
        assert!(e.contains("/versions/0/version"), "{e}");
    }
}
