//! The docs are the product's face: every link in them leads somewhere, and the README's
//! five-minute path works as written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Markdown pages a stranger reads: the README, the changelogs, docs/, the vectors' and the
/// examples' pages.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    let mut dirs = vec![
        root().join("docs"),
        root().join("vectors"),
        root().join("examples"),
    ];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() && !p.ends_with("node_modules") {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}

/// The targets of a page's inline links `[text](target)`, outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut rest = line;
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let end = rest
                .find(|c: char| c == ')' || c.is_whitespace())
                .unwrap_or(rest.len());
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_leads_to_a_file() {
    let mut broken = vec![];
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.starts_with("http")
                || target.starts_with('#')
                || target.starts_with("mailto:")
            {
                continue;
            }
            let path = target.split('#').next().unwrap();
            if !page.parent().unwrap().join(path).exists() {
                broken.push(format!(
                    "{}: {target}",
                    page.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

/// The README's first shim, copied as a new user would, gives a first verdict: the run fails,
/// and says why in one line naming the method to implement next.
#[test]
fn the_readmes_first_shim_reaches_a_verdict() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("```python\n")
        .expect("a python block in the README")
        + 10;
    let shim = &readme[start..start + readme[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("my_shim.py"), shim).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .current_dir(dir.path())
        .args(["run", "--suite", "contract", "--filter", "*01-load*"])
        .args(["--runtime", "stdio:python3 my_shim.py", "--out", "out"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(out.status.code(), Some(1), "{text}");
    // One line per cause, naming what to implement next; the verdict last.
    assert_eq!(
        text.matches("× runtime.create is not implemented").count(),
        1,
        "{text}"
    );
    assert!(
        text.trim_end()
            .lines()
            .last()
            .unwrap_or("")
            .starts_with("FAILED:"),
        "{text}"
    );
}
