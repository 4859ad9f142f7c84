//! Reading spec texts and Markdown tables the same way in every test that quotes the spec.
#![allow(dead_code)] // each test binary uses a part

use regex::Regex;

/// Markdown links to their text, no backticks or emphasis, whitespace collapsed.
pub fn plain(text: &str) -> String {
    let links = Regex::new(r"\[([^\]]*)\]\([^)]*\)").unwrap();
    let t = links.replace_all(text, "$1").replace(['`', '*'], "");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The cells of a Markdown table line, split at every `|` not written `\|`: the ledgers' own
/// reading (`hcpspec::suites::ledger::cells`).
#[allow(unused_imports)] // each test binary uses a part
pub use hcpspec::suites::ledger::cells;
