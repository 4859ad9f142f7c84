//! The HCP/1.x pack: its model, the loader (contract point 1) and the linter (point 2).
//! Everything here is pure apart from reading the three files of a pack directory.

mod lint;
mod load;
mod model;

pub use lint::lint;
pub use load::{load_dir, load_files, load_files_schema_first, PackFiles};
pub use model::*;

use serde::{Deserialize, Serialize};
use std::fmt;

/// One finding of the loader or the linter, printed like a compiler diagnostic:
/// `file:pointer: rule: message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    pub file: String,
    pub pointer: String,
    pub rule: String,
    pub message: String,
}

impl Issue {
    pub fn new(file: &str, pointer: &str, rule: &str, message: impl Into<String>) -> Self {
        Issue {
            file: file.into(),
            pointer: pointer.into(),
            rule: rule.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.pointer, self.rule, self.message
        )
    }
}

/// Install = load + lint; any issue rejects the pack (contract points 1 and 2).
pub fn install(files: &PackFiles) -> Result<Pack, Vec<Issue>> {
    install_with(files, lint)
}

/// Install with another linter (an allowed variant lints only the spec's rules).
pub fn install_with(files: &PackFiles, lint: fn(&Pack) -> Vec<Issue>) -> Result<Pack, Vec<Issue>> {
    let pack = load_files(files)?;
    // Lint names files inside the pack; at install, say which pack they are in.
    let issues: Vec<Issue> = lint(&pack)
        .into_iter()
        .map(|i| Issue {
            file: files.path(&i.file),
            ..i
        })
        .collect();
    if issues.is_empty() {
        Ok(pack)
    } else {
        Err(issues)
    }
}

/// Every rule name an issue of the pack loader, the linter or the install can carry.
pub const RULES: &[&str] = &[
    "missing-file",
    "parse",
    "schema",
    "verb-key-unique",
    "policy-covers-command",
    "policy-covers-trigger",
    "skill-present",
    "wrap-named-or-pass-through",
    "wrap-covers-command",
    "binding-declared",
    "pack-id-unique",
];
