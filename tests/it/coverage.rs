//! `vectors/COVERAGE.md` against the spec and the suite: every quoted sentence is really in
//! spec 000, every case it names exists, and every MUST case of the contract suite checks at
//! least one sentence of the table. Data-driven: adding or renaming a case means editing the
//! table, nothing here.

use crate::common;

use common::markdown::{cells, plain};
use hcpspec::case::Level;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const SPEC: &str = "000_15ba0494eb8a99bb.txt";

struct Row {
    number: u32,
    sentence: String,
    place: String,
    cases: Vec<String>,
    why: String,
}

/// The rows of the sentence table: table lines whose first cell is a number.
fn rows(coverage: &str) -> Vec<Row> {
    let name = case_name();
    coverage
        .lines()
        .filter(|l| l.trim_start().starts_with('|'))
        .filter_map(|l| {
            let c = cells(l);
            let number = c.first()?.parse::<u32>().ok()?;
            assert_eq!(
                c.len(),
                7,
                "COVERAGE.md row {number} has {} cells, not 7 (#, sentence, where, cases, state, killer, why none): {l}",
                c.len()
            );
            Some(Row {
                number,
                sentence: c[1].clone(),
                place: c[2].clone(),
                cases: name
                    .find_iter(&c[3])
                    .map(|m| m.as_str().to_string())
                    .collect(),
                why: format!("{} {}", c[4], c[6]).trim().to_string(),
            })
        })
        .collect()
}

fn case_name() -> Regex {
    Regex::new(r"contract::[0-9][A-Za-z0-9_-]*::[A-Za-z0-9][A-Za-z0-9_.-]*").unwrap()
}

#[test]
fn coverage_table_quotes_the_spec_and_names_real_cases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec_text = std::fs::read_to_string(root.join("spec").join(SPEC))
        .unwrap_or_else(|e| panic!("cannot read spec/{SPEC}: {e}"));
    let coverage_path = root.join("vectors/COVERAGE.md");
    let coverage = std::fs::read_to_string(&coverage_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", coverage_path.display()));
    // vectors/COVERAGE.md maps spec 000, the HCP runtime contract.
    let (_, cases) = hcpspec::suites::load_driving(&root.join("vectors"), "hcp-runtime")
        .map(|l| (l.info, l.cases))
        .expect("cases load");
    let levels: BTreeMap<String, Level> = cases.iter().map(|c| (c.name(), c.level)).collect();

    let body = plain(&spec_text);
    let headings: Vec<String> = spec_text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .collect();

    let rows = rows(&coverage);
    let mut problems = Vec::new();
    if rows.is_empty() {
        problems.push("no sentence rows found (a table line whose first cell is a number)".into());
    }
    let mut numbers = BTreeSet::new();
    let mut covered = BTreeSet::new();
    for row in &rows {
        let n = row.number;
        if !numbers.insert(n) {
            problems.push(format!("row {n}: the number is used twice"));
        }
        let quote = plain(&row.sentence);
        if quote.is_empty() {
            problems.push(format!("row {n}: no sentence"));
        }
        // A quote may elide with …; each piece must be in the spec as written.
        for piece in quote
            .split('…')
            .map(|p| p.trim_matches(|c: char| " .,;/".contains(c)))
            .filter(|p| !p.is_empty())
        {
            if !body.contains(piece) {
                problems.push(format!("row {n}: `{piece}` is not in spec/{SPEC}"));
            }
        }
        if !headings.iter().any(|h| row.place.starts_with(h.as_str())) {
            problems.push(format!(
                "row {n}: where `{}` does not start with a heading of spec/{SPEC}",
                row.place
            ));
        }
        if row.cases.is_empty() && row.why.is_empty() {
            problems.push(format!("row {n}: no case and no reason in `why none`"));
        }
        covered.extend(row.cases.iter().cloned());
    }
    // Every case name anywhere in the file (the table and the gaps below it) must exist.
    let mentioned: BTreeSet<String> = case_name()
        .find_iter(&coverage)
        .map(|m| m.as_str().to_string())
        .collect();
    for name in &mentioned {
        if !levels.contains_key(name) {
            problems.push(format!("`{name}` is not a case of the contract suite"));
        }
    }
    let missing: Vec<&String> = levels
        .iter()
        .filter(|(name, level)| **level == Level::MUST && !covered.contains(*name))
        .map(|(name, _)| name)
        .collect();
    if !missing.is_empty() {
        problems.push(format!(
            "{} MUST case(s) appear in no row of the table; add each to the sentence it checks:\n  {}",
            missing.len(),
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n  ")
        ));
    }
    let without = rows.iter().filter(|r| r.cases.is_empty()).count();
    eprintln!(
        "COVERAGE.md: {} sentences, {} with cases, {} without; {} of {} cases named",
        rows.len(),
        rows.len() - without,
        without,
        covered.len(),
        levels.len()
    );
    assert!(
        problems.is_empty(),
        "{} problem(s) in vectors/COVERAGE.md:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn cells_split_at_unescaped_bars_only() {
    assert_eq!(
        cells(r"| 1 | a \| b | `c` |"),
        vec!["1".to_string(), "a | b".into(), "`c`".into()]
    );
}

/// Every contract case arranges what a runtime may demand (scripts/check-arrangements.py, the
/// lint behind the allowed variants of issue 22): `cargo test` runs it, not only CI.
#[test]
fn contract_cases_arrange_what_a_runtime_may_demand() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = std::process::Command::new("python3")
        .arg(root.join("scripts/check-arrangements.py"))
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
