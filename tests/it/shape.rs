//! The shape the code keeps (issue 41's limits, held so they stay true): no file of `src/` over
//! 1,500 lines; no function over 150 lines but the data tables named here; no `pub fn` whose
//! error is a bare `String` (errors are values: `hcpspec::error`, and `hcpspec::exit::code` is
//! the one place one becomes an exit code); the Harness API model told apart by its `Role`, never
//! by a flag.

use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

const MAX_FILE_LINES: usize = 1500;
const MAX_FN_LINES: usize = 150;
/// Functions allowed past `MAX_FN_LINES`, each a data table (file, function): a list read
/// top to bottom, where splitting would only scatter it.
const TABLES: &[(&str, &str)] = &[];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> (PathBuf, Vec<PathBuf>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    (root, files)
}

/// A line with its string and char literals emptied and its comment cut, for counting braces.
fn code(line: &str) -> String {
    static STRINGS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#""(\\.|[^"\\])*"|'(\\.|[^'\\])'"#).unwrap());
    let line = STRINGS.replace_all(line, "\"\"");
    line.split("//").next().unwrap_or_default().to_string()
}

/// Every function of `text` longer than `MAX_FN_LINES`: (name, lines).
fn long_functions(text: &str) -> Vec<(String, usize)> {
    let head = Regex::new(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")
        .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = head.captures(line) else {
            continue;
        };
        let (mut depth, mut opened) = (0i64, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            let l = code(l);
            if !opened && l.contains(';') && !l.contains('{') {
                break;
            }
            depth += l.matches('{').count() as i64 - l.matches('}').count() as i64;
            opened |= l.contains('{');
            if opened && depth <= 0 {
                if j - i + 1 > MAX_FN_LINES {
                    out.push((c[6].to_string(), j - i + 1));
                }
                break;
            }
        }
    }
    out
}

#[test]
fn no_file_over_the_limit() {
    let (root, files) = src();
    let big: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > MAX_FILE_LINES)
                .then(|| format!("{} ({n} lines)", f.strip_prefix(&root).unwrap().display()))
        })
        .collect();
    assert!(big.is_empty(), "files over {MAX_FILE_LINES} lines: {big:?}");
}

#[test]
fn no_function_over_the_limit_but_tables() {
    let (root, files) = src();
    let mut long = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        for (name, n) in long_functions(&std::fs::read_to_string(f).unwrap()) {
            if !TABLES.contains(&(rel.as_str(), name.as_str())) {
                long.push(format!("{rel} {name} ({n} lines)"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines: {long:#?}"
    );
}

#[test]
fn the_counter_sees_a_long_function() {
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!("pub fn long() {{\n{body}}}\nfn short() {{ let s = \"}}\"; }}\n");
    assert_eq!(
        long_functions(&text),
        vec![("long".to_string(), MAX_FN_LINES + 2)]
    );
}

/// Every public fn of `text` whose error is a bare `String`, by name. Crate-private ones
/// (`pub(crate)`, `pub(super)`) are the module's business.
fn string_errors(text: &str) -> Vec<String> {
    static SIG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?s)\bpub\s+(async\s+)?fn\s+(\w+)[^{;]*?->\s*Result<[^{;]*,\s*String\s*>\s*(\{|where)",
        )
        .unwrap()
    });
    SIG.captures_iter(text).map(|c| c[2].to_string()).collect()
}

#[test]
fn no_pub_fn_errs_with_a_bare_string() {
    let (root, files) = src();
    let mut found = Vec::new();
    for f in &files {
        for name in string_errors(&std::fs::read_to_string(f).unwrap()) {
            found.push(format!(
                "{} {name}",
                f.strip_prefix(&root).unwrap().display()
            ));
        }
    }
    assert!(found.is_empty(), "pub fns erring with a String: {found:#?}");
}

#[test]
fn the_pattern_sees_a_string_error() {
    let text = "pub fn a(x: &str) -> Result<Vec<u8>, String> {}\n\
                pub(crate) fn b() -> Result<(), String> {}\n\
                pub fn c() -> Result<(), BadInput> {}\n\
                pub fn d<F>(f: F) -> usize\nwhere\n    F: Fn() -> Result<(), String>,\n{}\n";
    assert_eq!(string_errors(text), vec!["a".to_string()]);
}

#[test]
fn the_harness_api_model_has_no_role_flag() {
    let (root, files) = src();
    let flag: Vec<String> = files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("core_role"))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    assert!(flag.is_empty(), "core_role in {flag:?}");
}
