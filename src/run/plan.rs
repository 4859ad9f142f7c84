//! Choose which cases run: by name (substring or glob), section and level.

use crate::case::{Case, Level};
use globset::Glob;

#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Case names: a pattern with `*`, `?` or `[` is a glob over the whole name, anything else
    /// a substring (as libtest filters are).
    pub filters: Vec<String>,
    pub sections: Vec<String>,
    pub levels: Vec<Level>,
}

impl Selection {
    /// The selected cases, in order. A filter that matches nothing is an error: a typo must not
    /// pass as an empty, green run.
    pub fn apply(&self, cases: &[Case]) -> Result<Vec<Case>, String> {
        let mut matchers = Vec::new();
        for f in &self.filters {
            if f.contains(['*', '?', '[']) {
                let g = Glob::new(f).map_err(|e| format!("--filter {f}: {e}"))?.compile_matcher();
                matchers.push((f, Box::new(move |n: &str| g.is_match(n)) as Box<dyn Fn(&str) -> bool>));
            } else {
                let s = f.clone();
                matchers.push((f, Box::new(move |n: &str| n.contains(s.as_str()))));
            }
        }
        for (f, m) in &matchers {
            if !cases.iter().any(|c| m(&c.name())) {
                return Err(format!("--filter {f} matches no case"));
            }
        }
        for s in &self.sections {
            if !cases.iter().any(|c| &c.section == s) {
                return Err(format!("--section {s} matches no case (sections: 1 … 10, must-not)"));
            }
        }
        Ok(cases
            .iter()
            .filter(|c| matchers.is_empty() || matchers.iter().any(|(_, m)| m(&c.name())))
            .filter(|c| self.sections.is_empty() || self.sections.contains(&c.section))
            .filter(|c| self.levels.is_empty() || self.levels.contains(&c.level))
            .cloned()
            .collect())
    }
}

/// The contract's sections in table order, with their "Owns" column in a few words.
pub const SECTIONS: &[(&str, &str)] = &[
    ("1", "Load"),
    ("2", "Lint on install"),
    ("3", "Authorise"),
    ("4", "Confirm gate"),
    ("5", "Binding mint"),
    ("6", "Adapter"),
    ("7", "Sandbox"),
    ("8", "Audit"),
    ("9", "Availability"),
    ("10", "Sense"),
    ("must-not", "Must-nots"),
];
