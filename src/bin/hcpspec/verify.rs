//! `hcpspec verify RESULT`: the CLI side of `hcpspec::report::verify` (docs/verify.md): read the
//! result as untrusted input, gather what this hcpspec's embedded vectors hold, print each edit
//! found as one line `FILE:POINTER: what was expected`, and exit 0 (verified), 1 (an edit found),
//! 2 (bad input) or 5 (nothing edited found, but the case set could not be checked).

use hcpspec::error::BadInput;
use hcpspec::exit;
use hcpspec::report::verify::{Known, KnownCase, KnownSuite, Sentence};
use std::path::Path;

/// What this hcpspec's embedded vectors hold: every suite's cases in load order, and its
/// ledger's rows that name a killer.
fn known() -> Result<Known, BadInput> {
    let vectors = hcpspec::vectors::Vectors::resolve(None)?;
    let root = &vectors.root;
    let mut suites = std::collections::HashMap::new();
    for name in hcpspec::case::suite_names(root).map_err(|e| e.to_string())? {
        let loaded = hcpspec::suites::load(root, &name).map_err(|e| e.to_string())?;
        let levels: std::collections::HashMap<String, hcpspec::case::Level> =
            loaded.cases.iter().map(|c| (c.name(), c.level)).collect();
        let rows = hcpspec::suites::ledger::read(root, &loaded.info, &loaded.suite.checks())?;
        let sentences = rows
            .into_iter()
            .map(|r| Sentence {
                at: r.at(),
                must: r
                    .cases
                    .iter()
                    .filter(|c| levels.get(*c) == Some(&hcpspec::case::Level::MUST))
                    .cloned()
                    .collect(),
                cases: r.cases,
                killers: r.killers,
            })
            .collect();
        let cases = loaded
            .cases
            .iter()
            .map(|c| KnownCase {
                name: c.name(),
                section: c.section.clone(),
                level: c.level,
                source: c.source.as_bytes().to_vec(),
            })
            .collect();
        suites.insert(name, KnownSuite { cases, sentences });
    }
    Ok(Known {
        version: env!("CARGO_PKG_VERSION").into(),
        tree_sha256: hcpspec::vectors::embedded_sha256().into(),
        suites,
    })
}

pub fn verify(result: &Path) -> Result<i32, exit::Error> {
    let report = hcpspec::report::read(result)?;
    let found = hcpspec::report::verify::verify(&report, &known()?);
    let file = hcpspec::report::printable(&result.display().to_string(), false);
    for c in &found.checked {
        println!("checked: {c}");
    }
    for u in &found.unchecked {
        println!("not checked: {u}");
    }
    for p in &found.proven {
        println!("{p}");
    }
    for f in &found.findings {
        println!("{file}:{}: {}", f.pointer, f.what);
    }
    Ok(if !found.findings.is_empty() {
        println!("{file}: EDITED: {} edit(s) found", found.findings.len());
        exit::FAILURES
    } else if !found.unchecked.is_empty() {
        println!("{file}: verified in part: its summaries agree with its cases; see `not checked`");
        exit::UNCHECKED
    } else {
        println!("{file}: verified");
        exit::OK
    })
}
