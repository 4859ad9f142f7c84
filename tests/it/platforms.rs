//! Where hcpspec is built, checked and shipped (docs/platforms.md): every target
//! `scripts/check-targets.sh` compile-checks is a row of the page that says so, and the page
//! names no compile-checked target the script leaves out.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The targets the script checks, from `--list` (which checks nothing).
fn checked() -> Vec<String> {
    let out = Command::new("bash")
        .arg(root().join("scripts/check-targets.sh"))
        .arg("--list")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The table's rows: each row's cells, from the row whose first cell is `Platform` down.
fn rows() -> Vec<Vec<String>> {
    let page = std::fs::read_to_string(root().join("docs/platforms.md")).unwrap();
    page.lines()
        .skip_while(|l| !l.starts_with("| Platform"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn every_compile_checked_target_is_a_row_of_docs_platforms_and_the_script_checks_each() {
    let checked = checked();
    assert!(
        checked.iter().any(|t| t == "aarch64-apple-darwin"),
        "{checked:?}"
    );
    assert!(
        checked.iter().any(|t| t == "x86_64-apple-darwin"),
        "{checked:?}"
    );
    let rows = rows();
    for t in &checked {
        let row = rows
            .iter()
            .find(|r| r.iter().any(|c| c.contains(&format!("`{t}`"))));
        let row = row.unwrap_or_else(|| panic!("docs/platforms.md has no row for `{t}`"));
        assert!(row.iter().any(|c| c.contains("compile-checked")), "{row:?}");
    }
    for row in rows
        .iter()
        .filter(|r| r.iter().any(|c| c.contains("compile-checked")))
    {
        assert!(
            checked.iter().any(|t| row[0].contains(&format!("`{t}`"))),
            "scripts/check-targets.sh does not check {:?}",
            row[0]
        );
    }
}

#[test]
fn docs_platforms_ships_no_windows_wheel_and_says_why() {
    let rows = rows();
    let windows = rows
        .iter()
        .find(|r| r[0].contains("Windows"))
        .expect("a Windows row");
    assert!(windows[1].starts_with("no"), "{windows:?}");
    assert!(windows.last().unwrap().len() > 40, "{windows:?}");
}
