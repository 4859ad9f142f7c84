//! Reading spec texts and Markdown tables the same way in every test that quotes the spec.
#![allow(dead_code)] // each test binary uses a part

use regex::Regex;

/// Markdown links to their text, no backticks or emphasis, whitespace collapsed.
pub fn plain(text: &str) -> String {
    let links = Regex::new(r"\[([^\]]*)\]\([^)]*\)").unwrap();
    let t = links.replace_all(text, "$1").replace(['`', '*'], "");
    t.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The cells of a Markdown table line, split at every `|` not written `\|`; `\|` becomes `|`.
pub fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                out.last_mut().unwrap().push('|');
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}
