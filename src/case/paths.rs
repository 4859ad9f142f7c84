//! The paths a case names, checked before anything is read or written: pack names, `from`,
//! the keys of an inline pack's `files` and `patch`, and `probe` report paths. Every one must
//! be relative and already normal (no `..`, no `.`, no empty segment, no leading `/`), so that
//! it stays inside the case's temp directory or the vectors tree. Anything else is a bad case
//! (exit 2), named by file and JSON pointer. The executor checks again before it touches a file
//! (`suites::hcp::materialize`), for cases that never went through `parse_case` (the fuzzers' own).

use crate::error::BadInput;
use std::path::{Component, Path};

/// The longest name or relative path a case may give.
const MAX_LEN: usize = 255;

/// A JSON pointer segment for an object key (RFC 6901: `~` → `~0`, `/` → `~1`).
pub use crate::pointer::escape as segment;

fn shown(s: &str) -> String {
    // One line, whatever the case holds.
    let mut out: String = s
        .chars()
        .take(80)
        .collect::<String>()
        .escape_debug()
        .collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// A pack name or a fixture name: one plain segment of `[A-Za-z0-9_.-]`, not `.` or `..`.
pub fn plain_name(s: &str) -> Result<(), BadInput> {
    if s.is_empty() || s.len() > MAX_LEN {
        return Err(BadInput(format!(
            "`{}`: a pack name must have 1 to {MAX_LEN} characters",
            shown(s)
        )));
    }
    if s == "." || s == ".." {
        return Err(BadInput(format!(
            "`{s}`: a pack name cannot be `.` or `..`"
        )));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "_.-".contains(*c)))
    {
        return Err(BadInput(format!(
            "`{}`: a pack name is one plain segment of [A-Za-z0-9_.-], not {:?}",
            shown(s),
            c
        )));
    }
    Ok(())
}

/// A file inside a pack or the case's temp dir: relative, and already normal.
pub fn relative_file(s: &str) -> Result<(), BadInput> {
    if s.is_empty() || s.len() > MAX_LEN {
        return Err(BadInput(format!(
            "`{}`: a file name must have 1 to {MAX_LEN} characters",
            shown(s)
        )));
    }
    if s.contains('\0') || s.contains('\\') || s.chars().any(char::is_control) {
        return Err(BadInput(format!(
            "`{}`: a file name cannot hold NUL, a backslash or control characters",
            shown(s)
        )));
    }
    let p = Path::new(s);
    if p.is_absolute() {
        return Err(BadInput(format!(
            "`{}`: an absolute path; a case names files relative to its pack or temp dir",
            shown(s)
        )));
    }
    let mut normal = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => normal.push(n.to_string_lossy().into_owned()),
            Component::ParentDir => {
                return Err(BadInput(format!(
                    "`{}`: `..` would leave the case's directory",
                    shown(s)
                )))
            }
            _ => {
                return Err(BadInput(format!(
                    "`{}`: not a normal relative path (no `.`, no leading `/`)",
                    shown(s)
                )))
            }
        }
    }
    if normal.join("/") != s {
        return Err(BadInput(format!(
            "`{}`: not a normal relative path (no `.`, `//` or trailing `/`)",
            shown(s)
        )));
    }
    Ok(())
}

/// A probe step's path: `${report}`, `${report.NAME}`, or a relative file under `${tmp}/` or
/// `${workdir}/`. The probe reads only inside the case's temp dir.
pub fn probe_path(s: &str) -> Result<(), BadInput> {
    if s == "${report}" {
        return Ok(());
    }
    if let Some(name) = s
        .strip_prefix("${report.")
        .and_then(|r| r.strip_suffix('}'))
    {
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        {
            return Ok(());
        }
    }
    for var in ["${tmp}/", "${workdir}/"] {
        if let Some(rest) = s.strip_prefix(var) {
            if !rest.contains("${") {
                return relative_file(rest);
            }
        }
    }
    Err(BadInput(format!(
        "`{}`: a probe reads only inside the case's temp dir: `${{report}}`, `${{report.NAME}}`, `${{tmp}}/FILE` or `${{workdir}}/FILE`",
        shown(s)
    )))
}

/// `fixtures/NAME`, when NAME is a plain name and the directory resolves inside `fixtures`.
pub fn fixture_dir(fixtures: &Path, name: &str) -> Result<std::path::PathBuf, BadInput> {
    plain_name(name)?;
    let missing = || format!("no fixture pack `{name}` under {}", fixtures.display());
    let root = fixtures.canonicalize().map_err(|_| missing())?;
    let dir = fixtures.join(name).canonicalize().map_err(|_| missing())?;
    if !dir.starts_with(&root) || dir == root {
        return Err(BadInput(format!(
            "fixture pack `{name}` resolves outside {}",
            fixtures.display()
        )));
    }
    if !dir.is_dir() {
        return Err(BadInput(missing()));
    }
    Ok(dir)
}

/// `within/rel` when its real location (symlinks resolved, as far as it exists) is inside
/// `within`: the last check before a file is read or written.
pub fn inside(within: &Path, rel: &str) -> Result<std::path::PathBuf, BadInput> {
    relative_file(rel)?;
    let root = within
        .canonicalize()
        .map_err(|e| format!("{}: {e}", within.display()))?;
    let path = root.join(rel);
    // Resolve the deepest ancestor that exists; what is below it cannot be a symlink yet.
    let mut probe = path.as_path();
    let real = loop {
        match probe.canonicalize() {
            Ok(r) => break r,
            Err(_) => match probe.parent() {
                Some(p) => probe = p,
                None => break root.clone(),
            },
        }
    };
    if !real.starts_with(&root) {
        return Err(BadInput(format!(
            "`{}` resolves outside {} (to {})",
            shown(rel),
            within.display(),
            real.display()
        )));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_files() {
        for ok in ["ledger", "a.b-c_1", "inline-0"] {
            assert!(plain_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "/etc", "a b", "x\0"] {
            assert!(plain_name(bad).is_err(), "{bad:?}");
        }
        for ok in ["surface.json", "HARNESS.md", "sub/x.json", ".hidden"] {
            assert!(relative_file(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "../x",
            "a/../../x",
            "/tmp/PWNED",
            "./x",
            "a//b",
            "a/",
            "a/.",
            "..",
            "a\\..\\b",
            "x\0y",
            "../../../../../tmp/PWNED",
        ] {
            assert!(relative_file(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn probe_paths() {
        for ok in [
            "${report}",
            "${report.write}",
            "${tmp}/probe/x.json",
            "${workdir}/out",
        ] {
            assert!(probe_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "/proc/self/environ",
            "${tmp}/../../etc/passwd",
            "${tmp}",
            "${report}/../../x",
            "${report.a/b}",
            "${workdir}/${tmp}",
            "relative.json",
            "${tmp}/probe/../../../proc/self/environ",
        ] {
            assert!(probe_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn inside_refuses_symlinks_out() {
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc", d.path().join("out")).unwrap();
        assert!(inside(d.path(), "out/passwd").is_err());
        assert!(inside(d.path(), "fresh/new.json").is_ok());
    }
}
