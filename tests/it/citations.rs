//! Spec fidelity: every case cites a spec file that exists, headings that exist in it, and
//! quotes (the text in `("…")`) that are really in it, so a reader can go from a failing case
//! to the sentence it enforces.

use crate::common;

use common::markdown::plain;
use regex::Regex;
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_case_cites_real_headings_and_quotes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let specs = root.join("spec");
    assert!(
        specs.is_dir(),
        "the spec texts are expected at {} (the vendored spec texts)",
        specs.display()
    );
    // Every suite's cases cite its spec file; walk them all.
    let vectors = root.join("vectors");
    let cases: Vec<hcpspec::case::Case> = hcpspec::case::suite_names(&vectors)
        .expect("suites")
        .iter()
        .flat_map(|n| hcpspec::suites::load_suite(&vectors, n).expect("cases load"))
        .collect();
    let heading = Regex::new(r"§ ([^,(;]+)").unwrap();
    let quote = Regex::new(r#"\("(.*?)"\)(?:;|$| and|,| §)"#).unwrap();
    // Markdown headings, the web page's own ("4b ArtifactsCopy Anchor Link"), a Go doc's
    // ("Overview ¶"), and a design record's numbered findings ("H5. ADMITTED …" is H5).
    let finding = Regex::new(r"^(H\d+)\. ").unwrap();
    let mut problems = Vec::new();
    for case in &cases {
        let file = case.spec.split_whitespace().next().unwrap_or_default();
        let Ok(text) = std::fs::read_to_string(specs.join(file)) else {
            problems.push(format!(
                "{}: cites {file}, which is not in {}",
                case.name(),
                specs.display()
            ));
            continue;
        };
        let headings: BTreeSet<String> = text
            .lines()
            .filter_map(|l| {
                if l.starts_with('#') {
                    Some(l.trim_start_matches('#').trim().to_string())
                } else if let Some(f) = finding.captures(l) {
                    Some(f[1].to_string())
                } else {
                    l.strip_suffix("Copy Anchor Link")
                        .or_else(|| l.strip_suffix(" ¶"))
                        .map(|h| h.trim().to_string())
                }
            })
            .collect();
        let body = plain(&text);
        for h in heading.captures_iter(&case.spec) {
            // A heading with commas is cited up to its first comma, one with a parenthesis
            // ("10 Workspace (optional)") up to it.
            let h1 = h[1].trim();
            let cut =
                |x: &String| x.starts_with(&format!("{h1},")) || x.starts_with(&format!("{h1} ("));
            if !headings.contains(h1) && !headings.iter().any(cut) {
                problems.push(format!(
                    "{}: no heading `{}` in {file}",
                    case.name(),
                    h[1].trim()
                ));
            }
        }
        for q in quote.captures_iter(&case.spec) {
            // A quote may elide with … and join several sentences; each piece must be there.
            for piece in plain(&q[1])
                .split(['…', '"'])
                .map(|p| p.trim_matches(|c: char| " .,;/".contains(c)))
            {
                if piece.chars().count() >= 12 && !body.contains(piece) {
                    problems.push(format!("{}: `{piece}` is not in {file}", case.name()));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} citation problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}
