//! The library's imports go one way. No import circles among its files: the file-level graph of `src/`
//! (`src/bin` excluded), with an edge from a file to every file a `crate::…`, `super::…` or
//! `self::…` path of it resolves to (the longest module prefix that is a file), has no strongly
//! connected component of more than one file. Each circle found is listed with its files.
//!
//! The graph is read from the source text by the rules of the team's `circles.py` hook (a port:
//! the two find the same edges and circles), with nothing outside this crate read: comments and a
//! trailing `#[cfg(test)] mod tests { … }` are left out, and a path's `{…}` group counts one edge
//! per item. And docs/architecture.md's layer table is true of the top-level modules of that
//! graph: each imports only what its row may.

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, by its module path (`mod.rs` and `lib.rs` are their folder's).
fn modules(src: &Path, dir: &Path, out: &mut BTreeMap<Vec<String>, PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(src).unwrap();
        if rel.starts_with("bin") && p.is_dir() {
            continue;
        }
        if p.is_dir() {
            modules(src, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let mut parts: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            out.insert(parts, p);
        }
    }
}

/// The file of the longest prefix of `path` that is a module, if any.
fn resolve<'a>(mods: &'a BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<&'a PathBuf> {
    (1..=path.len()).rev().find_map(|n| mods.get(&path[..n]))
}

fn split(s: &str) -> Vec<String> {
    s.split("::")
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// The files each file's paths resolve to (itself left out).
fn edges(mods: &BTreeMap<Vec<String>, PathBuf>) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let tests = Regex::new(r"(?s)#\[cfg\(test\)\]\s*mod tests\s*\{.*").unwrap();
    let comment = Regex::new(r"//[^\n]*").unwrap();
    let path = Regex::new(r"crate::((?:[a-z_][a-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*)").unwrap();
    let group = Regex::new(r"(?s)crate::((?:[a-z_][a-z0-9_]*::)*)\{([^}]*)\}").unwrap();
    let relative = Regex::new(
        r"\b(super|self)::((?:super::)*)((?:[a-z_][a-z0-9_]*::)*)(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)",
    )
    .unwrap();
    let mut out = BTreeMap::new();
    for (module, file) in mods {
        let text = std::fs::read_to_string(file).unwrap();
        let text = tests.replace_all(&text, "");
        let text = comment.replace_all(&text, "");
        let mut targets: Vec<Vec<String>> =
            path.captures_iter(&text).map(|c| split(&c[1])).collect();
        for c in group.captures_iter(&text) {
            let base = split(&c[1]);
            for item in c[2].split(',') {
                let item = item.trim().split(" as ").next().unwrap_or_default();
                let parts: Vec<String> = item
                    .split("::")
                    .filter(|i| !i.is_empty() && *i != "{")
                    .map(str::to_string)
                    .collect();
                if item
                    .split("::")
                    .next()
                    .is_some_and(|first| !first.is_empty())
                {
                    targets.push(base.iter().cloned().chain(parts).collect());
                }
            }
        }
        for c in relative.captures_iter(&text) {
            // `self::` is this file's module, `super::` its parent, each further `super::` one up.
            let mut base: Vec<String> = if &c[1] == "super" {
                module[..module.len().saturating_sub(1)].to_vec()
            } else {
                module.clone()
            };
            for _ in 0..c[2].matches("super::").count() {
                base.pop();
            }
            base.extend(split(&c[3]));
            let last = &c[4];
            let items: Vec<&str> = if last.starts_with('{') {
                last.trim_matches(|c| c == '{' || c == '}')
                    .split(',')
                    .map(|x| x.trim().split(" as ").next().unwrap_or_default())
                    .collect()
            } else {
                vec![last]
            };
            for it in items.into_iter().filter(|i| !i.is_empty()) {
                targets.push(base.iter().cloned().chain(split(it)).collect());
            }
        }
        let to: BTreeSet<PathBuf> = targets
            .iter()
            .filter_map(|t| resolve(mods, t))
            .filter(|g| *g != file)
            .cloned()
            .collect();
        out.insert(file.clone(), to);
    }
    out
}

/// The strongly connected components of more than one file (Tarjan), each sorted.
fn circles(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Tarjan<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Tarjan<'a> {
        fn strong(&mut self, v: &'a PathBuf) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on.insert(v);
            for w in &self.edges[v] {
                if !self.index.contains_key(w) {
                    self.strong(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut c = Vec::new();
                loop {
                    let w = self.stack.pop().unwrap();
                    self.on.remove(w);
                    c.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if c.len() > 1 {
                    c.sort();
                    self.found.push(c);
                }
            }
        }
    }
    let mut t = Tarjan {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            t.strong(v);
        }
    }
    t.found.sort();
    t.found
}

#[test]
fn no_import_circles_among_src_modules() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut mods = BTreeMap::new();
    modules(&src, &src, &mut mods);
    let found = circles(&edges(&mods));
    let shown: Vec<String> = found
        .iter()
        .map(|c| {
            c.iter()
                .map(|f| f.strip_prefix(root).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert!(
        found.is_empty(),
        "{} import circle(s) among src/ modules (each a set of files that import one another):\n  {}",
        found.len(),
        shown.join("\n  ")
    );
}

/// The rows of docs/architecture.md's layer table, top to bottom: each row's modules and what
/// they may import (None: anything below).
fn layer_table(doc: &str) -> Vec<(Vec<String>, Option<Vec<String>>)> {
    let names = Regex::new(r"`([a-z_/]+)`").unwrap();
    let section = doc
        .split("## The layers")
        .nth(1)
        .and_then(|s| s.split("**Never**").next())
        .expect("docs/architecture.md has a section \"The layers\"");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let (modules, may) = (cells[0], cells[cells.len() - 1]);
            let list = |cell: &str| -> Vec<String> {
                names
                    .captures_iter(cell)
                    .map(|c| c[1].to_string())
                    .collect()
            };
            let may = if may.starts_with("anything") {
                None
            } else {
                Some(list(may))
            };
            (list(modules), may)
        })
        .filter(|(m, _)| !m.iter().any(|m| m.starts_with("src/")))
        .collect()
}

/// docs/architecture.md's layer table is the module graph: every top-level module of `src/`
/// is in one row, and imports only what its row may import (its list, or any row below for a
/// row that says "anything below"), never a row above; so no two top-level modules import each
/// other, through any path.
#[test]
fn the_layer_table_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut mods = BTreeMap::new();
    modules(&src, &src, &mut mods);
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let rows = layer_table(&doc);
    let row_of = |m: &str| rows.iter().position(|(ms, _)| ms.iter().any(|x| x == m));
    let top = |file: &PathBuf| -> String {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let tops: BTreeSet<String> = mods.values().map(top).filter(|t| t != "lib").collect();
    let mut wrong = Vec::new();
    for t in &tops {
        if row_of(t).is_none() {
            wrong.push(format!("`{t}` is in no row of the layer table"));
        }
    }
    for (i, (ms, may)) in rows.iter().enumerate() {
        for m in may.iter().flatten() {
            if row_of(m).is_none_or(|r| r <= i) {
                wrong.push(format!(
                    "the row of {ms:?} may import `{m}`, which is not a row below it"
                ));
            }
        }
    }
    let mut seen = BTreeSet::new();
    for (file, to) in edges(&mods) {
        let from = top(&file);
        let Some(r) = row_of(&from) else { continue };
        for t in to.iter().map(top).filter(|t| *t != from && t != "lib") {
            let allowed = match &rows[r].1 {
                Some(list) => list.contains(&t),
                None => row_of(&t).is_some_and(|rt| rt > r),
            };
            if !allowed && seen.insert((from.clone(), t.clone())) {
                wrong.push(format!(
                    "`{from}` imports `{t}` ({}), which its row may not",
                    file.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md's layer table is not the module graph:\n  {}",
        wrong.join("\n  ")
    );
}
