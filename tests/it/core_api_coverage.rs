//! `vectors/core-api/COVERAGE.md` against spec 004 and the core-api suite. The file is a ledger
//! of the whole spec text: one row per sentence, filed under its section, saying whom it binds
//! and which cases check it (or why none does). This test checks that every quote is in the
//! spec, that together the quotes cover every word of the spec, that every core or gates row has
//! a case or a reason, that every case named exists and every MUST case is named, and that a row binding neither core
//! nor gates has no state. States, killers and the summary are every ledger's, checked in
//! tests/suites.rs (`sentences::core-api::*`). Data-driven: adding a case or a row means
//! editing the file, nothing here.

use crate::common;

use common::markdown::{cells, plain};
use hcpspec::case::Level;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SPEC: &str = "004_0d5b24e47247e871.txt";
const SUITE: &str = "core-api";
/// The ledger's heading for the spec's text before its first section.
const PRELUDE: &str = "Intro";
/// A spec line ending so is a section heading: not a sentence, and not in the ledger.
const HEADING: &str = "Copy Anchor Link";
const BINDS: [&str; 6] = ["core", "gates", "harness", "package", "nylorun", "none"];
/// A quote piece shorter than this could cover words it does not mean.
const MIN_PIECE: usize = 6;

/// The verbatim pieces of a quote cell: the text inside its outer double quotes, normalised
/// like the spec, split at `…`, each trimmed of the spaces and punctuation an elision leaves.
/// `None` when the cell is not one double-quoted string.
fn pieces(cell: &str) -> Option<Vec<String>> {
    let inner = cell.strip_prefix('"')?.strip_suffix('"')?;
    Some(
        plain(inner)
            .split('…')
            .map(|p| p.trim_matches(|c: char| " .,;/".contains(c)).to_string())
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

/// The runs of `line` that no piece covers and that hold a letter or a digit. Every occurrence
/// of every piece in the line covers its characters.
fn uncovered(line: &str, pieces: &[&str]) -> Vec<String> {
    let mut covered = vec![false; line.len()];
    for piece in pieces.iter().filter(|p| !p.is_empty()) {
        for (at, _) in line.match_indices(*piece) {
            covered[at..at + piece.len()]
                .iter_mut()
                .for_each(|c| *c = true);
        }
    }
    let mut runs = Vec::new();
    let mut run = String::new();
    for (at, c) in line.char_indices() {
        if covered[at] {
            runs.push(std::mem::take(&mut run));
        } else {
            run.push(c);
        }
    }
    runs.push(run);
    runs.into_iter()
        .filter(|r| r.chars().any(char::is_alphanumeric))
        .map(|r| r.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .collect()
}

/// The spec's sections in order: the prelude, then one per heading, each with its non-empty
/// lines (number, normalised text).
fn sections(spec: &str) -> Vec<(String, Vec<(usize, String)>)> {
    let mut out = vec![(PRELUDE.to_string(), Vec::new())];
    for (i, line) in spec.lines().enumerate() {
        if let Some(title) = line.trim_end().strip_suffix(HEADING) {
            out.push((title.trim().to_string(), Vec::new()));
        } else if !line.trim().is_empty() {
            out.last_mut().unwrap().1.push((i + 1, plain(line)));
        }
    }
    out
}

struct Row {
    number: u32,
    section: String,
    pieces: Vec<String>,
    binds: String,
    cases: Vec<String>,
    state: String,
}

#[test]
fn ledger_quotes_the_whole_spec_and_names_every_must_case() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = std::fs::read_to_string(root.join("spec").join(SPEC))
        .unwrap_or_else(|e| panic!("cannot read spec/{SPEC}: {e}"));
    let path = root.join("vectors").join(SUITE).join("COVERAGE.md");
    let ledger = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases = hcpspec::suites::load_suite(&root.join("vectors"), SUITE).expect("cases load");
    let levels: BTreeMap<&str, Level> = cases.iter().map(|c| (c.id.as_str(), c.level)).collect();

    let sections = sections(&spec);
    let titles: Vec<&str> = sections.iter().map(|(t, _)| t.as_str()).collect();
    let body = plain(&spec);
    let tick = Regex::new(r"`([^`]+)`").unwrap();
    let mut problems = Vec::new();

    // The rows: table lines whose first cell is a number, each under its `## ` section.
    let mut rows = Vec::new();
    let mut heading = None::<String>;
    let mut last_section = None::<usize>;
    for (i, line) in ledger.lines().enumerate() {
        let at = format!("COVERAGE.md line {}", i + 1);
        if let Some(h) = line.strip_prefix("## ") {
            let h = h.trim().to_string();
            if let Some(k) = titles.iter().position(|t| *t == h) {
                if last_section.is_some_and(|l| k <= l) {
                    problems.push(format!("{at}: section `{h}` is out of the spec's order"));
                }
                last_section = Some(k);
            }
            heading = Some(h);
            continue;
        }
        if !line.trim_start().starts_with('|') {
            continue;
        }
        let c = cells(line);
        let Some(number) = c.first().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if c.len() != 7 {
            problems.push(format!(
                "row {number}: {} cells, not 7 (#, sentence, binds, cases, state, killer, why none)",
                c.len()
            ));
            continue;
        }
        let section = match &heading {
            Some(h) if titles.contains(&h.as_str()) => h.clone(),
            other => {
                problems.push(format!(
                    "row {number}: under `{}`, which is not a section of spec/{SPEC} (or `{PRELUDE}`)",
                    other.as_deref().unwrap_or("no heading")
                ));
                continue;
            }
        };
        let Some(pieces) = pieces(&c[1]) else {
            problems.push(format!(
                "row {number}: the sentence is not one double-quoted string"
            ));
            continue;
        };
        rows.push(Row {
            number,
            section,
            pieces,
            binds: c[2].clone(),
            cases: tick
                .captures_iter(&c[3])
                .map(|m| m[1].to_string())
                .collect(),
            state: c[4].clone(),
        });
    }
    if rows.is_empty() {
        problems.push("no sentence rows found (a table line whose first cell is a number)".into());
    }

    // 1, 2 and 4: each row on its own.
    let mut last = 0;
    let mut numbers = BTreeSet::new();
    for row in &rows {
        let n = row.number;
        if !numbers.insert(n) {
            problems.push(format!("row {n}: the number is used twice"));
        } else if n <= last {
            problems.push(format!(
                "row {n}: numbers must increase through the file (after {last})"
            ));
        }
        last = n;
        if !BINDS.contains(&row.binds.as_str()) {
            problems.push(format!(
                "row {n}: binds `{}` is not one of {BINDS:?}",
                row.binds
            ));
        }
        if row.pieces.is_empty() {
            problems.push(format!("row {n}: no sentence"));
        }
        let lines = &sections.iter().find(|(t, _)| *t == row.section).unwrap().1;
        for piece in &row.pieces {
            if piece.chars().count() < MIN_PIECE {
                problems.push(format!(
                    "row {n}: `{piece}` is shorter than {MIN_PIECE} characters"
                ));
            } else if !body.contains(piece.as_str()) {
                problems.push(format!("row {n}: `{piece}` is not in spec/{SPEC}"));
            } else if !lines.iter().any(|(_, l)| l.contains(piece.as_str())) {
                problems.push(format!(
                    "row {n}: `{piece}` is not within one line of section `{}`",
                    row.section
                ));
            }
        }
        // The state of a core or gates row is read and judged with every suite's ledger
        // (`sentences::core-api::ledger` in tests/suites.rs); a row binding another party has none.
        let checked = row.binds == "core" || row.binds == "gates";
        let stateless = row.state.is_empty() || row.state == "-";
        if checked && stateless {
            problems.push(format!("row {n}: binds {} and has no state", row.binds));
        }
        if !checked && !stateless {
            problems.push(format!(
                "row {n}: binds {}, not core or gates: its state is `-`",
                row.binds
            ));
        }
        if !checked && !row.cases.is_empty() {
            problems.push(format!("row {n}: binds {} yet names cases", row.binds));
        }
    }

    // 3: every word of every spec line is inside some quote of a row of its section.
    for (title, lines) in &sections {
        let quoted: Vec<&str> = rows
            .iter()
            .filter(|r| r.section == *title)
            .flat_map(|r| r.pieces.iter().map(String::as_str))
            .collect();
        for (no, line) in lines {
            let left = uncovered(line, &quoted);
            if !left.is_empty() {
                problems.push(format!(
                    "spec line {no} (§ {title}) has text no row quotes: {}",
                    left.iter()
                        .map(|w| format!("`{w}`"))
                        .collect::<Vec<_>>()
                        .join(" … ")
                ));
            }
        }
    }

    // 5: the cases named are the suite's, and every MUST case is named.
    let named: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.cases.iter().map(String::as_str))
        .collect();
    for id in &named {
        // A check every case runs (src/suites/core_api/always.rs) is no case.
        if !levels.contains_key(id) && !hcpspec::suites::core_api::always::CHECKS.contains(id) {
            problems.push(format!("`{id}` is not a case of the {SUITE} suite"));
        }
    }
    let missing: Vec<&str> = levels
        .iter()
        .filter(|(id, level)| **level == Level::MUST && !named.contains(*id))
        .map(|(id, _)| *id)
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "{} MUST case(s) appear in no row; add each to the sentence it checks:\n  {}",
            missing.len(),
            missing.join("\n  ")
        ));
    }

    eprintln!(
        "{} of {} cases named ({} MUST cases)",
        named.len(),
        levels.len(),
        levels.values().filter(|l| **l == Level::MUST).count()
    );

    assert!(
        problems.is_empty(),
        "{} problem(s) in vectors/{SUITE}/COVERAGE.md:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn pieces_split_at_elisions_inside_the_outer_quotes() {
    assert_eq!(
        pieces(r#""{status: "execute"}: run it. … the `call's` span, …""#),
        Some(vec![
            r#"{status: "execute"}: run it"#.to_string(),
            "the call's span".into()
        ])
    );
    assert_eq!(pieces("no quotes"), None);
    assert_eq!(pieces(r#""""#), Some(vec![]));
}

#[test]
fn uncovered_keeps_only_runs_with_letters_or_digits() {
    let line = "• One rule, at most 64 MiB (HARNESS_MAX_PAYLOAD).";
    assert_eq!(
        uncovered(line, &["One rule", "(HARNESS_MAX_PAYLOAD)"]),
        vec!["at most 64 MiB"]
    );
    assert!(uncovered(line, &["One rule, at most 64 MiB (HARNESS_MAX_PAYLOAD)"]).is_empty());
    assert_eq!(uncovered("a b", &[]), vec!["a b"]);
}

/// `vectors/core-api/ASSUMPTIONS.md` names every allowed variant of the reference core, and
/// names none that is not one: an open point decided otherwise is written down, and a row's
/// variant is one `variants::core-api::NAME` proves.
#[test]
fn assumptions_name_every_allowed_variant_and_no_other() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/core-api/ASSUMPTIONS.md");
    let text = std::fs::read_to_string(&path).expect("ASSUMPTIONS.md");
    let named: BTreeSet<String> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Open point") && !l.starts_with("|---"))
        .filter_map(|l| cells(l).last().map(|c| c.trim().to_string()))
        .filter_map(|last| {
            let name = last.strip_prefix('`')?.split('`').next()?.to_string();
            Some(name)
        })
        .collect();
    let known: BTreeSet<String> =
        hcpspec::knob::infos::<hcpspec::suites::core_api::reference::Variant>()
            .into_iter()
            .map(|i| i.name.to_string())
            .collect();
    let missing: Vec<_> = known.difference(&named).collect();
    let stray: Vec<_> = named.difference(&known).collect();
    assert!(
        missing.is_empty() && stray.is_empty(),
        "ASSUMPTIONS.md: variants with no row {missing:?}; rows naming no variant {stray:?}"
    );
}
