//! Choose which cases run: by name (substring or glob), section and level.

use crate::case::{Case, Level};
use crate::error::BadInput;
use globset::Glob;

#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Case names: a pattern with `*`, `?` or `[` is a glob over the whole name, anything else
    /// a substring (as libtest filters are).
    pub filters: Vec<String>,
    pub sections: Vec<String>,
    pub levels: Vec<Level>,
    /// `(k, n)`: keep shard k of n (1-based), for a CI matrix.
    pub partition: Option<(usize, usize)>,
}

/// The shard (1-based) of `n` a case name belongs to: FNV-1a of the name, mod n.
pub fn shard(name: &str, n: usize) -> usize {
    let h = crate::hash::fnv1a64(name.as_bytes());
    (h % n as u64) as usize + 1
}

/// Parse `k/n` with 1 ≤ k ≤ n.
pub fn parse_partition(s: &str) -> Result<(usize, usize), BadInput> {
    let bad = || format!("--partition {s}: expected k/n with 1 <= k <= n, e.g. 2/4");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if k == 0 || n == 0 || k > n {
        return Err(BadInput(bad()));
    }
    Ok((k, n))
}

impl Selection {
    /// The selected cases, in order. A filter that matches nothing is an error: a typo must not
    /// pass as an empty, green run.
    pub fn apply(&self, cases: &[Case]) -> Result<Vec<Case>, BadInput> {
        let mut matchers = Vec::new();
        for f in &self.filters {
            if f.contains(['*', '?', '[']) {
                let g = Glob::new(f)
                    .map_err(|e| format!("--filter {f}: {e}"))?
                    .compile_matcher();
                matchers.push((
                    f,
                    Box::new(move |n: &str| g.is_match(n)) as Box<dyn Fn(&str) -> bool>,
                ));
            } else {
                let s = f.clone();
                matchers.push((f, Box::new(move |n: &str| n.contains(s.as_str()))));
            }
        }
        for (f, m) in &matchers {
            if !cases.iter().any(|c| m(&c.name())) {
                return Err(BadInput(format!("--filter {f} matches no case")));
            }
        }
        for s in &self.sections {
            if !cases.iter().any(|c| &c.section == s) {
                let mut known: Vec<&str> = cases.iter().map(|c| c.section.as_str()).collect();
                known.dedup();
                return Err(BadInput(format!(
                    "--section {s} matches no case (sections: {})",
                    known.join(", ")
                )));
            }
        }
        Ok(cases
            .iter()
            .filter(|c| matchers.is_empty() || matchers.iter().any(|(_, m)| m(&c.name())))
            .filter(|c| self.sections.is_empty() || self.sections.contains(&c.section))
            .filter(|c| self.levels.is_empty() || self.levels.contains(&c.level))
            // By a hash of the name, so a case stays in its shard when others are added.
            .filter(|c| self.partition.is_none_or(|(k, n)| shard(&c.name(), n) == k))
            .cloned()
            .collect())
    }
}

pub use crate::case::section_label;

#[cfg(test)]
mod tests {
    use super::*;

    fn cases(n: usize) -> Vec<Case> {
        (0..n)
            .map(|i| Case {
                id: format!("c{i}"),
                title: "t".into(),
                section: ["3", "4"][i % 2].into(),
                level: Level::MUST,
                spec: String::new(),
                assumption: None,
                requires: vec![],
                killed_by: vec![],
                fixed: Default::default(),
                body: Default::default(),
                suite: "suite-a".into(),
                group: "g".into(),
                file: Default::default(),
                parsed: Default::default(),
                source: Default::default(),
            })
            .collect()
    }

    #[test]
    fn partitions_are_disjoint_and_cover_the_run() {
        let all = cases(23);
        for n in 1..=5 {
            let mut seen: Vec<String> = Vec::new();
            for k in 1..=n {
                let shard = Selection {
                    partition: Some((k, n)),
                    ..Default::default()
                }
                .apply(&all)
                .unwrap();
                seen.extend(shard.iter().map(|c| c.name()));
            }
            seen.sort();
            let mut want: Vec<String> = all.iter().map(|c| c.name()).collect();
            want.sort();
            assert_eq!(seen, want, "n = {n}");
        }
        let filtered = Selection {
            sections: vec!["4".into()],
            partition: Some((1, 2)),
            ..Default::default()
        }
        .apply(&all)
        .unwrap();
        assert!(filtered.iter().all(|c| c.section == "4"));
    }

    #[test]
    fn bad_filters_and_partitions_are_errors() {
        assert!(Selection {
            filters: vec!["nope".into()],
            ..Default::default()
        }
        .apply(&cases(3))
        .is_err());
        assert!(
            Selection {
                filters: vec!["*c1".into()],
                ..Default::default()
            }
            .apply(&cases(3))
            .unwrap()
            .len()
                == 1
        );
        for bad in ["0/2", "3/2", "x", "1/0", "1-2"] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_partition("2/4"), Ok((2, 4)));
    }
}
