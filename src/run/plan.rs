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
                return Err(BadInput(unmatched(f, cases)));
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

/// What a filter that matches no case says: for a glob, that it matches whole names and the
/// glob that matches inside them; else the parts of names closest to it (each a filter that
/// matches), so a typo is one edit away from a run.
fn unmatched(f: &str, cases: &[Case]) -> String {
    let names: Vec<String> = cases.iter().map(Case::name).collect();
    if f.contains(['*', '?', '[']) {
        let wide = format!("*{}*", f.trim_matches('*'));
        if let Ok(g) = Glob::new(&wide) {
            let g = g.compile_matcher();
            let hits: Vec<&String> = names.iter().filter(|n| g.is_match(n.as_str())).collect();
            if let Some(first) = hits.first() {
                let head: Vec<&str> = first.split("::").take(2).collect();
                return format!(
                    "--filter {f} matches no case: a glob matches the whole name ({}::…); --filter '{wide}' matches {}",
                    head.join("::"),
                    hits.len()
                );
            }
        }
    }
    let literal: String = f.chars().filter(|c| !"*?[]".contains(*c)).collect();
    let parts: std::collections::BTreeSet<&str> =
        names.iter().flat_map(|n| n.split("::")).collect();
    let most = (literal.chars().count() / 3).max(2);
    let mut near: Vec<(usize, &str)> = parts
        .into_iter()
        .map(|p| (edits(&literal, p), p))
        .filter(|(d, _)| *d <= most)
        .collect();
    near.sort();
    if near.is_empty() {
        return format!("--filter {f} matches no case (`hcpspec list` prints every name)");
    }
    let near: Vec<&str> = near.iter().take(3).map(|(_, p)| *p).collect();
    format!("--filter {f} matches no case; closest: {}", near.join(", "))
}

/// The Levenshtein distance of `a` and `b`, by characters.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
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
        let said = |f: &str| {
            Selection {
                filters: vec![f.into()],
                ..Default::default()
            }
            .apply(&cases(3))
            .unwrap_err()
            .0
        };
        assert_eq!(
            said("c1*"),
            "--filter c1* matches no case: a glob matches the whole name (suite-a::g::…); --filter '*c1*' matches 1"
        );
        assert_eq!(
            said("cc1"),
            "--filter cc1 matches no case; closest: c1, c0, c2"
        );
        assert_eq!(
            said("zzzzzzzz"),
            "--filter zzzzzzzz matches no case (`hcpspec list` prints every name)"
        );
        assert_eq!(edits("kitten", "sitting"), 3);
        for bad in ["0/2", "3/2", "x", "1/0", "1-2"] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_partition("2/4"), Ok((2, 4)));
    }
}
